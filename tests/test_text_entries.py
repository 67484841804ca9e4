"""The core's parallel parser of text entry lines (src/storage/text_entries.cpp), on its own
and through ct.read: line ends, comments, chunk and block boundaries, the number syntax, and
the line a malformed entry is reported at."""

import gzip
import struct
from decimal import Decimal, localcontext

import numpy as np
import pytest
import scipy.io
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coiter as ct
from coiter import _core
from coiter.io import text_table

MTX_REAL = "%%MatrixMarket matrix coordinate real general\n"
# A comment line long enough that every line before it is read by the parser's fast paths
# (plain_numbers.hpp), which need 64 bytes after the start of each field; without it the
# last lines of a short text are read the general way.
PAD = "% " + "x" * 80 + "\n"


@pytest.fixture
def blocks(monkeypatch):
    """Read in blocks of the given size: a mapped file is cut in blocks only for a progress
    bar, so one is forced (drawn on stderr)."""

    def use(block_bytes):
        monkeypatch.setattr(text_table, "_BLOCK_BYTES", block_bytes)
        monkeypatch.setattr(ct.config, "progress", True)

    return use


@pytest.fixture
def threads():
    """Run with 4 threads (chunks), whatever the machine has; restore the setting after."""
    before = ct.get_num_threads()
    ct.set_num_threads(4)
    yield 4
    ct.set_num_threads(before)


def parse(text, fields=("int64", "int64", "float64"), comment="%", skip=0):
    data = text.encode("latin-1") if isinstance(text, str) else text
    return _core.parse_text_entries(data, list(fields), comment, skip)[:4]


