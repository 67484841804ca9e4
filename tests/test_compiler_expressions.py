"""A combinatorial suite of compiled expressions (docs/reference.md, "Index notation", "Kernels and
the cache"): every expression × operand formats × both engines (C and LLVM), compared with NumPy on
the dense arrays; sparse results must also be canonical (sorted, no duplicates). Plus dtypes, empty
/ hypersparse / 1x1 / zero-size operands, explicit result formats, index notation, einsum, compiled
kernels and errors."""

import re
import time

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from compiler_cases import (
    ENGINES,
    FORMATS_BY_ORDER,
    OUT_FORMATS_BY_ORDER,
    UNASSEMBLED_OUT_FORMATS,
    assert_canonical,
    assert_values,
    dense_of,
    operand,
    random_array,
)

EXTENTS = {"i": 7, "j": 5, "k": 6, "l": 4}

E = np.einsum


class Case:
    """``statement`` over operands ``{name: (indices, role)}``; ``role`` is "any" (every
    format of its order), "dense" (dense only), "sparse" (sparse formats only) or "positive"
    (dense, every entry in [1, 2): a denominator). ``ref`` computes the result from the
    dense arrays (a dict)."""

    def __init__(self, name, statement, operands, ref):
        self.name, self.statement, self.operands, self.ref = name, statement, operands, ref

    def formats_for(self, name):
        indices, role = self.operands[name]
        fmts = FORMATS_BY_ORDER[len(indices)]
        if role in ("dense", "positive"):
            return ["dense"] if indices else [None]
        if role == "sparse":
            return [f for f in fmts if f != "dense"]
        return fmts

    def combos(self):
        """Format assignments: cyclic shifts (every operand meets every format of its order,
        next to different formats on the other operands), plus, with several sparse
        operands, all of them in one of SAME_FORMATS at once (csr + csr, coo ∘ coo, ...)."""
        names = list(self.operands)
        lists = [self.formats_for(n) for n in names]
        n = max(len(fs) for fs in lists)
        out = [tuple(fs[(k + p) % len(fs)] for p, fs in enumerate(lists)) for k in range(n)]
        if sum(len(fs) > 1 for fs in lists) > 1:
            for same in SAME_FORMATS:
                out.append(
                    tuple(
                        same.get(len(self.operands[nm][0]), fs[0])
                        if same.get(len(self.operands[nm][0])) in fs
                        else fs[0]
                        for nm, fs in zip(names, lists)
                    )
                )
        return [dict(zip(names, c)) for c in dict.fromkeys(out)]


# Formats given to every operand at once (by order), on top of the cyclic shifts.
SAME_FORMATS = [
    {1: "s", 2: "csr", 3: "csf"},
    {1: "s", 2: "coo", 3: "coo"},
    {1: "h", 2: "dh", 3: "sds:2,0,1"},
]


