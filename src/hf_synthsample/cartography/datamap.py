"""Data maps from training dynamics: confidence, variability, correctness, regions, subsets.

Over a window of recorded epochs (``min_epoch`` .. ``max_epoch``, the convergence epoch, both
inclusive, 0-based as recorded), per example (ALGORITHMS.md §6):

* confidence  = mean of the measure over the window
* variability = population standard deviation (ddof 0) of the measure over the window
* correctness = fraction of the window's epochs with an exact greedy match

Regions rank the examples: ``hard-to-learn`` (lowest confidence first), ``easy-to-learn``
(highest confidence first), ``ambiguous`` (highest variability first) and ``random`` (a
seeded permutation, the usual baseline). Values equal to 10 decimals are ties, broken by example
id, ascending, so the same dynamics always give the same subset.

Example:
    >>> import pyarrow as pa
    >>> t = pa.table({"example_id": [0, 0, 1, 1, 2, 2], "epoch": [0, 1, 0, 1, 0, 1],
    ...               "inv_ppl": [0.1, 0.3, 0.9, 0.9, 0.2, 0.8], "correct": [False, False, True, True, False, True]})
    >>> dm = DataMap.from_dynamics(t, "inv_ppl")
    >>> dm.confidence.round(2).tolist(), dm.variability.round(2).tolist()
    ([0.2, 0.9, 0.5], [0.1, 0.0, 0.3])
    >>> dm.select("hard-to-learn", 1 / 3).tolist(), dm.select("ambiguous", 1 / 3).tolist()
    ([0], [2])
"""

from __future__ import annotations

import math
import os
from collections import Counter
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Sequence

import numpy as np

from ..atomic import save_figure_atomic
from ..validation import check_choice, check_float, check_int

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["DataMap", "REGIONS", "example_tokens", "parse_regions"]

REGIONS = ("hard-to-learn", "easy-to-learn", "ambiguous", "random")


def parse_regions(regions: str | Sequence[str]) -> tuple[str, ...]:
    """``"hard-to-learn+easy-to-learn"`` or a sequence of names -> a tuple of known region names."""
    if isinstance(regions, str):
        regions = tuple(r.strip() for r in regions.split("+"))
    if not isinstance(regions, (list, tuple)) or not regions:
        raise TypeError(f"region must be a region name or a sequence of them, got {regions!r}")
    for r in regions:
        check_choice("region", r, REGIONS)
    if len(set(regions)) != len(regions):
        raise ValueError(f"region names a region twice: {list(regions)}")
    return tuple(regions)


def example_tokens(dataset: "Dataset", columns: Sequence[str]) -> list[frozenset]:
    """Per row, the set of ``(column, token)`` pairs of ``columns`` (token lists or whitespace-split text).

    Token-id lists drop -100 (masked positions). Tokens are tagged by column so input and output
    vocabularies are covered separately.

    Example:
        >>> from datasets import Dataset
        >>> sorted(example_tokens(Dataset.from_dict({"src": ["a b"], "labels": [[5, -100]]}), ["src", "labels"])[0])
        [('labels', 5), ('src', 'a'), ('src', 'b')]
    """
    from ..columns import column_arrow
    from ..validation import check_columns

    check_columns(dataset, list(columns), name="oov_columns")
    out: list[set] = [set() for _ in range(len(dataset))]
    for col in columns:
        values = column_arrow(dataset, col).to_pylist()
        for i, v in enumerate(values):
            if v is None:
                continue
            toks = v.split() if isinstance(v, str) else [t for t in v if t != -100]
            out[i].update((col, t) for t in toks)
    return [frozenset(s) for s in out]


