"""A structure language: a parser to :class:`~.tree.Node` trees, a template printer and the
:class:`LanguageSettings` that say what an atom, a compound and a template are in the user's data.

Three choices rest on the language and change what a split holds out:

- **abstraction** (``abstract``): which values become ``entity`` in atoms, compounds and the
  template: ``number`` (``3``, ``4.5``), ``string`` (``'Boston'``, ``"x"``) and ``entity`` (any
  other value: ``x _ 1``, ``true``). A value kept (not abstracted) is an atom of its own, so two
  programs that differ in it have different structures.
- **compound height** (``max_height``): the largest compound read from a tree (``None``: the job's
  ``max_height``, 2 by default).
- **grouping** (``group``): rows of one structure (equal atoms and compounds) move together in the
  MCD search, as one unit. With every value abstracted, a structure is close to a template, so a
  split that moves whole structures may hold out whole templates: set ``group=False`` to move single
  rows, or keep some values (``abstract=("entity",)``).

Every built-in language abstracts all three and groups, as before these settings existed.
A value node is one of ``kind="entity"``; its type is read from its label: a number, a quoted
string (``'...'`` or ``"..."``), or else an entity (:func:`value_type`).

Example:
    >>> from hf_synthsample.structure import get_language, atoms
    >>> sexpr = get_language("sexpr")
    >>> atoms("(limit 3 (city 'boston'))", language=sexpr)
    ['limit', 'entity', 'city', 'entity']
    >>> keep_numbers = sexpr.configure(abstract=("string", "entity"))
    >>> keep_numbers
    Language('sexpr', abstract=('string', 'entity'))
    >>> atoms("(limit 3 (city 'boston'))", language=keep_numbers)
    ['limit', '3', 'city', 'entity']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ..settings import Settings, setting
from ..validation import MAX_NESTING, nesting_message
from .tree import Node, parse_sexpr

__all__ = ["VALUE_TYPES", "DEFAULT_LANGUAGE", "DEFAULT_MAX_HEIGHT", "LanguageSettings", "Language", "value_type", "register_language",
           "languages", "get_language", "check_language", "language_name", "parse", "LANGUAGES",
           "ENTRY_POINT_GROUP"]

#: the value types a language may abstract into ``entity``
VALUE_TYPES = ("number", "string", "entity")

#: the compound height when neither the language nor the job sets one (Keysers et al. 2020 use 2)
DEFAULT_MAX_HEIGHT = 2

_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def value_type(label: str) -> str:
    """The type of a value node's label: ``"number"``, ``"string"`` (quoted) or ``"entity"``.

    Example:
        >>> value_type("42"), value_type("-0.5"), value_type("'Boston'"), value_type('"x y"'), value_type("x _ 1")
        ('number', 'number', 'string', 'string', 'entity')
    """
    if _NUMBER.fullmatch(label):
        return "number"
    if label[:1] in ("'", '"'):
        return "string"
    return "entity"


def _parse_abstract(text: str) -> tuple[str, ...]:
    """The CLI's ``--abstract number,string,entity`` (``none``: keep every value)."""
    if text.strip().lower() == "none":
        return ()
    return tuple(v.strip() for v in text.split(",") if v.strip())