CASES = [
    # matrix-vector
    Case(
        "spmv",
        "y(i) = A(i,j) * x(j)",
        {"A": ("ij", "any"), "x": ("j", "any")},
        lambda d: d["A"] @ d["x"],
    ),
    Case(
        "spmv_transposed",
        "y(j) = A(i,j) * x(i)",
        {"A": ("ij", "any"), "x": ("i", "any")},
        lambda d: d["A"].T @ d["x"],
    ),
    Case(
        "spmspv",
        "y(i) = A(i,j) * x(j)",
        {"A": ("ij", "any"), "x": ("j", "sparse")},
        lambda d: d["A"] @ d["x"],
    ),
    Case(
        "spmv_two_terms",
        "y(i) = A(i,j) * x(j) + B(i,j) * z(j)",
        {"A": ("ij", "any"), "x": ("j", "dense"), "B": ("ij", "any"), "z": ("j", "any")},
        lambda d: d["A"] @ d["x"] + d["B"] @ d["z"],
    ),
    Case(
        "residual",
        "r(i) = b(i) - A(i,j) * x(j)",
        {"b": ("i", "any"), "A": ("ij", "any"), "x": ("j", "any")},
        lambda d: d["b"] - d["A"] @ d["x"],
    ),
    Case(
        "gemv_alpha_beta",
        "y(i) = alpha * A(j,i) * x(j) + beta * z(i)",
        {
            "alpha": ("", "dense"),
            "A": ("ji", "any"),
            "x": ("j", "any"),
            "beta": ("", "dense"),
            "z": ("i", "any"),
        },
        lambda d: d["alpha"] * (d["A"].T @ d["x"]) + d["beta"] * d["z"],
    ),
    Case(
        "gemv_literals",
        "y(i) = 2 * A(j,i) * x(j) + 0.5 * z(i)",
        {"A": ("ji", "any"), "x": ("j", "any"), "z": ("i", "any")},
        lambda d: 2 * (d["A"].T @ d["x"]) + 0.5 * d["z"],
    ),
    # matrix-matrix
    Case(
        "spmm_dense_rhs",
        "C(i,j) = A(i,k) * B(k,j)",
        {"A": ("ik", "any"), "B": ("kj", "dense")},
        lambda d: d["A"] @ d["B"],
    ),
    Case(
        "spmm_dense_lhs",
        "C(i,j) = B(i,k) * A(k,j)",
        {"B": ("ik", "dense"), "A": ("kj", "any")},
        lambda d: d["B"] @ d["A"],
    ),
    Case(
        "spgemm",
        "C(i,j) = A(i,k) * B(k,j)",
        {"A": ("ik", "any"), "B": ("kj", "any")},
        lambda d: d["A"] @ d["B"],
    ),
    Case(
        "spgemm_plus",
        "C(i,j) = A(i,k) * B(k,j) + D(i,j)",
        {"A": ("ik", "any"), "B": ("kj", "any"), "D": ("ij", "any")},
        lambda d: d["A"] @ d["B"] + d["D"],
    ),
    Case(
        "spgemm_transposed_operand",
        "C(i,j) = A(k,i) * B(k,j)",
        {"A": ("ki", "any"), "B": ("kj", "any")},
        lambda d: d["A"].T @ d["B"],
    ),
    # elementwise
    Case(
        "add2",
        "C(i,j) = A(i,j) + B(i,j)",
        {"A": ("ij", "any"), "B": ("ij", "any")},
        lambda d: d["A"] + d["B"],
    ),
    Case(
        "add3",
        "C(i,j) = A(i,j) + B(i,j) + D(i,j)",
        {"A": ("ij", "any"), "B": ("ij", "any"), "D": ("ij", "any")},
        lambda d: d["A"] + d["B"] + d["D"],
    ),
    Case(
        "sub",
        "C(i,j) = A(i,j) - B(i,j)",
        {"A": ("ij", "any"), "B": ("ij", "any")},
        lambda d: d["A"] - d["B"],
    ),
    Case(
        "mul",
        "C(i,j) = A(i,j) * B(i,j)",
        {"A": ("ij", "any"), "B": ("ij", "any")},
        lambda d: d["A"] * d["B"],
    ),
    Case(
        "mul3",
        "C(i,j) = A(i,j) * B(i,j) * D(i,j)",
        {"A": ("ij", "any"), "B": ("ij", "any"), "D": ("ij", "any")},
        lambda d: d["A"] * d["B"] * d["D"],
    ),
    Case(
        "add_then_mul",
        "C(i,j) = (A(i,j) + B(i,j)) * D(i,j)",
        {"A": ("ij", "any"), "B": ("ij", "any"), "D": ("ij", "any")},
        lambda d: (d["A"] + d["B"]) * d["D"],
    ),
    Case(
        "mul_then_add",
        "C(i,j) = A(i,j) * B(i,j) + D(i,j)",
        {"A": ("ij", "any"), "B": ("ij", "any"), "D": ("ij", "any")},
        lambda d: d["A"] * d["B"] + d["D"],
    ),
    Case(
        "mul_transposed",
        "C(i,j) = A(i,j) * B(j,i)",
        {"A": ("ij", "any"), "B": ("ji", "any")},
        lambda d: d["A"] * d["B"].T,
    ),
    Case(
        "add_transposed",
        "C(i,j) = A(i,j) + B(j,i)",
        {"A": ("ij", "any"), "B": ("ji", "any")},
        lambda d: d["A"] + d["B"].T,
    ),
    Case("transpose", "C(i,j) = A(j,i)", {"A": ("ji", "any")}, lambda d: d["A"].T),
    Case("copy", "C(i,j) = A(i,j)", {"A": ("ij", "any")}, lambda d: d["A"]),
    Case("negate", "C(i,j) = -A(i,j)", {"A": ("ij", "any")}, lambda d: -d["A"]),
    Case(
        "negate_sum",
        "C(i,j) = -(A(i,j) + B(i,j))",
        {"A": ("ij", "any"), "B": ("ij", "any")},
        lambda d: -(d["A"] + d["B"]),
    ),
    Case(
        "divide_dense",
        "C(i,j) = A(i,j) / D(i,j)",
        {"A": ("ij", "any"), "D": ("ij", "positive")},
        lambda d: d["A"] / d["D"],
    ),
    Case(
        "divide_vector",
        "z(i) = x(i) / b(i)",
        {"x": ("i", "any"), "b": ("i", "positive")},
        lambda d: d["x"] / d["b"],
    ),
    # broadcast and scaling
    Case(
        "broadcast_add_row",
        "C(i,j) = A(i,j) + b(j)",
        {"A": ("ij", "any"), "b": ("j", "any")},
        lambda d: d["A"] + d["b"][None, :],
    ),
    Case(
        "broadcast_mul_col",
        "C(i,j) = A(i,j) * b(i)",
        {"A": ("ij", "any"), "b": ("i", "any")},
        lambda d: d["A"] * d["b"][:, None],
    ),
    Case(
        "broadcast_sub_col",
        "C(i,j) = A(i,j) - b(i)",
        {"A": ("ij", "any"), "b": ("i", "any")},
        lambda d: d["A"] - d["b"][:, None],
    ),
    Case("scale_literal", "C(i,j) = 2.5 * A(i,j)", {"A": ("ij", "any")}, lambda d: 2.5 * d["A"]),
    Case(
        "scale_int_literal_right", "C(i,j) = A(i,j) * 3", {"A": ("ij", "any")}, lambda d: d["A"] * 3
    ),
    Case(
        "scale_alpha",
        "C(i,j) = alpha * A(i,j)",
        {"alpha": ("", "dense"), "A": ("ij", "any")},
        lambda d: d["alpha"] * d["A"],
    ),
    Case(
        "scaled_add",
        "C(i,j) = alpha * A(i,j) + 0.5 * B(i,j)",
        {"alpha": ("", "dense"), "A": ("ij", "any"), "B": ("ij", "any")},
        lambda d: d["alpha"] * d["A"] + 0.5 * d["B"],
    ),
    Case(
        "outer",
        "C(i,j) = x(i) * y(j)",
        {"x": ("i", "any"), "y": ("j", "any")},
        lambda d: np.outer(d["x"], d["y"]),
    ),
    # vectors and scalars
    Case(
        "vector_add",
        "z(i) = x(i) + y(i)",
        {"x": ("i", "any"), "y": ("i", "any")},
        lambda d: d["x"] + d["y"],
    ),
    Case(
        "vector_mul",
        "z(i) = x(i) * y(i)",
        {"x": ("i", "any"), "y": ("i", "any")},
        lambda d: d["x"] * d["y"],
    ),
    Case(
        "inner",
        "s = x(i) * y(i)",
        {"x": ("i", "any"), "y": ("i", "any")},
        lambda d: np.dot(d["x"], d["y"]),
    ),
    Case(
        "frobenius_inner",
        "s() = A(i,j) * B(i,j)",
        {"A": ("ij", "any"), "B": ("ij", "any")},
        lambda d: np.sum(d["A"] * d["B"]),
    ),
    Case("sum_all", "s = A(i,j)", {"A": ("ij", "any")}, lambda d: np.sum(d["A"])),
    Case(
        "bilinear",
        "s = x(i) * A(i,j) * y(j)",
        {"x": ("i", "any"), "A": ("ij", "any"), "y": ("j", "any")},
        lambda d: d["x"] @ d["A"] @ d["y"],
    ),
    # reductions
    Case(
        "row_sum_explicit",
        "y(i) = sum(j, A(i,j))",
        {"A": ("ij", "any")},
        lambda d: d["A"].sum(axis=1),
    ),
    Case("row_max", "y(i) = max(j, A(i,j))", {"A": ("ij", "any")}, lambda d: d["A"].max(axis=1)),
    Case("col_min", "y(j) = min(i, A(i,j))", {"A": ("ij", "any")}, lambda d: d["A"].min(axis=0)),
    Case(
        "row_max_of_product",
        "y(i) = max(j, A(i,j) * x(j))",
        {"A": ("ij", "any"), "x": ("j", "any")},
        lambda d: (d["A"] * d["x"][None, :]).max(axis=1),
    ),
    # sampled and tensor kernels
    Case(
        "sddmm",
        "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
        {"B": ("ij", "any"), "C": ("ik", "any"), "D": ("kj", "any")},
        lambda d: d["B"] * (d["C"] @ d["D"]),
    ),
    Case(
        "sddmm_dense_factors",
        "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
        {"B": ("ij", "any"), "C": ("ik", "dense"), "D": ("kj", "dense")},
        lambda d: d["B"] * (d["C"] @ d["D"]),
    ),
    Case(
        "mttkrp",
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        {"B": ("ikl", "any"), "C": ("kj", "any"), "D": ("lj", "any")},
        lambda d: E("ikl,kj,lj->ij", d["B"], d["C"], d["D"]),
    ),
    Case(
        "ttv",
        "A(i,j) = B(i,j,k) * c(k)",
        {"B": ("ijk", "any"), "c": ("k", "any")},
        lambda d: E("ijk,k->ij", d["B"], d["c"]),
    ),
    Case(
        "ttm",
        "A(i,j,l) = B(i,j,k) * C(l,k)",
        {"B": ("ijk", "any"), "C": ("lk", "any")},
        lambda d: E("ijk,lk->ijl", d["B"], d["C"]),
    ),
    Case(
        "tensor3_add",
        "A(i,j,k) = B(i,j,k) + C(i,j,k)",
        {"B": ("ijk", "any"), "C": ("ijk", "any")},
        lambda d: d["B"] + d["C"],
    ),
    Case(
        "tensor3_mul",
        "A(i,j,k) = B(i,j,k) * C(i,j,k)",
        {"B": ("ijk", "any"), "C": ("ijk", "any")},
        lambda d: d["B"] * d["C"],
    ),
    Case(
        "tensor3_inner",
        "s = B(i,j,k) * C(i,j,k)",
        {"B": ("ijk", "any"), "C": ("ijk", "any")},
        lambda d: np.sum(d["B"] * d["C"]),
    ),
    Case(
        "tensor3_mode_sum", "A(i,k) = B(i,j,k)", {"B": ("ijk", "any")}, lambda d: d["B"].sum(axis=1)
    ),
]


