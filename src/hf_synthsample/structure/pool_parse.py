"""Parsing a pool's program column once: each distinct program once, in worker processes if asked.

A generated pool repeats programs (a million Schema2QA rows hold 360,000 distinct ones), and the
split makers need several things of each (template, atoms, compounds, the compound occurrences
behind Keysers et al.'s weights). :func:`parse_pool` parses every distinct program once, in
contiguous chunks over ``num_proc`` forked processes, and returns per-program results with the
row -> program index, so the rows are the same whatever ``num_proc``. Workers send back integer
codes and their chunk's vocabulary, not Python objects per program (a pickled list of a million
strings costs more than the parse it spares). :class:`OccurrenceTable` holds the occurrences as
arrays and computes Keysers et al.'s weights with NumPy.

Example:
    >>> import pyarrow as pa
    >>> parsed = parse_pool(pa.array(["(f a)", "(g b)", "(f a)", None]), "sexpr", progress=False)
    >>> parsed.index.tolist(), parsed.values["template"].to_pylist()
    ([0, 1, 0, -1], ['(f a)', '(g b)'])
    >>> parsed.bad_rows().tolist()  # the null row
    [3]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .extraction import _atoms_and_compounds, _occurrences
from .language import get_language, parse

__all__ = ["ParsedPool", "parse_pool", "OccurrenceTable", "occurrence_table", "program_occurrences", "PARSE_ERRORS"]

#: what a program that does not parse raises (anything else is a bug, and propagates)
PARSE_ERRORS = (ValueError, TypeError, IndexError, KeyError)
#: chunks per worker process: enough to balance uneven programs, few enough to cost nothing
_CHUNKS_PER_PROC = 4
#: programs per progress step when parsing here
_STEP = 5_000


@dataclass
class ParsedPool:
    """Per distinct program: ``values[name]`` (Arrow arrays, one entry per distinct program, null
    where it did not parse); ``index``: each row's distinct program (-1: a null program);
    ``errors``: ``(distinct program, message)`` of those that did not parse."""

    index: np.ndarray
    values: dict
    errors: list = field(default_factory=list)

    def bad_rows(self) -> np.ndarray:
        """Rows whose program is null or did not parse, in row order."""
        n = len(next(iter(self.values.values()))) if self.values else 0
        bad = np.zeros(n + 1, dtype=bool)
        for u, _ in self.errors:
            bad[u] = True
        bad[-1] = True  # index -1: a null program
        return np.flatnonzero(bad[self.index])

    def row_errors(self) -> list[tuple[int, str]]:
        """``(row, message)`` of every row that did not parse, in row order."""
        msg = dict(self.errors)
        return [(row, msg.get(int(self.index[row]), "TypeError: the program is null"))
                for row in self.bad_rows().tolist()]


class _Codes:
    """Strings to codes within one chunk (its vocabulary travels with the codes)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}

    def __call__(self, items: Sequence[str]) -> list[int]:
        v = self.vocab
        return [v.setdefault(s, len(v)) for s in items]

    def names(self) -> list[str]:
        return list(self.vocab)


def _merge(parts: list, key: str, names_key: str | None = None) -> tuple[np.ndarray, list[str]]:
    """The codes of each chunk's ``key`` (coding its ``names_key``, default ``key + "_names"``) in one
    vocabulary (first seen, first coded), concatenated."""
    vocab: dict[str, int] = {}
    out = []
    for part in parts:
        names = part[names_key or key + "_names"]
        remap = np.asarray([vocab.setdefault(s, len(vocab)) for s in names], dtype=np.int64)
        codes = np.asarray(part[key], dtype=np.int64)
        out.append(remap[codes] if len(codes) else codes)
    return (np.concatenate(out) if out else np.zeros(0, np.int64)), list(vocab)


