"""Array operators and methods of tensors against NumPy on dense copies (docs/arrays.md), in the
manner of pydata/sparse's test_elemwise/test_coo and SciPy's sparse array tests: every format
that stores a matrix, several dtypes, results compared elementwise and their formats checked
against what SciPy returns (sparse or dense)."""

import operator

import numpy as np
import pytest

import coiter as ct

FORMATS = ["dense", "csr", "csc", "coo", "dcsr", "dh", "dia", "ell", "bcsr"]
DTYPES = [np.float64, np.float32, np.int64, np.complex128]

pytestmark = pytest.mark.usefixtures("forget_kernels_afterwards")


def make(shape, density, fmt, dtype=np.float64, seed=0):
    """A tensor in ``fmt`` and its dense NumPy copy; some entries negative (max/min/abs see it)."""
    t = ct.random(shape, density, "coo", dtype=dtype, seed=seed)
    dense = t.to_numpy()
    if dtype != np.bool_:
        dense = (
            dense
            - (
                dense.real > 0.7
                if np.iscomplexobj(dense)
                else dense > 7
                if np.issubdtype(dtype, np.integer)
                else dense > 0.7
            )
            * dense
            * 2
        )
    fmt = ct.bcsr((2, 2)) if fmt == "bcsr" else fmt
    return ct.asarray(dense, format=fmt), dense


def check(result, expected, sparse=None):
    assert isinstance(result, ct.Tensor)
    assert result.shape == expected.shape
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    got = result.to_numpy()
    if np.issubdtype(expected.dtype, np.inexact):
        rtol = 1e-5 if expected.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, expected)
    if sparse is not None:  # (a transposed dense tensor is dense in another mode order)
        assert any(level.name != "dense" for level in result.format.levels) == sparse, result.format


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul])
def test_binary_operators_match_numpy_and_stay_sparse(fmt, dtype, op):
    a, da = make((6, 8), 0.3, fmt, dtype, seed=1)
    b, db = make((6, 8), 0.3, fmt, dtype, seed=2)
    # SciPy: sparse op sparse is sparse, whatever the format.
    check(op(a, b), op(da, db), sparse=fmt != "dense")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dia"])
def test_operators_with_dense_arrays_and_scalars(fmt):
    a, da = make((5, 4), 0.4, fmt)
    d = np.arange(20.0).reshape(5, 4) - 7
    check(a + d, da + d, sparse=False)  # SciPy: sparse + dense is dense
    check(d - a, d - da, sparse=False)
    check(a * d, da * d, sparse=True)  # SciPy: sparse.multiply(dense) is sparse
    check(2.5 * a, 2.5 * da, sparse=True)
    check(a * 2, da * 2, sparse=True)
    check(-a, -da, sparse=True)
    check(+a, da)
    check(a + 1, da + 1, sparse=False)  # a nonzero fill: dense
    check(a - 0, da, sparse=True)
    check(a / 4, da / 4, sparse=True)


def test_broadcasting_follows_numpy():
    a, da = make((5, 4), 0.5, "csr")
    row = np.arange(1.0, 5.0)
    column = np.arange(1.0, 6.0).reshape(5, 1)
    check(a * row, da * row, sparse=True)
    check(a + column, da + column, sparse=False)
    check(a / column, da / column, sparse=True)  # row normalization
    s, ds = make((1, 4), 1.0, "csr", seed=3)
    check(a * s, da * ds, sparse=True)  # a sparse operand of extent 1
    with pytest.raises(ct.ShapeError, match="broadcast"):
        a + np.ones(3)


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo"])
def test_division_follows_dense_semantics(fmt):
    """0/0 is NaN, x/0 is ±inf, as NumPy (docs/reference.md, "Semantics"; SciPy gives the same
    for sparse / sparse)."""
    a, da = make((4, 5), 0.4, fmt, seed=4)
    b, db = make((4, 5), 0.4, fmt, seed=5)
    with np.errstate(all="ignore"):
        check(a / b, da / db)
        check(a / 0, da / 0)
        check(a / np.nan, da / np.nan)
        check(1 / a, 1 / da)
        check(0 / a, 0 / da)
        with_zero = np.array([2.0, 0.0, 1.0, 4.0, -1.0])
        check(a / with_zero, da / with_zero)
        nonzero = np.array([2.0, 3.0, 1.0, 4.0, -1.0])
        check(a / nonzero, da / nonzero, sparse=fmt != "dense")
    # Integers divide truly, as NumPy.
    i, di = make((4, 5), 0.5, fmt, np.int64, seed=6)
    check(i / 2, di / 2)