def make_data(case, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    data = {}
    for name, (indices, role) in case.operands.items():
        shape = tuple(EXTENTS[c] for c in indices)
        if role == "positive":
            data[name] = random_array(rng, shape, positive=True, dtype=dtype)
        elif not indices:
            scalar = rng.integers(2, 5) if np.dtype(dtype).kind in "iu" else rng.uniform(0.5, 2.0)
            data[name] = np.asarray(scalar).astype(dtype)
        else:
            data[name] = random_array(rng, shape, density=0.4, dtype=dtype)
    return data


def _combo_id(combo):
    return ",".join(f"{n}={f}" for n, f in combo.items() if f is not None) or "scalars"


def lhs_order(statement):
    lhs = statement.split("=")[0]
    return len(lhs.split(",")) if "(" in lhs and "()" not in lhs else 0


PARAMS = [
    pytest.param(case, combo, id=f"{case.name}[{_combo_id(combo)}]")
    for case in CASES
    for combo in case.combos()
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case,combo", PARAMS)
def test_expression(case, combo, engine):
    data = make_data(case, seed=len(case.name))
    tensors = {name: operand(data[name], combo[name]) for name in case.operands}
    result = ct.evaluate(case.statement, engine=engine, **tensors)
    assert_values(result, case.ref(data))


def test_suite_size():
    assert len({c.statement for c in CASES}) >= 40
    assert len(PARAMS) >= 400


# -- explicit result formats --------------------------------------------------------------------

OUT_CASES = [
    "spmv",
    "spgemm",
    "add2",
    "mul",
    "sub",
    "sddmm",
    "scale_literal",
    "transpose",
    "broadcast_mul_col",
    "outer",
    "tensor3_add",
    "ttm",
    "vector_add",
    "row_max",
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "case,out_format",
    [
        pytest.param(case, fmt, id=f"{case.name}->{fmt}")
        for case in CASES
        if case.name in OUT_CASES
        for fmt in OUT_FORMATS_BY_ORDER[lhs_order(case.statement)]
    ],
)
def test_explicit_out_format(case, out_format, engine):
    data = make_data(case, seed=3)
    combo = case.combos()[1]
    tensors = {name: operand(data[name], combo[name]) for name in case.operands}
    result = ct.evaluate(case.statement, out_format=out_format, engine=engine, **tensors)
    expected = case.ref(data)
    assert result.format == ct.as_format(out_format, expected.ndim)
    assert_values(result, expected)


@pytest.mark.parametrize("out_format", UNASSEMBLED_OUT_FORMATS)
def test_unassembled_result_formats_are_refused(out_format):
    a = ct.asarray(random_array(np.random.default_rng(0), (4, 3)), format="csr")
    with pytest.raises(ct.FormatError, match="result C: .* convert it with asformat"):
        ct.evaluate("C(i,j) = 2 * A(i,j)", A=a, out_format=out_format)


# -- inferred result formats (docs/reference.md, "Result formats") ---------------------------------

ADD = lambda a, b: a + b  # noqa: E731
MUL = lambda a, b: a * b  # noqa: E731
INFERRED = [
    ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "dense"}, "d", None),
    ("y(j) = A(i,j) * x(i)", {"A": "csc", "x": "dense"}, "d", None),
    ("y(i) = A(i,j) * x(j)", {"A": "coo", "x": "dense"}, "d", None),
    ("y(i) = A(i,j) * x(j)", {"A": "dcsr", "x": "dense"}, "d", None),
    ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "s"}, "s", None),
    ("C(i,j) = A(i,k) * B(k,j)", {"A": "csr", "B": "csr"}, "csr", None),
    ("C(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr"}, "csr", ADD),
    ("C(i,j) = A(i,j) * B(i,j)", {"A": "csr", "B": "csr"}, "csr", None),
    ("C(i,j) = A(i,j) + B(i,j)", {"A": "csc", "B": "csc"}, "csc", ADD),
    ("C(i,j) = A(i,j) * B(i,j)", {"A": "coo", "B": "coo"}, "coo", None),
    ("C(i,j) = A(i,j) * D(i,j)", {"A": "dcsr", "D": "dense"}, "dcsr", None),
    ("C(i,j) = A(i,j) * D(i,j)", {"A": "csr", "D": "dense"}, "csr", None),
    ("C(i,j) = 2 * A(i,j)", {"A": "csr"}, "csr", lambda a: 2 * a),
    ("A(i,j) = B(i,j) * C(i,k) * D(k,j)", {"B": "csr", "C": "dense", "D": "dense"}, "csr", None),
    ("C(i,j) = A(i,j) + D(i,j)", {"A": "csr", "D": "dense"}, "dense", ADD),
    ("C(i,j) = A(i,k) * D(k,j)", {"A": "csr", "D": "dense"}, "dense", None),
    ("A(i,j) = B(i,j,k) * c(k)", {"B": "csf", "c": "dense"}, "dense", None),
    (
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        {"B": "csf", "C": "dense", "D": "dense"},
        "dense",
        None,
    ),
    ("A(i,j,k) = B(i,j,k) * C(i,j,k)", {"B": "csf", "C": "csf"}, "csf", None),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "statement,formats,expected_format,ref", INFERRED, ids=[f"{s}|{f}" for s, f, _, _ in INFERRED]
)
def test_inferred_format(statement, formats, expected_format, ref, engine):
    """ref None: the right side is a single product (an einsum of the operands)."""
    rng = np.random.default_rng(7)
    extents = {"i": 6, "j": 5, "k": 4, "l": 3}
    parsed = {}
    rhs = statement.split("=", 1)[1]
    for name, idx in re.findall(r"([A-Za-z]+)\(([a-z,]*)\)", rhs):
        parsed[name] = idx.replace(",", "")
    data = {n: random_array(rng, [extents[c] for c in parsed[n]]) for n in formats}
    tensors = {n: operand(data[n], formats[n]) for n in formats}
    result = ct.evaluate(statement, engine=engine, **tensors)
    assert result.format == ct.as_format(expected_format, lhs_order(statement))
    if ref is None:
        spec = (
            ",".join(parsed[n] for n in formats)
            + "->"
            + statement.split("(")[1].split(")")[0].replace(",", "")
        )
        expected = np.einsum(spec, *[data[n] for n in formats])
    else:
        expected = ref(*[data[n] for n in formats])
    assert_values(result, expected)


# -- dtypes -------------------------------------------------------------------------------------

DTYPE_CASES = [
    "spmv",
    "spgemm",
    "add2",
    "sub",
    "mul",
    "sddmm",
    "scale_int_literal_right",
    "inner",
    "ttv",
    "negate",
    "row_max",
]
DTYPE_FORMATS = [("csr", "dense"), ("coo", "dcsc"), ("dcsr", "csr")]


