"""The libraries the suite compares, behind one interface.

A ``Peer`` says whether it is available (and why not), converts the operands to its own
types and returns a zero-argument callable that computes the kernel (``prepare``; only that
callable is timed), turns its native result into a NumPy array or a SciPy sparse array for
the cross-check (``comparable``), and sets its thread count where it can. A kernel a peer
cannot compute raises ``Unsupported`` with the reason, which the report shows; nothing is
left out silently.
"""

import importlib.metadata
import os
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .datasets import TensorData
from .kernels import TENSOR_RANK

# A peer's dense intermediate or result above this size is refused rather than risking the
# machine's memory; the reason says how large it would have been.
MEMORY_LIMIT_BYTES = 4 << 30
# sparse.einsum costs about a microsecond per entry of its outer-product intermediate
# (measured here: 1.4 s for 1.5 M entries, 1.8 s for 2 M); above this many entries one call
# would take seconds and the case is reported as skipped, with the count.
EINSUM_ENTRY_LIMIT = 1_500_000
# tensora's CSC SpMV walks every (column, row) pair (its generated loop over rows is dense,
# about 5 ns a step here); above this many steps one call would take seconds.
TENSORA_DENSE_STEP_LIMIT = 500_000_000


class Unsupported(Exception):
    """The peer cannot compute this kernel; the message says why."""


def _gigabytes(n_bytes):
    return f"{n_bytes / 2**30:.1f} GiB"


def _refuse_if_large(n_bytes, what):
    if n_bytes > MEMORY_LIMIT_BYTES:
        raise Unsupported(
            f"{what} would take {_gigabytes(n_bytes)} (limit {_gigabytes(MEMORY_LIMIT_BYTES)})"
        )


def _coo_nd(coords, values, shape):
    """A SciPy COO array of any order (the comparable form of a sparse n-D result)."""
    return sp.coo_array((values, tuple(np.asarray(c) for c in coords.T)), shape=shape)


class Peer:
    """Base: ``name`` (for ``--peers`` and the JSON), ``label`` (the table's column),
    ``available``, ``reason`` (why not), ``version``."""

    name = ""
    package = ""  # the distribution whose version is reported

    @property
    def label(self):
        return self.name

    def __init__(self):
        try:
            self._load()
            self.available, self.reason = True, None
            self.version = importlib.metadata.version(self.package)
        except Exception as error:  # an import failure makes the peer unavailable, with why
            self.available, self.reason, self.version = (
                False,
                f"{type(error).__name__}: {error}",
                None,
            )

    def _load(self):
        """Import the library (raises when it cannot)."""

    # Threads: most peers are single-threaded, and say so.
    def can_set_threads(self):
        return False

    def set_threads(self, count):
        raise NotImplementedError(f"{self.name} cannot set its thread count")

    def threads(self):
        return 1

    def prepare(self, kernel, operands):
        """A zero-argument callable computing ``kernel`` on ``operands`` (converted here)."""
        method = getattr(self, f"_{kernel.name}", None) or getattr(
            self, f"_{kernel.name.split('_')[0]}", None
        )
        if method is None:
            raise Unsupported(self.unsupported_reason(kernel))
        return method(kernel, operands)

    def unsupported_reason(self, kernel):
        return f"{self.name} has no {kernel.title} kernel"

    def comparable(self, result):
        """The result as a NumPy array or a SciPy sparse array."""
        return result

    def run(self, kernel, operands):
        """Prepare and compute once; the comparable result (for checks, not timing)."""
        return self.comparable(self.prepare(kernel, operands)())

    def describe(self):
        return {
            "label": self.label,
            "available": self.available,
            "reason": self.reason,
            "version": self.version,
            "threads_settable": self.available and self.can_set_threads(),
        }


