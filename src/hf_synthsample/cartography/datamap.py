"""Data maps from training dynamics: confidence, variability, correctness, regions, subsets.

Over a window of recorded epochs (``min_epoch`` .. ``max_epoch``, the convergence epoch, both
inclusive, 0-based as recorded), per example (ALGORITHMS.md §6):

* confidence  = mean of the measure over the window, **oriented so that higher = easier**: the
  mean itself for a measure whose high end is confident (``inv_ppl``, ``chia``, ``aum``,
  ``min_margin``, ``bleu``), its negation for one whose high end is hard (``loss``, ``el2n``,
  ``margin_deficit``): a map on ``loss`` has confidence ``−mean loss``. The direction is
  declared once, in :data:`~hf_synthsample.cartography.measures.MEASURE_INFO`; the plot, the
  HTML map and the summary name the axis (``DataMap.confidence_label``).
* variability = population standard deviation (ddof 0) of the measure over the window
* correctness = fraction of the window's epochs with an exact greedy match

Regions rank the examples: ``hard-to-learn`` (lowest confidence first), ``easy-to-learn``
(highest confidence first), ``ambiguous`` (highest variability first) and ``random`` (a
seeded permutation, the usual baseline). So a map on ``loss`` and one on ``inv_ppl`` call the
same rows hard-to-learn (the highest losses). Values equal to 10 decimals are ties, broken by
example id, ascending, so the same dynamics always give the same subset.

Every other recorded measure is summarised over the same window in :attr:`DataMap.scores`
(``inv_ppl``, ``chia``, ``aum``, ``el2n``, ``loss``, ``bleu``: the mean over the window's epochs;
``forgetting``: forgetting events counted from ``correct``, with :attr:`DataMap.never_learned`
flagging examples never correct, which rank as the most forgotten) and can rank and select:
``dm.ranking("aum")``, ``dm.select_by("el2n", fraction=0.15)``: hardest first by default, i.e.
lowest ``aum`` and highest ``el2n`` (docs/training-dynamics.md).

Example:
    >>> import pyarrow as pa
    >>> t = pa.table({"example_id": [0, 0, 1, 1, 2, 2], "epoch": [0, 1, 0, 1, 0, 1],
    ...               "inv_ppl": [0.1, 0.3, 0.9, 0.9, 0.2, 0.8], "correct": [False, False, True, True, False, True]})
    >>> dm = DataMap.from_dynamics(t, "inv_ppl")
    >>> dm.confidence.round(2).tolist(), dm.variability.round(2).tolist()
    ([0.2, 0.9, 0.5], [0.1, 0.0, 0.3])
    >>> dm.select("hard-to-learn", 1 / 3).tolist(), dm.select("ambiguous", 1 / 3).tolist()
    ([0], [2])
    >>> dm.scores["forgetting"].tolist(), dm.never_learned.tolist(), dm.ranking("forgetting").tolist()
    ([0.0, 0.0, 0.0], [True, False, False], [0, 1, 2])

A map on a "higher = harder" measure is oriented: confidence is the negated mean loss, and the
hard-to-learn rows are the highest-loss ones:

    >>> lm = DataMap.from_dynamics(t.append_column("loss", pa.array([2.3, 1.2, 0.1, 0.1, 1.6, 0.2])), "loss")
    >>> lm.confidence.round(2).tolist(), lm.select("hard-to-learn", 1 / 3).tolist(), lm.confidence_label
    ([-1.75, -0.1, -0.9], [0], 'confidence = −mean loss (higher = easier)')
"""

from __future__ import annotations

import math
import os
from collections import Counter
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from ..atomic import save_figure_atomic
from ..logging import get_logger
from ..validation import check_choice, check_float, check_int
from .ids import id_codes
from .measures import MAP_MEASURES, MEASURE_INFO, MeasureInfo

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["DataMap", "REGIONS", "MAP_REGIONS", "ORDERS", "example_tokens", "parse_regions"]

REGIONS = ("hard-to-learn", "easy-to-learn", "ambiguous", "random")
#: regions as a partition of the map (the HTML map's colours): an example in several regions
#: takes the first of these; "other" is in none
MAP_REGIONS = ("ambiguous", "hard-to-learn", "easy-to-learn", "other")
#: orders of a ranking by a measure; "hardest-first" (the default) is lowest-first for measures
#: whose low end is hard (inv_ppl, chia, aum, min_margin, bleu, confidence, correctness),
#: highest-first for the others (loss, el2n, margin_deficit, forgetting, variability), as
#: ``measures.MEASURE_INFO`` declares; "easiest-first" is the reverse
ORDERS = ("hardest-first", "easiest-first", "lowest-first", "highest-first")
#: per-(example, epoch) columns summarised by their mean over the epoch window
_MEAN_COLUMNS = MAP_MEASURES


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


NAN_POLICIES = ("raise", "omit", "drop")

logger = get_logger(__name__)


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
    """A correctness column as 0.0 / 1.0: booleans, or numbers that are all 0 or 1 (a NaN or a
    missing value would give a NaN fitted share or correctness, not an error)."""
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


def _as_ids(ids: Any) -> np.ndarray:
    """Example ids as ``int64`` (integers) or ``str`` (strings)."""
    arr = np.asarray(ids)
    return arr.astype(str) if arr.dtype.kind in "USO" and len(arr) else arr.astype(np.int64)


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