def _typed_combos(case):
    for a, b in DTYPE_FORMATS:
        combo = {}
        for n in case.operands:
            fmts = case.formats_for(n)
            want = a if not combo else b
            combo[n] = want if want in fmts else fmts[len(combo) % len(fmts)]
        yield combo


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "case,combo,dtype",
    [
        pytest.param(case, combo, dtype, id=f"{case.name}[{_combo_id(combo)}]-{dtype}")
        for case in CASES
        if case.name in DTYPE_CASES
        for dtype in ["int64", "complex128", "float32", "int32"]
        # the narrow types on one format combination, the wide ones on all
        for combo in list(_typed_combos(case))[: 3 if dtype in ("int64", "complex128") else 1]
    ],
)
def test_dtypes(case, combo, dtype, engine):
    data = make_data(case, seed=11, dtype=dtype)
    tensors = {name: operand(data[name], combo[name]) for name in case.operands}
    result = ct.evaluate(case.statement, engine=engine, **tensors)
    expected = np.asarray(case.ref(data))
    rtol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    assert_values(result, expected, rtol=rtol, dtype=expected.dtype)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "statement,ref",
    [
        ("C(i,j) = A(i,j) * B(i,j)", lambda a, b: a * b),
        ("C(i,j) = A(i,j) + B(i,j)", lambda a, b: a + b),
        ("C(i,j) = A(i,k) * B(k,j)", lambda a, b: a @ b.T.T),
        ("C(i,j) = A(i,j) / B(i,j)", None),
    ],
    ids=["mul", "add", "matmul", "div"],
)
@pytest.mark.parametrize(
    "types",
    [
        ("int32", "float64"),
        ("float32", "float64"),
        ("int64", "float32"),
        ("int32", "int64"),
        ("float64", "complex128"),
        ("int8", "int16"),
        ("bool", "int32"),
    ],
    ids=lambda t: "*".join(t),
)
def test_type_promotion(statement, ref, types, engine):
    rng = np.random.default_rng(1)
    a = random_array(rng, (6, 6), dtype=types[0])
    if ref is None:  # division: dense positive denominator, true division
        b = (
            random_array(rng, (6, 6), positive=True, dtype="float64").astype(types[1])
            if np.dtype(types[1]).kind in "fc"
            else rng.integers(1, 5, (6, 6)).astype(types[1])
        )
        ref = lambda x, y: x / y  # noqa: E731
        fb = "dense"
    else:
        b = random_array(rng, (6, 6), dtype=types[1])
        fb = "csc"
    expected = ref(a, b)
    result = ct.evaluate(statement, A=operand(a, "csr"), B=operand(b, fb), engine=engine)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    rtol = 1e-5 if np.float32 in (np.dtype(types[0]), np.dtype(types[1])) else 1e-12
    assert_values(result, expected, rtol=rtol)


def test_scalar_literal_keeps_float32():
    """NumPy 2 promotion: a Python float literal does not widen float32."""
    a = random_array(np.random.default_rng(0), (5, 4), dtype="float32")
    for engine in ENGINES:
        result = ct.evaluate("C(i,j) = 2.5 * A(i,j)", A=operand(a, "csr"), engine=engine)
        assert_values(result, np.float32(2.5) * a, rtol=1e-6, dtype=np.float32)


# -- shapes: empty, zero-size, 1x1, hypersparse --------------------------------------------------

SHAPE_CASES = [
    "spmv",
    "spmv_transposed",
    "spgemm",
    "add2",
    "mul",
    "sub",
    "sddmm",
    "transpose",
    "scale_literal",
    "broadcast_add_row",
    "frobenius_inner",
    "row_max",
    "col_min",
    "residual",
    "spmm_dense_rhs",
    "outer",
    "mttkrp",
    "ttv",
    "tensor3_add",
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "extents",
    [
        {"i": 0, "j": 5, "k": 4, "l": 3},
        {"i": 6, "j": 0, "k": 4, "l": 3},
        {"i": 5, "j": 4, "k": 0, "l": 3},
        {"i": 1, "j": 1, "k": 1, "l": 1},
    ],
    ids=["i0", "j0", "k0", "all1"],
)
@pytest.mark.parametrize("case", [c for c in CASES if c.name in SHAPE_CASES], ids=lambda c: c.name)
def test_degenerate_shapes(case, extents, engine):
    if case.name in ("row_max", "col_min"):
        reduced = "j" if case.name == "row_max" else "i"
        if extents[reduced] == 0:
            extents = dict(extents, **{reduced: 2})  # max over nothing has no NumPy answer
    rng = np.random.default_rng(2)
    data = {}
    for name, (indices, role) in case.operands.items():
        shape = [extents[c] for c in indices]
        data[name] = (
            random_array(rng, shape, density=0.7, positive=role == "positive")
            if indices
            else np.asarray(1.5)
        )
    for combo in case.combos()[:3]:
        tensors = {name: operand(data[name], combo[name]) for name in case.operands}
        result = ct.evaluate(case.statement, engine=engine, **tensors)
        assert_values(result, case.ref(data))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", [c for c in CASES if c.name in SHAPE_CASES], ids=lambda c: c.name)
def test_all_zero_operands(case, engine):
    """nnz == 0 operands: results are exact zeros (and sparse results store nothing)."""
    data = {}
    for name, (indices, role) in case.operands.items():
        shape = [EXTENTS[c] for c in indices]
        data[name] = (
            (np.ones(shape) + 1 if role == "positive" else np.zeros(shape))
            if indices
            else np.asarray(1.5)
        )
    for combo in case.combos()[:3]:
        tensors = {name: operand(data[name], combo[name]) for name in case.operands}
        result = ct.evaluate(case.statement, engine=engine, **tensors)
        assert_values(result, case.ref(data))
        if all(lv.name != "dense" for lv in result.format.levels) and result.ndim:
            assert result.nnz == 0 or not np.any(result.values)


