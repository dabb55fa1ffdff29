"""Data-map example ids -> dataset rows: :func:`example_tokens`, the rows of a dataset that hold a
map's examples (by their id column, or by position from the very training set), subsets with
OOV repair, and the hover texts of the HTML map. Messages name the options as the caller spells
them (Python parameters, or the CLI's flags).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from .ids import as_ids as _as_ids

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset


__all__ = ["example_tokens", "oov_repair"]


def example_tokens(dataset: "Dataset", columns: Sequence[str]) -> list[frozenset]:
    """Per row, the set of ``(column, token)`` pairs of ``columns`` (token lists without -100, or
    whitespace-split text): tagged by column, so each column's vocabulary is covered separately.

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
        for i, v in enumerate(column_arrow(dataset, col).to_pylist()):
            if v is not None:
                out[i].update((col, t) for t in (v.split() if isinstance(v, str) else v) if t != -100)
    return [frozenset(s) for s in out]


def oov_repair(dm: Any, selected: np.ndarray, ranking: np.ndarray,
               tokens: Sequence[Iterable[Hashable]] | Mapping[Any, Iterable[Hashable]]) -> np.ndarray:
    """``selected`` (ids in selection rank order) repaired so every token of the map's examples is covered,
    at the same size: see :meth:`DataMap.select <hf_synthsample.cartography.DataMap.select>`."""
    if isinstance(tokens, Mapping):
        absent = [i for i in dm.example_ids.tolist() if i not in tokens]
        if absent:
            raise ValueError(f"tokens: no tokens for {len(absent)} example ids of the map (first: {absent[0]})")
    elif dm.example_ids.dtype.kind not in "iu":
        raise TypeError("tokens: the example ids are strings; pass a mapping from example id to tokens")
    elif len(tokens) <= int(dm.example_ids.max()):
        raise ValueError(
            f"tokens: need the tokens of every example id up to {int(dm.example_ids.max())}, got {len(tokens)} rows"
        )
    toks = {i: frozenset(tokens[i]) for i in dm.example_ids.tolist()}
    vocab = set().union(*toks.values()) if toks else set()
    count = Counter(t for i in selected.tolist() for t in toks[i])
    missing = vocab - count.keys()
    in_sel = set(selected.tolist())
    added: list[int] = []
    for i in ranking.tolist():
        if not missing:
            break
        if i not in in_sel and toks[i] & missing:
            added.append(i)
            missing -= toks[i]
            count.update(toks[i])
    dropped: set[int] = set()
    for i in selected[::-1].tolist():
        if len(dropped) == len(added):
            break
        if all(count[t] > 1 for t in toks[i]):
            count.subtract(toks[i])
            dropped.add(i)
    if len(dropped) < len(added):
        raise ValueError(
            f"OOV repair: {len(selected)} examples cannot cover the {len(vocab)} tokens of the full vocabulary; "
            f"use a larger fraction"
        )
    keep = [i for i in selected.tolist() if i not in dropped]
    return _as_ids(keep + added) if keep or added else selected[:0]


# how messages name the options: Python parameters, or the CLI's --options
_API_NAMES = {"dataset": "dataset", "id_column": "id_column", "assume_id_order": "assume_id_order=True"}


def datamap_rows(dm: Any, dataset: "Dataset", ids: Sequence[int] | None, *, id_column: str,
                  assume_id_order: bool, names: Mapping[str, str]) -> np.ndarray:
    """Row numbers of ``ids`` (default: all of ``dm``'s) in ``dataset``; see :meth:`DataMap.positions`."""
    from ..columns import column_arrow
    from ..hub.provenance import dataset_fingerprint
    from ..validation import check_non_empty_str

    ids = dm.example_ids if ids is None else _as_ids(ids)
    ds_name = names["dataset"]
    columns = getattr(dataset, "column_names", None)
    if columns is None or not hasattr(dataset, "select"):
        raise TypeError(f"{ds_name} must be a datasets.Dataset, got {type(dataset).__name__}")
    check_non_empty_str(names["id_column"], id_column)
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
    if (dm.dataset_fingerprints or dm.dataset_digests) and fingerprint not in dm.dataset_fingerprints:
        differs = _rows_differ(dm, dataset, id_column)
        if differs:
            raise ValueError(
                f"{ds_name} (fingerprint {fingerprint}) is not the training set the dynamics were recorded on "
                f"(fingerprint {' / '.join(dm.dataset_fingerprints) or 'not recorded'}; {differs}): another copy "
                f"of the data (shuffled, filtered) can have the same row count but other rows in each position, so "
                f"{names['assume_id_order']} cannot hold. Take the rows from the training set itself (or the same "
                f"rows, in the same order, saved and loaded again), or keep its {id_column!r} column and match by id"
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


def _rows_differ(dm: Any, dataset: "Dataset", id_column: str) -> str | None:
    """Why ``dataset`` (another fingerprint) does not hold the training set's rows in the same order,
    by the row digests the dynamics recorded; ``None`` when it does (an identical copy, reloaded)."""
    from ..hub.provenance import column_digests

    recorded = dm.dataset_digests
    if not recorded:
        return "the dynamics record no row digest to compare its rows with"
    if len(dataset) != dm.num_examples:
        return f"it has {len(dataset)} rows, the training set {dm.num_examples}"
    common = [c for c in dataset.column_names if c != id_column and c in recorded]
    if not common:
        return (f"it has none of the training set's columns ({', '.join(sorted(recorded))}) to compare, so its rows "
                f"cannot be shown to be the same")
    ours = column_digests(dataset, columns=common)
    other = [c for c in common if ours[c] != recorded[c]]
    if other:
        return f"the values of column {other[0]!r} differ from the training set's, row by row"
    return None


def _hover_texts(dm: Any, dataset: Any, text_columns: Sequence[str] | None, id_column: str,
                 assume_id_order: bool, max_text: int) -> dict[str, list[str]]:
    """The text columns of the rows holding the map's example ids, cut after ``max_text`` characters."""
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
    return {c: ["" if v is None else (s if len(s := str(v)) <= max_text else s[:max_text] + "…")
                for v in column_arrow(dataset, c).take(rows).to_pylist()] for c in text_columns}


def _subset_rows(dm: Any, dataset: "Dataset", region, fraction: float, *, oov_columns, id_column: str,
                 assume_id_order: bool, names: Mapping[str, str], **kwargs) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, ids)``: the rows of ``dataset`` holding the subset's example ids, both in id order."""
    rows = datamap_rows(dm, dataset, None, id_column=id_column, assume_id_order=assume_id_order, names=names)
    tokens = None
    if oov_columns:
        per_row = example_tokens(dataset.select(rows), oov_columns)
        tokens = dict(zip(dm.example_ids.tolist(), per_row))
    ids = dm.select(region, fraction, tokens=tokens, **kwargs)
    return rows[np.searchsorted(dm.example_ids, ids)], ids
