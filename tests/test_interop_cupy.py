"""GPU arrays adopted without copying (coiter/interop_cupy.py, docs/gpu.md "CuPy"), the parts that
run without a GPU: the checks of a sparse matrix's index arrays (array operations that run on
the GPU there, on NumPy here), telling GPU arrays apart, and the error where no GPU is. The
adoption itself is tested on a GPU in test_cuda_device.py."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import coiter as ct
from coiter.interop_cupy import (
    UNSORTED_ENTRIES,
    UNSORTED_ROWS,
    _is_c_contiguous,
    compressed_problem,
    coo_problem,
    is_device_array,
)


class FakeGpuArray:
    """An object exporting __cuda_array_interface__ over host memory (as a GPU library would
    over GPU memory)."""

    def __init__(self, array):
        self.array = array

    @property
    def __cuda_array_interface__(self):
        a = self.array
        return {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "data": (a.ctypes.data, False),
            "version": 3,
        }


def csr_arrays(seed=0, m=30, n=20):
    A = sp.random_array((m, n), density=0.2, format="csr", random_state=seed)
    return A.indptr.copy(), A.indices.copy(), m, n


def test_a_canonical_csr_passes():
    pos, crd, m, n = csr_arrays()
    assert compressed_problem(np, pos, crd, m, n) is None
    assert compressed_problem(np, np.zeros(m + 1, np.int32), crd[:0], m, n) is None


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (lambda pos, crd: pos.__setitem__(0, 1), "indptr[0] is not 0"),
        (lambda pos, crd: pos.__setitem__(5, pos[4] - 1), "indptr decreases"),
        (lambda pos, crd: pos.__setitem__(-1, pos[-1] - 1), "indptr[-1] is not"),
        (lambda pos, crd: pos.__setitem__(slice(-1, None), 10**9), "indptr[-1] is not"),
        (lambda pos, crd: crd.__setitem__(3, 20), "outside [0, 20)"),
        (lambda pos, crd: crd.__setitem__(0, -1), "outside [0, 20)"),
        (lambda pos, crd: crd.__setitem__(slice(None), crd[::-1].copy()), UNSORTED_ROWS),
    ],
)
def test_each_corruption_of_a_csr_is_named(corrupt, message):
    pos, crd, m, n = csr_arrays()
    corrupt(pos, crd)
    problem = compressed_problem(np, pos, crd, m, n)
    assert problem is not None and message in problem


def test_a_repeated_index_in_a_row_is_unsorted_and_across_rows_is_not():
    pos = np.array([0, 2, 3], np.int32)
    assert compressed_problem(np, pos, np.array([1, 1, 0], np.int32), 2, 3) == UNSORTED_ROWS
    assert compressed_problem(np, pos, np.array([0, 2, 2], np.int32), 2, 3) is None


def test_offsets_far_out_of_range_are_reported_not_followed():
    # (the check indexes by the offsets: clipped, a corrupted offset cannot take it outside)
    pos = np.array([0, 2**31 - 1, -(2**31), 3], np.int64)
    problem = compressed_problem(np, pos, np.array([0, 1, 2], np.int64), 3, 3)
    assert problem == "indptr decreases"
    assert "entries" in compressed_problem(np, np.array([0, 1]), np.array([0]), 2, 3)


def test_coo_checks():
    C = sp.random_array((25, 15), density=0.3, format="coo", random_state=3)
    C.sum_duplicates()  # sorted by row, then column
    row, col = C.row.astype(np.int32), C.col.astype(np.int32)
    assert coo_problem(np, row, col, C.shape) is None
    assert coo_problem(np, row[:0], col[:0], C.shape) is None
    bad = row.copy()
    bad[2] = 25
    assert "row index is outside [0, 25)" in coo_problem(np, bad, col, C.shape)
    bad = col.copy()
    bad[-1] = -1
    assert "column index is outside [0, 15)" in coo_problem(np, row, bad, C.shape)
    assert coo_problem(np, row[::-1].copy(), col[::-1].copy(), C.shape) == UNSORTED_ENTRIES
    twice = np.repeat(np.arange(3, dtype=np.int32), 2)
    assert coo_problem(np, twice, np.zeros(6, np.int32), C.shape) == UNSORTED_ENTRIES
    assert "one length" in coo_problem(np, row, col[:-1], C.shape)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 6),
    st.lists(st.integers(-2, 8), min_size=2, max_size=8),
    st.lists(st.integers(-1, 7), max_size=12),
)
def test_compressed_check_agrees_with_a_plain_one(m, n, pos, crd):
    pos = np.array((pos + [0] * (m + 1))[: m + 1], np.int64)
    crd = np.array(crd, np.int64)

    def plain():  # the definition, entry by entry
        if pos[0] != 0 or any(pos[r + 1] < pos[r] for r in range(m)) or pos[m] != len(crd):
            return False
        if any(c < 0 or c >= n for c in crd):
            return False
        return all(crd[q] < crd[q + 1] for r in range(m) for q in range(pos[r], pos[r + 1] - 1))

    assert (compressed_problem(np, pos, crd, m, n) is None) == plain()


@pytest.mark.parametrize(
    "array",
    [
        np.ones((2, 3)),
        np.ones((3, 2)).T,
        np.ones((4, 6))[:, ::2],
        np.ones((4, 6))[::2],
        np.ones((4, 6))[1:3],
        np.ones((1, 5))[:, :],
        np.ones((5, 1, 3)).transpose(1, 0, 2),  # an extent of 1 may have any stride
        np.ones((5, 1, 3))[:, :, ::3],
    ],
)
def test_contiguity_is_read_from_the_interface_as_numpy_reads_it(array):
    interface = FakeGpuArray(array).__cuda_array_interface__
    interface["strides"] = array.strides
    assert _is_c_contiguous(interface) == array.flags.c_contiguous
    interface["strides"] = None  # (None: C-contiguous, by the protocol)
    assert _is_c_contiguous(interface)


def test_gpu_arrays_are_told_apart():
    assert is_device_array(FakeGpuArray(np.ones(3)))
    for host in (np.ones(3), sp.csr_array(np.eye(2)), [1.0, 2.0], 3.0):
        assert not is_device_array(host)


@pytest.mark.skipif(ct.cuda.status()["available"], reason="the error where there is no GPU")
def test_a_gpu_array_without_a_gpu_says_why():
    with pytest.raises(ct.DeviceError, match="cannot use the GPU"):
        ct.asarray(FakeGpuArray(np.ones(3)))
    with pytest.raises(ct.DeviceError, match="cannot use the GPU"):
        ct.evaluate("y(i) = x(i) * 2", x=FakeGpuArray(np.ones(3)))