# A tensor in a format with derived levels (a diagonal, a slot or a block number per entry) is
# the sum over those levels of the entries they select. Where the expression is not linear in
# the tensor (a denominator, max/min), the sum binds around the tensor alone: once around the
# whole quotient, every diagonal but the entry's own added A / 0 = inf.
DERIVED_NONLINEAR = [
    ("C(i,j) = A(i,j) / B(i,j)", lambda A, B: A / B),
    ("C(i,j) = B(i,j) / A(i,j)", lambda A, B: B / A),
    ("C(i,j) = A(i,j) / (B(i,j) + A(i,j))", lambda A, B: A / (B + A)),
    ("C(i,j) = A(i,j) / (2 * B(i,j) * A(i,j))", lambda A, B: A / (2 * B * A)),
    ("y(i) = A(i,j) / (B(i,j) - A(i,j))", lambda A, B: (A / (B - A)).sum(axis=1)),
    # a where (the diagonals' workspace) inside a max's producer: declared once, not twice
    ("y(i) = max(j, A(i,j) * B(i,j))", lambda A, B: (A * B).max(axis=1)),
    ("y(i) = min(j, A(i,j) + B(i,j))", lambda A, B: (A + B).min(axis=1)),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fmt", ["dia", "ell", "bcsr"])
@pytest.mark.parametrize("a_format", ["dense", "csc"])
@pytest.mark.parametrize("statement,ref", DERIVED_NONLINEAR, ids=[s for s, _ in DERIVED_NONLINEAR])
def test_derived_level_operands_in_nonlinear_positions(statement, ref, a_format, fmt, engine):
    n = 6
    rng = np.random.default_rng(3)
    banded = sp.diags(
        [rng.random(n - 1) + 1, rng.random(n) + 1, rng.random(n - 2) + 1], [-1, 0, 2]
    ).toarray()
    A = rng.random((n, n)) + 1.0
    B = ct.asarray(banded, format=ct.bcsr((2, 2)) if fmt == "bcsr" else fmt)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = ref(A, banded)
        for schedule in ("default", None):
            result = ct.evaluate(
                statement,
                A=ct.asarray(A, format=a_format),
                B=B,
                engine=engine,
                schedule=schedule,
            )
            np.testing.assert_allclose(result.to_numpy(), expected, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("b_format", ["ell", "csr", "coo"])
@pytest.mark.parametrize("out_format", ["h", "s", "d"])
def test_a_workspace_merged_with_the_dimension_is_read_in_order(engine, b_format, out_format):
    # The workspace w(k) += A(j,i) * B(j,k) lists k as the producer touches them (unsorted);
    # `1.5 * w(k) + 1.5` merges that list with every k, which needs it sorted also when the
    # result is hashed (fuzz kernel case 1102527: the skipped k lost their sums).
    A = np.array(
        [[4, -1, 1, 1, 2, 4], [-3, 2, -1, -2, -3, -2], [-3, 1, 4, 4, 1, 3], [2, -2, 1, 2, 3, 2.0]]
    )
    B = np.array([[0, 0, 0], [0, 0, -4], [-3, 0, 0], [0, 2, 0.0]])
    got = ct.evaluate(
        "R(k) = 1.5 * sum(i, A(j,i) * B(j,k)) + 1.5",
        A=ct.asarray(A, format="csc"),
        B=ct.asarray(B, format=b_format),
        out_format=out_format,
        engine=engine,
    )
    np.testing.assert_allclose(got.to_numpy(), 1.5 * np.einsum("ji,jk->k", A, B) + 1.5)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("c_format", ["dia", "ell", "csr"])
def test_runs_of_a_non_unique_level_beside_a_derived_one(engine, c_format):
    # B in COO is iterated by runs of equal k, coiterated with C's diagonals; the run's end
    # was declared under the check that a diagonal's row lies in the matrix, and read after
    # it (fuzz kernel case 1200077: C code that did not compile, and a read of an unset
    # position in LLVM's).
    r = np.random.default_rng(0)
    B = r.random((3, 6, 3)) * (r.random((3, 6, 3)) < 0.5)
    C = np.array([[1.0, 2, 0], [0, 3, 4], [5, 0, 6]])
    got = ct.evaluate(
        "R = 1.5 * max(l, A * B(k,i,l) * C(l,k))",
        A=2.0,
        B=ct.asarray(B, format="coo"),
        C=ct.asarray(C, format=c_format),
        engine=engine,
    )
    expected = 1.5 * (2.0 * np.einsum("kil,lk->l", B, C)).max()
    np.testing.assert_allclose(dense_of(got), expected, rtol=1e-12)


def _complex_with_ties_and_nans(seed, shape=(9, 6)):
    r = np.random.default_rng(seed)
    d = (r.standard_normal(shape) + 1j * r.standard_normal(shape)) * (r.random(shape) < 0.5)
    d.real[r.random(shape) < 0.3] = 0.5  # equal real parts: the imaginary part decides
    d[r.random(shape) < 0.1] = complex(np.nan, 1.0)
    d[r.random(shape) < 0.05] = complex(1.0, np.nan)
    return d


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
def test_max_and_min_of_complex_values_order_them_as_numpy(engine, fmt):
    # Lexicographically (real part, then imaginary), a NaN in either part propagating, and the
    # unstored zeros seen (API.md), as np.max / np.min / np.maximum.
    a, b = _complex_with_ties_and_nans(1), _complex_with_ties_and_nans(2)
    A = ct.asarray(a, format=fmt)
    for statement, expected in [
        ("y(i) = max(j, A(i,j))", a.max(axis=1)),
        ("y(j) = max(i, A(i,j))", a.max(axis=0)),
        ("y(j) = min(i, A(i,j))", a.min(axis=0)),
        ("s = min(i, min(j, A(i,j)))", a.min()),
    ]:
        got = dense_of(ct.evaluate(statement, A=A, engine=engine))
        np.testing.assert_array_equal(got, expected, err_msg=statement)
    B = ct.asarray(b, format="csr")
    np.testing.assert_array_equal(np.asarray(np.maximum(A, B)), np.maximum(a, b))
    np.testing.assert_array_equal(np.asarray(np.minimum(A, B)), np.minimum(a, b))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("out_format", ["h", "s", "d"])
def test_c_engine_compiles_if_converted_loops_right(engine, out_format):
    # GCC 12.2 with -march=native on an AVX-512 CPU if-converted the loop that intersects a
    # diagonal's entry with an ELL slot's (masked loads) and miscompiled it: the hashed result
    # came out all zeros (fuzz kernel case 800236). The C engine turns that pass off.
    A = np.array([[1, 0, 0, 2, 0, 0], [0, 3, 0, 0, 4, 0], [5, 0, 6, 0, 0, 0], [0, 7, 0, 8, 0, 0.0]])
    B = np.array([[0, 1, 0, 0, 0, 2], [0, 2, 0, 3, 1, 0], [1, 0, 4, 0, 0, 0], [0, 0, 1, 0, 0, 1.0]])
    kernel = ct.compile(
        "R(i) = A(i,j) * B(i,j)",
        formats={"A": "dia", "B": "ell", "R": out_format},
        engine=engine,
    )
    result = kernel(A=ct.asarray(A, format="dia"), B=ct.asarray(B, format="ell"))
    np.testing.assert_array_equal(result.to_numpy(), (A * B).sum(axis=1))


@pytest.mark.parametrize("fmt", ["dia", "bcsr"])
@pytest.mark.parametrize("out_format", [None, "csr", "dense"])
def test_a_hashed_operand_beside_rows_a_derived_level_restricts(fmt, out_format):
    # Loop b over a diagonal's rows (or a block's) cannot iterate B's hashed rows: that loop
    # order is refused (a ScheduleError naming the level), so the legal conversions are found
    # instead of a lowering error ("B2 cannot be restricted to a block").
    rng = np.random.default_rng(5)
    A = rng.random((4, 6)) * (rng.random((4, 6)) < 0.6)
    B = rng.random((4, 2)) * (rng.random((4, 2)) < 0.6)
    a = ct.asarray(A, format=ct.bcsr((2, 2)) if fmt == "bcsr" else fmt)
    result = ct.einsum("ba,bc->ca", a, ct.asarray(B, format="dh"), out_format=out_format)
    np.testing.assert_allclose(result.to_numpy(), B.T @ A)
    if fmt == "dia":
        with pytest.raises(ct.ScheduleError, match="unordered level, which cannot be restricted"):
            ct.compile(
                "C(c,a) = A(b,a) * B(b,c)",
                formats={"A": "dia", "B": "dh:1,0", "C": "csr"},
                schedule="reorder(c,b,a)",
            )


N = 10**6


def _hypersparse(seed, nnz=5):
    rng = np.random.default_rng(seed)
    rows = rng.choice(N, nnz, replace=False)
    cols = rng.choice(N, nnz, replace=False)
    # Make the two operands overlap in some rows and coordinates.
    rows[:2] = [3, N - 1]
    cols[:2] = [N - 1, 7]
    return sp.coo_array((rng.uniform(1, 2, nnz), (rows, cols)), shape=(N, N))


def _assert_sparse_equal(result, expected):
    """Compare a (huge) sparse result with a SciPy matrix without densifying."""
    assert tuple(result.shape) == expected.shape
    assert_canonical(result)
    coords, values = result.coords()
    got = sp.coo_array((values, (coords[:, 0], coords[:, 1])), shape=expected.shape).tocsr()
    diff = (got - expected.tocsr()).tocoo()
    assert diff.nnz == 0 or np.max(np.abs(diff.data)) <= 1e-12 * max(
        1.0, np.abs(expected.data).max()
    ), f"result differs from SciPy in {diff.nnz} entries"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "formats", [("dcsr", "dcsr"), ("coo", "coo"), ("dcsc", "dcsr")], ids="-".join
)
@pytest.mark.parametrize(
    "statement,ref",
    [
        ("C(i,j) = A(i,j) + B(i,j)", lambda a, b: a + b),
        ("C(i,j) = A(i,j) - B(i,j)", lambda a, b: a - b),
        ("C(i,j) = A(i,j) * B(i,j)", lambda a, b: a.multiply(b)),
        ("C(i,j) = A(i,k) * B(k,j)", lambda a, b: a @ b),
        ("C(i,j) = A(j,i)", lambda a, b: a.T),
        ("C(i,j) = 2.5 * A(i,j) + B(i,j)", lambda a, b: 2.5 * a + b),
    ],
    ids=["add", "sub", "mul", "spgemm", "transpose", "axpy"],
)
def test_hypersparse(statement, ref, formats, engine):
    a, b = _hypersparse(0), _hypersparse(1)
    a = (a + sp.coo_array(([4.0], ([3], [7])), shape=(N, N))).tocoo()  # A(3,7)·B(7,·) meet
    tensors = {"A": ct.asarray(a, format=formats[0])}
    if "B" in statement:
        tensors["B"] = ct.asarray(b, format=formats[1])
    out_format = "dcsr" if formats[0] in ("dcsr", "coo") else "dcsc"
    result = ct.evaluate(statement, out_format=out_format, engine=engine, **tensors)
    assert result.format == ct.as_format(out_format, 2)
    _assert_sparse_equal(result, sp.csr_array(ref(a.tocsr(), b.tocsr())))


@pytest.mark.parametrize("engine", ENGINES)
def test_hypersparse_inferred_format_and_spmv(engine):
    a, b = _hypersparse(0), _hypersparse(1)
    A, B = ct.asarray(a, format="dcsr"), ct.asarray(b, format="dcsr")
    result = ct.evaluate("C(i,j) = A(i,j) * B(i,j) + A(i,j)", A=A, B=B, engine=engine)
    assert result.format == ct.as_format("dcsr", 2)
    _assert_sparse_equal(result, sp.csr_array(a.tocsr().multiply(b.tocsr()) + a.tocsr()))
    xs = ct.from_coords([[7], [N - 1]], [2.0, 3.0], shape=(N,), format="s")
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=A, x=xs, engine=engine)
    assert y.format == ct.as_format("s", 1)
    coords, values = y.coords()
    expected = a.tocsr() @ sp.csc_array(([2.0, 3.0], ([7, N - 1], [0, 0])), shape=(N, 1))
    expected = sp.coo_array(expected)
    assert sorted(zip(coords[:, 0].tolist(), values.tolist())) == sorted(
        zip(expected.row.tolist(), expected.data.tolist())
    )


