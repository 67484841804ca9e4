"""Shared helpers for the compiler test suites (test_compiler_expressions.py,
test_compiler_properties.py): operand formats, random operands, and the checks every
computed result must pass (values against NumPy, dtype, canonical sparse structure)."""

import numpy as np
import scipy.sparse as sp

import coiter as ct

ENGINES = ["c", "llvm"]

# Formats per tensor order. "dh" is CSR with hashed rows ("hashed" of docs/reference.md, "Formats").
VECTOR_FORMATS = ["dense", "s", "h"]
MATRIX_FORMATS = ["dense", "csr", "csc", "dcsr", "dcsc", "coo", "dh"]
TENSOR3_FORMATS = ["dense", "csf", "coo", "dsd", "sds:2,0,1"]
FORMATS_BY_ORDER = {0: [None], 1: VECTOR_FORMATS, 2: MATRIX_FORMATS, 3: TENSOR3_FORMATS}
# Random statements (build_problem) also read matrices in the formats whose levels derive
# coordinates (a diagonal, a slot): operands only, never results.
RANDOM_OPERAND_FORMATS = {**FORMATS_BY_ORDER, 2: MATRIX_FORMATS + ["dia", "ell"]}

# Result formats a kernel can assemble, per order (explicit out_format choices): any mix of
# dense and compressed/hashed levels, singletons below a compressed level. Hashed last levels
# under dense ones (h, dh, ddh) are inserted in one pass, the others (hs) computed compressed
# and packed (docs/compiler.md).
OUT_FORMATS_BY_ORDER = {
    0: [None],
    1: ["dense", "s", "h"],
    2: ["dense", "csr", "csc", "dcsr", "dcsc", "coo", "sd", "sd:1,0", "dh", "dh:1,0", "hs"],
    3: ["dense", "csf", "coo", "dss", "sss:2,0,1", "dsd", "ssd", "sds", "sds:2,0,1", "sdd", "ddh"],
}

# Result formats no kernel assembles (their levels derive coordinates from others): asking
# for one is a FormatError that says to convert with asformat().
UNASSEMBLED_OUT_FORMATS = ["dia", "ell"]


def random_array(
    rng, shape, density=0.4, dtype=np.float64, positive=False, integers=False, empty_slices=True
):
    """A random array with about ``density`` nonzeros. With ``empty_slices`` (and enough
    extent) index 1 of the first mode and index 2 of the last are emptied, so the sparse
    operands have empty rows and columns."""
    shape = tuple(shape)
    dtype = np.dtype(dtype)
    if positive:
        values = 1.0 + rng.random(shape)
        return values.astype(dtype)
    if integers or dtype.kind in "iub":
        values = rng.integers(1, 10, shape) * rng.choice([-1, 1], shape)
        if dtype.kind in "ub":
            values = np.abs(values)
    else:
        values = rng.uniform(-1.0, 1.0, shape)
    mask = rng.random(shape) < density
    out = values * mask
    if dtype.kind == "c":
        out = out + 1j * rng.uniform(-1.0, 1.0, shape) * mask
    if empty_slices and len(shape) >= 2:
        if shape[0] > 2:
            out[1] = 0
        if shape[-1] > 3:
            out[..., 2] = 0
    return out.astype(dtype)


def operand(array, fmt):
    """A coiter tensor holding ``array`` in ``fmt`` (0-d arrays stay dense)."""
    if np.ndim(array) == 0 or fmt is None:
        return ct.asarray(np.asarray(array))
    return ct.asarray(np.asarray(array), format=fmt)


def dense_of(x):
    """A result as a NumPy array: a tensor's dense copy, anything else through np.asarray."""
    return x.to_numpy() if isinstance(x, ct.Tensor) else np.asarray(x)


def assert_values(result, expected, rtol=1e-12, dtype=None):
    """``result`` (a ct.Tensor) equals ``expected`` (NumPy) in shape, dtype and values."""
    assert isinstance(result, ct.Tensor), type(result)
    expected = np.asarray(expected)
    assert tuple(result.shape) == expected.shape, (result.shape, expected.shape)
    want_dtype = expected.dtype if dtype is None else np.dtype(dtype)
    assert result.dtype == want_dtype, (result.dtype, want_dtype)
    got = result.to_numpy()
    assert got.shape == expected.shape
    if want_dtype.kind in "iub":
        np.testing.assert_array_equal(got, expected)
    else:
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
        atol = rtol * max(scale, 1.0)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    assert_canonical(result)


