"""MCD splits: quality and speed, side by side with the public reference procedure.

Parts (``--parts``, all by default):

* ``peer``: 2,000 SCAN commands (a seeded sample of the exact grammar), test 25 %, unweighted
  compounds, the atom constraint "every test atom in train" (also with D_A <= 0.02 for ours), test
  50 % (the issue's measurement) and 25 %. The peer is the public reference procedure,
  google-research/language ``language/compgen/nqg/tasks/mcd_utils.py`` (Apache 2.0). It is not in
  this repository: download it and pass its path with ``--peer``::

      curl -LO https://raw.githubusercontent.com/google-research/language/master/language/compgen/nqg/tasks/mcd_utils.py
      python benchmarks/bench_splits.py --parts peer --peer mcd_utils.py

  ``benchmarks/_mcd_peer_driver.py`` (ours) loads it with importlib in a subprocess and makes
  ``--peer-swaps`` swaps from a seeded random 75/25 start; ours runs until it reaches the peer's
  compound divergence (time to reach, wall and CPU, each the fastest of ``--repeats`` runs: the
  machine is shared), then on to its own stop. Without ``--peer`` the peer column is skipped (a
  message says how to get it) and ours runs to its own stop.
  Both search only, with this project's SCAN atoms and compounds precomputed; the divergence of
  both results is recomputed by ``split_report``.
* ``scan``: all 20,910 SCAN commands, test 25 %, atom divergence <= 0.02, ``--time-limit`` s per
  run (searches from new random starts while time remains, the best kept), for each compound
  weighting of ``--weights`` (``example``: Keysers et al.'s weight of each compound in each example,
  ``pool``: one weight per compound over the pool, ``none``), ``--seeds`` seeds, as a partition and
  with train 50 % (``--train-sizes``: the other rows left out, as Keysers et al.'s SCAN MCD splits
  are subsets); each split's D_C is also given under the other weightings (``split_report``); the
  random split's divergence for comparison.
* ``cogs``: the COGS training set (``--cogs``), same settings.

A pool of a million rows (reach, today's search beside the bulk rounds, sweep, range): see
``benchmarks/bench_pool_splits.py``.

Usage::

    nice -n 5 python benchmarks/bench_splits.py [--parts peer scan cogs] [--peer mcd_utils.py]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _load():
    import datasets

    from hf_synthsample.domains.scan import scan_commands

    return datasets.Dataset.from_dict({"commands": [c for c, _ in scan_commands()]})


def _load_avg() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def _peer_runs(args, cmds, parts, test_size) -> dict | None:
    """The peer's result on a seeded random start (fastest of ``--repeats`` runs), or None without ``--peer``."""
    from _mcd_peer_driver import PEER_RAW, load_peer

    if args.peer is None:
        print(f"peer skipped: pass --peer PATH/TO/mcd_utils.py, google-research/language "
              f"language/compgen/nqg/tasks/mcd_utils.py (Apache 2.0; not in this repository): curl -LO {PEER_RAW}")
        return None
    if not os.path.isfile(args.peer):
        raise SystemExit(f"--peer: {args.peer} is not a file; get mcd_utils.py with: curl -LO {PEER_RAW}")
    load_peer(args.peer)  # a wrong file is an error before any run
    perm = np.random.default_rng(1).permutation(len(cmds))
    n_test = round(test_size * len(cmds))
    data = {"examples": cmds, "atoms": [p[1] for p in parts], "compounds": [p[2] for p in parts],
            "train": perm[n_test:].tolist(), "test": perm[:n_test].tolist()}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(data, f)
    runs = []
    try:
        for _ in range(args.repeats):  # the fastest of a few runs: the machine is shared
            out = subprocess.run([sys.executable, os.path.join(HERE, "_mcd_peer_driver.py"), args.peer, f.name,
                                  str(args.peer_swaps)], capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        os.unlink(f.name)
    return dict(runs[0], seconds=min(r["seconds"] for r in runs), cpu_seconds=min(r["cpu_seconds"] for r in runs))


def part_peer(args) -> None:
    from hf_synthsample.splits import mcd_search, split_report
    from hf_synthsample.splits._data import read_structures
    from hf_synthsample.structure import structure

    full = _load()
    rng = np.random.default_rng(0)
    ds = full.select(np.sort(rng.choice(len(full), args.peer_size, replace=False)))
    cmds = list(ds["commands"])
    parts = [structure(c, "scan") for c in cmds]
    st = read_structures(ds, column="commands", language="scan", max_height=2, atoms_column=None,
                         compounds_column=None, compound_weights=False)
    for test_size in args.peer_test_sizes:
        print(f"\n== peer: {len(cmds):,} SCAN commands, test {round(test_size * len(cmds)):,} ({test_size:.0%}), "
              f"unweighted compounds, up to {args.peer_swaps:,} swaps ({_load_avg()})")
        peer = _peer_runs(args, cmds, parts, test_size)
        if peer is not None:
            test_set = set(peer["test"])
            mask = np.asarray([c in test_set for c in cmds])
            pr = split_report(ds.select(np.flatnonzero(~mask)), ds.select(np.flatnonzero(mask)), "commands", "scan",
                              compound_weights=False)
            print(f"peer (mcd_utils.py): {peer['swaps']:,} swaps in {peer['seconds']:.2f} s wall / "
                  f"{peer['cpu_seconds']:.2f} s CPU: D_C {pr.compound_divergence:.4f} (its own figure "
                  f"{peer['compound_divergence']:.4f}), D_A {pr.atom_divergence:.4f}")
        for bound in (1.0, 0.02):
            w, c = time.perf_counter(), time.process_time()
            r2 = mcd_search(st, test_size=test_size, max_atom_divergence=bound, seed=0, progress=False)
            full_w, full_c = time.perf_counter() - w, time.process_time() - c
            own = (f"D_C {r2.compound_divergence:.4f}, D_A {r2.atom_divergence:.4f} in {full_w:.2f} s wall / "
                   f"{full_c:.2f} s CPU ({r2.stop_reason})")
            if peer is None:
                print(f"ours (atom bound {bound}) to its own stop: {own}")
                continue
            reach_w = reach_c = float("inf")
            for _ in range(args.repeats):
                w, c = time.perf_counter(), time.process_time()
                r = mcd_search(st, test_size=test_size, max_atom_divergence=bound, seed=0,
                               stop_at_divergence=pr.compound_divergence, progress=False)
                reach_w, reach_c = min(reach_w, time.perf_counter() - w), min(reach_c, time.process_time() - c)
            print(f"ours (atom bound {bound}): the peer's D_C reached in {reach_w:.3f} s wall / {reach_c:.3f} s CPU "
                  f"({r.steps:,} swap steps, {r.holdouts} hold-outs; D_C {r.compound_divergence:.4f}): "
                  f"{peer['seconds'] / reach_w:.0f}x (wall), {peer['cpu_seconds'] / reach_c:.0f}x (CPU) faster; "
                  f"to its own stop: {own}")
        if peer is None:
            continue
        ratios = []
        for seed in range(args.peer_seeds):  # the speed-up is not one lucky seed's
            best = float("inf")
            for _ in range(args.repeats):
                c = time.process_time()
                mcd_search(st, test_size=test_size, max_atom_divergence=0.02, seed=seed,
                           stop_at_divergence=pr.compound_divergence, progress=False)
                best = min(best, time.process_time() - c)
            ratios.append(peer["cpu_seconds"] / best)
        print(f"ours over {args.peer_seeds} seeds (atom bound 0.02, CPU, fastest of {args.repeats}): speed-up "
              f"min {min(ratios):.0f}x, median {float(np.median(ratios)):.0f}x, max {max(ratios):.0f}x")
    print("(ours: search only, like the peer: atoms and compounds precomputed for both; "
          f"parsing the {len(cmds):,} commands once takes well under a second)")


_WEIGHTS = {"example": "example", "pool": "pool", "none": False}


def _run_target(name, ds, column, language, args) -> None:
    from hf_synthsample.splits import mcd_split, random_split, split_report

    rnd = random_split(ds, seed=0)
    base = {w: split_report(rnd["train"], rnd["test"], column, language, compound_weights=_WEIGHTS[w]).compound_divergence
            for w in args.weights}
    print(f"\n== {name}: {len(ds):,} rows, test 25 %, atom divergence <= 0.02, time limit {args.time_limit:.0f} s, "
          f"max steps {args.max_steps}, restarts {args.restarts} "
          f"({_load_avg()}); random split: D_C " + ", ".join(f"{base[w]:.4f} ({w})" for w in args.weights))
    for train_size, weights, seed in itertools.product(args.train_sizes, args.weights,
                                                            range(args.first_seed, args.first_seed + args.seeds)):
        t = time.perf_counter()
        s = mcd_split(ds, column, language, compound_weights=_WEIGHTS[weights], seed=seed, time_limit=args.time_limit,
                      max_steps=args.max_steps, restarts=args.restarts, train_size=train_size, progress=False)
        wall = time.perf_counter() - t
        r = s.mcd_result
        others = ", ".join(f"{split_report(s['train'], s['test'], column, language, compound_weights=_WEIGHTS[o]).compound_divergence:.4f} ({o})"
                           for o in args.weights if o != weights)
        sizes = (f"train {len(s['train']):,} ({r.num_left_out:,} rows left out)" if train_size
                 else f"partition, train {len(s['train']):,}")
        print(f"{sizes}, weights {weights}, seed {seed}: D_C {r.compound_divergence:.4f}, "
              f"D_A {r.atom_divergence:.4f}, {wall:.1f} s in all ({r.seconds:.1f} s search, {r.steps:,} steps, "
              f"{r.swaps:,} swaps, {r.holdouts} hold-outs, {r.starts} starts, {r.num_groups:,} structures), "
              f"stop: {r.stop_reason}; the same split's D_C under the other weightings: {others} ({_load_avg()})",
              flush=True)


def part_scan(args) -> None:
    _run_target("SCAN, all commands", _load(), "commands", "scan", args)


def part_cogs(args) -> None:
    import datasets

    if not os.path.exists(args.cogs):
        print(f"\n== cogs skipped: {args.cogs} not found")
        return
    with open(args.cogs, encoding="utf-8") as f:
        lfs = [line.split("\t")[1] for line in f if line.strip()]
    _run_target("COGS train", datasets.Dataset.from_dict({"lf": lfs}), "lf", "cogs", args)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", nargs="+", default=["peer", "scan", "cogs"], choices=["peer", "scan", "cogs"])
    ap.add_argument("--peer", default=None, metavar="PATH",
                    help="peer part: path of google-research/language language/compgen/nqg/tasks/mcd_utils.py "
                         "(not in this repository; without it the peer column is skipped)")
    ap.add_argument("--peer-size", type=int, default=2000)
    ap.add_argument("--peer-swaps", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3, help="peer part: timings are the fastest of this many runs [3]")
    ap.add_argument("--peer-test-sizes", type=float, nargs="+", default=[0.5, 0.25],
                    help="0.5: the issue's 50/50 start; 0.25: the test size of the other parts")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--max-steps", type=int, default=None,
                    help="scan/cogs: also stop after this many swap steps (a budget the machine's load does not change)")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--first-seed", type=int, default=0, help="scan/cogs: seeds first-seed .. first-seed + seeds - 1 [0]")
    ap.add_argument("--restarts", type=int, default=100, help="scan/cogs: restarts within the time limit [100]")
    ap.add_argument("--train-sizes", type=lambda v: None if v == "none" else float(v), nargs="+", default=[None, 0.5],
                    help="scan/cogs: train shares ('none': a partition; below 0.75 the other rows are left out, as "
                         "in Keysers et al.'s MCD splits) [none 0.5]")
    ap.add_argument("--weights", nargs="+", default=["example", "pool", "none"], choices=list(_WEIGHTS),
                    help="scan/cogs: compound weightings to search with [example pool none]")
    ap.add_argument("--peer-seeds", type=int, default=8, help="peer part: our speed-up over this many seeds [8]")
    ap.add_argument("--cogs", default=os.path.join(HERE, "..", "..", "shared", "data", "cogs", "train.tsv"))
    args = ap.parse_args(argv)
    for part in args.parts:
        globals()[f"part_{part}"](args)


if __name__ == "__main__":
    main()
