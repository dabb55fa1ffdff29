"""Curricula as a training order: the one mechanism behind the data-map curricula
(:mod:`hf_synthsample.cartography.curricula`) and the repetition curricula
(:mod:`hf_synthsample.sampling.repetition`).

A schedule turns a *ranking* of row indices (most preferred first) into ``num_steps`` batches of
``batch_size`` rows, one per optimizer step. ``indices(num_steps)`` is the flat order for
``dataset.select``: a stock ``transformers.Trainer`` follows it with
``TrainingArguments(train_sampling_strategy="sequential")``; ``sampler(num_steps)`` gives the
same order as a ``torch.utils.data.Sampler`` for hand-written loops.

Example:
    >>> class FirstHalf(GrowingPoolSchedule):
    ...     def pool_sizes(self, num_steps):
    ...         return np.full(num_steps, len(self.ranking) // 2)
    >>> order = FirstHalf([3, 1, 0, 2], batch_size=2, seed=0).indices(2)
    >>> sorted(set(order.tolist()))  # only the two best-ranked rows are ever drawn
    [1, 3]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .validation import check_int

__all__ = ["CurriculumSchedule", "GrowingPoolSchedule"]


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
    """A pool of the best-ranked rows that grows over the steps (subclasses give ``pool_sizes``);
    each batch is drawn uniformly without replacement from the current pool."""

    def pool_sizes(self, num_steps: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def batches(self, num_steps: int) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        pools = self.pool_sizes(num_steps)
        return np.stack([self.ranking[rng.choice(p, size=self.batch_size, replace=False)] for p in pools])
