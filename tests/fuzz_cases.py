"""Seeded differential fuzzing of coiter (run by test_fuzz.py; issue 22).

Every case is a pure function of its category and number: ``case_rng(category, number)``
seeds everything it draws, so a failure reproduces with

    cd tests && python fuzz_cases.py <category> <number> [<kernel pool size>]

Categories:

kernel    a statement from a bounded pool of random statements (compiler_cases.build_problem)
          with its operand and result formats and a schedule (none, a legal one, or one that
          may break a precondition), on fresh random data (zero-size and unit extents
          included), both engines, 1-3 threads, against NumPy. Only the data changes between
          cases of one pool entry, so kernels come from the cache after their first use. A
          sparse result is passed back as out= to the chosen kernel, whose compute-only
          variant must fill it with the same values. Each block of POOL_SPAN case numbers
          draws its own pool, so a run over new numbers also meets new statements.
corrupt   a wrapped tensor whose pos/crd arrays are changed after coiter checked them, or a
          SciPy matrix whose arrays lie, used by a kernel, a conversion or an element read.
expr      random text, mutated statements and deep nesting into ct.evaluate.
schedule  random schedule text into ct.Schedule.parse and ct.compile, and random arguments
          to the ct.Schedule builder; compiled kernels must compute the right result.
file      damaged Matrix Market, FROSTT and .npz files (plain and gzip) into ct.read.

A case passes with a correct result or a typed coiter error (docs/reference.md, "Errors"); any other
exception fails it, and so does a crash or a hang: the cases run in child processes (see
``run_batch``), which print each case's number before running it.
"""

import copy
import faulthandler
import gzip
import io
import json
import math
import os
import sys
import tempfile
import zipfile

import numpy as np
import scipy.sparse as sp

import coiter as ct
from coiter.evaluate import choose_kernel, operands_to_run
from coiter.parser import parse
from compiler_cases import (
    ENGINES,
    RandomChoices,
    assert_values,
    build_problem,
    build_schedule,
    draw_data,
)

CATEGORIES = ("kernel", "corrupt", "expr", "schedule", "file")
# Share of each category in a run of N cases (test_fuzz.py).
SHARES = {"kernel": 0.35, "corrupt": 0.15, "expr": 0.2, "schedule": 0.1, "file": 0.2}
KERNEL_POOL = 96  # statements of the kernel category (slow run)
SMOKE_KERNEL_POOL = 6  # ... of the smoke run, which must stay fast
POOL_SPAN = 100_000  # case numbers that share one pool of statements (kernel_structure)
MAX_EXTENT = 6
# The largest read tensor a file case copies to a dense array to compare (file_case).
MAX_DENSE_ELEMENTS = 10**7
CASE_SECONDS = 300  # a case running longer is a hang (compiles under ASan are slow)


def case_rng(category, number):
    return np.random.default_rng([CATEGORIES.index(category), number, 22])


class Refused(Exception):
    """Marks the expected outcome 'a typed coiter error' in the case functions."""


# -- kernels ------------------------------------------------------------------------------------


def fuzz_schedule(choices, problem):
    """Commands beyond build_schedule's, some of which break a precondition (reorder into an
    order a format cannot iterate, pos over a dense level, precompute of a non-subexpression):
    those must raise ScheduleError, never compile into a wrong kernel."""
    loops = problem.variables
    v = choices.pick(loops)
    size = choices.integer(1, 4)
    access = choices.pick(
        [f"{n}({','.join(idx)})" for n, idx in problem.accesses if idx] or ["Q(i)"]
    )
    term = choices.pick([t.text() for t in problem.terms if t.accesses])
    other = choices.pick(loops)
    return choices.pick(
        [
            f"reorder({','.join(choices.permutation(loops))})",
            f"split({v},{v}0,{v}1,{size});unroll({v}1,{size})",
            f"split({v},{v}0,{v}1,4);parallelize({v}1,cpu_vector,no_races)",
            f"pos({v},{v}p,{access})",
            f"pos({v},{v}p,{access});split({v}p,{v}p0,{v}p1,{size})",
            f"fuse({v},{other},f)",
            f"fuse({v},{other},f);pos(f,fp,{access});split(fp,fp0,fp1,{size + 2})",
            f"precompute({term},[{v}],[{v}w])",
            f"precompute({term},[{v}],[{v}w],hashed)",
            f"precompute({term},[{v}],[{v}w],compressed)",
            f"reorder({','.join(choices.permutation(loops))});precompute({term},{v},{v})",
            "assemble(R,append)",
            "assemble(R,insert)",
            f"bound({v},{v}b,{MAX_EXTENT},max_exact)",
        ]
    )