def _check_abstract(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = _parse_abstract(value)
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a sequence of value types out of {list(VALUE_TYPES)}, got {value!r}")
    for v in value:
        if v not in VALUE_TYPES:
            raise ValueError(f"{name}: unknown value type {v!r}; accepted: {', '.join(VALUE_TYPES)} (or none)")
    # canonical order: equal settings compare equal whatever order the caller named them in
    return tuple(v for v in VALUE_TYPES if v in set(value))


@dataclass(frozen=True)
class LanguageSettings(Settings):
    """What a language makes of a program: abstraction, compound height, grouping (see the module)."""

    abstract: tuple[str, ...] = setting(
        VALUE_TYPES, help="values abstracted into `entity` in atoms, compounds and templates: any of number, string, "
                          "entity (comma-separated), or none to keep every value [number,string,entity]",
        kind="any", check=_check_abstract, parse=_parse_abstract, metavar="number,string,entity|none")
    max_height: int | None = setting(None, help="compound height: the largest compound read from a tree [the job's "
                                                "max_height, 2]", min=1)
    group: bool = setting(True, help="rows of one structure (equal atoms and compounds) move together in the MCD "
                                     "search; --no-group moves single rows")


class Language:
    """A structure language: ``parse(text) -> Node`` and ``template(tree) -> str``, with its settings.

    Build one from a parse function (``Language("mine", parse_fn)``), register it by name
    (:func:`register_language`), or get a built-in one (:func:`get_language`); :meth:`configure`
    returns a copy with other settings. Every function that takes ``language=`` takes a name or a
    ``Language``.

    Example:
        >>> words = Language("words", lambda s: Node("seq", tuple(Node(w) for w in s.split())))
        >>> words.template(words.parse("jump twice"))
        '(seq jump twice)'
        >>> words.configure(group=False).settings.group
        False
    """

    __slots__ = ("name", "_parse", "_template", "settings", "description")

    def __init__(self, name: str, parse: Callable[[str], Node], template: Callable[[Node], str] | None = None,
                 settings: LanguageSettings | None = None, *, description: str = ""):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str, got {name!r}")
        if not callable(parse):
            raise TypeError(f"parse must be callable (str -> Node), got {parse!r}")
        if template is not None and not callable(template):
            raise TypeError(f"template must be callable (Node -> str) or None, got {template!r}")
        if settings is None:
            settings = LanguageSettings()
        elif not isinstance(settings, LanguageSettings):
            raise TypeError(f"settings must be a LanguageSettings, got {type(settings).__name__}")
        self.name, self._parse, self._template, self.settings = name, parse, template, settings
        self.description = description

    # ------------------------------------------------------------------ reading programs
    def parse(self, text: str) -> Node:
        """The tree of ``text``, values the settings keep turned into plain atoms; ``ValueError``
        when it does not parse or is nested over ``MAX_NESTING``."""
        return self.finish(self._parse(text))

    def finish(self, tree: Node) -> Node:
        """A parsed tree checked (a ``Node``, not nested over ``MAX_NESTING``), values the settings keep
        turned into plain atoms."""
        tree = _check_height(tree)
        kept = set(VALUE_TYPES) - set(self.settings.abstract)
        return _keep_values(tree, kept) if kept else tree

    def template(self, tree: Node) -> str:
        """The abstract template of a parsed tree."""
        return self._template(tree) if self._template is not None else tree.to_sexpr(abstract=True)

    def height(self, max_height: int | None = None) -> int:
        """The compound height: the language's, else the job's ``max_height``, else 2; a
        ``ValueError`` when both are set and differ."""
        own = self.settings.max_height
        if own is None:
            return DEFAULT_MAX_HEIGHT if max_height is None else max_height
        if max_height is not None and max_height not in (own, DEFAULT_MAX_HEIGHT):
            raise ValueError(f"max_height: {max_height} differs from the compound height {own} of language "
                             f"{self!r}; set it in one place")
        return own

    # ------------------------------------------------------------------ settings
    def configure(self, settings: LanguageSettings | None = None, /, **changes: Any) -> "Language":
        """A copy with other settings (``LanguageSettings`` fields), validated.

        Example:
            >>> get_language("scan").configure(max_height=3).height()
            3
        """
        base = self.settings if settings is None else settings
        if not isinstance(base, LanguageSettings):
            raise TypeError(f"settings must be a LanguageSettings, got {type(base).__name__}")
        return Language(self.name, self._parse, self._template, base.replace(**changes) if changes else base,
                        description=self.description)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The settings' fields and values."""
        return self.settings.get_params()

    def __sklearn_clone__(self) -> "Language":
        # immutable: an estimator holding it clones with the same object (sklearn.base.clone's check)
        return self

    def to_record(self) -> str | dict[str, Any]:
        """The name, or with changed settings ``{"name": ..., <changed fields>}`` (cards record this)."""
        changed = self.settings.changed()
        if not changed:
            return self.name
        record = self.settings.to_record()
        return {"name": self.name, **{k: record[k] for k in changed}}

    @property
    def abstracts(self) -> tuple[str, ...]:
        """The value types turned into ``entity``."""
        return self.settings.abstract

    def __repr__(self) -> str:
        changed = "".join(f", {k}={v!r}" for k, v in self.settings.changed().items())
        return f"Language({self.name!r}{changed})"

    def __str__(self) -> str:
        return self.name if not self.settings.changed() else repr(self)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Language) and (self.name, self._parse, self._template, self.settings)
                == (other.name, other._parse, other._template, other.settings))

    def __hash__(self) -> int:
        return hash((self.name, self.settings))

    def __reduce__(self):  # picklable for worker processes when its functions are
        return (_rebuild, (self.name, self._parse, self._template, self.settings, self.description))


