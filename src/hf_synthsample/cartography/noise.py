"""Flagging mislabelled rows by rules that need no labels (docs/training-dynamics.md, "Finding
mislabelled rows"): from one run's own dynamics, :func:`fit_curve` (how far the model has got),
:func:`noise_window` (the epochs after most of the loss's fall; earlier ones rank rows by how easy
they are, not by whether they are wrong) and :func:`flag_noisy` (the hardest rows over that
window); :func:`add_canaries` / :func:`canary_recall` tell whether a run's flags can be trusted;
:func:`lexical_noise_scores` / :func:`flag_noisy_lexical` need no training at all (a word-to-word
table of the rows). Recall figures per model and data set: docs/benchmarks.md.

Example:
    >>> import pyarrow as pa
    >>> t = pa.table({"example_id": [0, 1, 2, 0, 1, 2, 0, 1, 2], "epoch": [0, 0, 0, 1, 1, 1, 2, 2, 2],
    ...               "loss": [2.0, 2.0, 2.0, 0.5, 0.5, 1.6, 0.1, 0.1, 1.5],
    ...               "margin_deficit": [5.0, 5.0, 5.0, 0.0, 0.0, 3.0, 0.0, 0.0, 2.0],
    ...               "correct": [False, False, False, True, True, False, True, True, False]})
    >>> fit_curve(t)["fitted"].round(3).tolist()
    [0.0, 0.667, 0.667]
    >>> noise_window(t), noise_window(t, loss_drop=0.5)   # mean loss 2.0, 0.87, 0.57
    ((2, 2), (1, 2))
    >>> flag_noisy(t, count=1).example_ids.tolist()
    [2]
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..settings import Estimator
from ..validation import check_float, check_int
from .datamap import DataMap, count_of
from .settings import LexicalNoiseSettings, LexicalSettings, NoiseSettings

__all__ = ["fit_curve", "noise_window", "flag_noisy", "NoiseFlags", "NoiseFlagger", "add_canaries", "canary_recall", "lexical_noise_scores",
           "flag_noisy_lexical", "LexicalNoiseFlagger"]


def _train_table(dynamics: Any, where: str):
    """The per-(example, epoch) training table of a dynamics folder, ``load_dynamics`` dict or table."""
    from .dynamics_table import _pass_table

    dynamics, _ = _pass_table(dynamics, where)
    for col in ("example_id", "epoch", "loss", "correct"):
        if col not in dynamics.column_names:
            raise ValueError(f"{where}: the dynamics have no column {col!r} (columns: {dynamics.column_names}); the "
                             f"noise recipe reads the training loss and correctness of every row and epoch")
    return dynamics


def fit_curve(dynamics: Any) -> dict[str, np.ndarray]:
    """Per complete epoch (every example recorded; labels not needed): ``epoch``, ``fitted`` (share
    of rows whose teacher-forced greedy decode equals their target) and ``loss`` (mean training loss).

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"example_id": [0, 1, 0, 1, 0], "epoch": [0, 0, 1, 1, 2], "loss": [1.0, 3.0, 0.5, 1.5, 0.1],
        ...               "correct": [False, False, True, False, True]})
        >>> {k: v.tolist() for k, v in fit_curve(t).items()}
        {'epoch': [0, 1], 'fitted': [0.0, 0.5], 'loss': [2.0, 1.0]}
    """
    from .dynamics_table import _coded_ids, _correct_column, _group_mean, _int_column, _pair_keys

    t = _train_table(dynamics, "fit_curve")
    if not t.num_rows:
        raise ValueError("fit_curve: the dynamics hold no rows")
    _, ids, name = _coded_ids(t, "fit_curve")
    epoch = _int_column(t, "epoch", "fit_curve")
    correct = _correct_column(t, "correct", "fit_curve")
    loss = t.column("loss").to_numpy(zero_copy_only=False).astype(np.float64)  # NaN: a row without gold tokens
    n = len(np.unique(ids))
    _pair_keys(ids, epoch, "fit_curve", name)  # a pair recorded twice would make its epoch look complete
    inf = np.flatnonzero(np.isinf(loss))  # NaN is a row without gold tokens; inf is a diverged step, not a value
    if len(inf):
        raise ValueError(f"fit_curve: {len(inf)} rows have an infinite loss (first: example id "
                         f"{name(ids[inf[0]])!r}, epoch {int(epoch[inf[0]])}); "
                         "training diverged there, so no mean loss can be read (lower the learning rate)")
    epochs, inverse, rows = np.unique(epoch, return_inverse=True, return_counts=True)
    mean_loss = _group_mean(inverse, loss, ~np.isnan(loss), len(epochs))[0]  # no valued row: NaN
    fitted = np.bincount(inverse, weights=correct) / rows
    full = rows == n
    if not full.any():
        raise ValueError(f"fit_curve: no epoch holds all {n} examples (epochs {epochs.tolist()} hold {rows.tolist()} rows)")
    return {"epoch": epochs[full], "fitted": fitted[full], "loss": mean_loss[full]}


def noise_window(dynamics: Any, *, loss_drop: float = 0.9) -> tuple[int, int]:
    """``(min_epoch, max_epoch)``: from the first epoch whose mean training loss has made
    ``loss_drop`` of its fall (from the first epoch's to the lowest recorded) to the last epoch.

    A loss that never falls keeps every epoch. Labels are not needed.

    Example:
        >>> import pyarrow as pa
        >>> loss = [3.0, 2.0, 1.5, 1.2, 1.1, 1.0]   # falls by 2.0; 90 % of it: 1.2 or below; half: 2.0
        >>> t = pa.table({"example_id": [0] * 6, "epoch": list(range(6)), "loss": loss, "correct": [False] * 6})
        >>> noise_window(t), noise_window(t, loss_drop=0.5)
        ((3, 5), (1, 5))
    """
    loss_drop = check_float("loss_drop", loss_drop, min=0.0, max=1.0, min_inclusive=False)
    curve = fit_curve(dynamics)
    loss, epochs = curve["loss"], curve["epoch"]
    if not np.isfinite(loss[0]):
        raise ValueError(
            f"noise_window: the first complete epoch ({int(epochs[0])}) has no finite training loss (every row's loss "
            f"is NaN or inf: the run diverged, or no row has a gold token), so the fall of the loss cannot be "
            f"measured; fit_curve(dynamics) shows the loss per epoch")
    first, low = loss[0], np.nanmin(loss)
    # a float tolerance: loss_drop=1 must reach the lowest epoch itself
    threshold = first - loss_drop * (first - low) + 1e-12 * max(1.0, abs(first))
    start = int(epochs[np.flatnonzero(loss <= threshold)[0]]) if first > low else int(epochs[0])
    return start, int(epochs[-1])


@dataclasses.dataclass(frozen=True)
class NoiseFlags:
    """What :func:`flag_noisy` found: the flagged ids and the label-free figures to judge them by."""

    #: ids of the flagged rows, hardest first
    example_ids: np.ndarray
    #: the measure and the epoch window (inclusive) it was summarised over
    measure: str
    window: tuple[int, int]
    #: fraction of rows fitted (teacher-forced exact match) at the last epoch of the window
    fitted: float
    #: mean training loss at the first and last epoch of the run
    first_loss: float
    last_loss: float
    #: whether the loss had stopped falling by the end (see :func:`flag_noisy`)
    plateaued: bool


def flag_noisy(dynamics: Any, *, fraction: float | None = None, count: int | None = None,
               measure: str = "margin_deficit", loss_drop: float = 0.9, min_gain: float = 0.02,
               patience: int = 3) -> NoiseFlags:
    """The rows most likely mislabelled: the hardest ``fraction`` (or ``count``) by ``measure``
    summarised over :func:`noise_window` (``loss_drop``); rows without a value there are left out.

    ``plateaued``: the mean training loss fell by less than ``min_gain`` (relative) in each of the
    last ``patience`` epochs (False: the model was still learning). The arguments are the fields of
    :class:`~hf_synthsample.cartography.settings.NoiseSettings`; :class:`NoiseFlagger` takes them too.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"example_id": [0, 1, 0, 1], "epoch": [0, 0, 1, 1], "loss": [2.0, 2.0, 0.1, 1.9],
        ...               "margin_deficit": [4.0, 4.0, 0.0, 3.0], "correct": [False, False, True, False]})
        >>> f = flag_noisy(t, fraction=0.5)
        >>> f.example_ids.tolist(), f.window, f.fitted, f.plateaued
        ([1], (1, 1), 0.5, False)
    """
    return NoiseFlagger(fraction=fraction, count=count, measure=measure, loss_drop=loss_drop, min_gain=min_gain,
                        patience=patience).flag(dynamics)


class NoiseFlagger(Estimator):
    """:func:`flag_noisy` as an estimator, configured by
    :class:`~hf_synthsample.cartography.settings.NoiseSettings`; ``flags_``: the last :class:`NoiseFlags`.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"example_id": [0, 1, 0, 1], "epoch": [0, 0, 1, 1], "loss": [2.0, 2.0, 0.1, 1.9],
        ...               "correct": [False, False, True, False]})
        >>> NoiseFlagger(count=1, measure="loss").flag(t).example_ids.tolist()
        [1]
    """

    settings_class = NoiseSettings

    def flag(self, dynamics: Any) -> NoiseFlags:
        """The flags of ``dynamics`` (a dynamics folder, ``load_dynamics`` dict or table); also in ``flags_``."""
        s = self.settings
        table = _train_table(dynamics, "flag_noisy")
        lo, hi = noise_window(table, loss_drop=s.loss_drop)
        curve = fit_curve(table)
        if not np.isfinite(curve["loss"][-1]):
            raise ValueError(f"flag_noisy: the last complete epoch ({int(curve['epoch'][-1])}) has no finite training "
                             f"loss (the run diverged?); its flags and fit figures would be NaN")
        dm = DataMap.from_dynamics(table, "loss", min_epoch=lo, max_epoch=hi, nan_policy="omit")
        # the measure's declared hard end first
        ids = dm.ranking(s.measure_info, order="hardest-first")[:count_of(s.fraction, s.count, len(dm))]
        loss = curve["loss"]
        tail = loss[-(s.patience + 1):]
        gains = (tail[:-1] - tail[1:]) / np.maximum(np.abs(tail[:-1]), 1e-12)
        plateaued = len(tail) == s.patience + 1 and bool(np.all(gains < s.min_gain))
        self.flags_ = NoiseFlags(example_ids=ids, measure=s.measure, window=(lo, hi), fitted=float(curve["fitted"][-1]),
                                 first_loss=float(loss[0]), last_loss=float(loss[-1]), plateaued=plateaued)
        return self.flags_


def add_canaries(dataset: Any, column: str, *, count: int, seed: int = 0, id_column: str = "example_id"):
    """``dataset`` with ``count`` canary rows appended, and their row positions.

    A canary is a copy of a random row (seeded) whose ``column`` holds another row's different
    value: a wrong row of a known position. Add them before :func:`add_example_ids`, train, then
    :func:`canary_recall` says which share of wrong rows the flags find (drop the canaries' ids
    before acting on the flags). ``count`` is at most half the rows; a few percent is the use.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"src": ["a", "b", "c", "d"], "tgt": ["A", "B", "C", "D"]})
        >>> out, canaries = add_canaries(ds, "tgt", count=2, seed=0)
        >>> len(out), canaries.tolist()
        (6, [4, 5])
        >>> [(r["src"], r["tgt"]) for r in out.select(canaries)]
        [('c', 'A'), ('d', 'A')]
    """
    from datasets import concatenate_datasets

    from ..validation import check_columns

    if not hasattr(dataset, "column_names") or not hasattr(dataset, "select"):
        raise TypeError(f"dataset must be a datasets.Dataset, got {type(dataset).__name__}")
    if not isinstance(column, str):
        raise TypeError(f"column must be a column name (str), got {column!r}")
    check_columns(dataset, [column], name="column")
    n = len(dataset)
    count = check_int("count", count, min=1, max=max(1, n // 2))
    seed = check_int("seed", seed, min=0)
    if id_column in dataset.column_names:
        raise ValueError(f"id_column: the dataset already has {id_column!r}; add canaries before add_example_ids "
                         f"(the canaries' ids are their positions)")
    values = dataset[column]
    nulls = sum(v is None for v in values)
    if nulls:
        raise ValueError(f"column {column!r} has {nulls} missing values; a canary needs a value to replace")
    rng = np.random.default_rng(seed)
    base = rng.choice(n, size=count, replace=False)
    donors = []
    for i in base:
        others = np.flatnonzero([v != values[i] for v in values])
        if not len(others):
            raise ValueError(f"column {column!r}: every row holds the same value, so no canary can be wrong")
        donors.append(int(rng.choice(others)))
    canaries = dataset.select(base.tolist()).map(lambda _, k: {column: values[donors[k]]}, with_indices=True)
    return concatenate_datasets([dataset, canaries]), np.arange(n, n + count, dtype=np.int64)


def canary_recall(flags: Any, canaries: Any) -> float:
    """The share of ``canaries`` (ids) among the flagged ids (a :class:`NoiseFlags` or ids).

    Example:
        >>> canary_recall([4, 9, 2], [9, 10])
        0.5
    """
    flagged = np.asarray(flags.example_ids if isinstance(flags, NoiseFlags) else flags)
    canaries = np.asarray(canaries)
    for name, v in (("flags", flagged), ("canaries", canaries)):
        if v.ndim != 1 or (len(v) and v.dtype.kind not in "iu"):
            raise TypeError(f"{name} must be a 1-D sequence of integer example ids, got {v.dtype} of shape {v.shape}")
    if not len(canaries):
        raise ValueError("canaries is empty: nothing to recall")
    return float(np.isin(canaries, flagged).mean())


# ------------------------------------------------------------------------------------------ lexical check
#: the largest dense translation table (source x target vocabulary) the lexical check builds: 512 MiB
_MAX_TABLE = 2 ** 26


def _token_rows(values: Any, name: str) -> list[list[str]]:
    """Rows of tokens: a string is split on whitespace, a list / tuple of strings is taken as tokens."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"{name} must be a sequence of rows (strings or lists of token strings), got "
                        f"{type(values).__name__}")
    if hasattr(values, "to_pylist"):  # a pyarrow column
        values = values.to_pylist()
    rows = []
    for i, v in enumerate(values):
        if isinstance(v, str):
            toks = v.split()
        elif isinstance(v, (list, tuple)) and all(isinstance(t, str) for t in v):
            toks = list(v)
        else:
            raise TypeError(f"{name}[{i}] must be a string or a list of token strings, got {v!r}")
        if not toks:
            raise ValueError(f"{name}[{i}] has no tokens; the lexical check needs a token on both sides of every row "
                             f"(drop or fill empty rows first)")
        rows.append(toks)
    return rows


