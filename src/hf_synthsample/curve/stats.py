"""The figures of a curve that need no model: Spearman's rho, seeded row subsets, error kinds, the
length mix that the length-standardized test score weighs by, and the test rows of unseen templates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["spearman", "subsample", "error_kinds", "ERROR_KINDS", "LengthMix", "template_novelty"]

#: how a prediction is scored by :func:`error_kinds`, in this order
ERROR_KINDS = ("exact", "substituted", "stopped_early", "other")


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's correlation of the ranks, ties sharing their mean rank.
    ``nan`` when either side is constant (no ranking to correlate).

    Example:
        >>> spearman([0.0, 0.1, 0.2, 0.3], [90.0, 50.0, 60.0, 1.0])
        -0.8
        >>> spearman([0.0, 0.1, 0.2], [0.0, 0.0, 0.0])
        nan
    """
    import numpy as np

    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    if len(x) < 2:
        raise ValueError(f"a correlation needs at least 2 points, got {len(x)}")

    def ranks(values) -> np.ndarray:  # ties share the mean of their ranks
        _, inv, counts = np.unique(np.asarray(values, dtype=float), return_inverse=True, return_counts=True,
                                   equal_nan=False)
        return (np.cumsum(counts) - (counts - 1) / 2.0)[inv.reshape(-1)]

    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return round(float(np.corrcoef(rx, ry)[0, 1]), 12)


def subsample(ds: "Dataset", size: int, seed: int) -> "Dataset":
    """A seeded random ``size``-row subset of ``ds``, rows in input order (``0`` or ``size >= len``: all).

    Example:
        >>> from datasets import Dataset
        >>> list(subsample(Dataset.from_dict({"x": list(range(10))}), 3, seed=0)["x"])
        [2, 4, 6]
    """
    import numpy as np

    if not size or size >= ds.num_rows:
        return ds
    return ds.select(np.sort(np.random.default_rng(seed).permutation(ds.num_rows)[:size]))


def error_kinds(predictions: Sequence[str], references: Sequence[str]) -> dict[str, int]:
    """How the outputs are wrong: ``exact``; ``substituted`` (right length, some tokens replaced);
    ``stopped_early`` (a strict prefix of the reference); ``other``.

    Example:
        >>> error_kinds(["A B", "A C", "A", "B B B"], ["A B", "A B", "A B", "A B"])
        {'exact': 1, 'substituted': 1, 'stopped_early': 1, 'other': 1}
    """
    counts = dict.fromkeys(ERROR_KINDS, 0)
    for pred, ref in zip(predictions, references, strict=True):
        p, r = pred.split(), ref.split()
        kind = ("exact" if p == r else "substituted" if len(p) == len(r)
                else "stopped_early" if len(p) < len(r) and r[:len(p)] == p else "other")
        counts[kind] += 1
    return counts


