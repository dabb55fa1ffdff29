"""Maximum-compound-divergence splits (Keysers et al. 2020, CFQ) and TMCD (Shaw et al. 2021).

A split of a dataset's rows into train and test that maximizes the compound divergence
``D_C = 1 - C_0.1(F_C(train) || F_C(test))`` while the atoms stay alike:
``D_A = 1 - C_0.5(F_A(train) || F_A(test)) <= max_atom_divergence`` and every atom of test
appears in train (``C_alpha(P||Q) = sum_k p_k^alpha q_k^(1-alpha)``; the definitions and the
compound weights are :mod:`hf_synthsample.structure`'s).

The search (notes and measurements: dev/notes/issue-13.md):

1. Rows with one structure form a group that moves as a whole. A seeded random assignment of
   groups fills test to ``round(test_size * rows)`` (within ``size_tolerance``); test groups
   holding an atom that train lacks are traded for train groups; if ``D_A`` is over the bound,
   swaps that lower it run first (an error names the atoms furthest apart if it stays over).
2. Swap steps: of ``batch_size`` random train groups (that keep all their atoms in train) the one
   whose move to test gives the highest ``D_C``, then of ``batch_size`` random test groups the one
   whose move back gives the highest ``D_C`` with ``D_A`` within the bound; the swap is kept if
   ``D_C`` rises. Scores come from the kept Chernoff sums: a move changes only the terms of the
   moved group's own compounds, so a batch costs its compounds, not the vocabulary.
3. Hold-out moves, in each round before the swaps: a compound present on both sides (drawn with
   probability proportional to test mass / (train mass + 1)) is taken out of train by moving
   every train group holding it to test (at most 15 % of the test size), and the test groups whose
   moves back score best restore the test size; if that breaks the atom bound, up to 5 swaps that
   lower the atom divergence most (keeping the gain) may repair it; kept if ``D_C`` rises within
   the atom bound. This is the move single swaps cannot find: the ``p^0.1`` term only falls when
   the *last* train rows of a compound leave.
4. Stops at ``time_limit``, ``max_steps``, when ``patience`` rounds in a row improve nothing, or,
   with ``target_divergence``, near the target; the reason is in the result and the log.
   ``restarts`` runs the search again from other seeded random starts (while time and steps
   remain) and keeps the best.
5. With ``train_size`` below ``1 - test_size`` (Keysers et al.'s splits are subsets, not
   partitions) train rows are then left out one move at a time, the best ``D_C`` gain per row
   first (single groups, or all train holders of a compound shared by both sides), and the
   search goes on. This phase always brings train to its size, also after a time-limit stop.
6. Other goals (issue 21): ``minimize=True`` lowers ``D_C`` (below a random split's: SCAN 0.050
   -> 0.008) and ``target_divergence=x`` brings it within ``divergence_tolerance`` of ``x`` from
   either side. Every acceptance compares the goal's value of ``D_C`` (``D_C``, ``-D_C`` or
   ``-|D_C - x|``); raising, a swap moves the train group first, lowering, the test group
   (the move that gives an unseen compound train mass); hold-outs run only while ``D_C`` must
   rise. A target search that stalls outside the tolerance looks for the reachable range (the
   minimising and maximising searches) and raises :class:`UnreachableDivergence` naming it, or,
   if ``x`` lies inside, searches towards ``x`` again from the extreme on its other side.

Example:
    >>> from datasets import Dataset
    >>> progs = [f"({op} {a} {b})" for op in "fgh" for a in "abcd" for b in "abcd"]
    >>> ds = Dataset.from_dict({"program": progs})
    >>> split = mcd_split(ds, language="sexpr", test_size=0.25, seed=0, compound_weights=False, progress=False)
    >>> len(split["train"]) + len(split["test"]), len(split["test"])
    (48, 12)
    >>> split.mcd_result.compound_divergence > 0.3 and split.mcd_result.atom_divergence <= 0.02
    True

    A split at a chosen divergence, from either side of a random split's (here every program is
    its own compound, so any split above has D_C 1; nested programs share compounds):

    >>> nested = Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh"
    ...                                         for a in "abcd" for b in "abc"]})
    >>> at = mcd_split(nested, language="sexpr", target_divergence=0.45, compound_weights=False, progress=False)
    >>> abs(at.mcd_result.compound_divergence - 0.45) <= 0.01, at.mcd_result.stop_reason
    (True, 'target reached')
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from ..validation import check_float, check_int
from ._data import (Structures, as_split, check_dataset, check_test_size, check_train_size, parent_child_compounds,
                    read_structures)
from ._engine import Engine, ranges

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

__all__ = ["MCDResult", "UnreachableDivergence", "mcd_split", "tmcd_split", "mcd_search", "reachable_range"]

logger = logging.getLogger(__name__)

STOP_REASONS = ("target reached", "no improving move", "time limit", "max steps")

#: patience (rounds without a gain) of the minimising and maximising searches that bound the
#: reachable range after a target search stalled: they only bound it, so they stop sooner
RANGE_PATIENCE = 20

#: the least gain of the goal's value (``-D_C``, ``-|D_C - x|``) in a round that counts as
#: progress for the minimising and target searches (the maximiser counts any gain)
MIN_ROUND_GAIN = 1e-4


class UnreachableDivergence(ValueError):
    """No split with a compound divergence within ``tolerance`` of ``target`` was found; ``low`` and
    ``high`` are the lowest and highest divergences the minimising and maximising searches found
    (for this data, test and train size, atom bound and seed)."""

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
                    f"data, test size, train size, max_atom_divergence and seed, +/- divergence_tolerance "
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


def _inverted(ptr: np.ndarray, idx: np.ndarray, V: int) -> tuple[np.ndarray, np.ndarray]:
    """Feature -> groups holding it (CSR)."""
    g = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    order = np.argsort(idx, kind="stable")
    return np.concatenate([[0], np.cumsum(np.bincount(idx, minlength=V))]).astype(np.int64), g[order]


class _Search:
    """One search from one random start. ``goal``: ``"max"`` (raise D_C), ``"min"`` (lower it) or a
    number (bring D_C within ``goal_tolerance`` of it, from either side). Every acceptance test
    compares :meth:`value` of D_C, so the moves serve all three."""

    def __init__(self, st: Structures, target: int, tol: int, max_atom_divergence: float, rng: np.random.Generator,
                 batch_size: int, goal: str | float = "max", goal_tolerance: float = 0.0):
        self.st, self.target, self.tol, self.max_da, self.rng, self.B = st, target, tol, max_atom_divergence, rng, batch_size
        self.goal, self.goal_tol = goal, goal_tolerance
        self.aim = 0.25  # stop at this share of goal_tolerance (a stall within the tolerance is still a success)
        self.stop_at: float | None = None  # goal "max" only: stop once D_C reaches this
        # a round counts as progress above this gain: any for the maximiser (as in issue 13);
        # towards a target or the minimum, MIN_ROUND_GAIN (COGS: the minimiser creeps down by
        # ~5e-5 a round for minutes, and a search for an unreachable target would never end)
        self.min_gain = 1e-9 if goal == "max" else MIN_ROUND_GAIN
        self.sizes = st.sizes.astype(np.float64)
        self.G = len(self.sizes)
        self.atom_inv = _inverted(st.atoms[0], st.atoms[1], st.atoms[3])
        self.comp_inv = _inverted(st.compounds[0], st.compounds[1], st.compounds[3])
        self.steps = self.swaps = self.holdouts = 0
        self.history: list = []
        self.chunk, self.holdout_tries, self.holdout_share = 32, 16, 0.15
        self.atom_fixes = 5  # swaps that may repair the atom bound after a hold-out (COGS: it binds)
        self.drop_batch = 8  # single groups left out per step of the train_size phase

    # ------------------------------------------------------------------ objective
    def value(self, dc):
        """How good a compound divergence (or an array of them) is for the goal: higher is better."""
        if self.goal == "max":
            return dc
        if self.goal == "min":
            return -dc
        return -np.abs(dc - self.goal)

    def reached(self, e: Engine) -> bool:
        """Close enough to stop: within a quarter of the tolerance (a split at the tolerance's edge
        would be a poor point on a curve; the last steps there are cheap)."""
        if self.goal == "max":
            return self.stop_at is not None and e.compound_divergence >= self.stop_at
        return not isinstance(self.goal, str) and abs(e.compound_divergence - self.goal) <= self.aim * self.goal_tol

    def within(self, e: Engine) -> bool:
        """The promise kept: D_C within the tolerance of the target."""
        return not isinstance(self.goal, str) and abs(e.compound_divergence - self.goal) <= self.goal_tol

    def rising(self, e: Engine) -> bool:
        """The goal lies above the current D_C (hold-outs only raise it: skip them otherwise)."""
        return self.goal == "max" or (not isinstance(self.goal, str) and e.compound_divergence < self.goal)

    # ------------------------------------------------------------------ start
    def in_window(self, rows) -> Any:
        return np.abs(np.asarray(rows) - self.target) <= self.tol

    def initial(self) -> Engine:
        side = np.zeros(self.G, dtype=np.int8)
        perm = self.rng.permutation(self.G)
        cs = np.cumsum(self.sizes[perm])
        side[perm[cs <= self.target + self.tol]] = 1
        rows = float(self.sizes[side == 1].sum())
        if rows < self.target - self.tol:  # a big group stopped the prefix: fill with what fits
            for g in perm[cs > self.target + self.tol]:
                if rows + self.sizes[g] <= self.target + self.tol:
                    side[g] = 1
                    rows += self.sizes[g]
                    if rows >= self.target - self.tol:
                        break
        e = Engine(self.sizes, self.st.atoms, self.st.compounds, side)
        self.repair_atoms(e)
        return e

    def repair_atoms(self, e: Engine) -> None:
        """Trade test groups holding atoms that train lacks for train groups that keep theirs."""
        ptr, groups = self.atom_inv
        for _ in range(1000):
            missing = np.flatnonzero((e.A.P < 0.5) & (e.A.Q > 0))
            if not len(missing):
                break
            for a in missing:
                holders = groups[ptr[a]:ptr[a + 1]]
                holders = holders[e.side[holders] == 1]
                if len(holders):
                    e.place(int(holders[np.argmin(self.sizes[holders])]), 0)
            self.refill(e)
        else:  # pragma: no cover - the refill only moves groups that keep their atoms in train
            raise RuntimeError("atom repair did not converge")

    def refill(self, e: Engine) -> None:
        """Move train groups that keep their atoms in train to test until the size is in the window."""
        if e.test_rows >= self.target - self.tol:
            return
        for g in self.rng.permutation(np.flatnonzero(e.side == 0)):
            if e.test_rows >= self.target - self.tol:
                break
            if e.test_rows + self.sizes[g] <= self.target + self.tol and e.keeps_atoms(np.array([g]))[0]:
                e.place(int(g), 1)
        if e.test_rows < self.target - self.tol:
            raise ValueError(
                f"test_size: cannot put {self.target} rows (+/- {self.tol}) in test while every test atom stays in "
                f"train: only {int(e.test_rows)} fit (rows of one structure move together: the largest structures "
                f"hold {', '.join(map(str, np.sort(self.sizes)[::-1][:5].astype(int).tolist()))} rows; an atom held by "
                "one structure only can never go to test); lower test_size or raise size_tolerance")

    def lower_atom_divergence(self, e: Engine, patience: int = 200) -> None:
        """Swaps that lower D_A, until it is within the bound; an error naming the atoms if not."""
        stale = 0
        while e.atom_divergence > self.max_da and stale < patience:
            tr, te = np.flatnonzero(e.side == 0), np.flatnonzero(e.side == 1)
            U = tr[self.rng.integers(0, len(tr), self.B)]
            U = U[e.keeps_atoms(U)]
            if not len(U):
                stale += 1
                continue
            old = e.atom_divergence
            _, da = e.score(U, 0, 1)
            u = int(U[np.argmin(da)])
            e.place(u, 1)
            V = te[self.rng.integers(0, len(te), self.B)]
            V = V[V != u]
            _, da = e.score(V, 1, 0)
            da = np.where(self.in_window(e.test_rows - self.sizes[V]), da, np.inf)
            j = int(np.argmin(da)) if len(V) else -1
            if j >= 0 and da[j] < old - 1e-12:
                e.place(int(V[j]), 0)
                stale = 0
            else:
                e.place(u, 0)
                stale += 1
        if e.atom_divergence > self.max_da:
            P, Q = e.A.P / max(e.A.SP, 1e-300), e.A.Q / max(e.A.SQ, 1e-300)
            gap = (np.sqrt(P) - np.sqrt(Q)) ** 2
            worst = np.argsort(-gap)[:5]
            names = ", ".join(f"{self.st.atom_names[a]!r} (train {P[a]:.3%}, test {Q[a]:.3%})" for a in worst)
            raise ValueError(
                f"max_atom_divergence: {self.max_da} cannot be met; the lowest atom divergence found is "
                f"{e.atom_divergence:.4f}; atoms furthest apart: {names}. Raise max_atom_divergence, or give the "
                "data more rows per atom")

    # ------------------------------------------------------------------ moves
    def swap_step(self, e: Engine, tr: np.ndarray, te: np.ndarray) -> bool:
        """One swap, kept if D_C gets better for the goal. Raising D_C, the train group goes first
        (its move to test is what can make a compound unseen); lowering it, the test group goes
        first (its move back is what gives an unseen compound train mass): the second group only
        restores the test size, so the side that matters is picked from the whole batch."""
        if self.rising(e):
            return self._swap(e, tr, te, first=0)
        return self._swap(e, te, tr, first=1)

    def _swap(self, e: Engine, pool: np.ndarray, back_pool: np.ndarray, first: int) -> bool:
        """Move the best of ``batch_size`` random groups of ``pool`` (on side ``first``) to the other
        side, then the best of ``batch_size`` of ``back_pool`` the other way (or none, if the size
        window and the atom bound allow)."""
        rng, B = self.rng, self.B
        other = 1 - first
        U = pool[rng.integers(0, len(pool), B)]
        U = U[e.side[U] == first]
        if first == 0 and len(U):
            U = U[e.keeps_atoms(U)]
        if not len(U):
            return False
        old = self.value(e.compound_divergence)
        dc, _ = e.score(U, first, other, atoms=False)
        u = int(U[np.argmax(self.value(dc))])
        e.place(u, other)
        V = back_pool[rng.integers(0, len(back_pool), B)]
        V = V[(e.side[V] == other) & (V != u)]
        if other == 0 and len(V):
            V = V[e.keeps_atoms(V)]
        best, pick = -np.inf, -1
        if len(V):
            dc, da = e.score(V, other, first)
            rows = e.test_rows - self.sizes[V] if other == 1 else e.test_rows + self.sizes[V]
            val = np.where((da <= self.max_da) & self.in_window(rows), self.value(dc), -np.inf)
            j = int(np.argmax(val))
            best, pick = float(val[j]), int(V[j])
        if (self.in_window(e.test_rows) and e.atom_divergence <= self.max_da
                and self.value(e.compound_divergence) > best):
            best, pick = self.value(e.compound_divergence), -1  # moving u alone is allowed and better
        if best > old + 1e-12:
            if pick >= 0:
                e.place(pick, first)
            return True
        e.place(u, first)
        return False

    def holdout_step(self, e: Engine, max_rows: float) -> bool:
        """Take one compound out of train (all its train groups go to test), then restore the test
        size with the best-scoring test groups moved back; kept if D_C rises within the atom bound."""
        P, Q = e.C.P, e.C.Q
        both = np.flatnonzero((P > 1e-9) & (Q > 1e-9))
        if not len(both):
            return False
        w = Q[both] / (P[both] + 1.0)
        k = int(both[min(int(np.searchsorted(np.cumsum(w), self.rng.random() * w.sum())), len(both) - 1)])
        ptr, groups = self.comp_inv
        holders = groups[ptr[k]:ptr[k + 1]]
        out = holders[e.side[holders] == 0]
        if not len(out) or self.sizes[out].sum() > max_rows or not self._block_keeps_atoms(e, out):
            return False
        old = e.compound_divergence
        e.place_block(out, 1)
        other = np.flatnonzero(e.side == 1)
        other = other[~np.isin(other, holders)]
        back = np.zeros(0, dtype=np.int64)
        excess = e.test_rows - (self.target + self.tol)
        if len(other) and excess > 0:
            dc, _ = e.score(other, 1, 0, atoms=False)
            order = other[np.argsort(-dc, kind="stable")]
            back = order[:int(np.searchsorted(np.cumsum(self.sizes[order]), excess)) + 1]
        e.place_block(back, 0)
        fixes: list[tuple[int, int]] = []
        better = lambda: self.value(e.compound_divergence) > self.value(old) + 1e-12  # noqa: E731
        if self.atom_fixes and better() and e.atom_divergence > self.max_da:
            fixes = self._fix_atoms(e, old, holders)
        if better() and e.atom_divergence <= self.max_da and self.in_window(e.test_rows):
            return True
        for u, v in reversed(fixes):
            e.place(v, 1)
            e.place(u, 0)
        e.place_block(back, 1)
        e.place_block(out, 0)
        return False

    def _fix_atoms(self, e: Engine, floor: float, holders: np.ndarray) -> list:
        """After a hold-out that broke the atom bound: a few swaps that lower the atom divergence
        most while the compound divergence stays better than ``floor`` for the goal; returns them (to undo)."""
        done = []
        for _ in range(self.atom_fixes):
            if e.atom_divergence <= self.max_da:
                break
            tr, te = np.flatnonzero(e.side == 0), np.flatnonzero(e.side == 1)
            U = tr[self.rng.integers(0, len(tr), self.B)]
            U = U[e.keeps_atoms(U)]
            if not len(U):
                break
            dc, da = e.score(U, 0, 1)
            da = np.where(self.value(dc) > self.value(floor), da, np.inf)
            i = int(np.argmin(da))
            if not np.isfinite(da[i]):
                break
            u = int(U[i])
            e.place(u, 1)
            V = te[self.rng.integers(0, len(te), self.B)]
            V = V[(V != u) & ~np.isin(V, holders)]
            if not len(V):
                e.place(u, 0)
                break
            dc, da = e.score(V, 1, 0)
            da = np.where((self.value(dc) > self.value(floor)) & self.in_window(e.test_rows - self.sizes[V]), da, np.inf)
            j = int(np.argmin(da))
            if not np.isfinite(da[j]):
                e.place(u, 0)
                break
            e.place(int(V[j]), 0)
            done.append((u, int(V[j])))
        return done

    def _block_keeps_atoms(self, e: Engine, block: np.ndarray) -> bool:
        """Moving the train groups ``block`` to test together leaves every one of their atoms in train."""
        a_ptr, a_idx = self.st.atoms[0], self.st.atoms[1]
        lens = a_ptr[block + 1] - a_ptr[block]
        at = a_idx[ranges(a_ptr[block], lens)]
        need = np.bincount(at, np.repeat(self.sizes[block], lens), minlength=len(e.A.P))
        touched = np.unique(at)
        return not (e.A.P[touched] - need[touched] < 0.5).any()

    def drop(self, e: Engine, train_target: int, candidates: int = 16) -> None:
        """Leave train rows out (side -1) until train holds ``train_target`` rows (+/- the size
        tolerance): each step takes the move with the best gain per row for the goal (:meth:`value`
        of ``D_C``; below or away from a target, the least loss per row), of ``batch_size`` single
        train groups and, while ``D_C`` should rise, the train holders of up to ``candidates``
        compounds present on both sides (drawn like hold-outs; leaving out a compound's last train
        rows is what makes it unseen). Every move keeps the test atoms in train and ``D_A`` within
        the bound; when no sampled move fits, every train group is tried."""
        rng, ptr, holders = self.rng, *self.comp_inv
        while e.train_rows > train_target + self.tol:
            budget = e.train_rows - (train_target - self.tol)
            old = self.value(e.compound_divergence)
            best_gain, best = -np.inf, None
            for pool in ("sample", "all"):
                tr = np.flatnonzero(e.side == 0)
                U = tr[rng.integers(0, len(tr), self.B)] if pool == "sample" else tr
                U = U[self.sizes[U] <= budget]
                U = U[e.keeps_atoms(U)] if len(U) else U
                if len(U):
                    U = np.unique(U)
                    dc, da = e.score(U, 0, -1)
                    gain = np.where(da <= self.max_da, (self.value(dc) - old) / self.sizes[U], -np.inf)
                    order = np.argsort(-gain, kind="stable")
                    if gain[order[0]] > best_gain:
                        # the few best single groups at once when each gains on its own (a sample of
                        # random groups rarely shares compounds); the sums are exact again after.
                        # Towards a target or the minimum, the least losses too: the search after
                        # the drop corrects what they cost together
                        top = order[:self.drop_batch]
                        ok = gain[top] > 0 if self.goal == "max" else np.isfinite(gain[top])
                        top = top[ok & (np.cumsum(self.sizes[U[top]]) <= budget)]
                        best_gain, best = float(gain[order[0]]), U[top] if len(top) else U[order[:1]]
                if pool == "sample" and self.rising(e):
                    P, Q = e.C.P, e.C.Q
                    both = np.flatnonzero((P > 1e-9) & (Q > 1e-9))
                    if len(both):
                        w = Q[both] / (P[both] + 1.0)
                        for k in np.unique(rng.choice(both, size=min(candidates, len(both)), p=w / w.sum())):
                            out = holders[ptr[k]:ptr[k + 1]]
                            out = out[e.side[out] == 0]
                            rows = float(self.sizes[out].sum())
                            if not len(out) or rows > budget or not self._block_keeps_atoms(e, out):
                                continue
                            e.place_block(out, -1)
                            gain = (self.value(e.compound_divergence) - old) / rows
                            if e.atom_divergence <= self.max_da and gain > best_gain:
                                best_gain, best = gain, out
                            e.place_block(out, 0)
                if best is not None:
                    break
            if best is None:
                raise ValueError(
                    f"train_size: cannot leave train with {train_target} rows (+/- {self.tol}) while every test atom "
                    f"stays in train and D_A <= {self.max_da}: stuck at {int(e.train_rows)}; raise train_size or "
                    "size_tolerance")
            e.place_block(best, -1)
            if len(best) > 1 and e.atom_divergence > self.max_da:  # together they broke the bound: one at a time
                e.place_block(best[1:], 0)

    # ------------------------------------------------------------------ loop
    def run(self, e: Engine, *, time_limit, max_steps, patience, progress, t0) -> str:
        from tqdm.auto import tqdm

        chunk, holdout_tries = self.chunk, self.holdout_tries
        max_rows = max(1.0, self.holdout_share * self.target)
        stale, reason = 0, "no improving move"
        bar = tqdm(total=None, disable=not progress, desc="MCD search", unit=" round")
        if not self.history:  # a second run (after rows were left out) goes on with the same history
            self.history.append((0.0, 0, e.compound_divergence, e.atom_divergence))
        try:
            while True:
                if self.reached(e):
                    reason = "target reached"
                    break
                if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                    reason = "time limit"
                    break
                if max_steps is not None and self.steps >= max_steps:
                    reason = "max steps"
                    break
                if stale >= patience:
                    break
                before = self.value(e.compound_divergence)
                kept = 0
                n = chunk if max_steps is None else min(chunk, max_steps - self.steps)
                # hold-outs first: each is a large move at the cost of a few swap steps
                for _ in range(holdout_tries):
                    if self.reached(e) or not self.rising(e):
                        break
                    if self.holdout_step(e, max_rows):
                        self.holdouts += 1
                tr, te = np.flatnonzero(e.side == 0), np.flatnonzero(e.side == 1)
                for _ in range(n):
                    if self.reached(e):
                        break
                    self.steps += 1
                    if self.swap_step(e, tr, te):
                        kept += 1
                self.swaps += kept
                e.recompute()  # exact sums again: no drift over long runs
                stale = stale + 1 if self.value(e.compound_divergence) <= before + self.min_gain else 0
                self.history.append((time.perf_counter() - t0, self.steps, e.compound_divergence, e.atom_divergence))
                bar.update(1)
                bar.set_postfix(D_C=f"{e.compound_divergence:.4f}", D_A=f"{e.atom_divergence:.4f}")
        finally:
            bar.close()
        return reason


@dataclass
class _Start:
    """One finished search: the assignment, the search (its counters), the start's D_C, why it stopped."""

    engine: Engine
    search: _Search
    initial: float
    reason: str


