"""MCD splits at pool scale: a Schema2QA pool of a million rows (``load_dataset("schema2qa", "all")``).

Each job runs in its own process (its wall time and peak RSS, the process tree's, are its own):

* ``reach``: the pool's reach, measured by long runs: the new search for ``--reach-seconds`` s (or to
  its own stop, ``patience`` rounds without a gain) from ``--reach-seeds`` starts, as a partition
  (test 25 %) and with rows left out (train 50 % / test 25 %); the structures are read once per
  share. The highest D_C found is the reach.
* ``split``: today's search (``bulk_rounds=False``) and the new one side by side, each a whole
  ``mcd_split`` call (reading and grouping the structures, the search, the split's datasets) under
  ``--split-time-limit`` s of search: time to each D_C of ``--levels``, final D_C and D_A, peak RSS.
* ``sweep``: ``divergence_sweep`` at six targets from the random split's D_C up to ``--reach`` - 0.01.
* ``range``: ``divergence_range`` (the minimising and the maximising search).
* ``num_proc``: the same split (test indices) with ``num_proc`` 1 and 2, under ``--max-steps``
  swap steps and no time limit (a time limit would make any search depend on the machine's speed).

Usage::

    python benchmarks/bench_pool_splits.py --parts reach split sweep range num_proc [--pool-size 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _load_avg() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def _pool(args):
    import hf_synthsample

    return hf_synthsample.load_dataset("schema2qa", "all", num_examples=args.pool_size, seed=0, split="train",
                                       num_proc=2, cache_dir=args.cache_dir)


def _times_to(history, levels, offset: float) -> dict:
    """Seconds (``offset`` + the search's clock) to first reach each D_C of ``levels``; None if never."""
    out = {}
    for level in levels:
        hit = next((t for t, _, dc, _ in history if dc >= level), None)
        out[f"{level:g}"] = None if hit is None else round(offset + hit, 1)
    return out


def job_reach(args) -> dict:
    from hf_synthsample.splits._data import settings_structures
    from hf_synthsample.splits.mcd import search
    from hf_synthsample.splits.settings import SplitSettings

    pool = _pool(args)
    out = {}
    for train in (None, 0.5):
        base = SplitSettings(language="thingtalk", train_size=train, size_tolerance=0.005, patience=args.patience,
                             num_proc=args.num_proc, time_limit=args.reach_seconds)
        t = time.perf_counter()
        st = settings_structures(pool, base)
        read = time.perf_counter() - t
        runs = []
        for seed in range(args.reach_seeds):
            r = search(st, base.replace(seed=seed), progress=False)
            runs.append({"seed": seed, "D_C": round(r.compound_divergence, 4), "D_A": round(r.atom_divergence, 4),
                         "seconds": round(r.seconds, 1), "stop": r.stop_reason})
            print(f"  reach, train {train}: {runs[-1]}", file=sys.stderr, flush=True)
        out["partition" if train is None else "train 0.5"] = {"read_s": round(read, 1), "runs": runs,
                                                               "reach": max(x["D_C"] for x in runs)}
    return out


def job_split(args, bulk: bool | None) -> dict:
    from _measure import Measure

    from hf_synthsample.splits import mcd_split

    pool = _pool(args)
    with Measure() as m:
        split = mcd_split(pool, "program", "thingtalk", seed=args.seed, time_limit=args.split_time_limit,
                          size_tolerance=0.005, bulk_rounds=bulk, num_proc=args.num_proc, train_size=args.train_size,
                          progress=False)
    r = split.mcd_result
    other = m.seconds - r.seconds
    return {"search": "new" if bulk is None else "today's", "seconds": round(m.seconds, 1),
            "search_s": round(r.seconds, 1), "read_and_datasets_s": round(other, 1),
            "peak_rss_gb": round(m.peak_rss_mb / 1024, 2), "D_C": round(r.compound_divergence, 4),
            "D_A": round(r.atom_divergence, 4), "start_D_C": round(r.initial_compound_divergence, 4),
            "structures": r.num_groups, "test_rows": len(split["test"]), "train_rows": len(split["train"]),
            "time_to": _times_to(r.history, args.levels, other), "stop": r.stop_reason}


def job_sweep(args) -> dict:
    from _measure import Measure

    from hf_synthsample.splits import divergence_sweep

    pool = _pool(args)
    with Measure() as m:
        targets = np.linspace(args.random_dc, args.reach - 0.01, 6).round(3).tolist()
        sw = divergence_sweep(pool, targets, column="program", language="thingtalk", size_tolerance=0.005,
                              num_proc=args.num_proc, progress=False)
    return {"seconds": round(m.seconds, 1), "read_s": round(sw.read_seconds, 1),
            "peak_rss_gb": round(m.peak_rss_mb / 1024, 2), "targets": targets,
            "D_C": {f"{t:g}": round(x, 4) for t, x in sw.compound_divergence.items()},
            "worst_miss": round(max(abs(sw.compound_divergence[t] - t) for t in targets), 4)}


def job_range(args) -> dict:
    from _measure import Measure

    from hf_synthsample.splits import divergence_range

    pool = _pool(args)
    with Measure() as m:
        lo, hi = divergence_range(pool, column="program", language="thingtalk", size_tolerance=0.005, num_proc=args.num_proc)
    return {"seconds": round(m.seconds, 1), "peak_rss_gb": round(m.peak_rss_mb / 1024, 2), "range": [round(lo, 4),
                                                                                                     round(hi, 4)]}


def job_num_proc(args) -> dict:
    from hf_synthsample.splits import mcd_split

    pool = _pool(args)
    tests = {}
    for n in (1, 2):
        t = time.perf_counter()
        split = mcd_split(pool, "program", "thingtalk", seed=args.seed, max_steps=args.max_steps, size_tolerance=0.005,
                          num_proc=n, progress=False)
        tests[n] = (np.asarray(split.mcd_result.test_indices), round(time.perf_counter() - t, 1),
                    round(split.mcd_result.compound_divergence, 4))
    return {"same_test_rows": bool(np.array_equal(tests[1][0], tests[2][0])),
            "seconds": {n: v[1] for n, v in tests.items()}, "D_C": {n: v[2] for n, v in tests.items()}}


def _child(args, job: str, extra: list[str]) -> dict:
    """``job`` in a fresh process (its own peak RSS), its JSON result."""
    cmd = [sys.executable, __file__, "--job", job, *extra, *sys.argv[1:]]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", nargs="+", default=["reach", "split", "sweep", "range", "num_proc"],
                    choices=["reach", "split", "sweep", "range", "num_proc"])
    ap.add_argument("--pool-size", type=int, default=1_000_000)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--num-proc", type=int, default=2, help="processes parsing the program column [2]")
    ap.add_argument("--reach-seeds", type=int, default=1, help="reach: starts per share [1]")
    ap.add_argument("--patience", type=int, default=100, help="reach: rounds without a gain before a run stops [100]")
    ap.add_argument("--reach-seconds", type=float, default=600.0, help="reach: seconds of each run [600]")
    ap.add_argument("--split-time-limit", type=float, default=150.0, help="split: seconds of search [150]")
    ap.add_argument("--searches", nargs="+", default=["today", "new"], choices=["today", "new"],
                    help="split: today's search (the swaps alone) and / or the new one (bulk rounds first) [both]")
    ap.add_argument("--train-size", type=float, default=None, help="split: train share (rows left out) [a partition]")
    ap.add_argument("--levels", type=float, nargs="+", default=[0.15, 0.2, 0.25, 0.28, 0.3],
                    help="split: D_C levels timed [0.15 0.2 0.25 0.28 0.3]")
    ap.add_argument("--reach", type=float, default=None, help="sweep: the reach (else the reach part's)")
    ap.add_argument("--random-dc", type=float, default=None, help="sweep: the random split's D_C (else the split part's)")
    ap.add_argument("--max-steps", type=int, default=2000, help="num_proc: swap steps [2000]")
    ap.add_argument("--job", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--bulk", default="auto", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.job is not None:  # a child: one job, its result as the last line
        fn = {"reach": job_reach, "sweep": job_sweep, "range": job_range, "num_proc": job_num_proc}.get(args.job)
        result = job_split(args, None if args.bulk == "auto" else False) if args.job == "split" else fn(args)
        print(json.dumps(result))
        return
    print(f"== Schema2QA pool of {args.pool_size:,} rows, num_proc {args.num_proc} ({_load_avg()})", flush=True)
    t = time.perf_counter()
    _pool(args)
    print(f"pool generated (or read from the cache) in {time.perf_counter() - t:.1f} s", flush=True)
    if "reach" in args.parts:
        got = _child(args, "reach", [])
        for share, x in got.items():
            print(f"reach ({share}): {x['reach']:.4f}; runs {x['runs']}; structures read in {x['read_s']} s")
        args.reach = args.reach or got["partition"]["reach"]
    if "split" in args.parts:
        rows = [_child(args, "split", ["--bulk", {"today": "off", "new": "auto"}[b]]) for b in args.searches]
        print("\n| search | in all (s) | search (s) | read + datasets (s) | time to D_C " +
              " / ".join(f"{lv:g}" for lv in args.levels) + " (s) | D_C (start) | D_A | peak RSS (GB) | stop |")
        print("|---|---:|---:|---:|---|---|---:|---:|---|")
        for r in rows:
            to = " / ".join("-" if v is None else f"{v:g}" for v in r["time_to"].values())
            print(f"| {r['search']} | {r['seconds']} | {r['search_s']} | {r['read_and_datasets_s']} | {to} | "
                  f"{r['D_C']} ({r['start_D_C']}) | {r['D_A']} | {r['peak_rss_gb']} | {r['stop']} |")
        args.random_dc = args.random_dc or rows[-1]["start_D_C"]
        if args.reach and args.searches[-1] == "new":
            print(f"new search: D_C {rows[-1]['D_C']} is {args.reach - rows[-1]['D_C']:.4f} below the reach "
                  f"{args.reach}, in {rows[-1]['seconds']} s in all")
    if "sweep" in args.parts:
        if args.reach is None or args.random_dc is None:
            raise SystemExit("sweep: pass --reach and --random-dc, or run it with the reach and split parts")
        print("sweep:", json.dumps(_child(args, "sweep", ["--reach", str(args.reach), "--random-dc",
                                                          str(args.random_dc)])))
    if "range" in args.parts:
        print("range:", json.dumps(_child(args, "range", [])))
    if "num_proc" in args.parts:
        print("num_proc:", json.dumps(_child(args, "num_proc", [])))
    print(f"({_load_avg()})")


if __name__ == "__main__":
    main()
