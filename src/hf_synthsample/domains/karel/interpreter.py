"""Running Karel programs: a reference interpreter and a compiled fast path with the same semantics.

Semantics (ALGORITHMS.md section 3). A run ends in one of three statuses:

* ``"ok"``: the program finished;
* ``"crashed"`` with a reason: ``"hit_wall"`` (move into a wall), ``"out_of_bounds"`` (move off the
  grid), ``"no_marker"`` (pickMarker on an empty cell), ``"marker_overflow"`` (putMarker beyond
  ``max_markers`` in a cell);
* ``"timeout"``: more than ``tick_budget`` ticks, where a tick is an action, a condition check
  (each ``if``/``ifelse`` test and each ``while`` test, the final false one included; ``not c``
  is one check) or a ``repeat`` iteration. Exactly ``tick_budget`` ticks is still ``"ok"``.

The failing step is not performed; the returned world is the state just before it, with
``crashed=True``.

*Branch coverage*: every ``while``/``if``/``ifelse`` node (numbered in program order) has two
branches, its condition evaluating true and false; :attr:`ExecutionResult.coverage` lists the
branches a run took. :func:`execute` walks the tree (the reference); :func:`compile_program`
flattens a program into instructions for a small loop over flat arrays, which the I/O sampler
runs many times.

Example:
    >>> from hf_synthsample.domains.karel.dsl import parse
    >>> from hf_synthsample.domains.karel.world import World
    >>> prog = parse("DEF run m( WHILE c( frontIsClear c) w( move w) putMarker m)")
    >>> res = execute(prog, World(1, 4, (0, 0, 1)))
    >>> res.status, res.world.hero, res.world.markers, res.actions
    ('ok', (0, 3, 1), {(0, 3): 1}, ['move', 'move', 'move', 'putMarker'])
    >>> res.ticks  # 4 while tests + 3 moves + putMarker
    8
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

from .dsl import ACTIONS, Body, Cond
from .programs import _bodies
from .world import World

__all__ = ["DEFAULT_TICK_BUDGET", "DEFAULT_MAX_MARKERS", "CRASH_REASONS", "ExecutionResult", "CompiledProgram",
           "execute", "execute_fast", "compile_program", "num_branch_points", "required_coverage",
           "coverage_bits_to_set", "to_flat", "from_flat"]

DEFAULT_TICK_BUDGET = 200
DEFAULT_MAX_MARKERS = 10
CRASH_REASONS = ("hit_wall", "out_of_bounds", "no_marker", "marker_overflow")
# (status, reason) of each status code of the compiled function (0 ok, 1 hit_wall, ...)
_CODE_STATUS = (("ok", None), *(("crashed", r) for r in CRASH_REASONS[:2]), ("timeout", "tick_budget"),
                *(("crashed", r) for r in CRASH_REASONS[2:]))
_DR = (1, 0, -1, 0)  # north is row + 1
_DC = (0, 1, 0, -1)


@dataclasses.dataclass
class ExecutionResult:
    """What a run produced: the final world, the action trace, status and reason, ticks used, and
    the branches taken as ``(branch_point, outcome)`` pairs."""

    world: World
    actions: list
    status: str
    reason: str | None
    ticks: int
    coverage: frozenset

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _check_limits(max_markers: int, tick_budget: int) -> None:
    if isinstance(max_markers, bool) or not isinstance(max_markers, int) or max_markers < 1:
        raise ValueError(f"max_markers must be an int >= 1, got {max_markers!r}")
    if isinstance(tick_budget, bool) or not isinstance(tick_budget, int) or tick_budget < 0:
        raise ValueError(f"tick_budget must be an int >= 0, got {tick_budget!r}")


def _branch_nodes(body: Body) -> list:
    """The ``while``/``if``/``ifelse`` nodes in program order (the order of their branch points)."""
    out = []
    for s in body:
        if isinstance(s, tuple):
            out += ([] if s[0] == "repeat" else [s]) + [n for b in _bodies(s) for n in _branch_nodes(b)]
    return out


def num_branch_points(program: Body) -> int:
    """Number of ``while``/``if``/``ifelse`` nodes."""
    return len(_branch_nodes(program))


def required_coverage(program: Body) -> frozenset:
    """Every branch of the program: ``{(i, True), (i, False)}`` for each branch point ``i``."""
    return frozenset((i, o) for i in range(num_branch_points(program)) for o in (True, False))


# ------------------------------------------------------------------------------ reference
class _Stop(Exception):
    def __init__(self, status: str, reason: str):
        self.status, self.reason = status, reason


class _Reference:
    """A plain tree walker over a world's sets and dicts (kept simple: it is the test oracle)."""

    def __init__(self, world: World, max_markers: int, tick_budget: int):
        self.rows, self.cols = world.rows, world.cols
        self.walls = world.walls
        self.markers = dict(world.markers)
        self.r, self.c, self.d = world.hero
        self.max_markers, self.budget = max_markers, tick_budget
        self.ticks = 0
        self.actions: list[str] = []
        self.coverage: set = set()
        self.ids: dict[int, int] = {}  # id(node) -> branch point

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks > self.budget:
            raise _Stop("timeout", "tick_budget")

    def clear(self, d: int) -> bool:
        r, c = self.r + _DR[d], self.c + _DC[d]
        return 0 <= r < self.rows and 0 <= c < self.cols and (r, c) not in self.walls

    def test(self, cond: Cond) -> bool:
        if isinstance(cond, tuple):
            return not self.test(cond[1])
        turn = {"frontIsClear": 0, "leftIsClear": -1, "rightIsClear": 1}.get(cond)
        if turn is not None:
            return self.clear((self.d + turn) % 4)
        present = self.markers.get((self.r, self.c), 0) > 0
        return present if cond == "markersPresent" else not present

    def check(self, node: tuple) -> bool:
        self.tick()
        value = self.test(node[1])
        self.coverage.add((self.ids[id(node)], value))
        return value

    def act(self, a: str) -> None:
        self.tick()
        if a == "move":
            r, c = self.r + _DR[self.d], self.c + _DC[self.d]
            if not (0 <= r < self.rows and 0 <= c < self.cols):
                raise _Stop("crashed", "out_of_bounds")
            if (r, c) in self.walls:
                raise _Stop("crashed", "hit_wall")
            self.r, self.c = r, c
        elif a == "turnLeft":
            self.d = (self.d - 1) % 4
        elif a == "turnRight":
            self.d = (self.d + 1) % 4
        elif a == "pickMarker":
            n = self.markers.get((self.r, self.c), 0)
            if n == 0:
                raise _Stop("crashed", "no_marker")
            self.markers[(self.r, self.c)] = n - 1
        else:
            n = self.markers.get((self.r, self.c), 0) + 1
            if n > self.max_markers:
                raise _Stop("crashed", "marker_overflow")
            self.markers[(self.r, self.c)] = n
        self.actions.append(a)

    def run(self, body: Body) -> None:
        for s in body:
            if isinstance(s, str):
                self.act(s)
            elif s[0] == "repeat":
                for _ in range(s[1]):
                    self.tick()
                    self.run(s[2])
            elif s[0] == "while":
                while self.check(s):
                    self.run(s[2])
            elif self.check(s):  # if, ifelse
                self.run(s[2])
            elif s[0] == "ifelse":
                self.run(s[3])


