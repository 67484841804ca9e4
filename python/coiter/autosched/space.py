"""The schedule space of the search paper (Ziheng Wang, "Automatic Optimization of Sparse Tensor
Algebra Programs", MIT 2020), built from base candidates (candidates.py):

1. **Partition**: for each base loop order, the ways to cut its variables — ``split`` (chunks
   of a fixed size), ``divide`` (a fixed number of chunks), ``pos`` (the stored positions of a
   compressed level, optionally split: chunks of equal nonzeros), and ``fuse`` + ``pos`` + split
   (Merge-SpMV: a dense parent fused into its compressed child). At most ``MAX_STEPS`` cuts per
   partition (each cut multiplies the templates; a budget of seconds times only a dozen
   kernels). Partition passes (trimming.py) drop the redundant ones.
2. **Assignment**: each partition's derived loops are ordered and some are run on threads or
   vectorized (a *mapping*); mapping passes drop the redundant or inefficient ones. What
   survives is a :class:`Template`: commands with their numbers left open.
3. **Parameter filling** (:func:`fill`): split sizes, divide parts, pos chunk sizes, the
   chunking of a parallel loop (dynamic or static) and its race strategy, each race strategy
   judged by ``ct.schedule_problem``.

The space is lazy: templates are enumerated, schedules are filled and judged only when the
search draws them. This module holds the data model too; the passes themselves are in
trimming.py, handed in by the caller, so that each is a small predicate over these types.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ..notation import accesses
from .candidates import Candidate, Problem

ORDER, PARALLEL, VECTOR = "order", "parallel", "vector"

# Parameter values (the thesis's CPU values are 8, 16, 32 for every split; a position chunk
# holds nonzeros, so its sizes are those of TACO's load-balanced schedules).
SPLIT_SIZES = (16, 64, 256)
POSITION_CHUNKS = (256, 2048, 16384)
DIVIDE_PARTS_PER_THREAD = (1, 4, 16)
CHUNKINGS = ("dynamic", "static")
# Race strategies tried, in order, when a parallel loop's iterations share result entries.
RACES = ("no_races", "atomics", "temporary")
MAX_STEPS = 2
# Orders of more derived loops than this are not permuted (8! = 40320 mappings per partition).
_MAX_PERMUTED_LOOPS = 7


@dataclass(frozen=True)
class Step:
    """One cut of a partition: ``command`` is ``split``, ``divide``, ``pos`` (positions),
    ``pos_split`` (positions, split into chunks) or ``fuse`` (fuse, positions, split);
    ``access`` is the text of the access whose positions are iterated."""

    command: str
    variables: tuple[str, ...]
    access: str | None = None

    def __str__(self) -> str:
        where = f" of {self.access}" if self.access else ""
        return f"{self.command}({','.join(self.variables)}){where}"


@dataclass(frozen=True)
class Derived:
    """A loop of a partitioned statement. ``roots`` are the statement's variables it iterates
    (two for a fused loop); ``role`` is ``whole`` (an uncut variable or positions), ``outer``
    or ``inner`` (of a split); ``chunk_index``: it indexes chunks, so it may run in parallel."""

    name: str
    roots: tuple[str, ...]
    role: str
    step: Step | None = None
    chunk_index: bool = True
    positions: bool = False
    access: str | None = None  # the tensor whose positions it iterates


@dataclass(frozen=True)
class Partition:
    """The cuts and the loops they make, in the base loop order, with the commands that make
    them (``{0}``, ``{1}``: the parameters, one per cut)."""

    steps: tuple[Step, ...]
    loops: tuple[Derived, ...]
    commands: tuple[str, ...]

    def __str__(self) -> str:
        return " + ".join(str(s) for s in self.steps) or "no cut"


@dataclass(frozen=True)
class Mapping:
    """The order of a partition's loops, the loops on threads, and the vectorized loop."""

    order: tuple[Derived, ...]
    parallel: frozenset[Derived] = frozenset()
    vector: Derived | None = None


@dataclass(frozen=True)
class Context:
    """What a mapping pass may read besides the mapping."""

    problem: Problem
    partition: Partition
    loop_order: tuple[str, ...]


