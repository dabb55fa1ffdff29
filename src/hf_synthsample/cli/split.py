"""``hf-synthsample split SOURCE``: a train/test split for compositional generalization (MCD, TMCD,
template, length or random) of a dataset or generated config, written as a Hub-layout folder whose
card carries the split report (divergences, unseen atoms, leakage, lengths) and the provenance.
``--sweep D_C,D_C,...``: MCD splits at each target, one config each (the structure read once), with
one progress bar for the job (``datasets``' per-write bars off inside it) and its true elapsed time.

Options: the fields of :class:`~hf_synthsample.splits.settings.SplitSettings` (and ``SweepSettings``).
"""

from __future__ import annotations

import argparse
import time

from ..settings import add_arguments as add_settings
from ..settings import applies, settings_from_args
from ..splits.settings import SplitSettings, SweepSettings
from ..structure.language import LanguageSettings
from ._argparse import actions
from ._common import (add_language_arguments, add_shared, check_license, check_output_folder, language_of,
                      quiet_datasets_bars, require)
from ._source import resolve_source

HELP = "compositional train/test split (MCD, TMCD, template, length, random) as a Hub folder"
#: the settings classes the options are made from, and the options that are not their fields
SETTINGS = (SplitSettings, SweepSettings, LanguageSettings)
OWN_OPTIONS = {"out": "the output folder", "no_compound_weights": "an alias of --compound-weights none"}
PARAMETERS = {"folder": "--out", "config_name": "--name", "dataset": "source", "length": "--length-column"}


def add_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("source", help="a Hub-layout folder, Parquet/JSON/CSV file(s), or DOMAIN/CONFIG of a generator "
                                   "(e.g. scan/simple)")
    sp.add_argument("--out", required=True, help="output folder (Hub layout)")
    add_settings(sp, SplitSettings)
    add_settings(sp, SweepSettings, exclude=tuple(n for n in SweepSettings.specs() if n != "targets"))
    split, sweep, sweep_defaults = SplitSettings.specs(), SweepSettings.specs(), SweepSettings.defaults()
    for a in actions(sp):  # a field a sweep declares apart (its own default) says so
        if a.dest in split and sweep[a.dest] != split[a.dest]:
            a.help += f"; with --sweep: {sweep[a.dest].help} [default: {sweep_defaults[a.dest]}]"
    add_language_arguments(sp)  # the compound height is the split's --max-height
    sp.add_argument("--no-compound-weights", action="store_true", help="the same as --compound-weights none")
    add_shared(sp, "builder_param", "config", "split", "name", "overwrite", "license",
               split="split of the source to split", name="the method")
    require(sp, "method")  # the settings default to mcd; the command asks for a method


def settings_of(args: argparse.Namespace):
    """The :class:`SplitSettings` (:class:`SweepSettings` with ``--sweep``) the options give."""
    if args.no_compound_weights:
        if getattr(args, "compound_weights", "none") != "none":
            raise ValueError(f"--no-compound-weights contradicts --compound-weights {args.compound_weights} (give one)")
        args.compound_weights = "none"
    language = language_of(args, getattr(args, "language", None))
    if not hasattr(args, "targets"):
        return settings_from_args(SplitSettings, args, language=language)
    if args.name is not None:
        raise ValueError("--name: not used with --sweep (each target is its own config, dc_0.10, ...)")
    return settings_from_args(SweepSettings, args, language=language)


def record(settings) -> dict:
    """The fields of ``settings`` that apply to its method, for the card."""
    return {k: v for k, v in settings.to_record().items() if applies(settings, k)}


def _check_split_columns(s, ds) -> None:
    """Every column option names a column of ``ds`` (the atom / compound columns hold lists)."""
    from datasets import LargeList, Sequence

    from ..validation import check_columns

    structural = s.atoms_column and s.compounds_column
    named = [("--column", None if structural and s.search else s.column),
             ("--text-column", s.text_column), ("--template-column", s.template_column),
             ("--length-column", s.length_column), ("--atoms-column", s.atoms_column),
             ("--compounds-column", s.compounds_column)]
    for option, column in named:
        if column is not None:
            check_columns(ds, [column], name=option)
    for option, column in (("--atoms-column", s.atoms_column), ("--compounds-column", s.compounds_column)):
        if column is not None and not isinstance(ds.features[column], (Sequence, LargeList, list)):
            raise TypeError(f"{option}: column {column!r} holds {ds.features[column]}, not a list of strings per row "
                            "(e.g. ['walk', 'twice']); give a list column, or drop the option to parse --column")


