"""NumPy's protocols on tensors (``__array_ufunc__``, ``__array_function__``), modelled on
pydata/sparse's test_array_function and test_elemwise: each function against NumPy on dense
copies, across formats and dtypes; sparse where the function keeps zeros; and a clear error
instead of a dense copy beyond ``ct.config.max_dense_bytes``."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coiter as ct
from coiter.formats import is_all_dense
from test_arrays_operators import check, make

pytestmark = pytest.mark.usefixtures("forget_kernels_afterwards")

ZERO_KEEPING = [
    np.sqrt,
    np.abs,
    np.negative,
    np.sin,
    np.tanh,
    np.expm1,
    np.log1p,
    np.sign,
    np.square,
    np.conjugate,
    np.ceil,
    np.floor,
    np.rint,
    np.isnan,
    np.isinf,
]
ZERO_CHANGING = [np.exp, np.cos, np.isfinite, np.logical_not, np.reciprocal]


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "dh", "dia"])
@pytest.mark.parametrize("ufunc", ZERO_KEEPING + ZERO_CHANGING, ids=lambda u: u.__name__)
def test_unary_ufuncs(fmt, ufunc):
    a, da = make((6, 5), 0.4, fmt, seed=1)
    with np.errstate(all="ignore"):
        expected = ufunc(da)
        result = ufunc(a)
    check(result, expected, sparse=None if fmt == "dense" else ufunc in ZERO_KEEPING)


BINARY = [
    np.add,
    np.subtract,
    np.multiply,
    np.true_divide,
    np.maximum,
    np.minimum,
    np.hypot,
    np.power,
    np.equal,
    np.not_equal,
    np.greater,
    np.logical_and,
    np.logical_or,
    np.arctan2,
    np.copysign,
    np.floor_divide,
]
# Left out: what NumPy itself does not define (ordering and real functions of complex numbers)
# or raises for (negative integer powers).
BINARY_CASES = [
    (dtype, ufunc)
    for dtype in (np.float64, np.int64, np.complex128)
    for ufunc in BINARY
    if not (
        dtype == np.complex128
        and ufunc
        in (np.maximum, np.minimum, np.hypot, np.greater, np.arctan2, np.copysign, np.floor_divide)
    )
    and not (dtype == np.int64 and ufunc is np.power)
]


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo"])
@pytest.mark.parametrize("dtype,ufunc", BINARY_CASES, ids=lambda x: getattr(x, "__name__", str(x)))
def test_binary_ufuncs(fmt, dtype, ufunc):
    a, da = make((4, 6), 0.4, fmt, dtype, seed=1)
    b, db = make((4, 6), 0.4, fmt, dtype, seed=2)
    with np.errstate(all="ignore"):
        check(ufunc(a, b), ufunc(da, db))
        check(ufunc(a, db), ufunc(da, db))
        check(ufunc(da, b), ufunc(da, db))
        check(ufunc(a, dtype(2)), ufunc(da, dtype(2)))


def test_ufuncs_keep_zeros_sparse_as_scipy():
    a, da = make((30, 30), 0.05, "csr")
    for result in (np.sqrt(abs(a)), np.multiply(a, a), np.abs(a), np.maximum(a, 0), a != 0):
        assert not is_all_dense(result.format)
        assert result.nnz <= a.nnz
    assert is_all_dense(np.exp(a).format)
    check(np.exp(a), np.exp(da))


def test_ndarray_on_the_left_dispatches_to_tensors():
    a, da = make((4, 4), 0.5, "csr", seed=3)
    d = np.arange(16.0).reshape(4, 4)
    for result, expected in [
        (d + a, d + da),
        (d * a, d * da),
        (d @ a, d @ da),
        (d - a, d - da),
        (d / (a + 1), d / (da + 1)),
        (np.ones(4) @ a, np.ones(4) @ da),
    ]:
        assert isinstance(result, ct.Tensor)
        check(result, expected)


def test_ufunc_reduce_and_dtype():
    a, da = make((4, 5), 0.5, "csr", seed=1)
    check(np.add.reduce(a, axis=1), np.add.reduce(da, axis=1))
    check(np.maximum.reduce(a), np.maximum.reduce(da))
    check(np.sqrt(abs(a), dtype=np.float32), np.sqrt(abs(da), dtype=np.float32))
    with pytest.raises(TypeError):
        np.add(a, a, out=np.zeros((4, 5)))


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo"])
def test_array_functions(fmt):
    a, da = make((4, 6), 0.4, fmt, seed=1)
    b, db = make((6, 3), 0.4, fmt, seed=2)
    c, dc = make((4, 6), 0.4, fmt, seed=3)
    check(np.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", da, db))
    check(np.einsum("ij,ij->i", a, c), np.einsum("ij,ij->i", da, dc))
    check(np.einsum("ij->", a), np.asarray(np.einsum("ij->", da)))
    check(np.tensordot(a, b, axes=1), np.tensordot(da, db, axes=1))
    check(np.matmul(a, b), np.matmul(da, db))
    check(np.dot(a, b), np.dot(da, db))
    check(np.sum(a), np.asarray(np.sum(da)))
    check(np.sum(a, axis=1, keepdims=True), np.sum(da, axis=1, keepdims=True))
    check(np.max(a, axis=0), np.max(da, axis=0))
    check(np.min(a), np.asarray(np.min(da)))
    check(np.mean(a, axis=0), np.mean(da, axis=0))
    check(np.transpose(a), np.transpose(da))
    check(np.reshape(a, (6, 4)), np.reshape(da, (6, 4)))
    check(np.concatenate([a, c]), np.concatenate([da, dc]))
    check(np.concatenate([a, c], axis=1), np.concatenate([da, dc], axis=1))
    check(np.concatenate([a, dc], axis=-1), np.concatenate([da, dc], axis=-1))
    check(np.stack([a, c], axis=1), np.stack([da, dc], axis=1))
    check(np.where(a > 0.2, a, c), np.where(da > 0.2, da, dc))
    check(np.where(a > 0.2, a, 0), np.where(da > 0.2, da, 0))
    for got, want in zip(np.where(a), np.where(da)):
        np.testing.assert_array_equal(got, want)
    check(np.round(a, 2), np.round(da, 2))
    check(np.clip(a, -0.5, 0.5), np.clip(da, -0.5, 0.5))
    check(np.real(a), np.real(da))
    assert np.shape(a) == da.shape and np.ndim(a) == 2 and np.size(a) == da.size
    assert np.count_nonzero(a) == np.count_nonzero(da)
    check(np.copy(a), da)


def test_concatenate_keeps_the_sparse_format():
    a, da = make((3, 4), 0.5, "csr", seed=1)
    b, db = make((2, 4), 0.5, "csr", seed=2)
    result = np.concatenate([a, b])
    assert result.format == ct.as_format("csr", 2)
    check(result, np.concatenate([da, db]))
    with pytest.raises(ct.ShapeError, match="concatenate"):
        np.concatenate([a, b], axis=1)


def test_other_functions_densify_within_the_limit_and_say_so(caplog):
    a, da = make((4, 4), 0.5, "csr", seed=1)
    with caplog.at_level(logging.INFO, logger="coiter"):
        assert np.allclose(a, da)
        np.testing.assert_allclose(np.trace(a), np.trace(da))
    assert "no sparse implementation" in caplog.text
    big = ct.random((100_000, 100_000), 1e-6, "csr", seed=1)
    with pytest.raises(ct.ShapeError, match="np.trace.*max_dense_bytes"):
        np.trace(big)
    check(np.sum(big, axis=0).sum(), np.asarray(big.values.sum()))


_OPS = st.sampled_from(["add", "sub", "mul", "matvec_free_sum", "neg", "scale", "T2"])


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    fmt=st.sampled_from(["csr", "csc", "coo", "dense"]),
    ops=st.lists(_OPS, min_size=1, max_size=5),
)
def test_random_operator_chains_match_numpy(seed, fmt, ops):
    """Chains of fused operators on random square matrices equal NumPy's, whatever the chain."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    t, dt = make((n, n), float(rng.random()), fmt, seed=seed)
    u, du = make((n, n), float(rng.random()), fmt, seed=seed + 1)
    for op in ops:
        if op == "add":
            t, dt = t + u, dt + du
        elif op == "sub":
            t, dt = u - t, du - dt
        elif op == "mul":
            t, dt = t * u, dt * du
        elif op == "neg":
            t, dt = -t, -dt
        elif op == "scale":
            t, dt = 0.5 * t, 0.5 * dt
        elif op == "T2":
            t, dt = t.T + u, dt.T + du
        else:
            t, dt = t.sum(axis=0) * u, dt.sum(axis=0) * du
    x = rng.random(n)
    check(t @ x, dt @ x)
    check(t, dt)
