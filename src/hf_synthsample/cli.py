"""The ``hf-synthsample`` command line.

Subcommands:

* ``quickstart``: the main job on a built-in default: generate Calculator (DCFG), homogenize it on
  a salient variable, print the before/after histogram with the KL-to-uniform figures, and write
  a Hub-layout dataset folder.
* ``generate DOMAIN``: materialize a domain's configs as a Hub-layout folder (every config
  parameter is an option, e.g. ``--num-examples 100000 --eps 0.02``); ``--engine ray`` generates
  on Ray Data (a local runtime, or a cluster: ``--ray-address auto``).
* ``configs [DOMAIN]``: list domains, configs and parameters.
* ``homogenize SOURCE``: pool-side homogenization of an existing dataset (a Hub-layout folder or
  Parquet/JSON/CSV files) on some of its columns, written as a Hub-layout folder.
* ``sample SOURCE``: a structurally diverse subset (uniform, UAT, CMaxEnt, hybrid; Oren et al.
  2021) of a dataset (Hub-layout folder or Parquet/JSON/CSV file) or of a generated config
  (``DOMAIN/CONFIG`` with ``--builder-param``), written as a curated Hub-layout folder with its
  provenance, diversity report and template plot.
* ``split SOURCE``: a train/test split for compositional generalization (MCD, TMCD, template,
  length or random) of a dataset or generated config, written as a Hub-layout folder whose card
  carries the split report (divergences, unseen atoms, leakage, lengths) and the provenance.
* ``datamap DYNAMICS_DIR``: the data map of training dynamics recorded by ``CartographyCallback``:
  a text summary, a PNG plot (``--plot``) and a region subset (``--select``, ``--fraction``,
  ``--out``) of the training dataset (``--dataset``, rows matched by its ``example_id`` column, or
  by row number with ``--assume-id-order``) or, without one, of the example ids. Options are
  checked before the dynamics are read.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
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


def _as_cli_options(message: str, params: dict) -> str:
    """Library messages name Python parameters (``num_examples``, ``distribution='t2t'``); on the
    command line the user typed options, so name those (``--num-examples``)."""
    for name in sorted(params, key=len, reverse=True):
        message = re.sub(rf"(?<![\w.-]){re.escape(name)}\b(=?)",
                         lambda m, n=name: "--" + n.replace("_", "-") + (" " if m.group(1) else ""), message)
    return message


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
        d.add_argument("--engine", default="datasets", choices=["datasets", "ray"],
                       help="datasets builders on this machine, or Ray Data (a local runtime or the cluster of "
                            "--ray-address / RAY_ADDRESS; pip install 'hf-synthsample[ray]') [datasets]")
        d.add_argument("--ray-address", default=None, help="--engine ray: the cluster to join, e.g. auto [RAY_ADDRESS "
                                                           "or a local runtime]")
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
    h.add_argument("--missing", default="raise", choices=["raise", "drop"],
                   help="rows with a missing value (null/NaN) in a column: an error, or left out [raise]")
    h.add_argument("--name", default="homogenized", help="config name in the output folder [homogenized]")
    h.add_argument("--overwrite", action="store_true", help="replace the output folder if it exists")

    sm = sub.add_parser("sample", help="structurally diverse subset (uniform, UAT, CMaxEnt, hybrid) as a curated folder")
    sm.add_argument("source", help="a Hub-layout folder, Parquet/JSON/CSV file(s), or DOMAIN/CONFIG of a generator "
                                   "(e.g. schema2qa/all)")
    sm.add_argument("--sampler", required=True, choices=sorted(_SAMPLERS), help="sampling method")
    sm.add_argument("-k", "--k", type=int, required=True, help="rows to select")
    sm.add_argument("--out", required=True, help="output folder (Hub layout; other configs in it are kept)")
    sm.add_argument("--param", nargs="+", default=[], metavar="NAME=VALUE",
                    help="sampler parameters, e.g. alpha=-0.5 w_atoms=0 device=cuda language=sexpr")
    sm.add_argument("--builder-param", nargs="+", default=[], metavar="NAME=VALUE",
                    help="generator parameters of a DOMAIN/CONFIG source, e.g. num_examples=20000")
    sm.add_argument("--config", default=None, help="config of a Hub-layout source")
    sm.add_argument("--split", default="train", help="split to sample [train]")
    sm.add_argument("--seed", type=int, default=0, help="sampler seed [0]")
    sm.add_argument("--name", default=None, help="config name in the output folder [the sampler name]")
    sm.add_argument("--overwrite", action="store_true", help="replace config --name if the output folder has it")

    _add_split_parser(sub)

    m = sub.add_parser("datamap", help="data map, plot and region subsets from recorded training dynamics")
    m.add_argument("dynamics", help="a dynamics folder written by CartographyCallback")
    m.add_argument("--measure", default="inv_ppl", choices=["inv_ppl", "chia", "bleu"], help="the measure [inv_ppl]")
    m.add_argument("--source", default="train", choices=["train", "eval"], help="training or dropout-free pass [train]")
    m.add_argument("--min-epoch", type=int, default=None, help="first epoch of the window (0-based) [first recorded]")
    m.add_argument("--max-epoch", type=int, default=None, help="convergence epoch, inclusive [last recorded]")
    m.add_argument("--plot", default=None, help="write the data map as this PNG")
    m.add_argument("--plot-fraction", type=float, default=None, help="plot a seeded sample of this fraction, in (0, 1]")
    m.add_argument("--nan-policy", default="raise", choices=["raise", "omit", "drop"],
                   help="NaN values of the measure: raise, omit those epochs, or drop those examples [raise]")
    m.add_argument("--select", default=None,
                   help="region(s): hard-to-learn, easy-to-learn, ambiguous, random, or a combination a+b")
    m.add_argument("--fraction", type=float, default=0.33, help="subset size as a fraction of the examples [0.33]")
    m.add_argument("--proportions", type=float, nargs="+", default=None, help="shares of combined regions [2/3 1/3]")
    m.add_argument("--out", default=None, help="output folder (Hub layout) for the subset")
    m.add_argument("--dataset", default=None, help="the training dataset (Hub-layout folder or Parquet/JSON/CSV) to cut")
    m.add_argument("--config", default=None, help="config of a Hub-layout --dataset")
    m.add_argument("--split", default="train", help="split of --dataset [train]")
    m.add_argument("--id-column", default="example_id",
                   help="column of --dataset holding the example ids rows are matched by [example_id]")
    m.add_argument("--assume-id-order", action="store_true",
                   help="--dataset has no id column and row i is example id i (its row count must match the dynamics)")
    m.add_argument("--oov-columns", nargs="+", default=None, help="columns whose tokens the subset must all cover")
    m.add_argument("--seed", type=int, default=0, help="seed of the random region and plot sample [0]")
    m.add_argument("--overwrite", action="store_true")
    return parser


def _quickstart(args: argparse.Namespace) -> int:
    from .builders.base import homogenization_report
    from .builders.calculator import homogenized_config_name
    from .domains.calculator import SALIENT_VARIABLES
    from .load import load_dataset
    from .hub import materialize
    from .validation import check_choice

    check_choice("--variable", args.variable, list(SALIENT_VARIABLES))
    if not args.overwrite:
        _refuse_existing(args.out, "--overwrite to replace it")
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


def _refuse_existing(out: str, how: str) -> None:
    """The CLI's own message for an existing output folder: it names the options, not ``if_exists``."""
    from .atomic import recover_folder

    recover_folder(out)  # a run killed mid-write may have left the old folder aside
    if os.path.exists(out):
        raise FileExistsError(f"{out} exists; pass {how}")


