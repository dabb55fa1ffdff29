"""Random Karel programs with controls on size, control flow, nesting and constructs.

Two samplers, chosen by :attr:`ProgramParams.mode`:

* ``"grammar"``: a random derivation of the DSL. Each body holds ``1..max_body`` statements; a
  statement is a control structure (a construct drawn uniformly from ``constructs``) with
  probability ``p_control`` while the nesting depth is below ``max_nesting`` and fewer than
  ``max_control_flow`` structures were made, otherwise an action drawn uniformly. Conditions
  are uniform over the five, negated with probability ``p_not``; repeat counts are uniform over
  ``repeat_min..repeat_max`` (2..10 as in the field's data). The draw is then *rejected* unless it
  satisfies every filter: size in ``min_size..max_size`` tokens, control structures in
  ``min_control_flow..max_control_flow``, nesting depth at least ``min_nesting``, the nesting
  ``pattern`` (e.g. ``"while-in-while"``: a while somewhere inside a while's body), at least
  ``min_actions`` actions and a ``move`` if ``require_move``.
* ``"actions"``: action-only programs; the length is uniform over ``min_actions..max_actions``
  (1..20 by default is the paper's section 4.3 set) and each token uniform over the five actions.

Example:
    >>> import random
    >>> prog = sample_program(random.Random(0), ProgramParams(mode="actions", min_actions=3, max_actions=3))
    >>> len(prog)
    3
"""

from __future__ import annotations

import dataclasses
import random

from ...settings import Settings, setting
from ...validation import check_int
from .dsl import ACTIONS, CONDITIONS, CONTROL, MAX_REPEAT, Body, to_tokens

__all__ = ["MODES", "PATTERNS", "ProgramParams", "ProgramSamplingError", "sample_program", "program_size",
           "control_flow_count", "nesting_depth", "action_count", "has_pattern"]

MODES = ("grammar", "actions")
#: nesting patterns "<inner>-in-<outer>" (inner anywhere below an outer body)
PATTERNS = tuple(f"{a}-in-{b}" for a in CONTROL for b in CONTROL)
_MAX_DRAWS = 100_000


class ProgramSamplingError(ValueError):
    """No program satisfying the constraints was found within the draw budget."""


@dataclasses.dataclass(frozen=True)
class ProgramParams(Settings):
    """Parameters of :func:`sample_program` (see the module docstring), checked at construction."""

    mode: str = setting("grammar", help=f"program sampler, one of {MODES}", choices=MODES)
    min_size: int = setting(5, help="smallest program size in tokens", min=5)
    max_size: int = setting(40, help="largest program size in tokens (>= min_size)", min=5)
    min_control_flow: int = setting(0, help="fewest control structures", min=0)
    max_control_flow: int = setting(4, help="most control structures (>= min_control_flow)", min=0)
    min_nesting: int = setting(0, help="smallest nesting depth of control flow (<= max_nesting)", min=0, max=20)
    max_nesting: int = setting(3, help="largest nesting depth of control flow", min=0, max=20)
    constructs: tuple[str, ...] = setting(CONTROL, help=f"allowed control structures, a subset of {list(CONTROL)}",
                                          kind="strs", choices=CONTROL)
    pattern: str | None = setting(None, help=f"required nesting pattern, one of {list(PATTERNS)} or None",
                                  choices=PATTERNS)
    p_control: float = setting(0.25, help="probability that a statement is a control structure", min=0.0, max=1.0)
    p_not: float = setting(0.2, help="probability that a condition is negated", min=0.0, max=1.0)
    max_body: int = setting(4, help="most statements per body", min=1)
    repeat_min: int = setting(2, help="smallest repeat count", min=0, max=MAX_REPEAT)
    repeat_max: int = setting(10, help="largest repeat count (>= repeat_min)", min=0, max=MAX_REPEAT)
    min_actions: int = setting(1, help="fewest actions (action-only: shortest program)", min=0)
    max_actions: int = setting(20, help="action-only: longest program (>= min_actions)", min=1)
    require_move: bool = setting(False, help="programs must contain a move")

    def _check(self) -> None:
        """The bounds between fields, and that the filters can be met."""
        check_int("max_size", self.max_size, min=self.min_size)
        check_int("max_control_flow", self.max_control_flow, min=self.min_control_flow)
        check_int("min_nesting", self.min_nesting, max=self.max_nesting)
        check_int("repeat_max", self.repeat_max, min=self.repeat_min)
        check_int("max_actions", self.max_actions, min=max(self.min_actions, 1))
        if self.mode == "grammar":
            need = self.min_control_flow > 0 or self.min_nesting > 0 or self.pattern is not None
            if need and (not self.constructs or self.p_control == 0 or self.max_control_flow == 0 or self.max_nesting == 0):
                raise ValueError("min_control_flow/min_nesting/pattern ask for control flow, but constructs, "
                                 "p_control, max_control_flow or max_nesting rule it out")
            if self.pattern is not None:
                inner, outer = self.pattern.split("-in-")
                if inner not in self.constructs or outer not in self.constructs or self.max_nesting < 2:
                    raise ValueError(f"pattern {self.pattern!r} needs {inner!r} and {outer!r} in constructs "
                                     f"{list(self.constructs)} and max_nesting >= 2")

    def validate(self) -> "ProgramParams":
        """``self``: the fields were checked at construction (kept for callers that chain it)."""
        return self


