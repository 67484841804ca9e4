"""The data the kernels run on: generated matrices and 3-tensors, or ``.mtx`` files.

SuiteSparse and FROSTT cannot be downloaded here, so the generators make matrices with the size,
nonzero count and *structure class* of the classic SpMV set (the TACO paper's Table 1, "The Tensor
Algebra Compiler", Kjolstad et al., OOPSLA 2017), and 3-tensors with the shape and density of
scaled-down FROSTT tensors. What matters for a sparse kernel's speed is the structure: how long the
rows are and how far apart the columns of a row lie (which decides how well ``x`` stays in cache),
so each class reproduces that:

- ``banded``: FEM-like, a 3-D mesh in natural order; a row's columns lie in a few clusters
  around the diagonal at mesh-plane distances (1, n^(1/3), n^(2/3)).
- ``block``: the same on a grid of dense 3 x 3 blocks (3 degrees of freedom per node).
- ``uniform``: columns uniformly random (irregular, cache-unfriendly).
- ``power_law``: web/social graphs: row lengths and column popularity heavy-tailed, half of
  the links local (pages link within their host).
- ``hypersparse``: far fewer nonzeros than rows (most rows empty).

Every generator is deterministic: its random stream is seeded from the data set's name and
the run's ``--seed``. A generated matrix is canonical CSR (sorted, no duplicates), float64
values and int32 indices. Duplicated coordinates are summed, so a generator aims at the
target count with one correction pass, and the actual count is reported.
"""

import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp


@dataclass(frozen=True)
class MatrixSpec:
    """A square matrix of the SpMV set: its name, domain, size and structure class."""

    name: str
    domain: str
    n: int
    nnz: int
    structure: str

    def scaled(self, factor):
        """The same structure with ``factor`` times fewer rows and nonzeros (same row length)."""
        if factor == 1:
            return self
        return MatrixSpec(
            f"{self.name}/{factor}",
            self.domain,
            max(8, self.n // factor),
            max(8, self.nnz // factor),
            self.structure,
        )


# The TACO paper's Table 1 ("The Tensor Algebra Compiler", OOPSLA 2017), with the structure class
# each matrix is known for.
SPMV_SET = [
    MatrixSpec("bcsstk17", "structural", 10_974, 428_650, "block"),
    MatrixSpec("pdb1HYS", "protein", 36_417, 4_344_765, "block"),
    MatrixSpec("rma10", "3D CFD", 46_385, 2_329_092, "banded"),
    MatrixSpec("cant", "FEM cantilever", 62_451, 4_007_383, "banded"),
    MatrixSpec("consph", "FEM spheres", 83_334, 6_010_480, "banded"),
    MatrixSpec("cop20k_A", "FEM accelerator", 121_192, 2_624_331, "uniform"),
    MatrixSpec("shipsec1", "FEM ship section", 140_874, 3_568_176, "block"),
    MatrixSpec("scircuit", "circuit", 170_998, 958_936, "power_law"),
    MatrixSpec("mac_econ_fwd500", "economics", 206_500, 1_273_389, "uniform"),
    MatrixSpec("pwtk", "wind tunnel", 217_918, 11_524_432, "banded"),
    MatrixSpec("webbase-1M", "web graph", 1_000_005, 3_105_536, "power_law"),
    # Not in the TACO set: the set has no hypersparse matrix, the class DCSR/DCSC exist for.
    MatrixSpec("hypersparse-1M", "synthetic", 1_000_000, 250_000, "hypersparse"),
]
SPMV_BY_NAME = {spec.name: spec for spec in SPMV_SET}


@dataclass(frozen=True)
class TensorSpec:
    """A FROSTT 3-tensor: name, dimensions and nonzero count."""

    name: str
    dims: tuple
    nnz: int

    def scaled(self, factor):
        """Every dimension ``factor`` times smaller (a dimension of 2 stays), same density."""
        dims = tuple(d if d <= 2 else max(2, d // factor) for d in self.dims)
        shrink = np.prod([d / s for d, s in zip(self.dims, dims)])
        return TensorSpec(f"{self.name}/{factor}", dims, max(8, int(self.nnz / shrink)))


# Sizes of FROSTT's tensors (as Kjolstad's thesis evaluates them, ch. 7); the suite runs scaled-down
# versions.
FROSTT_SET = [
    TensorSpec("nell-2", (12_092, 9_184, 28_818), 76_879_419),
    TensorSpec("vast-2015-mc1-3d", (165_427, 11_374, 2), 26_021_945),
]
FROSTT_BY_NAME = {spec.name: spec for spec in FROSTT_SET}


@dataclass
class MatrixData:
    """A matrix the kernels run on, and where it came from."""

    name: str
    structure: str
    source: str  # "generated like <name>" or the file's path
    matrix: sp.csr_array = field(repr=False)
    target_nnz: int | None = None

    def describe(self):
        n_rows, n_cols = self.matrix.shape
        return {
            "name": self.name,
            "structure": self.structure,
            "source": self.source,
            "shape": [n_rows, n_cols],
            "nnz": int(self.matrix.nnz),
            "target_nnz": self.target_nnz,
        }


@dataclass
class TensorData:
    """A 3-tensor in coordinates sorted lexicographically (CSF order), and its origin."""

    name: str
    source: str
    shape: tuple
    coords: np.ndarray = field(repr=False)  # (nnz, 3) int64
    values: np.ndarray = field(repr=False)
    target_nnz: int | None = None

    def describe(self):
        return {
            "name": self.name,
            "structure": "frostt-like",
            "source": self.source,
            "shape": list(self.shape),
            "nnz": int(self.values.size),
            "target_nnz": self.target_nnz,
        }


def rng_for(name, seed):
    """A random stream that depends only on the data set's name and the run's seed."""
    return np.random.default_rng([zlib.crc32(name.encode()), seed])


def _csr(rows, cols, n, rng):
    values = rng.random(rows.size) + 0.5  # away from zero: no cancellation in checks
    matrix = sp.coo_array((values, (rows, cols)), shape=(n, n)).tocsr()
    matrix.sum_duplicates()
    return sp.csr_array(
        (matrix.data, matrix.indices.astype(np.int32), matrix.indptr.astype(np.int32)), shape=(n, n)
    )


def _row_of_each_entry(lengths):
    return np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)


def _mesh_clusters(n_rows, per_row, rng):
    """Rows and columns of a 3-D-mesh-like pattern: ``per_row`` entries a row (on average),
    in clusters at distances 0, ±n^(1/3), ±n^(2/3) from the diagonal."""
    lengths = rng.poisson(per_row, n_rows).clip(1, None)
    rows = _row_of_each_entry(lengths)
    plane, line = int(round(n_rows ** (2 / 3))), int(round(n_rows ** (1 / 3)))
    centers = np.array([0, -line, line, -plane, plane])
    # Half of a row's couplings are in its own neighbourhood, the rest split between the
    # neighbouring mesh lines and planes.
    center = centers[rng.choice(5, rows.size, p=[0.5, 0.125, 0.125, 0.125, 0.125])]
    width = max(1, int(per_row) // 4)
    cols = rows + center + rng.integers(-width, width + 1, rows.size)
    return rows, cols.clip(0, n_rows - 1)


def banded(n, per_row, rng):
    rows, cols = _mesh_clusters(n, per_row, rng)
    return _csr(rows, cols, n, rng)


def block(n, per_row, rng, size=3):
    n_blocks = max(1, n // size)
    block_rows, block_cols = _mesh_clusters(n_blocks, per_row / size, rng)
    # Expand each block coordinate into its size x size dense block.
    inner_r, inner_c = np.divmod(np.arange(size * size), size)
    rows = (block_rows[:, None] * size + inner_r).ravel()
    cols = (block_cols[:, None] * size + inner_c).ravel()
    keep = (rows < n) & (cols < n)
    return _csr(rows[keep], cols[keep], n, rng)


def uniform(n, per_row, rng):
    count = int(n * per_row)
    return _csr(rng.integers(0, n, count), rng.integers(0, n, count), n, rng)


def power_law(n, per_row, rng):
    count = int(n * per_row)
    # Pareto(1.5) row weights: a mean row of a few entries, the longest a few thousand.
    row_weight = rng.pareto(1.5, n) + 1.0
    rows = rng.choice(n, count, p=row_weight / row_weight.sum())
    # Column popularity is heavy-tailed too (milder), under a random relabelling; half of
    # the links stay near their row (within a "host").
    popularity = rng.pareto(2.0, n) + 1.0
    popular = rng.permutation(n)[rng.choice(n, count, p=popularity / popularity.sum())]
    local = (rows + rng.integers(-64, 65, count)).clip(0, n - 1)
    cols = np.where(rng.random(count) < 0.5, local, popular)
    return _csr(rows, cols, n, rng)


def hypersparse(n, per_row, rng):
    count = max(1, int(n * per_row))
    occupied = rng.choice(n, max(1, count // 3), replace=False)  # about 3 entries a row
    return _csr(rng.choice(occupied, count), rng.integers(0, n, count), n, rng)


GENERATORS = {
    "banded": banded,
    "block": block,
    "uniform": uniform,
    "power_law": power_law,
    "hypersparse": hypersparse,
}


def generate_matrix(spec, seed):
    """The matrix of ``spec``, deterministic in (name, seed). Duplicates are summed, so a
    second pass corrects the row length once when the first falls short of the target."""
    rng = rng_for(spec.name, seed)
    generator = GENERATORS[spec.structure]
    per_row = spec.nnz / spec.n
    matrix = generator(spec.n, per_row, rng)
    if matrix.nnz < 0.99 * spec.nnz:
        matrix = generator(spec.n, per_row * spec.nnz / max(1, matrix.nnz), rng)
    return MatrixData(
        spec.name, spec.structure, f"generated like {spec.name.split('/')[0]}", matrix, spec.nnz
    )


def generate_tensor(spec, seed):
    """A 3-tensor with ``spec``'s shape and about its nonzeros: each mode's coordinates
    drawn with a heavy-tailed popularity (FROSTT tensors have popular entities), duplicates
    dropped, sorted lexicographically."""
    rng = rng_for(spec.name, seed)
    count = int(spec.nnz * 1.05)  # a few coordinates collide and are dropped
    columns = []
    for dim in spec.dims:
        weight = rng.pareto(2.0, dim) + 1.0
        columns.append(rng.choice(dim, count, p=weight / weight.sum()))
    linear = np.unique(np.ravel_multi_index(columns, spec.dims))[: spec.nnz]
    coords = np.stack(np.unravel_index(linear, spec.dims), axis=1).astype(np.int64)
    values = rng.random(coords.shape[0]) + 0.5
    return TensorData(
        spec.name,
        f"generated like {spec.name.split('/')[0]} (FROSTT)",
        tuple(spec.dims),
        coords,
        values,
        spec.nnz,
    )


def read_mtx_folder(folder):
    """Every ``*.mtx`` matrix under ``folder`` (recursively), as canonical CSR."""
    found = []
    for path in sorted(Path(folder).rglob("*.mtx")):
        matrix = sp.csr_array(scipy.io.mmread(path)).astype(np.float64)
        matrix.sum_duplicates()
        matrix.sort_indices()
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            # SpGEMM A·A and the shared-pattern operands need a square matrix.
            print(f"skipping {path}: not a square matrix {matrix.shape}", flush=True)
            continue
        found.append(MatrixData(path.stem, "file", str(path), matrix))
    return found