_POOL = {}


def kernel_structure(index, block=0):
    """Entry ``index`` of the pool of case numbers ``block * POOL_SPAN`` and up: (problem
    without data, schedule text or None). Block 0's pool is the one of the past findings."""
    if (block, index) not in _POOL:
        rng = np.random.default_rng([99, index] if block == 0 else [99, block, index])
        choices = RandomChoices(rng)
        problem = build_problem(choices, max_accesses=4, max_extent=MAX_EXTENT)
        kind = choices.pick(["none", "none", "legal", "any"])
        schedule = (
            None
            if kind == "none" or not problem.variables
            else build_schedule(choices, problem, bound_slack=MAX_EXTENT)
            if kind == "legal"
            else fuzz_schedule(choices, problem)
        )
        _POOL[block, index] = (problem, schedule)
    return _POOL[block, index]


def kernel_case(number, pool=KERNEL_POOL):
    rng = case_rng("kernel", number)
    choices = RandomChoices(rng)
    structure, schedule = kernel_structure(choices.integer(0, pool - 1), number // POOL_SPAN)
    problem = copy.copy(structure)
    draw_data(choices, problem, MAX_EXTENT)
    threads = choices.pick([1, 1, 2, 3])
    statement, expected = problem.statement(), problem.reference()
    context = f"{problem!r} schedule={schedule!r} threads={threads}"
    ct.set_num_threads(threads)
    outcomes = []
    for engine in ENGINES:
        try:
            result = ct.evaluate(
                statement,
                out_format=problem.out_format,
                engine=engine,
                schedule=schedule,
                **problem.tensors(),
            )
        except ct.ScheduleError as error:
            # Only a schedule may be refused, and by both engines alike: preconditions do not
            # depend on the engine.
            assert schedule is not None, f"{context}: {engine}: {error!r}"
            outcomes.append("refused")
            continue
        except ct.ShapeError as error:
            # bound(..., max_exact) promises an exact extent, which these data may break:
            # refused at the call (docs/reference.md, "Schedules"), by both engines alike.
            assert schedule is not None and "max_exact" in schedule, f"{context}: {error!r}"
            outcomes.append("refused")
            continue
        except ct.FormatError as error:
            # A result format the compiler cannot assemble in this loop order.
            assert problem.out_format is not None or schedule is not None, f"{context}: {error!r}"
            outcomes.append("refused")
            continue
        try:
            assert_values(result, expected, rtol=1e-12, dtype=np.float64)
            recompute_into(result, statement, problem, schedule, engine, expected)
        except AssertionError as error:
            raise AssertionError(f"{context}: engine {engine}: {error}") from None
        outcomes.append("computed")
    assert outcomes[0] == outcomes[1], f"{context}: engines disagree: {outcomes}"
    return outcomes[0]


def recompute_into(result, statement, problem, schedule, engine, expected):
    """A sparse result passed back as ``out=`` to the kernel ``ct.evaluate`` chose for it: the
    call's compute-only variant fills the assembled structure's values again, and they must be
    the same. (Skipped where evaluate runs a pipeline of kernels; a structure that cannot be
    reused is refused with a FormatError.)"""
    if all(level.type.name == "dense" for level in result.levels):
        return
    assignment, refs = parse(statement)
    operands = problem.tensors()
    kernel, _, _, inputs, conversions = choose_kernel(
        assignment, refs, operands, problem.out_format, None, engine, schedule
    )
    if not isinstance(kernel, ct.Kernel):
        return
    try:
        again = kernel(out=result, **operands_to_run(operands, inputs, conversions))
    except ct.FormatError:
        return
    assert again is result
    assert_values(again, expected, rtol=1e-12, dtype=np.float64)


# -- corrupted operands -------------------------------------------------------------------------


def _canonical_csr(pos, crd, values, shape):
    """A SciPy CSR of the arrays when they form a valid canonical CSR matrix, else None."""
    pos, crd = np.asarray(pos), np.asarray(crd)
    if len(pos) != shape[0] + 1 or pos[0] != 0 or np.any(np.diff(pos) < 0) or pos[-1] > len(crd):
        return None
    if pos[-1] and (crd[: pos[-1]].min() < 0 or crd[: pos[-1]].max() >= shape[1]):
        return None
    for r in range(shape[0]):
        if np.any(np.diff(crd[pos[r] : pos[r + 1]]) <= 0):
            return None
    n = int(pos[-1])
    return sp.csr_array((np.array(values[:n]), np.array(crd[:n]), np.array(pos)), shape=shape)


def corrupt_case(number):
    rng = case_rng("corrupt", number)
    c = RandomChoices(rng)
    shape = (c.integer(1, 12), c.integer(1, 12))
    M0 = sp.random_array(
        shape, density=c.pick([0.1, 0.3, 0.7]), format="csr", random_state=int(rng.integers(2**31))
    )
    x = rng.random(shape[1])
    engine = c.pick(ENGINES)
    lie = c.boolean()
    if lie:  # a SciPy matrix whose arrays change after SciPy built it
        M = M0.copy()
        assert M.has_canonical_format  # computed once and kept, as after any use
        fmt, T = "csr", M
        arrays = {"pos": M.indptr, "crd": M.indices}
    else:  # a tensor whose arrays change after coiter checked them
        fmt = c.pick(["csr", "csc", "dcsr", "coo", "dh", "dcsc"])
        T = ct.asarray(M0.copy(), format=fmt, name="A")
        ct.evaluate("y(i) = A(i,j) * x(j)", A=T, x=x, engine=engine).to_numpy()
        levels = [lv for lv in T.levels]
        choice = c.integer(0, len(levels) - 1)
        level = levels[choice]
        arrays = {
            name: getattr(level, name)
            for name in ("pos", "crd")
            if getattr(level, name, None) is not None
        }
        if not arrays:
            level = levels[-1]
            arrays = {
                name: getattr(level, name)
                for name in ("pos", "crd")
                if getattr(level, name, None) is not None
            }
    name = c.pick(sorted(arrays))
    array = arrays[name]
    extent = max(shape)
    if len(array):
        at = c.integer(0, len(array) - 1)
        old = int(array[at])
        mutation = c.pick(
            ["value", "value", "swap", "shrink"] if lie else ["value", "value", "swap"]
        )
        if mutation == "swap" and len(array) > 1:
            other = c.integer(0, len(array) - 1)
            array[at], array[other] = array[other], array[at]
        elif mutation == "shrink" and lie and name == "crd":
            M.indices = M.indices[: c.integer(0, len(M.indices))]
        else:
            info = np.iinfo(array.dtype)
            array[at] = c.pick(
                [
                    -1,
                    -2,
                    info.min,
                    info.max,
                    extent,
                    extent - 1,
                    0,
                    len(array),
                    10**9 if info.max > 10**9 else info.max,
                    old + 1,
                    old - 1,
                    c.integer(0, extent),
                ]
            )
    use = c.pick(
        [
            "spmv",
            "spmv",
            "add",
            "multiply",
            "spgemm",
            "einsum",
            "kernel",
            "to_numpy",
            "asformat",
            "coords",
            "element",
        ]
    )
    context = (
        f"corrupt {number}: {'lying scipy' if lie else fmt} {name} changed, use {use}, "
        f"engine {engine}"
    )
    try:
        if use == "spmv":
            got = ct.evaluate("y(i) = A(i,j) * x(j)", A=T, x=x, engine=engine).to_numpy()
        elif use == "add":
            got = ct.evaluate("C(i,j) = A(i,j) + B(i,j)", A=T, B=M0, engine=engine).to_numpy()
        elif use == "multiply":
            got = ct.evaluate("C(i,j) = A(i,j) * B(i,j)", A=T, B=M0, engine=engine).to_numpy()
        elif use == "spgemm":
            got = ct.evaluate(
                "C(i,k) = A(i,j) * B(j,k)", A=T, B=M0.T.tocsr(), engine=engine
            ).to_numpy()
        elif use == "einsum":
            got = ct.einsum("ij,j->i", T, x).to_numpy()
        elif use == "kernel":
            kern = ct.compile(
                "y(i) = A(i,j) * x(j)", formats={"A": fmt, "x": "d", "y": "d"}, engine=engine
            )
            got = kern(A=T, x=x).to_numpy()
        elif use == "to_numpy":
            got = (ct.asarray(T) if lie else T).to_numpy()
        elif use == "asformat":
            got = (ct.asarray(T) if lie else T).asformat("csc").to_numpy()
        elif use == "coords":
            coords, values = (ct.asarray(T) if lie else T).coords()
            got = np.zeros(shape)
            np.add.at(got, (coords[:, 0], coords[:, 1]), values)
        else:
            r, col = c.integer(0, shape[0] - 1), c.integer(0, shape[1] - 1)
            got = (ct.asarray(T) if lie else T)[r, col]
    except ct.CoiterError:
        return "refused"
    # Computed: it must be right when the arrays still form a valid canonical matrix (a
    # change that keeps them so is a new matrix, not a corruption). Otherwise the docs
    # (docs/tensors.md) promise bounds, not sortedness, for arrays changed after the check:
    # any result is allowed, only no crash.
    if lie:
        valid = _canonical_csr(M.indptr, M.indices, M.data, shape)
    elif fmt == "csr":
        valid = _canonical_csr(T.levels[1].pos, T.levels[1].crd, T.values, shape)
    elif fmt == "csc":
        t = _canonical_csr(T.levels[1].pos, T.levels[1].crd, T.values, shape[::-1])
        valid = None if t is None else t.T
    else:
        valid = None
    if valid is None:
        return "computed (invalid arrays)"
    dense = valid.toarray()
    want = {
        "spmv": lambda: dense @ x,
        "add": lambda: dense + M0.toarray(),
        "multiply": lambda: dense * M0.toarray(),
        "spgemm": lambda: dense @ M0.T.toarray(),
        "einsum": lambda: dense @ x,
        "kernel": lambda: dense @ x,
    }.get(use, lambda: dense)()
    if use == "element":
        want = dense[r, col]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12, err_msg=context)
    return "computed"