@dataclass(frozen=True)
class MappingPass:
    name: str
    reads: str  # ORDER, PARALLEL or VECTOR: the part of a mapping it needs
    keep: Callable[[Mapping, Context], bool]
    why: str


@dataclass(frozen=True)
class PartitionPass:
    name: str
    keep: Callable[[Partition, Problem], bool]
    why: str


@dataclass(frozen=True)
class Template:
    """A schedule with its numbers left open: a base candidate, a partition and a mapping."""

    base: Candidate
    partition: Partition
    mapping: Mapping

    def text(self, values: Sequence[int], chunks: str, race: str, vector_race: str) -> str:
        commands = [self.base.schedule] if self.base.schedule else []
        commands += [c.format(*values) for c in self.partition.commands]
        if self.mapping.order != self.partition.loops:
            commands.append(f"reorder({','.join(loop.name for loop in self.mapping.order)})")
        for loop in sorted(self.mapping.parallel, key=lambda d: d.name):
            commands.append(f"parallelize({loop.name},cpu_thread,{race},{chunks})")
        if self.mapping.vector is not None:
            commands.append(f"parallelize({self.mapping.vector.name},cpu_vector,{vector_race})")
        return ";".join(commands)


@dataclass
class SpaceCounts:
    """How much each stage kept: naive and trimmed counts, and what each pass dropped. The
    mapping counts cover the partitions expanded so far (``partitions_expanded``)."""

    loop_orders: int = 0
    loop_orders_kept: int = 0
    partitions: int = 0
    partitions_kept: int = 0
    partitions_expanded: int = 0
    mappings: int = 0
    templates: int = 0
    dropped_by: dict[str, int] = field(default_factory=dict)


@dataclass
class Space:
    """The space of a problem: the kept partitions of each kept base loop order, each expanded
    into its templates when first asked (a statement of four variables has over a hundred
    partitions and millions of naive mappings; the search times a dozen schedules)."""

    problem: Problem
    arms: list[tuple[Candidate, Partition]]
    counts: SpaceCounts
    extents: dict[str, int]
    nonzeros: dict[str, int]
    threads: int
    mapping_passes: Sequence[MappingPass] = ()
    _expanded: dict[int, list[Template]] = field(default_factory=dict)

    def templates_of(self, arm: int) -> list[Template]:
        """The templates of partition ``arm`` (expanded once, counted when expanded)."""
        found = self._expanded.get(arm)
        if found is None:
            base, partition = self.arms[arm]
            assert base.loop_order is not None
            context = Context(self.problem, partition, base.loop_order)
            found = [
                Template(base, partition, mapping)
                for mapping in mappings(partition, context, self.mapping_passes, self.counts)
            ]
            self._expanded[arm] = found
            self.counts.partitions_expanded += 1
            self.counts.templates += len(found)
        return found

    @property
    def templates(self) -> list[Template]:
        """Every template (expands every partition)."""
        return [t for arm in range(len(self.arms)) for t in self.templates_of(arm)]

    def parameters(self, template: Template) -> list[tuple[int, ...]]:
        """The parameter combinations of ``template`` (one value per cut)."""
        per_step = [self._values(step) for step in template.partition.steps]
        return list(itertools.product(*per_step))

    def size(self, template: Template) -> int:
        """How many schedules ``template`` fills (before race strategies are judged)."""
        chunkings = len(CHUNKINGS) if template.mapping.parallel else 1
        return math.prod(len(self._values(s)) for s in template.partition.steps) * chunkings

    def _values(self, step: Step) -> list[int]:
        """Parameter values of a cut; sizes that make a single chunk are dropped (GPU-8's
        "illegal parameters", on the CPU: a split that cuts nothing)."""
        if step.command == "split":
            extent = self.extents.get(step.variables[0])
            return [k for k in SPLIT_SIZES if extent is None or k < extent] or [SPLIT_SIZES[0]]
        if step.command == "divide":
            return [self.threads * k for k in DIVIDE_PARTS_PER_THREAD]
        if step.command == "pos":
            return [0]  # no parameter
        nnz = self.nonzeros.get((step.access or "").split("(")[0])
        return [k for k in POSITION_CHUNKS if nnz is None or k < nnz] or [POSITION_CHUNKS[0]]


