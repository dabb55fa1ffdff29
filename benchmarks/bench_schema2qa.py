"""Schema2QA benchmark: pool generation speed, structure extraction speed, template realism.

Prints:

1. pool generation through the builder (``load_dataset("schema2qa", "all", num_proc=...)``,
   Arrow files written), examples/s;
2. ThingTalk parsing + abstract template + atoms + compounds (height 2), programs/s, in one
   process and with ``Dataset.map(StructureFunction(), batched=True, num_proc=...)``;
3. distinct abstract templates of a pool of ``--pool-size`` examples, and with
   ``--annotated-dir``: the share of the annotated data's templates the pool covers (and the
   uncovered ones), atom/compound entropy and the divergences D_A / D_C between a pool sample
   and the annotated data; ``--plot`` writes the template rank-frequency plot.

Usage::

    python benchmarks/bench_schema2qa.py --annotated-dir ../shared/data/schema2qa \\
        [--gen-size 200000] [--parse-size 50000] [--pool-size 1000000] [--num-proc 2] [--plot t.png]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the generation workers)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gen-size", type=int, default=200_000, help="examples for the generation timing [200000]")
    parser.add_argument("--parse-size", type=int, default=50_000, help="programs for the structure timing [50000]")
    parser.add_argument("--pool-size", type=int, default=1_000_000, help="pool for the template counts [1000000]")
    parser.add_argument("--num-proc", type=int, default=2, help="processes [2]")
    parser.add_argument("--annotated-dir", default=None, help="folder of the annotated <domain>.tsv files (coverage)")
    parser.add_argument("--plot", default=None, help="write the pool's template frequency plot here (PNG)")
    args = parser.parse_args()

    import datasets

    import hf_synthsample
    from hf_synthsample import structure as st
    from hf_synthsample.columns import column_arrow
    from hf_synthsample.domains import schema2qa as s2q

    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory() as cache:
        t0, c0 = time.perf_counter(), _cpu()
        ds = hf_synthsample.load_dataset("schema2qa", "all", split="train", num_examples=args.gen_size, num_proc=args.num_proc, cache_dir=cache)
        dt, cpu = time.perf_counter() - t0, _cpu() - c0
        print(
            f"generation: {args.gen_size:,} examples, num_proc={args.num_proc}: {dt:.1f} s wall, {args.gen_size / dt:,.0f} examples/s "
            f"({args.gen_size / cpu:,.0f} examples per CPU-second over all processes: the rate on {args.num_proc} idle cores "
            f"is about {args.num_proc} x that)"
        )

        programs = [str(p) for p in column_arrow(ds, "program").to_pylist()[: args.parse_size]]
        t0, c0 = time.perf_counter(), time.process_time()
        for p in programs:
            st.structure(p)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(
            f"parse + template + atoms + compounds (1 process): {len(programs) / dt:,.0f} programs/s wall, "
            f"{len(programs) / cpu:,.0f} per CPU-second"
        )
        small = datasets.Dataset.from_dict({"program": programs})
        t0 = time.perf_counter()
        small.map(st.StructureFunction(), batched=True, num_proc=args.num_proc, load_from_cache_file=False)
        dt = time.perf_counter() - t0
        print(f"parse + template + atoms + compounds (Dataset.map, num_proc={args.num_proc}): {len(programs) / dt:,.0f} programs/s")

        if args.pool_size > args.gen_size:
            pool = hf_synthsample.load_dataset(
                "schema2qa", "all", split="train", num_examples=args.pool_size, num_proc=args.num_proc, cache_dir=cache
            )
        else:
            pool = ds
        templates = column_arrow(pool, "template").to_pylist()
        counts = st.template_counts(templates)
        print(f"pool of {len(templates):,}: {len(counts)} distinct abstract templates")
        if args.plot:
            st.plot_template_frequencies(counts, args.plot, title=f"Schema2QA pool: {len(counts)} templates, {len(templates):,} examples")
            print(f"plot: {args.plot}")
        if args.annotated_dir:
            ann = [r["program"] for r in s2q.read_annotated(args.annotated_dir)]
            coverage, missing = st.template_coverage(counts, [st.abstract_template(p) for p in ann])
            print(f"coverage of the annotated templates: {coverage:.1%} ({len(missing)} uncovered)")
            for t in missing:
                print(f"  uncovered: {t}")
            sample = random.Random(0).sample(column_arrow(pool, "program").to_pylist(), min(len(ann), len(pool)))
            d = st.diagnostics(sample, reference=ann)
            ref = st.diagnostics(ann)
            print(
                f"pool sample of {len(sample):,}: atom entropy {d['atom_entropy']:.3f}, compound entropy "
                f"{d['compound_entropy']:.3f} (annotated: {ref['atom_entropy']:.3f}, {ref['compound_entropy']:.3f}); "
                f"vs annotated: D_A {d['atom_divergence']:.3f}, D_C {d['compound_divergence']:.3f}"
            )


if __name__ == "__main__":
    main()
