"""Maximum-compound-divergence splits (Keysers et al. 2020, CFQ) and TMCD (Shaw et al. 2021).

A train/test split that maximizes ``D_C = 1 - C_0.1(F_C(train) || F_C(test))`` while
``D_A = 1 - C_0.5(F_A(train) || F_A(test)) <= max_atom_divergence`` and every test atom appears in
train (definitions and compound weights: :mod:`hf_synthsample.structure`).

The search (notes and measurements: dev/notes/issue-13.md) moves groups of rows with one
structure: from a seeded random start (atoms repaired, ``D_A`` lowered into its bound) it keeps the
swaps and compound hold-outs that serve the :class:`~.settings.Goal` (:mod:`._search`), stops at a
limit, after ``patience`` rounds without a gain or near the target, and keeps the best of
``restarts + 1`` starts; with ``train_size`` it then leaves train rows out and goes on. A target
search that stalls outside its tolerance searches again from the far extreme of the reachable range,
or raises :class:`UnreachableDivergence` naming that range.

Example:
    >>> from datasets import Dataset
    >>> from hf_synthsample.splits import mcd_split  # the function form of this search (splitter.py)
    >>> progs = [f"({op} {a} {b})" for op in "fgh" for a in "abcd" for b in "abcd"]
    >>> ds = Dataset.from_dict({"program": progs})
    >>> split = mcd_split(ds, language="sexpr", test_size=0.25, seed=0, compound_weights=False, progress=False)
    >>> len(split["train"]) + len(split["test"]), len(split["test"])
    (48, 12)
    >>> split.mcd_result.compound_divergence > 0.3 and split.mcd_result.atom_divergence <= 0.02
    True
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..progress import show_progress
from ..validation import check_float
from ._data import Structures, check_test_size, check_train_size
from ._bulk import BULK_MIN_GROUPS, bulk_drop, bulk_rounds
from ._engine import Engine, ranges
from ._search import MIN_ROUND_GAIN, Search
from .settings import Goal, SplitSettings

__all__ = ["MCDResult", "UnreachableDivergence", "mcd_search", "search_range"]

logger = logging.getLogger(__name__)

#: patience (rounds without a gain) of the minimising and maximising searches that bound the
#: reachable range after a target search stalled: they only bound it, so they stop sooner
RANGE_PATIENCE = 20


class UnreachableDivergence(ValueError):
    """No split within ``tolerance`` of ``target`` was found; ``low`` and ``high``: the reachable range
    the minimising and maximising searches found (``divergence_range``'s)."""

    def __init__(self, target: float, low: float, high: float, tolerance: float, inside: bool = False,
                 argument: str = "target_divergence"):
        self.target, self.low, self.high, self.tolerance, self.inside = target, low, high, tolerance, inside
        if inside:
            text = (f"{argument}: {target} lies in the reachable range of compound divergence [{low:.4f}, {high:.4f}] "
                    f"but no search got within divergence_tolerance {tolerance} of it; try another seed, more "
                    "restarts or a larger divergence_tolerance")
        else:
            text = (f"{argument}: {target} is out of the reachable range of compound divergence [{low:.4f}, "
                    f"{high:.4f}] (the lowest and highest the minimising and maximising searches found for this "
                    f"data, test size, train size, max_atom_divergence, seed and restarts, +/- divergence_tolerance "
                    f"{tolerance}; more restarts may widen it a little); choose targets in it")
        super().__init__(text)

    def named(self, argument: str) -> "UnreachableDivergence":
        """The same error naming another argument (``targets``, ``--sweep``)."""
        return UnreachableDivergence(self.target, self.low, self.high, self.tolerance, self.inside, argument)


@dataclass
class MCDResult:
    """What the search did: the test rows, the divergences reached and why it stopped."""

    test_indices: np.ndarray
    train_indices: np.ndarray
    compound_divergence: float
    atom_divergence: float
    initial_compound_divergence: float
    stop_reason: str
    steps: int
    swaps: int
    holdouts: int
    seconds: float
    num_groups: int
    history: list = field(default_factory=list)
    starts: int = 1
    num_rows: int = 0
    goal: float | str = "max"  # "max", "min" or the target compound divergence
    # issue 43: "also template-disjoint: ..." beside a random split of the same sizes (splits.disjoint), and the
    # test side's and that random split's TemplateOverlap ({"split": ..., "random": ...}); None without templates
    template_statement: str | None = None
    template_overlap: dict | None = None

    @property
    def num_left_out(self) -> int:
        """Rows on neither side (only with ``train_size``: 0 for a partition)."""
        return max(0, self.num_rows - len(self.train_indices) - len(self.test_indices))

    def __repr__(self) -> str:
        left_out = f", left out={self.num_left_out}" if self.num_left_out else ""
        goal = "" if self.goal == "max" else f"goal={self.goal!r}, "
        return (f"MCDResult({goal}D_C={self.compound_divergence:.4f}, D_A={self.atom_divergence:.4f}, "
                f"train={len(self.train_indices)}, test={len(self.test_indices)}{left_out}, stop={self.stop_reason!r}, "
                f"steps={self.steps}, swaps={self.swaps}, holdouts={self.holdouts}, starts={self.starts}, {self.seconds:.1f}s)")


@dataclass(frozen=True)
class Plan:
    """The settings of a search resolved against the rows: sizes in rows, limits and the clock."""

    settings: SplitSettings
    target: int  # test rows
    tol: int  # rows a side may be off by
    train_target: int | None  # train rows (None: a partition)
    total: int
    progress: bool
    t0: float
    time_limit: float | None
    max_steps: int | None
    patience: int
    stop_at: float | None = None  # the maximiser stops once D_C reaches this
    bounding: bool = False  # a search that bounds the reachable range: only real progress counts

    @classmethod
    def of(cls, st: Structures, s: SplitSettings, *, progress: bool | None = None, t0: float | None = None,
           stop_at: float | None = None) -> "Plan":
        total = int(st.sizes.sum()) + len(st.unparsable)
        _, target = check_test_size(s.test_size, total)
        train_target = check_train_size(s.train_size, target, total)
        if train_target is not None and len(st.unparsable):
            train_target -= len(st.unparsable)  # skipped rows are kept in train
            if train_target < 1:
                raise ValueError(f"train_size: {s.train_size} leaves no room beside the {len(st.unparsable)} "
                                 "unparsable rows kept in train; raise train_size")
        if progress is None:
            progress = show_progress(None, None)
        return cls(s, target, int(math.floor(s.size_tolerance_share * total)), train_target, total, progress,
                   time.perf_counter() if t0 is None else t0, s.time_limit, s.max_steps, s.patience, stop_at)

    def bounds(self) -> "Plan":
        """The plan of the searches that bound the reachable range: no limits, a shorter patience."""
        return replace(self, time_limit=None, max_steps=None, progress=False,
                       patience=min(self.patience, RANGE_PATIENCE), bounding=True, stop_at=None)


@dataclass
class _Start:
    """One finished search: the assignment, the search (its counters), the start's D_C, why it stopped."""

    engine: Engine
    search: Search
    initial: float
    reason: str


def _search_once(st: Structures, goal: Goal, goal_tol: float, rng: np.random.Generator, p: Plan, max_steps,
                 side: np.ndarray | None = None) -> _Start:
    """A search from a seeded random start (or from ``side``); with ``train_size``, rows left out after."""
    search = Search(st, p.target, p.tol, p.settings.max_atom_divergence, rng, p.settings.batch_size, goal, goal_tol)
    search.stop_at = p.stop_at
    if p.bounding:  # the searches that bound the range: only real progress counts
        search.min_gain = MIN_ROUND_GAIN
    if side is None:
        e = search.initial()
        search.lower_atom_divergence(e)
    else:
        e = Engine(search.sizes, st.atoms, st.compounds, side.copy())
        if (side < 0).any():  # rows already left out: the split's own weights from the start
            e = search.reweigh(e)
    initial = e.compound_divergence
    run = dict(time_limit=p.time_limit, patience=p.patience, progress=p.progress, t0=p.t0, max_steps=max_steps)
    dropping = p.train_target is not None and e.train_rows > p.train_target + p.tol
    # towards a target, a partition that stalls short of it needs no long wait: leaving rows out
    # moves D_C further (SCAN 0.6 with train 50 %: the partition tops out at 0.53)
    first = dict(run, patience=min(p.patience, RANGE_PATIENCE)) if dropping and goal.is_target else run
    # many structures: whole-pool rounds first, the swaps refine (bulk_rounds=False: the swap search alone)
    bulk = p.settings.bulk_rounds if p.settings.bulk_rounds is not None else search.G >= BULK_MIN_GROUPS
    if not bulk:
        search.holdout_sample = np.inf
    if bulk:
        bulk_rounds(search, e, t0=p.t0, time_limit=p.time_limit)
    reason = search.run(e, **first)
    if dropping:
        # only now: the rows that still carry the held-out compounds into train are the ones worth leaving out
        (bulk_drop if bulk else Search.drop)(search, e, p.train_target)
        # from here on the left-out rows stay out: D_C is the split's own, weighed over the rows it keeps
        e = search.reweigh(e)
        e.recompute()
        if bulk:
            bulk_rounds(search, e, t0=p.t0, time_limit=p.time_limit)
        if reason in ("no improving move", "target reached"):  # leaving rows out moved D_C: on towards the goal
            reason = search.run(e, **run)
    e.recompute()
    return _Start(e, search, initial, reason)


def _search(st: Structures, goal: Goal, goal_tol: float, p: Plan) -> tuple[_Start, int, int, int, int, str]:
    """The best of ``restarts + 1`` starts, the total steps, swaps, hold-outs, starts and last stop reason."""
    best = None
    steps = swaps = holdouts = 0
    seed = p.settings.seed
    for attempt in range(p.settings.restarts + 1):
        # start 0 draws from the seed itself; restart i from (seed, i): reproducible, independent
        rng = np.random.default_rng(seed if attempt == 0 else [seed, attempt])
        done = _search_once(st, goal, goal_tol, rng, p, None if p.max_steps is None else p.max_steps - steps)
        s = done.search
        steps, swaps, holdouts = steps + s.steps, swaps + s.swaps, holdouts + s.holdouts
        if best is None or goal.value(done.engine.compound_divergence) > goal.value(best.engine.compound_divergence):
            best = done
        if done.reason != "no improving move":  # target, time or steps: nothing left to restart with
            break
        if s.within(done.engine):  # stalled near the target, within the tolerance: no need for another start
            break
    return best, steps, swaps, holdouts, attempt + 1, done.reason


def _bounds(st: Structures, p: Plan) -> tuple[_Start, _Start]:
    """The minimising and the maximising search that bound the reachable range (:meth:`Plan.bounds`)."""
    p = p.bounds()
    return _search(st, Goal("min"), 0.0, p)[0], _search(st, Goal("max"), 0.0, p)[0]


def search_range(st: Structures, settings: SplitSettings) -> tuple[float, float]:
    """``(lowest, highest)`` D_C of the minimising and maximising searches for ``settings``."""
    lo, hi = _bounds(st, Plan.of(st, settings, progress=False))
    return float(lo.engine.compound_divergence), float(hi.engine.compound_divergence)


def _from_the_far_side(st: Structures, x: float, goal_tol: float, p: Plan, stuck: _Start) -> tuple[_Start, str]:
    """After a search towards ``x`` stalled: an error naming the reachable range if ``x`` is out of
    it, else a search from the extreme on the other side of ``x`` (a hold-out may have jumped past it)."""
    lo, hi = _bounds(st, p)
    found = (lo.engine.compound_divergence, hi.engine.compound_divergence, stuck.engine.compound_divergence)
    d_lo, d_hi = min(found), max(found)
    if not d_lo - goal_tol <= x <= d_hi + goal_tol:
        # the range named is the bounding searches' alone: the one divergence_range gives
        raise UnreachableDivergence(x, lo.engine.compound_divergence, hi.engine.compound_divergence, goal_tol)
    # stuck above x: climb from the lowest split; stuck below: come down from the highest
    for far in (lo, hi) if x < stuck.engine.compound_divergence else (hi, lo):
        if abs(far.engine.compound_divergence - x) <= goal_tol:
            done = far
        else:
            rng = np.random.default_rng([p.settings.seed, 0, 1])
            done = _search_once(st, Goal("target", x), goal_tol, rng, p, None, side=far.engine.side)
        if abs(done.engine.compound_divergence - x) <= goal_tol:
            return done, "target reached"
    raise UnreachableDivergence(x, d_lo, d_hi, goal_tol, inside=True)


def search(st: Structures, settings: SplitSettings, *, goal: Goal | None = None, stop_at: float | None = None,
           progress: bool | None = None) -> MCDResult:
    """The MCD search on prepared structures for ``settings`` (its goal unless ``goal`` is given)."""
    t0 = time.perf_counter()
    p = Plan.of(st, settings, progress=progress, t0=t0, stop_at=stop_at)
    goal = settings.goal if goal is None else goal
    tol = settings.divergence_tolerance
    best, steps, swaps, holdouts, starts, reason = _search(st, goal, tol, p)
    # the reason the whole search ended is the last start's; the split is the best start's
    if goal.is_target and reason == "no improving move":
        if best.search.within(best.engine):
            reason = "target reached"  # stalled near the target, within the tolerance
        else:
            best, reason = _from_the_far_side(st, goal.target, tol, p, best)
    e, m = best.engine, st.members

    def rows(side: int) -> np.ndarray:
        groups = np.flatnonzero(e.side == side)
        return m.flat[ranges(m.starts[groups], m.sizes[groups])]

    # the unparsable rows are kept in train: for a partition, every row not in test
    test = np.sort(rows(1))
    train = np.sort(np.concatenate([rows(0), np.asarray(st.unparsable, dtype=np.int64)]))
    result = MCDResult(
        test_indices=test, train_indices=train, compound_divergence=e.compound_divergence,
        atom_divergence=e.atom_divergence, initial_compound_divergence=best.initial, stop_reason=reason, steps=steps,
        swaps=swaps, holdouts=holdouts, seconds=time.perf_counter() - t0, num_groups=best.search.G,
        history=best.search.history, starts=starts, num_rows=p.total, goal=goal.to_record(),
    )
    logger.info("MCD search stopped: %s; %r", reason, result)
    return result


def mcd_search(structures: Structures, settings: SplitSettings | None = None, *, target_divergence: float | None = None,
               minimize: bool = False, stop_at_divergence: float | None = None, progress: bool | None = None,
               **changes: Any) -> MCDResult:
    """The search on prepared structures for ``settings`` changed by ``changes`` (its fields, as
    :func:`~hf_synthsample.splits.mcd_split` takes them); ``target_divergence`` / ``minimize``: the goal;
    ``stop_at_divergence``: the maximiser stops there."""
    settings = (settings or SplitSettings()).replace(**changes) if changes else (settings or SplitSettings())
    if target_divergence is not None or minimize:
        settings = settings.replace(goal=Goal.of(target_divergence, minimize))
    if stop_at_divergence is not None:
        stop_at_divergence = check_float("stop_at_divergence", stop_at_divergence, min=0.0, max=1.0)
        if settings.goal.kind != "max":
            raise ValueError("stop_at_divergence: only for the maximising search (not with minimize or target_divergence)")
    return search(structures, settings, stop_at=stop_at_divergence, progress=progress)
