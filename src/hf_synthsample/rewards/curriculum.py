"""Curricula for RL fine-tuning: levels of a salient variable, advanced on the running reward.

A :class:`RewardCurriculum` holds a pool of rows (a ``datasets.Dataset`` with a salient column,
e.g. Calculator's ``length`` or ``max_paren_depth``) cut into **levels**: the ordered values of the
column (``levels=None``), that many contiguous groups of them (``levels=3``) or bins between edges
(``levels=[10, 20]``: ``< 10``, ``[10, 20)``, ``>= 20``).

* **Homogenized within a level**, as the samplers do: each prompt draws a value of the current
  level uniformly, then a row with that value (uniformly, or, with ``uat=True``, in the order of a
  :class:`~hf_synthsample.sampling.UATSampler` draw over the rows with that value, so the templates
  of the level are covered first).
* **Advanced on the reward**: every reward observed (a batch mean) enters a window; when the
  window holds ``window`` observations made at this level and their mean reaches ``threshold``,
  the next level starts (its window empty). The last level is kept.
* **Usable with TRL's** ``GRPOTrainer``: :meth:`RewardCurriculum.dataset` is a
  ``datasets.IterableDataset`` that draws each prompt from the level current at the time (set
  ``GRPOConfig(max_steps=..., shuffle_dataset=False)``: a buffered shuffle would draw 1,000 prompts
  ahead); :meth:`RewardCurriculum.callback` is the ``TrainerCallback`` that feeds it the rewards.
  The rewards come from :meth:`RewardCurriculum.observe` when the reward function is wrapped with it
  (every generation batch, whatever ``logging_steps``), else from the trainer's logged ``reward``
  (the mean over the logging interval: set ``logging_steps=1``).
* **Deterministic for a seed**: level ``k`` draws from its own random stream (``seed``, ``k``), so
  the same rewards give the same prompts.

Example:
    >>> from datasets import Dataset
    >>> pool = Dataset.from_dict({"prompt": [f"p{i}" for i in range(12)], "depth": [0] * 8 + [1, 1, 2, 2]})
    >>> cur = RewardCurriculum(pool, column="depth", threshold=0.8, window=2, seed=0)
    >>> cur.levels_, cur.level
    ([(0,), (1,), (2,)], 0)
    >>> cur.record(0.9), cur.record(0.7)   # record returns the level: mean 0.8 over a full window, the next one
    (0, 1)
    >>> sorted({cur.draw()["depth"] for _ in range(20)})
    [1]
"""

from __future__ import annotations

import functools
import math
import weakref
from collections import Counter, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from ..settings import Settings, setting
from ..validation import check_columns, check_float, check_int
from ..structure.language import DEFAULT_LANGUAGE

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, IterableDataset

__all__ = ["CurriculumSettings", "RewardCurriculum", "CurriculumCallback"]


def _levels(name: str, value: Any) -> Any:
    """``None``, a count of levels (int >= 1), or bin edges (strictly increasing numbers)."""
    if value is None:
        return value
    if isinstance(value, bool):
        raise TypeError(f"{name} must be None, a count of levels (int >= 1) or bin edges, got {value!r}")
    if isinstance(value, (int, np.integer)):
        return check_int(name, int(value), min=1)
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be None, a count of levels (int >= 1) or bin edges, got {value!r}")
    edges = [check_float(name, v) for v in value]
    if not edges or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"{name}: bin edges must be a non-empty, strictly increasing sequence, got {list(value)}")
    return tuple(edges)


@dataclass(frozen=True)
class CurriculumSettings(Settings):
    """:class:`RewardCurriculum`: the salient column, its levels, the advance rule and the draws."""

    column: str = setting(help="the salient column whose values make the levels (easiest: the smallest values)")
    levels: Any = setting(None, help="None: one level per value; an int: that many contiguous groups of the sorted "
                                     "values; edges: bins [-inf, e1), [e1, e2), ..., [ek, inf)", kind="any",
                          check=_levels, cli="edges: set it from Python")
    threshold: float = setting(0.8, help="the running reward at which the next level starts")
    window: int = setting(10, help="rewards (batch means) the running reward is the mean of; a level lasts at least "
                                   "this many", min=1)
    descending: bool = setting(False, help="levels from the largest values to the smallest")
    uat: bool = setting(False, help="within each value of a level, draw rows in the order of a UAT sample "
                                    "(structural diversity) instead of uniformly")
    alpha: float = setting(-1.0, help="UAT template weight exponent (uat=True)", min=-1.0, max=0.0)
    program_column: str = setting("program", help="UAT: program column parsed for templates when the pool has no "
                                                  "template column")
    language: str = setting(DEFAULT_LANGUAGE, help="UAT: structure language of the programs (e.g. 'calculator')")
    template_column: str = setting("template", help="UAT: the template column, if the pool has one")
    seed: int = setting(0, help="random seed; same seed and same rewards, same prompts", min=0)


