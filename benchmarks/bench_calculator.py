"""Calculator generation throughput and memory, and the cost of generator-side homogenization.

    python benchmarks/bench_calculator.py                       # 1M rows of dcfg with num_proc=2, + homogenization table
    python benchmarks/bench_calculator.py --num-examples 200000 --configs dcfg mixture --num-proc 1 2

Prints one line per (config, num_proc): rows/s including writing the Arrow cache, and the peak
resident memory of the whole process tree; then, for each salient variable and eps, the draws
per accepted example measured against the theory 1 / sum_v min(P(v), eps).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
sys.path.insert(0, os.path.dirname(__file__))

from _measure import Measure  # noqa: E402

import hf_synthsample  # noqa: E402
from hf_synthsample.builders.calculator import homogenized_config_name  # noqa: E402
from hf_synthsample.domains.calculator import SALIENT_VARIABLES  # noqa: E402


def generation(configs: list[str], n: int, num_procs: list[int]) -> None:
    print(f"## generation with salient-variable columns, {n:,} rows (cold cache, Arrow written)")
    print(f"{'config':28} {'num_proc':>8} {'seconds':>8} {'rows/s':>10} {'peak RSS MB':>12}")
    for config in configs:
        for num_proc in num_procs:
            with tempfile.TemporaryDirectory() as cache:
                builder = hf_synthsample.load_dataset_builder("calculator", config, num_examples=n, cache_dir=cache)
                with Measure() as m:
                    builder.download_and_prepare(num_proc=num_proc)
                rows = builder.as_dataset("train").num_rows
            print(f"{config:28} {num_proc:>8} {m.seconds:>8.2f} {rows / m.seconds:>10,.0f} {m.peak_rss_mb:>12,.0f}")


def homogenization(n: int, eps_values: list[float], distribution: str) -> None:
    print(f"\n## generator-side homogenization of {distribution}, {n:,} accepted rows")
    print(f"{'variable':18} {'eps':>6} {'draws/accepted':>15} {'theory':>8} {'KL before':>10} {'KL after':>9} {'reduction':>9}")
    for variable in SALIENT_VARIABLES:
        for eps in eps_values:
            with tempfile.TemporaryDirectory() as cache:
                ds = hf_synthsample.load_dataset(
                    "calculator", homogenized_config_name(distribution, variable), num_examples=n, eps=eps, cache_dir=cache
                )["train"]
                r = hf_synthsample.homogenization_report(ds)
            print(
                f"{variable:18} {eps:>6} {r.draws_per_accepted:>15.3f} {r.theoretical_draws_per_accepted:>8.3f} "
                f"{r.kl_before():>10.4f} {r.kl_after():>9.4f} {100 * r.kl_reduction():>8.1f}%"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-examples", type=int, default=1_000_000)
    parser.add_argument("--configs", nargs="+", default=["dcfg"])
    parser.add_argument("--num-proc", type=int, nargs="+", default=[2])
    parser.add_argument("--homogenize-examples", type=int, default=20_000)
    parser.add_argument("--eps", type=float, nargs="+", default=[0.005, 0.01, 0.05, 0.1])
    parser.add_argument("--homogenize-distribution", default="dcfg")
    parser.add_argument("--skip-homogenization", action="store_true")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, hf-synthsample {hf_synthsample.__version__}\n")
    generation(args.configs, args.num_examples, args.num_proc)
    if not args.skip_homogenization:
        homogenization(args.homogenize_examples, args.eps, args.homogenize_distribution)


if __name__ == "__main__":
    main()