@pytest.mark.parametrize("columns", ["spread", "clustered"])
@pytest.mark.parametrize(
    "schedule",
    [None, "reorder(i,k,j);precompute(A(i,k)*B(k,j),[j],[jw],hashed)"],
    ids=["dense-workspace", "hashed-workspace"],
)
@pytest.mark.parametrize("engine", ENGINES)
def test_spgemm_rows_of_every_length_come_out_sorted(schedule, engine, columns):
    # Row r of the result is the union of B's rows r and r + n, whose columns interleave, so
    # the workspace receives them out of order; the rows' lengths sweep every sorting method
    # (vector sorting networks up to 256 columns, splitting into parts the networks sort up to
    # 1024, radix above). Spread columns lie too far apart for a bitmap; clustered ones lie in
    # a small part of the range but one, so splits at the middle of the range do not divide them
    # and the split sort hands them to radix.
    n, cols = 1100, 10**6
    rng = np.random.default_rng(11)
    pool = cols if columns == "spread" else 4 * n

    def row(size, far):
        picked = rng.choice(pool, size=size, replace=False)
        return np.sort(np.append(picked, cols - 1) if far and columns == "clustered" else picked)

    rows_of_b = [row(r // 2 + r % 2, True) for r in range(n)] + [
        row(r // 2, False) for r in range(n)
    ]
    B = sp.csr_array(
        (
            np.ones(sum(map(len, rows_of_b))),
            np.concatenate(rows_of_b),
            np.concatenate([[0], np.cumsum(list(map(len, rows_of_b)))]),
        ),
        shape=(2 * n, cols),
    )
    B.sum_duplicates()
    A = sp.csr_array(
        (
            np.ones(2 * n),
            np.stack([np.arange(n), np.arange(n) + n], axis=1).ravel(),
            np.arange(0, 2 * n + 1, 2),
        ),
        shape=(n, 2 * n),
    )
    kern = ct.compile(
        "C(i,j) = A(i,k) * B(k,j)",
        formats={"A": "csr", "B": "csr", "C": "csr"},
        schedule=schedule,
        engine=engine,
    )
    result = kern(A=ct.asarray(A), B=ct.asarray(B))
    assert_canonical(result)
    _assert_sparse_equal(result, sp.csr_array(A @ B))


# -- index notation, einsum, compiled kernels ---------------------------------------------------


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "dcsr", "dh"])
def test_index_notation(fmt):
    rng = np.random.default_rng(4)
    a, b = random_array(rng, (6, 5)), random_array(rng, (6, 5))
    x = rng.standard_normal(5)
    i, j = ct.indices("i j")
    A, B, X = operand(a, fmt), operand(b, "csr"), ct.asarray(x)
    y = ct.zeros((6,), "dense")
    y[i] = A[i, j] * X[j]
    np.testing.assert_allclose(y.to_numpy(), a @ x, rtol=1e-12)
    y[i] += A[i, j] * X[j]
    np.testing.assert_allclose(y.to_numpy(), 2 * (a @ x), rtol=1e-12)
    C = ct.zeros((6, 5), "csr")
    C[i, j] = A[i, j] + B[i, j]
    assert_values(C, a + b)
    C[i, j] = -A[i, j] * B[i, j] + 2 * A[i, j]
    assert_values(C, -a * b + 2 * a)
    m = ct.zeros((6,), "dense")
    m[i] = ct.max(j, A[i, j])
    np.testing.assert_array_equal(m.to_numpy(), a.max(axis=1))
    m[i] = ct.min(j, A[i, j])
    np.testing.assert_array_equal(m.to_numpy(), a.min(axis=1))
    s = ct.zeros((), "dense")
    s[()] = ct.sum(i, ct.sum(j, A[i, j] * B[i, j]))
    np.testing.assert_allclose(s.to_numpy(), np.sum(a * b), rtol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "subscripts,shapes,formats",
    [
        ("ij,j->i", [(6, 5), (5,)], ["csr", "dense"]),
        ("ij,jk->ik", [(6, 5), (5, 4)], ["csr", "csc"]),
        ("ij,ij->ij", [(6, 5), (6, 5)], ["coo", "dcsr"]),
        ("ij,ij", [(6, 5), (6, 5)], ["csr", "csr"]),
        ("ij->ji", [(6, 5)], ["csr"]),
        ("ii->i", [(5, 5)], ["csr"]),
        ("ii", [(5, 5)], ["coo"]),
        ("ijk,jl,kl->il", [(4, 5, 3), (5, 2), (3, 2)], ["csf", "dense", "dense"]),
        ("...j,j->...", [(6, 5), (5,)], ["dcsc", "s"]),
        ("i,j->ij", [(6,), (5,)], ["s", "dense"]),
    ],
)
def test_einsum(subscripts, shapes, formats, engine):
    rng = np.random.default_rng(9)
    arrays = [random_array(rng, s, density=0.5, empty_slices=False) for s in shapes]
    result = ct.einsum(subscripts, *[operand(a, f) for a, f in zip(arrays, formats)], engine=engine)
    assert_values(result, np.einsum(subscripts, *arrays))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "statement,formats,ref",
    [
        ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "d", "y": "d"}, lambda d: d["A"] @ d["x"]),
        ("y(i) = A(i,j) * x(j)", {"A": "csc", "x": "s", "y": "d"}, lambda d: d["A"] @ d["x"]),
        (
            "C(i,j) = A(i,k) * B(k,j)",
            {"A": "csr", "B": "csr", "C": "csr"},
            lambda d: d["A"] @ d["B"],
        ),
        (
            "C(i,j) = A(i,k) * B(k,j)",
            {"A": "dcsr", "B": "csc", "C": "dcsc"},
            lambda d: d["A"] @ d["B"],
        ),
        (
            "C(i,j) = A(i,j) + B(i,j)",
            {"A": "coo", "B": "csr", "C": "coo"},
            lambda d: d["A"] + d["B"],
        ),
    ],
)
def test_compiled_kernel(statement, formats, ref, engine):
    kern = ct.compile(statement, formats=formats, dtype=np.float64, engine=engine)
    rng = np.random.default_rng(12)
    names = [n for n in formats if n not in ("y", "C")]
    for call in range(2):  # the same kernel on fresh data of other shapes
        ext = {"i": 5 + call, "j": 4 + 2 * call, "k": 3 + call}
        data = {}
        for n in names:
            idx = statement.split(n + "(")[1].split(")")[0].replace(",", "")
            data[n] = random_array(rng, [ext[c] for c in idx])
        result = kern(**{n: operand(data[n], formats[n]) for n in names})
        out = [n for n in formats if n in ("y", "C")][0]
        assert result.format == ct.as_format(formats[out], len(ref(data).shape))
        assert_values(result, ref(data))


