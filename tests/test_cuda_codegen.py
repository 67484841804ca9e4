"""target="cuda" without a GPU (docs/reference.md, "Targets"): schedules with GPU units, the CUDA
C++ the printer makes of them, NVRTC compiling it to machine code for an H100/H200 (sm_90), and the
errors a machine without a GPU gives. The same kernels run on a GPU in test_cuda_device.py."""

import os
import subprocess
import sys

import numpy as np
import pytest

import coiter as ct

status = ct.cuda.status()
needs_nvrtc = pytest.mark.skipif(
    status["nvrtc"] is None, reason=f"NVRTC is not installed: {status['nvrtc_problem']}"
)


@pytest.fixture(autouse=True)
def compile_for_sm90(monkeypatch):
    # Without a GPU the architecture must be named; with one it would be the GPU's.
    monkeypatch.setenv("COITER_CUDA_ARCH", "sm_90")


SPMV = ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "d", "y": "d"})

# (expression, formats): every one must compile for the GPU with the default GPU schedule.
EXPRESSIONS = [
    SPMV,
    ("y(i) = A(i,j) * x(j)", {"A": "csc", "x": "d", "y": "d"}),
    ("y(i) = A(i,j) * x(j)", {"A": "coo", "x": "d", "y": "d"}),
    ("y(i) = A(i,j) * x(j)", {"A": "dcsr", "x": "d", "y": "d"}),
    ("y(i) = A(i,j) * x(j)", {"A": "dd", "x": "d", "y": "d"}),
    ("y(j) = A(i,j) * x(i)", {"A": "csr", "x": "d", "y": "d"}),
    ("y(i) = A(i,j) * x(j) + z(i)", {"A": "csr", "x": "d", "z": "d", "y": "d"}),
    ("C(i,j) = A(i,k) * B(k,j)", {"A": "csr", "B": "dd", "C": "dd"}),
    ("C(i,j) = A(i,j) + D(i,j)", {"A": "csr", "D": "dd", "C": "dd"}),
    ("C(i,j) = A(i,j) * D(i,j) * 2", {"A": "csr", "D": "dd", "C": "dd"}),
    ("y(i) = A(i,j) * B(i,j)", {"A": "csr", "B": "csr", "y": "d"}),
    ("A(i,j) = B(i,j,k) * c(k)", {"B": "csf", "c": "d", "A": "dd"}),
    ("A(i,l) = B(i,j,k) * C(j,l) * D(k,l)", {"B": "csf", "C": "dd", "D": "dd", "A": "dd"}),
    # Sparse results, assembled in two passes (count, offsets, fill) by a thread per row.
    ("C(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "C": "csr"}),
    ("C(i,j) = A(i,j) * B(i,j)", {"A": "csr", "B": "csr", "C": "csr"}),
    # ... or keeping A's pattern, filled at A's positions by its nonzeros split evenly.
    ("C(i,j) = A(i,j) * M(i,k) * N(k,j)", {"A": "csr", "M": "dd", "N": "dd", "C": "csr"}),
    ("C(i,j) = A(i,j) * x(j)", {"A": "csr", "x": "d", "C": "csr"}),
    ("C(i,j) = A(i,j) * M(i,k) * N(k,j)", {"A": "coo", "M": "dd", "N": "dd", "C": "coo"}),
]


@needs_nvrtc
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize(
    "expr,formats", EXPRESSIONS, ids=[f"{e} {sorted(f.items())}" for e, f in EXPRESSIONS]
)
def test_default_gpu_schedules_compile(expr, formats, dtype):
    kern = ct.compile(expr, formats=formats, dtype=dtype, target="cuda")
    source = kern.source()
    assert source == kern.source("cuda")
    assert "__global__" in source and "gpu_" in kern.concrete
    assert kern.stages["cuda"] == source


@needs_nvrtc
def test_default_gpu_spmm_adds_each_rows_sum_once_per_lane():
    # Each lane walks the warp's chunk of nonzeros for its own columns, summing a row's
    # products in a register: one atomic per row and column, not one per nonzero (the chunks of
    # a long row contended for its addresses).
    kern = ct.compile(
        "C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "dd", "C": "dd"}, target="cuda"
    )
    assert "∀ik_nzp0 ∀j ∀ik_nzp1" in kern.concrete
    assert "C_row_sum" in kern.source()
    assert "j: parallel(gpu_thread,atomics)" in kern.concrete


SCHEDULES = [
    "parallelize(i,gpu_thread,no_races)",
    "parallelize(i,gpu_warp,no_races);parallelize(j,gpu_thread,parallel_reduction)",
    "parallelize(i,gpu_block,no_races);parallelize(j,gpu_thread,parallel_reduction)",
    "split(i,i0,i1,4);parallelize(i0,gpu_block,no_races);parallelize(i1,gpu_warp,no_races);"
    "parallelize(j,gpu_thread,parallel_reduction)",
    # TACO's nonzero-balanced SpMV, on threads and on blocks of threads.
    "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,8);parallelize(fp0,gpu_thread,atomics)",
    # TACO's published GPU SpMV schedule (thesis Fig 1-14, in coiter's syntax): nonzero tiles
    # per block, warp and thread; only the innermost loop names atomics.
    "fuse(i,j,f);pos(f,fpos,A(i,j));split(fpos,block,fpos1,2048);split(fpos1,warp,fpos2,256);"
    "split(fpos2,thread,thr_nz,8);reorder(block,warp,thread,thr_nz);parallelize(block,gpu_block,no_races);"
    "parallelize(warp,gpu_warp,ignore_races);parallelize(thread,gpu_thread,atomics)",
    "fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,256);split(fp1,fp2,fp3,8);"
    "parallelize(fp0,gpu_block,atomics);parallelize(fp2,gpu_thread,atomics)",
    "split(i,i0,i1,32);parallelize(i0,gpu_block,no_races);parallelize(i1,gpu_thread,no_races)",
]


@needs_nvrtc
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_spmv_gpu_schedules_compile(schedule):
    kern = ct.compile(SPMV[0], formats=SPMV[1], schedule=schedule, target="cuda")
    assert "__global__" in kern.source()


# TACO's GPU schedules over positions, with its GPU units: TTV and MTTKRP over the positions of
# three fused loops of a CSF tensor, and SpMV by rows, whose thread loop walks a row's
# positions strided (here with atomics, which coiter asks of GPU loops that share y's entries).
TACO_GPU_OVER_POSITIONS = {
    "ttv": (
        "A(i,j) = B(i,j,k) * c(k)",
        {"B": "dss", "c": "d", "A": "dd"},
        "fuse(j,k,jk);fuse(i,jk,f);pos(f,fpos,B(i,j,k));split(fpos,block,fpos1,2048);"
        "split(fpos1,warp,fpos2,256);split(fpos2,thread,thread_nz,8);"
        "reorder(block,warp,thread,thread_nz);parallelize(block,GPUBlock,IgnoreRaces);"
        "parallelize(warp,GPUWarp,IgnoreRaces);parallelize(thread,GPUThread,Atomics)",
    ),
    "mttkrp": (
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        {"B": "dss", "C": "dd", "D": "dd", "A": "dd"},
        "reorder(i,k,l,j);fuse(k,l,kl);fuse(i,kl,f);pos(f,fpos,B(i,k,l));"
        "split(fpos,block,fpos1,128);split(fpos1,warp,nnz,16);"
        "split(j,dense_val_unbounded,thread,32);bound(dense_val_unbounded,dense_val,1,MaxExact);"
        "reorder(block,warp,dense_val,thread,nnz);parallelize(block,GPUBlock,IgnoreRaces);"
        "parallelize(warp,GPUWarp,IgnoreRaces);parallelize(thread,GPUThread,Atomics)",
    ),
    "spmv_rows": (
        "y(i) = A(i,j) * x(j)",
        {"A": "csr", "x": "d", "y": "d"},
        "split(i,block,block_row,256);split(block_row,warp_row,warp,8);pos(j,jpos,A(i,j));"
        "split(jpos,thread_nz,thread,32);reorder(block,warp,warp_row,thread,thread_nz);"
        "parallelize(block,GPUBlock,NoRaces);parallelize(warp,GPUWarp,NoRaces);"
        "parallelize(thread,GPUThread,Atomics)",
    ),
}


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(TACO_GPU_OVER_POSITIONS))
def test_taco_gpu_schedules_over_positions_compile(name):
    stmt, formats, schedule = TACO_GPU_OVER_POSITIONS[name]
    kern = ct.compile(stmt, formats=formats, schedule=schedule, target="cuda")
    source = kern.source()
    assert "__global__" in source and "coiter_atomic_add_float64((double*)&" in source


