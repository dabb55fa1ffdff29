"""Salient-variable homogenization (Shin et al. 2019, section 3 and App. B; ALGORITHMS.md section 1).

* **Generator-side** (:func:`homogenize_stream`, the builders' ``homogenize=``): rejection sampling;
  a draw with salient value ``v`` is kept with probability ``min(1, eps / p_hat(v))``, ``p_hat``
  the running frequency of ``v``, optionally started from a ``pilot`` sample (``0``: the paper's).
* **Pool-side** (:func:`homogenize_indices`, :class:`HomogenizeSampler`): ``n`` rows of a pool with
  the most uniform histogram (water-filling quotas, rows within a value drawn uniformly).

``mode="joint"`` homogenizes the tuple of values; ``"sequential"`` one variable after another
(nested rejection samplers, or quotas per value of the first variable, then the next, ...).

Example:
    >>> import random
    >>> rng = random.Random(0)
    >>> draw = lambda r: {"v": 0 if r.random() < 0.9 else 1}
    >>> rows, report = homogenize_stream(draw, 2000, variables=["v"], eps=0.1, rng=rng, pilot=1000)
    >>> round(sum(r["v"] for r in rows) / len(rows), 1)
    0.5
"""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from ..columns import column_array
from ..settings import Estimator
from ..validation import check_choice, check_columns, check_float, check_int
from .base import BaseSampler, _check_size, _raise_if_any, check_column_values
from .report import HomogenizationReport, joint_key, sorted_histogram
from .settings import MODES, HomogenizeSettings, StreamHomogenizeSettings

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["MODES", "StreamHomogenizer", "HomogenizerChain", "pilot_counts", "homogenize_stream",
           "StreamHomogenizeSampler", "homogenize_indices", "water_fill", "HomogenizeSampler"]


class StreamHomogenizer:
    """The acceptance rule of SampledHomogenize for one salient key (``initial_counts``: a pilot's)."""

    def __init__(self, eps: float, initial_counts: Mapping[Hashable, int] | None = None):
        self.eps = check_float("eps", eps, min=0, min_inclusive=False)
        self.counts: Counter = Counter(initial_counts or {})
        self.total = sum(self.counts.values())
        self.offered: Counter = Counter()
        self.accepted: Counter = Counter()

    def offer(self, value: Hashable, u: float) -> bool:
        """Count ``value`` as drawn and accept it iff ``u < eps / p_hat(value)`` (``u`` uniform in [0, 1))."""
        c = self.counts[value] + 1
        self.counts[value] = c
        self.total += 1
        self.offered[value] += 1
        # u < eps / (c / total), written without the division
        if u * c < self.eps * self.total:
            self.accepted[value] += 1
            return True
        return False


def _level_keys(variables: Sequence[str], mode: str) -> list[Callable[[Mapping], Hashable]]:
    if mode == "joint":
        if len(variables) == 1:
            (v,) = variables
            return [lambda row: row[v]]
        return [lambda row: tuple(row[v] for v in variables)]
    return [(lambda row, v=v: row[v]) for v in variables]


class HomogenizerChain:
    """Generator-side homogenization of rows (dicts): one :class:`StreamHomogenizer` on the tuple
    of values (``joint``), or one per variable, each offered what the previous ones kept (``sequential``)."""

    def __init__(self, variables: Sequence[str], eps: float, mode: str = "joint",
                 initial_counts: Sequence[Mapping[Hashable, int]] | None = None):
        s = StreamHomogenizeSettings(variables=variables, eps=eps, mode=mode)
        self.variables, self.mode, self.eps = s.variables, s.mode, s.eps
        self._keys = _level_keys(self.variables, self.mode)
        initial_counts = list(initial_counts or [None] * len(self._keys))
        if len(initial_counts) != len(self._keys):
            raise ValueError(f"initial_counts: need {len(self._keys)} pilot histograms, got {len(initial_counts)}")
        self.levels = [StreamHomogenizer(self.eps, c) for c in initial_counts]
        self.draws = 0
        self.before = {v: Counter() for v in self.variables}
        self.after = {v: Counter() for v in self.variables}

    def offer(self, row: Mapping[str, Any], rng: random.Random) -> bool:
        """Record a draw and say whether it is kept."""
        self.draws += 1
        for v in self.variables:
            self.before[v][row[v]] += 1
        for key, level in zip(self._keys, self.levels):
            if not level.offer(key(row), rng.random()):
                return False
        for v in self.variables:
            self.after[v][row[v]] += 1
        return True

    def stats(self) -> dict:
        """Mergeable counts (see :func:`merge_stats`)."""
        return {
            "draws": self.draws,
            "accepted": sum(self.levels[-1].accepted.values()),
            "before": {v: dict(c) for v, c in self.before.items()},
            "after": {v: dict(c) for v, c in self.after.items()},
            "offered": [dict(level.offered) for level in self.levels],
            "level_accepted": [dict(level.accepted) for level in self.levels],
        }


