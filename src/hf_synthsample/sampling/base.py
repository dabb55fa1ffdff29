"""The sampler interface: a configured object that picks row indices of a ``Dataset``.

Samplers follow scikit-learn conventions: one frozen settings dataclass
(:mod:`~hf_synthsample.sampling.settings`), ``get_params`` / ``set_params``, results of the last
call with a trailing underscore (``report_``). :meth:`BaseSampler.indices` does the work; the rest
adapt it to ``Dataset.select`` / ``Dataset.filter``.

Example:
    >>> from datasets import Dataset
    >>> from hf_synthsample.sampling import HomogenizeSampler
    >>> ds = Dataset.from_dict({"v": [0, 0, 0, 0, 1, 1]})
    >>> sampler = HomogenizeSampler("v", seed=0)
    >>> sorted(ds.select(sampler.indices(ds, 4))["v"])  # as uniform as the pool allows
    [0, 0, 1, 1]
    >>> len(ds.filter(sampler.filter_function(ds, 4), with_indices=True, batched=True))
    4
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..settings import Estimator
from ..validation import check_choice, check_int, check_not_empty
from .settings import MISSING_POLICIES

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["BaseSampler", "MISSING_POLICIES", "check_column_values"]

_KINDS = {
    "numeric": "numbers (int or float)",
    "scalar": "scalar values (int, float, str or bool)",
    "list": "lists of str",
}


def _arrow_kind(type_: pa.DataType) -> str | None:
    if pa.types.is_integer(type_) or pa.types.is_floating(type_) or pa.types.is_decimal(type_):
        return "numeric"
    if pa.types.is_boolean(type_) or pa.types.is_string(type_) or pa.types.is_large_string(type_):
        return "scalar"
    if pa.types.is_dictionary(type_):
        return _arrow_kind(type_.value_type)
    if pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_):
        inner = type_.value_type
        if pa.types.is_string(inner) or pa.types.is_large_string(inner) or pa.types.is_null(inner):
            return "list"
    return None


def _missing_mask(arr: pa.Array) -> np.ndarray:
    """Rows of ``arr`` that are null, NaN, or (lists) hold a null item."""
    missing = arr.is_null().to_numpy(zero_copy_only=False)
    if pa.types.is_floating(arr.type):
        missing |= pc.fill_null(pc.is_nan(arr), False).to_numpy(zero_copy_only=False)
    elif pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) or pa.types.is_fixed_size_list(arr.type):
        flat = pc.list_flatten(arr)
        if flat.null_count:
            parents = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
            missing[parents[flat.is_null().to_numpy(zero_copy_only=False)]] = True
    return missing


def check_column_values(dataset: "Dataset", column: str, *, kind: str, missing: str = "raise",
                        name: str = "column") -> np.ndarray | None:
    """Check that column ``column`` of ``dataset`` holds values a sampler can use.

    ``kind``: ``"numeric"`` (int / float, ranked), ``"scalar"`` (int, float, str, bool: levels) or
    ``"list"`` (lists of str); another type is a ``TypeError``. Missing values (null, NaN, a null
    list item) are a ``ValueError`` unless ``missing="drop"``: then the mask of the usable rows is
    returned (``None``: every row is usable).

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"d": [1.0, float("nan"), 3.0, None]})
        >>> check_column_values(ds, "d", kind="numeric")
        Traceback (most recent call last):
        ...
        ValueError: column: column 'd': 2 of 4 rows have a missing value (null or NaN), the first at row 1; pass missing='drop' to leave them out, or fill them first (dataset.filter / dataset.map)
        >>> check_column_values(ds, "d", kind="numeric", missing="drop").tolist()
        [True, False, True, False]
    """
    from ..columns import column_arrow

    check_choice("missing", missing, MISSING_POLICIES)
    arr = column_arrow(dataset, column).combine_chunks()
    got = _arrow_kind(arr.type)
    if got is None and pa.types.is_null(arr.type):  # every value is None
        got = kind
    if got != kind and not (kind == "scalar" and got == "numeric"):
        raise TypeError(
            f"{name}: column {column!r} holds {arr.type} values; it must hold {_KINDS[kind]}"
            + (" (cast it first, e.g. dataset.cast_column or dataset.map)" if kind == "numeric" else "")
        )
    bad = _missing_mask(arr)
    if missing == "drop":
        return ~bad if bad.any() else None
    what = "a missing value (a null list or a null item)" if kind == "list" else "a missing value (null or NaN)"
    _raise_if_any(bad, f"{name}: column {column!r}: ", f"rows have {what}",
                  "pass missing='drop' to leave them out, or fill them first (dataset.filter / dataset.map)")
    return None


def _raise_if_any(bad: np.ndarray, head: str, what: str, hint: str) -> None:
    """A ``ValueError`` "``head`` N of M ``what``, the first at row R; ``hint``" if any of ``bad`` is set."""
    rows = np.flatnonzero(bad)
    if len(rows):
        raise ValueError(f"{head}{len(rows)} of {len(bad)} {what}, the first at row {int(rows[0])}; {hint}")


def _check_size(k: int | None, n: int, rows: str, needed_by: str | None = None) -> None:
    """``k`` against the ``n`` rows that can be sampled (``rows`` names them); ``needed_by``: ``k`` is required."""
    if k is None and needed_by:
        raise ValueError(f"k: {needed_by} needs a sample size (an int in [0, {n}])")
    if k is not None and k > n:
        raise ValueError(f"k: {k} is larger than the {n} rows {rows}; accepted: 0..{n}")


class BaseSampler(Estimator):
    """Base class: subclasses name their settings (``settings_class``), the fields that may be given
    by position (``positional``), and implement :meth:`_indices`.

    ``Sampler(settings)``, ``Sampler(*positional, **params)`` or both (the params override). The
    constructor's signature (the settings' fields) comes from :class:`~hf_synthsample.settings.Estimator`."""

    def __repr__(self) -> str:  # the changed settings, as their record shows them (a list of columns)
        record = self.settings.to_record()
        return f"{type(self).__name__}({', '.join(f'{k}={record[k]!r}' for k in self.settings.changed())})"

    def indices(self, dataset: "Dataset", k: int | None = None) -> np.ndarray:
        """Selected row indices (sorted ascending, no repeats) of ``k`` rows (``None``: the sampler's default)."""
        check_not_empty(dataset)
        if k is not None:
            k = check_int("k", k, min=0, max=len(dataset))
        return np.asarray(self._indices(dataset, k), dtype=np.int64)

    def _indices(self, dataset: "Dataset", k: int | None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def sample(self, dataset: "Dataset", k: int | None = None) -> "Dataset":
        """The subset itself: ``dataset.select(self.indices(dataset, k))``."""
        return dataset.select(self.indices(dataset, k))

    def mask(self, dataset: "Dataset", k: int | None = None) -> np.ndarray:
        """Boolean mask over the rows of ``dataset`` marking the selected ones."""
        mask = np.zeros(len(dataset), dtype=bool)
        mask[self.indices(dataset, k)] = True
        return mask

    def filter_function(self, dataset: "Dataset", k: int | None = None) -> Callable:
        """A function for ``dataset.filter(fn, with_indices=True, batched=True)`` keeping the selection.

        The selection is computed once, here, so the function works with any ``num_proc``.
        """
        mask = self.mask(dataset, k)

        def keep(batch: Any, indices: list[int]) -> list[bool]:
            return mask[np.asarray(indices, dtype=np.int64)].tolist()

        return keep