@needs_nvrtc
def test_a_workspace_of_each_gpu_thread_is_refused_with_the_reason():
    # TACO's GPU TTV also precomputes each thread's products into a workspace over its
    # split's inner loop; coiter would allocate it inside the kernel, which a GPU cannot.
    stmt, formats, schedule = TACO_GPU_OVER_POSITIONS["ttv"]
    schedule = schedule.replace(
        "reorder(block,warp,thread,thread_nz);",
        "reorder(block,warp,thread,thread_nz);precompute(B(i,j,k)*c(k),thread_nz,thread_nz_pre);",
    )
    with pytest.raises(
        ct.ScheduleError, match="allocates ws0_vals in the kernel before its inner GPU"
    ):
        ct.compile(stmt, formats=formats, schedule=schedule, target="cuda")


@needs_nvrtc
def test_spmm_schedules_compile():
    formats = {"A": "csr", "B": "dd", "C": "dd"}
    for schedule in [
        "parallelize(i,gpu_warp,no_races);parallelize(j,gpu_thread,no_races)",
        "fuse(i,k,f);pos(f,fp,A(i,k));split(fp,fp0,fp1,8);parallelize(fp0,gpu_warp,atomics);"
        "parallelize(j,gpu_thread,no_races)",
        "reorder(k,j);parallelize(i,gpu_block,no_races);parallelize(j,gpu_thread,no_races)",
    ]:
        assert (
            "__global__"
            in ct.compile(
                "C(i,j) = A(i,k) * B(k,j)", formats=formats, schedule=schedule, target="cuda"
            ).source()
        )


