"""The asymptotic stage of the autoscheduler (docs/autoscheduling-asymptotic.md): a thin
wrapper of the core's ``asymptotic_frontier`` (src/autosched/).

``frontier("A(i,j) = B(i,k) * C(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"})``
enumerates the statement's candidate programs of minimum loop depth, derives each one's cost
as a set of tasks, and keeps the candidates no other candidate is asymptotically cheaper
than. Every frontier member lowers to one or two kernels (a statement, its tensors' formats
and a schedule) that :meth:`FrontierCandidate.evaluate` runs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import _core
from ..compiler import core_assignment, typed_statement
from ..formats import Format, FormatLike
from ..tensor import Tensor
from .pipeline import KernelStage, Pipeline

logger = logging.getLogger("coiter")


class FrontierCandidate:
    """A candidate program of the asymptotic stage."""

    def __init__(self, core: _core.AsymptoticCandidate, owner: Frontier) -> None:
        self._core = core
        self._owner = owner

    @property
    def index(self) -> int:
        return self._core.index

    @property
    def program(self) -> str:
        """The program in concrete index notation with protocols (``w(i)`` walks, ``l(i)``
        locates the level indexed by ``i``)."""
        return self._core.program

    @property
    def loop_order(self) -> list[str]:
        """The loops in program order: around the where, in its producer, in its consumer."""
        return self._core.loop_order

    @property
    def depth(self) -> int:
        return self._core.depth

    @property
    def cost(self) -> str:
        """The task set as a union of conjunctive queries, sunk costs included ("" for a
        candidate that does not lower: those are not ranked)."""
        return self._core.cost

    @property
    def on_frontier(self) -> bool:
        return self._core.on_frontier

    @property
    def lowered(self) -> bool:
        """Whether the candidate lowers to kernels that pass coiter's legality check."""
        return self._core.lowered

    @property
    def problem(self) -> str:
        """Why the candidate does not lower ("" when it does)."""
        return self._core.problem

    @property
    def dominated_by(self) -> FrontierCandidate | None:
        """A frontier member asymptotically cheaper than this candidate (None for members
        and for candidates that do not lower)."""
        index = self._core.dominated_by
        return None if index is None else self._owner.candidates[index]

    @property
    def frontier(self) -> Frontier:
        """The frontier this candidate was enumerated for (all its candidates, members or not)."""
        return self._owner

    @property
    def stages(self) -> list[KernelStage]:
        return [KernelStage(s, dict(f), sched, r) for s, f, sched, r in self._core.stages]

    @property
    def schedule(self) -> str:
        """The schedule text of the candidate's last kernel (the one computing the result)."""
        return self.stages[-1].schedule if self.lowered else ""

    def pipeline(self, engine: str | None = None) -> Pipeline:
        """The candidate's kernels, compiled, called like one kernel (pipeline.py)."""
        if not self.lowered:
            raise ValueError(f"candidate #{self.index} does not lower: {self.problem}")
        return Pipeline(
            self.stages, self._owner.result_format, self._owner.dtype, self._owner.dtypes, engine
        )

    def evaluate(self, engine: str | None = None, **operands: Any) -> Tensor:
        """Runs the candidate's kernels on the operands (by name), converting each operand
        to the format its kernel reads; returns the result."""
        return self.pipeline(engine)(**operands)

    def __repr__(self) -> str:
        return f"<FrontierCandidate #{self.index} {self.program}>"


@dataclass(frozen=True)
class StoredMember:
    """A frontier member read back from the disk (frontier_cache.py): what ``schedule="auto"``
    reads of a :class:`FrontierCandidate` (its index, cost and kernels), without the frontier
    it was enumerated in."""

    index: int
    cost: str
    stages: tuple[KernelStage, ...]
    result_format: Format
    dtype: DTypeLike
    dtypes: Mapping[str, DTypeLike]

    def pipeline(self, engine: str | None = None) -> Pipeline:
        """The member's kernels, compiled, called like one kernel (pipeline.py)."""
        return Pipeline(self.stages, self.result_format, self.dtype, self.dtypes, engine)


class Frontier:
    """A statement's minimum-depth candidates and the frontier among them."""

    def __init__(
        self,
        core: _core.AsymptoticFrontier,
        result_format: Format,
        dtype: DTypeLike,
        dtypes: Mapping[str, DTypeLike],
    ) -> None:
        self._core = core
        self.result_format = result_format
        self.dtype = dtype
        self.dtypes = dict(dtypes)
        self.candidates = [FrontierCandidate(c, self) for c in core.candidates]
        self.members = [self.candidates[k] for k in core.members]
        # The members grouped by equal cost: the model cannot tell a class's members apart.
        self.cost_classes = [[self.candidates[k] for k in cls] for cls in core.cost_classes]
        self.minimum_depth: int = core.minimum_depth
        # False when the deadline cut the enumeration: the frontier of the candidates ranked
        # before it (every member lowers; one not enumerated may be cheaper than some).
        self.complete: bool = core.complete

    def report(self, all: bool = False) -> str:
        """Candidates, costs, schedules and for each dominated candidate the member that
        dominates it; ``all``: also the candidates that do not lower, with the reason."""
        return self._core.report(all)

    def __str__(self) -> str:
        return self.report()


def frontier(
    stmt: str,
    formats: Mapping[str, FormatLike] | None = None,
    dtype: DTypeLike = np.float64,
    dtypes: Mapping[str, DTypeLike] | None = None,
    seconds: float | None = None,
) -> Frontier:
    """The asymptotic frontier of ``stmt`` (a product of accesses summed over the variables
    its result lacks) with its tensors in ``formats`` (dense where not given). ``seconds``: a
    deadline (None: none); past it the enumeration stops and the frontier is that of the
    candidates ranked so far, with ``complete`` False."""
    typed, _, result = typed_statement(stmt, formats, dtype, dtypes)
    core = _core.asymptotic_frontier(core_assignment(typed), seconds)
    if not core.complete:
        logger.info(
            "coiter: the asymptotic frontier of %s was cut at its deadline of %g s: %d "
            "candidates ranked, %d on the frontier of those",
            stmt,
            seconds,
            len(core.candidates),
            len(core.members),
        )
    return Frontier(core, result.format, dtype, dtypes or {})
