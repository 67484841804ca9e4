"""Tensors: creation, zero copy, conversions, element reads, dtypes, index widths, errors."""

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct

ALL_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def scipy_matrix(m=30, n=20, density=0.2, seed=0, fmt="csr", dtype=np.float64):
    return sp.random_array((m, n), density=density, format=fmt, dtype=dtype, rng=seed)


class TestZeroCopy:
    def test_numpy_dense(self):
        x = np.arange(24.0).reshape(2, 3, 4)
        t = ct.asarray(x)
        assert t.format == ct.as_format("dense", 3)
        assert np.shares_memory(t.values, x)
        x[1, 2, 3] = -1
        assert t[1, 2, 3] == -1
        assert not np.shares_memory(ct.asarray(x, copy=True).values, x)

    @pytest.mark.parametrize("kind", ["csr", "csc"])
    @pytest.mark.parametrize("index", [np.int32, np.int64])
    def test_canonical_scipy(self, kind, index):
        a = scipy_matrix(fmt=kind)
        a.indptr, a.indices = a.indptr.astype(index), a.indices.astype(index)
        t = ct.asarray(a, copy=False)
        assert str(t.format) == {"csr": "ds", "csc": "ds:1,0"}[kind]
        assert t.index_dtype == index
        for mine, theirs in [
            (t.values, a.data),
            (t.levels[1].pos, a.indptr),
            (t.levels[1].crd, a.indices),
        ]:
            assert np.shares_memory(mine, theirs)
        np.testing.assert_array_equal(t.to_numpy(), a.toarray())
        copied = ct.asarray(a, copy=True)
        assert not np.shares_memory(copied.values, a.data)
        np.testing.assert_array_equal(copied.to_numpy(), a.toarray())

    @pytest.mark.parametrize("index", [np.int32, np.int64])
    def test_canonical_scipy_coo_is_read_in_place(self, index):
        # Kernel calls take a canonical COO (sorted, no duplicates: what tocoo() of a
        # canonical CSR gives) without repacking it on every call.
        a = scipy_matrix().tocoo()
        a.coords = tuple(c.astype(index) for c in a.coords)
        assert a.has_canonical_format
        t = ct.asarray(a)
        assert str(t.format) == "uq" and t.index_dtype == index
        assert np.shares_memory(t.levels[0].crd, a.coords[0]) and np.shares_memory(
            t.levels[1].crd, a.coords[1]
        )
        np.testing.assert_array_equal(t.to_numpy(), a.toarray())
        x = np.arange(a.shape[1], dtype=np.float64)
        np.testing.assert_allclose(ct.evaluate("y(i) = A(i,j) * x(j)", A=a, x=x).to_numpy(), a @ x)
        # Unsorted coordinates are packed (sorted) instead.
        b = sp.coo_array((np.arange(1.0, 4.0), ([2, 0, 1], [0, 1, 2])), shape=(3, 3))
        assert not b.has_canonical_format
        np.testing.assert_array_equal(ct.asarray(b).to_numpy(), b.toarray())

    def test_bsr_wraps_blocks(self):
        a = sp.bsr_array(scipy_matrix(8, 6).toarray(), blocksize=(2, 3))
        t = ct.asarray(a)
        assert t.format == ct.bcsr((2, 3))
        assert np.shares_memory(t.values, a.data)
        np.testing.assert_array_equal(t.to_numpy(), a.toarray())

    def test_copy_false_refuses_a_needed_copy(self):
        with pytest.raises(ValueError, match="copy=False"):
            ct.asarray(np.ones((3, 3))[:, ::2], copy=False)
        with pytest.raises(ValueError, match="copy=False"):
            ct.asarray(np.ones(3), dtype=np.float32, copy=False)
        with pytest.raises(ValueError, match="copy=False"):
            ct.asarray(scipy_matrix(), format="csc", copy=False)
        with pytest.raises(ValueError, match="copy=False"):
            ct.asarray(np.ones((2, 2)), format="csr", copy=False)