# Index-notation quotients with sparse operands, and NumPy's result on the dense copies.
_QUOTIENTS = {
    "C(i,j) = A(i,j) / B(i,j)": lambda A, B, x: A / B,
    "C(i,j) = A(i,j) / 0": lambda A, B, x: A / 0,
    "C(i,j) = 2 / A(i,j)": lambda A, B, x: 2 / A,
    "C(i,j) = (A(i,j) + B(i,j)) / B(i,j)": lambda A, B, x: (A + B) / B,
    "C(i,j) = A(i,j) * B(i,j) / B(i,j)": lambda A, B, x: A * B / B,
    "y(i) = A(i,j) / B(i,j)": lambda A, B, x: (A / B).sum(axis=1),
    "C(i,j) = A(i,j) / x(j)": lambda A, B, x: A / x,  # x without zeros: stays sparse
}


@pytest.mark.parametrize("engine", ["llvm", "c"])
@pytest.mark.parametrize("fmt", ["csr", "coo", "dcsr"])
@pytest.mark.parametrize("statement", sorted(_QUOTIENTS))
def test_index_notation_division_follows_dense_semantics(statement, fmt, engine):
    """docs/reference.md, "Semantics", for kernels: a sparse denominator's unstored zeros give
    x/0 = ±inf and 0/0 = NaN wherever NumPy gives them; such results are inferred dense."""
    a, da = make((5, 6), 0.4, fmt, seed=7)
    b, db = make((5, 6), 0.4, fmt, seed=8)
    x = np.linspace(1.0, 2.0, 6)
    with np.errstate(all="ignore"):
        expected = _QUOTIENTS[statement](da, db, x)
    got = ct.evaluate(statement, A=a, B=b, x=x, engine=engine)
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=1e-12, equal_nan=True)
    if statement.endswith("x(j)"):  # a dense denominator keeps the numerator's sparsity
        assert ct.evaluate(statement, A=a, x=x, engine=engine, out_format="csr").nnz == a.nnz
    # The same quotient assigned with Python's index notation.
    i, j = ct.indices("i j")
    if statement == "C(i,j) = A(i,j) / B(i,j)":
        c = ct.zeros(a.shape, "dense")
        c[i, j] = a[i, j] / b[i, j]
        np.testing.assert_allclose(c.to_numpy(), expected, equal_nan=True)