def run(args: argparse.Namespace) -> int:
    from ..hub.folder import check_config_name
    from ..split_spec import split_names

    started = time.perf_counter()
    check_license(args)
    split_names(args.split, "--split")  # before anything is looked at or loaded
    settings = settings_of(args)
    if args.name is not None:
        check_config_name(args.name, "--name")
    settings.require_structure()
    check_output_folder("--out", args.out, overwrite=args.overwrite)
    ds, source, builder_params = resolve_source(args)
    _check_split_columns(settings, ds)
    provenance = {"source": source, "source_config": args.config, "source_split": args.split,
                  "builder_params": builder_params, **record(settings)}
    if isinstance(settings, SweepSettings):
        return _run_sweep(args, ds, settings, provenance, started)
    return _run_split(args, ds, settings, provenance)


def _run_split(args: argparse.Namespace, ds, settings: SplitSettings, provenance: dict) -> int:
    from ..splits import MCDSplitter, save_split, split_report

    splitter = MCDSplitter(settings)
    split = splitter.split(ds)
    result = splitter.result_
    if result is not None:
        provenance.update(left_out_rows=result.num_left_out, stop_reason=result.stop_reason, steps=result.steps,
                          seconds=round(result.seconds, 2), compound_divergence=round(result.compound_divergence, 6))
        print(f"MCD search: {result!r}")
    s = settings
    # the search's weights; the other methods' reports weigh a language's compounds as Keysers et al.
    report = split_report(split["train"], split["test"], s.column, s.language, text_column=s.text_column,
                          length_column=s.length_column, atoms_column=s.atoms_column,
                          compounds_column=s.compounds_column, template_column=s.template_column,
                          compound_weights=s.weights_in_effect if s.search else None, max_height=s.max_height)
    if s.language is not None or s.template_column is not None:  # issue 43: beside a random split of its sizes
        from ..splits.disjoint import describe_split

        describe_split(report, ds, splitter)  # the search warned already
    print(report.to_markdown())
    name = args.name or s.method
    with quiet_datasets_bars():  # no "Creating parquet" bar per side
        out = save_split(split, args.out, report, config_name=name, provenance=provenance, license=args.license,
                         title=f"{s.method} split of `{args.source}`",
                         if_exists="overwrite" if args.overwrite else "error")
    print(f"\nWrote {out}/ (config {name!r}: train {len(split['train']):,}, test {len(split['test']):,})")
    return 0


def _run_sweep(args: argparse.Namespace, ds, settings, provenance: dict, started: float) -> int:
    """Search, report and write the sweep of ``settings`` (a :class:`SweepSettings`) under one bar."""
    from tqdm.auto import tqdm

    from ..hub.card import portable_path
    from ..splits import MCDSplitter
    from ..splits.mcd import UnreachableDivergence

    steps = 3 * len(settings.targets)  # a search, a report and a plot per target
    with quiet_datasets_bars() as shown, tqdm(total=steps, desc="split --sweep", unit=" step", disable=not shown) as bar:
        try:
            sweep = MCDSplitter(settings).sweep(ds, progress=bar)
        except UnreachableDivergence as err:
            raise err.named("--sweep") from err
        bar.set_postfix_str("reports and plots")
        out = sweep.save(args.out, provenance=provenance, progress=bar,
                         title=f"Compound-divergence sweep of `{portable_path(args.source)}`",
                         if_exists="overwrite" if args.overwrite else "error", license=args.license)
    print(sweep.to_markdown())
    names = ", ".join(sweep.config_names.values())
    print(f"\nWrote {out}/ ({len(sweep)} configs: {names}; {time.perf_counter() - started:.1f}s)")
    return 0