class TestNonCanonicalScipy:
    def test_unsorted_and_duplicated_csr(self):
        indptr = np.array([0, 3, 3, 5])
        indices = np.array([2, 0, 2, 1, 1])
        data = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
        a = sp.csr_array((data, indices, indptr), shape=(3, 3))
        t = ct.asarray(a)
        assert not np.shares_memory(t.values, data)
        assert t.levels[1].crd.tolist() == [0, 2, 1]
        assert t.values.tolist() == [2.0, 4.0, 9.0]
        np.testing.assert_array_equal(t.to_numpy(), a.toarray())
        with pytest.raises(ValueError, match="canonical"):
            ct.asarray(sp.csr_array((data, indices, indptr), shape=(3, 3)), copy=False)

    def test_coo_with_duplicates(self):
        a = sp.coo_array(
            (np.array([1.0, 2.0, 3.0]), (np.array([1, 0, 1]), np.array([1, 0, 1]))), shape=(2, 2)
        )
        t = ct.asarray(a)
        assert t.nnz == 2 and t[1, 1] == 4.0
        np.testing.assert_array_equal(t.to_numpy(), a.toarray())

    def test_dia(self):
        a = sp.dia_array(scipy_matrix(6, 5, 0.4).toarray())
        t = ct.asarray(a)
        assert str(t.format) == "dia"
        np.testing.assert_array_equal(t.to_numpy(), a.toarray())


class TestConversions:
    def test_every_format_round_trips_numpy_and_scipy(self, matrix_format, thesis_matrix):
        t = ct.asarray(thesis_matrix, format=matrix_format)
        np.testing.assert_array_equal(t.to_numpy(), thesis_matrix)
        np.testing.assert_array_equal(np.asarray(t), thesis_matrix)
        for kind in ("csr", "csc", "coo"):
            s = t.to_scipy(kind)
            assert s.format == kind
            np.testing.assert_array_equal(s.toarray(), thesis_matrix)
        back = ct.asarray(t.to_scipy(), format=matrix_format)
        np.testing.assert_array_equal(back.to_numpy(), thesis_matrix)

    def test_asformat_between_every_pair(self, thesis_matrix):
        from conftest import MATRIX_FORMATS

        tensors = {k: ct.asarray(thesis_matrix, format=f) for k, f in MATRIX_FORMATS.items()}
        for source in tensors.values():
            for target in MATRIX_FORMATS.values():
                converted = source.asformat(target)
                assert converted.format == ct.as_format(target, 2)
                np.testing.assert_array_equal(converted.to_numpy(), thesis_matrix)

    def test_to_scipy_of_csr_shares_memory(self):
        t = ct.asarray(scipy_matrix())
        s = t.to_scipy()
        assert s.format == "csr" and np.shares_memory(s.data, t.values)

    def test_coords_in_storage_order(self, thesis_matrix):
        coords, values = ct.asarray(thesis_matrix, format="csc").coords()
        assert coords.tolist() == [[0, 0], [1, 0], [3, 0], [0, 1], [1, 1], [3, 3], [3, 4]]
        assert values.tolist() == [5, 7, 8, 1, 3, 4, 9]

    def test_copy_is_deep(self):
        a = scipy_matrix()
        t = ct.asarray(a)
        c = t.copy()
        assert not np.shares_memory(c.values, a.data)
        c.values[:] = 0
        assert t.values.any()

    def test_to_scipy_needs_a_matrix(self):
        with pytest.raises(ct.FormatError, match="2-D"):
            ct.zeros((2, 2, 2)).to_scipy()
        with pytest.raises(ct.FormatError, match="'csr', 'csc' or 'coo'"):
            ct.zeros((2, 2)).to_scipy("dia")