# -- expression strings -------------------------------------------------------------------------

_BOUND = None


def _bound_tensors():
    """Operands the fuzzed statements may name (others are missing: a TypeError)."""
    global _BOUND
    if _BOUND is None:
        rng = np.random.default_rng(7)
        A = sp.random_array((4, 4), density=0.5, format="csr", random_state=1)
        _BOUND = {
            "A": A,
            "B": rng.random((4, 4)),
            "C": ct.asarray(A, format="dcsr"),
            "x": rng.random(4),
            "y": ct.asarray(rng.random(4) * (rng.random(4) < 0.5), format="s"),
            "s": np.float64(2.5),
            "T": ct.asarray(rng.random((4, 4, 4)), format="csf"),
        }
    return _BOUND


_TOKENS = [
    "A",
    "B",
    "C",
    "x",
    "y",
    "s",
    "T",
    "R",
    "z",
    "sum",
    "max",
    "min",
    "i",
    "j",
    "k",
    "l",
    "(",
    ")",
    ",",
    "=",
    "+=",
    "+",
    "-",
    "*",
    "/",
    " ",
    "  ",
    "2",
    "0.5",
    "1e308",
    "1e999",
    "9" * 25,
    "1j",
    ".5",
    "3.",
    "1e",
    "0x1f",
    "_",
    "A(i,j)",
    "x(j)",
    "(i)",
    "(i,j)",
    "()",
    "\t",
    "\n",
    "٣",
    "\u00e9",
    "\u200b",
    "\ud800",
    "\udcff",
    "\x00",
    "\U0001f600",
    "$",
    "#",
    "[",
    "]",
    ";",
    ":",
    "'",
    '"',
    "\\",
    "ß",
    "ﬁ",
    "Ａ",
]
_VALID = [
    "R(i) = A(i,j) * x(j)",
    "R(i,j) = A(i,j) + B(i,j)",
    "R = sum(i, x(i) * x(i))",
    "R(i) = max(j, A(i,j))",
    "R(i,j) = A(i,k) * C(k,j)",
    "R(i) = 2 * y(i) - x(i) / 3",
    "R(i,j) = T(i,j,k) * x(k)",
    "R(i) = -(A(i,j) * x(j)) + s",
    "R(i) = min(j, B(i,j) * A(i,j))",
    "R(i,j) = A(i,j) * B(i,j) * 0.5",
]


