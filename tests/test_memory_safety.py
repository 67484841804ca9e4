"""Operands whose arrays lie, or were changed after coiter checked them, give a typed error and
leave the process usable (docs/reference.md, "Kernels and the cache", "Errors"): never a crash,
never a read out of bounds.

Each scenario runs in a child process, since a failure here is a crash of the interpreter.
A child runs every case of one scenario in turn, printing one line per case; the test reads
the lines back, so a crash names the case that caused it.
"""

import subprocess
import sys
import textwrap

import pytest
import scipy.sparse as sp

# Runs in the child: CASES is a list of (name, code) pairs; each code raises or prints.
CHILD = """
import numpy as np, scipy.sparse as sp, coiter as ct
ENGINE = {engine!r}
M0 = sp.random_array((50, 40), density=0.2, format="csr", random_state=0)
x = np.arange(40, dtype=np.float64)
i, j = ct.indices("i j")

def fresh(fmt):
    \"\"\"A tensor of M0 in `fmt`, used once (so checked), and its SciPy twin.\"\"\"
    M = M0.copy()
    T = ct.asarray(M, format=fmt, name="A")
    ct.evaluate("y(i) = A(i,j) * x(j)", A=T, x=x, engine=ENGINE).to_numpy()
    return M, T

def index_arrays(T):
    \"\"\"(pos arrays, crd arrays) of T's levels, outermost first.\"\"\"
    pos = [l.pos for l in T.levels if hasattr(l, "pos")]
    crd = [l.crd for l in T.levels if hasattr(l, "crd")]
    return pos, crd

for name, code in CASES:
    try:
        exec(code)
        print(f"{{name}}: no error", flush=True)
    except ct.CoiterError as e:
        print(f"{{name}}: {{type(e).__name__}}: {{e}}", flush=True)
    except Exception as e:
        print(f"{{name}}: untyped {{type(e).__name__}}: {{e}}", flush=True)

# Still usable: a correct result after all that.
M = M0.copy()
np.testing.assert_allclose(ct.evaluate("y(i) = A(i,j) * x(j)", A=M, x=x, engine=ENGINE).to_numpy(),
                           M @ x)
print("usable", flush=True)
"""


def run_cases(cases, engine="llvm", timeout=240):
    source = f"CASES = {cases!r}\n" + textwrap.dedent(CHILD.format(engine=engine))
    r = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=timeout
    )
    lines = dict(line.split(": ", 1) for line in r.stdout.splitlines() if ": " in line)
    done = [name for name, _ in cases if name in lines]
    assert r.returncode == 0, (
        f"child died (status {r.returncode}) after {done[-1:] or 'no case'}: {r.stderr[-2000:]}"
    )
    assert "usable" in r.stdout
    return lines


USES = {
    "spmv": 'ct.evaluate("y(i) = A(i,j) * x(j)", A=T, x=x, engine=ENGINE).to_numpy()',
    "spgemm": (
        'ct.evaluate("C(i,j) = A(i,k) * B(k,j)", A=T, B=ct.asarray(M0.T.tocsr(), format=FMT), '
        "engine=ENGINE).to_numpy()"
    ),
    "add_scipy": 'ct.evaluate("C(i,j) = A(i,j) + B(i,j)", A=T, B=M0, engine=ENGINE).to_numpy()',
    "multiply": 'ct.evaluate("C(i,j) = A(i,j) * B(i,j)", A=T, B=M0, engine=ENGINE).to_numpy()',
    "einsum": 'ct.einsum("ij,j->i", T, x).to_numpy()',
    # A CSR's transposed product scatters through the coordinates, each checked as it is
    # loaded (ir/guard_coordinates.cpp, checkedPerEntry).
    "transposed": (
        'ct.evaluate("y(j) = A(i,j) * x(i)", A=T, x=np.arange(50.0), engine=ENGINE).to_numpy()'
    ),
    "kernel": (
        'ct.compile("y(i) = A(i,j) * x(j)", formats={"A": FMT, "x": "d", "y": "d"}, engine=ENGINE)'
        "(A=T, x=x)"
    ),
    "lazy": "y = ct.zeros((50,), 'dense'); y[i] = T[i, j] * ct.asarray(x)[j]; np.asarray(y)",
    "to_numpy": "T.to_numpy()",
    "asformat": "T.asformat('csc').to_numpy()",
    "coords": "T.coords()",
    "element": "T[3, 4]",
}

