"""Benchmark of the structural samplers on a Schema2QA pool (issue 6 targets).

Prints, for a pool of ``--pool-size`` rows: pool generation and structure-column times, UAT time
for ``--uat-k`` rows, CMaxEnt preparation and greedy time for each ``--k`` (with a per-run time
limit: when it is hit, the steps done and the rate are printed), the process's peak memory, and
the speed-up of CMaxEnt over the naive greedy on a ``--naive-pool`` pool (naive timed on
``--naive-steps`` steps, per step).

    python benchmarks/bench_samplers.py --help
    python benchmarks/bench_samplers.py --pool-size 1000000 --k 5000 120000 --uat-k 120000
    python benchmarks/bench_samplers.py --pool-size 100000 --k 2000 --naive-pool 20000   # quick
"""

from __future__ import annotations

import argparse
import resource
import sys
import time


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pool-size", type=int, default=1_000_000, help="rows of the Schema2QA pool [1,000,000]")
    p.add_argument("--k", type=int, nargs="+", default=[5000, 120_000], help="CMaxEnt sample sizes [5000 120000]")
    p.add_argument("--uat-k", type=int, default=120_000, help="UAT sample size [120,000]")
    p.add_argument("--naive-pool", type=int, default=20_000, help="pool of the naive-vs-fast comparison [20,000] (0: skip)")
    p.add_argument("--naive-steps", type=int, default=3, help="naive greedy steps timed [3]")
    p.add_argument("--fast-steps", type=int, default=2000, help="fast greedy steps on the naive pool [2000]")
    p.add_argument("--time-limit", type=float, default=900.0, help="seconds per CMaxEnt run before stopping [900]")
    p.add_argument("--device", default="cpu", help="torch device of CMaxEnt's per-step work [cpu]")
    p.add_argument("--num-proc", type=int, default=2, help="processes for pool generation and structure columns [2]")
    p.add_argument("--cache-dir", default=None, help="datasets cache directory")
    args = p.parse_args(argv)

    import hf_synthsample
    from hf_synthsample.sampling import CMaxEntSampler, UATSampler
    from hf_synthsample.sampling.cmaxent import reference_greedy
    from hf_synthsample.structure import StructureFunction

    t = time.perf_counter()
    pool = hf_synthsample.load_dataset("schema2qa", "all", num_examples=args.pool_size, seed=0, split="train",
                                       num_proc=args.num_proc, cache_dir=args.cache_dir)
    print(f"pool: {len(pool):,} rows generated in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    pool = pool.map(StructureFunction(outputs=("atoms", "compounds")), batched=True, num_proc=args.num_proc,
                    desc="structure")
    print(f"structure columns (atoms, compounds): {time.perf_counter() - t:.1f} s")

    t = time.perf_counter()
    UATSampler(alpha=-1.0, seed=0).indices(pool, args.uat_k)
    print(f"UAT alpha=-1: {args.uat_k:,} of {len(pool):,} in {time.perf_counter() - t:.2f} s")

    for k in args.k:
        s = CMaxEntSampler(seed=0, device=args.device)
        t = time.perf_counter()
        eng, _ = s.engine(pool, k)
        prep = time.perf_counter() - t
        print(f"CMaxEnt k={k:,}: preparation {prep:.1f} s ({len(eng.members):,} distinct structures, "
              f"{eng.atoms.num_exceptions + eng.compounds.num_exceptions:,} update entries)", flush=True)
        t = time.perf_counter()
        done = 0
        with eng.threads():
            while done < k and time.perf_counter() - t < args.time_limit:
                eng.step()
                done += 1
        run = time.perf_counter() - t
        status = "done" if done == k else f"STOPPED at the time limit after {done:,} steps"
        print(f"CMaxEnt k={k:,}: greedy {run:.1f} s ({done / run:.0f} steps/s, {status}); "
              f"total {prep + run:.1f} s; peak RSS so far {peak_gb():.2f} GB", flush=True)
        del eng

    if args.naive_pool:
        sub = pool.select(range(min(args.naive_pool, len(pool))))
        s = CMaxEntSampler(seed=0, device=args.device)
        t = time.perf_counter()
        eng, _ = s.engine(sub, args.fast_steps)
        prep = time.perf_counter() - t
        t = time.perf_counter()
        fast_order = eng.run(args.fast_steps)
        fast_step = (time.perf_counter() - t) / args.fast_steps
        atoms, comps = sub["atoms"], sub["compounds"]
        t = time.perf_counter()
        naive_order = reference_greedy(atoms, comps, args.naive_steps, s.priority(len(sub)))
        naive_step = (time.perf_counter() - t) / args.naive_steps
        same = naive_order == fast_order[: args.naive_steps]
        print(f"naive vs fast on {len(sub):,} rows: naive {naive_step:.2f} s/step, fast {1e3 * fast_step:.2f} ms/step "
              f"(+ {prep:.1f} s preparation): {naive_step / fast_step:,.0f}x per step; "
              f"{args.fast_steps:,} picks: naive ~{naive_step * args.fast_steps / 60:.0f} min (extrapolated) vs "
              f"fast {prep + fast_step * args.fast_steps:.1f} s; same first {args.naive_steps} picks: {same}")
    print(f"peak RSS {peak_gb():.2f} GB")


if __name__ == "__main__":
    sys.exit(main())
