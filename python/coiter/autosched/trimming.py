"""Trimming passes (search paper §2.5.1–2.5.2): small named predicates that drop partitions
and mappings which are redundant or almost surely slower than another, before any schedule is
judged or compiled.

A *partition pass* sees a partition (the split, divide, pos and fuse steps). A *mapping pass*
sees a mapping (the order of the derived loops, the parallel loops and the vectorized loop) in
its :class:`Context`. Passes are heuristics, not legality: ``ct.schedule_problem`` stays the
authority on what compiles, and is asked of every schedule that survives. Each pass says which
part of a mapping it reads (``ORDER``, ``PARALLEL``, ``VECTOR``), so the space can run it as
soon as that part is chosen and skip the rest of a doomed branch.
"""

from __future__ import annotations

from collections.abc import Sequence

from .candidates import Level, Problem
from .space import (
    ORDER,
    PARALLEL,
    VECTOR,
    Context,
    Mapping,
    MappingPass,
    Partition,
    PartitionPass,
    recovered_order,
)

# -- partition passes ----------------------------------------------------------------------


def no_dense_fuse(partition: Partition, problem: Problem) -> bool:
    """Theorem 1: fusing two dense loops reaches no partition that splitting them separately
    does not, so a fuse is kept only when its inner variable is stored compressed (then the
    fused loop iterates positions: Merge-SpMV's load balance)."""
    for step in partition.steps:
        if step.command == "fuse":
            level = _level_of(problem, step.access, step.variables[1])
            if level is None or level.random_access:
                return False
    return True


def fuse_within_one_tensor(partition: Partition, problem: Problem) -> bool:
    """Table 2.1: fusing loops of different tensors is hopeless; a fuse must join a level to
    the level directly above it in the access whose positions it iterates."""
    for step in partition.steps:
        if step.command == "fuse":
            level = _level_of(problem, step.access, step.variables[1])
            if level is None or not level.above or level.above[-1] != step.variables[0]:
                return False
    return True


# -- mapping passes ------------------------------------------------------------------------


def keeps_loop_order(mapping: Mapping, context: Context) -> bool:
    """The base candidate fixed the order of the statement's variables (its asymptotic
    choice); a mapping only places the derived loops: the variables, in the order in which
    their last derived loop appears, follow the base order."""
    return recovered_order(mapping.order) == context.loop_order


def sparse_iteration(mapping: Mapping, context: Context) -> bool:
    """Pass 0: a loop over the positions of a level comes after every loop of the variables
    stored above it in that access (its bounds need their coordinates)."""
    for k, loop in enumerate(mapping.order):
        if not loop.positions or loop.access is None:
            continue
        level = _level_of(context.problem, loop.access, loop.roots[-1])
        if level is None:
            continue
        above = set(level.above) - set(loop.roots)
        if any(set(inner.roots) & above for inner in mapping.order[k + 1 :]):
            return False
    return True


def one_parallel_loop(mapping: Mapping, context: Context) -> bool:
    """CPU-1: at most one loop runs on threads."""
    return len(mapping.parallel) <= 1


def parallel_outermost(mapping: Mapping, context: Context) -> bool:
    """CPU-2: only the outermost loop runs on threads (a parallel region per iteration of an
    outer loop costs more than it gains)."""
    return all(loop is mapping.order[0] for loop in mapping.parallel)


def parallel_chunks_only(mapping: Mapping, context: Context) -> bool:
    """The parallelism rule of §2.5: a chunk is never divided across threads, so only a loop
    that indexes chunks (an undivided variable, or the outer loop of a split or divide) runs
    in parallel."""
    return all(loop.chunk_index for loop in mapping.parallel)


def no_useless_partition(mapping: Mapping, context: Context) -> bool:
    """CPU-3: a split whose two loops stay adjacent (outer directly around inner) and neither
    runs in parallel nor is vectorized changes nothing but adds a loop: the variable should not
    have been split."""
    special = set(mapping.parallel) | ({mapping.vector} if mapping.vector else set())
    for outer, inner in zip(mapping.order, mapping.order[1:]):
        if (
            outer.role == "outer"
            and inner.role == "inner"
            and outer.roots == inner.roots
            and outer.step == inner.step
            and not special & {outer, inner}
        ):
            return False
    return True


def vector_innermost(mapping: Mapping, context: Context) -> bool:
    """CPU-5: only one of the last two loops is vectorized, and only a contiguous one (a
    split's inner loop or an undivided variable); strided vector access ruins locality."""
    vector = mapping.vector
    if vector is None:
        return True
    return vector in mapping.order[-2:] and vector.role in ("inner", "whole")


def useful_workspace(order: Sequence[str], problem: Problem) -> bool:
    """A workspace over the innermost loop's variable (candidates.workspace_candidates) is kept
    only when that variable indexes the result at a level without dense random access: the
    workspace then turns scattered insertions into a sparse level into an append of the
    accumulated row. Into a dense result level the products already accumulate in place, so a
    workspace only adds a copy; over a summed variable it holds one scalar, which the compiler
    keeps in a register anyway."""
    if not order:
        return False
    level = next((lv for lv in problem.levels[problem.result] if lv.variable == order[-1]), None)
    return level is not None and level.kind != "dense"


def concordancy(order: Sequence[str], problem: Problem) -> int:
    """The number of pairwise level-order preferences of the tensors (the result's included)
    that the loop order ``order`` obeys: for each access and each pair of its levels, +1 when
    the upper level's variable comes first (§2.5.2, CPU-4)."""
    position = {v: k for k, v in enumerate(order)}
    score = 0
    for levels in problem.levels.values():
        for k, upper in enumerate(levels):
            for lower in levels[k + 1 :]:
                if upper.variable in position and lower.variable in position:
                    score += position[upper.variable] < position[lower.variable]
    return score


def concordant_loop_orders(orders: Sequence[tuple[str, ...]], problem: Problem) -> list[bool]:
    """CPU-4, on the loop orders of base candidates: which of ``orders`` have the best
    concordancy score among them (data layouts prefer their storage order)."""
    scores = [concordancy(order, problem) for order in orders]
    best = max(scores, default=0)
    return [score == best for score in scores]


def _level_of(problem: Problem, access: str | None, variable: str) -> Level | None:
    """The level that stores ``variable`` in ``access`` (a tensor's name or an access's text)."""
    if access is None:
        return None
    levels = problem.levels.get(access.split("(")[0], ())
    return next((lv for lv in levels if lv.variable == variable), None)


PARTITION_PASSES: tuple[PartitionPass, ...] = (
    PartitionPass("no dense fuse", no_dense_fuse, "fused loops are both dense"),
    PartitionPass("fuse within one tensor", fuse_within_one_tensor, "fused levels not adjacent"),
)

# Cheapest and most selective first, each at the earliest part of the mapping it can judge.
MAPPING_PASSES: tuple[MappingPass, ...] = (
    MappingPass("keeps loop order", ORDER, keeps_loop_order, "changes the base loop order"),
    MappingPass("sparse iteration", ORDER, sparse_iteration, "positions before their parent"),
    MappingPass("one parallel loop", PARALLEL, one_parallel_loop, "several parallel loops"),
    MappingPass("parallel outermost", PARALLEL, parallel_outermost, "inner parallel loop"),
    MappingPass("parallel chunks only", PARALLEL, parallel_chunks_only, "splits a chunk"),
    MappingPass("vector innermost", VECTOR, vector_innermost, "vector loop not innermost"),
    MappingPass("no useless partition", VECTOR, no_useless_partition, "split changes nothing"),
)
