"""The language-agnostic program tree (:class:`Node`), the s-expression parser (``"sexpr"``), and
the registry of language adapters with :func:`parse`; the registry imports no adapter module
(:data:`ADAPTER_MODULES` are imported by name on the first lookup)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..validation import MAX_NESTING, nesting_message

__all__ = ["ABSTRACT_TOKENS", "KINDS", "Node", "parse_sexpr", "Language", "register_language", "languages",
           "get_language", "parse", "ADAPTER_MODULES"]

#: node kinds the abstraction replaces, and the token each becomes (Oren et al. 2021, Table 2)
ABSTRACT_TOKENS: dict[str, str] = {
    "entity": "entity",
    "table": "@table",
    "property": "property",
    "type": "type",
    "op": "op",
    "func": "func",
    "func_mod": "func_mod",
}
KINDS = ("", *ABSTRACT_TOKENS)


class Node:
    """One node of a program tree: ``label`` (the atom), ``kind`` (one of :data:`KINDS`; ``""``: never
    abstracted) and ``rule`` (a tag the language's printer dispatches on).

    Example:
        >>> Node("and", (Node("a"), Node("b")), kind="op").is_leaf
        False
    """

    __slots__ = ("label", "children", "kind", "rule")

    def __init__(self, label: str, children: tuple = (), kind: str = "", rule: str = ""):
        self.label, self.children, self.kind, self.rule = label, children, kind, rule

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def atom(self) -> str:
        """The label as an atom: values are abstracted to ``entity``."""
        return "entity" if self.kind == "entity" else self.label

    def abstract_label(self) -> str:
        """The label as the abstract template shows it."""
        return ABSTRACT_TOKENS.get(self.kind, self.label) if self.kind else self.label

    def height(self) -> int:
        """Nodes on the longest root-to-leaf path (a leaf: 1); iterative, for trees of any depth."""
        best, stack = 0, [(self, 1)]
        while stack:
            node, d = stack.pop()  # plain statements: this runs for every node of every parsed program
            if d > best:
                best = d
            for c in node.children:
                stack.append((c, d + 1))
        return best

    def iter(self):
        """All nodes, pre-order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def to_sexpr(self, abstract: bool = False) -> str:
        """``(label child ...)``; with ``abstract`` the template tokens replace abstracted labels."""
        label = self.abstract_label() if abstract else self.atom()
        if not self.children:
            return label
        return "(" + label + " " + " ".join(c.to_sexpr(abstract) for c in self.children) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and (self.label, self.kind, self.rule, self.children) == (
            other.label, other.kind, other.rule, other.children)

    def __hash__(self) -> int:
        return hash((self.label, self.kind, self.rule, self.children))

    def __repr__(self) -> str:
        return f"Node({self.to_sexpr()})"


def parse_sexpr(text: str) -> Node:
    """Parse ``(label child ...)``; a bare token is a leaf; ``'...`` or digits are values.

    Example:
        >>> parse_sexpr("(a (b c) d)").children[0].label
        'b'
    """
    if not isinstance(text, str):
        raise TypeError(f"program must be a str, got {type(text).__name__}")
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    if not tokens:
        raise ValueError("program: empty s-expression")
    pos = 0

    def node(depth: int = 1) -> Node:
        nonlocal pos
        if depth > MAX_NESTING:
            raise ValueError(f"program: s-expression {nesting_message()} at token {pos}")
        if pos >= len(tokens):
            raise ValueError("program: unexpected end of s-expression")
        tok = tokens[pos]
        pos += 1
        if tok == ")":
            raise ValueError(f"program: unexpected ')' at token {pos - 1}")
        if tok != "(":  # a leaf; quoted or numeric: a value
            return Node(tok, (), "entity" if tok[0] == "'" or tok.lstrip("-").isdigit() else "")
        if pos >= len(tokens) or tokens[pos] in "()":
            raise ValueError(f"program: expected a label after '(' at token {pos - 1}")
        label = tokens[pos]
        pos += 1
        children = []
        while pos < len(tokens) and tokens[pos] != ")":
            children.append(node(depth + 1))
        if pos >= len(tokens):
            raise ValueError("program: missing ')'")
        pos += 1
        return Node(label, tuple(children))

    tree = node()
    if pos != len(tokens):
        raise ValueError(f"program: unexpected token {tokens[pos]!r} at token {pos} after the end of the tree")
    return tree


@dataclass(frozen=True)
class Language:
    """A language adapter: ``parse(text) -> Node`` and ``template(tree) -> str``."""

    name: str
    parse: Callable[[str], Node]
    template: Callable[[Node], str]


_LANGUAGES: dict[str, Language] = {}


def register_language(name: str, parse: Callable[[str], Node], template: Callable[[Node], str] | None = None,
                      *, default: bool = False) -> None:
    """Register a language adapter (``template`` defaults to the abstract s-expression of the tree);
    with ``default=True`` (the built-in adapters) only if the name is free.

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
    # the walkers recurse over the tree: one over MAX_NESTING high is a ValueError here, not a RecursionError there
    _LANGUAGES[name] = Language(name, lambda text: _check_height(parse(text)),
                                template or (lambda tree: tree.to_sexpr(abstract=True)))


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
    """The tree of ``program`` (a tree as it is); ``ValueError`` when nested over ``MAX_NESTING``."""
    if isinstance(program, Node):
        return _check_height(program)
    if not isinstance(program, str):
        raise TypeError(f"program must be a str or a Node, got {type(program).__name__}")
    return get_language(language).parse(program)
