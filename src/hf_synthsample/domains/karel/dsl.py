"""The Karel DSL of Bunel et al. (2018): tokens, parser, printer and the ``program_json`` form.

A program is kept as plain tuples (fast to build, hash and walk):

* a *body* is a tuple of statements;
* a statement is an action name (``"move"``, ``"turnLeft"``, ``"turnRight"``, ``"pickMarker"``,
  ``"putMarker"``), ``("repeat", k, body)``, ``("while", cond, body)``, ``("if", cond, body)`` or
  ``("ifelse", cond, body, else_body)``;
* a condition is a condition name (``"frontIsClear"``, ...) or ``("not", cond)``.

:func:`parse` takes the token form used by the field's data (``DEF run m( ... m)``) and returns the
run body; :func:`to_tokens` prints it back, so ``to_tokens(parse(t)) == t`` for every valid ``t``.

Example:
    >>> prog = parse("DEF run m( REPEAT R=3 r( move r) IF c( not c( frontIsClear c) c) i( turnLeft i) m)")
    >>> prog
    (('repeat', 3, ('move',)), ('if', ('not', 'frontIsClear'), ('turnLeft',)))
    >>> " ".join(to_tokens(prog))
    'DEF run m( REPEAT R=3 r( move r) IF c( not c( frontIsClear c) c) i( turnLeft i) m)'
    >>> from_json(to_json(prog)) == prog
    True
"""

from __future__ import annotations

from typing import Any, Sequence, Union

from ...validation import MAX_NESTING, nesting_message

__all__ = ["ACTIONS", "CONDITIONS", "CONTROL", "MAX_REPEAT", "PROGRAM_TOKENS", "SPECIAL_TOKENS", "TOKENS",
           "KarelSyntaxError", "parse", "to_tokens", "to_string", "to_json", "from_json", "tokenize"]

ACTIONS: tuple[str, ...] = ("move", "turnLeft", "turnRight", "pickMarker", "putMarker")
CONDITIONS: tuple[str, ...] = ("frontIsClear", "leftIsClear", "rightIsClear", "markersPresent", "noMarkersPresent")
#: the control-flow constructs (statement heads)
CONTROL: tuple[str, ...] = ("repeat", "while", "if", "ifelse")
MAX_REPEAT = 19  # R=0 .. R=19 are tokens of the vocabulary
_KEYWORDS = ("DEF", "run", "m(", "m)", "REPEAT", "r(", "r)", "WHILE", "c(", "c)", "w(", "w)",
             "IF", "i(", "i)", "IFELSE", "ELSE", "e(", "e)", "not")
#: the 50 tokens that can occur in a program
PROGRAM_TOKENS: tuple[str, ...] = (*_KEYWORDS, *ACTIONS, *CONDITIONS, *(f"R={k}" for k in range(MAX_REPEAT + 1)))
#: sequence delimiters of the model vocabulary
SPECIAL_TOKENS: tuple[str, ...] = ("<s>", "</s>")
#: the 52-token vocabulary: program tokens and the two delimiters
TOKENS: tuple[str, ...] = (*SPECIAL_TOKENS, *PROGRAM_TOKENS)

_ACTION_SET = frozenset(ACTIONS)
_CONDITION_SET = frozenset(CONDITIONS)
_REPEAT_TOKENS = {f"R={k}": k for k in range(MAX_REPEAT + 1)}

Cond = Union[str, tuple]
Stmt = Union[str, tuple]
Body = tuple


class KarelSyntaxError(ValueError):
    """An unparsable program; ``position`` is the index of the offending token."""

    def __init__(self, message: str, position: int):
        super().__init__(f"program: {message} at token {position}")
        self.position = position


def tokenize(program: str | Sequence[str]) -> list[str]:
    """A token list from a space-separated string or a token sequence (checked to be strings)."""
    if isinstance(program, str):
        return program.split()
    if isinstance(program, (list, tuple)) and all(isinstance(t, str) for t in program):
        return list(program)
    raise TypeError(f"program must be a str or a sequence of str tokens, got {type(program).__name__}")


