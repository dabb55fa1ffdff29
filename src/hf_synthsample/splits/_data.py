"""Input checks and the structure of a dataset's rows, grouped, for the split makers.

Rows with identical atoms and compounds form one *group* (the structural samplers' grouping); the
MCD search moves groups, so rows sharing a structure land on the same side and a pool costs what
its distinct structures cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from ..validation import check_float

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

__all__ = ["Structures", "read_structures", "check_test_size", "check_train_size", "check_dataset", "as_split",
           "parent_child_compounds", "check_list_column", "check_template_column", "check_program_column",
           "check_compound_weights", "check_sides", "settings_structures"]


def check_dataset(dataset: Any, name: str = "dataset") -> None:
    from datasets import Dataset

    if not isinstance(dataset, Dataset):
        raise TypeError(f"{name} must be a datasets.Dataset (pick a split of a DatasetDict), got {type(dataset).__name__}")
    if len(dataset) < 2:
        raise ValueError(f"{name} has {len(dataset)} rows; a train/test split needs at least 2")


def _bad_rows(mask: np.ndarray, what: str) -> str:
    """``"3 of 48 rows <what>, the first at row 5"``."""
    rows = np.flatnonzero(mask)
    return f"{len(rows)} of {len(mask)} rows {what}, the first at row {int(rows[0])}"


def check_list_column(dataset: "Dataset", column: str, arg: str, *, non_empty: bool = False) -> None:
    """``column`` holds a list of strings in every row (no null list or item; with ``non_empty`` no
    empty list), else a ``TypeError`` naming the type found or a ``ValueError`` naming the first bad row.

    Example:
        >>> from datasets import Dataset
        >>> check_list_column(Dataset.from_dict({"atoms": ["a b", "c"]}), "atoms", "atoms_column")
        Traceback (most recent call last):
        ...
        TypeError: atoms_column: column 'atoms' holds string values; it must hold lists of str (one list per row; e.g. dataset.map(lambda r: {'atoms': r['atoms'].split()}))
    """
    import pyarrow as pa

    from ..columns import column_arrow
    from ..sampling.base import check_column_values

    try:
        ok = check_column_values(dataset, column, kind="list", missing="drop", name=arg)
    except TypeError as err:
        raise TypeError(f"{err} (one list per row; e.g. dataset.map(lambda r: {{{column!r}: r[{column!r}].split()}}))"
                        ) from None
    if ok is not None:
        raise ValueError(f"{arg}: column {column!r}: {_bad_rows(~ok, 'hold a null list or a null item')}; a split "
                         "needs every row's list: fill them (dataset.map) or leave those rows out first (dataset.filter)")
    if non_empty:
        arr = column_arrow(dataset, column).combine_chunks()
        if pa.types.is_fixed_size_list(arr.type):
            arr = arr.cast(pa.list_(arr.type.value_type))
        empty = arr.value_lengths().to_numpy(zero_copy_only=False) == 0
        if empty.any():
            raise ValueError(f"{arg}: column {column!r}: {_bad_rows(empty, 'hold an empty list')}; every program has "
                             "at least one atom: fill them or leave those rows out first (dataset.filter)")


def check_template_column(dataset: "Dataset", column: str, arg: str = "template_column") -> None:
    """``column`` holds one template (str or int) per row, none null (it must not become ``'None'``).

    Example:
        >>> from datasets import Dataset
        >>> check_template_column(Dataset.from_dict({"t": ["a", None, "b"]}), "t")
        Traceback (most recent call last):
        ...
        ValueError: template_column: column 't': 1 of 3 rows have no template (null), the first at row 1; fill them (dataset.map) or leave those rows out first (dataset.filter)
    """
    from ..sampling.base import check_column_values

    ok = check_column_values(dataset, column, kind="scalar", missing="drop", name=arg)
    if ok is not None:
        raise ValueError(f"{arg}: column {column!r}: {_bad_rows(~ok, 'have no template (null)')}; fill them "
                         "(dataset.map) or leave those rows out first (dataset.filter)")


def check_program_column(dataset: "Dataset", column: str, arg: str = "column") -> None:
    """``column`` holds programs as strings (a null is an unparsable row)."""
    import pyarrow as pa

    from ..columns import column_arrow

    if column not in dataset.column_names:
        raise ValueError(f"{arg}: no program column {column!r}; columns: {dataset.column_names}")
    t = column_arrow(dataset, column).type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)):
        raise TypeError(f"{arg}: column {column!r} holds {t} values; it must hold programs as str (a list column of "
                        "atoms or compounds goes in atoms_column / compounds_column)")


def check_compound_weights(compound_weights: Any) -> Any:
    """``compound_weights`` checked: ``None``, a bool, ``"example"``, ``"pool"`` or a mapping (as a dict)."""
    from ..structure import COMPOUND_WEIGHTINGS

    if compound_weights is None or isinstance(compound_weights, bool):
        return compound_weights
    if isinstance(compound_weights, str):
        if compound_weights not in COMPOUND_WEIGHTINGS:
            raise ValueError(f"compound_weights: unknown weighting {compound_weights!r}; accepted: None (automatic), "
                             "True or 'example' (Keysers et al.'s weight of each compound in each example), 'pool' "
                             "(one weight per compound over the pool), False, or a mapping compound -> weight")
        return compound_weights
    if not isinstance(compound_weights, Mapping):
        raise TypeError(f"compound_weights must be None, a bool, 'example', 'pool' or a mapping compound -> weight, got "
                        f"{type(compound_weights).__name__}")
    out = {}
    for k, v in compound_weights.items():
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v) or v < 0:
            raise ValueError(f"compound_weights: the weight of {k!r} is {v!r}; weights must be finite numbers >= 0")
        out[str(k)] = float(v)
    return out


def check_test_size(test_size: Any, n: int) -> tuple[float, int]:
    """``test_size`` in (0, 1) and the number of test rows it asks for (at least 1, at most n - 1)."""
    test_size = check_float("test_size", test_size, min=0.0, max=1.0, min_inclusive=False, max_inclusive=False)
    rows = int(round(test_size * n))
    if rows < 1 or rows > n - 1:
        raise ValueError(f"test_size: {test_size} of {n} rows gives {rows} test rows; choose a test_size that leaves "
                         f"at least one row on each side (accepted: ({1 / n:.3g}, {1 - 1 / n:.3g}))")
    return test_size, rows


def check_train_size(train_size: Any, test_rows: int, n: int) -> int | None:
    """The train rows a (checked) ``train_size`` asks for, or ``None`` for a partition."""
    if train_size is None:
        return None
    rows = int(round(train_size * n))
    if rows < 1 or rows > n - test_rows:
        raise ValueError(f"train_size: {train_size} of {n} rows gives {rows} train rows, but {n - test_rows} are left "
                         f"beside the {test_rows} test rows; accepted: None (all the others) or a share in "
                         f"({1 / n:.3g}, {(n - test_rows) / n:.3g}] (train_size + test_size <= 1)")
    return rows


def check_sides(test_rows: int, train_rows: int, n: int, test_size: float, train_size: float | None,
                size_tolerance: float) -> None:
    """A ``ValueError`` naming the argument unless both sides have their size (+/- the tolerance)."""
    _, target = check_test_size(test_size, n)
    tol = int(np.floor(size_tolerance * n))
    if abs(test_rows - target) > tol or test_rows < 1:
        raise ValueError(f"test_size: the split has {test_rows} test rows where {target} (+/- {tol}) were asked; "
                         "raise size_tolerance or change test_size")
    train_target = check_train_size(train_size, target, n)
    if train_target is None:
        if test_rows + train_rows != n or train_rows < 1:
            raise ValueError(f"test_size: the split has {train_rows} train rows beside {test_rows} test rows of {n}; "
                             "lower test_size")
    elif abs(train_rows - train_target) > tol or train_rows < 1:
        raise ValueError(f"train_size: the split has {train_rows} train rows where {train_target} (+/- {tol}) were "
                         "asked; raise size_tolerance or change train_size")


def as_split(dataset: "Dataset", test_rows: np.ndarray, train_rows: np.ndarray | None = None) -> "DatasetDict":
    """``DatasetDict(train, test)``, sides in input order; train: the rest unless ``train_rows``."""
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
    """Groups of rows with one structure: members, CSR ``(ptr, idx, val, V)`` features, the unparsable rows."""

    members: Any
    atoms: tuple
    compounds: tuple
    atom_names: list
    compound_names: list
    unparsable: np.ndarray
    group_side: Any = None  # with ``side``: each group's side
    # each row's template (None: unparsable), read in the same parse, for the template-disjoint statement
    templates: list | None = None
    # the compound CSR with its weights taken over the groups a mask keeps (the rows a split holds
    # on either side); None where the weights do not depend on which rows are kept
    reweigh: Any = None

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
    compound_weights: bool | str | Mapping[str, float] | None,
    compounds_fn: Callable | None = None,
    skip_unparsable: bool = False,
    side: np.ndarray | None = None,
    templates: bool = False,
    num_proc: int | None = None,
) -> Structures:
    """The grouped structure of ``dataset``'s rows (from the columns, ``compounds_fn(tree)`` or the
    adapter); ``side`` keeps rows of different sides apart; ``compound_weights`` (checked) ``None``:
    ``"example"`` for the language's compounds only; ``templates``: each row's template too, from
    the same parse; ``num_proc``: processes parsing the distinct programs (same result whatever)."""
    import pyarrow as pa

    from ..columns import column_arrow
    from ..sampling.structural import StructureColumns, group_bags
    from ..structure import get_language

    if compound_weights is None:  # the weights need trees: on for the language's compounds, off otherwise
        compound_weights = compounds_column is None and compounds_fn is None
    mode = "example" if compound_weights is True else compound_weights
    for arg, col in (("atoms_column", atoms_column), ("compounds_column", compounds_column)):
        if col is not None and col not in dataset.column_names:
            raise ValueError(f"{arg}: no column {col!r}; columns: {dataset.column_names}")
    need_program = atoms_column is None or (compounds_column is None)
    lang = None
    if need_program:
        if language is None:
            raise ValueError("language: give the structure language of the program column (see "
                             "hf_synthsample.structure.languages()), or atoms_column and compounds_column")
        lang = get_language(language)
        max_height = lang.height(max_height)
        check_program_column(dataset, column)
    elif language is not None:
        lang = get_language(language)
    if mode in ("example", "pool"):
        if compounds_column is not None:
            raise ValueError(f"compound_weights={compound_weights!r} needs program trees; with compounds_column pass "
                             "compound_weights=False or a mapping compound -> weight")
        if compounds_fn is not None:
            raise ValueError(f"compound_weights={compound_weights!r} is defined for the language's compounds; with "
                             "compounds_fn pass compound_weights=False or a mapping compound -> weight")
    # checked whole before any parsing: a null or a wrong type is an error naming the column, never a made-up structure
    if atoms_column is not None:
        check_list_column(dataset, atoms_column, "atoms_column", non_empty=True)
    if compounds_column is not None:
        check_list_column(dataset, compounds_column, "compounds_column")

    view = dataset.select_columns(sorted({c for c in (column if need_program else None, atoms_column,
                                                      compounds_column) if c is not None}))
    renames = {c: name for c, name in ((atoms_column, "atoms"), (compounds_column, "compounds")) if c is not None}
    drop = [c for c in ("atoms", "compounds") if c in view.column_names and c not in renames.values()
            and c not in renames]
    if drop:  # a column named like a structure column that the caller did not choose must not be read as one
        view = view.remove_columns(drop)
    if renames:
        view = view.rename_columns({k: v for k, v in renames.items() if k != v})
    for c in ("atoms", "compounds"):  # fixed-length lists: the encoder reads variable-length ones
        if c in view.column_names and pa.types.is_fixed_size_list(column_arrow(view, c).type):
            from datasets import Sequence, Value

            view = view.cast_column(c, Sequence(Value("string")))
    src = StructureColumns(column if need_program else "__none__", language or "sexpr", max_height, skip_unparsable)
    row_templates = None
    if compounds_fn is not None and compounds_column is None:
        cols, bad = src.read_encoded(view, ["atoms"], num_proc=num_proc)
        lang = get_language(language)
        comps: list = []
        bad_set = set(bad.tolist())
        for i, program in enumerate(column_arrow(view, column).to_pylist()):
            got = [] if i in bad_set else compounds_fn(lang.parse(program))
            if isinstance(got, str) or not all(isinstance(c, str) for c in got):
                raise TypeError(f"compounds_fn must return a list of str per tree, got {got!r} for row {i}")
            comps.append(list(got))
        arr = pa.array(comps, type=pa.list_(pa.string()))
        lens = arr.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        enc = arr.flatten().dictionary_encode()
        cols["compounds"] = (np.concatenate([[0], np.cumsum(lens)]), enc.indices.to_numpy(zero_copy_only=False).astype(np.int64),
                             len(enc.dictionary), enc.dictionary)
    else:
        read_t = templates and need_program and compounds_column is None and atoms_column is None
        cols, bad = src.read_encoded(view, ["atoms", "compounds"] + (["template"] * read_t), num_proc=num_proc)
        if read_t:
            names, codes = cols.pop("template_names"), cols.pop("template")
            row_templates = names[codes].tolist() if len(names) else [None] * len(codes)
            for i in bad.tolist():
                row_templates[i] = None
    order = np.setdiff1d(np.arange(len(dataset)), bad)
    if not len(order):
        raise ValueError(f"{column}: no row has a structure to split on")
    comp_vocab = cols["compounds"][3].to_pylist()
    atom_vocab = cols["atoms"][3].to_pylist()
    key = None if side is None else np.asarray(side, dtype=np.int64)
    grouped = lang is None or lang.settings.group
    if not grouped:  # every row its own group: the search moves single rows
        key = np.arange(len(dataset), dtype=np.int64)
    a_coo, c_coo, members, group_side = group_bags(cols["atoms"], cols["compounds"], order, None, key)
    if not grouped and side is not None:
        group_side = np.asarray(side, dtype=np.int64)[members.heads()]
    reweigh = None
    if mode in ("example", "pool") or isinstance(compound_weights, Mapping):
        raw = c_coo
        weights = mode if not isinstance(compound_weights, Mapping) else compound_weights
        occ = None
        if not isinstance(weights, Mapping):  # each group's compound occurrences, read once (kept for reweigh)
            from ..structure.pool_parse import occurrence_table

            heads = column_arrow(view, column).take(pa.array(members.heads())).to_pylist()
            occ = occurrence_table(heads, lang, max_height, num_proc=num_proc, progress=src.progress)
        c_coo = _weighted(raw, weights, comp_vocab, members, occ)
        if not isinstance(weights, Mapping):
            # Keysers et al.'s weights are P(G'|G) over the rows read: a split that leaves rows out
            # must weigh its compounds over the rows it keeps, as split_report of its sides does
            def _reweigh(kept: np.ndarray) -> tuple:
                return _csr(_weighted(raw, weights, comp_vocab, members, occ, kept))

            reweigh = _reweigh
    return Structures(members, _csr(a_coo), _csr(c_coo), atom_vocab, comp_vocab, bad, group_side, reweigh=reweigh,
                      templates=row_templates)


def _weighted(c_coo: tuple, weights: str | Mapping, comp_vocab: list, members: Any, occ: Any,
              kept: np.ndarray | None = None) -> tuple:
    """The compound COO ``(group, compound, mass, G, V)`` times each entry's weight, zeros dropped;
    ``occ``: the groups' compound occurrences (an :class:`~hf_synthsample.structure.pool_parse.OccurrenceTable`
    of their first rows); ``kept`` (a mask of groups): the weights' ``P(G'|G)`` over those groups' rows only."""
    g, c, x, G, V = c_coo
    if isinstance(weights, Mapping):
        if weights and not set(weights) & set(comp_vocab):  # a typo or another notation: it would weigh nothing
            raise ValueError(f"compound_weights: none of the {len(weights)} compounds it names (e.g. "
                             f"{next(iter(weights))!r}) is a compound of the rows (e.g. {comp_vocab[:3]}); name "
                             "compounds as the language writes them (hf_synthsample.structure.compounds)")
        w = np.asarray([weights.get(name, 1.0) for name in comp_vocab], dtype=np.float64)[c]
    else:
        # one tree per group (its first row), counted once per row of the group: P(G'|G) is over every row read;
        # the groups left out (``kept`` False) count nowhere, yet get their weights
        counts = members.sizes.astype(np.float64) * (1.0 if kept is None else np.asarray(kept, dtype=bool))
        prog, comp, pw = occ.weights(counts)
        code = {name: i for i, name in enumerate(comp_vocab)}
        to_vocab = np.asarray([code.get(name, -1) for name in occ.names], dtype=np.int64)
        comp = to_vocab[comp] if len(comp) else comp
        ok = comp >= 0
        prog, comp, pw = prog[ok], comp[ok], pw[ok]
        Vc = max(len(comp_vocab), 1)
        if weights == "pool":  # each compound's largest weight over the groups counted
            best = np.full(Vc, -np.inf)
            counted = counts[prog] > 0
            np.maximum.at(best, comp[counted], pw[counted])
            w = np.where(np.isfinite(best), best, 1.0)[c]
        else:
            key = prog * Vc + comp
            order = np.argsort(key, kind="stable")
            key, pw = key[order], pw[order]
            want = np.asarray(g, dtype=np.int64) * Vc + np.asarray(c, dtype=np.int64)
            pos = np.minimum(np.searchsorted(key, want), max(len(key) - 1, 0))
            w = np.where((len(key) > 0) & (key[pos] == want), pw[pos] if len(pw) else 1.0, 1.0)
    x = x * w
    keep = x > 0
    if len(x) and not keep.any():  # D_C would be 0 / 0: no compound left to compare
        raise ValueError(f"compound_weights: every compound of the rows weighs 0 ({len(comp_vocab)} compounds); "
                         "give some a weight > 0, or compound_weights=False")
    return g[keep], c[keep], x[keep], G, V


def settings_structures(dataset: "Dataset", s: Any, compounds_fn: Callable | None = None,
                        templates: bool = False) -> Structures:
    """The rows of ``dataset`` checked against the sizes of split settings ``s``, and their structure
    (read once), as the split, the sweep and the range read them."""
    check_dataset(dataset)
    _, test_rows = check_test_size(s.test_size, len(dataset))
    check_train_size(s.train_size, test_rows, len(dataset))
    return read_structures(dataset, column=s.column, language=s.language, max_height=s.max_height,
                           atoms_column=s.atoms_column, compounds_column=s.compounds_column,
                           compound_weights=s.compound_weights, compounds_fn=compounds_fn,
                           skip_unparsable=s.skip_unparsable, templates=templates,
                           num_proc=getattr(s, "num_proc", None))
