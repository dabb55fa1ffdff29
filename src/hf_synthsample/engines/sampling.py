"""Pool-scale sampling in bounded memory: UAT, salient-variable homogenization and CMaxEnt over a
pool read batch by batch with each row's pool index (a ``ray.data.Dataset`` with an index column,
whose per-batch work runs on the cluster, or a ``datasets.Dataset`` / ``IterableDataset`` streamed
here); only small per-batch results reach the driver. Row draws come from counter-based randomness
of ``(seed, row index)``, so the picks do not depend on workers or batching.

* **UAT** (:func:`uat_sample`): pass 1 counts templates; pass 2 keeps the ``k`` smallest
  Efraimidis-Spirakis keys ``E_i / p(t)^alpha`` (the law of :class:`~hf_synthsample.sampling.UATSampler`),
  workers returning only keys under a threshold from the counts (raised and repeated if too few).
* **Homogenization** (:func:`homogenize_sample`, ``mode="joint"``): exactly the quotas (so the
  histogram) of :class:`~hf_synthsample.sampling.HomogenizeSampler`, rows uniform without
  replacement within each level (not the in-memory sampler's rows: it permutes the whole pool).
* **CMaxEnt** (:func:`cmaxent_sample`): rows grouped by structure on the workers, the exact greedy
  of :class:`~hf_synthsample.sampling.CMaxEntSampler` on the driver: the same picks
  (``distinct=True``); its tie-break order costs 8 bytes per pool row, shared through Ray's object store.

Bad input (unknown columns, ``k`` larger than the pool) is an error before any task is submitted.

Example:
    >>> import datasets
    >>> pool = datasets.Dataset.from_dict({"template": ["a"] * 90 + ["b"] * 9 + ["c"]})
    >>> sel = uat_sample(pool, 3, alpha=-1.0, seed=0)
    >>> len(sel.indices), sel.num_rows
    (3, 100)
    >>> sel = homogenize_sample(pool, "template", 6, seed=0)
    >>> sorted(pool.select(sel.indices)["template"])   # water-filled: every level as far as it goes
    ['a', 'a', 'b', 'b', 'b', 'c']
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..validation import check_choice, check_float, check_int, check_str_tuple
from .pool import INDEX, PoolSelection, _fetch, _Pool, counter_uniform, read_pool, select_rows

__all__ = ["PoolSelection", "read_pool", "uat_sample", "homogenize_sample", "cmaxent_sample", "select_rows",
           "counter_uniform"]


# ---------------------------------------------------------------------------------- pass 1: counts
def _count_pass(pool: _Pool, columns: Sequence[str], binned: Callable | None = None) -> dict[tuple, int]:
    cols = list(columns)

    def counts(table: pa.Table) -> pa.Table:
        return (binned(table) if binned else table).group_by(cols, use_threads=False).aggregate([([], "count_all")])

    total: dict[tuple, int] = {}
    for part in pool.map(counts, cols):
        values = [part.column(c).to_pylist() for c in cols]
        for key, n in zip(zip(*values), part.column("count_all").to_pylist()):
            total[key] = total.get(key, 0) + n
    if any(v is None for key in total for v in key):
        raise ValueError(f"columns: the pool has missing values in {cols}; fill or filter them first")
    return total


def _level_codes(table: pa.Table, columns: Sequence[str], level_of: Mapping[tuple, int]) -> np.ndarray:
    """The level id of every row (``level_of``: value tuple -> id), via the batch's distinct tuples."""
    distinct = table.select(list(columns)).group_by(list(columns), use_threads=False).aggregate([])
    keys = list(zip(*(distinct.column(c).to_pylist() for c in columns)))
    ids = pa.array([level_of[k] for k in keys], pa.int64())
    lookup = distinct.append_column("__level__", ids)
    joined = table.select(list(columns)).append_column("__pos__", pa.array(np.arange(table.num_rows)))
    joined = joined.join(lookup, list(columns), use_threads=False)
    out = np.empty(table.num_rows, dtype=np.int64)
    out[joined.column("__pos__").to_numpy()] = joined.column("__level__").to_numpy()
    return out