def fill(space: Space, template: Template) -> Iterator[str]:
    """The legal schedules of ``template``: every parameter combination and chunking, each
    with the first race strategy (RACES order) that ``ct.schedule_problem`` accepts for its
    parallel loop (and atomics and temporary both when no_races is refused: which is faster
    depends on the data)."""
    vector_races = ("no_races", "parallel_reduction")
    chunkings = CHUNKINGS if template.mapping.parallel else CHUNKINGS[:1]
    for values in space.parameters(template):
        for chunks in chunkings:
            for vector_race in vector_races if template.mapping.vector else vector_races[:1]:
                legal_races = []
                for race in RACES if template.mapping.parallel else RACES[:1]:
                    text = template.text(values, chunks, race, vector_race)
                    if space.problem.legality(text) is None:
                        legal_races.append(text)
                        if race == "no_races":
                            break
                if legal_races:
                    yield from legal_races
                    break  # the first legal vector race strategy


def partitions(problem: Problem, loop_order: Sequence[str]) -> Iterator[Partition]:
    """Every partition of ``loop_order``'s variables with at most MAX_STEPS cuts, each
    variable cut at most once (re-splitting "could go on forever", §2.3)."""
    cuts: list[Step] = []
    for v in loop_order:
        cuts += [Step("split", (v,)), Step("divide", (v,))]
        for access in _compressed_accesses(problem, v):
            cuts += [Step("pos", (v,), access), Step("pos_split", (v,), access)]
    for u, v in zip(loop_order, loop_order[1:]):
        for access in _accesses_of(problem, (u, v)):
            cuts.append(Step("fuse", (u, v), access))
    yield _partition(problem, loop_order, ())
    for count in range(1, MAX_STEPS + 1):
        for steps in itertools.combinations(cuts, count):
            cut = [v for s in steps for v in s.variables]
            if len(cut) == len(set(cut)):
                yield _partition(problem, loop_order, steps)


def _partition(problem: Problem, loop_order: Sequence[str], steps: Sequence[Step]) -> Partition:
    used = set(problem.variables)

    def fresh(base: str) -> str:
        name, n = base, 1
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        return name

    by_variable = {v: s for s in steps for v in s.variables}
    loops: list[Derived] = []
    commands: list[str] = []
    done: set[Step] = set()
    for v in loop_order:
        step = by_variable.get(v)
        if step is None:
            loops.append(Derived(v, (v,), "whole"))
            continue
        if step in done:
            continue
        done.add(step)
        slot = "{" + str(steps.index(step)) + "}"
        tensor = (step.access or "").split("(")[0] or None
        if step.command in ("split", "divide"):
            outer, inner = fresh(v + "0"), fresh(v + "1")
            commands.append(f"{step.command}({v},{outer},{inner},{slot})")
            loops += [
                Derived(outer, (v,), "outer", step),
                Derived(inner, (v,), "inner", step, chunk_index=False),
            ]
        elif step.command == "pos":
            p = fresh(v + "p")
            commands.append(f"pos({v},{p},{step.access})")
            loops.append(Derived(p, (v,), "whole", step, positions=True, access=tensor))
        else:
            roots = step.variables
            p = fresh("".join(roots) + "p")
            if step.command == "fuse":
                f = fresh("".join(roots))
                commands.append(f"fuse({roots[0]},{roots[1]},{f})")
                commands.append(f"pos({f},{p},{step.access})")
            else:
                commands.append(f"pos({v},{p},{step.access})")
            outer, inner = fresh(p + "0"), fresh(p + "1")
            commands.append(f"split({p},{outer},{inner},{slot})")
            loops += [
                Derived(outer, roots, "outer", step, positions=True, access=tensor),
                Derived(inner, roots, "inner", step, False, positions=True, access=tensor),
            ]
    return Partition(tuple(steps), tuple(loops), tuple(commands))


def _compressed_accesses(problem: Problem, variable: str) -> list[str]:
    """The accesses (as text) that store ``variable`` at a compressed level."""
    found = []
    for text, name in _access_texts(problem):
        if any(lv.variable == variable and lv.kind == "compressed" for lv in problem.levels[name]):
            found.append(text)
    return found