def random_lines(count, seed=0):
    """Text of ``count`` "i j value" lines, and the columns they hold."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 10**6, count)
    cols = rng.integers(1, 10**6, count)
    values = rng.standard_normal(count) * 10.0 ** rng.integers(-30, 30, count)
    text = "".join(
        f"{i} {j} {v!r}\n" for i, j, v in zip(rows.tolist(), cols.tolist(), values.tolist())
    )
    return text, rows, cols, values


@st.composite
def decimal_texts(draw):
    """A real as a file may write it: a sign or none, 1 to 25 digits (leading zeros
    included) with a point anywhere among them or none, and an exponent or none."""
    digits = draw(st.text("0123456789", min_size=1, max_size=25))
    point = draw(st.none() | st.integers(0, len(digits)))
    mantissa = digits if point is None else digits[:point] + "." + digits[point:]
    exponent = ""
    if draw(st.booleans()):
        value = draw(st.integers(-350, 350))
        sign = "-" if value < 0 else draw(st.sampled_from(["", "+"]))
        zeros = "0" * draw(st.integers(0, 3))
        exponent = draw(st.sampled_from("eE")) + sign + zeros + str(abs(value))
    return draw(st.sampled_from(["", "-", "+"])) + mantissa + exponent


def bits(values):
    return np.asarray(values, dtype=np.float64).view(np.uint64).tolist()


def python_bits(tokens):
    return [struct.unpack("<Q", struct.pack("<d", float(t)))[0] for t in tokens]


class TestParser:
    def test_line_ends_whitespace_and_comments(self):
        text = (
            "% header comment\r\n"
            "1 2 3.5  \t\r\n"  # CRLF, trailing whitespace
            "\r\n"
            "   % a comment between entries\n"
            "4\t5 -6e2 % a comment after the fields\r"  # a lone CR ends a line too
            "7 8 +.25\x0c\n"
            "9 10 inf"  # the last line has no line end
        )
        columns, line_ends, bad_line, _ = parse(text)
        assert bad_line == 0
        assert line_ends == 6
        np.testing.assert_array_equal(columns[0], [1, 4, 7, 9])
        np.testing.assert_array_equal(columns[1], [2, 5, 8, 10])
        np.testing.assert_array_equal(columns[2], [3.5, -600.0, 0.25, np.inf])
        assert [c.dtype for c in columns] == [np.int64, np.int64, np.float64]

    def test_skipped_lines_are_not_read(self):
        columns, line_ends, bad_line, _ = parse("not data\r\nnor this\r1 1 1\n", skip=2)
        assert (bad_line, line_ends) == (0, 3)
        np.testing.assert_array_equal(columns[2], [1.0])

    @pytest.mark.parametrize(
        "token", ["1.5", "+1.5", "-1.5", "1.", ".5", "1e5", "1E-5", "-0", "1e400", "-1e400"]
    )
    def test_reals_as_python_reads_them(self, token):
        columns, _, bad_line, _ = parse(f"1 1 {token}\n")
        assert bad_line == 0
        assert columns[2][0] == float(token)

    def test_underflow_and_special_values(self):
        columns, _, bad_line, _ = parse("1 1 1e-400\n1 1 NaN\n1 1 -Infinity\n1 1 5e-324\n")
        assert bad_line == 0
        value = columns[2]
        assert value[0] == 0.0 and np.isnan(value[1]) and value[2] == -np.inf
        assert value[3] == float("5e-324")

    def test_reals_bit_for_bit_as_python_reads_them(self):
        # fast_float parses reals: every double must be the one Python's float() gives,
        # bit for bit (signs of zeros and NaNs included), on the hard cases of decimal to
        # binary conversion and on random doubles written in several ways.
        halfway = "1.00000000000000011102230246251565404236316680908203125"  # 1 + ulp/2
        tricky = [
            "0", "-0", "+0", "0.0", "-0.0", "-0e-999", "0e99999", "00000.000e0", ".0", "0.",
            "1e308", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
            "2.2250738585072011e-308", "2.2250738585072014e-308", "4.9406564584124654e-324",
            "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400", "-1e400",
            "1e0000000000000000000000000001", "1e-99999999999999999999", "1e99999999999999999999",
            "0.1", "0.30000000000000004", "9007199254740993", "9007199254740993.000000000001",
            "123456789012345678901234567890", "000000000000000000000001.5", "1E+5", "1e-05",
            halfway, halfway + "0" * 40, halfway[:-1] + "6", halfway[:-1] + "4" + "9" * 30,
            "0." + "0" * 300 + "1" * 500, "9" * 400, "9" * 400 + "e-400", "4" * 17 + "5e-330",
            "inf", "INF", "+inf", "-Infinity", "iNfInItY", "nan", "NaN", "-nan", "+NAN",
        ]  # fmt: skip
        rng = np.random.default_rng(11)
        # Random bit patterns: every exponent, subnormals included (NaN payloads excluded).
        bits = rng.integers(0, 2**64, 3000, dtype=np.uint64)
        doubles = [d for d in bits.view(np.float64).tolist() if d == d]
        doubles += rng.standard_normal(1000).tolist()
        written = [f"{d!r}" for d in doubles] + [f"{d:.25e}" for d in doubles[:1000]]
        written += [f"{d:.3f}" for d in doubles[3000:]] + [f"{d:.17g}" for d in doubles[:500]]
        tokens = tricky + written
        columns, _, bad_line, bad_text = parse("".join(f"1 1 {t}\n" for t in tokens) + PAD)
        assert bad_line == 0, bad_text
        parsed = columns[2].view(np.uint64).tolist()
        for token, got in zip(tokens, parsed, strict=True):
            (want,) = struct.unpack("<Q", struct.pack("<d", float(token)))
            assert got == want, f"{token!r}: {got:#x}, Python {want:#x}"

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        tokens=st.lists(decimal_texts(), min_size=1, max_size=12),
        ending=st.sampled_from(["\n", "\r\n", " \n", "\t\r\n", "  \r\n", "\r"]),
    )
    def test_random_decimals_bit_for_bit(self, tokens, ending):
        # Read by the fast path (with PAD after them) and by the general one (the text's last
        # bytes): both give Python's float(), bit for bit.
        for pad in [PAD, ""]:
            text = "".join(f"{k} 2 {t}{ending}" for k, t in enumerate(tokens, 1)) + pad
            columns, _, bad_line, bad_text = parse(text)
            assert bad_line == 0, bad_text
            assert bits(columns[2]) == python_bits(tokens)
            np.testing.assert_array_equal(columns[0], np.arange(1, len(tokens) + 1))

    def test_near_halfway_reals_bit_for_bit(self):
        # Halfway between two doubles, to 17 to 19 digits: where the fast path's Eisel-Lemire
        # step cannot decide and hands the token to fast_float, or decides one way or the other.
        rng = np.random.default_rng(12)
        doubles = rng.integers(0, 2**63 - 2**52, 2000, dtype=np.uint64).view(np.float64).tolist()
        tokens = []
        with localcontext() as context:
            context.prec = 60  # far more than the 19 digits kept; float() is the reference
            for d in doubles:
                halfway = (Decimal(d) + Decimal(np.nextafter(d, np.inf).item())) / 2
                tokens += [f"{halfway:.{digits - 1}e}" for digits in (17, 18, 19)]
        columns, _, bad_line, bad_text = parse("".join(f"1 1 {t}\n" for t in tokens) + PAD)
        assert bad_line == 0, bad_text
        assert bits(columns[2]) == python_bits(tokens)

    @pytest.mark.parametrize("field", ["int64", "int32", "uint64"])
    def test_integers_of_every_length_and_ending(self, field):
        # Integers are read 8 digits at a time where 8 bytes remain: every length, with
        # leading zeros and signs, each followed by every kind of ending, and at the end
        # of the text (fewer than 8 bytes left).
        bases = [1] if field != "uint64" else None
        tokens = ["0", "7", "+7", "-0", "00000000", "000000001", "12345678", "99999999"]
        tokens += [str(10**k + k) for k in range(19)] + ["0" * 30 + "42", "9223372036854775807"]
        if field == "int32":
            tokens = [t for t in tokens if int(t) < 2**31]
        # What follows a token: a separator, a line end, a comment or a form feed, then
        # the line's end; "" is the last token of the text without a line end.
        for ending in [" \n", "\t\n", "\n", "\r\n", "\r", "%c\n", "\x0c\n", ""]:
            text = "\n".join(tokens) if ending == "" else "".join(t + ending for t in tokens)
            columns, _, bad_line, bad_text, extremes, _ = _core.parse_text_entries(
                text.encode(), [field], "%", 0, bases
            )
            assert bad_line == 0, (ending, bad_text)
            values = [int(t) for t in tokens]
            np.testing.assert_array_equal(columns[0], [v - (1 if bases else 0) for v in values])
            if bases:
                assert extremes[0] == (min(values), max(values))

    @pytest.mark.parametrize("token", ["12a", "1.0", "123456789x", "+", "1-", "12345678e", "1234a"])
    def test_malformed_integers(self, token):
        # At the text's end, 8 bytes before it, or with enough text after for the fast paths.
        for tail in ["", "\n", "\n1 1 1\n", "\n" + PAD]:
            _, _, bad_line, bad_text = parse(f"1 1 1\n{token} 1 1{tail}")
            assert bad_line == 2, (token, tail)
            assert bad_text == f"{token} 1 1".encode()

    @pytest.mark.parametrize(
        "token",
        ["+-1", "--1", "nan(1)", "1e", "0x10", "1_0", "e5", "infinite", "1.5.", ".", "1e+", "-.",
         "1.5e3x", "1.5E", "+", "1..5", ".e5", "1e5.5", "1" * 30 + "z"],
    )  # fmt: skip
    @pytest.mark.parametrize("pad", ["", PAD])
    def test_malformed_reals(self, token, pad):
        _, _, bad_line, bad_text = parse(f"1 1 1\n2 2 {token}\n{pad}")
        assert bad_line == 2
        assert bad_text == f"2 2 {token}".encode()

    @pytest.mark.parametrize(
        "line",
        ["1 1", "1 1 1 1", "1 1 1.5 x", "1 1.5 1", "1 x 1", "1  1", "-1 1 1.5e400x", "1 1 1 %"],
    )
    def test_malformed_lines_with_the_fast_paths(self, line):
        # Each line is read by the fast paths first; what they refuse the general loop reads,
        # and it names the same line as before.
        _, _, bad_line, bad_text = parse(f"1 1 1\n{line}\n{PAD}")
        if line.endswith("%"):  # a comment after the fields: not malformed
            assert bad_line == 0
        else:
            assert (bad_line, bad_text) == (2, line.encode())

    @pytest.mark.parametrize(
        "token,field,valid",
        [
            ("9223372036854775807", "int64", True),
            ("-9223372036854775808", "int64", True),
            ("9223372036854775808", "int64", False),
            ("-9223372036854775809", "int64", False),
            ("+7", "int64", True),
            ("007", "int64", True),
            ("+-7", "int64", False),
            ("7.0", "int64", False),
            ("18446744073709551615", "uint64", True),
            ("18446744073709551616", "uint64", False),
            ("-0", "uint64", True),
            ("-1", "uint64", False),
        ],
    )
    @pytest.mark.parametrize("pad", ["", PAD])
    def test_integer_ranges(self, token, field, valid, pad):
        columns, _, bad_line, _ = parse(f"{token}\n{pad}", fields=[field])
        assert bad_line == (0 if valid else 1)
        if valid:
            assert int(columns[0][0]) == int(token)

    def test_field_count(self):
        assert parse("1 1 1\n1 1\n")[2] == 2
        assert parse("1 1 1\n1 1 1 1\n")[2] == 2
        assert parse("1 1\n", fields=["int64", "int64"])[2] == 0

    @pytest.mark.parametrize("count", [1, 1000, 150_000])
    def test_chunks_split_mid_line(self, threads, count):
        # 150k lines are several 64 KiB chunks: their boundaries fall inside lines.
        text, rows, cols, values = random_lines(count)
        columns, line_ends, bad_line, _ = parse(text)
        assert (bad_line, line_ends) == (0, count)
        np.testing.assert_array_equal(columns[0], rows)
        np.testing.assert_array_equal(columns[1], cols)
        np.testing.assert_array_equal(columns[2], values)

    @pytest.mark.parametrize("where", [0.1, 0.55, 0.97])
    def test_malformed_line_in_a_later_chunk(self, threads, where):
        text, *_ = random_lines(150_000, seed=1)
        lines = text.splitlines(keepends=True)
        bad = int(len(lines) * where)
        lines[bad] = "12 13 x1\n"
        lines[-1000] = "1 1\n"  # a later malformed line is not the one reported
        _, _, bad_line, bad_text = parse("".join(lines))
        assert bad_line == bad + 1
        assert bad_text == b"12 13 x1"

    def test_int32_fields_bases_and_extremes(self):
        text = "% c\n3 7 0.5\n1 2 -1\n\n5 -4 2\n"
        columns, line_ends, bad_line, _, extremes, _ = _core.parse_text_entries(
            text.encode(), ["int32", "int64", "float64"], "%", 0, [1, 1, 0]
        )
        assert (bad_line, line_ends) == (0, 5)
        assert [c.dtype for c in columns] == [np.int32, np.int64, np.float64]
        np.testing.assert_array_equal(columns[0], [2, 0, 4])  # 0-based: the base subtracted
        np.testing.assert_array_equal(columns[1], [6, 1, -5])
        assert extremes == [(1, 5), (-4, 7), None]  # as written, before the base
        empty = _core.parse_text_entries(b"% none\n", ["int32", "float64"], "%", 0, [1, 0])
        assert len(empty[0][0]) == 0 and empty[4] == [(0, -1), None]
        with pytest.raises(ValueError, match="only signed integer fields"):
            _core.parse_text_entries(b"1\n", ["float64"], "%", 0, [1])

    @pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
    def test_lines_without_entries_across_chunks(self, threads, ending):
        # Comments, blank lines and "\r\n" (counted twice) leave slots empty in many
        # chunks: the entries after them move down, in order.
        text, rows, cols, values = random_lines(30_000, seed=6)
        lines = text.splitlines()
        for k in range(0, len(lines), 97):
            lines[k] += ending + "% a comment" + ending
        body = ending.join(lines) + ending
        columns, line_ends, bad_line, _, extremes, _ = _core.parse_text_entries(
            body.encode(), ["int32", "int32", "float64"], "%", 0, [1, 1, 0]
        )
        assert bad_line == 0 and line_ends == len(rows) + 2 * len(range(0, len(lines), 97))
        np.testing.assert_array_equal(columns[0], rows - 1)
        np.testing.assert_array_equal(columns[1], cols - 1)
        np.testing.assert_array_equal(columns[2], values)
        assert extremes[0] == (rows.min(), rows.max())
        # A tensor may keep these arrays: they hold little more than the entries, even
        # when the bound was twice the lines ("\r\n").
        for column in columns:
            memory = column if column.base is None else column.base
            assert memory.size <= len(rows) * 9 // 8

    def test_rejects_bad_arguments(self):
        with pytest.raises(ValueError, match="int64, uint64 or float64"):
            parse("1\n", fields=["complex128"])
        with pytest.raises(ValueError, match="one character"):
            parse("1\n", comment="%%")
        with pytest.raises(ValueError, match="at least one field"):
            parse("1\n", fields=[])
        for fields, extent in ((["float64", "int32"], 5), (["int32", "int32"], 0)):
            with pytest.raises(ValueError, match="bucketed by a signed integer"):
                _core.parse_text_entries(b"1 1\n", fields, "%", 0, None, extent)


def coarse_shift(extent):
    """The shift of packing's coarse buckets of values below ``extent`` (at most 256)."""
    shift = 0
    while (extent - 1) >> shift >= 256:
        shift += 1
    return shift