def _check_map_measure(measure: Any, available: Sequence[str], source: str, where: str) -> None:
    """``measure`` must be a per-epoch measure these dynamics hold (the message says what is)."""
    if not isinstance(measure, str):
        raise TypeError(f"measure must be a str, one of {list(MAP_MEASURES)}, got {measure!r}")
    if measure in available:
        return
    info = MEASURE_INFO.get(measure)
    if info is not None and info.kind not in ("step", "decode"):
        raise ValueError(
            f"measure {measure!r} cannot be a data map's confidence axis: it is "
            + ("counted from the correctness history" if info.kind == "counted" else "an axis of the map itself")
            + f". Build the map on one of {list(available) or list(MAP_MEASURES)} and rank by it: "
              f"dm.ranking({measure!r})"
        )
    if not available:
        raise ValueError(f"{where} ({source} pass): no per-epoch measure a data map can be built on "
                         f"(one of {list(MAP_MEASURES)}) is recorded")
    if info is not None:
        hint = (" (bleu is in the eval pass: source='eval')" if measure == "bleu" and source == "train" else
                f"; record it with TrainingDynamicsCallback(measures=(..., {measure!r}))")
        raise ValueError(f"measure {measure!r} is not recorded in {where} ({source} pass); recorded: "
                         f"{list(available)}{hint}")
    raise ValueError(f"measure must be one of {list(MAP_MEASURES)} (recorded here: {list(available)}), got {measure!r}")


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


def fraction_size(fraction: float, n: int) -> int:
    """``round(fraction * n)`` (half up, at least 1): how many of ``n`` examples a ``fraction`` is,
    for every subset, selection and flag of that fraction.

    Example:
        >>> fraction_size(0.33, 10), fraction_size(0.01, 10)
        (3, 1)
    """
    fraction = check_float("fraction", fraction, min=0.0, max=1.0, min_inclusive=False)
    return max(1, int(math.floor(fraction * n + 0.5)))