@dataclass(frozen=True)
class LengthMix:
    """Bins of output length (words) and each bin's share of a reference set (the curve's pool):
    :meth:`standardize` scores a split at that mix of lengths, not its own (direct standardization),
    since the divergence search moves rows by their compounds and not their lengths.

    Example:
        >>> mix = LengthMix.of([1, 2, 2, 3, 5, 8, 8, 9], bins=2)
        >>> mix.cuts, mix.shares, mix.labels
        ((3,), (0.5, 0.5), ('<= 3', '4-9'))
        >>> # a test side of short rows, all right, and long ones, half right: 75 % at the reference's mix
        >>> value, per_bin = mix.standardize([True, True, True, False], [1, 2, 9, 9])
        >>> value, [(b["label"], b["rows"], b["exact_match"]) for b in per_bin]
        (75.0, [('<= 3', 2, 100.0), ('4-9', 2, 50.0)])
    """

    cuts: tuple  #: upper ends (inclusive) of every bin but the last, increasing
    shares: tuple  #: the reference's share of each bin (sum 1)
    longest: int = 0  #: the reference's longest length (the last bin's label)

    @classmethod
    def of(cls, lengths: Sequence[int], bins: int) -> "LengthMix":
        """``bins`` bins at the quantiles of ``lengths`` (fewer where lengths repeat), with their shares."""
        import numpy as np

        values = np.asarray(lengths, dtype=np.int64)
        if values.size == 0:
            raise ValueError("lengths: no rows to take a length mix from")
        if int(bins) < 1:
            raise ValueError(f"bins must be >= 1, got {bins}")
        cuts = np.unique(np.quantile(values, np.arange(1, bins) / bins, method="lower")).astype(np.int64)
        cuts = cuts[cuts < values.max()]  # a cut at the longest length would leave the last bin empty
        counts = np.bincount(np.searchsorted(cuts, values, side="left"), minlength=cuts.size + 1)
        return cls(tuple(int(c) for c in cuts), tuple(float(c) for c in counts / values.size), int(values.max()))

    @staticmethod
    def words(texts: Sequence[Any]) -> list[int]:
        """The length the mix bins by: words (whitespace runs) of each text.

        Example:
            >>> LengthMix.words(["I_JUMP I_JUMP", "I_WALK", ""])
            [2, 1, 0]
        """
        return [len(str(t).split()) for t in texts]

    @property
    def labels(self) -> tuple:
        """Each bin as a range of words: ``<= a``, ``a+1-b`` (or ``b`` alone), ..., ``c+1-longest``."""
        ends = list(self.cuts) + [self.longest]
        return (f"<= {ends[0]}",) + tuple(f"{b}" if a + 1 == b else f"{a + 1}-{b}" for a, b in zip(ends, ends[1:]))

    def standardize(self, correct: Sequence[bool], lengths: Sequence[int]) -> tuple[float, list[dict[str, Any]]]:
        """``(exact match % at the reference's mix, per-bin records)``: each bin's exact match weighed by
        the reference's share of it. Bins without rows here are left out and the other shares scaled
        up (their records say ``rows: 0``); ``nan`` when no row is given."""
        import numpy as np

        right, length = np.asarray(correct, dtype=bool), np.asarray(lengths, dtype=np.int64)
        if right.shape != length.shape:
            raise ValueError(f"correct and lengths must have the same length, got {right.size} and {length.size}")
        where = np.searchsorted(np.asarray(self.cuts, dtype=np.int64), length, side="left")
        per_bin, total, weight = [], 0.0, 0.0
        for b, (label, share) in enumerate(zip(self.labels, self.shares)):
            rows = int((where == b).sum())
            score = float(100.0 * right[where == b].mean()) if rows else None
            per_bin.append({"label": label, "reference_share": round(share, 6), "rows": rows, "exact_match": score})
            if rows:
                total, weight = total + share * score, weight + share
        return (round(total / weight, 6) if weight else float("nan")), per_bin


def template_novelty(train: Sequence[Any], test: Sequence[Any], correct: Sequence[bool],
                     language: str) -> dict[str, Any]:
    """The test rows whose abstract template (Oren et al. 2021) no training row has, and exact match
    (%) on them and on the rest (``None``: no such rows). D_C weighs compounds by their frequency, so a
    construct of a few rows can be absent from a training side at D_C near 0: this shows it.

    Example:
        >>> template_novelty(["walk twice", "run and jump"], ["jump twice", "look"], [True, False], "scan")
        {'rows': 1, 'share': 50.0, 'exact_match': 0.0, 'exact_match_seen': 100.0, 'templates': ['func']}
    """
    from ..structure import abstract_template

    if len(test) != len(correct):
        raise ValueError(f"test and correct must have the same length, got {len(test)} and {len(correct)}")
    seen = {abstract_template(str(t), language=language) for t in train}
    templates = [abstract_template(str(t), language=language) for t in test]
    new = [t not in seen for t in templates]
    right_new, right_old = ([c for c, n in zip(correct, new) if n == side] for side in (True, False))

    def score(rows: list) -> float | None:
        return round(100.0 * sum(rows) / len(rows), 6) if rows else None

    return {"rows": len(right_new), "share": round(100.0 * len(right_new) / max(len(new), 1), 6),
            "exact_match": score(right_new), "exact_match_seen": score(right_old),
            "templates": sorted({t for t, n in zip(templates, new) if n})[:20]}