def _generate(args: argparse.Namespace) -> int:
    from .hub import materialize

    if not (args.overwrite or args.add):
        _refuse_existing(args.out, "--overwrite to replace it, or --add to add (or replace) these configs in it")
    if_exists = "overwrite" if args.overwrite else "add" if args.add else "error"
    if args.ray_address is not None and args.engine != "ray":
        raise ValueError("--ray-address: only used with --engine ray")
    params = _collect_params(args)
    try:
        if args.engine == "ray":
            return _generate_ray(args, if_exists)
        out = materialize(
            args.domain, args.out, args.configs, num_proc=args.num_proc, cache_dir=args.cache_dir,
            if_exists=if_exists, plots=not args.no_plots, **params,
        )
    except (ValueError, TypeError) as err:
        raise type(err)(_as_cli_options(str(err), params)) from err
    print(f"Wrote {out}/ (load with datasets.load_dataset({str(out)!r}, CONFIG))")
    return 0


def _generate_ray(args: argparse.Namespace, if_exists: str) -> int:
    from .engines import ray as hf_ray

    try:
        ray = hf_ray.require_ray()
    except ImportError as err:
        raise ValueError(f"--engine ray: {err}") from err
    for flag, value in (("--add", args.add), ("--num-proc", args.num_proc), ("--cache-dir", args.cache_dir)):
        if value:
            raise ValueError(f"{flag}: not used with --engine ray (Ray's workers replace --num-proc; no cache; "
                             "write a new folder or --overwrite)")
    if args.ray_address and not ray.is_initialized():  # else Ray Data starts a local runtime (or joins RAY_ADDRESS)
        ray.init(address=args.ray_address)
    out = hf_ray.to_hub_folder(args.domain, args.out, args.configs, if_exists=if_exists, **_collect_params(args))
    print(f"Wrote {out}/ on Ray (load with datasets.load_dataset({str(out)!r}, CONFIG))")
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



