"""The moves of one MCD search (:class:`Search`): the random start, the atom repair, swap steps,
hold-outs and leaving rows out, each kept when it serves the :class:`~.settings.Goal`; the
driver that runs searches and bounds the reachable range is :mod:`hf_synthsample.splits.mcd`."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ._data import Structures
from ._engine import Engine, ranges
from .settings import Goal

__all__ = ["Search", "MIN_ROUND_GAIN"]

#: the least gain of the goal's value (``-D_C``, ``-|D_C - x|``) in a round that counts as
#: progress for the minimising and target searches (the maximiser counts any gain)
MIN_ROUND_GAIN = 1e-4


def _inverted(ptr: np.ndarray, idx: np.ndarray, V: int) -> tuple[np.ndarray, np.ndarray]:
    """Feature -> groups holding it (CSR)."""
    g = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    order = np.argsort(idx, kind="stable")
    return np.concatenate([[0], np.cumsum(np.bincount(idx, minlength=V))]).astype(np.int64), g[order]


class Search:
    """One search from one random start towards a :class:`~.settings.Goal`; every move is kept by the
    goal's value of D_C, so the moves serve all three goals."""

    def __init__(self, st: Structures, target: int, tol: int, max_atom_divergence: float, rng: np.random.Generator,
                 batch_size: int, goal: Goal = Goal(), goal_tolerance: float = 0.0):
        self.st, self.target, self.tol, self.max_da, self.rng, self.B = st, target, tol, max_atom_divergence, rng, batch_size
        self.goal, self.goal_tol = goal, goal_tolerance
        self.value = goal.value  # how good a D_C (or an array of them) is for the goal: higher is better
        self.aim = 0.25  # stop at this share of goal_tolerance (a stall within the tolerance is still a success)
        self.stop_at: float | None = None  # goal "max" only: stop once D_C reaches this
        # progress is any gain for the maximiser; MIN_ROUND_GAIN otherwise (COGS: the minimiser
        # creeps down by ~5e-5 a round for minutes; a search for an unreachable target never ends)
        self.min_gain = 1e-9 if goal.kind == "max" else MIN_ROUND_GAIN
        self.sizes = st.sizes.astype(np.float64)
        self.G = len(self.sizes)
        self.atom_inv = _inverted(st.atoms[0], st.atoms[1], st.atoms[3])
        self.comp_inv = _inverted(st.compounds[0], st.compounds[1], st.compounds[3])
        self.steps = self.swaps = self.holdouts = 0
        self.history: list = []
        self.chunk, self.holdout_tries, self.holdout_share = 32, 16, 0.15
        self.holdout_sample = 4096  # test groups scored for the way back after a hold-out (plus 4 per excess row)
        self.atom_fixes = 5  # swaps that may repair the atom bound after a hold-out (COGS: it binds)
        self.drop_batch = 8  # single groups left out per step of the train_size phase

    def reweigh(self, e: Engine) -> Engine:
        """After rows were left out: the compounds weighed over the rows kept (the split's own D_C,
        as :func:`~hf_synthsample.splits.split_report` of its sides computes it), same assignment."""
        if self.st.reweigh is None:
            return e
        from dataclasses import replace

        self.st = replace(self.st, compounds=self.st.reweigh(e.side >= 0))
        self.comp_inv = _inverted(self.st.compounds[0], self.st.compounds[1], self.st.compounds[3])
        return Engine(self.sizes, self.st.atoms, self.st.compounds, e.side.copy())

    def reached(self, e: Engine) -> bool:
        """Within a quarter of the tolerance: a split at the tolerance's edge would be a poor point."""
        if self.goal.kind == "max":
            return self.stop_at is not None and e.compound_divergence >= self.stop_at
        return self.goal.is_target and abs(e.compound_divergence - self.goal.target) <= self.aim * self.goal_tol

    def within(self, e: Engine) -> bool:
        """The promise kept: D_C within the tolerance of the target."""
        return self.goal.is_target and abs(e.compound_divergence - self.goal.target) <= self.goal_tol

    def rising(self, e: Engine) -> bool:
        """The goal lies above the current D_C (hold-outs only raise it: skip them otherwise)."""
        return self.goal.kind == "max" or (self.goal.is_target and e.compound_divergence < self.goal.target)

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

    def swap_step(self, e: Engine, tr: np.ndarray, te: np.ndarray) -> bool:
        """One swap, kept if D_C gets better for the goal. The move that matters goes first, picked from
        the whole batch: raising D_C, a train group's to test; lowering it, a test group's to train."""
        if self.rising(e):
            return self._swap(e, tr, te, first=0)
        return self._swap(e, te, tr, first=1)

    def _swap(self, e: Engine, pool: np.ndarray, back_pool: np.ndarray, first: int) -> bool:
        """The best of ``batch_size`` random groups of ``pool`` (side ``first``) to the other side, then
        the best of ``back_pool``'s back (or none, if the size window and the atom bound allow)."""
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
        """Take one compound out of train, restore the test size; kept if D_C rises within the atom bound."""
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
            if len(other) > self.holdout_sample + 4 * excess:  # a big pool: the best back among a sample
                other = np.sort(self.rng.choice(other, self.holdout_sample + int(4 * excess), replace=False))
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
        """A few swaps lowering D_A while D_C stays better than ``floor``; returns them (to undo)."""
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
        """Leave train rows out (side -1) down to ``train_target``, each step the best gain per row of
        sampled single groups and (rising) compounds' train holders; every group when none fits."""
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
                        # the few best single groups at once (random groups rarely share compounds);
                        # towards a target or the minimum the least losses too: the search after corrects them
                        top = order[:self.drop_batch]
                        ok = gain[top] > 0 if self.goal.kind == "max" else np.isfinite(gain[top])
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
