"""NumPy indexing of tensors against NumPy on dense copies (pydata/sparse's test_slicing, SciPy's
test_getelement/test_slicing): integers, slices with any step, None, ..., one integer or boolean
array, on every mode and every format; iteration and len."""

import numpy as np
import pytest

import coiter as ct
from coiter.formats import is_all_dense
from test_arrays_operators import make

pytestmark = pytest.mark.usefixtures("forget_kernels_afterwards")

KEYS_2D = [
    1,
    -1,
    slice(1, 4),
    slice(None, None, -1),
    slice(4, 0, -2),
    (slice(None), 2),
    (slice(None), [0, 3, 0, 1]),
    ([5, 1, 1],),
    (2, slice(1, None, 2)),
    (None, 3),
    (Ellipsis, 1),
    (slice(None), None, slice(2, 3)),
    (-2, -3),
    (slice(7, 9),),
    (np.array([True, False, True, False, True, False]),),
    (slice(None), np.array([3, -1])),
    (Ellipsis,),
    (),
]


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo", "dcsr", "dh", "dia", "ell", "bcsr"])
@pytest.mark.parametrize("key", KEYS_2D, ids=repr)
def test_matrix_indexing(fmt, key):
    t, d = make((6, 4), 0.5, fmt, seed=1)
    expected = d[key]
    result = t[key]
    if np.ndim(expected) == 0:
        assert not isinstance(result, ct.Tensor) and result == expected
        return
    assert isinstance(result, ct.Tensor)
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result.to_numpy(), expected)
    assert is_all_dense(result.format) == (fmt == "dense")


@pytest.mark.parametrize("fmt", ["dense", "csf", "coo"])
@pytest.mark.parametrize(
    "key",
    [
        0,
        (1, 2),
        (slice(None), 1, slice(None)),
        (Ellipsis, [3, 0]),
        (None, 1, None),
        (slice(0, 2), slice(None, None, -1), 3),
        ([2, 0, 2], slice(1, 3)),
    ],
    ids=repr,
)
def test_tensor_indexing(fmt, key):
    t, d = make((3, 4, 5), 0.3, fmt, seed=2)
    np.testing.assert_array_equal(t[key].to_numpy(), d[key])


def test_indexing_results_keep_the_format_or_take_the_default():
    t, d = make((6, 4), 0.5, "csc", seed=1)
    assert t[1:3].format == ct.as_format("csc", 2)  # the order is kept
    assert t[2].format == ct.as_format("s", 1)  # a row: a compressed vector
    c, _ = make((6, 4), 0.5, "coo", seed=1)
    assert c[None, 1:3].format == ct.as_format("coo", 3)


def test_bad_keys_raise_index_errors():
    t, _ = make((6, 4), 0.5, "csr")
    with pytest.raises(IndexError, match="out of range"):
        t[6]
    with pytest.raises(IndexError, match="out of range"):
        t[:, [0, 4]]
    with pytest.raises(IndexError, match="too many"):
        t[1, 2, 3]
    with pytest.raises(IndexError, match="one array index"):
        t[[0, 1], [0, 1]]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError, match="boolean"):
        t[np.array([True, False])]
    with pytest.raises(IndexError, match="integers, slices"):
        t[1.5]


@pytest.mark.parametrize("fmt", ["dense", "csr", "coo"])
def test_iteration_and_len(fmt):
    t, d = make((5, 3), 0.5, fmt, seed=3)
    assert len(t) == 5
    rows = list(t)
    assert len(rows) == 5
    for row, expected in zip(rows, d):
        np.testing.assert_array_equal(row.to_numpy(), expected)
    with pytest.raises(TypeError, match="0-d"):
        len(ct.asarray(np.array(2.0)))


def test_csr_row_reads_touch_only_their_rows(monkeypatch):
    """A row (or a slice of rows) of a CSR matrix is read from its pos range, never by listing
    every entry's coordinates (O(nnz) per row would make iteration quadratic)."""
    t, d = make((50, 40), 0.2, "csr", seed=4)

    def no_scan(self):
        raise AssertionError("indexing listed every entry")

    monkeypatch.setattr(ct.Tensor, "coords", no_scan)
    np.testing.assert_array_equal(t[7].to_numpy(), d[7])
    np.testing.assert_array_equal(t[3:9, ::2].to_numpy(), d[3:9, ::2])
    np.testing.assert_array_equal(t[-1, [3, 1]].to_numpy(), d[-1, [3, 1]])
