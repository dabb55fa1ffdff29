"""A pool read batch by batch for :mod:`hf_synthsample.engines.sampling` (a ``ray.data.Dataset`` with
an index column, e.g. from :func:`read_pool`, or a ``datasets`` dataset streamed here), the
counter-based randomness that makes a row's draw independent of workers and batching, and
:func:`select_rows`."""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from ..validation import check_int

if TYPE_CHECKING:  # pragma: no cover
    import ray.data

__all__ = ["INDEX", "PoolSelection", "counter_uniform", "read_pool", "select_rows"]

INDEX = "__row__"


@dataclasses.dataclass
class PoolSelection:
    """The rows a pool-scale sampler picked: ``indices`` (pool rows, ascending) and ``order`` (the
    same in selection order) of a pool of ``num_rows``; ``counts``: pass-1 counts (per template or
    level), ``quotas``: rows taken per level (homogenization), ``passes`` over the pool."""

    indices: np.ndarray
    order: np.ndarray
    num_rows: int
    counts: dict | None = None
    quotas: dict | None = None
    passes: int = 0


# ---------------------------------------------------------------------------------- randomness
def _splitmix64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def counter_uniform(index: np.ndarray, seed: int, stream: int = 0) -> np.ndarray:
    """Uniforms in ``[0, 1)`` that depend only on ``(seed, stream, index)``: the same for a row
    whichever worker, batch or order it comes in (a SplitMix64 hash of the row index, keyed by a
    ``SeedSequence`` of ``seed`` and ``stream``).

    Example:
        >>> u = counter_uniform(np.arange(5), seed=0)
        >>> bool(np.all(u == counter_uniform(np.arange(5)[::-1], seed=0)[::-1])), bool(np.all((0 <= u) & (u < 1)))
        (True, True)
    """
    key = np.random.SeedSequence([int(seed), int(stream), 0x5EED]).generate_state(2, np.uint64)
    with np.errstate(over="ignore"):
        h = _splitmix64(_splitmix64(np.asarray(index, dtype=np.uint64) ^ key[0]) + key[1])
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)


# ---------------------------------------------------------------------------------- pool access
def _is_ray_dataset(pool: Any) -> bool:
    try:
        import ray.data
    except ImportError:
        return False
    return isinstance(pool, ray.data.Dataset)


def _indexed(table: pa.Table, column: str) -> pa.Table:
    """``table`` with its pool index column ``column`` moved to :data:`INDEX` (``int64``)."""
    return table.drop_columns([column]).append_column(INDEX, table.column(column).cast(pa.int64()))


class _Pool:
    """Runs a per-batch function (Arrow table with the index column ``INDEX`` -> small Arrow table)
    over the pool and yields the results."""

    def __init__(self, pool: Any, index_column: str | None, batch_size: int):
        self.pool = pool
        self.batch_size = check_int("batch_size", batch_size, min=1)
        self.ray = _is_ray_dataset(pool)
        if self.ray:
            if index_column is None:
                raise ValueError("index_column: a Ray dataset needs a column holding each row's pool index "
                                 "(read_pool(path) and engines.ray.generate(..., index_column=...) add one)")
            names = pool.schema().names
            if index_column not in names:
                raise ValueError(f"index_column: no column {index_column!r}; columns: {names}")
            self.columns = [c for c in names if c != index_column]
        else:
            import datasets

            if not isinstance(pool, (datasets.Dataset, datasets.IterableDataset)):
                raise TypeError(f"pool must be a ray.data.Dataset, a datasets.Dataset or a datasets.IterableDataset, "
                                f"got {type(pool).__name__}")
            self.columns = list(pool.column_names or pool.features or [])
            if index_column is not None and index_column not in self.columns:
                raise ValueError(f"index_column: no column {index_column!r}; columns: {self.columns}")
        self.index_column = index_column

    def check_columns(self, needed: Sequence[str], name: str) -> None:
        missing = [c for c in needed if c not in self.columns]
        if missing:
            raise ValueError(f"{name}: no column {missing[0]!r} in the pool; columns: {self.columns}")

    def num_rows(self) -> int:
        if self.ray:
            return int(self.pool.count())
        n = getattr(self.pool, "num_rows", None)
        if n is not None:
            return int(n)
        return sum(t.num_rows for t in self._local_batches([]))

    def _local_batches(self, columns: Sequence[str]) -> Iterator[pa.Table]:
        import datasets

        cols = list(dict.fromkeys([*columns, *([self.index_column] if self.index_column else [])]))
        ds = self.pool.select_columns(cols) if cols else self.pool
        if isinstance(ds, datasets.Dataset):
            arrow = ds.with_format("arrow")
            batches = (arrow[i:i + self.batch_size] for i in range(0, len(ds), self.batch_size))
        else:
            batches = (pa.table(b) if cols else pa.table({"_": [0] * len(next(iter(b.values())))})
                       for b in ds.iter(batch_size=self.batch_size))
        start = 0
        for t in batches:
            if self.index_column is not None:
                yield _indexed(t, self.index_column)
            else:
                yield t.append_column(INDEX, pa.array(np.arange(start, start + t.num_rows, dtype=np.int64)))
            start += t.num_rows

    def map(self, fn: Callable[[pa.Table], pa.Table], columns: Sequence[str]) -> Iterator[pa.Table]:
        if not self.ray:
            for t in self._local_batches(columns):
                yield fn(t)
            return
        ds = self.pool.select_columns(list(dict.fromkeys([*columns, self.index_column])))
        index_column = self.index_column

        def run(table: pa.Table) -> pa.Table:
            return fn(_indexed(table, index_column))

        out = ds.map_batches(run, batch_format="pyarrow", batch_size=self.batch_size, zero_copy_batch=True)
        for batch in out.iter_batches(batch_format="pyarrow", batch_size=None):
            yield batch