@st.composite
def bucketed_texts(draw):
    """(text, extent, placeable) of entry lines "row col value" with rows in [1, extent]: line
    ends "\n", "\r\n" or "\r", blank lines, leading zeros and 9 to 19 digit rows, and (when
    not placeable) one line the parser's first pass cannot place in a bucket."""
    extent = draw(st.sampled_from([1, 7, 256, 257, 5000, 10**6, 10**9, 2**40]))
    count = draw(st.integers(0, 3000))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rows = rng.integers(1, extent + 1, count)
    if count and draw(st.booleans()):  # many lines of one row
        rows[rng.random(count) < 0.7] = rows[0]
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    zeros = draw(st.sampled_from([0, 3, 12]))
    lines = [
        f"{'0' * (zeros if k % 5 == 0 else 0)}{r} {k % 97 + 1} {v!r}"
        for k, (r, v) in enumerate(zip(rows.tolist(), rng.standard_normal(count).tolist()))
    ]
    for k in sorted(rng.integers(0, count + 1, draw(st.integers(0, 3))).tolist(), reverse=True):
        lines.insert(k, "")  # a blank line holds no entry
    unplaceable = draw(
        st.sampled_from(
            [
                None,
                "% a comment",
                " 1 1 1.0",
                "+1 1 1.0",
                "0 1 1.0",
                f"{extent + 1} 1 1.0",
                "9" * 20,
            ]
        )
    )
    if unplaceable is not None:
        if unplaceable == "9" * 20:
            unplaceable += " 1 1.0"  # beyond 19 digits (out of range as well)
        lines.insert(int(rng.integers(0, len(lines) + 1)), unplaceable)
    last_ending = draw(st.booleans())
    text = ending.join(lines) + (ending if last_ending and lines else "")
    return text, extent, unplaceable is None


