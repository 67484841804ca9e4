"""Compiler stages against the thesis (Kjolstad's thesis, chapters 3 to 5, and its example kernels):
concretize, iteration lattices, and the structure of the generated loops."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import coiter as ct
from coiter import _core
from compiler_cases import ENGINES


def tensor(name, fmt, order=None):
    fmt = ct.Format.parse(fmt) if not ct.Format.is_name(fmt) else ct.Format.named(fmt, order)
    return _core.TensorVar(name, fmt, "float64", "int32")


def access(t, *indices):
    return _core.access(t, list(indices))


def add(a, b):
    return _core.binary("add", a, b)


def mul(a, b):
    return _core.binary("mul", a, b)


# -- concretize (§3.5) -------------------------------------------------------------------------
def test_concretize_spmv_simplifies_to_a_compound_assignment():
    a, B, c = tensor("a", "d"), tensor("B", "ds"), tensor("c", "d")
    stmt = _core.assignment(access(a, "i"), mul(access(B, "i", "j"), access(c, "j")))
    assert _core.concretize(stmt) == "∀i ∀j a(i) += B(i,j) * c(j)"


def test_concretize_keeps_the_where_when_the_temporary_is_combined():
    a, B, c, d = tensor("a", "d"), tensor("B", "ds"), tensor("c", "d"), tensor("d", "d")
    rhs = add(mul(access(B, "i", "j"), access(c, "j")), access(d, "i"))
    stmt = _core.assignment(access(a, "i"), rhs)
    assert _core.concretize(stmt) == "∀i (a(i) = t0() + d(i) where ∀j t0() += B(i,j) * c(j))"


def test_concretize_matrix_multiply_is_the_inner_product_order():
    A, B, C = tensor("A", "ds"), tensor("B", "ds"), tensor("C", "ds")
    stmt = _core.assignment(access(A, "i", "j"), mul(access(B, "i", "k"), access(C, "k", "j")))
    assert _core.concretize(stmt) == "∀i ∀j ∀k A(i,j) += B(i,k) * C(k,j)"


def test_max_reduction_keeps_its_temporary_because_results_start_at_zero():
    y, A = tensor("y", "d"), tensor("A", "ds")
    stmt = _core.assignment(access(y, "i"), _core.reduce("max", "j", access(A, "i", "j")))
    assert _core.concretize(stmt) == "∀i (y(i) = t0() where ∀j t0() max= A(i,j))"


def test_loop_order_and_workspace_for_spgemm_by_rows():
    kern = ct.compile("C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"})
    # The default schedule assembles the rows in parallel.
    assert kern.concrete == (
        "∀i (∀j C(i,j) = w0(j) where ∀k ∀j w0(j) += A(i,k) * B(k,j)) "
        "| i: parallel(cpu_thread,no_races,dynamic)"
    )


def test_loop_order_follows_a_column_major_operand():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csc", "x": "d", "y": "d"})
    # The default schedule reduces over the parallel columns into per-thread copies of y.
    assert (
        kern.concrete == "∀j ∀i y(i) += A(i,j) * x(j) | j: parallel(cpu_thread,temporary,dynamic)"
    )


def test_row_reductions_accumulate_in_a_scalar():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
    assert kern.concrete == (
        "∀i (y(i) += acc0() where ∀j acc0() += A(i,j) * x(j)) "
        "| i: parallel(cpu_thread,no_races,dynamic)"
    )


# -- iteration lattices (§2.5) --------------------------------------------------------------------
def vector_lattice(rhs_builder, formats):
    ts = {name: tensor(name, fmt) for name, fmt in formats.items()}
    a = tensor("a", "s")
    stmt = _core.assignment(access(a, "i"), rhs_builder({n: access(t, "i") for n, t in ts.items()}))
    return _core.outer_lattice(stmt)


def test_lattice_intersection_of_compressed_segments():
    assert vector_lattice(lambda t: mul(t["b"], t["c"]), {"b": "s", "c": "s"}) == "[b1, c1]"


def test_lattice_union_of_compressed_segments():
    assert (
        vector_lattice(lambda t: add(t["b"], t["c"]), {"b": "s", "c": "s"})
        == "[b1, c1] > [b1] > [c1]"
    )


def test_lattice_union_inside_intersection():
    lattice = vector_lattice(
        lambda t: mul(add(t["b"], t["c"]), t["d"]), {"b": "s", "c": "s", "d": "s"}
    )
    assert lattice == "[b1, c1, d1] > [b1, d1] > [c1, d1]"


def test_lattice_dense_operand_is_located_and_collapses_to_one_loop():
    assert vector_lattice(lambda t: mul(t["b"], t["c"]), {"b": "s", "c": "d"}) == "[b1 | c1]"


def test_lattice_union_with_a_dense_operand_keeps_only_points_with_the_full_dimension():
    # Subset optimization: the dimension is full, so points without it are unreachable.
    assert (
        vector_lattice(lambda t: add(t["b"], t["c"]), {"b": "s", "c": "d"})
        == "[U_i, b1 | c1] > [U_i | c1]"
    )


def test_lattice_hashed_operand_in_an_intersection_is_located():
    assert vector_lattice(lambda t: mul(t["b"], t["h"]), {"b": "s", "h": "h"}) == "[b1 | h1]"


def test_lattice_hashed_operand_in_an_intersection_under_a_union_keeps_the_drains():
    # b + c*d*h: the ordered c, d drive their intersection and h is located there. Were the
    # dimension added beside them, the points where c or d has run out but b has not (the
    # drain of b) would be lost (found by the property test).
    lattice = vector_lattice(
        lambda t: add(t["b"], mul(mul(t["c"], t["d"]), t["h"])),
        {"b": "s", "c": "s", "d": "s", "h": "h"},
    )
    assert lattice == "[b1, c1, d1 | h1] > [c1, d1 | h1] > [b1]"


def test_lattice_union_with_hashed_operand_iterates_the_dimension():
    assert (
        vector_lattice(lambda t: add(t["b"], t["h"]), {"b": "s", "h": "h"})
        == "[U_i, b1 | h1] > [U_i | h1]"
    )


def test_lattice_hashed_factor_of_a_union_is_located_everywhere():
    # (b - h) * g with b compressed, h and g hashed: g, which cannot be merged with b, is
    # located in the point b drives; iterated in the point where b has run out, it would visit
    # b's coordinates again (array differential seed 1,700,324 subtracted h * g twice there).
    # It is located everywhere, and the dimension walked beside b.
    lattice = vector_lattice(
        lambda t: mul(add(t["b"], t["h"]), t["g"]), {"b": "s", "h": "h", "g": "h"}
    )
    assert lattice == "[U_i, b1 | h1 g1] > [U_i | h1 g1]"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("out_format", ["ds", "dense"])
def test_a_hashed_factor_of_a_union_is_not_walked_twice(engine, out_format):
    # The array differential test's seed 1,700,324: (C - T) @ B with T and B hashed, B read
    # along its hashed level (dh:1,0) under the loop over k, gave wrong values wherever C, T
    # and B all stored an entry, in both engines.
    rng = np.random.default_rng(0)
    C = (rng.random((6, 6)) < 0.5) * rng.random((6, 6))
    T = (rng.random((6, 6)) < 0.6) * rng.random((6, 6))
    B = (rng.random((6, 2)) < 0.9) * rng.random((6, 2))
    kern = ct.compile(
        "y(i,k) = (C(i,j) - T(i,j)) * B(j,k)",
        formats={"C": "csr", "T": "dh", "B": "dh:1,0", "y": out_format},
        engine=engine,
    )
    y = kern(
        C=ct.asarray(C, format="csr"),
        T=ct.asarray(T, format="dh"),
        B=ct.asarray(B, format="dh").asformat("dh:1,0"),
    )
    np.testing.assert_allclose(y.to_numpy(), (C - T) @ B)


# -- generated loops (§6, §10 "codegen structure") ------------------------------------------------
def loops(kern):
    """(for loops, while loops) as lowering built them: the IR passes later add checked copies
    of some loops (coordinate checks) and interrupt points, which are not the lowering's shape."""
    lowered = dict(kern.stages)["lowered IR"]
    return len(re.findall(r"^\s*for \w+: ", lowered, re.M)), len(
        re.findall(r"^\s*while ", lowered, re.M)
    )


