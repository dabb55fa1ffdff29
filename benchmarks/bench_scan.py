"""Benchmark SCAN* generation and the exact SCAN splits.

Generates ``--num-examples`` SCAN* rows of ``--config`` (default ``length_250``: train commands of
1..250 words) into a fresh cache with ``--num-proc`` processes, and reports wall time, rows/s,
Arrow bytes and the peak resident memory of the whole process tree (this process plus its
children: ``getrusage(RUSAGE_SELF) + getrusage(RUSAGE_CHILDREN)``, an upper bound since the
children's peaks need not coincide). Then it times building all eight exact SCAN configs.

Target (issue #4): 1M SCAN* examples at L = 250 in under 2 minutes with num_proc=2, peak memory
under 4 GB.

Usage::

    python benchmarks/bench_scan.py                       # 1M rows, length_250, num_proc=2
    python benchmarks/bench_scan.py --num-examples 100000 --num-proc 1
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time


def _peak_rss_mb() -> float:
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (self_kb + children_kb) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-examples", type=int, default=1_000_000, help="SCAN* train rows [1000000]")
    parser.add_argument("--config", default="length_250", help="scan_star config [length_250]")
    parser.add_argument("--num-proc", type=int, default=2, help="generation processes [2]")
    parser.add_argument("--block-size", type=int, default=1_000, help="rows per block [1000]")
    parser.add_argument("--cache-dir", default=None, help="datasets cache (default: a temporary folder, removed)")
    parser.add_argument("--skip-exact", action="store_true", help="do not time the exact SCAN configs")
    args = parser.parse_args()

    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    import datasets

    import hf_synthsample

    datasets.disable_progress_bars()
    cache = args.cache_dir or tempfile.mkdtemp(prefix="bench-scan-")
    try:
        t0 = time.perf_counter()
        ds = hf_synthsample.load_dataset(
            "scan_star", args.config, num_examples=args.num_examples, num_test=0, block_size=args.block_size,
            num_proc=args.num_proc, cache_dir=cache, split="train", download_mode="force_redownload",
        )
        wall = time.perf_counter() - t0
        nbytes = ds.data.nbytes
        print(f"SCAN* {args.config}: {ds.num_rows:,} rows in {wall:.1f} s ({ds.num_rows / wall:,.0f} rows/s), "
              f"num_proc={args.num_proc}, Arrow {nbytes / 1e9:.2f} GB")
        lengths = ds.data.column("input_length")
        import pyarrow.compute as pc

        print(f"  input length: mean {pc.mean(lengths).as_py():.1f}, max {pc.max(lengths).as_py()}; "
              f"output length mean {pc.mean(ds.data.column('output_length')).as_py():.1f}")
        print(f"  peak RSS (self + children): {_peak_rss_mb():,.0f} MB")
        del ds
        if not args.skip_exact:
            from hf_synthsample.domains.scan import SCAN_SPLITS

            t0 = time.perf_counter()
            for name in SCAN_SPLITS:
                hf_synthsample.load_dataset("scan", name, cache_dir=cache, download_mode="force_redownload")
            print(f"exact SCAN: all {len(SCAN_SPLITS)} configs built in {time.perf_counter() - t0:.1f} s")
    finally:
        if args.cache_dir is None:
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