def random_statement(c):
    kind = c.pick(["tokens", "tokens", "mutated", "mutated", "nested", "bytes"])
    if kind == "tokens":
        return "".join(c.pick(_TOKENS) for _ in range(c.integer(0, 30)))
    if kind == "mutated":
        text = list(c.pick(_VALID))
        for _ in range(c.integer(1, 4)):
            at = c.integer(0, len(text))
            op = c.pick(["delete", "insert", "replace", "duplicate"])
            if op == "delete" and text:
                del text[min(at, len(text) - 1)]
            elif op == "insert":
                text[at:at] = list(c.pick(_TOKENS))
            elif op == "replace" and text:
                text[min(at, len(text) - 1)] = c.pick(_TOKENS)
            else:
                end = c.integer(at, len(text))
                text[at:at] = text[at:end]
        return "".join(text)
    if kind == "nested":
        n = c.pick([10, 100, 1000, 5000, 20000, 100000])
        shape = c.pick(["parens", "negate", "sum", "chain", "product", "plus"])
        if shape == "parens":
            return "R(i) = " + "(" * n + "x(i)" + ")" * n
        if shape == "negate":
            return "R(i) = " + "-" * n + "x(i)"
        if shape == "plus":
            return "R(i) = " + "+" * n + "x(i)"
        if shape == "sum":
            return "R = " + "sum(i," * n + "x(i)" + ")" * n
        if shape == "chain":
            return "R(i) = " + " + ".join(["x(i)"] * n)
        return "R(i) = " + " * ".join(["x(i)"] * n)
    # random bytes, decoded as a user reading a file with errors="surrogateescape" would
    return bytes(int(b) for b in c.rng.integers(0, 256, c.integer(0, 40))).decode(
        "utf-8", errors="surrogateescape"
    )


