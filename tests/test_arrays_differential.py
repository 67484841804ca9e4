"""Random chains of array operations on tensors against NumPy on dense copies: a differential
test of the array API (docs/arrays.md) in the manner of the compiler's fuzz (test_fuzz.py).

Each case starts from a random matrix (shape 0-5 by 0-5, a random format and dtype) and applies
one to five operations drawn from OPERATIONS: operators with tensors of other formats and
dtypes, scalars and broadcast vectors, products with dense and sparse matrices, reductions,
indexing, comparisons, ufuncs and NumPy functions. The chain stays lazy where the operators
fuse, so the comparison at its end also checks fused kernels. The reference is NumPy on the
dense copies, computed first:
  - where NumPy refuses an operation (``bool - bool``), coiter must refuse it too, with a
    TypeError or ValueError, when it is applied or when the result is read;
  - where NumPy computes ``inf`` or ``nan``, the chain stops before that operation: there
    coiter deliberately differs (API.md §3, an unstored zero annihilates in a product);
  - KNOWN_REFUSALS lists what coiter refuses although NumPy computes it (documented in
    docs/arrays.md); the chain stops there, after checking that the refusal is that one;
  - otherwise the result must have NumPy's shape and dtype and its values (to rounding: fused
    chains may keep a float32 intermediate in float64).

``COITER_ARRAY_FUZZ_CASES=N python -m pytest -m slow tests/test_arrays_differential.py`` runs
N cases (from ``COITER_ARRAY_FUZZ_START``); the suite runs BLOCKS x CASES_PER_BLOCK of them.
"""

import os

import numpy as np
import pytest

import coiter as ct
from compiler_cases import dense_of

pytestmark = pytest.mark.usefixtures("forget_kernels_afterwards")

FORMATS = ["dense", "csr", "csc", "coo", "dcsr", "dh", "dia", "ell"]
DTYPES = [np.bool_, np.uint8, np.int32, np.int64, np.float32, np.float64, np.complex128]
KNOWN_REFUSALS = [
    "unsupported dtype float16",  # np.sqrt of an 8-bit integer (docs/reference.md: dtypes)
]
BLOCKS, CASES_PER_BLOCK = 8, 15


def operand(rng, shape, fmt=None):
    """A random tensor of ``shape`` (matrices in a random format, vectors dense) and its dense
    NumPy copy: some entries zero, some negative, of a random dtype."""
    dtype = DTYPES[rng.integers(len(DTYPES))]
    values = rng.random(shape) * (rng.random(shape) < rng.random())
    if dtype == np.bool_:
        dense = values > 0
    elif np.issubdtype(dtype, np.integer):
        dense = (np.round(values * 10) - 5 * (values > 0.5)).astype(dtype)
    elif dtype == np.complex128:
        dense = values + 1j * np.flip(values)
    else:
        dense = values.astype(dtype)
    dense = np.ascontiguousarray(dense)
    if len(shape) != 2:
        return ct.asarray(dense), dense
    fmt = fmt or FORMATS[rng.integers(len(FORMATS))]
    return ct.asarray(dense, format=fmt), dense


def _axis(rng, d):
    return int(rng.integers(d.ndim))


def _nonempty(d):
    """Whether ``d`` has an axis to reduce and entries to reduce it over (max of nothing
    raises in NumPy and coiter alike)."""
    return d.ndim >= 1 and d.size > 0


def _rows(rng, d):
    return rng.integers(0, d.shape[0], 3)