@needs_nvrtc
def test_warp_reduction_golden():
    """The warp-per-row SpMV as printed: a warp-stride loop over rows, a lane-stride loop over
    the row's nonzeros, a butterfly sum, and the store by lane 0 only."""
    kern = ct.compile(
        SPMV[0],
        formats=SPMV[1],
        target="cuda",
        schedule="parallelize(i,gpu_warp,no_races);parallelize(j,gpu_thread,parallel_reduction)",
    )
    src = kern.source()
    assert (
        "for (int64_t i = i_begin + "
        "(int64_t)(((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5); "
        "i < i_end; i += (int64_t)(((int64_t)gridDim.x * blockDim.x) >> 5)) {"
    ) in src
    assert (
        "pA2 = pA2_begin + (int64_t)(int64_t)(threadIdx.x & 31); pA2 < pA2_end; pA2 += (int64_t)32)"
        in src
    )
    assert "acc0 = coiter_warp_add_float64(acc0);" in src
    assert "__shfl_xor_sync(0xffffffffu, (double)v, offset)" in src
    lane0 = src.index("if ((threadIdx.x & 31) == 0) {")
    assert src.index("y_vals[py1] += acc0;") > lane0


@needs_nvrtc
def test_block_reduction_and_atomics_golden():
    src = ct.compile(
        SPMV[0],
        formats=SPMV[1],
        target="cuda",
        schedule="parallelize(i,gpu_block,no_races);parallelize(j,gpu_thread,parallel_reduction)",
    ).source()
    assert (
        "i = i_begin + (int64_t)(int64_t)blockIdx.x; i < i_end; i += (int64_t)(int64_t)gridDim.x"
        in src
    )
    assert (
        "acc0 = coiter_block_add_float64(acc0);" in src and "__shared__ double partial[32];" in src
    )
    assert "if (threadIdx.x == 0) {" in src
    src = ct.compile(
        SPMV[0],
        formats=SPMV[1],
        target="cuda",
        schedule="fuse(i,j,f);pos(f,fp,A(i,j));split(fp,fp0,fp1,8);"
        "parallelize(fp0,gpu_thread,atomics)",
    ).source()
    assert "coiter_atomic_add_float64((double*)&y_vals[i]" in src and "__activemask()" in src


