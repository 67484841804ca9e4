"""Array operators on tensors (``A + B``, ``A @ x``, ``A.sum(axis=0)``, ``A.T``, ...) as lazy
index notation (see docs/arrays.md).

Every operator builds the same expression trees as ``y[i] = A[i, j] * x[j]`` (notation.py) and
returns a *lazy* tensor: its shape, dtype and format are known at once, its data is computed when
first needed. A lazy operand of a later operator is inlined into the later expression instead of
being computed, so ``(A + B) @ x`` is one kernel, ``y(i) = sum(j, (A(i,j) + B(i,j)) * x(j))``.
The kernel is chosen as ``ct.evaluate`` chooses one (evaluate.choose_kernel: operand conversions,
mode reorderings) and remembered by the expression's structure, so a repeated ``A @ x`` costs a
table lookup and the kernel call.

Result formats follow the inference of docs/reference.md, "Result formats", applied to each operator
on its own operands (as if every step were computed), which is what SciPy gives: csr + csr is csr,
csr @ dense is dense. A dense result larger than ``ct.config.max_dense_bytes`` raises ``ShapeError``
when the operator is applied, before anything is computed.
"""

import itertools
import math
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any, cast

import numpy as np

from . import _core
from .auto_keys import auto_input_key
from .compiler import Kernel
from .conversion import as_operand
from .creation import wrap_dense
from .elementwise import elementwise
from .errors import ShapeError
from .evaluate import choose_kernel, operands_to_run
from .format_inference import check_dense_size, default_sparse_format, infer_result_format
from .formats import Format, as_format, is_all_dense
from .notation import (
    MAX_DEPTH,
    Access,
    Assignment,
    Binary,
    IndexExpr,
    IndexVar,
    Literal,
    Negate,
    Reduction,
    accesses,
    core_expression,
    core_variables,
    map_tensors,
)
from .parser import TensorRef
from .shapes import broadcast_shape, normalize_axes
from .tensor import Tensor, pack

# Inlining stops when the fused expression would nest deeper than this: the operand is computed
# instead (a loop such as `x = x + A` must not reach the compiler's MAX_DEPTH).
_INLINE_DEPTH = MAX_DEPTH // 2
# Nor does a lazy operand with more sparse accesses than this get inlined: a sum of n sparse
# accesses co-iterates 2^n cases (the merge lattice), so `for ...: x = x + A` would compile ever
# larger kernels. Four keeps a binary operator's fused merge at most eight-way.
_INLINE_SPARSE_ACCESSES = 4

_fresh_counter = itertools.count()


def fresh(count):
    """``count`` index variables no other expression uses (inlined expressions must not capture
    each other's variables). Kernels are cached up to renaming, so the names cost nothing."""
    made = []
    for _ in range(count):
        var = IndexVar.__new__(IndexVar)  # (the name is an identifier: skip the check)
        var.name = f"v{next(_fresh_counter)}"
        made.append(var)
    return made


class _Placeholder:
    """What a lazy tensor knows before it is computed: the ``_data`` of a pending tensor
    (tensor.py reads shape, dtype and format from it; ``_storage`` computes the data)."""

    __slots__ = ("shape", "dtype", "format")

    def __init__(self, shape, dtype, format):
        self.shape, self.dtype, self.format = tuple(shape), _dtype_name(dtype), format


_dtype_names: dict[Any, str] = {}


def _dtype_name(dtype):
    """``np.dtype(dtype).name``, remembered: NumPy computes a name in Python, 3 us a lazy
    tensor."""
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = np.dtype(dtype).name
    return name


