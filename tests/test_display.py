"""Jupyter displays (coiter.display, docs/jupyter.md): the HTML of tensors, formats, schedules and
kernels is well formed and states the facts; ct.spy draws where a matrix stores entries."""

import base64
import html.parser
import re
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
from coiter import plotting

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

_VOID = {"br", "img", "hr", "meta", "input", "wbr"}


class _Page(html.parser.HTMLParser):
    """Parses a display's HTML: every element closed in order, its text and its images."""

    def __init__(self, markup):
        super().__init__(convert_charrefs=True)
        self.stack, self.text, self.images = [], [], []
        self.feed(markup)
        self.close()
        assert self.stack == [], f"unclosed elements {self.stack}"

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)

    @property
    def content(self):
        return "".join(self.text)


def _page(obj):
    return _Page(obj._repr_html_())


def _png(image):
    prefix = "data:image/png;base64,"
    assert image["src"].startswith(prefix)
    data = base64.b64decode(image["src"][len(prefix) :])
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return data


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dcsr", "dia", "ell", ct.bcsr((2, 2))])
def test_matrix_display_states_its_facts_and_shows_a_spy_plot(fmt):
    M = sp.random_array((40, 30), density=0.1, format="csr", random_state=4)
    T = ct.asarray(M, format=fmt)
    page = _page(T)
    text = page.content
    assert str(T.format) in text
    assert "40 × 30" in text and "float64" in text
    assert f"{T.nnz:,}" in text
    assert f"{T.nnz / 1200:.4g}" in text
    if fmt == "csr":  # arrays in the order the level type lists them
        assert text.index("pos = ") < text.index("crd = ")
    for level in T.levels:
        for name, array in level.arrays.items():
            assert f"{name} = " in text
            first = r"\s+".join(str(v) for v in array[:2])  # the first elements shown
            assert re.search(rf"{name} = \[\s*{first}\b", text)
    [image] = page.images
    _png(image)


def test_long_level_arrays_are_abbreviated():
    T = ct.random((2000, 2000), 0.01, format="csr", seed=1)
    text = _page(T).content
    pos = T.levels[1].pos
    assert "..." in text
    assert str(pos[-1]) in text  # the last elements are kept
    assert str(T.levels[1].crd.tolist()) not in text


def test_lazy_tensor_display_runs_no_kernel():
    i, j = ct.indices("i j")
    A = ct.random((50, 40), 0.1, format="csr", seed=2, name="A")
    x = ct.asarray(np.arange(40.0), name="x")
    y = ct.zeros((50,), name="y")
    y[i] = A[i, j] * x[j]
    before = ct.cache_info()
    page = _page(y)
    assert ct.cache_info()["compiles"] == before["compiles"]
    assert ct.cache_info()["hits"] == before["hits"]
    assert "lazy" in page.content and "A(i,j) * x(j)" in page.content
    assert page.images == [] and "nnz" not in page.content
    assert "lazy" in repr(y)  # still pending
    S = A + A  # an operator's lazy result
    assert "lazy" in _page(S).content and "lazy" in repr(S)
    assert np.allclose(y.to_numpy(), A.to_numpy() @ np.arange(40.0))
    assert "lazy" not in _page(y).content  # computed now: data shown


def test_tensor_display_without_matplotlib_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    page = _page(ct.random((10, 10), 0.2, format="csr", seed=0))
    assert page.images == [] and "pip install matplotlib" in page.content
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plotting.spy_png(np.eye(3))


def test_non_matrix_tensors_have_no_spy_plot():
    for T in (ct.random((4, 5, 6), 0.2, format="csf", seed=0), ct.asarray(np.arange(5.0))):
        page = _page(T)
        assert page.images == []
        assert " × ".join(map(str, T.shape)) in page.content


