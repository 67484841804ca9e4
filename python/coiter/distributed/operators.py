"""NumPy's spellings over partitioned tensors: ``einsum`` and ``A @ B``."""

from __future__ import annotations

from typing import Any

from distributed import Client
from numpy.typing import DTypeLike

from ..evaluate import _subscripts
from ..formats import FormatLike
from ..schedule import Schedule
from ..tensor import Tensor
from .partitioned import PartitionedTensor


def einsum(
    subscripts: str,
    *operands: Any,
    out_format: FormatLike | None = None,
    dtype: DTypeLike | None = None,
    schedule: Schedule | str | None = None,
    client: Client | None = None,
    gather: bool = False,
) -> PartitionedTensor | Tensor:
    """NumPy's ``einsum`` computed on the cluster by :func:`coiter.distributed.evaluate`
    (operands named ``t0``, ``t1``, ... in a schedule's ``distribute``). Subscripts that repeat
    an index within one operand (diagonals) are not supported here. A ``coiter.Tensor`` with
    ``gather=True``."""
    inputs, output = _subscripts(subscripts, operands)
    for text in inputs:
        if len(set(text)) != len(text):
            raise ValueError(
                f"coiter.distributed.einsum: subscripts {text!r} repeat an index (a diagonal); "
                "take the diagonal first"
            )
    if len(set(output)) != len(output):
        raise ValueError(f"einsum: output subscripts {output!r} repeat an index")
    names = [f"t{k}" for k in range(len(operands))]
    terms = [f"{name}({','.join(text)})" if text else name for name, text in zip(names, inputs)]
    result = f"out({','.join(output)})" if output else "out"
    from .execution import evaluate

    return evaluate(
        f"{result} = {' * '.join(terms)}",
        schedule=schedule,
        out_format=out_format,
        dtype=dtype,
        client=client,
        gather=gather,
        **dict(zip(names, operands)),
    )


def matmul(a: PartitionedTensor, b: Any) -> PartitionedTensor:
    """``A @ x`` (SpMV) and ``A @ B`` (SpMM, SpGEMM) of a partitioned matrix."""
    if a.ndim != 2 or getattr(b, "ndim", None) not in (1, 2):
        raise ValueError(
            f"A @ B needs a matrix A and a vector or matrix B, got orders {a.ndim} and "
            f"{getattr(b, 'ndim', None)}"
        )
    from .execution import evaluate

    if b.ndim == 1:
        product = evaluate("y(i) = A(i,j) * x(j)", A=a, x=b, client=a.client)
    else:
        product = evaluate("C(i,k) = A(i,j) * B(j,k)", A=a, B=b, client=a.client)
    assert isinstance(product, PartitionedTensor)  # not gathered
    return product