class TestBuckets:
    """parse_text_entries(bucket_extent=...): the entries laid out in packing's coarse buckets
    of the first field, in text order within each, or all in text order when a line cannot be
    placed by the first pass."""

    FIELDS = ["int64", "int32", "float64"]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=bucketed_texts(), threads=st.sampled_from([1, 4]))
    def test_layout_is_the_stable_scatter_of_text_order(self, case, threads):
        text, extent, placeable = case
        before = ct.get_num_threads()
        ct.set_num_threads(threads)
        try:
            data = text.encode()
            in_order = _core.parse_text_entries(data, self.FIELDS, "%", 0, [1, 1, 0])
            bucketed = _core.parse_text_entries(data, self.FIELDS, "%", 0, [1, 1, 0], extent)
        finally:
            ct.set_num_threads(before)
        columns, *rest, buckets = bucketed
        assert rest == list(in_order[1:5])  # line ends, malformed line, extremes
        if not placeable:
            # Some lines are malformed or out of range: the caller reports them from text order.
            assert buckets is None
            for mine, theirs in zip(columns, in_order[0], strict=True):
                np.testing.assert_array_equal(mine, theirs)
            return
        if in_order[2]:  # a malformed line (none here: every line is placeable and whole)
            raise AssertionError(in_order[3])
        if buckets is None:  # the first lines of every chunk were in order: left so
            for mine, theirs in zip(columns, in_order[0], strict=True):
                np.testing.assert_array_equal(mine, theirs)
            return
        rows = in_order[0][0]
        key = rows >> coarse_shift(extent)
        order = np.argsort(key, kind="stable")
        for mine, theirs in zip(columns, in_order[0], strict=True):
            assert mine.dtype == theirs.dtype
            np.testing.assert_array_equal(mine, theirs[order])
        counts = np.bincount(key, minlength=len(buckets) - 1)
        assert len(counts) == len(buckets) - 1
        np.testing.assert_array_equal(buckets, np.concatenate([[0], np.cumsum(counts)]))

    def test_text_in_order_is_left_so(self, threads):
        # A text sorted by its first field (a matrix written row by row) would be laid out as
        # it is: the first pass, which costs more than counting line ends, is skipped.
        text, rows, cols, values = random_lines(60_000, seed=22)
        order = np.argsort(rows, kind="stable")
        lines = np.array(text.splitlines())
        for body, in_order in (("\n".join(lines[order]) + "\n", True), (text, False)):
            columns, _, bad_line, _, _, buckets = _core.parse_text_entries(
                body.encode(), ["int32", "int32", "float64"], "%", 0, [1, 1, 0], int(rows.max())
            )
            assert bad_line == 0 and (buckets is None) == in_order
            key = (rows - 1) >> coarse_shift(int(rows.max()))
            expected = order if in_order else np.argsort(key, kind="stable")
            np.testing.assert_array_equal(columns[0], rows[expected] - 1)
            np.testing.assert_array_equal(columns[2], values[expected])

    def test_chunks_fill_their_share_of_every_bucket(self, threads):
        # Lines of every row in many chunks: each chunk's entries of a bucket follow those of
        # the chunks before it.
        text, rows, cols, values = random_lines(60_000, seed=21)
        columns, _, bad_line, _, _, buckets = _core.parse_text_entries(
            text.encode(), ["int32", "int32", "float64"], "%", 0, [1, 1, 0], int(rows.max())
        )
        assert bad_line == 0 and buckets is not None
        order = np.argsort((rows - 1) >> coarse_shift(int(rows.max())), kind="stable")
        np.testing.assert_array_equal(columns[0], rows[order] - 1)
        np.testing.assert_array_equal(columns[1], cols[order] - 1)
        np.testing.assert_array_equal(columns[2], values[order])


