"""The MCD search engine: groups of rows assigned to train (side 0) or test (1), with the Chernoff
similarity ``C = S / (SP^a SQ^(1-a))``, ``S = sum_k P_k^a Q_k^(1-a)`` of the train/test masses
``P``/``Q`` (alpha 0.1 for compounds, 0.5 for atoms) kept up to date: a move changes only the terms
of the moved group's features, so scoring a batch costs their features, not the vocabulary.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Engine", "ranges"]


def ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for each start and length."""
    total = int(lens.sum())
    return np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens - starts, lens)


class _Sums:
    """``P``, ``Q`` masses of one feature family (atoms or compounds) and the Chernoff sum."""

    def __init__(self, ptr: np.ndarray, idx: np.ndarray, val: np.ndarray, V: int, alpha: float):
        self.ptr, self.idx, self.val, self.V, self.alpha = ptr, idx, val, V, alpha

    def term(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        a = self.alpha
        # clip: float round-off of repeated +/- must not give a negative base
        return np.power(np.maximum(p, 0.0), a) * np.power(np.maximum(q, 0.0), 1.0 - a)

    def recompute(self, side: np.ndarray, sizes: np.ndarray) -> None:
        lens = np.diff(self.ptr)
        g = np.repeat(np.arange(len(sizes)), lens)
        mass = self.val * sizes[g]
        test, train = side[g] == 1, side[g] == 0  # side -1 (on neither side) counts nowhere
        self.P = np.bincount(self.idx[train], mass[train], minlength=self.V).astype(np.float64)
        self.Q = np.bincount(self.idx[test], mass[test], minlength=self.V).astype(np.float64)
        self.T = self.term(self.P, self.Q)  # each feature's term, kept so a score needs only the new ones
        self.S = float(self.T.sum())
        self.SP, self.SQ = float(self.P.sum()), float(self.Q.sum())

    def _add(self, k: np.ndarray, m: np.ndarray, dp: float, dq: float) -> None:
        """Add ``dp * m`` to the train and ``dq * m`` to the test mass of the distinct features ``k``."""
        p, q = self.P[k] + dp * m, self.Q[k] + dq * m
        t = self.term(p, q)
        self.S += float((t - self.T[k]).sum())
        self.P[k], self.Q[k], self.T[k] = p, q, t
        total = float(m.sum())
        self.SP += dp * total
        self.SQ += dq * total

    def change(self, g: int, sizes: np.ndarray, dp: float, dq: float) -> None:
        s, e = self.ptr[g], self.ptr[g + 1]
        self._add(self.idx[s:e], self.val[s:e] * sizes[g], dp, dq)

    def change_block(self, groups: np.ndarray, sizes: np.ndarray, dp: float, dq: float) -> None:
        """:meth:`change` for many groups at once (features shared by several are summed first)."""
        k, m, _ = self.gather(groups, sizes)
        if len(k):
            uk, inv = np.unique(k, return_inverse=True)
            self._add(uk, np.bincount(inv.reshape(-1), m, minlength=len(uk)), dp, dq)

    def similarity(self, S=None, SP=None, SQ=None):
        S = self.S if S is None else S
        SP = self.SP if SP is None else SP
        SQ = self.SQ if SQ is None else SQ
        a = self.alpha
        # an empty side has S = 0, so similarity 0 (divergence 1); the floor only avoids 0 / 0
        return S / (np.power(np.maximum(SP, 1e-300), a) * np.power(np.maximum(SQ, 1e-300), 1.0 - a))

    def gather(self, groups: np.ndarray, sizes: np.ndarray):
        lens = self.ptr[groups + 1] - self.ptr[groups]
        flat = ranges(self.ptr[groups], lens)
        seg = np.repeat(np.arange(len(groups)), lens)
        return self.idx[flat], self.val[flat] * np.repeat(sizes[groups], lens), seg

    def after_moves(self, groups: np.ndarray, sizes: np.ndarray, dp: float, dq: float):
        """Similarity after moving each of ``groups`` alone: its mass times ``dp`` to train, ``dq`` to test."""
        k, m, seg = self.gather(groups, sizes)
        d = self.term(self.P[k] + dp * m, self.Q[k] + dq * m) - self.T[k]
        B = len(groups)
        dS = np.bincount(seg, d, minlength=B)
        dM = np.bincount(seg, m, minlength=B)
        return self.similarity(self.S + dS, self.SP + dp * dM, self.SQ + dq * dM)


#: (train, test) mass coefficient of a group on each side: -1 unplaced, 0 train, 1 test
_COEF = {-1: (0.0, 0.0), 0: (1.0, 0.0), 1: (0.0, 1.0)}


class Engine:
    """Groups on train (0), test (1) or nowhere (-1) (``side``, modified in place) with the atom and
    compound sums of their CSR ``(ptr, idx, val, V)`` features (``val``: weight per row)."""

    def __init__(self, sizes, atoms, compounds, side, alpha_atoms: float = 0.5, alpha_compounds: float = 0.1):
        self.sizes = np.asarray(sizes, dtype=np.float64)
        self.side = side
        self.A = _Sums(*atoms, alpha=alpha_atoms)
        self.C = _Sums(*compounds, alpha=alpha_compounds)
        self.recompute()

    def recompute(self) -> None:
        """Exact sums from the assignment (also clears float drift)."""
        self.A.recompute(self.side, self.sizes)
        self.C.recompute(self.side, self.sizes)
        self.test_rows = float(self.sizes[self.side == 1].sum())
        self.train_rows = float(self.sizes[self.side == 0].sum())

    @staticmethod
    def _divergence(sums: "_Sums") -> float:
        # plain floats: this runs a few times per step, where NumPy scalar calls would dominate
        if sums.SP <= 0 or sums.SQ <= 0:
            return 1.0
        a = sums.alpha
        return max(0.0, 1.0 - sums.S / (sums.SP ** a * sums.SQ ** (1.0 - a)))

    @property
    def atom_divergence(self) -> float:
        return self._divergence(self.A)

    @property
    def compound_divergence(self) -> float:
        return self._divergence(self.C)

    def place(self, g: int, side: int) -> None:
        """Put group ``g`` on ``side`` (0 train, 1 test, -1 nowhere)."""
        self._move(g, int(self.side[g]), side, self.sizes[g])

    def place_block(self, groups: np.ndarray, side: int) -> None:
        """Put all ``groups`` (all on one side now) on ``side``."""
        groups = np.asarray(groups, dtype=np.int64)
        if len(groups):
            self._move(groups, int(self.side[groups[0]]), side, float(self.sizes[groups].sum()))

    def _move(self, g: int | np.ndarray, old: int, side: int, n: float) -> None:
        if old == side:
            return
        (p0, q0), (p1, q1) = _COEF[old], _COEF[side]
        for sums in (self.A, self.C):
            change = sums.change_block if isinstance(g, np.ndarray) else sums.change
            change(g, self.sizes, p1 - p0, q1 - q0)
        self.side[g] = side
        self.test_rows += n * (q1 - q0)
        self.train_rows += n * (p1 - p0)

    def keeps_atoms(self, groups: np.ndarray) -> np.ndarray:
        """For train groups: moving it to test leaves every one of its atoms in train."""
        k, m, seg = self.A.gather(groups, self.sizes)
        bad = self.A.P[k] - m < 0.5  # no train mass left (0.5: float round-off of whole-row masses)
        return np.bincount(seg, bad, minlength=len(groups)) == 0

    def score(self, groups: np.ndarray, old: int, new: int, atoms: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """(D_C, D_A or None) after moving each of ``groups`` alone from side ``old`` to ``new``."""
        (p0, q0), (p1, q1) = _COEF[old], _COEF[new]
        dc = 1.0 - self.C.after_moves(groups, self.sizes, p1 - p0, q1 - q0)
        da = 1.0 - self.A.after_moves(groups, self.sizes, p1 - p0, q1 - q0) if atoms else None
        return dc, da
