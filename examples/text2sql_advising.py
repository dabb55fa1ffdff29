"""SQL structure, template and MCD splits, and the compositionality curve on real text-to-SQL data:
Advising (Finegan-Dollak, Kummerfeld et al., ACL 2018; CC BY 4.0).

Usage::

    python examples/text2sql_advising.py --data PATH/TO/advising.json --out runs/advising            # structure + splits
    python examples/text2sql_advising.py --data PATH/TO/advising.json --out runs/advising --cpu      # + the curve

``--data``: ``advising.json`` of the authors' public repository (github.com/jkkummerfeld/text2sql-data,
``data/advising.json``; default: ``../shared/data/text2sql-advising/advising.json`` beside the checkout).

The file is read as a user would (:func:`load_advising`): one row per question, with

- ``question``: the question with its variables named (``Can undergrads take number0 ?``) and
  ``sql``: the first SQL query, variables named (the paper's setting: the model's input and output);
- ``sql_values``: the same query with each variable's value filled in (the question's own value,
  else the query's example): the structure column, read with the built-in language ``sql``;
- ``query_id`` (the query's position in the file), ``question_split`` and ``query_split``.

What it checks and reports (``results.md`` / ``results.json`` in ``--out``):

1. the structure report of ``sql_values`` (``hf_synthsample.splits.structure_report``);
2. every first SQL query parses, and the questions of one query share one template;
3. a template split by SQL template holds no test template in training;
4. ``split_report`` of the published question split (random) and query split side by side;
5. the reachable range of D_C and MCD splits at targets across it (train 50 % / test 25 %);
6. with ``--cpu``: the compositionality curve of a scratch BART on those MCD splits, every model
   trained to fit its own rows, and the same recipe's exact match on the question split and the
   query split beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "text2sql-advising" / "advising.json"
SOURCE = "github.com/jkkummerfeld/text2sql-data (data/advising.json), CC BY 4.0"

#: the curve at CPU scale: queries of at most ``max_sql_tokens`` words (90 % of the questions),
#: a BART d_model 64 trained to 90 % exact match on 300 of its own rows
CPU = dict(targets=(0.1, 0.2, 0.3), train_size=0.5, test_size=0.25, fit_target=90.0, fit_rows=300, check_every=250,
           max_steps=4000, settle_steps=500, batch_size=64, learning_rate=1e-3, warmup_steps=100, test_rows=500,
           length_bins=0, d_model=64, layers=3, ffn=128, heads=4, dropout=0.1, eval_batch_size=128)
MAX_SQL_TOKENS = 64
#: share of the rows a side of an MCD split may be off by: Advising's structures hold up to 166 rows
SIZE_TOLERANCE = 0.02


def _fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each variable name (``department0``) replaced by its value."""
    if not values:
        return text
    names = sorted(values, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: values[m.group(1)], text)


def load_advising(path: str | os.PathLike = DEFAULT_DATA, *, max_sql_tokens: int | None = None):
    """Advising's ``advising.json`` as a ``datasets.Dataset``, one row per question (see the module).

    ``max_sql_tokens``: keep the questions whose query has at most that many words (``None``: all).
    """
    from datasets import Dataset

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--data: {path} is not a file; download data/advising.json from {SOURCE}")
    entries = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(entries, list) or not entries or "sql" not in entries[0]:
        raise ValueError(f"--data: {path} is not Advising's format (a list of entries with 'sql' and 'sentences')")
    rows: dict[str, list] = {k: [] for k in ("question", "sql", "sql_values", "query_id", "question_split",
                                             "query_split")}
    for qid, entry in enumerate(entries):
        sql = " ".join(entry["sql"][0].split())
        if max_sql_tokens is not None and len(sql.split()) > max_sql_tokens:
            continue
        examples = {v["name"]: v["example"] for v in entry.get("variables", [])}
        for sentence in entry["sentences"]:
            values = {**examples, **{k: v for k, v in sentence.get("variables", {}).items() if v != ""}}
            rows["question"].append(" ".join(sentence["text"].split()))
            rows["sql"].append(sql)
            rows["sql_values"].append(_fill(sql, values))
            rows["query_id"].append(qid)
            rows["question_split"].append(sentence["question-split"])
            rows["query_split"].append(entry["query-split"])
    return Dataset.from_dict(rows)