def _resolve_source(args: argparse.Namespace):
    """The data of ``SOURCE`` for ``sample`` and ``split``: a generator's ``DOMAIN/CONFIG`` (with
    ``--builder-param``), else a folder or file. Returns the dataset, its provenance source and
    the builder parameters."""
    from .builders import list_domains

    builder_params = _key_values("--builder-param", args.builder_param)
    domain, _, config = args.source.partition("/")
    if not os.path.exists(args.source) and domain in list_domains():
        from .load import load_dataset

        ds = load_dataset(domain, config or None, split=args.split, **builder_params)
        return ds, f"hf_synthsample:{domain}/{config or 'default'}", builder_params
    if builder_params:
        raise ValueError(f"--builder-param: only for a DOMAIN/CONFIG source ({list_domains()}), not {args.source!r}")
    return _load_source(args.source, args.config, args.split), os.path.abspath(args.source), builder_params

def _load_source(source: str, config: str | None, split: str, option: str = "source"):
    """The ``split`` of a Hub-layout folder or of one Parquet / JSON / CSV file, for every command
    that reads user data. A file that is empty, not in the format its name says, or damaged is a
    ``ValueError`` naming ``option``, the file and what is wrong (never only Arrow's message)."""
    import datasets

    if os.path.isdir(source):
        try:
            return datasets.load_dataset(source, config, split=split)
        except (ValueError, FileNotFoundError, datasets.exceptions.DatasetGenerationError) as err:
            raise ValueError(f"{option}: cannot read the folder {source!r} (config {config!r}, split {split!r}): "
                             f"{_reason(err)}") from err
    if not os.path.exists(source):
        raise ValueError(f"{option}: {source!r} is neither a folder nor a file")
    ext = source.rsplit(".", 1)[-1].lower()
    builder = {"parquet": "parquet", "json": "json", "jsonl": "json", "csv": "csv"}.get(ext)
    if builder is None:
        raise ValueError(f"{option}: unsupported file type {ext!r} of {source!r}; accepted: parquet, json, jsonl, csv")
    if os.path.getsize(source) == 0:
        raise ValueError(f"{option}: the file {source!r} is empty (0 bytes): no rows to read")
    if builder == "parquet":
        with open(source, "rb") as f:
            head = f.read(4)
            f.seek(max(0, os.path.getsize(source) - 4))
            tail = f.read(4)
        if head != b"PAR1" or tail != b"PAR1":
            raise ValueError(f"{option}: the file {source!r} is not a Parquet file, or a damaged one (a Parquet file "
                             "starts and ends with 'PAR1'); check the file, or give it the extension of its format")
    try:
        ds = datasets.load_dataset(builder, data_files={split: source}, split=split)
    except Exception as err:  # Arrow / JSON / CSV parser errors come in many types; name the file
        if "corresponds to no data" in str(err):  # datasets' words for a split without rows
            raise ValueError(f"{option}: the file {source!r} holds no rows (a header only?)") from err
        raise ValueError(f"{option}: cannot read {source!r} as {ext.upper()}: {_reason(err)}") from err
    if len(ds) == 0:
        raise ValueError(f"{option}: the file {source!r} holds no rows")
    return ds


