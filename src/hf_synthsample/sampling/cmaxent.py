"""Exact greedy maximum-entropy selection over atom and compound bags (CMaxEnt, ALGORITHMS.md §5).

The objective of a set S is ``w_atoms * H(atom counts of S) + w_compounds * H(compound counts)``
(compound counts optionally weighted per compound). With ``M = sum n_c`` and
``A = sum n_c log n_c`` the entropy is ``H = log M - A / M``, so the value of ``S + e`` needs only
``M``, ``A`` and the *increment* ``dA_e = sum_{c in e} f(n_c, x_ec)`` with
``f(n, x) = (n + x) log(n + x) - n log n``. :class:`GreedyEntropy` keeps ``dA`` per candidate and,
after each pick, updates it only where a count changed:

* examples with identical bags form one *group*, scored once (the group offers its members in
  tie-break order);
* *sparse* features (in few groups) update the groups that hold them (a CSC column each);
* *dense* features (in many groups: ``now``, ``=>``...) would touch almost every group at every
  step; their contribution depends only on the group's multiplicities of the dense features,
  so groups sharing that *dense signature* share it: one value per signature per step, then a
  gather.

Each step is then one vector pass over the live groups (on ``device``) plus the sparse updates.
Ties: scores within ``tol * (1 + |best|)`` of the best count as equal and the smallest
``priority`` wins; :func:`reference_greedy` (the naive greedy, the test oracle) uses the same rule.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Mapping, Sequence

import numpy as np

__all__ = ["GreedyEntropy", "reference_greedy", "TOL"]

#: relative tolerance under which two objective values are a tie
TOL = 1e-9


def _xlogx(x):
    import torch

    return torch.where(x > 0, x * torch.log(torch.clamp(x, min=1e-300)), torch.zeros_like(x))


class _Side:
    """Counts of one feature family (atoms or compounds) over groups, sparse + dense parts."""

    def __init__(self, bags: list[dict[int, float]], num_features: int, dense_fraction: float, device, dtype):
        import torch

        G = len(bags)
        self.device = device
        rows, cols, vals = [], [], []
        for g, bag in enumerate(bags):
            for f, x in bag.items():
                rows.append(g)
                cols.append(f)
                vals.append(x)
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        vals = np.asarray(vals, dtype=np.float64)
        df = np.bincount(cols, minlength=num_features)
        dense = df > max(64, dense_fraction * G)
        self.total = torch.as_tensor(np.bincount(rows, weights=vals, minlength=G), device=device, dtype=dtype)
        self.n = np.zeros(num_features, dtype=np.float64)  # current counts of S (host: small, scalar-indexed)
        self.M = 0.0
        self.A = 0.0
        # CSR of every group (host): its features and multiplicities, for the pick's update
        order = np.lexsort((cols, rows))
        rows, cols, vals = rows[order], cols[order], vals[order]
        self.row_ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=G))])
        self.row_col, self.row_val = cols, vals
        # sparse part: CSC over sparse features (device)
        sp = ~dense[cols]
        s_rows, s_cols, s_vals = rows[sp], cols[sp], vals[sp]
        o = np.argsort(s_cols, kind="stable")
        s_rows, s_cols, s_vals = s_rows[o], s_cols[o], s_vals[o]
        self.col_ptr = np.concatenate([[0], np.cumsum(np.bincount(s_cols, minlength=num_features))])
        self.col_row = torch.as_tensor(s_rows, device=device)
        self.col_val = torch.as_tensor(s_vals, device=device, dtype=dtype)
        self.is_dense = dense
        self.dA_sparse = torch.zeros(G, device=device, dtype=dtype)  # all n = 0 at the start: f(0, x) = x log x
        self.dA_sparse.index_add_(0, torch.as_tensor(s_rows, device=device), _xlogx(self.col_val))
        # dense part: signatures
        dn = dense[cols]
        sig_keys: dict[tuple, int] = {}
        sig_of = np.zeros(G, dtype=np.int64)
        d_rows, d_cols, d_vals = rows[dn], cols[dn], vals[dn]
        starts = np.searchsorted(d_rows, np.arange(G + 1))
        sig_cols, sig_vals, sig_ids = [], [], []
        for g in range(G):
            a, b = starts[g], starts[g + 1]
            key = (tuple(d_cols[a:b].tolist()), tuple(d_vals[a:b].tolist()))
            s = sig_keys.get(key)
            if s is None:
                s = sig_keys[key] = len(sig_keys)
                sig_cols.extend(key[0])
                sig_vals.extend(key[1])
                sig_ids.extend([s] * len(key[0]))
            sig_of[g] = s
        self.num_sigs = len(sig_keys)
        self.sig_of = torch.as_tensor(sig_of, device=device)
        self.sig_col = torch.as_tensor(np.asarray(sig_cols, dtype=np.int64), device=device)
        self.sig_val = torch.as_tensor(np.asarray(sig_vals, dtype=np.float64), device=device, dtype=dtype)
        self.sig_id = torch.as_tensor(np.asarray(sig_ids, dtype=np.int64), device=device)
        self.dtype = dtype
        self._n_dev = torch.zeros(num_features, device=device, dtype=dtype)

    def dense_dA(self):
        """Per signature, ``sum over its dense features of f(n_c, x)`` at the current counts."""
        import torch

        n = self._n_dev[self.sig_col]
        contrib = _xlogx(n + self.sig_val) - _xlogx(n)
        out = torch.zeros(self.num_sigs, device=self.device, dtype=self.dtype)
        out.index_add_(0, self.sig_id, contrib)
        return out

    def entropy_after(self, groups=None):
        """``H(S + g)`` for every group (or the given group index tensor)."""
        import torch

        dA = self.dA_sparse + self.dense_dA()[self.sig_of]
        total = self.total
        if groups is not None:
            dA, total = dA[groups], total[groups]
        M = self.M + total
        safe = torch.clamp(M, min=1e-300)
        return torch.where(M > 0, torch.log(safe) - (self.A + dA) / safe, torch.zeros_like(M))

    def add(self, g: int) -> None:
        """Add group ``g``'s bag to S and update the increments of the groups it affects."""
        import torch

        a, b = self.row_ptr[g], self.row_ptr[g + 1]
        cols, vals = self.row_col[a:b], self.row_val[a:b]
        if not len(cols):
            return
        old = self.n[cols]
        new = old + vals
        self.A += float(np.sum(new * np.log(np.where(new > 0, new, 1))) - np.sum(old * np.log(np.where(old > 0, old, 1))))
        self.M += float(vals.sum())
        self.n[cols] = new
        self._n_dev[torch.as_tensor(cols, device=self.device)] = torch.as_tensor(new, device=self.device, dtype=self.dtype)
        sparse = ~self.is_dense[cols]
        cols, old, new = cols[sparse], old[sparse], new[sparse]
        if not len(cols):
            return
        starts, ends = self.col_ptr[cols], self.col_ptr[cols + 1]
        lens = ends - starts
        total = int(lens.sum())
        if total == 0:
            return
        seg = np.repeat(np.arange(len(cols)), lens)
        idx = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens) + starts[seg]
        idx_t = torch.as_tensor(idx, device=self.device)
        y = self.col_val[idx_t]
        o = torch.as_tensor(old[seg], device=self.device, dtype=self.dtype)
        nw = torch.as_tensor(new[seg], device=self.device, dtype=self.dtype)
        delta = (_xlogx(nw + y) - _xlogx(nw)) - (_xlogx(o + y) - _xlogx(o))
        self.dA_sparse.index_add_(0, self.col_row[idx_t], delta)


