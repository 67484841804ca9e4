"""The thread count of parallel kernels: ct.set_num_threads / ct.get_num_threads (docs/reference.md,
"Kernels and the cache")."""

import os

import pytest

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
