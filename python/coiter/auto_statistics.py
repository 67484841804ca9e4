"""What ``schedule="auto"`` read of an operand's storage to key its choice: the statistics
record a tensor keeps (``Tensor._statistics``), built by ``autosched/database.py`` and reused
by ``auto_keys.py`` for other tensors wrapping the same array."""

from __future__ import annotations

from typing import Any, NamedTuple


class StatisticsRead(NamedTuple):
    """The statistics read of one storage, down to ``depth``."""

    # shape, nnz, and where read, mean_row and max_row (database.tensor_statistics)
    values: dict[str, Any]
    # how much of the rows was read: database.EXTENTS, ROW_MEAN or ROW_SKEW
    depth: int
    # the bucket part (database.tensor_bucket) at each depth, None below ``depth``
    parts: tuple[tuple[Any, ...] | None, ...]


class StorageStatistics(NamedTuple):
    """A tensor's statistics and the storage they were read from: valid while the tensor's
    storage is that one (a recomputed definition or ``out=`` replaces it)."""

    storage: Any
    read: StatisticsRead
