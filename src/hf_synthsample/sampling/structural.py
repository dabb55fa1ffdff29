"""Structurally diverse samplers (Oren et al. 2021, section 3; ALGORITHMS.md §5).

* :class:`UniformSampler`: ``k`` rows uniformly without replacement.
* :class:`UATSampler`: weights ``p(t)^alpha`` over abstract templates, drawn without replacement
  and renormalised over what is left (one vectorised pass of Efraimidis-Spirakis keys).
* :class:`CMaxEntSampler`: the exact greedy maximising atom + compound entropy
  (:mod:`~hf_synthsample.sampling.cmaxent`).
* :class:`HybridSampler`: each step a template uniformly among the non-exhausted ones, then the
  greedy pick within it.

They read the ``template`` / ``atoms`` / ``compounds`` columns, or compute the missing ones from a
program column (:mod:`hf_synthsample.structure`). Unparsable programs are an error unless
``skip_unparsable=True``, missing values unless ``missing="drop"``: such rows are then never
selected (``unparsable_``, ``missing_``). ``order_`` holds the selection order of the last call.

Example:
    >>> from datasets import Dataset
    >>> progs = Dataset.from_dict({"program": ["(f a)", "(f a)", "(f b)", "(g a)"]})
    >>> CMaxEntSampler(language="sexpr", seed=0).indices(progs, 2).tolist()  # never both (f a): ties go by seed
    [1, 2]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..columns import column_arrow
from ..settings import Settings
from ..validation import check_float
from .base import BaseSampler, _check_size, check_column_values
from .cmaxent import GroupMembers, _ranges
from .settings import CMaxEntSettings, StructureSource, UATSettings, UniformSettings

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["StructureColumns", "UniformSampler", "UATSampler", "CMaxEntSampler", "HybridSampler", "uat_order"]


@dataclass(frozen=True)
class StructureColumns(StructureSource):
    """Where the structure of each row comes from, and its reading: existing columns or a parsed
    program column (the fields: :class:`~hf_synthsample.sampling.settings.StructureSource`)."""

    @classmethod
    def of(cls, settings: Settings) -> "StructureColumns":
        """The structure source fields of ``settings``."""
        return cls(**{name: getattr(settings, name) for name in StructureSource.specs()})

    def read(self, dataset: "Dataset", need: Sequence[str]) -> tuple[dict[str, list], np.ndarray]:
        """The ``need`` columns as lists, and the indices of rows left out (unparsable)."""
        cols, bad = self.read_arrow(dataset, need)
        return {c: a.to_pylist() for c, a in cols.items()}, bad

    def read_arrow(self, dataset: "Dataset", need: Sequence[str], num_proc: int | None = None) -> tuple[dict, np.ndarray]:
        """The ``need`` columns as Arrow arrays (one entry per row; null where the program did not
        parse), and the rows left out; each distinct program is parsed once (``num_proc`` processes)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        out = {c: column_arrow(dataset, c).combine_chunks() for c in need if c in dataset.column_names}
        parsed, bad = self._parse(dataset, [c for c in need if c not in out], num_proc)
        if parsed is None:
            return out, bad
        index = pa.array(np.where(parsed.index < 0, 0, parsed.index))
        valid = parsed.index >= 0
        for c, values in parsed.values.items():
            if not len(values):  # every program null: typed nulls
                out[c] = pa.nulls(len(dataset), values.type)
                continue
            col = values.take(index)
            out[c] = col if valid.all() else pc.if_else(pa.array(valid), col, pa.scalar(None, col.type))
        return out, bad

    def _parse(self, dataset: "Dataset", missing: Sequence[str], num_proc: int | None):
        """The :class:`~hf_synthsample.structure.pool_parse.ParsedPool` of the ``missing`` columns (None
        if none is) and the rows that did not parse; an error naming them unless ``skip_unparsable``."""
        if not missing:
            return None, np.zeros(0, dtype=np.int64)
        if self.program_column not in dataset.column_names:
            raise ValueError(f"program_column: the dataset has no {', '.join(repr(c) for c in missing)} column and "
                             f"no program column {self.program_column!r} to compute it from; "
                             f"columns: {dataset.column_names}")
        from ..structure.pool_parse import parse_pool

        parsed = parse_pool(column_arrow(dataset, self.program_column), self.language, self.max_height,
                            outputs=missing, num_proc=num_proc, progress=self.progress)
        bad = parsed.bad_rows()
        if len(bad) and not self.skip_unparsable:
            errors = parsed.row_errors()
            shown = "; ".join(f"row {i}: {msg}" for i, msg in errors[:5])
            raise ValueError(
                f"{self.program_column}: {len(errors)} of {len(dataset)} programs do not parse as {self.language!r} "
                f"(rows {[i for i, _ in errors[:20]]}{'...' if len(errors) > 20 else ''}): {shown}. "
                f"Pass skip_unparsable=True to leave them out of the sample."
            )
        return parsed, bad

    def read_encoded(self, dataset: "Dataset", need: Sequence[str], num_proc: int | None = None) -> tuple[dict, np.ndarray]:
        """Like :meth:`read`, as integer codes without building Python lists of a big pool.

        ``template`` -> per-row codes (and ``template_names``: code -> template); ``atoms`` /
        ``compounds`` -> ``(offsets, codes, vocab_size, vocab)`` (row ``i`` holds
        ``codes[offsets[i]:offsets[i + 1]]``). Unparsable rows are empty. Parsed columns are coded
        per distinct program and spread to the rows as codes, never as a string per row.
        """
        import pyarrow as pa

        have = set(dataset.column_names)
        parsed, bad = self._parse(dataset, [c for c in need if c not in have], num_proc)
        out = {}
        for c in need:
            # existing columns are coded row by row; parsed ones per distinct program (``rows`` spreads them)
            arr = column_arrow(dataset, c).combine_chunks() if c in have else parsed.values[c]
            rows = None if c in have else parsed.index
            if pa.types.is_null(arr.type):  # every row unparsable (or missing): typed empty values, not a raw error
                arr = arr.cast(pa.string() if c == "template" else pa.list_(pa.string()))
            if c == "template":  # codes in sorted template order, whatever the row order
                enc = arr.dictionary_encode()
                names = np.asarray(enc.dictionary.to_pylist(), dtype=object).astype(str)
                rank = np.empty(len(names), dtype=np.int64)
                rank[np.argsort(names, kind="stable")] = np.arange(len(names))
                # a null template (a row left out by missing="drop") gets code 0: never read
                idx = enc.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
                codes = rank[idx] if len(rank) else np.zeros(len(idx), dtype=np.int64)
                out[c] = codes if rows is None else np.where(rows < 0, 0, codes[np.maximum(rows, 0)] if len(codes)
                                                             else 0).astype(np.int64)
                # code -> template, as references to the distinct strings (a unicode array of a million
                # rows would take the longest template's width for every row: 1.2 GB at 1M Schema2QA rows)
                out["template_names"] = np.asarray(enc.dictionary.to_pylist(), dtype=object)[np.argsort(names,
                                                                                                       kind="stable")]
                continue
            lens = arr.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
            enc = arr.flatten().dictionary_encode()
            codes = enc.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
            if rows is not None:  # each row the codes of its program
                starts = np.concatenate([[0], np.cumsum(lens)])[:-1]
                safe = np.maximum(rows, 0)
                row_lens = np.where(rows < 0, 0, lens[safe] if len(lens) else 0).astype(np.int64)
                codes = codes[_ranges(starts[safe] if len(starts) else np.zeros(len(rows), np.int64), row_lens)]
                lens = row_lens
            out[c] = (np.concatenate([[0], np.cumsum(lens)]), codes, len(enc.dictionary), enc.dictionary)
        return out, bad


