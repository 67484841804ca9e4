"""The legality of schedules is decided before lowering (docs/schedules.md, "Legality"): every
command that cannot apply is refused by the schedule stage with a ct.ScheduleError naming the
command and the failed condition. ct.schedule_problem asks the same question without
compiling: it returns the reason (or None), and no kernel is lowered, compiled or cached."""

import re

import numpy as np
import pytest

import coiter as ct

SPMV = "y(i) = A(i,j) * x(j)"
SPGEMM = "A(i,j) = B(i,k) * C(k,j)"
SDDMM = "A(i,j) = B(i,j) * C(i,k) * D(k,j)"
CSR3 = {"B": "csr", "C": "csr", "A": "csr"}
MTTKRP = "A(i,j) = B(i,k,l) * D(l,j) * C(k,j)"
MTTKRP_FORMATS = {"B": "csf", "C": "dense", "D": "dense", "A": "dense"}

# (statement, formats, schedule, target, reason): one case per refused condition.
REFUSED = [
    (  # (the loop carries the row from one position to the next: split it, then parallelize)
        SPMV,
        {"A": "csr"},
        "fuse(i,j,f);pos(f,fp,A(i,j));parallelize(fp,cpu_thread,atomics)",
        "cpu",
        "a loop over the positions of fused loops carries their coordinates from one position",
    ),
    # -- applying a command ------------------------------------------------------------------
    (
        SPMV,
        {"A": "csr"},
        "split(q,q0,q1,4)",
        "cpu",
        r"split\(q,q0,q1,4\): unknown index variable 'q'",
    ),
    (
        SPMV,
        {"A": "csr"},
        "divide(i,i0,i1,4);reorder(i1,i0)",
        "cpu",
        r"reorder\(i1,i0\): .*cannot move outside it",
    ),
    (SPMV, {"A": "csr"}, "unroll(i,4)", "cpu", r"unroll\(i,4\): loop 'i' has no fixed size"),
    (SPMV, {"A": "csr"}, "parallelize(i,gpu_thread,no_races)", "cpu", "needs target='cuda'"),
    (SPMV, {"A": "csr"}, "split(i,i0", "cpu", "schedule"),  # malformed text
    (
        "y(i) = A(i,j) * x(j) + z(i)",
        {"A": "csr"},
        "reorder(j,i)",
        "cpu",
        r"reorder\(j,i\): .*not directly nested",
    ),
    (
        SPGEMM,
        CSR3,
        "reorder(i,k,j);precompute(B(i,k)+C(k,j),[j],[j])",
        "cpu",
        "not a subexpression",
    ),
    (
        "y(i) = sum(k, B(i,k) + c(i))",
        {"B": "dense"},
        "precompute(B(i,k),[i],[i])",
        "cpu",
        "does not distribute",
    ),
    (
        "A(i) = B(i) * C(i)",
        {},
        "split(i,i0,i1,4);precompute(B(i)*C(i),i1,i1w,hashed)",
        "cpu",
        "a workspace over a derived loop .* is a dense array",
    ),
    (
        SPMV,
        {"A": "csr"},
        "pos(j,jp,B(i,j))",
        "cpu",
        r"pos\(j,jp,B\(i,j\)\): .*not an operand access",
    ),
    (
        SPMV,
        {"A": "csr"},
        "fuse(j,i,f)",
        "cpu",
        r"fuse\(j,i,f\): loop 'i' is not directly inside loop 'j'",
    ),
    # -- loop order ------------------------------------------------------------------------------
    (
        SPMV,
        {"A": "csr"},
        "reorder(j,i)",
        "cpu",
        r"loop order: A\(i,j\) would be traversed out of order",
    ),
    (
        SPGEMM,
        CSR3,
        "reorder(i,k,j);assemble(A,append)",
        "cpu",
        "level 2 of the result A would be appended to once per value of the index 'k'",
    ),
    (  # (a CSR result would keep B's pattern, and accumulate at its positions: test_result_pattern)
        SDDMM,
        {"B": "csr", "C": "dense", "D": "dense", "A": "dcsr"},
        "split(i,i0,i1,16);pos(j,jp,B(i,j));split(jp,jp0,jp1,8);reorder(i0,i1,jp0,k,jp1)",
        "cpu",
        "level 2 of the result A would be appended to once per value of the index 'k'",
    ),
    # -- strided walks: a split's inner loop outside its outer loop -------------------------------
    (
        SPMV,
        {"A": "csr"},
        "split(j,j0,j1,4);reorder(i,j1,j0)",
        "cpu",
        "loop 'j1' iterates inside one block of 'j0' .* but is outside that loop; a strided walk "
        "locates every operand, but A is sparse over 'j'",
    ),
    (
        SPMV,
        {"A": "dense"},
        "fuse(i,j,f);split(f,f0,f1,4);reorder(f1,f0)",
        "cpu",
        "a strided walk visits coordinates or stored positions, not the fused loop 'f'",
    ),
    (
        "C(i,j) = A(i,j) * D(i,j)",
        # (A in DCSR: a CSR A would give C its pattern, and no appends: test_result_pattern.py)
        {"A": "dcsr", "D": "dense", "C": "csr"},
        "pos(j,jp,A(i,j));split(jp,jp0,jp1,4);reorder(i,jp1,jp0)",
        "cpu",
        "a strided walk cannot append to the sparse result C",
    ),
    (
        SPMV,
        {"A": "csr", "x": "s"},
        "pos(j,jp,A(i,j));split(jp,jp0,jp1,4);reorder(i,jp1,jp0)",
        "cpu",
        r"pos\(j,jp,A\(i,j\)\): x is sparse over 'j' and cannot be located at A's positions",
    ),
    (
        "C(i,j) = A(i,j) * D(i,j)",
        {"A": "dense", "D": "dense", "C": "csr"},
        "split(j,j0,j1,4);reorder(i,j1,j0)",
        "cpu",
        "a strided walk cannot append to the sparse result C",
    ),
    (
        SPMV,
        {"A": ct.bcsr((2, 2))},
        "split(i,i0,i1,2);reorder(i1,i0)",
        "cpu",
        "a strided walk locates every operand, but A stores blocks or diagonals of 'i'",
    ),
    (
        "C(i,j) = A(i,j) * D(i,j)",
        {"A": "dense", "D": "dense", "C": "csr"},
        "reorder(j,i);assemble(C,append)",
        "cpu",
        r"the result C would be appended out of order \(its levels are iterated in a different",
    ),
    (
        # The blocks of j around the rows: each row of C would be appended to once per block
        # (this once computed a wrong result).
        "C(i,j) = A(i,t) * B(j,t)",
        {"A": "csr", "B": "csr", "C": "csr"},
        "reorder(i,j,t);split(j,j0,j1,256);reorder(j0,i,j1,t)",
        "cpu",
        r"the result C would be appended out of order \(its levels are iterated in a different",
    ),
    # -- loops restricted to a block --------------------------------------------------------------
    (
        SPMV,
        {"A": "dia"},
        "split(j,j0,j1,4)",
        "cpu",
        "loop 'j1' iterates A3, whose coordinates are computed, not stored",
    ),
    (
        SPGEMM,
        CSR3,
        "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw]);split(j,j0,j1,4)",
        "cpu",
        "loop 'j1' iterates the workspace ws0 .*cannot be restricted to a block",
    ),
    (SPMV, {"A": "dh"}, "split(j,j0,j1,4)", "cpu", "loop 'j1' iterates A2, an unordered level"),
    # -- pos and fuse ---------------------------------------------------------------------------
    (
        SPMV,
        {"A": "csr"},
        "pos(i,ip,A(i,j))",
        "cpu",
        r"pos\(i,ip,A\(i,j\)\): level 1 of A is not compressed",
    ),
    (SPMV, {"A": "dense"}, "fuse(i,j,f);pos(f,fp,A(i,j))", "cpu", "stored like CSR"),
    (
        "y(i) = A(i,j) * x(j) + B(i,j) * x(j)",
        {"A": "csr", "B": "csr"},
        "fuse(i,j,f);pos(f,fp,A(i,j))",
        "cpu",
        "the statement is not zero where it is",
    ),
    (
        "y(i) = A(i,j) * B(i,j)",
        {"A": "csr", "B": "csr"},
        "fuse(i,j,f);pos(f,fp,A(i,j))",
        "cpu",
        "B is sparse over 'j' and cannot be located at A's positions",
    ),
    (
        "y(i) = B(i,j,k) * c(k)",
        {"B": "dds"},
        "fuse(j,k,jk);fuse(i,jk,f);pos(f,fp,B(i,j,k))",
        "cpu",
        "stored like CSR or CSF",
    ),
    (
        "y(i) = B(i,j,k) * c(k)",
        {"B": "csf"},
        "pos(k,kp,B(i,j,k));reorder(kp,j)",
        "cpu",
        "the levels of B above the loop's are not iterated by the loops around it",
    ),
    (SPMV, {"A": "csr"}, "fuse(i,j,f)", "cpu", "iterate its positions with pos"),
    (
        "C(i,j) = A(i,j) * 2",
        {"A": "dense", "C": "csr"},
        "fuse(i,j,f)",
        "cpu",
        "a fused loop cannot append to the sparse result C",
    ),
    (
        "C(i,j) = A(i,j) * D(i,j)",
        # (A in DCSR: a CSR A would give C its pattern, and no appends: test_result_pattern.py)
        {"A": "dcsr", "D": "dense", "C": "csr"},
        "fuse(i,j,f);pos(f,fp,A(i,j))",
        "cpu",
        "a loop over the positions of fused loops cannot append to the sparse result C",
    ),
    (
        "C(i,j) = A(i,j) * D(i,j)",
        {"A": "du", "D": "dense", "C": "csr"},
        "pos(j,jp,A(i,j))",
        "cpu",
        "appends an entry of the sparse result C per position of A, whose level 2 is not unique",
    ),
    (
        "C(i,j,k) = A(i,j,k) * 2",
        {"A": "dense", "C": "dense"},
        "fuse(i,j,f);fuse(f,k,g)",
        "cpu",
        r"fuse\(f,k,g\): only two plain loops can be fused without pos",
    ),
    # -- workspaces -------------------------------------------------------------------------------
    (
        SPGEMM,
        CSR3,
        "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw],compressed)",
        "cpu",
        "a compressed workspace is appended in coordinate order, "
        "so the loop over 'jw' must be the outermost",
    ),
    (
        MTTKRP,
        MTTKRP_FORMATS,
        "reorder(i,k,l,j);precompute(B(i,k,l)*D(l,j),j,j,hashed);parallelize(i,cpu_thread,no_races)",
        "cpu",
        "a hashed workspace cannot be inside a parallel loop",
    ),
    # -- parallel loops ---------------------------------------------------------------------------
    (
        "a(i) = b(i) + c(i)",
        {"b": "s", "c": "s", "a": "d"},
        "parallelize(i,cpu_thread,no_races)",
        "cpu",
        r"parallelize\(i,cpu_thread,no_races\): the loop coiterates several operands",
    ),
    (
        "a(i) = b(i) + c(i)",
        {"b": "s", "c": "s", "a": "d"},
        "parallelize(i,cpu_vector,no_races)",
        "cpu",
        "coiterates several operands",
    ),
    (
        "C(i,k) = A(i,j) * B(j,k)",
        {"A": "csr", "B": "dense", "C": "dense"},
        "parallelize(i,cpu_thread,no_races);parallelize(k,cpu_thread,no_races)",
        "cpu",
        "nested inside another parallel loop",
    ),
    (
        "A(i,j) = B(i,j) * C(i,j)",
        {"B": "dcsr", "C": "dcsr", "A": "dcsr"},
        "parallelize(i,cpu_thread,no_races)",
        "cpu",
        "the sparse result A .* is assembled in parallel only by the loop over its first, "
        "dense level",
    ),
    (
        "C(i,j) = A(i,j) * D(i,j)",
        # (A in DCSR: a CSR A would give C its pattern, and no appends: test_result_pattern.py)
        {"A": "dcsr", "D": "dense", "C": "csr"},
        "parallelize(j,cpu_thread,no_races)",
        "cpu",
        "the loop appends entries to the sparse result C",
    ),
    (
        MTTKRP,
        MTTKRP_FORMATS,
        "reorder(i,k,l,j);precompute(B(i,k,l)*D(l,j),j,j);parallelize(l,cpu_thread,atomics)",
        "cpu",
        "updates the temporary ws0, which is shared by its iterations",
    ),
    (
        SPMV,
        {"A": "csr"},
        "parallelize(j,cpu_thread,no_races)",
        "cpu",
        r"iterations update the same entries of y \(it is not indexed by j\)",
    ),
    (
        SPMV,
        {"A": "coo"},
        "parallelize(i,cpu_thread,no_races)",
        "cpu",
        "non-unique level, whose coordinates repeat",
    ),
    (
        "y(j) = A(i,j) * x(i)",
        {"A": "csr"},
        "parallelize(i,cpu_vector,atomics)",
        "cpu",
        "a vectorized loop cannot reduce into it",
    ),
    # -- GPU loops (target="cuda": judged without a GPU) -------------------------------------------
    (
        "C(i,j) = A(i,j) * D(i,j)",
        # (A in DCSR: a CSR A would give C its pattern, and no appends: test_result_pattern.py)
        {"A": "dcsr", "D": "dense", "C": "csr"},
        "parallelize(j,gpu_thread,no_races)",
        "cuda",
        "appends entries to rows of the sparse result C that other iterations also append to; "
        "a result assembled in two passes is filled in parallel only by a loop over its rows",
    ),
    (
        "C(i,k) = A(i,j) * B(j,k)",
        {"A": "csr", "B": "dense", "C": "dense"},
        "parallelize(i,gpu_thread,no_races);parallelize(k,gpu_block,no_races)",
        "cuda",
        "GPU loops nest as gpu_block",
    ),
    (
        "y(i) = A(i,j) * x(j) + z(i)",
        {"A": "csr"},
        "parallelize(i,gpu_block,no_races);parallelize(j,gpu_thread,atomics)",
        "cuda",
        "updates the temporary t0, which is shared by its iterations; choose parallel_reduction",
    ),
    (SPMV, {"A": "csr"}, "parallelize(j,gpu_thread,temporary)", "cuda", "on a GPU, choose atomics"),
]

