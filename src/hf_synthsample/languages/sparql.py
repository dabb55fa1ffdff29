"""CFQ's SPARQL as a structure language (``"sparql"``), parsed with a `lark <https://lark-parser.readthedocs.io>`_
grammar.

CFQ (Keysers et al. 2020) writes its queries as one ``SELECT`` over a basic graph pattern::

    SELECT DISTINCT ?x0 WHERE { ?x0 a ns:film.actor . ?x0 ns:film.actor.film/ns:film.performance.film M1 .
    FILTER ( ?x0 != M1 ) }

(and ``SELECT count(*) WHERE { ... }`` for yes/no questions). The tree::

    (query (select distinct ?x0)
           (where (triple ?x0 a ns:film.actor)
                  (triple ?x0 (path ns:film.actor.film ns:film.performance.film) M1)
                  (filter (!= ?x0 M1))))

- the select is ``(select distinct var...)``, ``(select var...)`` or ``(select (count *))``;
- one ``(triple subject predicate object)`` per triple pattern, in the query's order; a property
  path ``p1/p2`` is ``(path p1 p2)``; ``FILTER ( a != b )`` is ``(filter (!= a b))`` (``=``, ``!=``,
  ``<``, ``>``, ``<=``, ``>=``);
- **values** (``kind="entity"``, value type ``entity``): variables ``?x0`` and CFQ's entity
  placeholders ``M0``, ``M1``...; **atoms**: predicates and classes (``ns:film.actor``, ``a``) and
  fixed Freebase nodes (``ns:m.05zppz``), which CFQ keeps in its questions' words.

Keywords are case-insensitive; a ``.`` may end the last triple; ``PREFIX`` lines are allowed and
left out of the tree. Text the grammar refuses is a ``ValueError`` starting with ``program:``.
lark is imported, and the parser built, on the first parse.

Example:
    >>> from hf_synthsample.structure import abstract_template, atoms
    >>> q = "SELECT count(*) WHERE { ?x0 a ns:film.actor . M1 ns:film.film.directed_by ?x0 }"
    >>> abstract_template(q, language="sparql")
    '(query (select (count *)) (where (triple entity a ns:film.actor) (triple entity ns:film.film.directed_by entity)))'
    >>> atoms("SELECT DISTINCT ?x0 WHERE { ?x0 a ns:film.actor }", language="sparql")
    ['query', 'select', 'distinct', 'entity', 'where', 'triple', 'entity', 'a', 'ns:film.actor']
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..structure import Language, Node
from ..validation import nesting_message

__all__ = ["SPARQL_GRAMMAR", "parse_sparql", "SPARQL_LANGUAGE"]

#: the lark grammar of CFQ's SPARQL (LALR)
SPARQL_GRAMMAR = r"""
start: prefix* "SELECT"i select "WHERE"i "{" body "}"
prefix: "PREFIX"i PNAME_NS IRIREF
select: DISTINCT? VAR+      -> select_vars
      | "count"i "(" "*" ")" -> select_count
body: (pattern ("." pattern)* "."?)?
?pattern: triple | filter
triple: term verb term
?verb: path | A
path: iri ("/" iri)+
    | iri
filter: "FILTER"i "(" term COMPARISON term ")"
?term: VAR | ENTITY | iri
?iri: PNAME | IRIREF

DISTINCT: "DISTINCT"i
A: "a"
VAR: /[?$][A-Za-z_][A-Za-z0-9_]*/
ENTITY: /M[0-9]+/
PNAME: /[A-Za-z_][\w-]*:[\w-]+(\.[\w-]+)*/
PNAME_NS: /[A-Za-z_][\w-]*:/
IRIREF: /<[^<>\s]*>/
COMPARISON: "!=" | "<=" | ">=" | "=" | "<" | ">"
%import common.WS
%ignore WS
"""


@lru_cache(maxsize=1)
def _parser() -> Any:
    from lark import Lark

    return Lark(SPARQL_GRAMMAR, parser="lalr", maybe_placeholders=False)


def parse_sparql(text: str) -> Node:
    """A CFQ SPARQL query as a tree (see the module).

    Example:
        >>> tree = parse_sparql("SELECT DISTINCT ?x0 WHERE { ?x0 a ns:film.actor . FILTER ( ?x0 != M1 ) }")
        >>> tree.to_sexpr(abstract=True)
        '(query (select distinct entity) (where (triple entity a ns:film.actor) (filter (!= entity entity))))'
    """
    if not isinstance(text, str):
        raise TypeError(f"program must be a str, got {type(text).__name__}")
    from lark.exceptions import LarkError

    try:
        tree = _parser().parse(text)
    except LarkError as err:
        raise ValueError(f"program: cannot parse SPARQL {text!r}: {' '.join(str(err).split())}") from None
    try:
        return _convert(tree)
    except RecursionError:
        raise ValueError(f"program: SPARQL {nesting_message()}") from None


def _term(token: Any) -> Node:
    if token.type in ("VAR", "ENTITY"):
        return Node(str(token), (), "entity")
    return Node(str(token))


def _convert(tree: Any) -> Node:
    from lark import Token

    select, body = [c for c in tree.children if getattr(c, "data", None) != "prefix"]
    if select.data == "select_count":
        head = Node("select", (Node("count", (Node("*"),)),))
    else:
        head = Node("select", tuple(Node("distinct") if t.type == "DISTINCT" else _term(t) for t in select.children))
    patterns = []
    for p in body.children:
        if p.data == "filter":
            left, op, right = p.children
            patterns.append(Node("filter", (Node(str(op), (_term(left), _term(right))),)))
            continue
        subject, verb, obj = p.children
        if isinstance(verb, Token):
            predicate = _term(verb)
        elif len(verb.children) == 1:
            predicate = _term(verb.children[0])
        else:
            predicate = Node("path", tuple(_term(t) for t in verb.children))
        patterns.append(Node("triple", (_term(subject), predicate, _term(obj))))
    return Node("query", (head, Node("where", tuple(patterns))))


#: CFQ's SPARQL as a structure language (named in :data:`hf_synthsample.structure.LANGUAGES`)
SPARQL_LANGUAGE = Language("sparql", parse_sparql, description="CFQ's SPARQL (lark): (query (select ...) (where "
                           "(triple s p o)... (filter ...))); variables and M0..M9: values; predicates and classes: "
                           "atoms")
