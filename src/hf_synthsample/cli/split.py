"""``hf-synthsample split SOURCE``: a train/test split for compositional generalization (MCD, TMCD,
template, length or random) of a dataset or generated config, written as a Hub-layout folder whose
card carries the split report (divergences, unseen atoms, leakage, lengths) and the provenance."""

from __future__ import annotations

import argparse

from ._common import add_shared, check_license, check_output_folder
from ._source import resolve_source

HELP = "compositional train/test split (MCD, TMCD, template, length, random) as a Hub folder"
PARAMETERS = {"folder": "--out", "config_name": "--name", "dataset": "source", "column": "--column",
              "max_atom_divergence": "--max-atom-divergence", "compound_weights": "--compound-weights",
              "length": "--length-column"}

_SPLIT_METHODS = ("mcd", "tmcd", "template", "length", "random")


def add_arguments(sp: argparse.ArgumentParser) -> None:
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
    sp.add_argument("--compound-weights", choices=("example", "pool", "none"), default=None,
                    help="MCD: how compounds are weighted in D_C: 'example' (Keysers et al.'s weight of each compound "
                         "in each example, the default), 'pool' (a pool-wide variant: one weight per compound) or "
                         "'none'")
    sp.add_argument("--no-compound-weights", action="store_true", help="MCD: the same as --compound-weights none")
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
    add_shared(sp, "builder_param", "config", "split", "seed", "name", "overwrite", "license",
               split="split of the source to split", name="the method")


def _check_split_columns(args: argparse.Namespace, ds) -> None:
    """Every column option of ``split`` names a column of the data (and the atom / compound
    columns hold lists), checked on loading, before the split or its report start."""
    from datasets import LargeList, Sequence

    from ..validation import check_columns

    structural = args.atoms_column and args.compounds_column
    named = [("--column", None if structural and args.method in ("mcd", "tmcd") else args.column),
             ("--text-column", args.text_column), ("--template-column", args.template_column),
             ("--length-column", args.length_column), ("--atoms-column", args.atoms_column),
             ("--compounds-column", args.compounds_column)]
    for option, column in named:
        if column is not None:
            check_columns(ds, [column], name=option)
    for option, column in (("--atoms-column", args.atoms_column), ("--compounds-column", args.compounds_column)):
        if column is not None and not isinstance(ds.features[column], (Sequence, LargeList, list)):
            raise TypeError(f"{option}: column {column!r} holds {ds.features[column]}, not a list of strings per row "
                            "(e.g. ['walk', 'twice']); give a list column, or drop the option to parse --column")


