"""What the suite computes: each kernel's index expression, its operands made from a data
set, and a dense NumPy/opt_einsum reference for small cases.

Every peer computes the same mathematical result from the same operands; how it is asked
to (``A @ x``, an einsum, a compiled expression) is the peer's business (``peers``). The
expression strings use the TACO syntax that coiter and tensora share. Operands are SciPy
sparse arrays in the kernel's input format, NumPy arrays, or a ``TensorData`` (3-tensors);
each peer converts them to its own types before anything is timed.
"""

from dataclasses import dataclass

import numpy as np
import opt_einsum
import scipy.sparse as sp

from . import patterns
from .datasets import MatrixData, TensorData

SPMM_COLUMNS = (32, 128)
SDDMM_RANK = 32
TENSOR_RANK = 16  # columns of the factor matrices of MTTKRP and TTM


@dataclass(frozen=True)
class Kernel:
    """A kernel of the suite.

    ``formats``: the storage format of each tensor in the expression, in the letter syntax
    coiter and tensora share (``ds`` = CSR, ``ds:1,0`` = CSC, ``sss`` = CSF, ``d`` dense);
    COO is coiter's ``coo``. ``einsum`` is the same computation as NumPy subscripts, for the
    dense reference. ``on``: "matrix" or "tensor" data sets."""

    name: str
    title: str
    expression: str
    formats: dict
    einsum: str
    on: str
    input_format: str = "csr"  # the SciPy format of the sparse matrix operands
    adds: bool = False  # the operands are added (the einsum gives only the shapes)
    # The CSR result's rows may come out unsorted (coiter is asked for an unordered
    # compressed level), as SciPy's SpGEMM returns them.
    unsorted_rows: bool = False
    # Union and intersection kernels: where B (and D) have their entries relative to A's
    # (one of ``patterns.PATTERNS``); the name is the family's, then the pattern, and the
    # title the family's title, then the pattern in words.
    pattern: str | None = None
    family_title: str = ""

    @property
    def family(self):
        return self.name.rsplit("_", 1)[0] if self.pattern else self.name

    @property
    def output(self):
        return self.expression.split("(", 1)[0].strip()

    @property
    def output_is_sparse(self):
        return "s" in self.formats[self.output]

    @property
    def inputs(self):
        return [name for name in self.formats if name != self.output]


def _spmv(fmt, letters):
    return Kernel(
        f"spmv_{fmt}",
        f"SpMV, {fmt.upper()} A",
        "y(i) = A(i,j) * x(j)",
        {"A": letters, "x": "d", "y": "d"},
        "ij,j->i",
        "matrix",
        fmt,
    )


def _spmm(columns):
    return Kernel(
        f"spmm_{columns}",
        f"SpMM, {columns} dense columns",
        "Y(i,k) = A(i,j) * X(j,k)",
        {"A": "ds", "X": "dd", "Y": "dd"},
        "ij,jk->ik",
        "matrix",
    )


def _patterned(family, title, operands, operator):
    """``C(i,j) = A(i,j) <operator> B(i,j) ...``, all CSR: one kernel per pattern of the
    other operands relative to A (``patterns``), named ``<family>_<pattern>``."""
    expression = "C(i,j) = " + f" {operator} ".join(f"{name}(i,j)" for name in operands)
    einsum = ",".join("ij" for _ in operands) + "->ij"
    formats = {name: "ds" for name in (*operands, "C")}
    partners = len(operands) - 1
    return [
        Kernel(
            f"{family}_{pattern}",
            f"{title} ({patterns.WORDS[pattern][partners - 1]})",
            expression,
            formats,
            einsum,
            "matrix",
            adds=operator == "+",
            pattern=pattern,
            family_title=title,
        )
        for pattern in patterns.PATTERNS
    ]


KERNELS = [
    _spmv("csr", "ds"),
    _spmv("csc", "ds:1,0"),
    _spmv("coo", "coo"),
    *(_spmm(columns) for columns in SPMM_COLUMNS),
    Kernel(
        "spgemm_aa",
        "SpGEMM A·A",
        "C(i,j) = A(i,k) * B(k,j)",
        {"A": "ds", "B": "ds", "C": "ds"},
        "ik,kj->ij",
        "matrix",
    ),
    Kernel(
        "spgemm_aat",
        "SpGEMM A·Aᵀ",
        "C(i,j) = A(i,k) * B(k,j)",
        {"A": "ds", "B": "ds", "C": "ds"},
        "ik,kj->ij",
        "matrix",
    ),
    Kernel(
        "spgemm_unsorted",
        "SpGEMM A·A, rows left unsorted",
        "C(i,j) = A(i,k) * B(k,j)",
        {"A": "ds", "B": "ds", "C": "ds"},
        "ik,kj->ij",
        "matrix",
        unsorted_rows=True,
    ),
    *_patterned("spadd2", "SpAdd A+B", "AB", "+"),
    *_patterned("spadd3", "SpAdd A+B+D, fused", "ABD", "+"),
    Kernel(
        "sddmm",
        f"SDDMM, rank {SDDMM_RANK}",
        "C(i,j) = A(i,j) * U(i,k) * V(j,k)",
        {"A": "ds", "U": "dd", "V": "dd", "C": "ds"},
        "ij,ik,jk->ij",
        "matrix",
    ),
    *_patterned("multiply", "elementwise A∘B", "AB", "*"),
    Kernel(
        "mttkrp",
        f"MTTKRP, rank {TENSOR_RANK}",
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        {"B": "sss", "C": "dd", "D": "dd", "A": "dd"},
        "ikl,kj,lj->ij",
        "tensor",
    ),
    Kernel(
        "ttv",
        "TTV (mode 3)",
        "A(i,j) = B(i,j,k) * c(k)",
        {"B": "sss", "c": "d", "A": "ds"},
        "ijk,k->ij",
        "tensor",
    ),
    Kernel(
        "ttm",
        f"TTM (mode 3), rank {TENSOR_RANK}",
        "A(i,j,k) = B(i,j,l) * C(k,l)",
        {"B": "sss", "C": "dd", "A": "ssd"},
        "ijl,kl->ijk",
        "tensor",
    ),
]
KERNELS_BY_NAME = {kernel.name: kernel for kernel in KERNELS}


