"""coiter: a sparse tensor algebra compiler for Python.

This package provides per-level tensor formats (API.md §1), tensors that wrap NumPy and
SciPy data without copying (§2), and file I/O. See README.md and docs/.
"""
from . import _core
from .creation import asarray, from_coords, random, zeros
from .errors import (CoiterError, CompileError, FormatError, ParseError, ScheduleError,
                     ShapeError, SignatureError)
from .formats import (Format, LevelType, as_format, bcsr, compressed, dense, hashed, offset,
                      range, singleton)
from .io import load, read, save, write
from .tensor import Level, Tensor

__version__ = _core.__version__
