"""Training runs of the paper examples: one run per (setting, seed), trained once and shared by the
tables; ``--jobs`` processes; the restart of a run whose init learnt nothing.

Example (the tables ask for runs; with ``--jobs`` they are first only noted, trained side by side,
and the tables built again from the finished runs):

    >>> book = RunBook(lambda key, seed, data: {"key": key, "seed": seed, "rows": len(data)})
    >>> def table(book):
    ...     return [book.get("full", seed, lambda s: list(range(10 + s))) for seed in (0, 1)]
    >>> book.planning = True
    >>> table(book)  # noted, not trained
    [None, None]
    >>> book.train_planned(jobs=2)
    >>> [r["rows"] for r in table(book)], len(book.records)
    ([10, 11], 2)
"""

from __future__ import annotations

import multiprocessing
from typing import Any, Callable, Sequence

__all__ = ["RunBook", "check_restart_flags", "restart_specs", "run_jobs", "with_restarts"]


def run_jobs(run_one: Callable[..., Any], items: Sequence[Any], jobs: int, *, on_done: Callable[[Any, Any], None] | None = None,
             describe: Callable[[Any], str] = str, spawn_args: tuple | None = None) -> list:
    """``[run_one(item) for item in items]`` with ``jobs`` models trained at once; results in order.

    ``jobs == 1`` runs them here. Otherwise forked processes (``hf_synthsample.processes.run_forked``:
    ``run_one`` may be any function of the script), or, with ``spawn_args``, a spawned process pool
    calling ``run_one(item, *spawn_args)`` (a module-level function; each worker rebuilds what it
    needs, nothing is inherited). ``on_done(item, result)`` is called as each run finishes (forked:
    once all have), e.g. to save the finished runs of a run stopped part-way.
    """
    results: dict[int, Any] = {}

    def done(i: int, result: Any) -> None:
        results[i] = result
        if on_done is not None:
            on_done(items[i], result)

    if jobs == 1 or len(items) <= 1:
        for i, item in enumerate(items):
            done(i, run_one(item, *spawn_args) if spawn_args is not None else run_one(item))
    elif spawn_args is not None:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(run_one, item, *spawn_args): i for i, item in enumerate(items)}
            for future in as_completed(futures):
                done(futures[future], future.result())
    else:
        from hf_synthsample.processes import run_forked

        from .run_folder import WORKER_THREADS

        for i, result in enumerate(run_forked(lambda i: run_one(items[i]), len(items), jobs,
                                              describe=lambda i: describe(items[i]),
                                              threads=WORKER_THREADS["threads"])):
            done(i, result)
    return [results[i] for i in range(len(items))]


class RunBook:
    """Every training run, one per ``(key, seed)``, trained once and kept in ``records`` in the
    order the tables asked for them.

    ``train_one(key, seed, data)`` trains and scores one model (``data`` is what ``make(seed)``
    returned). With ``planning`` on, :meth:`get` only notes what a table asks for (and returns
    ``None``); :meth:`train_planned` then trains the noted runs ``jobs`` at a time in forked
    processes, and the tables are built again from the finished runs. Each run is seeded on its
    own, so the results do not depend on ``jobs``.
    """

    def __init__(self, train_one: Callable[[Any, int, Any], dict]):
        self.train_one = train_one
        self.records: list[dict] = []
        self.planning = False
        self._plan: list[tuple] = []
        self._done: dict[tuple, dict] = {}

    def get(self, key: Any, seed: int, make: Callable[[int], Any]) -> dict | None:
        """The record of the run ``(key, seed)`` on ``make(seed)``: trained now, or earlier; ``None``
        while planning (the run is noted)."""
        if (key, seed) in self._done:
            return self._done[(key, seed)]
        if self.planning:
            if all((key, seed) != (k, s) for k, s, _ in self._plan):
                self._plan.append((key, seed, make))
            return None
        record = self._done[(key, seed)] = self.train_one(key, seed, make(seed))
        self.records.append(record)
        return record

    def train_planned(self, jobs: int, *, order: Callable[[Any, int], Any] | None = None) -> None:
        """Train every noted run, ``jobs`` at a time (forked workers; the data is made here first, so the
        workers never write a datasets cache at the same time). ``order(key, seed)``: the order they
        start in (e.g. seed-major, so a run stopped part-way has whole seeds); the records keep the
        order the tables asked."""
        plan, self._plan = self._plan, []
        data = [make(seed) for _, seed, make in plan]
        start = sorted(range(len(plan)), key=(lambda i: order(plan[i][0], plan[i][1])) if order else (lambda i: i))
        done = run_jobs(lambda i: self.train_one(plan[i][0], plan[i][1], data[i]), start, jobs,
                        describe=lambda i: f"run {plan[i][0]} seed {plan[i][1]}")
        by_index = dict(zip(start, done))
        for i, (key, seed, _) in enumerate(plan):
            self._done[(key, seed)] = by_index[i]
            self.records.append(by_index[i])
        self.planning = False


