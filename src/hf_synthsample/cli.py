"""The ``hf-synthsample`` command line.

Subcommands:

* ``quickstart``: the main job on a built-in default: generate Calculator (DCFG), homogenize it on
  a salient variable, print the before/after histogram with the KL-to-uniform figures, and write
  a Hub-layout dataset folder.
* ``generate DOMAIN``: materialize a domain's configs as a Hub-layout folder (every config
  parameter is an option, e.g. ``--num-examples 100000 --eps 0.02``).
* ``configs [DOMAIN]``: list domains, configs and parameters.
* ``homogenize SOURCE``: pool-side homogenization of an existing dataset (a Hub-layout folder or
  Parquet/JSON/CSV files) on some of its columns, written as a Hub-layout folder.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from typing import Any, Sequence

__all__ = ["main"]


def _parse_value(text: str) -> Any:
    """``3`` -> 3, ``0.5`` -> 0.5, ``None`` -> None, anything else stays a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_config_options(parser: argparse.ArgumentParser, domain: str) -> None:
    from .builders import get_builder_class
    from .builders.base import config_parameters

    params = config_parameters(get_builder_class(domain).BUILDER_CONFIG_CLASS)
    group = parser.add_argument_group(f"{domain} config parameters (default: the config's own value)")
    for name, spec in params.items():
        kwargs: dict = {"dest": f"param_{name}", "default": argparse.SUPPRESS, "help": f"{spec['help']} [{spec['default']!r}]"}
        if isinstance(spec["default"], tuple):
            kwargs.update(nargs="*", type=_parse_value, metavar="VALUE")
        else:
            kwargs.update(type=_parse_value, metavar="VALUE")
        group.add_argument(_option(name), **kwargs)