class LazyDefinition:
    """The expression a lazy tensor computes: ``out(variables) = rhs``, ``rhs`` over tensors,
    with its lazy operands inlined."""

    __slots__ = ("variables", "rhs", "depth", "sums", "sparse_accesses", "_signature", "product")

    def __init__(self, variables, rhs):
        self.variables, self.rhs = tuple(variables), rhs
        self.depth = _depth(rhs)
        used = {v for a in accesses(rhs) for v in a.indices}
        self.sums = bool(used - set(self.variables))  # a contraction or reduction
        self.sparse_accesses = sum(not is_all_dense(a.tensor.format) for a in accesses(rhs))
        self._signature = None
        self.product = None

    @classmethod
    def known(cls, variables, rhs, product, tensors):
        """The definition of ``rhs`` when its facts are remembered from an equal structure
        (``product``: a _KnownProduct; ``tensors`` in the signature's order): nothing is
        walked."""
        definition = cls.__new__(cls)
        definition.variables, definition.rhs = tuple(variables), rhs
        definition.depth, definition.sums, definition.sparse_accesses, text = product.facts
        definition._signature = (text, tensors)
        definition.product = product
        return definition

    def signature(self, rhs):
        """signature(rhs, variables), remembered for the fused expression."""
        if rhs is not self.rhs:
            return signature(rhs, self.variables)
        if self._signature is None:
            self._signature = signature(rhs, self.variables)
        return self._signature

    def text(self):
        """The definition as readable index notation: operands by name (t0, t1, ... when
        unnamed), index variables i0, i1, ... in order of appearance (``assignment``'s)."""
        definition = self.assignment(None)
        tensors: dict[int, str] = {}

        def tensor_name(t):
            return tensors.setdefault(id(t), t.name or f"t{len(tensors)}")

        def show(e, precedence=0):
            if isinstance(e, Access):
                return f"{tensor_name(e.tensor)}({','.join(v.name for v in e.indices)})"
            if isinstance(e, Literal):
                return repr(e.value)
            if isinstance(e, Negate):
                return "-" + show(e.a, 4)
            if isinstance(e, Reduction):
                name = {"add": "sum"}.get(e.op, e.op)
                return f"{name}({e.var.name}, {show(e.body)})"
            symbol, p = {"add": ("+", 1), "sub": ("-", 1), "mul": ("*", 2), "div": ("/", 2)}[e.op]
            text = f"{show(e.a, p)} {symbol} {show(e.b, p + 1)}"
            return f"({text})" if p < precedence else text

        head = f"out({','.join(v.name for v in definition.lhs.indices)})"
        return f"{head} = {show(definition.rhs)}"

    def assignment(self, tensor):
        """The definition as an assignment to ``tensor`` (what ct.compile(tensor) compiles),
        its index variables named i0, i1, ... as ``text`` shows them, so a schedule given to
        ``ct.compile(tensor, schedule=...)`` or ``tensor.schedule(...)`` can name them."""
        names: dict[str, IndexVar] = {}

        def var(v):
            if v.name not in names:
                names[v.name] = IndexVar(f"i{len(names)}")
            return names[v.name]

        def walk(e):  # (in order of appearance: a reduction's variable before its body)
            if isinstance(e, Access):
                return Access(e.tensor, [var(v) for v in e.indices])
            if isinstance(e, Negate):
                return Negate(walk(e.a))
            if isinstance(e, Binary):
                a = walk(e.a)
                return Binary(e.op, a, walk(e.b))
            if isinstance(e, Reduction):
                bound = var(e.var)
                return Reduction(e.op, bound, walk(e.body))
            return e

        lhs = [var(v) for v in self.variables]
        return Assignment(Access(tensor, lhs), walk(self.rhs))


def _depth(expr):
    if isinstance(expr, Binary):
        return 1 + max(_depth(expr.a), _depth(expr.b))
    if isinstance(expr, Negate):
        return 1 + _depth(expr.a)
    if isinstance(expr, Reduction):
        return 1 + _depth(expr.body)
    return 1


def _rename(expr, mapping):
    """``expr`` with index variables renamed by ``mapping`` (bound reduction variables too)."""
    if isinstance(expr, Access):
        return Access(expr.tensor, [mapping.get(v, v) for v in expr.indices])
    if isinstance(expr, Binary):
        return Binary(expr.op, _rename(expr.a, mapping), _rename(expr.b, mapping))
    if isinstance(expr, Negate):
        return Negate(_rename(expr.a, mapping))
    if isinstance(expr, Reduction):
        return Reduction(expr.op, mapping.get(expr.var, expr.var), _rename(expr.body, mapping))
    return expr


def _bound_variables(expr):
    if isinstance(expr, Binary):
        return _bound_variables(expr.a) | _bound_variables(expr.b)
    if isinstance(expr, Negate):
        return _bound_variables(expr.a)
    if isinstance(expr, Reduction):
        return {expr.var} | _bound_variables(expr.body)
    return set()


def expression(operand, variables, contracting=False):
    """The index expression of ``operand`` indexed by ``variables``: a lazy tensor's own
    expression (inlined, so the operators fuse), an access of a computed tensor, a literal.

    ``contracting``: the caller sums over some of ``variables``; a lazy operand that sums
    itself is then computed first rather than inlined, since nested contractions fused into one
    loop nest can cost far more than the two products (``(A @ B) @ x``)."""
    if not isinstance(operand, Tensor):
        return Literal(operand)
    lazy = cast("LazyDefinition | None", operand._lazy) if operand._pending else None  # (ours)
    if (
        lazy is not None
        and lazy.depth <= _INLINE_DEPTH
        and lazy.sparse_accesses <= _INLINE_SPARSE_ACCESSES
        and not (contracting and lazy.sums)
    ):
        rhs = _summed(lazy.rhs, lazy.variables)
        mapping = dict(zip(lazy.variables, variables))
        for var in _bound_variables(rhs):
            mapping[var] = fresh(1)[0]
        return _rename(rhs, mapping)
    # A pending operand not inlined is computed when the kernel reads it; DIA, ELL and BCSR
    # operands are computed in place.
    return Access(operand, variables)