class _Parser:
    __slots__ = ("toks", "i", "depth")

    def __init__(self, toks: list[str]):
        self.toks = toks
        self.i = 0
        self.depth = 0  # open control structures and 'not's: bounded by MAX_NESTING

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise KarelSyntaxError(nesting_message(), self.i)

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def expect(self, *toks: str) -> None:
        for tok in toks:
            got = self.peek()
            if got != tok:
                got = "end of program" if got is None else repr(got)
                raise KarelSyntaxError(f"expected {tok!r}, got {got}", self.i)
            self.i += 1

    def body(self, close: str) -> Body:
        stmts = []
        while True:
            tok = self.peek()
            if tok == close:
                self.i += 1
                return tuple(stmts)
            if tok is None:
                raise KarelSyntaxError(f"expected a statement or {close!r}, got end of program", self.i)
            stmts.append(self.stmt())

    def cond(self) -> Cond:
        tok = self.peek()
        if tok in _CONDITION_SET:
            self.i += 1
            return tok
        if tok == "not":
            self.expect("not", "c(")
            self.enter()
            inner = self.cond()
            self.depth -= 1
            self.expect("c)")
            return ("not", inner)
        raise KarelSyntaxError(f"expected a condition, got {'end of program' if tok is None else repr(tok)}", self.i)

    def stmt(self) -> Stmt:
        tok = self.peek()
        if tok in _ACTION_SET:
            self.i += 1
            return tok
        self.enter()
        out = self.control(tok)
        self.depth -= 1
        return out

    def control(self, tok: str | None) -> Stmt:
        if tok == "REPEAT":
            self.i += 1
            k = _REPEAT_TOKENS.get(self.peek())  # type: ignore[arg-type]
            if k is None:
                raise KarelSyntaxError(f"expected a repeat count R=0..R={MAX_REPEAT}, got {self.peek()!r}", self.i)
            self.i += 1
            self.expect("r(")
            return ("repeat", k, self.body("r)"))
        if tok in ("WHILE", "IF", "IFELSE"):
            self.expect(tok, "c(")
            cond = self.cond()
            self.expect("c)")
            if tok == "WHILE":
                self.expect("w(")
                return ("while", cond, self.body("w)"))
            self.expect("i(")
            body = self.body("i)")
            if tok == "IF":
                return ("if", cond, body)
            self.expect("ELSE", "e(")
            return ("ifelse", cond, body, self.body("e)"))
        raise KarelSyntaxError(f"expected a statement, got {tok!r}", self.i)


def parse(program: str | Sequence[str]) -> Body:
    """Parse the token form (``DEF run m( ... m)``) to the run body; :class:`KarelSyntaxError` if invalid,
    or nested deeper than :data:`~hf_synthsample.validation.MAX_NESTING` (as :func:`from_json` too).

    Example:
        >>> parse(["DEF", "run", "m(", "move", "m)"])
        ('move',)
    """
    toks = tokenize(program)
    p = _Parser(toks)
    p.expect("DEF", "run", "m(")
    body = p.body("m)")
    if p.i != len(toks):
        raise KarelSyntaxError(f"unexpected {toks[p.i]!r} after the end of the program", p.i)
    return body


def _cond_tokens(cond: Cond, out: list[str]) -> None:
    if isinstance(cond, str):
        if cond not in _CONDITION_SET:
            raise ValueError(f"program: unknown condition {cond!r}; accepted: {list(CONDITIONS)}")
        out.append(cond)
    elif isinstance(cond, tuple) and len(cond) == 2 and cond[0] == "not":
        out += ("not", "c(")
        _cond_tokens(cond[1], out)
        out.append("c)")
    else:
        raise ValueError(f"program: malformed condition {cond!r}")


def _body_tokens(body: Body, out: list[str]) -> None:
    for s in body:
        if isinstance(s, str):
            if s not in _ACTION_SET:
                raise ValueError(f"program: unknown action {s!r}; accepted: {list(ACTIONS)}")
            out.append(s)
            continue
        head = s[0] if isinstance(s, tuple) and s else None
        if head == "repeat" and len(s) == 3:
            if not isinstance(s[1], int) or not 0 <= s[1] <= MAX_REPEAT:
                raise ValueError(f"program: repeat count must be an int in 0..{MAX_REPEAT}, got {s[1]!r}")
            out += ("REPEAT", f"R={s[1]}", "r(")
            _body_tokens(s[2], out)
            out.append("r)")
        elif head in ("while", "if", "ifelse") and len(s) == (4 if head == "ifelse" else 3):
            out += ({"while": "WHILE", "if": "IF", "ifelse": "IFELSE"}[head], "c(")
            _cond_tokens(s[1], out)
            out += ("c)", "w(" if head == "while" else "i(")
            _body_tokens(s[2], out)
            out.append("w)" if head == "while" else "i)")
            if head == "ifelse":
                out += ("ELSE", "e(")
                _body_tokens(s[3], out)
                out.append("e)")
        else:
            raise ValueError(f"program: malformed statement {s!r}")