def _level_groups(values: np.ndarray, levels: Any, descending: bool) -> list[tuple]:
    """The ordered levels as tuples of the column's values."""
    uniques = sorted(set(values.tolist()))
    if levels is None:
        groups = [(v,) for v in uniques]
    elif isinstance(levels, int):
        if levels > len(uniques):
            raise ValueError(f"levels: {levels} levels asked for, but the column has only {len(uniques)} values")
        groups = [tuple(part.tolist()) for part in np.array_split(np.asarray(uniques, dtype=object), levels)]
    else:
        bins = np.digitize(np.asarray(uniques, dtype=float), levels)
        groups = [tuple(v for v, b in zip(uniques, bins) if b == k) for k in range(len(levels) + 1)]
        groups = [g for g in groups if g]  # an empty bin is no level
    return groups[::-1] if descending else groups


class RewardCurriculum:
    """A curriculum over the levels of a salient column of ``dataset``, advanced on the running reward.

    ``RewardCurriculum(dataset, settings=None, **params)`` (params: the fields of
    :class:`CurriculumSettings`, overriding ``settings``). State: ``level`` (index into ``levels_``),
    ``history_`` (``(observations, level)`` at each advance), ``counts_`` (draws per value).
    """

    def __init__(self, dataset: "Dataset", settings: CurriculumSettings | None = None, /, **params: Any):
        if settings is None:
            settings = CurriculumSettings(**params)
        elif not isinstance(settings, CurriculumSettings):
            raise TypeError(f"settings must be a CurriculumSettings, got {type(settings).__name__}")
        elif params:
            settings = settings.replace(**params)
        self.settings = s = settings
        check_columns(dataset, [s.column], name="column")
        if not len(dataset):
            raise ValueError("dataset: the pool is empty: nothing to draw prompts from")
        self.dataset_ = dataset
        values = np.asarray(dataset[s.column])
        if values.dtype == object and any(v is None for v in values.tolist()):
            raise ValueError(f"column {s.column!r}: some values are None; drop or fill them first")
        self.levels_: list[tuple] = _level_groups(values, s.levels, s.descending)
        # rows of each value, in pool order
        order = np.argsort(values, kind="stable")
        sorted_values = values[order]
        self._rows: dict[Any, np.ndarray] = {}
        for v in sorted(set(values.tolist())):
            lo, hi = np.searchsorted(sorted_values, v, "left"), np.searchsorted(sorted_values, v, "right")
            self._rows[v] = order[lo:hi]
        self.level = 0
        self.history_: list[tuple[int, int]] = []
        self.counts_: Counter = Counter()
        self.observations_ = 0
        self._window: deque = deque(maxlen=s.window)
        self._rngs: dict[int, np.random.Generator] = {}
        self._uat: dict[Any, tuple[np.ndarray, int]] = {}  # value -> (UAT order of its rows, next position)
        self._observed_by_function = False

    # ------------------------------------------------------------------ levels and rewards
    @property
    def num_levels(self) -> int:
        return len(self.levels_)

    @property
    def values(self) -> tuple:
        """The column values of the current level."""
        return self.levels_[self.level]

    @property
    def running_reward(self) -> float:
        """Mean of the rewards in the window at this level (NaN before the first)."""
        return float(np.mean(self._window)) if self._window else math.nan

    def record(self, reward: float | Sequence[float]) -> int:
        """Observe one reward (a number: a batch mean; a sequence: its mean, NaN/None left out) and advance
        if the full window's mean reaches ``threshold``. Returns the current level."""
        if not isinstance(reward, (int, float, np.floating, np.integer)):
            vals = [float(r) for r in reward if r is not None and not math.isnan(float(r))]
            if not vals:
                return self.level
            reward = float(np.mean(vals))
        reward = float(reward)
        if math.isnan(reward):
            return self.level
        self.observations_ += 1
        self._window.append(reward)
        s = self.settings
        if (self.level + 1 < self.num_levels and len(self._window) == s.window
                and self.running_reward >= s.threshold):
            self.level += 1
            self._window.clear()
            self.history_.append((self.observations_, self.level))
        return self.level

    def observe(self, reward_function: Callable) -> Callable:
        """``reward_function`` wrapped to record the mean of every batch of rewards it returns (pass it as
        ``reward_funcs=``; the callback then leaves the logged reward alone)."""
        curriculum = self

        def observed(*args, **kwargs):
            rewards = reward_function(*args, **kwargs)
            curriculum._observed_by_function = True
            curriculum.record(rewards)
            return rewards

        observed.__name__ = getattr(reward_function, "__name__", type(reward_function).__name__)
        observed.__doc__ = getattr(reward_function, "__doc__", None)
        return observed

    # ------------------------------------------------------------------ drawing
    def _rng(self, level: int) -> np.random.Generator:
        if level not in self._rngs:
            self._rngs[level] = np.random.default_rng([self.settings.seed, level])
        return self._rngs[level]

    def _uat_next(self, value: Any, rng: np.random.Generator) -> int:
        """The next row of ``value`` in UAT order (a fresh UAT draw once all its rows were drawn)."""
        order, pos = self._uat.get(value, (None, 0))
        if order is None or pos >= len(order):
            from ..sampling import UATSampler

            s = self.settings
            rows = self._rows[value]
            sampler = UATSampler(alpha=s.alpha, seed=int(rng.integers(2**31)), program_column=s.program_column,
                                 language=s.language, template_column=s.template_column)
            sampler.indices(self.dataset_.select(rows), len(rows))
            order, pos = rows[sampler.order_], 0
        self._uat[value] = (order, pos + 1)
        return int(order[pos])

    def draw_index(self) -> int:
        """The pool index of the next prompt: a value of the current level uniformly, then one of its rows."""
        rng = self._rng(self.level)
        values = self.values
        value = values[int(rng.integers(len(values)))]
        self.counts_[value] += 1
        if self.settings.uat:
            return self._uat_next(value, rng)
        rows = self._rows[value]
        return int(rows[int(rng.integers(len(rows)))])

    def draw(self) -> dict:
        """The next row (a dict of the pool's columns)."""
        return self.dataset_[self.draw_index()]

    def __iter__(self) -> Iterator[dict]:
        while True:
            yield self.draw()

    def dataset(self) -> "IterableDataset":
        """An endless ``datasets.IterableDataset`` of rows drawn from the current level at each step (with the
        pool's features), for ``GRPOTrainer(train_dataset=...)``."""
        from datasets import IterableDataset

        return IterableDataset.from_generator(_generate, features=self.dataset_.features,
                                              gen_kwargs={"curriculum": _Handle(self)})

    def callback(self):
        """The ``TrainerCallback`` feeding the logged rewards to this curriculum."""
        return _callback_class()(self)

    def state_dict(self) -> dict:
        return {"level": self.level, "history": list(self.history_), "observations": self.observations_,
                "window": list(self._window), "counts": dict(self.counts_)}

    def __repr__(self) -> str:
        return (f"RewardCurriculum(column={self.settings.column!r}, level={self.level}/{self.num_levels - 1}, "
                f"values={self.values}, running_reward={self.running_reward:.3f})")


