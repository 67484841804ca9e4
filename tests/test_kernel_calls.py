"""Calling compiled kernels (docs/reference.md, "Kernels and the cache"): inputs by name, signature
checks, index widths, and reusing an assembled result structure with out=."""

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct


@pytest.fixture(params=["c", "llvm"])
def engine(request):
    if request.param == "llvm" and not ct._core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    return request.param


def matrix(m, n, seed, density=0.2):
    return sp.random(m, n, density=density, format="csr", random_state=seed)


def test_out_reuses_the_assembled_structure(engine):
    A, B = matrix(30, 40, 1), matrix(30, 40, 2)
    kern = ct.compile(
        "C(i,j) = A(i,j) + B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}, engine=engine
    )
    C = kern(A=ct.asarray(A), B=ct.asarray(B))
    pos, crd = C.levels[1].pos, C.levels[1].crd
    A2 = A.copy()
    A2.data *= -3.0
    assert kern(A=ct.asarray(A2), B=ct.asarray(B), out=C) is C
    assert np.shares_memory(C.levels[1].pos, pos) and np.shares_memory(C.levels[1].crd, crd)
    np.testing.assert_allclose(C.to_numpy(), (A2 + B).toarray())


def test_out_with_a_different_pattern_is_refused_not_misread(engine):
    A, B = matrix(30, 40, 1), matrix(30, 40, 2)
    kern = ct.compile(
        "C(i,j) = A(i,j) * B(i,j)", formats={"A": "csr", "B": "csr", "C": "csr"}, engine=engine
    )
    C = kern(A=ct.asarray(A), B=ct.asarray(B))
    with pytest.raises(ct.FormatError, match="structure"):
        kern(A=ct.asarray(matrix(30, 40, 9, density=0.5)), B=ct.asarray(B), out=C)


def test_spgemm_out_reuse(engine):
    A, B = matrix(20, 30, 3), matrix(30, 25, 4)
    kern = ct.compile(
        "C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"}, engine=engine
    )
    C = kern(A=ct.asarray(A), B=ct.asarray(B))
    B2 = B.copy()
    B2.data += 1.0
    kern(A=ct.asarray(A), B=ct.asarray(B2), out=C)
    np.testing.assert_allclose(C.to_numpy(), (A @ B2).toarray())


def test_sds_result_assembles_and_its_structure_is_reused(engine):
    # A compressed level below a dense level below a compressed one: the lower level counts
    # entries per dense position, opened as the upper level appends (an empty row 1 and an
    # empty (2, 1) fiber are skipped, not stored).
    rng = np.random.default_rng(0)
    X = rng.random((4, 3, 5)) * (rng.random((4, 3, 5)) < 0.3)
    X[1] = 0
    X[2, 1] = 0
    Y = rng.random(X.shape)
    kern = ct.compile(
        "A(i,j,k) = B(i,j,k) * C(i,j,k)",
        formats={"A": "sds", "B": "sss", "C": "dense"},
        engine=engine,
    )
    A = kern(B=ct.asarray(X, format="sss"), C=Y)
    packed = ct.asarray(X * Y, format="sds")
    for got, want in zip(A.levels, packed.levels, strict=True):
        for name in ("pos", "crd"):
            if hasattr(want, name):
                np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    np.testing.assert_allclose(A.to_numpy(), X * Y)
    assert kern(B=ct.asarray(X, format="sss"), C=2 * Y, out=A) is A
    np.testing.assert_allclose(A.to_numpy(), 2 * X * Y)
    with pytest.raises(ct.FormatError, match="structure"):
        kern(B=ct.asarray(X[::-1].copy(), format="sss"), C=Y, out=A)


def test_each_index_width_gets_its_own_kernel(engine):
    A = matrix(10, 12, 5)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
    )
    A32 = ct.asarray(A)
    A64 = ct.asarray(
        sp.csr_array((A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64)), shape=A.shape)
    )
    assert A32.index_dtype == np.int32 and A64.index_dtype == np.int64
    x = np.arange(12.0)
    np.testing.assert_allclose(kern(A=A32, x=x).values, A @ x)
    np.testing.assert_allclose(kern(A=A64, x=x).values, A @ x)


