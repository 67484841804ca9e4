"""Corners of the user contract (API.md), each checked against NumPy or SciPy."""
import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct


# -- an index with two extents (API.md §3) ---------------------------------------------------------
@pytest.mark.parametrize("subscripts, shapes, index, extents", [
    ("aab", [(2, 3, 4)], "a", (2, 3)),           # within one operand
    ("ii->", [(2, 3)], "i", (2, 3)),
    ("ij,jk->ik", [(2, 3), (4, 5)], "j", (3, 4)),  # across operands
    ("ii,i->i", [(3, 3), (4,)], "i", (3, 4)),      # a diagonal, then another operand
])
def test_einsum_rejects_an_index_with_two_extents(subscripts, shapes, index, extents):
    rng = np.random.default_rng(0)
    arrays = [rng.random(s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subscripts, *arrays)
    with pytest.raises(ct.ShapeError, match=rf"index '{index}'.*extent {extents[0]}.*extent {extents[1]}"):
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


@pytest.mark.parametrize("subscripts, shape", [
    ("ii->", (4, 4)), ("ii->i", (4, 4)), ("ii", (4, 4)), ("iij->j", (3, 3, 5)), ("iji->j", (3, 5, 3)),
])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_repeated_indices_with_one_extent_match_numpy(subscripts, shape, sparse):
    rng = np.random.default_rng(2)
    x = rng.random(shape) * (rng.random(shape) < 0.6)
    operand = ct.asarray(x, format="csf") if sparse else x
    np.testing.assert_allclose(np.asarray(ct.einsum(subscripts, operand)), np.einsum(subscripts, x))


def test_notation_with_a_repeated_index_matches_numpy():
    x = np.random.default_rng(3).random((3, 3, 5))
    np.testing.assert_allclose(np.asarray(ct.evaluate("y(j) = A(i,i,j)", A=x)), np.einsum("iij->j", x))


# -- the dense-size limit applies to inferred formats only (API.md §3, rule 3) -----------------------
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
    np.testing.assert_array_equal(np.asarray(ct.einsum("ij,jk->ik", a, a, out_format=out_format)), a @ a)
