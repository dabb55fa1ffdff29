"""``hf-synthsample homogenize SOURCE``: pool-side homogenization of an existing dataset (a
Hub-layout folder or Parquet/JSON/CSV files) on some of its columns, written as a Hub-layout folder."""

from __future__ import annotations

import argparse

from ..sampling.settings import HomogenizeSettings
from ..settings import add_arguments as add_settings
from ._common import add_shared, check_license, check_output_folder, require

HELP = "pool-side homogenization of an existing dataset"
PARAMETERS = {"folder": "--out", "config_name": "--name", "column": "--columns", "dataset": "source", "k": "--size"}
#: the settings class the options are made from, and the options that are not its fields
SETTINGS = (HomogenizeSettings,)
OWN_OPTIONS = {"out": "the output folder", "size": "rows to select (an argument of sample(), not a setting)",
               "bins": "HomogenizeSettings.bins as a count (edges and mappings are set from Python)"}


def add_arguments(h: argparse.ArgumentParser) -> None:
    h.add_argument("source", help="a Hub-layout folder, or Parquet/JSON/CSV file(s)")
    h.add_argument("--out", required=True, help="output folder (Hub layout)")
    h.add_argument("--size", type=int, default=None, help="subset size (default: largest uniform subset)")
    h.add_argument("--bins", type=int, default=None, help="equal-width bins for numeric columns")
    add_settings(h, HomogenizeSettings)
    require(h, "columns")
    add_shared(h, "config", "split", "name", "overwrite", "license", defaults={"name": "homogenized"},
               split="split to homogenize", name="homogenized")


def run(args: argparse.Namespace) -> int:
    from datasets import DatasetDict

    from ..hub import write_hub_folder
    from ..hub.card import portable_path
    from ..hub.folder import check_config_name
    from ..sampling.homogenize import HomogenizeSampler
    from ..settings import settings_from_args
    from ..split_spec import source_split
    from ..validation import check_int
    from ._source import load_source

    check_config_name(args.name, "--name")
    out_split = source_split(args.split, "--split")
    check_license(args)
    if args.size is not None:
        check_int("--size", args.size, min=1)
    sampler = HomogenizeSampler(settings_from_args(HomogenizeSettings, args, bins=args.bins))
    check_output_folder("--out", args.out, overwrite=args.overwrite)
    ds = load_source(args.source, args.config, args.split)
    subset = sampler.sample(ds, args.size)
    report = sampler.report_
    print(report)
    body = "\n".join([
        f"# Homogenized subset of `{portable_path(args.source)}`",  # no local folders in a card
        "",
        f"Pool-side homogenization with hf-synthsample: `{sampler!r}`, {len(subset):,} of {len(ds):,} rows "
        f"of split `{args.split}`.",
        "",
        report.to_markdown(),
    ])
    out = write_hub_folder(
        args.out, {args.name: DatasetDict({out_split: subset})}, body=body,
        metadata={"hf_synthsample": {"sampler": repr(sampler), "source": args.source, "split": args.split}},
        if_exists="overwrite" if args.overwrite else "error", license=args.license,
    )
    print(f"\nWrote {out}/")
    return 0