class DataMap:
    """Per-example confidence, variability and correctness over an epoch window.

    Build it with :meth:`from_dynamics`. Arrays are aligned with :attr:`example_ids` (ascending).
    ``confidence`` is oriented: higher = easier (:meth:`from_dynamics` negates the mean of a
    measure whose high end is hard, such as ``loss``); :attr:`confidence_label` says what it holds.
    """

    def __init__(self, example_ids, confidence, variability, correctness, *, measure: str,
                 epochs: Sequence[int], source: str = "train", num_examples: int | None = None,
                 scores: dict | None = None, never_learned: Any = None, dataset_fingerprints: Sequence[str] = ()):
        #: ascending; integers, or strings when the training set's ids were strings
        self.example_ids = _as_ids(example_ids)
        self.confidence = np.asarray(confidence, dtype=np.float64)
        self.variability = np.asarray(variability, dtype=np.float64)
        self.correctness = np.asarray(correctness, dtype=np.float64)
        n = len(self.example_ids)
        if not (len(self.confidence) == len(self.variability) == len(self.correctness) == n):
            raise ValueError("example_ids, confidence, variability and correctness must have the same length")
        self.measure = measure
        self.epochs = tuple(int(e) for e in epochs)
        self.source = source
        # examples the dynamics hold (NaN policies may leave some out of the map): the row count a
        # dataset without an id column must have to be taken in id order
        self.num_examples = n if num_examples is None else int(num_examples)
        #: per-example summary of every recorded measure over the window, aligned with example_ids
        self.scores = {k: np.asarray(v, dtype=np.float64) for k, v in (scores or {}).items()}
        for k, v in self.scores.items():
            if len(v) != n:
                raise ValueError(f"scores[{k!r}] has {len(v)} values for {n} examples")
        #: examples never correct in the window (their forgetting count is 0 but they were never learned)
        self.never_learned = None if never_learned is None else np.asarray(never_learned, dtype=bool)
        #: fingerprints of the training set the dynamics were recorded on (from ``cartography.json``;
        #: empty for a map built from a bare table): rows are taken by position only from that dataset
        self.dataset_fingerprints = tuple(str(f) for f in dataset_fingerprints)

    def __len__(self) -> int:
        return len(self.example_ids)

    def __repr__(self) -> str:
        return f"DataMap({len(self)} examples, measure={self.measure!r}, source={self.source!r}, epochs={list(self.epochs)})"

    @property
    def measure_info(self) -> MeasureInfo | None:
        """The declaration of the map's measure (its direction, label, range); ``None`` for a name
        the library does not know (a map built by hand)."""
        return MEASURE_INFO.get(self.measure)

    @property
    def confidence_label(self) -> str:
        """What the confidence axis holds, e.g. ``"confidence = −mean loss (higher = easier)"``."""
        info = self.measure_info
        return info.confidence_label if info is not None else f"confidence ({self.measure})"

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
        nan_policy: str = "raise",
    ) -> "DataMap":
        """A data map from recorded dynamics.

        Args:
            dynamics: a dynamics folder (written by ``CartographyCallback``), the dict of
                :func:`~hf_synthsample.cartography.load_dynamics`, or a table (``pyarrow.Table``
                / ``pandas.DataFrame``) with ``example_id``, ``epoch`` and the measure column.
            measure: the measure the confidence axis is built on: any recorded per-epoch measure
                (``measures.MAP_MEASURES``: ``"inv_ppl"``, ``"chia"``, ``"aum"``, ``"min_margin"``,
                ``"margin_deficit"``, ``"el2n"``, ``"loss"``; ``"bleu"`` in the eval pass). The
                confidence is its window mean, negated for a "higher = harder" measure (``loss``,
                ``el2n``, ``margin_deficit``) so that higher confidence is always easier.
            min_epoch / max_epoch: the epoch window, inclusive (default: all recorded epochs).
            source: ``"train"`` (the training forward pass) or ``"eval"`` (the dropout-free pass).
            correctness: the boolean column counted as correct (default ``exact_match`` when the
                table has one, else ``correct``).
            nan_policy: what a NaN (or missing) value of the measure in the window does:
                ``"raise"`` (default) raises; ``"omit"`` leaves those epochs out of the example's
                confidence and variability (an example with no value left is left out);
                ``"drop"`` leaves every example with a NaN out of the map. Both log how many.

        Raises:
            ValueError: before any computation, for dynamics that cannot give a faithful map: an
                epoch of the window some examples lack (a partial last epoch, a resume that lost
                steps: the message names the epochs and how many examples are missing), a NaN
                under ``nan_policy="raise"``, metadata (``cartography.json``) listing epochs or an
                example count the data does not hold, a damaged file (named).
        """
        import pyarrow as pa

        check_choice("source", source, ("train", "eval"))
        check_choice("nan_policy", nan_policy, NAN_POLICIES)
        where = "dynamics"
        meta = None
        if isinstance(dynamics, (str, os.PathLike)):
            from .store import load_dynamics

            where = f"dynamics {os.fspath(dynamics)!r}"
            dynamics = load_dynamics(dynamics)
        if isinstance(dynamics, dict) and "train" in dynamics:
            meta = dynamics.get("meta")
            table = dynamics["train"] if source == "train" else dynamics.get("eval")
            if table is None:
                raise ValueError("source='eval' but the dynamics hold no eval pass (use eval_pass=True when training)")
        else:
            table = dynamics
        if not isinstance(table, pa.Table):
            table = pa.Table.from_pandas(table, preserve_index=False)
        # a column present but empty is a measure that was not recorded (e.g. bleu in a file without decodes)
        available = [c for c in _MEAN_COLUMNS if c in table.column_names
                     and table.column(c).null_count < table.num_rows
                     and not np.isnan(table.column(c).to_numpy(zero_copy_only=False).astype(np.float64)).all()]
        _check_map_measure(measure, available, source, where)
        for col in ("example_id", "epoch"):
            if col not in table.column_names:
                raise ValueError(f"{where}: no column {col!r}; columns: {table.column_names}")
        if correctness is None:
            correctness = "exact_match" if "exact_match" in table.column_names and measure == "bleu" else "correct"
        check_choice("correctness", correctness, [c for c in ("correct", "exact_match") if c in table.column_names])
        id_values, ids = id_codes(_id_array(table, where))  # string ids: their ranks, decoded at the end
        name = (lambda code: int(code)) if id_values is None else (lambda code: str(id_values[code]))
        epoch = _int_column(table, "epoch", where)
        values = table.column(measure).to_numpy(zero_copy_only=False).astype(np.float64)  # null -> NaN
        correct = _correct_column(table, correctness, where)
        if not len(epoch):
            raise ValueError(f"{where}: no rows recorded")
        # one sort of (example_id, epoch) keys gives the examples, the duplicates and (bincount) the
        # rows per epoch: np.unique on each would sort four times
        lo, hi = int(epoch.min()), int(epoch.max())
        span = hi - lo + 1
        per_epoch = np.bincount(epoch - lo, minlength=span)
        recorded = np.flatnonzero(per_epoch) + lo
        key = np.sort(ids * span + (epoch - lo))
        twice = np.flatnonzero(key[1:] == key[:-1])
        if len(twice):
            k = int(key[twice[0]])
            raise ValueError(f"{where}: {len(twice)} (example_id, epoch) pairs are recorded twice (first: example id "
                             f"{name(k // span)!r}, epoch {k % span + lo}); dynamics hold one row per example and epoch")
        key_ids = key // span
        examples = key_ids[np.r_[True, key_ids[1:] != key_ids[:-1]]]  # every example, whatever the epoch
        if isinstance(meta, dict):
            _check_meta(meta, source, recorded, examples, where)
        if min_epoch is None:
            min_epoch = lo
        if max_epoch is None:
            max_epoch = hi
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
                ids, epoch, values, correct = ids[keep_rows], epoch[keep_rows], values[keep_rows], correct[keep_rows]
                rows = rows[keep_rows]
                logger.warning(f"DataMap: {what}; nan_policy='drop' leaves those examples out")
            else:
                logger.warning(f"DataMap: {what}; nan_policy='omit' averages over the other epochs")
        uniq, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
        ok = np.isfinite(values)
        n_ok = np.bincount(inverse, weights=ok, minlength=len(uniq))
        v0 = np.where(ok, values, 0.0)
        mean = np.bincount(inverse, weights=v0, minlength=len(uniq)) / np.maximum(n_ok, 1)
        # population std (ddof 0), from deviations about the mean rather than E[x^2]-E[x]^2
        dev = np.where(ok, values - mean[inverse], 0.0)
        var = np.bincount(inverse, weights=dev * dev, minlength=len(uniq)) / np.maximum(n_ok, 1)
        corr = np.bincount(inverse, weights=correct, minlength=len(uniq)) / counts
        keep = n_ok > 0
        if not keep.all():
            logger.warning(f"DataMap: {int((~keep).sum())} examples have no value of {measure!r} left; left out")
        if not keep.any():
            raise ValueError(f"{where}: no example has a value of {measure!r} in epochs {min_epoch}..{max_epoch}")
        epochs = [int(e) for e in recorded if min_epoch <= e <= max_epoch]
        scores, never = _window_scores(table, rows, ids, epoch, correct, uniq, inverse)
        # the confidence axis is oriented by the measure's declared direction: higher = easier
        confidence = MEASURE_INFO[measure].confidence_sign * mean[keep]
        kept = uniq[keep] if id_values is None else id_values[uniq[keep]]
        fingerprints = (meta or {}).get("dataset_fingerprints") or ()
        return cls(kept, confidence, np.sqrt(var[keep]), corr[keep], measure=measure, epochs=epochs,
                   source=source, num_examples=len(examples),
                   scores={k: v[keep] for k, v in scores.items()}, never_learned=never[keep],
                   dataset_fingerprints=fingerprints)

    # ------------------------------------------------------------------ rankings and subsets
    @property
    def rankable(self) -> tuple[str, ...]:
        """What :meth:`ranking` accepts besides the regions: the recorded measures and the map's axes."""
        return (*self.scores, "confidence", "variability", "correctness")

    def _key(self, measure: str) -> np.ndarray:
        if measure in ("confidence", "variability", "correctness"):
            return getattr(self, measure)
        if measure not in self.scores:
            raise ValueError(
                f"measure {measure!r} was not recorded in these dynamics; recorded: {list(self.scores)} "
                f"(plus the map's confidence, variability, correctness; regions: {list(REGIONS)}). Record it with "
                f"TrainingDynamicsCallback(measures=(..., {measure!r}))"
            )
        if measure == "forgetting" and self.never_learned is not None:
            # never learned = forgotten more than any learned example (Toneva et al. 2019)
            return np.where(self.never_learned, np.inf, self.scores[measure])
        return self.scores[measure]

    def ranking(self, region: str, *, seed: int = 0, order: str | None = None) -> np.ndarray:
        """Example ids in rank order for ``region`` (most typical of the region first), or by a measure.

        ``region`` may also name a recorded measure (:attr:`rankable`: ``"aum"``, ``"el2n"``,
        ``"loss"``, ``"forgetting"``, ``"inv_ppl"``, ... or ``"confidence"``/``"variability"``/
        ``"correctness"``); then ``order`` is ``"hardest-first"`` (default: the end
        ``measures.MEASURE_INFO`` declares hard first, so lowest ``aum`` but highest ``loss``),
        ``"easiest-first"``, ``"lowest-first"`` or ``"highest-first"``. Ties (equal to 10
        decimals) go to the smaller id; examples without a value (NaN) come last.

        Example:
            >>> import pyarrow as pa
            >>> t = pa.table({"example_id": [4, 9, 4, 9], "epoch": [0, 0, 1, 1], "aum": [-1.0, 2.0, 0.0, 3.0],
            ...               "loss": [2.0, 0.1, 1.0, 0.1], "correct": [False, True, False, True]})
            >>> dm = DataMap.from_dynamics(t, "aum")
            >>> dm.ranking("aum").tolist(), dm.ranking("loss").tolist(), dm.ranking("hard-to-learn").tolist()
            ([4, 9], [4, 9], [4, 9])
            >>> dm.ranking("aum", order="highest-first").tolist(), dm.ranking("loss", order="easiest-first").tolist()
            ([9, 4], [9, 4])
        """
        ids = self.example_ids
        if region not in REGIONS and isinstance(region, str):
            order = check_choice("order", "hardest-first" if order is None else order, ORDERS)
            key = self._key(region)
            if order in ("hardest-first", "easiest-first"):
                if region not in MEASURE_INFO:
                    raise ValueError(f"order={order!r} needs a measure with a declared direction; {region!r} has "
                                     f"none (a score added by hand): pass order='lowest-first' or 'highest-first'")
                low_is_hard = MEASURE_INFO[region].hard_end == "low"
                order = "lowest-first" if low_is_hard == (order == "hardest-first") else "highest-first"
            if order == "highest-first":
                key = -key
            # NaN last (np.lexsort puts NaN after every number); ties to the smaller id
            return ids[np.lexsort((ids, np.round(key, 10)))]
        if order is not None:
            raise ValueError(f"order: only for a ranking by a measure, not for the region {region!r}")
        check_choice("region", region, REGIONS)
        if region == "random":
            return ids[np.random.default_rng(seed).permutation(len(ids))]
        key = {"hard-to-learn": self.confidence, "easy-to-learn": -self.confidence,
               "ambiguous": -self.variability}[region]
        # values equal to 10 decimals are ties: float noise (0.1 vs 0.09999999999999998) must not
        # decide the order; ties go to the smaller example id (np.lexsort is stable)
        return ids[np.lexsort((ids, np.round(key, 10)))]

    def select_by(self, measure: str, *, fraction: float | None = None, count: int | None = None,
                  order: str = "hardest-first") -> np.ndarray:
        """Example ids (ascending) of the first ``count`` (or ``fraction`` of the) examples of
        ``ranking(measure, order=order)``: by default the hardest, e.g. the 15 % lowest AUM or the
        15 % highest EL2N to inspect for label noise.

        Example:
            >>> import pyarrow as pa
            >>> t = pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0], "el2n": [0.2, 0.9, 0.5],
            ...               "correct": [True, False, True]})
            >>> dm = DataMap.from_dynamics(t, "el2n")
            >>> dm.select_by("el2n", count=2).tolist(), dm.select_by("el2n", count=2, order="lowest-first").tolist()
            ([1, 2], [0, 2])
        """
        if (fraction is None) == (count is None):
            raise ValueError("select_by: give exactly one of fraction= (in (0, 1]) or count= (1..number of examples)")
        k = self.subset_size(fraction) if count is None else check_int("count", count, min=1, max=len(self))
        return np.sort(self.ranking(measure, order=order)[:k])

    def subset_size(self, fraction: float) -> int:
        """``round(fraction * len(self))`` (at least 1), the size every subset of that fraction has."""
        return fraction_size(fraction, len(self))

    def region_of(self, fraction: float = 0.33) -> np.ndarray:
        """Per example (aligned with :attr:`example_ids`), its region in :data:`MAP_REGIONS`: the
        regions are the ``fraction`` best-ranked of :meth:`ranking`, and an example in several
        takes the first of ``ambiguous``, ``hard-to-learn``, ``easy-to-learn``; ``other`` is in none.
        The HTML map colours points by it.

        Example:
            >>> import pyarrow as pa
            >>> t = pa.table({"example_id": [0, 1, 2, 0, 1, 2], "epoch": [0, 0, 0, 1, 1, 1],
            ...               "loss": [3.0, 0.1, 1.0, 3.0, 0.1, 0.2], "correct": [False, True, True] * 2})
            >>> DataMap.from_dynamics(t, "loss").region_of(1 / 3).tolist()
            ['hard-to-learn', 'easy-to-learn', 'ambiguous']
        """
        k = self.subset_size(fraction)
        region = np.full(len(self), MAP_REGIONS[-1], dtype=object)
        for name in MAP_REGIONS[-2::-1]:  # the first region is written last and wins
            region[np.searchsorted(self.example_ids, self.ranking(name)[:k])] = name
        return region

    def region_cutoffs(self, fraction: float = 0.33) -> dict[str, tuple[str, float]]:
        """Where the regions of ``fraction`` end on the map's axes: ``{region: (axis, value)}``.

        ``hard-to-learn`` is below its confidence value, ``easy-to-learn`` above its confidence
        value, ``ambiguous`` right of its variability value; each value lies halfway between the
        last example in the region and the first one out (on a tie the id decides, as in
        :meth:`ranking`). The PNG plot draws these lines.

        Example:
            >>> import pyarrow as pa
            >>> t = pa.table({"example_id": [0, 1, 2, 3], "epoch": [0] * 4, "inv_ppl": [0.1, 0.4, 0.6, 0.9],
            ...               "correct": [False, False, True, True]})
            >>> DataMap.from_dynamics(t).region_cutoffs(0.25)
            {'hard-to-learn': ('confidence', 0.25), 'easy-to-learn': ('confidence', 0.75), 'ambiguous': ('variability', 0.0)}
        """
        k = self.subset_size(fraction)
        out = {}
        for name, axis in (("hard-to-learn", "confidence"), ("easy-to-learn", "confidence"),
                           ("ambiguous", "variability")):
            values = getattr(self, axis)[np.searchsorted(self.example_ids, self.ranking(name))]
            last = float(values[k - 1])
            out[name] = (axis, last if k >= len(values) else round((last + float(values[k])) / 2, 12))
        return out

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
            tokens: for OOV repair, the tokens of every example indexed by example id (a
                sequence or a mapping; see :func:`example_tokens`). Left-out examples that bring tokens missing from the
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
        taken = np.zeros(len(self), dtype=bool)  # by position in example_ids
        chosen: list[np.ndarray] = []
        for reg, q in zip(regions, quotas):
            rank = self.ranking(reg, seed=seed)
            at = np.searchsorted(self.example_ids, rank)
            free = at[~taken[at]][:q]
            taken[free] = True
            chosen.append(self.example_ids[free])
        selected = np.concatenate(chosen)  # in selection rank order
        if tokens is not None:
            selected = self._oov_repair(selected, self.ranking(regions[0], seed=seed), tokens)
        return np.sort(selected)

    def _oov_repair(self, selected: np.ndarray, ranking: np.ndarray, tokens: Sequence[Iterable[Hashable]]) -> np.ndarray:
        if isinstance(tokens, Mapping):
            absent = [i for i in self.example_ids.tolist() if i not in tokens]
            if absent:
                raise ValueError(f"tokens: no tokens for {len(absent)} example ids of the map (first: {absent[0]})")
        elif self.example_ids.dtype.kind not in "iu":
            raise TypeError("tokens: the example ids are strings; pass a mapping from example id to tokens")
        elif len(tokens) <= int(self.example_ids.max()):
            raise ValueError(
                f"tokens: need the tokens of every example id up to {int(self.example_ids.max())}, got {len(tokens)} rows"
            )
        toks = {i: frozenset(tokens[i]) for i in self.example_ids.tolist()}
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
        return _as_ids(keep + added) if keep or added else selected[:0]

    def positions(self, dataset: "Dataset", ids: Sequence[int] | None = None, *, id_column: str = "example_id",
                  assume_id_order: bool = False) -> np.ndarray:
        """Row numbers in ``dataset`` of the example ids ``ids`` (default: all of the map's, ascending).

        Rows are matched by the ``id_column`` column (the one :func:`add_example_ids` adds), so a
        shuffled, filtered or re-ordered dataset gives the right rows; rows the map does not know
        are ignored, and a map example missing from the dataset is an error. A dataset without
        that column is matched by position only when ``assume_id_order=True`` says that row ``i``
        is example id ``i`` and its row count is the dynamics' example count.

        Example:
            >>> import pyarrow as pa
            >>> from datasets import Dataset
            >>> dm = DataMap.from_dynamics(pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0],
            ...                                      "inv_ppl": [0.5, 0.1, 0.9], "correct": [True, False, True]}))
            >>> shuffled = Dataset.from_dict({"example_id": [2, 0, 1], "text": ["c", "a", "b"]})
            >>> dm.positions(shuffled, dm.ranking("hard-to-learn")).tolist()  # ids 1, 0, 2
            [2, 1, 0]
        """
        return _dataset_rows(self, dataset, ids, id_column=id_column, assume_id_order=assume_id_order,
                             names=_API_NAMES)

    def subset(self, dataset: "Dataset", region: str | Sequence[str], fraction: float, *,
               oov_columns: Sequence[str] | None = None, id_column: str = "example_id",
               assume_id_order: bool = False, **kwargs) -> "Dataset":
        """The rows of ``dataset`` holding ``select(region, fraction)``'s example ids, in id order.

        Rows are found by :meth:`positions` (by the ``id_column`` column; without it only with
        ``assume_id_order=True``). ``oov_columns`` turns on OOV repair with the tokens of those
        columns. Other keywords go to :meth:`select`.
        """
        return _subset(self, dataset, region, fraction, oov_columns=oov_columns, id_column=id_column,
                       assume_id_order=assume_id_order, names=_API_NAMES, **kwargs)

    # ------------------------------------------------------------------ reporting
    def to_table(self):
        """The map as a ``pyarrow.Table``: example_id, confidence, variability, correctness, then the
        window summary of every recorded measure (and ``never_learned``)."""
        import pyarrow as pa

        extra: dict = dict(self.scores)
        if "forgetting" in extra:
            extra["forgetting"] = extra["forgetting"].astype(np.int64)
        if self.never_learned is not None:
            extra["never_learned"] = self.never_learned
        return pa.table({"example_id": self.example_ids, "confidence": self.confidence,
                         "variability": self.variability, "correctness": self.correctness, **extra})

    def plot(self, path: str | os.PathLike, *, sample_fraction: float | None = None, seed: int = 0,
             title: str | None = None, fraction: float = 0.33) -> str:
        """Scatter plot saved as PNG; returns the path.

        x variability, y confidence (labelled with :attr:`confidence_label`, e.g. "confidence =
        −mean loss (higher = easier)"), colour correctness in 10 bins over [0, 1]; dashed lines
        mark where the ``fraction`` regions end (:meth:`region_cutoffs`, computed on the whole
        map even when only a ``sample_fraction`` of the points is drawn).

        Example:
            >>> import pyarrow as pa, tempfile, os
            >>> t = pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0], "loss": [2.0, 0.5, 0.1],
            ...               "correct": [False, True, True]})
            >>> with tempfile.TemporaryDirectory() as d:
            ...     os.path.basename(DataMap.from_dynamics(t, "loss").plot(os.path.join(d, "map.png")))
            'map.png'
        """
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        from matplotlib.colors import BoundaryNorm

        cutoffs = self.region_cutoffs(fraction)
        idx = np.arange(len(self))
        if sample_fraction is not None:
            k = self.subset_size(sample_fraction)
            idx = np.sort(np.random.default_rng(seed).choice(idx, size=k, replace=False))
        fig, ax = plt.subplots(figsize=(6.5, 5), dpi=120)
        # correctness in 10 bins over [0, 1], as the seed paper plots it; 1.0 is in the last bin
        cmap = plt.get_cmap("coolwarm", 10)
        norm = BoundaryNorm(np.linspace(0.0, 1.0, 11), cmap.N)
        sc = ax.scatter(self.variability[idx], self.confidence[idx], c=self.correctness[idx], cmap=cmap, norm=norm,
                        s=6, alpha=0.7)
        fig.colorbar(sc, ax=ax, ticks=np.linspace(0.0, 1.0, 6), label="correctness (fraction of epochs correct)")
        # the region boundaries, in the HTML map's colours; each label sits on its region's side
        box = dict(facecolor="white", alpha=0.7, edgecolor="none", pad=1)
        style = dict(fontsize="small", bbox=box, transform=None)
        for name, colour, va in (("hard-to-learn", "#d7191c", "top"), ("easy-to-learn", "#2c7bb6", "bottom")):
            y = cutoffs[name][1]
            ax.axhline(y, color=colour, ls="--", lw=1)
            style["transform"] = ax.get_yaxis_transform()
            ax.text(0.99, y, f"{name} ({fraction:.0%}) {'↓' if va == 'top' else '↑'}", color=colour, ha="right",
                    va=va, **style)
        x = cutoffs["ambiguous"][1]
        ax.axvline(x, color="#7b3294", ls="--", lw=1)
        style["transform"] = ax.get_xaxis_transform()
        ax.text(x, 0.98, f" ambiguous ({fraction:.0%}) →", color="#7b3294", ha="left", va="top", **style)
        ax.set_xlabel("variability (std of the measure over the epochs)")
        ax.set_ylabel(self.confidence_label)
        ax.set_title(title or f"Data map ({self.measure}): {len(idx)} examples, epochs {self.epochs[0]}-{self.epochs[-1]}")
        return save_figure_atomic(fig, path)

    def to_html(self, path: str | os.PathLike, *, dataset: "Dataset | None" = None,
                text_columns: Sequence[str] | None = None, id_column: str = "example_id",
                assume_id_order: bool = False, fraction: float = 0.33, max_text: int = 300,
                title: str | None = None) -> str:
        """An interactive map in one self-contained HTML file (written atomically); returns the path.

        Hovering a point shows its id, region, every measure and the ``dataset``'s text columns;
        the regions (:meth:`region_of` at ``fraction``) can be shown and hidden; the box/lasso
        selection exports as example ids. Needs ``plotly`` (for its JavaScript bundle); see
        :mod:`hf_synthsample.cartography.html`.

        Args:
            dataset: the training dataset, for the hover texts (rows found by :meth:`positions`:
                by its ``id_column`` column, or by position with ``assume_id_order=True``).
            text_columns: columns shown on hover (default: the dataset's string columns).
            fraction: size of each coloured region (as in :meth:`select`).
            max_text: hover texts are cut after this many characters.
        """
        from .html import write_map_html

        fraction = check_float("fraction", fraction, min=0.0, max=1.0, min_inclusive=False)
        max_text = check_int("max_text", max_text, min=1)
        if not isinstance(id_column, str):
            raise TypeError(f"id_column must be a str, got {id_column!r}")
        if len(self) == 0:
            raise ValueError("the data map is empty")
        texts = {} if dataset is None else _hover_texts(self, dataset, text_columns, id_column, assume_id_order,
                                                        max_text)
        fields = {"confidence": self.confidence, "variability": self.variability, "correctness": self.correctness,
                  **self.scores}
        return write_map_html(
            path,
            title=title or f"Data map: {len(self):,} examples, {self.measure}, epochs {self.epochs[0]}-{self.epochs[-1]}",
            ids=self.example_ids, x=self.variability, y=self.confidence, x_label="variability",
            y_label=self.confidence_label, region=self.region_of(fraction), regions=MAP_REGIONS, fields=fields,
            never_learned=self.never_learned, texts=texts)

    def summary(self, fraction: float = 0.33) -> str:
        """A short text summary: sizes, ranges and the regions of ``fraction`` (each with its real
        size: the fraction rounds to whole examples)."""
        from .summary import datamap_summary

        return datamap_summary(self, fraction)

    def to_markdown(self, fraction: float = 0.33) -> str:
        """The summary as Markdown tables (for a dataset card): the map, its axes' ranges and each
        region of ``fraction`` with its real count and share (6 of 20 = 30.0 %, whatever the
        fraction asked).

        Example:
            >>> import pyarrow as pa
            >>> t = pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0], "loss": [2.0, 0.5, 0.1],
            ...               "correct": [False, True, True]})
            >>> print(DataMap.from_dynamics(t, "loss").to_markdown(0.33).splitlines()[-3])
            | hard-to-learn | 1 of 3 | 33.3 % | -2.000 | 0.000 | 0.000 | 2.000 |
        """
        from .summary import datamap_markdown

        return datamap_markdown(self, fraction)

    def __str__(self) -> str:
        return self.summary()