def _search_once(st: Structures, goal, goal_tol: float, rng: np.random.Generator, o: dict, max_steps,
                 side: np.ndarray | None = None) -> _Start:
    """A search from a seeded random start (or from ``side``, a finished assignment), then, with a
    ``train_size``, the rows left out and the search again."""
    search = _Search(st, o["target"], o["tol"], o["max_da"], rng, o["batch_size"], goal, goal_tol)
    search.stop_at = o.get("stop_at")
    if o.get("bounding"):  # the searches that bound the range: only real progress counts
        search.min_gain = MIN_ROUND_GAIN
    if side is None:
        e = search.initial()
        search.lower_atom_divergence(e)
    else:
        e = Engine(search.sizes, st.atoms, st.compounds, side.copy())
    initial = e.compound_divergence
    run = dict(time_limit=o["time_limit"], patience=o["patience"], progress=o["progress"], t0=o["t0"], max_steps=max_steps)
    train_target = o["train_target"]
    dropping = train_target is not None and e.train_rows > train_target + o["tol"]
    # towards a target, a partition that stalls short of it needs no long wait: leaving rows out
    # moves D_C further (SCAN 0.6 with train 50 %: the partition tops out at 0.53)
    first = dict(run, patience=min(o["patience"], RANGE_PATIENCE)) if dropping and not isinstance(goal, str) else run
    reason = search.run(e, **first)
    if dropping:
        # rows left out only now: the partition search has placed the held-out compounds, so
        # the rows that still carry them into train are the ones worth leaving out
        search.drop(e, train_target)
        e.recompute()
        if reason in ("no improving move", "target reached"):  # leaving rows out moved D_C: on towards the goal
            reason = search.run(e, **run)
    e.recompute()
    return _Start(e, search, initial, reason)