def expr_case(number):
    c = RandomChoices(case_rng("expr", number))
    text = random_statement(c)
    try:
        result = ct.evaluate(text, engine=c.pick(ENGINES), **_bound_tensors())
    except ct.CoiterError:
        return "refused"
    except TypeError as error:
        # A statement naming a tensor that was not passed: like calling a function without
        # an argument it needs (docs/reference.md, "Tensors", documents the TypeError).
        if str(error).startswith("ct.evaluate: no tensor given for"):
            return "missing tensor"
        raise
    assert isinstance(result, ct.Tensor)
    result.to_numpy()
    return "computed"


# -- schedules ----------------------------------------------------------------------------------

_SCHEDULE_KERNELS = {
    "y(i) = A(i,j) * x(j)": {"A": "csr"},
    "C(i,j) = A(i,k) * B(k,j)": {"A": "csr", "B": "csr", "C": "csr"},
    "C(i,k) = A(i,j) * D(j,k)": {"A": "dcsr", "D": "dense", "C": "dense"},
    "C(i,j) = A(i,j) * D(i,k) * E(k,j)": {"A": "csr", "D": "dense", "E": "dense", "C": "csr"},
    "y(i) = A(i,j) * x(j) + z(i)": {"A": "coo"},
}
_COMMANDS = [
    "split",
    "divide",
    "pos",
    "fuse",
    "precompute",
    "bound",
    "unroll",
    "parallelize",
    "reorder",
    "assemble",
    "splat",
    "",
]
_ARGS = [
    "i",
    "j",
    "k",
    "i0",
    "i1",
    "j0",
    "j1",
    "f",
    "fp",
    "jp",
    "iw",
    "jw",
    "q",
    "0",
    "1",
    "2",
    "3",
    "7",
    "-1",
    "4294967297",
    "99999999999999999999999",
    "A(i,j)",
    "B(k,j)",
    "x(j)",
    "A(i,j)*x(j)",
    "[j]",
    "[jw]",
    "[i,j]",
    "[]",
    "cpu_thread",
    "cpu_vector",
    "gpu_thread",
    "no_races",
    "atomics",
    "temporary",
    "parallel_reduction",
    "ignore_races",
    "static",
    "dynamic:2",
    "dynamic:0",
    "static:-1",
    "max_exact",
    "max_constraint",
    "hashed",
    "compressed",
    "dense",
    "C",
    "append",
    "insert",
    "",
    " ",
    "(",
    ")",
    ",",
    ";",
    "\u00e9",
    "\x00",
    "\ud800",
]