def test_csr_spmv_is_two_for_loops():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
    src = kern.source("c")
    assert loops(kern) == (2, 0)
    # The row is accumulated in a local scalar and stored once (footnote 30). The row loop
    # covers every row, so y is not zeroed first and the store overwrites.
    assert "acc0 += A_vals[pA2] * x_vals[px1];" in src
    assert "y_vals[py1] = acc0;" in src


@pytest.mark.skipif(not ct._core.with_llvm, reason="this build has no LLVM engine")
def test_coordinates_are_checked_where_they_are_loaded():
    # Each coordinate a kernel loads from an operand is clamped into its dimension (32-bit
    # ones by an unsigned minimum with the last coordinate) and what the clamp moved it by is
    # or-ed into a flag (ir/guard_coordinates.hpp); the flag of a parallel body is reported
    # as the body ends, the function's before it returns.
    clamp = (
        "coiter_min_u32((uint32_t)A2_crd[pA2], "
        "(uint32_t)coiter_max_i64(coiter_min_i64(A_dim1 - 1, 2147483647), 0))"
    )
    src = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}).source("c")
    assert (
        f"invalid_coordinate_0 = invalid_coordinate_0 | (((uint32_t)A2_crd[pA2] - {clamp}) | "
        "(uint32_t)(A_dim1 < 1));"
    ) in src
    assert f"int64_t j = (int64_t)(int32_t){clamp};" in src
    # (Four flags: the function's, and the parallel bodies' of the loop over blocks of rows,
    # of the loop row by row and of the loop over rows that gather from far apart,
    # ir/guard_coordinates.cpp, checkedPerBlock.)
    assert src.count("coordinate_violations[0] += 1;") == 4
    assert src.count("if (invalid_coordinate") == 4 and "invalid_coordinate_0 != 0" in src
    # Hashed levels store empty buckets as -1: their coordinates lie in [-1, extent).
    src = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "dh", "x": "d", "y": "d"}).source("c")
    assert (
        "(uint64_t)((int64_t)A2_crd[pA2] + 1) >= (uint64_t)(A_dim1 + 1) ? -1 : A2_crd[pA2]" in src
    )
    assert "| (uint32_t)((uint64_t)((int64_t)A2_crd[pA2] + 1) >= (uint64_t)(A_dim1 + 1));" in src
    # Kernels that load no coordinate have no flag.
    src = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "dense", "x": "d", "y": "d"}).source("c")
    assert "invalid_coordinate" not in src and "coordinate_violations" not in src


def test_a_scatter_checks_each_coordinate_and_reads_the_row_operand_once():
    # CSR's transposed product scatters through its coordinates: each is checked as the row
    # loop loads it (a bad one stops the row and is reported), not in a pass over a block of
    # rows first, and x[i], the same for every entry of row i, is read once before the row
    # (ir/guard_coordinates.cpp, checkedPerEntry; ir/invariant_loads.hpp).
    kern = ct.compile("y(j) = A(i,j) * x(i)", formats={"A": "csr", "x": "d", "y": "d"})
    src = kern.source("c")
    assert "if ((uint64_t)(int64_t)A2_crd[pA2] >= (uint64_t)A_dim1) {" in src
    assert "double x_vals_element = x_vals[px1];" in src
    assert "A_vals[pA2] * x_vals_element;" in src
    assert "_largest" not in src and src.count("x_vals[px1]") == 1
    # Its rows go by blocks of 32, and only the loop over blocks checks for interrupts (a
    # check per row cost CSC SpMV 10-14 % of its time).
    block_loop = src.index("for (int64_t i_block = 0;")
    rows = src.index("for (int64_t i = i_first; i < i_stop; i++) {", block_loop)
    entries = src.index("for (int64_t pA2 = ", rows)
    assert "interrupt_flag" in src[block_loop:rows] and "interrupt_flag" not in src[rows:entries]
    A = sp.random(300, 200, density=0.05, format="csr", random_state=4)
    A.indices = A.indices.astype(np.int32)
    x = np.random.default_rng(4).random(300)
    previous = ct.get_num_threads()
    try:
        for threads in (1, 2):
            ct.set_num_threads(threads)
            for engine in ["c"] + (["llvm"] if _core.with_llvm else []):
                got = ct.compile(
                    "y(j) = A(i,j) * x(i)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
                )(A=A, x=x)
                np.testing.assert_allclose(got.to_numpy(), A.T @ x, rtol=1e-12)
    finally:
        ct.set_num_threads(previous)
    # A gather (CSR SpMV) keeps the pass over each block of rows.
    src = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}).source("c")
    assert "A2_crd_largest" in src


