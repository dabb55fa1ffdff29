"""Repetition curricula (Zhou et al. 2023, section 5; ALGORITHMS.md §7) as a training order.

The first ``hold`` of the optimizer steps draw their batches from an initial pool only (a random
``fraction`` of the examples, or the examples whose primitives all lie in a random ``fraction`` of
the primitives); the pool then grows, in ranking order, until it holds every example at ``full_at``.
The batches come from :mod:`hf_synthsample.curriculum`: a stock ``transformers.Trainer`` follows
``train.select(cur.indices(num_steps))`` with ``train_sampling_strategy="sequential"`` (docs/guides/samplers.md).

Example:
    >>> cur = RepetitionCurriculum(batch_size=4, seed=0).fit(100)   # = .example_repetition(100, batch_size=4)
    >>> cur.pool_sizes(10).tolist()
    [20, 20, 20, 33, 47, 60, 73, 87, 100, 100]
    >>> first = set(cur.ranking_[:20].tolist())
    >>> set(cur.batches(10)[:2].reshape(-1).tolist()) <= first
    True
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..curriculum import GrowingPoolSchedule
from ..settings import Estimator
from ..validation import check_int
from .settings import RepetitionSettings

__all__ = ["RepetitionCurriculum"]


class RepetitionCurriculum(Estimator, GrowingPoolSchedule):
    """Batches over a ranking whose first ``initial_size_`` rows are the repeated initial pool.

    Configured by :class:`~hf_synthsample.sampling.settings.RepetitionSettings`; :meth:`fit` sets
    ``ranking_``, ``initial_size_`` and, for primitive repetition, ``chosen_primitives_``.

    Example:
        >>> prims = [["jump"], ["walk"], ["jump", "walk"], ["look"]]
        >>> cur = RepetitionCurriculum(batch_size=1, repeat="primitives", fraction=0.5, seed=0).fit(prims)
        >>> cur.chosen_primitives_, cur.initial_size_, cur.hold
        (['look', 'walk'], 2, 0.2)
    """

    settings_class = RepetitionSettings

    def fit(self, rows: Any) -> "RepetitionCurriculum":
        """Draw the initial pool and the ranking; returns ``self``. ``rows``: the number of rows (or the rows),
        or for ``repeat="primitives"`` per row its primitives (e.g. the ``atoms`` column)."""
        s = self.settings
        rng = np.random.default_rng(s.seed)
        self.chosen_primitives_ = None
        if s.repeat == "examples":
            n = check_int("rows", rows if isinstance(rows, (int, np.integer)) else len(rows), min=1)
            ranking, initial = rng.permutation(n), int(round(s.fraction * n))
        else:
            vocab = sorted({p for row in rows for p in row})
            if not vocab:
                raise ValueError("primitives: no row has any primitive")
            chosen = set(rng.choice(vocab, size=int(round(s.fraction * len(vocab))), replace=False).tolist())
            inside = np.array([set(row) <= chosen for row in rows], dtype=bool)
            perm = rng.permutation(len(inside))
            ranking, initial = np.concatenate([perm[inside[perm]], perm[~inside[perm]]]), int(inside.sum())
            self.chosen_primitives_ = sorted(chosen)
        check_int("batch_size", s.batch_size, max=len(ranking))
        self.ranking_, self.initial_size_ = ranking.astype(np.int64), initial
        return self

    @classmethod
    def example_repetition(cls, num_rows: int, *, batch_size: int, fraction: float = 0.2, seed: int = 0,
                           **kwargs) -> "RepetitionCurriculum":
        """Initial pool: a random ``fraction`` of the rows (``kwargs``: ``hold``, ``full_at``)."""
        return cls(batch_size=batch_size, fraction=fraction, seed=seed, **kwargs).fit(num_rows)

    @classmethod
    def primitive_repetition(cls, primitives: Sequence[Sequence[str]], *, batch_size: int, fraction: float = 0.2,
                             seed: int = 0, **kwargs) -> "RepetitionCurriculum":
        """Initial pool: rows whose ``primitives`` (per row) all lie in a random ``fraction`` of them."""
        return cls(batch_size=batch_size, repeat="primitives", fraction=fraction, seed=seed, **kwargs).fit(primitives)

    # the names the schedule (and earlier releases) read
    ranking = property(lambda self: self.ranking_, doc="``ranking_``")
    initial_size = property(lambda self: self.initial_size_, doc="``initial_size_``")

    def pool_sizes(self, num_steps: int) -> np.ndarray:
        """Pool size at each step (never below ``batch_size``)."""
        num_steps = check_int("num_steps", num_steps, min=1)
        if "ranking_" not in vars(self):  # batches, indices and sampler all start here
            raise ValueError(f"{type(self).__name__} is not fitted: call fit(rows) first")
        n = len(self.ranking)
        frac = np.arange(num_steps) / num_steps
        span = max(self.full_at - self.hold, 1e-12)
        grow = np.clip((frac - self.hold) / span, 0.0, 1.0)
        grow[frac >= self.full_at] = 1.0
        sizes = np.round(self.initial_size + grow * (n - self.initial_size)).astype(np.int64)
        return np.clip(sizes, self.batch_size, n)
