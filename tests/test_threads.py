"""The thread count of parallel kernels: ct.set_num_threads / ct.get_num_threads (docs/reference.md,
"Kernels and the cache"), and
the worker pool that runs them."""

import multiprocessing
import os
import time

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import coiter as ct


@pytest.fixture
def restore_num_threads():
    saved = ct.get_num_threads()
    yield
    ct.set_num_threads(saved)


def test_default_is_a_positive_count():
    n = ct.get_num_threads()
    assert isinstance(n, int) and n >= 1
    if "OMP_NUM_THREADS" not in os.environ:
        assert n == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_set_then_get(restore_num_threads, n):
    ct.set_num_threads(n)
    assert ct.get_num_threads() == n


@pytest.mark.parametrize("n", [0, -1, -(2**31)])
def test_counts_below_one_raise_value_error(restore_num_threads, n):
    ct.set_num_threads(3)
    with pytest.raises(ValueError, match="at least 1"):
        ct.set_num_threads(n)
    assert ct.get_num_threads() == 3  # unchanged


@pytest.mark.parametrize("n", [2.0, 2.5, "2", None, 2**40])
def test_non_int_counts_raise_type_error(restore_num_threads, n):
    ct.set_num_threads(3)
    with pytest.raises(TypeError):
        ct.set_num_threads(n)
    assert ct.get_num_threads() == 3


def test_docstrings():
    assert "threads" in ct.set_num_threads.__doc__
    assert "threads" in ct.get_num_threads.__doc__


# -- the worker pool (src/runtime/worker_pool.cpp) ---------------------------------------------
def _poisson(side):
    line = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(side, side))
    eye = sp.eye_array(side)
    m = (sp.kron(eye, line) + sp.kron(line, eye)).tocsr()
    m.sort_indices()
    return m


def test_idle_workers_sleep(restore_num_threads):
    # Spinning workers would take a core from NumPy's BLAS threads between coiter's kernels.
    ct.set_num_threads(2)
    m = _poisson(300)
    t, x = ct.asarray(m), np.ones(m.shape[0])
    for _ in range(5):
        np.testing.assert_allclose(t.matvec(x), m @ x)
    cpu = time.process_time()
    time.sleep(0.3)
    assert time.process_time() - cpu < 0.05


def test_cg_with_coiters_matvec_takes_scipys_steps():
    m = _poisson(100)
    b = np.linspace(1.0, 2.0, m.shape[0])
    want, _ = spla.cg(m, b, rtol=0.0, atol=0.0, maxiter=40)
    for operator in (ct.asarray(m), spla.aslinearoperator(ct.asarray(m))):
        got, _ = spla.cg(operator, b, rtol=0.0, atol=0.0, maxiter=40)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def _child_matvec(queue):
    m = _poisson(200)
    queue.put(bool(np.allclose(ct.asarray(m).matvec(np.ones(m.shape[0])), m @ np.ones(m.shape[0]))))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork start method")
def test_a_forked_child_runs_parallel_kernels(restore_num_threads):
    # The child has none of the parent's workers: the pool starts over there (pthread_atfork).
    ct.set_num_threads(2)
    m = _poisson(200)
    ct.asarray(m).matvec(np.ones(m.shape[0]))  # the parent's workers exist
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_matvec, args=(queue,))
    child.start()
    assert queue.get(timeout=120) is True
    child.join(timeout=60)
    assert child.exitcode == 0
