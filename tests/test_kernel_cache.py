"""The signature cache (docs/reference.md, "Kernels and the cache"): memory hits modulo renaming,
disk hits from another process, corrupt entries recompiled, one compilation for concurrent
requests."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from coiter import _core


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("COITER_CACHE_DIR", str(directory))
    ct.clear_cache()
    return directory


def spmv(statement="y(i) = A(i,j) * x(j)", names=("A", "x", "y"), engine=None):
    formats = dict(zip(names, ("csr", "d", "d")))
    return ct.compile(statement, formats=formats, engine=engine)


def test_renamed_statement_hits_the_memory_cache(cache_dir):
    spmv()
    before = ct.cache_info()
    kern = spmv("out(r) = M(r,c) * v(c)", names=("M", "v", "out"))
    after = ct.cache_info()
    assert after["hits"] == before["hits"] + 1
    assert after["compiles"] == before["compiles"]
    assert kern.inputs == ["M", "v"]
    A = sp.random(4, 5, density=0.5, format="csr", random_state=0)
    np.testing.assert_allclose(kern(M=ct.asarray(A), v=np.ones(5)).values, A @ np.ones(5))


def test_different_formats_do_not_share_a_kernel(cache_dir):
    spmv()
    before = ct.cache_info()
    ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csc", "x": "d", "y": "d"})
    assert ct.cache_info()["misses"] == before["misses"] + 1


def run_in_new_process(cache_dir, statement="y(i) = A(i,j) * x(j)", names=("A", "x", "y")):
    formats = dict(zip(names, ("csr", "d", "d")))
    code = (
        "import coiter as ct, json\n"
        f"ct.compile({statement!r}, formats={formats!r})\n"
        "print(json.dumps(ct.cache_info()))\n"
    )
    env = dict(os.environ, COITER_CACHE_DIR=str(cache_dir))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    import json

    return json.loads(out.stdout)


def test_a_second_process_loads_the_kernel_from_disk(cache_dir):
    first = run_in_new_process(cache_dir)
    second = run_in_new_process(cache_dir)
    assert first["compiles"] == 1 and first["disk_hits"] == 0
    assert second["compiles"] == 0 and second["disk_hits"] == 1


def test_a_renamed_statement_in_another_process_loads_the_kernel_from_disk(cache_dir):
    # The disk key covers the kernel's IR with its variables numbered, not named.
    first = run_in_new_process(cache_dir)
    second = run_in_new_process(cache_dir, "z(k) = B(k,l) * v(l)", names=("B", "v", "z"))
    assert first["compiles"] == 1
    assert second["compiles"] == 0 and second["disk_hits"] == 1
    assert len(list(cache_dir.glob("*.kernel"))) == 1
    # Kernels that differ in more than names still differ on disk.
    third = run_in_new_process(cache_dir, "z(k) = B(k,l) * v(k)", names=("B", "v", "z"))
    assert third["compiles"] == 1 and third["disk_hits"] == 0


def test_stages_show_the_statement_names_whatever_the_cache_shares(cache_dir):
    renamed = spmv("z(k) = B(k,l) * v(l)", names=("B", "v", "z"))
    kern = spmv()
    assert kern.stages["after IR passes"] != renamed.stages["after IR passes"]  # names shown
    assert "A2_pos" in kern.stages["after IR passes"]


def test_a_corrupted_cache_file_is_recompiled_not_executed(cache_dir):
    spmv()
    files = list(cache_dir.glob("*.kernel"))
    assert len(files) == 1
    data = bytearray(files[0].read_bytes())
    data[-20:] = b"\x00" * 20  # damage the code, keep the header
    files[0].write_bytes(bytes(data))
    ct.clear_cache()
    before = ct.cache_info()
    kern = spmv()
    after = ct.cache_info()
    assert after["compiles"] == before["compiles"] + 1
    assert after["disk_hits"] == before["disk_hits"]
    A = sp.random(6, 6, density=0.5, format="csr", random_state=3)
    np.testing.assert_allclose(kern(A=ct.asarray(A), x=np.ones(6)).values, A @ np.ones(6))


def test_a_truncated_cache_file_is_recompiled(cache_dir):
    spmv()
    (path,) = cache_dir.glob("*.kernel")
    path.write_bytes(path.read_bytes()[:40])
    ct.clear_cache()
    before = ct.cache_info()
    spmv()
    assert ct.cache_info()["compiles"] == before["compiles"] + 1


def test_concurrent_compiles_of_one_signature_compile_once(cache_dir):
    ct.clear_cache(disk=True)
    before = ct.cache_info()
    kernels, errors = [], []

    def work():
        try:
            kernels.append(
                ct.compile(
                    "q(i) = B(i,j) * w(j) + c(i)",
                    formats={"B": "dcsr", "w": "d", "c": "d", "q": "d"},
                )
            )
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = ct.cache_info()
    assert not errors
    assert len(kernels) == 8
    assert after["compiles"] == before["compiles"] + 1
    assert after["misses"] == before["misses"] + 1


def test_a_directory_writable_by_others_is_not_used(tmp_path, monkeypatch):
    unsafe = tmp_path / "shared"
    unsafe.mkdir()
    os.chmod(unsafe, 0o777)
    monkeypatch.setenv("COITER_CACHE_DIR", str(unsafe))
    ct.clear_cache()
    spmv()
    info = ct.cache_info()
    assert info["disk_directory"] is None
    assert "writable by other users" in info["disk_problem"]
    assert not list(unsafe.glob("*.kernel"))


def test_clear_cache_with_disk_removes_the_files(cache_dir):
    spmv()
    assert list(cache_dir.glob("*.kernel"))
    ct.clear_cache(disk=True)
    assert not list(cache_dir.glob("*.kernel"))
    assert ct.cache_info()["entries"] == 0


def test_cache_keys_identify_the_build_not_only_the_version():
    # A rebuilt development copy keeps its version; its binary's size and time tell it apart,
    # so kernels compiled by an older build are never loaded from disk.
    import os

    build = _core.compiler_build_id().split(";")
    assert build[0] == ct.__version__
    assert int(build[1]) == os.stat(_core.__file__).st_size


def test_a_tensor_keeps_its_product_kernels_until_the_cache_is_cleared(cache_dir):
    # T.matvec remembers its kernel on the tensor (no Format hashed per call): later products
    # ask the compiler nothing. Clearing the cache makes the next product choose its kernel
    # again (a lookup in the compiler's cache), as every other call does.
    def lookups():
        info = ct.cache_info()
        return info["hits"] + info["misses"]

    r = sp.random(50, 40, density=0.1, random_state=5, format="csr")
    t = ct.asarray(r)
    x = np.linspace(0.0, 1.0, 40)
    np.testing.assert_allclose(t.matvec(x), r @ x)
    before = lookups()
    np.testing.assert_allclose(t.matvec(2 * x), r @ (2 * x))
    assert lookups() == before
    ct.clear_cache()
    before = lookups()
    np.testing.assert_allclose(t.matvec(x), r @ x)
    assert lookups() > before
    before = lookups()
    np.testing.assert_allclose(t.matvec(3 * x), r @ (3 * x))
    # Another tensor of the same format shares the choice; the transposed product is its own.
    other = ct.asarray(sp.random(50, 40, density=0.2, random_state=6, format="csr"))
    np.testing.assert_allclose(other.matvec(x), other.to_scipy() @ x)
    assert lookups() == before
    np.testing.assert_allclose(t.rmatvec(np.ones(50)), r.T @ np.ones(50))
    assert lookups() > before


@pytest.mark.parametrize(
    "statement,expected",
    [
        # B read transposed: converted to CSC at each call.
        ("C(i,j) = A(i,j) + B(j,i)", lambda a, b: a + b.T),
        # One operand read both ways: two inputs, one of them converted.
        ("C(i,j) = A(i,j) * A(j,i)", lambda a, b: a.multiply(a.T)),
    ],
)
def test_a_choice_that_converts_operands_is_remembered(cache_dir, statement, expected):
    # Which operands a kernel needs converted, and to what, follows from the statement and the
    # operands' formats alone: a repeated call converts the new operands but chooses nothing
    # (no compiler cache lookup), and the operator spelling does the same.
    rng = np.random.default_rng(8)
    a, b = (sp.random(30, 30, density=0.2, format="csr", random_state=rng) for _ in range(2))
    result = ct.evaluate(statement, A=a, B=b)
    np.testing.assert_allclose(result.to_numpy(), expected(a, b).toarray())
    before = ct.cache_info()
    for _ in range(2):
        c, d = (sp.random(30, 30, density=0.2, format="csr", random_state=rng) for _ in range(2))
        c.data[:3] = 0.0  # stored zeros stay stored through the conversion
        np.testing.assert_allclose(
            ct.evaluate(statement, A=c, B=d).to_numpy(), expected(c, d).toarray()
        )
    after = ct.cache_info()
    assert (after["hits"], after["misses"]) == (before["hits"], before["misses"])
    t = ct.asarray(a)
    np.testing.assert_allclose((t + t.T).to_numpy(), (a + a.T).toarray())
    before = ct.cache_info()
    np.testing.assert_allclose((t + t.T).to_numpy(), (a + a.T).toarray())
    assert ct.cache_info()["hits"] + ct.cache_info()["misses"] == before["hits"] + before["misses"]


def test_evaluate_remembers_its_kernel_per_statement_formats_and_options(cache_dir):
    # ct.evaluate's parsing, format inference and expression building cost several times a
    # small kernel's call: a repeated call with operands of the same formats and dtypes goes
    # straight to the kernel (not even to the compiler's cache).
    rng = np.random.default_rng(3)
    a = sp.random(40, 30, density=0.2, format="csr", random_state=rng)
    b = sp.random(40, 30, density=0.2, format="csr", random_state=rng)
    statement = "C(i,j) = A(i,j) + B(i,j)"
    np.testing.assert_allclose(ct.evaluate(statement, A=a, B=b).to_numpy(), (a + b).toarray())
    before = ct.cache_info()
    # Other data, same signature and statistics (the nonzeros and row lengths by which the
    # choice of schedule="auto", the default, is remembered too).
    c = sp.random(40, 30, density=0.2, format="csr", random_state=rng)
    np.testing.assert_allclose(ct.evaluate(statement, A=a, B=c).to_numpy(), (a + c).toarray())
    after = ct.cache_info()
    assert (after["hits"], after["misses"], after["compiles"]) == (
        before["hits"],
        before["misses"],
        before["compiles"],
    )
    # Another operand format, result format or dtype is another kernel.
    for given in ({"B": c.tocsc()}, {"out_format": "dense"}, {"dtype": np.float32}):
        before = ct.cache_info()
        options = {k: v for k, v in given.items() if k in ("out_format", "dtype")}
        operands = dict({"A": a, "B": c}, **{k: v for k, v in given.items() if k == "B"})
        result = ct.evaluate(statement, **options, **operands)
        np.testing.assert_allclose(
            np.asarray(result.to_numpy(), dtype=np.float64), (a + c).toarray(), rtol=1e-6
        )
        assert (
            ct.cache_info()["misses"] + ct.cache_info()["hits"] > before["misses"] + before["hits"]
        ), given
    # ct.clear_cache forgets it too.
    ct.clear_cache()
    before = ct.cache_info()
    ct.evaluate(statement, A=a, B=b)
    assert ct.cache_info()["misses"] == before["misses"] + 1