def to_tokens(program: Body) -> list[str]:
    """The token list of a run body (``ValueError`` for a malformed tree)."""
    out = ["DEF", "run", "m("]
    _body_tokens(program, out)
    out.append("m)")
    return out


def to_string(program: Body) -> str:
    """The space-separated token string."""
    return " ".join(to_tokens(program))


# ------------------------------------------------------------------------------------ JSON form
# The nested-object form of Bunel et al.'s data: {"type": "run", "body": [...]}, actions
# {"type": "move"}, {"type": "repeat", "times": {"type": "count", "value": k}, "body": [...]},
# {"type": "while"|"if", "cond": C, "body": [...]}, {"type": "ifElse", "cond": C, "ifBody": [...],
# "elseBody": [...]}, conditions {"type": "frontIsClear"} or {"type": "not", "cond": C}.
def _cond_json(cond: Cond) -> dict:
    if isinstance(cond, str):
        return {"type": cond}
    return {"type": "not", "cond": _cond_json(cond[1])}


def _body_json(body: Body) -> list:
    out = []
    for s in body:
        if isinstance(s, str):
            out.append({"type": s})
        elif s[0] == "repeat":
            out.append({"type": "repeat", "times": {"type": "count", "value": s[1]}, "body": _body_json(s[2])})
        elif s[0] == "ifelse":
            out.append({"type": "ifElse", "cond": _cond_json(s[1]), "ifBody": _body_json(s[2]),
                        "elseBody": _body_json(s[3])})
        else:
            out.append({"type": s[0], "cond": _cond_json(s[1]), "body": _body_json(s[2])})
    return out


def to_json(program: Body) -> dict:
    """The ``program_json`` object of a run body."""
    to_tokens(program)  # validates the tree
    return {"type": "run", "body": _body_json(program)}


def _json_error(what: str, node: Any) -> ValueError:
    return ValueError(f"program_json: {what}, got {node!r}"[:300])


def _check_depth(depth: int) -> None:
    if depth > MAX_NESTING:
        raise ValueError(f"program_json: {nesting_message()}")


def _cond_from(node: Any, depth: int = 0) -> Cond:
    _check_depth(depth)
    if not isinstance(node, dict) or "type" not in node:
        raise _json_error("a condition must be an object with a 'type'", node)
    t = node["type"]
    if t in _CONDITION_SET:
        return t
    if t == "not":
        return ("not", _cond_from(node.get("cond"), depth + 1))
    raise _json_error(f"unknown condition type {t!r}; accepted: {[*CONDITIONS, 'not']}", node)


def _body_from(nodes: Any, depth: int = 0) -> Body:
    _check_depth(depth)
    if not isinstance(nodes, list):
        raise _json_error("a body must be a list", nodes)
    out = []
    for node in nodes:
        if not isinstance(node, dict) or "type" not in node:
            raise _json_error("a statement must be an object with a 'type'", node)
        t = node["type"]
        if t in _ACTION_SET:
            out.append(t)
        elif t == "repeat":
            times = node.get("times")
            k = times.get("value") if isinstance(times, dict) else None
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= MAX_REPEAT:
                raise _json_error(f"repeat needs times.value, an int in 0..{MAX_REPEAT}", node)
            out.append(("repeat", k, _body_from(node.get("body"), depth + 1)))
        elif t in ("while", "if"):
            out.append((t, _cond_from(node.get("cond"), depth + 1), _body_from(node.get("body"), depth + 1)))
        elif t == "ifElse":
            out.append(("ifelse", _cond_from(node.get("cond"), depth + 1), _body_from(node.get("ifBody"), depth + 1),
                        _body_from(node.get("elseBody"), depth + 1)))
        else:
            raise _json_error(f"unknown statement type {t!r}; accepted: {[*ACTIONS, 'repeat', 'while', 'if', 'ifElse']}", node)
    return tuple(out)


def from_json(program_json: dict) -> Body:
    """The run body of a ``program_json`` object (``ValueError`` if malformed)."""
    if not isinstance(program_json, dict) or program_json.get("type") != "run":
        raise _json_error("the top level must be an object with type 'run'", program_json)
    return _body_from(program_json.get("body"))
