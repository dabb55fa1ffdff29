"""ThingTalk 1.x (the space-tokenized "NN syntax" of Schema2QA): tokenizer, parser, printer.

Covers what the Schema2QA annotated data and the synthetic pool use: ``now => QUERY => notify``
with tables, ``filter`` (``and`` / ``or`` / ``not``, typed comparisons, sub-queries ``@T { F }``),
projections, ``sort``, indices and slices, ``aggregate``, ``compute``, joins, typed values and
placeholders (``NUMBER_0``...). As Genie prints ThingTalk 1, every table operand is parenthesized
and the top-level query is not, so :func:`to_string` of :func:`parse` gives the annotated programs
back unchanged. Tree nodes (:class:`~hf_synthsample.structure.Node`) carry the kinds of the
abstract template (``entity``, ``table``, ``property``, ``type``, ``op``, ``func``, ``func_mod``).

Example:
    >>> p = 'now => ( @org.schema.Book.Book ) filter param:numberOfPages:Number >= NUMBER_0 => notify'
    >>> to_string(parse(p)) == p
    True
    >>> template(parse(p))
    'now => ( @table ) filter param:property:type op entity => notify'
"""

from __future__ import annotations

import functools
from typing import Callable

from ..structure import Language, Node
from ..validation import MAX_NESTING, nesting_message

__all__ = ["ThingTalkSyntaxError", "tokenize", "parse", "to_string", "template", "render", "COMPARISON_OPS",
           "AGGREGATE_OPS", "THINGTALK_LANGUAGE"]

COMPARISON_OPS = frozenset(
    "== != >= <= > < =~ ~= contains contains~ in_array in_array~ starts_with ends_with prefix_of suffix_of".split()
)
AGGREGATE_OPS = frozenset(("count", "avg", "sum", "min", "max"))
SCALAR_FUNCS = frozenset(("count", "distance", "avg", "sum", "min", "max"))
# tokens that can never start or continue a value
_STRUCTURAL = frozenset(
    "( ) [ ] { } , => and or not filter of join sort aggregate compute notify : + -".split()
) | COMPARISON_OPS


class ThingTalkSyntaxError(ValueError):
    """An unparsable program: ``position`` (character offset), ``token_index`` and ``token``."""

    def __init__(self, message: str, program: str, token_index: int, tokens: list[str]):
        self.program = program
        self.token_index = token_index
        self.token = tokens[token_index] if token_index < len(tokens) and tokens[token_index] else "<end>"
        self.position = _char_offset(program, tokens, token_index)
        super().__init__(
            f"program: {message} at character {self.position} (token {token_index}: {self.token!r}) in "
            f"{program[:200]!r}{'...' if len(program) > 200 else ''}"
        )


def _char_offset(program: str, tokens: list[str], index: int) -> int:
    pos = 0
    for i, tok in enumerate(tokens):
        pos = program.index(tok, pos)
        if i == index:
            return pos
        pos += len(tok)
    return len(program)


def tokenize(program: str) -> list[str]:
    """Tokens of a ThingTalk NN-syntax program (whitespace-separated)."""
    if not isinstance(program, str):
        raise TypeError(f"program must be a str, got {type(program).__name__}")
    return program.split()


# Node constructors (kinds per Oren et al. 2021, Table 2)
def _param(tok: str) -> Node:
    # param:NAME[:TYPE]; types may contain ':' (Entity(org.schema.Book:Person))
    rest = tok[6:]
    i = rest.find(":")
    if i < 0:
        return Node("param", (Node(rest, (), "property"),), "", "param")
    return Node("param", (Node(rest[:i], (), "property"), Node(rest[i + 1 :], (), "type")), "", "param")


# Trees are read-only, so parameter and table nodes are shared between parses (they repeat a lot).
_PARAMS: dict[str, Node] = {}
_TABLES: dict[str, Node] = {}
_CACHE_LIMIT = 100_000


def _cached(cache: dict, key: str, node: Node) -> Node:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = node
    return node


def _nested(parse: Callable[[_Parser], Node]) -> Callable[[_Parser], Node]:
    """A parse method that reads one nesting level deeper (bounded by MAX_NESTING)."""

    @functools.wraps(parse)
    def method(self: _Parser) -> Node:
        self.enter()
        tree = parse(self)
        self.depth -= 1
        return tree

    return method


