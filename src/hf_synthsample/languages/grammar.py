"""A structure language from the user's own grammar: :func:`grammar_language`.

Write the programs' grammar in `lark <https://lark-parser.readthedocs.io/en/stable/grammar.html>`_'s
EBNF; the parse tree lark builds becomes the program tree:

- a **rule** is a node labelled with the rule's name (or its alias, ``-> name``), its children the
  rule's matches; rules lark inlines (``?rule``, ``_rule``) leave no node;
- a **named terminal** is a leaf labelled with the matched text; anonymous punctuation
  (``"("``, ``","``) and terminals named ``_LIKE_THIS`` are dropped, as lark does by default;
- the terminals named in ``values`` are **values** (``kind="entity"``), abstracted to ``entity``
  in atoms, compounds and templates; every other token is an atom.

A value's type (what ``abstract`` chooses from) is read from its label, as for every language: a
number, a quoted string, else an entity. A string terminal should match its quotes
(``STRING: /'[^']*'/``) so that they stay in the label; a terminal declared ``"string"`` in a
``values`` mapping gets quotes added when its text has none, and one declared ``"number"`` must
match a number.

Example:
    >>> from hf_synthsample.structure import atoms, abstract_template
    >>> lists = grammar_language("lists", '''
    ...     start: instr+
    ...     instr: VERB ARG?
    ...     VERB: "push" | "pop" | "add"
    ...     ARG: /[0-9]+/
    ...     %ignore " "
    ... ''', values=["ARG"])
    >>> atoms("push 3 push 4 add", language=lists)
    ['start', 'instr', 'push', 'entity', 'instr', 'push', 'entity', 'instr', 'add']
    >>> abstract_template("push 3 pop", language=lists)
    '(start (instr push entity) (instr pop))'
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..structure import Node
from ..structure.language import VALUE_TYPES, Language, register_language, value_type
from ..validation import nesting_message

__all__ = ["grammar_language"]

_PARSERS = ("earley", "lalr")


class _GrammarParser:
    """``text -> Node`` with a lark parser of the grammar; picklable (the parser is rebuilt)."""

    def __init__(self, grammar: str, start: str, values: dict[str, str | None], parser: str):
        self.grammar, self.start, self.values, self.parser = grammar, start, values, parser
        self._lark = self._build()

    def _build(self) -> Any:
        from lark import Lark
        from lark.exceptions import LarkError

        try:
            lark = Lark(self.grammar, start=self.start, parser=self.parser, maybe_placeholders=False)
        except LarkError as err:
            raise ValueError(f"grammar: {' '.join(str(err).split())}") from None
        names = {t.name for t in lark.terminals}
        unknown = sorted(set(self.values) - names)
        if unknown:
            named = sorted(n for n in names if not n.startswith("__"))
            raise ValueError(f"values: no terminal named {', '.join(map(repr, unknown))} in the grammar; "
                             f"its terminals: {named}")
        return lark

    def __getstate__(self) -> dict[str, Any]:
        return {"grammar": self.grammar, "start": self.start, "values": self.values, "parser": self.parser}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lark = self._build()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _GrammarParser) and self.__getstate__() == other.__getstate__()

    def __hash__(self) -> int:
        return hash((self.grammar, self.start, self.parser))

    def _leaf(self, token: Any) -> Node:
        text = str(token)
        if token.type not in self.values:
            return Node(text)
        declared = self.values[token.type]
        if declared == "string" and text[:1] not in ("'", '"'):
            text = "'" + text.replace("'", "\\'") + "'"
        elif declared == "number" and value_type(text) != "number":
            raise ValueError(f"program: terminal {token.type} matched {text!r}, which is not a number")
        return Node(text, (), "entity")

    def __call__(self, text: str) -> Node:
        if not isinstance(text, str):
            raise TypeError(f"program must be a str, got {type(text).__name__}")
        from lark import Token
        from lark.exceptions import LarkError

        try:
            tree = self._lark.parse(text)
        except LarkError as err:
            raise ValueError(f"program: cannot parse {text!r}: {' '.join(str(err).split())}") from None

        def convert(t: Any) -> Node:
            if isinstance(t, Token):
                return self._leaf(t)
            return Node(str(t.data), tuple(convert(c) for c in t.children))

        try:
            return convert(tree)
        except RecursionError:
            raise ValueError(f"program: {nesting_message()}") from None


def _check_values(values: Mapping[str, str] | Sequence[str]) -> dict[str, str | None]:
    if isinstance(values, str):
        raise TypeError(f"values must be a sequence of terminal names or a mapping name -> value type, not a str "
                        f"({values!r}); write [{values!r}]")
    if isinstance(values, Mapping):
        out: dict[str, str | None] = {}
        for name, kind in values.items():
            if kind not in VALUE_TYPES:
                raise ValueError(f"values: terminal {name!r}: unknown value type {kind!r}; accepted: "
                                 f"{', '.join(VALUE_TYPES)}")
            out[str(name)] = kind
        return out
    if not isinstance(values, (list, tuple, set, frozenset)) or not all(isinstance(v, str) for v in values):
        raise TypeError(f"values must be a sequence of terminal names or a mapping name -> value type, got {values!r}")
    return {v: None for v in values}


def grammar_language(name: str, grammar: str, *, start: str = "start",
                     values: Mapping[str, str] | Sequence[str] = (), register: bool = False,
                     description: str = "", parser: str = "earley") -> Language:
    """A :class:`~hf_synthsample.structure.Language` that parses with a lark ``grammar`` (see the module).

    ``start``: the start rule; ``values``: the terminals whose tokens are values (names, or
    ``{name: "number" | "string" | "entity"}``); ``register``: also register it under ``name``;
    ``parser``: lark's ``"earley"`` (any context-free grammar) or ``"lalr"`` (faster, LALR(1) only).
    A grammar lark refuses is a ``ValueError`` starting with ``grammar:``; a program it refuses,
    one starting with ``program:``.

    Example:
        >>> calc = grammar_language("calc", '''
        ...     ?start: sum
        ...     ?sum: product | sum "+" product -> add
        ...     ?product: atom | product "*" atom -> mul
        ...     ?atom: NUMBER | "(" sum ")"
        ...     %import common.NUMBER
        ...     %ignore " "
        ... ''', values={"NUMBER": "number"})
        >>> calc.template(calc.parse("2 * (3 + 4)"))
        '(mul entity (add entity entity))'
    """
    if not isinstance(grammar, str) or not grammar.strip():
        raise ValueError(f"grammar: expected a lark grammar (a non-empty str), got {grammar!r}")
    if not isinstance(start, str) or not start:
        raise ValueError(f"start: expected a rule name, got {start!r}")
    if parser not in _PARSERS:
        raise ValueError(f"parser: expected one of {', '.join(_PARSERS)}, got {parser!r}")
    lang = Language(name, _GrammarParser(grammar, start, _check_values(values), parser),
                    description=description or f"user grammar ({parser}), values: {', '.join(_check_values(values))}")
    if register:
        register_language(lang)
    return lang