def published_split(ds, kind: str):
    """The paper's ``question`` or ``query`` split as ``DatasetDict(train, test)`` (dev and excluded rows left out)."""
    from datasets import DatasetDict

    col = {"question": "question_split", "query": "query_split"}[kind]
    sides = ds[col]
    return DatasetDict({side: ds.select([i for i, s in enumerate(sides) if s == side]) for side in ("train", "test")})


def check_structure(ds) -> dict[str, Any]:
    """Every query parses; the questions of one query share one template (returns the counts)."""
    from hf_synthsample.structure import StructureFunction

    with_t = ds.map(StructureFunction(column="sql_values", language="sql", outputs=("template",)), batched=True)
    by_query: dict[int, set] = {}
    for q, t in zip(with_t["query_id"], with_t["template"]):
        by_query.setdefault(q, set()).add(t)
    split_queries = sorted(q for q, ts in by_query.items() if len(ts) > 1)
    return {"rows": len(ds), "queries": len(by_query), "templates": len(set(with_t["template"])),
            "queries_with_several_templates": split_queries, "parsed": len(ds)}


def _report_row(name: str, split, report) -> dict[str, Any]:
    return {"split": name, "train": len(split["train"]), "test": len(split["test"]),
            "D_C": report.compound_divergence, "D_A": report.atom_divergence,
            "test templates in train": f"{report.test_templates_in_train} of {report.test_templates}",
            "test rows with a train template": report.test_rows_with_train_template / max(1, report.test_rows),
            "unseen compound mass": report.unseen_compound_share}


def splits_section(ds, seed: int, targets: tuple[float, ...], language: Any = "sql") -> tuple[dict[str, Any], dict]:
    """Items 3-5: the template split, the published splits' reports, the range and the MCD splits."""
    from hf_synthsample.splits import divergence_range, divergence_sweep, split_report, template_split
    from hf_synthsample.structure import get_language

    rep = dict(column="sql_values", language="sql", text_column="question")
    out: dict[str, Any] = {"reports": []}
    tsplit = template_split(ds, "sql_values", "sql", test_size=0.25, seed=seed)
    trep = split_report(tsplit["train"], tsplit["test"], **rep)
    out["template_split"] = {"test_templates_in_train": trep.test_templates_in_train,
                             "test_templates": trep.test_templates}
    splits = {}
    for kind in ("question", "query"):
        splits[kind] = published_split(ds, kind)
        out["reports"].append(_report_row(f"{kind} split (published)", splits[kind],
                                          split_report(splits[kind]["train"], splits[kind]["test"], **rep)))
    out["reports"].append(_report_row("template split (seeded)", tsplit, trep))
    # rows of one structure (about one query) move together: the sides may be off by SIZE_TOLERANCE of the rows
    grouped = get_language(language).settings.group
    mcd = dict(column="sql_values", language=language, test_size=0.25, train_size=0.5, seed=seed,
               size_tolerance=SIZE_TOLERANCE if grouped else 0.0)  # ungrouped: the curve's splits exactly
    low, high = divergence_range(ds, **mcd)
    out["reachable_range"] = [low, high]
    usable = tuple(t for t in targets if low + 0.01 <= t <= high - 0.01)
    out["targets"] = list(usable)
    sweep = divergence_sweep(ds, list(usable), progress=False, **mcd)
    for t in usable:
        split = sweep.splits[t]
        out["reports"].append(_report_row(f"MCD target {t:g}", split, split_report(split["train"], split["test"], **rep)))
    return out, splits