class _StructuralSampler(BaseSampler):
    """Shared parts: the structure source, the seed, the candidate rows and the size check."""

    order_: np.ndarray | None = None
    unparsable_: np.ndarray = np.zeros(0, dtype=np.int64)

    def _missing_rows(self, dataset, need) -> np.ndarray:
        """Rows with a missing value in one of the ``need`` columns the dataset has (``missing="drop"``)."""
        keep = np.ones(len(dataset), dtype=bool)
        for c in need:
            if c in dataset.column_names:
                ok = check_column_values(dataset, c, kind="scalar" if c == "template" else "list",
                                         missing=self.missing, name=c)
                if ok is not None:
                    keep &= ok
        self.missing_ = np.flatnonzero(~keep)
        return self.missing_

    def _read(self, dataset, need, k, encoded=False):
        dropped = self._missing_rows(dataset, need)
        source = StructureColumns.of(self.settings)
        cols, bad = (source.read_encoded if encoded else source.read)(dataset, need)
        self.unparsable_ = bad
        candidates = np.setdiff1d(np.arange(len(dataset)), np.union1d(bad, dropped))
        _check_size(k, len(candidates), f"that can be sampled ({len(bad)} unparsable rows and {len(dropped)} rows "
                    "with missing values left out)", type(self).__name__)
        return cols, candidates

    def _finish(self, order) -> np.ndarray:
        self.order_ = np.asarray(order, dtype=np.int64)
        return np.sort(self.order_)


