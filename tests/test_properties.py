"""Property tests: random tensors in random formats; asformat chains and round trips must
preserve the tensor exactly."""

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coiter as ct

DTYPES = ["bool", "int8", "int32", "uint16", "int64", "float32", "float64", "complex128"]


def formats_for(order):
    letters = st.lists(st.sampled_from("dsh"), min_size=order, max_size=order).map("".join)
    permuted = st.tuples(letters, st.permutations(range(order))).map(
        lambda lp: f"{lp[0]}:{','.join(map(str, lp[1]))}"
    )
    named = ["dense", "coo", "csf"] + (
        ["csr", "csc", "dcsr", "dcsc", "dia", "ell"] if order == 2 else []
    )
    options = [letters, permuted, st.sampled_from(named)]
    if order == 2:
        options.append(st.sampled_from([(1, 1), (1, 2), (2, 1)]).map(ct.bcsr))
    return st.one_of(options)


@st.composite
def dense_arrays(draw):
    order = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=order, max_size=order)))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    size = int(np.prod(shape))
    density = draw(st.sampled_from([0.0, 0.05, 0.3, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random(size) < density
    if size and draw(st.booleans()):  # exactly one element
        mask[:] = False
        mask[rng.integers(size)] = True
    values = (rng.integers(1, 50, size) * mask).astype(dtype)
    if dtype.kind == "c":
        values = values + 1j * mask
    return values.reshape(shape)


def even_shape(array, fmt):
    """bcsr needs extents divisible by the block shape: pad with zeros."""
    fmt = ct.as_format(fmt, array.ndim)
    if fmt.block_shape is None:
        return array
    pad = [(0, (-e) % b) for e, b in zip(array.shape, fmt.block_shape)]
    return np.pad(array, pad)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), array=dense_arrays())
def test_asformat_chains_preserve_the_tensor(data, array):
    chain = data.draw(st.lists(formats_for(array.ndim), min_size=1, max_size=4))
    for fmt in chain:
        array = even_shape(array, fmt)
    tensor = ct.asarray(array)
    for fmt in chain:
        tensor = tensor.asformat(fmt)
        assert tensor.format == ct.as_format(fmt, array.ndim)
        np.testing.assert_array_equal(tensor.to_numpy(), array)
    coords, values = tensor.coords()
    rebuilt = np.zeros_like(array)
    np.add.at(rebuilt, tuple(coords.T), values)
    np.testing.assert_array_equal(rebuilt, array)
    assert tensor.nnz == len(values)
    if array.size:
        index = tuple(data.draw(st.integers(0, e - 1)) for e in array.shape)
        assert tensor[index] == array[index]


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(0, 40),
    n=st.integers(0, 40),
    density=st.sampled_from([0, 0.01, 0.2]),
    kind=st.sampled_from(["csr", "csc", "coo"]),
    index=st.sampled_from([np.int32, np.int64]),
    seed=st.integers(0, 1000),
    target=formats_for(2),
)
def test_scipy_round_trip(m, n, density, kind, index, seed, target):
    a = sp.random_array((m, n), density=density, format=kind, rng=seed)
    if kind == "coo":
        a.coords = tuple(c.astype(index) for c in a.coords)
    else:
        a.indptr, a.indices = a.indptr.astype(index), a.indices.astype(index)
    tensor = ct.asarray(a)
    if kind != "coo":
        assert tensor.index_dtype == index
    dense = a.toarray()
    converted = ct.asarray(even_shape(dense, target), format=target)
    np.testing.assert_array_equal(converted.to_numpy(), even_shape(dense, target))
    np.testing.assert_array_equal(tensor.to_scipy().toarray(), dense)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), order=st.integers(1, 4), nnz=st.integers(0, 30), seed=st.integers(0, 1000))
def test_from_coords_with_duplicates_sums_like_numpy(data, order, nnz, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(e) for e in rng.integers(1, 5, order))
    coords = np.stack([rng.integers(0, e, nnz) for e in shape], axis=1).reshape(nnz, order)
    values = rng.integers(-5, 5, nnz).astype(np.float64)
    expected = np.zeros(shape)
    np.add.at(expected, tuple(coords.T), values)
    fmt = data.draw(formats_for(order).filter(lambda f: ct.as_format(f, order).block_shape is None))
    tensor = ct.from_coords(coords, values, shape, format=fmt)
    np.testing.assert_array_equal(tensor.to_numpy(), expected)
    # Order-1 "coo" is a unique compressed level (docs/reference.md, "Formats"); "u" keeps
    # duplicates.
    keeping = "coo" if order > 1 else "u"
    kept = ct.from_coords(coords, values, shape, format=keeping, sum_duplicates=False)
    assert kept.nnz == nnz
    np.testing.assert_array_equal(kept.to_numpy(), expected)