def test_gpu_units_need_the_cuda_target():
    with pytest.raises(ct.ScheduleError, match="needs target='cuda'"):
        ct.compile(SPMV[0], formats=SPMV[1], schedule="parallelize(i,gpu_thread,no_races)")
    with pytest.raises(ct.ScheduleError, match="runs on the CPU"):
        ct.compile(
            SPMV[0], formats=SPMV[1], schedule="parallelize(i,cpu_thread,no_races)", target="cuda"
        )


@needs_nvrtc
def test_illegal_gpu_schedules_are_schedule_errors():
    formats = SPMV[1]
    cases = {
        # a warp loop cannot enclose a block loop
        "parallelize(i,gpu_warp,no_races);parallelize(j,gpu_block,no_races)": "GPU loops nest",
        # lanes sharing the row's accumulator must reduce it
        "parallelize(i,gpu_warp,no_races);parallelize(j,gpu_thread,no_races)": "parallel_reduction",
        # a GPU cannot give each thread a private copy of the result
        "parallelize(j,gpu_thread,temporary)": "choose atomics",
    }
    for schedule, message in cases.items():
        with pytest.raises(ct.ScheduleError, match=message):
            ct.compile(SPMV[0], formats=formats, schedule=schedule, target="cuda")


@needs_nvrtc
def test_sparse_results_are_assembled_in_two_passes():
    kern = ct.compile(
        "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}, target="cuda"
    )
    assert "i: parallel(gpu_thread,no_races)" in kern.concrete
    source = kern.source()
    # The counting pass stores only the row's count; the filling pass the entries.
    assert "if (!(assembly_pass != 0))" in source and "C2_crd[C2_count] = " in source
    # ... and only inside the row's room (a row's end is 0 while counting).
    assert "if (C2_count < C_row_end) {\n" in source
    assert "realloc" not in source and "coiter_grow" not in source
    # Formats a thread per row cannot fill from its offset, and one-pass strategies, say why.
    with pytest.raises(ct.CompileError, match="two passes"):
        ct.compile(
            "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "dcsr"}, target="cuda"
        )
    with pytest.raises(ct.ScheduleError, match="only in two passes"):
        ct.compile(
            "C(i,j) = A(i,j) + B(i,j)",
            formats={"A": "csr", "B": "csr", "C": "csr"},
            schedule="assemble(C,append);parallelize(i,gpu_thread,no_races)",
            target="cuda",
        )


@needs_nvrtc
def test_results_keeping_an_operands_pattern_fill_its_positions_in_one_pass():
    # SDDMM's result keeps A's pattern (docs/compiler.md): each thread computes 4 of A's
    # nonzeros whole and stores them at A's positions, without counting or appending.
    kern = ct.compile(
        "S(i,j) = A(i,j) * M(i,k) * N(k,j)",
        formats={"A": "csr", "M": "dd", "N": "dd", "S": "csr"},
        target="cuda",
    )
    assert "pos(A(i,j)) ij_nzp, ij_nzp →split(4)" in kern.concrete
    assert "ij_nzp0: parallel(gpu_thread,no_races)" in kern.concrete
    source = kern.source()
    assert "S_vals[pA2] += acc0;" in source
    assert "assembly_pass" not in source and "S2_count" not in source