class UniformSampler(_StructuralSampler):
    """``k`` rows uniformly at random, without replacement.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"x": list(range(10))})
        >>> len(UniformSampler(seed=0).indices(ds, 4))
        4
    """

    settings_class = UniformSettings

    def _indices(self, dataset, k):
        _check_size(k, len(dataset), "", type(self).__name__)
        rng = np.random.default_rng(self.seed)
        self.order_ = rng.permutation(len(dataset))[:k].astype(np.int64)
        return np.sort(self.order_)


def uat_order(templates: Sequence, alpha: float, k: int, seed: int, candidates: np.ndarray | None = None) -> np.ndarray:
    """The first ``k`` rows of a UAT draw (selection order), over ``candidates`` (default all rows):
    weights ``p(t_i)^alpha``, drawn without replacement as the order of Efraimidis-Spirakis keys.

    Example:
        >>> uat_order(["a", "a", "a", "b"], alpha=-1.0, k=4, seed=0).shape
        (4,)
    """
    alpha = check_float("alpha", alpha, min=-1.0, max=0.0)
    rows = np.arange(len(templates)) if candidates is None else np.asarray(candidates, dtype=np.int64)
    templates = np.asarray(templates) if not isinstance(templates, np.ndarray) else templates
    if templates.dtype.kind in "iu":  # already integer codes
        codes = np.unique(templates[rows], return_inverse=True)[1].reshape(-1)
    else:
        codes = np.unique(templates.astype(object)[rows].astype(str), return_inverse=True)[1].reshape(-1)
    counts = np.bincount(codes)
    p = counts[codes] / len(rows)
    rng = np.random.default_rng(seed)
    keys = rng.standard_exponential(len(rows)) * p ** (-alpha)  # E / w with w = p^alpha
    top = np.argpartition(keys, k)[:k] if k < len(rows) else np.arange(len(rows))
    top = top[np.argsort(keys[top], kind="stable")]
    return rows[top]


class UATSampler(_StructuralSampler):
    """Uniform Abstract Template sampling (:class:`~hf_synthsample.sampling.settings.UATSettings`): weight
    ``p(t)^alpha``; ``alpha=0`` is uniform over rows, ``alpha=-1`` starts uniform over templates.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"template": ["a"] * 98 + ["b", "c"]})
        >>> s = UATSampler(alpha=-1.0, seed=1)
        >>> len(set(ds.select(s.indices(ds, 10))["template"]))
        3
    """

    settings_class = UATSettings
    positional = ("alpha",)

    def _indices(self, dataset, k):
        if self.template_column in dataset.column_names:
            keep = check_column_values(dataset, self.template_column, kind="scalar", missing=self.missing,
                                       name="template_column")
            candidates = None if keep is None else np.flatnonzero(keep)
            self.missing_ = np.zeros(0, dtype=np.int64) if keep is None else np.flatnonzero(~keep)
            n = len(dataset) if candidates is None else len(candidates)
            _check_size(k, n, f"with a template ({len(self.missing_)} left out by missing='drop')", type(self).__name__)
            # dictionary codes: no string sort, milliseconds for a million rows
            templates = column_arrow(dataset, self.template_column).combine_chunks().dictionary_encode().indices
            templates = templates.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            self.unparsable_ = np.zeros(0, dtype=np.int64)
            return self._finish(uat_order(templates, self.alpha, k, self.seed, candidates))
        cols, candidates = self._read(dataset, ["template"], k)
        return self._finish(uat_order(cols["template"], self.alpha, k, self.seed, candidates))


