"""Data maps from training dynamics (ALGORITHMS.md §6): per example, over an epoch window
(``min_epoch`` .. ``max_epoch``, inclusive), the confidence (the measure's mean, negated for a
measure whose high end is hard as :data:`~hf_synthsample.cartography.measures.MEASURE_INFO`
declares, so higher = easier), the variability (population std) and the correctness (share of
exact greedy matches). Regions rank the examples; values equal to 10 decimals are ties, broken by
the smaller id, so the same dynamics always give the same subset. Every other recorded measure
is summarised in :attr:`DataMap.scores` (``forgetting``: events counted from ``correct``) and can
rank and select, hardest first by default (docs/training-dynamics.md).

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
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from ..validation import check_choice, check_float, check_int
from .ids import as_ids as _as_ids
from .measures import MEASURE_INFO, MeasureInfo
from .settings import DataMapSettings
# cli/datamap.py reads datamap_rows from here
from .rows import _API_NAMES, datamap_rows, _hover_texts, _subset_rows, example_tokens, oov_repair

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["DataMap", "REGIONS", "MAP_REGIONS", "ORDERS", "example_tokens", "parse_regions"]

REGIONS = ("hard-to-learn", "easy-to-learn", "ambiguous", "random")
#: regions as a partition of the map (the HTML map's colours): an example in several regions
#: takes the first of these; "other" is in none
MAP_REGIONS = ("ambiguous", "hard-to-learn", "easy-to-learn", "other")
#: orders of a ranking by a measure; "hardest-first" (the default) starts at the end
#: ``measures.MEASURE_INFO`` declares hard, "easiest-first" at the other
ORDERS = ("hardest-first", "easiest-first", "lowest-first", "highest-first")


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


def region_shares(proportions: Sequence[float] | None, regions: Sequence[str]) -> list[float]:
    """The shares of combined ``regions`` (see :meth:`DataMap.select`): one per region, summing to 1."""
    if proportions is None:
        proportions = (2 / 3, 1 / 3) if len(regions) == 2 else (1 / len(regions),) * len(regions)
    proportions = [check_float("proportions", p, min=0.0, max=1.0) for p in proportions]
    if len(proportions) != len(regions) or not math.isclose(sum(proportions), 1.0, abs_tol=1e-9):
        raise ValueError(f"proportions must give one share per region ({len(regions)}) summing to 1, got {proportions}")
    return proportions


def count_of(fraction: float | None, count: int | None, n: int) -> int:
    """How many of ``n``: :func:`fraction_size` of ``fraction``, or ``count`` (at most ``n``)."""
    return fraction_size(fraction, n) if fraction is not None else check_int("count", count, min=1, max=n)


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
    """Per-example confidence (oriented: higher = easier), variability and correctness over an epoch
    window, aligned with :attr:`example_ids` (ascending). Build it with :meth:`from_dynamics`."""

    def __init__(self, example_ids, confidence, variability, correctness, *, measure: str | MeasureInfo,
                 epochs: Sequence[int], source: str = "train", num_examples: int | None = None,
                 scores: dict | None = None, never_learned: Any = None, dataset_fingerprints: Sequence[str] = (),
                 dataset_digests: Mapping[str, str] | None = None, model: Mapping[str, Any] | None = None):
        #: ascending; integers, or strings when the training set's ids were strings
        self.example_ids = _as_ids(example_ids)
        self.confidence = np.asarray(confidence, dtype=np.float64)
        self.variability = np.asarray(variability, dtype=np.float64)
        self.correctness = np.asarray(correctness, dtype=np.float64)
        n = len(self.example_ids)
        if not (len(self.confidence) == len(self.variability) == len(self.correctness) == n):
            raise ValueError("example_ids, confidence, variability and correctness must have the same length")
        #: the declaration of the map's measure, resolved once; ``None`` for a name the library does not know
        self.measure_info: MeasureInfo | None = measure if isinstance(measure, MeasureInfo) else MEASURE_INFO.get(measure)
        self.measure = measure.name if isinstance(measure, MeasureInfo) else measure
        self.epochs = tuple(int(e) for e in epochs)
        self.source = source
        # examples the dynamics hold (NaN policies may leave some out): the rows assume_id_order needs
        self.num_examples = n if num_examples is None else int(num_examples)
        #: per-example summary of every recorded measure over the window, aligned with example_ids
        self.scores = {k: np.asarray(v, dtype=np.float64) for k, v in (scores or {}).items()}
        for k, v in self.scores.items():
            if len(v) != n:
                raise ValueError(f"scores[{k!r}] has {len(v)} values for {n} examples")
        #: examples never correct in the window (their forgetting count is 0 but they were never learned)
        self.never_learned = None if never_learned is None else np.asarray(never_learned, dtype=bool)
        #: fingerprints of the training set the dynamics were recorded on (empty from a bare table)
        self.dataset_fingerprints = tuple(str(f) for f in dataset_fingerprints)
        #: per column of the training set (its id column aside), a digest of its values in row order
        #: (:func:`~hf_synthsample.hub.provenance.column_digests`); empty when not recorded
        self.dataset_digests = {str(k): str(v) for k, v in (dataset_digests or {}).items()}
        #: the model the dynamics were recorded with (class, model_type, name_or_path, num_parameters), if known
        self.model = dict(model) if model else None

    def __len__(self) -> int:
        return len(self.example_ids)

    def __repr__(self) -> str:
        return f"DataMap({len(self)} examples, measure={self.measure!r}, source={self.source!r}, epochs={list(self.epochs)})"

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
        measure: str | MeasureInfo = "inv_ppl",
        *,
        min_epoch: int | None = None,
        max_epoch: int | None = None,
        source: str = "train",
        correctness: str | None = None,
        nan_policy: str = "raise",
    ) -> "DataMap":
        """A data map from ``dynamics``: a dynamics folder, a :func:`~hf_synthsample.cartography.load_dynamics`
        dict or a table with ``example_id``, ``epoch`` and the measure column. The other arguments
        are the fields of :class:`~hf_synthsample.cartography.settings.DataMapSettings`. Raises
        ``ValueError`` before any computation for dynamics that cannot give a faithful map (an
        incomplete epoch window, a NaN under ``nan_policy="raise"``, contradicting metadata).
        """
        from .dynamics_table import settings_arrays

        return cls(**settings_arrays(dynamics, DataMapSettings(
            measure=measure, min_epoch=min_epoch, max_epoch=max_epoch, source=source, correctness=correctness,
            nan_policy=nan_policy)))

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

    def ranking(self, region: str | MeasureInfo, *, seed: int = 0, order: str | None = None) -> np.ndarray:
        """Example ids in rank order for ``region`` (most typical of the region first), or by a measure.

        ``region`` may also name one of :attr:`rankable` (or be a ``MeasureInfo``), ranked by
        ``order`` (one of :data:`ORDERS`; default ``"hardest-first"``: the end ``MEASURE_INFO``
        declares hard). Ties (equal to 10 decimals) go to the smaller id; NaN comes last.

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
        if isinstance(region, MeasureInfo) or (region not in REGIONS and isinstance(region, str)):
            # a measure's name is resolved to its declaration here, once; the direction is read off it
            info = region if isinstance(region, MeasureInfo) else MEASURE_INFO.get(region)
            name = region if info is None else info.name
            order = check_choice("order", "hardest-first" if order is None else order, ORDERS)
            key = self._key(name)
            if order in ("hardest-first", "easiest-first"):
                if info is None:
                    raise ValueError(f"order={order!r} needs a measure with a declared direction; {name!r} has "
                                     f"none (a score added by hand): pass order='lowest-first' or 'highest-first'")
                low_is_hard = info.hard_end == "low"
                order = "lowest-first" if low_is_hard == (order == "hardest-first") else "highest-first"
            if order == "highest-first":
                key = -key
        else:
            if order is not None:
                raise ValueError(f"order: only for a ranking by a measure, not for the region {region!r}")
            check_choice("region", region, REGIONS)
            if region == "random":
                return ids[np.random.default_rng(seed).permutation(len(ids))]
            key = {"hard-to-learn": self.confidence, "easy-to-learn": -self.confidence,
                   "ambiguous": -self.variability}[region]
        # values equal to 10 decimals are ties (float noise must not decide the order), broken by the
        # smaller id (np.lexsort is stable); NaN comes last
        return ids[np.lexsort((ids, np.round(key, 10)))]

    def select_by(self, measure: str, *, fraction: float | None = None, count: int | None = None,
                  order: str = "hardest-first") -> np.ndarray:
        """Example ids (ascending) of the first ``count`` (or ``fraction`` of the) examples of
        ``ranking(measure, order=order)``: by default the hardest (e.g. to inspect for label noise).

        Example:
            >>> import pyarrow as pa
            >>> t = pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0], "el2n": [0.2, 0.9, 0.5],
            ...               "correct": [True, False, True]})
            >>> dm = DataMap.from_dynamics(t, "el2n")
            >>> dm.select_by("el2n", count=2).tolist(), dm.select_by("el2n", count=2, order="lowest-first").tolist()
            ([1, 2], [0, 2])
        """
        if isinstance(measure, str) and measure in REGIONS:  # else ranking() would blame `order`
            raise ValueError(f"measure: {measure!r} is a region, not a measure; select_by ranks by one of "
                             f"{list(self.rankable)}. For a region use select({measure!r}, fraction) or "
                             f"ranking({measure!r})")
        if (fraction is None) == (count is None):
            raise ValueError("select_by: give exactly one of fraction= (in (0, 1]) or count= (1..number of examples)")
        return np.sort(self.ranking(measure, order=order)[:count_of(fraction, count, len(self))])

    def subset_size(self, fraction: float) -> int:
        """``round(fraction * len(self))`` (at least 1), the size every subset of that fraction has."""
        return fraction_size(fraction, len(self))

    def region_of(self, fraction: float = 0.33) -> np.ndarray:
        """Per example, its region in :data:`MAP_REGIONS` (the ``fraction`` best-ranked of each; an
        example in several takes the first listed). The HTML map colours points by it.

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

        Each value lies halfway between the last example in the region and the first one out (on a
        tie the id decides, as in :meth:`ranking`). The PNG plot draws these lines.

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
            tokens: for OOV repair, the tokens of every example by id (see :func:`example_tokens`):
                left-out examples bringing missing tokens are added in the first region's rank order
                and as many lowest-ranked ones whose tokens stay covered dropped (the size stays exact).
            seed: seed of the ``random`` region.
        """
        regions = parse_regions(region)
        n = self.subset_size(fraction)
        proportions = region_shares(proportions, regions)
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
            selected = oov_repair(self, selected, self.ranking(regions[0], seed=seed), tokens)
        return np.sort(selected)

    def positions(self, dataset: "Dataset", ids: Sequence[int] | None = None, *, id_column: str = "example_id",
                  assume_id_order: bool = False) -> np.ndarray:
        """Row numbers in ``dataset`` of the example ids ``ids`` (default: all of the map's, ascending).

        Rows are matched by the ``id_column`` column, so a shuffled or filtered dataset gives the
        right rows (a map example missing from it is an error); without that column, by position
        only with ``assume_id_order=True`` on the very training set.

        Example:
            >>> import pyarrow as pa
            >>> from datasets import Dataset
            >>> dm = DataMap.from_dynamics(pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0],
            ...                                      "inv_ppl": [0.5, 0.1, 0.9], "correct": [True, False, True]}))
            >>> shuffled = Dataset.from_dict({"example_id": [2, 0, 1], "text": ["c", "a", "b"]})
            >>> dm.positions(shuffled, dm.ranking("hard-to-learn")).tolist()  # ids 1, 0, 2
            [2, 1, 0]
        """
        return datamap_rows(self, dataset, ids, id_column=id_column, assume_id_order=assume_id_order,
                             names=_API_NAMES)

    def subset(self, dataset: "Dataset", region: str | Sequence[str], fraction: float, *,
               oov_columns: Sequence[str] | None = None, id_column: str = "example_id",
               assume_id_order: bool = False, **kwargs) -> "Dataset":
        """The rows of ``dataset`` holding ``select(region, fraction)``'s example ids, in id order.

        Rows are found by :meth:`positions`; ``oov_columns`` turns on OOV repair with the tokens of
        those columns; other keywords go to :meth:`select`.
        """
        rows, _ = _subset_rows(self, dataset, region, fraction, oov_columns=oov_columns, id_column=id_column,
                               assume_id_order=assume_id_order, names=_API_NAMES, **kwargs)
        return dataset.select(rows)

    # ------------------------------------------------------------------ reporting
    def to_table(self):
        """The map as a ``pyarrow.Table``: the axes, then every recorded measure's summary (and ``never_learned``)."""
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

        x variability, y confidence, colour correctness in 10 bins; dashed lines mark where the
        ``fraction`` regions end (:meth:`region_cutoffs` of the whole map, even for a ``sample_fraction``).

        Example:
            >>> import pyarrow as pa, tempfile, os
            >>> t = pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0], "loss": [2.0, 0.5, 0.1],
            ...               "correct": [False, True, True]})
            >>> with tempfile.TemporaryDirectory() as d:
            ...     os.path.basename(DataMap.from_dynamics(t, "loss").plot(os.path.join(d, "map.png")))
            'map.png'
        """
        from .plot import plot_datamap

        return plot_datamap(self, path, sample_fraction=sample_fraction, seed=seed, title=title, fraction=fraction)

    def to_html(self, path: str | os.PathLike, *, dataset: "Dataset | None" = None,
                text_columns: Sequence[str] | None = None, id_column: str = "example_id",
                assume_id_order: bool = False, fraction: float = 0.33, max_text: int = 300,
                title: str | None = None) -> str:
        """An interactive map in one self-contained HTML file (written atomically); returns the path.

        Hovering shows a point's id, region, measures and the ``dataset``'s ``text_columns`` (rows
        found by :meth:`positions`; default: its string columns, cut after ``max_text`` characters);
        regions (:meth:`region_of` at ``fraction``) can be hidden; a selection exports its ids. Needs ``plotly``.
        """
        from ..validation import check_writable_path
        from .html import write_map_html

        check_writable_path("path", path, folder=False)  # a folder, or a file as its parent: said, not an errno
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
        """A short text summary: sizes, ranges and the regions of ``fraction`` (each with its real size)."""
        from .summary import datamap_summary

        return datamap_summary(self, fraction)

    def to_markdown(self, fraction: float = 0.33) -> str:
        """The summary as Markdown tables (for a dataset card), each region of ``fraction`` with its
        real count and share.

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
