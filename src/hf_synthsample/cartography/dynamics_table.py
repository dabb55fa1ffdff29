"""Recorded dynamics -> a data map's arrays: :func:`settings_arrays` (what ``DataMap.from_dynamics``
computes), with every check (columns, metadata, duplicate rows, a complete window, NaN) first.

Example:
    >>> import pyarrow as pa
    >>> t = pa.table({"example_id": [0, 0, 1, 1], "epoch": [0, 1, 0, 1], "loss": [2.0, 1.0, 0.5, 0.1],
    ...               "correct": [False, True, True, True]})
    >>> arrays = settings_arrays(t, DataMapSettings(measure="loss"))
    >>> arrays["confidence"].tolist(), arrays["correctness"].tolist()
    ([-1.5, -0.3], [0.5, 1.0])
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ..logging import get_logger
from ..validation import check_choice, check_int
from .ids import id_codes
from .measures import MAP_MEASURES, MeasureInfo
from .settings import DataMapSettings

__all__ = ["settings_arrays"]

logger = get_logger("hf_synthsample.cartography.datamap")  # the messages users filter on


def _int_column(table, name: str, where: str) -> np.ndarray:
    """An integer column without missing values (ids and epochs must not be silently truncated)."""
    import pyarrow as pa

    col = table.column(name)
    if not pa.types.is_integer(col.type):
        raise TypeError(f"{where}: column {name!r} must hold integers, got {col.type}")
    if col.null_count:
        raise ValueError(f"{where}: column {name!r} has {col.null_count} missing values")
    out = col.to_numpy().astype(np.int64)
    if len(out) and out.min() < 0:
        raise ValueError(f"{where}: column {name!r} holds negative values (first: {int(out[out < 0][0])})")
    return out


def _correct_column(table, name: str, where: str) -> np.ndarray:
    """A correctness column as 0.0 / 1.0: booleans, or numbers all 0 or 1 (NaN and missing values refused)."""
    import pyarrow as pa

    col = table.column(name)
    if col.null_count:
        raise ValueError(f"{where}: column {name!r} has {col.null_count} missing values")
    if not (pa.types.is_boolean(col.type) or pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise TypeError(f"{where}: column {name!r} must hold booleans (exact match or not), got {col.type}")
    values = col.to_numpy(zero_copy_only=False).astype(np.float64)
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        raise ValueError(f"{where}: column {name!r} must hold booleans (or 0 / 1), but {int(bad.sum())} value(s) are "
                         f"not (first: {float(values[bad][0])!r} at row {int(np.flatnonzero(bad)[0])})")
    return values


def _id_array(table, where: str) -> np.ndarray:
    """The ``example_id`` column: integers >= 0 (``int64``) or strings (``str``), none missing."""
    import pyarrow as pa

    col = table.column("example_id")
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        if col.null_count:
            raise ValueError(f"{where}: column 'example_id' has {col.null_count} missing values")
        return np.asarray(col.to_pylist(), dtype=str)
    if not pa.types.is_integer(col.type):
        raise TypeError(f"{where}: column 'example_id' must hold integer or string example ids, got {col.type}")
    return _int_column(table, "example_id", where)


def _pass_table(dynamics: Any, where: str, source: str = "train") -> tuple[Any, dict | None]:
    """``(table, meta)``: the ``source`` pass of a dynamics folder or ``load_dynamics`` dict, or a table."""
    import pyarrow as pa

    if isinstance(dynamics, (str, os.PathLike)):
        from .store import load_dynamics

        dynamics = load_dynamics(dynamics)
    meta = None
    if isinstance(dynamics, dict):
        if "train" not in dynamics:
            raise ValueError(f"{where}: a dict of dynamics needs a 'train' table (from load_dynamics)")
        meta = dynamics.get("meta")
        dynamics = dynamics["train"] if source == "train" else dynamics.get("eval")
        if dynamics is None:
            raise ValueError("source='eval' but the dynamics hold no eval pass (use eval_pass=True when training)")
    if meta is None and isinstance(dynamics, pa.Table):  # a table of load_dynamics: the origin it carries
        from .store import table_origin

        origin = table_origin(dynamics)
        if origin is not None:
            return dynamics, {**origin, "origin_only": True}
    if not isinstance(dynamics, pa.Table):
        if not hasattr(dynamics, "columns"):
            raise TypeError(f"{where}: dynamics must be a dynamics folder, a load_dynamics() dict, a pyarrow.Table "
                            f"or a pandas.DataFrame, got {type(dynamics).__name__}")
        dynamics = pa.Table.from_pandas(dynamics, preserve_index=False)
    return dynamics, meta


def _coded_ids(table, where: str) -> tuple[np.ndarray | None, np.ndarray, Any]:
    """``(values, codes, name)`` of the ``example_id`` column (:func:`id_codes`); ``name(code)`` is the id."""
    values, codes = id_codes(_id_array(table, where))
    return values, codes, (lambda code: int(code)) if values is None else (lambda code: str(values[code]))


def _pair_keys(ids: np.ndarray, epoch: np.ndarray, where: str, name: Any) -> tuple[np.ndarray, int, int]:
    """``(keys, lo, span)``: the sorted ``ids * span + epoch - lo``; a pair recorded twice is an error."""
    lo = int(epoch.min())
    span = int(epoch.max()) - lo + 1
    key = np.sort(ids * span + (epoch - lo))
    twice = np.flatnonzero(key[1:] == key[:-1])
    if len(twice):
        k = int(key[twice[0]])
        raise ValueError(f"{where}: {len(twice)} (example_id, epoch) pairs are recorded twice (first: example id "
                         f"{name(k // span)!r}, epoch {k % span + lo}); dynamics hold one row per example and epoch")
    return key, lo, span


def _group_mean(inverse: np.ndarray, values: np.ndarray, ok: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group of ``inverse``: the mean of its ``ok`` values (NaN when none) and how many there are."""
    n = np.bincount(inverse, weights=ok, minlength=size)
    total = np.bincount(inverse, weights=np.where(ok, values, 0.0), minlength=size)
    return np.where(n > 0, total / np.maximum(n, 1), np.nan), n


