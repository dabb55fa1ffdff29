"""``hf-synthsample quickstart``: the main job on a built-in default: generate Calculator (DCFG),
homogenize it on a salient variable, print the before/after histogram with the KL-to-uniform
figures, and write a Hub-layout dataset folder."""

from __future__ import annotations

import argparse
import os

from ._common import add_shared, check_output_folder

HELP = "generate Calculator (DCFG), homogenize it, report, write a folder"
PARAMETERS = {"folder": "--out", "variable": "--variable"}


def add_arguments(q: argparse.ArgumentParser) -> None:
    q.add_argument("--out", default="calculator-quickstart", help="output folder [calculator-quickstart]")
    q.add_argument("--variable", default="length", help="salient variable to homogenize [length]")
    q.add_argument("--num-examples", type=int, default=20_000, help="rows per config [20000]")
    q.add_argument("--eps", type=float, default=0.01, help="homogenization tolerance [0.01]")
    q.add_argument("--num-proc", type=int, default=None, help="generation processes [1]")
    add_shared(q, "seed", "overwrite")


def run(args: argparse.Namespace) -> int:
    from ..builders.base import homogenization_report
    from ..builders.calculator import homogenized_config_name
    from ..domains.calculator import SALIENT_VARIABLES
    from ..hub import materialize
    from ..load import load_dataset
    from ..validation import check_choice, check_float, check_int

    check_choice("--variable", args.variable, list(SALIENT_VARIABLES))
    check_int("--num-examples", args.num_examples, min=1)
    check_float("--eps", args.eps, min=0.0, min_inclusive=False)
    if args.num_proc is not None:
        check_int("--num-proc", args.num_proc, min=1)
    check_output_folder("--out", args.out, overwrite=args.overwrite)
    config = homogenized_config_name("dcfg", args.variable)
    params = {"num_examples": args.num_examples, "seed": args.seed, "eps": args.eps}
    print(f"Calculator quickstart: DCFG, {args.num_examples:,} rows, homogenized on {args.variable} (eps={args.eps})\n")
    ds = load_dataset("calculator", config, num_proc=args.num_proc, **params)
    report = homogenization_report(ds["train"])
    print(report)
    out = materialize(
        "calculator", args.out, ["dcfg", config], num_proc=args.num_proc,
        if_exists="overwrite" if args.overwrite else "error",
        extra_files={"quickstart-histogram.png": report.plot}, **params  # drawn in the folder's temp copy
    )
    plot = os.path.join(out, "quickstart-histogram.png")
    print(f"\nWrote a Hub-layout dataset folder: {out}/ (configs: dcfg, {config}; card: {out}/README.md)")
    print(f"Histogram plot: {plot}")
    print(f'Load it with: datasets.load_dataset("{out}", "{config}")')
    return 0