def _reason(err: BaseException) -> str:
    """The innermost message of a (chained) error: datasets wraps the parser's own error."""
    while err.__cause__ is not None or (err.__context__ is not None and not str(err).strip()):
        err = err.__cause__ or err.__context__
    text = str(err).strip() or type(err).__name__
    return f"{type(err).__name__}: {text}"[:500]


def _homogenize(args: argparse.Namespace) -> int:
    from datasets import DatasetDict

    from .hub import write_hub_folder
    from .hub.card import portable_path
    from .hub.folder import check_config_name
    from .sampling.homogenize import HomogenizeSampler

    check_config_name(args.name, "--name")
    if not args.overwrite:
        _refuse_existing(args.out, "--overwrite to replace it")
    sampler = HomogenizeSampler(args.columns, mode=args.mode, bins=args.bins, missing=args.missing, seed=args.seed)
    ds = _load_source(args.source, args.config, args.split)
    subset = sampler.sample(ds, args.size)
    report = sampler.report_
    print(report)
    body = "\n".join(
        [
            f"# Homogenized subset of `{portable_path(args.source)}`",  # no local folders in a card
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


def _folder_configs(out: str) -> set[str]:
    """Config names of the Hub-layout folder ``out`` (its card's ``configs:``, and top-level folders)."""
    from .atomic import recover_folder
    from .hub import read_card_metadata

    recover_folder(out)
    if not os.path.isdir(out):
        return set()
    listed = {c.get("config_name") for c in read_card_metadata(out).get("configs") or []}
    return listed | {e.name for e in os.scandir(out) if e.is_dir()} - {"plots"}


#: ``--sampler`` name -> class name in :mod:`hf_synthsample.sampling`
_SAMPLERS = {"uniform": "UniformSampler", "uat": "UATSampler", "cmaxent": "CMaxEntSampler", "hybrid": "HybridSampler"}


def _key_values(option: str, items: Sequence[str]) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"{option}: expected NAME=VALUE, got {item!r}")
        out[name.replace("-", "_")] = _parse_value(value)
    return out


def _sample(args: argparse.Namespace) -> int:
    import inspect
    import tempfile

    from . import sampling
    from .hub import Provenance, save_curated
    from .hub.folder import check_config_name
    from .sampling import diversity_report

    cls = getattr(sampling, _SAMPLERS[args.sampler])
    params = _key_values("--param", args.param)
    accepted = sorted(p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "seed"))
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"--param: {args.sampler} has no parameter {', '.join(unknown)}; accepted: {accepted}")
    sampler = cls(**params, seed=args.seed)  # validates the values before any loading
    name = check_config_name(args.name or args.sampler, "--name")
    if not args.overwrite and name in _folder_configs(args.out):
        raise FileExistsError(f"{args.out} already has config {name!r}; pass --overwrite to replace it, "
                              "or choose another --name")
    ds, source, builder_params = _resolve_source(args)
    source_config = builder_params if source.startswith("hf_synthsample:") else {"config": args.config,
                                                                                  "split": args.split}
    subset = sampler.sample(ds, args.k)
    report = diversity_report(subset, name=name, **{p: getattr(sampler, p) for p in ("program_column", "language")
                                                     if hasattr(sampler, p)})
    print(report.to_markdown())
    provenance = Provenance.from_sampler(ds, sampler, source=source, source_config=source_config,
                                         description=f"{args.sampler} sample of {args.k:,} rows of split {args.split}")
    with tempfile.TemporaryDirectory() as tmp:
        plot = report.plot(os.path.join(tmp, "templates.png"))
        out = save_curated(subset, args.out, provenance, config_name=name, statistics=report.to_markdown(),
                           plots={"templates": plot})
    print(f"\nWrote {len(subset):,} rows to {out}/ (config {name!r})")
    return 0


# the datamap command's options, for messages of the library's checks that name parameters
_DATAMAP_OPTIONS = {"min_epoch": "--min-epoch", "max_epoch": "--max-epoch", "nan_policy": "--nan-policy",
                    "source": "--source", "measure": "--measure", "proportions": "--proportions",
                    "fraction": "--fraction", "region": "--select"}


