"""The command-line tool: ``coiter STATEMENT [options]`` and ``python -m coiter`` (docs/cli.md).

It compiles one statement for the formats, dtypes and schedule given, prints what the compiler
made of it (the generated C, LLVM IR or CUDA, the concrete index notation, any stage), and runs
and times the kernel on operands generated at the extents and densities given, or read from
Matrix Market, FROSTT or ``.npz`` files. Bad input of any kind ends in one line on stderr and
exit status 2, never a traceback.
"""

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from . import _core
from .compiler import Kernel, compile
from .creation import random
from .dtypes import value_dtype
from .errors import CoiterError
from .formats import Format, FormatLike, as_format
from .io import read, write
from .kernel_cache import cache_info
from .notation import Access, accesses
from .parser import TensorRef, parse
from .schedule import Schedule
from .tensor import Tensor

# What ``--print`` shows: a stage of Kernel.stages (by a short name) or the generated code.
# "concrete" is the kernel's concrete index notation, after scheduling (Kernel.concrete);
# "stages" shows the unscheduled one too.
_STAGES = {
    "notation": "index notation",
    "concrete": "scheduled",
    "lattices": "iteration lattices",
    "lowered": "lowered IR",
    "ir": "after IR passes",
}
_LANGUAGES = ("c", "llvm", "cuda")
_PRINTABLE = (*_STAGES, *_LANGUAGES, "stages")