def merge_stats(stats: Sequence[Mapping]) -> dict:
    """Add up the :meth:`HomogenizerChain.stats` of several shards."""
    out: dict = {"draws": 0, "accepted": 0, "before": {}, "after": {}, "offered": [], "level_accepted": []}
    for s in stats:
        out["draws"] += s["draws"]
        out["accepted"] += s["accepted"]
        for part in ("before", "after"):
            for v, h in s[part].items():
                out[part].setdefault(v, Counter()).update(h)
        for part in ("offered", "level_accepted"):
            out[part] += [Counter() for _ in range(len(s[part]) - len(out[part]))]
            for level, h in zip(out[part], s[part]):
                level.update(h)
    return out


def theoretical_draws_per_accepted(offered: Sequence[Mapping[Hashable, int]], eps: float) -> float:
    """``prod_k 1 / sum_v min(P_k(v), eps)``, ``P_k`` the distribution offered to level ``k``."""
    out = 1.0
    for h in offered:
        total = sum(h.values())
        if total:
            out /= sum(min(c / total, eps) for c in h.values())
    return out


def report_from_stats(stats: Mapping, variables: Sequence[str], mode: str, eps: float) -> HomogenizationReport:
    """Turn merged chain statistics into a :class:`HomogenizationReport`."""
    before = {v: sorted_histogram(stats["before"][v]) for v in variables}
    after = {v: sorted_histogram(stats["after"].get(v, {})) for v in variables}
    if mode == "joint" and len(variables) > 1:
        # the joint level's offered histogram is exactly the joint histogram of all draws
        before[joint_key(variables)] = sorted_histogram(stats["offered"][0])
        after[joint_key(variables)] = sorted_histogram(stats["level_accepted"][0])
    return HomogenizationReport(variables=tuple(variables), mode=mode, method="generator", eps=eps, before=before,
                                after=after, draws=stats["draws"], accepted=stats["accepted"],
                                theoretical_draws_per_accepted=theoretical_draws_per_accepted(stats["offered"], eps))


def pilot_counts(draw: Callable[[random.Random], Mapping], rng: random.Random, size: int, variables: Sequence[str],
                 mode: str = "joint", eps: float = 0.01) -> list[dict]:
    """Histograms to start each level's running estimate from, from ``size`` draws of ``draw``
    (for ``sequential``, what the levels before each accept of them)."""
    check_int("size", size, min=0)
    chain = HomogenizerChain(variables, eps, mode)
    for _ in range(size):
        chain.offer(draw(rng), rng)
    return [dict(level.counts) for level in chain.levels]


def homogenize_stream(draw: Callable[[random.Random], Mapping], n: int, *, variables: Sequence[str] | str,
                      eps: float = 0.01, mode: str = "joint", rng: random.Random, pilot: int = 0,
                      initial_counts: Sequence[Mapping] | None = None) -> tuple[list, HomogenizationReport]:
    """``n`` rows of ``draw(rng)`` homogenized on ``variables`` (generator-side), and the
    :class:`HomogenizationReport`. See :class:`StreamHomogenizeSampler` (``initial_counts``
    overrides ``pilot``)."""
    sampler = StreamHomogenizeSampler(variables=variables, eps=eps, mode=mode, pilot=pilot)
    return sampler.sample(draw, n, rng=rng, initial_counts=initial_counts), sampler.report_


