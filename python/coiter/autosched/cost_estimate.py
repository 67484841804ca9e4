"""A frontier member's cost evaluated on input statistics: the number of tasks its task set
holds, estimated from the operands' extents and nonzeros (``schedule="auto"`` picks the
cheapest member this way, timing nothing).

A cost (``FrontierCandidate.cost``) is a union of conjunctive queries, printed as
``{(i,k) | B(i,k) ∧ C($0,$1)} ∪ {(j)}``: a query's head variables, then atoms "this tensor is
nonzero at these coordinates", ``$n`` being a variable the query quantifies existentially
(docs/autoscheduling-asymptotic.md, step 3). The estimate assumes the uniform, independent
sparsity patterns of the paper's evaluation: a tensor is nonzero at a coordinate with
probability nnz / size, so a query's size is the product of its head's extents times the
probability that some assignment of its existential variables satisfies every atom, at most 1
(each sparse input is nonempty). The union's size is bounded by the sum of its queries'.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Query", "parse_cost", "estimated_tasks"]

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
    total = 0.0
    for query in queries:
        head = math.prod(float(extents[v]) for v in query.head)
        existential: dict[str, float] = {}
        probability = 1.0
        for tensor, arguments in query.atoms:
            shape = shapes.get(tensor)
            if shape is None:
                continue
            size = math.prod(float(n) for n in shape)
            probability *= nonzeros[tensor] / size if size else 0.0
            for mode, argument in enumerate(arguments):
                if argument.startswith("$"):
                    existential.setdefault(argument, float(shape[mode]))
        witnesses = math.prod(existential.values()) * probability
        total += head * min(1.0, witnesses)
    return total
