"""Maximum-compound-divergence splits (Keysers et al. 2020, CFQ) and TMCD (Shaw et al. 2021).

A split of a dataset's rows into train and test that maximizes the compound divergence
``D_C = 1 - C_0.1(F_C(train) || F_C(test))`` while the atoms stay alike:
``D_A = 1 - C_0.5(F_A(train) || F_A(test)) <= max_atom_divergence`` and every atom of test
appears in train (``C_alpha(P||Q) = sum_k p_k^alpha q_k^(1-alpha)``; the definitions and the
compound weights are :mod:`hf_synthsample.structure`'s).

The search (notes and measurements: docs/dev-notes/issue-13.md):

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
4. Stops at ``target_divergence``, ``time_limit``, ``max_steps`` or when ``patience`` rounds in a
   row improve nothing; the reason is in the result and the log. ``restarts`` runs the search
   again from other seeded random starts (while time and steps remain) and keeps the best.
5. With ``train_size`` below ``1 - test_size`` (Keysers et al.'s splits are subsets, not
   partitions) train rows are then left out one move at a time, the best ``D_C`` gain per row
   first (single groups, or all train holders of a compound shared by both sides), and the
   search goes on. This phase always brings train to its size, also after a time-limit stop.

Example:
    >>> from datasets import Dataset
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from ..validation import check_float, check_int
from ._data import (Structures, as_split, check_dataset, check_test_size, check_train_size, parent_child_compounds,
                    read_structures)
from ._engine import Engine, ranges

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

__all__ = ["MCDResult", "mcd_split", "tmcd_split", "mcd_search"]

logger = logging.getLogger(__name__)

STOP_REASONS = ("target reached", "no improving move", "time limit", "max steps")


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

    @property
    def num_left_out(self) -> int:
        """Rows on neither side (only with ``train_size``: 0 for a partition)."""
        return max(0, self.num_rows - len(self.train_indices) - len(self.test_indices))

    def __repr__(self) -> str:
        left_out = f", left out={self.num_left_out}" if self.num_left_out else ""
        return (f"MCDResult(D_C={self.compound_divergence:.4f}, D_A={self.atom_divergence:.4f}, "
                f"train={len(self.train_indices)}, test={len(self.test_indices)}{left_out}, stop={self.stop_reason!r}, "
                f"steps={self.steps}, swaps={self.swaps}, holdouts={self.holdouts}, starts={self.starts}, {self.seconds:.1f}s)")


def _inverted(ptr: np.ndarray, idx: np.ndarray, V: int) -> tuple[np.ndarray, np.ndarray]:
    """Feature -> groups holding it (CSR)."""
    g = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    order = np.argsort(idx, kind="stable")
    return np.concatenate([[0], np.cumsum(np.bincount(idx, minlength=V))]).astype(np.int64), g[order]


class _Search:
    def __init__(self, st: Structures, target: int, tol: int, max_atom_divergence: float, rng: np.random.Generator,
                 batch_size: int):
        self.st, self.target, self.tol, self.max_da, self.rng, self.B = st, target, tol, max_atom_divergence, rng, batch_size
        self.sizes = st.sizes.astype(np.float64)
        self.G = len(self.sizes)
        self.atom_inv = _inverted(st.atoms[0], st.atoms[1], st.atoms[3])
        self.comp_inv = _inverted(st.compounds[0], st.compounds[1], st.compounds[3])
        self.steps = self.swaps = self.holdouts = 0
        self.history: list = []
        self.chunk, self.holdout_tries, self.holdout_share = 32, 16, 0.15
        self.atom_fixes = 5  # swaps that may repair the atom bound after a hold-out (COGS: it binds)
        self.drop_batch = 8  # single groups left out per step of the train_size phase

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
        rng, B = self.rng, self.B
        U = tr[rng.integers(0, len(tr), B)]
        U = U[e.side[U] == 0]
        if len(U):
            U = U[e.keeps_atoms(U)]
        if not len(U):
            return False
        old = e.compound_divergence
        dc, _ = e.score(U, 0, 1, atoms=False)
        u = int(U[np.argmax(dc)])
        e.place(u, 1)
        V = te[rng.integers(0, len(te), B)]
        V = V[(e.side[V] == 1) & (V != u)]
        best, pick = -1.0, -1
        if len(V):
            dc, da = e.score(V, 1, 0)
            dc = np.where((da <= self.max_da) & self.in_window(e.test_rows - self.sizes[V]), dc, -1.0)
            j = int(np.argmax(dc))
            best, pick = float(dc[j]), int(V[j])
        if self.in_window(e.test_rows) and e.atom_divergence <= self.max_da and e.compound_divergence > best:
            best, pick = e.compound_divergence, -1  # moving u alone is allowed and better
        if best > old + 1e-12:
            if pick >= 0:
                e.place(pick, 0)
            return True
        e.place(u, 0)
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
        if self.atom_fixes and e.compound_divergence > old + 1e-12 and e.atom_divergence > self.max_da:
            fixes = self._fix_atoms(e, old, holders)
        if e.compound_divergence > old + 1e-12 and e.atom_divergence <= self.max_da and self.in_window(e.test_rows):
            return True
        for u, v in reversed(fixes):
            e.place(v, 1)
            e.place(u, 0)
        e.place_block(back, 1)
        e.place_block(out, 0)
        return False

    def _fix_atoms(self, e: Engine, floor: float, holders: np.ndarray) -> list:
        """After a hold-out that broke the atom bound: a few swaps that lower the atom divergence
        most while the compound divergence stays above ``floor``; returns them (to undo)."""
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
            da = np.where(dc > floor, da, np.inf)
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
            da = np.where((dc > floor) & self.in_window(e.test_rows - self.sizes[V]), da, np.inf)
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
        tolerance): each step takes the move with the best ``D_C`` gain per row, of ``batch_size``
        single train groups and the train holders of up to ``candidates`` compounds present on
        both sides (drawn like hold-outs; leaving out a compound's last train rows is what makes it
        unseen). Every move keeps the test atoms in train and ``D_A`` within the bound; when no
        sampled move fits, every train group is tried."""
        rng, ptr, holders = self.rng, *self.comp_inv
        while e.train_rows > train_target + self.tol:
            budget = e.train_rows - (train_target - self.tol)
            old = e.compound_divergence
            best_gain, best = -np.inf, None
            for pool in ("sample", "all"):
                tr = np.flatnonzero(e.side == 0)
                U = tr[rng.integers(0, len(tr), self.B)] if pool == "sample" else tr
                U = U[self.sizes[U] <= budget]
                U = U[e.keeps_atoms(U)] if len(U) else U
                if len(U):
                    U = np.unique(U)
                    dc, da = e.score(U, 0, -1)
                    gain = np.where(da <= self.max_da, (dc - old) / self.sizes[U], -np.inf)
                    order = np.argsort(-gain, kind="stable")
                    if gain[order[0]] > best_gain:
                        # the few best single groups at once when each gains on its own (a sample of
                        # random groups rarely shares compounds); the sums are exact again after
                        top = order[:self.drop_batch]
                        top = top[(gain[top] > 0) & (np.cumsum(self.sizes[U[top]]) <= budget)]
                        best_gain, best = float(gain[order[0]]), U[top] if len(top) else U[order[:1]]
                if pool == "sample":
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
                            if e.atom_divergence <= self.max_da and (e.compound_divergence - old) / rows > best_gain:
                                best_gain, best = (e.compound_divergence - old) / rows, out
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
    def run(self, e: Engine, *, target_divergence, time_limit, max_steps, patience, progress, t0) -> str:
        from tqdm.auto import tqdm

        chunk, holdout_tries = self.chunk, self.holdout_tries
        max_rows = max(1.0, self.holdout_share * self.target)
        stale, reason = 0, "no improving move"
        bar = tqdm(total=None, disable=not progress, desc="MCD search", unit=" round")
        if not self.history:  # a second run (after rows were left out) goes on with the same history
            self.history.append((0.0, 0, e.compound_divergence, e.atom_divergence))
        try:
            while True:
                if target_divergence is not None and e.compound_divergence >= target_divergence:
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
                before = e.compound_divergence
                kept = 0
                n = chunk if max_steps is None else min(chunk, max_steps - self.steps)
                # hold-outs first: each is a large move at the cost of a few swap steps
                for _ in range(holdout_tries):
                    if target_divergence is not None and e.compound_divergence >= target_divergence:
                        break
                    if self.holdout_step(e, max_rows):
                        self.holdouts += 1
                tr, te = np.flatnonzero(e.side == 0), np.flatnonzero(e.side == 1)
                for _ in range(n):
                    if target_divergence is not None and e.compound_divergence >= target_divergence:
                        break
                    self.steps += 1
                    if self.swap_step(e, tr, te):
                        kept += 1
                self.swaps += kept
                e.recompute()  # exact sums again: no drift over long runs
                stale = stale + 1 if e.compound_divergence <= before + 1e-9 else 0
                self.history.append((time.perf_counter() - t0, self.steps, e.compound_divergence, e.atom_divergence))
                bar.update(1)
                bar.set_postfix(D_C=f"{e.compound_divergence:.4f}", D_A=f"{e.atom_divergence:.4f}")
        finally:
            bar.close()
        return reason