def _summed(expr, result_variables):
    """``expr`` with every index that is not a result index and not bound by a reduction
    summed explicitly, so the expression means the same wherever it is inlined."""
    free = (
        {v for a in accesses(expr) for v in a.indices}
        - _bound_variables(expr)
        - set(result_variables)
    )
    for var in sorted(free, key=lambda v: v.name):
        expr = Reduction("add", var, expr)
    return expr


# -- building lazy results -----------------------------------------------------------------
def _promoted_dtype(rhs):
    """The dtype the compiler computes ``rhs`` in (its NumPy promotion rules)."""
    var_of = core_variables(id, lambda t, n: (f"t{n}", t.format, t.dtype.name, "int64"))
    return np.dtype(core_expression(rhs, var_of).dtype)


def lazy(shape, variables, rhs, step_rhs, format=None, dtype=None):
    """A lazy tensor computing ``out(variables) = rhs``.

    ``step_rhs`` is the operator's expression over its own operands (not inlined): the result
    format and dtype are inferred from it, as if every step were computed on its own (and
    remembered by its signature: inference costs more than a small kernel's call)."""
    variables = list(variables)
    definition = LazyDefinition(variables, rhs)
    if dtype is None or format is None:
        text, tensors = definition.signature(step_rhs)
        key = (text, tuple((t.format, t.dtype) for t in tensors))
        inferred = _recall(_inferred, key)
        if inferred is None:
            inferred = (
                _promoted_dtype(step_rhs),
                infer_result_format(variables, step_rhs, lambda t: t.format),
            )
            _remember(_inferred, key, inferred)
        dtype = inferred[0] if dtype is None else dtype
        if format is None:
            format = inferred[1]
            if is_all_dense(format):
                check_dense_size(shape, dtype, "of the operation")
    return _pending_tensor(shape, dtype, format, definition)


def _pending_tensor(shape, dtype, format, definition):
    result = Tensor(_Placeholder(shape, dtype, format))
    result._lazy = definition
    result._pending = True
    return result


# What the operators remember, by the expression's signature and the operands' formats and
# dtypes: the inferred result format and dtype, and the chosen kernel (the compiler's own cache
# holds the compiled code; these skip the Python that finds it). Least recently used first.
_KERNELS_KEPT = 256
_kernels: OrderedDict[Hashable, tuple[Any, Any]] = OrderedDict()
_inferred: OrderedDict[Hashable, tuple[np.dtype[Any], Format]] = OrderedDict()


def _recall(table, key):
    """``table[key]`` or None, marked recently used (tables are shared by threads: an entry
    another thread evicts meanwhile is still valid for this call)."""
    value = table.get(key)
    if value is not None:
        try:
            table.move_to_end(key)
        except KeyError:
            pass
    return value


def _remember(table, key, value):
    table[key] = value
    while len(table) > _KERNELS_KEPT:
        try:
            table.popitem(last=False)
        except KeyError:  # emptied by another thread
            break


def run(tensor):
    """Compute the lazy ``tensor``; returns the computed storage. The fused expression always
    compiles (every expression over every stored format does); a ``CompileError`` here is a
    compiler bug and surfaces as one."""
    definition = tensor._lazy
    text, tensors = definition.signature(definition.rhs)
    operands = {f"t{k}": t for k, t in enumerate(tensors)}
    product = definition.product
    if product is not None and product.chosen is not None:
        # A matrix product whose kernel is known (_matrix_times_dense): no key to build and
        # hash (its formats' and dtypes' hashes cost more than the rest of this function).
        # Remembered without the operands' statistics: schedule="auto" runs a sparse matrix
        # times a dense operand as the default schedule on every input (no frontier member is
        # estimated to do less work than the default's concordant loop order).
        chosen = product.chosen
    else:
        chosen = _choose_remembered(definition, tensor, text, tensors, operands)
        if product is not None and chosen[1] is None and not chosen[2]:
            product.chosen = chosen
    kernel, inputs, conversions = chosen
    operands = operands_to_run(operands, inputs, conversions)
    if isinstance(kernel, Kernel) and kernel._built is kernel._result:
        # The result's storage straight from the call, in the tensor's format (no Tensor
        # made around it only to be taken apart here); None: the call was not made.
        storage = kernel._run_in_place(operands)
        if storage is not None:
            return storage
    result = kernel(**operands)
    if result.format != tensor.format:  # (a hashed result is packed after the kernel)
        result = result.asformat(tensor.format)
    return result._data