def with_restarts(attempt: Callable[[int, bool], tuple[Any, bool, dict]], *, seed: int, max_restarts: int,
                  on_restart: Callable[[int, dict], None] | None = None) -> tuple[Any, int, list[dict], bool]:
    """Train from init ``seed``, and again from init ``seed + 1000``, ``seed + 2000``, ... while the
    attempt did not learn, at most ``max_restarts`` more times.

    ``attempt(init_seed, last)`` trains one model and returns ``(result, ok, note)``: ``ok`` false
    means this init learnt nothing (e.g. its fit is still ~0), ``note`` what the run's record keeps
    of the abandoned attempt; ``last`` says no restart follows. ``on_restart(next_init, note)`` is
    called before each restart (to say so). Returns ``(result of the last attempt, its init seed,
    the notes of the abandoned ones, ok of the last one)``: the caller decides what a last attempt
    that did not learn means (report it, or stop with a message).

    Example:
        >>> fits = {0: 0.0, 1000: 0.0, 2000: 95.0}
        >>> with_restarts(lambda init, last: (fits[init], fits[init] > 10, {"init_seed": init}), seed=0, max_restarts=2)
        (95.0, 2000, [{'init_seed': 0}, {'init_seed': 1000}], True)
    """
    abandoned: list[dict] = []
    for k in range(max_restarts + 1):
        init_seed = seed + 1000 * k
        result, ok, note = attempt(init_seed, k == max_restarts)
        if ok or k == max_restarts:
            return result, init_seed, abandoned, ok
        abandoned.append(note)
        if on_restart is not None:
            on_restart(seed + 1000 * (k + 1), note)
    raise AssertionError("unreachable")  # pragma: no cover


def restart_specs(unit: str, presets: str, below: float, after: int, most: int, *, whose: str = "a run whose fit",
                  per: str = "per run") -> list[tuple]:
    """``--restart-below``, ``--restart-after`` and ``--max-restarts`` for :func:`harness.add_overrides`
    (``unit``: "step" or "epoch"; ``presets`` name the presets whose values ``below`` / ``after`` / ``most`` are)."""
    return [("restart_below", float, f"with --fit-target: {whose} is still below this %% at --restart-after {unit}s "
             f"trains again from another model init (0: never) [{presets}: {below:g}]"),
            ("restart_after", int, f"the {unit} of the --restart-below check [{presets}: {after}]"),
            ("max_restarts", int, f"restarts {per} at most; the last attempt trains to its cap [{presets}: {most}]")]


def check_restart_flags(parser, a, *, unit: str, cap: float, cap_flag: str, restarts_elsewhere: bool = False) -> None:
    """The restart flags agree, else ``parser.error`` names the flag: ``--restart-below`` goes with
    ``--fit-target``, under it, checked at ``--restart-after`` (a ``unit`` before the cap ``cap_flag`` =
    ``cap``), with at least one restart allowed (``--max-restarts``). When it is 0, ``--restart-after`` and
    ``--max-restarts`` given by the user are refused (no restart is made), the latter unless
    ``restarts_elsewhere`` (another guard, e.g. a data-map model's fit target, restarts too). A preset's
    ``--restart-below`` is off without ``--fit-target`` (it reads the fit checks such a run does not make)."""
    if a.restart_below and not a.fit_target and "restart_below" not in (getattr(a, "given", None) or ()):
        a.restart_below = 0
    if not a.restart_below:
        given = sorted(set(getattr(a, "given", None) or ()) & ({"restart_after"} if restarts_elsewhere
                                                               else {"restart_after", "max_restarts"}))
        if given:  # the options of a restart that never happens: refused, not ignored
            parser.error(f"{' and '.join('--' + g.replace('_', '-') for g in given)} does not apply without "
                         "--restart-below (no restart is made); drop it or set --restart-below")
        return
    if not a.fit_target:
        parser.error(f"--restart-below {a.restart_below:g} needs --fit-target (the restart reads its fit checks)")
    if not 0 < a.restart_below <= a.fit_target:
        parser.error(f"--restart-below must be a percentage in (0, --fit-target {a.fit_target:g}], got "
                     f"{a.restart_below:g}")
    if not 0 < a.restart_after < cap:
        parser.error(f"--restart-after must be {'an' if unit == 'epoch' else 'a'} {unit} in (0, {cap_flag} {cap:g}), "
                     f"got {a.restart_after}")
    if a.max_restarts < 1:
        parser.error(f"--restart-below {a.restart_below:g} needs --max-restarts >= 1, got {a.max_restarts}")