def mtx_text(text_of_entries, count, field="real"):
    return (
        f"%%MatrixMarket matrix coordinate {field} general\n% c\n10 10 {count}\n" + text_of_entries
    )


class TestRead:
    @pytest.mark.parametrize("field", ["real", "integer", "complex", "pattern"])
    def test_fields_match_scipy(self, tmp_path, field):
        rng = np.random.default_rng(2)
        lines = []
        for _ in range(40):
            i, j = rng.integers(1, 11, 2)
            value = {
                "real": f" {float(rng.standard_normal())!r}",
                "integer": f" {rng.integers(-(10**12), 10**12)}",
                "complex": f" {float(rng.standard_normal())!r} {float(rng.standard_normal())!r}",
                "pattern": "",
            }[field]
            lines.append(f"{i} {j}{value}\r\n")
        path = tmp_path / "m.mtx"
        path.write_bytes(mtx_text("".join(lines), len(lines), field).encode())
        ours = ct.read(path, format="coo").to_numpy()
        np.testing.assert_array_equal(ours, scipy.io.mmread(path).toarray())

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        tokens=st.lists(decimal_texts(), min_size=1, max_size=20),
        ending=st.sampled_from(["\n", "\r\n", " \r\n"]),
    )
    def test_random_decimals_read_bit_for_bit(self, tmp_path, tokens, ending):
        # Through ct.read of a small .mtx: one entry per row, in order, so COO keeps the
        # file's values where they are (explicit zeros included).
        n = len(tokens)
        body = "".join(f"{k} 1 {t}{ending}" for k, t in enumerate(tokens, 1))
        path = self.write(tmp_path, "r.mtx", mtx_text(body, n).replace("10 10", f"{n} 1") + PAD)
        assert bits(ct.read(path, format="coo").values) == python_bits(tokens)

    @pytest.mark.parametrize(
        ("line", "message"),
        [
            ("3 1 1.5x", "field 3 (value) '1.5x' is not a real number"),
            ("3 1", "expected 3 fields (row, column, value), found 2"),
            ("11 1 2.5", "row coordinate 11 is outside 1..10"),
            ("3 0 2.5", "column coordinate 0 is outside 1..10"),
            ("3 -2 2.5", "column coordinate -2 is outside 1..10"),
            ("99999999999999999999 1 1", "'99999999999999999999' is outside the int64 range"),
            ("3 1 1e5e5", "field 3 (value) '1e5e5' is not a real number"),
        ],
    )
    def test_corrupt_lines_with_text_after_them(self, tmp_path, line, message):
        # The fast paths read these lines first (enough text follows): the error is the one
        # the line-by-line check gives, at the same line.
        body = "1 1 1.5\n2 2 2.5\n" + line + "\n4 4 4.5\n" + PAD
        path = self.write(tmp_path, "bad.mtx", mtx_text(body, 4))
        with pytest.raises(ct.ParseError) as caught:
            ct.read(path)
        assert caught.value.line == 6  # banner, comment, size line, two entries
        assert message in str(caught.value)

    def test_crlf_and_cr_only_files(self, tmp_path):
        text = mtx_text("1 1 1.5\n3 4 2.5\n% c\n10 10 3.5", 3)
        expected = ct.read(self.write(tmp_path, "lf.mtx", text)).to_numpy()
        for ending in ["\r\n", "\r"]:
            path = self.write(tmp_path, "other.mtx", text.replace("\n", ending))
            np.testing.assert_array_equal(ct.read(path).to_numpy(), expected)
        assert expected[9, 9] == 3.5 and expected[2, 3] == 2.5

    def write(self, tmp_path, name, text):
        path = tmp_path / name
        path.write_bytes(text.encode("latin-1"))
        return path

    @pytest.mark.parametrize("block_bytes", [16, 4099])
    @pytest.mark.parametrize("gzipped", [False, True])
    def test_blocks_split_mid_line(self, tmp_path, threads, blocks, gzipped, block_bytes):
        # Lines cut at every block end (or longer than a block), a header spanning blocks.
        blocks(block_bytes)
        text, rows, cols, values = random_lines(5_000, seed=3)
        header = "%%MatrixMarket matrix coordinate real general\n" + "% long comment\n" * 500
        full = header + f"1000000 1000000 {len(rows)}\n" + text
        path = tmp_path / ("m.mtx.gz" if gzipped else "m.mtx")
        path.write_bytes(gzip.compress(full.encode()) if gzipped else full.encode())
        ours = ct.read(path, format="csr").to_scipy()
        expected = scipy.io.mmread(path).tocsr()
        assert ours.nnz == len(rows)
        assert (ours != expected).nnz == 0

    def test_malformed_line_number_across_blocks(self, tmp_path, threads, blocks):
        blocks(10_000)
        text, *_ = random_lines(50_000, seed=4)
        lines = text.splitlines(keepends=True)
        lines[41_234] = "5 6 7 8\n"
        path = self.write(tmp_path, "bad.mtx", mtx_text("".join(lines), len(lines)))
        with pytest.raises(ct.ParseError) as caught:
            ct.read(path)
        assert caught.value.line == 41_234 + 4  # banner, comment, size line
        assert "expected 3 fields (row, column, value), found 4" in str(caught.value)

    def test_coordinate_overflow(self, tmp_path):
        path = self.write(tmp_path, "big.mtx", mtx_text("1 1 1\n99999999999999999999 1 1\n", 2))
        with pytest.raises(ct.ParseError) as caught:
            ct.read(path)
        assert caught.value.line == 5
        assert "field 1 (row) '99999999999999999999' is outside the int64 range" in str(
            caught.value
        )

    @pytest.mark.parametrize(
        ("field", "symmetry"),
        [
            (field, symmetry)
            for field in ("real", "integer", "complex", "pattern")
            for symmetry in ("general", "symmetric", "skew-symmetric", "hermitian")
            # The combinations the format allows.
            if (symmetry != "hermitian" or field == "complex")
            and (field, symmetry) != ("pattern", "skew-symmetric")
        ],
    )
    @pytest.mark.parametrize("in_order", [True, False])
    def test_symmetries_fields_and_order_match_scipy(
        self, tmp_path, threads, symmetry, field, in_order
    ):
        rng = np.random.default_rng(7)
        n = 300
        dense = (rng.random((n, n)) < 0.05) * rng.integers(1, 9, (n, n))
        keep = np.tril(dense, -1 if symmetry == "skew-symmetric" else 0)
        rows, cols = np.nonzero(keep)  # row-major: sorted by row, then column
        if not in_order:
            order = rng.permutation(len(rows))
            rows, cols = rows[order], cols[order]

        def value(i, j):
            v = int(keep[i, j])
            imaginary = 0.0 if i == j else v * 0.25  # a hermitian diagonal is real
            return {
                "real": f" {v * 0.25!r}",
                "integer": f" {v}",
                "complex": f" {v * 0.5!r} {imaginary!r}",
                "pattern": "",
            }[field]

        lines = "".join(
            f"{i + 1} {j + 1}{value(i, j)}\n" for i, j in zip(rows.tolist(), cols.tolist())
        )
        header = f"%%MatrixMarket matrix coordinate {field} {symmetry}\n{n} {n} {len(rows)}\n"
        path = self.write(tmp_path, "m.mtx", header + lines)
        expected = scipy.io.mmread(path).toarray()
        for fmt in ("coo", "csr"):
            np.testing.assert_array_equal(ct.read(path, format=fmt).to_numpy(), expected)

    @pytest.mark.parametrize("in_order", [True, False])
    def test_int64_coordinates_of_a_huge_declared_size(self, tmp_path, in_order):
        # A declared size beyond int32: the coordinates are parsed as int64.
        big = 3_000_000_000
        entries = [(big, 5, 1.5), (7, big - 1, -2.0), (2**31, 2**31 + 1, 3.0), (1, 1, 4.0)]
        if in_order:
            entries.sort()
        lines = "".join(f"{i} {j} {v}\n" for i, j, v in entries)
        path = self.write(tmp_path, "big.mtx", mtx_text(lines, 4).replace("10 10", f"{big} {big}"))
        tensor = ct.read(path, format="coo")
        coords, values = tensor.coords()
        expected = sorted((i - 1, j - 1, v) for i, j, v in entries)
        assert tensor.shape == (big, big)
        np.testing.assert_array_equal(coords, [[i, j] for i, j, _ in expected])
        np.testing.assert_array_equal(values, [v for *_, v in expected])

    def test_frostt_coordinates_beyond_int32(self, tmp_path):
        # Parsed as int32 first; a coordinate beyond it means reading again as int64.
        path = self.write(tmp_path, "t.tns", "3000000000 2 1.5\n1 1 2.5\n")
        coords, values = ct.read(path).coords()
        np.testing.assert_array_equal(coords, [[0, 0], [2_999_999_999, 1]])
        np.testing.assert_array_equal(values, [2.5, 1.5])

    def test_frostt_in_parallel(self, tmp_path, threads):
        rng = np.random.default_rng(5)
        n = 100_000
        coords = rng.integers(1, 50, (n, 3))
        values = rng.standard_normal(n)
        body = "".join(
            f"{i} {j} {k} {v!r}\n" for (i, j, k), v in zip(coords.tolist(), values.tolist())
        )
        path = self.write(tmp_path, "t.tns", "# comment\n" + body)
        tensor = ct.read(path, format="coo")
        expected = np.zeros((49, 49, 49))
        np.add.at(expected, tuple((coords - 1).T), values)
        np.testing.assert_allclose(tensor.to_numpy(), expected, rtol=1e-12, atol=0)