def _rebuild(name, parse, template, settings, description) -> Language:
    return Language(name, parse, template, settings, description=description)


def _keep_values(tree: Node, kept: set[str]) -> Node:
    """``tree`` with the value nodes whose type is in ``kept`` turned into plain atoms (kind ``""``)."""
    def walk(node: Node) -> Node:
        children = tuple(walk(c) for c in node.children) if node.children else ()
        if node.kind == "entity" and value_type(node.label) in kept:
            return Node(node.label, children, "", node.rule)
        if children and any(a is not b for a, b in zip(children, node.children)):
            return Node(node.label, children, node.kind, node.rule)
        return node

    return walk(tree)


def _check_height(tree: Node) -> Node:
    if not isinstance(tree, Node):
        raise TypeError(f"program: a language's parser must return a Node, got {type(tree).__name__}")
    h = tree.height()
    if h > MAX_NESTING:
        raise ValueError(f"program: the tree is {nesting_message(h)}")
    return tree


# ---------------------------------------------------------------------------------- the registry
#: language name -> ``"module:attribute"`` of its :class:`Language` (imported on first use, as
#: :data:`hf_synthsample.builders.BUILDERS` names the builders): a domain's language lives with its
#: domain, the field's formats in :mod:`hf_synthsample.languages`
#: the structure language the samplers and the structure helpers read programs with when none is
#: given: the Schema2QA pool's. Declared here once; the split and curve settings have no default
#: language (a split states the structure it is made on, else a ValueError names ``language``).
DEFAULT_LANGUAGE = "thingtalk"

LANGUAGES: dict[str, str] = {
    "sexpr": "hf_synthsample.structure.language:SEXPR_LANGUAGE",
    "thingtalk": "hf_synthsample.domains.thingtalk:THINGTALK_LANGUAGE",
    "scan": "hf_synthsample.domains.scan_language:SCAN_LANGUAGE",
    "scan_actions": "hf_synthsample.domains.scan_language:SCAN_ACTIONS_LANGUAGE",
    "cogs": "hf_synthsample.domains.cogs_language:COGS_LANGUAGE",
    "karel": "hf_synthsample.domains.karel.language:KAREL_LANGUAGE",
    "calculator": "hf_synthsample.domains.calculator_language:CALCULATOR_LANGUAGE",
    "sql": "hf_synthsample.languages.sql:SQL_LANGUAGE",
    "sparql": "hf_synthsample.languages.sparql:SPARQL_LANGUAGE",
    "lambda": "hf_synthsample.languages.lambda_terms:LAMBDA_LANGUAGE",
    "funql": "hf_synthsample.languages.lambda_terms:FUNQL_LANGUAGE",
    "python": "hf_synthsample.languages.python:PYTHON_LANGUAGE",
}

#: the entry point group through which other packages add languages (a ``Language``, or a parse
#: function ``str -> Node`` named by the entry point's name); read on a lookup the table misses
ENTRY_POINT_GROUP = "hf_synthsample.languages"

SEXPR_LANGUAGE = Language("sexpr", parse_sexpr,
                          description="s-expressions: (label child ...); quoted or numeric leaves are values")

_REGISTERED: dict[str, Language] = {}  # register_language, in this process
_LOADED: dict[str, Language] = {}  # the table's and the entry points' languages, once imported


