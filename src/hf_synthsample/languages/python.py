"""Python source as a structure language (``"python"``), through the standard :mod:`ast` module.

A node per AST node, labelled with its class name lowercased (``module``, ``functiondef``,
``call``, ``binop``, ``return``...), its children its fields in :mod:`ast`'s order; operators are
leaves (``add``, ``lt``, ``and``...) and the ``ctx`` fields (``Load``/``Store``) are left out. Two
nodes that always hold one leaf become that leaf: a ``Name`` is its identifier and a ``Constant``
its value. So ``x + 1`` is ``(binop x add 1)``.

- **values** (``kind="entity"``): constants, labelled with their ``repr`` (numbers: type
  ``number``; strings ``'abc'``: type ``string``), and the names a program chooses: variables,
  parameters, function and class names, keyword-argument names (type ``entity``). Renaming a
  variable does not change a program's structure.
- **atoms**: the builtins a program reads (``len``, ``print``, ``range``), attribute names
  (``.append``: the API a program uses), imported module names, and ``True``, ``False``, ``None``
  and ``...``.

A ``SyntaxError`` is a ``ValueError`` starting with ``program:``.

Example:
    >>> from hf_synthsample.structure import abstract_template, atoms
    >>> atoms("def f(a):\\n    return len(a) + 1", language="python")
    ['module', 'functiondef', 'entity', 'arguments', 'arg', 'entity', 'return', 'binop', 'call', 'len', 'entity',
     'add', 'entity']
    >>> abstract_template("y = x * 2", language="python")
    '(module (assign entity (binop entity mult entity)))'
"""

from __future__ import annotations

import ast
import builtins

from ..structure import Language, Node
from ..validation import nesting_message

__all__ = ["parse_python", "PYTHON_LANGUAGE"]

_BUILTINS = frozenset(dir(builtins))
#: identifier fields whose names are atoms (what a program uses), not values (what it chooses)
_ATOM_FIELDS = frozenset({("attribute", "attr"), ("alias", "name"), ("importfrom", "module")})
_KEYWORD_CONSTANTS = (True, False, None, Ellipsis)


def _name(label: str, owner: str, field: str) -> Node:
    if (owner, field) in _ATOM_FIELDS or (owner == "name" and label in _BUILTINS):
        return Node(label)
    return Node(label, (), "entity")


def _constant(value: object) -> Node:
    if any(value is k for k in _KEYWORD_CONSTANTS):
        return Node("..." if value is Ellipsis else repr(value))
    return Node(repr(value), (), "entity")


def _convert(node: ast.AST) -> Node:
    if isinstance(node, ast.Name):
        return _name(node.id, "name", "id")
    if isinstance(node, ast.Constant):
        return _constant(node.value)
    label = type(node).__name__.lower()
    children: list[Node] = []
    for field, value in ast.iter_fields(node):
        for v in value if isinstance(value, list) else (value,):
            if isinstance(v, ast.expr_context):
                continue
            if isinstance(v, ast.AST):
                children.append(_convert(v))
            elif isinstance(v, str) and field not in ("type_comment", "kind"):
                children.append(_name(v, label, field))
    return Node(label, tuple(children))


def parse_python(text: str) -> Node:
    """Python source (a module: statements) as a tree (see the module).

    Example:
        >>> parse_python("print(x.upper())").to_sexpr()
        '(module (expr (call print (call (attribute entity upper)))))'
    """
    if not isinstance(text, str):
        raise TypeError(f"program must be a str, got {type(text).__name__}")
    try:
        tree = ast.parse(text)
    except SyntaxError as err:
        raise ValueError(f"program: cannot parse Python: {err.msg} at line {err.lineno}, column {err.offset}") from None
    except (ValueError, RecursionError, MemoryError) as err:  # null bytes; too deeply nested for the parser
        raise ValueError(f"program: cannot parse Python: {err}") from None
    try:
        return _convert(tree)
    except RecursionError:
        raise ValueError(f"program: Python source {nesting_message()}") from None


#: Python source as a structure language (named in :data:`hf_synthsample.structure.LANGUAGES`)
PYTHON_LANGUAGE = Language("python", parse_python, description="Python source (ast): node classes lowercased, ctx "
                           "left out; constants and chosen names (variables, functions): values; builtins, "
                           "attributes: atoms")