def execute(program: Body, world: World, *, max_markers: int = DEFAULT_MAX_MARKERS,
            tick_budget: int = DEFAULT_TICK_BUDGET) -> ExecutionResult:
    """Run ``program`` on ``world`` with the reference tree walker (the input world is not changed)."""
    _check_limits(max_markers, tick_budget)
    m = _Reference(world, max_markers, tick_budget)
    for s in _branch_nodes(program):
        m.ids[id(s)] = len(m.ids)
    status, reason = "ok", None
    try:
        m.run(program)
    except _Stop as stop:
        status, reason = stop.status, stop.reason
    out = World(world.rows, world.cols, (m.r, m.c, m.d), world.walls, m.markers, crashed=status != "ok")
    return ExecutionResult(out, m.actions, status, reason, m.ticks, frozenset(m.coverage))


# ------------------------------------------------------------------------------ compiled
# Flat layout: the grid padded by a ring of cells, index (r + 1) * (cols + 2) + (c + 1);
# B[i] = 0 free, 1 wall, 2 off the grid; M[i] = markers. One index lookup per move or test.
def to_flat(world: World) -> tuple[list, list, int, int, tuple]:
    """``(B, M, pos, dir, D)``: the padded flat arrays the compiled programs run on."""
    w2 = world.cols + 2
    B = [2] * (w2 * (world.rows + 2))
    for r in range(world.rows):
        base = (r + 1) * w2 + 1
        B[base : base + world.cols] = [0] * world.cols
    for r, c in world.walls:
        B[(r + 1) * w2 + c + 1] = 1
    M = [0] * len(B)
    for (r, c), n in world.markers.items():
        M[(r + 1) * w2 + c + 1] = n
    r, c, d = world.hero
    return B, M, (r + 1) * w2 + c + 1, d, (w2, 1, -w2, -1)