def _choose_remembered(definition, tensor, text, tensors, operands):
    """``(kernel, the kernel's inputs or None, formats to convert operands to first)``
    for the definition, from _kernels when an equal computation was chosen before."""
    rhs, variables = definition.rhs, definition.variables
    # The kernel is chosen as schedule="auto" chooses (choose_kernel without a schedule), on
    # the operands' statistics: remembered by them too, as ct.evaluate remembers its own (the
    # text is no statement of the string syntax, so its auto keys are apart from those).
    key = (
        text,
        tuple((t.format, t.dtype) for t in tensors),
        tensor.format,
        tensor.dtype,
        auto_input_key(text, None, operands),
    )
    chosen = _recall(_kernels, key)
    if chosen is None:
        names = {id(t): f"t{k}" for k, t in enumerate(tensors)}
        out = TensorRef("out", len(variables))
        refs = {"out": out, **{f"t{k}": TensorRef(f"t{k}", t.ndim) for k, t in enumerate(tensors)}}
        assignment = Assignment(
            Access(out, variables), map_tensors(rhs, lambda t: refs[names[id(t)]])
        )
        chosen = _choose(assignment, refs, operands, tensor)
        _remember(_kernels, key, chosen)
    return chosen


def _choose(assignment, refs, operands, tensor):
    kernel, _, _, inputs, conversions = choose_kernel(
        assignment, refs, operands, tensor.format, tensor.dtype, None, None
    )
    return kernel, inputs, conversions


def signature(rhs, variables):
    """``(text, tensors)``: the expression's text with tensors numbered t0, t1, ... and index
    variables x0, x1, ... in order of appearance, and the tensors in that order. Equal texts
    over tensors of equal formats and dtypes are the same computation up to renaming (kernels
    and inferred formats are remembered by it)."""
    tensors: list[Tensor] = []
    ids: dict[int, str] = {}
    numbers_of: dict[str, str] = {}

    def name(v):
        n = numbers_of.get(v.name)
        if n is None:
            n = numbers_of[v.name] = f"x{len(numbers_of)}"
        return n

    def tensor(t):
        n = ids.get(id(t))
        if n is None:
            n = ids[id(t)] = f"t{len(tensors)}"
            tensors.append(t)
        return n

    def text(e):
        if isinstance(e, Access):
            return f"{tensor(e.tensor)}({','.join(name(v) for v in e.indices)})"
        if isinstance(e, Literal):
            return f"{type(e.value).__name__}:{e.value!r}"
        if isinstance(e, Negate):
            return f"-({text(e.a)})"
        if isinstance(e, Binary):
            return f"{e.op}({text(e.a)},{text(e.b)})"
        return f"{e.op}[{name(e.var)}]({text(e.body)})"

    head = ",".join(name(v) for v in variables)
    body = text(rhs)
    return f"({head})={body}", tensors


def forget_kernels():
    _kernels.clear()
    _inferred.clear()
    _matrix_products.clear()


# -- broadcasting ------------------------------------------------------------------------------
def broadcast_variables(tensor, shape, variables):
    """``(tensor, its variables)`` for ``tensor`` broadcast to ``shape`` (whose modes are
    ``variables``): leading modes it lacks are not indexed, and its modes of extent 1 that
    broadcast are dropped (a reshape, a view for dense tensors)."""
    offset = len(shape) - tensor.ndim
    own = list(variables[offset:])
    ones = [m for m in range(tensor.ndim) if tensor.shape[m] == 1 and shape[offset + m] != 1]
    if ones:
        tensor = tensor.reshape(tuple(e for m, e in enumerate(tensor.shape) if m not in ones))
        own = [v for m, v in enumerate(own) if m not in ones]
    return tensor, own


# -- elementwise arithmetic ---------------------------------------------------------------------
def _is_tensor(x):
    return isinstance(x, Tensor)


def _step(operand, variables):
    return Access(operand, variables) if _is_tensor(operand) else Literal(operand)


def _keeps_zeros(op, a, b):
    """Whether ``a op b`` is zero wherever its sparse operands are unstored (SciPy's rule for a
    sparse result): false for a sparse operand plus a nonzero scalar."""

    def zero(x):
        return (not _is_tensor(x) and x == 0) or (_is_tensor(x) and not is_all_dense(x.format))

    if op in ("add", "sub"):
        return zero(a) and zero(b)
    # Products: unstored zeros annihilate (docs/reference.md, "Semantics"); division is checked
    # apart.
    return True


