"""Calculator domain (Shin et al. 2019, section 6; ALGORITHMS.md section 2).

Expressions over the digits 0-9 with ``+``, ``-`` and ``*``; the answer is the value modulo 10
(floor modulo, so always in 0..9). Expressions are printed with every redundant parenthesis
removed, so a model has to learn precedence and left-associativity.

Trees are plain Python values: a leaf is an ``int`` digit, an inner node a tuple
``(op, left, right)``. The four samplers (DCFG, T2T, RCFG, BAL) are written once against a tiny
"algebra" (a leaf constructor and a node combiner): with :data:`TREE_ALGEBRA` they build trees,
with :data:`RENDER_ALGEBRA` they print and measure the expression bottom-up in the same pass,
which is what the dataset builder uses (no tree is ever materialised there).

Example:
    >>> to_string(("+", 1, ("-", 2, 3)))
    '1+2-3'
    >>> to_string(("-", 1, ("-", 2, 3)))
    '1-(2-3)'
    >>> evaluate(parse("(1+2)*(3-4)+5"))
    2
    >>> salient_features("(1+2)*(3-4)+5")["mean_paren_depth"]
    0.8
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, NamedTuple, Union

__all__ = ["DISTRIBUTIONS", "OPERATORS", "SALIENT_VARIABLES", "Expr", "CalculatorParams", "Rendered", "TREE_ALGEBRA",
           "RENDER_ALGEBRA", "to_string", "fold", "render", "parse", "evaluate", "answer", "salient_features",
           "round_length", "round_mean_depth", "sample", "tree_depth", "num_leaves"]

Expr = Union[int, tuple]  # int digit, or (op, left, right)

OPERATORS: tuple[str, ...] = ("+", "-", "*")
PRECEDENCE = {"+": 1, "-": 1, "*": 2}
_ATOM = 3  # precedence of a digit or a parenthesised group
DISTRIBUTIONS: tuple[str, ...] = ("dcfg", "t2t", "rcfg", "bal")
_MAX_REDRAWS = 100_000  # DCFG/RCFG draws rejected by max_length before giving up

#: The salient variables of section 6.2, as produced by :func:`salient_features` and stored as
#: dataset columns under these names.
SALIENT_VARIABLES: dict[str, str] = {
    "length": "expression length in characters, rounded to the nearest even number (ties up)",
    "num_ops": "number of operators",
    "num_parens": "number of parenthesis pairs left after removing redundant ones",
    "mean_paren_depth": "mean over digits of the number of parentheses enclosing the digit, "
    "rounded to one decimal (half up)",
    "max_paren_depth": "maximum over digits of the number of parentheses enclosing the digit",
}


# ---------------------------------------------------------------- Printing and measuring, bottom-up
class Rendered(NamedTuple):
    """A printed (sub)expression with what is needed to combine it and to measure it."""

    text: str
    prec: int  # precedence of the top-level operator (3 for a digit or parenthesised group)
    value: int  # value mod 10
    num_ops: int
    num_parens: int
    depth_sum: int  # sum over digits of their parenthesis depth
    num_digits: int
    max_depth: int  # max over digits of their parenthesis depth


# Inside the samplers a rendered subexpression is a plain tuple with Rendered's fields (building a
# NamedTuple per node costs a third of generation time); public functions return Rendered.
_LEAVES = tuple((str(d), _ATOM, d, 0, 0, 0, 1, 0) for d in range(10))


def _combine(op: str, left: Rendered, right: Rendered) -> Rendered:
    """Join two printed operands with ``op``, adding only the parentheses the parse needs."""
    # the one parenthesis rule: wrap the left operand iff it binds weaker than op, the right one also at
    # equal precedence under "-" (a-(b+c) is not a-b+c); + and * are associative, so a*(b*c) prints a*b*c
    lt, lp, lv, lo, lpa, lds, ln, lmd = left
    rt, rp, rv, ro, rpa, rds, rn, rmd = right
    p = PRECEDENCE[op]
    if lp < p:
        lt = "(" + lt + ")"
        lpa += 1
        lds += ln  # every digit inside gets one level deeper
        lmd += 1
    if rp < p or (rp == p and op == "-"):
        rt = "(" + rt + ")"
        rpa += 1
        rds += rn
        rmd += 1
    return (lt + op + rt, p, _value(op, lv, rv), lo + ro + 1, lpa + rpa, lds + rds, ln + rn, lmd if lmd > rmd else rmd)


@dataclass(frozen=True)
class Algebra:
    """How a sampler builds its result: ``leaf(digit)`` and ``node(op, left, right)``."""

    leaf: Callable[[int], object]
    node: Callable[[str, object, object], object]


TREE_ALGEBRA = Algebra(leaf=lambda d: d, node=lambda op, left, right: (op, left, right))
RENDER_ALGEBRA = Algebra(leaf=_LEAVES.__getitem__, node=_combine)


def fold(expr: Expr, leaf: Callable[[int], object], node: Callable[[str, object, object], object]):
    """``expr`` folded bottom-up: ``leaf(digit)`` at the leaves, ``node(op, left, right)`` above.

    The one place a tree is read and checked: a leaf that is not a digit 0-9 (a ``bool`` is not) or
    an inner node that is not ``(op, left, right)`` with ``op`` in :data:`OPERATORS` is a
    ``ValueError`` (a wrong type a ``TypeError``) naming its path (1 = left, 2 = right). Iterative:
    trees of any depth fold.

    Example:
        >>> fold(("+", 1, ("*", 2, 3)), leaf=lambda d: d, node=lambda op, a, b: f"[{a}{op}{b}]")
        '[1+[2*3]]'
        >>> fold(("+", 1, 99), leaf=lambda d: d, node=lambda op, a, b: 0)
        Traceback (most recent call last):
        ...
        ValueError: expr: leaves must be digits 0-9, got 99 at path [2]
    """
    out: list = []
    stack: list = [(expr, None)]  # (subtree, path) to visit; (tree, False) once its children are done
    while stack:
        e, path = stack.pop()
        if path is False:
            right = out.pop()
            out[-1] = node(e[0], out[-1], right)
            continue
        if isinstance(e, int) and not isinstance(e, bool):
            if not 0 <= e <= 9:
                raise ValueError(f"expr: leaves must be digits 0-9, got {e!r}{_at(path)}")
            out.append(leaf(e))
            continue
        if not isinstance(e, (tuple, list)):
            raise TypeError(f"expr: a tree is a digit or an (op, left, right) tuple, got {type(e).__name__} {e!r}{_at(path)}")
        if len(e) != 3:
            raise ValueError(f"expr: an inner node is (op, left, right), got {len(e)} items{_at(path)}")
        if not isinstance(e[0], str) or e[0] not in PRECEDENCE:
            raise ValueError(f"expr: operator must be one of {OPERATORS}, got {e[0]!r}{_at(path)}")
        stack.append((e, False))
        stack.append((e[2], (path, 2)))  # a linked path: O(1) per node, spelled out only in errors
        stack.append((e[1], (path, 1)))
    return out[0]


def _at(path: tuple | None) -> str:
    steps = []
    while path:
        path, step = path
        steps.append(step)
    return f" at path {steps[::-1]}" if steps else ""


def _value(op: str, a: int, b: int) -> int:
    if op == "+":
        return (a + b) % 10
    if op == "-":
        return (a - b) % 10
    return (a * b) % 10


def render(expr: Expr) -> Rendered:
    """Print ``expr`` with minimal parentheses and measure it in one bottom-up pass."""
    return Rendered(*fold(expr, _LEAVES.__getitem__, _combine))


def to_string(expr: Expr) -> str:
    """The expression as text with every redundant parenthesis removed."""
    return render(expr).text


def round_length(num_chars: int) -> int:
    """Length rounded to the nearest even number, ties up (every printed expression has odd length)."""
    return 2 * ((num_chars + 1) // 2)


def round_mean_depth(depth_sum: int, num_digits: int) -> float:
    """``depth_sum / num_digits`` rounded half up to one decimal, computed exactly in integers."""
    return ((20 * depth_sum + num_digits) // (2 * num_digits)) / 10


def _row_features(r: tuple) -> dict:
    """The salient variables of a rendered tuple (:class:`Rendered`'s fields)."""
    text, _, _, num_ops, num_parens, depth_sum, num_digits, max_depth = r
    return {
        "length": round_length(len(text)),
        "num_ops": num_ops,
        "num_parens": num_parens,
        "mean_paren_depth": round_mean_depth(depth_sum, num_digits),
        "max_paren_depth": max_depth,
    }


# ---------------------------------------------------------------- Parsing and evaluation
# independent of the printer: the tests use them as its oracle
def parse(text: str) -> Expr:
    """Parse an expression with the usual precedence (``*`` over ``+ -``), left-associative.

    Iterative, so any nesting depth parses; a ``ValueError`` names the position of the first problem.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    n = len(text)

    def error(msg: str, pos: int) -> ValueError:
        shown = repr(text[pos]) if pos < n else "end of input"
        return ValueError(f"cannot parse {text!r}: {msg} at position {pos} ({shown})")

    vals: list = []
    ops: list[str] = []  # operators and open parentheses, innermost last

    def reduce() -> None:
        right = vals.pop()
        vals[-1] = (ops.pop(), vals[-1], right)

    operand = True  # an operand (digit or '(') comes next
    for pos, ch in enumerate(text):
        if operand:
            if ch in "0123456789":
                vals.append(ord(ch) - 48)
                operand = False
            elif ch == "(":
                ops.append("(")
            else:
                raise error("expected a digit or '('", pos)
        elif ch in PRECEDENCE:
            p = PRECEDENCE[ch]
            while ops and ops[-1] != "(" and PRECEDENCE[ops[-1]] >= p:  # left-associative
                reduce()
            ops.append(ch)
            operand = True
        elif ch == ")" and "(" in ops:
            while ops[-1] != "(":
                reduce()
            ops.pop()
        else:
            raise error("expected ')'" if "(" in ops else "unexpected character", pos)
    if operand:
        raise error("expected a digit or '('", n)
    while ops:
        if ops[-1] == "(":
            raise error("expected ')'", n)
        reduce()
    return vals[0]


def evaluate(expr: Expr) -> int:
    """Value of ``expr`` modulo 10 (floor modulo: always 0..9); the tree is checked by :func:`fold`."""
    return fold(expr, int, _value)


def answer(text: str) -> int:
    """The Calculator label of an expression string."""
    return evaluate(parse(text))


def salient_features(text: str) -> dict:
    """The five salient variables of an expression string, read off the string itself (so also of one
    not printed minimally): a character scan, independent of the generator's bottom-up measurement."""
    parse(text)  # validates
    depth = max_depth = depth_sum = digits = parens = 0
    for ch in text:
        if ch == "(":
            depth += 1
            parens += 1
        elif ch == ")":
            depth -= 1
        elif ch.isdigit():
            digits += 1
            depth_sum += depth
            max_depth = max(max_depth, depth)
    return _row_features((text, 0, 0, sum(text.count(op) for op in OPERATORS), parens, depth_sum, digits, max_depth))


def tree_depth(expr: Expr) -> int:
    """Depth of a tree (a digit has depth 0)."""
    return fold(expr, lambda d: 0, lambda op, a, b: 1 + (a if a > b else b))


def num_leaves(expr: Expr) -> int:
    """Number of digits in a tree."""
    return fold(expr, lambda d: 1, lambda op, a, b: a + b)


# ---------------------------------------------------------------- The four distributions
@dataclass(frozen=True)
class CalculatorParams:
    """Parameters of the four distributions (defaults are the library's, see the README).

    Attributes:
        p_digit: DCFG/RCFG probability of stopping with a digit at each node.
        max_tree_depth: DCFG/RCFG recursion cap: at this depth a digit is forced, so sampling
            always terminates even for ``p_digit <= 0.5``.
        max_length: DCFG/RCFG expressions longer than this many characters are redrawn (the
            grammar's length tail is otherwise unbounded); ``None`` keeps every draw.
        max_run: RCFG draws runs of 2..max_run operands for the associative ``+`` and ``*``.
        t2t_min_depth, t2t_max_depth: T2T tree depth is uniform over this range.
        bal_min_depth, bal_max_depth: BAL tree depth is uniform over this range.
    """

    p_digit: float = 0.55
    max_tree_depth: int = 12
    max_length: int | None = 41
    max_run: int = 4
    t2t_min_depth: int = 1
    t2t_max_depth: int = 5
    bal_min_depth: int = 1
    bal_max_depth: int = 4


def _digit(rng: random.Random, alg: Algebra):
    return alg.leaf(int(rng.random() * 10))


def _op(rng: random.Random) -> str:
    return OPERATORS[int(rng.random() * 3)]


def _dcfg(rng: random.Random, alg: Algebra, p: float, cap: int, depth: int = 0):
    # the hot path of Calculator generation: _digit/_op inlined
    if depth >= cap or rng.random() < p:
        return alg.leaf(int(rng.random() * 10))
    op = OPERATORS[int(rng.random() * 3)]
    left = _dcfg(rng, alg, p, cap, depth + 1)
    return alg.node(op, left, _dcfg(rng, alg, p, cap, depth + 1))


class _TooLong(Exception):
    """A draw already has more digits than ``max_length`` allows: abandon it early."""


def _rcfg(rng: random.Random, alg: Algebra, p: float, cap: int, max_run: int, depth: int = 0, budget=None):
    # RCFG is supercritical at the default p_digit (mean branching 0.45 * 8/3 > 1): most draws
    # would grow to the depth cap only to be rejected by max_length. ``budget`` (a one-element
    # list of digits still allowed) abandons them as soon as they cannot fit; the distribution
    # of accepted draws is unchanged.
    if depth >= cap or rng.random() < p:
        if budget is not None:
            budget[0] -= 1
            if budget[0] < 0:
                raise _TooLong
        return _digit(rng, alg)
    op = _op(rng)
    run = 2 if op == "-" else rng.randint(2, max_run)
    acc = _rcfg(rng, alg, p, cap, max_run, depth + 1, budget)
    for _ in range(run - 1):  # a run a op b op c ... is the left-associated chain
        acc = alg.node(op, acc, _rcfg(rng, alg, p, cap, max_run, depth + 1, budget))
    return acc


def _t2t(rng: random.Random, alg: Algebra, depth: int):
    # tensor2tensor's random_expr: one random side carries depth-1, the other a uniform smaller depth.
    if depth == 0:
        return _digit(rng, alg)
    deep_left = rng.random() < 0.5
    other = int(rng.random() * depth)
    left = _t2t(rng, alg, depth - 1 if deep_left else other)
    right = _t2t(rng, alg, other if deep_left else depth - 1)
    return alg.node(_op(rng), left, right)


def _bal(rng: random.Random, alg: Algebra, depth: int):
    if depth == 0:
        return _digit(rng, alg)
    left = _bal(rng, alg, depth - 1)
    right = _bal(rng, alg, depth - 1)
    return alg.node(_op(rng), left, right)


def sample(rng: random.Random, distribution: str, params: CalculatorParams = CalculatorParams(),
           algebra: Algebra = TREE_ALGEBRA):
    """Draw one expression from ``distribution`` (one of :data:`DISTRIBUTIONS`).

    With the default algebra the result is a tree; with :data:`RENDER_ALGEBRA` it is a tuple
    with the fields of :class:`Rendered` (``Rendered(*result)`` names them). DCFG/RCFG draws
    longer than ``params.max_length`` are redrawn.

    Example:
        >>> tree = sample(random.Random(0), "bal", CalculatorParams(bal_min_depth=2, bal_max_depth=2))
        >>> tree_depth(tree), num_leaves(tree)
        (2, 4)
    """
    if distribution == "t2t":
        return _t2t(rng, algebra, rng.randint(params.t2t_min_depth, params.t2t_max_depth))
    if distribution == "bal":
        return _bal(rng, algebra, rng.randint(params.bal_min_depth, params.bal_max_depth))
    if distribution not in ("dcfg", "rcfg"):
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
    for _ in range(_MAX_REDRAWS):
        if distribution == "dcfg":
            out = _dcfg(rng, algebra, params.p_digit, params.max_tree_depth)
        else:
            budget = None if params.max_length is None else [(params.max_length + 1) // 2]
            try:
                out = _rcfg(rng, algebra, params.p_digit, params.max_tree_depth, params.max_run, budget=budget)
            except _TooLong:
                continue
        if params.max_length is None:
            return out
        text = out[0] if algebra is RENDER_ALGEBRA else to_string(out)
        if len(text) <= params.max_length:
            return out
    raise ValueError(
        f"max_length={params.max_length} rejected {_MAX_REDRAWS} {distribution} draws in a row; "
        f"raise max_length or p_digit (now {params.p_digit})"
    )


def sample_row(rng: random.Random, distribution: str, params: CalculatorParams) -> dict:
    """One dataset row: expression, answer, distribution and the five salient variables."""
    r = sample(rng, distribution, params, RENDER_ALGEBRA)
    return {"expression": r[0], "answer": r[2], "distribution": distribution, **_row_features(r)}