class UsageError(Exception):
    """Arguments that do not fit the statement (a tensor it does not name, a missing extent);
    reported like argparse's own errors."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coiter",
        description="Compile a tensor index notation statement into a kernel, print the "
        "generated code or any compiler stage, and time the kernel on generated or file data.",
        epilog='example: coiter "y(i) = A(i,j) * x(j)" -f A:csr -s "parallelize(i,cpu_thread,'
        'no_races)" -d i:10000 -d j:10000 --density A:0.001 --time 20',
    )
    parser.add_argument("statement", help='the statement, e.g. "y(i) = A(i,j) * x(j)"')
    add = parser.add_argument
    add("-f", "--format", action="append", default=[], metavar="NAME:FORMAT",
        help="a tensor's format: level letters (ds, ds:1,0, sss) or a name (csr, csc, coo, "
        "dcsr, csf, ...); tensors not given one are dense, those read from a file keep the "
        "file's")  # fmt: skip
    add(
        "-t",
        "--dtype",
        action="append",
        default=[],
        metavar="NAME:DTYPE",
        help="a tensor's value dtype (float64 when not given; float32, int64, complex128, ...)",
    )
    add("-s", "--schedule", action="append", default=[], metavar="COMMANDS",
        help='scheduling commands, e.g. "split(i,i0,i1,32); parallelize(i0,cpu_thread,'
        'no_races)"; repeatable, applied in order')  # fmt: skip
    add("--target", choices=("cpu", "cuda"), default="cpu", help="where the kernel runs")
    add("--engine", choices=("llvm", "c"), help="CPU code generator (default: LLVM when built)")
    add("-p", "--print", action="append", default=[], choices=_PRINTABLE, dest="show",
        metavar="WHAT",
        help=f"print one of: {', '.join(_PRINTABLE)} (stages: all of them); repeatable; "
        "without -p, --time or -o the generated code is printed")  # fmt: skip
    add(
        "-d",
        "--dim",
        action="append",
        default=[],
        metavar="INDEX:EXTENT",
        help="the extent of an index variable, for generated operands (i:1000)",
    )
    add("--density", action="append", default=[], metavar="[NAME:]FRACTION",
        help="the fraction of stored entries of a generated operand, for one tensor or, "
        "without a name, for every sparse one (default 0.01; dense formats: 1)")  # fmt: skip
    add(
        "-i",
        "--input",
        action="append",
        default=[],
        metavar="NAME:PATH",
        help="read an operand from a .mtx, .tns or .npz file (optionally .gz)",
    )
    add(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="NAME:PATH",
        help="write a tensor (the result or an operand) to a file after the run",
    )
    add("--time", nargs="?", const=10, type=int, metavar="REPEAT",
        help="run the kernel REPEAT times (default 10) after one warm-up run and print the "
        "median and minimum time")  # fmt: skip
    add("--threads", type=int, metavar="N", help="threads for parallel loops (ct.set_num_threads)")
    add("--seed", type=int, default=0, help="seed of the generated operands (default 0)")
    return parser


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    """``NAME:VALUE`` arguments as a dict; the value may itself contain ``:``."""
    pairs = {}
    for text in values:
        name, sep, value = text.partition(":")
        if not sep or not name or not value:
            raise UsageError(f"{option} expects NAME:VALUE, got {text!r}")
        if name in pairs:
            raise UsageError(f"{option} given twice for {name!r}")
        pairs[name] = value
    return pairs


def _fraction(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"{what}: {value} is not in [0, 1]")
    return value


class Problem:
    """The statement's tensors and index variables, and the options that concern them."""

    def __init__(self, args: argparse.Namespace) -> None:
        assignment, self.refs = parse(args.statement)
        self.result = assignment.lhs.tensor.name
        # Each tensor's index variables, from its first access (the result's from the left side).
        self.modes: dict[str, list[str]] = {}
        for access in [assignment.lhs, *accesses(assignment.rhs)]:
            self._note(access)
        self.variables = {v for names in self.modes.values() for v in names}

        def named(option: str, values: dict[str, str]) -> dict[str, str]:
            for name in values:
                if name not in self.refs:
                    raise UsageError(f"{option}: the statement names no tensor {name!r}")
            return values

        self.formats: dict[str, FormatLike] = dict(named("-f", _pairs(args.format, "-f")))
        self.dtypes = {
            name: _checked_dtype(text, name)
            for name, text in named("-t", _pairs(args.dtype, "-t")).items()
        }
        self.files = named("-i", _pairs(args.input, "-i"))
        if self.result in self.files:
            raise UsageError(f"-i: {self.result!r} is the result; the kernel computes it")
        self.outputs = named("-o", _pairs(args.output, "-o"))
        self.default_density: float | None = None
        densities = []
        for text in args.density:
            if ":" in text:
                densities.append(text)
            elif self.default_density is None:
                self.default_density = _fraction(text, "--density")
            else:
                raise UsageError("--density without a name given twice")
        self.densities = {
            name: _fraction(value, f"--density {name}")
            for name, value in named("--density", _pairs(densities, "--density")).items()
        }
        self.extents: dict[str, int] = {}
        for var, text in _pairs(args.dim, "-d").items():
            if var not in self.variables:
                raise UsageError(f"-d: the statement has no index variable {var!r}")
            if not text.isdigit() or int(text) < 1:
                raise UsageError(f"-d {var}: the extent must be a positive integer, got {text!r}")
            self.extents[var] = int(text)

    def _note(self, access: Access) -> None:
        ref: TensorRef = access.tensor
        self.modes.setdefault(ref.name, [v.name for v in access.indices])

    def read_files(self) -> dict[str, Tensor]:
        """The operands given by file, read in the format asked for (else the file's own);
        their extents fix their index variables' (checked against ``-d`` and each other)."""
        tensors = {}
        for name, path in self.files.items():
            fmt = self.formats.get(name)
            tensor = read(path, format=fmt, dtype=self.dtypes.get(name))
            modes = self.modes[name]
            if tensor.ndim != len(modes):
                raise UsageError(
                    f"-i {name}: {path} holds a {tensor.ndim}-mode tensor, but the statement "
                    f"indexes {name} with {len(modes)} index variables"
                )
            for var, extent in zip(modes, tensor.shape):
                known = self.extents.setdefault(var, extent)
                if known != extent:
                    raise UsageError(
                        f"-i {name}: index variable {var!r} has extent {known} elsewhere, "
                        f"but {path} gives it {extent}"
                    )
            if fmt is None:
                self.formats[name] = tensor.format  # the file's (a saved .npz's exactly)
            tensors[name] = tensor
        return tensors

    def generate(self, kernel: Kernel, given: dict[str, Tensor], seed: int) -> dict[str, Tensor]:
        """Every input the files did not give, random at the extents and densities asked for."""
        operands = dict(given)
        seeds = np.random.SeedSequence(seed).spawn(len(kernel.inputs))
        for name, child in zip(kernel.inputs, seeds):
            if name in operands:
                continue
            missing = [v for v in self.modes[name] if v not in self.extents]
            if missing:
                raise UsageError(
                    f"the extent of {', '.join(missing)} (indexing {name}) is not known: "
                    f"give it with -d {missing[0]}:EXTENT or read {name} with -i"
                )
            shape = tuple(self.extents[v] for v in self.modes[name])
            fmt = as_format(self.formats.get(name, "dense"), len(shape))
            density = self.densities.get(name)
            if density is None:
                density = 1.0 if _all_dense(fmt) else (self.default_density or 0.01)
            dtype = self.dtypes.get(name, np.dtype(np.float64))
            operands[name] = random(shape, density, fmt, dtype, seed=child, name=name)
        return operands


