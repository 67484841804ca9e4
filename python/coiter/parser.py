"""The string syntax of index notation (docs/reference.md, "Index notation"):

    statement := target ("=" | "+=") expr
    target    := NAME [ "(" [ index ("," index)* ] ")" ]
    expr      := term (("+" | "-") term)*
    term      := unary (("*" | "/") unary)*
    unary     := ("-" | "+") unary | primary
    primary   := NUMBER | "(" expr ")" | reduction | access
    reduction := ("sum" | "max" | "min") "(" index "," expr ")"
    access    := NAME [ "(" [ index ("," index)* ] ")" ]        (no parentheses: a scalar)

Errors raise :class:`coiter.ParseError` with the 1-based column of the offending token.
Expressions nest at most ``MAX_DEPTH`` levels (parentheses, reductions, unary signs and the
operands of one chain of operators all count): the compiler's passes walk the expression
recursively, and a deeper one would end in a RecursionError or exhaust the C++ stack.
"""

import functools
import re
from typing import TypeAlias

from .errors import ParseError
from .notation import MAX_DEPTH, Access, Assignment, Binary, IndexVar, Literal, Negate, Reduction

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?j?)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>\+=|[-+*/(),=])
""",
    re.VERBOSE,
)

_REDUCTIONS = {"sum": "add", "max": "max", "min": "min"}
_INT64 = (-(2**63), 2**63 - 1)


class TensorRef:
    """A tensor named in a string expression, before it is bound to data."""

    def __init__(self, name: str, order: int) -> None:
        self.name = name
        self.order = order
        self.column: int | None = None  # of its first use on the right side (None: the result only)

    def __repr__(self) -> str:
        return f"TensorRef({self.name!r}, order={self.order})"


def _tokenize(text):
    tokens, at = [], 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        if not m:
            raise ParseError(
                f"unexpected character {text[at]!r} at column {at + 1} in {text!r}", column=at + 1
            )
        if m.lastgroup != "space":
            tokens.append((m.lastgroup, m.group(), at + 1))
        at = m.end()
    tokens.append(("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, text):
        self.text = text
        self.tokens = _tokenize(text)
        self.at = 0
        self.tensors = {}  # name -> TensorRef
        self.depths = {}  # id(node) -> depth of the subtree (leaves: 1)

    def node(self, node, *children):
        """``node`` with its depth recorded; ParseError when it nests too deep."""
        depth = 1 + max((self.depths[id(c)] for c in children), default=0)
        if depth > MAX_DEPTH:
            self.fail(
                f"the expression nests deeper than {MAX_DEPTH} levels (parentheses, "
                "reductions, signs and chained operators)"
            )
        self.depths[id(node)] = depth
        return node

    def peek(self):
        return self.tokens[self.at]

    def next(self):
        token = self.tokens[self.at]
        self.at += 1
        return token

    def fail(self, message, column=None):
        column = self.peek()[2] if column is None else column
        raise ParseError(f"{message} at column {column} in {self.text!r}", column=column)

    def expect(self, value):
        kind, text, column = self.peek()
        if text != value or kind == "end":
            found = "the end" if kind == "end" else repr(text)
            self.fail(f"expected {value!r} but found {found}", column)
        return self.next()

    def tensor(self, name, order, column):
        ref = self.tensors.get(name)
        if ref is None:
            ref = self.tensors[name] = TensorRef(name, order)
        elif ref.order != order:
            self.fail(f"tensor {name!r} is used with {ref.order} and with {order} indices", column)
        return ref

    def index_list(self):
        indices = []
        self.expect("(")
        if self.peek()[1] != ")":
            while True:
                kind, name, column = self.next()
                if kind != "name":
                    self.fail("expected an index variable", column)
                indices.append(IndexVar(name))
                if self.peek()[1] != ",":
                    break
                self.next()
        self.expect(")")
        return indices

    def statement(self):
        kind, name, column = self.next()
        if kind != "name":
            self.fail("a statement starts with the result tensor's name", column)
        indices = self.index_list() if self.peek()[1] == "(" else []
        result = self.tensor(name, len(indices), column)
        kind, op, column = self.next()
        if op not in ("=", "+="):
            self.fail("expected '=' or '+=' after the result", column)
        rhs = self.expr()
        if self.peek()[0] != "end":
            self.fail(f"unexpected {self.peek()[1]!r}")
        return Assignment(Access(result, indices), rhs, "add" if op == "+=" else None)

    def expr(self, nesting=0):
        node = self.term(nesting)
        while self.peek()[1] in ("+", "-"):
            op = self.next()[1]
            right = self.term(nesting)
            node = self.node(Binary("add" if op == "+" else "sub", node, right), node, right)
        return node

    def term(self, nesting):
        node = self.unary(nesting)
        while self.peek()[1] in ("*", "/"):
            op = self.next()[1]
            right = self.unary(nesting)
            node = self.node(Binary("mul" if op == "*" else "div", node, right), node, right)
        return node

    def unary(self, nesting):
        # Signs are read in a loop, not by recursion: "------x" must not exhaust the stack.
        negations = 0
        while self.peek()[1] in ("-", "+"):
            negations += self.next()[1] == "-"
            if negations > MAX_DEPTH:
                self.fail(
                    f"the expression nests deeper than {MAX_DEPTH} levels (parentheses, "
                    "reductions, signs and chained operators)"
                )
        node = self.primary(nesting)
        for _ in range(negations):
            node = self.node(Negate(node), node)
        return node

    def primary(self, nesting):
        kind, text, column = self.peek()
        if nesting > MAX_DEPTH:
            self.fail(
                f"the expression nests deeper than {MAX_DEPTH} levels (parentheses, "
                "reductions, signs and chained operators)"
            )
        if kind == "number":
            self.next()
            if text.endswith("j"):
                return self.node(Literal(complex(text)))
            if any(c in text for c in ".eE"):
                return self.node(Literal(float(text)))
            value = int(text)
            if not _INT64[0] <= value <= _INT64[1]:
                self.fail(
                    f"the integer literal {text} does not fit in int64 (write it as a "
                    f"float: {text}.0)",
                    column,
                )
            return self.node(Literal(value))
        if text == "(":
            self.next()
            node = self.expr(nesting + 1)
            self.expect(")")
            return node
        if kind == "name":
            self.next()
            if text in _REDUCTIONS and self.peek()[1] == "(" and text not in self.tensors:
                self.next()
                var_kind, var, var_column = self.next()
                if var_kind != "name":
                    self.fail(f"{text}(...) takes an index variable first", var_column)
                self.expect(",")
                body = self.expr(nesting + 1)
                self.expect(")")
                return self.node(Reduction(_REDUCTIONS[text], IndexVar(var), body), body)
            indices = self.index_list() if self.peek()[1] == "(" else []
            ref = self.tensor(text, len(indices), column)
            if ref.column is None:
                ref.column = column
            return self.node(Access(ref, indices))
        found = "the end of the expression" if kind == "end" else repr(text)
        self.fail(f"expected a tensor, a number or '(' but found {found}", column)


# A parsed statement: the assignment, over TensorRefs, and the tensors it names by name.
Parsed: TypeAlias = tuple[Assignment, dict[str, TensorRef]]


def parse(text: str) -> Parsed:
    """Parse a statement; returns ``(assignment, tensors)`` where accesses refer to
    :class:`TensorRef` objects and ``tensors`` maps names to them (result first)."""
    if not isinstance(text, str):
        raise TypeError(f"expected an expression string, got {type(text).__name__}")
    parser = _Parser(text)
    assignment = parser.statement()
    return assignment, parser.tensors


# parse_once's texts kept: ct.evaluate's statements, and the autoscheduler's kernel stages.
_PARSED_KEPT = 256


@functools.lru_cache(maxsize=_PARSED_KEPT)
def parse_once(text: str) -> Parsed:
    """``parse(text)``, once per text: the result is shared, so callers only read it (parsing
    costs more than a small kernel's call, and ct.evaluate and schedule="auto" repeat texts)."""
    return parse(text)