def _smallest(parts: Iterator[pa.Table], k: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The ``k`` rows of smallest ``key`` over all parts (ties: smaller index): (keys, indices, survivors)."""
    keys, idx, seen = np.zeros(0), np.zeros(0, np.int64), 0
    for part in parts:
        keys = np.concatenate([keys, part.column("key").to_numpy()])
        idx = np.concatenate([idx, part.column(INDEX).to_numpy()])
        seen += part.num_rows
        if len(keys) > 4 * max(k, 1024):  # keep the driver's buffer bounded
            o = np.lexsort((idx, keys))[:k]
            keys, idx = keys[o], idx[o]
    o = np.lexsort((idx, keys))[:k]
    return keys[o], idx[o], seen


def _check_k(k: int, n: int) -> int:
    if not n:
        raise ValueError("pool: the pool is empty: nothing to sample from")
    return check_int("k", k, min=0, max=n)


# ---------------------------------------------------------------------------------- UAT
def _uat_threshold(counts: np.ndarray, weights: np.ndarray, target: float) -> float:
    """``tau`` with ``sum_t N_t (1 - exp(-tau w_t)) = target`` (expected rows with key ``E / w < tau``)."""
    def expected(tau):
        return float(np.sum(counts * -np.expm1(-tau * weights)))

    lo, hi = 0.0, 1.0
    while expected(hi) < target:
        hi *= 2
        if hi > 1e300:
            return math.inf
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected(mid) < target else (lo, mid)
    return hi


def uat_sample(pool: Any, k: int, *, alpha: float = -1.0, template_column: str = "template", seed: int = 0,
               index_column: str | None = None, batch_size: int = 65_536) -> PoolSelection:
    """UAT over a pool in two passes (see the module docstring): row weight ``p(t)^alpha``,
    ``p(t) = N_t / N``, ``alpha`` in ``[-1, 0]``; ``k`` rows without replacement."""
    alpha = check_float("alpha", alpha, min=-1.0, max=0.0)
    seed = check_int("seed", seed, min=0)
    src = _Pool(pool, index_column, batch_size)
    src.check_columns([template_column], "template_column")
    if src.ray or getattr(pool, "num_rows", None) is not None:  # a known size: k checked before any pass
        k = _check_k(k, src.num_rows())
    counts = _count_pass(src, [template_column])
    templates = sorted(counts)
    N = sum(counts.values())
    k = _check_k(k, N)
    c = np.asarray([counts[t] for t in templates], dtype=np.float64)
    w = (c / N) ** alpha  # weight per template
    weight_of = {t[0]: float(x) for t, x in zip(templates, w)}
    target, passes = k + 8 * math.sqrt(k) + 64, 1
    while True:
        tau = _uat_threshold(c, w, target) if target < N else math.inf
        passes += 1

        def keys(table: pa.Table, tau=tau) -> pa.Table:
            idx = table.column(INDEX).to_numpy()
            wt = _weights_of(table.column(template_column), weight_of)
            key = -np.log1p(-counter_uniform(idx, seed, 1)) / wt  # E / w, E standard exponential
            keep = key < tau
            return pa.table({"key": key[keep], INDEX: idx[keep]})

        kk, ii, seen = _smallest(src.map(keys, [template_column]), k)
        if seen >= k or tau == math.inf:
            break
        target *= 2  # fewer than k keys under tau (rare): again with a larger threshold
    return PoolSelection(np.sort(ii), ii, N, counts={t[0]: n for t, n in counts.items()}, passes=passes)


def _weights_of(column: pa.ChunkedArray | pa.Array, weight_of: Mapping) -> np.ndarray:
    enc = (column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column).dictionary_encode()
    table = np.asarray([weight_of[v] for v in enc.dictionary.to_pylist()], dtype=np.float64)
    return table[enc.indices.to_numpy(zero_copy_only=False)]


# ---------------------------------------------------------------------------------- homogenization
def homogenize_sample(pool: Any, columns: str | Sequence[str], k: int | None = None, *, mode: str = "joint",
                      bins: Mapping[str, Sequence[float]] | Sequence[float] | None = None, seed: int = 0,
                      index_column: str | None = None, batch_size: int = 65_536) -> PoolSelection:
    """Pool-side homogenization of the salient ``columns`` in two passes (see the module docstring).

    ``mode``: ``"joint"`` only (``"sequential"`` interleaves its choices with whole-pool permutations);
    ``bins``: bin *edges* for numeric columns (as ``numpy.digitize``); ``k=None``: the largest
    exactly uniform subset.
    """
    from ..sampling.homogenize import water_fill

    cols = check_str_tuple("columns", columns)
    if not cols:
        raise ValueError("columns: give at least one salient column")
    mode = check_choice("mode", mode, ("joint",))
    seed = check_int("seed", seed, min=0)
    edges = _edges(bins, cols)
    src = _Pool(pool, index_column, batch_size)
    src.check_columns(cols, "columns")
    if k is not None and (src.ray or getattr(pool, "num_rows", None) is not None):
        k = _check_k(k, src.num_rows())
    binned = _binner(edges)

    counts = _count_pass(src, cols, binned)
    levels = sorted(counts, key=lambda key: tuple(_sort_key(v) for v in key))
    c = np.asarray([counts[lv] for lv in levels], dtype=np.int64)
    N = int(c.sum())
    k = _check_k(int(min(c, default=0)) * len(c) if k is None else k, N)
    quotas = water_fill(c, k, np.random.default_rng(seed))
    level_of = {lv: i for i, lv in enumerate(levels)}
    target = np.where(quotas > 0, np.minimum(c, quotas + 8 * np.sqrt(quotas) + 16), 0).astype(np.float64)
    chosen = [np.zeros(0, np.int64)] * len(levels)
    todo = quotas > 0
    passes = 1
    while todo.any():
        passes += 1
        tau = np.where(todo, target / np.maximum(c, 1), 0.0)
        tau[todo & (target >= c)] = 2.0  # keep every row of the level

        def pick(table: pa.Table, tau=tau) -> pa.Table:
            table = binned(table)
            lv = _level_codes(table, cols, level_of)
            idx = table.column(INDEX).to_numpy()
            u = counter_uniform(idx, seed, 2)
            keep = u < tau[lv]
            return pa.table({"level": lv[keep], "key": u[keep], INDEX: idx[keep]})

        parts = list(src.map(pick, cols))  # survivors: about the sample size
        lv, key, idx = (np.concatenate([np.zeros(0, t), *(p.column(c).to_numpy() for p in parts)])
                        for c, t in (("level", np.int64), ("key", np.float64), (INDEX, np.int64)))
        o = np.lexsort((idx, key, lv))
        lv, key, idx = lv[o], key[o], idx[o]
        starts = np.searchsorted(lv, np.arange(len(levels)))
        have = np.bincount(lv, minlength=len(levels))
        for g in np.flatnonzero(todo):
            if have[g] >= quotas[g]:
                chosen[g] = idx[starts[g]:starts[g] + quotas[g]]
                todo[g] = False
        target = np.minimum(c, target * 2).astype(np.float64)
    order = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
    named = {lv if len(cols) > 1 else lv[0]: int(n) for lv, n in zip(levels, c)}
    q = {lv if len(cols) > 1 else lv[0]: int(n) for lv, n in zip(levels, quotas)}
    return PoolSelection(np.sort(order), order, N, counts=named, quotas=q, passes=passes)


def _sort_key(v):
    return (0, v) if isinstance(v, (int, float, bool, np.number)) else (1, str(v))


def _edges(bins, cols) -> dict:
    if bins is None:
        return {}
    if isinstance(bins, Mapping):
        unknown = [c for c in bins if c not in cols]
        if unknown:
            raise ValueError(f"bins: {unknown[0]!r} is not one of the columns {list(cols)}")
        items = dict(bins)
    else:
        items = {c: bins for c in cols}
    out = {}
    for c, e in items.items():
        if isinstance(e, (int, np.integer)):
            raise TypeError("bins: give bin edges (a sequence); equal-width int bins need the pool's range")
        e = np.asarray(e, dtype=float)
        if e.ndim != 1 or np.any(np.diff(e) <= 0):
            raise ValueError("bins: edges must be a strictly increasing 1-D sequence")
        out[c] = e
    return out


def _binner(edges: Mapping[str, np.ndarray]) -> Callable[[pa.Table], pa.Table]:
    def binned(table: pa.Table) -> pa.Table:
        for c, e in edges.items():
            i = table.column_names.index(c)
            table = table.set_column(i, c, pa.array(np.digitize(table.column(c).to_numpy(), e)))
        return table

    return binned


# ---------------------------------------------------------------------------------- CMaxEnt
def cmaxent_sample(pool: Any, k: int, *, sampler: Any = None, index_column: str | None = None,
                   num_rows: int | None = None, batch_size: int = 16_384) -> PoolSelection:
    """CMaxEnt over a pool's distinct structures: grouped batch by batch (on the cluster for a Ray
    pool), greedy on the driver; the picks of ``sampler.indices(pool, k)`` for a pool in memory.

    ``sampler``: a :class:`~hf_synthsample.sampling.CMaxEntSampler` with ``distinct=True`` and
    ``compound_weights`` ``None`` or a mapping; ``atoms`` / ``compounds`` columns are read, or
    computed on the workers from its ``program_column``. ``num_rows``: the pool's size if known
    (else counted first: a whole pass for a Ray dataset with ``map_batches`` steps).
    """
    from ..sampling.structural import CMaxEntSampler, HybridSampler

    sampler = CMaxEntSampler() if sampler is None else sampler
    if not isinstance(sampler, CMaxEntSampler) or isinstance(sampler, HybridSampler):
        raise TypeError(f"sampler must be a CMaxEntSampler, got {sampler!r}")
    if not sampler.distinct:
        raise ValueError("sampler: distinct=False picks a structure once per row, which needs every row's place "
                         "in the tie-break order on the driver; use distinct=True at pool scale")
    if sampler.compound_weights is True:
        raise ValueError("sampler: compound_weights=True needs every program of the pool in one process; compute "
                         "hf_synthsample.structure.compound_weights on a sample and pass the mapping")
    src = _Pool(pool, index_column, batch_size)
    need = ["atoms", "compounds"] if {"atoms", "compounds"} <= set(src.columns) else [sampler.program_column]
    src.check_columns(need, "program_column")
    N = src.num_rows() if num_rows is None else check_int("num_rows", num_rows, min=1)
    k = _check_k(k, N)
    prio_ref = sampler.priority(N)  # the in-memory sampler's tie-break order
    if src.ray:
        import ray

        prio_ref = ray.put(prio_ref)  # once per node in the object store, read zero-copy by the workers
    language, max_height, skip = sampler.language, sampler.max_height, sampler.skip_unparsable
    program_column = sampler.program_column

    def groups(table: pa.Table) -> pa.Table:
        order = _fetch(prio_ref)
        idx = table.column(INDEX).to_numpy()
        if len(idx) and (idx.min() < 0 or idx.max() >= len(order)):
            raise ValueError(f"index_column: row index {int(idx.max())} outside the pool's {len(order)} rows "
                             "(num_rows too small, or the index is not the row position)")
        if "atoms" in table.column_names and "compounds" in table.column_names:
            atoms, comps = table.column("atoms").to_pylist(), table.column("compounds").to_pylist()
            bad = []
        else:
            atoms, comps, bad = _structures(table.column(program_column).to_pylist(), language, max_height)
        best: dict = {}
        for j, (a, c) in enumerate(zip(atoms, comps)):
            if a is None:
                continue
            key = "\x1f".join(sorted(a)) + "\x1e" + "\x1f".join(sorted(c))
            p = int(order[idx[j]])
            if key not in best or p < best[key][0]:
                best[key] = (p, j)
        js = [j for _, j in best.values()]
        nb = len(bad)
        return pa.table({
            "skey": pa.array(list(best) + [None] * nb, pa.string()),
            "prio": pa.array([p for p, _ in best.values()] + [None] * nb, pa.int64()),
            INDEX: pa.array([int(idx[j]) for j in js] + [int(idx[j]) for j, _ in bad], pa.int64()),
            "atoms": pa.array([list(atoms[j]) for j in js] + [None] * nb, pa.list_(pa.string())),
            "compounds": pa.array([list(comps[j]) for j in js] + [None] * nb, pa.list_(pa.string())),
            "bad_msg": pa.array([None] * len(js) + [m for _, m in bad], pa.string()),
        })

    merged: dict = {}
    errors: list = []
    for part in src.map(groups, need):
        bad = part.filter(pc.is_valid(part.column("bad_msg")))
        errors += list(zip(bad.column(INDEX).to_pylist(), bad.column("bad_msg").to_pylist()))
        rows = part.filter(pc.is_valid(part.column("prio")))
        for key, p, i, a, c in zip(rows.column("skey").to_pylist(), rows.column("prio").to_pylist(),
                                   rows.column(INDEX).to_pylist(), rows.column("atoms").to_pylist(),
                                   rows.column("compounds").to_pylist()):
            old = merged.get(key)
            if old is None or p < old[0]:
                merged[key] = (p, i, a, c)
    if errors and not skip:
        errors.sort()
        shown = "; ".join(f"row {i}: {m}" for i, m in errors[:5])
        raise ValueError(f"{program_column}: {len(errors)} of {N} programs do not parse as {language!r} "
                         f"(rows {[i for i, _ in errors[:20]]}{'...' if len(errors) > 20 else ''}): {shown}. "
                         "Pass skip_unparsable=True to leave them out of the sample.")
    if k > len(merged):
        raise ValueError(f"k: {k} is larger than the {len(merged)} distinct structures (programs with values "
                         f"abstracted) of the pool; accepted: 0..{len(merged)}")
    return _greedy_over_structures(sampler, merged, k, N)


def _structures(programs, language, max_height):
    from ..structure import structure

    atoms, comps, bad = [], [], []
    for j, program in enumerate(programs):
        try:
            _, a, c = structure(program, language, max_height)
        except (ValueError, TypeError, IndexError, KeyError) as err:
            bad.append((j, f"{type(err).__name__}: {err}"))
            a = c = None
        atoms.append(a)
        comps.append(c)
    return atoms, comps, bad


def _greedy_over_structures(sampler, merged: Mapping, k: int, N: int) -> PoolSelection:
    """The in-memory greedy over one representative row per structure, with their tie-break ranks."""
    import copy

    import datasets

    reps = sorted(merged.values(), key=lambda r: r[1])  # pool order
    strings = datasets.List(datasets.Value("string"))
    reps_ds = datasets.Dataset.from_dict({"atoms": [r[2] for r in reps], "compounds": [r[3] for r in reps]},
                                         features=datasets.Features({"atoms": strings, "compounds": strings}))
    prio = np.asarray([r[0] for r in reps], dtype=np.int64)
    greedy = copy.copy(sampler)
    greedy.priority = lambda n: prio  # the representatives keep their place in the pool's order
    greedy.indices(reps_ds, k)
    rows = np.asarray([r[1] for r in reps], dtype=np.int64)
    order = rows[greedy.order_]
    return PoolSelection(np.sort(order), order, N, passes=1)
