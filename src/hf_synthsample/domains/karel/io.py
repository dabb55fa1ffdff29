"""I/O specifications for Karel programs: input grids, run, checked, with branch coverage.

Grid distributions (Shin et al. 2019, section 4.2; ALGORITHMS.md section 3), chosen by
:attr:`IOParams.distribution`:

* ``"uniform"`` (the paper's uniform salient I/O procedure): rows and cols uniform over
  ``min_grid_size..max_grid_size``; a marker ratio and a wall ratio uniform over
  ``marker_ratio_range`` / ``wall_ratio_range``; each cell is a wall with the wall ratio's
  probability, else holds markers with the marker ratio's probability, the count drawn from
  ``marker_counts``; Karel on a uniform cell (made free: it never stands on a wall) facing a
  uniform direction. A degenerate range (``(0.1, 0.1)``) gives fixed per-cell probabilities.
  Cells are drawn lazily, as the program first looks at them (see :class:`GridSource`).
* ``"narrow"`` (section 4.2's narrow datasets): the same sizes, but exactly
  ``round(wall_ratio * cells)`` walls and ``round(marker_ratio * cells)`` marker cells at uniform
  positions (marker cells among non-wall cells; at least one cell stays free).

Marker counts: ``"uniform"`` (1..9), ``"geometric"`` (Geom(0.5) on 1, 2, ..., capped at 9),
``"ten_minus_geometric"`` (10 minus a Geom(0.5), floored at 1); all capped at ``max_markers``.

A task is ``num_shown`` shown pairs and ``num_held_out`` held-out pairs. Each input is redrawn
until the program runs on it without crashing or timing out and (``reject_noop``) changes the
world. If the shown inputs together do not cover every branch of the program
(``require_coverage``), all of them are discarded and drawn again, as in the paper; redrawing a
single failing input instead of the whole set gives the same distribution, since inputs are
independent. More than ``max_attempts`` input draws for one task raise :class:`IOSamplingError`,
and so does, early, a program none of whose first ``probe_attempts`` inputs is valid, or (with
``require_coverage``) one with a branch that no valid input among its first ``2 * probe_attempts``
took: such programs almost never meet the rules within ``max_attempts`` and would only burn
draws. Like ``max_attempts`` itself, this decides which programs are kept, not how their inputs
are distributed given the draws.

Example:
    >>> import random
    >>> from hf_synthsample.domains.karel.dsl import parse
    >>> prog = parse("DEF run m( IF c( frontIsClear c) i( move i) putMarker m)")
    >>> task = sample_io(prog, random.Random(0), IOParams(max_grid_size=8))
    >>> len(task), sorted(task[0])
    (6, ['actions', 'example_index', 'inpgrid_json', 'outgrid_json'])
"""

from __future__ import annotations

import dataclasses
import functools
import random
from typing import Any, Callable

import numpy as np

from ...validation import check_choice, check_float, check_int
from .dsl import ACTIONS, Body
from .interpreter import DEFAULT_MAX_MARKERS, DEFAULT_TICK_BUDGET, CompiledProgram, compile_program
from .world import DIRECTIONS, MAX_TENSOR_GRID, World

__all__ = ["DISTRIBUTIONS", "MARKER_COUNTS", "IOParams", "IOSamplingError", "sample_io", "sample_world",
           "GridSource", "flat_grid_json"]

DISTRIBUTIONS = ("uniform", "narrow")
_SMALL = 150  # padded grids up to this many cells are handled in plain Python (about 10 x 10)
MARKER_COUNTS = ("uniform", "geometric", "ten_minus_geometric")


class IOSamplingError(ValueError):
    """No valid, covering set of inputs was found within ``max_attempts`` input draws."""


def _check_range(name: str, value: Any) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) pair, got {value!r}")
    lo = check_float(f"{name}[0]", value[0], min=0, max=1)
    hi = check_float(f"{name}[1]", value[1], min=lo, max=1)
    return (lo, hi)


