"""Exact greedy maximum-entropy selection over atom and compound bags (CMaxEnt, ALGORITHMS.md §5).

The objective of a set S is ``w_atoms * H(atom counts) + w_compounds * H(compound counts)``. With
``M = sum n_c`` and ``A = sum n_c log n_c``, ``H = log M - A / M``, so :class:`GreedyEntropy` keeps
per candidate group (rows with identical bags) only the increment ``dA`` and, after each pick,
updates it where a count changed. Ties: scores within ``tol * (1 + |best|)`` of the best are equal
and the smallest ``priority`` wins, as in :func:`reference_greedy` (the naive greedy, the test oracle).
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from typing import Mapping, Sequence

import numpy as np

__all__ = ["GreedyEntropy", "GroupMembers", "reference_greedy", "TOL"]

#: relative tolerance under which two objective values are a tie
TOL = 1e-9
#: runs of at least this many exceptions are scattered one by one (a view each); shorter ones together
_BIG_RUN = 2048


class _Side:
    """Counts of one feature family (atoms or compounds) over the groups.

    ``dA_g = offset + E_g``: ``offset`` is shared, from each feature's commonest multiplicity over
    the groups (its default, often 0); ``E_g`` sums over the group's other multiplicities (its
    exceptions) only, so a feature in every program (``now``) costs O(1) per step.
    """

    def __init__(self, coo: tuple, device, dtype):
        import torch

        rows, cols, vals, G, num_features = coo
        self.device, self.dtype = device, dtype
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        vals = np.asarray(vals, dtype=np.float64)
        total = np.bincount(rows, weights=vals, minlength=G)
        sizes, size_id = np.unique(total, return_inverse=True)
        self.sizes = torch.as_tensor(sizes, device=device, dtype=dtype)
        self.size_id = torch.as_tensor(size_id.reshape(-1), device=device)
        self.n = np.zeros(num_features, dtype=np.float64)  # counts of S (host: small, scalar-indexed)
        self.M = self.A = 0.0
        # CSR of every group (host): the pick's features and multiplicities
        key = rows * max(num_features, 1) + cols
        if len(key) > 1 and not (key[1:] > key[:-1]).all():
            o = np.argsort(key, kind="stable")
            rows, cols, vals = rows[o], cols[o], vals[o]
        self.row_ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=G))])
        self.row_col, self.row_val = cols, vals
        # default multiplicity of each feature: the most common value, 0 included (ties: smaller)
        default = np.zeros(num_features, dtype=np.float64)
        df = np.bincount(cols, minlength=num_features)
        o = np.lexsort((vals, cols))
        pc, pv, counts = _runs(cols[o], vals[o])
        best = np.zeros(num_features, dtype=np.int64)
        if len(pc):
            o2 = np.lexsort((pv, -counts, pc))
            first = o2[np.concatenate([[True], pc[o2][1:] != pc[o2][:-1]])]
            best[pc[first]] = counts[first]
            default[pc[first]] = pv[first]
        default[(G - df) >= best] = 0.0
        self.default = default
        # exceptions: present with another value, or absent while the default is nonzero
        exc = vals != default[cols]
        e_rows, e_cols, e_vals = [rows[exc]], [cols[exc]], [vals[exc]]
        for c in np.flatnonzero(default > 0).tolist():
            absent = np.setdiff1d(np.arange(G), rows[cols == c])
            e_rows.append(absent)
            e_cols.append(np.full(len(absent), c, dtype=np.int64))
            e_vals.append(np.zeros(len(absent)))
        e_rows, e_cols, e_vals = np.concatenate(e_rows), np.concatenate(e_cols), np.concatenate(e_vals)
        # sorted by (feature, multiplicity): a (feature, multiplicity) pair is one contiguous run,
        # and every group of a run gets the same update
        o = np.lexsort((e_vals, e_cols))
        e_rows, e_cols, e_vals = e_rows[o], e_cols[o], e_vals[o]
        self.col_ptr = np.concatenate([[0], np.cumsum(np.bincount(e_cols, minlength=num_features))])
        self.col_row = torch.as_tensor(e_rows, device=device)
        self.pair_col, self.pair_val, self.pair_count = _runs(e_cols, e_vals)
        self.pair_count_t = torch.as_tensor(self.pair_count, device=device)
        self.pair_ptr = np.concatenate([[0], np.cumsum(np.bincount(self.pair_col, minlength=num_features))])
        self._pair_starts()
        # at n = 0: f(0, x) = x log x
        self.offset = float(np.sum(default * np.log(np.where(default > 0, default, 1))))
        self.E = torch.zeros(G, device=device, dtype=dtype)
        init = _f(0.0, e_vals) - _f(0.0, default[e_cols])
        self.E.index_add_(0, self.col_row, torch.as_tensor(init, device=device, dtype=dtype))

    def _pair_starts(self) -> None:
        self.pair_start = np.concatenate([[0], np.cumsum(self.pair_count)[:-1]]).astype(np.int64)

    @property
    def num_exceptions(self) -> int:
        return len(self.col_row)

    def size_terms(self):
        """``log(M + m)`` and ``1 / (M + m)`` per distinct bag size ``m`` (0 where ``M + m = 0``)."""
        import torch

        Mv = self.M + self.sizes
        safe = torch.clamp(Mv, min=1e-300)  # S empty and a bag with no mass: H = 0
        lg = torch.where(Mv > 0, torch.log(safe), torch.zeros_like(Mv))
        inv = torch.where(Mv > 0, 1.0 / safe, torch.zeros_like(Mv))
        return lg, inv

    def entropy_after(self, groups=None):
        """``H(S + g)`` for every group (or the given group index tensor)."""
        lg, inv = self.size_terms()
        E, sid = (self.E, self.size_id) if groups is None else (self.E[groups], self.size_id[groups])
        return lg[sid] - (self.A + self.offset + E) * inv[sid]

    def compact(self, keep: np.ndarray, newid: np.ndarray) -> None:
        """Drop the groups not in ``keep`` (boolean per group), renumbering the rest by ``newid``."""
        import torch

        kept = np.flatnonzero(keep)
        keep_t = torch.as_tensor(kept, device=self.device)
        self.E = self.E[keep_t]
        self.size_id = self.size_id[keep_t]
        lens = (self.row_ptr[1:] - self.row_ptr[:-1])[kept]
        at = _ranges(self.row_ptr[kept], lens)
        self.row_col, self.row_val = self.row_col[at], self.row_val[at]
        self.row_ptr = np.concatenate([[0], np.cumsum(lens)])
        rows = self.col_row.cpu().numpy()
        pair = np.repeat(np.arange(len(self.pair_count)), self.pair_count)
        live = keep[rows]
        self.col_row = torch.as_tensor(newid[rows[live]], device=self.device)
        self.pair_count = np.bincount(pair[live], minlength=len(self.pair_count)).astype(np.int64)
        self.pair_count_t = torch.as_tensor(self.pair_count, device=self.device)
        per_feature = np.bincount(self.pair_col, weights=self.pair_count, minlength=len(self.col_ptr) - 1)
        self.col_ptr = np.concatenate([[0], np.cumsum(per_feature.astype(np.int64))])
        self._pair_starts()

    def add(self, g: int) -> None:
        """Add group ``g``'s bag to S."""
        import torch

        a, b = self.row_ptr[g], self.row_ptr[g + 1]
        cols, vals = self.row_col[a:b], self.row_val[a:b]
        if not len(cols):
            return
        old = self.n[cols]
        new = old + vals
        self.A += float(np.sum(_f(old, vals)))
        self.M += float(vals.sum())
        self.n[cols] = new
        d = self.default[cols]
        self.offset += float(np.sum(_f(new, d) - _f(old, d)))
        lens = self.col_ptr[cols + 1] - self.col_ptr[cols]
        keep = lens > 0
        if not keep.any():
            return
        cols, old, new, lens = cols[keep], old[keep], new[keep], lens[keep]
        # per (feature, multiplicity) run: its update, repeated over the run's groups; each
        # feature's exceptions are one contiguous slice of col_row (a view, no gather)
        plens = self.pair_ptr[cols + 1] - self.pair_ptr[cols]
        pseg = np.repeat(np.arange(len(cols)), plens)
        pairs = _ranges(self.pair_ptr[cols], plens)
        o, nw, y, dflt = old[pseg], new[pseg], self.pair_val[pairs], self.default[cols][pseg]
        delta = (_f(nw, y) - _f(o, y)) - (_f(nw, dflt) - _f(o, dflt))
        counts = self.pair_count[pairs]
        big = counts >= _BIG_RUN
        # a long run: one scatter of its scalar update over a view of col_row (no index arrays built)
        for start, count, d in zip(self.pair_start[pairs[big]].tolist(), counts[big].tolist(), delta[big].tolist()):
            self.E.index_add_(0, self.col_row[start:start + count],
                              torch.tensor(d, device=self.device, dtype=self.dtype).expand(count))
        if big.all():
            return
        # the short runs together: one scatter over their concatenated slices
        small = ~big
        src = torch.repeat_interleave(torch.as_tensor(delta[small], device=self.device, dtype=self.dtype),
                                      self.pair_count_t[torch.as_tensor(pairs[small], device=self.device)])
        at = torch.as_tensor(_ranges(self.pair_start[pairs[small]], counts[small]), device=self.device)
        self.E.index_add_(0, self.col_row[at], src)