def _cli_message(err: Exception, options: dict[str, str]) -> Exception:
    """``err`` with the Python parameters it names (``min_epoch=3``, ``min_epoch``) as CLI options."""
    import re

    msg = str(err)
    for name, opt in options.items():
        msg = re.sub(rf"(?<![\w-]){name}='([^']*)'", rf"{opt} \1", msg)
        msg = re.sub(rf"(?<![\w-]){name}=(\w+)", rf"{opt} \1", msg)
        msg = re.sub(rf"(?<![\w'-]){name}\b(?!['=])", opt, msg)
    return type(err)(msg)


def _datamap(args: argparse.Namespace) -> int:
    import math

    import numpy as np
    from datasets import Dataset, DatasetDict

    from .cartography import DataMap, parse_regions
    from .cartography.datamap import _dataset_rows, _subset
    from .hub import write_hub_folder
    from .validation import check_columns, check_float, check_int

    # every option is checked before the dynamics are read
    try:
        regions = parse_regions(args.select) if args.select else None
    except ValueError as err:
        raise _cli_message(err, _DATAMAP_OPTIONS) from None
    check_float("--fraction", args.fraction, min=0.0, max=1.0, min_inclusive=False)
    if args.plot_fraction is not None:
        check_float("--plot-fraction", args.plot_fraction, min=0.0, max=1.0, min_inclusive=False)
        if not args.plot:
            raise ValueError("--plot-fraction needs --plot (the PNG the sample is drawn into)")
    for opt, value in (("--min-epoch", args.min_epoch), ("--max-epoch", args.max_epoch)):
        if value is not None:
            check_int(opt, value, min=0)
    if args.min_epoch is not None and args.max_epoch is not None and args.min_epoch > args.max_epoch:
        raise ValueError(f"--min-epoch ({args.min_epoch}) must be <= --max-epoch ({args.max_epoch})")
    if args.proportions is not None:
        if not regions:
            raise ValueError("--proportions needs --select (the regions the shares are of)")
        for p in args.proportions:
            check_float("--proportions", p, min=0.0, max=1.0)
        if len(args.proportions) != len(regions) or not math.isclose(sum(args.proportions), 1.0, abs_tol=1e-9):
            raise ValueError(f"--proportions must give one share per region of --select ({len(regions)}) summing "
                             f"to 1, got {args.proportions}")
    if regions and not args.out:
        raise ValueError("--select needs --out (the folder the subset is written to)")
    if args.out and not regions:
        raise ValueError("--out needs --select (the region(s) to write)")
    for opt, needs_dataset in (("--oov-columns", args.oov_columns), ("--assume-id-order", args.assume_id_order),
                               ("--config", args.config)):
        if needs_dataset and not args.dataset:
            raise ValueError(f"{opt} needs --dataset (the training dataset to cut)")
    if args.dataset and not regions:
        raise ValueError("--dataset needs --select (the region(s) to cut from it)")
    if args.dataset and not os.path.exists(args.dataset):
        raise ValueError(f"--dataset: {args.dataset!r} is neither a folder nor a file")
    if args.out and os.path.exists(args.out) and not args.overwrite:
        raise FileExistsError(f"{args.out} exists; pass --overwrite to replace it")
    options = dict(_DATAMAP_OPTIONS)
    names = {"dataset": "--dataset", "id_column": "--id-column", "assume_id_order": "--assume-id-order"}
    try:
        dm = DataMap.from_dynamics(args.dynamics, args.measure, min_epoch=args.min_epoch, max_epoch=args.max_epoch,
                                   source=args.source, nan_policy=args.nan_policy)
    except (ValueError, TypeError) as err:
        raise _cli_message(err, options) from None
    ds = None
    if args.dataset:  # rows matched by example id before anything is written
        ds = _load_source(args.dataset, args.config, args.split, option="--dataset")
        if args.oov_columns:
            check_columns(ds, args.oov_columns, name="--oov-columns")
        _dataset_rows(dm, ds, None, id_column=args.id_column, assume_id_order=args.assume_id_order, names=names)
    print(dm.summary(args.fraction))
    if args.plot:
        print(f"\nPlot: {dm.plot(args.plot, sample_fraction=args.plot_fraction, seed=args.seed)}")
    if not regions:
        return 0
    name = "_".join(regions).replace("-", "_")
    kwargs = {"proportions": args.proportions, "seed": args.seed}
    if ds is not None:
        subset = _subset(dm, ds, regions, args.fraction, oov_columns=args.oov_columns, id_column=args.id_column,
                         assume_id_order=args.assume_id_order, names=names, **kwargs)
    else:
        ids = dm.select(regions, args.fraction, **kwargs)
        pos = np.searchsorted(dm.example_ids, ids)
        subset = Dataset.from_dict({"example_id": ids, "confidence": dm.confidence[pos],
                                    "variability": dm.variability[pos], "correctness": dm.correctness[pos]})
    body = "\n".join([
        f"# Data-map subset: {'+'.join(regions)}, {args.fraction:.0%}",
        "",
        f"{len(subset):,} of {len(dm):,} examples selected by hf-synthsample dataset cartography "
        f"(measure {dm.measure}, {dm.source} pass, epochs {dm.epochs[0]}..{dm.epochs[-1]}"
        f"{', OOV-repaired on ' + ', '.join(args.oov_columns) if args.oov_columns else ''}).",
        "",
        "```",
        dm.summary(args.fraction),
        "```",
    ])
    meta = {"hf_synthsample": {"datamap": {"dynamics": os.path.abspath(args.dynamics), "measure": dm.measure,
                                           "source": dm.source, "epochs": list(dm.epochs), "regions": list(regions),
                                           "fraction": args.fraction, "oov_columns": args.oov_columns,
                                           "seed": args.seed}}}
    out = write_hub_folder(args.out, {name: DatasetDict({args.split: subset})},
                           body=body, metadata=meta, if_exists="overwrite" if args.overwrite else "error")
    print(f"\nWrote {len(subset):,} rows to {out}/")
    return 0



