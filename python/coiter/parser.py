"""The string syntax of index notation (API.md §3):

    statement := target ("=" | "+=") expr
    target    := NAME [ "(" [ index ("," index)* ] ")" ]
    expr      := term (("+" | "-") term)*
    term      := unary (("*" | "/") unary)*
    unary     := ("-" | "+") unary | primary
    primary   := NUMBER | "(" expr ")" | reduction | access
    reduction := ("sum" | "max" | "min") "(" index "," expr ")"
    access    := NAME [ "(" [ index ("," index)* ] ")" ]        (no parentheses: a scalar)

Errors raise :class:`coiter.ParseError` with the 1-based column of the offending token.
"""
import re

from .errors import ParseError
from .notation import Access, Assignment, Binary, IndexVar, Literal, Negate, Reduction

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?j?)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>\+=|[-+*/(),=])
""", re.VERBOSE)

_REDUCTIONS = {"sum": "add", "max": "max", "min": "min"}


class TensorRef:
    """A tensor named in a string expression, before it is bound to data."""

    def __init__(self, name, order):
        self.name = name
        self.order = order

    def __repr__(self):
        return f"TensorRef({self.name!r}, order={self.order})"


def _tokenize(text):
    tokens, at = [], 0
    while at < len(text):
        m = _TOKEN.match(text, at)
        if not m:
            raise ParseError(f"unexpected character {text[at]!r} at column {at + 1} in {text!r}",
                             column=at + 1)
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

    def expr(self):
        node = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.next()[1]
            node = Binary("add" if op == "+" else "sub", node, self.term())
        return node

    def term(self):
        node = self.unary()
        while self.peek()[1] in ("*", "/"):
            op = self.next()[1]
            node = Binary("mul" if op == "*" else "div", node, self.unary())
        return node

    def unary(self):
        if self.peek()[1] == "-":
            self.next()
            return Negate(self.unary())
        if self.peek()[1] == "+":
            self.next()
            return self.unary()
        return self.primary()

    def primary(self):
        kind, text, column = self.peek()
        if kind == "number":
            self.next()
            if text.endswith("j"):
                return Literal(complex(text))
            return Literal(float(text) if any(c in text for c in ".eE") else int(text))
        if text == "(":
            self.next()
            node = self.expr()
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
                body = self.expr()
                self.expect(")")
                return Reduction(_REDUCTIONS[text], IndexVar(var), body)
            indices = self.index_list() if self.peek()[1] == "(" else []
            return Access(self.tensor(text, len(indices), column), indices)
        found = "the end of the expression" if kind == "end" else repr(text)
        self.fail(f"expected a tensor, a number or '(' but found {found}", column)


def parse(text):
    """Parse a statement; returns ``(assignment, tensors)`` where accesses refer to
    :class:`TensorRef` objects and ``tensors`` maps names to them (result first)."""
    if not isinstance(text, str):
        raise TypeError(f"expected an expression string, got {type(text).__name__}")
    parser = _Parser(text)
    assignment = parser.statement()
    return assignment, parser.tensors