def _chunks(n: int, num_proc: int) -> list[tuple[int, int]]:
    parts = max(1, min(n, num_proc * _CHUNKS_PER_PROC)) if num_proc > 1 else max(1, -(-n // _STEP))
    edges = np.linspace(0, n, parts + 1).astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def _map_chunks(fn: Callable[[list], dict], items: list, num_proc: int, progress: bool | None, desc: str) -> list:
    """``fn`` over contiguous chunks of ``items`` (in ``num_proc`` forked processes), in order."""
    from ..processes import run_forked
    from ..progress import progress_bar

    spans = _chunks(len(items), num_proc)
    bar = progress_bar(total=len(items), desc=desc, progress=progress, min_total=10_000)
    with bar:
        if num_proc <= 1 or len(spans) <= 1:
            out = []
            for a, b in spans:
                out.append(fn(items[a:b]))
                bar.update(b - a)
            return out
        done = run_forked(lambda i: fn(items[spans[i][0]:spans[i][1]]), len(spans), num_proc,
                          describe=lambda i: f"{desc}, programs {spans[i][0]}-{spans[i][1]}")
        bar.update(len(items))  # the workers report at the end
        return done


def parse_pool(programs: Any, language: Any, max_height: int = 2, *,
               outputs: Sequence[str] = ("template", "atoms", "compounds"), num_proc: int | None = None,
               progress: bool | None = None) -> ParsedPool:
    """Parse each distinct program of ``programs`` (an Arrow array or chunked array of str) once.

    ``outputs``: any of ``template``, ``atoms``, ``compounds``; ``num_proc``: forked worker processes
    (None or 1: this one); same results whatever ``num_proc``.
    """
    import pyarrow as pa

    lang = get_language(language)
    height = lang.height(max_height)
    if isinstance(programs, pa.ChunkedArray):
        programs = programs.combine_chunks()
    enc = programs.dictionary_encode()
    index = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    distinct = enc.dictionary.to_pylist()
    want = [o for o in ("template", "atoms", "compounds") if o in outputs]

    def one_chunk(chunk: list) -> dict:
        codes = {o: _Codes() for o in want}
        out: dict = {o: [] for o in want}
        lens: dict = {o: [] for o in want}
        errors = []
        for j, program in enumerate(chunk):
            try:
                tree = lang.parse(program)
                got = {"template": [lang.template(tree)]} if "template" in codes else {}
                if "atoms" in codes or "compounds" in codes:
                    got["atoms"], got["compounds"] = _atoms_and_compounds(tree, height)
            except PARSE_ERRORS as err:
                errors.append((j, f"{type(err).__name__}: {err}"))
                got = {o: [] for o in want}
            for o in want:
                out[o].extend(codes[o](got[o]))
                lens[o].append(len(got[o]))
        part = {"errors": errors, "n": len(chunk)}
        for o in want:
            part[o], part[o + "_names"], part[o + "_lens"] = np.asarray(out[o], np.int64), codes[o].names(), \
                np.asarray(lens[o], np.int64)
        return part

    parts = _map_chunks(one_chunk, distinct, num_proc or 1, progress, f"Parsing {lang.name} programs")
    errors, start = [], 0
    for part in parts:
        errors += [(start + j, msg) for j, msg in part["errors"]]
        start += part["n"]
    bad = np.zeros(len(distinct), dtype=bool)
    bad[[u for u, _ in errors]] = True
    values = {}
    for o in want:
        codes, names = _merge(parts, o)
        lens = np.concatenate([p[o + "_lens"] for p in parts]) if parts else np.zeros(0, np.int64)
        strings = pa.array(names, type=pa.string()).take(pa.array(codes))
        if o == "template":  # one per program; a program that did not parse: null
            values[o] = _with_nulls(strings, lens, bad)
        else:
            offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
            values[o] = pa.ListArray.from_arrays(pa.array(offsets), strings,
                                                 mask=pa.array(bad) if bad.any() else None)
    return ParsedPool(index, values, errors)


def _with_nulls(strings: Any, lens: np.ndarray, bad: np.ndarray) -> Any:
    """One template per program from the flat ones (a program that did not parse has none: null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(strings):
        return pa.nulls(len(lens), pa.string())
    pos = np.cumsum(lens) - 1
    taken = strings.take(pa.array(np.where(bad, 0, pos)))
    return taken if not bad.any() else pc.if_else(pa.array(~bad), taken, pa.scalar(None, pa.string()))


def program_occurrences(program: Any, language: Any, max_height: int) -> list:
    """One program's compound occurrences as ``(compound, distinct super-compounds holding it)``
    (the compounds at the node or at an ancestor ``k`` up, of height ``>= h + k``): what
    Keysers et al.'s weights count (:mod:`~hf_synthsample.structure.distributions`)."""
    parents: list[int] = []
    occ = _occurrences(parse(program, language), max_height, parents)
    by_node = {(n, h): s for n, h, s in occ}
    rows = []
    for n, h, s in occ:
        keys = [(n, hh) for hh in range(h + 1, max_height + 1)]
        a, k = parents[n], 1
        while a >= 0 and h + k <= max_height:
            keys += [(a, hh) for hh in range(h + k, max_height + 1)]
            a, k = parents[a], k + 1
        rows.append((s, tuple(dict.fromkeys(by_node[key] for key in keys if key in by_node))))
    return rows


@dataclass
class OccurrenceTable:
    """The compound occurrences of programs as arrays: program ``i`` holds occurrences
    ``occ_ptr[i]:occ_ptr[i + 1]`` of compounds ``occ[...]``, occurrence ``j`` the super-compounds
    ``sup[sup_ptr[j]:sup_ptr[j + 1]]``; codes index ``names``."""

    occ_ptr: np.ndarray
    occ: np.ndarray
    sup_ptr: np.ndarray
    sup: np.ndarray
    names: list

    def weights(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Keysers et al.'s weight of each compound in each program, ``P(G'|G)`` over the programs
        counted ``counts[i]`` times (0: counted nowhere, still weighed): ``(program, compound, weight)``
        for each distinct pair, sorted by program then compound."""
        V = max(len(self.names), 1)
        n_occ = np.diff(self.occ_ptr)
        prog = np.repeat(np.arange(len(n_occ), dtype=np.int64), n_occ)
        mult = np.asarray(counts, dtype=np.float64)[prog]
        seen = np.bincount(self.occ, mult, minlength=V)
        n_sup = np.diff(self.sup_ptr)
        owner = np.repeat(np.arange(len(self.occ), dtype=np.int64), n_sup)
        pair = self.occ[owner] * V + self.sup
        keys, inv = np.unique(pair, return_inverse=True)
        inside = np.bincount(inv.reshape(-1), mult[owner], minlength=len(keys))
        s_of = keys // V
        p_pair = np.divide(inside, seen[s_of], out=np.zeros(len(keys)), where=seen[s_of] > 0)[inv.reshape(-1)]
        best_sup = np.zeros(len(self.occ))
        np.maximum.at(best_sup, owner, p_pair)
        w_occ = 1.0 - best_sup
        key = prog * V + self.occ
        uk, kinv = np.unique(key, return_inverse=True)
        w = np.full(len(uk), -np.inf)
        np.maximum.at(w, kinv.reshape(-1), w_occ)
        return uk // V, uk % V, w


def occurrence_table(programs: list, language: Any, max_height: int, *, num_proc: int | None = None,
                     progress: bool | None = None) -> OccurrenceTable:
    """The :class:`OccurrenceTable` of ``programs`` (all parse), read in ``num_proc`` processes.

    Example:
        >>> t = occurrence_table(["(a (b c))", "(x (b c))", "(b c)"], "sexpr", 2, progress=False)
        >>> prog, comp, w = t.weights(np.ones(3))
        >>> {t.names[c]: round(float(x), 3) for p, c, x in zip(prog, comp, w) if p == 0}
        {'(b c)': 0.667, '(a (b c))': 1.0}
    """
    lang = get_language(language)

    def one_chunk(chunk: list) -> dict:
        codes = _Codes()
        occ, sup, n_occ, n_sup = [], [], [], []
        for program in chunk:
            rows = program_occurrences(program, lang, max_height)
            n_occ.append(len(rows))
            for s, sups in rows:
                occ.append(s)
                n_sup.append(len(sups))
                sup.extend(sups)
        return {"occ": codes(occ), "sup": codes(sup), "names": codes.names(),
                "n_occ": np.asarray(n_occ, np.int64), "n_sup": np.asarray(n_sup, np.int64)}

    parts = _map_chunks(one_chunk, programs, num_proc or 1, progress, "Weighing compounds")
    # a chunk's occ and sup codes index the same names: merged in the same order, one vocabulary
    occ, names = _merge(parts, "occ", "names")
    sup, _ = _merge(parts, "sup", "names")
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64)  # noqa: E731
    n_occ, n_sup = cat([p["n_occ"] for p in parts]), cat([p["n_sup"] for p in parts])
    return OccurrenceTable(np.concatenate([[0], np.cumsum(n_occ)]).astype(np.int64), occ,
                           np.concatenate([[0], np.cumsum(n_sup)]).astype(np.int64), sup, names)
