"""The worked examples of the thesis (Kjolstad's thesis, ch. 2), packed into every format listed
there, compared array by array."""

import numpy as np

import coiter as ct


def arrays(tensor):
    return [{k: v.tolist() for k, v in level.arrays.items()} for level in tensor.levels]


class TestVector:
    coords = np.array([[0], [1], [4], [6]])
    values = np.array([5.0, 1.0, 2.0, 8.0])

    def pack(self, fmt):
        return ct.from_coords(self.coords, self.values, (8,), format=fmt)

    def test_dense(self):
        t = self.pack("d")
        assert t.levels[0].size == 8
        assert t.values.tolist() == [5, 1, 0, 0, 2, 0, 8, 0]

    def test_compressed(self):
        t = self.pack("s")
        assert arrays(t) == [{"pos": [0, 4], "crd": [0, 1, 4, 6]}]
        assert t.values.tolist() == [5, 1, 2, 8]

    def test_hashed_linear_probing(self):
        # Coordinate 6 collides at bucket 0, probes bucket 1 (taken) and lands in bucket 2.
        t = self.pack(ct.Format([ct.hashed(buckets=6)]))
        assert t.levels[0].size == 6
        assert arrays(t) == [{"crd": [0, 1, 6, -1, 4, -1]}]
        assert t.values.tolist() == [5, 1, 8, 0, 2, 0]
        assert t.nnz == 4
        assert [t[k] for k in range(8)] == [5, 1, 0, 0, 2, 0, 8, 0]


class TestMatrix:
    def pack(self, thesis_matrix, fmt):
        t = ct.asarray(thesis_matrix, format=fmt)
        np.testing.assert_array_equal(t.to_numpy(), thesis_matrix)
        return t

    def test_coo(self, thesis_matrix):
        t = self.pack(thesis_matrix, "coo")
        assert arrays(t) == [
            {"pos": [0, 7], "crd": [0, 0, 1, 1, 3, 3, 3]},
            {"crd": [0, 1, 0, 1, 0, 3, 4]},
        ]
        assert t.values.tolist() == [5, 1, 7, 3, 8, 4, 9]
        assert t.format == ct.Format([ct.compressed(unique=False), ct.singleton])

    def test_csr(self, thesis_matrix):
        t = self.pack(thesis_matrix, "csr")
        assert t.levels[0].size == 4
        assert arrays(t) == [{}, {"pos": [0, 2, 4, 4, 7], "crd": [0, 1, 0, 1, 0, 3, 4]}]
        assert t.values.tolist() == [5, 1, 7, 3, 8, 4, 9]

    def test_csc(self, thesis_matrix):
        t = self.pack(thesis_matrix, "csc")
        assert arrays(t) == [{}, {"pos": [0, 3, 5, 5, 6, 7, 7], "crd": [0, 1, 3, 0, 1, 3, 3]}]
        assert t.values.tolist() == [5, 7, 8, 1, 3, 4, 9]

    def test_dcsr_stores_only_nonempty_rows(self, thesis_matrix):
        t = self.pack(thesis_matrix, "dcsr")
        assert arrays(t) == [
            {"pos": [0, 3], "crd": [0, 1, 3]},
            {"pos": [0, 2, 4, 7], "crd": [0, 1, 0, 1, 0, 3, 4]},
        ]

    def test_dcsc(self, thesis_matrix):
        t = self.pack(thesis_matrix, "dcsc")
        assert arrays(t) == [
            {"pos": [0, 4], "crd": [0, 1, 3, 4]},
            {"pos": [0, 3, 5, 6, 7], "crd": [0, 1, 3, 0, 1, 3, 3]},
        ]

    def test_dia(self, thesis_matrix):
        t = self.pack(thesis_matrix, "dia")
        assert t.levels[1].offset.tolist() == [-3, -1, 0, 1]
        assert (t.levels[1].rows, t.levels[1].cols) == (4, 6)
        assert t.levels[2].offset.tolist() == [-3, -1, 0, 1]
        # Values are indexed by (diagonal, row): row 3 on diagonal -1 is column 2.
        values = t.values.reshape(4, 4)
        assert values[0].tolist() == [0, 0, 0, 8]
        assert values[1].tolist() == [0, 7, 0, 0]
        assert values[2].tolist() == [5, 3, 0, 4]
        assert values[3].tolist() == [1, 0, 0, 9]
        assert t[3, 3] == 4 and t[2, 1] == 0

    def test_ell(self, thesis_matrix):
        t = self.pack(thesis_matrix, "ell")
        assert t.levels[0].size == 3  # K = most entries in a row
        assert t.levels[1].size == 4
        # Slot-major: slot k of row i sits at position k*4 + i; -1 marks padding.
        assert t.levels[2].crd.tolist() == [0, 0, -1, 0, 1, 1, -1, 3, -1, -1, -1, 4]
        assert t.values.tolist() == [5, 7, 0, 8, 1, 3, 0, 4, 0, 0, 0, 9]
        assert t.nnz == 7

    def test_bcsr(self, thesis_matrix):
        t = self.pack(thesis_matrix, ct.bcsr((2, 3)))
        assert arrays(t) == [{}, {"pos": [0, 1, 3], "crd": [0, 0, 1]}, {}, {}]
        assert [level.size for level in (t.levels[0], t.levels[2], t.levels[3])] == [2, 2, 3]
        assert t.values.tolist() == [5, 1, 0, 7, 3, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 4, 9, 0]