class TestCreation:
    def test_zeros(self):
        z = ct.zeros((3, 4), "csr", dtype=np.int32)
        assert z.nnz == 0 and z.dtype == np.int32 and z.levels[1].pos.tolist() == [0] * 4
        assert ct.zeros((2, 2)).to_numpy().tolist() == [[0, 0], [0, 0]]
        assert ct.zeros(()).to_numpy().shape == ()

    def test_scalars_and_lists(self):
        assert ct.asarray(3.5).to_numpy() == 3.5
        assert ct.asarray([[1, 2], [3, 4]])[1, 0] == 3

    def test_from_coords_sums_or_keeps_duplicates(self):
        coords = [[0, 1], [0, 1], [2, 0]]
        summed = ct.from_coords(coords, [1.0, 2.0, 3.0], (3, 2))
        assert summed.nnz == 2 and summed[0, 1] == 3.0
        kept = ct.from_coords(coords, [1.0, 2.0, 3.0], (3, 2), sum_duplicates=False)
        assert kept.nnz == 3 and kept[0, 1] == 3.0
        np.testing.assert_array_equal(kept.to_numpy(), summed.to_numpy())
        with pytest.raises(ct.FormatError, match="duplicates"):
            ct.from_coords(coords, [1.0, 2.0, 3.0], (3, 2), format="csr", sum_duplicates=False)

    def test_random(self):
        t = ct.random((40, 50), 0.1, seed=3)
        assert t.nnz == 200 and str(t.format) == "ds"
        assert ct.random((40, 50), 0.1, seed=3).values.tolist() == t.values.tolist()
        assert ct.random((5, 6, 7), 0.5, format="csf", dtype=np.int16, seed=0).nnz == 105
        with pytest.raises(ValueError, match="density"):
            ct.random((3, 3), 1.5)

    def test_hypersparse_costs_memory_proportional_to_nonzeros(self):
        big = 10**9
        coords = np.array([[0, 0], [5, 7], [big - 1, big - 1]])
        for fmt in ("coo", "dcsr", "dcsc", "csf"):
            t = ct.from_coords(coords, [1.0, 2.0, 3.0], (big, big), format=fmt)
            assert t.index_dtype == np.int32
            assert sum(a.size for lv in t.levels for a in lv.arrays.values()) < 20
            assert t[big - 1, big - 1] == 3.0 and t[5, 7] == 2.0 and t[5, 8] == 0.0
            assert t.coords()[0].tolist() == coords.tolist() or fmt == "dcsc"

    def test_index_width_grows_when_needed(self):
        t = ct.from_coords([[0, 3_000_000_000]], [1.0], (2, 3_000_000_001), format="dcsr")
        assert t.index_dtype == np.int64
        assert t[0, 3_000_000_000] == 1.0


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype(dtype, thesis_matrix):
    expected = thesis_matrix.astype(dtype)
    for fmt in ("dense", "csr", "coo", "dia", "ell", "dh"):
        t = ct.asarray(expected, format=fmt)
        assert t.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(t.to_numpy(), expected)
        assert t[3, 4] == expected[3, 4]


