"""The scheduling language (docs/reference.md, "Schedules"): ``ct.Schedule`` chains commands that
transform a kernel's loops without changing what it computes.

A schedule is data: an ordered list of commands with textual arguments. Its canonical text,
``split(i,i0,i1,32);parallelize(i0,cpu_thread,no_races)``, is what the compiler receives,
what the kernel cache keys on, and what ``Schedule.parse`` reads back. Index variables are
matched to the expression's by name, so a schedule works the same on string expressions and
on ``y[i] = ...`` assignments. Whether a schedule is legal for a statement is decided before
anything is lowered: ``ct.schedule_problem`` asks it without compiling (docs/schedules.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Integral
from typing import TypeAlias

from . import _core
from .display import schedule_html
from .errors import ScheduleError
from .notation import IndexExpr, IndexVar

__all__ = ["Schedule"]

# The compiler's default schedule, spelt out: ``schedule="default"`` (ct.compile, ct.evaluate,
# ct.einsum, tensor.schedule) where leaving the schedule out asks for "auto" on the CPU.
DEFAULT_SCHEDULE = "default"
# An index variable or its name, as every command takes them.
Var: TypeAlias = IndexVar | str
# A command's argument as the text form has it: a word, or a list of them in brackets.
Argument: TypeAlias = str | tuple[str, ...]


def _name(value: object, what: str) -> str:
    if isinstance(value, IndexVar):
        return value.name
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise TypeError(f"{what}: expected an index variable or its name, got {value!r}")


def _names(values: Var | Iterable[Var], what: str) -> tuple[str, ...]:
    if isinstance(values, (IndexVar, str)):
        return (_name(values, what),)
    return tuple(_name(v, what) for v in values)


def _integer(value: object, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{what}: expected an integer, got {value!r}")
    return str(int(value))


def _expression(value: object, what: str) -> str:
    if isinstance(value, IndexExpr):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise TypeError(f"{what}: expected an expression or its text, got {value!r}")


def _unicode(text: str, what: str) -> str:
    """``text``, after checking that it is valid Unicode (no lone surrogates, as decoding
    bytes with errors="surrogateescape" leaves): the compiler reads UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ScheduleError(
            f"{what}: character {text[error.start]!r} at column {error.start + 1} "
            "is not valid Unicode"
        ) from None
    return text


def _text(arg: Argument) -> str:
    return "[" + ",".join(arg) + "]" if isinstance(arg, tuple) else arg


