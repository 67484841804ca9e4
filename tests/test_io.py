"""File I/O: Matrix Market, FROSTT and coiter .npz round trips, variants and errors."""

import gzip
import io
import time
import zipfile

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import coiter as ct
from coiter import io as cio


def write_text(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def sample_matrix(dtype, m=7, n=5, seed=0):
    """A dense matrix with about half its entries zero, of any supported dtype."""
    rng = np.random.default_rng(seed)
    mask = rng.random((m, n)) < 0.5
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return mask
    if dtype.kind in "iu":
        values = rng.integers(1, 100, (m, n))
        if dtype.kind == "i":
            values[::2] *= -1
        return (values * mask).astype(dtype)
    values = rng.standard_normal((m, n)) * 10.0 ** rng.integers(-20, 20, (m, n))
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal((m, n))
    return (values * mask).astype(dtype)


def assert_same_storage(a, b):
    """Equal format, shape, dtypes, level arrays, parameters and values, exactly."""
    assert a.format == b.format
    assert a.shape == b.shape
    assert a.dtype == b.dtype
    assert a.index_dtype == b.index_dtype
    assert len(a.levels) == len(b.levels)
    for mine, theirs in zip(a.levels, b.levels):
        assert mine.parameters == theirs.parameters
        assert sorted(mine.arrays) == sorted(theirs.arrays)
        for name in mine.arrays:
            assert mine.arrays[name].dtype == theirs.arrays[name].dtype
            np.testing.assert_array_equal(mine.arrays[name], theirs.arrays[name])
    np.testing.assert_array_equal(a.values, b.values)


def test_package_exports_the_io_functions():
    assert (ct.read, ct.write, ct.save, ct.load) == (cio.read, cio.write, cio.save, cio.load)


# -- Matrix Market -------------------------------------------------------------------------

MTX_DTYPES = ["float64", "float32", "int64", "int32", "uint8", "complex128", "complex64", "bool"]
FIELD_OF = {"f": "real", "i": "integer", "u": "integer", "b": "integer", "c": "complex"}


class TestMatrixMarketRoundTrip:
    @pytest.mark.parametrize("dtype", MTX_DTYPES)
    @pytest.mark.parametrize("fmt", ["csr", "coo", "dense"])
    def test_every_dtype(self, tmp_path, dtype, fmt):
        dense = sample_matrix(dtype)
        path = tmp_path / "m.mtx"
        ct.write(path, ct.asarray(dense, format=fmt))
        layout = "array" if fmt == "dense" else "coordinate"
        field = FIELD_OF[np.dtype(dtype).kind]
        assert path.read_text().splitlines()[0] == f"%%MatrixMarket matrix {layout} {field} general"
        back = ct.read(path, dtype=dtype)
        assert back.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(back.to_numpy(), dense)

    def test_default_dtypes_and_formats(self, tmp_path):
        for dtype, read_as in [
            ("float32", "float64"),
            ("int8", "int64"),
            ("bool", "int64"),
            ("complex64", "complex128"),
        ]:
            ct.write(tmp_path / "m.mtx", ct.asarray(sample_matrix(dtype), format="csr"))
            back = ct.read(tmp_path / "m.mtx")
            assert back.dtype == np.dtype(read_as)
            assert back.format == ct.as_format("csr", 2)
            np.testing.assert_array_equal(back.to_numpy(), sample_matrix(dtype).astype(read_as))
        ct.write(tmp_path / "d.mtx", ct.asarray(sample_matrix("float64")))
        assert ct.read(tmp_path / "d.mtx").format == ct.as_format("dense", 2)
        assert ct.read(tmp_path / "d.mtx", format="csc").format == ct.as_format("csc", 2)

    def test_special_floats_survive_exactly(self, tmp_path):
        values = np.array(
            [np.inf, -np.inf, np.nan, -0.0, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3]
        )
        coords = np.column_stack([np.arange(8), np.arange(8) % 3])
        t = ct.from_coords(coords, values, (8, 3), format="csr")
        ct.write(tmp_path / "s.mtx", t)
        back = ct.read(tmp_path / "s.mtx")
        np.testing.assert_array_equal(back.values, t.values)  # nan == nan here
        assert np.signbit(back.values[3])
        assert np.array_equal(back.coords()[0], t.coords()[0])

    def test_complex_infinities(self, tmp_path):
        write_text(
            tmp_path,
            "c.mtx",
            "%%MatrixMarket matrix coordinate complex general\n1 2 2\n1 1 1.5 inf\n1 2 -inf 0\n",
        )
        np.testing.assert_array_equal(
            ct.read(tmp_path / "c.mtx").to_numpy(), [[complex(1.5, np.inf), complex(-np.inf, 0)]]
        )

    def test_gzip(self, tmp_path):
        dense = sample_matrix("float64")
        ct.write(tmp_path / "m.mtx.gz", ct.asarray(dense, format="csr"))
        with gzip.open(tmp_path / "m.mtx.gz", "rt") as stream:
            assert stream.readline().startswith("%%MatrixMarket")
        np.testing.assert_array_equal(ct.read(tmp_path / "m.mtx.gz").to_numpy(), dense)

    def test_scipy_reads_our_files(self, tmp_path):
        for fmt in ["csr", "dense"]:
            dense = sample_matrix("float64", 9, 4)
            ct.write(tmp_path / "m.mtx", ct.asarray(dense, format=fmt))
            theirs = scipy.io.mmread(tmp_path / "m.mtx")
            np.testing.assert_array_equal(
                theirs.toarray() if sp.issparse(theirs) else theirs, dense
            )

    def test_symmetric_writing(self, tmp_path):
        half = sample_matrix("float64", 6, 6)
        dense = half + half.T
        path = tmp_path / "s.mtx"
        ct.write(path, ct.asarray(dense, format="csr"), symmetry="symmetric")
        lines = path.read_text().splitlines()
        assert lines[0] == "%%MatrixMarket matrix coordinate real symmetric"
        entries = [line.split() for line in lines[3:]]
        assert all(int(i) >= int(j) for i, j, _ in entries)
        assert len(entries) == np.count_nonzero(np.tril(dense))
        np.testing.assert_array_equal(ct.read(path).to_numpy(), dense)
        np.testing.assert_array_equal(scipy.io.mmread(path).toarray(), dense)

    def test_symmetric_writing_refuses_a_nonsymmetric_matrix(self, tmp_path):
        dense = np.array([[1.0, 2.0], [3.0, 4.0]])
        with pytest.raises(ValueError, match="not symmetric"):
            ct.write(tmp_path / "s.mtx", ct.asarray(dense, format="csr"), symmetry="symmetric")
        with pytest.raises(ValueError, match="square"):
            ct.write(tmp_path / "s.mtx", ct.asarray(np.ones((2, 3))), symmetry="symmetric")
        with pytest.raises(ValueError, match="Matrix Market"):
            ct.write(tmp_path / "s.tns", ct.asarray(dense), symmetry="symmetric")

    def test_only_matrices(self, tmp_path):
        with pytest.raises(ct.ShapeError, match="order 3"):
            ct.write(tmp_path / "t.mtx", ct.asarray(np.ones((2, 2, 2))))

    def test_accepts_numpy_input(self, tmp_path):
        ct.write(tmp_path / "m.mtx", np.eye(3))
        np.testing.assert_array_equal(ct.read(tmp_path / "m.mtx").to_numpy(), np.eye(3))


SYMMETRIC_CASES = {
    "symmetric": (
        "%%MatrixMarket matrix coordinate real symmetric\n% lower triangle\n"
        "3 3 4\n1 1 2.0\n2 1 -1.5\n3 1 4\n3 3 7\n",
        [[2, -1.5, 4], [-1.5, 0, 0], [4, 0, 7]],
    ),
    "skew": (
        "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 2 -7\n",
        [[0, -5, 0], [5, 0, 7], [0, -7, 0]],
    ),
    "hermitian": (
        "%%MatrixMarket matrix coordinate complex hermitian\n2 2 3\n1 1 1 0\n2 1 2 3\n2 2 4 0\n",
        [[1, 2 - 3j], [2 + 3j, 4]],
    ),
    "pattern": (
        "%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 1\n1 3\n2 2\n",
        [[1, 0, 1], [0, 1, 0]],
    ),
    "pattern symmetric": (
        "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n",
        [[1, 1], [1, 0]],
    ),
    "array": (
        "%%MatrixMarket matrix array real general\n% column-major\n2 3\n1\n4\n2\n5\n3\n0\n",
        [[1, 2, 3], [4, 5, 0]],
    ),
    "array symmetric": (
        "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
        [[1, 2, 3], [2, 4, 5], [3, 5, 6]],
    ),
    "array skew": (
        "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n",
        [[0, -1, -2], [1, 0, -3], [2, 3, 0]],
    ),
    "array complex": (
        "%%MatrixMarket matrix array complex general\n1 2\n1 -1\n0 2.5\n",
        [[1 - 1j, 2.5j]],
    ),
    "array hermitian": (
        "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 1\n3 0\n",
        [[1, 2 - 1j], [2 + 1j, 3]],
    ),
    "double and upper-case words": (
        "%%MatrixMarket MATRIX Coordinate DOUBLE General\n1 1 1\n1 1 3\n",
        [[3.0]],
    ),
    "comments and blank lines": (
        "%%MatrixMarket matrix coordinate real general\n%\n\n"
        "% another\n  \n2 2 2\n\n1 1 1\n\n"
        "2 2 2\n\n",
        [[1, 0], [0, 2]],
    ),
    "empty": (
        "%%MatrixMarket matrix coordinate real general\n% nothing\n4 5 0\n",
        np.zeros((4, 5)),
    ),
    "duplicates are summed": (
        "%%MatrixMarket matrix coordinate real general\n1 2 3\n1 1 1\n1 2 2\n1 1 4\n",
        [[5, 2]],
    ),
    "crlf": ("%%MatrixMarket matrix coordinate real general\r\n1 2 1\r\n1 2 9\r\n", [[0, 9]]),
}


class TestMatrixMarketVariants:
    @pytest.mark.parametrize("case", sorted(SYMMETRIC_CASES))
    def test_variant(self, tmp_path, case):
        text, expected = SYMMETRIC_CASES[case]
        path = tmp_path / "m.mtx"
        path.write_bytes(text.encode())
        result = ct.read(path)
        np.testing.assert_array_equal(result.to_numpy(), np.array(expected))
        theirs = scipy.io.mmread(path)
        np.testing.assert_array_equal(
            result.to_numpy(), theirs.toarray() if sp.issparse(theirs) else theirs
        )

    def test_comments_among_the_entries(self, tmp_path):
        # Beyond SciPy, which rejects them: comment lines between entries, and text after
        # % on a data line, are comments too.
        path = write_text(
            tmp_path,
            "m.mtx",
            "%%MatrixMarket matrix coordinate real general\n"
            "2 2 2 % size\n2 1 3.5 % an entry\n% between\n1 2 1\n",
        )
        np.testing.assert_array_equal(ct.read(path).to_numpy(), [[0, 1], [3.5, 0]])

    def test_field_dtypes(self, tmp_path):
        for case, dtype in [
            ("symmetric", np.float64),
            ("skew", np.int64),
            ("hermitian", np.complex128),
            ("pattern", np.float64),
            ("array", np.float64),
        ]:
            write_text(tmp_path, "m.mtx", SYMMETRIC_CASES[case][0])
            assert ct.read(tmp_path / "m.mtx").dtype == dtype

    def test_pattern_with_dtype(self, tmp_path):
        path = write_text(tmp_path, "p.mtx", SYMMETRIC_CASES["pattern"][0])
        result = ct.read(path, dtype=bool)
        assert result.dtype == np.bool_
        np.testing.assert_array_equal(result.to_numpy(), [[1, 0, 1], [0, 1, 0]])

    def test_dtype_conversions_must_be_exact(self, tmp_path):
        path = write_text(
            tmp_path,
            "m.mtx",
            "%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 1.5\n1 2 2\n",
        )
        assert ct.read(path, dtype=np.float32).dtype == np.float32
        with pytest.raises(ValueError, match="int32"):
            ct.read(path, dtype=np.int32)
        whole = write_text(
            tmp_path,
            "w.mtx",
            "%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 3.0\n1 2 -2\n",
        )
        np.testing.assert_array_equal(ct.read(whole, dtype=np.int8).to_numpy(), [[3, -2]])
        with pytest.raises(ValueError, match="uint8"):
            ct.read(whole, dtype=np.uint8)
        with pytest.raises(ValueError, match="imaginary"):
            ct.read(
                write_text(tmp_path, "h.mtx", SYMMETRIC_CASES["hermitian"][0]), dtype=np.float64
            )
        with pytest.raises(TypeError):
            ct.read(path, dtype=np.float16)

    def test_uint64_beyond_int64(self, tmp_path):
        path = write_text(
            tmp_path,
            "u.mtx",
            "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 18446744073709551615\n",
        )
        assert ct.read(path, dtype=np.uint64)[0, 0] == 2**64 - 1
        with pytest.raises(ct.ParseError, match="line 3"):
            ct.read(path)

    def test_shape_pads_but_never_shrinks(self, tmp_path):
        path = write_text(tmp_path, "m.mtx", SYMMETRIC_CASES["pattern"][0])
        assert ct.read(path, shape=(4, 3)).shape == (4, 3)
        with pytest.raises(ct.ShapeError, match="smaller"):
            ct.read(path, shape=(2, 2))
        with pytest.raises(ct.ShapeError):
            ct.read(path, shape=(2, 3, 1))


class TestScipyCrossCheck:
    @pytest.mark.parametrize("dtype", ["float64", "int64", "complex128"])
    def test_mmwrite_files_read_back_equal(self, tmp_path, dtype):
        a = sp.random_array((40, 30), density=0.1, format="coo", rng=3).astype(dtype)
        if np.dtype(dtype).kind == "i":
            a = sp.coo_array((np.arange(1, a.nnz + 1), a.coords), shape=a.shape)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * a
        scipy.io.mmwrite(tmp_path / "a.mtx", a)
        result = ct.read(tmp_path / "a.mtx")
        assert result.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(result.to_numpy(), a.toarray())
        np.testing.assert_array_equal(
            result.to_numpy(), scipy.io.mmread(tmp_path / "a.mtx").toarray()
        )

    def test_mmwrite_symmetric_pattern_and_dense(self, tmp_path):
        a = sp.random_array((20, 20), density=0.2, format="coo", rng=4)
        symmetric = (a + a.T).tocoo()
        scipy.io.mmwrite(tmp_path / "s.mtx", symmetric, symmetry="symmetric")
        assert "symmetric" in (tmp_path / "s.mtx").read_text().splitlines()[0]
        np.testing.assert_array_equal(ct.read(tmp_path / "s.mtx").to_numpy(), symmetric.toarray())
        scipy.io.mmwrite(tmp_path / "p.mtx", a, field="pattern")
        np.testing.assert_array_equal(
            ct.read(tmp_path / "p.mtx").to_numpy(), (a.toarray() != 0).astype(float)
        )
        dense = np.arange(12.0).reshape(3, 4)
        scipy.io.mmwrite(tmp_path / "d.mtx", dense)
        np.testing.assert_array_equal(ct.read(tmp_path / "d.mtx").to_numpy(), dense)

    def test_against_mmread(self, tmp_path):
        a = sp.random_array((300, 200), density=0.05, format="csr", rng=5)
        ct.write(tmp_path / "a.mtx", ct.asarray(a))
        theirs = scipy.io.mmread(tmp_path / "a.mtx")
        mine = ct.read(tmp_path / "a.mtx", format="coo")
        np.testing.assert_array_equal(mine.to_numpy(), theirs.toarray())
        assert mine.nnz == theirs.nnz


# Each case: file text, the line the error must name, and a fragment of the message.
MTX_ERRORS = {
    "empty file": ("", 1, "banner"),
    "no banner": ("1 1 1\n1 1 1\n", 1, "banner"),
    "short banner": ("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "banner"),
    "unknown object": ("%%MatrixMarket vector coordinate real general\n", 1, "vector"),
    "unknown layout": ("%%MatrixMarket matrix sparse real general\n", 1, "sparse"),
    "unknown field": ("%%MatrixMarket matrix coordinate bogus general\n", 1, "bogus"),
    "unknown symmetry": ("%%MatrixMarket matrix coordinate real diagonal\n", 1, "diagonal"),
    "pattern array": ("%%MatrixMarket matrix array pattern general\n2 2\n", 1, "pattern"),
    "size line with two numbers": (
        "%%MatrixMarket matrix coordinate real general\n%\n\n% c\n2 2\n",
        5,
        "size line",
    ),
    "size line not numeric": (
        "%%MatrixMarket matrix coordinate real general\n%\n%\n%\n2 x 1\n",
        5,
        "size line",
    ),
    "negative size": (
        "%%MatrixMarket matrix coordinate real general\n%\n%\n%\n-2 2 1\n",
        5,
        "size line",
    ),
    "array size line with three numbers": (
        "%%MatrixMarket matrix array real general\n%\n%\n%\n2 2 4\n",
        5,
        "size line",
    ),
    "no size line": (
        "%%MatrixMarket matrix coordinate real general\n% only\n% comments\n%\n%\n",
        5,
        "size line",
    ),
    "non-square symmetric": (
        "%%MatrixMarket matrix coordinate real symmetric\n%\n%\n%\n2 3 1\n",
        5,
        "square",
    ),
    "too few fields": (
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n% c\n2 2\n3 3 3\n",
        5,
        "expected 3 fields",
    ),
    "too many fields": (
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n\n2 2 2 2\n3 3 3\n",
        5,
        "found 4",
    ),
    "pattern with a value": (
        "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 1\n2 2\n3 3 1.0\n",
        5,
        "expected 2 fields",
    ),
    "complex without imaginary part": (
        "%%MatrixMarket matrix coordinate complex general\n3 3 3\n1 1 1 0\n2 2 2 0\n3 3 3\n",
        5,
        "fields",
    ),
    "non-numeric value": (
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n3 3 abc\n",
        5,
        "'abc'",
    ),
    "non-integer coordinate": (
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n3.5 3 3\n",
        5,
        "row",
    ),
    "real value in an integer matrix": (
        "%%MatrixMarket matrix coordinate integer general\n3 3 3\n1 1 1\n2 2 2\n3 3 3.5\n",
        5,
        "integer",
    ),
    "row zero": (
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n0 3 3\n",
        5,
        "row coordinate 0 is outside 1..3",
    ),
    "column too large": (
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n% c\n2 4 2\n3 3 3\n",
        5,
        "column coordinate 4 is outside 1..3",
    ),
    "row beyond the size of a symmetric matrix": (
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 1\n2 1 1\n3 1 1\n",
        5,
        "row coordinate 3",
    ),
    "fewer entries": (
        "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 2\n3 3 3\n",
        5,
        "declares 4 entries but the file ends after 3",
    ),
    "fewer entries, trailing comments": (
        "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n% end\n",
        5,
        "declares 3",
    ),
    "more entries": (
        "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n\n2 2 2\n3 3 3\n",
        6,
        "beyond the 2 entries",
    ),
    "entries in an empty matrix": (
        "%%MatrixMarket matrix coordinate real general\n%\n%\n3 3 0\n1 1 1\n",
        5,
        "beyond the 0 entries",
    ),
    "array with too many values": (
        "%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n",
        5,
        "beyond the 2 entries",
    ),
    "array with too few values": (
        "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n% c\n",
        5,
        "declares 3 entries",
    ),
    "nonzero diagonal in a skew matrix": (
        "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 1\n3 1 2\n3 3 3\n",
        5,
        "diagonal",
    ),
}


class TestMatrixMarketErrors:
    @pytest.mark.parametrize("case", sorted(MTX_ERRORS))
    def test_parse_error_names_the_line(self, tmp_path, case):
        text, line, fragment = MTX_ERRORS[case]
        path = write_text(tmp_path, "bad.mtx", text)
        with pytest.raises(ct.ParseError) as caught:
            ct.read(path)
        message = str(caught.value)
        assert f"line {line}:" in message
        assert fragment in message
        assert str(path) in message
        assert caught.value.line == line
        assert caught.value.path == str(path)

    def test_missing_file(self, tmp_path):
        with pytest.raises(FileNotFoundError):
            ct.read(tmp_path / "absent.mtx")

    @pytest.mark.parametrize("name", ["m.csv", "m.mtx.bz2", "m", "m.npy"])
    def test_unknown_extension(self, tmp_path, name):
        with pytest.raises(ValueError, match=r"\.mtx, .*\.tns.*\.npz"):
            ct.read(tmp_path / name)
        with pytest.raises(ValueError, match=r"\.mtx"):
            ct.write(tmp_path / name, ct.asarray(np.eye(2)))


# -- FROSTT --------------------------------------------------------------------------------


def sample_tensor(shape, density=0.3, seed=0, dtype=np.float64):
    dense = np.zeros(shape, dtype=dtype)
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < density
    dense[mask] = (
        sample_matrix(dtype, mask.sum(), 1, seed).ravel()
        if np.dtype(dtype).kind != "f"
        else rng.standard_normal(mask.sum())
    )
    # Reach the last coordinate in every mode so the inferred shape is the full shape.
    dense[tuple(e - 1 for e in shape)] = 1
    return dense


class TestFrostt:
    @pytest.mark.parametrize("shape", [(9,), (6, 5), (4, 3, 5), (3, 4, 2, 3)])
    def test_round_trip_infers_the_shape(self, tmp_path, shape):
        dense = sample_tensor(shape)
        ct.write(tmp_path / "t.tns", ct.asarray(dense, format="csf"))
        lines = (tmp_path / "t.tns").read_text().splitlines()
        assert len(lines) == np.count_nonzero(dense)
        assert all(len(line.split()) == len(shape) + 1 for line in lines)
        result = ct.read(tmp_path / "t.tns")
        assert result.shape == shape
        assert result.format == ct.as_format("coo", len(shape))
        assert result.dtype == np.float64
        np.testing.assert_array_equal(result.to_numpy(), dense)

    def test_coordinates_are_one_based(self, tmp_path):
        ct.write(tmp_path / "t.tns", ct.from_coords([[0, 2, 1]], [2.5], (1, 3, 2)))
        assert (tmp_path / "t.tns").read_text() == "1 3 2 2.5\n"

    def test_shape_and_comments(self, tmp_path):
        path = write_text(
            tmp_path,
            "t.tns",
            "# a FROSTT tensor\n\n1 1 1 1.0\n# more\n2 3 1 -2e3   # note\n  1 1 2 4\n",
        )
        expected = np.zeros((2, 3, 2))
        expected[0, 0, 0], expected[1, 2, 0], expected[0, 0, 1] = 1, -2000, 4
        np.testing.assert_array_equal(ct.read(path).to_numpy(), expected)
        padded = ct.read(path, shape=(5, 3, 2), format="csf")
        assert padded.shape == (5, 3, 2)
        assert padded.format == ct.as_format("csf", 3)
        with pytest.raises(ct.ShapeError, match="line 5"):
            ct.read(path, shape=(2, 2, 2))
        with pytest.raises(ct.ShapeError, match="order-3"):
            ct.read(path, shape=(2, 3))

    @pytest.mark.parametrize("dtype", ["int64", "int16", "uint32", "bool", "float32"])
    def test_dtypes(self, tmp_path, dtype):
        dense = sample_tensor((3, 4, 2), dtype=dtype)
        ct.write(tmp_path / "t.tns.gz", ct.asarray(dense, format="coo"))
        result = ct.read(tmp_path / "t.tns.gz", dtype=dtype)
        assert result.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(result.to_numpy(), dense)

    def test_large_integers_stay_exact(self, tmp_path):
        path = write_text(tmp_path, "t.tns", f"1 2 {2**62 + 1}\n")
        assert ct.read(path, dtype=np.int64)[0, 1] == 2**62 + 1

    def test_empty_file(self, tmp_path):
        path = write_text(tmp_path, "t.tns", "# nothing here\n\n")
        with pytest.raises(ct.ShapeError, match="shape="):
            ct.read(path)
        empty = ct.read(path, shape=(3, 4))
        assert empty.shape == (3, 4) and empty.nnz == 0

    def test_writing_needs_a_real_tensor_of_order_one_or_more(self, tmp_path):
        with pytest.raises(TypeError, match="complex"):
            ct.write(tmp_path / "t.tns", ct.asarray(np.ones(3, dtype=complex)))
        with pytest.raises(ct.ShapeError):
            ct.write(tmp_path / "t.tns", ct.asarray(np.float64(1.0)))

    @pytest.mark.parametrize(
        "text,fragment",
        [
            ("1 1 1.0\n2 2 2.0\n# c\n\n3 3\n", "expected 3 fields"),
            ("1 1 1.0\n2 2 2.0\n\n# c\n3 3 3 3.0\n", "found 4"),
            ("1 1 1.0\n2 2 2.0\n\n\n3 x 3.0\n", "mode 2 coordinate"),
            ("1 1 1.0\n2 2 2.0\n#\n#\n3 3 three\n", "'three'"),
            ("1 1 1.0\n2 2 2.0\n\n\n0 3 3.0\n", "mode 1 coordinate 0 is below 1"),
            ("#\n#\n\n\n7\n", "at least one coordinate"),
        ],
    )
    def test_parse_errors_name_the_line(self, tmp_path, text, fragment):
        path = write_text(tmp_path, "bad.tns", text)
        with pytest.raises(ct.ParseError, match="line 5") as caught:
            ct.read(path)
        assert fragment in str(caught.value)
        assert caught.value.line == 5


# -- coiter .npz ----------------------------------------------------------------------------

NPZ_FORMATS = {
    "dense": ((6, 4), "dense"),
    "csr": ((6, 4), "csr"),
    "csc": ((6, 4), "csc"),
    "dcsr": ((6, 4), "dcsr"),
    "coo3": ((4, 3, 5), "coo"),
    "csf3": ((4, 3, 5), "csf"),
    "hashed": ((20,), ct.Format([ct.hashed])),
    "hashed buckets": ((20,), ct.Format([ct.hashed(buckets=7)])),
    "dh": ((6, 4), "dh"),
    "dia": ((6, 4), "dia"),
    "ell": ((6, 4), "ell"),
    "bcsr": ((6, 9), ct.bcsr((2, 3))),
    "unordered": ((6, 4), ct.Format([ct.dense, ct.compressed(ordered=False)])),
    "mode order": ((4, 3, 5), "sds:2,0,1"),
    "coo vector": ((20,), "coo"),
}


class TestNpz:
    @pytest.mark.parametrize("case", sorted(NPZ_FORMATS))
    @pytest.mark.parametrize("dtype", ["float64", "complex64", "int8", "bool"])
    def test_round_trip_is_exact(self, tmp_path, case, dtype):
        shape, fmt = NPZ_FORMATS[case]
        tensor = ct.asarray(sample_tensor(shape, dtype=dtype), format=fmt)
        ct.save(tmp_path / "t.npz", tensor)
        loaded = ct.load(tmp_path / "t.npz")
        assert_same_storage(loaded, tensor)
        np.testing.assert_array_equal(loaded.to_numpy(), tensor.to_numpy())
        assert_same_storage(ct.read(tmp_path / "t.npz"), tensor)

    def test_write_and_uncompressed(self, tmp_path):
        tensor = ct.asarray(sample_tensor((5, 5)), format="csr")
        ct.write(tmp_path / "w.npz", tensor)
        cio.save(tmp_path / "u.npz", tensor, compressed=False)
        assert_same_storage(ct.load(tmp_path / "w.npz"), tensor)
        assert_same_storage(ct.load(tmp_path / "u.npz"), tensor)

    def test_duplicates_and_explicit_zeros_are_kept(self, tmp_path):
        tensor = ct.from_coords(
            [[0, 1], [0, 1], [2, 0]], [1.0, 2.0, 0.0], (3, 2), sum_duplicates=False
        )
        ct.save(tmp_path / "t.npz", tensor)
        assert_same_storage(ct.load(tmp_path / "t.npz"), tensor)

    def test_int64_indices_and_scalars(self, tmp_path):
        wide = ct.from_coords([[0, 2**31 + 5]], [1.5], (2, 2**31 + 10), format="csr")
        assert wide.index_dtype == np.int64
        ct.save(tmp_path / "w.npz", wide)
        assert_same_storage(ct.load(tmp_path / "w.npz"), wide)
        scalar = ct.asarray(np.float64(3.5))
        ct.save(tmp_path / "s.npz", scalar)
        assert_same_storage(ct.load(tmp_path / "s.npz"), scalar)

    def test_save_keeps_the_path_as_given(self, tmp_path):
        tensor = ct.asarray(np.eye(3), format="csr")
        ct.save(tmp_path / "tensor.bin", tensor)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["tensor.bin"]
        assert_same_storage(ct.load(tmp_path / "tensor.bin"), tensor)

    def test_read_converts(self, tmp_path):
        tensor = ct.asarray(sample_tensor((5, 4)), format="csr")
        ct.save(tmp_path / "t.npz", tensor)
        as_csc = ct.read(tmp_path / "t.npz", format="csc", dtype=np.float32)
        assert as_csc.format == ct.as_format("csc", 2) and as_csc.dtype == np.float32
        np.testing.assert_array_equal(as_csc.to_numpy(), tensor.to_numpy().astype(np.float32))
        with pytest.raises(ct.ShapeError):
            ct.read(tmp_path / "t.npz", shape=(5, 5))
        with pytest.raises(ValueError, match="int64"):
            ct.read(tmp_path / "t.npz", dtype=np.int64)

    def test_rejects_foreign_files(self, tmp_path):
        np.savez(tmp_path / "plain.npz", a=np.arange(3))
        sp.save_npz(tmp_path / "scipy.npz", sp.csr_array(np.eye(3)))
        np.save(tmp_path / "array.npy", np.arange(3))
        (tmp_path / "array.npy").rename(tmp_path / "array.npz")
        (tmp_path / "text.npz").write_text("not a zip file")
        (tmp_path / "empty.npz").write_bytes(b"")
        for name, fragment in [
            ("plain", "not a coiter"),
            ("scipy", "scipy.sparse.load_npz"),
            ("array", ".npy"),
            ("text", "not a coiter"),
            ("empty", "not a coiter"),
        ]:
            with pytest.raises(ct.ParseError, match=fragment):
                ct.load(tmp_path / f"{name}.npz")
        with pytest.raises(FileNotFoundError):
            ct.load(tmp_path / "absent.npz")

    def test_never_unpickles(self, tmp_path):
        tensor = ct.asarray(np.eye(3), format="csr")
        ct.save(tmp_path / "t.npz", tensor)
        with np.load(tmp_path / "t.npz") as archive:
            entries = dict(archive)
        entries["values"] = np.array([object()] * 3, dtype=object)
        np.savez(tmp_path / "evil.npz", **entries)
        with pytest.raises(ct.ParseError, match="'values' holds Python objects"):
            ct.load(tmp_path / "evil.npz")

    def test_rejects_damaged_files(self, tmp_path):
        tensor = ct.asarray(sample_tensor((5, 4)), format="csr")
        ct.save(tmp_path / "t.npz", tensor)
        with np.load(tmp_path / "t.npz") as archive:
            entries = dict(archive)
        missing = {k: v for k, v in entries.items() if k != "level1.array.crd"}
        np.savez(tmp_path / "missing.npz", **missing)
        with pytest.raises(ct.FormatError):
            ct.load(tmp_path / "missing.npz")
        np.savez(tmp_path / "nofmt.npz", **{k: v for k, v in entries.items() if k != "format.name"})
        with pytest.raises(ct.ParseError, match="format.name"):
            ct.load(tmp_path / "nofmt.npz")
        bad_crd = dict(entries, **{"level1.array.crd": entries["level1.array.crd"] + 100})
        np.savez(tmp_path / "bad.npz", **bad_crd)
        with pytest.raises(ct.FormatError, match="bad.npz"):
            ct.load(tmp_path / "bad.npz")
        newer = dict(entries, **{"coiter.npz_version": np.array(99)})
        np.savez(tmp_path / "newer.npz", **newer)
        with pytest.raises(ct.ParseError, match="version 99"):
            ct.load(tmp_path / "newer.npz")
        stray = dict(entries, **{"level7.array.crd": np.arange(2)})
        np.savez(tmp_path / "stray.npz", **stray)
        with pytest.raises(ct.ParseError, match="level7"):
            ct.load(tmp_path / "stray.npz")


@pytest.mark.slow
def test_millions_of_entries_load_in_seconds(tmp_path):
    rng = np.random.default_rng(0)
    n = 2_000_000
    a = sp.coo_array(
        (rng.random(n), (rng.integers(0, 10**5, n), rng.integers(0, 10**5, n))),
        shape=(10**5, 10**5),
    )
    scipy.io.mmwrite(tmp_path / "big.mtx", a)
    start = time.perf_counter()
    result = ct.read(tmp_path / "big.mtx")
    assert time.perf_counter() - start < 10
    assert result.nnz == a.tocsr().nnz


class TestDamagedFiles:
    """Damage found by tests/test_fuzz.py: each raised an untyped exception (EOFError,
    zlib.error, gzip.BadGzipFile, zipfile.BadZipFile, OSError, MemoryError, TypeError);
    now a ParseError naming the file."""

    def mtx_gz(self, tmp_path):
        path = tmp_path / "m.mtx.gz"
        ct.write(path, ct.asarray(sample_tensor((6, 5)), format="csr"))
        return path, path.read_bytes()

    @pytest.mark.parametrize("damage", ["truncated", "deflate", "crc", "not gzip"])
    def test_damaged_gzip(self, tmp_path, damage):
        path, data = self.mtx_gz(tmp_path)
        if damage == "truncated":
            data = data[: len(data) // 2]
        elif damage == "deflate":
            data = data[:12] + bytes(b ^ 0x55 for b in data[12:30]) + data[30:]
        elif damage == "crc":
            data = data[:-8] + bytes(4) + data[-4:]
        else:
            data = b"\x1f\x07" + data[2:]
        path.write_bytes(data)
        with pytest.raises(ct.ParseError, match="damaged gzip data") as info:
            ct.read(path)
        assert str(path) in str(info.value)

    def npz(self, tmp_path, **replace):
        tensor = ct.asarray(sample_tensor((5, 4)), format="csr")
        path = tmp_path / "t.npz"
        ct.save(path, tensor, compressed=False)
        if replace:
            with zipfile.ZipFile(path) as archive:
                members = {name: archive.read(name) for name in archive.namelist()}
            members.update(replace)
            with zipfile.ZipFile(path, "w") as archive:
                for name, content in members.items():
                    archive.writestr(name, content)
        return path

    def test_npz_entry_declaring_terabytes(self, tmp_path):
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<i8", "fortran_order": False, "shape": (2**40,)}
        )
        path = self.npz(tmp_path, **{"values.npy": header.getvalue() + bytes(64)})
        with pytest.raises(ct.ParseError, match="'values' declares shape"):
            ct.read(path)

    def test_npz_entry_offset_past_the_end(self, tmp_path):
        path = self.npz(tmp_path)
        data = bytearray(path.read_bytes())
        # The central directory's local header offset of the first entry (byte 42 of its
        # record) now points far beyond the file.
        record = data.rindex(b"PK\x01\x02", 0, data.rindex(b"PK\x05\x06"))
        first = data.index(b"PK\x01\x02")
        data[first + 42 : first + 46] = (2**31).to_bytes(4, "little")
        assert record >= first
        path.write_bytes(bytes(data))
        with pytest.raises(ct.ParseError, match="t.npz"):
            ct.read(path)

    @pytest.mark.parametrize(
        "entry,array,message",
        [
            ("shape.npy", np.ones((2, 2), dtype=np.int64), "shape entry"),
            ("values.npy", np.array(["a", "b"]), "unsupported dtype"),
            ("values.npy", np.array([1, "x"], dtype=object), "Python objects"),
        ],
    )
    def test_npz_entries_of_the_wrong_kind(self, tmp_path, entry, array, message):
        stream = io.BytesIO()
        np.lib.format.write_array(stream, array, allow_pickle=True)
        path = self.npz(tmp_path, **{entry: stream.getvalue()})
        with pytest.raises(ct.ParseError, match=message):
            ct.read(path)

    def test_npz_that_is_no_zip(self, tmp_path):
        path = tmp_path / "junk.npz"
        path.write_bytes(b"PK\x03\x04" + bytes(range(200)))
        with pytest.raises(ct.ParseError, match="junk.npz"):
            ct.read(path)
        with pytest.raises(FileNotFoundError):  # a missing file is no damaged file
            ct.read(tmp_path / "missing.npz")
