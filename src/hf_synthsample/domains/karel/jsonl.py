"""The field's JSON Lines task format (Bunel et al. 2018): read and write, into the builder's schema.

One task per line: ``guid``, ``examples`` (``example_index``, ``actions``, ``inpgrid_json``,
``outgrid_json``, ``inpgrid_tensor``, ``outgrid_tensor``), ``program_json`` (an object),
``program_tokens``. :func:`read_jsonl` returns a ``Dataset`` with the same features as
``load_dataset("karel", ...)`` (``program_json`` as JSON text, salient variables computed from the
program and the first ``num_shown`` inputs), so the published 1.1M-task data and generated data mix.

Example:
    >>> import tempfile, hf_synthsample
    >>> ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=3, split="train")
    >>> path = write_jsonl(ds, tempfile.mkdtemp() + "/tasks.jsonl")
    >>> read_jsonl(path)["program_tokens"] == ds["program_tokens"]
    True
"""

from __future__ import annotations

import json
import os
from typing import Iterable

from ...atomic import atomic_path
from .dsl import from_json, parse, to_json, to_tokens
from .features import input_features, program_features, world_stats
from .world import World

__all__ = ["read_jsonl", "write_jsonl", "task_to_row"]


def _grid(data, where: str) -> dict:
    try:
        return World.from_json(data).to_json()
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def task_to_row(task: dict, *, num_shown: int = 5, tensors: bool = False, where: str = "task") -> dict:
    """One parsed JSONL task as a row of the Karel schema (``ValueError`` naming what is malformed)."""
    if not isinstance(task, dict):
        raise ValueError(f"{where}: a task must be a JSON object")
    missing = [k for k in ("examples", "program_tokens") if k not in task]
    if missing:
        raise ValueError(f"{where}: missing field {missing[0]!r} (fields: guid, examples, program_json, program_tokens)")
    try:
        program = parse(task["program_tokens"])
        same = task.get("program_json") is None or from_json(task["program_json"]) == program
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: {e}") from None
    if not same:
        raise ValueError(f"{where}: program_json and program_tokens describe different programs")
    examples = []
    for i, ex in enumerate(task["examples"]):
        here = f"{where}, example {i}"
        row = {
            "example_index": int(ex.get("example_index", i)),
            "actions": list(ex.get("actions", [])),
            "inpgrid_json": _grid(ex.get("inpgrid_json"), here + " inpgrid_json"),
            "outgrid_json": _grid(ex.get("outgrid_json"), here + " outgrid_json"),
        }
        if tensors:
            for k in ("inpgrid_tensor", "outgrid_tensor"):
                grid = World.from_json(row[k.replace("tensor", "json")])
                row[k] = ex[k] if isinstance(ex.get(k), str) else grid.to_sparse_tensor()
        examples.append(row)
    shown = [World.from_json(e["inpgrid_json"]) for e in examples[:num_shown]]
    if not shown:
        raise ValueError(f"{where}: a task needs at least one example")
    return {"guid": str(task.get("guid", "")), "program_tokens": to_tokens(program),
            "program_json": json.dumps(to_json(program)), "examples": examples,
            **program_features(program), **input_features([world_stats(w) for w in shown])}


def _rows(path: str, num_shown: int, tensors: bool, stamp: tuple) -> Iterable[dict]:
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                task = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not valid JSON ({e})") from None
            yield task_to_row(task, num_shown=num_shown, tensors=tensors, where=f"{path}:{n}")


def read_jsonl(path: str | os.PathLike, *, num_shown: int = 5, tensors: bool = False, cache_dir: str | None = None):
    """A ``Dataset`` of the tasks in a JSON Lines file, in the Karel builder's schema.

    Rows are streamed to Arrow (``Dataset.from_generator``), so files larger than memory, such as
    the field's 1.1M-task training set, load; the result is cached under ``cache_dir`` and
    invalidated when the file changes. ``tensors=True`` keeps (or computes) the sparse tensors.
    A malformed line raises a ``ValueError`` naming ``file:line``.
    """
    import datasets

    from ...builders.karel import karel_features

    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise ValueError(f"path: no such file {path!r}")
    if isinstance(num_shown, bool) or not isinstance(num_shown, int) or num_shown < 1:
        raise ValueError(f"num_shown must be an int >= 1, got {num_shown!r}")
    st = os.stat(path)
    kwargs = {"path": path, "num_shown": num_shown, "tensors": bool(tensors), "stamp": (st.st_size, st.st_mtime_ns)}
    try:
        return datasets.Dataset.from_generator(_rows, gen_kwargs=kwargs, features=karel_features(tensors),
                                               cache_dir=cache_dir)
    except datasets.exceptions.DatasetGenerationError as e:
        if isinstance(e.__cause__, ValueError):  # our message names the file and line
            raise ValueError(str(e.__cause__)) from None
        raise


def write_jsonl(dataset, path: str | os.PathLike, *, tensors: bool = True) -> str:
    """Write a Karel ``Dataset`` in the field's JSONL format (atomically); returns the path.

    ``program_json`` is written as an object; with ``tensors=True`` every example gets
    ``inpgrid_tensor``/``outgrid_tensor`` (computed when the dataset has none).
    """
    path = str(path)
    # the shared write-then-rename: a killed write leaves no partial file, and its temp is cleaned next time
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        for row in dataset:
            examples = []
            for ex in row["examples"]:
                ex = dict(ex)
                for k in ("inpgrid_tensor", "outgrid_tensor"):
                    if not tensors:
                        ex.pop(k, None)
                    elif not ex.get(k):
                        ex[k] = World.from_json(ex[k.replace("tensor", "json")]).to_sparse_tensor()
                examples.append(ex)
            task = {"guid": row["guid"], "examples": examples, "program_json": json.loads(row["program_json"]),
                    "program_tokens": list(row["program_tokens"])}
            f.write(json.dumps(task) + "\n")
    return path
