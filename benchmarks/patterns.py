"""Where the other operands of the union and intersection kernels (SpAdd, the elementwise
product) have their entries, relative to A's.

A merge's speed depends on how its operands' patterns meet: identical patterns never skip an
entry, disjoint ones never meet, and a transpose meets along the diagonal only. A single
pattern flatters whichever implementation suits it, so each kernel runs on four:

- ``identical``: A's indices, other values.
- ``half``: about half of A's entries kept, the others moved one to three columns to the
  right (so the operands overlap and differ, and banded stays banded).
- ``disjoint``: no entry in common with A, nor with the other partners: each entry moved to a
  nearby column of its row that no earlier operand uses (see ``disjoint_from``).
- ``transpose``: the first partner is Aᵀ (A's values), the others Aᵀ's pattern with other
  values; materialized as sorted CSR before anything is timed.

Values lie in [0.5, 1.5), as the generated matrices' do, so nothing cancels in the checks.
Every partner is canonical CSR with int32 indices, like the data sets.
"""

import numpy as np
import scipy.sparse as sp

PATTERNS = ("identical", "half", "disjoint", "transpose")
# How the kernel tables name each pattern, by the number of partners (B, or B and D).
WORDS = {
    "identical": ("identical", "identical"),
    "half": ("half-overlapping", "half-overlapping"),
    "disjoint": ("disjoint", "disjoint"),
    "transpose": ("B = Aᵀ", "B = Aᵀ, D with Aᵀ's pattern"),
}

# Disjoint partners: the first round moves each entry up to this many columns either way;
# each round doubles the reach for the entries still landing on a taken column.
FIRST_REACH = 3
ROUNDS = 16


def _values(count, rng):
    return rng.random(count) + 0.5


def _csr(rows, cols, values, shape):
    """Canonical CSR (duplicates summed, rows sorted) with int32 indices."""
    matrix = sp.coo_array((values, (rows, cols)), shape=shape).tocsr()
    matrix.sum_duplicates()
    return sp.csr_array(
        (matrix.data, matrix.indices.astype(np.int32), matrix.indptr.astype(np.int32)), shape=shape
    )


def with_new_values(matrix, rng):
    """``matrix``'s pattern with other values, in index arrays of its own (operands that
    share arrays could be told apart from those that merely agree)."""
    return sp.csr_array(
        (_values(matrix.nnz, rng), matrix.indices.copy(), matrix.indptr.copy()), shape=matrix.shape
    )


def half_overlapping(matrix, rng):
    """Each entry kept, or (with probability one half) moved 1-3 columns right; entries that
    land together are summed."""
    coo = matrix.tocoo()
    shift = np.where(rng.random(coo.nnz) < 0.5, 0, rng.integers(1, 4, coo.nnz))
    cols = np.minimum(coo.col.astype(np.int64) + shift, matrix.shape[1] - 1)
    return _csr(coo.row, cols, _values(coo.nnz, rng), matrix.shape)


def _keys(matrix):
    """Sorted row-major linear positions of a canonical CSR matrix's entries."""
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
    return rows * matrix.shape[1] + matrix.indices


def _taken(sorted_key_sets, keys):
    """Whether each of ``keys`` is in one of the sorted arrays."""
    found = np.zeros(keys.size, dtype=bool)
    for taken in sorted_key_sets:
        if taken.size:
            at = np.minimum(np.searchsorted(taken, keys), taken.size - 1)
            found |= taken[at] == keys
    return found


def disjoint_from(matrix, avoided, rng):
    """``matrix``'s entries, each moved within its row to a column that no matrix of
    ``avoided`` uses in that row, no two to the same place.

    Each round moves every entry still unplaced by a random 1 to ``reach`` columns left or
    right (the other way where that leaves the matrix) and keeps the moves that land in
    range on a free column (the first of equal ones);
    the reach starts at ``FIRST_REACH`` and doubles, so entries stay near where they were
    (banded stays banded, only the rows of a nearly full band go far). An entry unplaced
    after ``ROUNDS`` rounds (a row with no free column in reach) is left out."""
    n_cols = matrix.shape[1]
    coo = matrix.tocoo()
    rows, cols = coo.row.astype(np.int64), coo.col.astype(np.int64)
    taken = [_keys(m) for m in avoided]
    placed = []
    reach = FIRST_REACH
    for _ in range(ROUNDS):
        if not rows.size:
            break
        shift = rng.integers(1, reach + 1, rows.size) * rng.choice((-1, 1), rows.size)
        moved = cols + shift
        # Near the first or last column, a move out of the matrix goes the other way.
        outside = (moved < 0) | (moved >= n_cols)
        moved[outside] = cols[outside] - shift[outside]
        keys = rows * n_cols + moved
        free = np.flatnonzero((moved >= 0) & (moved < n_cols))
        free = free[~_taken(taken, keys[free])]
        new_keys, first = np.unique(keys[free], return_index=True)
        accepted = free[first]
        taken.append(new_keys)
        placed.append(new_keys)
        unplaced = np.ones(rows.size, dtype=bool)
        unplaced[accepted] = False
        rows, cols = rows[unplaced], cols[unplaced]
        reach *= 2
    keys = np.concatenate(placed) if placed else np.zeros(0, dtype=np.int64)
    new_rows, new_cols = np.divmod(keys, n_cols)
    return _csr(new_rows, new_cols, _values(keys.size, rng), matrix.shape)


def transposed(matrix):
    """Aᵀ as canonical CSR with int32 indices (A's values)."""
    result = matrix.T.tocsr()
    result.sum_duplicates()
    return sp.csr_array(
        (result.data, result.indices.astype(np.int32), result.indptr.astype(np.int32)),
        shape=result.shape,
    )


def partners(pattern, matrix, count, rng):
    """``count`` matrices placed relative to ``matrix`` as ``pattern`` says."""
    if pattern == "identical":
        return [with_new_values(matrix, rng) for _ in range(count)]
    if pattern == "half":
        return [half_overlapping(matrix, rng) for _ in range(count)]
    if pattern == "disjoint":
        made = []
        for _ in range(count):
            made.append(disjoint_from(matrix, [matrix, *made], rng))
        return made
    if pattern == "transpose":
        first = transposed(matrix)
        return [first] + [with_new_values(first, rng) for _ in range(count - 1)]
    raise KeyError(pattern)
