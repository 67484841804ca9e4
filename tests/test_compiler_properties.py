"""Property tests for the compiler: random well-formed index expressions (sums and differences
of products of 1-4 accesses over 2-4 index variables, optional literals, optional explicit
reductions, a random subset of the indices as the result), random operand formats, shapes
(zero-size and unit extents included) and densities. ``ct.evaluate`` on both engines must equal
NumPy on the dense arrays (API.md §3: unstored entries are exact zeros; implicit sums bind to
the smallest product term holding every use of the index)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import coiter as ct
from compiler_cases import ENGINES, FORMATS_BY_ORDER, assert_values

VARIABLES = "ijkl"
NAMES = "ABCDEFGH"
LITERALS = ["2", "0.5", "3", "1.5"]
# Result formats drawn for an explicit out_format (None: inferred).
OUT_FORMATS = {0: [None], 1: [None, "dense", "s", "h"],
               2: [None, "dense", "csr", "csc", "dcsr", "dcsc", "coo", "sd", "dh"],
               3: [None, "dense", "csf", "coo", "dsd"], 4: [None, "dense", "csf", "coo"]}


class Term:
    """``sign * literal * [reduce(var, ] A(..) * B(..) ... [)]``; no accesses: a literal."""

    def __init__(self, accesses, literal, sign, reduction=None):
        self.accesses = accesses          # [(name, indices)]
        self.literal = literal            # text or None
        self.sign = sign                  # +1 / -1
        self.reduction = reduction        # (op, var) or None

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
    def __init__(self, extents, terms, result, formats, arrays, out_format):
        self.extents, self.terms, self.result = extents, terms, result
        self.formats, self.arrays, self.out_format = formats, arrays, out_format

    def statement(self):
        rhs = ""
        for n, term in enumerate(self.terms):
            if n == 0:
                rhs = ("-" if term.sign < 0 else "") + (f"({term.text()})" if term.sign < 0
                                                        else term.text())
            else:
                rhs += (" - " if term.sign < 0 else " + ") + term.text()
        lhs = f"R({','.join(self.result)})" if self.result else "R"
        return f"{lhs} = {rhs}"

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
                elsewhere = {v for other in self.terms if other is not term for v in other.variables}
                summed = sorted((term.variables - set(self.result) - {var}) & elsewhere)
                keep = keep + summed + [var]
            if term.accesses:
                spec = ",".join("".join(idx) for _, idx in term.accesses) + "->" + "".join(keep)
                value = np.einsum(spec, *[self.arrays[n] for n, _ in term.accesses])
            else:
                value = np.asarray(1.0)
            if term.reduction:
                value = (np.max if term.reduction[0] == "max" else
                         np.min if term.reduction[0] == "min" else np.sum)(value, axis=-1)
                keep = keep[:-1]
                if summed:
                    value = value.sum(axis=tuple(range(len(keep) - len(summed), len(keep))))
                    keep = keep[:len(keep) - len(summed)]
            if term.literal:
                value = float(term.literal) * value
            value = term.sign * value
            # Broadcast over the result indices the term does not use.
            value = np.expand_dims(value, tuple(m for m, v in enumerate(self.result) if v not in keep)) \
                if len(keep) < len(self.result) else value
            total = total + np.broadcast_to(value, shape)
        return total

    def __repr__(self):
        formats = {n: str(f) for n, f in self.formats.items()}
        shapes = {n: a.shape for n, a in self.arrays.items()}
        return (f"Problem({self.statement()!r}, formats={formats}, shapes={shapes}, "
                f"out_format={self.out_format!r})")


@st.composite
def problems(draw, max_accesses=4, max_extent=5):
    nvars = draw(st.integers(2, 4))
    variables = VARIABLES[:nvars]
    extents = {v: draw(st.sampled_from([0, 1, 2, 3, max_extent]) if draw(st.integers(0, 9)) == 0
                       else st.integers(1, max_extent)) for v in variables}
    n_accesses = draw(st.integers(1, max_accesses))
    n_terms = draw(st.integers(1, n_accesses))
    cuts = sorted(draw(st.lists(st.integers(1, n_accesses - 1), min_size=n_terms - 1,
                                max_size=n_terms - 1, unique=True))) if n_terms > 1 else []
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n_accesses])]
    names = iter(NAMES)
    terms = []
    for size in sizes:
        accesses = []
        for _ in range(size):
            order = draw(st.sampled_from([0, 1, 1, 2, 2, 2, 2, 3, 3]))
            order = min(order, nvars)
            indices = draw(st.permutations(variables))[:order]
            accesses.append((next(names), tuple(indices)))
        literal = draw(st.sampled_from([None, None, None] + LITERALS))
        sign = draw(st.sampled_from([1, 1, -1]))
        terms.append(Term(accesses, literal, sign))
    if draw(st.integers(0, 7)) == 0:  # a literal on its own: C(i,j) = A(i,j) + 2
        terms.append(Term([], draw(st.sampled_from(LITERALS)), draw(st.sampled_from([1, -1]))))
    draw(st.randoms()).shuffle(terms) if draw(st.booleans()) else None

    used = [v for v in variables if any(v in t.variables for t in terms)]
    result = [v for v in draw(st.permutations(used)) if draw(st.booleans())]
    # A summed index must appear in exactly one term, or in every term when no term is a
    # bare literal; otherwise the binding of the implicit sum is a matter of taste.
    access_terms = [t for t in terms if t.accesses]
    bare_literal = len(access_terms) < len(terms)
    for v in used:
        holders = [t for t in terms if v in t.variables]
        if v not in result and not (len(holders) == 1 or (len(holders) == len(access_terms)
                                                            and not bare_literal)):
            result.append(v)
    # Optional explicit reduction over an index local to one term.
    local = [(t, v) for t in access_terms for v in sorted(t.variables)
             if v not in result and sum(v in u.variables for u in terms) == 1]
    if local and draw(st.booleans()):
        term, var = draw(st.sampled_from(local))
        op = draw(st.sampled_from(["sum", "max", "min"]))
        if op != "sum" and extents[var] == 0:
            op = "sum"  # max over nothing has no NumPy answer
        term.reduction = (op, var)

    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    formats, arrays = {}, {}
    for term in access_terms:
        for name, indices in term.accesses:
            shape = tuple(extents[v] for v in indices)
            density = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0]))
            values = rng.integers(-4, 5, shape).astype(np.float64)
            values[values == 0] = 1.0
            arrays[name] = values * (rng.random(shape) < density)
            formats[name] = draw(st.sampled_from(FORMATS_BY_ORDER[len(indices)]))
    out_format = draw(st.sampled_from(OUT_FORMATS[len(result)]))
    return Problem(extents, terms, result, formats, arrays, out_format)


def check(problem):
    statement = problem.statement()
    expected = problem.reference()
    for engine in ENGINES:
        tensors = {n: (ct.asarray(a) if a.ndim == 0 else ct.asarray(a, format=problem.formats[n]))
                   for n, a in problem.arrays.items()}
        result = ct.evaluate(statement, out_format=problem.out_format, engine=engine, **tensors)
        if problem.out_format is not None:
            assert result.format == ct.as_format(problem.out_format, len(problem.result))
        assert_values(result, expected, rtol=1e-12, dtype=np.float64)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(problem=problems())
def test_random_expressions_match_numpy(problem):
    check(problem)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(problem=problems(max_accesses=5, max_extent=8))
def test_random_expressions_match_numpy_many(problem):
    check(problem)


def test_reference_itself():
    """The NumPy reference of the generator agrees with hand-written formulas."""
    rng = np.random.default_rng(0)
    a, x, z = rng.random((3, 4)), rng.random(4), rng.random(3)
    p = Problem({"i": 3, "j": 4}, [Term([("A", ("i", "j")), ("x", ("j",))], "2", 1),
                                   Term([("z", ("i",))], None, -1), Term([], "3", 1)],
                ["i"], {}, {"A": a, "x": x, "z": z}, None)
    assert p.statement() == "R(i) = 2 * A(i,j) * x(j) - z(i) + 3"
    np.testing.assert_allclose(p.reference(), 2 * a @ x - z + 3)
    q = Problem({"i": 3, "j": 4}, [Term([("A", ("i", "j"))], None, -1, ("max", "j"))],
                ["i"], {}, {"A": a}, None)
    assert q.statement() == "R(i) = -(max(j, A(i,j)))"
    np.testing.assert_allclose(q.reference(), -a.max(axis=1))
    r = Problem({"i": 3, "j": 4}, [Term([("A", ("i", "j"))], None, 1),
                                   Term([("x", ("j",))], None, 1)],
                ["j", "i"], {}, {"A": a, "x": x}, None)
    np.testing.assert_allclose(r.reference(), a.T + x[:, None])


# -- random legal schedules (docs/schedules.md): a schedule never changes the result --------------

@st.composite
def schedules(draw, problem):
    loops = sorted({v for t in problem.terms for v in t.variables})
    if not loops:
        return None
    v = draw(st.sampled_from(loops))
    size = draw(st.integers(1, 4))
    races = draw(st.sampled_from(["no_races", "atomics", "temporary", "parallel_reduction"]))
    chunks = draw(st.sampled_from(["dynamic", "static", "dynamic:2", "static:3"]))
    return draw(st.sampled_from([
        f"split({v},{v}0,{v}1,{size})",
        f"divide({v},{v}0,{v}1,{size})",
        f"split({v},{v}0,{v}1,{size});parallelize({v}0,cpu_thread,{races},{chunks})",
        f"parallelize({v},cpu_thread,{races},{chunks})",
        f"split({v},{v}0,{v}1,{size + 1});split({v}1,{v}10,{v}11,2)",
        f"bound({v},{v}b,{problem.extents[v] + size},max_constraint)",
    ]))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), problem=problems(max_accesses=3))
def test_random_legal_schedules_preserve_results(data, problem):
    schedule = data.draw(schedules(problem))
    threads = data.draw(st.sampled_from([1, 2, 3]))
    statement, expected = problem.statement(), problem.reference()
    previous = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        for engine in ENGINES:
            tensors = {n: (ct.asarray(a) if a.ndim == 0 else ct.asarray(a, format=problem.formats[n]))
                       for n, a in problem.arrays.items()}
            try:
                result = ct.evaluate(statement, out_format=problem.out_format, engine=engine,
                                     schedule=schedule, **tensors)
            except ct.ScheduleError:
                assume(False)  # an illegal schedule for this statement: refused, never wrong
            assert_values(result, expected, rtol=1e-12, dtype=np.float64)
    finally:
        ct.set_num_threads(previous)
