"""CSR <-> CSC by a counting sort (src/storage/transpose.cpp): asformat, and ct.evaluate's
operands read transposed, swap the modes of a dense-over-compressed matrix directly instead of
listing its entries and packing them."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import coiter as ct

CSR, CSC = ct.as_format("csr", 2), ct.as_format("csc", 2)


def matrix(shape, density, dtype, index_dtype, seed, explicit_zeros=0):
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random(shape) < density, rng.integers(-4, 5, shape), 0).astype(dtype)
    if dtype == np.complex128:
        dense = dense * (1 + 2j)
    A = sp.csr_array(dense)
    # Stored zeros stay stored, as the packing path keeps them.
    data = A.data.copy()
    if explicit_zeros and data.size:
        data[rng.choice(data.size, min(explicit_zeros, data.size), replace=False)] = 0
    return sp.csr_array(
        (data, A.indices.astype(index_dtype), A.indptr.astype(index_dtype)), shape=shape
    )


@pytest.mark.parametrize(
    "dtype", [np.float64, np.float32, np.complex128, np.int8, np.int64, np.bool_]
)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(7, 5), (0, 4), (3, 0), (1, 1), (40, 3)])
def test_csr_and_csc_swap_into_each_other(dtype, index_dtype, shape):
    A = matrix(shape, 0.4, dtype, index_dtype, seed=sum(shape), explicit_zeros=2)
    T = ct.asarray(A)
    C = T.asformat("csc")
    assert C.format == CSC and C.dtype == T.dtype and C.index_dtype == T.index_dtype
    expected = A.tocsc()
    expected.sort_indices()
    level = C.levels[1]
    np.testing.assert_array_equal(level.pos, expected.indptr)
    np.testing.assert_array_equal(level.crd, expected.indices)
    np.testing.assert_array_equal(C.values, expected.data)  # stored zeros included
    C._storage.validate()  # sorted and unique within each column
    back = C.asformat("csr")
    assert back.format == CSR
    np.testing.assert_array_equal(back.levels[1].pos, A.indptr)
    np.testing.assert_array_equal(back.levels[1].crd, A.indices)
    np.testing.assert_array_equal(back.values, A.data)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(0, 30),
    cols=st.integers(0, 30),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**31 - 1),
)
def test_swap_matches_the_packing_path(rows, cols, density, seed):
    A = matrix((rows, cols), density, np.float64, np.int32, seed)
    T = ct.asarray(A)
    swapped = T.asformat("csc")
    coords, values = T.coords()
    packed = ct.tensor.pack(CSC, T.shape, [coords[:, 0], coords[:, 1]], values)
    for mine, theirs in zip(swapped.levels, packed.levels):
        assert mine.parameters == theirs.parameters
        for name in theirs.arrays:
            np.testing.assert_array_equal(mine.arrays[name], theirs.arrays[name])
    np.testing.assert_array_equal(swapped.values, packed.values)


def test_other_conversions_are_not_swaps():
    T = ct.asarray(matrix((6, 5), 0.5, np.float64, np.int32, 3))
    assert T._storage.swap_compressed_modes(CSR) is None  # the same layout
    for fmt in [
        "dcsr",
        "coo",
        "dense",
        "dh:1,0",
        ct.Format([ct.dense, ct.compressed(ordered=False)], [1, 0]),
    ]:
        assert T._storage.swap_compressed_modes(ct.as_format(fmt, 2)) is None
        np.testing.assert_array_equal(T.asformat(fmt).to_numpy(), T.to_numpy())
    D = ct.asarray(matrix((6, 5), 0.5, np.float64, np.int32, 3), format="dcsr")
    assert D._storage.swap_compressed_modes(CSC) is None


def test_corrupted_coordinates_are_refused_not_used_as_addresses():
    A = matrix((50, 40), 0.3, np.float64, np.int32, 4)
    T = ct.asarray(A)  # reads A's arrays in place
    A.indices[3] = 10**6  # changed after coiter checked them
    with pytest.raises(ct.FormatError):
        T.asformat("csc")


def test_evaluate_reads_an_operand_transposed_through_the_swap():
    A = matrix((30, 30), 0.2, np.float64, np.int32, 5)
    B = matrix((30, 30), 0.2, np.float64, np.int32, 6)
    C = ct.evaluate("C(i,j) = A(i,j) + B(j,i)", A=A, B=B)
    np.testing.assert_allclose(C.to_numpy(), (A + B.T).toarray())
    T = ct.asarray(A)
    np.testing.assert_allclose((T + T.T).to_numpy(), (A + A.T).toarray())