LEGAL = [
    (SPMV, {"A": "csr"}, "split(i,i0,i1,4);reorder(i1,i0)", "cpu"),
    (
        "A(i,k) = B(i,k) * C(i,j) * D(j,k)",
        {"B": "csr", "C": "dense", "D": "dense", "A": "dense"},
        "split(j,ju,t,32);bound(ju,jb,4,MaxExact);reorder(i,t,jb,k)",
        "cpu",
    ),
    (
        "y(j) = A(i,j) * x(i)",
        {"A": "csr", "y": "dense"},
        "parallelize(i,cpu_thread,atomics)",
        "cpu",
    ),
    (SPMV, {"A": "csr"}, "split(i,i0,i1,32);parallelize(i0,cpu_thread,no_races)", "cpu"),
    (SPMV, {"A": "csr"}, "pos(j,jp,A(i,j));split(jp,jp0,jp1,4);reorder(i,jp1,jp0)", "cpu"),
    (
        SPMV,
        {"A": "csr"},
        "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,64);parallelize(fp0,cpu_thread,atomics)",
        "cpu",
    ),
    (
        SPGEMM,
        CSR3,
        "reorder(i,k,j);precompute(B(i,k)*C(k,j),j,j);parallelize(i,cpu_thread,no_races)",
        "cpu",
    ),
    (
        "C(i,k) = A(i,j) * B(j,k)",
        {"A": "csr", "B": "dense", "C": "dense"},
        "parallelize(k,cpu_vector,ignore_races)",
        "cpu",
    ),
    (
        SPMV,
        {"A": "csr"},
        "parallelize(i,gpu_block,no_races);parallelize(j,gpu_thread,parallel_reduction)",
        "cuda",
    ),
]