class GreedyEntropy:
    """The exact CMaxEnt greedy over groups of identical bags.

    Args:
        atom_bags, compound_bags: per group, ``{feature id: multiplicity}`` (compound
            multiplicities already weighted).
        members: per group, its row indices in tie-break order (best first).
        priority: per row, the tie-break key (smaller wins).
        w_atoms, w_compounds: objective weights.
        device: torch device of the per-step vector work.
        dense_fraction: a feature in more than this fraction of the groups is handled by
            signatures rather than by per-group updates (speed only; the result does not change).
    """

    def __init__(
        self,
        atom_bags: list[dict[int, float]],
        compound_bags: list[dict[int, float]],
        num_atoms: int,
        num_compounds: int,
        members: list[np.ndarray],
        priority: np.ndarray,
        *,
        w_atoms: float = 1.0,
        w_compounds: float = 1.0,
        device: str = "cpu",
        dense_fraction: float = 0.02,
        tol: float = TOL,
    ):
        import torch

        self.torch = torch
        dtype = torch.float64
        self.device = torch.device(device)
        self.atoms = _Side(atom_bags, num_atoms, dense_fraction, self.device, dtype)
        self.compounds = _Side(compound_bags, num_compounds, dense_fraction, self.device, dtype)
        self.w_atoms, self.w_compounds, self.tol = float(w_atoms), float(w_compounds), float(tol)
        self.members = members
        self.priority = np.asarray(priority)
        self.ptr = np.zeros(len(members), dtype=np.int64)
        head = np.array([self.priority[m[0]] for m in members], dtype=np.float64)
        self.head_priority = torch.as_tensor(head, device=self.device, dtype=dtype)
        self.alive = torch.ones(len(members), dtype=torch.bool, device=self.device)

    def scores(self, groups=None):
        s = 0.0
        if self.w_atoms:
            s = s + self.w_atoms * self.atoms.entropy_after(groups)
        if self.w_compounds:
            s = s + self.w_compounds * self.compounds.entropy_after(groups)
        if not isinstance(s, self.torch.Tensor):  # both weights zero: every candidate ties
            n = len(self.members) if groups is None else len(groups)
            s = self.torch.zeros(n, device=self.device, dtype=self.torch.float64)
        return s

    def best_group(self, groups=None) -> int:
        """The live group (of ``groups``, default all) with the best score, ties by priority."""
        torch = self.torch
        s = self.scores(groups)
        alive = self.alive if groups is None else self.alive[groups]
        prio = self.head_priority if groups is None else self.head_priority[groups]
        s = torch.where(alive, s, torch.full_like(s, -math.inf))
        best = s.max()
        cand = s >= best - self.tol * (1 + best.abs())
        j = int(torch.argmin(torch.where(cand & alive, prio, torch.full_like(prio, math.inf))))
        return j if groups is None else int(groups[j])

    def take(self, g: int) -> int:
        """Add the next member of group ``g`` to S; returns its row index."""
        row = int(self.members[g][self.ptr[g]])
        self.ptr[g] += 1
        self.atoms.add(g)
        self.compounds.add(g)
        if self.ptr[g] >= len(self.members[g]):
            self.alive[g] = False
        else:
            self.head_priority[g] = float(self.priority[self.members[g][self.ptr[g]]])
        return row

    def run(self, k: int, progress: bool = False) -> list[int]:
        """``k`` greedy picks (rows, in pick order)."""
        from tqdm.auto import tqdm

        out = []
        for _ in tqdm(range(k), disable=not progress, desc="CMaxEnt"):
            out.append(self.take(self.best_group()))
        return out


