"""One-call evaluation: ``ct.evaluate("y(i) = A(i,j) * x(j)", A=A, x=x)`` and ``ct.einsum``."""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias

import numpy as np
from numpy.typing import DTypeLike

from .auto_keys import auto_input_key
from .compiler import (
    Kernel,
    KernelPlan,
    autoscheduler,
    is_auto,
    typed_statement,
    with_reordered_operands,
)
from .compiler import compile as compile_kernel
from .conversion import as_tensor
from .creation import from_coords
from .errors import CompileError, ParseError, ShapeError
from .format_inference import check_dense_size, infer_result_format
from .formats import Format, FormatLike, as_format, is_all_dense
from .notation import (
    Assignment,
    accesses,
    check_extents,
    check_index_extents,
    core_expression,
    core_variables,
    map_tensors,
)
from .parser import Parsed, TensorRef, parse, parse_once
from .schedule import Schedule, schedule_text
from .tensor import Tensor

# The kernels ct.evaluate chose, by what decides the choice: the statement's text, the
# operands' names, formats and dtypes, and the options. Parsing the text, inferring the
# result's format and dtype and building the compiler's expression cost several times the call
# of a small kernel (SpAdd of two 1,000-row CSR matrices: 0.9 ms a call of ct.evaluate against
# 0.08 ms a call of the kernel, SciPy 0.2 ms); the compiler's own cache still holds the kernels.
# Least recently used first; cleared with the compiler's (ct.clear_cache, kernel_cache.py).
_CHOSEN_KERNELS_KEPT = 256
# A kernel's inputs when they are not the statement's operands (repeated operands read under
# names of their own, some converted to other mode orders): for each input name, the operand it
# is and the format to convert it to before each call (None: as it is). It follows from the
# statement and the operands' formats alone, so a choice that has one is remembered too.
Inputs: TypeAlias = dict[str, tuple[str, Format | None]]
# (kernel, result format, result dtype, None or the kernel's inputs, the formats to convert
# operands to before each call: see choose_kernel)
Choice: TypeAlias = tuple[
    Kernel | KernelPlan, Format, np.dtype[Any], Inputs | None, dict[str, Format]
]
_chosen_kernels: OrderedDict[Hashable, Choice] = OrderedDict()


def forget_chosen_kernels() -> None:
    """Empty ct.evaluate's table of kernels (ct.clear_cache calls it)."""
    _chosen_kernels.clear()


def _choice_key(
    statement: str,
    operands: Mapping[str, Tensor],
    out_format: FormatLike | None,
    dtype: DTypeLike | None,
    engine: str | None,
    schedule: Schedule | str | tuple[str, bool, Hashable] | None,
    target: str = "cpu",
) -> Hashable:
    """What decides ct.evaluate's kernel (unhashable when an option is, such as an
    out_format given as a list of levels: such calls are not remembered). ``schedule`` is
    ``("auto", bounded, key)`` for the autoscheduler's pick (``bounded``: no schedule was
    given), ``key`` what it depends on."""
    operand_key = tuple((name, t.format, t.dtype) for name, t in operands.items())
    schedule_key = schedule if not isinstance(schedule, Schedule) else str(schedule)
    return (
        statement,
        operand_key,
        out_format,
        None if dtype is None else np.dtype(dtype),
        engine,
        schedule_key,
        target,
    )


def inferred_result_dtype(assignment: Assignment, tensors: Mapping[str, Tensor]) -> np.dtype[Any]:
    """NumPy's result type of the right side, computed by the compiler's promotion rules."""

    def describe(ref: TensorRef, _: int) -> tuple[str, Any, str, str]:
        t = tensors[ref.name]
        return ref.name, t.format, t.dtype.name, "int64"

    var_of = core_variables(lambda ref: ref.name, describe)
    return np.dtype(core_expression(assignment.rhs, var_of).dtype)