def arithmetic(op, a, b):
    """``a op b`` for op in add, sub, mul, div (NumPy broadcasting); a lazy tensor."""
    a, b = as_operand(a), as_operand(b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    if (op == "div" and not _division_is_exact(a, b)) or any(
        not _is_tensor(x) and x == 0 for x in (a, b)
    ):
        # A literal zero goes to NumPy on the values too: the compiler leaves a dense result
        # of `A(i,j) * 0` or `0 / A(i,j)` unwritten (reported with the arrays branch).
        return elementwise(_NUMPY_OPS[op], a, b)
    shapes = [t.shape for t in (a, b) if _is_tensor(t)]
    shape = broadcast_shape(shapes)
    variables = fresh(len(shape))
    parts, steps = [], []
    for x in (a, b):
        if _is_tensor(x):
            x, own = broadcast_variables(x, shape, variables)
            part, access = _part_and_step(x, own)
        else:
            part = access = Literal(x)
        parts.append(part)
        steps.append(access)
    step = Binary(op, *steps)
    rhs = step if parts == steps else Binary(op, *parts)
    fmt = None
    if not _keeps_zeros(op, a, b):
        fmt = as_format("dense", len(shape))
        check_dense_size(shape, _promoted_dtype(step), "of the operation")
    elif op == "div" and _is_tensor(b):
        # An exact division keeps the numerator's zeros (the denominator has none): the pattern
        # of the product, which the inference knows (A / d(i) is sparse like A * d(i)).
        fmt = infer_result_format(variables, Binary("mul", *steps), lambda t: t.format)
        if is_all_dense(fmt):
            check_dense_size(shape, _promoted_dtype(step), "of the operation")
    return lazy(shape, variables, rhs, step, format=fmt)


_NUMPY_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}


def _division_is_exact(a, b):
    """Whether the compiler's division (an unstored numerator entry gives 0: docs/reference.md,
    "Semantics") equals NumPy's for ``a / b``: it does unless an unstored zero of ``a`` meets a zero
    or NaN of ``b`` (0/0 is NaN). Otherwise the division is computed elementwise on the values
    (exactly)."""
    if _is_tensor(a) and not is_all_dense(a.format):
        if not _is_tensor(b):
            return not (b == 0 or b != b)
        if not is_all_dense(b.format):
            return False  # its unstored zeros meet the numerator's
        values = b.values  # (computes a lazy denominator)
        return not (np.any(values == 0) or (values.dtype.kind in "fc" and np.isnan(values).any()))
    if not _is_tensor(a) and _is_tensor(b) and not is_all_dense(b.format):
        return False  # s / 0 on every unstored entry: inf or NaN (dense; computed exactly)
    return True


def negative(a):
    variables = fresh(a.ndim)
    return lazy(a.shape, variables, Negate(expression(a, variables)), Negate(Access(a, variables)))


# -- contractions -------------------------------------------------------------------------------
def _part_and_step(tensor, variables, contracting=False):
    """``(expression(tensor, variables), Access(tensor, variables))``, one object when the
    expression is that access (nothing inlined): the expression's signature, which finds the
    inferred format and the kernel, is then computed once."""
    step = Access(tensor, variables)
    part = expression(tensor, variables, contracting)
    if isinstance(part, Access) and part.tensor is tensor and part.indices == step.indices:
        part = step
    return part, step


def _contraction(a, b, a_vars, b_vars, out_vars, shape):
    (left, a_step), (right, b_step) = (
        _part_and_step(a, a_vars, True),
        _part_and_step(b, b_vars, True),
    )
    step = Binary("mul", a_step, b_step)
    # (A + B) @ x: the product is distributed over the sum when the other factor is dense,
    # sum(j, A(i,j) x(j)) + sum(k, B(i,k) x(k)): two streaming passes over the operands' rows
    # instead of a merge of them, which costs a branch per entry.
    summed = [v for v in a_vars if v in b_vars and v not in out_vars]

    def own_sum(product):
        # Each term sums over variables of its own: with one shared summed variable the
        # compiler would co-iterate the terms in one loop (a merge again).
        renamed = {v: fresh(1)[0] for v in summed}
        body = _rename(product, renamed)
        for v in summed:
            body = Reduction("add", renamed[v], body)
        return body

    if is_all_dense(b.format) and _is_sum(left) and _distributes(left, a, b):
        parts = _distribute(left, lambda term: own_sum(Binary("mul", term, right)))
    elif is_all_dense(a.format) and _is_sum(right) and _distributes(right, b, a):
        parts = _distribute(right, lambda term: own_sum(Binary("mul", left, term)))
    elif left is a_step and right is b_step:
        parts = step
    else:
        parts = Binary("mul", left, right)
    return lazy(shape, out_vars, parts, step)


