"""coiter: a sparse tensor algebra compiler for Python.

This package provides per-level tensor formats (API.md §1), tensors that wrap NumPy and
SciPy data without copying (§2), index notation (§3) compiled into fused kernels (§4), and
file I/O. See README.md and docs/.
"""
from . import _core, cuda
from ._core import get_num_threads, set_num_threads
from .compiler import Kernel, cache_info, clear_cache, compile
from .creation import asarray, from_coords, random, zeros
from .errors import (CoiterError, CompileError, DeviceError, FormatError, ParseError,
                     ScheduleError, ShapeError, SignatureError)
from .formats import (Format, LevelType, as_format, bcsr, compressed, dense, hashed, offset,
                      range, singleton)
from .evaluate import einsum, evaluate
from .format_inference import config
from .io import load, read, save, write
from .notation import IndexVar, indices, max, min, sum
from .schedule import Schedule
from .tensor import Level, Tensor
from . import threads  # noqa: F401 - makes coiter's thread pool visible to threadpoolctl

__version__ = _core.__version__


def __getattr__(name):
    # ct.distributed is imported when first used: it needs dask.distributed, which
    # `import coiter` must not (docs/distributed.md).
    if name == "distributed":
        import importlib
        return importlib.import_module(".distributed", __name__)
    raise AttributeError(f"module 'coiter' has no attribute {name!r}")
