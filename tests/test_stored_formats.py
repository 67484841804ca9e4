"""DIA, ELL and BCSR tensors as operands of any expression (docs/reference.md, "Formats": indexed by
their logical modes), on both engines, against np.einsum on dense copies."""

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct


@pytest.fixture(params=["llvm", "c"])
def engine(request):
    if request.param == "llvm" and not ct._core.with_llvm:
        pytest.skip("this build has no LLVM engine")
    return request.param


# Block shapes 1x1, square and not, so blocks meet rows and columns in every way.
FORMATS = [
    "dia",
    "ell",
    ct.bcsr((1, 1)),
    ct.bcsr((2, 2)),
    ct.bcsr((3, 2)),
    ct.bcsr((2, 3)),
    ct.bcsr((3, 3)),
    ct.bcsr((6, 4)),
]
N, M, K = 12, 12, 5


def sparse_matrix(seed):
    """A random 12x12 matrix with an empty row and column, a dense row and an outlying
    diagonal entry, so every format meets padding and ragged rows."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((N, M)) * (rng.random((N, M)) < 0.25)
    a[3, :] = 0
    a[:, 5] = 0
    a[7, :] = rng.standard_normal(M)
    a[0, M - 1] = 2.5
    return a


RNG = np.random.default_rng(42)
A_DENSE = sparse_matrix(1)
B_DENSE = sparse_matrix(2)
X = RNG.standard_normal(M)
XT = RNG.standard_normal(N)
D = RNG.standard_normal((N, M))
U = RNG.standard_normal((N, K))
V = RNG.standard_normal((K, M))
W = RNG.standard_normal((M, K))

# statement, extra operands (name -> array or (array, format)), reference from dense copies
CASES = [
    ("y(i) = A(i,j) * x(j)", {"x": X}, lambda a: np.einsum("ij,j->i", a, X)),
    ("y(j) = A(i,j) * x(i)", {"x": XT}, lambda a: np.einsum("ij,i->j", a, XT)),
    ("Y(i,k) = A(i,j) * B(j,k)", {"B": W}, lambda a: np.einsum("ij,jk->ik", a, W)),
    (
        "Y(i,j) = A(i,j) * C(i,k) * E(k,j)",
        {"C": U, "E": V},
        lambda a: np.einsum("ij,ik,kj->ij", a, U, V),
    ),
    ("Y(i,j) = A(i,j) * B(i,j)", {"B": D}, lambda a: a * D),
    ("Y(i,j) = A(i,j) + B(i,j)", {"B": D}, lambda a: a + D),
    ("Y(i,j) = A(i,j) + B(i,j)", {"B": (B_DENSE, "csr")}, lambda a: a + B_DENSE),
    ("Y(i,j) = A(i,j) * B(i,j)", {"B": (B_DENSE, "csr")}, lambda a: a * B_DENSE),
    ("Y(i,j) = A(i,j) - 2 * B(i,j)", {"B": (B_DENSE, "csr")}, lambda a: a - 2 * B_DENSE),
    (
        "Y(i,j) = A(i,j) + B(i,j) * C(i,j)",
        {"B": (B_DENSE, "csr"), "C": D},
        lambda a: a + B_DENSE * D,
    ),
    ("Y(i,j) = A(i,j) * A(i,j)", {}, lambda a: a * a),
    ("Y(i,j) = A(i,j) + A(j,i)", {}, lambda a: a + a.T),
    ("s = A(i,j) * x(j)", {"x": X}, lambda a: np.einsum("ij,j->", a, X)),
    ("y(i) = A(i,j)", {}, lambda a: a.sum(axis=1)),
]


def operand(value):
    if isinstance(value, tuple):
        return ct.asarray(value[0], format=value[1])
    return ct.asarray(value)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize(
    "case",
    CASES,
    ids=lambda c: (
        c[0] + "".join(f" {n}:{v[1] if isinstance(v, tuple) else 'dense'}" for n, v in c[1].items())
    ),
)
def test_stored_format_operand(case, fmt, engine):
    statement, extras, reference = case
    a = ct.asarray(A_DENSE, format=fmt)
    assert a.format == ct.as_format(fmt, 2)
    result = ct.evaluate(
        statement, engine=engine, A=a, **{n: operand(v) for n, v in extras.items()}
    )
    np.testing.assert_allclose(np.asarray(result), reference(A_DENSE), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_compiled_kernel_reads_the_format_in_place(fmt, engine):
    """A kernel compiled for the format itself (no conversion): SpMV with SciPy's own DIA and
    BSR arrays as well as coiter tensors."""
    a = ct.asarray(A_DENSE, format=fmt)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": a.format, "x": "d", "y": "d"}, engine=engine
    )
    np.testing.assert_allclose(np.asarray(kern(A=a, x=X)), A_DENSE @ X, rtol=1e-12)
    assert "A_" in kern.concrete  # the level's own variable (diagonal, slot or block) is a loop


def test_scipy_dia_and_bsr_operands(engine):
    dia = sp.dia_array(A_DENSE)
    bsr = sp.bsr_array(A_DENSE, blocksize=(3, 4))
    for matrix in (dia, bsr):
        y = ct.evaluate("y(i) = A(i,j) * x(j)", engine=engine, A=matrix, x=X)
        np.testing.assert_allclose(np.asarray(y), A_DENSE @ X, rtol=1e-12)


def test_dia_with_far_diagonals(engine):
    """Diagonals that start or end outside the matrix, on a wide and a tall matrix."""
    for shape in ((5, 9), (9, 5)):
        a = np.zeros(shape)
        for offset in (-4, -1, 0, 2, 4):
            d = np.diagonal(a, offset)
            idx = np.arange(len(d))
            rows = idx - min(offset, 0)
            a[rows, rows + offset] = idx + 1.0 + offset
        x = np.arange(shape[1], dtype=float) + 1
        y = ct.evaluate("y(i) = A(i,j) * x(j)", engine=engine, A=ct.asarray(a, format="dia"), x=x)
        np.testing.assert_allclose(np.asarray(y), a @ x)
        yt = ct.evaluate(
            "y(j) = A(i,j) * x(i)",
            engine=engine,
            A=ct.asarray(a, format="dia"),
            x=np.ones(shape[0]),
        )
        np.testing.assert_allclose(np.asarray(yt), a.sum(axis=0))


@pytest.mark.parametrize("fmt", ["dia", "ell", ct.bcsr((2, 2))], ids=str)
def test_stored_format_results_are_refused(fmt):
    a = ct.asarray(A_DENSE, format="csr")
    with pytest.raises(ct.FormatError, match="result"):
        ct.evaluate("C(i,j) = 2 * A(i,j)", A=a, out_format=fmt)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize(
    "subscripts,extra,ref",
    [
        ("ij,j->i", X, lambda a: a @ X),
        ("ij,jk->ik", W, lambda a: a @ W),
        ("ij,ij->ij", None, lambda a: a * a),
        ("ii->i", None, np.diagonal),
    ],
)
def test_einsum_computes_on_stored_formats_without_converting(
    fmt, subscripts, extra, ref, monkeypatch
):
    a = ct.asarray(A_DENSE, format=fmt)
    operands = (
        (a, a) if extra is None and subscripts.count(",") else (a,) if extra is None else (a, extra)
    )

    def no_conversion(self, *args, **kwargs):
        raise AssertionError("ct.einsum converted an operand")

    monkeypatch.setattr(ct.Tensor, "asformat", no_conversion)
    np.testing.assert_allclose(
        np.asarray(ct.einsum(subscripts, *operands)), ref(A_DENSE), atol=1e-12
    )
