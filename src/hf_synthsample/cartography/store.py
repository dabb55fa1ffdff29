"""Storage of training dynamics, written atomically: ``dynamics.parquet`` (one row per example and
epoch), optionally ``eval_dynamics.parquet`` (the dropout-free pass) and ``cartography.json``.
No ``transformers`` import here, so data maps can be built without it.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

import numpy as np

from ..atomic import atomic_path

__all__ = ["load_dynamics", "DYNAMICS_FILE", "EVAL_DYNAMICS_FILE", "META_FILE", "CHECKPOINT_SUBDIR"]

DYNAMICS_FILE = "dynamics.parquet"
EVAL_DYNAMICS_FILE = "eval_dynamics.parquet"
META_FILE = "cartography.json"
CHECKPOINT_SUBDIR = "cartography"


# one row per (example, epoch); a measure that was not recorded is not written (files of older
# versions, without aum / el2n / loss, read back with NaN there)
_TRAIN_SCHEMA = {"example_id": np.int64, "epoch": np.int32, "step": np.int64, "order": np.int64,
                 "rank": np.int32, "inv_ppl": np.float32, "chia": np.float32, "aum": np.float32,
                 "min_margin": np.float32, "margin_deficit": np.float32, "el2n": np.float32, "loss": np.float32, "correct": np.bool_, "num_tokens": np.int32}
_EVAL_SCHEMA = {**_TRAIN_SCHEMA, "bleu": np.float32, "exact_match": np.bool_}


def _empty(schema: dict) -> dict:
    return {k: np.zeros(0, dtype=t) for k, t in schema.items()}


def _blank(n: int, typ: Any) -> np.ndarray:
    """A column that was not recorded: NaN for a measure, 0 / False otherwise."""
    return np.full(n, np.nan if np.dtype(typ).kind == "f" else 0, dtype=typ)


def _concat(parts: list[dict], schema: dict) -> dict:
    """The rows of ``parts`` in ``schema``'s columns (a column a part lacks is blank there)."""
    parts = [p for p in parts if len(p["example_id"])]
    if not parts:
        return _empty(schema)
    return {k: np.concatenate([np.asarray(p[k], dtype=t) if k in p else _blank(len(p["example_id"]), t)
                               for p in parts]) for k, t in schema.items()}


def _dedup(table: dict) -> dict:
    """One row per (example_id, epoch): the first seen (smallest step, order, rank), sorted by key."""
    if not len(table["example_id"]):
        return table
    # np.lexsort sorts by the last key first; it is a stable sort
    order = np.lexsort((table["rank"], table["order"], table["step"], table["example_id"], table["epoch"]))
    ep, ex = table["epoch"][order], table["example_id"][order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (ep[1:] != ep[:-1]) | (ex[1:] != ex[:-1])
    keep = order[first]
    return {k: v[keep] for k, v in table.items()}


def _write_parquet(path: str, table: dict, columns: Sequence[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with atomic_path(path) as tmp:
        pq.write_table(pa.table({c: table[c] for c in columns}), tmp)


def _damaged(path: str, what: str, err: Exception) -> ValueError:
    return ValueError(
        f"dynamics: {path} is damaged ({what}: {type(err).__name__}: {err}); it was cut short or overwritten. "
        f"Re-run the training, or use the copy in a checkpoint's {CHECKPOINT_SUBDIR}/ folder"
    )


def read_table(path: str):
    """``pq.read_table(path)``; a missing or unreadable file is a ``ValueError`` naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not os.path.isfile(path):
        raise ValueError(f"dynamics: {path} is missing")
    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError) as err:  # ArrowInvalid: bad magic bytes, truncated footer ...
        raise _damaged(path, "not a readable Parquet file", err) from err


def read_meta(path: str) -> dict:
    """The JSON sidecar at ``path``; unreadable JSON is a ``ValueError`` naming the file."""
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise _damaged(path, "not valid JSON", err) from err
    if not isinstance(meta, dict):
        raise ValueError(f"dynamics: {path} is damaged (a JSON object was expected, got {type(meta).__name__})")
    return meta


def _read_parquet(path: str, schema: dict, id_values: np.ndarray | None = None) -> dict:
    """The table at ``path`` in ``schema``'s columns; string ids become their codes in ``id_values``."""
    t = read_table(path)
    out = _empty(schema)
    for k, typ in schema.items():
        if k == "example_id" and id_values is not None:
            ids = np.asarray(t.column(k).to_pylist(), dtype=str)
            codes = np.searchsorted(id_values, ids).clip(max=max(len(id_values) - 1, 0))
            if len(ids) and (not len(id_values) or (id_values[codes] != ids).any()):
                raise ValueError(f"dynamics: {path} holds example ids the training dataset does not have; it was "
                                 f"recorded on another dataset")
            out[k] = codes.astype(typ)
        elif k in t.column_names:
            out[k] = t.column(k).to_numpy(zero_copy_only=False).astype(typ)
        else:  # a column an older file lacks
            out[k] = _blank(t.num_rows, typ)
    return out


def load_dynamics(folder: str | os.PathLike) -> dict:
    """``{"meta": dict, "train": pyarrow.Table, "eval": pyarrow.Table | None}`` of a dynamics folder
    written by :class:`CartographyCallback`; an unreadable file is a ``ValueError`` naming it."""
    folder = os.fspath(folder)
    meta_path = os.path.join(folder, META_FILE)
    if not os.path.isdir(folder):
        raise ValueError(f"dynamics: no folder {folder!r}" if not os.path.exists(folder) else
                         f"dynamics: {folder!r} is a file, not a dynamics folder (the folder CartographyCallback wrote)")
    if not os.path.exists(meta_path):
        raise ValueError(f"dynamics: {folder!r} is not a dynamics folder (no {META_FILE})")
    meta = read_meta(meta_path)
    eval_path = os.path.join(folder, EVAL_DYNAMICS_FILE)
    return {
        "meta": meta,
        "train": with_origin(read_table(os.path.join(folder, DYNAMICS_FILE)), meta),
        "eval": with_origin(read_table(eval_path), meta) if os.path.exists(eval_path) else None,
    }


#: the schema-metadata key under which a table of :func:`load_dynamics` carries its origin
ORIGIN_KEY = b"hf_synthsample.dynamics_origin"
#: the fields of ``cartography.json`` a table carries: the training set and the model it was recorded on
ORIGIN_FIELDS = ("num_examples", "dataset_fingerprints", "dataset_digests", "model", "id_column")


def with_origin(table: Any, meta: dict) -> Any:
    """``table`` with ``meta``'s :data:`ORIGIN_FIELDS` in its schema metadata, so that a data map
    built from the table alone still knows the training set (``assume_id_order`` checks it) and
    the model."""
    origin = {k: meta[k] for k in ORIGIN_FIELDS if k in meta}
    metadata = {**(table.schema.metadata or {}), ORIGIN_KEY: json.dumps(origin, sort_keys=True).encode()}
    return table.replace_schema_metadata(metadata)


def table_origin(table: Any) -> dict | None:
    """The origin :func:`with_origin` put on ``table``; ``None`` for a table made by hand."""
    raw = (getattr(getattr(table, "schema", None), "metadata", None) or {}).get(ORIGIN_KEY)
    if raw is None:
        return None
    try:
        origin = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return origin if isinstance(origin, dict) else None