def test_coordinates_that_never_become_addresses_are_flagged_but_not_clamped():
    # A union's coordinates only reach the result's crd array and the merge's comparisons
    # (whose truth values decide the count of stored entries): checked, not clamped.
    src = ct.compile(
        "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    # (The merge carries each operand's coordinate from step to step and loads the next one
    # at the top of each step.)
    assert "cA2_next = (int64_t)A2_crd[pA2 + 1];" in src
    assert "cB2_next = (int64_t)B2_crd[pB2 + 1];" in src
    assert "int64_t jA_0 = cA2;" in src and "int64_t jB_0 = cB2;" in src
    assert (
        "invalid_coordinate = invalid_coordinate | (((uint32_t)B2_crd[pB2 + 1] - coiter_min_u32("
        in src
    )
    assert "int64_t j = coiter_min_i64(jA_0, jB_0);" in src
    assert "(int32_t)coiter_min_u32" not in src
    # A coordinate that indexes a dense result row is clamped, carried or not.
    src = ct.compile(
        "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "dense"}
    ).source("c")
    assert (
        "(int32_t)coiter_min_u32((uint32_t)A2_crd[pA2]" in src
        and "(int32_t)coiter_min_u32((uint32_t)B2_crd[pB2]" in src
    )
    assert "cA2_next = (int64_t)(int32_t)coiter_min_u32((uint32_t)A2_crd[pA2 + 1]" in src


def test_llvm_engine_selects_floats_without_a_branch():
    # A merge selects each operand's value by whether it is at the coordinate; x86 without
    # AVX-512 would branch on a select of doubles, so they are selected as integers (through an
    # empty asm the optimizer keeps), and selects are marked unpredictable.
    ir = ct.compile(
        "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("llvm")
    assert re.search(r"select i1 %[\w.]+, i64 %[\w.]+, i64 0, !unpredictable", ir) or re.search(
        r"select i1 %[\w.]+, i64 0, i64 %[\w.]+, !unpredictable", ir
    )
    assert 'asm "", "=r,0"' in ir
    # The barrier touches no memory, so the coordinates a merge step compares are loaded once.
    barrier = re.search(r'call i64 asm "", "=r,0"\(i64 %[\w.]+\) #(\d+)', ir)
    assert re.search(rf"^attributes #{barrier.group(1)} = {{.*memory\(none\)", ir, re.M)
    assert not re.search(r"select i1 %[\w.]+, double", ir)


def _target_features(ir: str) -> list[str]:
    features = set(re.findall(r'"target-features"="([^"]*)"', ir))
    assert len(features) == 1
    return features.pop().split(",")


def test_llvm_engine_vectorizes_sums_into_scalar_accumulators():
    # The row's sum may be reassociated (docs/reference.md, "Schedules": a result may differ by
    # floating-point reassociation), so the loop adds into several vector accumulators instead of
    # one chain of scalar adds. They are not contracted into fused multiply-adds where a loop
    # runs them: a scalar loop's sum is one dependent chain, whose step an FMA's latency would
    # lengthen. Only the masked steps of short rows (AVX-512, the test below) contract.
    ir = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}).source("llvm")
    assert re.search(r"fadd reassoc <\d+ x double>", ir)
    assert "llvm.vector.reduce.fadd" in ir
    assert "fmuladd" not in ir
    assert not re.search(r"(fmul|fadd) reassoc contract double", ir)
    if "+avx512f" not in _target_features(ir):
        assert "contract" not in ir
    # Sums into the result (not a scalar accumulator) keep their order.
    ir = ct.compile("y(j) = A(i,j) * x(i)", formats={"A": "csr", "x": "d", "y": "d"}).source("llvm")
    assert "reassoc" not in ir


def test_spgemm_prefetches_the_rows_of_b_its_loop_over_a_reaches_next():
    src = ct.compile(
        "C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    # The row of B four entries of A ahead (its start read through A's coordinate, checked
    # like every coordinate a kernel loads), and that row's start eight ahead.
    assert (
        "int64_t pB2_ahead = (int64_t)B2_pos[(int64_t)(int32_t)coiter_min_u32("
        "(uint32_t)A2_crd[pA2 + 4], "
        "(uint32_t)coiter_max_i64(coiter_min_i64(A_dim1 - 1, 2147483647), 0))];"
    ) in src
    assert (
        "__builtin_prefetch(&B2_crd[pB2_ahead]);" in src
        and "__builtin_prefetch(&B_vals[pB2_ahead]);" in src
    )
    assert "__builtin_prefetch(&B2_pos[(int64_t)A2_crd[pA2 + 8]]);" in src
    # Only while the entries ahead are in A's row.
    assert "if (pA2 + 4 < pA2_end) {" in src and "pA2 < pA2_end; pA2++" in src
    # CSR SpMV reads its rows in order: no row to prefetch. What it gathers from x is
    # prefetched 32 entries ahead, in blocks of rows whose columns lie far apart and in the
    # loop over rows that runs when most rows do (ir/guard_coordinates.cpp,
    # checkedPerBlock). A block whose last entry is 32 or more before A's last runs each row
    # in one loop that prefetches at every entry; the last blocks split each row's loop where
    # the entry ahead would pass A's last, so that the prefetch needs no clamp.
    src = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}).source("c")
    assert src.count("__builtin_prefetch(") == 4
    assert src.count("__builtin_prefetch(&x_vals[(int64_t)A2_crd[pA2 + 32]]);") == 4
    for stop in ("i_stop", "i_far_stop"):
        assert f"if ((int64_t)A2_pos[{stop}] + 32 <= (int64_t)A2_pos[i_end]) {{" in src, src
    split_at = r"int64_t (pA2_split\w*) = coiter_max_i64\(.*\(int64_t\)A2_pos\[i_end\] \+ -32"
    splits = re.findall(split_at, src)
    assert len(splits) == 2, src
    for split in splits:
        assert f"pA2 < {split}; pA2++" in src and f"pA2 = {split}; pA2 <" in src
    # The unsplit loops: the row's own bounds, a prefetch at every entry (after the far rows'
    # check of the entry's coordinate).
    unsplit = (
        r"pA2 < \(int64_t\)A2_pos\[pA1 \+ 1\]; pA2\+\+\) \{\n(?:[^\n]*\n){0,4}?"
        r"\s*__builtin_prefetch\(&x_vals\[\(int64_t\)A2_crd\[pA2 \+ 32\]\]\);"
    )
    assert len(re.findall(unsplit, src)) == 2, src