MUTATIONS = {
    "crd_huge": "index_arrays(T)[1][-1][3] = 10**9",
    "crd_negative": "index_arrays(T)[1][-1][3] = -2",
    "crd_int32_max": "index_arrays(T)[1][-1][3] = 2**31 - 1",
    "crd_extent": "index_arrays(T)[1][-1][3] = T.shape[T.format.mode_order[-1]]",
    "row_crd_huge": "index_arrays(T)[1][0][1] = 10**9",
    "pos_last_huge": "index_arrays(T)[0][-1][-1] = 10**9",
    "pos_middle_negative": "p = index_arrays(T)[0][-1]; p[len(p) // 2] = -5",
    "pos_middle_huge": "p = index_arrays(T)[0][-1]; p[len(p) // 2] = 10**9",
}

# Which mutations each format can undergo (COO's rows and DCSR's rows are the first crd).
FORMAT_MUTATIONS = {
    "csr": [
        "crd_huge",
        "crd_negative",
        "crd_int32_max",
        "crd_extent",
        "pos_last_huge",
        "pos_middle_negative",
        "pos_middle_huge",
    ],
    "coo": [
        "crd_huge",
        "crd_negative",
        "crd_int32_max",
        "crd_extent",
        "row_crd_huge",
        "pos_last_huge",
    ],
    "dcsr": [
        "crd_huge",
        "crd_negative",
        "crd_int32_max",
        "crd_extent",
        "row_crd_huge",
        "pos_last_huge",
        "pos_middle_negative",
        "pos_middle_huge",
    ],
    "dh": ["crd_huge", "crd_int32_max", "crd_extent"],
}


def mutated_cases(fmt, uses):
    cases = []
    for mutation in FORMAT_MUTATIONS[fmt]:
        for use in uses:
            if use == "element" and "crd" in mutation:
                continue  # finding one entry reads its segment's coordinates only to compare them
            code = f"FMT = {fmt!r}\nM, T = fresh(FMT)\n{MUTATIONS[mutation]}\n{USES[use]}"
            cases.append((f"{fmt}/{mutation}/{use}", code))
    return cases


def assert_all_refused(lines, cases, error="FormatError"):
    for name, _ in cases:
        assert lines[name].startswith(error + ":"), f"{name}: {lines[name]}"


@pytest.mark.parametrize("engine", ["llvm", "c"])
@pytest.mark.parametrize("fmt", sorted(FORMAT_MUTATIONS))
def test_arrays_changed_after_wrapping_are_refused(fmt, engine):
    uses = (
        sorted(USES)
        if engine == "llvm"
        else ["spmv", "spgemm", "add_scipy", "multiply", "transposed"]
    )
    cases = mutated_cases(fmt, uses)
    lines = run_cases(cases, engine)
    assert_all_refused(lines, cases)
    # The message names the tensor (kernel calls), the level and the array.
    first = lines[f"{fmt}/crd_huge/spmv"]
    assert "tensor A" in first and "level" in first and "crd[" in first and "1000000000" in first


def test_negative_middle_coordinate_names_the_entry():
    # A negative coordinate used to read x[-2] silently (a wrong result, no error).
    cases = [("csr", "FMT = 'csr'\nM, T = fresh(FMT)\nT.levels[1].crd[7] = -2\n" + USES["spmv"])]
    lines = run_cases(cases)
    assert lines["csr"] == (
        "FormatError: tensor A: level 1 (compressed) of a ds tensor: crd[7] = -2 is outside [0, 40)"
    )