def _model1(src: list[np.ndarray], tgt: list[np.ndarray], n_src: int, n_tgt: int, iterations: int,
            smoothing: float) -> np.ndarray:
    """IBM Model 1 table ``p(target token | source token)`` (rows: source tokens, the last one NULL) by EM."""
    # every (source position, target position) pair of every row, flat: one E-step is a few bincounts
    s_idx = np.concatenate([np.repeat(s, len(t)) for s, t in zip(src, tgt)])
    t_idx = np.concatenate([np.tile(t, len(s)) for s, t in zip(src, tgt)])
    # the target position each pair belongs to (its alignment sums to 1 over the source positions)
    offsets = np.cumsum([0] + [len(t) for t in tgt])
    group = np.concatenate([offsets[r] + np.tile(np.arange(len(t)), len(s)) for r, (s, t) in enumerate(zip(src, tgt))])
    table = np.full((n_src, n_tgt), 1.0 / n_tgt)
    for _ in range(iterations):
        p = table[s_idx, t_idx]
        p = p / np.bincount(group, weights=p)[group]
        counts = np.bincount(s_idx * n_tgt + t_idx, weights=p, minlength=n_src * n_tgt).reshape(n_src, n_tgt)
        counts += smoothing
        table = counts / counts.sum(axis=1, keepdims=True)
    return table


