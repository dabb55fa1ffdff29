"""GeoQuery's meaning representations as structure languages: lambda calculus (``"lambda"``) and
FunQL (``"funql"``), each parsed with a small `lark <https://lark-parser.readthedocs.io>`_ grammar.

``lambda`` reads the lambda-calculus terms of Zettlemoyer & Collins (2005) and Jia & Liang (2016),
``( lambda $0 e ( and ( state:t $0 ) ( next_to:t $0 texas:s ) ) )``: every ``( head arg... )`` is a
node labelled with its head (``lambda``, ``and``, ``argmax``, ``count``, ``exists``, ``>``, the
predicates ``state:t``, ``population:i``...), its arguments the children::

    (lambda $0 e (and (state:t $0) (next_to:t $0 texas:s)))

Values (``kind="entity"``): variables (``$0``) and typed constants (``texas:s``, ``austin_tx:c``,
``150000:i``: type ``entity``; their type suffix stays in the label), bare numbers (type
``number``) and quoted strings (type ``string``); a bare word (the ``e`` of ``lambda $0 e``) is
an atom.

``funql`` reads FunQL (Kate et al. 2005), ``answer(population_1(cityid('austin', _)))``: a call is
a node labelled with its function, its arguments the children::

    (answer (population_1 (cityid 'austin' _)))

Values: quoted strings (``'austin'``: type ``string``) and numbers (type ``number``); bare words
(``_``, ``all``) are atoms, as are the functions.

Text a grammar refuses is a ``ValueError`` starting with ``program:``. lark is imported, and a
parser built, on the first parse.

Example:
    >>> from hf_synthsample.structure import abstract_template, atoms
    >>> atoms("( lambda $0 e ( and ( state:t $0 ) ( next_to:t $0 texas:s ) ) )", language="lambda")
    ['lambda', 'entity', 'e', 'and', 'state:t', 'entity', 'next_to:t', 'entity', 'entity']
    >>> abstract_template("answer(count(state(next_to_2(stateid('texas')))))", language="funql")
    '(answer (count (state (next_to_2 (stateid entity)))))'
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..structure import Language, Node
from ..validation import nesting_message

__all__ = ["LAMBDA_GRAMMAR", "FUNQL_GRAMMAR", "parse_lambda", "parse_funql", "LAMBDA_LANGUAGE",
           "FUNQL_LANGUAGE"]

#: the lark grammar of lambda-calculus terms (LALR)
LAMBDA_GRAMMAR = r"""
?start: term
?term: app | STRING | SYMBOL
app: "(" SYMBOL term* ")"
STRING: /'[^']*'/ | /"[^"]*"/
SYMBOL: /[^\s()'"]+/
%import common.WS
%ignore WS
"""

#: the lark grammar of FunQL (LALR)
FUNQL_GRAMMAR = r"""
?start: term
?term: call | STRING | NUMBER | NAME
call: NAME "(" [term ("," term)*] ")"
STRING: /'(\\.|[^'\\])*'/ | /"(\\.|[^"\\])*"/
NUMBER.2: /[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?/
NAME: /[^\s(),'"]+/
%import common.WS
%ignore WS
"""

_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")
_VARIABLE = re.compile(r"\$\w+")


@lru_cache(maxsize=2)
def _parser(grammar: str) -> Any:
    from lark import Lark

    return Lark(grammar, parser="lalr", maybe_placeholders=False)


def _parse(text: str, grammar: str, what: str, leaf) -> Node:
    if not isinstance(text, str):
        raise TypeError(f"program must be a str, got {type(text).__name__}")
    from lark import Token
    from lark.exceptions import LarkError

    try:
        tree = _parser(grammar).parse(text)
    except LarkError as err:
        raise ValueError(f"program: cannot parse {what} {text!r}: {' '.join(str(err).split())}") from None

    def convert(t: Any) -> Node:
        if isinstance(t, Token):
            return leaf(t)
        head, *args = t.children
        return Node(str(head), tuple(convert(a) for a in args))

    try:
        return convert(tree)
    except RecursionError:
        raise ValueError(f"program: {what} {nesting_message()}") from None


def _lambda_leaf(token: Any) -> Node:
    text = str(token)
    if token.type == "STRING" or _VARIABLE.fullmatch(text) or _NUMBER.fullmatch(text) or ":" in text:
        return Node(text, (), "entity")
    return Node(text)


def _funql_leaf(token: Any) -> Node:
    if token.type in ("STRING", "NUMBER"):
        return Node(str(token), (), "entity")
    return Node(str(token))


def parse_lambda(text: str) -> Node:
    """A lambda-calculus term as a tree (see the module).

    Example:
        >>> parse_lambda("( argmax $0 ( state:t $0 ) ( size:i $0 ) )").to_sexpr()
        '(argmax entity (state:t entity) (size:i entity))'
    """
    return _parse(text, LAMBDA_GRAMMAR, "lambda term", _lambda_leaf)


def parse_funql(text: str) -> Node:
    """A FunQL term as a tree (see the module).

    Example:
        >>> parse_funql("answer(population_1(cityid('austin', _)))").to_sexpr()
        '(answer (population_1 (cityid entity _)))'
    """
    return _parse(text, FUNQL_GRAMMAR, "FunQL term", _funql_leaf)


#: GeoQuery's lambda calculus and FunQL as structure languages (named in
#: :data:`hf_synthsample.structure.LANGUAGES`)
LAMBDA_LANGUAGE = Language("lambda", parse_lambda, description="GeoQuery lambda calculus (lark): (head arg...); "
                           "variables $0, typed constants texas:s, numbers and strings: values; predicates: atoms")
FUNQL_LANGUAGE = Language("funql", parse_funql, description="GeoQuery FunQL (lark): f(arg, ...) as (f arg...); "
                          "quoted strings and numbers: values; functions and bare words: atoms")
