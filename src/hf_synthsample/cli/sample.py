"""``hf-synthsample sample SOURCE``: a structurally diverse subset (uniform, UAT, CMaxEnt, hybrid;
Oren et al. 2021) of a dataset (Hub-layout folder or Parquet/JSON/CSV file) or of a generated
config (``DOMAIN/CONFIG`` with ``--builder-param``), written as a curated Hub-layout folder with
its provenance, diversity report and template plot."""

from __future__ import annotations

import argparse
import re

from ..sampling.settings import SAMPLER_SETTINGS
from ..settings import add_arguments as add_settings
from ..settings import flag_of
from ._argparse import actions
from ._common import add_shared, check_license, check_output_folder, key_values

HELP = "structurally diverse subset (uniform, UAT, CMaxEnt, hybrid) as a curated folder"
PARAMETERS = {"folder": "--out", "config_name": "--name", "dataset": "source", "builder_params": "--builder-param"}

#: ``--sampler`` name -> class name in :mod:`hf_synthsample.sampling`
SAMPLERS = {"uniform": "UniformSampler", "uat": "UATSampler", "cmaxent": "CMaxEntSampler", "hybrid": "HybridSampler"}

#: the settings classes the options are made from (one per sampler), and the options that are not their fields
SETTINGS = tuple(dict.fromkeys(SAMPLER_SETTINGS.values()))
OWN_OPTIONS = {"sampler": "which sampler (and so which settings class)", "k": "rows to select (an argument of "
               "sample(), not a setting)", "out": "the output folder", "param": "sampler settings as NAME=VALUE "
               "(the options' older spelling)"}

#: sampler settings the diversity report of ``sample`` also reads (a uniform sample's report too)
_REPORT_PARAMETERS = ("program_column", "language")


def add_arguments(sm: argparse.ArgumentParser) -> None:
    sm.add_argument("source", help="a Hub-layout folder, Parquet/JSON/CSV file(s), or DOMAIN/CONFIG of a generator "
                                   "(e.g. schema2qa/all)")
    sm.add_argument("--sampler", required=True, choices=sorted(SAMPLERS), help="sampling method")
    sm.add_argument("-k", "--k", type=int, required=True, help="rows to select")
    sm.add_argument("--out", required=True, help="output folder (Hub layout; other configs in it are kept)")
    sm.add_argument("--param", nargs="+", default=[], metavar="NAME=VALUE",
                    help="sampler settings, e.g. alpha=-0.5 w_atoms=0 device=cuda language=sexpr")
    for cls in SETTINGS:  # each field once (the samplers share the structure and seed fields)
        new = [n for n in cls.specs() if n not in {a.dest for a in actions(sm)}]
        takers = [name for name, c in SAMPLER_SETTINGS.items() if set(new) <= set(c.specs())]
        add_settings(sm.add_argument_group(f"settings of --sampler {', '.join(takers)}"), cls,
                     exclude=tuple(n for n in cls.specs() if n not in new))
    add_shared(sm, "builder_param", "config", "split", "name", "overwrite", "license",
               split="split to sample", name="the sampler name",
               overwrite="replace config --name if the output folder has it")


def parameter_options(args: argparse.Namespace) -> dict[str, str]:
    """The settings given as ``--param NAME=VALUE``, named so in messages (the others are their options)."""
    try:
        return {name: f"--param {name}=" for name in key_values("--param", args.param)}
    except ValueError:
        return {}