@pytest.mark.parametrize("per_row", [1, 5, 8, 9, 15, 16, 17, 23, 24, 40, "0 to 20"])
def test_llvm_engine_sums_short_rows_in_a_masked_or_scalar_loop(per_row):
    # A row's sum runs in the plain vector loop from 16 entries on. Shorter rows run, where the
    # CPU has AVX-512, as masked vector steps (no scalar remainder, and no branch on the row's
    # length to mispredict): up to 8 entries one step with no loop, 9 to 15 a masked loop of
    # two steps, their multiply-adds contracted; elsewhere in a scalar loop (llvm_codegen.cpp,
    # segmentLoop). All the paths are there, and rows on either side of the bounds sum right.
    if not _core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
    ir = kern.source("llvm")
    assert re.search(r"icmp sgt i64 %[\w.]+, 15", ir)  # (entries >= 16, as LLVM writes it)
    assert "llvm.vector.reduce.fadd" in ir
    if "+avx512f" in _target_features(ir):
        assert re.search(r"call <8 x double> @llvm\.masked\.load\.v8f64", ir)
        assert re.search(r"icmp slt i64 %[\w.]+, 9", ir)  # (entries <= 8)
        # Rows of one length run fewer than 5 entries in a scalar loop (the next test).
        assert re.search(r"icmp slt i64 %[\w.]+, 5", ir)
        assert re.search(r'!"llvm.loop.vectorize.enable", i1 false', ir)
        assert re.search(r"fmul reassoc contract <8 x double>", ir)
        assert re.search(r"fmul reassoc <8 x double>", ir)  # the long rows' loop: not contracted
    else:
        assert re.search(r'!"llvm.loop.vectorize.enable", i1 false', ir)
    rng = np.random.default_rng(7 if isinstance(per_row, str) else per_row)
    n = 3000
    lengths = rng.integers(0, 21, n) if isinstance(per_row, str) else np.full(n, per_row)
    rows = np.repeat(np.arange(n), lengths)
    M = sp.csr_array((rng.random(rows.size), (rows, rng.integers(0, n, rows.size))), shape=(n, n))
    M.sum_duplicates()
    x = rng.random(n)
    np.testing.assert_allclose(kern(A=ct.asarray(M), x=x).to_numpy(), M @ x, rtol=1e-13)


ROW_LENGTH_LAYOUTS = {
    # lengths of the rows, repeated; the blocks are of 32 rows
    "rows of 1": [1],
    "rows of 3": [3],
    "rows of 5": [5],
    "rows of 4": [4],
    "rows of 7": [7],
    "first and last at the average": [2, 1, 3, 2],
    "5 at first, last and on average, not every row": [5, 4, 6, 5],
    "varying": None,
}