class TestAdoptedColumns:
    """pack(adopt=True), which ct.read uses: the tensor may keep the given arrays."""

    def test_sorted_columns_are_kept_and_unsorted_ones_sorted(self):
        from coiter.formats import as_format
        from coiter.tensor import pack

        rng = np.random.default_rng(8)
        rows = np.sort(rng.integers(0, 50, 400)).astype(np.int32)
        cols = rng.integers(0, 60, 400).astype(np.int32)
        values = rng.standard_normal(400)
        expected = np.zeros((50, 60))
        np.add.at(expected, (rows, cols), values)
        for order in (np.lexsort((cols, rows)), rng.permutation(400)):
            r, c, v = rows[order], cols[order], values[order]
            kept = v.copy()
            tensor = pack(as_format("coo", 2), (50, 60), [r, c], kept, adopt=True)
            np.testing.assert_allclose(tensor.to_numpy(), expected, rtol=1e-13, atol=1e-13)
            again = pack(as_format("coo", 2), (50, 60), [r, c], v)
            np.testing.assert_array_equal(tensor.values, again.values)
        sorted_unique = np.unique(rows.astype(np.int64) * 60 + cols)
        r, c = (sorted_unique // 60).astype(np.int32), (sorted_unique % 60).astype(np.int32)
        given = rng.standard_normal(len(r))
        tensor = pack(as_format("coo", 2), (50, 60), [r, c], given, adopt=True)
        assert np.shares_memory(tensor.values, given)  # in order, no duplicates: not copied

    @pytest.mark.parametrize("fmt", ["coo", "csr"])
    def test_sorted_entries_with_and_without_duplicates(self, fmt):
        # In order already: one pass finds both the order and any duplicates. Without
        # duplicates the arrays are kept; with them the sums go to new arrays, and the
        # caller's (when not adopted) are left as they were.
        from coiter.formats import as_format
        from coiter.tensor import pack

        rng = np.random.default_rng(9)
        keys = np.unique(rng.integers(0, 40 * 50, 300))
        rows, cols = (keys // 50).astype(np.int32), (keys % 50).astype(np.int32)
        values = rng.standard_normal(len(keys))
        tensor = pack(as_format(fmt, 2), (40, 50), [rows, cols], values, adopt=True)
        assert np.shares_memory(tensor.values, values)
        expected = np.zeros((40, 50))
        expected[rows, cols] = values
        np.testing.assert_array_equal(tensor.to_numpy(), expected)

        twice = np.repeat(np.arange(len(keys)), 1 + (np.arange(len(keys)) % 3 == 0))
        r, c, v = rows[twice], cols[twice], values[twice]
        given = [a.copy() for a in (r, c, v)]
        tensor = pack(as_format(fmt, 2), (40, 50), given[:2], given[2])
        for before, after in zip((r, c, v), given):
            np.testing.assert_array_equal(before, after)
        summed = np.zeros((40, 50))
        np.add.at(summed, (r, c), v)
        assert not np.array_equal(summed, expected)  # some entries were doubled
        np.testing.assert_array_equal(tensor.to_numpy(), summed)
        assert tensor.nnz == len(keys)

    def test_adopting_only_sums_duplicates(self):
        from coiter.formats import as_format
        from coiter.tensor import pack

        with pytest.raises(ValueError, match="adopt=True"):
            pack(as_format("coo", 1), (3,), [np.array([0])], np.ones(1), False, adopt=True)

    def test_bucketed_entries_are_sorted_where_they_lie(self):
        # Entries laid out in mode 0's coarse buckets (as the parser leaves them) are sorted in
        # place into the same tensor as from text order; only adopted arrays may be.
        from coiter.formats import as_format
        from coiter.tensor import pack

        rng = np.random.default_rng(12)
        shape = (3000, 40)
        rows = rng.integers(0, shape[0], 20_000).astype(np.int32)
        cols = rng.integers(0, shape[1], 20_000).astype(np.int32)
        values = rng.standard_normal(20_000)
        shift = coarse_shift(shape[0])
        key = rows >> shift
        order = np.argsort(key, kind="stable")
        bucket_count = ((shape[0] - 1) >> shift) + 1
        assert (shift, bucket_count) == (4, 188)  # 3000 rows: buckets of 16
        starts = np.concatenate([[0], np.cumsum(np.bincount(key, minlength=bucket_count))])

        def laid_out(fmt, **options):
            """The entries in bucket order, packed (fresh copies: they may be sorted in place)."""
            columns = [rows[order], cols[order]]
            return pack(as_format(fmt, 2), shape, columns, values[order], **options)

        for fmt in ("csr", "coo", "csc"):
            expected = pack(as_format(fmt, 2), shape, [rows, cols], values)
            tensor = laid_out(fmt, adopt=True, mode_zero_buckets=starts)
            for mine, theirs in zip(arrays(tensor), arrays(expected), strict=True):
                np.testing.assert_array_equal(mine, theirs)
        with pytest.raises(ValueError, match="must be adopted"):
            laid_out("csr", mode_zero_buckets=starts)
        with pytest.raises(RuntimeError, match="coarse buckets do not fit"):
            laid_out("csr", adopt=True, mode_zero_buckets=starts[:-1])


def arrays(t):
    """Every array of a tensor: its levels' and its values."""
    return [a for level in t.levels for a in level.arrays.values()] + [t.values]
