"""The registry of language adapters (``parse(text) -> Node``, ``template(tree) -> str``) and
:func:`parse`, which reads a program with one. Adapters register into it; it imports none of them
(:data:`ADAPTER_MODULES`, imported by name on the first lookup)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..validation import MAX_NESTING, nesting_message
from .tree import Node, parse_sexpr

__all__ = ["Language", "register_language", "languages", "get_language", "parse", "ADAPTER_MODULES"]


@dataclass(frozen=True)
class Language:
    """A language adapter: ``parse(text) -> Node`` and ``template(tree) -> str``."""

    name: str
    parse: Callable[[str], Node]
    template: Callable[[Node], str]


_LANGUAGES: dict[str, Language] = {}


def register_language(name: str, parse: Callable[[str], Node], template: Callable[[Node], str] | None = None,
                      *, default: bool = False) -> None:
    """Register a language adapter (``template`` defaults to the abstract s-expression of the tree).

    ``default=True`` registers only if the name is free: the built-in adapters register so when
    their module is imported, and an adapter a user registered under that name first stays.

    Example:
        >>> from hf_synthsample.structure import atoms
        >>> register_language("words", lambda s: Node("seq", tuple(Node(w) for w in s.split())))
        >>> atoms("jump twice", language="words")
        ['seq', 'jump', 'twice']
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    if not callable(parse):
        raise TypeError(f"parse must be callable, got {parse!r}")
    if template is not None and not callable(template):
        raise TypeError(f"template must be callable or None, got {template!r}")
    if default and name in _LANGUAGES:
        return
    _LANGUAGES[name] = Language(name, _height_checked(parse), template or (lambda tree: tree.to_sexpr(abstract=True)))


def _height_checked(parse: Callable[[str], Node]) -> Callable[[str], Node]:
    """``parse`` whose trees are at most :data:`~hf_synthsample.validation.MAX_NESTING` high.

    The walkers of this module (templates, atoms, compounds, printing, hashing) recurse over the
    tree; a deeper tree (``1+1+...+1`` of 200 terms is 200 levels of calculator tree) is a
    ``ValueError`` here instead of a ``RecursionError`` there. A parser that recurses itself must
    bound its own nesting (the built-in ones do).
    """

    def parse_checked(text: str) -> Node:
        return _check_height(parse(text))

    parse_checked.__wrapped__ = parse  # type: ignore[attr-defined]
    return parse_checked


def _check_height(tree: Node) -> Node:
    if not isinstance(tree, Node):
        raise TypeError(f"program: a language's parser must return a Node, got {type(tree).__name__}")
    h = tree.height()
    if h > MAX_NESTING:
        raise ValueError(f"program: the tree is {nesting_message(h)}")
    return tree


def languages() -> list[str]:
    """Names of the registered languages."""
    _builtin()
    return sorted(_LANGUAGES)


def get_language(language: str) -> Language:
    """The adapter of ``language``; ``ValueError`` listing the registered ones if unknown."""
    _builtin()
    if language not in _LANGUAGES:
        raise ValueError(f"language: unknown language {language!r}; registered languages: {sorted(_LANGUAGES)}")
    return _LANGUAGES[language]


#: modules whose import registers built-in adapters (``register_language(..., default=True)``):
#: imported by name on the first lookup, so this module imports none of them (they import it)
ADAPTER_MODULES = ("hf_synthsample.domains.thingtalk", "hf_synthsample.languages")
_loaded = False


def _builtin() -> None:
    global _loaded
    if _loaded:
        return
    import importlib

    register_language("sexpr", parse_sexpr, default=True)
    for module in ADAPTER_MODULES:
        importlib.import_module(module)
    _loaded = True


def parse(program: str | Node, language: str = "thingtalk") -> Node:
    """The tree of ``program`` (a tree is returned as it is).

    A program or tree nested deeper than :data:`~hf_synthsample.validation.MAX_NESTING` levels is
    a ``ValueError`` naming the depth (the walkers of this module recurse over the tree).
    """
    if isinstance(program, Node):
        return _check_height(program)
    if not isinstance(program, str):
        raise TypeError(f"program must be a str or a Node, got {type(program).__name__}")
    return get_language(language).parse(program)