def read_pool(paths: str | os.PathLike | Sequence[str | os.PathLike], *, columns: Sequence[str] | None = None,
              config: str | None = None, split: str = "train", index_column: str = INDEX,
              rows_per_task: int = 500_000) -> "ray.data.Dataset":
    """A Ray dataset over Parquet files (or the ``split`` of a Hub-layout folder's ``config``) with
    each row's pool index in ``index_column``: rows in file order, files in name order. Offsets
    come from the files' footers (nothing else is read up front); a read task reads consecutive
    row groups of about ``rows_per_task`` rows, one Arrow block per row group."""
    import pyarrow.parquet as pq

    from .ray import _ranges, _read, require_ray

    require_ray()
    rows_per_task = check_int("rows_per_task", rows_per_task, min=1)
    files = _pool_files(paths, config, split)
    if not files:
        raise ValueError(f"paths: no Parquet files in {paths!r}")
    schema = pq.read_schema(files[0])
    tasks, start = [], 0  # (file, row group, first row index, rows)
    for f in files:
        meta = pq.ParquetFile(f).metadata
        for g in range(meta.num_row_groups):
            tasks.append((f, g, start, meta.row_group(g).num_rows))
            start += meta.row_group(g).num_rows
    cols = list(columns) if columns is not None else list(schema.names)
    missing = [c for c in cols if c not in schema.names]
    if missing:
        raise ValueError(f"columns: no column {missing[0]!r} in the pool; columns: {schema.names}")
    if index_column in cols:
        raise ValueError(f"index_column: {index_column!r} is already a column of the pool")
    out_schema = pa.schema([schema.field(c) for c in cols] + [pa.field(index_column, pa.int64())])
    groups = [tasks[a:b] for a, b in _ranges([t[3] for t in tasks], rows_per_task)]

    def read(group: list) -> Iterator[pa.Table]:
        by_file: dict = {}  # consecutive row groups of one file: one read, one block
        for f, g, first, _ in group:
            by_file.setdefault(f, []).append((g, first))
        for f, parts in by_file.items():
            t = pq.ParquetFile(f).read_row_groups([g for g, _ in parts], columns=cols)
            first = parts[0][1]
            yield t.append_column(index_column, pa.array(np.arange(first, first + t.num_rows, dtype=np.int64)))

    reads = [(functools.partial(read, group), sum(t[3] for t in group), sorted({t[0] for t in group}))
             for group in groups]
    return _read(reads, out_schema, name="hf_synthsample[pool]", size=None,
                 num_blocks=max(1, math.ceil(start / rows_per_task)))


def _pool_files(paths, config: str | None, split: str) -> list[str]:
    import glob

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[str] = []
    for p in map(os.fspath, paths):
        if os.path.isdir(p):
            from ..hub import read_card_metadata

            entries = read_card_metadata(p).get("configs") or []
            entry = next((e for e in entries if e.get("config_name") == config), None) if config else \
                next((e for e in entries if e.get("default")), entries[0] if entries else None)
            if config and entry is None:
                raise ValueError(f"config: {config!r} is not a config of {p}; configs: "
                                 f"{[e.get('config_name') for e in entries]}")
            if entry is not None:
                pattern = next((d["path"] for d in entry["data_files"] if d["split"] == split), None)
                if pattern is None:
                    raise ValueError(f"split: {split!r} is not a split of {p}; splits: "
                                     f"{[d['split'] for d in entry['data_files']]}")
                # a card lists a glob or the files themselves (content-named shards), in row order
                for pat in [pattern] if isinstance(pattern, str) else pattern:
                    files += sorted(glob.glob(os.path.join(p, pat)))
            else:
                files += sorted(glob.glob(os.path.join(p, "**", "*.parquet"), recursive=True))
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise ValueError(f"paths: {p!r} is neither a Parquet file nor a folder")
    return files


def _fetch(ref):
    if isinstance(ref, np.ndarray):
        return ref
    import ray

    return ray.get(ref)


# ---------------------------------------------------------------------------------- selection
def select_rows(ds: "ray.data.Dataset", indices: np.ndarray, index_column: str = INDEX) -> "ray.data.Dataset":
    """The rows of a Ray pool whose ``index_column`` is in ``indices`` (pool order), e.g. to
    write a sample with :func:`hf_synthsample.engines.ray.write`."""
    from .ray import _ordered

    wanted = np.unique(np.asarray(indices, dtype=np.int64))

    def keep(table: pa.Table) -> pa.Table:
        return table.filter(pa.array(np.isin(table.column(index_column).to_numpy(), wanted)))

    return _ordered(ds.map_batches(keep, batch_format="pyarrow", zero_copy_batch=True))