@pytest.mark.parametrize("engine", ["llvm", "c"])
@pytest.mark.parametrize("layout", list(ROW_LENGTH_LAYOUTS))
def test_blocks_of_rows_of_one_length_sum_right_and_stay_checked(engine, layout):
    # A block of rows (32) whose first and last rows have its average length runs as more
    # copies (guard_coordinates.cpp, rowsByLength): rows of 1, 3 or 5 entries, confirmed row by
    # row, as one loop across rows over positions computed from the row's number; other
    # lengths with their segment loops marked, which the LLVM engine runs, for fewer than 5
    # entries, as a scalar loop (llvm_codegen.cpp, segmentLoop). Each layout sums right,
    # rows that only look like one length included, and a bad coordinate in such a block
    # is reported.
    if engine == "llvm" and not _core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    formats = {"A": "csr", "x": "d", "y": "d"}
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats=formats, engine=engine)
    stage = kern.stages["after IR passes"]
    assert "rows of one length: their segment loops run unmasked" in stage
    assert all(f"// rows of {k} entries: vectorized across rows" in stage for k in (1, 3, 5))
    n = 3000
    rng = np.random.default_rng(5)
    pattern = ROW_LENGTH_LAYOUTS[layout]
    lengths = rng.integers(0, 7, n) if pattern is None else np.resize(pattern, n)
    rows = np.repeat(np.arange(n), lengths)
    within = np.arange(rows.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    M = sp.csr_array((rng.random(rows.size), (rows, (rows * 7 + within) % n)), shape=(n, n))
    x = rng.random(n)
    A = ct.asarray(M, name="A")
    np.testing.assert_allclose(kern(A=A, x=x).to_numpy(), M @ x, rtol=1e-13)
    bad = int(M.indptr[n // 2])
    A.levels[1].crd[bad] = n
    with pytest.raises(ct.FormatError, match=rf"crd\[{bad}\] = {n} is outside \[0, {n}\)"):
        kern(A=A, x=x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_short_rows_sum_right_for_every_value_and_index_type(dtype, index_dtype):
    # The short rows' masked steps (and the scalar loops elsewhere) for other element types:
    # rows of 0 to 20 entries, values and sums checked against SciPy, and a dot product of
    # two rows' segments, a body with two sums.
    rng = np.random.default_rng(11)
    n = 2000
    rows = np.repeat(np.arange(n), rng.integers(0, 21, n))
    values = (rng.random(rows.size) * 8 - 4).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        values = values + 1j * rng.random(rows.size)
    M = sp.csr_array((values, (rows, rng.integers(0, n, rows.size))), shape=(n, n))
    M.sum_duplicates()
    M.indices = M.indices.astype(index_dtype)
    M.indptr = M.indptr.astype(index_dtype)
    x = (rng.random(n) * 8 - 4).astype(dtype)
    A = ct.asarray(M)
    # (Sums of up to 20 terms of magnitude up to 16, rounded in another order.)
    tol = {"rtol": 1e-4, "atol": 1e-3} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-10}
    y = ct.evaluate("y(i) = A(i,j) * x(j)", A=A, x=x).to_numpy()
    np.testing.assert_allclose(y, M @ x, **tol)
    both = ct.evaluate("y(i) = A(i,j) * x(j) + A(i,j) * A(i,j)", A=A, x=x).to_numpy()
    np.testing.assert_allclose(both, M @ x + (M.multiply(M)).sum(axis=1), **tol)


@pytest.mark.parametrize(
    ("statement", "formats", "width"),
    [
        ("y(i) = A(i,j) * x(j)", {"A": "csr"}, "512"),
        ("A(i,j) = B(i,j) * C(i,k) * D(k,j)", {"A": "csr", "B": "csr"}, "512"),
        ("C(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "C": "csr"}, "512"),
        # A dense row updated in place, step after step: 256-bit stores and loads.
        ("C(i,j) = A(i,k) * B(k,j)", {"A": "csr"}, "256"),
        ("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {"B": "csf"}, "256"),
    ],
)
def test_llvm_vectors_are_512_bits_wide_unless_a_loop_updates_a_row_in_place(
    statement, formats, width
):
    # (llvm_vector_width.hpp: a loop that stores a row and reads it back at its next step
    # stalls store forwarding with 512-bit vectors; loops that only read gain from them.)
    if not _core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    ir = ct.compile(statement, formats=formats).source("llvm")
    assert set(re.findall(r'"prefer-vector-width"="(\d+)"', ir)) == {width}


def test_intersection_appends_without_a_branch_on_whether_the_rows_meet():
    kern = ct.compile("C(i,j) = A(i,j) * B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"})
    src = kern.source("c")
    # Rows; the lockstep walk, the merge, and a gallop and a search over a run of each
    # operand's entries.
    assert loops(kern) == (1, 6)
    # The product is written at every step and kept only where both rows hold the column.
    assert "C_vals[C2_count] = A_vals[pA2] * B_vals[pB2];" in src
    assert "C2_count += (int64_t)(jA_0 == j && jB_0 == j && C_vals[C2_count] != 0.0);" in src
    assert "if (jA_0 == j && jB_0 == j)" not in src


def test_an_intersection_of_rows_whose_ranges_do_not_meet_is_skipped():
    src = ct.compile(
        "C(i,j) = A(i,j) * B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    skip = src[
        src.index("if (pA2 < pA2_end && pB2 < pB2_end) {") : src.index("while (pA2 < pA2_end")
    ]
    assert "A2_crd[pA2]" in skip and "B2_crd[pB2_end - 1]" in skip and "pA2 = pA2_end;" in skip
    # A union visits every entry: nothing to skip.
    src = ct.compile(
        "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    assert "pA2 = pA2_end;" not in src


@pytest.mark.parametrize("engine", ENGINES)
def test_intersections_of_disjoint_and_touching_ranges(engine):
    # Rows whose column ranges are apart, touch at one column, or nest.
    A = sp.csr_array(
        np.array([[1.0, 2.0, 0, 0, 0], [0, 3.0, 4.0, 0, 0], [5.0, 0, 0, 0, 6.0], [0, 0, 7.0, 0, 0]])
    )
    B = sp.csr_array(
        np.array([[0, 0, 0, 8.0, 9.0], [0, 0, 1.0, 2.0, 0], [0, 3.0, 4.0, 0, 0], [0, 0, 0, 5.0, 0]])
    )
    got = ct.evaluate("C(i,j) = A(i,j) * B(i,j)", A=A, B=B, engine=engine)
    np.testing.assert_array_equal(got.to_numpy(), (A.multiply(B)).toarray())
    assert got.nnz == 1


def test_merges_take_runs_where_their_rows_start_with_one():
    src = ct.compile(
        "C(i,j) = A(i,j) * B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    merge = src.index("while (pA2 < pA2_end && pB2 < pB2_end) {")
    # The probe, before the merge: does either row start with a run of five below the other?
    probe = src[src.index("bool leaps = false;") : merge]
    assert re.search(
        r"if \(\(int64_t\)A2_crd\[pA2 \+ 4\] < \(int64_t\)B2_crd\[pB2\]\) \{\s*leaps = true;", probe
    )
    assert re.search(
        r"if \(\(int64_t\)B2_crd\[pB2 \+ 4\] < \(int64_t\)A2_crd\[pA2\]\) \{\s*leaps = true;", probe
    )
    # In the merge, only then: past the four entries the probe saw, gallop (steps doubling)
    # and search between the last two steps, O(log n) for a run of n.
    step = src[merge:]
    leap = step[step.index("if (leaps) {") :]
    assert "pA2 += 4;\n" in leap
    assert (
        "while (pA2 + gallop < pA2_end && (int64_t)A2_crd[pA2 + gallop] < (int64_t)B2_crd[pB2]) {"
        in leap
    )
    assert "gallop *= 2;" in leap and "gallop = gallop / 2;" in leap
    # After a leap, the merge reads the coordinates it carries again.
    assert "cA2 = (int64_t)A2_crd[pA2];" in leap and "cB2 = (int64_t)B2_crd[pB2];" in leap
    # A union takes no runs: its runs' entries are stored one by one either way, and a step
    # that carries its coordinates costs what a run's loop did (lower_runs.cpp).
    src = ct.compile(
        "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    assert "leaps" not in src and "gallop" not in src


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("threads", [1, 2])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_merges_with_runs_of_every_length(engine, threads, data):
    # Rows built of runs: each run's columns go to A, to B or to both, so rows start and end
    # with runs of either operand, of lengths around the leap's five; a third operand too.
    rows, cols = 6, 64
    dense = np.zeros((3, rows, cols))
    for i in range(rows):
        j = 0
        while j < cols:
            length = min(data.draw(st.integers(1, 9)), cols - j)
            owners = data.draw(st.sampled_from([(0,), (1,), (2,), (0, 1), (0, 1, 2), (1, 2)]))
            for o in owners:
                dense[o, i, j : j + length] = np.arange(1, length + 1) + j
            j += length + data.draw(st.integers(0, 2))
    A, B, D = (sp.csr_array(m) for m in dense)
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        two = ct.evaluate("C(i,j) = A(i,j) * B(i,j)", A=A, B=B, engine=engine)
        three = ct.evaluate("C(i,j) = A(i,j) * B(i,j) * D(i,j)", A=A, B=B, D=D, engine=engine)
        rowdot = ct.evaluate("y(i) = A(i,j) * B(i,j)", A=A, B=B, engine=engine)
        union = ct.evaluate("C(i,j) = A(i,j) - B(i,j)", A=A, B=B, engine=engine)
        union3 = ct.evaluate("C(i,j) = A(i,j) + B(i,j) + D(i,j)", A=A, B=B, D=D, engine=engine)
        rowsum = ct.evaluate("y(i) = 2 * A(i,j) + B(i,j)", A=A, B=B, engine=engine)
    finally:
        ct.set_num_threads(previous)
    np.testing.assert_array_equal(two.to_numpy(), dense[0] * dense[1])
    np.testing.assert_array_equal(three.to_numpy(), dense[0] * dense[1] * dense[2])
    np.testing.assert_allclose(rowdot.to_numpy(), (dense[0] * dense[1]).sum(axis=1))
    np.testing.assert_array_equal(union.to_numpy(), dense[0] - dense[1])
    assert union.nnz == np.count_nonzero(dense[0] - dense[1])
    np.testing.assert_array_equal(union3.to_numpy(), dense.sum(axis=0))
    np.testing.assert_allclose(rowsum.to_numpy(), (2 * dense[0] + dense[1]).sum(axis=1))


def test_merges_run_in_lockstep_while_the_rows_agree():
    # Rows of the same pattern are walked in lockstep (positions only count up); the merge
    # takes over from the first column where they differ.
    src = ct.compile(
        "C(i,j) = A(i,j) + B(i,j) + D(i,j)",
        formats={"A": "csr", "B": "csr", "D": "csr", "C": "csr"},
    ).source("c")
    lockstep = (
        "while (pA2 < pA2_end && pB2 < pB2_end && pD2 < pD2_end && (int64_t)B2_crd[pB2] == "
        "(int64_t)A2_crd[pA2] && (int64_t)D2_crd[pD2] == (int64_t)A2_crd[pA2]) {"
    )
    assert lockstep in src
    body = src[src.index(lockstep) : src.index("while", src.index(lockstep) + 1)]
    assert "C_vals[C2_count] = A_vals[pA2] + B_vals[pB2] + D_vals[pD2];" in body
    assert re.search(r"pA2\+\+;\s*pB2\+\+;\s*pD2\+\+;", body)
    # Not where positions cannot be compared this way (a dense operand's dimension).
    src = ct.compile("y(i) = a(i) + b(i)", formats={"a": "s", "b": "d", "y": "s"}).source("c")
    assert "==" not in src.split("while", 1)[-1].split("{", 1)[0]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("result", ["csr", "dcsr", "coo"])
def test_intersection_keeps_only_entries_both_operands_store(engine, result):
    # Where only A stores an entry (inf, nan) the product is computed and discarded; where
    # both do and it is zero, it is not stored (as SciPy's A.multiply(B)).
    A = sp.csr_array(
        np.array([[np.inf, 2.0, 0.0, 3.0], [np.nan, 0.0, 5.0, 0.0], [1.0, 0.0, 0.0, 4.0]])
    )
    B = sp.csr_array(np.array([[0.0, 3.0, 1.0, 0.0], [0.0, 7.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]]))
    A2 = A.copy()
    A2.data[A2.data == 3.0] = 0.0  # an explicit zero that meets B nowhere
    B2 = B.copy()
    B2.data[B2.data == 2.0] = 0.0  # an explicit zero that meets A's 5: a zero product
    kern = ct.compile(
        "C(i,j) = A(i,j) * B(i,j)", formats={"A": "csr", "B": "csr", "C": result}, engine=engine
    )
    C = kern(A=ct.asarray(A2), B=ct.asarray(B2))
    np.testing.assert_array_equal(
        C.to_numpy(), np.array([[0, 6.0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    )
    assert C.nnz == 1


def test_dense_result_of_a_loop_that_skips_rows_starts_at_zero():
    # DCSR's row loop visits stored rows only: the others keep the zero y starts at.
    src = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "dcsr", "x": "d", "y": "d"}).source("c")
    assert "y_vals[py1] += acc0;" in src


def test_spmspv_is_one_while_merge():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "dcsr", "x": "s", "y": "d"})
    src = kern.source("c")
    # The rows in lockstep while they agree, the merge, and a gallop and a search over a run
    # of each one's entries that the other's coordinate is beyond.
    assert loops(kern) == (1, 6)
    assert "int64_t j = coiter_min_i64(jA_0, jx_0);" in src
    assert "if (jA_0 == j && jx_0 == j)" in src


def test_a_merge_row_empty_in_every_operand_is_skipped_at_one_test():
    # A sum's row runs where some operand's segment holds an entry, a product's where all do
    # (the point A alone holds for A and B together: its test is implied and left out).
    src = ct.compile(
        "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    assert "if (pA2 < pA2_end || pB2 < pB2_end) {" in src
    src = ct.compile(
        "C(i,j) = A(i,j) * B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    assert "if (pA2 < pA2_end && pB2 < pB2_end) {" in src
    # Not where a point walks the dimension (a dense operand's row is never empty).
    src = ct.compile(
        "C(i,j) = A(i,j) + D(i,j)", formats={"A": "csr", "D": "dense", "C": "dense"}
    ).source("c")
    assert "pA2 < pA2_end ||" not in src


def test_sparse_add_is_a_merge_and_two_drains():
    kern = ct.compile("a(i) = b(i) + c(i)", formats={"a": "s", "b": "s", "c": "s"})
    for_loops, while_loops = loops(kern)
    assert for_loops + while_loops == 4
    # Lockstep while the coordinates agree, the merge, and the first drain that continues its
    # iterators (a union takes no runs: lower_runs.cpp).
    assert while_loops == 3


def test_a_sum_merge_selects_its_operands_instead_of_branching():
    # Every region of b + c is b + c with the absent operand read as zero: one body, no
    # if-chain (lower_merge_selects.cpp).
    src = ct.compile("a(i) = b(i) + c(i)", formats={"a": "s", "b": "s", "c": "s"}).source("c")
    assert "(ib_0 == i ? b_vals[pb1] : 0.0) + (ic_0 == i ? c_vals[pc1] : 0.0)" in src
    assert "else if" not in src
    src3 = ct.compile(
        "a(i) = b(i) - c(i) + d(i)", formats={"a": "s", "b": "s", "c": "s", "d": "s"}
    ).source("c")
    assert "else if" not in src3


# (Not b(i) / c(i) with c sparse: c's unstored zeros divide, 0 / 0 is NaN there as on dense
# arrays, so nothing annihilates and reading an absent operand as zero is right.)
@pytest.mark.parametrize("expression", ["a(i) = (b(i) + c(i)) * d(i)", "a(i) = b(i) * c(i) + d(i)"])
def test_a_merge_where_zero_annihilates_keeps_its_branches(expression):
    # b * 0 would be computed (NaN for an infinite b) where the region has no entry.
    formats = {"a": "s", "b": "s", "c": "s", "d": "s"}
    src = ct.compile(
        expression, formats={k: v for k, v in formats.items() if k + "(" in expression}
    ).source("c")
    assert " ? b_vals" not in src


@pytest.mark.parametrize("engine", ENGINES)
def test_selected_merges_keep_infinities_and_nans_where_numpy_has_them(engine):
    # Entries of b alone, c alone and both, with infinities and NaNs in each region.
    b = np.array([np.inf, 0, -np.inf, 1.0, np.nan, 0, 2.0, 0])
    c = np.array([0, np.inf, 5.0, 0, 0, np.nan, -2.0, 0])
    d = np.array([1.0, 2.0, 0, np.inf, 3.0, 0, 1.0, 4.0])
    B, C, D = (ct.asarray(sp.csr_matrix(v.reshape(1, -1))) for v in (b, c, d))
    with np.errstate(invalid="ignore"):
        product = np.where((d != 0) & ((b != 0) | (c != 0)), (b + c) * d, 0.0)
    for expression, expected in [
        ("A(k,i) = B(k,i) + C(k,i)", b + c),
        ("A(k,i) = B(k,i) - C(k,i) + D(k,i)", b - c + d),
        ("A(k,i) = (B(k,i) + C(k,i)) * D(k,i)", product),
    ]:
        got = ct.evaluate(expression, B=B, C=C, D=D, out_format="csr", engine=engine).to_numpy()[0]
        np.testing.assert_array_equal(got, expected, err_msg=expression)


def test_coo_spmv_is_a_single_loop():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "coo", "x": "d", "y": "d"})
    src = kern.source("c")
    # One loop over the entries; COO's rows repeat, so the default schedule gives each thread
    # its own copy of y, and the other three loops add the copies up after it (by blocks of
    # y, each block copy by copy).
    assert loops(kern) == (4, 0)
    assert re.search(
        r"for \(int64_t pA1 = .*A1_pos\[0\]; pA1 < .*A1_pos\[1\]; pA1\+\+\) \{\n"
        r"    const int64_t coiter_thread = \(int64_t\)omp_get_thread_num\(\);\n"
        r"    uint32_t invalid_coordinate_0 = 0;\n"
        r"    invalid_coordinate_0 = invalid_coordinate_0 \| "
        r".*A1_crd\[pA1\] - coiter_min_u32.*A_dim0 - 1.*;\n"
        r"    int64_t i = .*A1_crd\[pA1\].*;",
        src,
    )
    # The blocks are divided among the threads; within one, the loop over its entries is
    # innermost (Ctrl-C is checked per block and copy, not per entry).
    assert re.search(
        r"#pragma omp parallel for schedule\(static\).*\n"
        r"\s+for \(int64_t merged_block = 0; "
        r"merged_block < \(y_size \+ 4095\) / 4096; merged_block\+\+\)",
        src,
    )
    assert re.search(
        r"for \(int64_t thread = 0; thread < nthreads; thread\+\+\) \{\n"
        r"(?:\s+if \(\(\*coiter_rt_interrupt_flag != 0\)\) \{\n\s+break;\n\s+\}\n)?"
        r"\s+for \(int64_t q = merged_first; q < merged_stop; q\+\+\) \{\n"
        r"\s+y_vals\[q\] \+= y_private\[thread \* y_size \+ q\];",
        src,
    )


def test_dcsr_spmv_is_nested_position_loops():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "dcsr", "x": "d", "y": "d"})
    src = kern.source("c")
    assert loops(kern) == (2, 0)
    assert re.search(r"for \(int64_t pA1 = .*A1_pos\[0\]", src)
    assert re.search(r"for \(int64_t pA2 = .*A2_pos\[pA1\]", src)


def test_llvm_source_is_llvm_ir():
    if not _core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    ir = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}).source("llvm")
    assert "define" in ir and "ret i32" in ir


def test_llvm_knows_operands_and_results_do_not_overlap():
    # Each array gets its own alias scope, so SpMM's inner loop is vectorized without
    # runtime overlap checks and A's value is read once per nonzero.
    if not _core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    ir = ct.compile(
        "Y(i,j) = A(i,k) * X(k,j)", formats={"A": "csr", "X": "dense", "Y": "dense"}
    ).source("llvm")
    assert "!alias.scope" in ir and "!noalias" in ir
    assert "vector.body" in ir and "vector.memcheck" not in ir


def test_a_private_copy_that_may_be_the_result_shares_its_alias_scope():
    # With one thread the `temporary` strategy's private copy is the result itself: the two
    # are one group of buffers (ir/distinct_buffers.hpp), with one alias scope, distinct from
    # the operands' (so x[i] is read once per row of a transposed product), and the kernel
    # stays right.
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr"},
        engine="llvm" if _core.with_llvm else "c",
        schedule="fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,3);parallelize(fp0,cpu_thread,temporary)",
    )
    A = sp.random(30, 20, density=0.3, format="csr", random_state=3)
    x = np.arange(20.0)
    previous = ct.get_num_threads()
    try:
        for threads in (1, 2):
            ct.set_num_threads(threads)
            np.testing.assert_allclose(np.asarray(kern(A=ct.asarray(A), x=x)), A @ x)
    finally:
        ct.set_num_threads(previous)
    if _core.with_llvm:
        # Stores into the private copy (the product) and into the result (the merge).
        stores = [
            line
            for line in kern.source("llvm").splitlines()
            if line.lstrip().startswith("store double")
        ]
        scopes = {re.search(r"!alias\.scope (![0-9]+)|$", line).group(1) for line in stores}
        assert len(stores) >= 2 and len(scopes) == 1 and None not in scopes


# -- lazy evaluation and the [] front end ----------------------------------------------------------
def test_assignment_is_lazy_and_recomputed_on_reassignment():
    i, j = ct.indices("i j")
    A = ct.asarray(sp.random(8, 9, density=0.3, format="csr", random_state=0), name="A")
    x = ct.asarray(np.arange(9.0), name="x")
    y = ct.zeros((8,), "dense")
    y[i] = A[i, j] * x[j]
    assert y._definition is not None
    np.testing.assert_allclose(np.asarray(y), A.to_scipy() @ np.arange(9.0))
    y[i] = 2 * A[i, j] * x[j]
    np.testing.assert_allclose(y.to_numpy(), 2 * (A.to_scipy() @ np.arange(9.0)))


def test_plus_equals_accumulates_into_current_contents():
    i, j = ct.indices("i j")
    A = ct.asarray(sp.random(5, 6, density=0.5, format="csr", random_state=1), name="A")
    x = ct.asarray(np.ones(6), name="x")
    y = ct.asarray(np.arange(5.0))
    y[i] += A[i, j] * x[j]
    np.testing.assert_allclose(y.to_numpy(), np.arange(5.0) + A.to_scipy() @ np.ones(6))


def test_compile_of_a_definition_is_bound_to_its_tensors():
    i, j = ct.indices("i j")
    A = ct.asarray(sp.random(5, 6, density=0.5, format="csr", random_state=2), name="A")
    x = ct.asarray(np.ones(6), name="x")
    y = ct.zeros((5,), "dense", name="y")
    y[i] = A[i, j] * x[j]
    kern = ct.compile(y)
    assert kern.inputs == ["A", "x"]
    kern()
    np.testing.assert_allclose(y.values, A.to_scipy() @ np.ones(6))
    z = kern(x=ct.asarray(2 * np.ones(6)))
    np.testing.assert_allclose(z.values, 2 * (A.to_scipy() @ np.ones(6)))


def test_scalar_result_with_explicit_sum():
    i = ct.IndexVar("i")
    x = ct.asarray(np.arange(4.0), name="x")
    s = ct.zeros((), "dense")
    s[()] = ct.sum(i, x[i] * x[i])
    assert float(s.values[0]) == 14.0


def test_spgemm_sorts_its_workspace_only_for_an_ordered_result():
    unordered = ct.Format([ct.dense, ct.compressed(ordered=False)])
    sorted_src = ct.compile(
        "C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"}
    ).source("c")
    kern = ct.compile("C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": unordered})
    assert "coiter_rt_sort_coordinates(" in sorted_src
    assert "coiter_rt_sort_coordinates(" not in kern.source("c")
    A = sp.random(40, 50, density=0.1, format="csr", random_state=5)
    B = sp.random(50, 30, density=0.1, format="csr", random_state=6)
    C = kern(A=ct.asarray(A), B=ct.asarray(B))
    np.testing.assert_allclose(C.to_numpy(), (A @ B).toarray())


def _rows_in_order(result):
    """The result's compressed levels hold increasing coordinates under each parent."""
    for level in result.levels:
        if level.type.name != "compressed":
            continue
        for start, end in zip(level.pos[:-1], level.pos[1:]):
            assert np.all(np.diff(level.crd[start:end]) > 0), result.levels


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("out_format", ["ds", "ss"])
@pytest.mark.parametrize("schedule", [None, "reorder(k,i)"])
def test_a_hashed_operand_located_where_the_result_appends_rows_in_order(
    engine, out_format, schedule
):
    # Fuzz case 2,624,967: the loop over k, above w's appended level, iterated B's buckets
    # (k = 5 before k = 2) and laid w's rows out in that order under offsets that assume
    # coordinate order: row 2 got row 5's entries. B must be located, the rows walked in order.
    A = sp.random_array((6, 5), density=0.6, format="csr", random_state=3)
    B = np.array([0.0, 0.0, 1.0, 0.0, 0.0, -1.0])
    hashed = ct.asarray(B, format=ct.Format([ct.hashed(buckets=4)]))
    assert [int(c) for c in hashed.levels[0].crd if c >= 0] == [5, 2]  # bucket order
    kern = ct.compile(
        "w(k,i) = A(k,i) * B(k)",
        formats={"A": "csr", "B": hashed.format, "w": out_format},
        schedule=schedule,
        engine=engine,
    )
    w = kern(A=ct.asarray(A), B=hashed)
    np.testing.assert_allclose(w.to_numpy(), A.toarray() * B[:, None])
    _rows_in_order(w)


UNORDERED_ROWS = ct.Format([ct.dense, ct.compressed(ordered=False)])


def unordered_rows():
    """A 2 x 4 matrix whose first row stores its columns as 3, 0."""
    return ct.Tensor._from_level_arrays(
        UNORDERED_ROWS,
        (2, 4),
        np.int32,
        [{}, {"pos": [0, 2, 3], "crd": [3, 0, 2]}],
        [{"size": 2}, {}],
        [1.0, 2.0, 3.0],
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unordered_operand_cannot_drive_an_ordered_result_layout(engine):
    # A level that can be neither located nor iterated in order, under a loop whose order the
    # result's layout depends on: refused, never a result whose rows or columns are out of the
    # order its format promises.
    A = unordered_rows()
    b = ct.Tensor._from_level_arrays(
        ct.Format([ct.compressed(ordered=False)]),
        (4,),
        np.int32,
        [{"pos": [0, 2], "crd": [3, 0]}],
        [{}],
        [2.0, 3.0],
    )
    M = sp.random_array((4, 3), density=0.7, format="csr", random_state=4)
    cases = [
        ("w(k,i) = A(k,i) * 2", {"A": A}, "'i'", "A2", A.to_numpy() * 2),
        (
            "w(k,i) = M(k,i) * b(k)",
            {"M": ct.asarray(M), "b": b},
            "'k'",
            "b1",
            M.toarray() * b.to_numpy()[:, None],
        ),
    ]
    for statement, operands, loop, level, expected in cases:
        formats = {name: t.format for name, t in operands.items()}
        for out_format in ["ds", "ss"]:
            with pytest.raises(
                ct.FormatError, match=f"loop {loop} .* iterates {level}, an unordered level"
            ):
                ct.compile(statement, formats={**formats, "w": out_format}, engine=engine)
        # Where the result's order is free (unordered columns, dense), the same loops compute.
        for out_format in ["dense", UNORDERED_ROWS] if loop == "'i'" else ["dense"]:
            kern = ct.compile(statement, formats={**formats, "w": out_format}, engine=engine)
            np.testing.assert_allclose(kern(**operands).to_numpy(), expected)


def test_an_unordered_level_that_cannot_be_located_is_not_merged():
    # Neither merged (its coordinates come in no order) nor located (it has no lookup): the
    # lattice refuses it with the operand's level named, where lowering used to fail with an
    # internal "cannot be located".
    for statement in ["C(i,j) = A(i,j) + B(i,j)", "C(i,j) = A(i,j) * B(i,j)"]:
        with pytest.raises(ct.FormatError, match="operand level A2 is unordered and cannot be"):
            ct.compile(statement, formats={"A": UNORDERED_ROWS, "B": "csr", "C": "dense"})
    # Beside operands it can drive (dense ones are located at its coordinates), it computes.
    A = unordered_rows()
    D = np.arange(8.0).reshape(2, 4)
    C = ct.evaluate("C(i,j) = A(i,j) * D(i,j)", A=A, D=D, out_format="dense")
    np.testing.assert_allclose(C.to_numpy(), A.to_numpy() * D)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fmt", ["dense", "hashed"])
def test_workspace_rows_are_sorted_by_bitmap_by_comparison_and_by_radix(fmt, engine):
    # Rows of a Gustavson SpGEMM whose touched columns lie close together (bitmap sort),
    # spread out and few (vector sorting networks, or std::sort), and spread out and many
    # (radix sort: three 8-bit digits over 2^20 columns, five over the hashed workspace's
    # 2^40): every row of the result must come out sorted and right.
    rng = np.random.default_rng(31)
    n = 2**40 if fmt == "hashed" else 2**20
    rows, cols = [], []
    for k in range(300):  # C's row k: two columns, close together for k < 100, else anywhere
        base = rng.integers(0, 1000) if k < 100 else rng.integers(0, n - 1)
        rows += [k, k]
        cols += [base, base + 1 + (k % 7)]
    C = ct.from_coords(np.array([rows, cols]).T, rng.random(len(rows)), (300, n), format="csr")
    B_dense = np.zeros((3, 300))
    B_dense[0, :100] = 1.0  # 200 columns within ~1000: bitmap
    B_dense[1, 100:130] = 2.0  # 60 columns anywhere: comparisons
    B_dense[2, 100:300] = rng.random(200)  # 400 columns anywhere: radix sort
    schedule = f"reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw],{fmt})"
    kern = ct.compile(
        "A(i,j) = B(i,k) * C(k,j)",
        formats={"B": "csr", "C": "csr", "A": "csr"},
        schedule=schedule,
        engine=engine,
    )
    coords, values = kern(B=ct.asarray(B_dense, format="csr"), C=C).coords()
    coords = np.asarray(coords)
    expected = {}
    C_coords, C_values = C.coords()
    for (k, j), c in zip(np.asarray(C_coords), C_values):
        for i in range(3):
            if B_dense[i, k]:
                expected[(i, int(j))] = expected.get((i, int(j)), 0.0) + B_dense[i, k] * c
    keys = sorted(expected)
    assert [tuple(int(v) for v in c) for c in coords] == keys  # sorted by row, then column
    np.testing.assert_allclose(values, [expected[key] for key in keys], rtol=1e-14)