def _search(st: Structures, goal, goal_tol: float, seed: int, restarts: int, o: dict) -> tuple[_Start, int, int, int, int, str]:
    """The best of ``restarts + 1`` seeded starts for the goal; returns it with the total steps,
    swaps, hold-outs, the number of starts made and the reason the last one stopped."""
    best = None
    steps = swaps = holdouts = 0
    max_steps = o["max_steps"]
    for attempt in range(restarts + 1):
        # start 0 draws from the seed itself; restart i from (seed, i): reproducible, independent
        rng = np.random.default_rng(seed if attempt == 0 else [seed, attempt])
        done = _search_once(st, goal, goal_tol, rng, o, None if max_steps is None else max_steps - steps)
        s = done.search
        steps, swaps, holdouts = steps + s.steps, swaps + s.swaps, holdouts + s.holdouts
        if best is None or s.value(done.engine.compound_divergence) > s.value(best.engine.compound_divergence):
            best = done
        if done.reason != "no improving move":  # target, time or steps: nothing left to restart with
            break
        if s.within(done.engine):  # stalled near the target, within the tolerance: no need for another start
            break
    return best, steps, swaps, holdouts, attempt + 1, done.reason


def mcd_search(
    structures: Structures,
    *,
    test_size: float = 0.25,
    max_atom_divergence: float = 0.02,
    seed: int = 0,
    target_divergence: float | None = None,
    minimize: bool = False,
    divergence_tolerance: float = 0.01,
    stop_at_divergence: float | None = None,
    time_limit: float | None = None,
    max_steps: int | None = None,
    patience: int = 100,
    batch_size: int = 64,
    size_tolerance: float = 0.0,
    restarts: int = 0,
    train_size: float | None = None,
    progress: bool | None = None,
) -> MCDResult:
    """The search on prepared :class:`~hf_synthsample.splits._data.Structures` (see :func:`mcd_split`).

    ``stop_at_divergence``: the maximising search stops as soon as ``D_C`` reaches this (how long
    the search takes to reach a divergence: the peer comparison in ``benchmarks/bench_splits.py``);
    unlike ``target_divergence`` it never lowers ``D_C``."""
    t0 = time.perf_counter()
    o = _options(structures, test_size=test_size, train_size=train_size, max_atom_divergence=max_atom_divergence,
                 seed=seed, time_limit=time_limit, max_steps=max_steps, patience=patience, batch_size=batch_size,
                 size_tolerance=size_tolerance, restarts=restarts, progress=progress, t0=t0)
    seed, restarts, total = o["seed"], o["restarts"], o["total"]
    if target_divergence is not None:
        target_divergence = check_float("target_divergence", target_divergence, min=0.0, max=1.0)
    if not isinstance(minimize, bool):
        raise TypeError(f"minimize must be a bool, got {minimize!r}")
    if minimize and target_divergence is not None:
        raise ValueError("minimize and target_divergence: give one goal (the lowest D_C, or a D_C to reach), not both")
    divergence_tolerance = check_float("divergence_tolerance", divergence_tolerance, min=0.0, max=1.0)
    if stop_at_divergence is not None:
        stop_at_divergence = check_float("stop_at_divergence", stop_at_divergence, min=0.0, max=1.0)
        if minimize or target_divergence is not None:
            raise ValueError("stop_at_divergence: only for the maximising search (not with minimize or target_divergence)")
    o["stop_at"] = stop_at_divergence
    goal = target_divergence if target_divergence is not None else "min" if minimize else "max"
    best, steps, swaps, holdouts, starts, reason = _search(structures, goal, divergence_tolerance, seed, restarts, o)
    # the reason the whole search ended is the last start's; the split is the best start's
    if target_divergence is not None and reason == "no improving move":
        if best.search.within(best.engine):
            reason = "target reached"  # stalled near the target, within the tolerance
        else:
            best, reason = _from_the_far_side(structures, target_divergence, divergence_tolerance, seed, restarts, o,
                                              best)
    e, search = best.engine, best.search
    m = structures.members
    test_groups = np.flatnonzero(e.side == 1)
    test = np.sort(m.flat[ranges(m.starts[test_groups], m.sizes[test_groups])]) if len(test_groups) else np.zeros(0, np.int64)
    # the groups in train and the unparsable rows (kept in train): for a partition, every row not in test
    train_groups = np.flatnonzero(e.side == 0)
    train = np.sort(np.concatenate([m.flat[ranges(m.starts[train_groups], m.sizes[train_groups])],
                                    np.asarray(structures.unparsable, dtype=np.int64)]).astype(np.int64))
    result = MCDResult(
        test_indices=test, train_indices=train, compound_divergence=e.compound_divergence,
        atom_divergence=e.atom_divergence, initial_compound_divergence=best.initial, stop_reason=reason, steps=steps,
        swaps=swaps, holdouts=holdouts, seconds=time.perf_counter() - t0, num_groups=search.G,
        history=search.history, starts=starts, num_rows=total, goal=goal,
    )
    logger.info("MCD search stopped: %s; %r", reason, result)
    return result