class TestOrder3:
    coords = np.array(
        [[0, 0, 0], [0, 0, 1], [0, 2, 1], [2, 0, 1], [2, 2, 0], [2, 2, 1], [2, 3, 0], [2, 3, 1]]
    )
    values = np.array([1, 7, 5, 2, 4, 8, 3, 9], dtype=np.int64)

    def pack(self, fmt):
        return ct.from_coords(self.coords, self.values, (3, 4, 2), format=fmt)

    def test_coo(self):
        t = self.pack("coo")
        assert arrays(t) == [
            {"pos": [0, 8], "crd": [0, 0, 0, 2, 2, 2, 2, 2]},
            {"crd": [0, 0, 2, 0, 2, 2, 3, 3]},
            {"crd": [0, 1, 1, 1, 0, 1, 0, 1]},
        ]
        assert t.values.tolist() == [1, 7, 5, 2, 4, 8, 3, 9]

    def test_csf(self):
        t = self.pack("csf")
        assert arrays(t) == [
            {"pos": [0, 2], "crd": [0, 2]},
            {"pos": [0, 2, 5], "crd": [0, 2, 0, 2, 3]},
            {"pos": [0, 2, 3, 4, 6, 8], "crd": [0, 1, 1, 1, 0, 1, 0, 1]},
        ]
        assert t.values.tolist() == [1, 7, 5, 2, 4, 8, 3, 9]

    def test_mode_generic(self):
        # A sparse set of dense blocks: compressed (non-unique), singleton, dense(2).
        t = self.pack(ct.Format([ct.compressed(unique=False), ct.singleton, ct.dense]))
        assert arrays(t) == [{"pos": [0, 5], "crd": [0, 0, 2, 2, 2]}, {"crd": [0, 2, 0, 2, 3]}, {}]
        assert t.levels[2].size == 2
        assert t.values.tolist() == [1, 7, 0, 5, 0, 2, 4, 8, 3, 9]

    def test_round_trip_every_order3_format(self):
        expected = np.zeros((3, 4, 2), dtype=np.int64)
        expected[tuple(self.coords.T)] = self.values
        for fmt in ["coo", "csf", "dense", "dsd", "sds:2,0,1", "hhh", "dss:1,2,0"]:
            np.testing.assert_array_equal(self.pack(fmt).to_numpy(), expected, err_msg=fmt)