def evaluate(
    statement: str,
    out_format: FormatLike | None = None,
    dtype: DTypeLike | None = None,
    engine: str | None = None,
    schedule: Schedule | str | None = None,
    target: str = "cpu",
    **tensors: Any,
) -> Tensor:
    """Compute a statement of index notation on the tensors given by name.

    The statement is compiled for the operands' formats and dtypes (once: kernels are cached
    by signature) and run; the result is a new tensor.

    Parameters
    ----------
    statement : str
        The statement in the string syntax, e.g. ``"y(i) = A(i,j) * x(j)"``. The result is new,
        so it cannot also be an operand, and ``+=`` is refused.
    out_format : Format or str, optional
        The result's format. By default it is inferred, as SciPy would choose
        (docs/reference.md, "Result formats"): sparse when every operand is, or when a sparse
        operand masks the whole product; dense otherwise.
    dtype : dtype, optional
        The result's value dtype; by default NumPy's promotion of the operands' dtypes.
    engine : {"llvm", "c"}, optional
        The CPU code generator; by default LLVM when coiter was built with it.
    schedule : Schedule or str, optional
        Scheduling commands for the kernel (docs/schedules.md). None (the default) is
        ``"auto"`` on the CPU: the autoscheduler's choice, timing nothing
        (docs/autoscheduling.md); ``"default"`` is the compiler's default schedule. A
        ``target="cuda"`` kernel without one gets the GPU's default schedules.
    target : {"cpu", "cuda"}, default "cpu"
        Where the kernel runs; ``"cuda"`` computes on an NVIDIA GPU (docs/gpu.md).
    **tensors
        The operands by the names the statement uses: tensors, NumPy arrays, SciPy sparse
        matrices, or anything :func:`asarray` accepts.

    Returns
    -------
    Tensor
        The result, named as in the statement.

    Raises
    ------
    ParseError
        If the statement is malformed, names its result on the right, or uses ``+=``.
    ShapeError
        If operands' extents disagree, or an inferred dense result would exceed
        ``ct.config.max_dense_bytes``.
    ScheduleError
        If the schedule is illegal for the statement.

    See Also
    --------
    compile : compile once, call many times.
    einsum : the same with NumPy's subscripts.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> A = sp.random_array((5, 4), density=0.5, format="csr", random_state=0)
    >>> x = np.arange(4.0)
    >>> y = ct.evaluate("y(i) = A(i,j) * x(j)", A=A, x=x)
    >>> np.allclose(y.to_numpy(), A @ x), y.format
    (True, Format('d'))
    """
    assignment, refs = parse_once(statement) if isinstance(statement, str) else parse(statement)
    result_name = assignment.lhs.tensor.name
    if assignment.accumulate:
        at = statement.index("+=") + 1
        raise ParseError(
            f"ct.evaluate computes a new result, so it has nothing to accumulate into "
            f"('+=' at column {at} in {statement!r}): write 'r(i) = y(i) + ...' with "
            "the old tensor y as an input and a new result name",
            column=at,
        )
    column = refs[result_name].column
    if column is not None:
        # The result is a new tensor: a right side naming it would read a tensor that does
        # not exist yet (ct.compile, whose results can be passed in, allows it).
        raise ParseError(
            f"the result {result_name} of ct.evaluate is new and cannot also be an "
            f"input (column {column} in {statement!r}); give the result another name",
            column=column,
        )
    operands = checked_operands(assignment, refs, tensors, "ct.evaluate")
    chosen: Choice | None
    # The autoscheduler's pick depends on the operands' statistics and on the tuning database
    # (which a tuning may have changed since): remembered by both.
    choice_schedule = (
        # (schedule None: auto bounded, as the default.)
        (
            "auto",
            schedule is None,
            auto_input_key(
                statement if isinstance(statement, str) else None, (assignment, refs), operands
            ),
        )
        if is_auto(schedule, target)
        else schedule
    )
    key = _choice_key(statement, operands, out_format, dtype, engine, choice_schedule, target)
    try:
        chosen = _chosen_kernels.get(key)
    except TypeError:
        key = chosen = None
    if chosen is None:
        chosen = choose_kernel(
            assignment, refs, operands, out_format, dtype, engine, schedule, target
        )
        if key is not None:
            _chosen_kernels[key] = chosen
            if len(_chosen_kernels) > _CHOSEN_KERNELS_KEPT:
                _chosen_kernels.popitem(last=False)
    else:
        _chosen_kernels.move_to_end(key)
    kernel, fmt, result_dtype, inputs, conversions = chosen
    operands = operands_to_run(operands, inputs, conversions)
    if out_format is None and is_all_dense(fmt):
        # Only an inferred format is limited (docs/reference.md, "Result formats", rule 3): a dense
        # result asked for with out_format= is what the user wants, however large.
        check_dense_size(kernel._result_shape(operands, None), result_dtype, result_name)
    result = kernel(**operands)
    result.name = result_name
    return result