def test_wrong_format_is_a_signature_error(engine):
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
    )
    with pytest.raises(ct.SignatureError, match="format"):
        kern(A=ct.asarray(matrix(5, 5, 1).tocsc()), x=np.ones(5))


def test_wrong_dtype_is_a_signature_error(engine):
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
    )
    with pytest.raises(ct.SignatureError, match="dtype"):
        kern(A=ct.asarray(matrix(5, 5, 1)), x=np.ones(5, dtype=np.float32))


def test_disagreeing_extents_are_a_shape_error(engine):
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
    )
    with pytest.raises(ct.ShapeError, match="'j'"):
        kern(A=ct.asarray(matrix(5, 6, 1)), x=np.ones(7))


def test_missing_and_unknown_inputs(engine):
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
    )
    with pytest.raises(TypeError, match="missing"):
        kern(A=ct.asarray(matrix(5, 6, 1)))
    with pytest.raises(TypeError, match="unknown"):
        kern(A=ct.asarray(matrix(5, 6, 1)), x=np.ones(6), z=np.ones(6))


def test_numpy_and_scipy_inputs_are_wrapped(engine):
    A = matrix(6, 7, 2)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
    )
    np.testing.assert_allclose(kern(A=A, x=np.ones(7)).values, A @ np.ones(7))


@pytest.mark.parametrize("kind", ["csr", "csc"])
@pytest.mark.parametrize("cls", [sp.csr_array, sp.csr_matrix])
def test_canonical_scipy_inputs_are_read_in_place(engine, kind, cls):
    A = cls(matrix(6, 7, 4)).asformat(kind)
    x = np.arange(7.0)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": kind, "x": "d", "y": "d"}, engine=engine
    )
    np.testing.assert_allclose(kern(A=A, x=x).values, A @ x)
    At = ct.asarray(A)
    assert np.shares_memory(At.values, A.data) and np.shares_memory(At.levels[1].crd, A.indices)
    A.data *= 2  # a later call reads the matrix as it is now
    np.testing.assert_allclose(kern(A=A, x=x).values, A @ x)


def test_scipy_inputs_that_need_converting_take_the_general_path(engine):
    dense = matrix(6, 7, 5).toarray()
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
    )
    x = np.arange(7.0)
    unsorted = sp.csr_array(dense)
    unsorted.indices[:] = unsorted.indices.copy()  # same entries, each row reversed below
    for r in range(6):
        lo, hi = unsorted.indptr[r], unsorted.indptr[r + 1]
        unsorted.indices[lo:hi] = unsorted.indices[lo:hi][::-1].copy()
        unsorted.data[lo:hi] = unsorted.data[lo:hi][::-1].copy()
    unsorted.has_sorted_indices = False
    canonical = sp.csr_array(dense)  # below: each entry stored twice, halved
    duplicated = sp.csr_array(
        (np.repeat(canonical.data / 2, 2), np.repeat(canonical.indices, 2), 2 * canonical.indptr),
        shape=dense.shape,
    )
    duplicated.has_canonical_format = False
    mixed = sp.csr_array(dense)
    mixed.indptr = mixed.indptr.astype(np.int64)
    for given in [unsorted, duplicated, mixed, sp.csr_array(dense.astype(np.float32))]:
        if given.dtype == np.float32:
            with pytest.raises(ct.SignatureError, match="dtype"):
                kern(A=given, x=x)
        else:
            np.testing.assert_allclose(kern(A=given, x=x).values, dense @ x)


def spmv_case(engine):
    """A 6 x 7 SciPy CSR matrix, its tensor, and a CSR SpMV kernel for it."""
    A = matrix(6, 7, 2)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine=engine
    )
    return A, ct.asarray(A), kern