def _min_token_logp(from_rows: list[list[str]], to_rows: list[list[str]], iterations: int,
                    smoothing: float) -> np.ndarray:
    """Per row: the lowest ``log p(token | other side)`` over ``to_rows``' tokens (Model 1, NULL included)."""
    fv = {w: i for i, w in enumerate(sorted({w for r in from_rows for w in r}))}
    tv = {w: i for i, w in enumerate(sorted({w for r in to_rows for w in r}))}
    null = len(fv)
    if (null + 1) * len(tv) > _MAX_TABLE:
        raise ValueError(f"the lexical check's table would hold {null + 1} x {len(tv)} word pairs (at most "
                         f"{_MAX_TABLE} fit its dense table); it is meant for small vocabularies (commands, "
                         f"logical forms), not open-vocabulary text")
    src = [np.array([fv[w] for w in r] + [null]) for r in from_rows]
    tgt = [np.array([tv[w] for w in r]) for r in to_rows]
    table = _model1(src, tgt, null + 1, len(tv), iterations, smoothing)
    # p(token) = mean over the source positions (uniform alignment) of the table's probabilities
    return np.array([np.log(table[s][:, t].mean(axis=0)).min() for s, t in zip(src, tgt)])


def lexical_noise_scores(sources: Any, targets: Any, *, iterations: int = 10,
                         smoothing: float = 1e-3) -> dict[str, np.ndarray]:
    """Per row, how badly its two sides explain each other word by word; no model training, no labels.

    A lexical translation table (IBM Model 1, ``iterations`` EM steps, counts smoothed by
    ``smoothing``) in each direction gives every row ``forward`` (the lowest log-probability of a
    target token given the source) and ``backward`` (the reverse). ``score`` (higher = more likely
    wrong) is the hardness rank of the worse direction as a fraction of the rows in (0, 1] (ties
    share their mean rank); ``other`` that of the better one. Strings are split on whitespace;
    the dense table holds at most 2^26 word pairs (a ValueError beyond).

    Example (the last row has another row's target):
        >>> src = ["jump", "walk", "look", "jump twice", "walk twice", "look twice"] * 2 + ["walk twice"]
        >>> tgt = ["JUMP", "WALK", "LOOK", "JUMP JUMP", "WALK WALK", "LOOK LOOK"] * 2 + ["JUMP"]
        >>> s = lexical_noise_scores(src, tgt)
        >>> s["score"][:6].round(2).tolist(), float(s["score"][12])
        ([0.42, 0.42, 0.58, 0.58, 0.73, 0.88], 1.0)
        >>> s["forward"][[0, 12]].round(2).tolist()     # log p(JUMP | jump), log p(JUMP | walk twice)
        [-0.33, -1.02]
    """
    settings = LexicalSettings(iterations=iterations, smoothing=smoothing)  # validates them
    src, tgt = _token_rows(sources, "sources"), _token_rows(targets, "targets")
    if len(src) != len(tgt):
        raise ValueError(f"sources and targets must have the same number of rows, got {len(src)} and {len(tgt)}")
    if not src:
        raise ValueError("sources and targets hold no rows")
    forward = _min_token_logp(src, tgt, settings.iterations, settings.smoothing)
    backward = _min_token_logp(tgt, src, settings.iterations, settings.smoothing)
    n = len(src)
    hard_f, hard_b = _mean_ranks(-forward), _mean_ranks(-backward)  # lowest log-probability: rank n
    return {"forward": forward, "backward": backward, "score": np.maximum(hard_f, hard_b) / n,
            "other": np.minimum(hard_f, hard_b) / n}