def schedule_preserves_result(problem, schedule, threads, rtol=1e-12):
    """Evaluates ``problem`` with ``schedule`` on ``threads`` threads, on every engine, and
    asserts each result equals NumPy's (as float64). Returns False, having checked nothing,
    when the statement refuses the schedule (``ct.ScheduleError``: refused, never wrong)."""
    expected = problem.reference()
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        for engine in ENGINES:
            try:
                result = ct.evaluate(
                    problem.statement(),
                    out_format=problem.out_format,
                    engine=engine,
                    schedule=schedule,
                    **problem.tensors(),
                )
            except ct.ScheduleError:
                return False
            assert_values(result, expected, rtol=rtol, dtype=np.float64)
    finally:
        ct.set_num_threads(previous)
    return True


def _is_sparse(fmt):
    return any(level.name != "dense" for level in fmt.levels)


def assert_canonical(result):
    """A computed sparse result must be well formed: monotone ``pos`` arrays, coordinates in
    range, no duplicate coordinates, and, for ordered unique formats, coordinates strictly
    increasing in storage (level) order — what SciPy calls the canonical format."""
    fmt = result.format
    if not _is_sparse(fmt):
        assert result.nnz == int(np.prod(result.shape, dtype=np.int64))
        return
    assert len(result.values) >= result.nnz
    for level in result.levels:
        pos = getattr(level, "pos", None)
        if pos is not None and len(pos):
            pos = np.asarray(pos)
            assert pos[0] == 0, f"pos starts at {pos[0]}"
            assert np.all(np.diff(pos) >= 0), f"pos not monotone: {pos}"
    coords, values = result.coords()
    coords = np.asarray(coords)
    assert coords.shape == (result.nnz, result.ndim), (coords.shape, result.nnz)
    for m, extent in enumerate(result.shape):
        if len(coords):
            assert coords[:, m].min() >= 0 and coords[:, m].max() < extent, (
                f"mode {m} coordinate out of range"
            )
    rows = [tuple(int(c) for c in row) for row in coords[:, list(fmt.mode_order)]]
    assert len(set(rows)) == len(rows), f"duplicate coordinates in a {fmt} result: {rows}"
    hashed = any(level.name == "hashed" for level in fmt.levels)
    unordered = any(not level.ordered for level in fmt.levels)
    if not hashed and not unordered:
        assert rows == sorted(rows), f"coordinates of a {fmt} result are not sorted: {rows}"
    if result.ndim == 2 and fmt in (ct.as_format("csr", 2), ct.as_format("csc", 2)):
        s = result.to_scipy()
        cls = sp.csr_array if s.format == "csr" else sp.csc_array
        fresh = cls((np.array(s.data), np.array(s.indices), np.array(s.indptr)), shape=s.shape)
        assert fresh.has_canonical_format, f"{s.format} result is not canonical"
    # Repacking the dense values into the same format gives the same levels, when the
    # result stores no explicit zeros and its layout is deterministic.
    if (
        not hashed
        and result.size
        and np.count_nonzero(values) == len(values)
        and result.size <= 10**6
    ):
        again = ct.asarray(result.to_numpy(), format=fmt)
        for a, b in zip(result.levels, again.levels):
            for name in ("pos", "crd"):
                if getattr(a, name, None) is not None:
                    np.testing.assert_array_equal(
                        np.asarray(getattr(a, name)),
                        np.asarray(getattr(b, name)),
                        err_msg=f"{name} differs from a fresh pack",
                    )


# -- random index expressions -------------------------------------------------------------------
# One generator serves the hypothesis property tests (test_compiler_properties.py) and the
# seeded fuzzer (test_fuzz.py): it makes its choices through a `choices` object, either
# HypothesisChoices (draws, so hypothesis can shrink) or RandomChoices (a NumPy generator, so
# a seed reproduces a case).

VARIABLES = "ijkl"
NAMES = "ABCDEFGH"
LITERALS = ["2", "0.5", "3", "1.5"]
# Result formats drawn for an explicit out_format (None: inferred).
PROBLEM_OUT_FORMATS = {
    0: [None],
    1: [None, "dense", "s", "h"],
    2: [None, "dense", "csr", "csc", "dcsr", "dcsc", "coo", "sd", "dh"],
    3: [None, "dense", "csf", "coo", "dsd"],
    4: [None, "dense", "csf", "coo"],
}


class HypothesisChoices:
    """The choices of the generators below, drawn by hypothesis (``st.composite``'s draw)."""

    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def integer(self, low, high):
        return self.draw(self.st.integers(low, high))

    def pick(self, options):
        return self.draw(self.st.sampled_from(list(options)))

    def permutation(self, items):
        return list(self.draw(self.st.permutations(list(items))))

    def boolean(self):
        return self.draw(self.st.booleans())

    def distinct_sorted(self, low, high, count):
        return sorted(
            self.draw(
                self.st.lists(
                    self.st.integers(low, high), min_size=count, max_size=count, unique=True
                )
            )
        )