def _settings_values(args: argparse.Namespace) -> tuple[dict, dict]:
    """The chosen sampler's settings from its options and ``--param``, and the report-only ones;
    anything else is refused."""
    fields = SAMPLER_SETTINGS[args.sampler].specs()
    options = {n: getattr(args, n) for cls in SETTINGS for n in cls.specs() if hasattr(args, n)}
    params = key_values("--param", args.param)
    for name in sorted(set(options) & set(params)):
        raise ValueError(f"--param {name}: given twice (also as {flag_of(name, fields.get(name) or _spec(name))})")
    values = {**options, **params}
    report_only = {n: values.pop(n) for n in _REPORT_PARAMETERS if n in values and n not in fields}
    accepted = sorted({*fields, *_REPORT_PARAMETERS})
    for name in sorted(set(values) - set(fields)):
        if name in params:
            raise ValueError(f"--param: {args.sampler} has no parameter {name}; accepted: {accepted}")
        where = ", ".join(k for k, c in SAMPLER_SETTINGS.items() if name in c.specs())
        raise ValueError(f"{flag_of(name, _spec(name))} does not apply to --sampler {args.sampler}; "
                         f"it applies to --sampler {where}")
    for name, value in values.items():  # an option's text as its field parses it (lists as tuples)
        if isinstance(value, list):
            values[name] = tuple(value)
    return values, report_only


def _spec(name: str):
    return next(cls.specs()[name] for cls in SETTINGS if name in cls.specs())


def run(args: argparse.Namespace) -> int:
    from .. import sampling
    from ..hub import Provenance, save_curated
    from ..hub.folder import check_config_name
    from ..split_spec import split_names
    from ..validation import check_int, check_writable_path
    from ._source import SPLIT_ROWS, folder_configs, resolve_source, rows_to_generate

    values, report_only = _settings_values(args)
    check_int("--k", args.k, min=1)
    sampler = getattr(sampling, SAMPLERS[args.sampler])(**values)  # its settings validate the values before any loading
    report_params = {p: getattr(sampler, p) for p in _REPORT_PARAMETERS if hasattr(sampler, p)} | report_only
    reporter = sampling.DiversityReporter(**report_params)  # and the report's settings (a uniform sample's language)
    check_license(args)
    split_names(args.split, "--split")  # a slice that does not parse fails before the output is looked at
    name = check_config_name(args.name or args.sampler, "--name")
    check_writable_path("--out", args.out, folder=True)
    if not args.overwrite and name in folder_configs(args.out):
        raise FileExistsError(f"{args.out} already has config {name!r}; pass --overwrite to replace it, "
                              "or choose another --name")
    check_output_folder("--out", args.out, overwrite=False, add=True, configs=[name])
    rows = rows_to_generate(args)
    if rows == 0:
        raise ValueError(f"--split: {args.source} generates no {args.split!r} rows with these --builder-param values "
                         f"(give --builder-param {SPLIT_ROWS[args.split]}=N, or another --split)")
    if rows is not None and args.k > rows:  # known before generating: say so now, not after
        raise ValueError(f"--k must be <= {rows:,}, the rows of split {args.split!r} that {args.source} generates "
                         f"with these --builder-param values, got {args.k:,}")
    ds, source, builder_params = resolve_source(args)
    source_config = builder_params if source.startswith("hf_synthsample:") else {"config": args.config,
                                                                                  "split": args.split}
    column = reporter.program_column
    if column not in ds.column_names:  # the report reads it: say so before sampling
        raise ValueError(f"--param program_column: the diversity report reads the program column {column!r}, which the "
                         f"dataset does not have (its columns: {ds.column_names}); give it with "
                         "--param program_column=NAME")
    subset = sampler.sample(ds, args.k)
    try:
        report = reporter.report(subset, name=name)
    except ValueError as err:
        if "language" in report_params:
            raise
        raise ValueError(f"--param language: the diversity report parses {column!r} as "
                         f"{reporter.language!r} by default, and "
                         f"{re.sub(r' Pass skip_unparsable=True[^.]*[.]', '', str(err))} Give the pool's structure "
                         "language, e.g. --param language=sexpr") from None
    print(report.to_markdown())
    provenance = Provenance.from_sampler(ds, sampler, source=source, source_config=source_config,
                                         description=f"{args.sampler} sample of {args.k:,} rows of split {args.split}")
    out = save_curated(subset, args.out, provenance, config_name=name, statistics=report.to_markdown(),
                       plots={"templates": report.plot}, license=args.license)  # drawn inside the folder's temp copy
    print(f"\nWrote {len(subset):,} rows to {out}/ (config {name!r})")
    return 0
