"""The built-in structure languages beyond ThingTalk, each in its own module, registered into
:mod:`hf_synthsample.structure` when this package is imported (the structure registry imports it by
name on its first lookup: :data:`hf_synthsample.structure.ADAPTER_MODULES`).

- :mod:`.seeds`: ``scan``, ``scan_actions``, ``cogs``, ``karel``, ``calculator``.
- :mod:`.sql`: ``sql`` (sqlglot; Spider, text2sql-data).
- :mod:`.sparql`: ``sparql`` (CFQ's SPARQL).
- :mod:`.lambda_terms`: ``lambda`` (GeoQuery lambda calculus) and ``funql`` (FunQL).
- :mod:`.python`: ``python`` (the ``ast`` module).
- :mod:`.grammar`: :func:`grammar_language`, a language from the user's own lark grammar.

Example:
    >>> from hf_synthsample.structure import abstract_template, compounds, atoms
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

from ..structure import register_language
from . import lambda_terms, python, seeds, sparql, sql
from .grammar import grammar_language
from .seeds import parse_calculator, parse_cogs, parse_karel, parse_scan, parse_scan_actions

__all__ = ["grammar_language", "parse_scan", "parse_scan_actions", "parse_cogs", "parse_karel", "parse_calculator"]


def _register(name: str, parse, description: str = "") -> None:
    register_language(name, parse, default=True, description=description)


for _module in (seeds, sql, sparql, lambda_terms, python):
    _module.register_all(_register)
