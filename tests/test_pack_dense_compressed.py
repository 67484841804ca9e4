"""Packing into a dense level over a compressed one that holds each coordinate once (CSR, CSC,
and CSR with unordered rows): pos comes from one pass over the sorted rows and crd is the
sorted column as it stands (src/storage/pack.cpp, packDenseThenUniqueCompressed), instead of
level by level. Each tensor is checked against SciPy's CSR of the same entries, summed."""

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct

FORMATS = {
    "csr": "csr",
    "csc": "csc",
    "unordered rows": ct.Format([ct.dense, ct.compressed(ordered=False)]),
}


pytestmark = pytest.mark.usefixtures("restore_num_threads")


def expected_arrays(rows, cols, values, shape, by_columns):
    """SciPy's (indptr, indices, data) of the entries summed: of the transpose for CSC."""
    if by_columns:
        rows, cols, shape = cols, rows, shape[::-1]
    m = sp.csr_array((values, (rows, cols)), shape=shape)
    m.sum_duplicates()  # also sorts each row's columns
    return m.indptr, m.indices, m.data


def check(rows, cols, values, shape, format, threads):
    ct.set_num_threads(threads)
    t = ct.from_coords(np.column_stack([rows, cols]), values, shape, format=format)
    pos, crd = t.levels[1].arrays["pos"], t.levels[1].arrays["crd"]
    indptr, indices, data = expected_arrays(rows, cols, values, shape, format == "csc")
    assert pos.dtype == crd.dtype == t.index_dtype
    np.testing.assert_array_equal(pos, indptr)
    np.testing.assert_array_equal(crd, indices)
    # SciPy may add duplicates in another order: equal up to rounding.
    np.testing.assert_allclose(t.values, data, rtol=1e-12, atol=1e-12)
    return t


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("format", list(FORMATS))
def test_random_order_duplicates_and_empty_rows(format, threads):
    # Rows 0-9 and the last ten are empty, as are most of the rest: pos is filled across
    # runs of empty rows at the start, in the middle and at the end.
    rng = np.random.default_rng(1)
    shape, n = (5000, 700), 200_000
    rows = rng.integers(10, 4990, n) // 7 * 7
    cols = rng.integers(0, 700, n)
    rows[::5], cols[::5] = rows[3::5][: len(rows[::5])], cols[3::5][: len(cols[::5])]
    check(rows, cols, rng.standard_normal(n), shape, FORMATS[format], threads)


@pytest.mark.parametrize("format", list(FORMATS))
def test_entries_already_in_order(format):
    # Sorted entries skip the sort: pos is built from the caller's row column as given.
    rows = np.array([1, 1, 1, 4, 4, 6])
    cols = np.array([0, 3, 5, 2, 6, 6])
    check(rows, cols, np.arange(1.0, 7.0), (8, 7), FORMATS[format], 1)


@pytest.mark.parametrize("format", list(FORMATS))
def test_no_entries_and_one_entry(format):
    empty = np.array([], dtype=np.int64)
    t = check(empty, empty, np.array([]), (4, 3), FORMATS[format], 1)
    assert t.nnz == 0
    check(np.array([3]), np.array([2]), np.array([5.0]), (4, 3), FORMATS[format], 1)
    check(np.array([0, 0]), np.array([0, 0]), np.array([1.0, 2.0]), (1, 1), FORMATS[format], 1)


def test_int64_indices():
    # A dimension beyond int32 makes every index array int64.
    rng = np.random.default_rng(2)
    n = 50_000
    rows, cols = rng.integers(0, 3000, n), rng.integers(0, 2**33, n)
    rows[::4], cols[::4] = rows[1::4], cols[1::4]
    values = rng.standard_normal(n)
    ct.set_num_threads(2)
    t = ct.from_coords(np.column_stack([rows, cols]), values, (3000, 2**33), format="csr")
    assert t.index_dtype == np.int64
    key = np.lexsort((cols, rows))
    rs, cs, vs = rows[key], cols[key], values[key]
    first = np.ones(n, bool)
    first[1:] = (rs[1:] != rs[:-1]) | (cs[1:] != cs[:-1])
    pos = t.levels[1].arrays["pos"]
    np.testing.assert_array_equal(pos, np.searchsorted(rs[first], np.arange(3001)))
    np.testing.assert_array_equal(t.levels[1].arrays["crd"], cs[first])
    np.testing.assert_allclose(t.values, np.add.reduceat(vs, np.flatnonzero(first)), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.complex128, np.bool_])
def test_value_types(dtype):
    rng = np.random.default_rng(3)
    n = 20_000
    rows, cols = rng.integers(0, 300, n), rng.integers(0, 200, n)
    values = (
        rng.integers(-5, 5, n) + (1j * rng.integers(-5, 5, n) if dtype == np.complex128 else 0)
    ).astype(dtype)
    t = ct.from_coords(np.column_stack([rows, cols]), values, (300, 200), format="csr")
    assert t.dtype == dtype
    expected = np.zeros((300, 200), dtype=dtype)
    if dtype == np.bool_:
        np.logical_or.at(expected, (rows, cols), values)
    else:
        np.add.at(expected, (rows, cols), values)
    np.testing.assert_array_equal(t.to_numpy(), expected)


def test_duplicates_refused_unless_summed():
    with pytest.raises(ct.FormatError, match="duplicates"):
        ct.from_coords([[1, 2], [1, 2]], [1.0, 2.0], (3, 3), format="csr", sum_duplicates=False)