# name -> (applies to the NumPy value d, builds (on the tensor, on the array) from rng and d)
OPERATIONS = {
    "+": (lambda d: True, lambda rng, d: _with(operand(rng, d.shape), lambda a, b: a + b)),
    "-": (lambda d: True, lambda rng, d: _with(operand(rng, d.shape), lambda a, b: b - a)),
    "*": (lambda d: True, lambda rng, d: _with(operand(rng, d.shape), lambda a, b: a * b)),
    "/": (lambda d: True, lambda rng, d: _with(operand(rng, d.shape), lambda a, b: a / b)),
    "* 2.5": (lambda d: True, lambda rng, d: _same(lambda a: a * 2.5)),
    "/ 2": (lambda d: True, lambda rng, d: _same(lambda a: a / 2)),
    "neg": (lambda d: True, lambda rng, d: _same(lambda a: -a)),
    "abs": (lambda d: True, lambda rng, d: _same(abs)),
    "** 2": (lambda d: True, lambda rng, d: _same(lambda a: a**2)),
    "// 3": (lambda d: d.dtype.kind in "iu", lambda rng, d: _same(lambda a: a // 3)),
    "% 4": (lambda d: d.dtype.kind in "iu", lambda rng, d: _same(lambda a: a % 4)),
    "> 0.3": (lambda d: True, lambda rng, d: _same(lambda a: a > 0.3)),
    "==": (lambda d: True, lambda rng, d: _with(operand(rng, d.shape), lambda a, b: a == b)),
    "* row": (
        lambda d: d.ndim == 2,
        lambda rng, d: _with(operand(rng, d.shape[1:]), lambda a, b: a * b),
    ),
    ".T": (lambda d: d.ndim == 2, lambda rng, d: _same(lambda a: a.T)),
    "np.transpose": (lambda d: d.ndim == 2, lambda rng, d: _same(np.transpose)),
    "@ dense": (
        lambda d: d.ndim == 2,
        lambda rng, d: _with(
            operand(rng, (d.shape[1], int(rng.integers(1, 5))), "dense"), lambda a, b: a @ b
        ),
    ),
    "@ sparse": (
        lambda d: d.ndim == 2,
        lambda rng, d: _with(operand(rng, (d.shape[1], int(rng.integers(0, 5)))), np.matmul),
    ),
    "@ x": (
        lambda d: d.ndim >= 1,
        lambda rng, d: _with((lambda x: (x, x))(rng.random(d.shape[-1])), lambda a, b: a @ b),
    ),
    "sum": (lambda d: d.ndim >= 1, lambda rng, d: _axis_method("sum", _axis(rng, d), False)),
    "sum keepdims": (
        lambda d: d.ndim >= 1,
        lambda rng, d: _axis_method("sum", _axis(rng, d), True),
    ),
    "max": (_nonempty, lambda rng, d: _axis_method("max", _axis(rng, d), False)),
    "min": (_nonempty, lambda rng, d: _axis_method("min", _axis(rng, d), False)),
    "mean": (
        lambda d: _nonempty(d) and d.dtype != np.bool_,
        lambda rng, d: _axis_method("mean", _axis(rng, d), False),
    ),
    "[a:b]": (
        lambda d: d.ndim >= 1,
        lambda rng, d: (lambda a, b: _same(lambda t: t[a:b]))(
            *sorted(rng.integers(0, d.shape[0] + 1, 2))
        ),
    ),
    "[::2, ::-1]": (lambda d: d.ndim == 2, lambda rng, d: _same(lambda a: a[::2, ::-1])),
    "[rows]": (
        lambda d: d.ndim >= 1 and d.shape[0] > 0,
        lambda rng, d: (lambda rows: _same(lambda a: a[rows]))(_rows(rng, d)),
    ),
    "[:, cols]": (
        lambda d: d.ndim == 2 and d.shape[1] > 0,
        lambda rng, d: (lambda cols: _same(lambda a: a[:, cols]))(rng.integers(0, d.shape[1], 2)),
    ),
    "[None]": (lambda d: d.ndim == 2, lambda rng, d: _same(lambda a: a[None])),
    "astype float32": (
        lambda d: d.dtype != np.complex128,
        lambda rng, d: _same(lambda a: a.astype(np.float32)),
    ),
    "np.multiply": (lambda d: True, lambda rng, d: _same(lambda a: np.multiply(a, 3))),
    "np.sqrt abs": (lambda d: True, lambda rng, d: _same(lambda a: np.sqrt(abs(a)))),
    "np.where": (
        lambda d: True,
        lambda rng, d: _with(operand(rng, d.shape), lambda a, b: np.where(a != 0, a, b)),
    ),
    "np.concatenate": (
        lambda d: d.ndim == 2,
        lambda rng, d: _with(operand(rng, d.shape), lambda a, b: np.concatenate([a, b])),
    ),
    "reshape(-1)": (lambda d: d.ndim == 2, lambda rng, d: _same(lambda a: a.reshape(-1))),
    "outer": (lambda d: d.ndim == 1, lambda rng, d: _same(lambda a: a[:, None] * a[None, :])),
    "einsum ij,kj->ki": (
        lambda d: d.ndim == 2,
        lambda rng, d: _with(
            operand(rng, (int(rng.integers(0, 5)), d.shape[1])),
            lambda a, b: np.einsum("ij,kj->ki", a, b),
        ),
    ),
    "einsum ii->i": (
        lambda d: d.ndim == 2 and d.shape[0] == d.shape[1],
        lambda rng, d: _same(lambda a: np.einsum("ii->i", a)),
    ),
}


def _same(fn):
    """An operation that is the same function on tensors and arrays."""
    return fn, fn


def _with(pair, fn):
    """An operation with a second operand: ``pair`` is it as a tensor and as an array."""
    tensor, array = pair
    return (lambda a: fn(a, tensor)), (lambda a: fn(a, array))


def _axis_method(name, axis, keepdims):
    return _same(lambda a: getattr(a, name)(axis=axis, keepdims=keepdims))


def _refused(fn, *args):
    """The TypeError or ValueError that computing ``fn(*args)`` and reading it raised, or None."""
    try:
        dense_of(fn(*args))
    except (TypeError, ValueError) as error:
        return error
    return None


def run_case(seed):
    """One chain; returns a description of what went wrong, or None."""
    rng = np.random.default_rng(seed)
    tensor, array = operand(rng, (int(rng.integers(0, 6)), int(rng.integers(0, 6))))
    path, single = [f"{tensor.format} {tensor.dtype}{tensor.shape}"], False
    for _ in range(int(rng.integers(1, 6))):
        names = [n for n, (applies, _) in OPERATIONS.items() if applies(array)]
        name = names[rng.integers(len(names))]
        on_tensor, on_array = OPERATIONS[name][1](rng, array)
        try:
            with np.errstate(all="ignore"):
                expected = np.asarray(on_array(array))
        except (TypeError, ValueError) as numpy_error:
            if _refused(on_tensor, tensor) is None:
                return f"{path + [name]}: NumPy refuses ({numpy_error}), coiter computes"
            return None
        if expected.dtype.kind in "fc" and not np.all(np.isfinite(expected)):
            break  # inf or nan: the annihilating zero of API.md §3 (the module's docstring)
        try:
            tensor = on_tensor(tensor)
        except TypeError as error:
            if any(known in str(error) for known in KNOWN_REFUSALS):
                break
            return f"{path + [name]}: {type(error).__name__}: {error}"
        array = expected
        path.append(name)
        single = single or expected.dtype in (np.float32, np.complex64)
    try:
        got = dense_of(tensor)
    except TypeError as error:
        if any(known in str(error) for known in KNOWN_REFUSALS):
            return None
        return f"{path}: {type(error).__name__}: {error}"
    if got.shape != array.shape or got.dtype != array.dtype:
        return f"{path}: {got.dtype}{got.shape}, NumPy {array.dtype}{array.shape}"
    tolerance = 1e-5 if single else 1e-9
    if array.dtype.kind in "fc":
        close = np.allclose(got, array, rtol=tolerance, atol=tolerance)
    else:
        close = np.array_equal(got, array)
    return None if close else f"{path}: values differ\n{got}\nNumPy:\n{array}"


def _failures(seeds):
    failures = [(s, run_case(s)) for s in seeds]
    return [f"seed {s}: {problem}" for s, problem in failures if problem]


@pytest.mark.parametrize("block", range(BLOCKS))
def test_random_chains_match_numpy(block):
    first = 1000 * block
    failures = _failures(range(first, first + CASES_PER_BLOCK))
    assert not failures, "\n".join(failures)


def test_a_refusal_numpy_makes_is_made_and_a_known_one_is_typed():
    a, _ = operand(np.random.default_rng(0), (3, 3))
    m = a != 0  # bool
    with pytest.raises(TypeError, match="subtraction of bool"):
        m - m
    u = ct.asarray(np.array([[1, 0], [0, 3]], dtype=np.uint8), format="csr")
    with pytest.raises(TypeError, match=KNOWN_REFUSALS[0]):
        np.sqrt(u)
    z = np.array([[1 + 2j, 0], [0, 3j]])  # computed now: lexicographic, as NumPy
    np.testing.assert_array_equal(ct.asarray(z, format="csr").max(axis=0).to_numpy(), z.max(axis=0))


@pytest.mark.slow
def test_many_random_chains_match_numpy():
    count = int(os.environ.get("COITER_ARRAY_FUZZ_CASES", "5000"))
    start = int(os.environ.get("COITER_ARRAY_FUZZ_START", "100000"))
    failures = _failures(range(start, start + count))
    assert not failures, f"{len(failures)} of {count} cases:\n" + "\n".join(failures[:50])
