"""SQL as a structure language (``"sql"``), parsed by `sqlglot <https://sqlglot.com>`_.

The tree follows sqlglot's expression tree: a node per expression, labelled with its class key
(``select``, ``from``, ``where``, ``and``, ``eq``, ``gt``, ``count``, ``order``, ``limit``...), its
children in the order of the class's arguments (``select``'s ``distinct`` first). Made readable:

- **identifiers are plain leaves**, lowercased (SQL names and keywords are case-insensitive): a
  column is one leaf ``table.column`` (``course.name``), or ``column`` when unqualified; a table is
  a leaf ``course``; ``*`` is a leaf.
- **aliases are resolved**: a table alias (``COURSE AS COURSEalias0``, Spider's ``student AS T1``)
  names its table in every column that uses it (``COURSEalias0.NAME`` -> ``course.name``) and is
  dropped from ``from``, so alias numbering never makes two queries differ; the alias scope is the
  ``select`` that declares it (and the subqueries inside it). Other aliases (``AS cnt``, a
  subquery's ``derived_tablealias0``) stay, lowercased, as ``(alias expr name)`` / a leaf.
- **literals are values** (``kind="entity"``): a number keeps its text (``300``, type ``number``),
  a string is quoted ``'EECS'`` (type ``string``); ``-3.5`` is one number. With the default (generic) dialect a
  double-quoted name standing alone (``= "EECS"``) is a string too, as SQLite reads a name it cannot
  resolve and as Spider and text2sql-data write their values; pass a dialect to
  :func:`parse_sql` for that dialect's quoting.
- parentheses are implied by the tree (``paren`` is dropped); ``ORDER BY x DESC`` is
  ``(order (desc x))``; ``LEFT JOIN`` is ``left_join``; ``UNION ALL`` is ``union_all``.

A trailing ``;`` is accepted; more than one statement, or text sqlglot cannot parse, is a
``ValueError`` starting with ``program:``. sqlglot is imported on the first parse only.

Example:
    >>> from hf_synthsample.structure import abstract_template, atoms, compounds
    >>> q = "SELECT DISTINCT COURSEalias0.NAME FROM COURSE AS COURSEalias0 WHERE COURSEalias0.DEPARTMENT = 'EECS';"
    >>> abstract_template(q, language="sql")
    '(select distinct course.name (from course) (where (eq course.department entity)))'
    >>> atoms("SELECT name FROM city WHERE pop > 3", language="sql")
    ['select', 'name', 'from', 'city', 'where', 'gt', 'pop', 'entity']
    >>> compounds("SELECT name FROM city WHERE pop > 3", language="sql", max_height=1)
    ['(from city)', '(gt pop entity)', '(select name from where)']
"""

from __future__ import annotations

import re
from typing import Any

from ..structure import Language, Node
from ..validation import nesting_message

