import numpy as np
import pytest

import coiter as ct

# Every format of docs/reference.md, "Formats" that can store a matrix, by a readable id.
MATRIX_FORMATS = {
    "dense": "dense",
    "csr": "csr",
    "csc": "csc",
    "dcsr": "dcsr",
    "dcsc": "dcsc",
    "coo": "coo",
    "csf": "csf",
    "dia": "dia",
    "ell": "ell",
    "bcsr22": ct.bcsr((2, 2)),
    "hashed": "dh",
    "hashed_outer": "hs",
    "unordered": ct.Format([ct.dense, ct.compressed(ordered=False)]),
}


@pytest.fixture(params=sorted(MATRIX_FORMATS), ids=sorted(MATRIX_FORMATS))
def matrix_format(request):
    return MATRIX_FORMATS[request.param]


@pytest.fixture
def thesis_matrix():
    """The 4x6 example matrix of Kjolstad's thesis, ch. 2 (row 2 empty)."""
    dense = np.zeros((4, 6))
    for (i, j), v in {
        (0, 0): 5,
        (0, 1): 1,
        (1, 0): 7,
        (1, 1): 3,
        (3, 0): 8,
        (3, 3): 4,
        (3, 4): 9,
    }.items():
        dense[i, j] = v
    return dense


@pytest.fixture
def tuning_dir(tmp_path, monkeypatch):
    """A private cache directory, so the tuning database starts empty."""
    monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path))
    yield tmp_path


@pytest.fixture(autouse=True, scope="session")
def private_kernel_cache(tmp_path_factory):
    """Kernels compiled by the tests go to a private disk cache, not the user's."""
    import os

    previous = os.environ.get("COITER_CACHE_DIR")
    os.environ["COITER_CACHE_DIR"] = str(tmp_path_factory.mktemp("kernel-cache"))
    yield
    if previous is None:
        del os.environ["COITER_CACHE_DIR"]
    else:
        os.environ["COITER_CACHE_DIR"] = previous


@pytest.fixture(scope="module")
def forget_kernels_afterwards():
    """Empty the in-memory kernel cache after a module that compiles common kernels under
    generated tensor names (the array operators name operands t0, t1, ...). The memory cache
    matches kernels up to renaming but the disk cache does not: a later `ct.compile` of the
    same kernel under other names would hit memory, write nothing to disk, and a fresh process
    would compile it again (test_benchmarks' first-call check sees that)."""
    yield
    ct.clear_cache()


@pytest.fixture
def restore_num_threads():
    """Put ct.set_num_threads back as it was after a test that changes it."""
    before = ct.get_num_threads()
    yield
    ct.set_num_threads(before)