def curve_section(ds, published: dict, seed: int, jobs: int, language: Any = "sql") -> dict[str, Any]:
    """Item 6: the curve on MCD splits and the same recipe on the published splits."""
    import tempfile

    from hf_synthsample.curve import CurveSettings, compositionality_curve
    from hf_synthsample.curve.training import resolve_model, train_split

    settings = CurveSettings(column="sql_values", language=language, source_column="question", target_column="sql",
                             seed=seed, jobs=jobs, threads=1, **CPU)
    curve = compositionality_curve(ds, settings=settings)
    factory = resolve_model(None, settings)
    rows = [{"split": f"MCD {r['config']}", "D_C": r["compound_divergence"], "fit": r["fit"],
             "fit reached": r["fit_reached"], "test exact match": r["test_exact_match"], "steps": r["steps"],
             "templates": r.get("template_statement") or ""} for r in curve.records]
    from hf_synthsample.processes import run_forked

    kinds = ("question", "query")

    def one(i: int) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as tmp:
            return train_split(published[kinds[i]], factory, settings, output_dir=tmp, name=kinds[i])

    for kind, r in zip(kinds, run_forked(one, len(kinds), jobs, describe=lambda i: f"the {kinds[i]} split's model")):
        rows.append({"split": f"{kind} split (published)", "D_C": None, "fit": r["fit"],
                     "fit reached": r["fit_reached"], "test exact match": r["test_exact_match"], "steps": r["steps"],
                     "templates": ""})
    return {"rows": rows, "spearman_rho": curve.spearman_rho, "settings": settings.to_record()}


def _md_table(rows: list[dict]) -> str:
    keys = list(rows[0])
    fmt = lambda v: "" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    return "\n".join(["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
                     + ["| " + " | ".join(fmt(r[k]) for k in keys) + " |" for r in rows])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=str(DEFAULT_DATA), help=f"advising.json ({SOURCE}) [%(default)s]")
    p.add_argument("--out", required=True, help="output folder (results.md, results.json)")
    p.add_argument("--seed", type=int, default=0, help="seed of the splits and the models [0]")
    p.add_argument("--targets", default="0.1,0.2,0.3,0.4,0.5", help="MCD targets (those inside the reachable range "
                                                                    "are made) [%(default)s]")
    p.add_argument("--cpu", action="store_true", help="also train the curve at CPU scale (queries of at most "
                                                     f"{MAX_SQL_TOKENS} words)")
    p.add_argument("--jobs", type=int, default=1, help="models trained at once (forked processes) [1]")
    p.add_argument("--no-group", action="store_true", help="the MCD search moves single rows, not whole structures "
                                                          "(with grouping every MCD split of Advising is a template split)")
    args = p.parse_args(argv)
    try:
        targets = tuple(float(t) for t in args.targets.split(","))
    except ValueError:
        p.error(f"--targets: expected comma-separated compound divergences, got {args.targets!r}")
    if args.jobs < 1:
        p.error(f"--jobs: must be >= 1, got {args.jobs}")
    started = time.perf_counter()
    ds = load_advising(args.data, max_sql_tokens=MAX_SQL_TOKENS if args.cpu else None)
    from hf_synthsample.splits import structure_report

    results: dict[str, Any] = {"data": SOURCE, "rows": len(ds), "seed": args.seed,
                               "command": " ".join(["python", *sys.argv])}
    from hf_synthsample.structure import get_language

    language = get_language("sql", group=not args.no_group)
    results["language"] = language.to_record()
    summary = structure_report(ds, column="sql_values", language=language, seed=args.seed)
    results["structure"] = check_structure(ds)
    splits, published = splits_section(ds, args.seed, targets, language)
    results["splits"] = splits
    if args.cpu:
        results["curve"] = curve_section(ds, published, args.seed, args.jobs, language)
    results["seconds"] = time.perf_counter() - started
    md = [f"# Advising: SQL structure and splits (seed {args.seed}, language {language!r})", "", f"Data: {SOURCE}; {len(ds):,} questions.", "",
          "## Structure of `sql_values` (language `sql`)", "", summary.to_markdown(), "",
          f"Every query parses; {results['structure']['queries']} queries, {results['structure']['templates']} "
          f"templates; queries whose questions have more than one template: "
          f"{results['structure']['queries_with_several_templates'] or 'none'}.", "",
          "## Splits", "", f"Template split: {splits['template_split']['test_templates_in_train']} of "
          f"{splits['template_split']['test_templates']} test templates in train. Reachable D_C (train 50 % / test "
          f"25 %): {splits['reachable_range'][0]:.3f}-{splits['reachable_range'][1]:.3f}.", "",
          _md_table(splits["reports"])]
    if args.cpu:
        md += ["", "## Exact match (scratch BART, trained to fit)", "", _md_table(results["curve"]["rows"]), "",
               f"Spearman rho (MCD D_C vs test exact match): {results['curve']['spearman_rho']:.2f}"]
    os.makedirs(args.out, exist_ok=True)
    Path(args.out, "results.json").write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    Path(args.out, "results.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
