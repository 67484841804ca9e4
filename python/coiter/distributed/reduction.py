"""Combining the partial results of the blocks of a summed index (SuperTaco's summation tasks,
Shinde's SuperTaco thesis, §4.4 and §4.7)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from distributed import Client, Future

from ..formats import Format, FormatState, format_from_state, format_state, is_all_dense
from ..tensor import Tensor

_DENSE_OPS = {"add": np.add, "max": np.maximum, "min": np.minimum}


def combine(a: Tensor, b: Tensor, op: str, fmt_state: FormatState) -> Tensor:
    """The elementwise ``op`` (``"add"``, ``"max"`` or ``"min"``) of two partial results, in
    their format: dense partials are combined by NumPy, sparse ones merged by coiter (the
    addition kernel ``c = a + b`` in the result's format, or max/min on the stored values)."""
    from ..conversion import asarray
    from ..evaluate import evaluate

    fmt = format_from_state(fmt_state)
    if is_all_dense(a.format) and is_all_dense(b.format):
        return asarray(_DENSE_OPS[op](np.asarray(a), np.asarray(b)), name=a.name)
    if op == "add":
        indices = ",".join(f"i{m}" for m in range(a.ndim))
        result = evaluate(
            f"c({indices}) = a({indices}) + b({indices})", out_format=fmt, dtype=a.dtype, a=a, b=b
        )
    else:
        # NumPy hands the ufunc to Tensor.__array_ufunc__, which computes a Tensor.
        combined = _DENSE_OPS[op](a, b)
        assert isinstance(combined, Tensor)
        result = combined.asformat(fmt)
    result.name = a.name
    return result


def combine_tree(
    client: Client, partials: Sequence[Future[Tensor]], op: str, fmt: Format
) -> Future[Tensor]:
    """The combination of ``partials`` by a tree of pairwise tasks: all tasks of one level are
    submitted before the next (log2(P) levels), each running where its inputs are."""
    level = list(partials)
    state = format_state(fmt)
    while len(level) > 1:
        paired = [
            client.submit(combine, level[k], level[k + 1], op, state, pure=False)
            for k in range(0, len(level) - 1, 2)
        ]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]
