"""Worker processes that die with their parent.

``datasets``' ``num_proc`` pool workers (and its manager process) would outlive a parent killed with
SIGKILL, waiting forever. :func:`children_die_with_parent` makes every process forked while it is
active die with its parent: on Linux by ``prctl(PR_SET_PDEATHSIG)``, elsewhere by a thread watching
the parent's pid. It hooks :func:`os.register_at_fork`, so ``spawn`` / ``forkserver`` children are
not covered. :func:`run_forked` runs jobs in such forked workers.

Example:
    >>> import os
    >>> with children_die_with_parent():
    ...     pid = os.fork()
    ...     if pid == 0:
    ...         os._exit(0)
    >>> os.waitpid(pid, 0)[1]
    0
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import Callable, Iterator

from .logging import get_logger

__all__ = ["children_die_with_parent", "run_forked"]

logger = get_logger(__name__)

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_lock = threading.Lock()
_depth = 0  # > 0 while some caller wants it; read in the child (a copy of the parent's memory)
_parent_pid: int | None = None  # set just before each fork
_prctl: Callable[..., int] | None = None  # resolved in the parent: no dlopen after fork
_registered = False


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # a libc without prctl: fall back to the watch thread
        return None


def _before_fork() -> None:
    global _parent_pid
    _parent_pid = os.getpid()


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def _after_fork_in_child() -> None:
    if _depth <= 0 or _parent_pid is None:
        return
    parent = _parent_pid
    if _prctl is None or _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="hf-synthsample-parent-watch").start()
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


@contextlib.contextmanager
def children_die_with_parent() -> Iterator[None]:
    """While active, processes forked by this process die when it dies; re-entrant and thread-safe."""
    global _depth, _prctl, _registered
    with _lock:
        if not _registered and hasattr(os, "register_at_fork"):
            _prctl = _load_prctl()
            os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
            _registered = True
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1


def _forked_worker(run_one: Callable[[int], object], indices: list, results, setup: Callable[[], None] | None,
                   threads: int | None) -> None:
    if threads is not None:  # before any torch op of this process (see run_forked)
        import torch

        torch.set_num_threads(threads)
    if setup is not None:
        setup()
    for i in indices:
        try:
            results.put((i, run_one(i), None))
        except BaseException as err:  # noqa: BLE001 - reported to the parent, which raises
            results.put((i, None, f"{type(err).__name__}: {err}"))
            return


def _worker_threads(threads: int | None) -> int | None:
    """The torch CPU threads a forked worker may use: ``threads`` (default 1), or 1 where this process
    runs torch on several (GNU OpenMP is not fork-safe: the child's first parallel op hangs)."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int (torch CPU threads per worker) or None, got {threads!r}")
    torch = sys.modules.get("torch")
    if torch is None:
        return threads
    wanted = 1 if threads is None else threads
    if wanted > 1 and torch.get_num_threads() > 1:
        logger.warning("torch runs on %d CPU threads in this process, so the forked workers run on 1, not %d: "
                       "GNU OpenMP is not fork-safe (a worker would hang). Call torch.set_num_threads(1) before "
                       "this process's first torch op to give the workers more.", torch.get_num_threads(), wanted)
        wanted = 1
    return wanted


def run_forked(run_one: Callable[[int], object], n: int, jobs: int, *, setup: Callable[[], None] | None = None,
               describe: Callable[[int], str] | None = None, threads: int | None = None) -> list:
    """``[run_one(0), ..., run_one(n - 1)]`` computed in ``jobs`` forked processes (run ``i`` in
    process ``i % jobs``, each calling ``setup()`` first); ``jobs == 1`` runs them here.

    Each worker runs torch on ``threads`` CPU threads (default 1), or on 1 (with a warning) when
    this process runs torch on several: keep it at ``torch.set_num_threads(1)`` to give them more.
    Forked, so ``run_one`` may be any function of the calling script; results come back through a
    queue. A failing run (``describe(i)``, default ``"run i"``) or a dead worker is a ``RuntimeError``.

    Example:
        >>> run_forked(lambda i: i * i, 5, 2)
        [0, 1, 4, 9, 16]
    """
    import multiprocessing
    import queue

    describe = describe or (lambda i: f"run {i}")
    if jobs == 1 or n <= 1:
        if setup is not None:
            setup()
        return [run_one(i) for i in range(n)]
    worker_threads = _worker_threads(threads)
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    procs = [ctx.Process(target=_forked_worker, args=(run_one, list(range(k, n, jobs)), results, setup, worker_threads),
                         daemon=True)
             for k in range(min(jobs, n))]
    with children_die_with_parent():  # a killed parent must not leave its workers running
        for proc in procs:
            proc.start()
    records: dict = {}
    try:
        while len(records) < n:
            try:
                i, record, error = results.get(timeout=5)
            except queue.Empty:
                if not any(proc.is_alive() for proc in procs):
                    raise RuntimeError(f"a worker process died: {n - len(records)} of {n} runs have no result") from None
                continue
            if error is not None:
                raise RuntimeError(f"{describe(i)} failed: {error}")
            records[i] = record
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join()
    return [records[i] for i in range(n)]