def test_numpy_inputs_that_need_converting_take_the_general_path(engine):
    # Contiguous native arrays are read in place; anything else is converted as asarray does.
    A, At, kern = spmv_case(engine)
    x = np.arange(14.0)
    expected = A @ x[::2]
    for given in [x[::2], x[::2].copy(), x[::2].astype(">f8"), list(x[::2])]:
        np.testing.assert_allclose(kern(A=At, x=given).values, expected)
    x_view = x[::2].copy()
    y = kern(A=At, x=x_view)
    x_view[:] = 0  # the result does not alias the input
    np.testing.assert_allclose(y.values, expected)
    with pytest.raises(TypeError, match="float16"):
        kern(A=At, x=x[::2].astype(np.float16))
    with pytest.raises(ct.SignatureError, match="dtype"):
        kern(A=At, x=np.ones(7, dtype=np.float32))
    scaled = ct.compile("y(i) = a * x(i)", formats={"y": "d", "x": "d"}, engine=engine)
    np.testing.assert_allclose(scaled(a=np.array(2.0), x=x).values, 2 * x)  # a 0-d array


def test_the_core_call_reads_numpy_operands_in_place(engine):
    # Kernel calls hand NumPy operands to the core as they are (no Python object made for each);
    # the core wraps contiguous native ones and refuses the rest with SignatureError, which
    # sends the call down the general path. run_values gives an all-dense result's values alone.
    A, At, kern = spmv_case(engine)
    x = np.arange(7.0)
    kern(A=At, x=x)  # (compiles the variant of At's index width)
    core = kern._core
    np.testing.assert_allclose(core.run([At._storage, x]).values, A @ x)
    values = core.run_values([At._storage, x])
    np.testing.assert_allclose(values, A @ x)
    x[:] = 0  # the result is an array of its own
    np.testing.assert_allclose(values, A @ np.arange(7.0))
    for unreadable in [np.arange(14.0)[::2], np.arange(7.0).astype(">f8")]:
        with pytest.raises(ct.SignatureError):
            core.run_values([At._storage, unreadable])
        np.testing.assert_allclose(kern(A=At, x=unreadable).values, A @ unreadable)
    with pytest.raises(ct.SignatureError, match="dtype"):
        core.run([At._storage, np.ones(7, dtype=np.float32)])
    with pytest.raises(TypeError):
        core.run_values([At._storage, "not an array"])


def test_out_reuse_is_refused_for_dense_blocks_under_compressed_levels(engine):
    A = matrix(6, 5, 3)
    kern = ct.compile("C(i,j) = 2 * A(i,j)", formats={"A": "csr", "C": "sd"}, engine=engine)
    C = kern(A=ct.asarray(A))
    np.testing.assert_allclose(C.to_numpy(), 2 * A.toarray())
    with pytest.raises(ct.FormatError, match="out"):
        kern(A=ct.asarray(A), out=C)


def test_an_operand_of_the_wrong_order_is_refused_before_its_shape_is_read(engine):
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "dense", "x": "d", "y": "d"}, engine=engine
    )
    with pytest.raises(ct.SignatureError, match="format"):
        kern(A=ct.asarray(np.ones(5)), x=np.ones(5))