@dataclasses.dataclass
class IOParams:
    """Parameters of :func:`sample_io` (see the module docstring)."""

    distribution: str = "uniform"
    min_grid_size: int = 2
    max_grid_size: int = 16
    marker_ratio_range: tuple = (0.0, 1.0)
    wall_ratio_range: tuple = (0.0, 1.0)
    marker_ratio: float = 0.25
    wall_ratio: float = 0.25
    marker_counts: str = "uniform"
    max_markers: int = DEFAULT_MAX_MARKERS
    tick_budget: int = DEFAULT_TICK_BUDGET
    num_shown: int = 5
    num_held_out: int = 1
    reject_noop: bool = True
    require_coverage: bool = True
    max_attempts: int = 200
    probe_attempts: int = 25

    def validate(self) -> "IOParams":
        """Check every field; ``ValueError``/``TypeError`` naming it and the accepted values."""
        check_choice("io_distribution", self.distribution, DISTRIBUTIONS)
        self.min_grid_size = check_int("min_grid_size", self.min_grid_size, min=1, max=64)
        self.max_grid_size = check_int("max_grid_size", self.max_grid_size, min=self.min_grid_size, max=64)
        self.marker_ratio_range = _check_range("marker_ratio_range", self.marker_ratio_range)
        self.wall_ratio_range = _check_range("wall_ratio_range", self.wall_ratio_range)
        self.marker_ratio = check_float("marker_ratio", self.marker_ratio, min=0, max=1)
        self.wall_ratio = check_float("wall_ratio", self.wall_ratio, min=0, max=1)
        check_choice("marker_counts", self.marker_counts, MARKER_COUNTS)
        self.max_markers = check_int("max_markers", self.max_markers, min=1, max=255)
        self.tick_budget = check_int("tick_budget", self.tick_budget, min=1)
        self.num_shown = check_int("num_shown", self.num_shown, min=1)
        self.num_held_out = check_int("num_held_out", self.num_held_out, min=0)
        self.max_attempts = check_int("max_attempts", self.max_attempts, min=1)
        self.probe_attempts = check_int("probe_attempts", self.probe_attempts, min=1)
        for name in ("reject_noop", "require_coverage"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        return self


def _marker_counts(g: np.random.Generator, kind: str, n, cap: int) -> np.ndarray:
    if kind == "uniform":
        k = g.integers(1, 10, n)
    elif kind == "geometric":
        k = np.minimum(g.geometric(0.5, n), 9)
    else:
        k = np.maximum(10 - g.geometric(0.5, n), 1)
    return np.minimum(k, cap)


def _count_drawer(rng: random.Random, kind: str, cap: int) -> Callable[[], int]:
    rand = rng.random
    if kind == "uniform":
        return lambda: min(1 + int(rand() * 9), cap)

    def geometric() -> int:  # Geom(0.5) on 1, 2, ..., capped at 9
        k = 1
        while k < 9 and rand() < 0.5:
            k += 1
        return k

    if kind == "geometric":
        return lambda: min(geometric(), cap)
    return lambda: min(10 - geometric(), cap)


def _draw_cell(rand, count, B: list, M: list, Mo: list, wr: float, mr: float, n: int) -> int:
    if rand() < wr:
        B[n] = 1
        return 1
    B[n] = 0
    if rand() < mr:
        M[n] = Mo[n] = count()
    return 0


class GridSource:
    """Input grids of one distribution in the padded flat layout (see ``interpreter.to_flat``).

    Calling it returns ``(rows, cols, B, M, pos, dir, wall_ratio, marker_ratio)``.

    *Uniform* grids are drawn **lazily**: Karel's cell is drawn first (uniform over the grid, then
    made free, its markers drawn), every other cell starts as "not drawn yet" (``B[i] == 3``) and is
    drawn, independently with the grid's ratios, the first time the program looks at it (the
    compiled program calls the resolver that :meth:`resolver` makes). Cells are independent, so a
    cell drawn late has the same distribution as one drawn early; most candidate inputs are
    rejected after the program has seen a handful of cells, and only accepted inputs are
    completed (:meth:`complete`). Karel thus stands on a uniform cell made free, the reading of
    "a random location not containing a wall" that makes cells independent.
    *Narrow* grids (exact wall and marker counts) are drawn whole with numpy.
    """

    def __init__(self, rng: random.Random, params: IOParams):
        self.rng, self.p = rng, params
        self._g: np.random.Generator | None = None
        self._templates: dict = {}
        self._count = _count_drawer(rng, params.marker_counts, params.max_markers)

    @property
    def g(self) -> np.random.Generator:
        if self._g is None:
            self._g = np.random.default_rng(self.rng.getrandbits(64))
        return self._g

    def _sizes(self) -> tuple[int, int]:
        rng, lo, span = self.rng, self.p.min_grid_size, self.p.max_grid_size - self.p.min_grid_size + 1
        return lo + int(rng.random() * span), lo + int(rng.random() * span)

    def __call__(self) -> tuple:
        if self.p.distribution == "narrow":
            return self._narrow()
        rand, p = self.rng.random, self.p
        lo, span = p.min_grid_size, p.max_grid_size - p.min_grid_size + 1
        if span > 1:
            rows = lo + int(rand() * span)
            cols = lo + int(rand() * span)
        else:
            rows = cols = lo
        (wa, wb), (ma, mb) = p.wall_ratio_range, p.marker_ratio_range
        wr = wa + rand() * (wb - wa) if wb > wa else wa  # a fixed ratio needs no draw
        mr = ma + rand() * (mb - ma) if mb > ma else ma
        tmpl = self._templates.get((rows, cols))
        if tmpl is None:
            w2 = cols + 2
            tmpl = self._templates[(rows, cols)] = [2] * w2 + ([2] + [3] * cols + [2]) * rows + [2] * w2
        B = tmpl.copy()
        M = [0] * len(B)
        pos = (int(rand() * rows) + 1) * (cols + 2) + int(rand() * cols) + 1
        B[pos] = 0
        if rand() < mr:
            M[pos] = self._count()
        return rows, cols, B, M, pos, int(rand() * 4), wr, mr

    def resolver(self, B: list, M: list, Mo: list, wr: float, mr: float) -> Callable[[int], int]:
        """The function the compiled program calls on a cell not drawn yet (writes input and working markers)."""
        return functools.partial(_draw_cell, self.rng.random, self._count, B, M, Mo, wr, mr)

    def complete(self, B: list, M: list, Mo: list, wr: float, mr: float) -> None:
        """Draw every cell still marked 3 (into the input markers ``M`` and the output markers ``Mo``)."""
        if len(B) <= _SMALL:  # numpy's per-call cost exceeds the work on small grids
            rand, count = self.rng.random, self._count
            for i, b in enumerate(B):
                if b == 3:
                    if rand() < wr:
                        B[i] = 1
                    else:
                        B[i] = 0
                        if rand() < mr:
                            M[i] = Mo[i] = count()
            return
        Ba = np.frombuffer(bytes(B), np.int8).copy()
        unknown = np.flatnonzero(Ba == 3)
        if not len(unknown):
            return
        g = self.g
        u = g.random((2, len(unknown)))
        walls = u[0] < wr
        Ba[unknown] = walls
        B[:] = Ba.tolist()
        marked = unknown[~walls & (u[1] < mr)]
        if len(marked):
            counts = _marker_counts(g, self.p.marker_counts, len(marked), self.p.max_markers)
            for i, k in zip(marked.tolist(), counts.tolist()):
                M[i] = Mo[i] = k

    def _narrow(self) -> tuple:
        rng, p, g = self.rng, self.p, self.g
        rows, cols = self._sizes()
        n = rows * cols
        nw = min(int(p.wall_ratio * n + 0.5), n - 1)
        perm = g.permutation(n)
        free = perm[nw:]
        nm = min(int(p.marker_ratio * n + 0.5), len(free))
        B = np.full((rows + 2, cols + 2), 2, np.int8)
        inner = np.zeros(n, np.int8)
        inner[perm[:nw]] = 1
        B[1:-1, 1:-1] = inner.reshape(rows, cols)
        counts = np.zeros(n, np.int64)
        counts[free[:nm]] = _marker_counts(g, p.marker_counts, nm, p.max_markers)
        M = np.zeros((rows + 2, cols + 2), np.int64)
        M[1:-1, 1:-1] = counts.reshape(rows, cols)
        k = int(free[int(rng.random() * len(free))])
        pos = (k // cols + 1) * (cols + 2) + k % cols + 1
        return rows, cols, B.ravel().tolist(), M.ravel().tolist(), pos, int(rng.random() * 4), None, None


def sample_world(rng: random.Random, params: IOParams | None = None) -> World:
    """One input world of the configured distribution (no program involved)."""
    p = (params or IOParams()).validate()
    source = GridSource(rng, p)
    rows, cols, B, M, pos, d, wr, mr = source()
    source.complete(B, M, M, wr, mr)
    return World.from_json(flat_grid_json(rows, cols, B, M, pos, d))


@functools.lru_cache(maxsize=4096)
def _cell_names(rows: int, cols: int) -> list:
    w2 = cols + 2
    return [f"{i // w2 - 1}:{i % w2 - 1}" for i in range((rows + 2) * w2)]


def _positions(values: list, nonzero: bool = False) -> list:
    """Indices of the entries equal to 1 (or, with ``nonzero``, of every non-zero entry)."""
    if len(values) <= _SMALL:
        return [i for i, v in enumerate(values) if v] if nonzero else [i for i, v in enumerate(values) if v == 1]
    # cells hold small ints (walls 0..3, markers <= 255): bytes() converts at C speed
    a = np.frombuffer(bytes(values), np.uint8)
    return np.flatnonzero(a if nonzero else a == 1).tolist()


def flat_grid_json(rows: int, cols: int, B: list, M: list, pos: int, d: int, crashed: bool = False,
                   blocked: str | None = None) -> dict:
    """Grid JSON of a padded flat grid (``blocked`` may pass the precomputed wall string)."""
    names = _cell_names(rows, cols)
    if blocked is None:
        blocked = " ".join([names[i] for i in _positions(B)])
    return {
        "rows": rows,
        "cols": cols,
        "crashed": crashed,
        "hero": f"{names[pos]}:{DIRECTIONS[d]}",
        "blocked": blocked,
        "markers": " ".join([f"{names[i]}:{M[i]}" for i in _positions(M, nonzero=True)]),
    }


def sample_io_flat(program: Body | CompiledProgram, rng: random.Random, params: IOParams) -> list:
    """The pairs of one task in the flat layout (what :func:`sample_io` formats); see the module docstring."""
    p = params
    compiled = program if isinstance(program, CompiledProgram) else compile_program(program)
    run, full = compiled.run, compiled.full_coverage
    draw = GridSource(rng, p)
    T, X, noop_ok = p.tick_budget, p.max_markers, not p.reject_noop
    attempts, limit = 0, min(p.probe_attempts, p.max_attempts)
    pairs: list = []
    cov = 0
    want = p.num_shown
    steps = {}
    cell, rand, count = functools.partial, rng.random, draw._count
    seen = 0  # branches taken by any valid input so far, kept or discarded
    check_at = 2 * p.probe_attempts if p.require_coverage else -1
    while True:
        attempts += 1
        if attempts == check_at and seen != full:
            raise IOSamplingError(f"after {check_at} inputs (2 * probe_attempts) some branch was never taken by a "
                                  "valid input: the coverage rule is unlikely to be met")
        if attempts > limit:
            if limit < p.max_attempts:
                raise IOSamplingError(f"none of the first {limit} inputs (probe_attempts) is valid for this program")
            raise IOSamplingError(
                f"no valid I/O set in {p.max_attempts} input draws (max_attempts): the program crashes, "
                "times out or does nothing on most inputs of this distribution"
                + (", or its branches are rarely all covered" if p.require_coverage else "")
            )
        rows, cols, B, M, pos, d, wr, mr = draw()
        Mo = M.copy()
        D = steps.get(cols)
        if D is None:
            D = steps[cols] = (cols + 2, 1, -cols - 2, -1)
        # no action trace here: most candidates are rejected; kept pairs are replayed below
        code, pos2, d2, _, c = run(B, Mo, pos, d, T, X, D, None,
                                   None if wr is None else cell(_draw_cell, rand, count, B, M, Mo, wr, mr), True)
        if code or (pos2 == pos and d2 == d and not noop_ok and Mo == M):
            continue
        limit = p.max_attempts
        seen |= c
        pairs.append((rows, cols, B, M, pos, d, Mo, pos2, d2, D, wr, mr))
        if want == p.num_shown:
            cov |= c
            if len(pairs) == want:
                if p.require_coverage and cov != full:
                    pairs, cov = [], 0  # discard the whole shown set, as in the paper
                    continue
                want += p.num_held_out
        if len(pairs) == want:
            out = []
            for rows, cols, B, M, pos, d, Mo, pos2, d2, D, wr, mr in pairs:
                if wr is not None:  # only now, for the inputs kept, draw the cells no run looked at
                    draw.complete(B, M, Mo, wr, mr)
                acts: list = []
                replay = run(B, M.copy(), pos, d, T, X, D, acts.append)
                assert replay[:3] == (0, pos2, d2), "a kept input replays differently"  # cannot happen
                out.append((rows, cols, B, M, pos, d, Mo, pos2, d2, acts))
            return out


def flat_pairs_to_examples(pairs: list, *, tensors: bool = False) -> list[dict]:
    """The field's ``examples`` entries (``example_index``, ``actions``, grid JSON, optional tensors)."""
    out = []
    for i, (rows, cols, B, M, pos, d, Mo, pos2, d2, acts) in enumerate(pairs):
        names = _cell_names(rows, cols)
        blocked = " ".join([names[j] for j in _positions(B)])
        ex = {
            "example_index": i,
            "actions": [ACTIONS[a] for a in acts],
            "inpgrid_json": flat_grid_json(rows, cols, B, M, pos, d, blocked=blocked),
            "outgrid_json": flat_grid_json(rows, cols, B, Mo, pos2, d2, blocked=blocked),
        }
        if tensors:
            if rows > MAX_TENSOR_GRID or cols > MAX_TENSOR_GRID:
                raise ValueError(f"tensors: grids up to 16x16 have a tensor encoding, got {rows}x{cols}")
            ex["inpgrid_tensor"] = World.from_json(ex["inpgrid_json"]).to_sparse_tensor()
            ex["outgrid_tensor"] = World.from_json(ex["outgrid_json"]).to_sparse_tensor()
        out.append(ex)
    return out


def sample_io(program: Body | CompiledProgram, rng: random.Random, params: IOParams | None = None, *,
              tensors: bool = False) -> list[dict]:
    """``num_shown + num_held_out`` checked I/O pairs for ``program`` as the field's ``examples`` list
    (shown pairs first); :class:`IOSamplingError` when the constraints cannot be met."""
    p = (params or IOParams()).validate()
    return flat_pairs_to_examples(sample_io_flat(program, rng, p), tensors=tensors)