def run(args: argparse.Namespace) -> int:
    from ..split_spec import split_names
    from ..splits import save_split, split_report
    from ..validation import check_float, check_int

    check_license(args)
    split_names(args.split, "--split")  # before anything is looked at or loaded
    check_float("--test-size", args.test_size, min=0.0, max=1.0, min_inclusive=False, max_inclusive=False)
    check_float("--max-atom-divergence", args.max_atom_divergence, min=0.0, max=1.0)
    if args.train_size is not None:
        if args.method not in ("mcd", "tmcd"):
            raise ValueError(f"--train-size: only the mcd and tmcd methods leave rows out; the {args.method} method "
                             "splits all rows (drop --train-size)")
        check_float("--train-size", args.train_size, min=0.0, max=1.0 - args.test_size, min_inclusive=False)
    if args.restarts is not None:
        check_int("--restarts", args.restarts, min=0)
    check_int("--seed", args.seed, min=0)
    check_float("--divergence-tolerance", args.divergence_tolerance, min=0.0, max=1.0)
    if args.target_divergence is not None:
        check_float("--target-divergence", args.target_divergence, min=0.0, max=1.0)
    if args.time_limit is not None:
        check_float("--time-limit", args.time_limit, min=0.0, min_inclusive=False)
    if args.max_steps is not None:
        check_int("--max-steps", args.max_steps, min=0)
    sweep_targets = _sweep_targets(args) if args.sweep is not None else None
    if args.method not in ("mcd", "tmcd"):
        for opt, value in (("--target-divergence", args.target_divergence), ("--time-limit", args.time_limit),
                           ("--max-steps", args.max_steps), ("--atoms-column", args.atoms_column),
                           ("--compounds-column", args.compounds_column), ("--restarts", args.restarts or None),
                           ("--no-compound-weights", args.no_compound_weights or None),
                           ("--compound-weights", args.compound_weights)):
            if value is not None:
                raise ValueError(f"{opt}: only used by the mcd and tmcd methods, not {args.method} (drop {opt})")
    if args.no_compound_weights and args.compound_weights not in (None, "none"):
        raise ValueError(f"--no-compound-weights contradicts --compound-weights {args.compound_weights} (give one)")
    if args.name is not None:
        from ..hub.folder import check_config_name

        check_config_name(args.name, "--name")
    structural = args.language is not None or (args.atoms_column and args.compounds_column)
    if args.method in ("mcd", "tmcd") and not structural:
        raise ValueError(f"--language: the {args.method} method needs the structure language of --column "
                         "(or --atoms-column and --compounds-column)")
    if args.method == "template" and args.language is None and args.template_column is None:
        raise ValueError("--language: the template method needs --language (or --template-column)")
    check_output_folder("--out", args.out, overwrite=args.overwrite)
    ds, source, builder_params = resolve_source(args)
    _check_split_columns(args, ds)
    # None: Keysers et al.'s per-example weights for the language's compounds (none for given compound columns)
    weights = {None: None, "example": "example", "pool": "pool", "none": False}[
        "none" if args.no_compound_weights else args.compound_weights]
    common = dict(test_size=args.test_size)
    provenance: dict = {"source": source, "source_config": args.config, "source_split": args.split,
                        "builder_params": builder_params, "method": args.method, "test_size": args.test_size,
                        "seed": args.seed, "column": args.column, "language": args.language}
    if sweep_targets is not None:
        return _split_sweep(args, ds, sweep_targets, provenance, weights)
    args.restarts = args.restarts or 0
    if args.method in ("mcd", "tmcd"):
        from ..splits import mcd_split, tmcd_split

        fn = mcd_split if args.method == "mcd" else tmcd_split
        kwargs = dict(max_atom_divergence=args.max_atom_divergence, seed=args.seed, target_divergence=args.target_divergence,
                      divergence_tolerance=args.divergence_tolerance, time_limit=args.time_limit, max_steps=args.max_steps, atoms_column=args.atoms_column,
                      compounds_column=args.compounds_column, train_size=args.train_size, restarts=args.restarts,
                      return_result=True)
        if args.method == "mcd":
            kwargs["compound_weights"] = weights
        split, result = fn(ds, args.column, args.language, **common, **kwargs)
        provenance.update(max_atom_divergence=args.max_atom_divergence,
                          compound_weights=("none" if args.method != "mcd" or weights is False or args.compounds_column
                                            else weights or "example"),
                          train_size=args.train_size, left_out_rows=result.num_left_out, restarts=args.restarts,
                          stop_reason=result.stop_reason, steps=result.steps, seconds=round(result.seconds, 2),
                          compound_divergence=round(result.compound_divergence, 6))
        print(f"MCD search: {result!r}")
    elif args.method == "template":
        from ..splits import template_split

        split = template_split(ds, args.column, args.language, seed=args.seed, template_column=args.template_column, **common)
    elif args.method == "length":
        from ..splits import length_split

        if args.length_column:
            split = length_split(ds, args.length_column, **common)
        else:
            split = length_split(ds, lambda s: len(str(s).split()), column=args.column, **common)
    else:
        from ..splits import random_split

        split = random_split(ds, seed=args.seed, **common)
    report = split_report(split["train"], split["test"], args.column, args.language, text_column=args.text_column,
                          length_column=args.length_column, atoms_column=args.atoms_column,
                          compounds_column=args.compounds_column, template_column=args.template_column,
                          compound_weights=weights if args.method != "tmcd" else False)
    print(report.to_markdown())
    out = save_split(split, args.out, report, config_name=args.name or args.method, provenance=provenance,
                     title=f"{args.method} split of `{args.source}`", if_exists="overwrite" if args.overwrite else "error",
                     license=args.license)
    print(f"\nWrote {out}/ (config {args.name or args.method!r}: train {len(split['train']):,}, test {len(split['test']):,})")
    return 0


def _sweep_targets(args: argparse.Namespace) -> list[float]:
    """``--sweep``'s targets, checked before any work (with the options it cannot go with)."""
    from ..splits.sweep import check_targets

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
    from ..splits.mcd import UnreachableDivergence
    from ..splits.sweep import SWEEP_RESTARTS, divergence_sweep

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
    from ..hub.card import portable_path

    out = sweep.save(args.out, provenance=provenance, title=f"Compound-divergence sweep of `{portable_path(args.source)}`",
                     if_exists="overwrite" if args.overwrite else "error", license=args.license)
    names = ", ".join(sweep.config_names.values())
    print(f"\nWrote {out}/ ({len(sweep)} configs: {names}; {sweep.seconds:.1f}s)")
    return 0