def random_schedule_text(c):
    if c.integer(0, 4) == 0:
        return "".join(
            c.pick(_ARGS + ["(", ")", ";", ",", "[", "]", "\n"]) for _ in range(c.integer(0, 20))
        )
    if c.integer(0, 6) == 0:
        n = c.pick([100, 2000, 50000])
        return c.pick(
            [
                "split(" + "[" * n + "i" + "]" * n + ",i0,i1,2)",
                "split(i,i0,i1,2);" * n,
                "(" * n,
                "reorder(" + ",".join(["i"] * n) + ")",
            ]
        )
    commands = []
    for _ in range(c.integer(1, 3)):
        args = ",".join(c.pick(_ARGS) for _ in range(c.integer(0, 5)))
        commands.append(f"{c.pick(_COMMANDS)}({args})")
    return c.pick([";", "; ", "\n"]).join(commands)


def schedule_case(number):
    c = RandomChoices(case_rng("schedule", number))
    # the builder: bad argument types are TypeErrors (docs/reference.md, "Schedules")
    if c.integer(0, 4) == 0:
        method = c.pick(
            [
                "split",
                "divide",
                "pos",
                "fuse",
                "precompute",
                "bound",
                "unroll",
                "parallelize",
                "reorder",
                "assemble",
            ]
        )
        values = [
            "i",
            "i0",
            3,
            -1,
            2.5,
            None,
            True,
            "",
            " ",
            ct.IndexVar("j"),
            ["j"],
            10**30,
            "A(i,j)",
            b"i",
        ]
        args = [c.pick(values) for _ in range(c.integer(0, 5))]
        try:
            getattr(ct.Schedule(), method)(*args)
        except (TypeError, ct.ScheduleError):
            return "refused"
        return "built"
    text = random_schedule_text(c)
    try:
        schedule = ct.Schedule.parse(text)
    except ct.ScheduleError:
        return "refused"
    statement = c.pick(sorted(_SCHEDULE_KERNELS))
    formats = _SCHEDULE_KERNELS[statement]
    engine = c.pick(ENGINES)
    try:
        kernel = ct.compile(statement, formats=formats, schedule=schedule, engine=engine)
    except (ct.ScheduleError, ct.FormatError):
        return "refused"
    # It compiled: it must compute the statement.
    rng = c.rng
    n = 7
    dense = {name: rng.random((n, n)) * (rng.random((n, n)) < 0.4) for name in "ABDE"}
    vectors = {name: rng.random(n) for name in "xz"}
    operands = {
        name: ct.asarray(dense[name], format=formats.get(name, "dense"))
        for name in "ABDE"
        if f"{name}(" in statement
    }
    operands.update({name: vectors[name] for name in "xz" if f"{name}(" in statement})
    try:
        result = kernel(**operands).to_numpy()
    except ct.ShapeError:
        return "refused"  # a bound() promise that these operands break, checked at the call
    A, B, D, E, x, z = (dense["A"], dense["B"], dense["D"], dense["E"], vectors["x"], vectors["z"])
    expected = {
        "y(i) = A(i,j) * x(j)": lambda: A @ x,
        "C(i,j) = A(i,k) * B(k,j)": lambda: A @ B,
        "C(i,k) = A(i,j) * D(j,k)": lambda: A @ D,
        "C(i,j) = A(i,j) * D(i,k) * E(k,j)": lambda: A * (D @ E),
        "y(i) = A(i,j) * x(j) + z(i)": lambda: A @ x + z,
    }[statement]()
    np.testing.assert_allclose(
        result,
        expected,
        rtol=1e-12,
        atol=1e-12,
        err_msg=f"schedule {text!r} on {statement}, engine {engine}",
    )
    return "computed"


# -- files --------------------------------------------------------------------------------------


