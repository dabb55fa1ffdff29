"""Repetition curricula (Zhou et al. 2023, section 5; ALGORITHMS.md §7) as a training order.

The first ``hold`` (20 %) of the optimizer steps draw their batches from an initial pool only;
the pool then grows linearly, in ranking order, until it holds every example at ``full_at``
(80 %) of the steps. Two initial pools:

* example repetition: a random 20 % of the examples (:meth:`RepetitionCurriculum.example_repetition`);
* primitive repetition: the examples whose primitives all lie in a random 20 % of the
  primitives (:meth:`RepetitionCurriculum.primitive_repetition`).

The mechanism of :mod:`hf_synthsample.curriculum`, shared with the cartography curricula (a ranking of rows + a pool size per step, batches
drawn uniformly without replacement from the pool; ``indices`` / ``batches`` / ``sampler``), so a
stock ``transformers.Trainer`` follows it without subclassing::

    cur = RepetitionCurriculum.example_repetition(len(train), batch_size=32, seed=0)
    trainer = Trainer(..., train_dataset=train.select(cur.indices(num_steps=1000)),
                      args=TrainingArguments(..., train_sampling_strategy="sequential",
                                             per_device_train_batch_size=32, num_train_epochs=1))

Example:
    >>> cur = RepetitionCurriculum.example_repetition(100, batch_size=4, seed=0)
    >>> cur.pool_sizes(10).tolist()
    [20, 20, 20, 33, 47, 60, 73, 87, 100, 100]
    >>> first = set(cur.ranking[:20].tolist())
    >>> set(cur.batches(10)[:2].reshape(-1).tolist()) <= first
    True
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..curriculum import GrowingPoolSchedule
from ..validation import check_float, check_int

__all__ = ["RepetitionCurriculum"]


class RepetitionCurriculum(GrowingPoolSchedule):
    """Batches over ``ranking`` whose first ``initial_size`` rows are the repeated initial pool.

    Args:
        ranking: row indices; the first ``initial_size`` are the initial pool, the rest join in
            this order.
        batch_size: examples per optimizer step.
        initial_size: size of the initial pool (``>= batch_size`` is enforced at each step).
        hold: fraction of the steps trained on the initial pool only.
        full_at: fraction of the steps after which the pool holds everything.
        seed: batch draws.
    """

    def __init__(self, ranking: Sequence[int], *, batch_size: int, initial_size: int, hold: float = 0.2,
                 full_at: float = 0.8, seed: int = 0):
        super().__init__(ranking, batch_size=batch_size, seed=seed)
        self.initial_size = check_int("initial_size", initial_size, min=0, max=len(ranking))
        self.hold = check_float("hold", hold, min=0.0, max=1.0)
        self.full_at = check_float("full_at", full_at, min=self.hold, max=1.0)

    @classmethod
    def example_repetition(cls, num_rows: int, *, batch_size: int, fraction: float = 0.2, seed: int = 0,
                           **kwargs) -> "RepetitionCurriculum":
        """Initial pool: a random ``fraction`` of the rows."""
        num_rows = check_int("num_rows", num_rows, min=1)
        fraction = check_float("fraction", fraction, min=0.0, max=1.0)
        ranking = np.random.default_rng(seed).permutation(num_rows)
        return cls(ranking, batch_size=batch_size, initial_size=int(round(fraction * num_rows)), seed=seed, **kwargs)

    @classmethod
    def primitive_repetition(cls, primitives: Sequence[Sequence[str]], *, batch_size: int, fraction: float = 0.2,
                             seed: int = 0, **kwargs) -> "RepetitionCurriculum":
        """Initial pool: rows whose primitives all lie in a random ``fraction`` of the primitives.

        ``primitives``: per row, its primitives (e.g. the ``atoms`` column, or SCAN's
        command words). ``chosen_primitives_`` keeps the drawn primitives.
        """
        fraction = check_float("fraction", fraction, min=0.0, max=1.0)
        vocab = sorted({p for row in primitives for p in row})
        if not vocab:
            raise ValueError("primitives: no row has any primitive")
        rng = np.random.default_rng(seed)
        chosen = set(rng.choice(vocab, size=int(round(fraction * len(vocab))), replace=False).tolist())
        inside = np.array([set(row) <= chosen for row in primitives], dtype=bool)
        perm = rng.permutation(len(inside))
        ranking = np.concatenate([perm[inside[perm]], perm[~inside[perm]]])
        out = cls(ranking, batch_size=batch_size, initial_size=int(inside.sum()), seed=seed, **kwargs)
        out.chosen_primitives_ = sorted(chosen)
        return out

    def pool_sizes(self, num_steps: int) -> np.ndarray:
        """Pool size at each step (never below ``batch_size``)."""
        num_steps = check_int("num_steps", num_steps, min=1)
        n = len(self.ranking)
        frac = np.arange(num_steps) / num_steps
        span = max(self.full_at - self.hold, 1e-12)
        grow = np.clip((frac - self.hold) / span, 0.0, 1.0)
        grow[frac >= self.full_at] = 1.0
        sizes = np.round(self.initial_size + grow * (n - self.initial_size)).astype(np.int64)
        return np.clip(sizes, self.batch_size, n)
