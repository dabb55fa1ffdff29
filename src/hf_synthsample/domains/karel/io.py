"""I/O specifications for Karel programs: input grids, run, checked, with branch coverage.

Grid distributions (Shin et al. 2019, section 4.2; ALGORITHMS.md section 3), chosen by
:attr:`IOParams.distribution`:

* ``"uniform"`` (the paper's uniform salient I/O procedure): rows and cols uniform over
  ``min_grid_size..max_grid_size``; a marker ratio and a wall ratio uniform over
  ``marker_ratio_range`` / ``wall_ratio_range`` (a degenerate range fixes them); each cell is a
  wall with the wall ratio's probability, else holds markers with the marker ratio's, the count
  drawn from ``marker_counts``; Karel on a uniform cell, made free (see :class:`GridSource`),
  facing a uniform direction.
* ``"narrow"`` (section 4.2's narrow datasets): the same sizes, but exactly
  ``round(wall_ratio * cells)`` walls and ``round(marker_ratio * cells)`` marker cells at uniform
  positions (marker cells among non-wall cells; at least one cell stays free).

Marker counts: ``"uniform"`` (1..9), ``"geometric"`` (Geom(0.5) on 1, 2, ..., capped at 9),
``"ten_minus_geometric"`` (10 minus a Geom(0.5), floored at 1); all capped at ``max_markers``.

A task is ``num_shown`` shown pairs and ``num_held_out`` held-out pairs. Each input is redrawn
until the program runs on it without crashing or timing out and (``reject_noop``) changes the
world. If the shown inputs together do not cover every branch (``require_coverage``), all of them
are drawn again, as in the paper. More than ``max_attempts`` input draws for one task raise
:class:`IOSamplingError`, and so does, early, a program none of whose first ``probe_attempts``
inputs is valid, or (with ``require_coverage``) one with a branch that no valid input among its
first ``2 * probe_attempts`` took: such programs would only burn draws.

Candidate inputs are drawn 32 at a time (:class:`GridSource`); with numba (the ``fast`` extra) each
batch is drawn and run by the compiled kernels of ``_fastvm``, with the same rows as the pure path.

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
import threading
from typing import Any, Callable

import numpy as np

from ...settings import Settings, setting
from ...validation import check_float, check_int
from .dsl import ACTIONS, Body
from .interpreter import DEFAULT_MAX_MARKERS, DEFAULT_TICK_BUDGET, CompiledProgram, compile_program
from .world import DIRECTIONS, MAX_TENSOR_GRID, World

try:  # optional compiled batch runner (numba); same results as the pure path, see _fastvm
    from . import _fastvm as _fast
except ImportError:
    _fast = None

__all__ = ["DISTRIBUTIONS", "MARKER_COUNTS", "IOParams", "IOSamplingError", "sample_io", "sample_world",
           "GridSource", "flat_grid_json"]

DISTRIBUTIONS = ("uniform", "narrow")
MARKER_COUNTS = ("uniform", "geometric", "ten_minus_geometric")


class IOSamplingError(ValueError):
    """No valid, covering set of inputs was found within ``max_attempts`` input draws."""


def _check_range(name: str, value: Any) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) pair, got {value!r}")
    lo = check_float(f"{name}[0]", value[0], min=0, max=1)
    hi = check_float(f"{name}[1]", value[1], min=lo, max=1)
    return (lo, hi)


@dataclasses.dataclass(frozen=True)
class IOParams(Settings):
    """Parameters of :func:`sample_io` (see the module docstring), checked at construction."""

    distribution: str = setting("uniform", help=f"input grid distribution, one of {DISTRIBUTIONS}",
                                choices=DISTRIBUTIONS)
    min_grid_size: int = setting(2, help="smallest grid side (rows and cols drawn independently)", min=1, max=64)
    max_grid_size: int = setting(16, help="largest grid side (>= min_grid_size)", min=1, max=64)
    marker_ratio_range: tuple[float, float] = setting((0.0, 1.0), help="uniform I/O: range of the marker ratio",
                                                      check=_check_range)
    wall_ratio_range: tuple[float, float] = setting((0.0, 1.0), help="uniform I/O: range of the wall ratio",
                                                    check=_check_range)
    marker_ratio: float = setting(0.25, help="narrow I/O: fraction of marker cells", min=0.0, max=1.0)
    wall_ratio: float = setting(0.25, help="narrow I/O: fraction of wall cells", min=0.0, max=1.0)
    marker_counts: str = setting("uniform", help=f"marker-count distribution, one of {MARKER_COUNTS}",
                                 choices=MARKER_COUNTS)
    max_markers: int = setting(DEFAULT_MAX_MARKERS, help="most markers per cell (putMarker beyond it crashes)",
                               min=1, max=255)
    tick_budget: int = setting(DEFAULT_TICK_BUDGET, help="most ticks (actions, condition checks, repeat "
                                                         "iterations) per run", min=1)
    num_shown: int = setting(5, help="shown I/O pairs per task", min=1)
    num_held_out: int = setting(1, help="held-out I/O pairs per task", min=0)
    reject_noop: bool = setting(True, help="reject pairs whose output equals the input")
    require_coverage: bool = setting(True, help="shown inputs must cover every branch")
    max_attempts: int = setting(200, help="input draws per program before it is discarded", min=1)
    probe_attempts: int = setting(25, help="discard a program at once if none of its first inputs is valid", min=1)

    def _check(self) -> None:
        check_int("max_grid_size", self.max_grid_size, min=self.min_grid_size)

    def validate(self) -> "IOParams":
        """``self``: the fields were checked at construction (kept for callers that chain it)."""
        return self


def _marker_counts(g: np.random.Generator, kind: str, n, cap: int) -> np.ndarray:
    if kind == "uniform":
        k = g.integers(1, 10, n)
    elif kind == "geometric":
        k = np.minimum(g.geometric(0.5, n), 9)
    else:
        k = np.maximum(10 - g.geometric(0.5, n), 1)
    return np.minimum(k, cap)


# Candidate inputs are drawn in batches of _BATCH grids. A uniform batch is a pure function of a
# 64-bit seed drawn from ``rng`` (so it depends on rng's state alone) through the 64-bit words
# ``_mix(seed, i)`` (SplitMix64 over a counter; a counter-based stream lets the optional numba
# module compute only the words it needs, yet the same ones): per grid, _HEADER words (rows,
# cols, wall ratio, marker ratio, Karel's row, column, direction, Karel's cell markers) and one
# word per cell of the largest grid. Of a word, the high 32 bits make a uniform u = hi / 2**32
# (cell: wall if u < wr, markers if wr <= u < wr + (1 - wr) * mr) or an integer (hi * n) >> 32
# uniform over n values, and the low 32 bits the marker count: Geom(0.5) capped at 9 is 1 + the
# trailing one bits of the low byte (exact), uniform 1..9 is 1 + (lo * 9) >> 32. The ratios use
# 53 bits, like random.random(). The numba module computes the same batch with the same integer
# and IEEE float operations (tests check the bytes agree). Unused candidates of a batch are dropped.
_BATCH = 32
_HEADER = 8
_SMALL = 150  # layouts up to this many cells (about 10 x 10) are formatted in plain Python
_LOCAL = threading.local()


def _generator(rng: random.Random) -> np.random.Generator:
    """A numpy generator in a state drawn from ``rng`` (one reused per thread: a fresh one costs ~20 us)."""
    g = getattr(_LOCAL, "g", None)
    if g is None:
        g = _LOCAL.g = np.random.Generator(np.random.PCG64(0))
        _LOCAL.state = g.bit_generator.state
    state = _LOCAL.state
    state["state"]["state"] = rng.getrandbits(128)
    state["state"]["inc"] = rng.getrandbits(128) | 1
    g.bit_generator.state = state
    return g


_SHIFT32 = np.uint64(32)
_GOLDEN, _MIX1, _MIX2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix(seed: int, idx: np.ndarray) -> np.ndarray:
    """SplitMix64 words ``idx`` of the stream ``seed`` (``idx`` uint64; array arithmetic wraps mod 2**64)."""
    z = (idx + np.uint64(1)) * _GOLDEN + np.uint64(seed)
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@functools.lru_cache(maxsize=64)
def _count_table(kind: str, cap: int) -> np.ndarray:
    """Marker count of each low byte (``kind`` geometric / ten_minus_geometric), capped at ``cap``."""
    ones = np.array([(b ^ (b + 1)).bit_length() - 1 for b in range(256)])  # trailing one bits, 0..8
    k = 1 + ones if kind == "geometric" else np.maximum(9 - ones, 1)
    return np.minimum(k, cap).astype(np.uint8)


def _counts(lo: np.ndarray, kind: str, cap: int) -> np.ndarray:
    if kind == "uniform":
        return np.minimum(1 + ((lo * np.uint64(9)) >> _SHIFT32), cap)
    return _count_table(kind, cap)[lo & 255]


def _uniform_numpy(raw: np.ndarray, k: int, p: IOParams) -> tuple:
    """The pure-numpy uniform batch: ``(B, M, rows, cols, pos, dir)`` arrays (see the comment above).

    ``hi / 2**32 < x`` is tested as ``hi < x * 2**32``: scaling by a power of two is exact, so the
    outcome is the numba kernel's."""
    side = p.max_grid_size
    W, lo_size, span = side + 2, p.min_grid_size, p.max_grid_size - p.min_grid_size + 1
    w = raw.reshape(k, _HEADER + side * side)
    hi = w >> _SHIFT32
    head = hi[:, :_HEADER].astype(np.int64)
    if span > 1:
        rows = lo_size + ((head[:, 0] * span) >> 32)
        cols = lo_size + ((head[:, 1] * span) >> 32)
    else:
        rows = cols = np.full(k, lo_size, np.int64)
    (wa, wb), (ma, mb) = p.wall_ratio_range, p.marker_ratio_range
    if wb > wa or mb > ma:
        f = (w[:, 2:4] >> np.uint64(11)).astype(np.float64) * 2.0**-53
        wr = (wa + f[:, 0] * (wb - wa) if wb > wa else np.full(k, wa))[:, None]
        mr = (ma + f[:, 1] * (mb - ma) if mb > ma else np.full(k, ma))[:, None]
    else:  # fixed ratios: scalars
        wr, mr = wa, ma
    cells = hi[:, _HEADER:]
    wall = cells < wr * 2.0**32
    marked = cells < (wr + (1.0 - wr) * mr) * 2.0**32
    marked &= ~wall
    inner = wall.view(np.uint8)
    if span > 1:
        r = np.arange(side * side)
        off = (r // side >= rows[:, None]) | (r % side >= cols[:, None])
        inner = np.where(off, np.uint8(2), inner)
        marked &= ~off
    B = np.full((k, side + 2, W), 2, np.uint8)
    B[:, 1:-1, 1:-1] = inner.reshape(k, side, side)
    M = np.zeros((k, side + 2, W), np.uint8)
    lo = w[:, _HEADER:] & np.uint64(0xFFFFFFFF)
    M[:, 1:-1, 1:-1] = np.where(marked, _counts(lo, p.marker_counts, p.max_markers), 0).reshape(k, side, side)
    hero = (((head[:, 4] * rows) >> 32) + 1) * W + ((head[:, 5] * cols) >> 32) + 1
    at = np.arange(k)
    B.reshape(k, -1)[at, hero] = 0
    mr_h = mr[:, 0] if isinstance(mr, np.ndarray) else mr
    hero_counts = _counts(w[:, 7] & np.uint64(0xFFFFFFFF), p.marker_counts, p.max_markers)
    M.reshape(k, -1)[at, hero] = np.where(head[:, 7] < mr_h * 2.0**32, hero_counts, 0)
    return B.reshape(-1), M.reshape(-1), rows, cols, hero + at * B.shape[1] * W, head[:, 6] >> 30


class GridSource:
    """Candidate input grids of one distribution, in batches, all in the padded flat layout of the largest grid.

    That is ``W = max_grid_size + 2`` columns, ``S = (max_grid_size + 2) * W`` cells, cell ``(r, c)`` at
    ``(r + 1) * W + c + 1``; ``B``: 0 free, 1 wall, 2 off the grid (its ring and beyond a smaller grid);
    ``M``: marker counts. :meth:`batch` returns ``(rows, cols, B, M, pos, dir)`` for ``k`` grids: ``B`` and
    ``M`` back to back as ``bytes``, ``pos`` Karel's index in that buffer (grid ``j`` starts at ``j * S``).
    Moves never leave a grid, so a program runs on the whole buffer from any grid's ``pos``.

    Karel's cell in a uniform grid is made free and its markers drawn afresh with the marker ratio (a free
    cell's law): the reading of "a random location not containing a wall" that keeps cells independent.
    """

    def __init__(self, rng: random.Random, params: IOParams):
        self.rng, self.p = rng, params
        side = params.max_grid_size
        self.W = side + 2
        self.S = (side + 2) * self.W
        self.D = (self.W, 1, -self.W, -1)

    def arrays(self, k: int = _BATCH, fast=None) -> tuple:
        """``(B, M, rows, cols, pos, dir)`` numpy arrays of ``k`` grids (``fast``: the numba module)."""
        p = self.p
        if p.distribution == "narrow":
            return self._narrow(_generator(self.rng), k)
        seed = self.rng.getrandbits(64)
        if fast is not None:
            return fast.uniform_batch(np.uint64(seed), k, p.min_grid_size, p.max_grid_size, *p.wall_ratio_range,
                                      *p.marker_ratio_range, p.marker_counts == "uniform",
                                      _count_table("geometric" if p.marker_counts == "uniform" else p.marker_counts,
                                                   p.max_markers), p.max_markers)
        return _uniform_numpy(_mix(seed, np.arange(k * (_HEADER + p.max_grid_size**2), dtype=np.uint64)), k, p)

    def batch(self, k: int = _BATCH) -> tuple:
        """``k`` candidate grids (see the class docstring)."""
        B, M, rows, cols, pos, d = self.arrays(k)
        return rows.tolist(), cols.tolist(), B.tobytes(), M.tobytes(), pos.tolist(), d.tolist()

    def _narrow(self, g: np.random.Generator, k: int) -> tuple:
        p, W, side = self.p, self.W, self.p.max_grid_size
        rows = g.integers(p.min_grid_size, side + 1, k)
        cols = g.integers(p.min_grid_size, side + 1, k)
        B = np.full((k, side + 2, W), 2, np.uint8)
        M = np.zeros((k, side + 2, W), np.uint8)
        hero = np.empty(k, np.int64)
        for j, (nr, nc) in enumerate(zip(rows.tolist(), cols.tolist())):
            n = nr * nc
            nw = min(int(p.wall_ratio * n + 0.5), n - 1)
            perm = g.permutation(n)
            free = perm[nw:]
            nm = min(int(p.marker_ratio * n + 0.5), len(free))
            inner = np.zeros(n, np.uint8)
            inner[perm[:nw]] = 1
            B[j, 1 : nr + 1, 1 : nc + 1] = inner.reshape(nr, nc)
            counts = np.zeros(n, np.uint8)
            counts[free[:nm]] = _marker_counts(g, p.marker_counts, nm, p.max_markers)
            M[j, 1 : nr + 1, 1 : nc + 1] = counts.reshape(nr, nc)
            cell = int(free[int(g.random() * len(free))])
            hero[j] = (cell // nc + 1) * W + cell % nc + 1
        return B.reshape(-1), M.reshape(-1), rows, cols, hero + np.arange(k) * self.S, g.integers(0, 4, k)


def sample_world(rng: random.Random, params: IOParams | None = None) -> World:
    """One input world of the configured distribution (no program involved)."""
    p = (params or IOParams()).validate()
    source = GridSource(rng, p)
    rows, cols, B, M, pos, d = source.batch(1)
    return World.from_json(flat_grid_json(rows[0], cols[0], B, M, pos[0], d[0], width=source.W))


@functools.lru_cache(maxsize=256)
def _cell_names(width: int, size: int) -> list:
    return [f"{i // width - 1}:{i % width - 1}" for i in range(size)]


def _valid_pure(run: Callable, source: GridSource, p: IOParams):
    """``(attempt, candidate)`` for each candidate input in order: ``candidate`` is
    ``(rows, cols, B, M, base, pos, d, pos2, d2, coverage)`` when the run is valid, else None."""
    S, D, T, X, noop_ok = source.S, source.D, p.tick_budget, p.max_markers, not p.reject_noop
    attempt = 0
    while True:
        rows, cols, B, M, pos0, d0 = source.batch(_BATCH)
        Mw = bytearray(M)
        for j in range(_BATCH):
            attempt += 1
            pos, d = pos0[j], d0[j]
            # no action trace here: most candidates are rejected; kept pairs are replayed at the end
            code, pos2, d2, _, c = run(B, Mw, pos, d, T, X, D, None, True)
            if code or (pos2 == pos and d2 == d and not noop_ok and Mw[j * S : j * S + S] == M[j * S : j * S + S]):
                yield attempt, None
            else:
                yield attempt, (rows[j], cols[j], B, M, j * S, pos, d, pos2, d2, c)


@functools.lru_cache(maxsize=64)
def _kernel_args(min_size: int, max_size: int, counts: str, cap: int, T: int, noop_ok: bool, walls: tuple,
                 markers: tuple) -> tuple:
    """The numba kernels' constant arguments for one parameter set (built once, not per program)."""
    ip = np.array([min_size, max_size, counts == "uniform", cap, T, cap, noop_ok], np.int64)
    table = _count_table("geometric" if counts == "uniform" else counts, cap)
    W = max_size + 2
    return ip, np.array([*walls, *markers], np.float64), table, np.array([W, 1, -W, -1], np.int64)


def _valid_fast(compiled: CompiledProgram, source: GridSource, p: IOParams):
    """:func:`_valid_pure` through the numba kernels: the valid candidates of a whole batch at once
    (one compiled call per batch), then ``(last attempt of the batch, None)``."""
    S, T, X, noop_ok = source.S, p.tick_budget, p.max_markers, not p.reject_noop
    code = np.array(compiled.code, np.int64).reshape(-1, 3)
    uniform = p.distribution == "uniform"
    ip, fp, table, D = _kernel_args(p.min_grid_size, p.max_grid_size, p.marker_counts, p.max_markers, T, noop_ok,
                                    tuple(p.wall_ratio_range), tuple(p.marker_ratio_range))
    attempt = 0
    while True:
        if uniform:
            Ba, Ma, valid = _fast.draw_and_run(np.uint64(source.rng.getrandbits(64)), _BATCH, ip, fp, table, code,
                                               compiled.slots, D)
        else:
            Ba, Ma, rows, cols, pos, d = source.arrays(_BATCH)
            valid = _fast.run_batch(code, compiled.slots, Ba, Ma, pos, d, rows, cols, T, X, D, noop_ok)
        B, M = Ba.tobytes(), Ma.tobytes()
        for j, pos2, d2, c, pos0, d0, nr, nc in valid.tolist():
            yield attempt + j + 1, (nr, nc, B, M, j * S, pos0, d0, pos2, d2, c)
        attempt += _BATCH
        yield attempt, None


def sample_io_flat(program: Body | CompiledProgram, rng: random.Random, params: IOParams) -> list:
    """The pairs of one task in the flat layout (what :func:`sample_io` formats); see the module docstring.

    Each pair is ``(rows, cols, B, M, pos, d, Mo, pos2, d2, actions, W)``: the grid's layout
    (``bytes``, ``W`` columns, see :class:`GridSource`), input markers ``M`` and Karel, output
    markers ``Mo`` and Karel, and the action indices of the run.
    """
    p = params
    compiled = program if isinstance(program, CompiledProgram) else compile_program(program)
    run, full = compiled.run, compiled.full_coverage
    source = GridSource(rng, p)
    fast = _fast is not None and compiled.num_branch_points <= _fast.MAX_BRANCH_POINTS  # 64-bit coverage masks
    candidates = _valid_fast(compiled, source, p) if fast else _valid_pure(run, source, p)
    done, limit = 0, min(p.probe_attempts, p.max_attempts)
    pairs: list = []
    want = p.num_shown
    cov = seen = 0  # seen: branches taken by any valid input so far, kept or discarded
    check_at = 2 * p.probe_attempts if p.require_coverage else -1
    for attempt, cand in candidates:
        # the rules of the attempts done + 1 .. attempt, in their order (nothing changed in between)
        first_over = max(done + 1, limit + 1)
        if done < check_at <= min(attempt, first_over) and seen != full:
            raise IOSamplingError(f"after {check_at} inputs (2 * probe_attempts) some branch was never taken by a "
                                  "valid input: the coverage rule is unlikely to be met")
        if first_over <= attempt:
            if limit < p.max_attempts:
                raise IOSamplingError(f"none of the first {limit} inputs (probe_attempts) is valid for this program")
            raise IOSamplingError(
                f"no valid I/O set in {p.max_attempts} input draws (max_attempts): the program crashes, "
                "times out or does nothing on most inputs of this distribution"
                + (", or its branches are rarely all covered" if p.require_coverage else "")
            )
        done = attempt
        if cand is None:
            continue
        limit = p.max_attempts
        c = cand[9]
        seen |= c
        pairs.append(cand)
        if want == p.num_shown:
            cov |= c
            if len(pairs) == want:
                if p.require_coverage and cov != full:
                    pairs, cov = [], 0  # discard the whole shown set, as in the paper
                    continue
                want += p.num_held_out
        if len(pairs) == want:
            return [_kept_pair(run, pair, source, p) for pair in pairs]


def _kept_pair(run: Callable, pair: tuple, source: GridSource, p: IOParams) -> tuple:
    """A kept candidate cut out of its batch, with its action trace (one more run of the program)."""
    rows, cols, B, M, base, pos, d, pos2, d2, _ = pair
    S = source.S
    Bj, Mj = B[base : base + S], M[base : base + S]
    Mo = bytearray(Mj)
    acts: list = []
    code, p2, dd2, _, _ = run(Bj, Mo, pos - base, d, p.tick_budget, p.max_markers, source.D, acts.append)
    assert (code, p2, dd2) == (0, pos2 - base, d2), "a kept input replays differently"  # cannot happen
    return rows, cols, Bj, Mj, pos - base, d, bytes(Mo), p2, dd2, acts, source.W


@functools.lru_cache(maxsize=64)
def _marker_names(width: int, size: int, stride: int) -> list:
    """``"r:c:n"`` for cell ``i`` holding ``n`` markers at ``i * stride + n``."""
    names = _cell_names(width, size)
    return [f"{names[i]}:{n}" for i in range(size) for n in range(stride)]


def _strings_by_grid(mask: np.ndarray, table: list, stride: int = 0, values: np.ndarray | None = None) -> list:
    """For each row of ``mask``, the ``table`` strings of its set cells joined by spaces."""
    rows, cells = np.nonzero(mask)
    keys = cells * stride + values[rows, cells] if stride else cells
    items = list(map(table.__getitem__, keys.tolist()))
    ends = np.cumsum(np.bincount(rows, minlength=len(mask))).tolist()
    return [" ".join(items[lo:hi]) for lo, hi in zip([0] + ends[:-1], ends)]


def _grid_strings(width: int, walls: list, markers: list) -> tuple[list, list]:
    """The ``blocked`` strings of the layouts ``walls`` and the ``markers`` strings of the layouts
    ``markers`` (all of one layout of ``width`` columns), with a fixed number of numpy calls."""
    n, size = len(walls), len(walls[0])
    names = _cell_names(width, size)
    if size <= _SMALL:  # numpy's per-call cost exceeds the work on small grids
        return ([" ".join([names[i] for i, v in enumerate(g) if v == 1]) for g in walls],
                [" ".join([f"{names[i]}:{v}" for i, v in enumerate(g) if v]) for g in markers])
    grids = np.frombuffer(b"".join([bytes(g) for g in (*walls, *markers)]), np.uint8).reshape(-1, size)
    blocked = _strings_by_grid(grids[:n] == 1, names)
    counts = grids[n:]
    stride = 1 << int(counts.max()).bit_length()
    if size * stride <= 1 << 17:  # "r:c:n" strings from a table
        return blocked, _strings_by_grid(counts != 0, _marker_names(width, size, stride), stride, counts)
    return blocked, [" ".join([f"{names[i]}:{m[i]}" for i in np.flatnonzero(m).tolist()]) for m in counts]


def flat_grid_json(rows: int, cols: int, B, M, pos: int, d: int, crashed: bool = False,
                   blocked: str | None = None, width: int | None = None) -> dict:
    """Grid JSON of a padded flat grid of ``width`` columns (default ``cols + 2``; ``blocked`` may
    pass the precomputed wall string)."""
    width = width or cols + 2
    walls, markers = _grid_strings(width, [B], [M])
    return {"rows": rows, "cols": cols, "crashed": crashed, "hero": f"{_cell_names(width, len(B))[pos]}:{DIRECTIONS[d]}",
            "blocked": walls[0] if blocked is None else blocked, "markers": markers[0]}


def _width(pair: tuple) -> int:
    return pair[10] if len(pair) > 10 else pair[1] + 2  # pairs without a width: the grid's own layout


def flat_pairs_to_examples(pairs: list, *, tensors: bool = False) -> list[dict]:
    """The field's ``examples`` entries (``example_index``, ``actions``, grid JSON, optional tensors)."""
    n = len(pairs)
    if not n:
        return []
    W, S = _width(pairs[0]), len(pairs[0][2])
    if any(len(p[2]) != S or _width(p) != W for p in pairs):  # mixed layouts: one at a time
        return [ex | {"example_index": i} for i, p in enumerate(pairs) for ex in flat_pairs_to_examples([p], tensors=tensors)]
    # every grid of the task in one array: the strings of all of them with a few numpy calls
    blocked, marks = _grid_strings(W, [p[2] for p in pairs], [p[3] for p in pairs] + [p[6] for p in pairs])
    names = _cell_names(W, S)
    out = []
    for i, (rows, cols, B, M, pos, d, Mo, pos2, d2, acts, *_) in enumerate(pairs):
        ex = {
            "example_index": i,
            "actions": [ACTIONS[a] for a in acts],
            "inpgrid_json": {"rows": rows, "cols": cols, "crashed": False, "hero": f"{names[pos]}:{DIRECTIONS[d]}",
                             "blocked": blocked[i], "markers": marks[i]},
            "outgrid_json": {"rows": rows, "cols": cols, "crashed": False, "hero": f"{names[pos2]}:{DIRECTIONS[d2]}",
                             "blocked": blocked[i], "markers": marks[n + i]},
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