class _Parser:
    __slots__ = ("toks", "i", "n", "program", "depth")

    def __init__(self, program: str):
        self.program = program
        self.toks = program.split()
        self.n = len(self.toks)
        self.toks.append("")  # sentinel: reading past the end sees "" instead of raising
        self.i = 0
        # nested tables, filters, scalars and values being read, plus filter/index/join chain links:
        # bounded by MAX_NESTING, so neither this parser nor a walker of its tree recurses too deep
        self.depth = 0

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            self.error(nesting_message())

    # -------------------------------------------------------------- helpers
    def error(self, message: str, index: int | None = None):
        raise ThingTalkSyntaxError(message, self.program, self.i if index is None else index, self.toks)

    def expect(self, *toks: str) -> None:
        for tok in toks:
            if self.toks[self.i] != tok:
                self.error(f"expected {tok!r}" + (" but the program ended" if self.i >= self.n else ""))
            self.i += 1

    def param(self) -> Node:
        tok = self.toks[self.i]
        node = _PARAMS.get(tok)
        if node is None:
            if not tok.startswith("param:") or len(tok) <= 6:
                self.error("expected a parameter (param:NAME:TYPE)")
            node = _cached(_PARAMS, tok, _param(tok))
        self.i += 1
        return node

    # -------------------------------------------------------------- program
    def program_(self) -> Node:
        self.expect("now", "=>")
        query = self.table()
        self.expect("=>", "notify")
        if self.i != self.n:
            self.error("unexpected token after the end of the program")
        return Node("program", (query,), "", "program")

    # -------------------------------------------------------------- tables
    def operand(self) -> Node:
        self.expect("(")
        t = self.table()
        self.expect(")")
        return t

    @_nested
    def table(self) -> Node:
        tok = self.toks[self.i]
        if tok == "(":
            t = self.operand()
            links = 0
            while (tok := self.toks[self.i]) in ("filter", "[", "join"):
                self.enter()  # each link puts the table one level deeper
                links += 1
                if tok == "filter":
                    self.i += 1
                    t = Node("filter", (t, self.filter_()), "", "filter")
                elif tok == "[":
                    t = self.index(t)
                else:
                    self.i += 1
                    t = Node("join", (t, self.operand()), "", "join")
            self.depth -= links
            return t
        if tok.startswith("@"):
            self.i += 1
            return _TABLES.get(tok) or _cached(_TABLES, tok, Node(tok, (), "table", "table"))
        if tok == "[":
            self.i += 1
            params = self.separated(",", self.param)
            self.expect("]", "of")
            return Node("projection", (*params, self.operand()), "", "projection")
        if tok == "sort":
            self.i += 1
            p = self.param()
            d = self.toks[self.i]
            if d not in ("asc", "desc"):
                self.error("expected 'asc' or 'desc'")
            self.i += 1
            self.expect("of")
            return Node("sort", (p, Node(d, (), "func_mod"), self.operand()), "func", "sort")
        if tok == "aggregate":
            self.i += 1
            op = self.toks[self.i]
            if op not in AGGREGATE_OPS:
                self.error(f"expected an aggregation operator {sorted(AGGREGATE_OPS)}")
            self.i += 1
            args = [Node(op, (), "func")]
            if self.toks[self.i].startswith("param:"):
                args.append(self.param())
            self.expect("of")
            return Node("aggregate", (*args, self.operand()), "func", "aggregate")
        if tok == "compute":
            self.i += 1
            expr = self.scalar()
            self.expect("of")
            return Node("compute", (expr, self.operand()), "", "compute")
        if self.i >= self.n:
            self.error("expected a table but the program ended")
        self.error("expected a table")

    def index(self, t: Node) -> Node:
        self.expect("[")
        first = self.value()
        if self.toks[self.i] == ":":
            self.i += 1
            second = self.value()
            self.expect("]")
            return Node("slice", (t, first, second), "", "slice")
        items = self.separated(",", self.value, first)
        self.expect("]")
        return Node("index", (t, *items), "", "index")

    # -------------------------------------------------------------- scalar expressions
    @_nested
    def scalar(self) -> Node:
        """``count ( p [filter { F }] )``, ``distance ( a , b )``, ``sum ( p )`` ... or a parameter."""
        tok = self.toks[self.i]
        if tok in SCALAR_FUNCS and self.i + 1 < self.n and self.toks[self.i + 1] == "(":
            self.i += 2
            args = self.separated(",", self.scalar_arg)
            self.expect(")")
            return Node(tok, tuple(args), "func", "call")
        return self.param()

    def scalar_arg(self) -> Node:
        tok = self.toks[self.i]
        if tok.startswith("param:"):
            p = self.param()
            if self.toks[self.i] == "filter":
                self.expect("filter", "{")
                f = self.filter_()
                self.expect("}")
                return Node("filter", (p, f), "", "array_filter")
            return p
        if tok in SCALAR_FUNCS and self.i + 1 < self.n and self.toks[self.i + 1] == "(":
            return self.scalar()
        return self.value()

    # -------------------------------------------------------------- filters
    def filter_(self) -> Node:
        # ThingTalk 1 NN syntax: 'or' binds tighter than 'and' (filters are conjunctions of clauses)
        return self.chain("and", self.or_)

    def or_(self) -> Node:
        return self.chain("or", self.unary)

    def chain(self, op: str, part: Callable[[], Node]) -> Node:
        """``part op part op ...``: one ``op`` node over the parts (a lone part as it is)."""
        parts = self.separated(op, part)
        return parts[0] if len(parts) == 1 else Node(op, tuple(parts), "op", op)

    def separated(self, sep: str, part: Callable[[], Node], first: Node | None = None) -> list[Node]:
        """``part sep part sep ...`` (``first``: the first part, already read)."""
        parts = [part() if first is None else first]
        while self.toks[self.i] == sep:
            self.i += 1
            parts.append(part())
        return parts

    @_nested
    def unary(self) -> Node:
        tok = self.toks[self.i]
        if tok == "not":
            self.i += 1
            return Node("not", (self.unary(),), "op", "not")
        if tok == "(":
            self.i += 1
            f = self.filter_()
            self.expect(")")
            return Node("group", (f,), "", "group")
        if tok in ("true", "false") and self.i + 1 < self.n and self.toks[self.i + 1] not in COMPARISON_OPS:
            self.i += 1
            return Node(tok, (), "entity", "bool_filter")
        if tok.startswith("@"):
            self.expect(tok, "{")
            f = self.filter_()
            self.expect("}")
            return Node("subquery", (Node(tok, (), "table", "table"), f), "", "subquery")
        if not tok:
            self.error("expected a filter but the program ended")
        lhs = self.scalar()
        op = self.toks[self.i]
        if op not in COMPARISON_OPS:
            self.error(f"expected a comparison operator {sorted(COMPARISON_OPS)}")
        self.i += 1
        rhs = self.param() if self.toks[self.i].startswith("param:") else self.value()
        return Node(op, (lhs, rhs), "op", "cmp")

    # -------------------------------------------------------------- values
    @_nested
    def value(self) -> Node:
        start = self.i
        self.value_primary()
        while self.toks[self.i] in ("+", "-"):
            self.i += 1
            self.value_primary()
        return Node(" ".join(self.toks[start : self.i]), (), "entity", "value")

    def value_primary(self) -> None:
        tok = self.toks[self.i]
        if not tok:
            self.error("expected a value but the program ended")
        if tok == "location:":
            self.i += 1
            if self.toks[self.i] != '"':
                self.error("expected '\"' after 'location:'")
            tok = '"'
        if tok == '"':
            self.i += 1
            while self.i < self.n and self.toks[self.i] != '"':
                self.i += 1
            if self.i >= self.n:
                self.error("unterminated string", self.n)
            self.i += 1
            if self.toks[self.i].startswith("^^"):
                self.i += 1
            return
        if tok == "[":
            self.i += 1
            self.separated(",", self.value)
            self.expect("]")
            return
        if tok == "new":
            self.i += 1
            if self.toks[self.i] in ("", "(") or self.toks[self.i] in _STRUCTURAL:
                self.error("expected a type after 'new'")
            self.i += 1
            self.expect("(")
            while self.i < self.n and self.toks[self.i] != ")":
                if self.toks[self.i] != "," and self.toks[self.i] in _STRUCTURAL:
                    self.error("unexpected token in a constructor")
                self.i += 1
            self.expect(")")
            return
        if tok in ("start_of", "end_of"):
            self.i += 1
            if not self.toks[self.i].startswith("unit:"):
                self.error("expected a unit after " + repr(tok))
            self.i += 1
            return
        if tok in _STRUCTURAL or tok.startswith("param:") or tok.startswith("@") or tok.startswith("^^"):
            self.error("expected a value")
        self.i += 1
        if self.toks[self.i].startswith(("unit:", "^^")):
            self.i += 1


