"""``hf-synthsample generate DOMAIN``: materialize a domain's configs as a Hub-layout folder (every
config parameter is an option, e.g. ``--num-examples 100000 --eps 0.02``); ``--engine ray``
generates on Ray Data (a local runtime, or a cluster: ``--ray-address auto``)."""

from __future__ import annotations

import argparse

from ._common import add_shared, check_license, check_output_folder, parse_value

HELP = "materialize a domain's configs as a Hub-layout dataset folder"
PARAMETERS = {"folder": "--out", "config_name": "--configs", "name": "--configs"}


def add_arguments(g: argparse.ArgumentParser) -> None:
    from ..builders import list_domains

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
        add_shared(mode, "overwrite", overwrite="replace the output folder")
        mode.add_argument("--add", action="store_true", help="add/replace these configs in an existing folder")
        add_shared(d, "license")
        _add_config_options(d, domain)


def _add_config_options(parser: argparse.ArgumentParser, domain: str) -> None:
    """One option per parameter of the domain's config class (``--num-examples``, ``--eps``, ...)."""
    from ..builders import get_builder_class
    from ..builders.base import config_parameters

    params = config_parameters(get_builder_class(domain).BUILDER_CONFIG_CLASS)
    group = parser.add_argument_group(f"{domain} config parameters (default: the config's own value)")
    for name, spec in params.items():
        kwargs: dict = {"dest": f"param_{name}", "default": argparse.SUPPRESS, "type": parse_value,
                        "metavar": "VALUE", "help": f"{spec['help']} [{spec['default']!r}]"}
        if isinstance(spec["default"], tuple):
            kwargs["nargs"] = "*"
        group.add_argument("--" + name.replace("_", "-"), **kwargs)


def _collect_params(args: argparse.Namespace) -> dict:
    return {k[len("param_"):]: v for k, v in vars(args).items() if k.startswith("param_")}


def run(args: argparse.Namespace) -> int:
    from ..builders import get_builder_class
    from ..hub import materialize
    from ..load import resolve_config
    from ..validation import check_int, check_writable_path

    if args.num_proc is not None:
        check_int("--num-proc", args.num_proc, min=1)
    if args.ray_address is not None and args.engine != "ray":
        raise ValueError("--ray-address: only used with --engine ray")
    check_license(args)
    if args.cache_dir is not None:
        check_writable_path("--cache-dir", args.cache_dir, folder=True)
    params = _collect_params(args)
    names = args.configs or list(get_builder_class(args.domain).builder_configs)
    for name in names:  # every config and parameter, before the folder is looked at or anything generated
        resolve_config(args.domain, name, **params)
    check_output_folder("--out", args.out, overwrite=args.overwrite, add=args.add, configs=names,
                        how="--overwrite to replace it, or --add to add (or replace) these configs in it")
    if_exists = "overwrite" if args.overwrite else "add" if args.add else "error"
    if args.engine == "ray":
        return _generate_ray(args, if_exists)
    out = materialize(
        args.domain, args.out, args.configs, num_proc=args.num_proc, cache_dir=args.cache_dir,
        if_exists=if_exists, plots=not args.no_plots, license=args.license, **params,
    )
    print(f"Wrote {out}/ (load with datasets.load_dataset({str(out)!r}, CONFIG))")
    return 0


def _generate_ray(args: argparse.Namespace, if_exists: str) -> int:
    from ..engines import ray as hf_ray

    try:
        hf_ray.require_ray(start=False)
    except ImportError as err:
        raise ValueError(f"--engine ray: {err}") from err
    for flag, value in (("--add", args.add), ("--num-proc", args.num_proc), ("--cache-dir", args.cache_dir)):
        if value:
            raise ValueError(f"{flag}: not used with --engine ray (Ray's workers replace --num-proc; no cache; "
                             "write a new folder or --overwrite)")
    hf_ray.start_ray(address=args.ray_address)  # quiet; a local runtime, or the cluster of RAY_ADDRESS
    out = hf_ray.to_hub_folder(args.domain, args.out, args.configs, if_exists=if_exists, license=args.license,
                               **_collect_params(args))
    print(f"Wrote {out}/ on Ray (load with datasets.load_dataset({str(out)!r}, CONFIG))")
    return 0