def _options(st: Structures, *, test_size, train_size, max_atom_divergence, seed, time_limit, max_steps, patience,
             batch_size, size_tolerance, restarts, progress, t0) -> dict:
    """The checked settings every search of :func:`mcd_search` and :func:`reachable_range` runs with."""
    total = int(st.sizes.sum()) + len(st.unparsable)
    _, target = check_test_size(test_size, total)
    train_target = check_train_size(train_size, target, total)
    if train_target is not None and len(st.unparsable):
        train_target -= len(st.unparsable)  # skipped rows are kept in train
        if train_target < 1:
            raise ValueError(f"train_size: {train_size} leaves no room beside the {len(st.unparsable)} "
                             "unparsable rows kept in train; raise train_size")
    max_da = check_float("max_atom_divergence", max_atom_divergence, min=0.0, max=1.0)
    seed = check_int("seed", seed, min=0)
    if time_limit is not None:
        time_limit = check_float("time_limit", time_limit, min=0.0, min_inclusive=False)
    if max_steps is not None:
        max_steps = check_int("max_steps", max_steps, min=0)
    patience = check_int("patience", patience, min=1)
    batch_size = check_int("batch_size", batch_size, min=1)
    size_tolerance = check_float("size_tolerance", size_tolerance, min=0.0, max=0.5)
    restarts = check_int("restarts", restarts, min=0)
    if progress is None:
        from datasets.utils.logging import is_progress_bar_enabled

        progress = is_progress_bar_enabled()
    return dict(target=target, tol=int(math.floor(size_tolerance * total)), max_da=max_da, batch_size=batch_size,
                train_target=train_target, time_limit=time_limit, max_steps=max_steps, patience=patience,
                progress=progress, t0=t0, seed=seed, restarts=restarts, total=total, stop_at=None)