def checked_operands(
    assignment: Assignment, refs: Mapping[str, TensorRef], tensors: Mapping[str, Any], caller: str
) -> dict[str, Tensor]:
    """The statement's inputs given by name in ``tensors``, as coiter tensors: each must be
    given (TypeError, naming ``caller``), with as many modes as the statement indexes it with
    and extents that agree where indices repeat (ShapeError)."""
    result_name = assignment.lhs.tensor.name
    names = [name for name in refs if name != result_name]
    missing = [n for n in names if n not in tensors]
    if missing:
        raise TypeError(f"{caller}: no tensor given for {missing}")
    # Tensors the statement does not read are allowed (one namespace of tensors for several
    # statements), but a keyword that cannot be a tensor is a misspelt option (formats= for
    # out_format=), which would otherwise be ignored without a word.
    options = sorted(
        name
        for name, value in tensors.items()
        if name not in names and isinstance(value, (dict, str, bool, type(None)))
    )
    if options:
        raise TypeError(
            f"{caller}: {options} is not a tensor of {str(assignment)!r} (which reads {names}) "
            "nor an option (out_format, dtype, engine, schedule, target)"
        )
    operands = {name: as_tensor(tensors[name], name) for name in names}
    for name in names:
        if operands[name].ndim != refs[name].order:
            raise ShapeError(
                f"tensor {name} has {operands[name].ndim} modes but is indexed with "
                f"{refs[name].order} indices in {str(assignment)!r}"
            )
    check_extents(accesses(assignment.rhs), lambda ref: operands[ref.name].shape)
    return operands


def converted(
    operands: Mapping[str, Tensor], conversions: Mapping[str, Format]
) -> dict[str, Tensor]:
    """``operands`` with each one ``conversions`` names converted to the format it gives."""
    return {n: t.asformat(conversions[n]) if n in conversions else t for n, t in operands.items()}


def operands_to_run(
    operands: dict[str, Tensor],
    inputs: Inputs | None,
    conversions: Mapping[str, Format],
) -> dict[str, Tensor]:
    """What a chosen kernel (choose_kernel) is called with: its inputs made from the operands
    (converted where they say), else the operands converted as schedule="auto" asked, else
    the operands."""
    if inputs is not None:
        # An operand read twice in one new format (A(j,i) * A(j,i)) is converted once.
        made: dict[tuple[str, Format], Tensor] = {}

        def made_from(operand: str, fmt: Format | None) -> Tensor:
            if fmt is None:
                return operands[operand]
            if (operand, fmt) not in made:
                made[operand, fmt] = operands[operand].asformat(fmt)
            return made[operand, fmt]

        return {name: made_from(operand, fmt) for name, (operand, fmt) in inputs.items()}
    return converted(operands, conversions) if conversions else operands


def choose_kernel(
    assignment: Assignment,
    refs: dict[str, TensorRef],
    operands: Mapping[str, Tensor],
    out_format: FormatLike | None,
    dtype: DTypeLike | None,
    engine: str | None,
    schedule: Schedule | str | None,
    target: str = "cpu",
) -> Choice:
    """(kernel, result format, result dtype, None or the kernel's inputs when they are not the
    operands (``Inputs``: repeated operands under names of their own, some converted to
    another mode order); the formats to convert operands to before each call, which
    ``schedule="auto"`` may ask for). Operand data is not read: every part of the choice
    follows from the statement, the operands' formats and dtypes, and the options (and for
    ``schedule="auto"`` the operands' statistics)."""
    result_name = assignment.lhs.tensor.name
    rhs_dtype = inferred_result_dtype(assignment, operands)
    result_dtype = rhs_dtype if dtype is None else np.dtype(dtype)
    order = len(assignment.lhs.indices)
    if out_format is None:
        fmt = infer_result_format(
            assignment.lhs.indices, assignment.rhs, lambda ref: operands[ref.name].format
        )
    else:
        fmt = as_format(out_format, order)
    formats = {name: t.format for name, t in operands.items()}
    formats[result_name] = fmt
    dtypes = {name: t.dtype for name, t in operands.items()}
    dtypes[result_name] = result_dtype
    conversions: dict[str, Format] = {}
    if is_auto(schedule, target):
        picked, conversions = autoscheduler().for_operands(
            (assignment, refs), operands, formats, dtypes, engine, bounded=schedule is None
        )
        if not isinstance(picked, str):
            # A program of several kernels (a frontier member), run as one.
            return picked, fmt, result_dtype, None, {}
        schedule = picked
        formats.update(conversions)
    try:
        kernel = compile_kernel(
            (assignment, refs),
            formats=formats,
            dtypes=dtypes,
            engine=engine,
            schedule=schedule,
            target=target,
        )
        return kernel, fmt, result_dtype, None, conversions
    except CompileError as error:
        # (The conversions auto asked for are folded into the inputs' formats.)
        kernel, inputs = _compile_with_reordered_operands(
            (assignment, refs), formats, dtypes, engine, schedule, error, target
        )
        kept = {  # (an input in its operand's own format is passed as it is)
            name: (operand, None if f == operands[operand].format else f)
            for name, (operand, f) in inputs.items()
        }
        return kernel, fmt, result_dtype, kept, {}


