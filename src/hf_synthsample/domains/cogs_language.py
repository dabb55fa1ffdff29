"""COGS logical forms as a structure language (``cogs``), the object named in
:data:`hf_synthsample.structure.LANGUAGES`.

A logical form is ``(lf (lambda a b e)? (def noun x)* (role word args...)*)``: nouns and verbs are
lexical items (``kind="func"``), variables values (``kind="entity"``), so atoms and compounds keep
the words while the abstract template hides them.

Example:
    >>> from hf_synthsample.structure import abstract_template
    >>> abstract_template("* cake ( x _ 1 ) ; eat . agent ( x _ 2 , Emma )", language="cogs")
    '(lf (def func entity) (agent func entity entity))'
"""

from __future__ import annotations

import re

from ..structure import Language, Node

__all__ = ["parse_cogs", "COGS_LANGUAGE"]

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


COGS_LANGUAGE = Language("cogs", parse_cogs, description="COGS logical forms (variables: values)")