def _mean_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``values`` ascending, ties given their mean rank."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return sums[inverse] / counts[inverse]


def flag_noisy_lexical(sources: Any, targets: Any, *, fraction: float | None = None, count: int | None = None,
                       iterations: int = 10, smoothing: float = 1e-3) -> np.ndarray:
    """Row positions of the rows most likely mislabelled by :func:`lexical_noise_scores`, hardest
    first (ties broken by the better direction's rank, then by position). The arguments are the
    fields of :class:`~hf_synthsample.cartography.settings.LexicalNoiseSettings`; give exactly one of
    ``fraction`` / ``count``. :class:`LexicalNoiseFlagger` takes them too.

    Example:
        >>> src = ["jump", "walk", "look", "jump twice", "walk twice", "look twice"] * 2 + ["walk twice"]
        >>> tgt = ["JUMP", "WALK", "LOOK", "JUMP JUMP", "WALK WALK", "LOOK LOOK"] * 2 + ["JUMP"]
        >>> flag_noisy_lexical(src, tgt, count=1).tolist(), flag_noisy_lexical(src, tgt, fraction=0.1).tolist()
        ([12], [12])
    """
    return LexicalNoiseFlagger(fraction=fraction, count=count, iterations=iterations,
                               smoothing=smoothing).flag(sources, targets)