def _checked_dtype(text: str, name: str) -> np.dtype[Any]:
    try:
        return value_dtype(text, f"-t {name}")
    except TypeError as error:
        raise UsageError(str(error)) from None


def _all_dense(fmt: Format) -> bool:
    return all(level.name == "dense" for level in fmt.levels)


def _show(kernel: Kernel, what: str) -> str:
    """What ``-p WHAT`` prints; "source": the code in the target's own language."""
    if what == "source":
        return kernel.source()
    if what in _LANGUAGES:
        return kernel.source(what)
    if what == "stages":
        return "\n".join(
            f"=== {stage} ===\n{text.rstrip()}" for stage, text in kernel.stages.items()
        )
    return kernel.stages[_STAGES[what]]


def _described(tensor: Tensor) -> str:
    """A tensor's shape, format and stored entries, for --time's report."""
    fmt = "scalar" if tensor.ndim == 0 else str(tensor.format)
    return f"shape {tensor.shape}, format {fmt}, nnz {tensor.nnz}"


def _milliseconds(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def run(args: argparse.Namespace) -> None:
    """Do what the parsed arguments ask; UsageError or a coiter error on bad input."""
    if args.time is not None and args.time < 1:
        raise UsageError(f"--time needs at least 1 run, got {args.time}")
    if args.threads is not None and args.threads < 1:
        raise UsageError(f"--threads must be at least 1, got {args.threads}")
    problem = Problem(args)
    schedule = "; ".join(args.schedule)
    if schedule:
        Schedule.parse(schedule)  # a malformed command is named before anything is read
    if args.threads is not None:
        _core.set_num_threads(args.threads)
    given = problem.read_files()
    before = cache_info()["compiles"]
    start = time.perf_counter()
    kernel = compile(
        args.statement,
        formats=problem.formats,
        dtypes=problem.dtypes,
        schedule=schedule or None,
        target=args.target,
        engine=args.engine,
    )
    compile_time = time.perf_counter() - start
    compiled = cache_info()["compiles"] > before
    shows = args.show or ([] if args.time is not None or problem.outputs else ["source"])
    for what in shows:
        print(_show(kernel, what).rstrip())
    if args.time is None and not problem.outputs:
        return
    operands = problem.generate(kernel, given, args.seed)
    result = kernel(**operands)  # the warm-up run, and the result -o writes
    if args.time is not None:
        times = []
        for _ in range(args.time):
            start = time.perf_counter()
            kernel(**operands)
            times.append(time.perf_counter() - start)
        how = "compiled" if compiled else "from the kernel cache"
        threads = _core.get_num_threads()
        print(f"compile: {_milliseconds(compile_time)} ({how})")
        print(
            f"run:     median {_milliseconds(statistics.median(times))}, "
            f"min {_milliseconds(min(times))} over {args.time} run{'s' if args.time > 1 else ''}, "
            f"{threads} thread{'s' if threads > 1 else ''}"
        )
        for name, tensor in [*((n, operands[n]) for n in kernel.inputs), (problem.result, result)]:
            print(f"{name}: {_described(tensor)}")
    for name, path in problem.outputs.items():
        write(path, result if name == problem.result else operands[name])


def main(argv: Sequence[str] | None = None) -> int:
    """The ``coiter`` command: 0 on success, 2 (with a message on stderr) on bad input."""
    parser = _parser()
    args = parser.parse_args(argv)

    def fail(message: str) -> NoReturn:
        parser.exit(2, f"coiter: error: {message}\n")

    try:
        run(args)
    except BrokenPipeError:
        # The reader went away (`coiter ... | head`): stop quietly, and keep Python from
        # reporting the failed flush of stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UsageError as error:
        parser.error(str(error))
    except CoiterError as error:
        fail(f"{type(error).__name__}: {error}")
    except OSError as error:
        fail(str(error))
    return 0