# ----------------------------------------------------------------------------- data-map ids -> dataset rows
# how messages name the options: Python parameters, or the CLI's --options
_API_NAMES = {"dataset": "dataset", "id_column": "id_column", "assume_id_order": "assume_id_order=True"}


def _dataset_rows(dm: DataMap, dataset: "Dataset", ids: Sequence[int] | None, *, id_column: str,
                  assume_id_order: bool, names: Mapping[str, str]) -> np.ndarray:
    """Row numbers of ``ids`` (default: all of ``dm``'s) in ``dataset``; see :meth:`DataMap.positions`."""
    from ..columns import column_arrow
    from ..hub.provenance import dataset_fingerprint

    ids = dm.example_ids if ids is None else _as_ids(ids)
    ds_name = names["dataset"]
    columns = getattr(dataset, "column_names", None)
    if columns is None or not hasattr(dataset, "select"):
        raise TypeError(f"{ds_name} must be a datasets.Dataset, got {type(dataset).__name__}")
    if not isinstance(id_column, str) or not id_column:
        raise TypeError(f"{names['id_column']} must be a non-empty str, got {id_column!r}")
    strings = dm.example_ids.dtype.kind == "U"
    if id_column in columns:
        col = column_arrow(dataset, id_column)
        import pyarrow as pa

        is_str = pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
        if not (is_str if strings else pa.types.is_integer(col.type)):
            raise TypeError(f"{ds_name}: column {id_column!r} must hold {'string' if strings else 'integer'} example "
                            f"ids, as the data map does, got {col.type}")
        if col.null_count:
            raise ValueError(f"{ds_name}: column {id_column!r} has {col.null_count} missing example ids")
        col = np.asarray(col.to_pylist(), dtype=str) if strings else col.to_numpy().astype(np.int64)
        order = np.argsort(col, kind="stable")
        sorted_col = col[order]
        repeated = sorted_col[1:][sorted_col[1:] == sorted_col[:-1]]
        if len(repeated):
            raise ValueError(f"{ds_name}: column {id_column!r} repeats example ids (first: {repeated[0].item()!r}); "
                             f"each row must be one example of the dynamics")
        where = np.searchsorted(sorted_col, dm.example_ids).clip(max=max(len(col) - 1, 0))
        found = (sorted_col[where] == dm.example_ids) if len(col) else np.zeros(len(dm), dtype=bool)
        if not found.all():
            absent = dm.example_ids[~found]
            raise ValueError(
                f"{ds_name}: {len(absent)} of the data map's {len(dm)} example ids are not in its {id_column!r} "
                f"column (first: {absent[0].item()!r}); it is not (all of) the dataset the dynamics were recorded on"
            )
        pos = np.searchsorted(sorted_col, ids)
        if len(ids) and (pos.max() >= len(col) or (sorted_col[pos.clip(max=len(col) - 1)] != ids).any()):
            raise ValueError(f"{ds_name}: some of the requested example ids are not in its {id_column!r} column")
        return order[pos]
    if not assume_id_order:
        raise ValueError(
            f"{ds_name} has no {id_column!r} column, so its rows cannot be matched to the data map's example ids "
            f"(a shuffled or filtered dataset would give the wrong rows). Keep the column add_example_ids() added, "
            f"or, if row i is example id i (the very dataset the dynamics were recorded on, same order), pass "
            f"{names['assume_id_order']}"
        )
    if strings:
        raise ValueError(f"{ds_name} has no {id_column!r} column, and the data map's example ids are strings, not "
                         f"row numbers: keep the id column the dynamics were recorded with")
    fingerprint = dataset_fingerprint(dataset)
    if dm.dataset_fingerprints and fingerprint not in dm.dataset_fingerprints:
        raise ValueError(
            f"{ds_name} (fingerprint {fingerprint}) is not the training set the dynamics were recorded on "
            f"(fingerprint {' / '.join(dm.dataset_fingerprints)}): another copy of the data (shuffled, filtered, "
            f"loaded again) can have the same row count but other rows in each position, so "
            f"{names['assume_id_order']} cannot hold. Take the rows from the training set itself, or keep its "
            f"{id_column!r} column and match by id"
        )
    if len(dataset) != dm.num_examples:
        raise ValueError(
            f"{ds_name} has {len(dataset)} rows but the dynamics hold {dm.num_examples} examples, so its rows "
            f"cannot be in example-id order; {names['assume_id_order']} needs the dataset the dynamics were "
            f"recorded on"
        )
    if len(dm) and int(dm.example_ids.max()) >= len(dataset):
        raise ValueError(
            f"{ds_name} has {len(dataset)} rows but the data map has example id {int(dm.example_ids.max())}; "
            f"the ids are not row numbers, so {names['assume_id_order']} cannot hold: add a {id_column!r} column"
        )
    if len(ids) and (ids.min() < 0 or ids.max() >= len(dataset)):
        raise ValueError(f"{ds_name}: example ids out of its {len(dataset)} rows")
    return ids.copy()