def _valid_file(c, directory):
    """(path, bytes, original tensor) of a valid file of a random kind."""
    rng = c.rng
    kind = c.pick(
        ["mtx", "mtx-sym", "mtx-array", "mtx-pattern", "mtx-complex", "mtx-int", "tns", "npz"]
    )
    gz = kind != "npz" and c.boolean()
    shape = (c.integer(1, 6), c.integer(1, 6))
    dense = rng.integers(-3, 4, shape) * (rng.random(shape) < 0.5)
    if kind == "mtx-sym":
        n = shape[0]
        dense = rng.integers(-3, 4, (n, n)) * (rng.random((n, n)) < 0.5)
        dense = dense + dense.T
    if kind == "tns":
        shape3 = shape + (c.integer(1, 4),)
        dense = rng.integers(-3, 4, shape3) * (rng.random(shape3) < 0.5)
        dense[tuple(s - 1 for s in shape3)] = 1  # FROSTT extents are the largest coordinates
    path = os.path.join(directory, "case." + kind.split("-")[0] + (".gz" if gz else ""))
    if kind == "mtx-pattern":
        rows, cols = np.nonzero(dense)
        text = (
            f"%%MatrixMarket matrix coordinate pattern general\n% a comment\n{shape[0]} {shape[1]} "
            f"{len(rows)}\n" + "".join(f"{r + 1} {k + 1}\n" for r, k in zip(rows, cols))
        )
        data = text.encode()
        original = (dense != 0).astype(np.float64)
        if gz:
            data = gzip.compress(data)
    else:
        if kind == "mtx-complex":
            tensor = ct.asarray((dense + 1j * dense).astype(np.complex128), format="coo")
        elif kind == "mtx-int":
            tensor = ct.asarray(dense.astype(np.int64), format="csr")
        elif kind == "mtx-array":
            tensor = ct.asarray(dense.astype(np.float64))
        elif kind == "npz":
            tensor = ct.asarray(
                dense.astype(np.float64),
                format=c.pick(["csr", "csc", "coo", "dcsr", "dense", "dh"]),
            )
        else:
            tensor = ct.asarray(dense.astype(np.float64), format="coo")
        ct.write(path, tensor, **({"symmetry": "symmetric"} if kind == "mtx-sym" else {}))
        with open(path, "rb") as f:
            data = f.read()
        original = tensor.to_numpy()
    return path, data, original


def _mutate_bytes(c, data):
    data = bytearray(data)
    for _ in range(c.integer(1, 4)):
        op = c.pick(["flip", "byte", "truncate", "insert", "delete", "dup", "text"])
        at = c.integer(0, max(len(data) - 1, 0))
        if op == "flip" and data:
            data[at] ^= 1 << c.integer(0, 7)
        elif op == "byte" and data:
            data[at] = c.integer(0, 255)
        elif op == "truncate":
            del data[at:]
        elif op == "insert":
            data[at:at] = bytes(int(b) for b in c.rng.integers(0, 256, c.integer(1, 8)))
        elif op == "delete":
            del data[at : at + c.integer(1, 16)]
        elif op == "dup":
            end = min(len(data), at + c.integer(1, 64))
            data[at:at] = data[at:end]
        else:
            data[at:at] = c.pick(
                [
                    b"\n",
                    b" ",
                    b"-1",
                    b"0",
                    b"99999999999999999999",
                    b"1e999",
                    b"nan",
                    b"%",
                    b"#",
                    b"\xff\xfe",
                    b"\x00",
                    b" 1 1 1\n",
                    b"\r\n",
                    "\u00e9".encode(),
                    b"inf",
                    b"2**63",
                    b"9223372036854775808",
                ]
            )
    return bytes(data)


