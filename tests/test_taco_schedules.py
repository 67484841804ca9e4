"""TACO's own schedules, in coiter's schedule syntax (docs/reference.md, "Schedules"), computed on
both engines and checked against np.einsum: the CPU schedules of TACO's test suite
(test/tests-scheduling-eval.cpp and test/tests-workspaces.cpp), the default schedules its web tool
ships (tensor-compiler.org's code generator), and its GPU schedules mapped onto CPU threads:
gpu_block becomes cpu_thread, with the race strategy the innermost GPU loop asked for (the block
loop's iterations share rows at their edges, whose updates TACO makes atomic in the thread loop);
gpu_warp and gpu_thread loops run serially inside it. Sizes are TACO's test sizes scaled down, with
extents the blocks do not divide. docs/schedules.md lists what runs and what is refused, with the
reason."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from compiler_cases import ENGINES


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


def _rng(seed):
    return np.random.default_rng(seed)


def _sparse(shape, density, seed):
    rng = _rng(seed)
    return rng.random(shape) * (rng.random(shape) < density)


# Each kernel: (statement, formats, operands, NumPy subscripts of np.einsum for the result).
def spmv(result="dense"):
    A = sp.random(102, 103, density=0.3, format="csr", random_state=1)
    return (
        "y(i) = A(i,j) * x(j)",
        {"A": "csr", "y": result},
        {"A": A, "x": _rng(1).random(103)},
        ("ij,j->i", ["A", "x"]),
    )


def spmv_dcsr():
    stmt, formats, ops, ref = spmv()
    return stmt, {**formats, "A": "dcsr"}, ops, ref


def spmm(result="dense", columns=70):
    A = sp.random(102, 103, density=0.3, format="csr", random_state=2)
    return (
        "C(i,k) = A(i,j) * B(j,k)",
        {"A": "csr", "B": "dense", "C": result},
        {"A": A, "B": _rng(2).random((103, columns))},
        ("ij,jk->ik", ["A", "B"]),
    )


def spmm_dcsr():
    stmt, formats, ops, ref = spmm()
    return stmt, {**formats, "A": "dcsr"}, ops, ref


def spmspv():
    A = sp.random(102, 103, density=0.3, format="csc", random_state=3)
    x = sp.random(1, 103, density=0.3, random_state=4).toarray().ravel()
    return (
        "y(i) = A(i,j) * x(j)",
        {"A": "csc", "x": "s", "y": "dense"},
        {"A": A, "x": x},
        ("ij,j->i", ["A", "x"]),
    )


def sddmm(result="dense", inner=33):
    B = sp.random(102, 105, density=0.3, format="csr", random_state=5)
    rng = _rng(5)
    return (
        "A(i,k) = B(i,k) * C(i,j) * D(j,k)",
        {"B": "csr", "C": "dense", "D": "dense", "A": result},
        {"B": B, "C": rng.random((102, inner)), "D": rng.random((inner, 105))},
        ("ik,ij,jk->ik", ["B", "C", "D"]),
    )


def ttv(result="dense"):
    return (
        "A(i,j) = B(i,j,k) * c(k)",
        {"B": "dss", "c": "dense", "A": result},
        {"B": _sparse((25, 26, 27), 0.3, 6), "c": _rng(6).random(27)},
        ("ijk,k->ij", ["B", "c"]),
    )


def ttm(result="dense"):
    return (
        "A(i,j,l) = B(i,j,k) * C(k,l)",
        {"B": "dss", "C": "dense", "A": result},
        {"B": _sparse((25, 26, 27), 0.1, 7), "C": _rng(7).random((27, 30))},
        ("ijk,kl->ijl", ["B", "C"]),
    )


def mttkrp(statement="A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", rank=35):
    rng = _rng(8)
    return (
        statement,
        {"B": "dss", "C": "dense", "D": "dense", "A": "dense"},
        {
            "B": _sparse((51, 52, 61), 0.1, 8),
            "C": rng.random((52, rank)),
            "D": rng.random((61, rank)),
        },
        ("ikl,kj,lj->ij", ["B", "C", "D"]),
    )


def mttkrp4():
    rng = _rng(9)
    return (
        "A(i,j) = B(i,k,l,m) * C(k,j) * D(l,j) * E(m,j)",
        {"B": "dsss", "C": "dense", "D": "dense", "E": "dense", "A": "dense"},
        {
            "B": _sparse((21, 12, 13, 14), 0.1, 9),
            "C": rng.random((12, 9)),
            "D": rng.random((13, 9)),
            "E": rng.random((14, 9)),
        },
        ("iklm,kj,lj,mj->ij", ["B", "C", "D", "E"]),
    )


def vec_mul(n):
    rng = _rng(10)
    return (
        "A(i) = B(i) * C(i)",
        {},
        {"B": rng.random(n), "C": rng.random(n)},
        ("i,i->i", ["B", "C"]),
    )


def add4():
    rng = _rng(11)
    ops = {name: rng.random((6, 5, 4, 3)) for name in "BCD"}
    return ("A(i,j,k,l) = B(i,j,k,l) + C(i,j,k,l) + D(i,j,k,l)", {}, ops, None)


def add2():
    rng = _rng(12)
    ops = {name: rng.random((16, 15)) for name in "BCD"}
    return "A(i,j) = B(i,j) + C(i,j) + D(i,j)", {}, ops, None


def multireduce():
    rng = _rng(13)
    return (
        "A(i,j) = B(i,j,k,l) * C(k,l,m) * D(m,n)",
        {},
        {"B": rng.random((6, 5, 4, 3)), "C": rng.random((4, 3, 7)), "D": rng.random((7, 8))},
        ("ijkl,klm,mn->ij", ["B", "C", "D"]),
    )


def tspv():
    rng = _rng(14)
    c = sp.random(1, 9, density=0.5, random_state=14).toarray().ravel()
    return (
        "A(i,j) = B(i,j,k,l) * c(l) * c(k)",
        {"c": "s"},
        {"B": rng.random((6, 7, 9, 9)), "c": c},
        ("ijkl,l,k->ij", ["B", "c", "c"]),
    )


def _expected(ops, ref, stmt):
    if ref is None:  # a sum of all operands of the same shape
        return sum(np.asarray(v) for v in ops.values())
    subscripts, names = ref
    arrays = [ops[n].toarray() if sp.issparse(ops[n]) else np.asarray(ops[n]) for n in names]
    return np.einsum(subscripts, *arrays)


def run(kernel, schedule, engine, threads=2):
    stmt, formats, ops, ref = kernel
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        kern = ct.compile(stmt, formats=formats, schedule=schedule, engine=engine)
        result = kern(**{n: ct.asarray(v, format=formats.get(n)) for n, v in ops.items()})
    finally:
        ct.set_num_threads(previous)
    np.testing.assert_allclose(result.to_numpy(), _expected(ops, ref, stmt), rtol=1e-11, atol=1e-11)
    return kern


# -- TACO's CPU schedules (tests-scheduling-eval.cpp) --------------------------------------------

CPU = {
    # scheduleSpMVCPU
    "spmv": (spmv, "split(i,i0,i1,16);reorder(i0,i1,j);parallelize(i0,CPUThread,NoRaces)"),
    # test_spmvCPU_temp
    "spmv_atomics": (spmv, "parallelize(i,CPUThread,Atomics)"),
    # example_spmvCPU_splitpos
    "spmv_splitpos": (
        spmv,
        "fuse(i,j,k);pos(k,kpos,A(i,j));split(kpos,kpos0,kpos1,16);"
        "parallelize(kpos0,CPUThread,Atomics)",
    ),
    # scheduleSpMMCPU: cpu_vector on k, a loop of runtime length
    "spmm": (
        spmm,
        "split(i,i0,i1,16);pos(j,jpos,A(i,j));split(jpos,jpos0,jpos1,8);reorder(i0,i1,jpos0,k,jpos1);"
        "parallelize(i0,CPUThread,NoRaces);parallelize(k,CPUVector,IgnoreRaces)",
    ),
    # scheduleSpMMCPUNoVec
    "spmm_novec": (
        spmm,
        "split(i,i0,i1,16);pos(j,jpos,A(i,j));split(jpos,jpos0,jpos1,8);"
        "reorder(i0,i1,jpos0,k,jpos1);parallelize(i0,CPUThread,NoRaces)",
    ),
    # scheduleSpMSpVCPU
    "spmspv": (
        spmspv,
        "reorder(j,i);pos(j,jpos,x(j));split(jpos,jpos0,jpos1,16);"
        "parallelize(jpos0,CPUThread,Atomics)",
    ),
    # scheduleSDDMMCPU (the reduction over j lies between the two loops over B's positions)
    "sddmm": (
        sddmm,
        "split(i,i0,i1,16);pos(k,kpos,B(i,k));split(kpos,kpos0,kpos1,8);"
        "reorder(i0,i1,kpos0,j,kpos1);parallelize(i0,CPUThread,NoRaces);"
        "parallelize(kpos1,CPUVector,ParallelReduction)",
    ),
    # scheduleSDDMMCPU with TACO's CSR result: the result keeps B's pattern (docs/compiler.md,
    # "Results that keep an operand's pattern"), so the vectorized loop over B's positions, and
    # the reduction over j around it, accumulate at B's positions instead of appending.
    "sddmm_csr": (
        lambda: sddmm(result="csr"),
        "split(i,i0,i1,16);pos(k,kpos,B(i,k));split(kpos,kpos0,kpos1,8);"
        "reorder(i0,i1,kpos0,j,kpos1);parallelize(i0,CPUThread,NoRaces);"
        "parallelize(kpos1,CPUVector,ParallelReduction)",
    ),
    # scheduleTTVCPU: pos over a fused loop with the reduction over k inside
    "ttv": (
        ttv,
        "fuse(i,j,f);pos(f,fpos,B(i,j,k));split(fpos,chunk,fpos2,16);reorder(chunk,fpos2,k);"
        "parallelize(chunk,CPUThread,NoRaces)",
    ),
    # scheduleTTMCPU
    "ttm": (
        ttm,
        "fuse(i,j,f);pos(f,fpos,B(i,j,k));split(fpos,chunk,fpos2,16);pos(k,kpos,B(i,j,k));"
        "split(kpos,kpos1,kpos2,8);reorder(chunk,fpos2,kpos1,l,kpos2);"
        "parallelize(chunk,CPUThread,NoRaces);parallelize(kpos2,CPUVector,ParallelReduction)",
    ),
    # scheduleMTTKRPCPU
    "mttkrp": (mttkrp, "split(i,i1,i2,16);reorder(i1,i2,k,l,j);parallelize(i1,CPUThread,NoRaces)"),
    # scheduleMTTKRPPrecomputedCPU
    "mttkrp_precomputed": (mttkrp, "split(i,i1,i2,16);parallelize(i1,CPUThread,NoRaces)"),
    # scheduleMTTKRP4CPU
    "mttkrp4": (
        mttkrp4,
        "split(i,i1,i2,16);reorder(i1,i2,k,l,m,j);parallelize(i1,CPUThread,NoRaces)",
    ),
    # exampleScheduleSPMVCPURowTiling, exampleScheduleSPMVPosIteration
    "spmv_row_tiling": (spmv, "split(i,i1,i2,4)"),
    "spmv_pos_iteration": (spmv, "fuse(i,j,f);pos(f,p,A(i,j))"),
}

# -- TACO's published default schedules (the web tool's default-schedules.js) --------------------

DEFAULTS = {
    "spmv": (spmv, "split(i,i0,i1,32);reorder(i0,i1,j);parallelize(i0,CPUThread,NoRaces)"),
    # (The web tool's MTTKRP multiplies by D before C, so that B*D is a subexpression.)
    "mttkrp": (
        lambda: mttkrp("A(i,j) = B(i,k,l) * D(l,j) * C(k,j)"),
        "reorder(i,k,l,j);precompute(B(i,k,l)*D(l,j),j,j);split(i,i0,i1,32);"
        "parallelize(i0,CPUThread,NoRaces)",
    ),
    # GPU SpMV on CPU threads: nonzero tiles of 3584 per block, 224 per warp, 7 per thread, each
    # thread's products precomputed into a workspace over its split's inner loop and unrolled.
    "gpu_spmv": (
        spmv,
        "fuse(i,j,f);pos(f,fpos,A(i,j));split(fpos,block,fpos1,3584);split(fpos1,warp,fpos2,224);"
        "split(fpos2,thread,thr_nz,7);reorder(block,warp,thread,thr_nz);"
        "precompute(A(i,j)*x(j),thr_nz,thr_nz_pre);unroll(thr_nz_pre,7);"
        "parallelize(block,CPUThread,Atomics)",
    ),
}

# -- TACO's workspace tests (tests-workspaces.cpp): precompute over split loops ------------------

WORKSPACES = {
    "tile_vecElemMul_NoTail": (
        lambda: vec_mul(16),
        "bound(i,i_bounded,16,MaxExact);split(i_bounded,i0,i1,4);precompute(B(i)*C(i),i1,i1)",
    ),
    "tile_vecElemMul_Tail1": (
        lambda: vec_mul(16),
        "bound(i,i_bounded,16,MaxExact);split(i_bounded,i0,i1,5);precompute(B(i)*C(i),i1,i1)",
    ),
    "tile_vecElemMul_Tail2": (
        lambda: vec_mul(17),
        "bound(i,i_bounded,17,MaxExact);split(i_bounded,i0,i1,4);precompute(B(i)*C(i),i1,i1)",
    ),
    "precompute2D_add": (add2, "precompute(B(i,j)+C(i,j),[i,j],[i,j])"),
    "precompute4D_add": (
        add4,
        "precompute(B(i,j,k,l)+C(i,j,k,l),[i,j,k,l],[i,j,k,l]);"
        "precompute(ws0(i,j,k,l)+D(i,j,k,l),[i,j,k,l],[i,j,k,l])",
    ),
    "precompute4D_multireduce": (
        multireduce,
        "precompute(B(i,j,k,l)*C(k,l,m),[i,j,m],[i,j,m]);precompute(ws0(i,j,m)*D(m,n),[i,j],[i,j])",
    ),
    "precompute3D_TspV": (tspv, "precompute(B(i,j,k,l)*c(l),[i,j,k],[i,j,k])"),
    "precompute3D_multipleWS": (
        tspv,
        "precompute(B(i,j,k,l)*c(l),[i,j,k],[i,j,k]);precompute(ws0(i,j,k)*c(k),[i,j],[i,j])",
    ),
    "precompute3D_renamedIVars_TspV": (tspv, "precompute(B(i,j,k,l)*c(l),[i,j,k],[iw,jw,kw])"),
    # The same tiling with divide, and with a renamed workspace loop.
    "tile_divide": (lambda: vec_mul(17), "divide(i,i0,i1,3);precompute(B(i)*C(i),i1,i1)"),
    "tile_renamed": (
        lambda: vec_mul(17),
        "split(i,i0,i1,4);precompute(B(i)*C(i),i1,i1w);unroll(i1w,4)",
    ),
}

# -- TACO's GPU schedules (tests-scheduling-eval.cpp), on CPU threads ------------------------------

GPU_ON_CPU = {
    # scheduleSDDMMGPU: its thread loop (a split's inner loop over j) outside the blocks of j it
    # visits, a strided walk; its bound promises 4 blocks of 32.
    "sddmm": (
        lambda: sddmm(inner=128),
        "reorder(i,k,j);fuse(i,k,f);pos(f,fpos,B(i,k));split(fpos,block,fpos1,2048);"
        "split(fpos1,warp,nnz,256);split(j,dense_val_unbounded,thread,32);"
        "bound(dense_val_unbounded,dense_val,4,MaxExact);reorder(block,warp,nnz,thread,dense_val);"
        "unroll(dense_val,4);parallelize(block,CPUThread,Atomics)",
    ),
    # scheduleSpMMGPU: the same strided walk over k.
    "spmm": (
        lambda: spmm(columns=128),
        "reorder(i,j,k);fuse(i,j,f);pos(f,fpos,A(i,j));split(fpos,block,fpos1,64);split(fpos1,warp,nnz,8);"
        "split(k,dense_val_unbounded,thread,32);reorder(block,warp,thread,dense_val_unbounded,nnz);"
        "bound(dense_val_unbounded,dense_val,4,MaxExact);parallelize(block,CPUThread,Atomics)",
    ),
    # scheduleSpMVGPU
    "spmv": (
        spmv,
        "fuse(i,j,f);pos(f,fpos,A(i,j));split(fpos,block,fpos1,2048);split(fpos1,warp,fpos2,256);"
        "split(fpos2,thread,thread_nz,8);reorder(block,warp,thread,thread_nz);"
        "precompute(A(i,j)*x(j),thread_nz,thread_nz_pre);unroll(thread_nz_pre,8);"
        "parallelize(block,CPUThread,Atomics)",
    ),
    # scheduleSpMVThreadPerRowGPU
    "spmv_thread_per_row": (spmv, "split(i,block,thread,256);parallelize(block,CPUThread,NoRaces)"),
    # scheduleSpMVSplitPosGPU
    "spmv_split_pos": (
        spmv,
        "fuse(i,j,f);pos(f,fpos,A(i,j));split(fpos,block,fpos1,2048);"
        "split(fpos1,warp,fpos2,256);split(fpos2,thread,thread_nz,8);"
        "reorder(block,warp,thread,thread_nz);parallelize(block,CPUThread,Atomics)",
    ),
    # scheduleSpMMRowsGPU
    "spmm_rows": (
        spmm,
        "split(i,block,i1,32);split(i1,warp,warp_row,4);split(k,thread,thread_col,32);"
        "reorder(block,warp,warp_row,thread,thread_col,j);parallelize(block,CPUThread,NoRaces)",
    ),
    # scheduleSpMMNZRowsGPU (spmmDCSRGPU: A is DCSR)
    "spmm_nz_rows": (
        spmm_dcsr,
        "pos(i,ip,A(i,j));split(ip,block,ip1,32);split(ip1,warp,warp_row,4);"
        "split(k,thread,thread_col,32);reorder(block,warp,warp_row,thread,thread_col,j);"
        "parallelize(block,CPUThread,NoRaces)",
    ),
    # scheduleTTVGPU: positions of three fused loops over B (CSF), each thread's products
    # precomputed into a workspace over its split's inner loop.
    "ttv": (
        ttv,
        "fuse(j,k,jk);fuse(i,jk,f);pos(f,fpos,B(i,j,k));split(fpos,block,fpos1,2048);"
        "split(fpos1,warp,fpos2,256);split(fpos2,thread,thread_nz,8);reorder(block,warp,thread,thread_nz);"
        "precompute(B(i,j,k)*c(k),thread_nz,thread_nz_pre);unroll(thread_nz_pre,8);"
        "parallelize(block,CPUThread,Atomics)",
    ),
    # scheduleMTTKRPGPU: the same over B(i,k,l), with the dense loop j walked strided between
    # the blocks of positions and the positions themselves; its bound promises one block of 32
    # columns (TACO's test rank).
    "mttkrp": (
        lambda: mttkrp(rank=32),
        "reorder(i,k,l,j);fuse(k,l,kl);fuse(i,kl,f);pos(f,fpos,B(i,k,l));split(fpos,block,fpos1,128);"
        "split(fpos1,warp,nnz,16);split(j,dense_val_unbounded,thread,32);"
        "bound(dense_val_unbounded,dense_val,1,MaxExact);reorder(block,warp,dense_val,thread,nnz);"
        "parallelize(block,CPUThread,Atomics)",
    ),
    # scheduleSpMVRowsGPU: a thread's offset outside the blocks of A's positions it visits
    # within a row (a strided walk over positions).
    "spmv_rows": (
        spmv,
        "split(i,block,block_row,256);split(block_row,warp_row,warp,8);pos(j,jpos,A(i,j));"
        "split(jpos,thread_nz,thread,32);reorder(block,warp,warp_row,thread,thread_nz);"
        "parallelize(block,CPUThread,NoRaces)",
    ),
}


# -- TACO schedules coiter refuses, with the reason (docs/schedules.md, "TACO's schedules") -----

REFUSED = {
    # scheduleSpMSpVGPU walks the positions of the fused loops strided, as spmv_rows does, but
    # its vector x is sparse: it cannot be located at A's positions.
    "gpu_spmspv": (
        spmspv,
        "reorder(j,i);fuse(j,i,f);pos(f,fpos,A(i,j));split(fpos,block,fpos_block,4096);"
        "split(fpos_block,fpos_thread,thread,512);reorder(block,thread,fpos_thread);"
        "parallelize(block,CPUThread,Atomics)",
        r"pos\(f,fpos,A\(i,j\)\): x is sparse over 'j' and cannot be located at A's positions",
    ),
    # scheduleTTVCPU with TACO's {dense, sparse} result.
    "ttv_ds": (
        lambda: ttv(result="ds"),
        "fuse(i,j,f);pos(f,fpos,B(i,j,k));split(fpos,chunk,fpos2,16);reorder(chunk,fpos2,k);"
        "parallelize(chunk,CPUThread,NoRaces)",
        r"the sparse result A \(format ds\) is assembled in parallel "
        "only by the loop over its first",
    ),
}


@pytest.mark.parametrize("name", sorted(CPU))
def test_taco_cpu_schedules(name, engine):
    kernel, schedule = CPU[name]
    run(kernel(), schedule, engine)


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_taco_default_schedules(name, engine):
    kernel, schedule = DEFAULTS[name]
    run(kernel(), schedule, engine)


@pytest.mark.parametrize("name", sorted(WORKSPACES))
def test_taco_workspace_schedules(name, engine):
    kernel, schedule = WORKSPACES[name]
    run(kernel(), schedule, engine)


@pytest.mark.parametrize("name", sorted(GPU_ON_CPU))
def test_taco_gpu_schedules_on_cpu_threads(name, engine):
    kernel, schedule = GPU_ON_CPU[name]
    run(kernel(), schedule, engine)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_taco_schedules_say_why(name, engine):
    kernel, schedule, reason = REFUSED[name]
    stmt, formats, ops, _ = kernel()
    problem = ct.schedule_problem(stmt, schedule, formats=formats)
    assert problem is not None and re.search(reason, problem), problem
    with pytest.raises(ct.ScheduleError, match=reason):
        ct.compile(stmt, formats=formats, schedule=schedule, engine=engine)
