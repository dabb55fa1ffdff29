"""The language-agnostic program tree (:class:`Node`) and the s-expression parser (``"sexpr"``);
languages and their registry live in :mod:`hf_synthsample.structure.language`."""

from __future__ import annotations

from ..validation import MAX_NESTING, nesting_message

__all__ = ["ABSTRACT_TOKENS", "KINDS", "Node", "parse_sexpr"]

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
