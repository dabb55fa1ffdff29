"""The seeds' languages: SCAN, SCAN actions, COGS, Karel, Calculator.

Each adapter parses a program column into a :class:`~hf_synthsample.structure.Node` tree, marking
what the abstract template hides (``kind``): lexical items (SCAN primitives, COGS nouns and verbs,
Karel actions) are ``"func"``, values (COGS variables, Karel repeat counts, digits) ``"entity"``,
Karel conditions ``"property"``. Atoms and compounds keep the lexical items, so CMaxEnt balances
``(twice jump)`` against ``(twice walk)`` while UAT balances the abstract shapes. Registered by
:mod:`hf_synthsample.languages`: ``scan`` (SCAN / SCAN* commands), ``scan_actions`` (action
sequences, run lengths hidden), ``cogs`` (logical forms), ``karel`` (token programs) and
``calculator`` (expressions).

Example:
    >>> from hf_synthsample.structure import abstract_template, atoms, compounds
    >>> abstract_template("jump around left twice and walk", language="scan")
    '(and (twice (around func left)) func)'
    >>> compounds("jump twice", language="scan", max_height=1)
    ['(twice jump)']
    >>> abstract_template("5+4*(2+3)", language="calculator")
    '(+ entity (* entity (+ entity entity)))'
    >>> atoms("DEF run m( REPEAT R=3 r( move r) m)", language="karel")
    ['run', 'repeat', 'entity', 'move']
"""

from __future__ import annotations

import re

from ..structure import Node

__all__ = ["parse_scan", "parse_scan_actions", "parse_cogs", "parse_karel", "parse_calculator", "register_all"]

_SCAN_CONJ = ("and", "after")
_SCAN_REPEAT = ("twice", "thrice")
_SCAN_TURN = ("opposite", "around")
_SCAN_DIR = ("left", "right")
_SCAN_KEYWORDS = frozenset(_SCAN_CONJ + _SCAN_REPEAT + _SCAN_TURN + _SCAN_DIR + ("turn",))


def _scan_v(tokens: list[str], text: str) -> Node:
    """V := U | U D | U (opposite|around) D, with ``turn`` as the U of turning."""
    if not tokens or tokens[0] in _SCAN_KEYWORDS - {"turn"}:
        raise ValueError(f"program: expected a SCAN verb in {text!r}, got {' '.join(tokens) or 'nothing'!r}")
    verb = Node(tokens[0], kind="" if tokens[0] == "turn" else "func")
    rest = tokens[1:]
    if not rest:
        if tokens[0] == "turn":
            raise ValueError(f"program: 'turn' needs a direction in {text!r}")
        return verb
    if len(rest) == 1 and rest[0] in _SCAN_DIR:
        return Node(rest[0], (verb,))
    if len(rest) == 2 and rest[0] in _SCAN_TURN and rest[1] in _SCAN_DIR:
        return Node(rest[0], (verb, Node(rest[1])))
    raise ValueError(f"program: cannot parse SCAN phrase {' '.join(tokens)!r} in {text!r}")


def _scan_s(tokens: list[str], text: str) -> Node:
    if tokens and tokens[-1] in _SCAN_REPEAT:
        return Node(tokens[-1], (_scan_v(tokens[:-1], text),))
    return _scan_v(tokens, text)


def parse_scan(text: str) -> Node:
    """A SCAN (or SCAN*) command as a tree: conjunction > repetition > turn > verb.

    Any word that is not a SCAN keyword is a verb, so SCAN* primitives parse too.
    """
    tokens = text.split()
    if not tokens:
        raise ValueError("program: empty SCAN command")
    for conj in _SCAN_CONJ:
        if conj in tokens:
            i = tokens.index(conj)
            return Node(conj, (_scan_s(tokens[:i], text), _scan_s(tokens[i + 1:], text)))
    return _scan_s(tokens, text)


def parse_scan_actions(text: str) -> Node:
    """An action sequence as runs of one action: ``(actions (run I_JUMP 3) ...)``; counts are values."""
    tokens = text.split()
    if not tokens:
        return Node("actions")
    runs, start = [], 0
    for i in range(1, len(tokens) + 1):
        if i == len(tokens) or tokens[i] != tokens[start]:
            runs.append(Node("run", (Node(tokens[start]), Node(str(i - start), kind="entity"))))
            start = i
    return Node("actions", tuple(runs))


_COGS_TERM = re.compile(r"^(?P<pred>[^()]+?)\s*\(\s*(?P<args>[^()]*)\)$")