def _bounds(st: Structures, seed: int, restarts: int, o: dict) -> tuple[_Start, _Start]:
    """The minimising and the maximising search that bound the reachable range. They run until
    they stall, with a shorter patience and only real progress (``MIN_ROUND_GAIN``) counting:
    they bound the range (and start a retry), they need not polish it."""
    o = dict(o, time_limit=None, max_steps=None, progress=False, patience=min(o["patience"], RANGE_PATIENCE),
             bounding=True, stop_at=None)
    return _search(st, "min", 0.0, seed, restarts, o)[0], _search(st, "max", 0.0, seed, restarts, o)[0]


def reachable_range(
    structures: Structures,
    *,
    test_size: float = 0.25,
    train_size: float | None = None,
    max_atom_divergence: float = 0.02,
    seed: int = 0,
    patience: int = 100,
    batch_size: int = 64,
    size_tolerance: float = 0.0,
    restarts: int = 0,
) -> tuple[float, float]:
    """``(lowest, highest)`` compound divergence found by the minimising and maximising searches on
    prepared structures: the range a ``target_divergence`` error names (see
    :func:`~hf_synthsample.splits.sweep.divergence_range` for a dataset)."""
    o = _options(structures, test_size=test_size, train_size=train_size, max_atom_divergence=max_atom_divergence,
                 seed=seed, time_limit=None, max_steps=None, patience=patience, batch_size=batch_size,
                 size_tolerance=size_tolerance, restarts=restarts, progress=False, t0=time.perf_counter())
    lo, hi = _bounds(structures, o["seed"], o["restarts"], o)
    return float(lo.engine.compound_divergence), float(hi.engine.compound_divergence)


