"""Input checks and the structure of a dataset's rows, grouped, for the split makers.

Rows whose atoms and compounds are identical (the same program once values are abstracted) form
one *group*; the MCD search moves groups, so rows sharing a structure always land on the same side
(a structure seen in train is never "new" in test) and a pool of a million rows costs what its
distinct structures cost. The grouping is the structural samplers' (:func:`~hf_synthsample.sampling.structural._bags`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from ..validation import check_float

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

__all__ = ["Structures", "read_structures", "check_test_size", "check_train_size", "check_dataset", "as_split",
           "parent_child_compounds"]


def check_dataset(dataset: Any, name: str = "dataset") -> None:
    from datasets import Dataset

    if not isinstance(dataset, Dataset):
        raise TypeError(f"{name} must be a datasets.Dataset (pick a split of a DatasetDict), got {type(dataset).__name__}")
    if len(dataset) < 2:
        raise ValueError(f"{name} has {len(dataset)} rows; a train/test split needs at least 2")


def check_test_size(test_size: Any, n: int) -> tuple[float, int]:
    """``test_size`` in (0, 1) and the number of test rows it asks for (at least 1, at most n - 1)."""
    test_size = check_float("test_size", test_size, min=0.0, max=1.0, min_inclusive=False, max_inclusive=False)
    rows = int(round(test_size * n))
    if rows < 1 or rows > n - 1:
        raise ValueError(f"test_size: {test_size} of {n} rows gives {rows} test rows; choose a test_size that leaves "
                         f"at least one row on each side (accepted: ({1 / n:.3g}, {1 - 1 / n:.3g}))")
    return test_size, rows


def check_train_size(train_size: Any, test_rows: int, n: int) -> int | None:
    """The number of train rows ``train_size`` asks for, or ``None`` for the rest of the rows (a
    partition). As in scikit-learn's ``train_test_split``, ``train_size + test_size`` may be
    below 1: the rows on neither side are left out (Keysers et al.'s MCD splits are such subsets)."""
    if train_size is None:
        return None
    train_size = check_float("train_size", train_size, min=0.0, max=1.0, min_inclusive=False, max_inclusive=False)
    rows = int(round(train_size * n))
    if rows < 1 or rows > n - test_rows:
        raise ValueError(f"train_size: {train_size} of {n} rows gives {rows} train rows, but {n - test_rows} are left "
                         f"beside the {test_rows} test rows; accepted: None (all the others) or a share in "
                         f"({1 / n:.3g}, {(n - test_rows) / n:.3g}] (train_size + test_size <= 1)")
    return rows


def as_split(dataset: "Dataset", test_rows: np.ndarray, train_rows: np.ndarray | None = None) -> "DatasetDict":
    """``DatasetDict(train, test)`` of ``dataset``'s rows, each side in input order; train is every
    row not in test unless ``train_rows`` are given."""
    from datasets import DatasetDict

    mask = np.zeros(len(dataset), dtype=bool)
    mask[np.asarray(test_rows, dtype=np.int64)] = True
    train = np.flatnonzero(~mask) if train_rows is None else np.sort(np.asarray(train_rows, dtype=np.int64))
    return DatasetDict({"train": dataset.select(train), "test": dataset.select(np.flatnonzero(mask))})


def parent_child_compounds(tree) -> list[str]:
    """TMCD compounds (Shaw et al. 2021): each parent-child pair of the target tree, values abstracted.

    Example:
        >>> from hf_synthsample.structure import parse
        >>> parent_child_compounds(parse("(a (b c) 'x)", "sexpr"))
        ['(a b)', '(a entity)', '(b c)']
    """
    out = []
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in node.children:
            out.append(f"({node.atom()} {child.atom()})")
        stack.extend(reversed(node.children))
    return out


@dataclass
class Structures:
    """Groups of rows with one structure: ``members`` (a ``GroupMembers``: rows per group),
    ``atoms`` / ``compounds`` as CSR ``(ptr, idx, val, V)``, the vocabularies, and the rows that
    have no structure (unparsable, kept out of the search)."""

    members: Any
    atoms: tuple
    compounds: tuple
    atom_names: list
    compound_names: list
    unparsable: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return self.members.sizes


def _csr(coo) -> tuple:
    g, f, x, G, V = coo
    ptr = np.concatenate([[0], np.cumsum(np.bincount(g, minlength=G))]).astype(np.int64)
    return ptr, np.asarray(f, dtype=np.int64), np.asarray(x, dtype=np.float64), max(int(V), 1)


def read_structures(
    dataset: "Dataset",
    *,
    column: str,
    language: str | None,
    max_height: int,
    atoms_column: str | None,
    compounds_column: str | None,
    compound_weights: bool | Mapping[str, float] | None,
    compounds_fn: Callable | None = None,
    skip_unparsable: bool = False,
    side: np.ndarray | None = None,
) -> Structures:
    """The grouped structure of ``dataset``'s rows (atoms from ``atoms_column`` or the language
    adapter; compounds from ``compounds_column``, ``compounds_fn(tree)`` or the adapter).
    ``side`` (an int per row) keeps rows of different sides in different groups."""
    import pyarrow as pa

    from ..columns import column_arrow
    from ..sampling.structural import StructureColumns, _bags
    from ..structure import get_language

    if compound_weights is None:  # Keysers weights need trees: on for the language's compounds, off otherwise
        compound_weights = compounds_column is None and compounds_fn is None
    names = set(dataset.column_names)
    for arg, col in (("atoms_column", atoms_column), ("compounds_column", compounds_column)):
        if col is not None and col not in names:
            raise ValueError(f"{arg}: no column {col!r}; columns: {dataset.column_names}")
    need_program = atoms_column is None or (compounds_column is None)
    if need_program:
        if language is None:
            raise ValueError("language: give the structure language of the program column (see "
                             "hf_synthsample.structure.languages()), or atoms_column and compounds_column")
        get_language(language)
        if column not in names:
            raise ValueError(f"column: no program column {column!r}; columns: {dataset.column_names}")
    if compound_weights is True and compounds_column is not None:
        raise ValueError("compound_weights=True needs program trees; with compounds_column pass compound_weights=False "
                         "or a mapping compound -> weight")
    if compound_weights is True and compounds_fn is not None:
        raise ValueError("compound_weights=True is defined for the language's compounds; with compounds_fn pass "
                         "compound_weights=False or a mapping compound -> weight")

    view = dataset.select_columns(sorted({c for c in (column if need_program else None, atoms_column,
                                                      compounds_column) if c is not None}))
    renames = {}
    if atoms_column is not None:
        renames[atoms_column] = "atoms"
    if compounds_column is not None:
        renames[compounds_column] = "compounds"
    drop = [c for c in ("atoms", "compounds") if c in view.column_names and c not in renames.values()
            and c not in renames]
    if drop:  # a column named like a structure column that the caller did not choose must not be read as one
        view = view.remove_columns(drop)
    if renames:
        view = view.rename_columns({k: v for k, v in renames.items() if k != v})
    src = StructureColumns(column if need_program else "__none__", language or "sexpr", max_height, skip_unparsable)
    if compounds_fn is not None and compounds_column is None:
        cols, bad = src.read_encoded(view, ["atoms"])
        lang = get_language(language)
        comps: list = []
        bad_set = set(bad.tolist())
        for i, program in enumerate(column_arrow(view, column).to_pylist()):
            comps.append([] if i in bad_set else [str(c) for c in compounds_fn(lang.parse(program))])
        arr = pa.array(comps, type=pa.list_(pa.string()))
        lens = arr.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        enc = arr.flatten().dictionary_encode()
        cols["compounds"] = (np.concatenate([[0], np.cumsum(lens)]), enc.indices.to_numpy(zero_copy_only=False).astype(np.int64),
                             len(enc.dictionary), enc.dictionary)
    else:
        cols, bad = src.read_encoded(view, ["atoms", "compounds"])
    order = np.setdiff1d(np.arange(len(dataset)), bad)
    if not len(order):
        raise ValueError(f"{column}: no row has a structure to split on")
    comp_vocab = cols["compounds"][3].to_pylist()
    atom_vocab = cols["atoms"][3].to_pylist()
    weights = None
    if compound_weights is True:
        # Keysers weights over the pool, computed once per distinct structure with its row count
        from ..sampling.structural import _group_rows, _sorted_rows
        from ..structure import compound_weights as keysers_weights

        a_off, a_codes = cols["atoms"][:2]
        c_off, c_codes = cols["compounds"][:2]
        members, reps = _group_rows(order, (a_off, _sorted_rows(a_off, a_codes)), (c_off, _sorted_rows(c_off, c_codes)), None)
        programs = column_arrow(view, column).take(pa.array(reps)).to_pylist()
        w = keysers_weights(programs, language, max_height, counts=members.sizes.tolist())
        weights = np.asarray([float(w.get(c, 1.0)) for c in comp_vocab], dtype=np.float64)
    elif compound_weights not in (False, None):
        if not isinstance(compound_weights, Mapping):
            raise TypeError(f"compound_weights must be a bool or a mapping compound -> weight, got {compound_weights!r}")
        weights = np.asarray([float(compound_weights.get(c, 1.0)) for c in comp_vocab], dtype=np.float64)
    key = None if side is None else np.asarray(side, dtype=np.int64)
    a_coo, c_coo, members, group_side = _bags(cols["atoms"], cols["compounds"], order, weights, key)
    out = Structures(members, _csr(a_coo), _csr(c_coo), atom_vocab, comp_vocab, bad)
    out.group_side = group_side
    return out