def _case_id(case):
    return f"{case[0]} | {case[2]}"


@pytest.mark.parametrize(
    "stmt,formats,schedule,target,reason", REFUSED, ids=[_case_id(c) for c in REFUSED]
)
def test_refused_before_compiling(stmt, formats, schedule, target, reason):
    before = ct.cache_info()
    problem = ct.schedule_problem(stmt, schedule, formats=formats, target=target)
    assert problem is not None
    assert re.search(reason, problem), problem
    after = ct.cache_info()
    # Nothing was lowered into a kernel, compiled or cached.
    for key in ("hits", "misses", "compiles", "entries"):
        assert after[key] == before[key], key
    if target == "cpu":
        # The compiler refuses it in the schedule stage, with the same reason.
        with pytest.raises(ct.ScheduleError) as info:
            ct.compile(stmt, formats=formats, schedule=schedule, engine="c")
        assert str(info.value) == problem
        assert ct.cache_info()["compiles"] == before["compiles"]


def test_race_strategies_are_judged_with_the_result_dtype():
    # Atomic updates exist for numbers, not for booleans (the dtype is part of the statement).
    schedule = "parallelize(j,cpu_thread,atomics)"
    problem = ct.schedule_problem(SPMV, schedule, formats={"A": "csr"}, dtype=np.bool_)
    assert (
        problem == "parallelize(j,cpu_thread,atomics): atomic add on bool values is not supported"
    )
    with pytest.raises(ct.ScheduleError, match="atomic add on bool"):
        ct.compile(SPMV, formats={"A": "csr"}, dtype=np.bool_, schedule=schedule)
    assert ct.schedule_problem(SPMV, schedule, formats={"A": "csr"}, dtype=np.complex128) is None