def _from_the_far_side(st: Structures, x: float, goal_tol: float, seed: int, restarts: int, o: dict,
                       stuck: _Start) -> tuple[_Start, str]:
    """The search towards ``x`` stalled outside the tolerance. Find the reachable range (the
    minimising and the maximising search from the same seeds); outside it, a ``ValueError``
    naming it; inside it, search towards ``x`` again from the extreme on the other side of ``x``
    (a hold-out may have jumped past ``x`` to where swaps cannot bring D_C back)."""
    lo, hi = _bounds(st, seed, restarts, o)
    found = (lo.engine.compound_divergence, hi.engine.compound_divergence, stuck.engine.compound_divergence)
    d_lo, d_hi = min(found), max(found)
    if not d_lo - goal_tol <= x <= d_hi + goal_tol:
        raise UnreachableDivergence(x, d_lo, d_hi, goal_tol)
    # stuck above x: climb from the lowest split; stuck below: come down from the highest
    for far in (lo, hi) if x < stuck.engine.compound_divergence else (hi, lo):
        if abs(far.engine.compound_divergence - x) <= goal_tol:
            done = far
        else:
            done = _search_once(st, x, goal_tol, np.random.default_rng([seed, 0, 1]), o, None, side=far.engine.side)
        if abs(done.engine.compound_divergence - x) <= goal_tol:
            return done, "target reached"
    raise UnreachableDivergence(x, d_lo, d_hi, goal_tol, inside=True)


