"""coiter on a Dask cluster (docs/distributed.md).

Tensors are cut along one mode into contiguous blocks held on the workers (:func:`partition`,
:func:`from_dask_array`, :func:`read`, :func:`put`); a statement runs as one Dask task per block,
each calling the same compiled kernel on its blocks (:func:`evaluate`, :func:`einsum`), following
SuperTaco's design (S. D. Shinde's MIT master's thesis, 2019, which ran TACO's kernels on Legion)
with Dask in Legion's place. Which index is distributed, and how partial results over a summed index
combine, is the schedule's ``distribute`` command (``ct.Schedule().distribute("i", 4)``).

Needs ``dask.distributed`` (``pip install coiter[distributed]``); ``import coiter`` does not
import it.
"""

try:
    import distributed as _distributed  # noqa: F401
    from dask.sizeof import sizeof as _sizeof
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "coiter.distributed needs dask.distributed: pip install 'coiter[distributed]' "
        "(or pip install 'dask[distributed]')"
    ) from error

from ..tensor import Tensor as _Tensor
from . import partitioned as _partitioned
from . import partitioned_methods as _partitioned_methods
from .bounds import BALANCES
from .cluster import tensor_nbytes as _tensor_nbytes
from .dask_arrays import from_dask_array, to_dask_array
from .distribution import Distribution
from .execution import evaluate
from .files import read
from .operators import einsum
from .partition import partition, put
from .partitioned import PartitionedTensor

# PartitionedTensor's methods that need the modules above it (docs/architecture.md, "Python
# layering").
_partitioned.install_methods(_partitioned_methods)


@_sizeof.register(_Tensor)
def _sizeof_tensor(tensor: _Tensor) -> int:
    # Dask's scheduler weighs transfers and memory by it: without it a tensor would count as a
    # few dozen bytes, and tasks would not run where their blocks are (owner computes).
    return _tensor_nbytes(tensor) + 200


__all__ = [
    "BALANCES",
    "Distribution",
    "PartitionedTensor",
    "einsum",
    "evaluate",
    "from_dask_array",
    "partition",
    "put",
    "read",
    "to_dask_array",
]