@pytest.mark.parametrize("stmt,formats,schedule,target", LEGAL, ids=[_case_id(c) for c in LEGAL])
def test_legal_schedules_have_no_problem(stmt, formats, schedule, target):
    assert ct.schedule_problem(stmt, schedule, formats=formats, target=target) is None
    assert (
        ct.schedule_problem(stmt, ct.Schedule.parse(schedule), formats=formats, target=target)
        is None
    )


def test_a_definition_is_judged_with_its_tensors_formats():
    i, j = ct.indices("i j")
    A = ct.asarray(np.eye(4), format="csr")
    x = ct.asarray(np.ones(4))
    y = ct.zeros(4)
    y[i] = A[i, j] * x[j]
    assert ct.schedule_problem(y, "split(i,i0,i1,2)") is None
    assert "traversed out of order" in ct.schedule_problem(y, "reorder(j,i)")
    # With A in CSC, the same order traverses A in its storage order.
    assert ct.schedule_problem(y, "reorder(j,i)", formats={"t0": "csc"}) is None


def test_every_legal_answer_compiles_and_computes():
    # What schedule_problem accepts, the compiler lowers: nothing in between refuses it.
    rng = np.random.default_rng(3)
    A = rng.random((9, 7)) * (rng.random((9, 7)) < 0.4)
    x = rng.random(7)
    for schedule in [
        "split(i,i0,i1,4)",
        "split(j,j0,j1,3)",
        "pos(j,jp,A(i,j))",
        "fuse(i,j,f);pos(f,fp,A(i,j))",
        "parallelize(i,cpu_vector,no_races)",
        "reorder(j,i)",
        "parallelize(j,cpu_thread,atomics)",
        "split(i,i0,i1,4);reorder(i1,i0)",
        "split(i,i0,i1,4);reorder(i1,i0);parallelize(i1,cpu_thread,no_races)",
        "split(i,i0,i1,3);split(j,j0,j1,2);reorder(i1,i0,j0,j1)",
        # strided walks over stored positions, of one row and of the fused loops
        "pos(j,jp,A(i,j));split(jp,jp0,jp1,2);reorder(i,jp1,jp0)",
        "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,4);reorder(fp1,fp0)",
        "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,4);reorder(fp1,fp0);"
        "parallelize(fp1,cpu_thread,atomics)",
    ]:
        problem = ct.schedule_problem(SPMV, schedule, formats={"A": "csr"})
        if problem is not None:
            with pytest.raises(ct.ScheduleError):
                ct.compile(SPMV, formats={"A": "csr"}, schedule=schedule)
            continue
        kern = ct.compile(SPMV, formats={"A": "csr"}, schedule=schedule)
        np.testing.assert_allclose(np.asarray(kern(A=ct.asarray(A, format="csr"), x=x)), A @ x)


@pytest.mark.parametrize("engine", ["llvm", "c"])
def test_blocks_of_an_appended_level_inside_its_parent_loop_append_in_order(engine):
    # C = A·Bᵀ with a CSR result: blocks of j inside the loop over rows append each row's
    # entries block after block, in order; blocks of j around the rows are refused (REFUSED).
    rng = np.random.default_rng(5)
    A = rng.random((40, 30)) * (rng.random((40, 30)) < 0.2)
    B = rng.random((50, 30)) * (rng.random((50, 30)) < 0.2)
    formats = {"A": "csr", "B": "csr", "C": "csr"}
    stmt = "C(i,j) = A(i,t) * B(j,t)"
    for schedule in ["reorder(i,j,t);split(j,j0,j1,8)", "split(i,i0,i1,4);reorder(i0,i1,j,t)"]:
        assert ct.schedule_problem(stmt, schedule, formats=formats) is None
        kern = ct.compile(stmt, formats=formats, schedule=schedule, engine=engine)
        got = kern(A=ct.asarray(A, format="csr"), B=ct.asarray(B, format="csr"))
        np.testing.assert_allclose(got.to_numpy(), A @ B.T, err_msg=schedule)