def test_spy_draws_every_stored_entry():
    T = ct.random((60, 80), 0.05, format="csr", seed=5)
    ax = ct.spy(T)
    coords, _ = T.coords()
    line = ax.lines[0]
    assert np.array_equal(line.get_xdata(), coords[:, 1])
    assert np.array_equal(line.get_ydata(), coords[:, 0])
    M = sp.random_array((20, 20), density=0.1, random_state=0, format="coo")
    assert len(ct.spy(M).lines[0].get_xdata()) == M.nnz
    assert len(ct.spy(np.eye(7)).lines[0].get_xdata()) == 7
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no singular axis limits for an empty mode
        assert len(ct.spy(ct.zeros((0, 3), format="csr")).lines[0].get_xdata()) == 0
    with pytest.raises(ValueError, match="matrix"):
        ct.spy(ct.random((3, 3, 3), 0.5, format="csf", seed=0))


def test_spy_of_a_large_matrix_is_a_density_image():
    n = 1000
    T = ct.random((n, n), 0.03, format="csr", seed=6)
    assert T.nnz > plotting.MARKER_LIMIT
    ax = ct.spy(T)
    assert len(ax.lines) == 0
    image = np.asarray(ax.images[0].get_array())
    coords, _ = T.coords()
    scale = n / image.shape[0]
    expected = np.zeros(image.shape, dtype=bool)
    expected[(coords[:, 0] / scale).astype(int), (coords[:, 1] / scale).astype(int)] = True
    assert np.array_equal(image, expected)


@pytest.mark.parametrize(
    "fmt, stores",
    [
        ("csr", ["mode 0", "mode 1"]),
        ("csc", ["mode 1", "mode 0"]),
        ("coo", ["mode 0", "mode 1"]),
        ("dia", ["diagonal (mode 1 − mode 0)", "mode 0", "mode 1"]),
        ("ell", ["slot within mode 0", "mode 0", "mode 1"]),
        (ct.bcsr((2, 3)), ["block of mode 0 (blocks of 2)", "block of mode 1 (blocks of 3)"]),
    ],
)
def test_format_display_is_its_level_diagram(fmt, stores):
    F = ct.as_format(fmt, 2)
    text = _page(F).content
    assert str(F) in text
    for level in F.levels:
        assert level.name in text
        for array in level.array_names:
            assert array in text
    position = 0
    for stored in stores:  # the levels in order, outermost first
        position = text.index(stored, position)


def test_schedule_display_lists_its_commands():
    s = ct.Schedule().split("i", "i0", "i1", 16).parallelize("i0", "cpu_thread", "no_races")
    text = _page(s).content
    assert str(s) in text
    assert text.index("split") < text.index("parallelize")
    assert "i, i0, i1, 16" in text and "i0, cpu_thread, no_races" in text
    assert "default" in _page(ct.Schedule()).content


@pytest.mark.parametrize("pygments", [True, False])
def test_kernel_display_shows_signature_concrete_notation_source_and_cache(monkeypatch, pygments):
    if not pygments:
        monkeypatch.setitem(sys.modules, "pygments", None)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)",
        formats={"A": "csr", "x": "d", "y": "d"},
        schedule=ct.Schedule().split("i", "i0", "i1", 8),
    )
    page = _page(kern)
    text = page.content
    assert "y(i) = A(i,j) * x(j)" in text
    assert "ds" in text and "float64" in text and "split(i,i0,i1,8)" in text
    assert kern.concrete.strip() in text
    assert kern.source("c").strip() in text
    assert f"entries={ct.cache_info()['entries']}" in text
    # and the text repr says as much in one line (not <coiter.compiler.Kernel at 0x...>)
    assert repr(kern).startswith("<coiter.Kernel y(i) = A(i,j) * x(j) | A: ds float64")
    markup = kern._repr_html_()
    assert ("<span style=" in markup) == pygments  # highlighted only with pygments


@pytest.mark.skipif(ct.cuda.status()["nvrtc"] is None, reason="NVRTC is not installed")
def test_cuda_kernel_display_shows_its_cuda_source(monkeypatch):
    monkeypatch.setenv("COITER_CUDA_ARCH", "sm_90")  # compiles without a GPU (test_cuda_codegen)
    kern = ct.compile(
        "y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, target="cuda"
    )
    text = _page(kern).content
    assert "generated cuda" in text and "cuda" in repr(kern)
    assert kern.source("cuda").strip() in text
