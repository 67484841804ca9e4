"""``schedule="auto"``'s key of the operands, on every call of ``ct.evaluate``, ``ct.einsum``
and the array operators: what they remember their kernels by (the choice depends on the
operands' statistics and on the tuning database: ``autoscheduler().input_key``), computed
without reading the operands again where it can be.

Statistics are read once per storage and remembered on the tensor (``Tensor._statistics``,
autosched/database.py). SciPy matrices and NumPy arrays are wrapped in new Tensors by every
call, and reading their statistics again took 20-27 µs of a call interleaved with other kernels
(a SpMV's took 40): they are also kept here for the array a wrapper was made from
(``Tensor._source``: the NumPy array, or a SciPy matrix's ``indptr``), as long as it lives, and
taken for the storage of a new wrapper of the same array and extents. Statistics only choose a
schedule: an index array edited in place (its nonzeros or row lengths) leaves them stale,
which can make a call slower, never its result wrong. The keys themselves are remembered by
the statistics they were computed from (_auto_keys).
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Mapping
from typing import Any, NamedTuple

import numpy as np

from .auto_statistics import StatisticsRead, StorageStatistics
from .cache_directory import directory_setting
from .compiler import autoscheduler
from .parser import Parsed
from .tensor import Tensor


class KeptStatistics(NamedTuple):
    """The statistics read of a tensor wrapping an array, kept for that array."""

    source: weakref.ref[np.ndarray]  # the array (dead: the entry is removed)
    shape: tuple[int, ...]  # the wrapping tensor's extents (the same array, other extents: no)
    read: StatisticsRead


# By the source array's id.
_kept_statistics: dict[int, KeptStatistics] = {}


# The auto keys computed: (what the caller remembers them by, the cache directory's setting,
# each operand's bucket parts as its Tensor._statistics hold them) -> key. input_key's key is
# a function of these and of the tuning database, which the cache directory chooses, so it is
# remembered until this process changes the database (database.TuningDatabase calls
# forget_auto_keys then): InstantChoice.input_key's own Python took 7-10 µs of a call
# interleaved with other kernels. Oldest first.
_AUTO_KEYS_KEPT = 256
_auto_keys: dict[tuple[Any, ...], Hashable] = {}


def forget_auto_keys() -> None:
    """Forget the remembered auto keys (the tuning database changed: they may read more of
    the operands now)."""
    _auto_keys.clear()


def auto_input_key(
    memo: str | None, stmt: Parsed | None, operands: Mapping[str, Tensor]
) -> Hashable:
    """``autoscheduler().input_key(stmt, operands)``, each operand with the statistics its
    storage was read for, else those kept for its source array (_kept_statistics), keeping
    those read anew; remembered under ``memo`` (the statement's text, which with ``stmt``
    fixes the operands' names and order; None: not remembered), the cache directory (another
    one is another tuning database) and the statistics, when every operand has them.
    (Inline: this runs on every call, and each function call more cost about a microsecond
    of a call interleaved with others.)"""
    sources = []
    setting = directory_setting()
    parts: list[Any] | None = None if memo is None else [memo, setting]
    for tensor in operands.values():
        statistics = tensor._statistics
        # (A pending tensor holds a placeholder in _data, never a storage read.)
        if statistics is not None and statistics.storage is tensor._data:
            if parts is not None:
                parts.append(statistics.read.parts)
            continue
        source = tensor._source
        kept = None
        if source is not None:
            kept = _kept_statistics.get(id(source))
            if kept is not None and (kept.source() is not source or kept.shape != tensor._shape):
                kept = None
            sources.append((source, tensor, kept))
        if parts is not None:
            if kept is not None:
                parts.append(kept.read.parts)
            else:
                parts = None
    if parts is not None:
        key = _auto_keys.get(tuple(parts))
        if key is not None:
            return key
    for _, tensor, kept in sources:
        if kept is not None:
            # (A wrapper's _data is the storage made from its source: Tensor._set_storage
            # forgets the source.)
            tensor._statistics = StorageStatistics(tensor._data, kept.read)
    key = autoscheduler().input_key(stmt, operands)
    for source, tensor, kept in sources:
        statistics = tensor._statistics
        if statistics is not None and (kept is None or statistics.read is not kept.read):
            _keep_statistics(source, tensor._shape, statistics.read)
    if memo is not None:
        # (Every operand's statistics are read now, down to what the key asks.)
        read = tuple(t._statistics.read.parts for t in operands.values())  # type: ignore[union-attr]
        _auto_keys[(memo, setting, *read)] = key
        if len(_auto_keys) > _AUTO_KEYS_KEPT:
            del _auto_keys[next(iter(_auto_keys))]
    return key


def _keep_statistics(source: np.ndarray, shape: tuple[int, ...], read: StatisticsRead) -> None:
    key = id(source)

    def forget(reference: weakref.ref[np.ndarray]) -> None:
        kept = _kept_statistics.get(key)
        if kept is not None and kept.source is reference:
            del _kept_statistics[key]

    _kept_statistics[key] = KeptStatistics(weakref.ref(source, forget), shape, read)
