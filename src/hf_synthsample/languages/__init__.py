"""The field's formats as structure languages, one module each, and a user's own grammar.

Each module defines its :class:`~hf_synthsample.structure.Language` object, named in the one
registry table :data:`hf_synthsample.structure.LANGUAGES` and imported on its first lookup
(importing this package registers nothing, and imports neither sqlglot nor lark):

- :mod:`.sql`: ``sql`` (sqlglot; Spider, text2sql-data).
- :mod:`.sparql`: ``sparql`` (CFQ's SPARQL).
- :mod:`.lambda_terms`: ``lambda`` (GeoQuery lambda calculus) and ``funql`` (FunQL).
- :mod:`.python`: ``python`` (the ``ast`` module).
- :mod:`.grammar`: :func:`grammar_language`, a language from the user's own lark grammar.

The seeds' languages live with their domains (``hf_synthsample.domains.scan_language``,
``.cogs_language``, ``.karel.language``, ``.calculator_language``, ``.thingtalk``).

Example:
    >>> from hf_synthsample.structure import abstract_template, languages
    >>> {"sql", "sparql", "lambda", "funql", "python", "scan", "cogs"} <= set(languages())
    True
    >>> abstract_template("SELECT name FROM city WHERE pop > 3", language="sql")
    '(select name (from city) (where (gt pop entity)))'
"""

from __future__ import annotations

from .grammar import grammar_language

__all__ = ["grammar_language"]