# -- errors -------------------------------------------------------------------------------------


def test_evaluate_refuses_a_misspelt_option():
    # An option's misspelling must not be ignored silently; tensors the statement does not
    # read may be passed (one namespace of tensors for several statements).
    with pytest.raises(TypeError, match=r"\['formats'\] is not a tensor .* reads \['A', 'x'\]"):
        ct.evaluate("y(i) = A(i,j) * x(j)", A=np.eye(3), x=np.ones(3), formats={"y": "s"})
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=np.eye(3), x=np.ones(3), z=np.ones(2))
    np.testing.assert_allclose(y.to_numpy(), np.ones(3))


@pytest.mark.parametrize("engine", ENGINES)
def test_mismatched_extents_raise_shape_error(engine):
    a = ct.asarray(np.ones((3, 4)), format="csr")
    b = ct.asarray(np.ones((3, 5)), format="csr")
    with pytest.raises(ct.ShapeError):
        ct.evaluate("C(i,j) = A(i,j) + B(i,j)", A=a, B=b, engine=engine)
    with pytest.raises(ct.ShapeError):
        ct.evaluate("y(i) = A(i,j) * x(j)", A=a, x=np.ones(3), engine=engine)
    with pytest.raises(ct.ShapeError):
        ct.evaluate("C(i,j) = A(i,k) * B(k,j)", A=a, B=b, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_index_with_two_extents_in_one_access_raises_shape_error(engine):
    a = ct.asarray(np.ones((3, 4)), format="csr")
    with pytest.raises(ct.ShapeError):
        ct.evaluate("y(i) = A(i,i)", A=a, engine=engine)


def test_mismatched_extents_in_index_notation():
    i, j = ct.indices("i j")
    a = ct.asarray(np.ones((3, 4)), format="csr")
    x = ct.asarray(np.ones(5))
    y = ct.zeros((3,), "dense")
    with pytest.raises(ct.ShapeError):
        y[i] = a[i, j] * x[j]
    z = ct.zeros((4,), "dense")
    with pytest.raises(ct.ShapeError):  # result extent disagrees
        z[i] = a[i, j] * ct.asarray(np.ones(4))[j]


@pytest.mark.parametrize("engine", ENGINES)
def test_wrong_number_of_indices_raises_shape_error(engine):
    a = ct.asarray(np.ones((3, 4)), format="csr")
    with pytest.raises(ct.ShapeError):
        ct.evaluate("y(i) = A(i)", A=a, engine=engine)
    with pytest.raises(ct.ShapeError):
        ct.evaluate("y(i) = A(i,j,k) * x(k)", A=a, x=np.ones(4), engine=engine)
    i, j, k = ct.indices("i j k")
    y = ct.zeros((3,), "dense")
    with pytest.raises(ct.ShapeError):
        y[i] = a[i, j, k]
    with pytest.raises(ct.ShapeError):
        y[i, j] = a[i, j]


@pytest.mark.parametrize(
    "text,column",
    [
        ("y(i) = A(i,j) * ", 17),
        ("y(i) = A(i,j) $ x(j)", 15),
        ("y(i) = A(i,j) * x(j))", 21),
        ("y(i) = A(i,j * x(j)", 14),
        ("(i) = A(i)", 1),
        ("y(i) A(i)", 6),
        ("y(i) = A(i,2)", 12),
        ("y(i) = A(i) + A(i,j)", 15),
    ],
)
def test_bad_strings_raise_parse_error(text, column):
    with pytest.raises(ct.ParseError) as info:
        ct.evaluate(text, A=np.ones((2, 2)), x=np.ones(2))
    assert isinstance(info.value, ValueError)
    assert info.value.column == column, (info.value.column, str(info.value))
    with pytest.raises(ct.ParseError):
        ct.compile(text, formats={"A": "csr", "x": "d", "y": "d"})


@pytest.mark.parametrize("engine", ENGINES)
def test_kernel_signature_errors(engine):
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr", "x": "d", "y": "d"},
        dtypes={"A": np.float64, "x": np.float64, "y": np.float64},
        engine=engine,
    )
    a = random_array(np.random.default_rng(0), (4, 3))
    x = np.ones(3)
    np.testing.assert_allclose(kern(A=ct.asarray(a, format="csr"), x=x).to_numpy(), a @ x)
    for bad in [
        ct.asarray(a, format="csc"),
        ct.asarray(a, format="coo"),
        ct.asarray(a),
        ct.asarray(a, format="dcsr"),
        ct.asarray(a.astype(np.float32), format="csr"),
        ct.asarray(a.astype(np.int64), format="csr"),
        ct.asarray(np.ones((4, 3, 2)), format="csf"),
    ]:
        with pytest.raises(ct.SignatureError) as info:
            kern(A=bad, x=x)
        assert isinstance(info.value, TypeError)
    with pytest.raises(ct.SignatureError):
        kern(A=ct.asarray(a, format="csr"), x=ct.asarray(x, format="s"))
    with pytest.raises(ct.ShapeError):
        kern(A=ct.asarray(a, format="csr"), x=np.ones(5))


# -- hostile statements (found by tests/test_fuzz.py): typed errors, promptly --------------------


