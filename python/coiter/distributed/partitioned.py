"""The partitioned tensor: a tensor cut along one mode into blocks held on Dask workers.

This module sits below the modules that build partitioned tensors and compute with them
(docs/architecture.md, "Python layering"). The methods that need those (``to_dask_array``,
``A @ B``) call :class:`PartitionedMethods`, which ``coiter/distributed/__init__.py`` installs
from partitioned_methods.py: a seam, not an import, as Tensor's methods are reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
from distributed import Client, Future, wait
from numpy.typing import DTypeLike

from ..formats import Format
from ..tensor import Tensor
from .blocks import block_shape, join_blocks

if TYPE_CHECKING:
    import dask.array


class PartitionedMethods(Protocol):
    """What PartitionedTensor's methods call above this module (partitioned_methods.py gathers
    them): the conversion to a ``dask.array`` collection (dask_arrays.py) and the product
    (operators.py)."""

    def to_dask_array(
        self, tensor: PartitionedTensor, kind: str = "coiter"
    ) -> dask.array.Array: ...
    def matmul(self, a: PartitionedTensor, b: Any) -> PartitionedTensor: ...


def install_methods(methods: PartitionedMethods) -> None:
    """Give PartitionedTensor the implementations of its methods above this module
    (coiter/distributed/__init__.py calls it once, with partitioned_methods)."""
    PartitionedTensor._methods = methods


class PartitionedTensor:
    """A tensor whose blocks are coiter tensors held on the workers of a Dask cluster.

    Block ``b`` holds the coordinates ``bounds[b]`` to ``bounds[b + 1] - 1`` of mode ``mode`` in
    local coordinates (the block's first coordinate is 0), with the whole tensor's format, dtype
    and (per block) index width. ``mode`` is None for a tensor held whole in one block (a
    result combined from partial results). Build one with :func:`coiter.distributed.partition`,
    :func:`~coiter.distributed.from_dask_array`, :func:`~coiter.distributed.read` or
    :func:`~coiter.distributed.evaluate`.

    Attributes
    ----------
    shape, ndim, dtype, format
        Those of the whole tensor.
    mode : int or None
        The partitioned mode.
    bounds : tuple of int
        ``parts + 1`` coordinates of ``mode`` where blocks begin (and the extent, last).
    blocks : list of distributed.Future
        One future per block, resolving to a :class:`coiter.Tensor`.
    client : distributed.Client
    placement : list of str or None
        The worker each block was placed on (tasks on the block prefer it), when known.
    """

    # The implementations above this module (see PartitionedMethods), installed by
    # install_methods.
    _methods: ClassVar[PartitionedMethods]

    def __init__(
        self,
        blocks: Sequence[Future[Tensor]],
        mode: int | None,
        bounds: Sequence[int] | None,
        shape: Sequence[int],
        dtype: DTypeLike,
        format: Format,
        client: Client,
        name: str | None = None,
        placement: Sequence[str] | None = None,
    ) -> None:
        self.blocks = list(blocks)
        # The worker each block was placed on (None: Dask's choice): tasks on a block ask for it
        # (owner computes).
        self.placement = list(placement) if placement is not None else None
        self.mode = mode
        self.shape = tuple(int(e) for e in shape)
        self.bounds = tuple(int(b) for b in bounds) if bounds is not None else None
        self.dtype = np.dtype(dtype)
        self.format = format
        self.client = client
        self.name = name
        if mode is None and len(self.blocks) != 1:
            raise ValueError("a tensor held whole (mode=None) has exactly one block")
        if mode is not None and (self.bounds is None or len(self.bounds) != len(self.blocks) + 1):
            raise ValueError(
                f"{len(self.blocks)} blocks need {len(self.blocks) + 1} bounds, got {self.bounds}"
            )

    # -- description ----------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def parts(self) -> int:
        """The number of blocks."""
        return len(self.blocks)

    def block_shape(self, b: int) -> tuple[int, ...]:
        """The shape of block ``b``."""
        if self.mode is None:
            return self.shape
        assert self.bounds is not None  # a partitioned mode has bounds (see __init__)
        return block_shape(self.shape, self.mode, self.bounds[b], self.bounds[b + 1])

    def block_nnz(self) -> list[int]:
        """The stored entries of each block (computed on the workers)."""
        counts: list[int] = self.client.gather(self.client.map(_nnz, self.blocks, pure=False))
        return counts

    @property
    def nnz(self) -> int:
        """Stored entries of all blocks."""
        return int(sum(self.block_nnz()))

    def __repr__(self) -> str:
        name = f" name={self.name!r}" if self.name else ""
        where = "whole" if self.mode is None else f"mode={self.mode} parts={self.parts}"
        return (
            f"<coiter.distributed.PartitionedTensor{name} shape={self.shape} dtype={self.dtype} "
            f"format={self.format} {where}>"
        )

    # -- results --------------------------------------------------------------------------
    def compute(self) -> Tensor:
        """Gather the blocks and join them into one local :class:`coiter.Tensor`."""
        blocks: list[Tensor] = self.client.gather(self.blocks)
        if self.mode is None:
            result = blocks[0]
        else:
            assert self.bounds is not None  # a partitioned mode has bounds (see __init__)
            result = join_blocks(blocks, self.mode, self.bounds, self.shape, self.format)
        result.name = self.name
        return result

    def persist(self) -> PartitionedTensor:
        """Wait until every block is computed (raising a block's error); returns self."""
        wait(self.blocks)
        for future in self.blocks:
            if future.status == "error":
                future.result()  # raises the task's exception, with its traceback
        return self

    def release(self) -> None:
        """Let the workers forget the blocks now (they are also released when this object is
        garbage-collected)."""
        for future in self.blocks:
            future.release()
        self.blocks = []

    def to_dask_array(self, kind: str = "coiter") -> dask.array.Array:
        """A ``dask.array.Array`` over the blocks, chunked along ``mode``.

        ``kind`` is the chunk type: ``"coiter"`` (the tensors), ``"numpy"`` (dense arrays),
        ``"scipy"`` (``scipy.sparse.csr_matrix``, 2-D only) or ``"sparse"`` (pydata/sparse COO).
        """
        return self._methods.to_dask_array(self, kind)

    def __matmul__(self, other: Any) -> PartitionedTensor:
        return self._methods.matmul(self, other)


def _nnz(tensor: Tensor) -> int:
    return int(tensor.nnz)