def _cogs_arg(arg: str, text: str) -> Node:
    arg = arg.strip()
    if not arg:
        raise ValueError(f"program: empty argument in COGS form {text!r}")
    return Node(arg.replace(" ", ""), kind="entity")


def _cogs_term(term: str, text: str) -> Node:
    if re.fullmatch(r"\s*[A-Za-z]+\s*", term):  # a primitive example's bare proper name: ``Layla``
        return Node("name", (Node(term.strip(), kind="func"),))
    m = _COGS_TERM.match(term.strip())
    if not m:
        raise ValueError(f"program: cannot parse COGS term {term.strip()!r} in {text!r}")
    parts = [p.strip() for p in m.group("pred").split(" . ")]
    if not all(parts):
        raise ValueError(f"program: empty predicate in COGS term {term.strip()!r}")
    args = tuple(_cogs_arg(a, text) for a in m.group("args").split(","))
    # ``eat . agent ( e , b )``: the role path is the structure, the word a lexical item
    role = ".".join(parts[1:]) or "pred"
    return Node(role, (Node(parts[0], kind="func"), *args))


def parse_cogs(text: str) -> Node:
    """A COGS logical form: ``(lf (lambda a b e)? (def noun x)* (role word args...)*)``."""
    body = text.strip()
    if not body:
        raise ValueError("program: empty COGS logical form")
    children: list[Node] = []
    lambdas = []
    while body.startswith("LAMBDA "):
        head, sep, rest = body[len("LAMBDA "):].partition(" . ")
        if not sep or not head.strip():
            raise ValueError(f"program: bad LAMBDA prefix in {text!r}")
        lambdas.append(Node(head.strip(), kind="entity"))
        body = rest
    if lambdas:
        children.append(Node("lambda", tuple(lambdas)))
    if " ; " in body or body.startswith("* "):
        *defs, body = body.split(" ; ")
        for d in defs:
            if not d.startswith("* "):
                raise ValueError(f"program: expected '* noun ( x )' before ';' in {text!r}")
            term = _cogs_term(d[2:], text)
            children.append(Node("def", term.children))
    children.extend(_cogs_term(t, text) for t in body.split(" AND "))
    return Node("lf", tuple(children))


def _karel_cond(cond) -> Node:
    if isinstance(cond, tuple):  # ("not", cond)
        return Node("not", (_karel_cond(cond[1]),))
    return Node(cond, kind="property")


def _karel_body(body) -> tuple[Node, ...]:
    out = []
    for stmt in body:
        if isinstance(stmt, str):
            out.append(Node(stmt, kind="func"))
            continue
        head = stmt[0]
        if head == "repeat":
            out.append(Node("repeat", (Node(str(stmt[1]), kind="entity"), *_karel_body(stmt[2]))))
        elif head in ("while", "if"):
            body = Node("do" if head == "while" else "then", _karel_body(stmt[2]))
            out.append(Node(head, (_karel_cond(stmt[1]), body)))
        else:  # ifelse
            out.append(Node("ifelse", (_karel_cond(stmt[1]), Node("then", _karel_body(stmt[2])),
                                       Node("else", _karel_body(stmt[3])))))
    return tuple(out)


def parse_karel(text: str) -> Node:
    """A Karel program (token form) as ``(run stmt...)``; syntax errors are ``ValueError``."""
    from ..domains.karel import dsl

    return Node("run", _karel_body(dsl.parse(text)))


_DIGITS = tuple(Node(str(d), kind="entity") for d in range(10))


def parse_calculator(text: str) -> Node:
    """A Calculator expression as its operator tree (parentheses are implied by the tree)."""
    from ..domains import calculator

    # built bottom-up without recursion: a long chain 1+1+...+1 is a deep tree, refused with a
    # ValueError by the structure module's height check, never a RecursionError here
    return calculator.fold(calculator.parse(text), _DIGITS.__getitem__, lambda op, a, b: Node(op, (a, b)))


def register_all(register) -> None:
    """Register the adapters of this module with ``register(name, parse, description)``."""
    register("scan", parse_scan, "SCAN / SCAN* commands: conjunction > repetition > turn > verb")
    register("scan_actions", parse_scan_actions, "SCAN action sequences as runs of one action (run lengths: values)")
    register("cogs", parse_cogs, "COGS logical forms (variables: values)")
    register("karel", parse_karel, "Karel programs in token form (repeat counts: values)")
    register("calculator", parse_calculator, "Calculator expressions (digits: values)")
