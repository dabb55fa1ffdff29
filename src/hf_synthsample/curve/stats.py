"""The figures of a curve that need no model: Spearman's rho, seeded row subsets, error kinds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["spearman", "subsample", "error_kinds", "ERROR_KINDS"]

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
