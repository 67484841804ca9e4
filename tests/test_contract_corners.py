"""Corners of the user contract (docs/reference.md), each checked against NumPy or SciPy."""

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct


# -- an index with two extents (docs/reference.md, "Index notation") -------------------------------
@pytest.mark.parametrize(
    "subscripts, shapes, index, extents",
    [
        ("aab", [(2, 3, 4)], "a", (2, 3)),  # within one operand
        ("ii->", [(2, 3)], "i", (2, 3)),
        ("ij,jk->ik", [(2, 3), (4, 5)], "j", (3, 4)),  # across operands
        ("ii,i->i", [(3, 3), (4,)], "i", (3, 4)),  # a diagonal, then another operand
    ],
)
def test_einsum_rejects_an_index_with_two_extents(subscripts, shapes, index, extents):
    rng = np.random.default_rng(0)
    arrays = [rng.random(s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subscripts, *arrays)
    with pytest.raises(
        ct.ShapeError, match=rf"index '{index}'.*extent {extents[0]}.*extent {extents[1]}"
    ):
        ct.einsum(subscripts, *arrays)


def test_notation_rejects_an_index_with_two_extents():
    x = np.random.default_rng(1).random((2, 3, 4))
    with pytest.raises(ct.ShapeError, match=r"index 'i'.*extent 2.*extent 3"):
        ct.evaluate("y(j) = A(i,i,j)", A=x)
    i, j = ct.indices("i j")
    A = ct.asarray(x, name="A")
    y = ct.zeros((4,))
    with pytest.raises(ct.ShapeError, match=r"index 'i'.*extent 2.*extent 3"):
        y[j] = A[i, i, j]


@pytest.mark.parametrize(
    "subscripts, shape",
    [
        ("ii->", (4, 4)),
        ("ii->i", (4, 4)),
        ("ii", (4, 4)),
        ("iij->j", (3, 3, 5)),
        ("iji->j", (3, 5, 3)),
    ],
)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_repeated_indices_with_one_extent_match_numpy(subscripts, shape, sparse):
    rng = np.random.default_rng(2)
    x = rng.random(shape) * (rng.random(shape) < 0.6)
    operand = ct.asarray(x, format="csf") if sparse else x
    np.testing.assert_allclose(np.asarray(ct.einsum(subscripts, operand)), np.einsum(subscripts, x))


def test_notation_with_a_repeated_index_matches_numpy():
    x = np.random.default_rng(3).random((3, 3, 5))
    np.testing.assert_allclose(
        np.asarray(ct.evaluate("y(j) = A(i,i,j)", A=x)), np.einsum("iij->j", x)
    )


# -- the dense-size limit applies to inferred formats only (docs/reference.md, "Result formats",
# rule 3) -----------------------------------------------------------------------------------------
@pytest.fixture
def small_dense_limit(monkeypatch):
    """A 4x4 float64 result (128 bytes) is just over this limit."""
    monkeypatch.setattr(ct.config, "max_dense_bytes", 127)


def test_an_inferred_dense_result_over_the_limit_raises(small_dense_limit):
    a = np.arange(16.0).reshape(4, 4)
    with pytest.raises(ct.ShapeError, match="max_dense_bytes"):
        ct.evaluate("C(i,j) = A(i,j) + B(i,j)", A=a, B=a)


@pytest.mark.parametrize("out_format", ["dense", "dd", ct.Format([ct.dense, ct.dense])])
def test_an_explicit_dense_result_is_not_limited(small_dense_limit, out_format):
    a = np.arange(16.0).reshape(4, 4)
    c = ct.evaluate("C(i,j) = A(i,j) + B(i,j)", A=a, B=a, out_format=out_format)
    np.testing.assert_array_equal(np.asarray(c), 2 * a)
    np.testing.assert_array_equal(
        np.asarray(ct.einsum("ij,jk->ik", a, a, out_format=out_format)), a @ a
    )


# -- SciPy COO keeps its index width (docs/reference.md, "Tensors") --------------------------------
def _coo(cls, row_dtype, col_dtype):
    """A non-canonical (unsorted, one duplicate) 4x5 COO matrix with the given index dtypes."""
    row = np.array([3, 0, 2, 0, 3])
    col = np.array([1, 4, 2, 4, 0])
    coo = cls((np.arange(1.0, 6.0), (row.astype(np.int32), col.astype(np.int32))), shape=(4, 5))
    coo.coords = (row.astype(row_dtype), col.astype(col_dtype))  # SciPy narrows on construction
    return coo


@pytest.mark.parametrize("cls", [sp.coo_array, sp.coo_matrix])
@pytest.mark.parametrize(
    "row_dtype, col_dtype, expected",
    [
        (np.int32, np.int32, np.int32),
        (np.int64, np.int64, np.int64),
        (np.int32, np.int64, np.int64),
        (np.int64, np.int32, np.int64),
    ],
)
def test_scipy_coo_keeps_its_index_width(cls, row_dtype, col_dtype, expected):
    coo = _coo(cls, row_dtype, col_dtype)
    assert (coo.row.dtype, coo.col.dtype) == (row_dtype, col_dtype)
    t = ct.asarray(coo)
    assert t.format == ct.as_format("coo", 2)
    assert t.index_dtype == expected
    arrays = [array for level in t.levels for array in level.arrays.values()]
    assert len(arrays) == 3 and all(array.dtype == expected for array in arrays)  # pos, crd; crd
    np.testing.assert_array_equal(t.to_numpy(), coo.toarray())


def test_non_canonical_scipy_csr_keeps_its_index_width():
    # Unsorted columns: converted through coordinates, where csr_matrix.tocoo() narrows to int32.
    csr = sp.csr_matrix(
        sp.csr_array(
            (np.arange(1.0, 4.0), np.array([2, 0, 1], np.int64), np.array([0, 2, 2, 3], np.int64)),
            shape=(3, 3),
        )
    )
    assert csr.indices.dtype == np.int64 and not csr.has_sorted_indices
    t = ct.asarray(csr)
    assert t.index_dtype == np.int64
    assert t.levels[1].crd.dtype == np.int64 and t.levels[1].pos.dtype == np.int64
    np.testing.assert_array_equal(t.to_numpy(), csr.toarray())


# -- compiled definitions (docs/reference.md, "Index notation", "Kernels and the cache") -----------
@pytest.fixture
def spmv():
    """``y[i] = A[i, j] * x[j]`` assigned, not computed, with its SciPy/NumPy reference."""
    i, j = ct.indices("i j")
    a = sp.random_array((30, 20), density=0.3, format="csr", random_state=4)
    x = np.random.default_rng(4).random(20)
    A, xt = ct.asarray(a, name="A"), ct.asarray(x, name="x")
    y = ct.zeros((30,), name="y")
    y[i] = A[i, j] * xt[j]
    return y, a @ x


def test_evaluating_a_compiled_definition_does_not_compile_it_again(spmv):
    y, expected = spmv
    kern = ct.compile(y)
    before = ct.cache_info()
    np.testing.assert_allclose(np.asarray(y), expected)
    after = ct.cache_info()
    assert (after["compiles"], after["hits"], after["misses"]) == (
        before["compiles"],
        before["hits"],
        before["misses"],
    )
    kern()  # the kernel still recomputes y
    np.testing.assert_allclose(np.asarray(y), expected)


def test_a_computed_definition_can_be_compiled_with_a_schedule(spmv):
    y, expected = spmv
    np.testing.assert_allclose(np.asarray(y), expected)
    kern = ct.compile(y, schedule=ct.Schedule().split("i", "i0", "i1", 8))
    assert "split(8)" in kern.concrete
    y.values[:] = 0.0
    kern()
    np.testing.assert_allclose(np.asarray(y), expected)


def test_an_assignment_without_definition_cannot_be_compiled():
    with pytest.raises(ValueError, match="no definition"):
        ct.compile(ct.zeros((3,), name="y"))


# -- where an implicit sum binds (docs/reference.md, "Index notation") -----------------------------
# (statement, [] form, NumPy reference): the sum binds to the smallest term holding every use of
# the summed index. Each reference differs from the sum taken around the whole expression.
BINDINGS = [
    (
        "a(i) = b(i) * (c(i) + d(j,i))",
        lambda t, i, j, k: t["b"][i] * (t["c"][i] + t["d"][j, i]),
        lambda v: v["b"] * (v["c"] + v["d"].sum(0)),
    ),
    (
        "a(i) = b(i) + e(i,j)",
        lambda t, i, j, k: t["b"][i] + t["e"][i, j],
        lambda v: v["b"] + v["e"].sum(1),
    ),
    (
        "a(i) = e(i,j) * f(j) + c(i)",
        lambda t, i, j, k: t["e"][i, j] * t["f"][j] + t["c"][i],
        lambda v: v["e"] @ v["f"] + v["c"],
    ),
    (
        "a(i) = b(i) * (c(i) * (b(i) - e(i,j)) + c(i))",  # nested parentheses
        lambda t, i, j, k: t["b"][i] * (t["c"][i] * (t["b"][i] - t["e"][i, j]) + t["c"][i]),
        lambda v: v["b"] * (v["c"] * (v["b"] - v["e"].sum(1)) + v["c"]),
    ),
    (
        "a(i) = (e(i,j) + c(i)) * f(j)",  # j in two factors: the sum covers the product
        lambda t, i, j, k: (t["e"][i, j] + t["c"][i]) * t["f"][j],
        lambda v: ((v["e"] + v["c"][:, None]) * v["f"]).sum(1),
    ),
    (
        "a(i) = b(i) / (c(i) + e(i,j))",  # a denominator
        lambda t, i, j, k: t["b"][i] / (t["c"][i] + t["e"][i, j]),
        lambda v: v["b"] / (v["c"] + v["e"].sum(1)),
    ),
    (
        "a(i) = b(i) * -(c(i) - d(j,i))",
        lambda t, i, j, k: t["b"][i] * -(t["c"][i] - t["d"][j, i]),
        lambda v: v["b"] * -(v["c"] - v["d"].sum(0)),
    ),
    (
        "a(i) = b(i) * max(k, e(i,k) + g(k,j))",  # inside an explicit reduction
        lambda t, i, j, k: t["b"][i] * ct.max(k, t["e"][i, k] + t["g"][k, j]),
        lambda v: v["b"] * (v["e"] + v["g"].sum(1)).max(1),
    ),
]


def _binding_operands(matrix_format):
    rng = np.random.default_rng(5)
    n, m = 6, 6  # e(i,k) and g(k,j) share the extent of k with i and j
    values = {
        "b": rng.random(n) + 1,
        "c": rng.random(n) + 1,
        "f": rng.random(m),
        "d": rng.random((m, n)) * (rng.random((m, n)) < 0.5),
        "e": rng.random((n, m)) * (rng.random((n, m)) < 0.5),
        "g": rng.random((m, m)) * (rng.random((m, m)) < 0.5),
    }
    tensors = {
        k: ct.asarray(v, format=matrix_format if v.ndim == 2 else None, name=k)
        for k, v in values.items()
    }
    return values, tensors


@pytest.mark.parametrize("statement, build, reference", BINDINGS, ids=[b[0] for b in BINDINGS])
@pytest.mark.parametrize("matrix_format", ["dense", "csr"])
def test_an_implicit_sum_binds_to_the_smallest_term(statement, build, reference, matrix_format):
    values, tensors = _binding_operands(matrix_format)
    expected = reference(values)
    np.testing.assert_allclose(np.asarray(ct.evaluate(statement, **tensors)), expected, rtol=1e-12)
    i, j, k = ct.indices("i j k")
    a = ct.zeros((len(values["b"]),), name="a")
    a[i] = build(tensors, i, j, k)
    np.testing.assert_allclose(np.asarray(a), expected, rtol=1e-12)


def test_the_whole_expression_sum_would_differ():
    """The references above are not what a sum around the whole expression gives."""
    values, _ = _binding_operands("dense")
    b, c, d = values["b"], values["c"], values["d"]
    assert not np.allclose(b * (c + d.sum(0)), (b * (c + d)).sum(0))


@pytest.mark.parametrize("literal,factor", [("0.1e9995", np.inf), ("-0.1e9995", -np.inf)])
def test_an_overflowing_literal_computes_through_auto_s_printed_statements(literal, factor):
    # schedule="auto" prints the statement for the kernels it compiles (its two-kernel
    # programs): the overflowed literal used to print as "inf", which read back as the name
    # of a tensor nobody passed (found by the differential fuzz run, expr case 304399). An
    # unstored zero annihilates the infinite factor (API.md §3).
    rng = np.random.default_rng(3)
    A = sp.random(6, 6, density=0.4, format="csr", random_state=rng)
    B = sp.random(6, 6, density=0.6, format="csr", random_state=rng)
    result = ct.evaluate(f"R(i,j) = A(i,j) * B(i,j) * {literal}", A=A, B=B)
    stored = (A.toarray() != 0) & (B.toarray() != 0)
    with np.errstate(invalid="ignore"):  # (0 * inf where nothing is stored: not taken)
        expected = np.where(stored, A.toarray() * B.toarray() * factor, 0.0)
    np.testing.assert_array_equal(np.asarray(result.todense()), expected)


def test_non_finite_literals_print_as_text_that_parses_to_them():
    from coiter.notation import Literal

    assert [str(Literal(v)) for v in (np.inf, -np.inf)] == ["1e999", "-1e999"]
    assert str(Literal(np.nan)) == "(1e999 - 1e999)"
    assert str(Literal(complex(np.inf, -1.0))) == "(1e999-1.0j)"
    assert str(Literal(2.5)) == "2.5" and str(Literal(3)) == "3"
    concrete = ct.compile("R(i) = x(i) * 0.1e9995", schedule="default").concrete
    assert "1e999" in concrete and "inf" not in concrete


def test_an_index_only_the_result_reads_is_refused_under_auto_as_without_it():
    # (auto's estimate read the operands' extents only: KeyError, fuzz expr case 300777.)
    T, x = np.ones((4, 4, 4)), np.ones(4)
    for schedule in (None, "default"):
        with pytest.raises(ct.ShapeError, match="not determined by any input"):
            ct.evaluate("R(ij) = T(i,j,k) * x(k)", T=T, x=x, schedule=schedule)