class LexicalNoiseFlagger(Estimator):
    """:func:`flag_noisy_lexical` as an estimator, configured by
    :class:`~hf_synthsample.cartography.settings.LexicalNoiseSettings`; ``scores_``: the last
    :func:`lexical_noise_scores`, ``flags_``: the flagged row positions, hardest first.

    Example:
        >>> flagger = LexicalNoiseFlagger(count=1)
        >>> flagger.flag(["jump", "walk", "jump", "walk twice"], ["JUMP", "WALK", "JUMP", "JUMP"]).tolist()
        [3]
        >>> flagger.set_params(iterations=0)
        Traceback (most recent call last):
        ...
        ValueError: iterations must be >= 1, got 0
    """

    settings_class = LexicalNoiseSettings

    def flag(self, sources: Any, targets: Any) -> np.ndarray:
        """Positions of the flagged rows of ``sources`` / ``targets`` (as :func:`lexical_noise_scores` reads them)."""
        s = self.settings
        self.scores_ = lexical_noise_scores(sources, targets, iterations=s.iterations, smoothing=s.smoothing)
        n = len(self.scores_["score"])
        order = np.lexsort((np.arange(n), -self.scores_["other"], -self.scores_["score"]))
        self.flags_ = order[:count_of(s.fraction, s.count, n)].astype(np.int64)
        return self.flags_