def _hover_texts(dm: DataMap, dataset: Any, text_columns: Sequence[str] | None, id_column: str,
                 assume_id_order: bool, max_text: int) -> dict[str, list[str]]:
    """The text columns of the rows holding the map's example ids (found by :meth:`DataMap.positions`),
    cut after ``max_text`` characters."""
    from ..columns import column_arrow
    from ..validation import check_columns

    names = list(getattr(dataset, "column_names", None) or [])
    if text_columns is None:
        features = getattr(dataset, "features", {}) or {}
        text_columns = [c for c in names if c != id_column
                        and getattr(features.get(c), "dtype", None) in ("string", "large_string")]
    text_columns = list(text_columns)
    check_columns(dataset, text_columns, name="text_columns")
    rows = dm.positions(dataset, id_column=id_column, assume_id_order=assume_id_order)
    out = {}
    for c in text_columns:
        values = column_arrow(dataset, c).take(rows).to_pylist()
        out[c] = ["" if v is None else (s if len(s := str(v)) <= max_text else s[:max_text] + "…") for v in values]
    return out


def _subset(dm: DataMap, dataset: "Dataset", region, fraction: float, *, oov_columns, id_column: str,
            assume_id_order: bool, names: Mapping[str, str], **kwargs) -> "Dataset":
    """:meth:`DataMap.subset`, with messages naming ``names``' options."""
    rows, _ = _subset_rows(dm, dataset, region, fraction, oov_columns=oov_columns, id_column=id_column,
                           assume_id_order=assume_id_order, names=names, **kwargs)
    return dataset.select(rows)