# A dense result is zeroed before the kernel runs unless the kernel stores every entry
# (lower_result_overwrite.cpp). Memory a previous result left dirty exposes a wrong choice:
# small results reuse malloc's freed blocks, large ones (>= 1 MiB) the result pool's mappings.
DENSE_RESULT_CASES = [  # expression, formats, the same on NumPy arrays
    (
        "y(i) = A(i,j) * x(j)",
        {"A": "csr", "x": "d", "y": "d"},
        lambda t: t["A"] @ t["x"],
    ),  # every row
    (
        "y(i) = A(i,j) * x(j) + z(i)",
        {"A": "csr", "x": "d", "z": "d", "y": "d"},
        lambda t: t["A"] @ t["x"] + t["z"],
    ),
    (
        "y(i) = A(i,j) * x(j)",
        {"A": "dcsr", "x": "d", "y": "d"},
        lambda t: t["A"] @ t["x"],
    ),  # stored rows
    (
        "y(i) = A(i,j) * x(j)",
        {"A": "csc", "x": "d", "y": "d"},
        lambda t: t["A"] @ t["x"],
    ),  # by columns
    (
        "y(i) = b(i) * z(i)",
        {"b": "s", "z": "d", "y": "d"},
        lambda t: t["b"] * t["z"],
    ),  # b's entries
    ("y(i) = b(i) + c(i)", {"b": "s", "c": "s", "y": "d"}, lambda t: t["b"] + t["c"]),
    ("C(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "dd", "C": "dd"}, lambda t: t["A"] + t["B"]),
    # bodies that simplify to zero store nothing, so nothing overwrites the result
    ("C(i,j) = B(i,j) * 0", {"B": "dd", "C": "dd"}, lambda t: 0 * t["B"]),
    ("y(i) = A(i,j) * 0 * x(j)", {"A": "csr", "x": "d", "y": "d"}, lambda t: 0 * (t["A"] @ t["x"])),
]


@pytest.mark.parametrize("n", [60, 300_000], ids=["malloc", "mapping"])
@pytest.mark.parametrize(
    "expr,formats,numpy",
    DENSE_RESULT_CASES,
    ids=[f"{e} {'-'.join(f.values())}" for e, f, _ in DENSE_RESULT_CASES],
)
def test_dense_results_are_right_in_memory_a_previous_result_left_dirty(
    engine, expr, formats, numpy, n
):
    rng = np.random.default_rng(5)
    matrix_result = "C" in formats
    rows, cols = (2, n // 2) if matrix_result else (n, 40)  # the result has n entries

    def sparse_vector():
        return sp.random(1, n, density=0.05, random_state=rng).toarray()[0]

    dense = {
        "A": sp.random(
            rows, cols, density=0.3 if matrix_result else 0.02, random_state=rng
        ).toarray(),
        "B": rng.random((rows, cols)),
        "x": rng.random(cols),
        "z": rng.random(n),
        "b": sparse_vector(),
        "c": sparse_vector(),
    }
    assert (dense["A"] == 0).all(axis=1).any() or matrix_result  # some rows are empty
    kern = ct.compile(expr, formats=formats, engine=engine)
    operands = {
        name: ct.asarray(dense[name], format=f)
        for name, f in formats.items()
        if name not in ("y", "C")
    }
    for _ in range(3):
        result = kern(**operands)
        np.testing.assert_allclose(result.to_numpy(), numpy(dense), rtol=1e-12, atol=1e-12)
        result.values[:] = 7.0  # then freed: its memory is what the next call's result gets
        del result


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("at", [1, 255, 256, 257, 1024, 1999, 2000])
@pytest.mark.parametrize("how", ["one_less", "negative", "huge_then_back"])
def test_a_scipy_indptr_that_descends_is_refused_wherever_it_descends(index_dtype, at, how):
    # A SciPy matrix's indptr is checked on every call, a block of 256 entries at a time by
    # ORing the entries and their differences (level_checks.cpp, mayDescend): a descent
    # anywhere, however large, is refused with its index, and the intact matrix passes.
    rows = 2000
    rng = np.random.default_rng(at)
    M = sp.random_array((rows, 50), density=0.1, format="csr", rng=rng)
    M.indptr, M.indices = M.indptr.astype(index_dtype), M.indices.astype(index_dtype)
    x = rng.random(50)
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
    np.testing.assert_allclose(kern(A=M, x=x).to_numpy(), M @ x)
    # (The call computed SciPy's canonical flag, which SciPy keeps: the change goes unseen.)
    top = np.iinfo(index_dtype).max
    if how == "one_less":
        M.indptr[at] = M.indptr[at - 1] - 1 if M.indptr[at - 1] > 0 else -1
        descent = at
    elif how == "negative":
        M.indptr[at] = -1
        descent = at
    else:  # a value no difference of valid entries reaches, then the next entry is smaller
        at = min(at, rows - 1)
        M.indptr[at] = top
        descent = at + 1
    with pytest.raises(ct.FormatError, match=rf"pos is not non-decreasing at index {descent}\b"):
        kern(A=M, x=x)