class CoiterPeer(Peer):
    """coiter: ``ct.compile`` of the kernel's expression for its formats, called with
    coiter tensors wrapped once, before timing (zero copy for canonical CSR/CSC and NumPy
    arrays). The compile is part of ``prepare`` (compile latency is measured on its own)."""

    name, package = "coiter", "coiter"

    def can_set_threads(self):
        # ct.set_num_threads arrives with the parallel kernels; until then coiter runs on
        # one thread and the all-core rows do not time it again.
        return hasattr(ct, "set_num_threads")

    def set_threads(self, count):
        ct.set_num_threads(count)

    def threads(self):
        return ct.get_num_threads() if hasattr(ct, "get_num_threads") else 1

    def prepare(self, kernel, operands):
        arguments = self.arguments(kernel, operands)
        kern = self.compile(kernel)
        return lambda: kern(**arguments)

    @staticmethod
    def compile(kernel):
        formats = dict(kernel.formats)
        if kernel.unsorted_rows:
            formats[kernel.output] = ct.Format([ct.dense, ct.compressed(ordered=False)])
        return ct.compile(kernel.expression, formats=formats, dtype=np.float64)

    def arguments(self, kernel, operands):
        """The keyword arguments of each call."""
        return {name: self._tensor(operand) for name, operand in operands.items()}

    @staticmethod
    def _tensor(operand):
        if isinstance(operand, TensorData):
            return ct.from_coords(operand.coords, operand.values, operand.shape, format="csf")
        return ct.asarray(operand)  # zero copy for canonical CSR/CSC and NumPy arrays

    def comparable(self, result):
        if all(letter == "d" for letter in str(result.format).split(":")[0]):
            return np.asarray(result)
        if result.ndim == 2:
            return result.to_scipy("csr")
        coords, values = result.coords()
        return _coo_nd(coords, values, result.shape)


class CoiterScipyOperandsPeer(CoiterPeer):
    """coiter as users call it: the SciPy sparse matrices and NumPy arrays themselves go to
    the compiled kernel on every call (``kern(A=scipy_matrix, x=numpy_array)``), so each
    timed call also wraps and validates them (canonical CSR/CSC and NumPy are read in place;
    COO is packed into coiter's COO). Matrix kernels only."""

    name = "coiter-scipy"
    label = "coiter (SciPy operands)"

    def arguments(self, kernel, operands):
        if kernel.on == "tensor":
            raise Unsupported(
                "matrix kernels only: a 3-tensor's one SciPy form is n-D COO, "
                "which a call would pack into CSF every time"
            )
        return dict(operands)


