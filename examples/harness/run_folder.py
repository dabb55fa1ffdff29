"""The run folder (``--out``) of a paper example: claim the result file names, clear the previous
run's results, write the tables, plots and run records at the end. Only the main process of a
distributed (``accelerate launch``) run writes.

Example:
    >>> import os, tempfile
    >>> from harness.tables import ResultsTable
    >>> out = tempfile.mkdtemp()
    >>> t = ResultsTable("EM", ["split", "score"])
    >>> t.add(split="jump", score=12.5)
    >>> text = write_results(out, {"table1": t}, runs=[{"seed": 0}], plots={"table1": {"ylabel": "EM"}},
    ...                      print_text=False)
    >>> sorted(f for f in os.listdir(out) if not f.startswith("."))
    ['results.md', 'runs.json', 'table1.json', 'table1.md', 'table1.png']
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Mapping, Sequence

from hf_synthsample.atomic import write_json_atomic, write_text_atomic
from hf_synthsample.validation import check_str_tuple

__all__ = ["OUTPUTS_RECORD", "clear_outputs", "cpu_seconds", "is_main_process", "say", "start_run", "write_results"]


def is_main_process() -> bool:
    """True unless this is a non-zero rank of a distributed (``accelerate launch``/torchrun) run."""
    return int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0"))) == 0


def say(*args: Any) -> None:
    """``print`` on the main process only, flushed (progress lines of long runs)."""
    if is_main_process():
        print(*args, flush=True)


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and its finished child processes (``--jobs`` workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


#: the file in an output folder that names the result files hf-synthsample runs write there (their
#: ``fnmatch`` patterns); :func:`clear_outputs` removes only files it names
OUTPUTS_RECORD = ".hf-synthsample-outputs"

_RECORD_NOTE = ("hf-synthsample runs write the files these patterns match in this folder and remove them before "
                "their next run; a matching file it finds here without this record is never removed.")


def _recorded_patterns(folder: str | os.PathLike) -> tuple[str, ...]:
    try:
        with open(os.path.join(os.fspath(folder), OUTPUTS_RECORD), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return ()
    pats = data.get("patterns") if isinstance(data, dict) else None
    return tuple(pats) if isinstance(pats, list) and all(isinstance(x, str) for x in pats) else ()


def clear_outputs(folder: str | os.PathLike, patterns: Sequence[str], *, name: str = "--out") -> list[str]:
    """Remove the result files a previous run left in ``folder``: the files at its top level whose
    names match one of ``patterns`` (``fnmatch``, e.g. ``"table*.*"``, ``"results.*"``). Sub-folders
    (checkpoints, recorded dynamics) and every other file stay. Returns the removed paths.

    The paper examples call this before they start, with the names of the files they write, so
    a partial re-run (``--tables 1``) never leaves another run's tables beside its ``results.md``.

    Only files an earlier run wrote are removed: the folder's :data:`OUTPUTS_RECORD` names the
    patterns runs claimed there (this call adds ``patterns`` to it, creating ``folder`` if needed).
    A matching file the record does not cover is the user's (a ``results.md`` of their own in the
    folder passed as ``--out``): nothing is removed and a ``FileExistsError`` naming ``name`` (the
    option the user set) says which files and what to do, before any work. Under a distributed
    launch only the main process checks and removes.

    Example:
        >>> import os, tempfile
        >>> out = tempfile.mkdtemp()
        >>> clear_outputs(out, ["table*.*", "results.*"])  # claims the names: a new folder
        []
        >>> for name in ("table3.md", "results.md", "notes.txt"):
        ...     open(os.path.join(out, name), "w").close()
        >>> [os.path.basename(p) for p in clear_outputs(out, ["table*.*", "results.*"])]
        ['results.md', 'table3.md']
        >>> sorted(f for f in os.listdir(out) if not f.startswith("."))
        ['notes.txt']
        >>> mine = tempfile.mkdtemp()
        >>> open(os.path.join(mine, "results.md"), "w").close()
        >>> clear_outputs(mine, ["results.*"])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        FileExistsError: --out: .../results.md was not written by an hf-synthsample run ...
    """
    import fnmatch

    patterns = check_str_tuple("patterns", patterns)
    if not is_main_process():
        return []
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise NotADirectoryError(f"{name}: {os.fspath(folder)} is a file, not a folder: choose a folder for the results")
    os.makedirs(folder, exist_ok=True)
    recorded = _recorded_patterns(folder)
    matched = [e for e in sorted(os.scandir(folder), key=lambda e: e.name)
               if e.is_file(follow_symlinks=False) and any(fnmatch.fnmatchcase(e.name, p) for p in patterns)]
    foreign = [e.path for e in matched if not any(fnmatch.fnmatchcase(e.name, p) for p in recorded)]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise FileExistsError(
            f"{name}: {shown} was not written by an hf-synthsample run (the folder's {OUTPUTS_RECORD} does not "
            f"name it), and this run would replace it: choose another {name} folder, or move those files away "
            "(results written before hf-synthsample kept this record carry none either: delete them yourself)")
    removed = []
    for entry in matched:
        os.remove(entry.path)
        removed.append(entry.path)
    claimed = sorted(set(recorded) | set(patterns))
    if tuple(claimed) != tuple(sorted(recorded)):
        write_json_atomic(os.path.join(os.fspath(folder), OUTPUTS_RECORD), {"note": _RECORD_NOTE, "patterns": claimed},
                          indent=1)
    return removed


#: torch CPU threads of each forked worker (``start_run``'s ``threads``), read by ``runs.run_jobs``
WORKER_THREADS: dict[str, int] = {"threads": 1}


def start_run(out: str, outputs: Sequence[str], threads: int, jobs: int = 1) -> float:
    """Before the first piece of work: torch on ``threads`` CPU threads (1 is fastest on a shared CPU),
    ``out`` cleared of the previous run's ``outputs`` (:func:`clear_outputs`). Returns the start time
    (``time.perf_counter()``). With ``jobs > 1`` this process stays on one thread and each forked
    worker takes ``threads``: torch's OpenMP is not fork-safe, and a worker forked from a process
    that ran a parallel op hangs (``hf_synthsample.processes.run_forked``)."""
    import torch

    torch.set_num_threads(threads if jobs <= 1 else 1)
    WORKER_THREADS["threads"] = threads
    clear_outputs(out, outputs)
    return time.perf_counter()


def write_results(out: str, tables: Mapping[str, Any], *, runs: Any = None, results: Mapping[str, Any] | None = None,
                  footer: str = "", plots: Mapping[str, Mapping[str, Any]] | None = None, print_text: bool = True) -> str:
    """Write a run's results to ``out``: each table as ``<name>.md`` / ``<name>.json``, a bar plot
    ``<name>.png`` for the tables named in ``plots`` (their :meth:`ResultsTable.bar_plot` keywords; a
    ``"table"`` key plots another table under that name), ``results.md`` (every table, then
    ``footer``), ``results.json`` when ``results`` is given (with the tables added), ``runs.json``
    when ``runs`` is given. Returns the Markdown of the tables (printed when ``print_text``)."""
    text = "\n\n".join(t.to_markdown() for t in tables.values())
    if not is_main_process():
        return text
    for name, table in tables.items():
        table.save(out, name)
    for name, kwargs in (plots or {}).items():
        kwargs = dict(kwargs)
        table = kwargs.pop("table", None) or tables[name]
        table.bar_plot(os.path.join(out, f"{name}.png"), **kwargs)
    write_text_atomic(os.path.join(out, "results.md"), text + (footer or "\n"))
    if results is not None:
        write_json_atomic(os.path.join(out, "results.json"),
                          {**results, "tables": {n: t.to_dict() for n, t in tables.items()}}, indent=2)
    if runs is not None:
        write_json_atomic(os.path.join(out, "runs.json"), runs, indent=2)
    if print_text:
        print(text)
    return text