def _split_repeated(assignment: Assignment) -> tuple[Parsed, dict[str, str]]:
    """The statement with every repeated operand read under its own name (A, A_1, ...), so
    each access can be given its own storage order; and the operand each name reads."""
    seen: dict[str, int] = {}
    refs: dict[str, TensorRef] = {}
    sources: dict[str, str] = {}

    def rename(ref: TensorRef) -> TensorRef:
        n = seen.get(ref.name, 0)
        seen[ref.name] = n + 1
        name = ref.name if n == 0 else f"{ref.name}_{n}"
        refs[name] = TensorRef(name, ref.order)
        sources[name] = ref.name
        return refs[name]

    rhs = map_tensors(assignment.rhs, rename)
    result = assignment.lhs.tensor
    refs[result.name] = result
    return (Assignment(assignment.lhs, rhs, assignment.accumulate), refs), sources


def _compile_with_reordered_operands(
    parsed: Parsed,
    formats: Mapping[str, Format],
    dtypes: Mapping[str, np.dtype[Any]],
    engine: str | None,
    schedule: Schedule | str | None,
    error: CompileError,
    target: str = "cpu",
) -> tuple[Kernel, Inputs]:
    """Compile with operands converted to other mode orders (see
    ``compiler.with_reordered_operands``), each access of a repeated operand on its own;
    ``formats`` and ``dtypes`` are the operands' (and the result's) by name. Returns the
    kernel and its inputs: for each, the operand it reads and the format it needs (None: the
    operand's own)."""
    result_name = parsed[0].lhs.tensor.name
    parsed, sources = _split_repeated(parsed[0])
    formats = dict(
        {name: formats[operand] for name, operand in sources.items()},
        **{result_name: formats[result_name]},
    )
    dtypes = dict(
        {name: dtypes[operand] for name, operand in sources.items()},
        **{result_name: dtypes[result_name]},
    )

    def attempt(overrides: dict[str, Format]) -> Kernel:
        return compile_kernel(
            parsed,
            formats=dict(formats, **overrides),
            dtypes=dtypes,
            engine=engine,
            schedule=schedule,
            target=target,
        )

    typed, _, _ = typed_statement(parsed, formats, np.float64, dtypes)
    kernel, overrides = with_reordered_operands(
        typed, formats, attempt, error, schedule_text(schedule), target
    )
    return kernel, {
        name: (operand, overrides.get(name, formats[name])) for name, operand in sources.items()
    }


class _HasOrder(Protocol):
    """An operand as _subscripts reads it: its order only (a Tensor, or for
    coiter.distributed.einsum a PartitionedTensor or an array)."""

    @property
    def ndim(self) -> int: ...


def _subscripts(spec: str, operands: Sequence[_HasOrder]) -> tuple[list[str], str]:
    """Expand NumPy einsum subscripts into (input index lists, output index list)."""
    inputs, output = _expanded_subscripts(spec, tuple(op.ndim for op in operands))
    return list(inputs), output


# (A loop of ct.einsum calls expands the same subscripts for operands of the same orders.)
@functools.lru_cache(maxsize=256)
def _expanded_subscripts(spec: str, ndims: tuple[int, ...]) -> tuple[tuple[str, ...], str]:
    spec = spec.replace(" ", "")
    if "->" in spec:
        inputs_text, output_text = spec.split("->")
    else:
        inputs_text, output_text = spec, None
    inputs = inputs_text.split(",")
    if len(inputs) != len(ndims):
        raise ValueError(f"einsum: {len(inputs)} subscripts but {len(ndims)} operands")
    used = set("".join(inputs).replace(".", ""))
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    ellipsis_rank = 0
    expanded = []
    for text, ndim in zip(inputs, ndims):
        if "..." in text:
            rank = ndim - (len(text) - 3)
            if rank < 0:
                raise ValueError(
                    f"einsum: subscripts {text!r} have more indices than operand dimensions"
                )
            ellipsis_rank = max(ellipsis_rank, rank)
            text = text.replace("...", "".join(free[ellipsis_rank - rank : ellipsis_rank]))
        if len(text) != ndim:
            raise ShapeError(f"einsum: subscripts {text!r} for an operand with {ndim} dimensions")
        expanded.append(text)
    ellipsis = "".join(free[:ellipsis_rank])
    if output_text is None:
        counts: dict[str, int] = {}
        for c in "".join(expanded):
            counts[c] = counts.get(c, 0) + 1
        output = ellipsis + "".join(
            sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis)
        )
    else:
        output = output_text.replace("...", ellipsis)
    return tuple(expanded), output