def _subset_rows(dm: DataMap, dataset: "Dataset", region, fraction: float, *, oov_columns, id_column: str,
                 assume_id_order: bool, names: Mapping[str, str], **kwargs) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, ids)``: the rows of ``dataset`` holding the subset's example ids, both in id order."""
    rows = _dataset_rows(dm, dataset, None, id_column=id_column, assume_id_order=assume_id_order, names=names)
    tokens = None
    if oov_columns:
        per_row = example_tokens(dataset.select(rows), oov_columns)
        tokens = dict(zip(dm.example_ids.tolist(), per_row))
    ids = dm.select(region, fraction, tokens=tokens, **kwargs)
    return rows[np.searchsorted(dm.example_ids, ids)], ids


def _window_scores(table, rows, ids, epoch, correct, uniq, inverse) -> tuple[dict, np.ndarray]:
    """Per example (``uniq`` order): the window mean of each recorded measure (NaN values skipped),
    forgetting events from the correctness history, and the never-learned flag."""
    from .measures import forgetting_events

    scores: dict[str, np.ndarray] = {}
    for col in _MEAN_COLUMNS:
        if col not in table.column_names:
            continue
        v = table.column(col).to_numpy(zero_copy_only=False).astype(np.float64)[rows]
        ok = ~np.isnan(v)
        if not ok.any():  # a column of a measure that was not recorded (older files read back as NaN)
            continue
        total = np.bincount(inverse, weights=np.where(ok, v, 0.0), minlength=len(uniq))
        n = np.bincount(inverse, weights=ok, minlength=len(uniq))
        scores[col] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    fid, events, never = forgetting_events(ids, epoch, correct > 0.5)
    assert np.array_equal(fid, uniq)
    scores["forgetting"] = events.astype(np.float64)
    return scores, never
