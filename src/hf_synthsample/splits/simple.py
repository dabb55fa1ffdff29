"""The standard non-MCD splits: whole templates held out, longest rows held out, random.

Each returns ``DatasetDict(train, test)``, a partition of the rows (each side in input order),
deterministic for a seed. Whole templates (lengths) move together: a test side off by more than
``size_tolerance`` of the rows is a ``ValueError`` giving the sizes they allow.

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"program": ["(a x)", "(a y)", "(b x)", "(b (c x))"], "n": [1, 2, 3, 4]})
    >>> list(length_split(ds, "n", test_size=0.25)["test"]["n"])
    [4]
    >>> len(random_split(ds, test_size=0.5, seed=0)["test"])
    2
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..settings import signature_from
from ..validation import check_float
from ._data import _bad_rows, as_split, check_dataset, check_program_column, check_template_column, check_test_size
from .settings import METHODS, SplitSettings, settings_of

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

__all__ = ["random_split", "template_split", "length_split", "by_random", "by_template", "by_length"]


def _unused(method: str) -> tuple[str, ...]:
    """The fields ``method`` does not read (hidden from its function's signature; refused when changed)."""
    return ("method", *(n for n, spec in SplitSettings.specs().items()
                        if method not in (spec.applies_when or {}).get("method", METHODS)))


@signature_from(SplitSettings, positional=("test_size",), fixed=_unused("random"))
def random_split(dataset: "Dataset", *args: Any, settings: SplitSettings | None = None,
                 **changes: Any) -> "DatasetDict":
    """``round(test_size * rows)`` rows drawn uniformly (seeded) for test, the rest train; ``settings``
    and ``changes``: :class:`~.settings.SplitSettings`' (``test_size`` also by position)."""
    s = settings_of(SplitSettings, args, settings, changes, positional=("test_size",), fixed={"method": "random"},
                    name="random_split")
    s.require_structure()
    return by_random(dataset, s)


def by_random(dataset: "Dataset", s: SplitSettings) -> "DatasetDict":
    """The random split of settings ``s`` (checked)."""
    check_dataset(dataset)
    _, rows = check_test_size(s.test_size, len(dataset))
    return as_split(dataset, np.random.default_rng(s.seed).permutation(len(dataset))[:rows])


@signature_from(SplitSettings, positional=("column", "language"), fixed=_unused("template"))
def template_split(dataset: "Dataset", *args: Any, settings: SplitSettings | None = None,
                   **changes: Any) -> "DatasetDict":
    """Whole abstract templates held out (Finegan-Dollak et al. 2018): in a seeded random order, to
    test while they fit. Templates come from ``template_column`` or from parsing ``column`` with
    ``language``; ``settings`` and ``changes``: :class:`~.settings.SplitSettings`' (``column`` and
    ``language`` also by position).

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": ["(a x)", "(a y)", "(b x)", "(b 'v)", "(c (d x))", "(c (d y))"]})
        >>> s = template_split(ds, language="sexpr", test_size=0.3, seed=0)
        >>> sorted(set(s["test"]["program"]) & set(s["train"]["program"]))
        []
    """
    s = settings_of(SplitSettings, args, settings, changes, fixed={"method": "template"}, name="template_split")
    s.require_structure()
    return by_template(dataset, s)


def by_template(dataset: "Dataset", s: SplitSettings) -> "DatasetDict":
    """The template split of settings ``s`` (checked)."""
    column, language, test_size, seed, template_column = s.column, s.language, s.test_size, s.seed, s.template_column
    size_tolerance = s.size_tolerance_share
    from ..columns import column_arrow

    check_dataset(dataset)
    _, rows = check_test_size(test_size, len(dataset))
    if template_column is not None:
        if template_column not in dataset.column_names:
            raise ValueError(f"template_column: no column {template_column!r}; columns: {dataset.column_names}")
        check_template_column(dataset, template_column)
        templates = column_arrow(dataset, template_column).to_pylist()
    else:
        from ..sampling.structural import StructureColumns

        if language is None:
            raise ValueError("language: give the structure language of the program column, or template_column")
        check_program_column(dataset, column)
        templates = StructureColumns(column, language).read(dataset, ["template"])[0]["template"]
    # templates as given (an int template 1 and a str "1" stay apart), numbered in sorted order
    keys = [(type(t).__name__, t) for t in templates]
    names = sorted(set(keys))
    code = {k: i for i, k in enumerate(names)}
    inverse = np.asarray([code[k] for k in keys], dtype=np.int64)
    counts = np.bincount(inverse, minlength=len(names))
    order = np.random.default_rng(seed).permutation(len(names))
    chosen, total = [], 0
    for t in order:
        if total + counts[t] <= rows:
            chosen.append(t)
            total += counts[t]
        if total == rows:
            break
    if len(chosen) == len(names):
        raise ValueError("test_size: it would put every template in test; lower test_size")
    tol = int(np.floor(size_tolerance * len(dataset)))
    if total < rows - tol or total == 0:
        biggest = ", ".join(map(str, np.sort(counts)[::-1][:5].tolist()))
        raise ValueError(
            f"test_size: whole templates give {total} test rows where {rows} are asked ({test_size} of "
            f"{len(dataset)}; size_tolerance {size_tolerance} allows {rows - tol} to {rows}): {len(names)} templates, the "
            f"largest of {biggest} rows. Raise size_tolerance, change test_size, or use a dataset with more, "
            "smaller templates")
    is_test = np.isin(inverse, np.asarray(chosen, dtype=np.int64))
    return as_split(dataset, np.flatnonzero(is_test))


@signature_from(SplitSettings, positional=(), fixed=(*_unused("length"), "length_column"))
def length_split(dataset: "Dataset", length: str | Callable[[Any], float] | None = None, *,
                 threshold: float | None = None, settings: SplitSettings | None = None,
                 **changes: Any) -> "DatasetDict":
    """The longest rows in test (Lake and Baroni 2018): ``test_size`` of them, or those at or over
    ``threshold``. ``length``: a numeric column (the settings' ``length_column``), or a function of each
    row's ``column`` value (of the row when no ``column`` is given); ``None``: the settings'
    ``length_column``, else the words of ``column``. ``settings`` and ``changes``:
    :class:`~.settings.SplitSettings`'.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"command": ["jump", "walk twice", "run left twice", "look"]})
        >>> list(length_split(ds, lambda s: len(s.split()), column="command", test_size=0.25)["test"]["command"])
        ['run left twice']
    """
    default_size = SplitSettings.defaults()["test_size"]
    if threshold is not None and ("test_size" in changes or getattr(settings, "test_size", default_size) != default_size):
        raise ValueError("test_size, threshold: give one of them (the threshold decides the test side by itself)")
    if isinstance(length, str):
        changes["length_column"] = length
    row = callable(length) and "column" not in changes and settings is None  # a function of the row
    s = settings_of(SplitSettings, (), settings, changes, positional=(), fixed={"method": "length"},
                    name="length_split")
    s.require_structure()
    if length is None or isinstance(length, str):
        length = s.length_column
    return by_length(dataset, length, column=None if row else s.column,
                     test_size=None if threshold is not None else s.test_size, threshold=threshold,
                     size_tolerance=s.size_tolerance_share)


def _words(text: Any) -> int:
    """The length split's default length: words of the text."""
    return len(str(text).split())


def by_length(dataset: "Dataset", length: str | Callable[[Any], float] | None, *, column: str | None,
              test_size: float | None, threshold: float | None, size_tolerance: float) -> "DatasetDict":
    """The length split of ``length`` (a column, or a function of ``column``'s values, of the row when
    ``column`` is ``None``; ``None``: words of ``column``): ``test_size`` of the rows, or those at or
    over ``threshold`` (checked)."""
    length = _words if length is None else length
    from ..columns import column_arrow

    check_dataset(dataset)
    n = len(dataset)
    if threshold is None:
        test_size, rows = check_test_size(test_size, n)
    elif isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating)) \
            or not np.isfinite(threshold):
        raise TypeError(f"threshold must be a finite number, got {threshold!r}")
    size_tolerance = check_float("size_tolerance", size_tolerance, min=0.0, max=0.5)
    if callable(length):
        if column is not None:
            if column not in dataset.column_names:
                raise ValueError(f"column: no column {column!r}; columns: {dataset.column_names}")
            values = [length(v) for v in column_arrow(dataset, column).to_pylist()]
        else:
            values = [length(row) for row in dataset]
        bad = [i for i, v in enumerate(values) if v is not None and
               (isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)))]
        if bad:
            raise TypeError(f"length: the function must return numbers; it returned {values[bad[0]]!r} "
                            f"({type(values[bad[0]]).__name__}) for row {bad[0]}")
    elif isinstance(length, str):
        if length not in dataset.column_names:
            raise ValueError(f"length: no column {length!r}; give a numeric column or a function; "
                             f"columns: {dataset.column_names}")
        from ..sampling.base import check_column_values

        check_column_values(dataset, length, kind="numeric", missing="drop", name="length")  # the type, before any work
        values = column_arrow(dataset, length).to_pylist()
    else:
        raise TypeError(f"length must be a column name or a function, got {length!r}")
    lengths = np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)
    if np.isnan(lengths).any():
        raise ValueError(f"length: {_bad_rows(np.isnan(lengths), 'have no length (null or NaN)')}; fill them or "
                         "leave those rows out first (dataset.filter)")
    if threshold is None:
        distinct = np.unique(lengths)
        # share of rows >= each length but the shortest (which stays in train)
        shares = 1.0 - np.searchsorted(np.sort(lengths), distinct[1:], side="left") / n
        if not len(shares):
            raise ValueError("length: every row has the same length; nothing to split on")
        best = int(np.argmin(np.abs(shares - test_size)))
        threshold = float(distinct[1:][best])
        if abs(int(round(shares[best] * n)) - rows) > int(np.floor(size_tolerance * n)):
            below, above = shares[shares <= test_size], shares[shares > test_size]
            near = ", ".join(f"{x:.3f} (test {round(x * n)} rows)" for x in
                             ([below.max()] if len(below) else []) + ([above.min()] if len(above) else []))
            raise ValueError(
                f"test_size: rows of one length stay together, and no length threshold gives a test side within "
                f"size_tolerance {size_tolerance} of test_size {test_size} ({rows} of {n} rows); the nearest shares "
                f"are {near}. Choose one of those as test_size, raise size_tolerance, or give threshold")
    is_test = lengths >= threshold
    if is_test.all() or not is_test.any():
        raise ValueError(f"threshold: {threshold} puts {int(is_test.sum())} of {n} rows in test; "
                         f"accepted: between {lengths.min()} (exclusive) and {lengths.max()}")
    return as_split(dataset, np.flatnonzero(is_test))
