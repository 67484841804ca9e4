"""A frontier member run as the kernels it lowers to (docs/autoscheduling-asymptotic.md, step
5): one kernel, or two when a workspace is computed as a tensor of its own first. Each kernel
reads its operands in the formats it was lowered for (an operand read transposed is converted
on every call, as the conversion is part of the program's cost), and a result written
transposed is converted back to the format asked for.

``schedule="auto"`` hands a :class:`Pipeline` to ``ct.evaluate`` in place of a kernel when the
frontier member it picks is not one schedule of the statement (compiler.KernelPlan).
``ct.autoschedule`` times pipelines beside schedules; a tuning that chose one stores it in the
tuning database as :func:`pipeline_text` (a schedule column holding the kernels), which
:func:`stages_of` reads back."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from numpy.typing import DTypeLike

from ..compiler import Kernel, compile
from ..conversion import as_tensor
from ..errors import ShapeError
from ..formats import Format
from ..notation import accesses
from ..parser import parse
from ..tensor import Tensor

__all__ = ["KernelStage", "Pipeline", "pipeline_text", "stages_of", "describe"]

# What starts a pipeline's text; no schedule command is spelled so (Schedule.parse rejects it).
PIPELINE_PREFIX = "pipeline:"


@dataclass(frozen=True)
class KernelStage:
    """One kernel of a lowered candidate: its statement, the formats of its tensors by
    name (operands read transposed have their modes reordered), its schedule text and the
    name of the tensor it computes."""

    statement: str
    formats: dict[str, str]
    schedule: str
    result: str


class Pipeline:
    """The kernels of a lowered frontier member, compiled once, called like a kernel:
    ``pipeline(**operands)`` returns the result in ``result_format``."""

    def __init__(
        self,
        stages: Sequence[KernelStage],
        result_format: Format,
        dtype: DTypeLike,
        dtypes: Mapping[str, DTypeLike],
        engine: str | None = None,
    ) -> None:
        if not stages:
            raise ValueError("a pipeline needs at least one kernel")
        self.stages = list(stages)
        self.result_format = result_format
        self.kernels: list[Kernel] = [
            compile(
                stage.statement,
                formats=stage.formats,
                dtype=dtype,
                dtypes=dtypes,
                schedule=stage.schedule,
                engine=engine,
            )
            for stage in self.stages
        ]
        # The result's modes, by the operand mode that gives each its extent (the last stage
        # computes the result; its left side names the statement's result modes). Parsed once:
        # ct.evaluate asks for the result's shape on every call.
        last = parse(self.stages[-1].statement)[0]
        self._result_indices = [v.name for v in last.lhs.indices]
        self._accesses = [a for stage in self.stages for a in _accesses_of(stage.statement)]

    def __call__(self, **operands: Any) -> Tensor:
        values: dict[str, Any] = dict(operands)
        result: Tensor | None = None
        for stage, kern in zip(self.stages, self.kernels, strict=True):
            inputs = {}
            for name in kern.inputs:
                if name not in values:
                    raise ValueError(f"no operand named {name!r} (the statement reads it)")
                tensor = as_tensor(values[name])
                fmt = stage.formats.get(name)
                inputs[name] = tensor if fmt is None else tensor.asformat(fmt)
            result = kern(**inputs)
            values[stage.result] = result
        assert result is not None  # at least one kernel (checked in __init__)
        # A member that writes its result transposed: converted back.
        return result.asformat(self.result_format)

    def _result_shape(self, operands: Mapping[str, Tensor], out: Tensor | None) -> list[int]:
        """The result's extents, read from the operands (ct.evaluate's dense-size check)."""
        if out is not None:
            return list(out.shape)
        extents: dict[str, int] = {}
        for name, indices in self._accesses:
            if name in operands:
                for mode, v in enumerate(indices):
                    extents.setdefault(v, operands[name].shape[mode])
        missing = [v for v in self._result_indices if v not in extents]
        if missing:
            raise ShapeError(f"the extent of the result's index {missing[0]} is not determined")
        return [extents[v] for v in self._result_indices]


def pipeline_text(stages: Sequence[KernelStage]) -> str:
    """The kernels as one line of text (JSON after PIPELINE_PREFIX): what a tuning stores in
    place of a schedule when it chose a pipeline."""
    kernels = [[s.statement, dict(sorted(s.formats.items())), s.schedule, s.result] for s in stages]
    return PIPELINE_PREFIX + json.dumps(kernels)


def stages_of(text: str) -> list[KernelStage] | None:
    """The kernels of a :func:`pipeline_text` (None: ``text`` is a schedule). A text that
    starts like a pipeline but does not read as one raises ValueError (a damaged tuning)."""
    if not text.startswith(PIPELINE_PREFIX):
        return None
    try:
        kernels = json.loads(text[len(PIPELINE_PREFIX) :])
        return [KernelStage(str(s), dict(f), str(sched), str(r)) for s, f, sched, r in kernels]
    except (ValueError, TypeError) as error:
        raise ValueError(f"not the text of a pipeline of kernels: {text!r} ({error})") from None


def describe(text: str) -> str:
    """A schedule's text as it is, a pipeline's as its kernels for a person to read:
    ``w(k,j) = C(k,j) * D(k,j) [w:ds C:ds D:ds] reorder(k,j) ; A(i,j) = ...``."""
    stages = stages_of(text)
    if stages is None:
        return text
    return " ; ".join(
        f"{s.statement} [{' '.join(f'{n}:{f}' for n, f in s.formats.items())}] {s.schedule}"
        for s in stages
    )


def _accesses_of(statement: str) -> list[tuple[str, list[str]]]:
    assignment = parse(statement)[0]
    return [(a.tensor.name, [v.name for v in a.indices]) for a in accesses(assignment.rhs)]