__all__ = ["parse_sql", "SQL_LANGUAGE"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SET_OPERATIONS = ("union", "intersect", "except")


def _error_text(err: Exception) -> str:
    """sqlglot's message without its terminal underlining, on one line."""
    details = getattr(err, "errors", None)
    if details:
        first = details[0]
        where = f" at line {first.get('line')}, column {first.get('col')}" if first.get("line") else ""
        return f"{first.get('description')}{where}"
    return " ".join(_ANSI.sub("", str(err)).split())


def parse_sql(text: str, dialect: str | None = None) -> Node:
    """One SQL statement as a tree (see the module); ``dialect``: a sqlglot dialect (generic: ``None``).

    Example:
        >>> parse_sql("SELECT T1.name FROM student AS T1 WHERE T1.city = 'Boston'").to_sexpr(abstract=True)
        '(select student.name (from student) (where (eq student.city entity)))'
    """
    if not isinstance(text, str):
        raise TypeError(f"program must be a str, got {type(text).__name__}")
    import sqlglot
    from sqlglot.errors import SqlglotError

    try:
        statements = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
    except SqlglotError as err:
        raise ValueError(f"program: cannot parse SQL {text!r}: {_error_text(err)}") from None
    except RecursionError:  # sqlglot's recursive descent on deeply nested input
        raise ValueError(f"program: SQL {nesting_message()}") from None
    if len(statements) != 1:
        what = "no SQL statement" if not statements else f"{len(statements)} SQL statements"
        raise ValueError(f"program: expected one SQL statement, got {what} in {text!r}")
    try:
        return _Converter(double_quoted_strings=dialect is None).convert(statements[0], {})
    except RecursionError:
        raise ValueError(f"program: SQL {nesting_message()}") from None


class _Converter:
    """sqlglot expressions -> :class:`Node` (see the module docstring for the choices)."""

    def __init__(self, double_quoted_strings: bool):
        from sqlglot import exp

        self.exp = exp
        self.double_quoted_strings = double_quoted_strings

    def convert(self, e: Any, scope: dict[str, str]) -> Node:
        exp = self.exp
        if isinstance(e, exp.Paren):
            return self.convert(e.this, scope)
        if isinstance(e, exp.Literal):
            if e.is_string:
                return _string(e.this)
            return Node(str(e.this), (), "entity")
        if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
            return Node("-" + str(e.this.this), (), "entity")  # a negative number is one value
        if isinstance(e, exp.TableAlias) and not e.args.get("columns"):
            return Node(e.name.lower())
        if isinstance(e, (exp.Identifier, exp.Var)):
            return Node(str(e.this).lower())
        if isinstance(e, exp.Star):
            return Node("*")
        if isinstance(e, exp.Boolean):
            return Node("true" if e.this else "false")
        if isinstance(e, exp.Null):
            return Node("null")
        if isinstance(e, exp.Column):
            return self.column(e, scope)
        if isinstance(e, exp.Table):
            return self.table(e, scope)
        if isinstance(e, exp.DataType):
            return Node("_".join(e.sql().lower().split()))
        if isinstance(e, exp.Select):
            scope = {**scope, **self.aliases(e)}
        label = e.key
        skip: set[str] = set()
        if isinstance(e, exp.Anonymous):
            label, skip = str(e.this).lower(), {"this"}
        elif isinstance(e, exp.Ordered):
            label = "desc" if e.args.get("desc") else "asc"
        elif isinstance(e, exp.Join):
            parts = [str(e.args[k]).lower() for k in ("side", "kind") if e.args.get(k)]
            label, skip = "_".join([*parts, "join"]), {"side", "kind"}
        elif label in _SET_OPERATIONS and e.args.get("distinct") is False:
            label += "_all"
        names = list(type(e).arg_types)
        if isinstance(e, exp.Select) and "distinct" in names:
            names.remove("distinct")
            names.insert(0, "distinct")
        children: list[Node] = []
        for name in names:
            if name in skip:
                continue
            value = e.args.get(name)
            for v in value if isinstance(value, list) else (value,):
                if isinstance(v, exp.Expression):
                    children.append(self.convert(v, scope))
                elif isinstance(v, str) and v:  # a keyword argument (a function's unit...), not a flag
                    children.append(Node(v.lower()))
        return Node(label, tuple(children))

    def aliases(self, select: Any) -> dict[str, str]:
        """``alias -> table`` for the tables this ``select`` reads (its ``from`` and joins)."""
        exp = self.exp
        sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
        out = {}
        for source in sources:
            table = getattr(source, "this", None)
            if isinstance(table, exp.Table) and table.alias:
                out[table.alias.lower()] = table.name.lower()
        return out

    def column(self, e: Any, scope: dict[str, str]) -> Node:
        exp = self.exp
        parts = [p.lower() for p in (e.catalog, e.db, e.table) if p]
        if parts:
            parts[-1] = scope.get(parts[-1], parts[-1])
        this = e.this
        if isinstance(this, exp.Star):
            return Node(".".join([*parts, "*"]))
        if not parts and self.double_quoted_strings and isinstance(this, exp.Identifier) and this.quoted:
            return _string(this.this)
        return Node(".".join([*parts, str(this.this if isinstance(this, exp.Identifier) else this).lower()]))

    def table(self, e: Any, scope: dict[str, str]) -> Node:
        exp = self.exp
        name = ".".join(p.lower() for p in (e.catalog, e.db, e.name) if p)
        rest = [k for k, v in e.args.items() if v and k not in ("this", "db", "catalog", "alias")]
        alias = e.args.get("alias")
        keep_alias = alias is not None and bool(alias.args.get("columns"))  # AS t(a, b): columns named
        if not rest and not keep_alias:
            return Node(name)
        children = [Node(name)]
        if keep_alias:
            children.append(self.convert(alias, scope))
        for k in rest:
            value = e.args[k]
            for v in value if isinstance(value, list) else (value,):
                if isinstance(v, exp.Expression):
                    children.append(self.convert(v, scope))
        return Node("table", tuple(children))


def _string(text: Any) -> Node:
    """A string value, labelled with its single-quoted text (its value type: ``string``)."""
    return Node("'" + str(text).replace("'", "''") + "'", (), "entity")


#: SQL as a structure language (named in :data:`hf_synthsample.structure.LANGUAGES`)
SQL_LANGUAGE = Language("sql", parse_sql, description="SQL (sqlglot, generic dialect): expression keys as labels, "
                        "identifiers lowercased, table aliases resolved to their table; literals: values (Spider, "
                        "text2sql-data)")
