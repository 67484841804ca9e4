"""Hostile inputs end in a typed coiter error, never a crash, a hang or an unrelated exception
(issue 22): files declaring huge or lying sizes, conversions to formats whose dense levels
cannot fit in memory, and kernel cache entries replaced by special or oversized files.

The dangerous calls run in child interpreters, so a segfault, an abort or a hang fails the
tests (as a signal exit or a timeout) instead of taking the test run down with it. To keep
the file fast, each group of cases shares one child, which reports every case's outcome.
"""

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest

HUGE = 2**62
# Far above any machine's memory, yet every count and byte count fits 64 bits.
TERA = 2**40
CHILD_TIMEOUT = 120

# Reads [[case id, statements, path], ...] as JSON from stdin, runs each case's statements
# (with `ct`, `np` and `path` defined) and prints {case id: the exception it raised, or
# null}. On Linux the address space is first capped at 2 GiB above what the child uses after
# importing coiter, so that an allocation sized by a declared count rather than by the data
# fails here even where memory is overcommitted.
_CASE_RUNNER = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    import coiter as ct
    if sys.platform == "linux":
        with open("/proc/self/statm") as statm:
            in_use = int(statm.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (in_use + (2 << 30), resource.RLIM_INFINITY))
    outcomes = {}
    for case, statements, path in json.load(sys.stdin):
        try:
            exec(statements, {"ct": ct, "np": np, "path": path})
        except Exception as error:
            outcomes[case] = {"error": type(error).__name__, "message": str(error),
                              "coiter": isinstance(error, ct.CoiterError)}
        else:
            outcomes[case] = None
    print(json.dumps(outcomes))
