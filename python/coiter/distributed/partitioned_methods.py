"""The implementations of PartitionedTensor's methods that live above partitioned.py: the
conversion to a ``dask.array`` collection and the product. This module is what
partitioned.PartitionedMethods describes; coiter/distributed/__init__.py installs it
(partitioned.install_methods)."""

from .dask_arrays import to_dask_array
from .operators import matmul

__all__ = ["to_dask_array", "matmul"]
