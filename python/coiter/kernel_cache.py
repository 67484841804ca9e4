"""The kernel caches (docs/reference.md, "Kernels and the cache"): ``ct.cache_info`` and
``ct.clear_cache``.

The compiler's cache lives in the core (in memory and on disk). In front of it, ``ct.evaluate``,
the array operators and the linear-operator products remember which kernel they chose for a
statement (evaluate.py, operators.py, linalg.py); clearing the cache forgets those choices too."""

from typing import Any

from . import _core
from .evaluate import forget_chosen_kernels
from .linalg import forget_product_kernels
from .operators import forget_kernels


def cache_info() -> dict[str, Any]:
    """Statistics of the kernel cache.

    Returns
    -------
    dict
        ``hits`` (compilations answered from memory), ``misses``, ``disk_hits`` (kernels loaded
        from the disk cache), ``compiles`` (kernels generated and compiled), ``compile_seconds``
        (their total time), ``entries`` (kernels held in memory) and ``disk_directory`` (the
        disk cache, ``COITER_CACHE_DIR``).

    Examples
    --------
    >>> sorted(ct.cache_info())[:4]
    ['compile_seconds', 'compiles', 'disk_directory', 'disk_hits']
    """
    return _core.cache_info()


def clear_cache(disk: bool = False) -> None:
    """Forget the compiled kernels held in memory.

    Parameters
    ----------
    disk : bool, default False
        Also delete the kernels of the disk cache.
    """
    forget_chosen_kernels()
    forget_product_kernels()
    forget_kernels()
    _core.clear_cache(disk)
