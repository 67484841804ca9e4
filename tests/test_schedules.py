"""The scheduling language (docs/reference.md, "Schedules"): every command preserves results on the
kernels the thesis schedules (SpMV, SpMM, SpGEMM, SDDMM, MTTKRP, TTM) with sizes that blocks do not
divide, and every broken precondition raises ScheduleError naming the command."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coiter as ct
from compiler_cases import ENGINES


def csr(m, n, density, seed):
    return sp.random(m, n, density=density, format="csr", random_state=seed)


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


# (expression, formats, operands builder, NumPy reference)
def _spmv():
    A, x = csr(53, 41, 0.15, 1), np.random.default_rng(1).random(41)
    return "y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": A, "x": x}, A @ x


def _spmm():
    A, B = csr(37, 29, 0.2, 2), np.random.default_rng(2).random((29, 11))
    return (
        "C(i,k) = A(i,j) * B(j,k)",
        {"A": "csr", "B": "dense", "C": "dense"},
        {"A": A, "B": B},
        A @ B,
    )


def _spgemm():
    B, C = csr(31, 27, 0.15, 3), csr(27, 23, 0.15, 4)
    return (
        "A(i,j) = B(i,k) * C(k,j)",
        {"B": "csr", "C": "csr", "A": "csr"},
        {"B": B, "C": C},
        (B @ C).toarray(),
    )


def _sddmm():
    B = csr(33, 26, 0.2, 5)
    rng = np.random.default_rng(5)
    C, D = rng.random((33, 7)), rng.random((7, 26))
    return (
        "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
        {"B": "csr", "C": "dense", "D": "dense", "A": "csr"},
        {"B": B, "C": C, "D": D},
        B.multiply(C @ D).toarray(),
    )


def _mttkrp():
    rng = np.random.default_rng(6)
    dense = rng.random((13, 11, 9)) * (rng.random((13, 11, 9)) < 0.2)
    C, D = rng.random((11, 5)), rng.random((9, 5))
    return (
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        {"B": "csf", "C": "dense", "D": "dense", "A": "dense"},
        {"B": dense, "C": C, "D": D},
        np.einsum("ikl,kj,lj->ij", dense, C, D),
    )


def _ttm():
    rng = np.random.default_rng(7)
    dense = rng.random((12, 10, 9)) * (rng.random((12, 10, 9)) < 0.25)
    C = rng.random((6, 9))
    return (
        "A(i,j,k) = B(i,j,l) * C(k,l)",
        {"B": "csf", "C": "dense", "A": "dense"},
        {"B": dense, "C": C},
        np.einsum("ijl,kl->ijk", dense, C),
    )


KERNELS = {
    "spmv": _spmv,
    "spmm": _spmm,
    "spgemm": _spgemm,
    "sddmm": _sddmm,
    "mttkrp": _mttkrp,
    "ttm": _ttm,
}

# Schedules that apply to every kernel above (their outer index is i).
COMMON = [
    "split(i,i0,i1,4)",
    "split(i,i0,i1,7)",
    "divide(i,i0,i1,3)",
    "divide(i,i0,i1,64)",  # more parts than rows: trailing blocks are empty
    "split(i,i0,i1,8);split(i1,i10,i11,3)",
    "split(i,i0,i1,5);unroll(i1,5)",
    "split(i,i0,i1,16);parallelize(i0,cpu_thread,no_races)",
]

POS_SPMV = [
    "pos(j,jp,A(i,j))",
    "pos(j,jp,A(i,j));split(jp,jp0,jp1,3)",
    "fuse(i,j,f);pos(f,fp,A(i,j))",
    "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,37)",
    "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,37);parallelize(fp0,cpu_thread,atomics)",
    "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,16);parallelize(fp0,cpu_thread,temporary)",
    "fuse(i,j,f);pos(f,fp,A(i,j));divide(fp,fp0,fp1,5);parallelize(fp0,cpu_thread,atomics,static)",
]

SPECIFIC = {
    "spmv": POS_SPMV
    + [
        "split(j,j0,j1,5)",
        "precompute(A(i,j)*x(j),[i],[iw],compressed)",
        "precompute(A(i,j)*x(j),[i],[iw],hashed)",
        "precompute(A(i,j)*x(j),[i],[iw],compressed);split(iw,iw0,iw1,8)",
        "split(i,i0,i1,4);parallelize(i1,cpu_vector,no_races)",
        "parallelize(i,cpu_thread,no_races,static)",
        "parallelize(i,cpu_thread,no_races,dynamic:3)",
    ],
    "spmm": [
        "reorder(i,k,j)",
        "split(k,k0,k1,4);parallelize(k1,cpu_vector,no_races)",
        "split(j,j0,j1,4)",
    ],
    "spgemm": [
        "reorder(i,k,j);precompute(B(i,k)*C(k,j),j,j)",
        "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw])",
        "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw],hashed)",
        "split(k,k0,k1,4)",
    ],
    "sddmm": ["split(j,j0,j1,3)", "reorder(i,j,k)"],
    "mttkrp": ["split(k,k0,k1,4)", "split(j,j0,j1,2)", "parallelize(i,cpu_thread,no_races)"],
    "ttm": [
        "split(k,k0,k1,4)",
        "parallelize(i,cpu_thread,no_races)",
        "precompute(B(i,j,l)*C(k,l),[j,k],[jw,kw])",
        "precompute(B(i,j,l)*C(k,l),[k,j],[k,j])",
        # one j × k block per thread, each zeroed per i
        "precompute(B(i,j,l)*C(k,l),[j,k],[jw,kw]);parallelize(i,cpu_thread,no_races)",
    ],
}


def _run(kernel, schedule, engine):
    stmt, formats, operands, expected = KERNELS[kernel]()
    kern = ct.compile(stmt, formats=formats, schedule=schedule, engine=engine)
    result = kern(
        **{name: ct.asarray(value, format=formats.get(name)) for name, value in operands.items()}
    )
    np.testing.assert_allclose(np.asarray(result.to_numpy()), expected, rtol=1e-12, atol=1e-12)
    return kern


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("schedule", COMMON)
def test_common_schedules_preserve_results(kernel, schedule, engine):
    _run(kernel, schedule, engine)


@pytest.mark.parametrize(
    "kernel,schedule", [(k, s) for k, ss in sorted(SPECIFIC.items()) for s in ss]
)
def test_kernel_specific_schedules_preserve_results(kernel, schedule, engine):
    _run(kernel, schedule, engine)


def test_gustavson_by_reorder_and_precompute_matches_the_automatic_workspace():
    kern = _run("spgemm", "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw])", "llvm")
    assert "where" in kern.concrete and "ws0(jw) += B(i,k) * C(k,jw)" in kern.concrete


def test_the_concrete_notation_shows_relations_and_tags():
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr"},
        schedule=ct.Schedule()
        .split("i", "i0", "i1", 32)
        .parallelize("i0", "cpu_thread", "no_races"),
    )
    assert kern.concrete.startswith("∀i0 ∀i1 ")
    assert "i →split(32) i0 i1" in kern.concrete
    assert "i0: parallel(cpu_thread,no_races,dynamic)" in kern.concrete


def test_split_c_code_has_a_block_loop_and_a_tail_guard():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"}, schedule="split(i,i0,i1,32)")
    c = kern.source("c")
    assert "for (int64_t i0 = 0; i0 < i0_blocks; i0++)" in c
    assert "int64_t i0_blocks = (i_span + 31) / 32;" in c
    assert "coiter_min_i64(i_block_lo + 32, i_lo + i_span)" in c  # the last block is shorter


def test_a_sparse_split_searches_the_block_start():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"}, schedule="split(j,j0,j1,8)")
    assert "pA2_lo_mid" in kern.source("c")  # binary search over the row's coordinates
    _run("spmv", "split(j,j0,j1,8)", "c")


# -- the text form -------------------------------------------------------------------------------


def test_builder_and_text_form_agree():
    i, i0, i1 = ct.indices("i i0 i1")
    built = ct.Schedule().split(i, i0, i1, 32).parallelize(i0, "cpu_thread", "no_races")
    text = "split(i, i0, i1, 32);\n parallelize(i0,cpu_thread,no_races)"
    assert ct.Schedule.parse(text) == built
    assert str(built) == "split(i,i0,i1,32);parallelize(i0,cpu_thread,no_races)"
    assert eval(repr(built), {"Schedule": ct.Schedule}) == built


def test_precompute_lists_in_the_text_form():
    s = ct.Schedule().precompute("B(i,k) * C(k,j)", ["j"], ["jw"])
    assert str(s) == "precompute(B(i,k) * C(k,j),[j],[jw])"
    hashed = ct.Schedule().precompute("B(i,k) * C(k,j)", ["j"], ["jw"], "hashed")
    assert str(hashed) == "precompute(B(i,k) * C(k,j),[j],[jw],hashed)"
    assert str(ct.Schedule.parse(str(hashed))) == "precompute(B(i,k)*C(k,j),[j],[jw],hashed)"
    parsed = ct.Schedule.parse("precompute(B(i,k)*C(k,j), [j], [jw])")
    assert parsed._commands[0][1][1:] == (("j",), ("jw",))


@pytest.mark.parametrize("text", ["split(i,i0", "split i", "split(i,[i0,i1)", "(i)", "spl-it(i)"])
def test_malformed_text_raises_schedule_error(text):
    with pytest.raises(ct.ScheduleError):
        ct.Schedule.parse(text)


def test_bad_argument_types_raise_type_error():
    with pytest.raises(TypeError):
        ct.Schedule().split("i", "i0", "i1", 2.5)
    with pytest.raises(TypeError):
        ct.Schedule().split("i", 3, "i1", 2)


def test_auto_is_not_a_schedule_text():
    # ct.compile and ct.evaluate choose a schedule for "auto" (tests/test_autoschedule.py);
    # as a schedule's text it is no command.
    reason = ct.schedule_problem("y(i) = A(i,j) * x(j)", "auto", formats={"A": "csr"})
    assert reason is not None and "auto" in reason


# -- schedules on assignments and the cache --------------------------------------------------------


def test_assignment_schedule():
    A = csr(40, 30, 0.2, 8)
    x = np.random.default_rng(8).random(30)
    i, j = ct.indices("i j")
    At, xt = ct.asarray(A), ct.asarray(x)
    y = ct.zeros(40)
    y[i] = At[i, j] * xt[j]
    y.schedule(ct.Schedule().split(i, "i0", "i1", 8)).evaluate()
    np.testing.assert_allclose(np.asarray(y), A @ x)
    assert "i →split(8) i0 i1" in y._kernel.concrete


def test_schedules_are_part_of_the_signature():
    ct.clear_cache()
    formats = {"A": "csr"}
    ct.compile("y(i) = A(i,j) * x(j)", formats=formats, schedule="split(i,i0,i1,8)")
    before = ct.cache_info()["entries"]
    ct.compile("y(i) = A(i,j) * x(j)", formats=formats, schedule="split(i,i0,i1,16)")
    assert ct.cache_info()["entries"] == before + 1
    ct.compile("y(i) = A(i,j) * x(j)", formats=formats, schedule="split(i, i0, i1, 8)")
    assert ct.cache_info()["entries"] == before + 1  # same text modulo spaces


def test_a_schedule_binds_index_names():
    # The same statement modulo renaming, scheduled on a different loop, is a different kernel.
    split_rows = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"}, schedule="split(i,b,c,4)")
    split_cols = ct.compile("y(j) = A(j,i) * x(i)", formats={"A": "csr"}, schedule="split(i,b,c,4)")
    assert "i →split" in split_rows.concrete and "i →split" in split_cols.concrete
    assert split_rows.concrete != split_cols.concrete


def test_bound_is_checked_at_call_time(engine):
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr"},
        schedule="bound(i,ib,53,max_exact)",
        engine=engine,
    )
    _, _, ops, expected = _spmv()
    np.testing.assert_allclose(np.asarray(kern(A=ct.asarray(ops["A"]), x=ops["x"])), expected)
    with pytest.raises(ct.ShapeError, match="bound"):
        kern(A=ct.asarray(csr(54, 41, 0.1, 9)), x=ops["x"])
    at_most = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr"},
        schedule="bound(i,ib,60,max_constraint)",
        engine=engine,
    )
    np.testing.assert_allclose(np.asarray(at_most(A=ct.asarray(ops["A"]), x=ops["x"])), expected)
    with pytest.raises(ct.ShapeError, match="bound"):
        at_most(A=ct.asarray(csr(61, 41, 0.1, 9)), x=ops["x"])


# -- preconditions ---------------------------------------------------------------------------------

SPMV = "y(i) = A(i,j) * x(j)"


@pytest.mark.parametrize(
    "stmt,formats,schedule,message",
    [
        (SPMV, {"A": "csr"}, "split(q,q0,q1,4)", "unknown index variable 'q'"),
        (SPMV, {"A": "csr"}, "split(i,j,i1,4)", "already an index variable"),
        (SPMV, {"A": "csr"}, "split(i,i0,i1,0)", "not a positive integer"),
        (SPMV, {"A": "csr"}, "split(i,i0,i1,4);split(i,a,b,2)", "not a loop"),
        (SPMV, {"A": "csr"}, "divide(i,i0,i1,4);reorder(i1,i0)", "cannot move outside"),
        (SPMV, {"A": "csr"}, "unroll(i,4)", "no fixed size"),
        (
            "a(i) = b(i) + c(i)",
            {"b": "s", "c": "s", "a": "d"},
            "parallelize(i,cpu_vector,no_races)",
            "coiterates several operands",
        ),
        (SPMV, {"A": "csr"}, "parallelize(i,gpu_thread,no_races)", "target='cuda'"),
        (SPMV, {"A": "csr"}, "parallelize(i,cpu_thread,sometimes)", "unknown race strategy"),
        (SPMV, {"A": "csr"}, "parallelize(j,cpu_thread,no_races)", "not indexed by j"),
        (
            SPMV,
            {"A": "csr"},
            "parallelize(i,cpu_thread,no_races);split(i,i0,i1,4)",
            "no longer a loop",
        ),
        (SPMV, {"A": "csr"}, "frobnicate(i)", "unknown command"),
        (SPMV, {"A": "csr"}, "reorder(j,i)", "traversed out of order"),
        (SPMV, {"A": "csr"}, "bound(i,ib,10,min_exact)", "unknown bound kind"),
        (SPMV, {"A": "csr"}, "assemble(Q,append)", "not the result"),
        ("y(i) = A(i,j) * x(j) + z(i)", {"A": "csr"}, "reorder(j,i)", "not directly nested"),
        (
            "a(i) = b(i) + c(i)",
            {"b": "s", "c": "s", "a": "d"},
            "parallelize(i,cpu_thread,no_races)",
            "coiterates several operands",
        ),
        (
            "A(i,j) = B(i,k) * C(k,j)",
            {"B": "csr", "C": "csr", "A": "csr"},
            "reorder(i,k,j);assemble(A,append)",
            "appended to once per value of the index 'k'",
        ),
        (
            "A(i,j) = B(i,k) * C(k,j)",
            {"B": "csr", "C": "csr", "A": "csr"},
            "reorder(i,k,j);precompute(B(i,k)+C(k,j),[j],[j])",
            "not a subexpression",
        ),
        (
            "y(i) = sum(k, B(i,k) + c(i))",
            {"B": "dense"},
            "precompute(B(i,k),[i],[i])",
            "does not distribute",
        ),
        (
            "A(i,j,k) = B(i,j,l) * C(k,l)",
            {"B": "csf", "C": "dense", "A": "dense"},
            "precompute(B(i,j,l)*C(k,l),[j,k],[jw,kw],hashed)",
            "over one index variable",
        ),
        (
            "A(i,j) = B(i,k) * C(k,j)",
            {"B": "csr", "C": "csr", "A": "csr"},
            "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw],compressed)",
            "must be the outermost loop",
        ),
        (
            "A(i,j) = B(i,k) * C(k,j)",
            {"B": "csr", "C": "csr", "A": "csr"},
            "reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw],bitmap)",
            "unknown workspace format",
        ),
        (
            "A(i,j) = B(i,k,l) * D(l,j) * C(k,j)",
            {"B": "csf", "C": "dense", "D": "dense", "A": "dense"},
            "reorder(i,k,l,j);precompute(B(i,k,l)*D(l,j),j,j,hashed);parallelize(i,cpu_thread,no_races)",
            "inside a parallel loop",
        ),
        (SPMV, {"A": "csr"}, "pos(i,ip,A(i,j))", "not compressed"),
        (SPMV, {"A": "csr"}, "pos(j,jp,B(i,j))", "not an operand access"),
        (SPMV, {"A": "csr"}, "fuse(j,i,f)", "not directly inside"),
        (SPMV, {"A": "csr"}, "fuse(i,j,f)", "iterate its positions with pos"),
        (
            "y(i) = A(i,j) * x(j) + B(i,j) * x(j)",
            {"A": "csr", "B": "csr"},
            "fuse(i,j,f);pos(f,fp,A(i,j))",
            "not zero where it is",
        ),
        (
            "y(i) = A(i,j) * B(i,j)",
            {"A": "csr", "B": "csr"},
            "fuse(i,j,f);pos(f,fp,A(i,j))",
            "cannot be located",
        ),
        (
            SPMV,
            {"A": "coo"},
            "parallelize(i,cpu_thread,no_races)",
            "non-unique level, whose coordinates repeat",
        ),
        (
            SPMV,
            {"A": "dense"},
            "fuse(i,j,f);pos(f,fp,A(i,j))",
            r"stored like CSR or CSF \(dense, then compressed\), DCSR",
        ),
        (
            SPMV,
            {"A": ct.Format([ct.dense, ct.singleton])},
            "fuse(i,j,f);pos(f,fp,A(i,j))",
            "stored like CSR",
        ),
        (
            SPMV,
            {"A": "csr"},
            "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,64);parallelize(fp0,cpu_thread,no_races)",
            "not indexed by i and j",
        ),
    ],
)
def test_broken_preconditions_raise_schedule_error(stmt, formats, schedule, message):
    command = schedule.split(";")[-1].split("(")[0]
    with pytest.raises(ct.ScheduleError, match=message) as info:
        ct.compile(stmt, formats=formats, schedule=schedule)
    assert command in str(info.value) or "schedule" in str(info.value)


@pytest.mark.parametrize("result", ["dense", "dsd"])
def test_a_workspace_over_two_variables(result, engine):
    # TTM with the product for one i in a dense j x k workspace, read back into a dense or a
    # sparse-middle result (whose appended level zero-checks the workspace's entries).
    rng = np.random.default_rng(23)
    B = rng.random((5, 6, 7)) * (rng.random((5, 6, 7)) < 0.3)
    B[2] = 0.0  # an i whose workspace stays zero
    C = rng.random((4, 7))
    kern = ct.compile(
        "A(i,j,k) = B(i,j,l) * C(k,l)",
        formats={"B": "csf", "C": "dense", "A": result},
        schedule="precompute(B(i,j,l)*C(k,l),[j,k],[jw,kw])",
        engine=engine,
    )
    assert "ws0(jw,kw) += B(i,jw,l) * C(kw,l)" in kern.concrete
    got = kern(B=ct.asarray(B, format="csf"), C=C).to_numpy()
    np.testing.assert_allclose(got, np.einsum("ijl,kl->ijk", B, C), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("fmt", ["dense", "hashed"])
def test_a_workspace_intersected_with_a_shorter_list_starts_empty_again(fmt, engine):
    # SDDMM by columns, C·D precomputed into a workspace over i for each j, then intersected
    # with column j of B (CSC): the merge stops at B's last entry, before the workspace's, and
    # the entries past it must still be reset for the next column (a stale dense entry used to
    # add to the next column's value and stay out of its list: issue 18's frontier pick).
    rng = np.random.default_rng(5)
    B = rng.standard_normal((7, 5)) * (rng.random((7, 5)) < 0.4)
    B[-1] = 0.0  # every column of B ends before the workspace's list (C is dense)
    C, D = rng.standard_normal((7, 6)), rng.standard_normal((6, 5))
    csc = "csc"
    kern = ct.compile(
        "A(i,j) = B(i,j) * (C(i,k) * D(k,j))",
        formats={"A": csc, "B": csc, "C": "dense", "D": "dense"},
        schedule=f"reorder(j,k,i);precompute(C(i,k)*D(k,j),[i],[i],{fmt})",
        engine=engine,
    )
    got = kern(B=ct.asarray(B, format=csc), C=C, D=D).to_numpy()
    np.testing.assert_allclose(got, B * (C @ D), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("threads", [1, 2, 7])
@pytest.mark.parametrize("fmt", ["dense", "hashed"])
def test_hashed_workspaces_grow_and_match_dense_ones(fmt, threads, engine):
    # Rows of up to ~200 entries: the hashed table (16 entries at first) grows several times,
    # and is emptied between rows; integers are exact.
    rng = np.random.default_rng(21)
    B = sp.random(60, 80, density=0.5, format="csr", random_state=3, dtype=np.float64)
    C = sp.random(80, 400, density=0.3, format="csr", random_state=4, dtype=np.float64)
    B.data, C.data = (
        rng.integers(1, 9, B.nnz).astype(np.int64),
        rng.integers(1, 9, C.nnz).astype(np.int64),
    )
    # In parallel, each chunk of rows (one kernel call) has its own workspace.
    kern = ct.compile(
        "A(i,j) = B(i,k) * C(k,j)",
        formats={"B": "csr", "C": "csr", "A": "csr"},
        dtype=np.int64,
        schedule=f"reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw],{fmt});"
        "parallelize(i,cpu_thread,no_races)",
        engine=engine,
    )
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        got = kern(B=ct.asarray(B), C=ct.asarray(C)).to_scipy()
    finally:
        ct.set_num_threads(previous)
    expected = (B @ C).tocsr()
    assert got.has_sorted_indices
    np.testing.assert_array_equal(got.toarray(), expected.toarray())


def test_a_hashed_workspace_takes_memory_for_its_entries_not_its_extent():
    # 10^12 columns: a dense workspace would need terabytes; the hashed one holds a row's
    # entries.
    n = 10**12
    B = ct.from_coords(
        np.array([[0, 0], [0, 1], [1, 1], [2, 0]]),
        np.array([1.0, 2.0, 3.0, 4.0]),
        (3, 2),
        format="csr",
    )
    C = ct.from_coords(
        np.array([[0, 5], [0, n - 1], [1, 7]]), np.array([10.0, 20.0, 30.0]), (2, n), format="csr"
    )
    kern = ct.compile(
        "A(i,j) = B(i,k) * C(k,j)",
        formats={"B": "csr", "C": "csr", "A": "csr"},
        schedule="reorder(i,k,j);precompute(B(i,k)*C(k,j),[j],[jw],hashed)",
    )
    coords, values = kern(B=B, C=C).coords()
    assert [tuple(c) for c in np.asarray(coords)] == [
        (0, 5),
        (0, 7),
        (0, n - 1),
        (1, 7),
        (2, 5),
        (2, n - 1),
    ]
    np.testing.assert_array_equal(values, [10.0, 60.0, 20.0, 90.0, 40.0, 80.0])


def test_a_compressed_workspace_refuses_coordinates_out_of_order():
    # The loop over iw iterates a hashed level of 4 buckets: row 5 (bucket 1) comes before
    # row 2 (bucket 2).
    fmt = ct.Format([ct.hashed(buckets=4), ct.compressed])
    dense = np.zeros((8, 2))
    dense[2, 0], dense[5, 1] = 1.0, 2.0
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": fmt},
        schedule="precompute(A(i,j)*x(j),[i],[iw],compressed)",
    )
    with pytest.raises(ct.ScheduleError, match="out of order"):
        kern(A=ct.asarray(dense, format=fmt), x=np.array([1.0, 10.0]))
    hashed = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": fmt},
        schedule="precompute(A(i,j)*x(j),[i],[iw],hashed)",
    )
    np.testing.assert_array_equal(
        hashed(A=ct.asarray(dense, format=fmt), x=np.array([1.0, 10.0])).to_numpy(),
        dense @ [1.0, 10.0],
    )


def test_precompute_through_a_distributing_product():
    # y(i) = sum_k B(i,k) * c(i): the sum moves into the workspace, c(i) multiplies it once.
    rng = np.random.default_rng(10)
    B, c = rng.random((9, 7)), rng.random(9)
    for schedule in [None, "precompute(B(i,k),[i],[i])"]:
        kern = ct.compile("y(i) = sum(k, B(i,k) * c(i))", formats={"B": "dense"}, schedule=schedule)
        np.testing.assert_allclose(np.asarray(kern(B=B, c=c)), B.sum(axis=1) * c)
    assert "ws0(i) += B(i,k)" in kern.concrete


@pytest.mark.parametrize(
    "statement,fmt,schedule",
    [
        ("y(i) = A(i,j) * x(j)", "csr", "precompute(A(i,j) * x(j),[j],[jw])"),
        ("y(k) = 1.5 * A(j,k)", "csc", "precompute(1.5 * A(j,k),[j],[jw])"),
        ("y(k) = 1.5 * A(j,k)", "dense", "reorder(k,j);precompute(A(j,k),[j],[jw])"),
    ],
)
def test_precompute_over_a_summed_variable(statement, fmt, schedule, engine):
    # The workspace is written under jw and summed under j, which no operand reads any more:
    # j's extent is the workspace's (once a CompileError, "index variable 'j' has no extent").
    rng = np.random.default_rng(11)
    A, x = rng.random((6, 4)) * (rng.random((6, 4)) < 0.6), rng.random(4)
    operands = {"A": ct.asarray(A, format=fmt), "x": x}
    if "x(j)" not in statement:
        del operands["x"]
    expected = A @ x if "x(j)" in statement else 1.5 * A.sum(axis=0)
    kern = ct.compile(statement, formats={"A": fmt}, schedule=schedule, engine=engine)
    assert "ws0(jw)" in kern.concrete
    np.testing.assert_allclose(np.asarray(kern(**operands)), expected)


def test_pos_split_blocks_hold_equal_numbers_of_nonzeros():
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr"},
        schedule="fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,4096);"
        "parallelize(fp0,cpu_thread,atomics)",
    )
    c = kern.source("c")
    assert "fp0_blocks = (fp_span + 4095) / 4096" in c  # blocks of positions (nonzeros)
    assert "while ((int64_t)A2_pos[i + 1] <= pA2)" in c  # the row is tracked across empty rows
    # One update of y per row end and block end (the others report bad coordinates).
    # Two atomic updates of y in the lowered loop (the coordinate checks later run it in a
    # checked and an unchecked copy): where the row changes, and after the block.
    assert dict(kern.stages)["lowered IR"].count("atomic add y_vals") == 2
    assert "f i j →fuse" not in kern.concrete and "i j →fuse f" in kern.concrete


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.integers(1, 40),
    cols=st.integers(1, 30),
    density=st.floats(0.0, 0.5),
    fmt=st.sampled_from(["csr", "dcsr", "coo"]),
    block=st.integers(1, 40),
    parallel=st.sampled_from([None, "atomics", "temporary"]),
    threads=st.sampled_from([1, 3]),
    engine=st.sampled_from(ENGINES),
    seed=st.integers(0, 2**16),
)
def test_pos_splits_preserve_spmv(rows, cols, density, fmt, block, parallel, threads, engine, seed):
    rng = np.random.default_rng(seed)
    A = sp.random(rows, cols, density=density, format="csr", random_state=rng)
    x = rng.random(cols)
    schedule = f"fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,{block})"
    if parallel:
        schedule += f";parallelize(fp0,cpu_thread,{parallel})"
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        kern = ct.compile(
            "y(i) = A(i,j) * x(j)", formats={"A": fmt}, schedule=schedule, engine=engine
        )
        np.testing.assert_allclose(
            np.asarray(kern(A=ct.asarray(A, format=fmt), x=x)), A @ x, rtol=1e-12, atol=1e-14
        )
    finally:
        ct.set_num_threads(previous)


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_a_workspace_over_several_variables_has_a_block_per_thread(threads, engine):
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        kern = _run(
            "ttm",
            "precompute(B(i,j,l)*C(k,l),[j,k],[jw,kw]);parallelize(i,cpu_thread,no_races)",
            engine,
        )
    finally:
        ct.set_num_threads(previous)
    c = kern.source("c")
    # (The thread's number is read once per iteration of the parallel loop.)
    assert "const int64_t coiter_thread = (int64_t)omp_get_thread_num();" in c
    assert "coiter_thread * ws0_dim0 + j" in c and "#pragma omp parallel for" in c


@pytest.mark.parametrize("threads", [2, 7])
def test_the_default_schedule_of_coo_spmv_does_not_race(threads, engine):
    # COO's rows repeat once per entry: entries of one row land in different iterations of
    # the parallel loop, so the default schedule gives each thread its own copy of y (it
    # used to say no_races, and lost an update now and then).
    rng = np.random.default_rng(21)
    dense = rng.integers(-9, 10, size=(6, 40)) * (rng.random((6, 40)) < 0.7)
    x = rng.integers(-9, 10, size=40)
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "coo"}, dtype=np.int64, engine=engine)
    assert "temporary" in kern.concrete
    A = ct.asarray(dense, format="coo")
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        for _ in range(200):
            np.testing.assert_array_equal(np.asarray(kern(A=A, x=x)), dense @ x)
    finally:
        ct.set_num_threads(previous)


def test_pos_over_coo_reads_each_row_and_flushes_when_it_changes():
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "coo"},
        schedule="fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,4096);"
        "parallelize(fp0,cpu_thread,atomics)",
    )
    c = kern.source("c")
    assert "fp_span = (int64_t)A1_pos[1] - fp_lo" in c  # the positions of the top level
    # No search: each position has its row.
    assert (
        "int64_t i = (int64_t)(int32_t)coiter_min_u32((uint32_t)A1_crd[pA2], "
        "(uint32_t)coiter_max_i64(coiter_min_i64(A_dim0 - 1, 2147483647), 0));"
    ) in c
    assert "if (i != i_summed)" in c
    # Two atomic updates of y in the lowered loop (the coordinate checks later run it in a
    # checked and an unchecked copy): where the row changes, and after the block.
    assert dict(kern.stages)["lowered IR"].count("atomic add y_vals") == 2


@pytest.mark.parametrize("fmt", ["csr", "dcsr", "coo"])
@pytest.mark.parametrize("threads", [1, 2, 7])
def test_pos_split_spmv_with_empty_and_heavy_rows(fmt, threads, engine):
    rng = np.random.default_rng(12)
    dense = np.zeros((200, 150))
    dense[3, :] = rng.random(150)  # a heavy row spanning several blocks
    dense[50:60, :5] = rng.random((10, 5))
    dense[199, 149] = 1.5  # the last entry
    A = sp.csr_matrix(dense)  # most rows empty
    x = rng.random(150)
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        # Blocks of 16 nonzeros: the rows are found by searching the row pointers (CSR),
        # the stored rows' pointers (DCSR), or read per position (COO).
        kern = ct.compile(
            "y(i) = A(i,j) * x(j)",
            formats={"A": fmt},
            engine=engine,
            schedule="fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,16);parallelize(fp0,cpu_thread,atomics)",
        )
        np.testing.assert_allclose(
            np.asarray(kern(A=ct.asarray(A, format=fmt), x=x)), A @ x, rtol=1e-12
        )
        empty = sp.csr_matrix((5, 150))
        np.testing.assert_array_equal(
            np.asarray(kern(A=ct.asarray(empty, format=fmt), x=x)), np.zeros(5)
        )
        # A body that is not a row sum: each entry located in a dense operand and result.
        D = rng.random((200, 150))
        product = ct.compile(
            "C(i,j) = A(i,j) * D(i,j)",
            formats={"A": fmt, "D": "dense", "C": "dense"},
            engine=engine,
            schedule="fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,7);"
            "parallelize(fp0,cpu_thread,no_races)",
        )
        np.testing.assert_array_equal(
            np.asarray(product(A=ct.asarray(A, format=fmt), D=D)), dense * D
        )
    finally:
        ct.set_num_threads(previous)


def _sparse_tensor(rng, shape, density):
    """Random entries, with whole slices and fibres emptied so that segments of every level
    are empty somewhere (the position loops must step over them)."""
    dense = rng.random(shape) * (rng.random(shape) < density)
    dense[rng.random(shape[0]) < 0.3] = 0
    dense[:, rng.random(shape[1]) < 0.3] = 0
    return dense


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    shape=st.tuples(st.integers(1, 9), st.integers(1, 8), st.integers(1, 10)),
    density=st.floats(0.0, 0.6),
    top=st.sampled_from(["d", "s"]),
    block=st.integers(1, 30),
    walk=st.sampled_from(["blocks", "strided", "parallel"]),
    result=st.sampled_from(["ij", "i"]),
    threads=st.sampled_from([1, 3]),
    engine=st.sampled_from(ENGINES),
    seed=st.integers(0, 2**16),
)
def test_positions_of_three_fused_loops(
    shape, density, top, block, walk, result, threads, engine, seed
):
    # TTV over the nonzeros of a CSF tensor (dss) or one with stored rows (sss): the rows and
    # fibres of each position are tracked (searched at a block's start, advanced at segment
    # ends), and a sum over k is kept in a register until the fibre ends.
    rng = np.random.default_rng(seed)
    B = _sparse_tensor(rng, shape, density)
    c = rng.random(shape[2])
    schedule = f"fuse(j,k,jk);fuse(i,jk,f);pos(f,fp,B(i,j,k));split(fp,fp0,fp1,{block})"
    if walk == "strided":
        schedule += ";reorder(fp1,fp0)"
    if walk == "parallel":
        schedule += ";parallelize(fp0,cpu_thread,atomics)"
    stmt = f"A({','.join(result)}) = B(i,j,k) * c(k)"
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        kern = ct.compile(
            stmt, formats={"B": top + "ss", "A": "dense"}, schedule=schedule, engine=engine
        )
        got = np.asarray(kern(B=ct.asarray(B, format=top + "ss"), c=c))
    finally:
        ct.set_num_threads(previous)
    np.testing.assert_allclose(got, np.einsum(f"ijk,k->{result}", B, c), rtol=1e-12, atol=1e-14)


def test_positions_of_four_fused_loops(engine):
    rng = np.random.default_rng(31)
    B = rng.random((6, 5, 7, 4)) * (rng.random((6, 5, 7, 4)) < 0.2)
    B[2] = 0
    C = rng.random((7, 3))
    kern = ct.compile(
        "A(i,j,n) = B(i,j,k,l) * C(k,n)",
        formats={"B": "dsss", "A": "dense"},
        schedule="reorder(i,j,k,l,n);fuse(k,l,kl);fuse(j,kl,jkl);fuse(i,jkl,f);pos(f,fp,B(i,j,k,l));"
        "split(fp,fp0,fp1,5);parallelize(fp0,cpu_thread,atomics)",
        engine=engine,
    )
    got = np.asarray(kern(B=ct.asarray(B, format="dsss"), C=C))
    np.testing.assert_allclose(got, np.einsum("ijkl,kn->ijn", B, C), rtol=1e-12)


def test_fused_dense_loops(engine):
    B = np.random.default_rng(13).random((30, 21))
    kern = ct.compile(
        "C(i,j) = B(i,j) * 2",
        formats={"B": "dense", "C": "dense"},
        engine=engine,
        schedule="fuse(i,j,f);split(f,f0,f1,64);parallelize(f0,cpu_thread,no_races)",
    )
    np.testing.assert_allclose(np.asarray(kern(B=B)), 2 * B)


# The default CPU schedules TACO's web tool publishes, in TACO's spelling.
def test_taco_default_cpu_schedules(engine):
    _run("spmv", "split(i,i0,i1,32);reorder(i0,i1,j);parallelize(i0,CPUThread,NoRaces)", engine)
    _run(
        "spgemm",
        "reorder(i,k,j);precompute(B(i,k)*C(k,j),j,j);assemble(A,Insert);"
        "parallelize(i,CPUThread,NoRaces)",
        engine,
    )
    rng = np.random.default_rng(14)
    B = rng.random((40, 12, 9)) * (rng.random((40, 12, 9)) < 0.2)
    C, D = rng.random((12, 5)), rng.random((9, 5))
    kern = ct.compile(
        "A(i,j) = B(i,k,l) * D(l,j) * C(k,j)",
        formats={"B": "csf", "C": "dense", "D": "dense", "A": "dense"},
        engine=engine,
        schedule="reorder(i,k,l,j);precompute(B(i,k,l)*D(l,j),j,j);split(i,i0,i1,32);"
        "parallelize(i0,CPUThread,NoRaces)",
    )
    result = kern(B=ct.asarray(B, format="csf"), C=C, D=D)
    np.testing.assert_allclose(np.asarray(result), np.einsum("ikl,kj,lj->ij", B, C, D), rtol=1e-12)
    # Every thread has its own slice of the workspace.
    assert "omp_get_thread_num()" in kern.source("c")
    # The same MTTKRP, serial, with a hashed workspace. (Not a compressed one: the sum over l
    # moves into the producer, around its loop over j, so j would be appended out of order.)
    for fmt in ["hashed"]:
        kern = ct.compile(
            "A(i,j) = B(i,k,l) * D(l,j) * C(k,j)",
            formats={"B": "csf", "C": "dense", "D": "dense", "A": "dense"},
            engine=engine,
            schedule=f"reorder(i,k,l,j);precompute(B(i,k,l)*D(l,j),j,j,{fmt})",
        )
        result = kern(B=ct.asarray(B, format="csf"), C=C, D=D)
        np.testing.assert_allclose(
            np.asarray(result), np.einsum("ikl,kj,lj->ij", B, C, D), rtol=1e-12
        )


def _rows_of(lengths, columns=50, seed=0):
    """A CSR matrix with the given row lengths (distinct sorted columns per row)."""
    r = np.random.default_rng(seed)
    rows = [np.sort(r.choice(columns, n, replace=False)) for n in lengths]
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = np.concatenate(rows or [[]]).astype(np.int32)
    values = r.standard_normal(len(indices))
    return sp.csr_matrix((values, indices, indptr), (len(lengths), columns))


@pytest.mark.parametrize(
    "lengths",
    [
        [3] * 40,  # even rows
        [50] + [0] * 30 + [1] * 10,  # a long first row, then empty rows
        [0] * 25 + [7, 0, 0, 50, 2] + [0] * 25,  # empty rows around a few full ones
        [1, 2, 3, 5, 8, 13, 21, 34, 50, 0, 0, 1],  # growing rows
        [0] * 10,  # no entries
        [17],  # one row
    ],
)
@pytest.mark.parametrize("chunk", [1, 4, 7])
def test_nonzero_chunks_find_their_first_row(engine, lengths, chunk):
    # Each chunk of nonzeros finds its first row by a bisection of the row starts
    # (lower_positions.cpp); empty rows repeat a start, and chunks begin inside long rows.
    A = _rows_of(lengths)
    x = np.random.default_rng(1).standard_normal(A.shape[1])
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr", "x": "d", "y": "d"},
        schedule=f"fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,{chunk});"
        "parallelize(fp0,cpu_thread,atomics)",
        engine=engine,
    )
    np.testing.assert_allclose(kern(A=A, x=x).to_numpy(), A @ x, rtol=1e-12, atol=1e-12)