def mcd_split(
    dataset: "Dataset",
    column: str = "program",
    language: str | None = "thingtalk",
    *,
    test_size: float = 0.25,
    max_atom_divergence: float = 0.02,
    seed: int = 0,
    compound_weights: bool | str | Mapping[str, float] | None = None,
    max_height: int = 2,
    atoms_column: str | None = None,
    compounds_column: str | None = None,
    target_divergence: float | None = None,
    minimize: bool = False,
    divergence_tolerance: float = 0.01,
    time_limit: float | None = None,
    max_steps: int | None = None,
    patience: int = 100,
    batch_size: int = 64,
    size_tolerance: float = 0.0,
    restarts: int = 0,
    train_size: float | None = None,
    skip_unparsable: bool = False,
    progress: bool | None = None,
    return_result: bool = False,
    _compounds_fn: Callable | None = None,
) -> "DatasetDict | tuple[DatasetDict, MCDResult]":
    """A maximum-compound-divergence train/test split of ``dataset``'s rows (Keysers et al. 2020).

    Args:
        dataset: the rows to split (any ``Dataset``; shuffled, filtered or selected is fine).
        column: the program column, parsed with ``language`` (``hf_synthsample.structure.languages()``).
        test_size: share of rows in test, in (0, 1).
        max_atom_divergence: bound on the atom divergence ``1 - C_0.5``; every test atom is also in train.
        seed: the random start and the candidate draws; same seed, same split.
        compound_weights: ``"example"`` or ``True``: Keysers et al.'s weights, each compound weighted
            in each row (``w(G, e) = max over G's occurrences g in e of 1 - max over g's super-compounds
            G' in e of P(G'|G)``, ``P`` over the rows); ``"pool"``: one weight per compound (its largest
            per-row weight; not Keysers' definition); ``False``: unweighted; or a mapping compound ->
            weight. Default (``None``): ``"example"`` for the language's compounds, unweighted for
            ``compounds_column``.
        atoms_column, compounds_column: list-of-string columns to use instead of parsing ``column``.
        target_divergence: a compound divergence to reach, from either side: the split's ``D_C``
            is within ``divergence_tolerance`` of it, or an :class:`UnreachableDivergence`
            (a ``ValueError``) names the reachable range. The range is found by the minimising
            and maximising searches (``minimize=True`` and the default), so it depends on the
            data, sizes, atom bound and seed.
        minimize: lower ``D_C`` instead of raising it (the easiest split under the constraints).
        divergence_tolerance: how far from ``target_divergence`` the split may be [0.01]; the
            search stops once within a quarter of it.
        time_limit, max_steps, patience: when to stop (patience: rounds of 32 swap steps and 16
            hold-out tries in a row without a gain). A target search stopped by a time or step
            limit returns the split it has (``mcd_result.stop_reason`` says so).
        batch_size: candidates scored per move.
        size_tolerance: the test size may be off by this share of the rows (rows of one structure move together).
        restarts: further searches from other random starts (seeded from ``seed``) while the
            last one stopped for lack of an improving move; the most divergent split is kept.
        train_size: share of rows in train; ``None`` (default): all rows not in test, a partition.
            Below ``1 - test_size`` the other rows are left out, as in Keysers et al.'s released
            MCD splits (scikit-learn's ``train_test_split`` convention): the search first
            partitions, then leaves out the train rows whose compounds tie train to test
            (SCAN, test 25 %: D_C 0.53 as a partition, 0.63 with train 50 %).
        skip_unparsable: rows whose program does not parse go to train instead of raising.
        return_result: also return the :class:`MCDResult` (it is always at ``split.mcd_result`` too).

    Returns:
        ``DatasetDict(train=..., test=...)``, rows in input order; ``.mcd_result`` says what the search did.
    """
    check_dataset(dataset)
    total = len(dataset)
    _, test_rows = check_test_size(test_size, total)
    check_train_size(train_size, test_rows, total)
    check_float("max_atom_divergence", max_atom_divergence, min=0.0, max=1.0)
    check_int("seed", seed, min=0)
    max_height = check_int("max_height", max_height, min=1)
    if not isinstance(skip_unparsable, bool):
        raise TypeError(f"skip_unparsable must be a bool, got {skip_unparsable!r}")
    st = read_structures(dataset, column=column, language=language, max_height=max_height, atoms_column=atoms_column,
                         compounds_column=compounds_column, compound_weights=compound_weights,
                         compounds_fn=_compounds_fn, skip_unparsable=skip_unparsable)
    result = mcd_search(st, test_size=test_size, max_atom_divergence=max_atom_divergence, seed=seed,
                        target_divergence=target_divergence, minimize=minimize,
                        divergence_tolerance=divergence_tolerance, time_limit=time_limit, max_steps=max_steps,
                        patience=patience, batch_size=batch_size, size_tolerance=size_tolerance, restarts=restarts,
                        train_size=train_size, progress=progress)
    from ._data import check_sides  # the guard every search path ends with: no side short without a word

    check_sides(len(result.test_indices), len(result.train_indices), total, test_size, train_size, size_tolerance)
    split = as_split(dataset, result.test_indices, result.train_indices)
    split.mcd_result = result
    return (split, result) if return_result else split