def _accesses_of(problem: Problem, variables: tuple[str, str]) -> list[str]:
    """The accesses (as text) that index both ``variables``."""
    return [
        text
        for text, name in _access_texts(problem)
        if set(variables) <= {lv.variable for lv in problem.levels[name]}
    ]


def _access_texts(problem: Problem) -> list[tuple[str, str]]:
    """(text, tensor name) of each access on the right side."""
    return [(str(a), a.tensor.name) for a in accesses(problem.parsed[0].rhs)]


def mappings(
    partition: Partition,
    context: Context,
    passes: Sequence[MappingPass],
    counts: SpaceCounts,
) -> Iterator[Mapping]:
    """The mappings of ``partition`` that every pass keeps: orders of its loops, then at most
    one parallel loop set and one vectorized loop (naively every set of up to two parallel
    loops), each pass run as soon as the part of the mapping it reads is chosen."""
    loops = partition.loops
    by_stage = {
        stage: [p for p in passes if p.reads == stage] for stage in (ORDER, PARALLEL, VECTOR)
    }

    def kept(mapping: Mapping, stage: str) -> bool:
        for p in by_stage[stage]:
            if not p.keep(mapping, context):
                counts.dropped_by[p.name] = counts.dropped_by.get(p.name, 0) + 1
                return False
        return True

    orders: Iterator[tuple[Derived, ...]] = (
        itertools.permutations(loops) if len(loops) <= _MAX_PERMUTED_LOOPS else iter([loops])
    )
    parallel_sets: list[frozenset[Derived]] = [frozenset()] + [
        frozenset(c) for size in (1, 2) for c in itertools.combinations(loops, size)
    ]
    # The naive count: every order, parallel set and vectorized loop (or none).
    counts.mappings += math.factorial(len(loops)) * len(parallel_sets) * (len(loops) + 1)
    for order in orders:
        if not kept(Mapping(order), ORDER):
            continue
        for parallel in parallel_sets:
            if not kept(Mapping(order, parallel), PARALLEL):
                continue
            for vector in (None, *order):
                mapping = Mapping(order, parallel, vector)
                if kept(mapping, VECTOR):
                    yield mapping


def build(
    problem: Problem,
    bases: Sequence[Candidate],
    partition_passes: Sequence[PartitionPass],
    mapping_passes: Sequence[MappingPass],
    concordant: Callable[[Sequence[tuple[str, ...]], Problem], list[bool]],
    *,
    extents: dict[str, int] | None = None,
    nonzeros: dict[str, int] | None = None,
    threads: int = 1,
) -> Space:
    """The space over ``bases`` (their loop orders; the default candidate, whose order the
    compiler chooses, contributes no templates), trimmed by the passes; ``concordant`` judges
    the base loop orders (trimming.concordant_loop_orders). Partitions are enumerated and
    trimmed here; their mappings when the search first draws them (Space.templates_of)."""
    counts = SpaceCounts()
    ordered = [b for b in bases if b.loop_order is not None]
    counts.loop_orders = len(ordered)
    keep = concordant([b.loop_order for b in ordered if b.loop_order], problem)
    kept_bases = [b for b, k in zip(ordered, keep) if k]
    counts.loop_orders_kept = len(kept_bases)
    arms: list[tuple[Candidate, Partition]] = []
    for base in kept_bases:
        assert base.loop_order is not None
        for partition in partitions(problem, base.loop_order):
            counts.partitions += 1
            failed = next((p for p in partition_passes if not p.keep(partition, problem)), None)
            if failed is not None:
                counts.dropped_by[failed.name] = counts.dropped_by.get(failed.name, 0) + 1
                continue
            counts.partitions_kept += 1
            arms.append((base, partition))
    return Space(
        problem,
        arms,
        counts,
        extents or {},
        nonzeros or {},
        max(1, threads),
        tuple(mapping_passes),
    )


def recovered_order(order: Sequence[Derived]) -> tuple[str, ...]:
    """The statement's variables in the order they are recovered: a variable is recovered at
    its last derived loop (fused variables together, in their fuse's order)."""
    last: dict[str, tuple[int, int]] = {}
    for k, loop in enumerate(order):
        for rank, root in enumerate(loop.roots):
            last[root] = (k, rank)
    return tuple(sorted(last, key=lambda v: last[v]))
