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
from ..structure.language import LanguageSettings
from ._common import add_language_arguments, add_shared, check_license, check_output_folder, language_of
from ._source import resolve_source

HELP = "the compositionality curve of a model (test accuracy against compound divergence) as a Hub folder"
PARAMETERS = {"folder": "--out", "dataset": "source", "model": "--model", "targets": "--targets",
              "source_column": "--source-column", "target_column": "--target-column"}
DEFAULT_SOURCE = "scan/simple"

#: the settings classes whose fields are this command's options (``--targets`` one value per target)
SETTINGS = (CurveSettings, LanguageSettings)
#: the options that are no settings field: why each is the command's own
OWN_OPTIONS = {"out": "where the Hub folder is written", "model": "the model to train (not a setting of the curve)",
               "source": "the data"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..settings import add_arguments as add_settings

    p.add_argument("source", nargs="?", default=DEFAULT_SOURCE,
                   help=f"a Hub-layout folder, Parquet/JSON/CSV file(s), or DOMAIN/CONFIG [{DEFAULT_SOURCE}]")
    p.add_argument("--out", required=True, help="output folder (Hub layout: the splits, the curve in the card)")
    p.add_argument("--model", default=None, help="a checkpoint folder to fine-tune on every split (save_pretrained "
                                                 "output with its tokenizer; the scratch model's options are refused beside it) "
                                                 "[a scratch model from the options below]")
    spec = CurveSettings.specs()["targets"]  # one value per target, as the example takes them
    p.add_argument("--targets", type=float, nargs="+", default=argparse.SUPPRESS, metavar="D_C",
                   help=f"{spec.help} [default: {' '.join(map(str, CurveSettings().targets))}]")
    add_settings(p, CurveSettings, exclude=("targets",))
    add_language_arguments(p, exclude=())
    add_shared(p, "builder_param", "config", "split", "overwrite", "license", split="split of the source to read")


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
    from ..settings import settings_from_args
    from ..split_spec import split_names

    started = time.perf_counter()
    check_license(args)
    split_names(args.split, "--split")
    fixed = {"targets": tuple(args.targets)} if hasattr(args, "targets") else {}
    # --abstract / --max-height / --group set up the --language the splits read
    fixed["language"] = language_of(args, getattr(args, "language", CurveSettings().language))
    settings = settings_from_args(CurveSettings, args, **fixed)
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