class TestErrors:
    def test_unsupported_dtypes(self):
        for bad in (np.float16, object, "U3", "datetime64[s]"):
            with pytest.raises(TypeError, match="dtype"):
                ct.asarray(np.zeros(3, dtype=bad))

    def test_coordinates_out_of_range_name_mode_and_value(self):
        with pytest.raises(ct.ShapeError, match=r"coordinate 5 .* mode 1 with extent 4"):
            ct.from_coords([[0, 1], [1, 5]], [1.0, 2.0], (2, 4))
        with pytest.raises(ct.ShapeError, match="coordinate -1"):
            ct.from_coords([[-1, 0]], [1.0], (2, 4))

    def test_shapes_that_disagree_with_data(self):
        with pytest.raises(ct.ShapeError, match=r"shape \(nnz, 2\)"):
            ct.from_coords([[0, 1, 2]], [1.0], (2, 4))
        with pytest.raises(ct.ShapeError, match="values"):
            ct.from_coords([[0, 1]], [1.0, 2.0], (2, 4))
        with pytest.raises(ct.ShapeError, match="multiple of the block size"):
            ct.asarray(np.ones((5, 4)), format=ct.bcsr((2, 2)))
        with pytest.raises(ct.ShapeError, match="extent"):
            ct.zeros((3, -1))
        with pytest.raises(TypeError, match="integers"):
            ct.from_coords([[0.5, 1.0]], [1.0], (2, 2))

    def test_element_reads_are_checked(self):
        t = ct.asarray(np.ones((2, 3)), format="csr", name="A")
        with pytest.raises(ct.ShapeError, match="out of range for mode 1"):
            t[0, 3]
        with pytest.raises(IndexError, match="out of range for mode 0"):
            t[2, 0]
        assert t[-1, -1] == 1.0
        # Fewer integers than modes, and slices, index like NumPy (tests/test_arrays_indexing.py).
        np.testing.assert_array_equal(t[0].to_numpy(), np.ones(3))
        np.testing.assert_array_equal(t[0:1, 0].to_numpy(), np.ones(1))

    def test_malformed_arrays_are_rejected_not_read(self):
        bad_crd = dict(arrays=[{}, {"pos": np.array([0, 1, 2]), "crd": np.array([0, 9])}])
        bad_pos = dict(arrays=[{}, {"pos": np.array([0, 2, 1]), "crd": np.array([0, 1])}])
        unsorted = dict(arrays=[{}, {"pos": np.array([0, 2, 2]), "crd": np.array([1, 0])}])
        for case, match in [
            (bad_crd, "outside"),
            (bad_pos, "non-decreasing"),
            (unsorted, "strictly increasing"),
        ]:
            with pytest.raises(ct.FormatError, match=match):
                ct.Tensor._from_level_arrays(
                    "csr", (2, 3), np.int32, case["arrays"], [{"size": 2}, {}], np.ones(2)
                )

    @pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
    @pytest.mark.parametrize("at", [1, 255, 256, 257, 700, 999])
    def test_large_arrays_are_checked_everywhere(self, index_dtype, at):
        # Validation scans blocks of entries at once: a single bad entry must be found
        # wherever it sits relative to the blocks, with its exact position in the message.
        rows, cols, per_row = 128, 4096, 8
        rng = np.random.default_rng(at)
        lengths = np.full(rows, per_row)
        lengths[5:8] = 0  # empty rows: descents at row starts stay legal around them
        crd = np.concatenate([np.sort(rng.choice(cols, n, replace=False)) for n in lengths])
        pos = np.concatenate([[0], np.cumsum(lengths)])
        crd = crd.astype(index_dtype)
        pos = pos.astype(index_dtype)

        def build(p, c):
            return ct.Tensor._from_level_arrays(
                "csr",
                (rows, cols),
                index_dtype,
                [{}, {"pos": p, "crd": c}],
                [{"size": rows}, {}],
                np.ones(len(c)),
            )

        assert build(pos, crd).nnz == len(crd)  # the unmodified arrays pass
        out_of_range = crd.copy()
        out_of_range[at] = cols
        with pytest.raises(ct.FormatError, match=rf"crd\[{at}\] = {cols} is outside"):
            build(pos, out_of_range)
        segment = int(np.searchsorted(pos, at, side="right")) - 1
        if pos[segment] < at:  # inside a row: make it equal to the entry before
            repeated = crd.copy()
            repeated[at] = repeated[at - 1]
            with pytest.raises(
                ct.FormatError,
                match=rf"segment {segment} is not strictly increasing at crd\[{at}\]",
            ):
                build(pos, repeated)
        descending_pos = pos.copy()
        descending_pos[at % rows + 1] = (
            descending_pos[at % rows] - 1 if descending_pos[at % rows] > 0 else 0
        )
        if np.any(np.diff(descending_pos) < 0):
            with pytest.raises(ct.FormatError, match="non-decreasing"):
                build(descending_pos, crd)

    def test_int32_coordinates_of_a_mode_wider_than_int32(self):
        # The range check compares at the index width: an extent beyond int32 clamps, not wraps.
        crd = np.append(np.arange(300), 2**31 - 1).astype(np.int32)
        pos = np.array([0, len(crd)], dtype=np.int32)
        t = ct.Tensor._from_level_arrays(
            "csr",
            (1, 2**33),
            np.int32,
            [{}, {"pos": pos, "crd": crd}],
            [{"size": 1}, {}],
            np.ones(len(crd)),
        )
        assert t.nnz == len(crd)

    def test_scipy_with_out_of_range_indices_is_rejected_before_reading(self):
        a = sp.csr_array((np.ones(2), np.array([0, 7]), np.array([0, 1, 2])), shape=(2, 3))
        t = ct.asarray(a)
        with pytest.raises(ct.FormatError, match="outside"):
            t.to_numpy()
