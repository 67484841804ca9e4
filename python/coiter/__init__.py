"""coiter: a sparse tensor algebra compiler for Python.

This package provides per-level tensor formats, tensors that wrap NumPy and SciPy data without
copying, index notation compiled into fused kernels, and file I/O. See README.md, and
docs/reference.md for what each part promises.
"""

from . import (
    _core,
    cuda,
    tensor,
    tensor_methods,
    threads,  # noqa: F401 - makes coiter's thread pool visible to threadpoolctl
)
from ._core import get_num_threads, set_num_threads
from .autosched import autoschedule, clear_tuning, instant_choice, tuning_info
from .compiler import Kernel, compile, install_autoscheduler, schedule_problem
from .config import config
from .conversion import asarray
from .creation import from_coords, random, zeros
from .errors import (
    CoiterError,
    CompileError,
    DeviceError,
    FormatError,
    ParseError,
    ScheduleError,
    ShapeError,
    SignatureError,
)
from .evaluate import einsum, evaluate
from .formats import (
    Format,
    LevelType,
    as_format,
    bcsr,
    compressed,
    dense,
    hashed,
    offset,
    range,
    singleton,
)
from .io import load, read, save, write
from .kernel_cache import cache_info, clear_cache
from .notation import IndexVar, indices, max, min, sum
from .plotting import spy
from .schedule import Schedule
from .tensor import Level, Tensor

# Tensor's methods that need the compiler and the array operators (docs/architecture.md,
# "Python layering").
tensor.install_methods(tensor_methods)
# The choice behind schedule="auto" (the autoscheduler sits above the compiler).
install_autoscheduler(instant_choice)

__version__ = _core.__version__

__all__ = [
    # formats (docs/reference.md, "Formats")
    "Format",
    "LevelType",
    "as_format",
    "bcsr",
    "compressed",
    "dense",
    "hashed",
    "offset",
    "range",
    "singleton",
    # tensors ("Tensors")
    "Tensor",
    "Level",
    "asarray",
    "from_coords",
    "random",
    "zeros",
    "read",
    "write",
    "save",
    "load",
    # index notation ("Index notation")
    "IndexVar",
    "indices",
    "sum",
    "max",
    "min",
    "evaluate",
    "einsum",
    "config",
    # Jupyter (docs/jupyter.md)
    "spy",
    # compilation and kernels ("Kernels and the cache")
    "compile",
    "Kernel",
    "cache_info",
    "clear_cache",
    "get_num_threads",
    "set_num_threads",
    # schedules ("Schedules") and targets ("Targets")
    "Schedule",
    "schedule_problem",
    "autoschedule",
    "tuning_info",
    "clear_tuning",
    "cuda",
    # errors ("Errors")
    "CoiterError",
    "CompileError",
    "DeviceError",
    "FormatError",
    "ParseError",
    "ScheduleError",
    "ShapeError",
    "SignatureError",
]


def __getattr__(name: str) -> object:
    # ct.distributed is imported when first used: it needs dask.distributed, which
    # `import coiter` must not (docs/distributed.md).
    if name == "distributed":
        import importlib

        return importlib.import_module(".distributed", __name__)
    raise AttributeError(f"module 'coiter' has no attribute {name!r}")
