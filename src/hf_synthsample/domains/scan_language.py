"""SCAN as structure languages: ``scan`` (SCAN / SCAN* commands) and ``scan_actions`` (action
sequences), the objects named in :data:`hf_synthsample.structure.LANGUAGES`.

A command is a tree, conjunction > repetition > turn > verb; verbs (SCAN primitives) are lexical
items (``kind="func"``), hidden by the abstract template and kept by atoms and compounds, so CMaxEnt
balances ``(twice jump)`` against ``(twice walk)`` while UAT balances the abstract shapes. An action
sequence is runs of one action, run lengths values. Kept apart from the generators
(:mod:`hf_synthsample.domains.scan`), whose source is the builders' cache key.

Example:
    >>> from hf_synthsample.structure import abstract_template, compounds
    >>> abstract_template("jump around left twice and walk", language="scan")
    '(and (twice (around func left)) func)'
    >>> compounds("jump twice", language="scan", max_height=1)
    ['(twice jump)']
    >>> SCAN_ACTIONS_LANGUAGE.template(parse_scan_actions("I_JUMP I_JUMP I_WALK"))
    '(actions (run I_JUMP entity) (run I_WALK entity))'
"""

from __future__ import annotations

from ..structure import Language, Node

__all__ = ["parse_scan", "parse_scan_actions", "SCAN_LANGUAGE", "SCAN_ACTIONS_LANGUAGE"]

_SCAN_CONJ = ("and", "after")
_SCAN_REPEAT = ("twice", "thrice")
_SCAN_TURN = ("opposite", "around")
_SCAN_DIR = ("left", "right")
_SCAN_KEYWORDS = frozenset(_SCAN_CONJ + _SCAN_REPEAT + _SCAN_TURN + _SCAN_DIR + ("turn",))


def _scan_v(tokens: list[str], text: str) -> Node:
    """V := U | U D | U (opposite|around) D, with ``turn`` as the U of turning."""
    if not tokens or tokens[0] in _SCAN_KEYWORDS - {"turn"}:
        raise ValueError(f"program: expected a SCAN verb in {text!r}, got {' '.join(tokens) or 'nothing'!r}")
    verb = Node(tokens[0], kind="" if tokens[0] == "turn" else "func")
    rest = tokens[1:]
    if not rest:
        if tokens[0] == "turn":
            raise ValueError(f"program: 'turn' needs a direction in {text!r}")
        return verb
    if len(rest) == 1 and rest[0] in _SCAN_DIR:
        return Node(rest[0], (verb,))
    if len(rest) == 2 and rest[0] in _SCAN_TURN and rest[1] in _SCAN_DIR:
        return Node(rest[0], (verb, Node(rest[1])))
    raise ValueError(f"program: cannot parse SCAN phrase {' '.join(tokens)!r} in {text!r}")


def _scan_s(tokens: list[str], text: str) -> Node:
    if tokens and tokens[-1] in _SCAN_REPEAT:
        return Node(tokens[-1], (_scan_v(tokens[:-1], text),))
    return _scan_v(tokens, text)


def parse_scan(text: str) -> Node:
    """A SCAN (or SCAN*) command as a tree: conjunction > repetition > turn > verb.

    Any word that is not a SCAN keyword is a verb, so SCAN* primitives parse too.
    """
    tokens = text.split()
    if not tokens:
        raise ValueError("program: empty SCAN command")
    for conj in _SCAN_CONJ:
        if conj in tokens:
            i = tokens.index(conj)
            return Node(conj, (_scan_s(tokens[:i], text), _scan_s(tokens[i + 1:], text)))
    return _scan_s(tokens, text)


def parse_scan_actions(text: str) -> Node:
    """An action sequence as runs of one action: ``(actions (run I_JUMP 3) ...)``; counts are values."""
    tokens = text.split()
    if not tokens:
        return Node("actions")
    runs, start = [], 0
    for i in range(1, len(tokens) + 1):
        if i == len(tokens) or tokens[i] != tokens[start]:
            runs.append(Node("run", (Node(tokens[start]), Node(str(i - start), kind="entity"))))
            start = i
    return Node("actions", tuple(runs))


SCAN_LANGUAGE = Language("scan", parse_scan,
                         description="SCAN / SCAN* commands: conjunction > repetition > turn > verb")
SCAN_ACTIONS_LANGUAGE = Language("scan_actions", parse_scan_actions,
                                 description="SCAN action sequences as runs of one action (run lengths: values)")
