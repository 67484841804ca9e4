"""A frontier member's cost evaluated on input statistics: the number of tasks its task set
holds, estimated from the operands' extents and nonzeros (``schedule="auto"`` picks the
cheapest member this way, timing nothing).

A cost (``FrontierCandidate.cost``) is a union of conjunctive queries, printed as
``{(i,k) | B(i,k) ∧ C($0,$1)} ∪ {(j)}``: a query's head variables, then atoms "this tensor is
nonzero at these coordinates", ``$n`` being a variable the query quantifies existentially
(docs/autoscheduling-asymptotic.md, step 3). The estimate assumes the uniform, independent
sparsity patterns of the paper's evaluation: a tensor is nonzero at a coordinate with
probability nnz / size, so a query's size is the product of its head's extents, times the
probability of each atom over head variables only, times for each group of atoms linked by
existential variables the probability that some assignment of the group's existential
variables satisfies all its atoms (the expected number of such assignments, at most 1; a
group over existential variables only says an input is nonempty, which it is). The groups
are independent: ``{(i,j,k,l) | B(i,k,l) ∧ C($0,$1) ∧ D(l,j)}`` (for each nonzero of B, the
row l of D, C being nonempty) is nnz(B) · nnz(D)/N, not capped at the size of its head.
The union's size is bounded by the sum of its queries'.

A member of two kernels also writes its workspace as a tensor and may convert it (read it in
another mode order), and a member writing its result transposed converts it back:
:func:`materialized_tasks` charges those, as the task sets (the paper's, which writes every
workspace in place) do not.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..formats import Format, as_format
from ..notation import accesses
from ..parser import parse_once
from .pipeline import KernelStage

__all__ = [
    "Query",
    "parse_cost",
    "estimated_tasks",
    "estimated_nonzeros",
    "stored_positions",
    "materialized_tasks",
]

_QUERY = re.compile(r"\{\(([^)]*)\)(?:\s*\|\s*([^}]*))?\}")
_ATOM = re.compile(r"(\w+)\(([^)]*)\)")


@dataclass(frozen=True)
class Query:
    """One conjunctive query of a cost: its head variables and its atoms (tensor, arguments);
    an argument starting with ``$`` is existentially quantified."""

    head: tuple[str, ...]
    atoms: tuple[tuple[str, tuple[str, ...]], ...]


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def parse_cost(cost: str) -> list[Query]:
    """The queries of a printed cost (ValueError when it is not one)."""
    queries = []
    for part in cost.split("∪"):
        match = _QUERY.fullmatch(part.strip())
        if match is None:
            raise ValueError(f"not a conjunctive query of a cost: {part.strip()!r}")
        head, body = match.group(1), match.group(2) or ""
        atoms = tuple((m.group(1), _names(m.group(2))) for m in _ATOM.finditer(body))
        queries.append(Query(_names(head), atoms))
    return queries


def estimated_tasks(
    queries: Sequence[Query],
    extents: Mapping[str, int],
    shapes: Mapping[str, Sequence[int]],
    nonzeros: Mapping[str, int],
) -> float:
    """The estimated number of tasks of a cost: ``extents`` by index variable, ``shapes`` and
    ``nonzeros`` by tensor (a tensor not given, such as a workspace, counts as full)."""
    return sum(_estimated_size(q, extents, shapes, nonzeros) for q in queries)


def _estimated_size(
    query: Query,
    extents: Mapping[str, int],
    shapes: Mapping[str, Sequence[int]],
    nonzeros: Mapping[str, int],
) -> float:
    size = math.prod(float(extents[v]) for v in query.head)
    # Atoms by the group of existential variables they share (union-find over the variables);
    # an atom over head variables only is a group of its own with no witnesses to count.
    parent: dict[str, str] = {}

    def root(v: str) -> str:
        while parent.setdefault(v, v) != v:
            v = parent[v]
        return v

    for _, arguments in query.atoms:
        linked = [root(a) for a in arguments if a.startswith("$")]
        for other in linked[1:]:
            parent[other] = linked[0]
    groups: dict[str, list[tuple[float, dict[str, float]]]] = {}
    for tensor, arguments in query.atoms:
        shape = shapes.get(tensor)
        if shape is None:
            continue
        full = math.prod(float(n) for n in shape)
        probability = nonzeros[tensor] / full if full else 0.0
        existential = {a: float(shape[m]) for m, a in enumerate(arguments) if a.startswith("$")}
        if not existential:
            size *= probability
            continue
        groups.setdefault(root(next(iter(existential))), []).append((probability, existential))
    for atoms in groups.values():
        witnesses: dict[str, float] = {}
        probability = 1.0
        for p, existential in atoms:
            probability *= p
            for v, extent in existential.items():
                witnesses.setdefault(v, extent)
        size *= min(1.0, math.prod(witnesses.values()) * probability)
    return size


def estimated_nonzeros(
    statement: str,
    extents: Mapping[str, int],
    shapes: Mapping[str, Sequence[int]],
    nonzeros: Mapping[str, int],
) -> float:
    """The estimated nonzeros of the result of a product ``statement`` (``w(k,j,l) =
    C(k,j) * D(l,j)``): its coordinates at which some assignment of the summed variables
    makes every factor nonzero (a dense operand always is)."""
    query = _result_query(statement)
    tensors = tuple(
        (t, tuple(shapes[t]), nonzeros[t])
        for t in dict.fromkeys(a[0] for a in query.atoms)
        if t in shapes
    )
    return _result_size(query, tuple(extents[v] for v in query.head), tensors)


# A frontier's members share their kernels' statements (MTTKRP's 140 pipelines have a few
# producers and consumers), and schedule="auto" ranks them all on a first call: each
# statement's query is built once, each size once per statistics.
@functools.lru_cache(maxsize=1024)
def _result_query(statement: str) -> Query:
    assignment = parse_once(statement)[0]
    head = tuple(v.name for v in assignment.lhs.indices)
    atoms = tuple(
        (a.tensor.name, tuple(v.name if v.name in head else "$" + v.name for v in a.indices))
        for a in accesses(assignment.rhs)
    )
    return Query(head, atoms)


@functools.lru_cache(maxsize=4096)
def _result_size(
    query: Query, extents: tuple[int, ...], tensors: tuple[tuple[str, tuple[int, ...], int], ...]
) -> float:
    """_estimated_size of a result query: ``extents`` of its head variables in order,
    ``tensors`` (name, shape, nonzeros) of the tensors given."""
    return _estimated_size(
        query,
        dict(zip(query.head, extents, strict=True)),
        {t: shape for t, shape, _ in tensors},
        {t: count for t, _, count in tensors},
    )


def stored_positions(fmt: Format, mode_extents: Sequence[int], entries: float) -> float:
    """The positions a tensor of ``entries`` nonzeros occupies in ``fmt``: its leading dense
    levels (in storage order) hold every coordinate, the levels below them its entries."""
    dense = 1.0
    for level, mode in zip(fmt.levels, fmt.mode_order, strict=True):
        if level.name != "dense":
            return dense + entries
        dense *= float(mode_extents[mode])
    return dense


def materialized_tasks(
    stages: Sequence[KernelStage],
    result_format: Format,
    extents: Mapping[str, int],
    shapes: Mapping[str, Sequence[int]],
    nonzeros: Mapping[str, int],
) -> float:
    """What a member's kernels write and convert beyond its task set: each intermediate's
    storage in the format its kernel writes, plus its conversion when the next kernel reads
    it in another format, and the result's conversion back when it is written transposed.
    (A conversion builds the new storage from the entries.)"""
    total = 0.0
    sizes = dict(shapes)
    counts = dict(nonzeros)
    for k, stage in enumerate(stages):
        assignment = parse_once(stage.statement)[0]
        name = stage.result
        modes = [extents[v.name] for v in assignment.lhs.indices]
        entries = estimated_nonzeros(stage.statement, extents, sizes, counts)
        # The next kernel's estimate reads this one's result as an operand of these statistics.
        sizes[name] = modes
        counts[name] = round(entries)
        if name not in stage.formats:  # (a scalar result: nothing stored, nothing converted)
            continue
        written = as_format(stage.formats[name], len(modes))
        if k + 1 < len(stages):
            total += stored_positions(written, modes, entries)
            read = stages[k + 1].formats.get(name)
            if read is not None and as_format(read, len(modes)) != written:
                total += entries + stored_positions(as_format(read, len(modes)), modes, entries)
        elif written != result_format:
            total += entries + stored_positions(result_format, modes, entries)
    return total