class DataMap:
    """Per-example confidence, variability and correctness over an epoch window.

    Build it with :meth:`from_dynamics`. Arrays are aligned with :attr:`example_ids` (ascending).
    """

    def __init__(self, example_ids, confidence, variability, correctness, *, measure: str,
                 epochs: Sequence[int], source: str = "train"):
        self.example_ids = np.asarray(example_ids, dtype=np.int64)
        self.confidence = np.asarray(confidence, dtype=np.float64)
        self.variability = np.asarray(variability, dtype=np.float64)
        self.correctness = np.asarray(correctness, dtype=np.float64)
        n = len(self.example_ids)
        if not (len(self.confidence) == len(self.variability) == len(self.correctness) == n):
            raise ValueError("example_ids, confidence, variability and correctness must have the same length")
        self.measure = measure
        self.epochs = tuple(int(e) for e in epochs)
        self.source = source

    def __len__(self) -> int:
        return len(self.example_ids)

    def __repr__(self) -> str:
        return f"DataMap({len(self)} examples, measure={self.measure!r}, source={self.source!r}, epochs={list(self.epochs)})"

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dynamics(
        cls,
        dynamics: Any,
        measure: str = "inv_ppl",
        *,
        min_epoch: int | None = None,
        max_epoch: int | None = None,
        source: str = "train",
        correctness: str | None = None,
    ) -> "DataMap":
        """A data map from recorded dynamics.

        Args:
            dynamics: a dynamics folder (written by ``CartographyCallback``), the dict of
                :func:`~hf_synthsample.cartography.load_dynamics`, or a table (``pyarrow.Table``
                / ``pandas.DataFrame``) with ``example_id``, ``epoch`` and the measure column.
            measure: ``"inv_ppl"``, ``"chia"`` or ``"bleu"`` (``bleu`` lives in the eval pass).
            min_epoch / max_epoch: the epoch window, inclusive (default: all recorded epochs).
            source: ``"train"`` (the training forward pass) or ``"eval"`` (the dropout-free pass).
            correctness: the boolean column counted as correct (default ``exact_match`` when the
                table has one, else ``correct``).
        """
        import pyarrow as pa

        check_choice("source", source, ("train", "eval"))
        if isinstance(dynamics, (str, os.PathLike)):
            from .store import load_dynamics

            dynamics = load_dynamics(dynamics)
        if isinstance(dynamics, dict) and "train" in dynamics:
            table = dynamics["train"] if source == "train" else dynamics.get("eval")
            if table is None:
                raise ValueError("source='eval' but the dynamics hold no eval pass (use eval_pass=True when training)")
        else:
            table = dynamics
        if not isinstance(table, pa.Table):
            table = pa.Table.from_pandas(table, preserve_index=False)
        available = [c for c in ("inv_ppl", "chia", "bleu") if c in table.column_names]
        check_choice("measure", measure, available)
        for col in ("example_id", "epoch"):
            if col not in table.column_names:
                raise ValueError(f"dynamics: no column {col!r}; columns: {table.column_names}")
        if correctness is None:
            correctness = "exact_match" if "exact_match" in table.column_names and measure == "bleu" else "correct"
        check_choice("correctness", correctness, [c for c in ("correct", "exact_match") if c in table.column_names])
        ids = table.column("example_id").to_numpy().astype(np.int64)
        epoch = table.column("epoch").to_numpy().astype(np.int64)
        values = table.column(measure).to_numpy(zero_copy_only=False).astype(np.float64)
        correct = table.column(correctness).to_numpy(zero_copy_only=False).astype(np.float64)
        recorded = np.unique(epoch)
        if not len(recorded):
            raise ValueError("dynamics: no rows recorded")
        lo, hi = int(recorded[0]), int(recorded[-1])
        if min_epoch is None:
            min_epoch = lo
        if max_epoch is None:
            max_epoch = hi
        check_int("min_epoch", min_epoch, min=lo, max=hi)
        check_int("max_epoch", max_epoch, min=min_epoch, max=hi)
        window = (epoch >= min_epoch) & (epoch <= max_epoch)
        ids, epoch, values, correct = ids[window], epoch[window], values[window], correct[window]
        key = np.stack([ids, epoch], axis=1)
        if len(np.unique(key, axis=0)) != len(key):
            raise ValueError("dynamics: an (example_id, epoch) pair is recorded twice")
        uniq, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
        ok = ~np.isnan(values)
        n_ok = np.bincount(inverse, weights=ok, minlength=len(uniq))
        v0 = np.where(ok, values, 0.0)
        mean = np.bincount(inverse, weights=v0, minlength=len(uniq)) / np.maximum(n_ok, 1)
        # population std (ddof 0), from deviations about the mean rather than E[x^2]-E[x]^2
        dev = np.where(ok, values - mean[inverse], 0.0)
        var = np.bincount(inverse, weights=dev * dev, minlength=len(uniq)) / np.maximum(n_ok, 1)
        corr = np.bincount(inverse, weights=correct, minlength=len(uniq)) / counts
        keep = n_ok > 0
        epochs = [int(e) for e in recorded if min_epoch <= e <= max_epoch]
        return cls(uniq[keep], mean[keep], np.sqrt(var[keep]), corr[keep], measure=measure, epochs=epochs,
                   source=source)

    # ------------------------------------------------------------------ rankings and subsets
    def ranking(self, region: str, *, seed: int = 0) -> np.ndarray:
        """Example ids in rank order for ``region`` (most typical of the region first)."""
        check_choice("region", region, REGIONS)
        ids = self.example_ids
        if region == "random":
            return ids[np.random.default_rng(seed).permutation(len(ids))]
        key = {"hard-to-learn": self.confidence, "easy-to-learn": -self.confidence,
               "ambiguous": -self.variability}[region]
        # values equal to 10 decimals are ties: float noise (0.1 vs 0.09999999999999998) must not
        # decide the order; ties go to the smaller example id (np.lexsort is stable)
        return ids[np.lexsort((ids, np.round(key, 10)))]

    def subset_size(self, fraction: float) -> int:
        """``round(fraction * len(self))`` (at least 1), the size every subset of that fraction has."""
        fraction = check_float("fraction", fraction, min=0.0, max=1.0, min_inclusive=False)
        return max(1, int(math.floor(fraction * len(self) + 0.5)))

    def select(
        self,
        region: str | Sequence[str],
        fraction: float,
        *,
        proportions: Sequence[float] | None = None,
        tokens: Sequence[Iterable[Hashable]] | None = None,
        seed: int = 0,
    ) -> np.ndarray:
        """Example ids (ascending) of a subset of ``fraction`` of the examples.

        Args:
            region: a region name, or several (``"hard-to-learn+easy-to-learn"`` or a list)
                for a combination.
            fraction: subset size as a fraction of the examples, in (0, 1].
            proportions: shares of the combined regions (default 2/3 + 1/3 for two regions,
                equal shares otherwise). Each region contributes its best-ranked examples not
                already taken.
            tokens: for OOV repair, the tokens of every example indexed by example id (see
                :func:`example_tokens`). Left-out examples that bring tokens missing from the
                subset are added in the first region's rank order, then as many of the
                lowest-ranked selected examples whose tokens all stay covered are dropped, so the
                size stays exact and every token of the full vocabulary is covered.
            seed: seed of the ``random`` region.
        """
        regions = parse_regions(region)
        n = self.subset_size(fraction)
        if proportions is None:
            proportions = (2 / 3, 1 / 3) if len(regions) == 2 else (1 / len(regions),) * len(regions)
        proportions = [check_float("proportions", p, min=0.0, max=1.0) for p in proportions]
        if len(proportions) != len(regions) or not math.isclose(sum(proportions), 1.0, abs_tol=1e-9):
            raise ValueError(f"proportions must give one share per region ({len(regions)}) summing to 1, got {proportions}")
        quotas = [int(math.floor(n * p + 0.5)) for p in proportions[:-1]]
        quotas.append(n - sum(quotas))
        if quotas[-1] < 0:
            raise ValueError(f"proportions {proportions} do not fit a subset of {n}")
        taken = np.zeros(int(self.example_ids.max()) + 1, dtype=bool)
        chosen: list[np.ndarray] = []
        for reg, q in zip(regions, quotas):
            rank = self.ranking(reg, seed=seed)
            free = rank[~taken[rank]][:q]
            taken[free] = True
            chosen.append(free)
        selected = np.concatenate(chosen)  # in selection rank order
        if tokens is not None:
            selected = self._oov_repair(selected, self.ranking(regions[0], seed=seed), tokens)
        return np.sort(selected)

    def _oov_repair(self, selected: np.ndarray, ranking: np.ndarray, tokens: Sequence[Iterable[Hashable]]) -> np.ndarray:
        if len(tokens) <= int(self.example_ids.max()):
            raise ValueError(
                f"tokens: need the tokens of every example id up to {int(self.example_ids.max())}, got {len(tokens)} rows"
            )
        toks = {int(i): frozenset(tokens[int(i)]) for i in self.example_ids}
        vocab = set().union(*toks.values()) if toks else set()
        count: Counter = Counter()
        for i in selected.tolist():
            count.update(toks[i])
        missing = vocab - count.keys()
        in_sel = set(selected.tolist())
        added: list[int] = []
        for i in ranking.tolist():
            if not missing:
                break
            if i in in_sel:
                continue
            new = toks[i] & missing
            if new:
                added.append(i)
                missing -= toks[i]
                count.update(toks[i])
        to_drop = len(added)
        dropped: set[int] = set()
        for i in selected[::-1].tolist():
            if to_drop == 0:
                break
            if all(count[t] > 1 for t in toks[i]):
                count.subtract(toks[i])
                dropped.add(i)
                to_drop -= 1
        if to_drop:
            raise ValueError(
                f"OOV repair: {len(selected)} examples cannot cover the {len(vocab)} tokens of the full vocabulary; "
                f"use a larger fraction"
            )
        keep = [i for i in selected.tolist() if i not in dropped]
        return np.asarray(keep + added, dtype=np.int64)

    def subset(self, dataset: "Dataset", region: str | Sequence[str], fraction: float, *,
               oov_columns: Sequence[str] | None = None, **kwargs) -> "Dataset":
        """The subset itself, ``dataset.select(ids)``; example ids are row numbers of ``dataset``.

        ``oov_columns`` turns on OOV repair with the tokens of those columns.
        """
        if len(dataset) <= int(self.example_ids.max()):
            raise ValueError(f"dataset has {len(dataset)} rows but the data map has example id {int(self.example_ids.max())}")
        tokens = example_tokens(dataset, oov_columns) if oov_columns else None
        return dataset.select(self.select(region, fraction, tokens=tokens, **kwargs))

    # ------------------------------------------------------------------ reporting
    def to_table(self):
        """The map as a ``pyarrow.Table`` (example_id, confidence, variability, correctness)."""
        import pyarrow as pa

        return pa.table({"example_id": self.example_ids, "confidence": self.confidence,
                         "variability": self.variability, "correctness": self.correctness})

    def plot(self, path: str | os.PathLike, *, sample_fraction: float | None = None, seed: int = 0,
             title: str | None = None) -> str:
        """Scatter plot (x variability, y confidence, colour correctness) saved as PNG; returns the path."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        idx = np.arange(len(self))
        if sample_fraction is not None:
            k = self.subset_size(sample_fraction)
            idx = np.sort(np.random.default_rng(seed).choice(idx, size=k, replace=False))
        fig, ax = plt.subplots(figsize=(6, 5), dpi=120)
        # correctness in 10 bins, as the seed paper plots it for many epochs
        corr = np.floor(self.correctness[idx] * 10).clip(0, 9) / 10
        sc = ax.scatter(self.variability[idx], self.confidence[idx], c=corr, cmap="coolwarm", s=6, alpha=0.7,
                        vmin=0, vmax=0.9)
        fig.colorbar(sc, ax=ax, label="correctness (10 bins)")
        ax.set_xlabel("variability")
        ax.set_ylabel(f"confidence ({self.measure})")
        ax.set_title(title or f"Data map: {len(idx)} examples, epochs {self.epochs[0]}-{self.epochs[-1]}")
        return save_figure_atomic(fig, path)

    def summary(self, fraction: float = 0.33) -> str:
        """A short text summary: sizes, ranges and the region cut-offs at ``fraction``."""
        k = self.subset_size(fraction)
        lines = [
            f"Data map: {len(self):,} examples, measure {self.measure} ({self.source} pass), "
            f"epochs {self.epochs[0]}..{self.epochs[-1]} ({len(self.epochs)} recorded)",
            f"  confidence  mean {self.confidence.mean():.3f}  min {self.confidence.min():.3f}  max {self.confidence.max():.3f}",
            f"  variability mean {self.variability.mean():.3f}  min {self.variability.min():.3f}  max {self.variability.max():.3f}",
            f"  correctness mean {self.correctness.mean():.3f}  never correct {np.mean(self.correctness == 0):.1%}  "
            f"always correct {np.mean(self.correctness == 1):.1%}",
        ]
        for region in ("hard-to-learn", "ambiguous", "easy-to-learn"):
            ids = self.ranking(region)[:k]
            pos = np.searchsorted(self.example_ids, ids)
            lines.append(
                f"  {region:14} ({fraction:.0%}, {k:,}): confidence {self.confidence[pos].mean():.3f}, "
                f"variability {self.variability[pos].mean():.3f}, correctness {self.correctness[pos].mean():.3f}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()