def _distributes(expr, summed, other):
    """Whether a product with the sum ``summed`` (its expression ``expr``) may be taken term by
    term: only when the sum and every operand in it have the product's own dtype, so that each
    term's product is computed in it too. A narrower integer sum wraps before the product
    promotes it (uint8 ``(B - A) @ X`` with a float X is 256 - 1 where the terms' products
    give -1); a bool sum is an or (True + True is True), and so is a bool term's product with
    a bool operand (``(M + F) @ X`` with M and X bool counts M @ X's products once)."""
    dtype = np.dtype(summed.dtype)
    return (
        dtype != np.bool_
        and dtype == np.result_type(dtype, other.dtype)
        and all(np.dtype(access.tensor.dtype) == dtype for access in accesses(expr))
    )


def _is_sum(expr):
    return (
        isinstance(expr, Binary)
        and expr.op in ("add", "sub")
        or (isinstance(expr, Negate) and _is_sum(expr.a))
    )


def _distribute(expr, product):
    """``product`` applied to every term of the sum ``expr`` (signs kept). Each term then holds
    every use of the summed index, so the implicit sum binds to each product on its own."""
    if isinstance(expr, Binary) and expr.op in ("add", "sub"):
        return Binary(expr.op, _distribute(expr.a, product), _distribute(expr.b, product))
    if isinstance(expr, Negate):
        return Negate(_distribute(expr.a, product))
    return product(expr)


def matmul(a, b):
    """``a @ b`` with NumPy's matmul rules (1-D operands promoted, batch modes broadcast)."""
    a, b = as_operand(a), as_operand(b)
    if a is NotImplemented or b is NotImplemented:
        return NotImplemented
    if not (_is_tensor(a) and _is_tensor(b)) or a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: an operand is a scalar (0-d); use * to scale")
    k = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k != kb:
        raise ShapeError(
            f"matmul: mode {a.ndim - 1} of the first operand (extent {k}) does not match "
            f"mode {max(b.ndim - 2, 0)} of the second (extent {kb}); shapes {a.shape} and {b.shape}"
        )
    if (
        a.ndim == 2
        and b.ndim <= 2
        and not a._pending
        and not b._pending
        and a is not b
        and is_all_dense(b.format)
    ):
        return _matrix_times_dense(a, b)
    a_batch = a.shape[:-2]
    b_batch = b.shape[:-2] if b.ndim >= 2 else ()
    batch = broadcast_shape([a_batch, b_batch], "matmul batch modes")
    batch_vars = fresh(len(batch))
    (kv,) = fresh(1)
    i_vars = fresh(1) if a.ndim >= 2 else []
    j_vars = fresh(1) if b.ndim >= 2 else []
    a_target = (
        (tuple(batch) + a.shape[-2:], list(batch_vars) + i_vars + [kv])
        if a.ndim >= 2
        else ((k,), [kv])
    )
    b_target = (
        (tuple(batch) + b.shape[-2:], list(batch_vars) + [kv] + j_vars)
        if b.ndim >= 2
        else ((k,), [kv])
    )
    shape = tuple(batch) + ((a.shape[-2],) if i_vars else ()) + ((b.shape[-1],) if j_vars else ())
    a, a_own = broadcast_variables(a, *a_target)
    b, b_own = broadcast_variables(b, *b_target)
    return _contraction(a, b, a_own, b_own, list(batch_vars) + i_vars + j_vars, shape)


# A computed matrix times a computed dense vector or matrix (``T @ x`` with ``x`` a NumPy
# array: every step of a solver or a power iteration) is the commonest product. The general
# path above (broadcasting, inlining, the signature's text, inference) spent about 0.05 ms of
# Python building it, as long as the SpMV of a 10,000-row matrix; this builds the same lazy
# tensor from what is remembered per operand formats and dtypes: (depth, sums,
# sparse_accesses, signature text) of the definition, and the result's dtype and format, and,
# once the first such product has run, its kernel (run() then looks nothing up).
class _KnownProduct:
    __slots__ = ("facts", "dtype", "format", "chosen")

    def __init__(self, facts, dtype, format):
        self.facts, self.dtype, self.format = facts, dtype, format
        self.chosen = None  # (kernel, None, {}): what run() chose for the first product