def test_index_notation_division_by_a_dense_zero_keeps_the_numerators_zeros():
    """The one difference from dense arrays (docs/reference.md, "Semantics", as in products):
    where the numerator stores nothing its zero annihilates over a dense denominator, even a 0
    or NaN there."""
    a, da = make((4, 5), 0.4, "csr", seed=9)
    d = np.linspace(1.0, 2.0, 20).reshape(4, 5)
    d[0] = 0.0
    d[1, 1] = np.nan
    got = ct.evaluate("C(i,j) = A(i,j) / D(i,j)", A=a, D=d).to_numpy()
    with np.errstate(all="ignore"):
        expected = np.where(da != 0, da / d, 0.0)
    np.testing.assert_allclose(got, expected, equal_nan=True)


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "dcsr", "ell"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.complex128])
def test_matmul_and_dot(fmt, dtype):
    a, da = make((6, 5), 0.4, fmt, dtype, seed=1)
    b, db = make((5, 3), 0.4, fmt, dtype, seed=2)
    x = np.arange(5).astype(dtype)
    z = np.arange(6).astype(dtype)
    sparse = fmt != "dense"
    check(a @ x, da @ x, sparse=False)  # SciPy: sparse @ dense vector is dense
    check(z @ a, z @ da, sparse=False)
    check(a @ b, da @ db, sparse=sparse)  # sparse @ sparse stays sparse
    check(a @ db, da @ db, sparse=False)
    check(a.dot(b), da.dot(db))
    check(a.T @ z, da.T @ z)
    v = ct.asarray(x)
    check(v @ v, x @ x)  # 1-D @ 1-D: a 0-d tensor
    with pytest.raises(ct.ShapeError, match="matmul"):
        a @ a
    with pytest.raises(ValueError, match="scalar"):
        a @ 2


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "dia", "bcsr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_matrix_times_array_is_the_same_lazy_product_every_call(fmt, dtype):
    # The first T @ x of a kind is built by the general path; later ones from what it
    # remembered (operators._matrix_times_dense): the same definition, dtype and format.
    a, da = make((6, 4), 0.5, fmt, dtype, seed=3)
    x = np.arange(1, 5).astype(np.float64)
    block = np.arange(12).reshape(4, 3).astype(dtype)
    for _ in range(3):
        y = a @ x
        assert "lazy: out(i0) = t0(i0,i1) * t1(i1)>" in repr(y)
        check(y, da @ x, sparse=False)
        check(a @ block, da @ block, sparse=False)
        # still lazy: a later operator fuses it (the residual of a solver's step)
        residual = a @ x - x[:4].sum()
        assert "lazy: out(i0) = sum(i1, t0(i0,i1) * t1(i1)) - " in repr(residual)
        check(residual, da @ x - x[:4].sum())
    square, dsquare = make((4, 4), 1.0, "dense", dtype, seed=4)
    check(square @ square, dsquare @ dsquare)  # one operand twice: the general path
    with pytest.raises(ct.ShapeError, match="matmul"):
        a @ np.ones(5)