class Schedule:
    """An immutable chain of scheduling commands; each method returns a new schedule.

    A schedule transforms a kernel's loops without changing what it computes. Pass it to
    :func:`compile`, :func:`evaluate` or ``Tensor.schedule``; :meth:`parse` reads the text form,
    and ``str(s)`` writes it (the form that is part of a kernel's cache signature). Index
    variables are matched to the statement's by name; arguments may be :class:`IndexVar` objects
    or names. docs/schedules.md lists every command's preconditions.

    Examples
    --------
    >>> s = ct.Schedule().split("i", "i0", "i1", 32).parallelize("i0", "cpu_thread", "no_races")
    >>> str(s)
    'split(i,i0,i1,32);parallelize(i0,cpu_thread,no_races)'
    """

    def __init__(self, commands: Iterable[tuple[str, tuple[Argument, ...]]] = ()) -> None:
        self._commands = tuple(commands)

    def _with(self, name: str, *args: Argument) -> Schedule:
        return Schedule(self._commands + ((name, tuple(args)),))

    # -- commands ---------------------------------------------------------------------------
    def reorder(self, *loops: Var | Iterable[Var]) -> Schedule:
        """New order for the named loops (outermost first); the others keep their places."""
        if len(loops) == 1 and not isinstance(loops[0], (IndexVar, str)):
            loops = tuple(loops[0])
        return self._with("reorder", *(_name(v, "reorder") for v in loops))

    def split(self, i: Var, i0: Var, i1: Var, size: int) -> Schedule:
        """Split loop ``i`` into ``i0`` (blocks) and ``i1`` (``size`` iterations each; the last
        block is shorter when ``size`` does not divide the extent)."""
        return self._with(
            "split",
            _name(i, "split"),
            _name(i0, "split"),
            _name(i1, "split"),
            _integer(size, "split"),
        )

    def divide(self, i: Var, i0: Var, i1: Var, parts: int) -> Schedule:
        """Split loop ``i`` into ``parts`` blocks of (almost) equal size."""
        return self._with(
            "divide",
            _name(i, "divide"),
            _name(i0, "divide"),
            _name(i1, "divide"),
            _integer(parts, "divide"),
        )

    def pos(self, i: Var, ip: Var, access: IndexExpr | str) -> Schedule:
        """Iterate the stored positions of ``access`` (an operand) instead of coordinates."""
        return self._with("pos", _name(i, "pos"), _name(ip, "pos"), _expression(access, "pos"))

    def fuse(self, i: Var, j: Var, f: Var) -> Schedule:
        """Collapse the directly nested loops ``i`` and ``j`` into one loop ``f``."""
        return self._with("fuse", _name(i, "fuse"), _name(j, "fuse"), _name(f, "fuse"))

    def precompute(
        self,
        expr: IndexExpr | str,
        ivars: Var | Iterable[Var],
        ws_ivars: Var | Iterable[Var],
        format: str | None = None,
    ) -> Schedule:
        """Compute ``expr`` into a workspace indexed by ``ivars`` (named ``ws_ivars`` where it
        is produced; they may repeat ``ivars``). Over a split's inner loop (TACO's tiling), the
        workspace is a dense array of one block. ``format`` is ``"dense"`` (the default: values
        and marks over the whole extent), ``"hashed"`` (a growing hash table: memory follows
        the entries, for huge extents) or ``"compressed"`` (entries appended in coordinate
        order: the producer's outermost loop must be the workspace's)."""
        args: list[Argument] = [
            _expression(expr, "precompute"),
            _names(ivars, "precompute"),
            _names(ws_ivars, "precompute"),
        ]
        if format is not None:
            args.append(_name(format, "precompute"))
        return self._with("precompute", *args)

    def bound(self, i: Var, ib: Var, value: int, kind: str) -> Schedule:
        """Promise that loop ``i``'s extent is ``value`` (``kind="max_exact"``) or at most
        ``value`` (``"max_constraint"``); ``ib`` is the bounded loop. Checked at each call."""
        return self._with(
            "bound",
            _name(i, "bound"),
            _name(ib, "bound"),
            _integer(value, "bound"),
            _name(kind, "bound"),
        )

    def unroll(self, i: Var, factor: int) -> Schedule:
        """Unroll the fixed-size loop ``i`` (a split's inner loop or a bounded loop)."""
        return self._with("unroll", _name(i, "unroll"), _integer(factor, "unroll"))

    def parallelize(self, i: Var, unit: str, races: str, chunks: str | None = None) -> Schedule:
        """Run loop ``i`` on ``unit`` (``"cpu_thread"`` or ``"cpu_vector"``) with the race
        strategy ``races`` (``no_races``, ``ignore_races``, ``atomics``, ``temporary``,
        ``parallel_reduction``). ``chunks`` (cpu_thread): ``"dynamic"`` (the default),
        ``"static"``, or ``"dynamic:N"``/``"static:N"`` for N iterations per chunk."""
        args = [_name(i, "parallelize"), _name(unit, "parallelize"), _name(races, "parallelize")]
        if chunks is not None:
            args.append(_name(chunks, "parallelize"))
        return self._with("parallelize", *args)

    def assemble(self, tensor: object, strategy: str) -> Schedule:
        """How the sparse result ``tensor`` (by name) is built: ``"append"`` (in loop order, an
        error when the loop order would revisit it), ``"insert"`` (through a workspace where
        needed; the default on the CPU) or ``"two_pass"`` (as insert, but counting each row's
        entries first and then filling each row from its offset, so that rows fill in
        parallel; the default with ``target="cuda"``, for results whose one compressed level
        is last and under dense levels, such as CSR)."""
        return self._with(
            "assemble",
            getattr(tensor, "name", None) or _name(tensor, "assemble"),
            _name(strategy, "assemble"),
        )

    def distribute(
        self,
        i: Var,
        parts: int | None = None,
        reduce: str | None = None,
        balance: str | None = None,
    ) -> Schedule:
        """Split loop ``i`` into ``parts`` contiguous blocks, one Dask task each
        (``coiter.distributed.evaluate``; docs/distributed.md). Operands indexed by ``i`` are
        partitioned conformally, the others replicated. ``parts`` defaults to the partition of
        the operands already partitioned along ``i``, else one block per worker. When ``i`` is
        summed, ``reduce`` says how the blocks' partial results combine: ``"tree"`` (the
        default: partials computed in parallel, added pairwise) or ``"serial"`` (each block adds
        into the previous block's sum: one partial in memory, no parallelism). ``balance``
        (``"nnz"``, the default, ``"bytes"`` or ``"coords"``) places the cuts of operands that
        are partitioned on the fly. Local kernels (``ct.compile``, ``ct.evaluate``) refuse it."""
        args = [_name(i, "distribute")]
        if parts is not None:
            args.append(_integer(parts, "distribute"))
        if reduce is not None:
            args.append(_name(reduce, "distribute"))
        if balance is not None:
            args.append(_name(balance, "distribute"))
        return self._with("distribute", *args)

    # -- text form ----------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> Schedule:
        """Read the text form: ``"split(i,i0,i1,32); parallelize(i0,cpu_thread,no_races)"``
        (commands separated by ``;`` or newlines, lists in brackets)."""
        if not isinstance(text, str):
            raise TypeError(f"Schedule.parse expects a string, got {type(text).__name__}")
        commands: list[tuple[str, tuple[Argument, ...]]] = []
        for name, args in _core.parse_schedule(_unicode(text, "schedule")):
            commands.append((name, tuple(tuple(a) if isinstance(a, list) else a for a in args)))
        return cls(commands)

    def __str__(self) -> str:
        return ";".join(
            f"{name}(" + ",".join(_text(a) for a in args) + ")" for name, args in self._commands
        )

    def __repr__(self) -> str:
        return f"Schedule.parse({str(self)!r})"

    def _repr_html_(self) -> str:
        """Jupyter's display: the commands in order (docs/jupyter.md)."""
        return schedule_html(str(self), self._commands)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and self._commands == other._commands

    def __hash__(self) -> int:
        return hash(self._commands)

    def __len__(self) -> int:
        return len(self._commands)


def schedule_text(schedule: Schedule | str | None) -> str:
    """The canonical text of a schedule given as a Schedule, its text, or None; ``""`` (as
    for ``"default"``) is the compiler's default schedule."""
    if schedule is None:
        return ""
    if isinstance(schedule, str):
        if schedule.strip() == "auto":
            raise ScheduleError(
                "schedule='auto' is chosen by ct.compile and ct.evaluate (docs/autoscheduling.md); "
                "here pass a ct.Schedule or 'default' (the compiler's default schedule)"
            )
        if schedule.strip() == DEFAULT_SCHEDULE:
            return ""
        schedule = Schedule.parse(schedule)
    if not isinstance(schedule, Schedule):
        raise TypeError(
            f"schedule must be a ct.Schedule, its text or None, not {type(schedule).__name__}"
        )
    for name, args in schedule._commands:
        if name == "distribute":
            # Distribution places blocks of the loop on Dask workers: no single kernel does that.
            raise ScheduleError(
                f"distribute({','.join(_text(a) for a in args)}): a distributed loop runs on a "
                "Dask cluster; use coiter.distributed.evaluate (docs/distributed.md)"
            )
    return _unicode(str(schedule), "schedule")
