"""The sort of entries that packing does (src/storage/entry_sort.cpp), on Matrix Market and
FROSTT files whose entries are in random order: a counting sort by row into coarse buckets,
then each bucket sorted by row and column (short rows by rank, long ones by comparison) with
its duplicates summed, on ct.set_num_threads threads once there are 65,536 entries a thread.

Each file is large enough for several threads; the tensor read is checked against
scipy.io.mmread (or NumPy), and each thread count against one thread, bit for bit: the sort
is stable, so duplicates are added in file order whatever the thread count."""

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coiter as ct

# Enough entries for four threads of the sort.
ENTRIES = 300_000
THREAD_COUNTS = (1, 2, 4)


pytestmark = pytest.mark.usefixtures("restore_num_threads")


def write_mtx(path, shape, rows, cols, values):
    """A real general Matrix Market file of these 0-based entries, in this order."""
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{shape[0]} {shape[1]} {len(values)}\n")
        np.savetxt(f, np.column_stack([rows + 1, cols + 1, values]), fmt=["%d", "%d", "%.17g"])


def random_entries(shape, count, seed, rows=None):
    """Entries at random positions (duplicates where count nears the size), random reals;
    rows: drawn from these only."""
    rng = np.random.default_rng(seed)
    r = rng.choice(rows, count) if rows is not None else rng.integers(0, shape[0], count)
    return r, rng.integers(0, shape[1], count), rng.standard_normal(count)


def read(path, threads, format):
    ct.set_num_threads(threads)
    return ct.read(path, format=format)


def arrays(t):
    """Every array of a tensor: its levels' and its values."""
    return [a for level in t.levels for a in level.arrays.values()] + [t.values]


def read_at_every_thread_count(path, format):
    """The tensor read at one thread, after checking that every thread count gives the same
    arrays, bit for bit."""
    first = read(path, THREAD_COUNTS[0], format)
    for threads in THREAD_COUNTS[1:]:
        for mine, theirs in zip(arrays(read(path, threads, format)), arrays(first), strict=True):
            assert mine.dtype == theirs.dtype
            np.testing.assert_array_equal(mine, theirs)
    return first