class RandomChoices:
    """The same choices from a seeded NumPy generator (``rng``)."""

    def __init__(self, rng):
        self.rng = rng

    def integer(self, low, high):
        return int(self.rng.integers(low, high + 1))

    def pick(self, options):
        options = list(options)
        return options[int(self.rng.integers(len(options)))]

    def permutation(self, items):
        items = list(items)
        return [items[k] for k in self.rng.permutation(len(items))]

    def boolean(self):
        return bool(self.rng.integers(2))

    def distinct_sorted(self, low, high, count):
        return sorted(
            int(v) for v in self.rng.choice(np.arange(low, high + 1), count, replace=False)
        )


class Term:
    """``sign * literal * [reduce(var, ] A(..) * B(..) ... [)]``; no accesses: a literal."""

    def __init__(self, accesses, literal, sign, reduction=None):
        self.accesses = accesses  # [(name, indices)]
        self.literal = literal  # text or None
        self.sign = sign  # +1 / -1
        self.reduction = reduction  # (op, var) or None

    @property
    def variables(self):
        return {v for _, idx in self.accesses for v in idx}

    def text(self):
        product = " * ".join(f"{n}({','.join(idx)})" if idx else n for n, idx in self.accesses)
        if self.reduction:
            op, var = self.reduction
            product = f"{op}({var}, {product})"
        factors = [f for f in (self.literal, product) if f]
        return " * ".join(factors)


class Problem:
    """A statement ``R(result) = terms``, its operands' formats and dense arrays, and the
    result format asked for (None: inferred)."""

    def __init__(self, extents, terms, result, formats, arrays, out_format):
        self.extents, self.terms, self.result = extents, terms, result
        self.formats, self.arrays, self.out_format = formats, arrays, out_format

    def statement(self):
        rhs = ""
        for n, term in enumerate(self.terms):
            if n == 0:
                rhs = ("-" if term.sign < 0 else "") + (
                    f"({term.text()})" if term.sign < 0 else term.text()
                )
            else:
                rhs += (" - " if term.sign < 0 else " + ") + term.text()
        lhs = f"R({','.join(self.result)})" if self.result else "R"
        return f"{lhs} = {rhs}"

    @property
    def accesses(self):
        return [access for term in self.terms for access in term.accesses]

    @property
    def variables(self):
        return sorted({v for t in self.terms for v in t.variables})

    def reference(self):
        shape = tuple(self.extents[v] for v in self.result)
        total = np.zeros(shape)
        for term in self.terms:
            keep = [v for v in self.result if v in term.variables]
            summed = []
            if term.reduction:
                # An implicit sum binds to the smallest term holding all uses of its index:
                # inside the reduction when only this term uses it (max(i, sum_l A(i,l))),
                # around it when other terms use it too (sum_i (... + max(j, C(i,j)))).
                op, var = term.reduction
                elsewhere = {
                    v for other in self.terms if other is not term for v in other.variables
                }
                summed = sorted((term.variables - set(self.result) - {var}) & elsewhere)
                keep = keep + summed + [var]
            if term.accesses:
                spec = ",".join("".join(idx) for _, idx in term.accesses) + "->" + "".join(keep)
                value = np.einsum(spec, *[self.arrays[n] for n, _ in term.accesses])
            else:
                value = np.asarray(1.0)
            if term.reduction:
                value = (
                    np.max
                    if term.reduction[0] == "max"
                    else np.min
                    if term.reduction[0] == "min"
                    else np.sum
                )(value, axis=-1)
                keep = keep[:-1]
                if summed:
                    value = value.sum(axis=tuple(range(len(keep) - len(summed), len(keep))))
                    keep = keep[: len(keep) - len(summed)]
            if term.literal:
                value = float(term.literal) * value
            value = term.sign * value
            # Broadcast over the result indices the term does not use.
            value = (
                np.expand_dims(value, tuple(m for m, v in enumerate(self.result) if v not in keep))
                if len(keep) < len(self.result)
                else value
            )
            total = total + np.broadcast_to(value, shape)
        return total

    def tensors(self):
        """The operands as coiter tensors in their formats."""
        return {
            n: (ct.asarray(a) if a.ndim == 0 else ct.asarray(a, format=self.formats[n]))
            for n, a in self.arrays.items()
        }

    def __repr__(self):
        formats = {n: str(f) for n, f in self.formats.items()}
        shapes = {n: a.shape for n, a in self.arrays.items()}
        return (
            f"Problem({self.statement()!r}, formats={formats}, shapes={shapes}, "
            f"out_format={self.out_format!r})"
        )