def _mutate_npz(c, path, data):
    """A damaged .npz: raw bytes, or one member replaced by a hostile array or header."""
    if c.integer(0, 2):
        return _mutate_bytes(c, data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    victim = c.pick(sorted(members))
    hostile = c.pick(
        [
            "object",
            "huge",
            "wrongtype",
            "scalar",
            "drop",
            "garbage",
            "negative",
            "fortran",
            "big-endian",
            "extra",
        ]
    )
    if hostile == "drop":
        del members[victim]
    elif hostile == "garbage":
        members[victim] = _mutate_bytes(c, members[victim])
    elif hostile == "huge":  # a header declaring far more data than the member holds
        header = {
            "descr": "<i8",
            "fortran_order": False,
            "shape": (c.pick([2**20, 2**31, 2**40, 2**62]),),
        }
        members[victim] = _npy_with_header(header, b"\0" * 64)
    elif hostile == "extra":
        members["level9.array.crd.npy"] = _npy(np.arange(3))
    else:
        array = np.load(io.BytesIO(members[victim]), allow_pickle=False)
        array = {
            "object": lambda a: np.array([1, "x", None], dtype=object),
            "wrongtype": lambda a: (
                np.asarray(a).astype(np.float32)
                if np.asarray(a).dtype.kind != "U"
                else np.arange(2)
            ),
            "scalar": lambda a: np.array(3),
            "negative": lambda a: (
                -np.abs(np.asarray(a, dtype=np.int64)) - 1
                if np.asarray(a).dtype.kind in "iu"
                else np.array("x")
            ),
            "fortran": lambda a: np.asfortranarray(np.atleast_2d(a)),
            "big-endian": lambda a: (
                a.astype(a.dtype.newbyteorder(">")) if a.dtype.kind in "iuf" else a
            ),
        }[hostile](array)
        members[victim] = _npy(array)
    buffer = io.BytesIO()
    with zipfile.ZipFile(
        buffer, "w", c.pick([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
    ) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _npy(array):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _npy_with_header(header, payload):
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue() + payload


_DIRECTORY = None


def file_case(number):
    global _DIRECTORY
    if _DIRECTORY is None:
        _DIRECTORY = tempfile.mkdtemp(prefix="coiter-fuzz-")
    c = RandomChoices(case_rng("file", number))
    path, data, original = _valid_file(c, _DIRECTORY)
    mutate = c.integer(0, 9) != 0
    if mutate:
        if path.endswith(".gz") and c.boolean():  # damage the text, or the gzip stream itself
            data = gzip.compress(_mutate_bytes(c, gzip.decompress(data)))
        elif path.endswith(".npz"):
            data = _mutate_npz(c, path, data)
        else:
            data = _mutate_bytes(c, data)
    with open(path, "wb") as f:
        f.write(data)
    try:
        tensor = ct.read(path)
    except ct.CoiterError as error:
        assert mutate, f"{path}: the unchanged file was refused: {error!r}"
        assert path in str(error), f"the error does not name the file: {error!r}"
        return "refused"
    # A damaged coordinate can make a valid file of a huge shape (a 10^16-row tensor): its
    # dense copy is refused by to_numpy, not by the reader, so only small ones are densified.
    if math.prod(tensor.shape) <= MAX_DENSE_ELEMENTS:
        values = tensor.to_numpy()
        if not mutate:
            np.testing.assert_array_equal(values, original)
    else:
        assert mutate, f"{path}: the unchanged file read as shape {tensor.shape}"
    return "read"


CASES = {
    "kernel": kernel_case,
    "corrupt": corrupt_case,
    "expr": expr_case,
    "schedule": schedule_case,
    "file": file_case,
}


def run_case(category, number, pool=KERNEL_POOL):
    if category == "kernel":
        return kernel_case(number, pool)
    return CASES[category](number)


# -- child processes ----------------------------------------------------------------------------


def child_main(category, start, count, pool):
    """Run cases start..start+count-1, printing a JSON line before and after each."""
    faulthandler.enable()
    # A case that takes longer than CASE_SECONDS (a hang, even inside a kernel) ends the child
    # with the tracebacks of its threads; the parent names the case from the last "begin".
    previous_threads = ct.get_num_threads()
    for number in range(start, start + count):
        print(json.dumps({"begin": number}), flush=True)
        faulthandler.dump_traceback_later(CASE_SECONDS, exit=True)
        try:
            outcome, failure = run_case(category, number, pool), None
        except Exception as error:  # reported to the parent, which fails the test with it
            outcome, failure = "failed", f"{type(error).__name__}: {error}"[:4000]
        faulthandler.cancel_dump_traceback_later()
        ct.set_num_threads(previous_threads)
        print(json.dumps({"end": number, "outcome": outcome, "failure": failure}), flush=True)


def repro(category, number, pool):
    pool_arg = f" {pool}" if category == "kernel" else ""
    return f"cd tests && python fuzz_cases.py {category} {number}{pool_arg}"


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        category, number = sys.argv[1], int(sys.argv[2])
        pool = int(sys.argv[3]) if len(sys.argv) > 3 else KERNEL_POOL
        print(run_case(category, number, pool))