def reference_greedy(
    atoms: Sequence[Sequence[str]],
    compounds: Sequence[Sequence[str]],
    k: int,
    priority: Sequence[float],
    *,
    w_atoms: float = 1.0,
    w_compounds: float = 1.0,
    compound_weights: Mapping[str, float] | None = None,
    candidates: Sequence[int] | None = None,
    tol: float = TOL,
) -> list[int]:
    """The naive greedy: at each step evaluate ``H(S + e)`` from scratch for every remaining row.

    The oracle of :class:`GreedyEntropy` (and the baseline of its benchmark): same objective,
    same tie rule, nothing incremental.
    """
    from ..structure import entropy

    remaining = list(range(len(atoms)) if candidates is None else candidates)
    sa: Counter = Counter()
    sc: Counter = Counter()
    out = []
    cw = compound_weights or {}
    for _ in range(k):
        best, best_rows = -math.inf, []
        scored = []
        for e in remaining:
            va = Counter(sa)
            va.update(atoms[e])
            vc = Counter(sc)
            vc.update(compounds[e])
            value = 0.0
            if w_atoms:
                value += w_atoms * entropy(va)
            if w_compounds:
                value += w_compounds * entropy({c: n * cw.get(c, 1.0) for c, n in vc.items()})
            scored.append((value, e))
            best = max(best, value)
        cut = best - tol * (1 + abs(best))
        pick = min((e for v, e in scored if v >= cut), key=lambda e: priority[e])
        out.append(pick)
        remaining.remove(pick)
        sa.update(atoms[pick])
        sc.update(compounds[pick])
    return out