def build_problem(choices, max_accesses=4, max_extent=5):
    """A random well-formed statement (sums and differences of products of 1..max_accesses
    accesses over 2-4 index variables, optional literals, optional explicit reductions, a
    random subset of the indices as the result), operand formats, a result format, and data
    (see :func:`draw_data`)."""
    nvars = choices.integer(2, 4)
    variables = VARIABLES[:nvars]
    n_accesses = choices.integer(1, max_accesses)
    n_terms = choices.integer(1, n_accesses)
    cuts = choices.distinct_sorted(1, n_accesses - 1, n_terms - 1) if n_terms > 1 else []
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n_accesses])]
    names = iter(NAMES)
    terms = []
    for size in sizes:
        accesses = []
        for _ in range(size):
            order = min(choices.pick([0, 1, 1, 2, 2, 2, 2, 3, 3]), nvars)
            indices = choices.permutation(variables)[:order]
            accesses.append((next(names), tuple(indices)))
        literal = choices.pick([None, None, None] + LITERALS)
        sign = choices.pick([1, 1, -1])
        terms.append(Term(accesses, literal, sign))
    if choices.integer(0, 7) == 0:  # a literal on its own: C(i,j) = A(i,j) + 2
        terms.append(Term([], choices.pick(LITERALS), choices.pick([1, -1])))
    if choices.boolean():
        terms = choices.permutation(terms)

    used = [v for v in variables if any(v in t.variables for t in terms)]
    result = [v for v in choices.permutation(used) if choices.boolean()]
    # A summed index must appear in exactly one term, or in every term when no term is a
    # bare literal; otherwise the binding of the implicit sum is a matter of taste.
    access_terms = [t for t in terms if t.accesses]
    bare_literal = len(access_terms) < len(terms)
    for v in used:
        holders = [t for t in terms if v in t.variables]
        if v not in result and not (
            len(holders) == 1 or (len(holders) == len(access_terms) and not bare_literal)
        ):
            result.append(v)
    # Optional explicit reduction over an index local to one term (max and min need a
    # nonempty range: draw_data keeps their extent >= 1).
    local = [
        (t, v)
        for t in access_terms
        for v in sorted(t.variables)
        if v not in result and sum(v in u.variables for u in terms) == 1
    ]
    if local and choices.boolean():
        term, var = choices.pick(local)
        term.reduction = (choices.pick(["sum", "max", "min"]), var)

    formats = {
        name: choices.pick(RANDOM_OPERAND_FORMATS[len(indices)])
        for term in access_terms
        for name, indices in term.accesses
    }
    problem = Problem(
        {}, terms, result, formats, {}, choices.pick(PROBLEM_OUT_FORMATS[len(result)])
    )
    draw_data(choices, problem, max_extent)
    return problem


def draw_data(choices, problem, max_extent=5):
    """New extents (zero-size and unit extents included, but >= 1 for a max/min reduction)
    and new operand arrays (integer values, densities 0 to 1) for ``problem``, in place."""
    reduced = {t.reduction[1] for t in problem.terms if t.reduction and t.reduction[0] != "sum"}
    extents = {}
    for v in VARIABLES:
        if choices.integer(0, 9) == 0:
            extent = choices.pick([0, 1, 2, 3, max_extent])
        else:
            extent = choices.integer(1, max_extent)
        extents[v] = max(extent, 1) if v in reduced else extent
    rng = np.random.default_rng(choices.integer(0, 2**32 - 1))
    arrays = {}
    for name, indices in problem.accesses:
        shape = tuple(extents[v] for v in indices)
        density = choices.pick([0.0, 0.2, 0.5, 1.0])
        values = rng.integers(-4, 5, shape).astype(np.float64)
        values[values == 0] = 1.0
        arrays[name] = values * (rng.random(shape) < density)
    problem.extents, problem.arrays = extents, arrays


def build_schedule(choices, problem, bound_slack=None):
    """A random legal-looking schedule of one or two commands on one loop of ``problem``
    (docs/schedules.md); ``bound`` promises the loop's extent plus ``bound_slack`` (default:
    the extent of this problem's data, plus the split size)."""
    loops = problem.variables
    if not loops:
        return None
    v = choices.pick(loops)
    size = choices.integer(1, 4)
    races = choices.pick(["no_races", "atomics", "temporary", "parallel_reduction"])
    chunks = choices.pick(["dynamic", "static", "dynamic:2", "static:3"])
    bound = problem.extents[v] + size if bound_slack is None else bound_slack + size
    return choices.pick(
        [
            f"split({v},{v}0,{v}1,{size})",
            f"divide({v},{v}0,{v}1,{size})",
            f"split({v},{v}0,{v}1,{size});parallelize({v}0,cpu_thread,{races},{chunks})",
            f"parallelize({v},cpu_thread,{races},{chunks})",
            f"split({v},{v}0,{v}1,{size + 1});split({v}1,{v}10,{v}11,2)",
            f"bound({v},{v}b,{bound},max_constraint)",
        ]
    )