class StreamHomogenizeSampler(Estimator):
    """Generator-side homogenization as an estimator, configured by
    :class:`~hf_synthsample.sampling.settings.StreamHomogenizeSettings`; ``report_``: the last
    :class:`HomogenizationReport`.

    Example:
        >>> sampler = StreamHomogenizeSampler(variables="v", eps=0.1, pilot=1000, seed=0)
        >>> rows = sampler.sample(lambda r: {"v": 0 if r.random() < 0.9 else 1}, 2000)
        >>> round(sum(r["v"] for r in rows) / len(rows), 1), sampler.report_.accepted
        (0.5, 2000)
    """

    settings_class = StreamHomogenizeSettings

    def sample(self, draw: Callable[[random.Random], Mapping], n: int, *, rng: random.Random | None = None,
               initial_counts: Sequence[Mapping] | None = None) -> list:
        """``n`` rows of ``draw(rng)`` (``rng``: ``random.Random(seed)`` if not given; ``initial_counts``:
        starting histograms per level, overriding ``pilot``)."""
        s = self.settings
        n = check_int("n", n, min=0)
        rng = random.Random(s.seed) if rng is None else rng
        if initial_counts is None and s.pilot:
            initial_counts = pilot_counts(draw, rng, s.pilot, s.variables, s.mode, s.eps)
        chain = HomogenizerChain(s.variables, s.eps, s.mode, initial_counts)
        rows = []
        while len(rows) < n:
            row = draw(rng)
            if chain.offer(row, rng):
                rows.append(row)
        self.report_ = report_from_stats(merge_stats([chain.stats()]), s.variables, s.mode, s.eps)
        return rows