def select(names):
    """The kernels named, in the suite's order; a family name (``spadd3``) stands for all of
    its patterns."""
    unknown = set(names) - set(KERNELS_BY_NAME) - {kernel.family for kernel in KERNELS}
    if unknown:
        raise ValueError(
            f"unknown kernels {sorted(unknown)}; known: {list(KERNELS_BY_NAME)} "
            f"(or a family: {sorted({k.family for k in KERNELS if k.pattern})})"
        )
    return [kernel for kernel in KERNELS if kernel.name in names or kernel.family in names]


def make_operands(kernel, data, rng):
    """The named operands of ``kernel`` on ``data`` (a MatrixData or TensorData)."""
    if kernel.on == "tensor":
        assert isinstance(data, TensorData)
        n_i, n_j, n_k = data.shape
        dense = {
            "mttkrp": {"C": (n_j, TENSOR_RANK), "D": (n_k, TENSOR_RANK)},
            "ttv": {"c": (n_k,)},
            "ttm": {"C": (TENSOR_RANK, n_k)},
        }[kernel.name]
        return {"B": data, **{name: rng.random(shape) for name, shape in dense.items()}}
    assert isinstance(data, MatrixData)
    A = data.matrix
    n_rows, n_cols = A.shape
    if kernel.name.startswith("spmv"):
        return {"A": A.asformat(kernel.input_format), "x": rng.random(n_cols)}
    if kernel.name.startswith("spmm"):
        columns = int(kernel.name.split("_")[1])
        return {"A": A, "X": rng.random((n_cols, columns))}
    if kernel.name in ("spgemm_aa", "spgemm_unsorted"):
        return {"A": A, "B": A}
    if kernel.name == "spgemm_aat":
        # Aᵀ is materialized as CSR before timing, for every peer alike.
        transposed = A.T.tocsr()
        transposed.sort_indices()
        return {"A": A, "B": transposed}
    if kernel.pattern:
        others = [name for name in kernel.inputs if name != "A"]
        return {"A": A, **dict(zip(others, patterns.partners(kernel.pattern, A, len(others), rng)))}
    if kernel.name == "sddmm":
        return {
            "A": A,
            "U": rng.random((n_rows, SDDMM_RANK)),
            "V": rng.random((n_cols, SDDMM_RANK)),
        }
    raise KeyError(kernel.name)


def dense_size(operands, kernel):
    """Elements of the largest dense array the dense reference would build."""
    shapes = [operand.shape for operand in operands.values()]
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape in shapes]
    out_indices = kernel.einsum.split("->")[1]
    extents = {}
    for subscripts, shape in zip(kernel.einsum.split("->")[0].split(","), shapes):
        extents.update(zip(subscripts, shape))
    sizes.append(int(np.prod([extents[c] for c in out_indices], dtype=np.int64)))
    return max(sizes)


def as_dense(operand):
    if isinstance(operand, TensorData):
        array = np.zeros(operand.shape)
        array[tuple(operand.coords.T)] = operand.values
        return array
    if sp.issparse(operand):
        return operand.toarray()
    return operand


def dense_reference(kernel, operands):
    """The result computed densely with opt_einsum (only for small operands)."""
    arrays = [as_dense(operands[name]) for name in kernel.inputs]
    return sum(arrays) if kernel.adds else opt_einsum.contract(kernel.einsum, *arrays)


def spmv_bytes(operands):
    """Bytes an SpMV must move at least: the matrix's values and index arrays (pos/crd,
    or row and column for COO), x read once and y written once."""
    A, x = operands["A"], operands["x"]
    if A.format == "coo":
        matrix = A.data.nbytes + sum(c.nbytes for c in A.coords)
    else:
        matrix = A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
    return int(matrix + x.nbytes + A.shape[0] * x.itemsize)