class _Handle:
    """Holds the curriculum for ``from_generator``: copies and pickles (``datasets`` hashes and may copy
    ``gen_kwargs``) refer to the same live curriculum instead of copying its state."""

    def __init__(self, curriculum: RewardCurriculum):
        self.curriculum = curriculum
        _LIVE[id(curriculum)] = curriculum

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_handle_of, (id(self.curriculum),))


_LIVE: "weakref.WeakValueDictionary[int, RewardCurriculum]" = weakref.WeakValueDictionary()


def _handle_of(key: int) -> _Handle:
    return _Handle(_LIVE[key])


def _generate(curriculum: _Handle):
    yield from curriculum.curriculum


@functools.lru_cache(maxsize=None)
def _callback_class() -> type:
    """:class:`CurriculumCallback`, made on first use (``transformers`` is imported then, not with this module)."""
    from transformers import TrainerCallback

    class CurriculumCallback(TrainerCallback):
        """Feeds a :class:`RewardCurriculum` the ``reward`` the trainer logs (unless its reward function was
        wrapped by :meth:`RewardCurriculum.observe`), and refuses a shuffled iterable dataset."""

        def __init__(self, curriculum: RewardCurriculum, key: str = "reward"):
            self.curriculum = curriculum
            self.key = key

        def on_train_begin(self, args, state, control, **kwargs):
            if getattr(args, "shuffle_dataset", False):
                raise ValueError("RewardCurriculum: set GRPOConfig(shuffle_dataset=False); its dataset already draws "
                                 "at random, and a buffered shuffle would draw 1,000 prompts ahead of the current level")
            return control

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and not self.curriculum._observed_by_function and logs.get(self.key) is not None:
                self.curriculum.record(float(logs[self.key]))
            return control

    CurriculumCallback.__module__ = __name__
    CurriculumCallback.__qualname__ = "CurriculumCallback"
    return CurriculumCallback


def __getattr__(name: str):
    if name == "CurriculumCallback":
        return _callback_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