# ---------------------------------------------------------------------- split (issue 13)

_SPLIT_METHODS = ("mcd", "tmcd", "template", "length", "random")


def _add_split_parser(sub) -> None:
    sp = sub.add_parser("split", help="compositional train/test split (MCD, TMCD, template, length, random) as a Hub folder")
    sp.add_argument("source", help="a Hub-layout folder, Parquet/JSON/CSV file(s), or DOMAIN/CONFIG of a generator "
                                   "(e.g. scan/simple)")
    sp.add_argument("--method", required=True, choices=_SPLIT_METHODS, help="split method")
    sp.add_argument("--test-size", type=float, default=0.25, help="share of rows in test [0.25]")
    sp.add_argument("--train-size", type=float, default=None,
                    help="MCD/TMCD: share of rows in train; below 1 - test size the other rows are left out, as in "
                         "Keysers et al.'s MCD splits [all rows not in test]")
    sp.add_argument("--out", required=True, help="output folder (Hub layout)")
    sp.add_argument("--column", default="program", help="program column [program]")
    sp.add_argument("--language", default=None, help="structure language of --column (thingtalk, scan, cogs, ...)")
    sp.add_argument("--atoms-column", default=None, help="list-of-atoms column instead of parsing --column")
    sp.add_argument("--compounds-column", default=None, help="list-of-compounds column instead of parsing --column")
    sp.add_argument("--template-column", default=None, help="template column (template method and report)")
    sp.add_argument("--text-column", default=None, help="text checked for leakage and measured in words [--column]")
    sp.add_argument("--length-column", default=None, help="numeric length column (length method; default: words of --column)")
    sp.add_argument("--max-atom-divergence", type=float, default=0.02, help="MCD/TMCD atom divergence bound [0.02]")
    sp.add_argument("--no-compound-weights", action="store_true", help="MCD: unweighted compounds (Keysers weights by default)")
    sp.add_argument("--target-divergence", type=float, default=None,
                    help="MCD/TMCD: a split at this compound divergence (from either side; within --divergence-tolerance)")
    sp.add_argument("--sweep", default=None, metavar="D_C,D_C,...",
                    help="MCD: one split per compound divergence (ascending, in [0, 1], e.g. 0,0.1,0.2), written as one "
                         "folder with a config per target (dc_0.10, ...); the structure is read once")
    sp.add_argument("--divergence-tolerance", type=float, default=0.01,
                    help="MCD/TMCD: how far from --target-divergence / each --sweep target a split may be [0.01]")
    sp.add_argument("--time-limit", type=float, default=None, help="MCD/TMCD: stop after this many seconds")
    sp.add_argument("--max-steps", type=int, default=None, help="MCD/TMCD: stop after this many swap steps")
    sp.add_argument("--restarts", type=int, default=None,
                    help="MCD/TMCD: search again from this many further random starts while time remains "
                         "[0; with --sweep 2, used only by a search that stalls short of its target]")
    sp.add_argument("--builder-param", nargs="+", default=[], metavar="NAME=VALUE",
                    help="generator parameters of a DOMAIN/CONFIG source, e.g. num_examples=20000")
    sp.add_argument("--config", default=None, help="config of a Hub-layout source")
    sp.add_argument("--split", default="train", help="split of the source to split [train]")
    sp.add_argument("--seed", type=int, default=0, help="random seed [0]")
    sp.add_argument("--name", default=None, help="config name in the output folder [the method]")
    sp.add_argument("--overwrite", action="store_true", help="replace the output folder if it exists")