class ScipyPeer(Peer):
    """scipy.sparse: its operators on CSR/CSC/COO arrays (single-threaded C++)."""

    name, package = "scipy", "scipy"

    def _spmv(self, kernel, ops):
        A, x = ops["A"], ops["x"]
        return lambda: A @ x

    def _spmm(self, kernel, ops):
        A, X = ops["A"], ops["X"]
        return lambda: A @ X

    def _spgemm(self, kernel, ops):
        A, B = ops["A"], ops["B"]
        return lambda: A @ B

    def _spadd2(self, kernel, ops):
        A, B = ops["A"], ops["B"]
        return lambda: A + B

    def _spadd3(self, kernel, ops):
        A, B, D = ops["A"], ops["B"], ops["D"]
        return lambda: A + B + D  # two binary additions: SciPy cannot fuse

    def _multiply(self, kernel, ops):
        A, B = ops["A"], ops["B"]
        return lambda: A.multiply(B)

    def _sddmm(self, kernel, ops):
        # SciPy has no SDDMM; the usual SciPy/NumPy formulation gathers the rows of U and V
        # at A's coordinates (A.multiply(U @ V.T) would form a dense n x n matrix).
        A, U, V = ops["A"], ops["U"], ops["V"]
        rows = np.repeat(np.arange(A.shape[0], dtype=A.indices.dtype), np.diff(A.indptr))
        chunk = max(1, (64 << 20) // (8 * U.shape[1]))  # bound the gathered temporaries

        def sddmm():
            values = np.empty_like(A.data)
            for start in range(0, A.nnz, chunk):
                stop = min(A.nnz, start + chunk)
                values[start:stop] = A.data[start:stop] * np.einsum(
                    "ik,ik->i", U[rows[start:stop]], V[A.indices[start:stop]]
                )
            return sp.csr_array((values, A.indices, A.indptr), shape=A.shape)

        return sddmm

    def _tensor(self, ops):
        data = ops["B"]
        return _coo_nd(data.coords, data.values, data.shape)

    def _ttv(self, kernel, ops):
        B, c = self._tensor(ops), ops["c"]
        _refuse_if_large(8 * B.shape[0] * B.shape[1], "SciPy's dense TTV result")
        return lambda: B.dot(c)

    def _ttm(self, kernel, ops):
        B, C = self._tensor(ops), ops["C"]
        _refuse_if_large(8 * B.shape[0] * B.shape[1] * C.shape[0], "SciPy's dense TTM result")
        return lambda: B.tensordot(C, axes=([2], [1]))

    def unsupported_reason(self, kernel):
        if kernel.name == "mttkrp":
            return (
                "SciPy has no MTTKRP (n-D COO offers tensordot, but the Khatri-Rao "
                "product it needs would be a dense K·L x R matrix)"
            )
        return super().unsupported_reason(kernel)


class PydataSparsePeer(Peer):
    """pydata/sparse (Numba backend): GCXS for CSR/CSC, COO otherwise; ``@``, ``+``, ``*``
    and ``sparse.einsum``."""

    name, package = "sparse", "sparse"

    def _load(self):
        import sparse

        self.sparse = sparse

    def _array(self, operand):
        if isinstance(operand, TensorData):
            return self.sparse.COO(
                operand.coords.T,
                operand.values,
                shape=operand.shape,
                has_duplicates=False,
                sorted=True,
            )
        if sp.issparse(operand) and operand.format in ("csr", "csc"):
            return self.sparse.GCXS.from_scipy_sparse(operand)
        if sp.issparse(operand):
            return self.sparse.COO.from_scipy_sparse(operand)
        return operand

    def _arrays(self, kernel, ops):
        return [self._array(ops[name]) for name in kernel.inputs]

    def _spmv(self, kernel, ops):
        A, x = self._arrays(kernel, ops)
        return lambda: A @ x

    _spmm = _spmv
    _spgemm = _spmv

    def _spadd2(self, kernel, ops):
        A, B = self._arrays(kernel, ops)
        return lambda: A + B

    def _spadd3(self, kernel, ops):
        A, B, D = self._arrays(kernel, ops)
        return lambda: A + B + D

    def _multiply(self, kernel, ops):
        A, B = self._arrays(kernel, ops)
        return lambda: A * B

    def _einsum(self, kernel, ops, stored_entries):
        # sparse.einsum broadcasts the operands into their "minimal outer product" first:
        # one stored entry per (nonzero, rank) pair.
        if stored_entries > EINSUM_ENTRY_LIMIT:
            raise Unsupported(
                f"skipped: sparse.einsum would first build an outer product of "
                f"{stored_entries:,} entries (about 1 µs each; limit "
                f"{EINSUM_ENTRY_LIMIT:,})"
            )
        arrays = self._arrays(kernel, ops)
        return lambda: self.sparse.einsum(kernel.einsum, *arrays)

    def _sddmm(self, kernel, ops):
        return self._einsum(kernel, ops, ops["A"].nnz * ops["U"].shape[1])

    def _mttkrp(self, kernel, ops):
        return self._einsum(kernel, ops, ops["B"].values.size * TENSOR_RANK)

    def _ttm(self, kernel, ops):
        return self._einsum(kernel, ops, ops["B"].values.size * TENSOR_RANK)

    def _ttv(self, kernel, ops):
        B, c = self._arrays(kernel, ops)
        return lambda: self.sparse.tensordot(B, c, axes=([2], [0]))

    def comparable(self, result):
        if isinstance(result, np.ndarray):
            return result
        if result.ndim == 2:
            return result.to_scipy_sparse()
        coo = self.sparse.COO(result)
        return _coo_nd(coo.coords.T, coo.data, coo.shape)


class TensoraPeer(Peer):
    """tensora: TACO's algorithm reimplemented in Python, compiled with llvmlite. Operands
    are built with its ``taco_structure_to_cffi`` from the arrays directly (its public
    constructors walk a Python tree per stored entry, minutes for a million nonzeros); the
    result is read back through ``taco_indices``/``taco_vals``."""

    name, package = "tensora", "tensora"

    def _load(self):
        import tensora
        from tensora.compile._cffi_ownership import taco_structure_to_cffi

        self.tensora, self._to_cffi = tensora, taco_structure_to_cffi

    def prepare(self, kernel, operands):
        if kernel.input_format == "coo":
            raise Unsupported(
                "tensora has only dense and compressed levels (no singleton level, so no COO)"
            )
        if kernel.input_format == "csc":
            steps = operands["A"].shape[0] * operands["A"].shape[1]
            if steps > TENSORA_DENSE_STEP_LIMIT:
                raise Unsupported(
                    f"skipped: tensora's CSC SpMV loops densely over the rows "
                    f"of every column ({steps:,} steps; limit "
                    f"{TENSORA_DENSE_STEP_LIMIT:,})"
                )
        formats = {name: fmt.replace("ds:1,0", "d1s0") for name, fmt in kernel.formats.items()}
        try:
            method = self.tensora.tensor_method(kernel.expression, formats)
        except Exception as error:
            # tensora raises for problems it has no kernel for (e.g. SpGEMM with a CSR
            # result, which needs a workspace); its message is the reason.
            raise Unsupported(f"tensora: {type(error).__name__}: {error}") from error
        tensors = {name: self._tensor(operands[name], formats[name]) for name in kernel.inputs}
        return lambda: method(**tensors)

    def _tensor(self, operand, fmt):
        if isinstance(operand, TensorData):
            levels = CoiterPeer._tensor(operand).levels
            indices = [[level.pos.tolist(), level.crd.tolist()] for level in levels]
            values, dims, modes, order = operand.values, operand.shape, (1, 1, 1), (0, 1, 2)
        elif sp.issparse(operand):
            indices = [[], [operand.indptr.tolist(), operand.indices.tolist()]]
            values, modes = operand.data, (0, 1)
            dims, order = operand.shape, ((1, 0) if operand.format == "csc" else (0, 1))
        else:
            indices, values = [[] for _ in operand.shape], operand.ravel()
            dims, modes, order = operand.shape, (0,) * operand.ndim, tuple(range(operand.ndim))
        return self.tensora.Tensor(
            self._to_cffi(
                indices,
                values.tolist(),
                mode_types=modes,
                dimensions=tuple(dims),
                mode_ordering=order,
            )
        )

    def comparable(self, result):
        """Walk the levels into coordinates (vectorized): a dense level multiplies the
        positions by its extent, a compressed level expands each position into its range."""
        dims, modes, order = result.dimensions, result.modes, result.mode_ordering
        positions, coords = np.zeros(1, dtype=np.int64), []
        for level, (mode, indices) in enumerate(zip(modes, result.taco_indices)):
            extent = dims[order[level]]
            if mode == self.tensora.Mode.dense:
                coords = [np.repeat(c, extent) for c in coords]
                coords.append(np.tile(np.arange(extent), positions.size))
                positions = (positions[:, None] * extent + np.arange(extent)).ravel()
            else:
                pos, crd = np.asarray(indices[0]), np.asarray(indices[1])
                counts = pos[positions + 1] - pos[positions]
                coords = [np.repeat(c, counts) for c in coords]
                starts = np.repeat(pos[positions], counts)
                positions = (
                    starts + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
                )
                coords.append(crd[positions])
        values = np.asarray(result.taco_vals)[positions]
        by_mode = np.stack([coords[order.index(m)] for m in range(len(dims))], axis=1)
        if all(mode == self.tensora.Mode.dense for mode in modes):
            array = np.zeros(dims)
            array[tuple(by_mode.T)] = values
            return array
        return _coo_nd(by_mode, values, dims)


class MklPeer(Peer):
    """Intel MKL's sparse BLAS through ``sparse_dot_mkl`` (CSR/CSC products only)."""

    name, package = "mkl", "sparse_dot_mkl"

    def _load(self):
        # The PyPI ``mkl`` package puts libmkl_rt in <prefix>/lib, which the loader does
        # not search; sparse_dot_mkl honours MKL_RT.
        if "MKL_RT" not in os.environ:
            found = sorted(Path(sys.prefix, "lib").glob("libmkl_rt.so*"))
            if found:
                os.environ["MKL_RT"] = str(found[0])
        import sparse_dot_mkl

        self.mkl = sparse_dot_mkl

    def can_set_threads(self):
        return True

    def set_threads(self, count):
        self.mkl.mkl_set_num_threads(count)

    def threads(self):
        return self.mkl.mkl_get_max_threads()

    def _product(self, kernel, ops):
        if kernel.input_format == "coo":
            raise Unsupported("sparse_dot_mkl takes CSR, CSC and BSR matrices (no COO)")
        left, right = (ops[name] for name in kernel.inputs)
        return lambda: self.mkl.dot_product_mkl(left, right)

    _spmv = _spmm = _spgemm = _product

    def unsupported_reason(self, kernel):
        if kernel.on == "tensor":
            return "MKL's sparse BLAS has no tensor kernels"
        return (
            f"sparse_dot_mkl exposes only sparse products and solvers, no "
            f"{kernel.family_title or kernel.title}"
        )


ALL_PEERS = [CoiterPeer, CoiterScipyOperandsPeer, ScipyPeer, PydataSparsePeer, TensoraPeer, MklPeer]

# SciPy is the baseline of the speedups; the others follow in the report's column order.
BASELINE = "scipy"


def make_peers(names=None):
    """The peers named (all by default), each probed for availability."""
    peers = [cls() for cls in ALL_PEERS if names is None or cls.name in names]
    unknown = set(names or ()) - {peer.name for peer in peers}
    if unknown:
        raise ValueError(
            f"unknown peers {sorted(unknown)}; known: {[cls.name for cls in ALL_PEERS]}"
        )
    return peers
