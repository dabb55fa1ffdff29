"""Curricula as a training order (ALGORITHMS.md §6): one schedule mechanism behind the data-map
curricula (:class:`ExponentialPacing`, :class:`BinnedCurriculum`, :func:`curriculum_order`) and the
repetition curricula (:mod:`hf_synthsample.sampling.repetition`).

A schedule turns a *ranking* of row indices (most preferred first) into ``num_steps`` batches of
``batch_size`` rows, one per optimizer step; ``indices(num_steps)`` is the flat order for
``dataset.select`` (a stock Trainer follows it with ``train_sampling_strategy="sequential"`` and one
epoch) and ``sampler(num_steps)`` the same as a ``torch.utils.data.Sampler``.
:class:`ExponentialPacing` (Hacohen & Weinshall 2019) draws each batch from a pool of the best-ranked
rows that grows by ``growth`` per phase; :class:`BinnedCurriculum` (Zhang et al. 2019) unlocks one
more of ``num_bins`` bins every ``unlock_fraction * num_steps / num_bins`` steps and takes a random
length-sorted batch among the unlocked ones.

Example:
    >>> class FirstHalf(GrowingPoolSchedule):
    ...     def pool_sizes(self, num_steps):
    ...         return np.full(num_steps, len(self.ranking) // 2)
    >>> order = FirstHalf([3, 1, 0, 2], batch_size=2, seed=0).indices(2)
    >>> sorted(set(order.tolist()))  # only the two best-ranked rows are ever drawn
    [1, 3]
    >>> pacing = ExponentialPacing(list(range(100)), batch_size=2, seed=0)
    >>> pacing.pool_sizes(14)[:4].tolist()
    [4, 4, 8, 8]
    >>> set(pacing.indices(14)[:4].tolist()) <= {0, 1, 2, 3}  # the first 2 steps draw from the 4 best-ranked
    True
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .validation import check_choice, check_float, check_int

__all__ = ["CurriculumSchedule", "GrowingPoolSchedule", "ExponentialPacing", "BinnedCurriculum", "curriculum_order"]


class CurriculumSchedule:
    """Base class: a schedule of ``batch_size``-sized batches over a ranking of row indices."""

    def __init__(self, ranking: Sequence[int], *, batch_size: int, seed: int = 0):
        ranking = np.asarray(ranking, dtype=np.int64)
        if ranking.ndim != 1 or not len(ranking):
            raise ValueError("ranking must be a non-empty 1-D sequence of row indices")
        if len(np.unique(ranking)) != len(ranking):
            raise ValueError("ranking lists a row twice")
        self.ranking = ranking
        self.batch_size = check_int("batch_size", batch_size, min=1, max=len(ranking))
        self.seed = check_int("seed", seed, min=0)

    def batches(self, num_steps: int) -> np.ndarray:
        """``[num_steps, batch_size]`` row indices, one row per optimizer step."""
        raise NotImplementedError  # pragma: no cover

    def indices(self, num_steps: int) -> np.ndarray:
        """The flat order (``num_steps * batch_size`` row indices) for ``dataset.select``."""
        return self.batches(num_steps).reshape(-1)

    def sampler(self, num_steps: int):
        """The order as a ``torch.utils.data.Sampler``."""
        from torch.utils.data import Sampler

        order = self.indices(num_steps).tolist()

        class _Fixed(Sampler):
            def __iter__(self):
                return iter(order)

            def __len__(self):
                return len(order)

        return _Fixed()


class GrowingPoolSchedule(CurriculumSchedule):
    """Each batch drawn without replacement from a pool of the best-ranked rows of ``pool_sizes``."""

    def pool_sizes(self, num_steps: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def batches(self, num_steps: int) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        pools = self.pool_sizes(num_steps)
        return np.stack([self.ranking[rng.choice(p, size=self.batch_size, replace=False)] for p in pools])


class ExponentialPacing(GrowingPoolSchedule):
    """Exponential pacing: pool = ``start`` * ``growth``^phase of the ranked data (capped at all of it)."""

    def __init__(self, ranking: Sequence[int], *, batch_size: int, start: float = 0.04, growth: float = 1.9,
                 seed: int = 0):
        super().__init__(ranking, batch_size=batch_size, seed=seed)
        self.start = check_float("start", start, min=0.0, max=1.0, min_inclusive=False)
        self.growth = check_float("growth", growth, min=1.0, min_inclusive=False)

    @property
    def num_phases(self) -> int:
        """Phases until the pool holds all the data (4 % x 1.9: 7 phases)."""
        return int(math.ceil(math.log(1.0 / self.start) / math.log(self.growth) - 1e-12)) + 1

    def pool_sizes(self, num_steps: int) -> np.ndarray:
        """Pool size at each step (never below ``batch_size``)."""
        num_steps = check_int("num_steps", num_steps, min=1)
        n = len(self.ranking)
        phase = np.minimum(np.arange(num_steps) * self.num_phases // num_steps, self.num_phases - 1)
        frac = np.minimum(self.start * self.growth ** phase, 1.0)
        return np.maximum(np.ceil(frac * n - 1e-9).astype(np.int64), self.batch_size).clip(max=n)


class BinnedCurriculum(CurriculumSchedule):
    """The 10-bin schedule: bins of the ranking, length-sorted batches, one more bin every few steps."""

    def __init__(self, ranking: Sequence[int], *, batch_size: int, lengths: Sequence[int], num_bins: int = 10,
                 unlock_fraction: float = 0.5, seed: int = 0):
        super().__init__(ranking, batch_size=batch_size, seed=seed)
        self.num_bins = check_int("num_bins", num_bins, min=1, max=len(self.ranking))
        self.unlock_fraction = check_float("unlock_fraction", unlock_fraction, min=0.0, max=1.0, min_inclusive=False)
        lengths = np.asarray(lengths)
        if lengths.ndim != 1 or len(lengths) <= int(self.ranking.max()):
            raise ValueError(f"lengths must give the length of every row index in ranking (up to {int(self.ranking.max())})")
        self.lengths = lengths

    def bin_batches(self) -> list[np.ndarray]:
        """Per bin, its ``[k, batch_size]`` batches (length-sorted; the last one is completed from the bin's start)."""
        out = []
        for part in np.array_split(self.ranking, self.num_bins):
            # stable sort by length; ties keep rank order
            part = part[np.argsort(self.lengths[part], kind="stable")]
            k = math.ceil(len(part) / self.batch_size)
            padded = np.resize(part, k * self.batch_size)  # wraps around to fill the last batch
            out.append(padded.reshape(k, self.batch_size))
        return out

    def unlocked_bins(self, num_steps: int) -> np.ndarray:
        """How many bins are unlocked at each step (1 at the start, all after ``unlock_fraction``)."""
        num_steps = check_int("num_steps", num_steps, min=1)
        interval = self.unlock_fraction * num_steps / self.num_bins
        return np.minimum(1 + np.floor(np.arange(num_steps) / interval).astype(np.int64), self.num_bins)

    def batches(self, num_steps: int) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        per_bin = self.bin_batches()
        cum = np.cumsum([len(b) for b in per_bin])
        flat = np.concatenate(per_bin)
        unlocked = self.unlocked_bins(num_steps)
        picks = np.floor(rng.random(num_steps) * cum[unlocked - 1]).astype(np.int64)
        return flat[picks]


def curriculum_order(datamap, region: str, dataset, *, schedule: str = "exponential", num_steps: int,
                     batch_size: int, lengths: Sequence[int] | None = None, seed: int = 0,
                     id_column: str = "example_id", assume_id_order: bool = False, order: str | None = None,
                     **kwargs) -> np.ndarray:
    """The flat training order of a curriculum over ``datamap.ranking(region, order=order)``: rows of ``dataset``.

    ``region`` is a region (``"easy-to-learn"``: easy-to-hard) or a recorded measure ranked by
    ``order`` in its declared direction. ``schedule`` is ``"exponential"`` or ``"bins"`` (which
    needs ``lengths``, one per row of ``dataset``). Ids are mapped to rows as
    :meth:`DataMap.positions` does, so a shuffled or filtered ``dataset`` gets the right rows.

    Example (the 2 lowest-loss rows first, in a shuffled dataset):
        >>> import pyarrow as pa
        >>> from datasets import Dataset
        >>> from hf_synthsample.cartography import DataMap
        >>> dm = DataMap.from_dynamics(pa.table({"example_id": [0, 1, 2, 3], "epoch": [0] * 4,
        ...     "loss": [0.1, 2.0, 0.3, 1.0], "correct": [True, False, True, False]}), "loss")
        >>> train = Dataset.from_dict({"example_id": [3, 2, 1, 0]})
        >>> order = curriculum_order(dm, "loss", train, order="easiest-first", num_steps=1, batch_size=2,
        ...                          start=0.5, growth=2.0)
        >>> sorted(train.select(order)["example_id"])
        [0, 2]
    """
    check_choice("schedule", schedule, ("exponential", "bins"))
    ranking = datamap.positions(dataset, datamap.ranking(region, seed=seed, order=order), id_column=id_column,
                                assume_id_order=assume_id_order)
    if schedule == "exponential":
        return ExponentialPacing(ranking, batch_size=batch_size, seed=seed, **kwargs).indices(num_steps)
    if lengths is None:
        raise ValueError("schedule='bins' needs lengths= (one per row of dataset, e.g. target lengths)")
    if len(lengths) != len(dataset):
        raise ValueError(f"lengths must give one length per row of dataset ({len(dataset)}), got {len(lengths)}")
    return BinnedCurriculum(ranking, batch_size=batch_size, lengths=lengths, seed=seed, **kwargs).indices(num_steps)
