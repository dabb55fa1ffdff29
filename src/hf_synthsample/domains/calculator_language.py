"""Calculator expressions as a structure language (``calculator``), the object named in
:data:`hf_synthsample.structure.LANGUAGES`: the operator tree, digits values. Kept apart from
:mod:`hf_synthsample.domains.calculator`, whose source is the builder's cache key.

Example:
    >>> from hf_synthsample.structure import abstract_template
    >>> abstract_template("5+4*(2+3)", language="calculator")
    '(+ entity (* entity (+ entity entity)))'
"""

from __future__ import annotations

from ..structure import Language, Node
from . import calculator

__all__ = ["parse_calculator", "CALCULATOR_LANGUAGE"]

_DIGITS = tuple(Node(str(d), kind="entity") for d in range(10))


def parse_calculator(text: str) -> Node:
    """A Calculator expression as its operator tree (parentheses are implied by the tree)."""
    # built bottom-up without recursion: a long chain 1+1+...+1 is a deep tree, refused with a
    # ValueError by the structure module's height check, never a RecursionError here
    return calculator.fold(calculator.parse(text), _DIGITS.__getitem__, lambda op, a, b: Node(op, (a, b)))


CALCULATOR_LANGUAGE = Language("calculator", parse_calculator, description="Calculator expressions (digits: values)")