def parse(program: str) -> Node:
    """The tree of a ThingTalk 1.x program; :class:`ThingTalkSyntaxError` (a ``ValueError``) if invalid,
    or nested deeper than :data:`~hf_synthsample.validation.MAX_NESTING` (tables, filters, calls, values, links).

    Example:
        >>> parse('now => @org.schema.Book.Book => notify').children[0].kind
        'table'
    """
    if not isinstance(program, str):
        raise TypeError(f"program must be a str, got {type(program).__name__}")
    return _Parser(program).program_()


# ---------------------------------------------------------------------- printing


def _emit(node: Node, out: list, tout: list) -> None:
    """Append the program tokens of ``node`` to ``out`` and its template tokens to ``tout``."""
    rule = node.rule
    c = node.children
    if rule == "param":
        out.append("param:" + c[0].label + ":" + c[1].label if len(c) == 2 else "param:" + c[0].label)
        tout.append("param:property:type")  # an omitted type is still a type: same template
    elif rule == "value" or rule == "bool_filter":
        _seq(out, tout, (node.label, "entity"))
    elif rule == "cmp":
        _seq(out, tout, c[0], (node.label, "op"), c[1])
    elif rule == "table":
        _seq(out, tout, (node.label, "@table"))
    elif rule == "filter":
        _seq(out, tout, "(", c[0], ")", "filter", c[1])
    elif rule == "and" or rule == "or":
        _seq(out, tout, *_separated(c, (node.label, "op")))
    elif rule == "projection":
        _seq(out, tout, "[", *_separated(c[:-1], ","), "]", "of", "(", c[-1], ")")
    elif rule == "program":
        _seq(out, tout, "now", "=>", c[0], "=>", "notify")
    elif rule == "index" or rule == "slice":
        _seq(out, tout, "(", c[0], ")", "[", *_separated(c[1:], "," if rule == "index" else ":"), "]")
    elif rule == "sort":
        _seq(out, tout, ("sort", "func"), c[0], (c[1].label, "func_mod"), "of", "(", c[2], ")")
    elif rule == "compute":
        _seq(out, tout, "compute", c[0], "of", "(", c[1], ")")
    elif rule == "call":
        _seq(out, tout, (node.label, "func"), "(", *_separated(c, ","), ")")
    elif rule == "not":
        _seq(out, tout, ("not", "op"), c[0])
    elif rule == "group":
        _seq(out, tout, "(", c[0], ")")
    elif rule == "aggregate":  # the operator, an optional parameter, the table
        _seq(out, tout, ("aggregate", "func"), (c[0].label, "func"), *c[1:-1], "of", "(", c[-1], ")")
    elif rule == "array_filter":
        _seq(out, tout, c[0], "filter", "{", c[1], "}")
    elif rule == "subquery":
        _seq(out, tout, c[0], "{", c[1], "}")
    elif rule == "join":
        _seq(out, tout, "(", c[0], ")", "join", "(", c[1], ")")
    else:
        raise ValueError(f"tree: unknown ThingTalk node rule {rule!r} (label {node.label!r})")