def register_language(name: str | Language, parse: Callable[[str], Node] | None = None,
                      template: Callable[[Node], str] | None = None, *, description: str = "") -> Language:
    """Register a language by name in this process (``template`` defaults to the abstract
    s-expression of the tree), or a :class:`Language` as it is; it takes precedence over a built-in
    language or an entry point of the same name. Worker processes get it through the ``Language``
    object (``StructureFunction`` holds the object, not the name).

    Example:
        >>> from hf_synthsample.structure import atoms
        >>> _ = register_language("words", lambda s: Node("seq", tuple(Node(w) for w in s.split())))
        >>> atoms("jump twice", language="words")
        ['seq', 'jump', 'twice']
    """
    if isinstance(name, Language):
        if parse is not None or template is not None:
            raise ValueError("register_language: give a Language, or a name and its parse function, not both")
        lang = name
    else:
        if parse is None:
            raise TypeError("register_language: parse is required with a name (str -> Node)")
        lang = Language(name, parse, template, description=description)
    _REGISTERED[lang.name] = lang
    return lang


def _entry_points() -> dict[str, Any]:
    """The group's entry points by name (the first of a name wins); none is loaded."""
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep)
    return found


def _load_entry_point(name: str, ep: Any) -> Language:
    where = f"entry point {name!r} = {ep.value!r} (group {ENTRY_POINT_GROUP!r})"
    try:
        obj = ep.load()
    except Exception as err:  # a broken plug-in names itself, whatever it raised
        raise ImportError(f"language: cannot load {where}: {type(err).__name__}: {err}") from err
    if isinstance(obj, Language):
        if obj.name != name:
            raise ValueError(f"language: {where} gives Language {obj.name!r}; the names must match")
        return obj
    if callable(obj):
        return Language(name, obj, description=f"from {ep.value}")
    raise TypeError(f"language: {where} must be a Language or a parse function (str -> Node), "
                    f"got {type(obj).__name__}")


def _lookup(name: str) -> Language | None:
    """The language of ``name``: registered here, else built in (:data:`LANGUAGES`), else an entry point."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name in _LOADED:
        return _LOADED[name]
    if name in LANGUAGES:
        import importlib

        module, attribute = LANGUAGES[name].split(":")
        lang = getattr(importlib.import_module(module), attribute)
    else:
        ep = _entry_points().get(name)
        if ep is None:
            return None
        lang = _load_entry_point(name, ep)
    _LOADED[name] = lang
    return lang


def languages() -> list[str]:
    """Names of the languages: built in, registered in this process and from entry points (none is
    imported to list them).

    Example:
        >>> {"sexpr", "scan", "sql", "thingtalk"} <= set(languages())
        True
    """
    return sorted({*LANGUAGES, *_REGISTERED, *_entry_points()})


def get_language(language: str | Language, **settings: Any) -> Language:
    """The :class:`Language` of a name (or a ``Language`` as it is), with ``settings`` changed;
    ``ValueError`` listing the languages if unknown.

    Example:
        >>> get_language("sql", abstract="none").abstracts
        ()
    """
    if isinstance(language, Language):
        return language.configure(**settings) if settings else language
    if not isinstance(language, str):
        raise TypeError(f"language must be a language name (str) or a Language, got {type(language).__name__} "
                        f"{language!r}")
    lang = _lookup(language)
    if lang is None:
        raise ValueError(f"language: unknown language {language!r}; registered languages: {languages()}")
    return lang.configure(**settings) if settings else lang


def check_language(name: str, value: Any) -> Any:
    """A settings check: a registered name or a :class:`Language` (returned as given)."""
    if value is None:
        return value
    try:
        get_language(value)
    except (TypeError, ValueError) as err:
        raise type(err)(str(err).replace("language:", f"{name}:", 1) if str(err).startswith("language:")
                        else f"{name}: {err}") from None
    return value


def language_name(language: str | Language | None) -> str | None:
    """The name of a language given by name or as an object."""
    return language.name if isinstance(language, Language) else language


def parse(program: str | Node, language: str | Language = DEFAULT_LANGUAGE) -> Node:
    """The tree of ``program`` (a tree as it is); ``ValueError`` when nested over ``MAX_NESTING``."""
    if isinstance(program, Node):
        return get_language(language).finish(program)
    if not isinstance(program, str):
        raise TypeError(f"program must be a str or a Node, got {type(program).__name__}")
    return get_language(language).parse(program)
