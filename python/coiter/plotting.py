"""Spy plots of sparse matrices (``ct.spy``) with matplotlib, an optional dependency.

A matrix with few stored entries is drawn as one marker per entry, as ``matplotlib.pyplot.spy``
does; a larger one as an image of how many entries fall into each pixel, so that a plot of a
matrix with a hundred million entries costs one pass over its coordinates, not a hundred
million markers. Nothing here imports matplotlib until a plot is drawn.
"""

from __future__ import annotations

import importlib
import io
from typing import Any

import numpy as np
import scipy.sparse
from numpy.typing import NDArray

# Up to this many stored entries a spy plot draws a marker per entry; above, a density image.
MARKER_LIMIT = 20_000
# Pixels along the longer side of a density image.
_IMAGE_PIXELS = 400


def _matplotlib(module: str) -> Any:
    """``matplotlib.<module>``, or an ImportError that says what to install."""
    try:
        return importlib.import_module(f"matplotlib.{module}")
    except ImportError:
        raise ImportError(
            "spy plots need matplotlib: pip install matplotlib (or coiter[jupyter])"
        ) from None


def matrix_entries(matrix: Any) -> tuple[tuple[int, int], NDArray[Any], NDArray[Any]]:
    """``(shape, rows, columns)`` of the stored entries of a coiter matrix, a SciPy sparse
    matrix or array, or a dense 2-D array (its nonzeros)."""
    if scipy.sparse.issparse(matrix):
        coo = matrix.tocoo()
        shape, rows, cols = tuple(coo.shape), coo.row, coo.col
    elif callable(getattr(matrix, "coords", None)):  # a coiter tensor
        coords, _ = matrix.coords()
        shape = tuple(matrix.shape)
        rows, cols = (coords[:, 0], coords[:, 1]) if len(shape) == 2 else (None, None)
    else:
        dense = np.asarray(matrix)
        shape = dense.shape
        rows, cols = np.nonzero(dense) if dense.ndim == 2 else (None, None)
    if len(shape) != 2 or rows is None or cols is None:
        raise ValueError(f"a spy plot shows a matrix; this has shape {shape}")
    return (int(shape[0]), int(shape[1])), rows, cols


def spy(matrix: Any, ax: Any = None, markersize: float | None = None, **kwargs: Any) -> Any:
    """Plot where a matrix stores entries and return the matplotlib ``Axes``.

    Parameters
    ----------
    matrix : Tensor, SciPy sparse matrix or array, or 2-D array_like
        A coiter tensor shows its stored entries (explicit zeros included), a SciPy matrix its
        stored entries, a dense array its nonzeros.
    ax : matplotlib Axes, optional
        Where to draw; a new figure's axes by default.
    markersize : float, optional
        Marker size when entries are drawn one by one (up to ``MARKER_LIMIT`` entries);
        chosen from the matrix size by default.
    **kwargs
        Passed to ``Axes.plot`` (markers) or ``Axes.imshow`` (density image).

    Raises
    ------
    ImportError
        matplotlib is not installed.
    ValueError
        ``matrix`` is not 2-D.
    """
    shape, rows, cols = matrix_entries(matrix)
    if ax is None:
        _, ax = _matplotlib("pyplot").subplots()
    if len(rows) <= MARKER_LIMIT:
        size = markersize if markersize is not None else max(1.0, 100.0 / max(shape))
        ax.plot(cols, rows, "s", markersize=size, linestyle="none", **kwargs)
        # (an empty mode still gets an axis one unit wide)
        ax.set_xlim(-0.5, max(shape[1], 1) - 0.5)
        ax.set_ylim(max(shape[0], 1) - 0.5, -0.5)
    else:
        scale = max(shape) / _IMAGE_PIXELS
        pixels = (max(1, round(shape[0] / scale)), max(1, round(shape[1] / scale)))
        # The pixel of each entry, in integers (exact for any extent): one pass, no sorting.
        held = np.zeros(pixels, dtype=bool)
        held[
            np.asarray(rows, dtype=np.int64) * pixels[0] // shape[0],
            np.asarray(cols, dtype=np.int64) * pixels[1] // shape[1],
        ] = True
        kwargs.setdefault("cmap", "Greys")
        ax.imshow(
            held,
            extent=(-0.5, shape[1] - 0.5, shape[0] - 0.5, -0.5),
            interpolation="nearest",
            **kwargs,
        )
    ax.set_aspect("equal")
    ax.xaxis.tick_top()
    ax.set_title(f"{shape[0]} x {shape[1]}, {len(rows):,} stored", fontsize=9)
    return ax


def spy_png(matrix: Any, inches: float = 3.0) -> bytes:
    """A spy plot of ``matrix`` as PNG bytes (rendered off screen; ImportError without
    matplotlib)."""
    # A Figure of its own, not pyplot's: no window, no global state, any backend.
    figure = _matplotlib("figure").Figure(figsize=(inches, inches), dpi=80)
    spy(matrix, ax=figure.add_subplot())
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