def _check_meta(meta: dict, source: str, recorded: np.ndarray, examples: np.ndarray, where: str) -> None:
    """``cartography.json`` must describe the table it comes with."""
    from .store import DYNAMICS_FILE, EVAL_DYNAMICS_FILE, META_FILE

    data_file = DYNAMICS_FILE if source == "train" else EVAL_DYNAMICS_FILE
    listed = meta.get("epochs" if source == "train" else "eval_epochs")
    if listed is not None and sorted(int(e) for e in listed) != recorded.tolist():
        raise ValueError(
            f"{where}: {META_FILE} lists epochs {sorted(listed)} but {data_file} holds epochs {recorded.tolist()}; "
            f"the folder mixes files of different runs or a file is damaged"
        )
    num = meta.get("num_examples")
    if source == "train" and num is not None and int(num) != len(examples):
        raise ValueError(
            f"{where}: {META_FILE} lists {int(num)} examples but {data_file} holds {len(examples)} distinct example ids"
            + (f"; {int(num) - len(examples)} examples were never recorded (training stopped within the first "
               f"epoch?)" if int(num) > len(examples) else "")
        )


def _check_map_measure(info: MeasureInfo, available: Sequence[str], source: str, where: str) -> None:
    """The map's measure must be one these dynamics hold (the message says what is)."""
    if info.name in available:
        return
    if not available:
        raise ValueError(f"{where} ({source} pass): no per-epoch measure a data map can be built on "
                         f"(one of {list(MAP_MEASURES)}) is recorded")
    hint = (" (bleu is in the eval pass: source='eval')" if info.name == "bleu" and source == "train" else
            f"; record it with TrainingDynamicsCallback(measures=(..., {info.name!r}))")
    raise ValueError(f"measure {info.name!r} is not recorded in {where} ({source} pass); recorded: "
                     f"{list(available)}{hint}")