@pytest.mark.parametrize(
    "text,column,message",
    [
        # The column is that of the token where the nesting passes the limit: the 102nd "(",
        # "-" or "sum", the "+" after the 101st term.
        ("y(i) = " + "(" * 150 + "x(i)" + ")" * 150, 109, "nests deeper than 100"),
        ("y(i) = " + "-" * 5000 + "x(i)", 109, "nests deeper than 100"),
        ("y = " + "sum(i," * 500 + "x(i)" + ")" * 500, 611, "nests deeper than 100"),
        ("y(i) = " + " + ".join(["x(i)"] * 20000), 713, "nests deeper than 100"),
        ("y(i) = 99999999999999999999 * x(i)", 8, "does not fit in int64"),
        ("y(i) = x(i) * y(i)", 15, "cannot also be an input"),
        ("y(i) += x(i)", 6, "nothing to accumulate"),
    ],
)
def test_hostile_statements_raise_parse_error(text, column, message):
    # Before: RecursionError (nesting), a TypeError from the bindings (the literal), a
    # KeyError (the result used as an input) and a plain ValueError ('+=').
    with pytest.raises(ct.ParseError, match=message) as info:
        ct.evaluate(text, x=np.ones(3), y=np.ones(3))
    assert info.value.column == column, (info.value.column, str(info.value)[:200])


@pytest.mark.parametrize("engine", ENGINES)
def test_long_sums_of_dense_operands_compile_promptly(engine):
    # The iteration lattice of a union kept every point with the same iterators: a sum of
    # n dense operands built 2^n points (n = 16 took minutes).
    x = np.arange(5.0)
    start = time.perf_counter()
    result = ct.evaluate("y(i) = " + " + ".join(["x(i)"] * 60), x=x, engine=engine)
    np.testing.assert_allclose(result.to_numpy(), 60 * x)
    assert time.perf_counter() - start < 60


def test_unions_of_too_many_sparse_operands_are_refused():
    # 2^12 - 1 lattice points: a CompileError instead of a compile that never ends.
    names = "abcdefghijkl"
    vectors = {n: ct.asarray(np.eye(1, 12, k).ravel(), format="s") for k, n in enumerate(names)}
    with pytest.raises(ct.CompileError, match="more than 1024 points"):
        ct.compile(
            "y(i) = " + " + ".join(f"{n}(i)" for n in names),
            formats={**{n: "s" for n in names}, "y": "d"},
        )
    # Six (63 points) still compile and add up.
    six = "y(i) = " + " + ".join(f"{n}(i)" for n in names[:6])
    np.testing.assert_allclose(
        ct.evaluate(six, **{n: vectors[n] for n in names[:6]}).to_numpy(),
        np.r_[np.ones(6), np.zeros(6)],
    )


def test_deep_operator_expressions_raise_compile_error():
    # Built with Python operators, a sum of 3000 terms reached the compiler's recursive passes
    # and ended in a RecursionError; 100 levels, the parser's limit too, still work.
    i = ct.IndexVar("i")
    x, y = ct.asarray(np.arange(3.0)), ct.zeros((3,), "dense")
    deep = x[i]
    for _ in range(3000):
        deep = deep + x[i]
    with pytest.raises(ct.CompileError, match="nests deeper than 100"):
        y[i] = deep
    ok = x[i]
    for _ in range(99):
        ok = ok + x[i]
    y[i] = ok
    np.testing.assert_allclose(y.to_numpy(), 100 * np.arange(3.0))


def _rows_that_merge_every_way(seed, n_cols=40):
    """CSR matrices whose rows meet in every way a merge steps through: runs of one operand
    longer than the merge's lookahead (an intersection leaps over them, after which the
    carried coordinates are read again: the last row lands both on column 20), interleaved
    entries, a shared prefix (lockstep) that then diverges, empty rows on either side, and
    random rows."""
    r = np.random.default_rng(seed)
    run_a, run_b = [*range(0, 10), 20, 25, 26], [*range(10, 15), 20, 25, 30]
    rows_a = [range(10), [1, 3, 5, 7, 9], range(21), [], [2, 4, 6], [0, 1, 2, 8, 30, 31], run_a]
    rows_b = [range(10, 20), [0, 2, 4, 6, 8, 39], [3, 15], [5, 6], [], [0, 1, 2, *range(9, 15)]]
    rows_b.append(run_b)
    rows_d = [range(5, 15), [9, 10], range(18, 30), [6], [4], [2, 3, 30], [0, 10, 12, 25, 30]]
    for rows in (rows_a, rows_b, rows_d):
        rows.append([])  # a row empty in every operand: skipped whole
    for _ in range(12):
        rows_a.append(np.sort(r.choice(n_cols, r.integers(0, 15), replace=False)))
        rows_b.append(np.sort(r.choice(n_cols, r.integers(0, 15), replace=False)))
        rows_d.append(np.sort(r.choice(n_cols, r.integers(0, 15), replace=False)))

    def csr(rows):
        dense = np.zeros((len(rows), n_cols))
        for i, cols in enumerate(rows):
            dense[i, list(cols)] = r.random(len(cols)) + 0.5
        return sp.csr_array(dense)

    return csr(rows_a), csr(rows_b), csr(rows_d)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("out_format", ["csr", "dense"])
def test_merges_carry_coordinates_across_runs_and_row_ends(engine, out_format):
    # A merge step carries each operand's coordinate and loads its next one ahead; an
    # intersection's leap over a run moves the positions, after which the carried coordinates
    # are read again (without, the product misses column 20 of the last fixed row).
    A, B, D = _rows_that_merge_every_way(3)
    a, b, d = A.toarray(), B.toarray(), D.toarray()
    for statement, expected in [
        ("C(i,j) = A(i,j) + B(i,j)", a + b),
        ("C(i,j) = A(i,j) * B(i,j)", a * b),
        ("C(i,j) = A(i,j) + B(i,j) + D(i,j)", a + b + d),
        ("C(i,j) = A(i,j) * B(i,j) * D(i,j)", a * b * d),
        ("C(i,j) = (A(i,j) + B(i,j)) * D(i,j)", (a + b) * d),
        ("C(i,j) = A(i,j) - 2 * B(i,j) * D(i,j)", a - 2 * b * d),
    ]:
        got = ct.evaluate(statement, A=A, B=B, D=D, out_format=out_format, engine=engine)
        np.testing.assert_allclose(dense_of(got), expected, rtol=1e-12, err_msg=statement)
        if out_format == "csr":
            assert_canonical(got)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("out_format", ["csr", "dense"])
def test_rows_empty_in_every_operand_are_skipped_whole(engine, out_format):
    # Most rows of a hypersparse matrix are empty in every operand: a merge's row is skipped at
    # one test where no lattice point can iterate (sums: some operand's row holds an entry;
    # products: all do), and the result's row offsets still come out right.
    r = np.random.default_rng(11)
    n = 3000
    A, B, D = (sp.random(n, n, density=3e-5, format="csr", random_state=r) for _ in range(3))
    a, b, d = A.toarray(), B.toarray(), D.toarray()
    for statement, expected in [
        ("C(i,j) = A(i,j) + B(i,j)", a + b),
        ("C(i,j) = A(i,j) * B(i,j)", a * b),
        ("C(i,j) = A(i,j) + B(i,j) * D(i,j)", a + b * d),
        ("C(i,j) = A(i,j) * (B(i,j) + D(i,j))", a * (b + d)),
    ]:
        got = ct.evaluate(statement, A=A, B=B, D=D, out_format=out_format, engine=engine)
        np.testing.assert_array_equal(dense_of(got), expected, err_msg=statement)
        if out_format == "csr":
            assert_canonical(got)
