"""Shared helpers for the compiler test suites (test_compiler_expressions.py,
test_compiler_properties.py): operand formats, random operands, and the checks every
computed result must pass (values against NumPy, dtype, canonical sparse structure)."""
import numpy as np
import scipy.sparse as sp

import coiter as ct

ENGINES = ["c", "llvm"]

# Formats per tensor order. "dh" is CSR with hashed rows ("hashed" of API.md §1).
VECTOR_FORMATS = ["dense", "s", "h"]
MATRIX_FORMATS = ["dense", "csr", "csc", "dcsr", "dcsc", "coo", "dh"]
TENSOR3_FORMATS = ["dense", "csf", "coo", "dsd", "sds:2,0,1"]
FORMATS_BY_ORDER = {0: [None], 1: VECTOR_FORMATS, 2: MATRIX_FORMATS, 3: TENSOR3_FORMATS}

# Result formats a kernel can assemble, per order (explicit out_format choices): dense levels
# followed by compressed/singleton/hashed levels, optionally followed by dense levels.
OUT_FORMATS_BY_ORDER = {
    0: [None],
    1: ["dense", "s"],
    2: ["dense", "csr", "csc", "dcsr", "dcsc", "coo", "sd", "sd:1,0", "dh", "hs"],
    3: ["dense", "csf", "coo", "dss", "sss:2,0,1", "dsd", "ssd"],
}

# Result formats the compiler does not assemble yet: asking for one is a FormatError.
UNASSEMBLED_OUT_FORMATS = ["sds:2,0,1", "sds"]


def random_array(rng, shape, density=0.4, dtype=np.float64, positive=False, integers=False,
                 empty_slices=True):
    """A random array with about ``density`` nonzeros. With ``empty_slices`` (and enough
    extent) index 1 of the first mode and index 2 of the last are emptied, so the sparse
    operands have empty rows and columns."""
    shape = tuple(shape)
    dtype = np.dtype(dtype)
    if positive:
        values = 1.0 + rng.random(shape)
        return values.astype(dtype)
    if integers or dtype.kind in "iub":
        values = rng.integers(1, 10, shape) * rng.choice([-1, 1], shape)
        if dtype.kind in "ub":
            values = np.abs(values)
    else:
        values = rng.uniform(-1.0, 1.0, shape)
    mask = rng.random(shape) < density
    out = values * mask
    if dtype.kind == "c":
        out = out + 1j * rng.uniform(-1.0, 1.0, shape) * mask
    if empty_slices and len(shape) >= 2:
        if shape[0] > 2:
            out[1] = 0
        if shape[-1] > 3:
            out[..., 2] = 0
    return out.astype(dtype)


def operand(array, fmt):
    """A coiter tensor holding ``array`` in ``fmt`` (0-d arrays stay dense)."""
    if np.ndim(array) == 0 or fmt is None:
        return ct.asarray(np.asarray(array))
    return ct.asarray(np.asarray(array), format=fmt)


def assert_values(result, expected, rtol=1e-12, dtype=None):
    """``result`` (a ct.Tensor) equals ``expected`` (NumPy) in shape, dtype and values."""
    assert isinstance(result, ct.Tensor), type(result)
    expected = np.asarray(expected)
    assert tuple(result.shape) == expected.shape, (result.shape, expected.shape)
    want_dtype = expected.dtype if dtype is None else np.dtype(dtype)
    assert result.dtype == want_dtype, (result.dtype, want_dtype)
    got = result.to_numpy()
    assert got.shape == expected.shape
    if want_dtype.kind in "iub":
        np.testing.assert_array_equal(got, expected)
    else:
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
        atol = rtol * max(scale, 1.0)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    assert_canonical(result)


def _is_sparse(fmt):
    return any(level.name != "dense" for level in fmt.levels)


def assert_canonical(result):
    """A computed sparse result must be well formed: monotone ``pos`` arrays, coordinates in
    range, no duplicate coordinates, and, for ordered unique formats, coordinates strictly
    increasing in storage (level) order — what SciPy calls the canonical format."""
    fmt = result.format
    if not _is_sparse(fmt):
        assert result.nnz == int(np.prod(result.shape, dtype=np.int64))
        return
    assert len(result.values) >= result.nnz
    for level in result.levels:
        pos = getattr(level, "pos", None)
        if pos is not None and len(pos):
            pos = np.asarray(pos)
            assert pos[0] == 0, f"pos starts at {pos[0]}"
            assert np.all(np.diff(pos) >= 0), f"pos not monotone: {pos}"
    coords, values = result.coords()
    coords = np.asarray(coords)
    assert coords.shape == (result.nnz, result.ndim), (coords.shape, result.nnz)
    for m, extent in enumerate(result.shape):
        if len(coords):
            assert coords[:, m].min() >= 0 and coords[:, m].max() < extent, \
                f"mode {m} coordinate out of range"
    rows = [tuple(int(c) for c in row) for row in coords[:, list(fmt.mode_order)]]
    assert len(set(rows)) == len(rows), f"duplicate coordinates in a {fmt} result: {rows}"
    hashed = any(level.name == "hashed" for level in fmt.levels)
    unordered = any(not level.ordered for level in fmt.levels)
    if not hashed and not unordered:
        assert rows == sorted(rows), f"coordinates of a {fmt} result are not sorted: {rows}"
    if result.ndim == 2 and fmt in (ct.as_format("csr", 2), ct.as_format("csc", 2)):
        s = result.to_scipy()
        cls = sp.csr_array if s.format == "csr" else sp.csc_array
        fresh = cls((np.array(s.data), np.array(s.indices), np.array(s.indptr)), shape=s.shape)
        assert fresh.has_canonical_format, f"{s.format} result is not canonical"
    # Repacking the dense values into the same format gives the same levels, when the
    # result stores no explicit zeros and its layout is deterministic.
    if not hashed and result.size and np.count_nonzero(values) == len(values) and result.size <= 10**6:
        again = ct.asarray(result.to_numpy(), format=fmt)
        for a, b in zip(result.levels, again.levels):
            for name in ("pos", "crd"):
                if getattr(a, name, None) is not None:
                    np.testing.assert_array_equal(np.asarray(getattr(a, name)),
                                                  np.asarray(getattr(b, name)),
                                                  err_msg=f"{name} differs from a fresh pack")
