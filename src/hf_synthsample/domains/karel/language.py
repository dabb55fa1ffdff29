"""Karel programs as a structure language (``karel``), the object named in
:data:`hf_synthsample.structure.LANGUAGES`.

A program in token form is ``(run stmt...)``: actions are lexical items (``kind="func"``),
conditions properties (``kind="property"``), repeat counts values (``kind="entity"``). Kept apart
from the generators, whose source is the builder's cache key.

Example:
    >>> from hf_synthsample.structure import atoms
    >>> atoms("DEF run m( REPEAT R=3 r( move r) m)", language="karel")
    ['run', 'repeat', 'entity', 'move']
"""

from __future__ import annotations

from ...structure import Language, Node
from . import dsl

__all__ = ["parse_karel", "KAREL_LANGUAGE"]

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
    return Node("run", _karel_body(dsl.parse(text)))


KAREL_LANGUAGE = Language("karel", parse_karel, description="Karel programs in token form (repeat counts: values)")