def _collect_params(args: argparse.Namespace) -> dict:
    return {k[len("param_"):]: v for k, v in vars(args).items() if k.startswith("param_")}


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .builders import list_domains

    parser = argparse.ArgumentParser(prog="hf-synthsample", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"hf-synthsample {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    q = sub.add_parser("quickstart", help="generate Calculator (DCFG), homogenize it, report, write a folder")
    q.add_argument("--out", default="calculator-quickstart", help="output folder [calculator-quickstart]")
    q.add_argument("--variable", default="length", help="salient variable to homogenize [length]")
    q.add_argument("--num-examples", type=int, default=20_000, help="rows per config [20000]")
    q.add_argument("--eps", type=float, default=0.01, help="homogenization tolerance [0.01]")
    q.add_argument("--seed", type=int, default=0, help="random seed [0]")
    q.add_argument("--num-proc", type=int, default=None, help="generation processes [1]")
    q.add_argument("--overwrite", action="store_true", help="replace the output folder if it exists")

    g = sub.add_parser("generate", help="materialize a domain's configs as a Hub-layout dataset folder")
    gsub = g.add_subparsers(dest="domain", required=True)
    for domain in list_domains():
        d = gsub.add_parser(domain, help=f"{domain} configs")
        d.add_argument("--out", required=True, help="output folder")
        d.add_argument("--configs", nargs="+", default=None, help="config names (default: all)")
        d.add_argument("--num-proc", type=int, default=None, help="generation processes")
        d.add_argument("--cache-dir", default=None, help="datasets cache directory")
        d.add_argument("--no-plots", action="store_true", help="do not add homogenization plots to the folder")
        mode = d.add_mutually_exclusive_group()
        mode.add_argument("--overwrite", action="store_true", help="replace the output folder")
        mode.add_argument("--add", action="store_true", help="add/replace these configs in an existing folder")
        _add_config_options(d, domain)

    c = sub.add_parser("configs", help="list domains, configs and parameters")
    c.add_argument("domain", nargs="?", default=None)

    h = sub.add_parser("homogenize", help="pool-side homogenization of an existing dataset")
    h.add_argument("source", help="a Hub-layout folder, or Parquet/JSON/CSV file(s)")
    h.add_argument("--columns", nargs="+", required=True, help="salient column(s)")
    h.add_argument("--out", required=True, help="output folder (Hub layout)")
    h.add_argument("--config", default=None, help="config of a Hub-layout source")
    h.add_argument("--split", default="train", help="split to homogenize [train]")
    h.add_argument("--size", type=int, default=None, help="subset size (default: largest uniform subset)")
    h.add_argument("--mode", default="joint", choices=["joint", "sequential"])
    h.add_argument("--bins", type=int, default=None, help="equal-width bins for numeric columns")
    h.add_argument("--seed", type=int, default=0)
    h.add_argument("--name", default="homogenized", help="config name in the output folder [homogenized]")
    h.add_argument("--overwrite", action="store_true")
    return parser


def _quickstart(args: argparse.Namespace) -> int:
    from .builders.base import homogenization_report
    from .builders.calculator import homogenized_config_name
    from .domains.calculator import SALIENT_VARIABLES
    from .load import load_dataset
    from .materialization import materialize
    from .validation import check_choice

    check_choice("--variable", args.variable, list(SALIENT_VARIABLES))
    if os.path.exists(args.out) and not args.overwrite:
        raise FileExistsError(f"{args.out} exists; pass --overwrite to replace it")
    config = homogenized_config_name("dcfg", args.variable)
    params = {"num_examples": args.num_examples, "seed": args.seed, "eps": args.eps}
    print(f"Calculator quickstart: DCFG, {args.num_examples:,} rows, homogenized on {args.variable} (eps={args.eps})\n")
    ds = load_dataset("calculator", config, num_proc=args.num_proc, **params)
    report = homogenization_report(ds["train"])
    print(report)
    out = materialize(
        "calculator", args.out, ["dcfg", config], num_proc=args.num_proc,
        if_exists="overwrite" if args.overwrite else "error", **params
    )
    plot = report.plot(os.path.join(out, "quickstart-histogram.png"))
    print(f"\nWrote a Hub-layout dataset folder: {out}/ (configs: dcfg, {config}; card: {out}/README.md)")
    print(f"Histogram plot: {plot}")
    print(f'Load it with: datasets.load_dataset("{out}", "{config}")')
    return 0


def _generate(args: argparse.Namespace) -> int:
    from .materialization import materialize

    if_exists = "overwrite" if args.overwrite else "add" if args.add else "error"
    out = materialize(
        args.domain, args.out, args.configs, num_proc=args.num_proc, cache_dir=args.cache_dir,
        if_exists=if_exists, plots=not args.no_plots, **_collect_params(args),
    )
    print(f"Wrote {out}/ (load with datasets.load_dataset({str(out)!r}, CONFIG))")
    return 0


def _configs(args: argparse.Namespace) -> int:
    from .builders import get_builder_class, list_domains
    from .builders.base import config_parameters

    names = [args.domain] if args.domain else list_domains()
    for domain in names:
        cls = get_builder_class(domain)
        print(f"{domain}: {cls.DESCRIPTION}\n")
        print("  configs:")
        for name, cfg in cls.builder_configs.items():
            print(f"    {name:34} {cfg.description or ''}")
        print("\n  parameters (load_dataset keyword / generate option):")
        for name, spec in config_parameters(cls.BUILDER_CONFIG_CLASS).items():
            print(f"    {name:20} {spec['default']!r:12} {spec['help']}")
        print("\n  salient variables:")
        for name, text in cls.SALIENT_VARIABLES.items():
            print(f"    {name:20} {text}")
        print()
    return 0


def _load_source(source: str, config: str | None, split: str):
    import datasets

    if os.path.isdir(source):
        return datasets.load_dataset(source, config, split=split)
    if not os.path.exists(source):
        raise ValueError(f"source: {source!r} is neither a folder nor a file")
    ext = source.rsplit(".", 1)[-1].lower()
    builder = {"parquet": "parquet", "json": "json", "jsonl": "json", "csv": "csv"}.get(ext)
    if builder is None:
        raise ValueError(f"source: unsupported file type {ext!r}; accepted: parquet, json, jsonl, csv")
    return datasets.load_dataset(builder, data_files={split: source}, split=split)


def _homogenize(args: argparse.Namespace) -> int:
    from datasets import DatasetDict

    from .hub import write_hub_folder
    from .sampling.homogenize import HomogenizeSampler

    sampler = HomogenizeSampler(args.columns, mode=args.mode, bins=args.bins, seed=args.seed)
    ds = _load_source(args.source, args.config, args.split)
    subset = sampler.sample(ds, args.size)
    report = sampler.report_
    print(report)
    body = "\n".join(
        [
            f"# Homogenized subset of `{args.source}`",
            "",
            f"Pool-side homogenization with hf-synthsample: `{sampler!r}`, {len(subset):,} of {len(ds):,} rows "
            f"of split `{args.split}`.",
            "",
            report.to_markdown(),
        ]
    )
    out = write_hub_folder(
        args.out,
        {args.name: DatasetDict({args.split: subset})},
        body=body,
        metadata={"hf_synthsample": {"sampler": repr(sampler), "source": args.source, "split": args.split}},
        if_exists="overwrite" if args.overwrite else "error",
    )
    print(f"\nWrote {out}/")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hf-synthsample`` console script."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    handlers = {"quickstart": _quickstart, "generate": _generate, "configs": _configs, "homogenize": _homogenize}
    try:
        return handlers[args.command](args)
    except (ValueError, TypeError, FileExistsError) as err:
        print(f"hf-synthsample {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
