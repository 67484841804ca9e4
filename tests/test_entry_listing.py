"""Listing a tensor's stored entries (``T.coords()``, ``to_scipy("coo")``, ``asformat`` to a
format that needs them): formats whose levels are runs of their parents' children (dense,
compressed, singleton) are listed straight from their arrays, others through the levels'
``expand``. Both give every stored entry once, in storage order, with its value."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from coiter.tensor import pack

# (format, shape): every level type that lists in order, mode orders, blocks, and formats
# that do not (hashed, ELL's unlabeled slots, DIA's derived coordinates).
FORMATS = [
    ("csr", (7, 9)),
    ("csc", (7, 9)),
    ("coo", (7, 9)),
    ("dcsr", (7, 9)),
    ("dense", (7, 9)),
    ("bcsr((2, 3))", (8, 9)),
    ("dss", (4, 5, 6)),
    ("sds:2,0,1", (4, 5, 6)),
    ("csf", (4, 5, 6)),
    ("dh", (7, 9)),
    ("ell", (7, 9)),
    ("dia", (7, 9)),
]


def storage_order(fmt, coords):
    """The order in which a format stores entries with these (distinct) coordinates: by the
    level coordinates, outermost first (mode order; block index before block offset)."""
    f = ct.as_format(fmt, coords.shape[1])
    keys = []
    for m in f.mode_order:
        keys.append(coords[:, m])
    return np.lexsort(tuple(reversed(keys)))


def random_entries(shape, rng, density=0.3):
    dense = rng.random(shape) < density
    coords = np.argwhere(dense)
    values = rng.standard_normal(len(coords))
    values[::5] = 0.0  # stored zeros are entries too
    return coords, values


def tensor_of(coords, values, shape, fmt, index_dtype):
    """The entries packed into `fmt` with index arrays of `index_dtype` (int64 through a SciPy
    COO array whose coordinates are int64, whose width conversions keep)."""
    if index_dtype == np.int32:
        return ct.from_coords(coords, values, shape, format=fmt)
    coo = sp.coo_array((values, (coords[:, 0], coords[:, 1])), shape=shape)
    coo.coords = tuple(c.astype(np.int64) for c in coo.coords)
    t = ct.asarray(coo).asformat(fmt)
    assert t.index_dtype == np.int64
    return t


# int64 index arrays for the matrices (tensor_of makes them through SciPy).
WIDTHS = [
    (f, s, w) for f, s in FORMATS for w in (np.int32, np.int64) if len(s) == 2 or w == np.int32
]


@pytest.mark.parametrize("fmt,shape,index_dtype", WIDTHS)
def test_every_stored_entry_is_listed_once_with_its_value(fmt, shape, index_dtype):
    rng = np.random.default_rng(len(fmt) + len(shape))
    coords, values = random_entries(shape, rng)
    t = tensor_of(coords, values, shape, fmt, index_dtype)
    listed, listed_values = t.coords()
    assert listed.shape == (t.nnz, len(shape)) and listed.dtype == np.int64
    # Every stored entry once (formats that store padding, DIA and dense, list it as zeros).
    dense = np.zeros(shape)
    np.add.at(dense, tuple(listed.T), listed_values)
    expected = np.zeros(shape)
    expected[tuple(coords.T)] = values
    np.testing.assert_array_equal(dense, expected)
    assert len({tuple(c) for c in listed}) == len(listed)
    stored = {tuple(c): v for c, v in zip(coords, values)}
    for c, v in zip(map(tuple, listed), listed_values):
        assert stored.get(c, 0.0) == v


@pytest.mark.parametrize("fmt,shape", [f for f in FORMATS if f[0] not in ("dh", "ell", "dia")])
def test_formats_of_runs_list_their_entries_in_storage_order(fmt, shape):
    rng = np.random.default_rng(3)
    coords, values = random_entries(shape, rng)
    t = ct.from_coords(coords, values, shape, format=fmt)
    listed, listed_values = t.coords()
    if fmt == "dense":
        expected = np.array(list(itertools.product(*(range(e) for e in shape))))
        np.testing.assert_array_equal(listed, expected)
        return
    if fmt.startswith("bcsr"):
        block = (2, 3)
        keys = (coords[:, 1] % block[1], coords[:, 0] % block[0], coords[:, 1] // block[1])
        order = np.lexsort(keys + (coords[:, 0] // block[0],))
        blocks = {tuple(c // block) for c in coords}
        assert len(listed) == len(blocks) * block[0] * block[1]  # whole blocks, padding too
        present = {tuple(c) for c in coords}
        kept = [k for k, c in enumerate(map(tuple, listed)) if c in present]
        np.testing.assert_array_equal(listed[kept], coords[order])
        return
    order = storage_order(fmt, coords)
    np.testing.assert_array_equal(listed, coords[order])
    np.testing.assert_array_equal(listed_values, values[order])


# The formats whose entries list sorted and unique by COO's modes: one ordered, unique level
# per mode, in mode order.
LISTED_AS_COORDINATES = {"csr", "dcsr", "dense", "dss", "csf"}


@pytest.mark.parametrize("fmt,shape,index_dtype", WIDTHS)
def test_asformat_coo_of_entries_in_order_is_the_packed_coordinate_list(fmt, shape, index_dtype):
    # Such entries become COO straight from the arrays (storage/coordinate_list.hpp), others
    # are listed and packed (sorted, duplicates summed): both give the same arrays.
    rng = np.random.default_rng(len(fmt) * 7 + len(shape))
    coords, values = random_entries(shape, rng)
    t = tensor_of(coords, values, shape, fmt, index_dtype)
    coo = ct.as_format("coo", len(shape))
    direct = t._storage.list_as_coordinates(coo)
    assert (direct is not None) == (fmt in LISTED_AS_COORDINATES)
    listed, listed_values = t.coords()
    bits = 64 if index_dtype == np.int64 else 32
    packed = pack(
        coo, shape, [listed[:, m] for m in range(len(shape))], listed_values, index_bits=bits
    )
    converted = t.asformat(coo)
    assert converted.format == coo and converted.index_dtype == t.index_dtype
    for ours, theirs in zip(converted._storage.level_arrays, packed._storage.level_arrays):
        assert ours.keys() == theirs.keys()
        for name in ours:
            assert ours[name].dtype == theirs[name].dtype
            np.testing.assert_array_equal(ours[name], theirs[name])
    np.testing.assert_array_equal(converted.values, packed.values)
    if converted is not t:  # (a COO tensor is its own COO)
        converted.values[:] = 1.0  # copies: the source keeps its values
        np.testing.assert_array_equal(t.coords()[1], listed_values)


def test_csr_entries_are_scipys_tocoo_and_each_mode_is_one_contiguous_array():
    m = sp.random_array((300, 200), density=0.05, random_state=4, format="csr")
    m.data[::7] = 0.0
    t = ct.asarray(m)
    listed, values = t.coords()
    coo = m.tocoo()
    np.testing.assert_array_equal(listed[:, 0], coo.row)
    np.testing.assert_array_equal(listed[:, 1], coo.col)
    np.testing.assert_array_equal(values, coo.data)
    assert listed[:, 0].flags.c_contiguous and listed[:, 1].flags.c_contiguous
    values[:] = 1.0  # a copy: the tensor keeps its values
    np.testing.assert_array_equal(t.values, m.data)
    converted = t.to_scipy("coo")
    np.testing.assert_array_equal(converted.toarray(), m.toarray())
    assert converted.nnz == m.nnz  # stored zeros kept
    np.testing.assert_array_equal(t.asformat("coo").to_numpy(), m.toarray())


@pytest.mark.parametrize("fmt", ["csr", "dcsr", "dense", "csc", "coo", "dh"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_to_scipy_coo_keeps_the_index_width_and_shares_a_coo_tensors_arrays(fmt, index_dtype):
    # A COO tensor hands SciPy its own arrays (as CSR and CSC tensors do); entries that list
    # sorted in COO's order come as a COO tensor's arrays, canonical; others as listed.
    rng = np.random.default_rng(11)
    coords, values = random_entries((40, 30), rng)
    t = tensor_of(coords, values, (40, 30), fmt, index_dtype)
    m = t.to_scipy("coo")
    expected = np.zeros((40, 30))
    expected[tuple(coords.T)] = values
    np.testing.assert_array_equal(m.toarray(), expected)
    assert m.nnz == t.nnz  # stored zeros kept
    if fmt in ("csr", "dcsr", "dense", "coo"):
        assert m.row.dtype == m.col.dtype == t.index_dtype or m.nnz == 0
    if fmt in ("csr", "dcsr", "dense"):
        assert m.has_canonical_format
        order = np.lexsort((m.col, m.row))
        np.testing.assert_array_equal(order, np.arange(m.nnz))
    if fmt == "coo":
        assert np.shares_memory(m.data, t.values) and np.shares_memory(m.col, t.levels[1].crd)
    else:
        m.data[:] = 7.0  # a copy: the tensor keeps its values
        assert not np.any(t.values == 7.0)


def test_empty_and_scalar_tensors_list_their_entries():
    empty = ct.asarray(sp.csr_array((5, 0)))
    listed, values = empty.coords()
    assert listed.shape == (0, 2) and values.shape == (0,)
    no_rows = ct.from_coords(np.zeros((0, 2), dtype=np.int64), np.zeros(0), (0, 4), format="dcsr")
    assert no_rows.coords()[0].shape == (0, 2)
    scalar = ct.asarray(np.float64(2.5))
    listed, values = scalar.coords()
    assert listed.shape == (1, 0) and values.tolist() == [2.5]


def test_corrupted_coordinates_are_refused_before_they_are_listed():
    m = sp.random_array((20, 10), density=0.3, random_state=5, format="csr")
    t = ct.asarray(m)
    t.levels[1].crd[3] = 99  # the arrays are SciPy's, changed after wrapping
    with pytest.raises(ct.FormatError, match="crd"):
        t.coords()
    with pytest.raises(ct.FormatError, match="crd"):
        t.asformat("coo")