def _runs(cols: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run-length encoding of sorted ``(cols, vals)`` pairs: ``(col, val, count)`` per run."""
    if not len(cols):
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], (cols[1:] != cols[:-1]) | (vals[1:] != vals[:-1])]))
    counts = np.diff(np.concatenate([starts, [len(cols)]]))
    return cols[starts].astype(np.int64), vals[starts], counts.astype(np.int64)


def _f(n, x):
    """``f(n, x) = (n + x) log(n + x) - n log n`` (numpy, 0 log 0 = 0)."""
    n = np.asarray(n, dtype=np.float64)
    m = n + x
    return m * np.log(np.where(m > 0, m, 1)) - n * np.log(np.where(n > 0, n, 1))


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for each start and length."""
    total = int(lens.sum())
    return np.arange(total) - np.repeat(np.cumsum(lens) - lens - starts, lens)


class GroupMembers:
    """The rows of each group in tie-break order, stored flat (no per-group arrays for a million rows).

    Example:
        >>> m = GroupMembers.from_lists([[4, 1], [0]])
        >>> len(m), m[0].tolist(), m.heads().tolist()
        (2, [4, 1], [4, 0])
    """

    def __init__(self, flat: np.ndarray, sizes: np.ndarray):
        self.flat = np.asarray(flat, dtype=np.int64)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    @classmethod
    def from_lists(cls, lists: Sequence[Sequence[int]]) -> "GroupMembers":
        sizes = [len(m) for m in lists]
        flat = np.concatenate([np.asarray(m, dtype=np.int64) for m in lists]) if lists else np.zeros(0, np.int64)
        return cls(flat, sizes)

    def __len__(self) -> int:
        return len(self.sizes)

    def __getitem__(self, g: int) -> np.ndarray:
        s = self.starts[g]
        return self.flat[s:s + self.sizes[g]]

    def heads(self) -> np.ndarray:
        return self.flat[self.starts]

    def first_only(self) -> "GroupMembers":
        """Each group reduced to its first row."""
        return GroupMembers(self.heads(), np.ones(len(self), dtype=np.int64))


class GreedyEntropy:
    """The exact CMaxEnt greedy over groups of identical bags.

    ``atoms`` / ``compounds``: ``(group, feature, multiplicity, num_groups, num_features)`` arrays;
    ``members``: per group, its rows in tie-break order; ``priority``: per row, smaller wins ties.
    """

    def __init__(self, atoms: tuple, compounds: tuple, members: "GroupMembers | Sequence[Sequence[int]]",
                 priority: np.ndarray, *, w_atoms: float = 1.0, w_compounds: float = 1.0, device: str = "cpu",
                 tol: float = TOL):
        import torch

        self.torch = torch
        dtype = torch.float64
        self.device = torch.device(device)
        self.atoms = _Side(atoms, self.device, dtype)
        self.compounds = _Side(compounds, self.device, dtype)
        self.w_atoms, self.w_compounds, self.tol = float(w_atoms), float(w_compounds), float(tol)
        members = self.members = members if isinstance(members, GroupMembers) else GroupMembers.from_lists(members)
        self.priority = np.asarray(priority)
        self.ptr = np.zeros(len(members), dtype=np.int64)
        head = self.priority[members.heads()].astype(np.float64)
        self.head_priority = torch.as_tensor(head, device=self.device, dtype=dtype)
        self.alive = torch.ones(len(members), dtype=torch.bool, device=self.device)
        self.group_id = None  # after compact(): the original id of each remaining group
        self.used_up = 0  # groups used up since the last compaction
        # the full pass scores each group as C_b - a_b E_atoms - c_b E_compounds, with the
        # constants per bucket b of equal (atom bag size, compound bag size): few buckets
        n_sc = len(self.compounds.sizes)
        uniq, self.bucket = torch.unique(self.atoms.size_id * n_sc + self.compounds.size_id, return_inverse=True)
        self.bucket_sa, self.bucket_sc = uniq // n_sc, uniq % n_sc
        self.penalty = torch.zeros(len(members), device=self.device, dtype=dtype)  # -inf once a group is used up

    def full_scores(self):
        """:meth:`scores` of all groups (``-inf`` for used-up ones) up to rounding, in a few fused passes."""
        const, slopes = 0.0, []
        for w, side, sid in ((self.w_atoms, self.atoms, self.bucket_sa), (self.w_compounds, self.compounds, self.bucket_sc)):
            if not w:
                continue
            lg, inv = side.size_terms()
            lg, inv = lg[sid], inv[sid]
            const = const + w * (lg - (side.A + side.offset) * inv)
            slopes.append((w * inv, side.E))
        if not slopes:  # both weights zero: every live group ties
            return self.penalty.clone()
        # per bucket constants gathered once each: s = C_b + penalty - a_b E_atoms - c_b E_compounds
        s = const[self.bucket]
        s.add_(self.penalty)
        for slope, E in slopes:
            s.addcmul_(slope[self.bucket], E, value=-1.0)
        return s

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
        if groups is None:
            s = self.full_scores()
            best = s.max()
            cand = torch.nonzero(s >= best - self.tol * (1 + best.abs())).flatten()
            return int(cand[torch.argmin(self.head_priority[cand])])
        s = self.scores(groups)
        alive, prio = self.alive[groups], self.head_priority[groups]
        s = torch.where(alive, s, torch.full_like(s, -math.inf))
        best = s.max()
        cand = s >= best - self.tol * (1 + best.abs())
        return int(groups[int(torch.argmin(torch.where(cand & alive, prio, torch.full_like(prio, math.inf))))])

    def take(self, g: int) -> int:
        """Add the next member of group ``g`` to S; returns its row index."""
        m = self.members
        og = int(self.group_id[g]) if self.group_id is not None else g  # the id before compaction
        row = int(m.flat[m.starts[og] + self.ptr[og]])
        self.ptr[og] += 1
        self.atoms.add(g)
        self.compounds.add(g)
        if self.ptr[og] >= m.sizes[og]:
            self.alive[g] = False
            self.penalty[g] = -math.inf
            self.used_up += 1
        else:
            self.head_priority[g] = float(self.priority[m.flat[m.starts[og] + self.ptr[og]]])
        return row

    def compact(self) -> None:
        """Drop used-up groups, so that later steps touch live groups only; group indices change
        (callers holding them, like the hybrid's per-template lists, must not compact)."""
        keep = self.alive.cpu().numpy()
        if keep.all():
            return
        newid = np.full(len(keep), -1, dtype=np.int64)
        newid[keep] = np.arange(int(keep.sum()))
        self.atoms.compact(keep, newid)
        self.compounds.compact(keep, newid)
        keep_t = self.torch.as_tensor(np.flatnonzero(keep), device=self.device)
        self.group_id = (np.arange(len(keep)) if self.group_id is None else self.group_id)[keep]
        self.head_priority = self.head_priority[keep_t]
        self.alive = self.alive[keep_t]
        self.penalty = self.penalty[keep_t]
        self.bucket = self.bucket[keep_t]
        self.used_up = 0

    def step(self) -> int:
        """One greedy pick over all groups (row index); compacts once a quarter of them are used up."""
        row = self.take(self.best_group())
        if self.used_up > 1000 and 4 * self.used_up > len(self.alive):
            self.compact()
        return row

    def run(self, k: int, progress: bool | None = None) -> list[int]:
        """``k`` greedy picks (rows, in pick order); ``progress``: see :mod:`hf_synthsample.progress`."""
        from ..progress import progress_bar

        with self.threads():
            return [self.step() for _ in progress_bar(range(k), desc="CMaxEnt", progress=progress)]

    @contextlib.contextmanager
    def threads(self):
        """One intra-op thread on CPU while stepping: the per-step tensors are too small to gain from more."""
        torch = self.torch
        before = torch.get_num_threads()
        if self.device.type == "cpu":
            torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(before)


def reference_greedy(atoms: Sequence[Sequence[str]], compounds: Sequence[Sequence[str]], k: int,
                     priority: Sequence[float], *, w_atoms: float = 1.0, w_compounds: float = 1.0,
                     compound_weights: Mapping[str, float] | None = None, candidates: Sequence[int] | None = None,
                     tol: float = TOL, distinct: bool = True) -> list[int]:
    """The naive greedy, the oracle of :class:`GreedyEntropy`: ``H(S + e)`` from scratch for every row.

    ``distinct``: once a row is picked, rows with the same atom and compound multisets are no longer candidates.
    """
    from ..structure import entropy, frequencies

    remaining = list(range(len(atoms)) if candidates is None else candidates)
    taken: set = set()

    def key(e):
        return tuple(sorted(atoms[e])), tuple(sorted(compounds[e]))

    sa: Counter = Counter()
    sc: Counter = Counter()
    out = []
    cw = compound_weights or {}
    for _ in range(k):
        best = -math.inf
        scored = []
        for e in remaining:
            if distinct and key(e) in taken:
                continue
            va = Counter(sa)
            va.update(frequencies([atoms[e]]))
            vc = Counter(sc)
            vc.update(frequencies([compounds[e]]))
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
        taken.add(key(pick))
        sa.update(frequencies([atoms[pick]]))
        sc.update(frequencies([compounds[pick]]))
    return out