def mcd_search(
    structures: Structures,
    *,
    test_size: float = 0.25,
    max_atom_divergence: float = 0.02,
    seed: int = 0,
    target_divergence: float | None = None,
    time_limit: float | None = None,
    max_steps: int | None = None,
    patience: int = 100,
    batch_size: int = 64,
    size_tolerance: float = 0.0,
    restarts: int = 0,
    train_size: float | None = None,
    progress: bool | None = None,
) -> MCDResult:
    """The search on prepared :class:`~hf_synthsample.splits._data.Structures` (see :func:`mcd_split`)."""
    t0 = time.perf_counter()
    total = int(structures.sizes.sum()) + len(structures.unparsable)
    _, target = check_test_size(test_size, total)
    train_target = check_train_size(train_size, target, total)
    if train_target is not None and len(structures.unparsable):
        train_target -= len(structures.unparsable)  # skipped rows are kept in train
        if train_target < 1:
            raise ValueError(f"train_size: {train_size} leaves no room beside the {len(structures.unparsable)} "
                             "unparsable rows kept in train; raise train_size")
    max_da = check_float("max_atom_divergence", max_atom_divergence, min=0.0, max=1.0)
    seed = check_int("seed", seed, min=0)
    if target_divergence is not None:
        target_divergence = check_float("target_divergence", target_divergence, min=0.0, max=1.0)
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
    tol = int(math.floor(size_tolerance * total))
    best = None
    steps = swaps = holdouts = 0
    for attempt in range(restarts + 1):
        # start 0 draws from the seed itself; restart i from (seed, i): reproducible, independent
        rng = np.random.default_rng(seed if attempt == 0 else [seed, attempt])
        search = _Search(structures, target, tol, max_da, rng, batch_size)
        e = search.initial()
        search.lower_atom_divergence(e)
        initial = e.compound_divergence
        run = dict(target_divergence=target_divergence, time_limit=time_limit, patience=patience, progress=progress, t0=t0)
        reason = search.run(e, max_steps=None if max_steps is None else max_steps - steps, **run)
        if train_target is not None and e.train_rows > train_target + tol:
            # rows left out only now: the partition search has placed the held-out compounds, so
            # the rows that still carry them into train are the ones worth leaving out
            search.drop(e, train_target)
            e.recompute()
            if reason == "no improving move":
                reason = search.run(e, max_steps=None if max_steps is None else max_steps - steps, **run)
        e.recompute()
        steps, swaps, holdouts = steps + search.steps, swaps + search.swaps, holdouts + search.holdouts
        if best is None or e.compound_divergence > best[0].compound_divergence:
            best = (e, search, initial)
        starts = attempt + 1
        if reason != "no improving move":  # target, time or steps: nothing left to restart with
            break
    # the reason the whole search ended is the last start's; the split is the best start's
    e, search, initial = best
    search.steps, search.swaps, search.holdouts = steps, swaps, holdouts
    m = structures.members
    test_groups = np.flatnonzero(e.side == 1)
    test = np.sort(m.flat[ranges(m.starts[test_groups], m.sizes[test_groups])]) if len(test_groups) else np.zeros(0, np.int64)
    # the groups in train and the unparsable rows (kept in train): for a partition, every row not in test
    train_groups = np.flatnonzero(e.side == 0)
    train = np.sort(np.concatenate([m.flat[ranges(m.starts[train_groups], m.sizes[train_groups])],
                                    np.asarray(structures.unparsable, dtype=np.int64)]).astype(np.int64))
    result = MCDResult(
        test_indices=test, train_indices=train, compound_divergence=e.compound_divergence,
        atom_divergence=e.atom_divergence, initial_compound_divergence=initial, stop_reason=reason, steps=search.steps,
        swaps=search.swaps, holdouts=search.holdouts, seconds=time.perf_counter() - t0, num_groups=search.G,
        history=search.history, starts=starts, num_rows=total,
    )
    logger.info("MCD search stopped: %s; %r", reason, result)
    return result


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
        target_divergence, time_limit, max_steps, patience: when to stop (patience: rounds of 32
            swap steps and 16 hold-out tries in a row without a gain).
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
                        target_divergence=target_divergence, time_limit=time_limit, max_steps=max_steps,
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