def tmcd_split(
    dataset: "Dataset",
    column: str = "program",
    language: str | None = "thingtalk",
    *,
    compounds_fn: Callable | None = None,
    compound_weights: bool | str | Mapping[str, float] = False,
    **kwargs: Any,
) -> "DatasetDict | tuple[DatasetDict, MCDResult]":
    """A TMCD split (Shaw et al. 2021): atoms are the target program's atoms, compounds the
    parent-child pairs of its tree (:func:`~hf_synthsample.splits._data.parent_child_compounds`)
    or ``compounds_fn(tree) -> list[str]``; the search is :func:`mcd_split`'s.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": [f"({f} ({g} {a}))" for f in "pq" for g in "rs" for a in "abcd"]})
        >>> split = tmcd_split(ds, language="sexpr", test_size=0.25, max_atom_divergence=0.1, progress=False)
        >>> len(split["test"]), split.mcd_result.compound_divergence > 0
        (4, True)
    """
    if compounds_fn is not None and not callable(compounds_fn):
        raise TypeError(f"compounds_fn must be callable (tree -> list of compounds), got {compounds_fn!r}")
    if "compounds_column" in kwargs and compounds_fn is not None:
        raise ValueError("compounds_fn and compounds_column: give one source of compounds, not both")
    fn = compounds_fn or (None if kwargs.get("compounds_column") else parent_child_compounds)
    return mcd_split(dataset, column, language, compound_weights=compound_weights, _compounds_fn=fn, **kwargs)