def test_batched_matmul_and_tensordot():
    a, da = make((3, 4, 5), 0.3, "csf", seed=1)
    b, db = make((3, 5, 2), 0.5, "dense", seed=2)
    check(a @ b, da @ db)
    check(a @ db[0], da @ db[0])
    check(np.tensordot(a, b, ([2], [1])), np.tensordot(da, db, ([2], [1])))
    check(np.tensordot(a, db, axes=([0, 2], [0, 1])), np.tensordot(da, db, axes=([0, 2], [0, 1])))
    check(a.dot(db[0]), da.dot(db[0]))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("method", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(fmt, method, axis, keepdims):
    a, da = make((6, 8), 0.3, fmt, seed=3)
    result = getattr(a, method)(axis=axis, keepdims=keepdims)
    check(result, np.asarray(getattr(da, method)(axis=axis, keepdims=keepdims)))


@pytest.mark.parametrize(
    "dtype", [np.bool_, np.int8, np.int32, np.uint16, np.float32, np.complex64]
)
def test_sum_promotes_like_numpy(dtype):
    a, da = make((4, 6), 0.5, "csr", dtype, seed=2)
    check(a.sum(), np.asarray(da.sum()))
    check(a.sum(axis=0), da.sum(axis=0))
    check(a.mean(axis=1), da.mean(axis=1))


def test_reductions_of_empty_modes():
    a = ct.zeros((0, 3), "csr")
    check(a.sum(axis=0), np.zeros((0, 3)).sum(axis=0))
    with pytest.raises(ValueError, match="zero-size"):
        a.max(axis=0)


@pytest.mark.parametrize("fmt", FORMATS)
def test_transposes(fmt):
    a, da = make((4, 6), 0.4, fmt, seed=5)
    check(a.T, da.T, sparse=fmt != "dense")
    check(a.transpose(), da.T)
    check(a.transpose(1, 0), da.T)
    check(a.transpose((1, 0)), da.T)
    check(a.T.T, da)
    check(np.transpose(a), da.T)
    check(a.mT, da.T)


def test_csr_transpose_is_csc_sharing_memory_as_scipy():
    a, da = make((4, 6), 0.4, "csr")
    t = a.T
    assert t.format == ct.as_format("csc", 2)
    assert np.shares_memory(t.values, a.values)
    del a  # the view keeps its arrays
    check(t, da.T)


def test_transposes_of_tensors_and_lazy_results():
    a, da = make((3, 4, 5), 0.3, "csf", seed=1)
    check(a.transpose(2, 0, 1), da.transpose(2, 0, 1))
    b, db = make((3, 4, 5), 0.3, "csf", seed=2)
    check((a + b).transpose(1, 2, 0), (da + db).transpose(1, 2, 0))
    with pytest.raises(ValueError, match="permutation"):
        a.transpose(0, 0, 1)


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo", "csf"])
def test_reshape(fmt):
    a, da = make((4, 6), 0.4, "csr" if fmt == "csf" else fmt, seed=2)
    for shape in [(24,), (6, 4), (2, 3, 4), (-1, 8), (3, -1)]:
        check(a.reshape(shape), da.reshape(shape))
    check(a.reshape(2, 12), da.reshape(2, 12))
    with pytest.raises(ct.ShapeError, match="reshape"):
        a.reshape(5, 5)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")  # (NumPy warns as well)
@pytest.mark.parametrize("fmt", ["dense", "csr", "coo"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_astype_conj_abs_and_powers(fmt, dtype):
    a, da = make((5, 4), 0.4, fmt, dtype, seed=7)
    check(a.astype(np.float32), da.astype(np.float32), sparse=fmt != "dense")
    check(a.astype(np.complex128), da.astype(np.complex128))
    check(a.conj(), da.conj())
    check(abs(a), np.abs(da), sparse=fmt != "dense")
    check(a**2, da**2, sparse=fmt != "dense")
    if dtype in (np.float64, np.complex128):
        with np.errstate(all="ignore"):
            check(a**0, da**0, sparse=False)  # 0**0 is 1: dense
            check(a**-1.0, da**-1.0)  # inf where zero
    check(a.real, np.asarray(da.real))
    check(a.imag, np.asarray(da.imag))
    assert a.astype(dtype, copy=False) is a


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo"])
@pytest.mark.parametrize(
    "op", [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
)
def test_comparisons_are_elementwise(fmt, op):
    a, da = make((5, 6), 0.4, fmt, seed=1)
    b, db = make((5, 6), 0.4, fmt, seed=2)
    # SciPy's rules: a comparison false at 0 vs 0 stays sparse; one true there is dense.
    fills_true = op(0, 0)
    check(op(a, b), op(da, db), sparse=None if fmt == "dense" else not fills_true)
    check(op(a, a), op(da, da))
    check(op(a, 0.5), op(da, 0.5))
    check(op(a, db), op(da, db))


def test_boolean_and_integer_operators():
    a, da = make((4, 5), 0.5, "csr", np.int64, seed=1)
    b, db = make((4, 5), 0.5, "csr", np.int64, seed=2)
    check(a // 3, da // 3)
    check(a % 4, da % 4)
    check(a & b, da & db)
    check(a | b, da | db)
    check(a ^ b, da ^ db)
    m = a > 0
    check(~m, ~(da > 0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(a == b)
    assert bool((a == a).all())
    assert bool((a != b).any()) == bool((da != db).any())


def test_zero_d_results_convert_to_python_scalars():
    a, da = make((4, 5), 0.5, "csr", seed=1)
    assert float(a.sum()) == pytest.approx(da.sum())
    assert int(a.astype(np.int64).sum()) == int(da.astype(np.int64).sum())
    assert complex(a.sum()) == pytest.approx(complex(da.sum()))
    assert float(a[1:2, 2:3]) == da[1, 2]
    with pytest.raises(TypeError, match="size-1"):
        float(a)
    assert range(10)[ct.asarray(np.array(3))] == 3


def test_chained_operators_fuse_into_one_kernel():
    a, da = make((50, 40), 0.1, "csr", seed=1)
    b, db = make((50, 40), 0.1, "csr", seed=2)
    x = np.linspace(0, 1, 40)
    total = a + b
    y = total @ x
    # distributed over the sum, each product summing on its own: two passes, no merge
    assert "lazy: out(i0) = sum(i1, t0(i0,i1) * t1(i1)) + sum(i2, t2(i0,i2) * t1(i2))" in repr(y)
    check(y, (da + db) @ x)
    assert "lazy" in repr(total)  # the sum itself was never computed
    scaled = (2 * a - b.T.T / 3).sum(axis=1)
    assert "sum(" in repr(scaled) and repr(scaled).count("t0") >= 1
    check(scaled, (2 * da - db / 3).sum(axis=1))
    # A computed operand is read, not recomputed.
    total.evaluate()
    assert "nnz=" in repr(total)
    check(total @ x, (da + db) @ x)


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo"])
def test_a_sum_is_distributed_over_a_product_only_in_the_products_dtype(fmt):
    # uint8 B - A wraps before the product promotes it to float64; a bool sum is an or. Taken
    # term by term, both would differ from NumPy (found by test_arrays_differential.py).
    da = np.array([[1, 0], [0, 3]], np.uint8)
    db = np.array([[0, 2], [0, 0]], np.uint8)
    x = np.array([[1.0], [0.5]])
    a, b = ct.asarray(da, format=fmt), ct.asarray(db, format=fmt)
    check((b - a) @ x, (db - da) @ x)
    check((a.astype(bool) + b.astype(bool)) @ x, (da.astype(bool) + db.astype(bool)) @ x)
    assert "sum(" not in repr((b - a) @ x)  # not taken term by term: (B - A) * x, one product
    # A bool term of a float sum: its product with a bool operand would be an or of ands.
    m, f = ct.asarray(da > 0, format=fmt), ct.asarray(db.astype(np.float32), format=fmt)
    ones = np.ones((2, 3), dtype=bool)
    check((m + f) @ ones, ((da > 0) + db.astype(np.float32)) @ ones)


def test_contractions_are_not_nested_into_contractions():
    a, da = make((20, 20), 0.2, "csr", seed=1)
    b, db = make((20, 20), 0.2, "csr", seed=2)
    x = np.ones(20)
    product = a @ b
    y = product @ x
    check(y, (da @ db) @ x)
    assert "nnz=" in repr(product)  # computed by its own kernel, then read
    masked = (a @ b) * a  # an elementwise use is fused (masked SpGEMM)
    check(masked, (da @ db) * da, sparse=True)


def test_long_chains_do_not_exceed_the_compilers_depth():
    a, da = make((10, 10), 0.3, "csr", seed=1)
    t, expected = a, da
    for _ in range(150):
        t = t + a * 0.5
        expected = expected + da * 0.5
    check(t, expected)


def test_display_does_not_compute():
    a, _ = make((300, 300), 0.01, "csr")
    y = a @ np.ones(300)
    text = repr(y)
    assert "lazy" in text and y._pending
    y.evaluate()
    assert "nnz=300" in repr(y)


def test_methods_spelled_as_scipy():
    a, da = make((5, 4), 0.4, "csr", seed=1)
    b, db = make((5, 4), 0.4, "csr", seed=2)
    check(a.multiply(b), da * db, sparse=True)
    np.testing.assert_array_equal(a.toarray(), da)
    np.testing.assert_array_equal(a.tocsr().toarray(), da)
    np.testing.assert_array_equal(a.tocsc().toarray(), da)
    np.testing.assert_array_equal(a.tocoo().toarray(), da)
    assert a.count_nonzero() == np.count_nonzero(da)
    for got, want in zip(a.nonzero(), np.nonzero(da)):
        np.testing.assert_array_equal(got, want)


def test_operators_refuse_to_densify_beyond_the_limit():
    big = ct.random((100_000, 100_000), 1e-6, "csr", seed=1)
    with pytest.raises(ct.ShapeError, match="max_dense_bytes"):
        big + 1
    with pytest.raises(ct.ShapeError, match="max_dense_bytes"):
        np.exp(big)
    with pytest.raises(ct.ShapeError, match="max_dense_bytes"):
        big == big
    with pytest.raises(ct.ShapeError, match="max_dense_bytes"):
        np.asarray(big)
    assert (big * 2).nnz == big.nnz
    assert (big != big).nnz == 0


def test_operator_results_compile_and_take_schedules_like_definitions():
    a, da = make((40, 30), 0.2, "csr", seed=1)
    x = np.linspace(0, 1, 30)
    y = a @ x
    kern = ct.compile(y)  # the definition the operator built, bound to its tensors
    np.testing.assert_allclose(kern().to_numpy(), da @ x)
    s = ct.Schedule.parse("split(i0, io, ii, 8)")  # i0, i1, ...: the names repr shows
    z = (a * 2) @ x
    assert "out(i0) = t0(i0,i1) * 2 * t1(i1)" in repr(z)
    z.schedule(s)
    check(z, (da * 2) @ x)
    i, j = ct.indices("i j")
    w = a @ x
    w[i] = a[i, j] * a[i, j] * ct.asarray(x)[j]  # a new definition replaces the operator's
    check(w, (da * da) @ x)


@pytest.mark.parametrize("fa", ["csr", "csc", "coo", "dense", "dcsr"])
@pytest.mark.parametrize("fb", ["csr", "csc", "coo", "dense", "dcsr"])
def test_operands_of_different_formats(fa, fb):
    a, da = make((5, 6), 0.4, fa, seed=1)
    b, db = make((5, 6), 0.4, fb, seed=2)
    c, dc = make((6, 4), 0.4, fb, seed=3)
    check(a + b, da + db)
    check(a * b, da * db)
    check(a @ c, da @ dc)
    check(a - b.T.T, da - db)


@pytest.mark.parametrize(
    "ta", [np.bool_, np.int8, np.uint8, np.int32, np.float32, np.float64, np.complex64]
)
@pytest.mark.parametrize(
    "tb", [np.bool_, np.int8, np.uint8, np.int32, np.float32, np.float64, np.complex64]
)
def test_mixed_dtypes_promote_as_numpy(ta, tb):
    a, da = make((4, 5), 0.5, "csr", ta, seed=1)
    b, db = make((4, 5), 0.5, "csr", tb, seed=2)
    check(a + b, da + db)
    check(a * b, da * db)
    check(a @ b.T, da @ db.T)
    if ta == tb == np.bool_:  # NumPy refuses bool - bool; so does the operator, at once
        with pytest.raises(TypeError, match="subtraction of bool"):
            a - b
        with pytest.raises(TypeError, match="subtraction of bool"):
            ct.evaluate("C(i,j) = A(i,j) - B(i,j)", A=a, B=b)
    else:
        check(a - b, da - db)


def test_unsupported_operands_raise_type_errors():
    a, _ = make((3, 3), 0.5, "csr")
    for bad in ("text", object(), {1: 2}):
        with pytest.raises(TypeError):
            a + bad
        with pytest.raises(TypeError):
            a @ bad
        with pytest.raises(TypeError):
            a < bad
    assert (a == None) is False  # noqa: E711 - Python's fallback, as for NumPy's unknown operands


def test_operators_from_many_threads():
    from concurrent.futures import ThreadPoolExecutor

    a, da = make((40, 40), 0.1, "csr", seed=1)
    x = np.linspace(0, 1, 40)

    def work(k):
        return ((a * k + a.T) @ x).to_numpy()

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(40)))
    for k, got in enumerate(results):
        np.testing.assert_allclose(got, (da * k + da.T) @ x)