# SciPy matrices whose arrays lie (changed after SciPy built them), through every entry point.
SCIPY_LIES = {
    "indptr_last_beyond_indices": "M.indptr[-1] = len(M.indices) + 1000",
    "indptr_middle_negative": "M.indptr[10] = -5",
    "indptr_middle_huge": "M.indptr[10] = 10**9",
    "indices_shorter": "M.indices = M.indices[: len(M.indices) // 2]",
    "indices_huge": "M.indices[3] = 10**9",
    "indices_negative": "M.indices[3] = -7",
}
SCIPY_ENTRIES = {
    "asarray": "ct.asarray(M).to_numpy()",
    "evaluate": 'ct.evaluate("y(i) = A(i,j) * x(j)", A=M, x=x, engine=ENGINE).to_numpy()',
    "einsum": 'ct.einsum("ij,j->i", M, x).to_numpy()',
    "kernel": (
        'ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, '
        "engine=ENGINE)(A=M, x=x)"
    ),
    "spgemm": (
        'ct.evaluate("C(i,j) = A(i,k) * B(k,j)", A=M, B=M0.T.tocsr(), engine=ENGINE).to_numpy()'
    ),
    "after_wrapping": "T = ct.asarray(M); T.to_numpy(); {lie}; "
    + 'ct.evaluate("y(i) = A(i,j) * x(j)", A=T, x=x).to_numpy()',
}


def test_lying_scipy_operands_are_refused():
    cases = []
    for lie, mutation in SCIPY_LIES.items():
        for entry, use in SCIPY_ENTRIES.items():
            if entry == "after_wrapping" and lie == "indices_shorter":
                continue  # M.indices then names a new array; the tensor keeps the one it wrapped
            if entry == "after_wrapping":
                code = "M = M0.copy()\n" + use.format(lie=mutation)
            else:
                # SciPy computes its canonical flag once and keeps it, as after any use.
                code = f"M = M0.copy(); M.has_canonical_format\n{mutation}\n{use}"
            cases.append((f"{lie}/{entry}", code))
    lines = run_cases(cases, timeout=120)
    assert_all_refused(lines, cases)


def test_changed_scipy_coo_is_refused():
    # A canonical SciPy COO is read in place; its coordinates are checked as kernels load them.
    cases = []
    for axis, value in [(0, 10**9), (0, -1), (1, 10**9), (1, -4)]:
        code = (
            f"M = M0.tocoo(copy=True); M.has_canonical_format\nM.coords[{axis}][5] = {value}\n"
            + USES["spmv"].replace("A=T", "A=M")
            + "\n"
        )
        cases.append((f"coo/{axis}/{value}", code))
    lines = run_cases(cases)
    assert_all_refused(lines, cases)


def test_out_reuse_with_changed_operand_is_refused():
    code = textwrap.dedent("""
        M, T = fresh("csr")
        B = ct.asarray(M0, name="B")
        C = ct.evaluate("C(i,j) = A(i,j) * B(i,j)", A=T, B=B)
        kern = ct.compile("C(i,j) = A(i,j) * B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"})
        T.levels[1].crd[3] = 10**9
        kern(A=T, B=B, out=C)
    """)
    lines = run_cases([("out", code)])
    assert lines["out"].startswith("FormatError: tensor A:"), lines["out"]


# The ways CSR SpMV checks its rows (ir/guard_coordinates.cpp, checkedPerBlock): (rows,
# columns, entries per row, the first row whose columns spread over all columns; the rows
# before it stay within the first 300).
ROW_LAYOUTS = {
    "short_close": (300, 300, 3, 300),  # one pass over a block's coordinates, then its rows
    # 85 distinct columns a row, at least 64 (kLongRow): each row checked before it runs
    # (checkedBeforeLoop).
    "long_close": (300, 300, 100, 300),
    # Most rows gather from far apart: no blocks, each coordinate checked as it is loaded.
    "far": (300, 200_000, 4, 0),
    # Most rows close, the last block far: one pass, then rows that prefetch their gathers.
    "far_block": (300, 200_000, 4, 288),
}


