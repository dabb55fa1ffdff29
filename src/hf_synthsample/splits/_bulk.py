"""Bulk rounds of the MCD search, for pools of many structures.

The swap search (:mod:`._search`) moves one group per step, picked from a random batch: on a
million-row pool (177,000 structures) it spends minutes reaching what a pool of 20,000 reaches in
seconds. A bulk round scores *every* group's move at once (one pass over the features, as a swap step
scores its batch), then moves the ``k`` best train groups to test and the best test groups back to
train (as many rows), atom by atom safe; it is kept when the goal's value rises and the atom bound
holds, else undone and ``k`` halves. Rounds go on until ``k`` falls below one group, and the swap
search refines from there. Moves are chosen by sorting scores (ties by group index), so a round is
deterministic for a seed.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ._engine import Engine, ranges

__all__ = ["bulk_rounds", "bulk_drop", "BULK_MIN_GROUPS"]

logger = logging.getLogger(__name__)

#: from this many groups on, the bulk rounds run by default: below it the swap search converges in
#: about a minute and the bulk rounds' large moves can settle lower (COGS train, 20,664 structures,
#: seed 1, 6,000 steps: D_C 0.318 against 0.331), while on 34,000 structures (100,000 Schema2QA
#: rows) they reach 0.31 in 10 s where the swaps alone reach 0.277 in 30 s
BULK_MIN_GROUPS = 25_000
#: the first round moves this share of the groups of the smaller side
FIRST_SHARE = 0.02


def _safe_out(e: Engine, groups: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Of the train ``groups`` (in priority order), those whose move to test, together with the others
    kept, leaves every atom some train mass: a group holding an atom the block would empty stays."""
    ptr, idx = e.A.ptr, e.A.idx
    lens = ptr[groups + 1] - ptr[groups]
    at = idx[ranges(ptr[groups], lens)]
    need = np.bincount(at, np.repeat(sizes[groups], lens), minlength=len(e.A.P))
    bad_atom = e.A.P - need < 0.5
    bad_atom &= need > 0
    if not bad_atom.any():
        return groups
    seg = np.repeat(np.arange(len(groups)), lens)
    hit = np.bincount(seg, bad_atom[at], minlength=len(groups)) > 0
    return groups[~hit]


def _by_gain(groups: np.ndarray, gain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups with a positive gain, best first (ties: lower group index first)."""
    keep = gain > 0
    g, v = groups[keep], gain[keep]
    order = np.lexsort((g, -v))
    return g[order], v[order]


def _rest(te: np.ndarray, chosen: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The test groups not ``chosen``, the best ``score`` of a move back to train first."""
    keep = ~np.isin(te, chosen)
    g, v = te[keep], score[keep]
    return g[np.lexsort((g, -v))]


def _fill(groups: np.ndarray, sizes: np.ndarray, rows: float, limit: int = 4096) -> np.ndarray | None:
    """Groups taken in order when they fit, until ``rows`` (at least) is covered without going more
    than needed; ``None`` if the first ``limit`` candidates cannot cover it."""
    took, left = [], rows
    for g in groups[:limit].tolist():
        s = sizes[g]
        if s <= left + 1e-9:
            took.append(g)
            left -= s
            if left <= 1e-9:
                return np.asarray(took, dtype=np.int64)
    return None


def bulk_rounds(search, e: Engine, *, t0: float, time_limit: float | None) -> int:
    """Bulk rounds towards the search's goal (see the module head); returns the rounds kept.

    A round moves the ``k`` groups whose move to test alone gains most for the goal, and as many
    rows back to train, the best first; a round that breaks the atom bound or gains nothing is undone
    and halves ``k``; a kept one grows it again (up to the first ``k``).
    """
    value, sizes = search.value, search.sizes
    k = k0 = max(1.0, FIRST_SHARE * min((e.side == 0).sum(), (e.side == 1).sum()))  # groups per round
    kept = 0
    while k >= 1:
        if time_limit is not None and time.perf_counter() - t0 >= time_limit:
            break
        if search.reached(e):
            break
        old, old_da = value(e.compound_divergence), e.atom_divergence
        tr, te = np.flatnonzero(e.side == 0), np.flatnonzero(e.side == 1)
        dc_out, _ = e.score(tr, 0, 1, atoms=False)
        dc_in, _ = e.score(te, 1, 0, atoms=False)
        out, _ = _by_gain(tr, value(dc_out) - old)
        back, _ = _by_gain(te, value(dc_in) - old)
        if not len(out) and not len(back):
            break
        out = out[:int(k)]
        out = _safe_out(e, out, sizes) if len(out) else out
        # as many rows back to train as go to test, the best first; then single groups to the window
        rows_out = float(sizes[out].sum())
        back = back[np.cumsum(sizes[back]) <= rows_out]
        excess = e.test_rows + rows_out - float(sizes[back].sum()) - (search.target + search.tol)
        if excess > 0:
            more = _fill(_rest(te, back, value(dc_in)), sizes, excess)
            if more is None:
                k /= 2
                continue
            back = np.concatenate([back, more])
        if not len(out) and not len(back):
            k /= 2
            continue
        e.place_block(out, 1)
        e.place_block(back, 0)
        e.recompute()
        atoms_ok = e.atom_divergence <= search.max_da and not ((e.A.P < 0.5) & (e.A.Q > 0)).any()
        logger.debug("bulk round: k %d, out %d, back %d: value %.4f -> %.4f, D_A %.4f -> %.4f", k, len(out),
                     len(back), old, value(e.compound_divergence), old_da, e.atom_divergence)
        if atoms_ok and search.in_window(e.test_rows) and value(e.compound_divergence) > old + 1e-12:
            kept += 1
            k = min(k0, k * 1.25)
            search.history.append((time.perf_counter() - t0, search.steps, e.compound_divergence, e.atom_divergence))
            continue
        e.place_block(back, 1)
        e.place_block(out, 0)
        e.recompute()
        k /= 2
    search.bulk_rounds = getattr(search, "bulk_rounds", 0) + kept
    return kept


def bulk_drop(search, e: Engine, train_target: int) -> None:
    """Leave train groups out (side -1) down to ``train_target`` rows in blocks: each block the train
    groups whose leaving alone serves the goal best per row, atom-safe, halved while the atom bound
    breaks; single groups (:meth:`~._search.Search.drop`) finish the last rows."""
    value, sizes = search.value, search.sizes
    share = 0.25
    while e.train_rows > train_target + search.tol:
        budget = e.train_rows - (train_target - search.tol)
        old = value(e.compound_divergence)
        tr = np.flatnonzero(e.side == 0)
        dc, _ = e.score(tr, 0, -1, atoms=False)
        gain = (value(dc) - old) / sizes[tr]
        order = np.lexsort((tr, -gain))
        cand = tr[order]
        cand = cand[np.cumsum(sizes[cand]) <= max(1.0, share * budget)]
        cand = _safe_out(e, cand, sizes) if len(cand) else cand
        if len(cand) < 8:  # the last rows: the single-group drop picks each
            search.drop(e, train_target)
            return
        e.place_block(cand, -1)
        e.recompute()
        if e.atom_divergence <= search.max_da and not ((e.A.P < 0.5) & (e.A.Q > 0)).any():
            continue
        e.place_block(cand, 0)
        e.recompute()
        share /= 2
        if share < 1e-3:
            search.drop(e, train_target)
            return
