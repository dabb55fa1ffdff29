"""An interpreter for SCAN and SCAN* commands that parses the command *string*.

It shares no code with the generators in :mod:`hf_synthsample.domains.scan` (which build commands
and their actions from the grammar's productions), so the tests can use it as the reference oracle
for every generated pair.

Grammar (SCAN, Lake & Baroni 2018; SCAN*, Zhou et al. 2023)::

    C -> S and S | S after S | S             (SCAN: at most one conjunction)
    C -> A (and A)* ; A -> S (after S)*        (SCAN*: any number; ``after`` binds tighter)
    S -> V [twice | thrice]
    V -> X [opposite | around] DIR | X DIR | X   (SCAN*: X is a verb; ``turn`` does not exist)

``a after b`` runs ``b`` then ``a``. Directions are ``left`` / ``right`` and their augmented copies
``left_3`` (action ``I_TURN_LEFT_3``); a verb ``w`` has the action ``I_`` + ``w.upper()``, so the
mutated primitive ``walk_2`` means ``I_WALK_2``.

Example:
    >>> interpret("jump around left twice after walk")
    'I_WALK I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP I_TURN_LEFT I_JUMP'
    >>> interpret("walk and run after look and jump", star=True)
    'I_WALK I_LOOK I_RUN I_JUMP'
    >>> interpret("turn opposite right")
    'I_TURN_RIGHT I_TURN_RIGHT'
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["interpret", "interpret_scan", "is_valid", "FUNCTION_WORDS", "SCAN_VERBS"]

SCAN_VERBS = ("walk", "look", "run", "jump")
#: Words with a grammatical role (everything else in a SCAN* command is a verb primitive).
FUNCTION_WORDS = frozenset({"and", "after", "twice", "thrice", "opposite", "around", "turn", "left", "right"})
_REPEAT = {"twice": 2, "thrice": 3}


def _direction(token: str) -> str | None:
    base, sep, suffix = token.partition("_")
    if base in ("left", "right") and (not sep or suffix.isdigit()):
        return "I_TURN_" + base.upper() + (sep + suffix)
    return None


def _parse_v(tokens: list[str], star: bool, verbs: frozenset | None, unify: bool) -> list[str]:
    if not tokens:
        raise ValueError("empty phrase")
    head, rest = tokens[0], tokens[1:]
    if head == "turn":
        if star:
            raise ValueError("SCAN* has no 'turn' verb")
        if not rest:
            raise ValueError("'turn' alone is not a command")
        act: list[str] = []
    elif head in FUNCTION_WORDS or _direction(head) is not None:
        raise ValueError(f"expected a verb, got {head!r}")
    elif verbs is not None and head not in verbs:
        raise ValueError(f"unknown verb {head!r}; accepted verbs: {sorted(verbs)}")
    else:
        act = ["I_" + head.upper()]
    if not rest:
        return act
    if len(rest) == 1 or (len(rest) == 2 and rest[0] in ("opposite", "around")):
        turn = _direction(rest[-1])
        if turn is None:
            raise ValueError(f"expected a direction after {tokens[-2]!r}, got {rest[-1]!r}")
        if rest[0] == "around":
            return ([turn] + act) * 4
        if rest[0] == "opposite":  # SCAN* (unify): "around" with two quarter turns
            return ([turn] + act) * 2 if unify else [turn, turn] + act
        return [turn] + act
    raise ValueError(f"cannot parse phrase {' '.join(tokens)!r}")


def _parse_s(tokens: list[str], star: bool, verbs, unify: bool) -> list[str]:
    if tokens and tokens[-1] in _REPEAT:
        return _parse_v(tokens[:-1], star, verbs, unify) * _REPEAT[tokens[-1]]
    return _parse_v(tokens, star, verbs, unify)


def _split(tokens: list[str], word: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for t in tokens:
        if t == word:
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


def interpret(command: str, *, star: bool = False, verbs: Iterable[str] | None = None,
              unify_around_opposite: bool | None = None, copy: int | None = None) -> str:
    """The action sequence (space-separated) of a SCAN or SCAN* ``command`` (space-separated words).

    Args:
        star: SCAN* rules (any number of conjunctions, no ``turn``); SCAN allows one conjunction.
        verbs: accepted verb words (default: SCAN's four verbs for SCAN, any non-function word for
            SCAN*).
        unify_around_opposite: ``opposite`` as two (turn, verb) steps instead of SCAN's
            ``turn turn verb`` (default: True for SCAN*, False for SCAN).
        copy: the command was rewritten with AugZero copy ``copy``: every token must end in
            ``_<copy>``; the suffix is stripped before and added to every action after.

    Raises ``ValueError`` for anything outside the grammar.

    Example:
        >>> interpret("walk_2 left_2 and_2 jump_2", copy=2)
        'I_TURN_LEFT_2 I_WALK_2 I_JUMP_2'
    """
    if not isinstance(command, str):
        raise TypeError(f"command must be a str, got {type(command).__name__}")
    tokens = command.split()
    if copy is not None:
        suffix = f"_{copy}"
        if not all(t.endswith(suffix) for t in tokens):
            raise ValueError(f"copy={copy}: every token must end in {suffix!r}")
        tokens = [t[: -len(suffix)] for t in tokens]
    verb_set = frozenset(verbs) if verbs is not None else None if star else frozenset(SCAN_VERBS)
    unify = star if unify_around_opposite is None else bool(unify_around_opposite)
    if not tokens:
        raise ValueError("empty command")
    if not star and sum(t in ("and", "after") for t in tokens) > 1:
        raise ValueError("SCAN commands have at most one conjunction")
    out: list[str] = []
    for group in _split(tokens, "and"):
        # a1 after a2 after a3 = ((a1 after a2) after a3): run the right operand first
        chain = _split(group, "after")
        acc = _parse_s(chain[0], star, verb_set, unify)
        for part in chain[1:]:
            acc = _parse_s(part, star, verb_set, unify) + acc
        out += acc
    if copy is not None:
        out = [f"{a}_{copy}" for a in out]
    return " ".join(out)


#: The name under which :func:`interpret` is exported by ``hf_synthsample``.
interpret_scan = interpret


def is_valid(command: str, **kwargs) -> bool:
    """Whether ``interpret(command, **kwargs)`` succeeds."""
    try:
        interpret(command, **kwargs)
    except ValueError:
        return False
    return True