@pytest.mark.parametrize("engine", ["llvm", "c"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("layout", sorted(ROW_LAYOUTS))
def test_rows_checked_before_they_run(engine, index_dtype, layout):
    # CSR SpMV checks a block of rows' coordinates, or each long row's, before the rows run
    # unclamped. A coordinate at the last column is in range; one at the extent, in the
    # last row only, sends that row's block down the guarded loop, which reports it,
    # whatever the rows before it held.
    import numpy as np
    import scipy.sparse as sp

    import coiter as ct

    n, m, per_row, spread_from = ROW_LAYOUTS[layout]
    rng = np.random.default_rng(7)
    rows = np.repeat(np.arange(n), per_row)
    close, spread = rng.integers(0, min(m, 300), rows.size), rng.integers(0, m, rows.size)
    cols = np.where(rows < spread_from, close, spread)
    M = sp.csr_array((rng.random(rows.size), (rows, cols)), shape=(n, m))
    M.sum_duplicates()
    M.indices = M.indices.astype(index_dtype)
    M.indptr = M.indptr.astype(index_dtype)
    M.indices[M.indptr[n - 2]] = m - 1  # the last column: in range
    M.sort_indices()
    x = np.arange(m, dtype=np.float64)
    A = ct.asarray(M, name="A")
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=A, x=x, engine=engine)
    np.testing.assert_allclose(y.to_numpy(), M @ x)
    assert A.levels[1].crd.dtype == index_dtype
    bad = int(M.indptr[n - 1])
    A.levels[1].crd[bad] = m  # the last row, after the check at wrapping
    with pytest.raises(ct.FormatError, match=rf"crd\[{bad}\] = {m} is outside \[0, {m}\)"):
        ct.evaluate("y(i) = A(i,j) * x(j)", A=A, x=x, engine=engine)
    A.levels[1].crd[bad] = -1
    with pytest.raises(ct.FormatError, match=rf"crd\[{bad}\] = -1 is outside \[0, {m}\)"):
        ct.evaluate("y(i) = A(i,j) * x(j)", A=A, x=x, engine=engine)


# B's fibers (entries per (i,k)) for the kernel that locates a short list of w at each
# nonzero of B: up to 4, its fiber loops run as lowered; from 5 on, they first compare the
# rows of w their first and last entries reach, reading both (ir/prefetch_rows.cpp). Both
# prefetch B's values ahead (ir/prefetch_streams.cpp).
FIBER_LENGTHS = {"short": (1, 5), "long": (5, 17)}


@pytest.mark.parametrize("engine", ["llvm", "c"])
@pytest.mark.parametrize("fibers", sorted(FIBER_LENGTHS))
def test_short_lists_located_at_each_nonzero_are_checked(engine, fibers):
    # SpMTTKRP's second kernel, A(i,j) = B(i,k,l) * w(k,j,l) in loop order i,k,l,j, reads
    # at each nonzero of B the list of w at (k, l): empty or a few entries. A coordinate
    # outside its dimension in such a list, or in a fiber of B, is reported, never used.
    import numpy as np

    import coiter as ct

    n = 16
    rng = np.random.default_rng(11)
    low, high = FIBER_LENGTHS[fibers]
    coords = [
        (i, k, c)
        for i in range(n)
        for k in range(n)
        for c in np.sort(rng.choice(n, rng.integers(low, high), replace=False))
    ]
    B = ct.from_coords(np.array(coords), rng.random(len(coords)), (n, n, n), format="dss", name="B")
    w_flat = np.unique(rng.integers(0, n**3, n * n // 2))
    w_coords = np.stack(np.unravel_index(w_flat, (n, n, n)), axis=1)
    w = ct.from_coords(w_coords, rng.random(len(w_flat)), (n, n, n), format="dds:0,2,1", name="w")
    kern = ct.compile(
        "A(i,j) = B(i,k,l) * w(k,j,l)",
        formats={"A": "ds", "B": "dss", "w": "dds:0,2,1"},
        schedule="reorder(i,k,l,j)",
        engine=engine,
    )
    want = np.einsum("ikl,kjl->ij", B.to_numpy(), w.to_numpy())
    np.testing.assert_allclose(kern(B=B, w=w).to_numpy(), want)
    # The first entry of a list of w at a (k, l) where B has a nonzero: the kernel reads it.
    pos, crd = w.levels[2].pos, w.levels[2].crd
    first = next(int(pos[k * n + c]) for _, k, c in coords if pos[k * n + c] < pos[k * n + c + 1])
    fiber_crd = B.levels[2].crd
    last = len(fiber_crd) - 1  # the last fiber's last entry
    for tensor, array, entry in [("w", crd, first), ("B", fiber_crd, last)]:
        for bad in (n, -1):
            kept = array[entry]
            array[entry] = bad
            match = rf"tensor {tensor}: .*crd\[{entry}\] = {bad} is outside \[0, {n}\)"
            with pytest.raises(ct.FormatError, match=match):
                kern(B=B, w=w)
            array[entry] = kept
    np.testing.assert_allclose(kern(B=B, w=w).to_numpy(), want)


@pytest.mark.parametrize("engine", ["llvm", "c"])
def test_rows_prefetched_far_apart_are_checked(engine):
    # Gustavson's SpGEMM reaches random rows of B, far apart: the loop over a row of A
    # prefetches the rows 4 and 8 entries ahead, and first reads the rows of its first and
    # last entries (ir/prefetch_rows.cpp). A bad coordinate of A in a row's middle (read
    # ahead) or at its end (read where the row starts) is reported, never used.
    import numpy as np
    import scipy.sparse as sp

    import coiter as ct

    n, inner, per_row = 200, 20_000, 8
    rng = np.random.default_rng(5)
    rows = np.repeat(np.arange(n), per_row)
    M = sp.csr_array(
        (rng.random(rows.size), (rows, rng.integers(0, inner, rows.size))), shape=(n, inner)
    )
    M.sum_duplicates()
    B = sp.random_array((inner, 40), density=0.1, format="csr", random_state=6)
    A = ct.asarray(M, name="A")
    expression = "C(i,j) = A(i,k) * B(k,j)"
    got = ct.evaluate(expression, A=A, B=B, engine=engine).to_numpy()
    np.testing.assert_allclose(got, (M @ B).toarray())
    crd = A.levels[1].crd
    for entry in (int(M.indptr[n // 2]) + 2, int(M.indptr[n // 2 + 1]) - 1):
        for bad in (inner, -1):
            kept = crd[entry]
            crd[entry] = bad
            match = rf"tensor A: .*crd\[{entry}\] = {bad} is outside \[0, {inner}\)"
            with pytest.raises(ct.FormatError, match=match):
                ct.evaluate(expression, A=A, B=B, engine=engine)
            crd[entry] = kept


@pytest.mark.parametrize("engine", ["llvm", "c"])
def test_far_rows_whose_loops_run_in_parallel_keep_the_blocks(engine):
    # Rows whose own loops are parallel (parallelize(j, ...)) cannot stop at a bad coordinate
    # one by one: on columns that spread far apart they keep the blocks' pass
    # (ir/guard_coordinates.cpp, RowLoopCoordinates::serialRows), and a corrupted coordinate
    # is still reported.
    import numpy as np
    import scipy.sparse as sp

    import coiter as ct

    n, m, per_row = 300, 200_000, 4
    rng = np.random.default_rng(11)
    rows = np.repeat(np.arange(n), per_row)
    M = sp.csr_array((rng.random(rows.size), (rows, rng.integers(0, m, rows.size))), shape=(n, m))
    M.sum_duplicates()
    x = rng.random(m)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr"},
        schedule="parallelize(j,cpu_thread,atomics)",
        engine=engine,
    )
    assert "i_gathers_far" not in kern.source("c")
    A = ct.asarray(M, name="A")
    np.testing.assert_allclose(kern(A=A, x=x).to_numpy(), M @ x)
    bad = int(M.indptr[n - 1])
    A.levels[1].crd[bad] = m
    with pytest.raises(ct.FormatError, match=rf"crd\[{bad}\] = {m} is outside \[0, {m}\)"):
        kern(A=A, x=x)


@pytest.mark.parametrize("engine", ["llvm", "c"])
def test_row_loops_under_a_parallel_loop_in_each_row_keep_the_blocks(engine):
    # R(i,k) = sum_j A(i,j,k) + 2 with k split and its blocks run in parallel inside each
    # row: the row loops over j run in each parallel body, which cannot set the rows' flag,
    # so they keep the blocks' pass (RowLoopCoordinates::serialRows). Found by the property
    # test (test_random_legal_schedules_preserve_results): the far rows' per-entry checks set
    # the outer flag inside the parallel body, and the IR was refused as a lowering bug.
    import numpy as np

    import coiter as ct

    rng = np.random.default_rng(12)
    shape = (40, 100_000, 3)  # columns far apart: the kernel's far-rows path is there
    i = np.repeat(np.arange(shape[0]), 5)
    j = rng.integers(0, shape[1], i.size)
    k = rng.integers(0, shape[2], i.size)
    coords = np.unique(np.stack([i, j, k], axis=1), axis=0)
    values = rng.random(len(coords))
    A = ct.from_coords(coords, values, shape, format="dsd", name="A")
    kern = ct.compile(
        "R(i,k) = A(i,j,k) + 2",
        formats={"A": "dsd", "R": "dd"},
        schedule="split(k,k0,k1,1);parallelize(k0,cpu_thread,no_races,dynamic)",
        engine=engine,
    )
    expected = np.full((shape[0], shape[2]), 2.0)
    np.add.at(expected, (coords[:, 0], coords[:, 2]), values)
    np.testing.assert_allclose(kern(A=A).to_numpy(), expected)
    crd = A.levels[1].crd
    bad = len(crd) // 2
    crd[bad] = shape[1]
    with pytest.raises(ct.FormatError, match=rf"crd\[{bad}\] = {shape[1]} is outside"):
        kern(A=A)


# How a second operand's entries meet the first's in a merge (a union's or an
# intersection's while loops): each merge kernel walks its positions differently there.
MERGE_PARTNERS = {
    "identical": lambda M, rng: M.copy(),  # positions in lockstep
    "transpose": lambda M, rng: M.T.tocsr(),  # runs of one operand beside the diagonal
    "shifted": lambda M, rng: _shifted(M, 40),  # long runs: leaps, a gallop in intersections
    "random": lambda M, rng: sp.random_array(M.shape, density=0.1, format="csr", random_state=rng),
}
MERGES = {
    "add": "C(i,j) = A(i,j) + B(i,j)",
    "multiply": "C(i,j) = A(i,j) * B(i,j)",
    "add3": "C(i,j) = A(i,j) - B(i,j) + D(i,j)",
}


def _shifted(M, columns):
    coo = M.tocoo()
    return sp.csr_array((coo.data, (coo.row, (coo.col + columns) % M.shape[1])), shape=M.shape)


@pytest.mark.parametrize("engine", ["llvm", "c"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("partner", sorted(MERGE_PARTNERS))
@pytest.mark.parametrize("merge", sorted(MERGES))
def test_merged_rows_checked_per_block(engine, index_dtype, partner, merge):
    # A merge's rows are checked a block at a time (ir/segment_positions.hpp: its positions
    # stay inside each row's segment), then run as lowered. A bad coordinate in any row of
    # either operand, first block, middle or last row, is still reported.
    import numpy as np

    import coiter as ct

    n = 100
    rng = np.random.default_rng(3)
    rows = np.repeat(np.arange(n), 12)
    M = sp.csr_array(
        (rng.random(rows.size) + 0.5, (rows, rng.integers(0, n, rows.size))), shape=(n, n)
    )
    M.sum_duplicates()
    partners = [MERGE_PARTNERS[partner](M, rng) for _ in range(2)]

    def wrapped(matrix, name):
        matrix = sp.csr_array(matrix)
        matrix.sort_indices()
        matrix.indices = matrix.indices.astype(index_dtype)
        matrix.indptr = matrix.indptr.astype(index_dtype)
        return ct.asarray(matrix, name=name)

    operands = {
        "A": wrapped(M, "A"),
        "B": wrapped(partners[0], "B"),
        "D": wrapped(partners[1], "D"),
    }
    kern = ct.compile(
        MERGES[merge], formats={"A": "csr", "B": "csr", "D": "csr", "C": "csr"}, engine=engine
    )
    used = {name: operands[name] for name in "ABD" if f"{name}(i,j)" in MERGES[merge]}
    dense = {name: t.to_numpy() for name, t in used.items()}
    expected = {
        "add": lambda d: d["A"] + d["B"],
        "multiply": lambda d: d["A"] * d["B"],
        "add3": lambda d: d["A"] - d["B"] + d["D"],
    }[merge](dense)
    np.testing.assert_allclose(kern(**used).to_numpy(), expected)
    for name in used:
        crd = used[name].levels[1].crd
        pos = used[name].levels[1].pos
        for row in (0, 50, n - 1):
            if pos[row] == pos[row + 1]:
                continue
            at = int(pos[row + 1]) - 1  # the row's last entry: the end of a run, a drain
            kept = crd[at]
            for bad in (n, -1):
                crd[at] = bad
                with pytest.raises(
                    ct.FormatError, match=rf"crd\[{at}\] = {bad} is outside \[0, {n}\)"
                ):
                    kern(**used)
            crd[at] = kept
        np.testing.assert_allclose(kern(**used).to_numpy(), expected)
