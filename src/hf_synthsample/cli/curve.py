"""``hf-synthsample curve [SOURCE]``: the compositionality curve of a model on a dataset: a sweep of
splits at the ``--targets`` compound divergences, one model per split trained with the stock
``Seq2SeqTrainer`` until it fits its own rows, fit and test exact match per split, Spearman's rho,
written as a Hub-layout folder (the splits, the table and ``curve.png`` in its card).

Options: SOURCE, ``--model``, ``--out`` and the fields of :class:`~hf_synthsample.curve.CurveSettings`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
from typing import Iterator

from ..curve.settings import CurveSettings
from ..splits.settings import SweepSettings
from ..structure.language import LanguageSettings
from ._common import add_language_arguments, add_shared, check_license, check_output_folder, language_of
from ._source import resolve_source

HELP = "the compositionality curve of a model (test accuracy against compound divergence) as a Hub folder"
PARAMETERS = {"folder": "--out", "dataset": "source", "model": "--model", "targets": "--targets",
              "source_column": "--source-column", "target_column": "--target-column"}
DEFAULT_SOURCE = "scan/simple"
#: the columns and structure language of the default source (SCAN), used when it is read and they are not given
DEFAULT_SOURCE_OPTIONS = {"column": "commands", "language": "scan", "target_column": "actions"}

#: the settings classes whose fields are this command's options (``--targets`` one value per target)
SETTINGS = (CurveSettings, SweepSettings, LanguageSettings)
#: the splits' fields the training has too (its batch size, its step budget): ``--sweep-batch-size``, ...
SWEEP_PREFIX = "sweep_"
CLASHES = tuple(n for n in SweepSettings.specs() if n in CurveSettings.specs())
#: options named ``--{prefix}name``: the field ``name`` of a class
PREFIXED = {SWEEP_PREFIX: SweepSettings}
#: settings fields that are no option here, and why
NOT_OPTIONS = {"method": "a curve's splits are MCD splits", "goal": "each target is its own goal"}
#: the options that are no settings field: why each is the command's own
OWN_OPTIONS = {"out": "where the Hub folder is written", "model": "the model to train (not a setting of the curve)",
               "source": "the data"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..settings import add_arguments as add_settings

    p.add_argument("source", nargs="?", default=DEFAULT_SOURCE,
                   help=f"a Hub-layout folder, Parquet/JSON/CSV file(s), or DOMAIN/CONFIG [{DEFAULT_SOURCE}; "
                        + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in DEFAULT_SOURCE_OPTIONS.items()) + "]")
    p.add_argument("--out", required=True, help="output folder (Hub layout: the splits, the curve in the card)")
    p.add_argument("--model", default=None, help="a checkpoint folder to fine-tune on every split (save_pretrained "
                                                 "output with its tokenizer; the scratch model's options are refused beside it) "
                                                 "[a scratch model from the options below]")
    sweep = CurveSettings().sweep
    p.add_argument("--targets", type=float, nargs="+", default=argparse.SUPPRESS, metavar="D_C",  # one value each
                   help=f"{SweepSettings.specs()['targets'].help}; at least 2 [default: "
                        f"{' '.join(map(str, sweep.targets))}]")
    add_settings(p, CurveSettings)
    splits = p.add_argument_group("the splits (hf_synthsample.splits.SweepSettings)")
    add_settings(splits, sweep, exclude=("targets", *NOT_OPTIONS, *CLASHES))
    add_settings(splits, sweep, exclude=tuple(n for n in SweepSettings.specs() if n not in CLASHES),
                 prefix=SWEEP_PREFIX)
    add_language_arguments(p)  # the compound height is the splits' --max-height
    add_shared(p, "builder_param", "config", "split", "overwrite", "license", split="split of the source to read")


def settings_of(args: argparse.Namespace) -> CurveSettings:
    """The :class:`CurveSettings` the options give (its splits' from theirs)."""
    from ..settings import given, settings_from_args

    if args.source == DEFAULT_SOURCE:
        for name, value in DEFAULT_SOURCE_OPTIONS.items():
            if not hasattr(args, name):
                setattr(args, name, value)
    fixed = {"targets": tuple(args.targets)} if hasattr(args, "targets") else {}
    # --abstract / --max-height / --group set up the --language the splits read
    fixed["language"] = language_of(args, getattr(args, "language", None))
    sweep = settings_from_args(SweepSettings, args, base=CurveSettings().sweep, exclude=CLASHES, **fixed,
                               **given(args, SweepSettings, prefix=SWEEP_PREFIX))
    return settings_from_args(CurveSettings, args, sweep=sweep)


@contextlib.contextmanager
def _progress() -> Iterator[None]:
    """The curve's progress logged (INFO) inside the block."""
    lg = logging.getLogger("hf_synthsample.curve")
    before = lg.level
    lg.setLevel(logging.INFO)
    try:
        yield
    finally:
        lg.setLevel(before)


def run(args: argparse.Namespace) -> int:
    from ..curve import compositionality_curve
    from ..curve.training import checkpoint_factory
    from ..hub.card import portable_path
    from ..split_spec import split_names

    started = time.perf_counter()
    check_license(args)
    split_names(args.split, "--split")
    settings = settings_of(args)
    if args.model is not None:
        checkpoint_factory(args.model)  # the folder checked before any work (a seq2seq model, its tokenizer)
        from ..curve.training import SCRATCH_OPTIONS
        from ..settings import given

        scratch = [f"--{name.replace('_', '-')}" for name in SCRATCH_OPTIONS if name in given(args, CurveSettings)]
        if scratch:
            raise ValueError(f"{', '.join(scratch)}: the scratch model's options do not apply with --model (the "
                             "checkpoint's own config is trained): drop them, or drop --model")
    check_output_folder("--out", args.out, overwrite=args.overwrite)
    ds, source, builder_params = resolve_source(args)
    with _progress():
        result = compositionality_curve(ds, args.model, settings=settings)
    print(result.to_markdown())
    out = result.save(args.out, title=f"Compositionality curve of {result.model_name} on `{portable_path(args.source)}`",
                      if_exists="overwrite" if args.overwrite else "error", license=args.license,
                      provenance={"source": source, "source_config": args.config, "source_split": args.split,
                                  "builder_params": builder_params})
    print(f"\nWrote {out}/ ({len(result.records)} splits, {result.model}; {time.perf_counter() - started:.1f}s)")
    return 0
