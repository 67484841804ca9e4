"""Results of all peers compared with each other before anything is timed.

Results are grouped by agreement. The reference group is the one holding the dense
NumPy/opt_einsum result when one was computed (small cases), else the largest group (ties go
to the group of the peer listed first, SciPy before coiter: coiter is the system under test
and does not get the benefit of the doubt). Every peer outside the reference group is a
mismatch, reported as a failure with its largest error, and not timed.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

# Sums are reassociated differently by each library; relative to the largest magnitude of
# the result (the generated values lie in [0.5, 1.5), so nothing cancels).
RELATIVE_TOLERANCE = 1e-9
DENSE_REFERENCE = "numpy dense"


@dataclass
class Verdict:
    ok: bool
    reference: str
    max_abs_error: float | None
    detail: str = ""

    def as_dict(self):
        return {
            "ok": self.ok,
            "reference": self.reference,
            "max_abs_error": self.max_abs_error,
            "detail": self.detail,
        }


def _as_2d(result):
    """A 3-D result as a matrix (rows i*J + j, columns k), so SciPy can subtract it."""
    if result.ndim == 3:
        n_i, n_j, n_k = result.shape
        return result.reshape((n_i * n_j, n_k))
    return result


def difference(a, b):
    """(max |a - b|, max |a|, detail) of two results, dense or sparse in any mix."""
    if a.shape != b.shape:
        return np.inf, 0.0, f"shape {b.shape} instead of {a.shape}"
    a, b = _as_2d(a), _as_2d(b)
    if a.ndim == 1:
        a, b = (np.asarray(x.toarray()).ravel() if sp.issparse(x) else x for x in (a, b))
    if sp.issparse(a) or sp.issparse(b):
        a = sp.csr_array(a) if sp.issparse(a) else sp.csr_array(np.asarray(a))
        b = sp.csr_array(b) if sp.issparse(b) else sp.csr_array(np.asarray(b))
        delta = abs(a - b)
        return (float(delta.max()) if delta.nnz else 0.0, float(abs(a).max()) if a.nnz else 0.0, "")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return np.inf, 0.0, "non-finite values"
    scale = float(np.max(np.abs(a))) if a.size else 0.0
    return float(np.max(np.abs(a - b))) if a.size else 0.0, scale, ""


def agree(a, b):
    error, scale, detail = difference(a, b)
    return error <= RELATIVE_TOLERANCE * max(scale, 1.0), error, detail


def cross_check(results, dense_reference=None):
    """Verdicts for ``results`` (peer name -> comparable result, in priority order).

    Returns peer name -> Verdict, and the name of the reference."""
    candidates = [(DENSE_REFERENCE, dense_reference)] if dense_reference is not None else []
    candidates += list(results.items())
    groups = []  # [representative name, its result, {member: agree() result}]
    for name, result in candidates:
        for _representative, value, members in groups:
            outcome = agree(value, result)
            if outcome[0]:
                members[name] = outcome
                break
        else:
            groups.append((name, result, {name: (True, 0.0, "")}))
    if dense_reference is not None:
        reference_group = groups[0]
    else:
        reference_group = max(groups, key=lambda group: len(group[2]))  # first on ties
    reference_name, reference_value, members = reference_group
    verdicts = {}
    for name, result in results.items():
        ok, error, detail = members[name] if name in members else agree(reference_value, result)
        ok = ok and name in members
        verdicts[name] = Verdict(
            ok,
            reference_name,
            None if np.isinf(error) else error,
            detail or ("" if ok else f"differs from {reference_name} by up to {error:.3g}"),
        )
    return verdicts, reference_name
