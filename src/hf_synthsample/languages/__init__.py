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
    >>> from hf_synthsample.structure import abstract_template, languages
    >>> {"sql", "sparql", "lambda", "funql", "python", "scan", "cogs"} <= set(languages())
    True
    >>> abstract_template("SELECT name FROM city WHERE pop > 3", language="sql")
    '(select name (from city) (where (gt pop entity)))'
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
