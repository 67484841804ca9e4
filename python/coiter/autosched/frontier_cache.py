"""The asymptotic frontiers ``schedule="auto"`` chooses from, kept in the disk cache.

Building a statement's frontier takes from milliseconds (two operands) to seconds (MTTKRP of
an order-4 tensor), and it depends only on the statement, its tensors' formats and dtypes and
coiter's version. What ``schedule="auto"`` reads of it (api.InstantChoice) is small: the
members that lower (their index, cost and kernels, and the conversions or schedule each
stands for: candidates.FrontierBase), the default's program among the candidates, and whether
the deadline cut the enumeration. That is stored as one JSON file per statement and formats,
``frontiers/<key>.json`` in the kernel cache's directory (``ct.cache_info()["disk_directory"]``),
so that another process pays a file read instead of the enumeration. Files are written to a
temporary name and renamed into place, so a reader never sees half of one and concurrent
writers of one key leave one complete file. Without a cache directory nothing is stored.

A frontier the deadline cut is stored with its deadline, and serves only requests with no
longer a deadline; a complete one serves every request.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from typing import Any

from .. import _core
from ..formats import Format, as_format
from .candidates import Candidate, FrontierBase, Problem
from .frontier import StoredMember
from .pipeline import KernelStage

__all__ = ["BuiltFrontier", "load", "store", "DIRECTORY"]

logger = logging.getLogger("coiter")

DIRECTORY = "frontiers"
# Bumped when what a stored frontier holds, or how the asymptotic stage ranks, changes.
_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class BuiltFrontier:
    """What schedule="auto" keeps of a statement's frontier: the members as base candidates
    (or none, and why not), the default's program, whether it is complete and, if not, the
    deadline that cut it."""

    bases: list[FrontierBase]
    why_not: str | None
    default: FrontierBase | None
    complete: bool
    seconds: float | None

    def serves(self, seconds: float | None) -> bool:
        """Whether this frontier answers a request with deadline ``seconds`` (None: none)."""
        if self.complete:
            return True
        return seconds is not None and self.seconds is not None and self.seconds >= seconds


def _path(problem: Problem) -> str | None:
    """The file of the problem's frontier (None: no disk cache)."""
    directory = _core.cache_info().get("disk_directory")
    if not directory:
        return None
    key = json.dumps(
        {
            "statement": str(problem.parsed[0]),
            "formats": {n: str(f) for n, f in sorted(problem.formats.items())},
            "dtypes": {n: d.name for n, d in sorted(problem.dtypes.items())},
            "coiter": _core.__version__,
            "schema": _SCHEMA_VERSION,
        },
        sort_keys=True,
    )
    name = hashlib.sha256(key.encode()).hexdigest()[:32] + ".json"
    return os.path.join(directory, DIRECTORY, name)


def _base_record(base: FrontierBase) -> dict[str, Any]:
    candidate = base.candidate
    return {
        "index": base.member.index,
        "cost": base.member.cost,
        "kernels": [[s.statement, s.formats, s.schedule, s.result] for s in base.member.stages],
        "conversions": {n: str(f) for n, f in base.conversions.items()},
        "candidate": None
        if candidate is None
        else [candidate.schedule, candidate.origin, candidate.loop_order],
    }


def _base_of(problem: Problem, record: dict[str, Any]) -> FrontierBase:
    stages = tuple(
        KernelStage(str(s), dict(f), str(sc), str(r)) for s, f, sc, r in record["kernels"]
    )
    result = problem.result
    member = StoredMember(
        int(record["index"]),
        str(record["cost"]),
        stages,
        problem.formats[result],
        problem.dtypes[result],
        problem.dtypes,
    )
    conversions: dict[str, Format] = {
        n: as_format(f, len(problem.levels[n])) for n, f in record["conversions"].items()
    }
    candidate = None
    if record["candidate"] is not None:
        schedule, origin, order = record["candidate"]
        candidate = Candidate(schedule, origin, None if order is None else tuple(order))
    return FrontierBase(member, conversions, candidate)


def load(problem: Problem) -> BuiltFrontier | None:
    """The problem's stored frontier (None: none stored, or no disk cache). A file that does
    not read as one is reported at WARNING and treated as absent (it is rebuilt and replaced)."""
    path = _path(problem)
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as file:
            stored = json.load(file)
        default = stored["default"]
        return BuiltFrontier(
            [_base_of(problem, b) for b in stored["bases"]],
            stored["why_not"],
            None if default is None else _base_of(problem, default),
            bool(stored["complete"]),
            stored["seconds"],
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        logger.warning("coiter: ignoring the stored frontier %s (%s)", path, error)
        return None


def store(problem: Problem, built: BuiltFrontier) -> None:
    """Keeps ``built`` for ``problem`` in the disk cache (nothing without one, or one this
    process cannot write: reported at WARNING)."""
    path = _path(problem)
    if path is None:
        return
    record = {
        "statement": str(problem.parsed[0]),
        "bases": [_base_record(b) for b in built.bases],
        "why_not": built.why_not,
        "default": None if built.default is None else _base_record(built.default),
        "complete": built.complete,
        "seconds": built.seconds,
    }
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
    except OSError as error:  # (a cache directory this process cannot write: kept in memory)
        logger.warning("coiter: the frontier of %s is not stored (%s)", problem.text, error)
        return
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump(record, file)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