def _sorted_rows(offsets: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``codes`` sorted within each row (rows keep their place)."""
    V = int(codes.max()) + 1 if len(codes) else 1
    rows = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    return (np.sort(rows * V + codes) % V).astype(np.int32)


_HASH_MULTIPLIERS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))


def _row_hashes(off: np.ndarray, codes: np.ndarray, rows: np.ndarray) -> list[np.ndarray]:
    """Two 64-bit polynomial hashes of each row's code sequence (and its length)."""
    lens = off[rows + 1] - off[rows]
    flat = codes[_ranges(off[rows], lens)].astype(np.uint64) + np.uint64(1)
    pos = _ranges(np.zeros(len(rows), dtype=np.int64), lens)
    out = []
    with np.errstate(over="ignore"):
        for m in _HASH_MULTIPLIERS:
            powers = np.cumprod(np.full(int(lens.max(initial=0)) + 1, m, dtype=np.uint64))
            out.append(_segment_sum_u64(flat * powers[pos], lens) ^ (lens.astype(np.uint64) * m))
    return out


def _segment_sum_u64(values: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Per-segment sums of uint64 ``values`` modulo 2^64 (segments of ``lens``, in order)."""
    csum = np.concatenate([[np.uint64(0)], np.cumsum(values, dtype=np.uint64)])
    ends = np.cumsum(lens)
    with np.errstate(over="ignore"):
        return csum[ends] - csum[ends - lens]


def _group_rows(order: np.ndarray, atoms: tuple, compounds: tuple, templates: np.ndarray | None):
    """Rows of ``order`` with identical sorted atom and compound codes (and template) grouped,
    groups numbered by first appearance: ``(members, representative rows)``.

    Rows are keyed by hashes, then checked against their group's first row code by code: a hash
    collision falls back to the exact dictionary grouping.
    """
    if not len(order):
        return [], np.zeros(0, dtype=np.int64)
    key = np.zeros(len(order), dtype=np.uint64)
    parts = [h for off, codes in (atoms, compounds) for h in _row_hashes(off, codes, order)]
    if templates is not None:
        parts.append(np.asarray(templates)[order].astype(np.uint64))
    with np.errstate(over="ignore"):
        for i, h in enumerate(parts):  # one 64-bit key: a 1-D sort (collisions are caught below)
            key = (key ^ h) * _HASH_MULTIPLIERS[i % 2] + np.uint64(i + 1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    gid = rank[inverse]
    reps = order[np.sort(first)]
    same = True
    for off, codes in (atoms, compounds):
        rep_of = reps[gid]
        lens, rlens = off[order + 1] - off[order], off[rep_of + 1] - off[rep_of]
        if not (lens == rlens).all() or not np.array_equal(codes[_ranges(off[order], lens)],
                                                           codes[_ranges(off[rep_of], lens)]):
            same = False
    if templates is not None and not (np.asarray(templates)[order] == np.asarray(templates)[reps[gid]]).all():
        same = False
    if not same:  # pragma: no cover - a 128-bit hash collision
        return _group_rows_exact(order, atoms, compounds, templates)
    return GroupMembers(order[np.argsort(gid, kind="stable")], np.bincount(gid, minlength=len(reps))), reps


def _group_rows_exact(order, atoms, compounds, templates):
    (a_off, a_sorted), (c_off, c_sorted) = atoms, compounds
    groups: dict = {}
    members: list[list[int]] = []
    reps = []
    for r in order.tolist():
        key = (a_sorted[a_off[r]:a_off[r + 1]].tobytes(), c_sorted[c_off[r]:c_off[r + 1]].tobytes(),
               None if templates is None else int(templates[r]))
        g = groups.get(key)
        if g is None:
            g = groups[key] = len(members)
            members.append([])
            reps.append(r)
        members[g].append(r)
    return GroupMembers.from_lists(members), np.asarray(reps, dtype=np.int64)


def group_bags(atoms: tuple, compounds: tuple, order: np.ndarray, weights: np.ndarray | None, templates: np.ndarray | None):
    """Group the rows of ``order`` with identical bags (and template): one group per structure
    (program with values abstracted). Returns ``(atom COO, compound COO, members, group templates)``;
    a COO holds ``(group, feature, multiplicity, num_groups, num_features)``, each distinct feature
    once per group (multiplicity 1, or its weight; zero-weight compounds dropped).
    """
    (a_off, a_codes, na, _), (c_off, c_codes, nc, _) = atoms, compounds
    a_sorted, c_sorted = _sorted_rows(a_off, a_codes), _sorted_rows(c_off, c_codes)
    members, reps = _group_rows(order, (a_off, a_sorted), (c_off, c_sorted), templates)
    G = len(members)

    def coo(off, sorted_codes, V, w):
        lens = off[reps + 1] - off[reps]
        g = np.repeat(np.arange(G, dtype=np.int64), lens)
        c = sorted_codes[_ranges(off[reps], lens)].astype(np.int64)
        # each distinct feature once per example (structure.frequencies): multiplicity 1, or its weight
        key = np.unique(g * max(V, 1) + c)
        g, c, x = key // max(V, 1), key % max(V, 1), np.ones(len(key))
        if w is not None:
            x = x * w[c]
            keep = x > 0
            g, c, x = g[keep], c[keep], x[keep]
        return g, c, x, G, V

    group_templates = None if templates is None else templates[reps]
    return coo(a_off, a_sorted, na, None), coo(c_off, c_sorted, nc, weights), members, group_templates


class CMaxEntSampler(_StructuralSampler):
    """Compound maximum entropy: greedily add the row maximising ``w_atoms H_atoms + w_compounds H_compounds``.

    Exact: it picks what the naive greedy (:func:`~hf_synthsample.sampling.cmaxent.reference_greedy`)
    picks; ties (scores within a relative 1e-9) go to the row first in a seeded random order.
    Entropies count each distinct atom / compound once per example (Keysers et al. 2020). As in
    Oren et al. (2021, section 3.3), rows whose programs differ only in values are one candidate,
    picked at most once unless ``distinct=False``. Settings:
    :class:`~hf_synthsample.sampling.settings.CMaxEntSettings` (``compound_weights=True``: the
    pool-wide variant of :func:`hf_synthsample.structure.compound_weights`).

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"atoms": [["a"], ["a"], ["b"]], "compounds": [["x"], ["x"], ["y"]]})
        >>> CMaxEntSampler().indices(ds, 2).tolist() in ([0, 2], [1, 2])
        True
    """

    settings_class = CMaxEntSettings
    _hybrid = False

    def _weights(self, dataset, candidates):
        cw = self.compound_weights
        if cw is True:
            from ..structure import compound_weights

            if self.program_column not in dataset.column_names:
                raise ValueError(f"compound_weights=True: needs the program column {self.program_column!r}; "
                                 f"columns: {dataset.column_names}")
            programs = column_arrow(dataset, self.program_column).to_pylist()
            return compound_weights([programs[i] for i in candidates], self.language, self.max_height)
        return None if cw in (None, False) else cw

    def priority(self, n: int) -> np.ndarray:
        """Tie-break rank of each of ``n`` rows (smaller wins): a seeded random permutation."""
        return np.random.default_rng(self.seed).permutation(n)

    def engine(self, dataset: "Dataset", k: int | None = None):
        """The prepared :class:`~hf_synthsample.sampling.cmaxent.GreedyEntropy` (and the template of each group)."""
        from .cmaxent import GreedyEntropy

        need = ["atoms", "compounds"] + (["template"] if self._hybrid else [])
        cols, candidates = self._read(dataset, need, k, encoded=True)
        prio = self.priority(len(dataset))
        order = candidates[np.argsort(prio[candidates], kind="stable")]
        weights = self._weights(dataset, candidates)
        if weights is not None:
            vocab = cols["compounds"][3].to_pylist()
            weights = np.asarray([float(weights.get(c, 1.0)) for c in vocab], dtype=np.float64)
        extra = cols["template"] if self._hybrid else None
        a_coo, c_coo, members, group_templates = group_bags(cols["atoms"], cols["compounds"], order, weights, extra)
        if self.distinct:
            if k is not None and k > len(members):
                raise ValueError(f"k: {k} is larger than the {len(members)} distinct structures (programs with values "
                                 f"abstracted) of the pool; accepted: 0..{len(members)}, or pass distinct=False to "
                                 "let a structure be picked once per row")
            members = members.first_only()
        eng = GreedyEntropy(a_coo, c_coo, members, prio,
                            w_atoms=self.w_atoms, w_compounds=self.w_compounds, device=self.device)
        return eng, group_templates

    def _indices(self, dataset, k):
        eng, _ = self.engine(dataset, k)
        return self._finish(eng.run(k, self.progress))


class HybridSampler(CMaxEntSampler):
    """UAT template choice + greedy within template: each step a template uniformly among the
    non-exhausted ones (seeded), then the row of that template maximising the CMaxEnt objective.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"template": ["t", "t", "t", "u"], "atoms": [["a"], ["a"], ["b"], ["c"]],
        ...                         "compounds": [["x"], ["x"], ["y"], ["z"]]})
        >>> sorted(ds.select(HybridSampler(seed=0).indices(ds, 2))["template"])
        ['t', 'u']
    """

    _hybrid = True

    def _indices(self, dataset, k):
        import torch

        from ..progress import progress_bar

        eng, group_templates = self.engine(dataset, k)
        names, codes = np.unique(group_templates, return_inverse=True)
        by_template = [torch.as_tensor(np.flatnonzero(codes == t), device=eng.device) for t in range(len(names))]
        left = np.bincount(codes, weights=eng.members.sizes, minlength=len(names)).astype(np.int64)
        rng = np.random.default_rng(self.seed)
        order = []
        with eng.threads():
            for _ in progress_bar(range(k), desc="Hybrid", progress=self.progress):
                live = np.flatnonzero(left > 0)
                t = live[rng.integers(len(live))]
                order.append(eng.take(eng.best_group(by_template[t])))
                left[t] -= 1
        return self._finish(order)