def assert_matches_mmread(t, path):
    """t holds scipy.io.mmread's entries of the file summed and sorted by row and column."""
    expected = sp.csr_array(scipy.io.mmread(path))
    expected.sum_duplicates()  # sorts the columns of each row
    got = sp.csr_array(t.to_scipy())
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    # SciPy may add a row's duplicates in another order: equal up to rounding.
    np.testing.assert_allclose(got.data, expected.data, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("format", ["csr", "coo"])
@pytest.mark.parametrize(
    "shape",
    [
        (200_000, 50_000),  # rows of 1 or 2 entries, many empty: coarse buckets of many rows
        (20_000, 300_000),  # rows of about 15: rank-sorted
        (1000, 2000),  # rows of about 300: sorted by comparison
        (100, 100),  # one row per coarse bucket, most entries duplicates
    ],
)
def test_random_order_with_duplicates(tmp_path, shape, format):
    rows, cols, values = random_entries(shape, ENTRIES, seed=sum(shape))
    copies = np.arange(7, ENTRIES, 7)  # each a duplicate of an entry 4 before it in the file
    rows[copies], cols[copies] = rows[copies - 4], cols[copies - 4]
    path = tmp_path / "a.mtx"
    write_mtx(path, shape, rows, cols, values)
    t = read_at_every_thread_count(path, format)
    assert t.index_dtype == np.int32
    assert_matches_mmread(t, path)


def test_rows_around_the_rank_sort_length(tmp_path):
    # Rows of 31 to 34 entries, each with one column twice: either side of the longest row
    # sorted by rank (32), in random order.
    shape = (50_000, 1_000_000)
    rng = np.random.default_rng(5)
    lengths = rng.integers(31, 35, shape[0])
    rows = np.repeat(np.arange(shape[0]), lengths)
    cols = rng.integers(0, shape[1], len(rows))
    starts = np.cumsum(lengths) - lengths
    cols[starts + 1] = cols[starts]
    values = rng.standard_normal(len(rows))
    order = rng.permutation(len(rows))
    path = tmp_path / "a.mtx"
    write_mtx(path, shape, rows[order], cols[order], values[order])
    assert_matches_mmread(read_at_every_thread_count(path, "csr"), path)


@pytest.mark.parametrize("extent", [2**26, 2**26 + 1])
def test_rows_ranked_by_composite_keys_and_beyond(tmp_path, extent):
    # Short rows are ranked by (column << 5 | place in the row) while every column is below
    # 2**26 and by a comparison of columns then places beyond: both give the same order. Rows
    # of 1 to 32 entries in random order, their columns near the top of the extent (the last
    # column at the last place makes the largest int32 key), each row with a column twice.
    shape = (20_000, extent)
    rng = np.random.default_rng(extent)
    lengths = rng.integers(1, 33, shape[0])
    rows = np.repeat(np.arange(shape[0]), lengths)
    cols = extent - 1 - rng.integers(0, 40, len(rows))
    starts = np.cumsum(lengths) - lengths
    cols[starts] = extent - 1
    long_rows = starts[lengths > 1]
    cols[long_rows + 1] = cols[long_rows]
    values = rng.integers(-50, 50, len(rows)).astype(np.float64)  # sums exact in any order
    order = rng.permutation(len(rows))
    path = tmp_path / "a.mtx"
    write_mtx(path, shape, rows[order], cols[order], values[order])
    for format in ("csr", "coo"):
        t = read_at_every_thread_count(path, format)
        assert t.index_dtype == np.int32
        expected = sp.csr_array((values, (rows, cols)), shape=shape)  # sums the duplicates
        expected.sort_indices()
        got = sp.csr_array(t.to_scipy())
        np.testing.assert_array_equal(got.indptr, expected.indptr)
        np.testing.assert_array_equal(got.indices, expected.indices)
        np.testing.assert_array_equal(got.data, expected.data)


@st.composite
def matrix_files(draw):
    """(shape, rows, cols, values, symmetry) of a Matrix Market file: entries in random order
    with duplicates, rows left empty, integer values (so sums are exact in any order)."""
    symmetric = draw(st.booleans())
    n_rows = draw(st.integers(1, 3000))
    n_cols = n_rows if symmetric else draw(st.sampled_from([1, 7, 3000, 2**20, 2**26 + 5]))
    count = draw(st.integers(0, 140_000))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    used_rows = rng.choice(n_rows, max(1, n_rows // draw(st.sampled_from([1, 3, 50]))))
    rows, cols = rng.choice(used_rows, count), rng.integers(0, n_cols, count)
    copies = np.flatnonzero(rng.random(count) < draw(st.sampled_from([0.0, 0.05, 0.5])))
    source = rng.integers(0, max(count, 1), len(copies))
    rows[copies], cols[copies] = rows[source], cols[source]
    if symmetric:  # the lower triangle, which the file lists
        rows, cols = np.maximum(rows, cols), np.minimum(rows, cols)
    values = rng.integers(-1000, 1000, count).astype(np.float64)
    return (n_rows, n_cols), rows, cols, values, "symmetric" if symmetric else "general"


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=matrix_files(), threads=st.sampled_from([1, 2]), format=st.sampled_from(["csr", "coo"]))
def test_read_matches_mmread(tmp_path_factory, case, threads, format):
    # ct.read of any such file holds scipy.io.mmread's matrix, its duplicates summed and its
    # entries sorted by row and column, at one thread and at two.
    shape, rows, cols, values, symmetry = case
    path = tmp_path_factory.mktemp("read") / "a.mtx"
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real {symmetry}\n")
        f.write(f"{shape[0]} {shape[1]} {len(values)}\n")
        np.savetxt(f, np.column_stack([rows + 1, cols + 1, values]), fmt="%d")
    t = read(path, threads, format)
    assert t.shape == shape
    expected = sp.csr_array(scipy.io.mmread(path))
    expected.sum_duplicates()
    got = sp.csr_array(t.to_scipy())
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_array_equal(got.data, expected.data)
    coords, _ = t.coords()  # stored sorted by row, then column, each key once
    keys = coords[:, 0].astype(np.int64) * shape[1] + coords[:, 1]
    assert np.all(np.diff(keys) > 0)


def test_duplicates_are_summed_in_file_order(tmp_path):
    # 1e16 + 1 - 1e16 is 0 in floating point, 1e16 - 1e16 + 1 is 1: every thread count must
    # add a key's values in file order, as a loop over the file does.
    shape = (5000, 5000)
    rng = np.random.default_rng(3)
    keys = rng.choice(shape[0] * shape[1], ENTRIES // 3, replace=False)
    rows, cols = np.divmod(keys.repeat(3), shape[1])
    values = np.tile([1e16, 1.0, -1e16], ENTRIES // 3)
    order = rng.permutation(len(values))
    path = tmp_path / "a.mtx"
    write_mtx(path, shape, rows[order], cols[order], values[order])
    t = read_at_every_thread_count(path, "coo")
    expected = {}
    for r, c, v in zip(rows[order].tolist(), cols[order].tolist(), values[order].tolist()):
        expected[r, c] = expected.get((r, c), 0.0) + v
    coords, vals = t.coords()
    ordered = sorted(expected)
    np.testing.assert_array_equal(coords, np.array(ordered))
    np.testing.assert_array_equal(vals, [expected[k] for k in ordered])


def test_one_row_and_rows_far_apart(tmp_path):
    shape = (4096, 300_000)
    for rows in ([4095], [0, 4095]):
        r, c, v = random_entries(shape, ENTRIES, seed=len(rows), rows=rows)
        path = tmp_path / f"{len(rows)}.mtx"
        write_mtx(path, shape, r, c, v)
        assert_matches_mmread(read_at_every_thread_count(path, "csr"), path)


def test_int64_coordinates(tmp_path):
    # Columns beyond int32 make every coordinate int64; the rows are few enough to count.
    shape = (3000, 2**33)
    r, c, v = random_entries(shape, ENTRIES, seed=7)
    r[::5], c[::5] = r[1::5], c[1::5]  # duplicates
    path = tmp_path / "a.mtx"
    write_mtx(path, shape, r, c, v)
    t = read_at_every_thread_count(path, "coo")
    assert t.index_dtype == np.int64
    # SciPy's CSR would be dense in columns here: NumPy sorts and sums instead.
    key = np.lexsort((c, r))
    rs, cs, vs = r[key], c[key], v[key]
    first = np.ones(len(rs), bool)
    first[1:] = (rs[1:] != rs[:-1]) | (cs[1:] != cs[:-1])
    coords, vals = t.coords()
    np.testing.assert_array_equal(coords, np.column_stack([rs[first], cs[first]]))
    np.testing.assert_allclose(vals, np.add.reduceat(vs, np.flatnonzero(first)), rtol=1e-12)


def test_duplicates_kept_where_asked(tmp_path):
    # sum_duplicates=False keeps equal keys as separate entries, in input order.
    shape = (20_000, 300_000)
    rows, cols, values = random_entries(shape, ENTRIES, seed=9)
    rows[::4], cols[::4] = rows[1::4], cols[1::4]
    ct.set_num_threads(2)
    t = ct.from_coords(np.column_stack([rows, cols]), values, shape, sum_duplicates=False)
    key = np.lexsort((cols, rows))  # stable: equal keys stay in input order
    coords, vals = t.coords()
    np.testing.assert_array_equal(coords, np.column_stack([rows[key], cols[key]]))
    np.testing.assert_array_equal(vals, values[key])


def test_three_mode_frostt(tmp_path):
    shape = (300, 40, 50)
    rng = np.random.default_rng(11)
    coords = [rng.integers(0, n, ENTRIES) for n in shape]
    for mode, n in enumerate(shape):
        coords[mode][0] = n - 1  # the shape inferred from the file is the full shape
    values = rng.integers(-50, 50, ENTRIES).astype(np.float64)  # sums exact in any order
    np.savetxt(tmp_path / "t.tns", np.column_stack([*(x + 1 for x in coords), values]), fmt="%d")
    expected = np.zeros(shape)
    np.add.at(expected, tuple(coords), values)
    for format in ("csf", "coo"):
        t = read_at_every_thread_count(tmp_path / "t.tns", format)
        assert t.shape == shape
        np.testing.assert_array_equal(t.to_numpy(), expected)


def test_four_modes_counted_level_by_level():
    # Slices of thousands of entries whose later modes have small extents: each is sorted by
    # counting on mode 1, then mode 2, then by comparison on mode 3.
    shape = (20, 10, 10, 12)
    rng = np.random.default_rng(13)
    coords = np.column_stack([rng.integers(0, n, ENTRIES) for n in shape])
    values = rng.integers(-50, 50, ENTRIES).astype(np.float64)  # sums exact in any order
    expected, present = np.zeros(shape), np.zeros(shape, bool)
    np.add.at(expected, tuple(coords.T), values)
    present[tuple(coords.T)] = True  # (a sum of 0 is still an entry)
    first = None
    for threads in THREAD_COUNTS:
        ct.set_num_threads(threads)
        t = ct.from_coords(coords, values, shape, format="coo")
        got_coords, got_values = t.coords()
        np.testing.assert_array_equal(got_coords, np.argwhere(present))
        np.testing.assert_array_equal(got_values, expected[present])
        if first is not None:
            for mine, theirs in zip(arrays(t), arrays(first), strict=True):
                np.testing.assert_array_equal(mine, theirs)
        first = t


@pytest.mark.parametrize(
    "layout",
    ["one huge row with duplicates", "empty rows", "rows in one bucket", "every row once"],
)
def test_parsed_into_buckets_as_from_text_order(tmp_path, monkeypatch, layout):
    # ct.read of a general file lays the entries out in the sort's coarse buckets as it parses
    # (src/storage/text_entries.cpp); a comment line in the body keeps them in file order
    # instead. Both give the same arrays, bit for bit, in every format and at every thread
    # count: duplicates are summed in file order either way.
    from coiter.io import text_table

    shape = (100_000, 3000)
    rng = np.random.default_rng(len(layout))
    rows = {
        "one huge row with duplicates": np.where(rng.random(ENTRIES) < 0.6, 777, 0),
        "empty rows": rng.integers(0, shape[0] // 64, ENTRIES) * 64,
        "rows in one bucket": rng.integers(40_000, 40_100, ENTRIES),
        "every row once": rng.permutation(shape[0]).repeat(3),
    }[layout]
    count = len(rows)
    cols = rng.integers(0, 40, count)  # many duplicates
    values = rng.standard_normal(count)
    bucketed, in_order = tmp_path / "bucketed.mtx", tmp_path / "in_order.mtx"
    write_mtx(bucketed, shape, rows, cols, values)
    lines = bucketed.read_text().split("\n")
    lines.insert(2 + count // 2, "% a comment line in the body")
    in_order.write_text("\n".join(lines))
    laid_out = {}
    parsed = text_table._parsed_table

    def spy(blocks, body, *args, **kwargs):
        table = parsed(blocks, body, *args, **kwargs)
        laid_out[body.path] = table.buckets is not None
        return table

    monkeypatch.setattr(text_table, "_parsed_table", spy)
    for format in ("csr", "coo", "csc"):
        expected = read_at_every_thread_count(in_order, format)
        got = read_at_every_thread_count(bucketed, format)
        for mine, theirs in zip(arrays(got), arrays(expected), strict=True):
            assert mine.dtype == theirs.dtype
            np.testing.assert_array_equal(mine, theirs)
    assert laid_out == {str(bucketed): True, str(in_order): False}
    assert_matches_mmread(got, bucketed)


@pytest.mark.parametrize("n_rows", [200, 100_000])
def test_buckets_after_duplicates_move_down_at_many_threads(tmp_path, n_rows):
    # Duplicates only in the first rows: every later coarse bucket ends up before where it
    # lay. At 8 threads most buckets are sorted before the ones ahead of them are placed, and
    # are moved down once they are (one row per bucket at 200 rows, many at 100,000).
    count = 600_000  # 8 threads of the sort
    rng = np.random.default_rng(n_rows)
    rows = rng.integers(0, n_rows, count)
    cols = rng.integers(0, 1_000_000, count)
    first_rows = np.flatnonzero(rows < 2)
    cols[first_rows] = cols[first_rows] % 3  # rows 0 and 1: three columns each
    values = rng.integers(-50, 50, count).astype(np.float64)  # sums exact in any order
    path = tmp_path / "a.mtx"
    write_mtx(path, (n_rows, 1_000_000), rows, cols, values)
    one = read(path, 1, "csr")
    for threads in (3, 8):
        for mine, theirs in zip(arrays(read(path, threads, "csr")), arrays(one), strict=True):
            np.testing.assert_array_equal(mine, theirs)
    expected = sp.csr_array((values, (rows, cols)), shape=(n_rows, 1_000_000))
    expected.sort_indices()
    got = sp.csr_array(one.to_scipy())
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_array_equal(got.data, expected.data)