""")


def run_child(script, stdin, env=None):
    """The JSON last printed by ``script`` run in a new interpreter, which must exit
    normally: not killed by a signal, not stopped by the timeout."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        env=env,
    )
    assert done.returncode == 0, (
        f"child exited with {done.returncode} (negative: killed by "
        f"signal {-done.returncode})\n{done.stderr[-3000:]}"
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def mtx(size_line, *entries):
    return (
        "%%MatrixMarket matrix coordinate real general\n"
        + size_line
        + "\n"
        + "".join(line + "\n" for line in entries)
    )


HUGE_MTX = mtx(f"{HUGE} {HUGE} 2", "1 1 1.0", "5 7 2.0")
HUGE_TNS = f"{HUGE} 3 2 2.0\n1 1 1 1.0\n"


@dataclass(frozen=True)
class Case:
    file: str  # name of the file the statements read ("" for none)
    text: str  # its contents
    statements: str  # run in the child; `path` is the file's path
    error: str  # the coiter error expected, or "" for none
    fragments: tuple = ()  # text the error message must hold ("{path}" is the file's path)


# Conversions to formats whose dense levels cannot fit: a tensor of shape (2**62, 2**62) as
# CSR needs a pos array of 2**62 + 1 entries, as dense 2**124 values.
CONVERSION_CASES = {
    "mtx-huge-coo-to-csr": Case(
        "m.mtx",
        HUGE_MTX,
        """
T = ct.read(path, format="coo")
assert T.nnz == 2 and T[4, 6] == 2.0
T.asformat("csr")
""",
        "ShapeError",
        (f"level 1 (compressed) of a ds tensor of shape ({HUGE}, {HUGE}): array 'pos' would need",),
    ),
    "mtx-huge-coo-to-csc": Case(
        "m.mtx",
        HUGE_MTX,
        "ct.read(path, format='coo').asformat('csc')",
        "ShapeError",
        ("of a ds:1,0 tensor", "array 'pos'"),
    ),
    "mtx-huge-coo-to-dense": Case(
        "m.mtx",
        HUGE_MTX,
        "ct.read(path, format='coo').asformat('dense')",
        "ShapeError",
        (
            f"level 1 (dense) of a dd tensor of shape ({HUGE}, {HUGE}): the number of "
            f"positions, {HUGE} x {HUGE}, overflows 64 bits",
        ),
    ),
    "mtx-huge-to-numpy": Case(
        "m.mtx",
        HUGE_MTX,
        "ct.read(path, format='coo').to_numpy()",
        "ShapeError",
        (f"to_numpy of the tensor of shape ({HUGE}, {HUGE}) would need more than 2**63 elements",),
    ),
    "mtx-huge-to-scipy-csr": Case(
        "m.mtx",
        HUGE_MTX,
        "ct.read(path, format='coo').to_scipy('csr')",
        "ShapeError",
        ("array 'pos'",),
    ),
    "mtx-huge-kernel-result-csr": Case(
        "m.mtx",
        HUGE_MTX,
        """
A = ct.read(path, format="coo")
kern = ct.compile("C(i,j) = A(i,j) * B(i,j)", formats={"A": "coo", "B": "coo", "C": "csr"})
kern(A=A, B=A)
""",
        "ShapeError",
        ("result C: array 'pos' of level 1 would need",),
    ),
    "mtx-huge-sparse-formats-work": Case(
        "m.mtx",
        HUGE_MTX,
        """
T = ct.read(path, format="dcsr")
assert T.nnz == 2 and T.shape == (2**62, 2**62) and T[4, 6] == 2.0
coo = T.to_scipy("coo")
assert list(coo.row) == [0, 4] and list(coo.col) == [0, 6]
""",
        "",
    ),
    "tns-huge-to-csf-works": Case(
        "t.tns",
        HUGE_TNS,
        """
csf = ct.read(path).asformat("csf")
assert csf.shape == (2**62, 3, 2) and csf.nnz == 2 and csf[2**62 - 1, 2, 1] == 2.0
""",
        "",
    ),
    "tns-huge-to-dss": Case(
        "t.tns",
        HUGE_TNS,
        "ct.read(path).asformat('dss')",
        "ShapeError",
        (f"level 1 (compressed) of a dss tensor of shape ({HUGE}, 3, 2): array 'pos'",),
    ),
    "tns-huge-to-dense": Case(
        "t.tns",
        HUGE_TNS,
        "ct.read(path).asformat('dense')",
        "ShapeError",
        (f"level 1 (dense) of a ddd tensor of shape ({HUGE}, 3, 2)", "overflows 64 bits"),
    ),
    "tns-huge-to-hashed-rows": Case(
        "t.tns",
        HUGE_TNS,
        "ct.read(path).asformat('dhs')",
        "ShapeError",
        ("level 1 (hashed) of a dhs tensor", "overflows 64 bits"),
    ),
    "zeros-huge": Case(
        "",
        "",
        f"ct.zeros(({HUGE}, 8))",
        "ShapeError",
        (f"zeros of shape ({HUGE}, 8) would need more than 2**63 elements",),
    ),
    "zeros-tera": Case("", "", f"ct.zeros(({TERA},))", "ShapeError", ("8.0 TiB",)),
    "zeros-beyond-int64": Case(
        "",
        "",
        "ct.zeros((2**64,), 'coo')",
        "ShapeError",
        ("mode 0: extent 18446744073709551616 is not an integer in [0, 2**63)",),
    ),
}

# Files declaring huge sizes, read into their default format (CSR for Matrix Market): the
# error names the file too. 2**40 rows: the pos array's byte count fits 64 bits, so only the
# memory bound stops it.
FILE_CASES = {
    "mtx-huge-read-as-csr": Case(
        "m.mtx",
        HUGE_MTX,
        "ct.read(path)",
        "ShapeError",
        (
            "{path}: level 1 (compressed) of a ds tensor of shape "
            f"({HUGE}, {HUGE}): array 'pos' would need {HUGE + 1} int64 elements (32.0 EiB), "
            "more than this machine's memory",
            'format="coo" stores only the file\'s entries',
        ),
    ),
    "mtx-tera-rows-read-as-csr": Case(
        "m.mtx",
        mtx(f"{TERA} 3 1", "1 1 1.0"),
        "ct.read(path)",
        "ShapeError",
        (f"{TERA + 1} int64 elements (8.0 TiB)",),
    ),
    "tns-huge-read-as-dss": Case(
        "t.tns",
        HUGE_TNS,
        "ct.read(path, format='dss')",
        "ShapeError",
        ("{path}: level 1 (compressed)", "array 'pos'"),
    ),
    # Sizes and counts that lie. A declared count of 2**62 must not be allocated up front
    # (the child's address space is capped).
    "mtx-negative-size": Case(
        "m.mtx",
        mtx("-3 3 1", "1 1 1.0"),
        "ct.read(path)",
        "ParseError",
        ("{path}, line 2: bad size line '-3 3 1'",),
    ),
    "mtx-fractional-size": Case(
        "m.mtx",
        mtx("3 3.5 1", "1 1 1.0"),
        "ct.read(path)",
        "ParseError",
        ("{path}, line 2: bad size line",),
    ),
    "mtx-float-count": Case(
        "m.mtx",
        mtx("3 3 1e2", "1 1 1.0"),
        "ct.read(path)",
        "ParseError",
        ("{path}, line 2: bad size line",),
    ),
    "mtx-count-beyond-int64": Case(
        "m.mtx",
        mtx(f"3 3 {2**63}", "1 1 1.0"),
        "ct.read(path)",
        "ParseError",
        ("{path}, line 2: bad size line",),
    ),
    "mtx-zero-columns-with-an-entry": Case(
        "m.mtx",
        mtx("3 0 1", "1 1 1.0"),
        "ct.read(path)",
        "ParseError",
        ("{path}, line 3: column coordinate 1 is outside 1..0",),
    ),
    "mtx-fewer-entries-than-declared": Case(
        "m.mtx",
        mtx("3 3 3", "1 1 1.0", "2 2 2.0"),
        "ct.read(path)",
        "ParseError",
        ("declares 3 entries but the file ends after 2",),
    ),
    "mtx-more-entries-than-declared": Case(
        "m.mtx",
        mtx("3 3 1", "1 1 1.0", "2 2 2.0"),
        "ct.read(path)",
        "ParseError",
        ("{path}, line 4: entry 2 is beyond the 1 entries",),
    ),
    "mtx-declares-2**62-entries": Case(
        "m.mtx",
        mtx(f"3 3 {HUGE}", "1 1 1.0", "2 2 2.0"),
        "ct.read(path)",
        "ParseError",
        (f"declares {HUGE} entries but the file ends after 2",),
    ),
    "mtx-row-outside-size": Case(
        "m.mtx",
        mtx("3 3 2", "1 1 1.0", "4 1 2.0"),
        "ct.read(path)",
        "ParseError",
        ("{path}, line 4: row coordinate 4 is outside 1..3",),
    ),
    "mtx-row-zero": Case(
        "m.mtx",
        mtx("3 3 1", "0 1 1.0"),
        "ct.read(path)",
        "ParseError",
        ("{path}, line 3: row coordinate 0 is outside 1..3",),
    ),
    "mtx-array-layout-huge": Case(
        "a.mtx",
        f"%%MatrixMarket matrix array real general\n{HUGE} {HUGE}\n1.0\n2.0\n",
        "ct.read(path)",
        "ParseError",
        (f"declares {HUGE * HUGE} entries",),
    ),
    "tns-coordinate-zero": Case(
        "t.tns",
        "1 1 1.0\n0 1 1.0\n",
        "ct.read(path)",
        "ParseError",
        ("{path}, line 2: mode 1 coordinate 0 is below 1",),
    ),
    "tns-coordinate-negative": Case(
        "t.tns",
        "1 1 1.0\n-5 1 1.0\n",
        "ct.read(path)",
        "ParseError",
        ("{path}, line 2: mode 1 coordinate -5 is below 1",),
    ),
    "tns-coordinate-beyond-int64": Case(
        "t.tns",
        f"1 1 1.0\n{2**63} 1 1.0\n",
        "ct.read(path)",
        "ParseError",
        ("{path}, line 2: field 1", "outside the int64 range"),
    ),
    "tns-coordinate-fractional": Case(
        "t.tns",
        "1 1 1.0\n1.5 1 1.0\n",
        "ct.read(path)",
        "ParseError",
        ("{path}, line 2: field 1 (mode 1 coordinate) '1.5' is not an integer",),
    ),
    "tns-coordinate-outside-given-shape": Case(
        "t.tns",
        f"1 1 1.0\n{HUGE} 2 2.0\n",
        "ct.read(path, shape=(4, 4))",
        "ShapeError",
        (f"{{path}}, line 2: mode 1 coordinate {HUGE} is outside shape=(4, 4)",),
    ),
    "npz-shape-disagrees-with-arrays": Case(
        "t.npz",
        "",
        f"""
ct.save(path, ct.asarray(np.eye(3)))
entries = dict(np.load(path))
entries["shape"] = np.array([{HUGE}, {HUGE}])
with open(path, "wb") as stream:
    np.savez(stream, **entries)
ct.load(path)
""",
        "FormatError",
        ("{path}: level 0 (dense)", f"does not match the dimension {HUGE}"),
    ),
}

CASES = {**CONVERSION_CASES, **FILE_CASES}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """{case id: (outcome, path)} of all CASES, run in one child interpreter."""
    directory = tmp_path_factory.mktemp("hostile-inputs")
    runs, paths = [], {}
    for case_id, case in CASES.items():
        path = ""
        if case.file:
            (directory / case_id).mkdir()
            path = str(directory / case_id / case.file)
            if case.text:
                with open(path, "w") as stream:
                    stream.write(case.text)
        paths[case_id] = path
        runs.append([case_id, case.statements, path])
    results = run_child(_CASE_RUNNER, json.dumps(runs))
    return {case_id: (results[case_id], paths[case_id]) for case_id in CASES}


@pytest.mark.parametrize("case_id", list(CASES))
def test_hostile_input_gives_a_typed_error(outcomes, case_id):
    case = CASES[case_id]
    outcome, path = outcomes[case_id]
    if not case.error:
        assert outcome is None
        return
    assert outcome is not None, f"{case_id}: no error raised"
    assert (outcome["error"], outcome["coiter"]) == (case.error, True), outcome
    for fragment in case.fragments:
        assert fragment.replace("{path}", path) in outcome["message"], outcome["message"]


# -- the on-disk kernel cache -----------------------------------------------------------

# Reads [[case id, cache directory], ...] from stdin; for each, compiles and runs one SpMV
# kernel with that cache directory (after forgetting the kernels held in memory) and records
# the compilations, disk hits and warnings logged by coiter. Prints {case id: record}.
_CACHE_RUNNER = textwrap.dedent("""
    import json, logging, os, sys
    import numpy as np
    import coiter as ct

    class Recorder(logging.Handler):
        def emit(self, record):
            warnings.append(record.getMessage())

    logging.getLogger("coiter").addHandler(Recorder(logging.WARNING))
    records = {}
    for case, directory in json.load(sys.stdin):
        os.environ["COITER_CACHE_DIR"] = directory
        ct.clear_cache()
        warnings = []
        before = ct.cache_info()
        kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
        y = kern(A=ct.asarray(np.diag([1.0, 2.0, 3.0]), format="csr"), x=np.ones(3))
        after = ct.cache_info()
        records[case] = {"compiles": after["compiles"] - before["compiles"],
                         "disk_hits": after["disk_hits"] - before["disk_hits"],
                         "result": y.to_numpy().tolist(), "warnings": warnings}
    print(json.dumps(records))
""")


def _copy_of_the_entry(path, good):
    path.write_bytes(good)


def _symlink_to_dev_zero(path, _):
    path.symlink_to("/dev/zero")


def _symlink_to_a_good_entry(path, good):
    target = path.parent.parent / "elsewhere.kernel"
    target.write_bytes(good)
    path.symlink_to(target)


def _fifo(path, _):
    os.mkfifo(path)  # opening it for reading without O_NONBLOCK would wait for a writer


def _directory(path, _):
    path.mkdir()


def _sparse_terabyte(path, _):
    with open(path, "wb") as stream:
        stream.truncate(TERA)


def _truncated(path, good):
    path.write_bytes(good[: len(good) // 2])


def _garbage(path, _):
    path.write_bytes(bytes(range(256)) * 16)


# What replaces the entry, and the reason the warning must give ("" for none: a hit).
PLANTS = {
    "control-regular-copy": (_copy_of_the_entry, ""),
    "symlink-to-dev-zero": (_symlink_to_dev_zero, "is a symbolic link"),
    "symlink-to-a-good-entry": (_symlink_to_a_good_entry, "is a symbolic link"),
    "fifo": (_fifo, "is a FIFO"),
    "directory": (_directory, "is a directory"),
    "sparse-1TiB-file": (_sparse_terabyte, f"holds {TERA} bytes, more than any kernel (64 MiB)"),
    "truncated": (_truncated, "is truncated or corrupt (its code does not match its hash)"),
    "garbage": (_garbage, "has no coiter kernel header"),
}


@pytest.fixture(scope="module")
def cache_records(tmp_path_factory):
    """{plant id: (record, entry path)}: one child writes the SpMV kernel's entry, then one
    child compiles the kernel again over each planted replacement of it."""
    root = tmp_path_factory.mktemp("kernel-caches")
    populate = root / "populate"
    first = run_child(_CACHE_RUNNER, json.dumps([["populate", str(populate)]]))["populate"]
    assert (first["compiles"], first["disk_hits"], first["warnings"]) == (1, 0, [])
    (entry,) = populate.glob("*.kernel")
    good = entry.read_bytes()
    runs, entries = [], {}
    for plant_id, (plant, _) in PLANTS.items():
        cache_dir = root / plant_id
        cache_dir.mkdir(mode=0o700)
        entries[plant_id] = cache_dir / entry.name
        plant(entries[plant_id], good)
        runs.append([plant_id, str(cache_dir)])
    records = run_child(_CACHE_RUNNER, json.dumps(runs))
    return {plant_id: (records[plant_id], entries[plant_id], good) for plant_id in PLANTS}


@pytest.mark.parametrize("plant_id", list(PLANTS))
def test_a_cache_entry_that_is_not_an_entry_is_discarded_and_recompiled(cache_records, plant_id):
    record, entry, good = cache_records[plant_id]
    _, reason = PLANTS[plant_id]
    assert record["result"] == [1.0, 2.0, 3.0]
    if not reason:  # the control: a regular copy of the entry is used as it is
        assert (record["compiles"], record["disk_hits"], record["warnings"]) == (0, 1, [])
        return
    assert (record["compiles"], record["disk_hits"]) == (1, 0)
    (warning,) = record["warnings"]
    assert warning.startswith(f"coiter: kernel cache entry {entry} {reason}; "), warning
    assert warning.endswith("; recompiling the kernel"), warning
    if plant_id == "directory":  # cannot be deleted, so the new code is not stored either
        assert "could not delete it" in warning and entry.is_dir()
    else:
        assert "; deleted it;" in warning
        assert not entry.is_symlink() and entry.read_bytes() == good  # the recompiled entry
