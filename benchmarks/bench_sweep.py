"""Compound-divergence sweeps (issue 21): a family of MCD splits of all 20,910 SCAN commands (or
the COGS training set) at chosen compound divergences, with its time.

For each ``--train-sizes`` entry (``none``: a partition) and seed: ``divergence_sweep`` over
``--targets`` (test 25 %, D_A <= 0.02, Keysers weights), printing per target the search's and the
split report's D_C, D_A, sizes, stop reason and search time, then the sweep's wall time in all
(reading the structure once, the searches, the split reports) and CPU time; with ``--save`` also
the time to write the Hub folder (plots included). ``--range`` first prints the reachable range
(``divergence_range``: the minimising and maximising searches).

Usage::

    python benchmarks/bench_sweep.py [--data scan|cogs] [--targets 0 0.1 0.2 0.3 0.4 0.5 0.6]
        [--train-sizes 0.5 none] [--seeds 0 1] [--range] [--save DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(data: str, cogs: str):
    import datasets

    if data == "scan":
        from hf_synthsample.domains.scan import scan_commands

        return datasets.Dataset.from_dict({"commands": [c for c, _ in scan_commands()]}), "commands", "scan"
    with open(cogs, encoding="utf-8") as f:
        lfs = [line.split("\t")[1] for line in f if line.strip()]
    return datasets.Dataset.from_dict({"lf": lfs}), "lf", "cogs"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _load_avg() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="scan", choices=["scan", "cogs"])
    ap.add_argument("--cogs", default=os.path.join(HERE, "..", "..", "shared", "data", "cogs", "train.tsv"))
    ap.add_argument("--targets", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    ap.add_argument("--train-sizes", type=lambda v: None if v == "none" else float(v), nargs="+", default=[0.5])
    ap.add_argument("--test-size", type=float, default=0.25)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--range", action="store_true", help="print divergence_range first")
    ap.add_argument("--save", default=None, help="write each sweep to DIR/<train size>-<seed> (timed apart)")
    args = ap.parse_args(argv)

    import datasets

    datasets.disable_progress_bars()
    from hf_synthsample.splits import divergence_range, divergence_sweep

    ds, column, language = _load(args.data, args.cogs)
    print(f"{args.data}: {len(ds):,} rows; targets {args.targets}; test {args.test_size:.0%}; D_A <= 0.02; "
          f"Keysers weights; {os.cpu_count()} CPUs; {_load_avg()}")
    for train_size in args.train_sizes:
        shape = "partition" if train_size is None else f"train {train_size:.0%}"
        if args.range:
            t = time.perf_counter()
            lo, hi = divergence_range(ds, column=column, language=language, test_size=args.test_size,
                                      train_size=train_size)
            print(f"\n{shape}: reachable range (seed 0) [{lo:.4f}, {hi:.4f}] in {time.perf_counter() - t:.1f} s "
                  f"({_load_avg()})")
        for seed in args.seeds:
            print(f"\n== {shape}, seed {seed} ({_load_avg()})")
            t, c = time.perf_counter(), _cpu()
            sweep = divergence_sweep(ds, args.targets, column=column, language=language, test_size=args.test_size,
                                     train_size=train_size, seed=seed, progress=False)
            wall, cpu = time.perf_counter() - t, _cpu() - c
            print("| target | D_C (search) | D_C (report) | D_A | train | test | left out | stop | search s |")
            print("|---|---|---|---|---|---|---|---|---|")
            for x in sweep.targets:
                r, z = sweep.results[x], sweep.sizes[x]
                print(f"| {x:g} | {r.compound_divergence:.4f} | {sweep.compound_divergence[x]:.4f} | "
                      f"{sweep.atom_divergence[x]:.4f} | {z['train']:,} | {z['test']:,} | {z['left_out']:,} | "
                      f"{r.stop_reason} | {r.seconds:.1f} |")
            searches = sum(r.seconds for r in sweep.results.values())
            print(f"sweep of {len(sweep)} splits: {wall:.1f} s wall in all ({sweep.read_seconds:.1f} s reading the "
                  f"structure once, {searches:.1f} s searching, the rest split reports), {cpu:.1f} s CPU "
                  f"({_load_avg()})")
            if args.save:
                t = time.perf_counter()
                out = sweep.save(os.path.join(args.save, f"{'partition' if train_size is None else train_size}-{seed}"),
                                 if_exists="overwrite")
                print(f"saved {out} in {time.perf_counter() - t:.1f} s (plots included)")


if __name__ == "__main__":
    main()
