"""coiter: a sparse tensor algebra compiler for Python."""
from . import _core
from .errors import (CoiterError, CompileError, FormatError, ParseError, ScheduleError,
                     ShapeError, SignatureError)

__version__ = _core.__version__
