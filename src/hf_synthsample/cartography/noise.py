"""Flagging mislabelled rows from one run's training dynamics, by rules that need no labels.

A user who suspects label noise does not know which rows are wrong, so everything here is read
off the recorded dynamics of the run itself (docs/training-dynamics.md, "Finding mislabelled
rows"):

* :func:`fit_curve`: per complete epoch, the fraction of rows *fitted* (teacher-forced exact
  match, the recorded ``correct``) and the mean training loss: how far the model has got.
* :func:`noise_window`: the epochs to summarise: from the first epoch at which the mean training
  loss has made ``loss_drop`` (default 90 %) of its fall over the run, to the last epoch. Early
  epochs, when the model has learned nothing yet, rank rows by how easy their targets are, not by
  whether they are wrong.
* :func:`flag_noisy`: the ``fraction`` of rows hardest by ``measure`` over that window, with the
  fit figures beside them and ``plateaued``: whether the loss had stopped falling (by less than
  ``min_gain`` relatively per epoch over the last ``patience`` epochs). On 1,000 SCAN rows a run
  still learning flagged fewer wrong rows than a longer one (87 % at 20 epochs, 91-93 % at 40);
  on 300 rows longer training did not help (docs/benchmarks.md).
* :func:`add_canaries` / :func:`canary_recall`: whether a run's flags can be trusted is not in
  its dynamics (on 300 SCAN rows the same recipe finds 58 %, on 1,000 rows 87 %); a few rows made
  wrong on purpose before training, and the share of them flagged, tell.

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
import os
from typing import Any

import numpy as np

from ..validation import check_choice, check_float, check_int

__all__ = ["fit_curve", "noise_window", "flag_noisy", "NoiseFlags", "add_canaries", "canary_recall"]


def _train_table(dynamics: Any, where: str):
    """The per-(example, epoch) training table of a dynamics folder, ``load_dynamics`` dict or table."""
    import pyarrow as pa

    if isinstance(dynamics, (str, os.PathLike)):
        from .store import load_dynamics

        dynamics = load_dynamics(dynamics)
    if isinstance(dynamics, dict):
        if "train" not in dynamics:
            raise ValueError(f"{where}: a dict of dynamics needs a 'train' table (from load_dynamics)")
        dynamics = dynamics["train"]
    if not isinstance(dynamics, pa.Table):
        if not hasattr(dynamics, "columns"):
            raise TypeError(f"{where}: dynamics must be a dynamics folder, a load_dynamics() dict, a pyarrow.Table "
                            f"or a pandas.DataFrame, got {type(dynamics).__name__}")
        dynamics = pa.Table.from_pandas(dynamics, preserve_index=False)
    for col in ("example_id", "epoch", "loss", "correct"):
        if col not in dynamics.column_names:
            raise ValueError(f"{where}: the dynamics have no column {col!r} (columns: {dynamics.column_names}); the "
                             f"noise recipe reads the training loss and correctness of every row and epoch")
    return dynamics


def fit_curve(dynamics: Any) -> dict[str, np.ndarray]:
    """Per complete epoch (every example recorded): ``epoch``, ``fitted`` (fraction of rows whose
    teacher-forced greedy decode equals their target) and ``loss`` (mean training loss per row).

    Epochs some examples lack (a partial last epoch) are left out. Labels are not needed.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"example_id": [0, 1, 0, 1, 0], "epoch": [0, 0, 1, 1, 2], "loss": [1.0, 3.0, 0.5, 1.5, 0.1],
        ...               "correct": [False, False, True, False, True]})
        >>> {k: v.tolist() for k, v in fit_curve(t).items()}
        {'epoch': [0, 1], 'fitted': [0.0, 0.5], 'loss': [2.0, 1.0]}
    """
    from .datamap import _int_column

    t = _train_table(dynamics, "fit_curve")
    if not t.num_rows:
        raise ValueError("fit_curve: the dynamics hold no rows")
    ids = _int_column(t, "example_id", "fit_curve")
    epoch = _int_column(t, "epoch", "fit_curve")
    if t.column("correct").null_count:
        raise ValueError(f"fit_curve: column 'correct' has {t.column('correct').null_count} missing values")
    loss = t.column("loss").to_numpy(zero_copy_only=False).astype(np.float64)  # NaN: a row without gold tokens
    correct = t.column("correct").to_numpy(zero_copy_only=False).astype(np.float64)
    n = len(np.unique(ids))
    epochs, inverse, rows = np.unique(epoch, return_inverse=True, return_counts=True)
    ok = np.isfinite(loss)
    valued = np.bincount(inverse, weights=ok)
    with np.errstate(invalid="ignore", divide="ignore"):  # an epoch of rows without gold tokens: NaN
        mean_loss = np.where(valued > 0, np.bincount(inverse, weights=np.where(ok, loss, 0.0)) / valued, np.nan)
    fitted = np.bincount(inverse, weights=correct) / rows
    full = rows == n
    if not full.any():
        raise ValueError(f"fit_curve: no epoch holds all {n} examples (epochs {epochs.tolist()} hold {rows.tolist()} rows)")
    return {"epoch": epochs[full], "fitted": fitted[full], "loss": mean_loss[full]}


def noise_window(dynamics: Any, *, loss_drop: float = 0.9) -> tuple[int, int]:
    """``(min_epoch, max_epoch)``: from the first epoch whose mean training loss has made
    ``loss_drop`` of its fall (from the first epoch's to the lowest recorded) to the last epoch.

    ``loss_drop=1`` keeps only the epochs from the lowest loss on; a loss that never falls keeps
    every epoch. Labels are not needed.

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
    (``"margin_deficit"`` for short targets, ``"min_margin"`` for long ones: docs/benchmarks.md)
    summarised over :func:`noise_window` (``loss_drop``).

    ``plateaued`` is True when the mean training loss fell by less than ``min_gain`` (relative)
    in each of the last ``patience`` epochs; False means the model was still learning (on 1,000
    SCAN rows the flags improved while it did; on 300 rows they did not: docs/benchmarks.md).
    Rows without a value of ``measure`` in the window (no gold token) are left out. Give exactly
    one of ``fraction`` / ``count``.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"example_id": [0, 1, 0, 1], "epoch": [0, 0, 1, 1], "loss": [2.0, 2.0, 0.1, 1.9],
        ...               "margin_deficit": [4.0, 4.0, 0.0, 3.0], "correct": [False, False, True, False]})
        >>> f = flag_noisy(t, fraction=0.5)
        >>> f.example_ids.tolist(), f.window, f.fitted, f.plateaued
        ([1], (1, 1), 0.5, False)
    """
    from .datamap import DataMap
    from .measures import HARD_END

    if (fraction is None) == (count is None):
        raise ValueError("flag_noisy: give exactly one of fraction= (in (0, 1]) or count= (1..number of examples)")
    if fraction is not None:
        check_float("fraction", fraction, min=0.0, max=1.0, min_inclusive=False)
    else:
        check_int("count", count, min=1)
    check_float("loss_drop", loss_drop, min=0.0, max=1.0, min_inclusive=False)
    check_choice("measure", measure, [m for m in HARD_END if m != "confidence"])
    min_gain = check_float("min_gain", min_gain, min=0.0)
    patience = check_int("patience", patience, min=1)
    table = _train_table(dynamics, "flag_noisy")
    lo, hi = noise_window(table, loss_drop=loss_drop)
    curve = fit_curve(table)
    dm = DataMap.from_dynamics(table, "loss", min_epoch=lo, max_epoch=hi, nan_policy="omit")
    if fraction is not None:
        k = dm.subset_size(fraction)
    else:
        k = check_int("count", count, min=1, max=len(dm))
    ids = dm.ranking(measure, order="hardest-first")[:k]
    loss = curve["loss"]
    tail = loss[-(patience + 1):]
    gains = (tail[:-1] - tail[1:]) / np.maximum(np.abs(tail[:-1]), 1e-12)
    plateaued = len(tail) == patience + 1 and bool(np.all(gains < min_gain))
    return NoiseFlags(example_ids=ids, measure=measure, window=(lo, hi),
                      fitted=float(curve["fitted"][-1]),
                      first_loss=float(loss[0]), last_loss=float(loss[-1]), plateaued=plateaued)


def add_canaries(dataset: Any, column: str, *, count: int, seed: int = 0, id_column: str = "example_id"):
    """``dataset`` with ``count`` canary rows appended, and their row positions.

    A canary is a copy of a random row (distinct rows, seeded) whose ``column`` holds the value of
    another random row where that value differs: a wrong row of a known position, made the way
    ``benchmarks/bench_noise.py`` makes its noise. Add them before :func:`add_example_ids` (whose
    ids are the positions), train, then :func:`canary_recall` says which share of wrong rows the
    flags find; drop the canaries' ids from the flags before acting on them. ``count`` is at most
    half the rows (a few percent is the use: enough canaries for a recall, few enough not to
    change what the model learns).

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
    flagged = flags.example_ids if isinstance(flags, NoiseFlags) else flags
    flagged = np.asarray(flagged)
    canaries = np.asarray(canaries)
    for name, v in (("flags", flagged), ("canaries", canaries)):
        if v.ndim != 1 or (len(v) and v.dtype.kind not in "iu"):
            raise TypeError(f"{name} must be a 1-D sequence of integer example ids, got {v.dtype} of shape {v.shape}")
    if not len(canaries):
        raise ValueError("canaries is empty: nothing to recall")
    return float(np.isin(canaries, flagged).mean())