# ------------------------------------------------------------------------------ measures
def program_size(program: Body) -> int:
    """Number of tokens of the printed program."""
    return len(to_tokens(program))


def _bodies(s: tuple) -> tuple:
    return (s[2], s[3]) if s[0] == "ifelse" else (s[2],)


def control_flow_count(program: Body) -> int:
    """Number of control structures (repeat, while, if, ifelse)."""
    return sum(1 + sum(control_flow_count(b) for b in _bodies(s)) for s in program if isinstance(s, tuple))


def action_count(program: Body) -> int:
    """Number of action tokens."""
    return sum(1 if isinstance(s, str) else sum(action_count(b) for b in _bodies(s)) for s in program)


def nesting_depth(program: Body) -> int:
    """Deepest nesting of control structures (0: no control flow, 1: none nested, ...)."""
    return max((1 + max(nesting_depth(b) for b in _bodies(s)) for s in program if isinstance(s, tuple)), default=0)


def has_pattern(program: Body, pattern: str) -> bool:
    """Whether an ``inner`` structure occurs anywhere inside the body of an ``outer`` one (``"inner-in-outer"``)."""
    inner, outer = pattern.split("-in-")

    def contains(body: Body) -> bool:
        return any(isinstance(s, tuple) and (s[0] == inner or any(contains(b) for b in _bodies(s))) for s in body)

    def search(body: Body) -> bool:
        return any(isinstance(s, tuple) and any((s[0] == outer and contains(b)) or search(b) for b in _bodies(s))
                   for s in body)

    return search(program)


# ------------------------------------------------------------------------------ sampling
class _Grammar:
    """One random derivation; counts its tokens, actions and moves as it goes (the filters then
    need no walks over the tree)."""

    def __init__(self, rng: random.Random, p: ProgramParams):
        self.rng, self.p = rng, p
        self.control_left = p.max_control_flow
        self.size = 4  # DEF run m( ... m)
        self.actions = 0
        self.moves = 0

    def cond(self):
        rng = self.rng
        c = CONDITIONS[int(rng.random() * 5)]
        if rng.random() < self.p.p_not:
            self.size += 4  # not c( c c)
            return ("not", c)
        self.size += 1
        return c

    def body(self, depth: int) -> Body:
        rng, p = self.rng, self.p
        out = []
        for _ in range(1 + int(rng.random() * p.max_body)):
            if depth < p.max_nesting and self.control_left > 0 and p.constructs and rng.random() < p.p_control:
                self.control_left -= 1
                head = p.constructs[int(rng.random() * len(p.constructs))]
                if head == "repeat":
                    k = p.repeat_min + int(rng.random() * (p.repeat_max - p.repeat_min + 1))
                    self.size += 4
                    out.append(("repeat", k, self.body(depth + 1)))
                elif head == "ifelse":
                    self.size += 8
                    out.append(("ifelse", self.cond(), self.body(depth + 1), self.body(depth + 1)))
                else:
                    self.size += 5
                    out.append((head, self.cond(), self.body(depth + 1)))
            else:
                a = int(rng.random() * 5)
                self.size += 1
                self.actions += 1
                if not a:
                    self.moves += 1
                out.append(ACTIONS[a])
        return tuple(out)


def _accept(prog: Body, p: ProgramParams, g: _Grammar) -> bool:
    # the counts the derivation kept: no walks over the tree but for nesting and pattern
    return (p.min_size <= g.size <= p.max_size and p.max_control_flow - g.control_left >= p.min_control_flow
            and not (p.min_nesting and nesting_depth(prog) < p.min_nesting)
            and (p.pattern is None or has_pattern(prog, p.pattern))
            and g.actions >= p.min_actions and (not p.require_move or g.moves > 0))


def sample_program(rng: random.Random, params: ProgramParams, *, max_draws: int = _MAX_DRAWS) -> Body:
    """One program from the configured distribution; :class:`ProgramSamplingError` if ``max_draws``
    draws in a row fail the filters (the constraints are then practically unsatisfiable)."""
    p = params
    if p.mode == "actions":
        for _ in range(max_draws):
            n = p.min_actions + int(rng.random() * (p.max_actions - p.min_actions + 1))
            prog = tuple(ACTIONS[int(rng.random() * 5)] for _ in range(n))
            if n and (not p.require_move or "move" in prog):
                return prog
    else:
        for _ in range(max_draws):
            g = _Grammar(rng, p)
            prog = g.body(0)
            if _accept(prog, p, g):
                return prog
    raise ProgramSamplingError(
        f"no program met the constraints in {max_draws} draws ({dataclasses.asdict(p)}); "
        "relax min_size/max_size, the control-flow or nesting bounds, or the pattern"
    )