def _split(args: argparse.Namespace) -> int:
    from .splits import save_split, split_report
    from .validation import check_float, check_int

    check_float("--test-size", args.test_size, min=0.0, max=1.0, min_inclusive=False, max_inclusive=False)
    check_float("--max-atom-divergence", args.max_atom_divergence, min=0.0, max=1.0)
    if args.train_size is not None:
        if args.method not in ("mcd", "tmcd"):
            raise ValueError(f"--train-size: only the mcd and tmcd methods leave rows out; the {args.method} method "
                             "splits all rows (drop --train-size)")
        check_float("--train-size", args.train_size, min=0.0, max=1.0 - args.test_size, min_inclusive=False)
    if args.restarts is not None:
        check_int("--restarts", args.restarts, min=0)
    check_float("--divergence-tolerance", args.divergence_tolerance, min=0.0, max=1.0)
    sweep_targets = _sweep_targets(args) if args.sweep is not None else None
    structural = args.language is not None or (args.atoms_column and args.compounds_column)
    if args.method in ("mcd", "tmcd") and not structural:
        raise ValueError(f"--language: the {args.method} method needs the structure language of --column "
                         "(or --atoms-column and --compounds-column)")
    if args.method == "template" and args.language is None and args.template_column is None:
        raise ValueError("--language: the template method needs --language (or --template-column)")
    if os.path.exists(args.out) and not args.overwrite:
        raise FileExistsError(f"{args.out} exists; pass --overwrite to replace it")
    ds, source, builder_params = _resolve_source(args)
    weights = False if args.no_compound_weights else None  # None: Keysers weights for the language's compounds
    common = dict(test_size=args.test_size)
    provenance: dict = {"source": source, "source_config": args.config, "source_split": args.split,
                        "builder_params": builder_params, "method": args.method, "test_size": args.test_size,
                        "seed": args.seed, "column": args.column, "language": args.language}
    if sweep_targets is not None:
        return _split_sweep(args, ds, sweep_targets, provenance, weights)
    args.restarts = args.restarts or 0
    if args.method in ("mcd", "tmcd"):
        from .splits import mcd_split, tmcd_split

        fn = mcd_split if args.method == "mcd" else tmcd_split
        kwargs = dict(max_atom_divergence=args.max_atom_divergence, seed=args.seed, target_divergence=args.target_divergence,
                      divergence_tolerance=args.divergence_tolerance, time_limit=args.time_limit, max_steps=args.max_steps, atoms_column=args.atoms_column,
                      compounds_column=args.compounds_column, train_size=args.train_size, restarts=args.restarts,
                      return_result=True)
        if args.method == "mcd":
            kwargs["compound_weights"] = weights
        split, result = fn(ds, args.column, args.language, **common, **kwargs)
        provenance.update(max_atom_divergence=args.max_atom_divergence,
                          compound_weights=args.method == "mcd" and not args.no_compound_weights and not args.compounds_column,
                          train_size=args.train_size, left_out_rows=result.num_left_out, restarts=args.restarts,
                          stop_reason=result.stop_reason, steps=result.steps, seconds=round(result.seconds, 2),
                          compound_divergence=round(result.compound_divergence, 6))
        print(f"MCD search: {result!r}")
    elif args.method == "template":
        from .splits import template_split

        split = template_split(ds, args.column, args.language, seed=args.seed, template_column=args.template_column, **common)
    elif args.method == "length":
        from .splits import length_split

        if args.length_column:
            split = length_split(ds, args.length_column, **common)
        else:
            split = length_split(ds, lambda s: len(str(s).split()), column=args.column, **common)
    else:
        from .splits import random_split

        split = random_split(ds, seed=args.seed, **common)
    report = split_report(split["train"], split["test"], args.column, args.language, text_column=args.text_column,
                          length_column=args.length_column, atoms_column=args.atoms_column,
                          compounds_column=args.compounds_column, template_column=args.template_column,
                          compound_weights=weights if args.method != "tmcd" else False)
    print(report.to_markdown())
    out = save_split(split, args.out, report, config_name=args.name or args.method, provenance=provenance,
                     title=f"{args.method} split of `{args.source}`", if_exists="overwrite" if args.overwrite else "error")
    print(f"\nWrote {out}/ (config {args.name or args.method!r}: train {len(split['train']):,}, test {len(split['test']):,})")
    return 0