def from_flat(world: World, M: list, pos: int, d: int, crashed: bool = False) -> World:
    """The world ``world`` with the markers ``M`` and the hero at flat ``pos`` facing ``d``."""
    w2 = world.cols + 2
    markers = {(i // w2 - 1, i % w2 - 1): n for i, n in enumerate(M) if n}
    return World(world.rows, world.cols, (pos // w2 - 1, pos % w2 - 1, d), world.walls, markers, crashed)


# The fast path: a program is flattened once into instructions (op, a, b) for one small loop.
# Generating Python source and compiling it per program runs faster but costs about 50x more
# to build, and most sampled programs run only a few dozen times before they are kept or dropped.
_MOVE, _LEFT, _RIGHT, _PICK, _PUT = range(5)  # actions: the tick is part of the instruction
_COND = 5  # a = condition code (+8 if negated) + 16 * branch point, b = jump target when false
_WCOND = 9  # the same at the head of a while loop (where the optional cycle check happens)
_JUMP = 6  # a = target
_RINIT = 7  # a = counter slot, b = repeat count
_RTEST = 8  # a = counter slot, b = jump target when done; a tick per iteration
_COND_CODE = {"frontIsClear": 0, "leftIsClear": 1, "rightIsClear": 2, "markersPresent": 3, "noMarkersPresent": 4}


def _cond_code(cond: Cond) -> int:
    neg = 0
    while isinstance(cond, tuple):
        neg ^= 8
        cond = cond[1]
    return _COND_CODE[cond] | neg


def _flatten(body: Body, code: list, state: list) -> None:
    """Append ``body``'s instructions; ``state = [branch points, repeat slots]``."""
    for s in body:
        if isinstance(s, str):
            code.append((ACTIONS.index(s), 0, 0))
            continue
        head = s[0]
        if head == "repeat":
            slot = state[1]
            state[1] += 1
            code.append((_RINIT, slot, s[1]))
            test = len(code)
            code.append(None)
            _flatten(s[2], code, state)
            code.append((_JUMP, test, 0))
            code[test] = (_RTEST, slot, len(code))
            continue
        i = state[0]
        state[0] += 1
        head_at = len(code)
        code.append(None)
        _flatten(s[2], code, state)
        if head == "while":
            code.append((_JUMP, head_at, 0))
        elif head == "ifelse":
            jump_at = len(code)
            code.append(None)
        code[head_at] = (_WCOND if head == "while" else _COND, _cond_code(s[1]) | (i << 4), len(code))
        if head == "ifelse":
            _flatten(s[3], code, state)
            code[jump_at] = (_JUMP, len(code), 0)


def _vm(code, slots, B, M, pos, d, T, X, D, A=None, cycles=False):
    # B and M: lists, bytes or bytearrays (M is written). cycles=True: at each while test, a
    # machine state seen before (same instruction, hero, repeat counters, and no marker change
    # since) can only loop until the tick budget runs out, so the run ends at once as a timeout
    # (with fewer ticks counted).
    pc = t = cov = events = 0
    end = len(code)
    ctr = [0] * slots if slots else None
    seen = None
    while pc < end:
        op, a, b = code[pc]
        pc += 1
        if op < 5:
            t += 1
            if t > T:
                return 3, pos, d, t, cov
            if op == 0:
                n = pos + D[d]
                w = B[n]
                if w:
                    return w, pos, d, t, cov
                pos = n
            elif op == 1:
                d = (d + 3) & 3
            elif op == 2:
                d = (d + 1) & 3
            elif op == 3:
                m = M[pos]
                if not m:
                    return 4, pos, d, t, cov
                M[pos] = m - 1
                events += 1
            else:
                m = M[pos] + 1
                if m > X:
                    return 5, pos, d, t, cov
                M[pos] = m
                events += 1
            if A is not None:
                A(op)
        elif op == 5 or op == 9:
            t += 1
            if t > T:
                return 3, pos, d, t, cov
            if cycles and op == 9:
                key = (pc, pos, d, events, *ctr) if slots else (pc, pos, d, events)
                if seen is None:
                    seen = {key}
                elif key in seen:
                    return 3, pos, d, t, cov
                else:
                    seen.add(key)
            c = a & 7
            if c < 3:
                n = pos + D[(d + (0, 3, 1)[c]) & 3]
                v = not B[n]
            else:
                v = (M[pos] > 0) == (c == 3)
            if a & 8:
                v = not v
            if v:
                cov |= 1 << ((a >> 4) << 1)
            else:
                cov |= 2 << ((a >> 4) << 1)
                pc = b
        elif op == 6:
            pc = a
        elif op == 8:
            k = ctr[a]
            if k:
                t += 1
                if t > T:
                    return 3, pos, d, t, cov
                ctr[a] = k - 1
            else:
                pc = b
        else:
            ctr[a] = b
    return 0, pos, d, t, cov


class CompiledProgram:
    """A program flattened for fast repeated runs over the flat layout (see :func:`to_flat`).

    ``run(B, M, pos, d, tick_budget, max_markers, D, append=None, cycles=False)`` mutates ``M``, calls ``append`` with
    each action's index in :data:`~hf_synthsample.domains.karel.dsl.ACTIONS`, and returns
    ``(code, pos, d, ticks, coverage_bits)`` (``append=None``: no trace); code 0 ok, 1 hit_wall, 2 out_of_bounds, 3 timeout,
    4 no_marker, 5 marker_overflow; branch ``(i, True)`` is bit ``2i``, ``(i, False)`` bit ``2i + 1``.
    ``cycles=True`` ends a run that provably loops forever at once as a timeout (see ``_vm``).
    """

    __slots__ = ("program", "run", "num_branch_points", "full_coverage", "code", "slots")

    def __init__(self, program: Body):
        code: list = []
        state = [0, 0]
        _flatten(program, code, state)
        self.code = tuple(code)
        self.program = program
        self.slots = state[1]
        self.run: Callable = functools.partial(_vm, self.code, state[1])
        self.num_branch_points = state[0]
        self.full_coverage = (1 << (2 * state[0])) - 1


def compile_program(program: Body) -> CompiledProgram:
    """Compile ``program`` for repeated fast runs (:func:`execute_fast`, the I/O sampler)."""
    return CompiledProgram(program)


def execute_fast(program: Body | CompiledProgram, world: World, *, max_markers: int = DEFAULT_MAX_MARKERS,
                 tick_budget: int = DEFAULT_TICK_BUDGET) -> ExecutionResult:
    """:func:`execute` through the compiled path (same result, faster on repeated runs)."""
    _check_limits(max_markers, tick_budget)
    compiled = program if isinstance(program, CompiledProgram) else compile_program(program)
    B, M, pos, d, D = to_flat(world)
    codes: list = []
    code, pos, d, ticks, cov = compiled.run(B, M, pos, d, tick_budget, max_markers, D, codes.append)
    status, reason = _CODE_STATUS[code]
    coverage = coverage_bits_to_set(cov, compiled.num_branch_points)
    return ExecutionResult(from_flat(world, M, pos, d, status != "ok"), [ACTIONS[a] for a in codes],
                           status, reason, ticks, coverage)


def coverage_bits_to_set(bits: int, n: int) -> frozenset:
    """The ``(i, outcome)`` set of a coverage bit mask over ``n`` branch points."""
    return frozenset((i, o) for i in range(n) for o in (True, False) if bits >> (2 * i + (0 if o else 1)) & 1)