def _check_complete(ids: np.ndarray, epoch: np.ndarray, examples: np.ndarray, recorded: np.ndarray,
                    per_epoch: dict[int, int], min_epoch: int, max_epoch: int, where: str,
                    name: Any = int) -> None:
    """Every example must have a value at every epoch of the window (rows are unique per pair)."""
    problems = []
    for e in range(min_epoch, max_epoch + 1):
        n = int(per_epoch.get(e, 0))
        if n == len(examples):
            continue
        if n == 0:
            problems.append(f"epoch {e} was never recorded")
            continue
        missing = np.setdiff1d(examples, ids[epoch == e], assume_unique=True)
        problems.append(f"epoch {e} lacks {len(missing)} of {len(examples)} examples (first: example id {name(missing[0])!r})")
    if problems:
        full = [int(e) for e in recorded if per_epoch[e] == len(examples)]
        raise ValueError(
            f"{where}: the epoch window {min_epoch}..{max_epoch} is incomplete: " + "; ".join(problems)
            + ". A data map needs every example at every epoch of its window (a partial last epoch or a resume "
              f"that lost steps leaves gaps); choose min_epoch / max_epoch among the epochs recorded for every "
              f"example: {full}"
        )


def settings_arrays(dynamics: Any, settings: DataMapSettings) -> dict:
    """The keyword arguments of :class:`~hf_synthsample.cartography.DataMap` for ``dynamics`` and
    validated ``settings`` (the measure as its ``MeasureInfo``)."""
    info, source, nan_policy = settings.measure_info, settings.source, settings.nan_policy
    measure, min_epoch, max_epoch, correctness = info.name, settings.min_epoch, settings.max_epoch, settings.correctness
    where = f"dynamics {os.fspath(dynamics)!r}" if isinstance(dynamics, (str, os.PathLike)) else "dynamics"
    table, meta = _pass_table(dynamics, where, source)
    # a column present but empty is a measure that was not recorded (e.g. bleu in a file without decodes)
    available = [c for c in MAP_MEASURES if c in table.column_names
                 and table.column(c).null_count < table.num_rows
                 and not np.isnan(table.column(c).to_numpy(zero_copy_only=False).astype(np.float64)).all()]
    _check_map_measure(info, available, source, where)
    for col in ("example_id", "epoch"):
        if col not in table.column_names:
            raise ValueError(f"{where}: no column {col!r}; columns: {table.column_names}")
    if correctness is None:
        correctness = "exact_match" if "exact_match" in table.column_names and measure == "bleu" else "correct"
    check_choice("correctness", correctness, [c for c in ("correct", "exact_match") if c in table.column_names])
    id_values, ids, name = _coded_ids(table, where)  # string ids: their ranks, decoded at the end
    epoch = _int_column(table, "epoch", where)
    values = table.column(measure).to_numpy(zero_copy_only=False).astype(np.float64)  # null -> NaN
    correct = _correct_column(table, correctness, where)
    if not len(epoch):
        raise ValueError(f"{where}: no rows recorded")
    # one sort of (example_id, epoch) keys gives the examples, the duplicates and (bincount) the
    # rows per epoch: np.unique on each would sort four times
    key, lo, span = _pair_keys(ids, epoch, where, name)
    hi = lo + span - 1
    per_epoch = np.bincount(epoch - lo, minlength=span)
    recorded = np.flatnonzero(per_epoch) + lo
    key_ids = key // span
    examples = key_ids[np.r_[True, key_ids[1:] != key_ids[:-1]]]  # every example, whatever the epoch
    if isinstance(meta, dict) and not meta.get("origin_only"):  # a table alone may be a part the user cut
        _check_meta(meta, source, recorded, examples, where)
    min_epoch = lo if min_epoch is None else min_epoch
    max_epoch = hi if max_epoch is None else max_epoch
    check_int("min_epoch", min_epoch, min=lo, max=hi)
    check_int("max_epoch", max_epoch, min=min_epoch, max=hi)
    _check_complete(ids, epoch, examples, recorded, {int(e): int(per_epoch[e - lo]) for e in recorded},
                    min_epoch, max_epoch, where, name)
    window = (epoch >= min_epoch) & (epoch <= max_epoch)
    ids, epoch, values, correct = ids[window], epoch[window], values[window], correct[window]
    rows = np.flatnonzero(window)  # the table rows still in play (for the other measures' summaries)
    bad = ~np.isfinite(values)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        what = (f"{int(bad.sum())} value(s) of {measure!r} in epochs {min_epoch}..{max_epoch} are NaN or missing "
                f"({len(np.unique(ids[bad]))} example(s); first: example id {name(ids[first])!r}, "
                f"epoch {int(epoch[first])})")
        if nan_policy == "raise":
            raise ValueError(
                f"{where}: {what}. Pass nan_policy='omit' to average each example over its other epochs, or "
                f"nan_policy='drop' to leave those examples out of the map"
            )
        if nan_policy == "drop":
            keep_rows = ~np.isin(ids, ids[bad])
            ids, epoch, values, correct, rows = (a[keep_rows] for a in (ids, epoch, values, correct, rows))
            logger.warning(f"DataMap: {what}; nan_policy='drop' leaves those examples out")
        else:
            logger.warning(f"DataMap: {what}; nan_policy='omit' averages over the other epochs")
    uniq, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    ok = np.isfinite(values)
    mean, n_ok = _group_mean(inverse, values, ok, len(uniq))
    # population std (ddof 0), from deviations about the mean rather than E[x^2]-E[x]^2
    var = _group_mean(inverse, (values - mean[inverse]) ** 2, ok, len(uniq))[0]
    corr = np.bincount(inverse, weights=correct, minlength=len(uniq)) / counts
    keep = n_ok > 0
    if not keep.all():
        logger.warning(f"DataMap: {int((~keep).sum())} examples have no value of {measure!r} left; left out")
    if not keep.any():
        raise ValueError(f"{where}: no example has a value of {measure!r} in epochs {min_epoch}..{max_epoch}")
    epochs = [int(e) for e in recorded if min_epoch <= e <= max_epoch]
    scores, never = _window_scores(table, rows, ids, epoch, correct, uniq, inverse)
    # the confidence axis is oriented by the measure's declared direction: higher = easier
    confidence = info.confidence_sign * mean[keep]
    kept = uniq[keep] if id_values is None else id_values[uniq[keep]]
    fingerprints = (meta or {}).get("dataset_fingerprints") or ()
    num_examples = len(examples)
    if meta is not None and meta.get("origin_only") and meta.get("num_examples") is not None:
        num_examples = int(meta["num_examples"])  # the training set's rows, though the table may be cut
    return dict(example_ids=kept, confidence=confidence, variability=np.sqrt(var[keep]), correctness=corr[keep],
                measure=info, epochs=epochs, source=source, num_examples=num_examples,
                scores={k: v[keep] for k, v in scores.items()}, never_learned=never[keep],
                dataset_fingerprints=fingerprints, dataset_digests=(meta or {}).get("dataset_digests"),
                model=(meta or {}).get("model"))


def _window_scores(table, rows, ids, epoch, correct, uniq, inverse) -> tuple[dict, np.ndarray]:
    """Per example: the window mean of each recorded measure, forgetting events and never-learned flags."""
    from .measures import forgetting_events

    scores: dict[str, np.ndarray] = {}
    for col in MAP_MEASURES:  # the per-(example, epoch) columns
        if col not in table.column_names:
            continue
        v = table.column(col).to_numpy(zero_copy_only=False).astype(np.float64)[rows]
        if not np.isnan(v).all():  # else a measure that was not recorded (older files read back as NaN)
            scores[col] = _group_mean(inverse, v, ~np.isnan(v), len(uniq))[0]
    fid, events, never = forgetting_events(ids, epoch, correct > 0.5)
    assert np.array_equal(fid, uniq)
    scores["forgetting"] = events.astype(np.float64)
    return scores, never