def _sweep_targets(args: argparse.Namespace) -> list[float]:
    """``--sweep``'s targets, checked before any work (with the options it cannot go with)."""
    from .splits.sweep import check_targets

    if args.method != "mcd":
        raise ValueError(f"--sweep: only the mcd method makes splits at chosen divergences, not {args.method}")
    for flag, value in (("--target-divergence", args.target_divergence), ("--name", args.name)):
        if value is not None:
            raise ValueError(f"{flag}: not used with --sweep (each target is its own config, dc_0.10, ...)")
    try:
        values = [float(v) for v in args.sweep.split(",")]
    except ValueError:
        raise ValueError(f"--sweep: expected comma-separated compound divergences in [0, 1] (e.g. 0,0.1,0.2), "
                         f"got {args.sweep!r}") from None
    return check_targets(values, name="--sweep")


def _split_sweep(args: argparse.Namespace, ds, targets: list[float], provenance: dict, weights) -> int:
    from .splits.mcd import UnreachableDivergence
    from .splits.sweep import SWEEP_RESTARTS, divergence_sweep

    try:
        sweep = divergence_sweep(
            ds, targets, column=args.column, language=args.language, test_size=args.test_size,
            train_size=args.train_size, max_atom_divergence=args.max_atom_divergence, seed=args.seed,
            compound_weights=weights, atoms_column=args.atoms_column, compounds_column=args.compounds_column,
            divergence_tolerance=args.divergence_tolerance, time_limit=args.time_limit, max_steps=args.max_steps,
            restarts=SWEEP_RESTARTS if args.restarts is None else args.restarts, text_column=args.text_column)
    except UnreachableDivergence as err:
        raise err.named("--sweep") from err
    provenance = {k: v for k, v in provenance.items() if k not in ("method", "seed", "column", "language", "test_size")}
    print(sweep.to_markdown())
    from .hub.card import portable_path

    out = sweep.save(args.out, provenance=provenance, title=f"Compound-divergence sweep of `{portable_path(args.source)}`",
                     if_exists="overwrite" if args.overwrite else "error")
    names = ", ".join(sweep.config_names.values())
    print(f"\nWrote {out}/ ({len(sweep)} configs: {names}; {sweep.seconds:.1f}s)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hf-synthsample`` console script."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    handlers = {"quickstart": _quickstart, "generate": _generate, "configs": _configs, "homogenize": _homogenize,
                "datamap": _datamap, "sample": _sample, "split": _split}
    from .processes import children_die_with_parent

    try:
        with children_die_with_parent():  # num_proc workers must not outlive a killed command
            return handlers[args.command](args)
    except (ValueError, TypeError, FileExistsError) as err:
        print(f"hf-synthsample {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