_matrix_products: OrderedDict[Hashable, _KnownProduct] = OrderedDict()


def _matrix_times_dense(a, b):
    """``a @ b`` for a computed 2-D ``a`` and a computed dense 1-D or 2-D ``b`` (another tensor
    than ``a``): ``out(i[,j]) = a(i,k) * b(k[,j])``, exactly what the general path builds."""
    i, k, *j = fresh(b.ndim + 1)
    variables = [i, *j]
    rhs = Binary("mul", Access(a, (i, k)), Access(b, (k, *j)))
    shape = (a.shape[0], *b.shape[1:])
    key = (a.format, a.dtype, b.format, b.dtype)
    known = _recall(_matrix_products, key)
    if known is None:
        result = lazy(shape, variables, rhs, rhs)
        definition = result._lazy
        facts = (
            definition.depth,
            definition.sums,
            definition.sparse_accesses,
            definition.signature(rhs)[0],
        )
        _remember(_matrix_products, key, _KnownProduct(facts, result.dtype, result.format))
        return result
    if is_all_dense(known.format):
        check_dense_size(shape, known.dtype, "of the operation")
    definition = LazyDefinition.known(variables, rhs, known, [a, b])
    return _pending_tensor(shape, known.dtype, known.format, definition)


def tensordot(a, b, axes=2):
    """NumPy's ``tensordot``: sum over ``axes`` of ``a`` and ``b`` (an int n: the last n of
    ``a`` and the first n of ``b``; or two sequences of modes)."""
    a, b = as_operand(a), as_operand(b)
    if not (_is_tensor(a) and _is_tensor(b)):
        return arithmetic("mul", a, b)
    a_axes: list[Any]
    b_axes: list[Any]
    if isinstance(axes, (int, np.integer)):
        if axes < 0 or axes > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={axes} for operands of {a.ndim} and {b.ndim} modes")
        a_axes, b_axes = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        a_axes, b_axes = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
        if len(a_axes) != len(b_axes):
            raise ValueError("tensordot: the two axis lists differ in length")
        a_axes = [int(x) % a.ndim for x in a_axes]
        b_axes = [int(x) % b.ndim for x in b_axes]
    for x, y in zip(a_axes, b_axes):
        if a.shape[x] != b.shape[y]:
            raise ShapeError(
                f"tensordot: mode {x} of the first operand (extent {a.shape[x]}) does not "
                f"match mode {y} of the second (extent {b.shape[y]})"
            )
    a_vars, b_vars = fresh(a.ndim), fresh(b.ndim)
    for x, y in zip(a_axes, b_axes):
        b_vars[y] = a_vars[x]
    out = [v for m, v in enumerate(a_vars) if m not in a_axes] + [
        v for m, v in enumerate(b_vars) if m not in b_axes
    ]
    shape = tuple(a.shape[m] for m in range(a.ndim) if m not in a_axes) + tuple(
        b.shape[m] for m in range(b.ndim) if m not in b_axes
    )
    return _contraction(a, b, a_vars, b_vars, out, shape)


def dot(a, b):
    """NumPy's ``dot``: matmul for 1-D and 2-D operands, a product with a scalar, and the sum
    over the last mode of ``a`` and the second-to-last of ``b`` otherwise."""
    a, b = as_operand(a), as_operand(b)
    if not (_is_tensor(a) and _is_tensor(b)) or a.ndim == 0 or b.ndim == 0:
        return arithmetic("mul", a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, ([a.ndim - 1], [max(b.ndim - 2, 0)]))


# -- reductions -------------------------------------------------------------------------------
_SUM_DTYPES = {"b": np.int64, "i": np.int64, "u": np.uint64}


def reduce(op, tensor, axis=None, keepdims=False, dtype=None):
    """``tensor.sum/max/min(axis, keepdims)`` (op: add, max, min) as a lazy tensor; max and
    min see the unstored zeros, as NumPy sees the zeros of the dense array."""
    axes = normalize_axes(axis, tensor.ndim)
    if op != "add" and any(tensor.shape[m] == 0 for m in axes):
        raise ValueError(f"zero-size tensor to reduction operation {op}imum which has no identity")
    if dtype is not None:
        tensor = tensor.astype(dtype)
    elif op == "add" and tensor.dtype.kind in _SUM_DTYPES and tensor.dtype.itemsize < 8:
        tensor = tensor.astype(
            _SUM_DTYPES[tensor.dtype.kind]
        )  # NumPy sums small integers in 64 bits
    variables = fresh(tensor.ndim)
    body = expression(tensor, variables, contracting=True)
    step: IndexExpr = Access(tensor, variables)
    for m in reversed(axes):
        body = Reduction(op, variables[m], body)
        step = Reduction(op, variables[m], step)
    kept = [v for m, v in enumerate(variables) if m not in axes]
    shape = tuple(e for m, e in enumerate(tensor.shape) if m not in axes)
    result = lazy(shape, kept, body, step)
    if keepdims:
        result = result.reshape(tuple(1 if m in axes else e for m, e in enumerate(tensor.shape)))
    return result


