"""Compiling index notation into kernels and calling them (docs/reference.md, "Kernels and the
cache")."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
from numpy.typing import DTypeLike

from . import _core, cuda_libraries
from .conversion import as_tensor
from .display import kernel_html
from .dtypes import value_dtype
from .errors import CompileError, ScheduleError, ShapeError, SignatureError
from .formats import Format, FormatLike, as_format
from .notation import (
    Access,
    Assignment,
    Binary,
    accesses,
    core_statement,
    core_variables,
    map_tensors,
)
from .parser import Parsed, parse
from .schedule import Schedule
from .schedule import schedule_text as text_of
from .scipy_interop import SCIPY_IN_PLACE
from .tensor import Tensor

logger = logging.getLogger("coiter")

_INT32_MAX = np.iinfo(np.int32).max
_INT64 = np.dtype(np.int64)
# What a kernel call may read in place without asarray's Python (see as_tensor).
_IN_PLACE_OPERANDS = (Tensor, np.ndarray) + SCIPY_IN_PLACE
# What a core kernel call gives (Kernel._called_in_place returns it).
_Result = TypeVar("_Result")
# Whether default_engine said that kernels are compiled with the C compiler (said once).
_warned_about_c_engine = False


class KernelPlan(Protocol):
    """Kernels that compute a statement together, called like one :class:`Kernel` (the
    autoscheduler's programs of two kernels: coiter/autosched/pipeline.py)."""

    def __call__(self, **operands: Any) -> Tensor: ...

    def _result_shape(self, operands: Mapping[str, Tensor], out: Tensor | None) -> list[int]: ...


class AutoScheduler(Protocol):
    """The choice behind ``schedule="auto"`` (coiter/autosched/api.py implements it; the package
    installs it with :func:`install_autoscheduler`, as the autoscheduler sits above the compiler
    in the layering: docs/architecture.md). It picks at once, timing nothing."""

    def for_formats(
        self,
        stmt: Parsed,
        formats: Mapping[str, Format],
        dtypes: Mapping[str, np.dtype[Any]],
        engine: str | None,
        bounded: bool = False,
    ) -> str:
        """The schedule text for ``stmt`` on tensors of these formats and dtypes (by name);
        ``bounded``: no schedule was given (auto as the default), so the choice may do only
        the work that is cheap for every statement."""
        ...

    def for_operands(
        self,
        stmt: Parsed,
        operands: Mapping[str, Tensor],
        formats: Mapping[str, Format],
        dtypes: Mapping[str, np.dtype[Any]],
        engine: str | None,
        bounded: bool = False,
    ) -> tuple[str | KernelPlan, dict[str, Format]]:
        """The schedule text for ``stmt`` on these operands, and the operands to convert first
        (by name, to a format); or kernels that compute ``stmt`` from the operands as given
        (and no conversions). ``bounded`` as for ``for_formats``."""
        ...

    def input_key(self, stmt: Parsed | None, operands: Mapping[str, Tensor]) -> Hashable:
        """What ``for_operands`` depends on besides the statement and the formats: a choice
        made for operands with an equal key may be reused (ct.evaluate remembers it). Called
        on every call that asks for "auto": it must cost next to nothing. ``stmt`` None: a
        statement no tuning names (the array operators' own, over tensors t0, t1, ...)."""
        ...


_autoscheduler: AutoScheduler | None = None


def install_autoscheduler(chooser: AutoScheduler) -> None:
    """Make ``chooser`` the choice behind ``schedule="auto"`` (coiter/__init__.py calls it)."""
    global _autoscheduler
    _autoscheduler = chooser


def autoscheduler() -> AutoScheduler:
    """The installed choice behind ``schedule="auto"``."""
    if _autoscheduler is None:
        raise ScheduleError("schedule='auto': the autoscheduler is not installed (import coiter)")
    return _autoscheduler


def is_auto(schedule: object, target: str = "cpu") -> bool:
    """Whether ``schedule`` asks for the autoscheduler's choice: ``"auto"``, or no schedule
    (None) for the CPU, where "auto" is the default (a GPU kernel without a schedule gets the
    GPU's default schedules: docs/gpu.md). ``"default"`` (or an empty schedule) asks for the
    compiler's default schedule instead."""
    if schedule is None:
        return target == "cpu"
    return isinstance(schedule, str) and schedule.strip() == "auto"


def default_engine() -> str:
    """The engine kernels use by default: LLVM when this build has it, else C (logged)."""
    global _warned_about_c_engine
    if _core.with_llvm:
        return "llvm"
    if not _warned_about_c_engine:
        logger.warning(
            "coiter was built without LLVM: kernels are compiled with the system C "
            "compiler (slower to compile, same results)"
        )
        _warned_about_c_engine = True
    return "c"


class TensorSpec:
    """What a kernel knows of one tensor: name, format and dtype (index width per call)."""

    def __init__(self, name: str, format: Format, dtype: DTypeLike) -> None:
        self.name, self.format, self.dtype = name, format, np.dtype(dtype)

    def __repr__(self) -> str:
        return f"TensorSpec({self.name!r}, {self.format}, {self.dtype})"


def _assembled_spec(spec: TensorSpec) -> TensorSpec:
    """``spec``, or a copy in the format the core computes it in and packs it from (see
    Kernel)."""
    built = spec.format.result_assembly_format
    return spec if built == spec.format else TensorSpec(spec.name, built, spec.dtype)


def _has_index_arrays(fmt: Format) -> bool:
    return any(level.name != "dense" for level in fmt.levels)


class Kernel:
    """A compiled statement; :func:`compile` makes one. Call it with its inputs by name:
    ``kern(A=A, x=x)``.

    A kernel specializes on the index width (int32 or int64) of its sparse inputs unless
    compiled with an ``index_dtype``; each width is compiled once.

    Attributes
    ----------
    inputs : list of str
        The names of the inputs, in order of appearance in the statement.
    """

    def __init__(
        self,
        assignment: Assignment,
        specs: dict[str, TensorSpec],
        result_spec: TensorSpec,
        *,
        index_dtype: DTypeLike | None = None,
        engine: str | None = None,
        schedule: str = "",
        target: str = "cpu",
        bound: dict[str, Any] | None = None,
        result_tensor: Tensor | None = None,
    ) -> None:
        self._assignment = assignment  # accesses refer to TensorSpec objects
        self._specs = specs  # name -> TensorSpec (inputs)
        self._result = result_spec
        # A hashed result level is inserted into in one pass when only dense levels lie above
        # it and none below (``dh``, ``h``); otherwise (``hs``) the kernel assembles the
        # format the core names (the hashed levels compressed) and the result is packed into
        # the hashed format afterwards (same entries).
        self._built = _assembled_spec(result_spec)
        if self._built is not result_spec:
            self._assignment = Assignment(
                Access(self._built, assignment.lhs.indices), assignment.rhs, assignment.accumulate
            )
        self._index_dtype = None if index_dtype is None else np.dtype(index_dtype)
        if target not in ("cpu", "cuda"):
            raise CompileError(f"unknown target {target!r} (expected 'cpu' or 'cuda')")
        if target == "cuda":
            cuda_libraries.prepare()
        self._engine = engine or ("cuda" if target == "cuda" else default_engine())
        self._schedule = schedule
        self._target = target
        self._bound = bound or {}
        self._result_tensor = result_tensor
        self._variants: dict[tuple[bool, tuple[Any, ...], bool], _core.CompiledKernel] = {}
        order = [a.tensor for a in accesses(assignment.rhs)]
        self.inputs = list(dict.fromkeys(spec.name for spec in order))
        # Where each result extent comes from: (input name, mode), or None.
        self._result_modes: list[tuple[str, int] | None] = []
        for v in assignment.lhs.indices:
            source = next(
                (
                    (a.tensor.name, a.indices.index(v))
                    for a in accesses(assignment.rhs)
                    if v in a.indices
                ),
                None,
            )
            self._result_modes.append(source)
        self._input_set = frozenset(self.inputs)
        self._sparse_inputs = tuple(
            name for name in self.inputs if _has_index_arrays(self._specs[name].format)
        )
        self._variant(
            self._index_dtype == np.int64,
            (np.dtype(np.int32),) * len(self._sparse_inputs) if self._index_dtype is None else (),
        )

    # -- compilation ---------------------------------------------------------------------
    def _variant(
        self, wide: bool, widths: tuple[Any, ...], assemble: bool = True
    ) -> _core.CompiledKernel:
        """The compiled kernel for a result index width and the sparse inputs' widths;
        ``assemble=False``: the compute-only kernel that fills a given result structure."""
        key = (wide, widths, assemble)
        core = self._variants.get(key)
        if core is not None:
            if assemble:
                self._core = core
            self._abi_inputs = core.tensor_names[:-1]
        else:
            default = self._index_dtype.name if self._index_dtype is not None else "int32"
            index_of = {name: np.dtype(w).name for name, w in zip(self._sparse_inputs, widths)}
            result_index = "int64" if wide else "int32"
            built = self._built

            def describe(spec: TensorSpec, _: int) -> tuple[str, Any, str, str]:
                index = result_index if spec is built else index_of.get(spec.name, default)
                return spec.name, spec.format, spec.dtype.name, index

            var_of = core_variables(lambda spec: spec.name, describe)
            statement = core_statement(self._assignment, var_of)
            try:
                core = _core.compile(
                    statement,
                    engine=self._engine,
                    schedule=self._schedule,
                    target=self._target,
                    assemble=assemble,
                )
            finally:
                _log_cache_warnings()
            self._variants[key] = core
            if assemble:
                self._core = core
            self._abi_inputs = core.tensor_names[:-1]
        return core

    @property
    def concrete(self) -> str:
        """The kernel's concrete index notation after scheduling, as text: its loops, where
        statements (workspaces, accumulators), relations of derived loops and loop tags."""
        return self._core.concrete

    def source(self, language: str | None = None) -> str:
        """The generated code, as text.

        Parameters
        ----------
        language : {"c", "llvm", "cuda"}, optional
            ``"c"``: readable C (what the C engine compiles); ``"llvm"``: the optimized LLVM IR;
            ``"cuda"``: the CUDA C++ of a ``target="cuda"`` kernel. By default the target's
            own language (C for the CPU).

        Returns
        -------
        str
        """
        if language is None:
            language = "cuda" if self._target == "cuda" else "c"
        return self._core.source(language)

    @property
    def stages(self) -> dict[str, str]:
        """What each stage of the compiler made of the statement, as text, in pipeline order:
        a dict from stage name to text with the keys ``"index notation"``, ``"concrete index
        notation"``, ``"scheduled"``, ``"iteration lattices"``, ``"lowered IR"``, ``"after IR
        passes"`` and, last, the engine's code (``"llvm"`` or ``"c"``, as ``source`` gives it).
        Printed when asked: compiling and calling kernels do not pay for it."""
        stages = dict(self._core.stages())
        engine = self._core.engine
        stages[engine] = self._core.source(engine)
        return stages

    def __repr__(self) -> str:
        operands = ", ".join(
            f"{n}: {self._specs[n].format} {self._specs[n].dtype}" for n in self.inputs
        )
        schedule = f" schedule={self._schedule}" if self._schedule else ""
        return (
            f"<coiter.Kernel {self._assignment} | {operands} -> {self._result.format} "
            f"{self._result.dtype} | target={self._target}{schedule}>"
        )

    def _repr_html_(self) -> str:
        """Jupyter's display: signature, concrete notation, generated source, cache state."""
        return kernel_html(
            statement=str(self._assignment),
            operands=[(n, self._specs[n].format, self._specs[n].dtype) for n in self.inputs],
            result=(self._result.name, self._result.format, self._result.dtype),
            schedule=self._schedule,
            target=self._target,
            engine=self._engine,
            concrete=self.concrete,
            source=self.source(),
            language="cuda" if self._target == "cuda" else "c",
            variants=len(self._variants),
            cache=_core.cache_info(),
        )

    # -- calls ---------------------------------------------------------------------------
    def __call__(self, out: Tensor | None = None, **tensors: Any) -> Tensor:
        """Run the kernel on the inputs given by name and return the result.

        Parameters
        ----------
        out : Tensor, optional
            A tensor of the kernel's result format and dtype whose structure is already
            assembled (a previous result): the kernel only computes its values.
        **tensors
            The inputs by name (:attr:`inputs`): coiter tensors, read without copying, or
            anything :func:`asarray` accepts (canonical SciPy CSR/CSC and NumPy arrays are
            read in place too). A kernel bound to a definition (``ct.compile(y)``) takes none.

        Returns
        -------
        Tensor

        Raises
        ------
        SignatureError
            If an input's format, dtype, order or index width differs from the kernel's.
        ShapeError
            If the inputs' extents disagree.
        FormatError
            If an input's arrays are malformed (coordinates out of range, ``pos`` decreasing).
        """
        if out is None and not self._bound and len(tensors) == len(self.inputs):
            storage = self._run_in_place(tensors)
            if storage is not None:
                return self._finish(storage)
        return self._call(out, tensors)

    def _in_place_operands(self, tensors: Mapping[str, Any]) -> list[Any] | None:
        """The call's operands as the core takes them in place (TensorStorage, or NumPy arrays
        as they are), when every input is a coiter tensor, a NumPy array or a canonical SciPy
        CSR/CSC matrix; None otherwise. No Tensor is made around a NumPy array (a solver's
        matvec makes this call at every step: each Tensor costs microseconds)."""
        data: list[Any] = []
        for name in self._abi_inputs:
            t = tensors.get(name)
            if type(t) is np.ndarray:
                data.append(t)
            elif isinstance(t, _IN_PLACE_OPERANDS):
                data.append(as_tensor(t, name)._storage)
            else:
                return None
        return data

    def _called_in_place(
        self, run: Callable[[list[Any]], _Result], tensors: Mapping[str, Any]
    ) -> _Result | None:
        """``run`` (a call of the last variant's core kernel) on the operands read in place
        (_in_place_operands); None when one cannot be, or needs converting or another variant
        (the caller then makes the general call, which converts)."""
        try:
            data = self._in_place_operands(tensors)
            return None if data is None else run(data)
        except SignatureError:
            return None

    def _run_in_place(self, tensors: Mapping[str, Any]) -> _core.TensorStorage | None:
        """The call's fast path: the result's storage, or None (see _called_in_place)."""
        return self._called_in_place(self._core.run, tensors)

    def _values(self, tensors: Mapping[str, Any]) -> Any:
        """The values array of the call's all-dense result (``np.asarray(self(**tensors))``,
        flat, without the Tensors around the call's operands and result)."""
        if len(tensors) == len(self.inputs) and self._built is self._result:
            values = self._called_in_place(self._core.run_values, tensors)
            if values is not None:
                return values
        return self._call(None, dict(tensors)).values

    def _finish(self, storage: _core.TensorStorage) -> Tensor:
        """The result tensor, packed into its hashed format when the kernel built another."""
        result = Tensor(storage, self._result.name)
        return result if self._built is self._result else result.asformat(self._result.format)

    def _call(self, out: Tensor | None, tensors: dict[str, Any]) -> Tensor:
        if not tensors.keys() <= self._input_set:
            unknown = sorted(set(tensors) - self._input_set)
            raise TypeError(f"unknown kernel inputs {unknown}; the inputs are {self.inputs}")
        operands = {}
        for name in self.inputs:
            t = tensors.get(name)
            if t is None:
                t = self._bound.get(name)
                if t is None:
                    missing = [n for n in self.inputs if n not in tensors and n not in self._bound]
                    raise TypeError(
                        f"missing kernel inputs {missing}; the inputs are {self.inputs}"
                    )
            operands[name] = as_tensor(t, name)
        shape = self._result_shape(operands, out)
        # Specialize on the index width of the sparse inputs (each width is its own kernel).
        if self._index_dtype is None:
            widths = tuple(operands[name]._storage.index_dtype for name in self._sparse_inputs)
            wide = _INT64 in widths
        else:
            widths = ()
            wide = self._index_dtype == np.int64
        if not wide and shape and math.prod(shape) > _INT32_MAX:
            wide = True
        target = out if out is not None else self._result_tensor
        if target is not None and (
            target.format != self._result.format or target.dtype != self._result.dtype
        ):
            raise SignatureError(
                f"out: the kernel computes a {self._result.format} tensor of "
                f"{self._result.dtype}, but out is {target.format} of {target.dtype}"
            )
        structure = None
        if (
            out is not None
            and _has_index_arrays(self._result.format)
            and self._built is self._result
        ):
            # Reuse out's assembled structure: a compute-only kernel fills in new values.
            wide = out.index_dtype == _INT64
            structure = out._storage
        core = self._variant(wide, widths, assemble=structure is None)
        storage = core.run([operands[name]._storage for name in self._abi_inputs], shape, structure)
        result = self._finish(storage)
        if target is not None:
            target._set_storage(result._storage)
            return target
        return result

    def _result_shape(self, operands: Mapping[str, Tensor], out: Tensor | None) -> list[int]:
        if out is not None:
            return list(out.shape)
        if self._result_tensor is not None:
            return list(self._result_tensor.shape)
        shape = []
        for m, source in enumerate(self._result_modes):
            if source is None:
                raise ShapeError(
                    f"the extent of mode {m} of the result {self._result.name} is not "
                    "determined by any input; pass out="
                )
            name, mode = source
            shape.append(operands[name]._data.shape[mode])
        return shape


# What a compilation attempt gives (with_reordered_operands returns it).
K = TypeVar("K")


def core_assignment(typed: Assignment) -> _core.Assignment:
    """A statement over TensorSpecs as the core's statement, its result as a kernel builds it
    (the hashed levels it cannot insert into in one pass compressed, see Kernel), with int32
    index arrays."""
    built = _assembled_spec(typed.lhs.tensor)
    if built is not typed.lhs.tensor:
        typed = Assignment(Access(built, typed.lhs.indices), typed.rhs, typed.accumulate)
    var_of = core_variables(
        lambda spec: spec.name, lambda spec, _: (spec.name, spec.format, spec.dtype.name, "int32")
    )
    return core_statement(typed, var_of)


def with_reordered_operands(
    typed: Assignment,
    formats: Mapping[str, Format],
    attempt: Callable[[dict[str, Format]], K],
    error: CompileError,
    schedule: str = "",
    target: str = "cpu",
) -> tuple[K, dict[str, Format]]:
    """When no loop order traverses every operand in its storage order (e.g. A(k,i) * B(k,j)
    with both in CSR and a CSR result), convert sparse operands to other mode orders
    (transpositions, O(nnz) each), as a user expects the expression to just work.

    ``typed`` is the statement over TensorSpecs (the operands' formats), ``formats`` maps
    input names to their formats, and ``attempt(formats)`` compiles with the inputs' formats
    overridden by name. The core proposes the conversions its legality check accepts, in order
    (``_core.operand_orders_that_traverse``: one loop order for all operands first, then the
    fewest conversions); the first is used, and logged. Returns ``(kernel, the format to
    convert each operand named to before a call)``; raises ``error`` when there is none. The
    choice depends on the statement and formats only, so callers may keep it."""
    candidates = _core.operand_orders_that_traverse(core_assignment(typed), schedule, target)
    if not candidates:
        raise error
    # (Lowering compiles whatever the legality check accepts: a CompileError from the first
    # candidate is a compiler bug, raised as it is rather than hidden by trying the next.)
    overrides = candidates[0]
    kernel = attempt(overrides)
    for name, fmt in overrides.items():
        logger.info(
            "coiter: converting %s from %s to %s so every operand is traversed in storage "
            "order (%s)",
            name,
            formats[name],
            fmt,
            error,
        )
    return kernel, overrides


def _unique_names(tensors: Sequence[Any]) -> dict[int, str]:
    """Input names: each tensor's name, else t0, t1, ... in order of appearance."""
    names, used = {}, set()
    for k, t in enumerate(tensors):
        base = getattr(t, "name", None) or f"t{k}"
        name, n = base, 1
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        names[id(t)] = name
    return names


def specs_for_tensors(
    assignment: Assignment,
    result_name: str,
    formats: Mapping[str, Format] | None = None,
) -> tuple[Assignment, dict[str, TensorSpec], TensorSpec, dict[str, Tensor]]:
    """Rewrite an assignment over Tensor objects into one over TensorSpecs; returns
    ``(assignment, specs, result_spec, bound)``. ``formats`` overrides inputs' formats by name."""
    tensors = list({id(a.tensor): a.tensor for a in accesses(assignment.rhs)}.values())
    names = _unique_names(tensors)
    result = assignment.lhs.tensor
    if result_name in names.values():
        result_name = f"{result_name}_result"
    formats = formats or {}
    specs = {
        id(t): TensorSpec(names[id(t)], formats.get(names[id(t)], t.format), t.dtype)
        for t in tensors
    }
    result_spec = TensorSpec(result_name, result.format, result.dtype)

    rewritten = Assignment(
        Access(result_spec, assignment.lhs.indices),
        map_tensors(assignment.rhs, lambda t: specs[id(t)]),
        assignment.accumulate,
    )
    bound = {names[id(t)]: t for t in tensors}
    return rewritten, {s.name: s for s in specs.values()}, result_spec, bound


def _compile_definition(
    tensor: Tensor,
    index_dtype: DTypeLike | None,
    schedule_text: str,
    target: str,
    engine: str | None,
) -> Kernel:
    """The kernel of the definition last assigned to ``tensor``, bound to its tensors."""
    definition = tensor._definition
    if definition is None:
        raise ValueError(
            f"{tensor._label()} has no definition to compile; assign one with y[i] = ... first"
        )

    def attempt(formats: dict[str, Format]) -> Kernel:
        assignment, specs, result_spec, bound = specs_for_tensors(
            definition, tensor.name or "out", formats
        )
        return Kernel(
            assignment,
            specs,
            result_spec,
            index_dtype=index_dtype,
            engine=engine,
            schedule=schedule_text,
            target=target,
            bound=bound,
            result_tensor=tensor,
        )

    try:
        return attempt({})
    except CompileError as error:
        rewritten, _, _, operands = specs_for_tensors(definition, tensor.name or "out")
        kernel, overrides = with_reordered_operands(
            rewritten,
            {name: t.format for name, t in operands.items()},
            attempt,
            error,
            schedule_text,
            target,
        )
        kernel._bound.update({name: operands[name].asformat(f) for name, f in overrides.items()})
        return kernel


def compile(
    stmt: str | Tensor | Parsed,
    formats: Mapping[str, FormatLike] | None = None,
    dtype: DTypeLike = np.float64,
    dtypes: Mapping[str, DTypeLike] | None = None,
    index_dtype: DTypeLike | None = None,
    schedule: Schedule | str | None = None,
    target: str = "cpu",
    engine: str | None = None,
) -> Kernel:
    """Compile a statement into a :class:`Kernel`.

    Kernels are cached by signature (the statement up to renaming, formats, dtypes, index
    widths, schedule, target and engine), in memory and on disk: compiling an equal signature
    again generates no code.

    Parameters
    ----------
    stmt : str or Tensor
        A statement in the string syntax (``"y(i) = A(i,j) * x(j)"``), or a tensor whose
        definition was assigned with ``y[i] = ...``: the kernel is then bound to that
        definition's tensors (``kern()`` recomputes ``y``), and is the kernel that computes
        ``y`` when its data is needed, so the definition is not compiled again.
    formats : mapping of str to Format or str, optional
        Each tensor's format by name; tensors not named are dense.
    dtype : dtype, default float64
        The value dtype of tensors not named in ``dtypes``.
    dtypes : mapping of str to dtype, optional
        Value dtypes by tensor name.
    index_dtype : {None, numpy.int32, numpy.int64}, optional
        The index width of the sparse inputs and the result. By default the kernel
        specializes on the widths of the tensors it is called with.
    schedule : Schedule or str, optional
        Scheduling commands (docs/schedules.md). None (the default) is ``"auto"`` on the CPU:
        a stored tuning or the asymptotic frontier's pick for these formats
        (docs/autoscheduling.md), usually the compiler's default schedule;
        ``"default"`` is that schedule itself (the outermost loop parallel where that is
        safe). A ``target="cuda"`` kernel without one gets the GPU's default schedules.
    target : {"cpu", "cuda"}, default "cpu"
        Where the kernel runs.
    engine : {"llvm", "c"}, optional
        The CPU code generator: LLVM's JIT (the default when coiter was built with LLVM) or
        the system's C compiler.

    Returns
    -------
    Kernel

    Raises
    ------
    ParseError
        If the statement is malformed.
    FormatError
        If a format is malformed or the result's cannot be computed (DIA).
    ScheduleError
        If the schedule is illegal for the statement.
    CompileError
        If code generation fails.

    Examples
    --------
    >>> kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr"})
    >>> kern.inputs
    ['A', 'x']
    >>> A = ct.from_coords([[0, 0], [1, 2]], [2.0, 3.0], shape=(2, 3), format="csr")
    >>> kern(A=A, x=np.ones(3)).to_numpy()
    array([2., 3.])
    """
    if schedule is None and isinstance(stmt, Tensor):
        schedule = stmt._schedule
    if is_auto(schedule, target):
        schedule = _auto_schedule(stmt, formats, dtype, dtypes, engine, bounded=schedule is None)
    schedule_text = text_of(schedule)
    if isinstance(stmt, Tensor):
        stmt._kernel = _compile_definition(stmt, index_dtype, schedule_text, target, engine)
        return stmt._kernel
    typed, inputs, result_spec = typed_statement(stmt, formats, dtype, dtypes)
    return Kernel(
        typed,
        inputs,
        result_spec,
        index_dtype=index_dtype,
        engine=engine,
        schedule=schedule_text,
        target=target,
    )


def _auto_schedule(
    stmt: str | Tensor | Parsed,
    formats: Mapping[str, FormatLike] | None,
    dtype: DTypeLike,
    dtypes: Mapping[str, DTypeLike] | None,
    engine: str | None,
    bounded: bool,
) -> str:
    """``schedule="auto"`` for ``ct.compile``: the autoscheduler's pick for the formats
    (``bounded``: no schedule was given)."""
    if isinstance(stmt, Tensor):
        definition = stmt._definition
        if definition is None:
            raise ValueError(f"{stmt._label()} has no definition to compile; assign one first")
        rewritten, specs, result_spec, _ = specs_for_tensors(definition, stmt.name or "out")
        chosen = {n: s.format for n, s in specs.items()}
        chosen[result_spec.name] = result_spec.format
        kinds = {n: s.dtype for n, s in specs.items()}
        kinds[result_spec.name] = result_spec.dtype
        return autoscheduler().for_formats(parse(str(rewritten)), chosen, kinds, engine, bounded)
    parsed = parse(stmt) if isinstance(stmt, str) else stmt
    refs = parsed[1]
    formats = dict(formats or {})
    dtypes = dict(dtypes or {})
    return autoscheduler().for_formats(
        parsed,
        {n: as_format(formats.get(n, "dense"), r.order) for n, r in refs.items()},
        {n: value_dtype(dtypes.get(n, dtype), f"tensor {n}") for n in refs},
        engine,
        bounded,
    )


def typed_statement(
    stmt: str | Parsed,
    formats: Mapping[str, FormatLike] | None,
    dtype: DTypeLike,
    dtypes: Mapping[str, DTypeLike] | None,
) -> tuple[Assignment, dict[str, TensorSpec], TensorSpec]:
    """``compile``'s statement (a string or a parsed statement) over TensorSpecs:
    ``(assignment, inputs by name, result spec)``."""
    assignment, refs = parse(stmt) if isinstance(stmt, str) else stmt
    formats = dict(formats or {})
    dtypes = dict(dtypes or {})
    result_ref = assignment.lhs.tensor
    specs = {}
    for name, ref in refs.items():
        fmt = as_format(formats.get(name, "dense"), ref.order)
        specs[name] = TensorSpec(name, fmt, value_dtype(dtypes.get(name, dtype), f"tensor {name}"))

    result_spec = specs[result_ref.name]
    rhs = map_tensors(assignment.rhs, lambda ref: specs[ref.name])
    if any(a.tensor is result_spec for a in accesses(rhs)) or assignment.accumulate:
        # The result's current contents are an input: y(i) += e reads y as it is.
        current = TensorSpec(result_spec.name, result_spec.format, result_spec.dtype)
        rhs = map_tensors(rhs, lambda s: current if s is result_spec else s)
        if assignment.accumulate:
            rhs = Binary("add", Access(current, assignment.lhs.indices), rhs)
        specs[result_spec.name + " (current)"] = current
        result_spec = TensorSpec(result_spec.name + "_out", result_spec.format, result_spec.dtype)
    typed = Assignment(Access(result_spec, assignment.lhs.indices), rhs)
    inputs = {s.name: s for s in specs.values() if s is not specs[result_ref.name]}
    return typed, inputs, result_spec


def schedule_problem(
    stmt: str | Tensor | Parsed,
    schedule: Schedule | str,
    formats: Mapping[str, FormatLike] | None = None,
    dtype: DTypeLike = np.float64,
    dtypes: Mapping[str, DTypeLike] | None = None,
    target: str = "cpu",
) -> str | None:
    """Why ``schedule`` is illegal for ``stmt``, or ``None`` when it is legal.

    The reason is the message :func:`compile` would raise as :class:`ScheduleError`, naming
    the command and the failed condition. It is decided without lowering or compiling
    anything (no kernel is built or cached), so a search over schedules can ask it of every
    candidate.

    Parameters
    ----------
    stmt : str or Tensor
        As for :func:`compile`.
    schedule : Schedule or str
        The schedule, or its text; malformed text is a reason too.
    formats, dtype, dtypes, target
        As for :func:`compile`; for a tensor with a definition (``y[i] = ...``), ``formats``
        overrides its tensors' formats by name.

    Returns
    -------
    str or None

    Examples
    --------
    >>> ct.schedule_problem("y(i) = A(i,j) * x(j)", "reorder(j,i)", formats={"A": "csc"}) is None
    True
    >>> print(ct.schedule_problem("y(i) = A(i,j) * x(j)", "reorder(j,i)", formats={"A": "csr"}))
    schedule: loop order: A(i,j) would be traversed out of order ...
    """
    try:
        text = text_of(schedule)
    except ScheduleError as error:
        return str(error)
    if isinstance(stmt, Tensor):
        definition = stmt._definition
        if definition is None:
            raise ValueError(f"{stmt._label()} has no definition; assign one with y[i] = ... first")
        _, _, _, tensors = specs_for_tensors(definition, stmt.name or "out")
        unknown = sorted(set(formats or {}) - set(tensors))
        if unknown:
            raise ValueError(
                f"formats: the definition has no tensor named {unknown[0]!r} (its tensors are "
                f"{', '.join(sorted(tensors))})"
            )
        chosen = {name: as_format(fmt, tensors[name].ndim) for name, fmt in (formats or {}).items()}
        typed, _, result_spec, _ = specs_for_tensors(definition, stmt.name or "out", chosen)
    else:
        typed, _, result_spec = typed_statement(stmt, formats, dtype, dtypes)
    problem = _core.schedule_problem(core_assignment(typed), text, target=target)
    return problem or None


def _log_cache_warnings() -> None:
    """Log the core's reports of discarded disk cache entries (the core does not log)."""
    for message in _core.take_cache_warnings():
        logger.warning("coiter: %s", message)