def _seq(out: list, tout: list, *items) -> None:
    """Each item in order: a node (emitted), a ``(word, template token)`` pair, or a word that is its own token."""
    for item in items:
        if type(item) is str:
            out.append(item)
            tout.append(item)
        elif type(item) is tuple:
            out.append(item[0])
            tout.append(item[1])
        else:
            _emit(item, out, tout)


def _separated(nodes, sep) -> list:
    """``nodes`` with ``sep`` between them."""
    return [x for i, n in enumerate(nodes) for x in ((sep, n) if i else (n,))]


def render(tree: Node) -> tuple[str, str]:
    """``(program, abstract template)`` of a tree, in one pass."""
    out: list[str] = []
    tout: list[str] = []
    _emit(tree, out, tout)
    return " ".join(out), " ".join(tout)


def to_string(tree: Node) -> str:
    """Print a tree as a ThingTalk NN-syntax program."""
    return render(tree)[0]


def template(tree: Node) -> str:
    """The abstract template of a tree (Oren et al. 2021, Table 2)."""
    return render(tree)[1]


#: ThingTalk as a structure language (named in :data:`hf_synthsample.structure.LANGUAGES`)
THINGTALK_LANGUAGE = Language("thingtalk", parse, template,
                              description="ThingTalk NN-syntax programs (Schema2QA): templates of Oren et al. 2021")