def mean(tensor, axis=None, keepdims=False, dtype=None):
    axes = normalize_axes(axis, tensor.ndim)
    count = math.prod(tensor.shape[m] for m in axes)
    if dtype is None and tensor.dtype.kind in "biu":
        dtype = np.float64  # NumPy's mean of integers
    total = reduce("add", tensor, axes, keepdims, dtype)
    return arithmetic("div", total, count) if count else arithmetic("mul", total, np.nan)


# -- transposes and reshapes ---------------------------------------------------------------------
def transpose(tensor, axes=None):
    """The tensor with its modes permuted (reversed by default). A computed tensor in a format
    with a mode order is transposed without copying, its levels read in another mode order (a
    CSR matrix's transpose is CSC, as in SciPy); otherwise a lazy expression."""
    ndim = tensor.ndim
    perm = (
        tuple(range(ndim))[::-1]
        if axes is None
        else tuple(int(a) % ndim if -ndim <= int(a) < ndim else -1 for a in axes)
    )
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"axes {axes!r} are not a permutation of the {ndim} modes")
    if perm == tuple(range(ndim)):
        return tensor
    shape = tuple(tensor.shape[p] for p in perm)
    inverse = [perm.index(m) for m in range(ndim)]
    fmt = tensor.format
    permuted = None
    if fmt.name is None:
        permuted = Format(list(fmt.levels), [inverse[m] for m in fmt.mode_order])
    if permuted is not None and not tensor._pending:
        # Remembered on the tensor: a new view's arrays would be checked again by its first
        # kernel call (O(nnz)), and `A.T @ x` in a loop would pay that every time.
        views = tensor._views if tensor._views is not None else {}
        view = views.get(perm)
        if view is None or view[0] is not tensor._data:
            storage = tensor._data
            view = (
                storage,
                Tensor(
                    _core.from_arrays(
                        permuted,
                        list(shape),
                        np.dtype(storage.index_dtype).name,
                        storage.level_arrays,
                        storage.level_parameters,
                        storage.values,
                    ),
                    tensor.name,
                ),
            )
            views[perm] = view
            tensor._views = views
        return view[1]
    variables = fresh(ndim)
    source = [variables[inverse[m]] for m in range(ndim)]
    return lazy(
        shape,
        variables,
        expression(tensor, source),
        Access(tensor, source),
        format=permuted,
        dtype=tensor.dtype,
    )


def reshape(tensor, shape):
    """The tensor with another shape of equal size (row-major, as NumPy): a view of a dense
    tensor's values; a sparse tensor's entries packed again (O(nnz)) in a format of the new
    order."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(e) for e in shape)
    if shape.count(-1) > 1:
        raise ValueError("reshape: only one extent can be -1")
    if -1 in shape:
        known = math.prod(e for e in shape if e != -1)
        if known == 0 or tensor.size % known:
            raise ShapeError(f"cannot reshape a tensor of shape {tensor.shape} into {shape}")
        shape = tuple(tensor.size // known if e == -1 else e for e in shape)
    if math.prod(shape) != tensor.size or any(e < 0 for e in shape):
        raise ShapeError(f"cannot reshape a tensor of shape {tensor.shape} into {shape}")
    if shape == tensor.shape:
        return tensor
    if is_all_dense(tensor.format):
        return wrap_dense(
            np.ascontiguousarray(tensor.values.reshape(shape)), as_format("dense", len(shape)), None
        )
    coords, values = tensor.coords()
    if tensor.size >= 2**63:
        raise ShapeError(
            f"cannot reshape a sparse tensor of {tensor.size} elements: its row-major "
            "positions do not fit in 64 bits"
        )
    columns: Sequence[Any]
    if coords.size:
        columns = np.unravel_index(np.ravel_multi_index(tuple(coords.T), tensor.shape), shape)
    else:
        columns = [np.zeros(0, dtype=np.int64)] * len(shape)
    bits = 64 if tensor.index_dtype == np.int64 else 32
    return pack(
        default_sparse_format(len(shape), tensor.format),
        shape,
        list(columns),
        values,
        index_bits=bits,
    )
