"""The kernel caches (API.md §4): ``ct.cache_info`` and ``ct.clear_cache``.

The compiler's cache lives in the core (in memory and on disk). In front of it, ``ct.evaluate``,
the array operators and the linear-operator products remember which kernel they chose for a
statement (evaluate.py, operators.py, linalg.py); clearing the cache forgets those choices too."""

from typing import Any

from . import _core
from .evaluate import forget_chosen_kernels
from .linalg import forget_product_kernels
from .operators import forget_kernels


def cache_info() -> dict[str, Any]:
    """Kernel cache statistics: hits, misses, disk_hits, compiles, compile_seconds, entries."""
    return _core.cache_info()


def clear_cache(disk: bool = False) -> None:
    """Forget compiled kernels held in memory (and on disk with ``disk=True``)."""
    forget_chosen_kernels()
    forget_product_kernels()
    forget_kernels()
    _core.clear_cache(disk)
