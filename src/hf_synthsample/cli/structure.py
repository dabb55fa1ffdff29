"""``hf-synthsample structure SOURCE``: what a program column is made of before any split: atoms,
compounds, templates, what the language abstracts (one row shown parsed), the structure groups the
MCD search moves as units, and a seeded random split's D_C, D_A and shared templates.
Prints Markdown; ``--json OUT`` also writes the figures as JSON.

Options: the fields of :class:`~hf_synthsample.structure.LanguageSettings` (``--abstract``,
``--max-height``, ``--group`` / ``--no-group``) set up ``--language``.
"""

from __future__ import annotations

import argparse

from ..settings import add_arguments as add_settings
from ..structure.language import LanguageSettings
from ._common import add_shared

HELP = "what a program column is made of: atoms, compounds, templates, structure groups, a random split's figures"
SETTINGS = (LanguageSettings,)
OWN_OPTIONS = {"column": "the program column (an argument of structure_report)",
               "language": "the structure language, set up by the language options",
               "top": "how many of the most frequent atoms, compounds and templates to list",
               "test_size": "the random split's test share (structure_report's)",
               "json": "a JSON file for the figures"}
PARAMETERS = {"dataset": "source"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="a Hub-layout folder, Parquet/JSON/CSV file(s), or DOMAIN/CONFIG of a generator")
    p.add_argument("--column", default="program", help="the program column [default: program]")
    p.add_argument("--language", required=True, help="structure language of the column (sexpr, thingtalk, scan, "
                                                     "cogs, sql, ...)")
    add_settings(p, LanguageSettings, title="structure language (with --language)")
    p.add_argument("--top", type=int, default=10, help="the most frequent atoms, compounds, templates listed "
                                                       "[default: 10]")
    p.add_argument("--test-size", type=float, default=0.25, help="test share of the seeded random split "
                                                                 "[default: 0.25]")
    p.add_argument("--json", default=None, metavar="OUT", help="also write the figures to this JSON file")
    add_shared(p, "builder_param", "config", "split", "seed", split="split of the source to read")


def run(args: argparse.Namespace) -> int:
    import json

    from ..atomic import write_text_atomic
    from ..settings import given, settings_from_args
    from ..split_spec import split_names
    from ..splits import structure_report
    from ..structure import get_language
    from ._source import resolve_source

    split_names(args.split, "--split")
    language = get_language(args.language)  # an unknown name before any reading
    if given(args, LanguageSettings):
        language = language.configure(settings_from_args(LanguageSettings, args))
    if args.json is not None:
        from ..validation import check_path

        check_path("--json", args.json)
    ds, _, _ = resolve_source(args)
    report = structure_report(ds, args.column, language, top=args.top, seed=args.seed, test_size=args.test_size)
    print(report.to_markdown())
    if args.json is not None:
        write_text_atomic(args.json, json.dumps(report.to_dict(), indent=2, default=str))
        print(f"\nWrote {args.json}")
    return 0
