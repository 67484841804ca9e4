"""The data layer against SciPy: packing COO into CSR, and wrapping a canonical CSR.

- pack: ``ct.asarray(coo, format="csr")`` against SciPy's ``coo.tocsr()`` on the same
  random COO matrix (float64 values, int32 indices, unsorted, the few duplicates random
  data has, which both sum); the results must be identical arrays.
- wrap: ``ct.asarray(csr)`` of the canonical CSR of the same matrix, which must share
  memory with SciPy's three arrays (zero copy). The first call on a freshly built
  ``csr_array`` also pays SciPy's O(nnz) ``has_canonical_format`` check (SciPy caches the
  flag); it is reported apart.
Targets: pack within 2x SciPy; wrap under 50 µs.
"""

import numpy as np
import scipy.sparse as sp

import coiter as ct

from .timing import median_of, time_call

PACK_TARGET_RATIO = 2.0
WRAP_TARGET_S = 50e-6


def _same_csr(tensor, ref):
    level = tensor.levels[1]
    return (
        tensor.format == ct.Format.parse("ds")
        and np.array_equal(level.pos, ref.indptr)
        and np.array_equal(level.crd, ref.indices)
        and np.array_equal(tensor.values, ref.data)
    )


def measure(nnz, n, repeats, calls, seed):
    rng = np.random.default_rng(seed)
    coo = sp.coo_array(
        (
            rng.random(nnz),
            (rng.integers(0, n, nnz, dtype=np.int32), rng.integers(0, n, nnz, dtype=np.int32)),
        ),
        shape=(n, n),
    )
    if not _same_csr(ct.asarray(coo, format="csr"), coo.tocsr()):
        return {"error": "ct.asarray(coo, format='csr') differs from SciPy's coo.tocsr()"}
    ours = median_of(lambda: ct.asarray(coo, format="csr"), repeats)
    scipys = median_of(coo.tocsr, repeats)

    canonical = coo.tocsr()
    fresh = sp.csr_array(
        (canonical.data, canonical.indices, canonical.indptr), shape=canonical.shape
    )
    first_s, tensor = time_call(lambda: ct.asarray(fresh))
    zero_copy = all(
        np.shares_memory(a, b)
        for a, b in [
            (tensor.values, fresh.data),
            (tensor.levels[1].crd, fresh.indices),
            (tensor.levels[1].pos, fresh.indptr),
        ]
    )
    wrap = median_of(lambda: ct.asarray(fresh), calls, warmup=10)
    return {
        "nnz": nnz,
        "shape": [n, n],
        "pack_coo_to_csr": {
            "coiter": ours.as_dict(),
            "scipy": scipys.as_dict(),
            "ratio": ours.median / scipys.median,
            "target_ratio": PACK_TARGET_RATIO,
        },
        "wrap_canonical_csr": {
            "coiter": wrap.as_dict(),
            "zero_copy": zero_copy,
            "first_call_fresh_matrix_s": first_s,
            "target_s": WRAP_TARGET_S,
        },
    }