def _diagonal(tensor: Tensor, subscripts: str) -> tuple[Tensor, str]:
    """Take the generalized diagonal of an operand whose subscripts repeat an index, so
    every operand has distinct indices; returns (tensor, subscripts)."""
    if len(set(subscripts)) == len(subscripts):
        return tensor, subscripts
    unique = "".join(dict.fromkeys(subscripts))
    coords, values = tensor.coords()
    keep = np.ones(len(values), dtype=bool)
    first: dict[str, int] = {}
    for m, c in enumerate(subscripts):
        if c in first:
            keep &= coords[:, m] == coords[:, first[c]]
        else:
            first[c] = m
    columns = coords[keep][:, [first[c] for c in unique]]
    shape = tuple(tensor.shape[first[c]] for c in unique)
    fmt = (
        "dense"
        if all(level.name == "dense" for level in tensor.format.levels)
        else "s" * len(unique)
    )
    diag = from_coords(columns, values[keep], shape, format=as_format(fmt, len(unique)))
    return diag, unique


def einsum(
    subscripts: str,
    *operands: Any,
    out_format: FormatLike | None = None,
    dtype: DTypeLike | None = None,
    engine: str | None = None,
    schedule: Schedule | str | None = None,
) -> Tensor:
    """NumPy's ``einsum`` over dense and sparse operands, computed by one fused kernel.

    Parameters
    ----------
    subscripts : str
        NumPy's subscripts, e.g. ``"ij,jk->ik"``. ``->`` may be left out (the implicit output
        of NumPy), ``...`` broadcasts, and an index repeated within an operand takes its
        diagonal (``"ii"`` is the trace).
    *operands
        Tensors, NumPy arrays, SciPy sparse matrices or anything :func:`asarray` accepts.
    out_format : Format or str, optional
        The result's format; inferred as by :func:`evaluate` when not given.
    dtype : dtype, optional
        The result's value dtype; by default NumPy's promotion of the operands' dtypes.
    engine : {"llvm", "c"}, optional
        The CPU code generator.
    schedule : Schedule or str, optional
        As for :func:`evaluate`: the operands are named ``t0``, ``t1``, ... and the indices
        keep their letters; without a schedule (``"auto"``) the autoscheduler chooses
        (docs/autoscheduling.md), ``schedule="default"`` is the compiler's default.

    Returns
    -------
    Tensor
        A 0-d tensor for a scalar output.

    Raises
    ------
    ShapeError
        If an index ranges over different extents.
    ValueError
        If the subscripts are malformed or do not match the operands.

    Examples
    --------
    >>> A = np.arange(6.0).reshape(2, 3)
    >>> ct.einsum("ij,kj->ik", A, A).to_numpy()
    array([[ 5., 14.],
           [14., 50.]])
    """
    tensors = [as_tensor(op, None) for op in operands]
    inputs, output = _subscripts(subscripts, tensors)
    names = [f"t{k}" for k in range(len(tensors))]
    # Before diagonals are taken: a subscript repeated within an operand, as across operands,
    # must range over equal extents (NumPy raises too).
    check_index_extents(
        (f"operand {k}", text, tensor.shape)
        for k, (text, tensor) in enumerate(zip(inputs, tensors))
    )
    terms = []
    given: dict[str, Any] = {}
    for name, tensor, text in zip(names, tensors, inputs):
        tensor, text = _diagonal(tensor, text)
        given[name] = tensor
        terms.append(f"{name}({','.join(text)})" if text else name)
    if len(set(output)) != len(output):
        raise ValueError(f"einsum: output subscripts {output!r} repeat an index")
    result = f"out({','.join(output)})" if output else "out"
    statement = f"{result} = {' * '.join(terms)}"
    return evaluate(
        statement, out_format=out_format, dtype=dtype, engine=engine, schedule=schedule, **given
    )