# ------------------------------------------------------------------------------------------
# Pool-side
# ------------------------------------------------------------------------------------------
def water_fill(counts: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Per-value quotas ``q <= counts`` summing to ``n`` with the most uniform histogram.

    Every value gets ``min(count, t)`` for the largest level ``t`` that fits; the remaining
    ``r < #{count > t}`` units go one each to values with ``count > t`` chosen by ``rng``.

    Example:
        >>> water_fill(np.array([1, 5, 10]), 9, np.random.default_rng(0)).tolist()
        [1, 4, 4]
    """
    counts = np.asarray(counts, dtype=np.int64)
    if n > counts.sum():
        raise ValueError(f"n={n} is larger than the pool ({int(counts.sum())} rows)")
    if n == 0 or len(counts) == 0:
        return np.zeros_like(counts)
    # binary search for the largest t with sum(min(counts, t)) <= n
    lo, hi = 0, int(counts.max())
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if np.minimum(counts, mid).sum() <= n:
            lo = mid
        else:
            hi = mid - 1
    quotas = np.minimum(counts, lo)
    rest = n - int(quotas.sum())
    if rest:
        open_values = np.flatnonzero(counts > lo)
        quotas[rng.choice(open_values, size=rest, replace=False)] += 1
    return quotas


def _encode_column(values: np.ndarray) -> tuple[np.ndarray, list]:
    """Integer codes (in sorted value order) and the value of each code."""
    uniques, codes = np.unique(values, return_inverse=True)
    return codes.reshape(-1).astype(np.int64), [u.item() if hasattr(u, "item") else u for u in uniques]


def _select_groups(codes: np.ndarray, quotas: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Positions (into ``codes``) of ``quotas[c]`` uniformly chosen rows of each code ``c``."""
    perm = rng.permutation(len(codes))
    order = perm[np.argsort(codes[perm], kind="stable")]
    sorted_codes = codes[order]
    starts = np.searchsorted(sorted_codes, np.arange(len(quotas)))
    rank = np.arange(len(codes)) - starts[sorted_codes]
    return order[rank < quotas[sorted_codes]]


def _bin(values: np.ndarray, bins: int | Sequence[float] | None) -> np.ndarray:
    if bins is None:
        return values
    if not np.issubdtype(values.dtype, np.number):
        raise TypeError("bins: only numeric columns can be binned")
    if isinstance(bins, (int, np.integer)):
        edges = np.linspace(values.min(), values.max(), check_int("bins", int(bins), min=1) + 1)[1:-1]
    else:
        edges = np.asarray(bins, dtype=float)
        if edges.ndim != 1 or np.any(np.diff(edges) <= 0):
            raise ValueError("bins: edges must be a strictly increasing 1-D sequence")
    return np.digitize(values, edges)


def homogenize_indices(columns: Mapping[str, Sequence] | Sequence, n: int | None = None, *, mode: str = "joint",
                       seed: int = 0, bins: int | Sequence[float] | Mapping[str, Any] | None = None
                       ) -> tuple[np.ndarray, HomogenizationReport]:
    """Sorted indices of ``n`` rows of ``columns`` (``{name: values}`` or one sequence) with the most
    uniform salient histogram, and a :class:`HomogenizationReport`.

    ``n=None``: the largest exactly uniform subset. ``bins`` (numeric columns): a count of
    equal-width bins or bin edges, or a mapping column -> either.
    """
    if not isinstance(columns, Mapping):
        columns = {"value": columns}
    if not columns:
        raise ValueError("columns: give at least one salient column")
    mode = check_choice("mode", mode, MODES)
    check_int("seed", seed, min=0)
    if isinstance(bins, Mapping) and any(c not in columns for c in bins):
        unknown = next(c for c in bins if c not in columns)
        raise ValueError(f"bins: {unknown!r} is not one of the columns; its keys must be among {list(columns)}")
    arrays = {name: np.asarray(vals) for name, vals in columns.items()}
    lengths = {len(a) for a in arrays.values()}
    if len(lengths) != 1:
        raise ValueError(f"columns: all columns must have the same length, got {sorted(lengths)}")
    (size,) = lengths
    if size == 0:
        raise ValueError("columns: the pool is empty: nothing to sample from")
    for name, a in arrays.items():
        a = arrays[name] = _scalar_values(name, a)
        if a.dtype.kind == "f":  # NaN is no level: np.unique would count every NaN as one value and balance it
            _raise_if_any(np.isnan(a), f"column {name!r}: ", "values are NaN", "drop or fill them first")
        per_col = bins.get(name) if isinstance(bins, Mapping) else bins
        arrays[name] = _bin(a, per_col)
    names = list(arrays)
    codes, values = zip(*(_encode_column(arrays[name]) for name in names))
    rng = np.random.default_rng(seed)

    levels = list(codes)
    if mode == "joint":  # one level: the tuple of values
        key_codes = np.zeros(size, dtype=np.int64)
        for c, vals in zip(codes, values):
            key_codes = key_codes * len(vals) + c
        levels = [_encode_column(key_codes)[0]]
    first_counts = np.bincount(levels[0])
    n = int(first_counts.min()) * len(first_counts) if n is None else check_int("n", n, min=0, max=size)
    chosen = np.sort(_sequential(levels, np.arange(size), n, rng))
    before = {name: _hist(vals, c) for name, vals, c in zip(names, values, codes)}
    after = {name: _hist(vals, c[chosen]) for name, vals, c in zip(names, values, codes)}
    if mode == "joint" and len(names) > 1:
        tuples = [tuple(values[j][codes[j][i]] for j in range(len(names))) for i in range(size)]
        before[joint_key(names)] = sorted_histogram(Counter(tuples))
        after[joint_key(names)] = sorted_histogram(Counter(tuples[i] for i in chosen))
    return chosen, HomogenizationReport(variables=tuple(names), mode=mode, method="pool", eps=None, before=before,
                                        after=after, accepted=len(chosen))


def _scalar_values(name: str, a: np.ndarray) -> np.ndarray:
    """``a`` as an array of one scalar kind; ``None`` and mixed or nested values are refused."""
    if a.ndim != 1:
        raise TypeError(f"column {name!r} must hold scalar values (int, float, str, bool), got an array of ndim {a.ndim}")
    if a.dtype != object:
        return a
    # None is no level: it would be counted and balanced like a value
    _raise_if_any(np.equal(a, None), f"column {name!r}: ", "values are None", "drop or fill them first")
    kinds = {type(x) for x in a.tolist()}
    if kinds <= {str}:
        return a.astype(str)
    if kinds <= {bool} or kinds <= {int} or kinds <= {int, float}:
        return np.asarray(a.tolist())
    raise TypeError(f"column {name!r} must hold scalar values of one kind (int, float, str or bool), "
                    f"got {sorted(k.__name__ for k in kinds)}")


def _hist(values: list, codes: np.ndarray) -> dict:
    counts = np.bincount(codes, minlength=len(values))
    return {v: int(c) for v, c in zip(values, counts) if c > 0}


def _sequential(codes: list[np.ndarray], rows: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Water-fill on ``codes[0]``; inside each of its values, recurse on the next column."""
    first, rest = codes[0], codes[1:]
    local = first[rows]
    present, local = np.unique(local, return_inverse=True)
    counts = np.bincount(local, minlength=len(present))
    quotas = water_fill(counts, n, rng)
    if not rest:
        return rows[_select_groups(local, quotas, rng)]
    out = [_sequential(rest, rows[local == g], int(q), rng) for g, q in enumerate(quotas) if q]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def _scalar_column(dataset: "Dataset", column: str) -> np.ndarray:
    from datasets import Value

    feature = dataset.features[column]
    if not isinstance(feature, Value):
        raise TypeError(
            f"columns: {column!r} has type {type(feature).__name__}; homogenization needs a scalar "
            f"(int, float, str, bool) column"
        )
    return column_array(dataset, column)


def _usable_rows(dataset: "Dataset", columns: Sequence[str], kind: str, missing: str) -> np.ndarray | None:
    """Positions of the rows whose ``columns`` all hold a value (``None``: every row)."""
    keep = None
    for c in columns:
        ok = check_column_values(dataset, c, kind=kind, missing=missing, name="columns")
        if ok is not None:
            keep = ok if keep is None else keep & ok
    if keep is None:
        return None
    rows = np.flatnonzero(keep)
    if not len(rows):
        raise ValueError(f"columns: every row has a missing value in {list(columns)}: nothing to sample from")
    return rows


class HomogenizeSampler(BaseSampler):
    """Pool-side homogenization of a ``Dataset`` on one or several of its columns.

    Settings: :class:`~hf_synthsample.sampling.settings.HomogenizeSettings` (``bins``: see
    :func:`homogenize_indices`). With ``missing="drop"`` rows with a missing value are never
    selected, nor counted by ``k=None`` and the report. ``report_``: the :class:`HomogenizationReport`.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"length": [2, 2, 2, 2, 2, 4, 4, 6]})
        >>> sampler = HomogenizeSampler("length", seed=0)
        >>> list(ds.select(sampler.indices(ds, 6))["length"])
        [2, 2, 2, 4, 4, 6]
        >>> round(sampler.report_.kl_after(), 3)  # (3/6, 2/6, 1/6) against uniform over 3 values
        0.087
    """

    settings_class = HomogenizeSettings
    positional = ("columns",)
    report_: HomogenizationReport | None = None

    def _indices(self, dataset: "Dataset", k: int | None) -> np.ndarray:
        check_columns(dataset, self.columns, name="columns")
        cols = {c: _scalar_column(dataset, c) for c in self.columns}
        rows = _usable_rows(dataset, self.columns, "scalar", self.missing)
        if rows is not None:
            cols = {c: v[rows] for c, v in cols.items()}
            _check_size(k, len(rows), f"without a missing value ({len(dataset) - len(rows)} left out by "
                        "missing='drop')")
        indices, self.report_ = homogenize_indices(cols, k, mode=self.mode, seed=self.seed, bins=self.bins)
        return indices if rows is None else rows[indices]
