"""The distribution schedule: ``distribute(i, parts, reduce, balance)`` in a ``ct.Schedule``.

SuperTaco's distribution schedule (Shinde's SuperTaco thesis, §3) has four parts; here they are:

1. **Index splitting**: ``distribute(i, parts)`` cuts loop ``i`` into ``parts`` contiguous
   blocks, one task each. Without the command, the index of the mode along which the operands
   are already partitioned is split, into their blocks.
2. **Block loop order**: none. Dask runs the block tasks as their inputs arrive.
3. **Output extension** of a summed ``i``: ``reduce="tree"`` (each block computes a partial
   result in parallel; pairs of partials are added by a tree of tasks: dense partials add
   their arrays, sparse ones merge with coiter's own addition kernel) or ``"serial"`` (each
   block adds its partial into the sum of the blocks before it: one partial in memory at a
   time, no parallelism; SuperTaco's non-parallel hoisting).
4. **Mapping**: owner computes. A block's task asks for the worker its partitioned operand's
   block was placed on (as a preference: another worker takes it when that one is gone), and
   Dask's scheduler otherwise runs a task where most of its input bytes are.

The rest of the schedule (``split``, ``parallelize``, ...) is the schedule of the kernel each
block runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ScheduleError
from ..schedule import Argument, Schedule
from .bounds import BALANCES

REDUCES = ("tree", "serial")


@dataclass(frozen=True)
class Distribution:
    """A parsed ``distribute`` command."""

    var: str
    parts: int | None = None
    reduce: str = "tree"
    balance: str = "nnz"


def split_schedule(schedule: Schedule | str | None) -> tuple[Distribution | None, str | None]:
    """(the distribute command or None, the text of the other commands or None)."""
    if schedule is None:
        return None, None
    if isinstance(schedule, str):
        schedule = Schedule.parse(schedule)
    if not isinstance(schedule, Schedule):
        raise TypeError(
            f"schedule must be a ct.Schedule, its text or None, not {type(schedule).__name__}"
        )
    distributions = [args for name, args in schedule._commands if name == "distribute"]
    local = Schedule([(name, args) for name, args in schedule._commands if name != "distribute"])
    if len(distributions) > 1:
        raise ScheduleError(
            f"{len(distributions)} distribute commands: one index is distributed "
            "(blocks of one loop, one task each)"
        )
    local_text = str(local) if len(local) else None
    if not distributions:
        return None, local_text
    return _parse_distribute(distributions[0]), local_text


def _parse_distribute(args: tuple[Argument, ...]) -> Distribution:
    text = f"distribute({','.join(a if isinstance(a, str) else str(a) for a in args)})"
    if not args or not isinstance(args[0], str):
        raise ScheduleError(f"{text}: the first argument is the index variable to distribute")
    var, parts, reduce, balance = args[0], None, "tree", "nnz"
    for arg in args[1:]:
        if not isinstance(arg, str):
            raise ScheduleError(f"{text}: unexpected list argument {arg!r}")
        if arg.isdigit():
            if parts is not None:
                raise ScheduleError(f"{text}: two block counts")
            parts = int(arg)
            if parts < 1:
                raise ScheduleError(f"{text}: the block count must be at least 1")
        elif arg in REDUCES:
            reduce = arg
        elif arg in BALANCES:
            balance = arg
        else:
            raise ScheduleError(
                f"{text}: unknown argument {arg!r} (expected a block count, a reduction "
                f"strategy {REDUCES} or a balance {BALANCES})"
            )
    return Distribution(var, parts, reduce, balance)