@needs_nvrtc
def test_host_only_operations_are_refused_by_name():
    with pytest.raises(ct.CompileError, match="host"):
        ct.compile(
            "C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"}, target="cuda"
        )
    with pytest.raises(ct.CompileError, match="complex"):
        ct.compile(SPMV[0], formats=SPMV[1], dtype=np.complex128, target="cuda")


@needs_nvrtc
def test_sources_by_target():
    kern = ct.compile(SPMV[0], formats=SPMV[1], target="cuda")
    with pytest.raises(ct.CompileError, match="source is kern.source\\('cuda'\\)"):
        kern.source("c")
    with pytest.raises(ct.CompileError, match="compiled for the CPU"):
        ct.compile(SPMV[0], formats=SPMV[1]).source("cuda")
    with pytest.raises(ct.CompileError, match="unknown target"):
        ct.compile(SPMV[0], formats=SPMV[1], target="tpu")


@needs_nvrtc
def test_gpu_kernels_are_cached_by_architecture(monkeypatch):
    ct.clear_cache()
    ct.compile(SPMV[0], formats=SPMV[1], target="cuda")
    before = ct.cache_info()
    ct.compile(SPMV[0], formats=SPMV[1], target="cuda")
    assert ct.cache_info()["compiles"] == before["compiles"]
    monkeypatch.setenv("COITER_CUDA_ARCH", "sm_80")
    ct.compile(SPMV[0], formats=SPMV[1], target="cuda")
    assert ct.cache_info()["compiles"] == before["compiles"] + 1


@needs_nvrtc
def test_nvrtc_compiles_ptx_that_ptxas_accepts(tmp_path):
    """The printed CUDA, compiled to PTX by NVRTC, assembles with the toolkit's ptxas."""
    ptxas = next(
        (p for p in ("/usr/local/cuda/bin/ptxas", "/usr/local/bin/ptxas") if os.path.exists(p)),
        None,
    )
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    ptxas_release = tuple(int(n) for n in version.split("release ")[1].split(",")[0].split("."))
    nvrtc_release = tuple(int(n) for n in status["nvrtc"].split("."))
    if nvrtc_release > ptxas_release:
        pytest.skip(
            f"NVRTC {status['nvrtc']} writes PTX newer than ptxas {ptxas_release} reads "
            "(the test extra pins NVRTC to the CI toolkit's 13.0)"
        )
    for expr, formats in EXPRESSIONS[:8]:
        source = ct.compile(expr, formats=formats, target="cuda").source()
        ptx = ct._core.cuda_compile(source, "compute_90")
        path = tmp_path / "kernel.ptx"
        path.write_bytes(ptx.rstrip(b"\0"))
        subprocess.run(
            [ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "kernel.cubin")], check=True
        )


def test_running_without_a_gpu_says_what_is_missing():
    if status["available"]:
        pytest.skip("this machine has a GPU")
    with pytest.raises(ct.DeviceError, match="driver"):
        ct.asarray(np.ones(3)).to("cuda")
    if status["nvrtc"] is not None:
        kern = ct.compile(SPMV[0], formats=SPMV[1], target="cuda")
        A = ct.random((5, 4), density=0.5, format="csr", seed=1)
        with pytest.raises(ct.DeviceError, match="driver"):
            kern(A=A, x=np.ones(4))


def test_cpu_tensors_report_their_device():
    t = ct.asarray(np.ones(3))
    assert t.device == "cpu" and t.to("cpu") is t
    with pytest.raises(ValueError, match="unknown device"):
        t.to("tpu")


def test_status_without_a_gpu_names_the_problem():
    code = "import coiter as ct; s = ct.cuda.status(); print(s['available'], bool(s['problem']))"
    env = dict(os.environ, COITER_CUDA_DRIVER_LIBRARY="/nonexistent/libcuda.so.1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True"]
