"""What the structure of a dataset is, before any split: :func:`describe_structure`.

Atoms and compounds (distinct, the most frequent and the share of rows holding each), abstract
templates (how many, their sizes, the largest), what the language abstracts with one row shown
parsed, and the *structure groups* the MCD search moves as units (rows with identical atoms and
compounds; every row its own group with ``group=False``). The seeded random split beside it (its
D_C, D_A and shared templates) is measured by the split makers:
:func:`hf_synthsample.splits.structure_report` is this report with it (imports flow from splits to
structure, never back).

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"program": ["(f 1)", "(f 2)", "(g 1)", "(g (h 3))"]})
    >>> r = describe_structure(ds, language="sexpr")
    >>> r.num_atoms, r.num_templates, r.groups["count"], r.groups["rows_in_shared_groups"]
    (4, 3, 3, 0.5)
    >>> r.example["template"]
    '(f entity)'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..validation import check_int
from .extraction import _atoms_and_compounds
from .language import Language, get_language

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["StructureReport", "describe_structure", "summary_markdown"]


def _top(counts: Counter, rows: Counter, n_rows: int, top: int) -> list[dict]:
    return [{"value": k, "count": int(c), "row_share": rows[k] / max(1, n_rows)} for k, c in counts.most_common(top)]


@dataclass
class StructureReport:
    """The structure of a dataset's program column (see :func:`structure_report`); ``to_dict``,
    ``to_markdown``, ``summary`` (the compact form split and curve cards carry)."""

    column: str
    language: Any
    abstract: tuple
    group: bool
    max_height: int
    rows: int
    unparsable: int
    num_atoms: int
    top_atoms: list
    num_compounds: int
    top_compounds: list
    num_templates: int
    template_sizes: dict
    top_templates: list
    example: dict
    groups: dict
    baseline: dict | None = None
    notes: dict = field(default_factory=dict)
    #: each row's template (``None``: it does not parse), for the split makers' random baseline
    row_templates: list = field(default_factory=list, repr=False)

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "row_templates"}
        out["abstract"] = list(self.abstract)
        return out

    def summary(self) -> dict:
        """Counts of atoms, compounds, templates and groups, the abstraction and the random baseline."""
        return {"rows": self.rows, "atoms": self.num_atoms, "compounds": self.num_compounds,
                "templates": self.num_templates, "groups": self.groups["count"],
                "rows_per_group_mean": self.groups["mean"], "rows_per_group_max": self.groups["max"],
                "rows_in_shared_groups": self.groups["rows_in_shared_groups"], "language": self.language,
                "abstract": list(self.abstract), "group": self.group, "max_height": self.max_height,
                "baseline": self.baseline}

    def to_markdown(self) -> str:
        """The report as Markdown: the summary, the most frequent atoms, compounds and templates, one row parsed."""
        def table(items: list, what: str) -> list[str]:
            lines = [f"| {what} | count | rows holding it |", "|---|---:|---:|"]
            return lines + [f"| `{_cell(i['value'])}` | {i['count']:,} | {i['row_share']:.1%} |" for i in items]

        z = self.template_sizes
        e = self.example
        lines = [f"# Structure of `{self.column}` ({self.rows:,} rows)", "", summary_markdown(self.summary()), "",
                 "## One row, parsed", "", f"- program (row {e['row']}): `{_cell(e['program'])}`",
                 f"- tree: `{_cell(e['tree'])}`", f"- atoms: `{_cell(' '.join(e['atoms']))}`",
                 f"- compounds: {', '.join(f'`{_cell(c)}`' for c in e['compounds']) or 'none'}",
                 f"- template: `{_cell(e['template'])}`", "",
                 f"## Atoms ({self.num_atoms:,} distinct)", "", *table(self.top_atoms, "atom"), "",
                 f"## Compounds ({self.num_compounds:,} distinct, height up to {self.max_height})", "",
                 *table(self.top_compounds, "compound"), "",
                 f"## Templates ({self.num_templates:,})", "",
                 f"Rows per template: min {z['min']:,}, median {z['median']:g}, max {z['max']:,}; "
                 f"{z['singletons']:,} templates hold one row.", "", "| template | rows |", "|---|---:|",
                 *[f"| `{_cell(t['value'])}` | {t['count']:,} ({t['row_share']:.1%}) |" for t in self.top_templates]]
        if self.unparsable:
            lines += ["", f"{self.unparsable:,} rows do not parse and are left out of every figure."]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_markdown()


def _shown(node: Any) -> str:
    """The tree as an s-expression, each abstracted value as ``[value -> entity]``."""
    label = f"[{node.label} -> entity]" if node.kind == "entity" else node.label
    if not node.children:
        return label
    return "(" + label + " " + " ".join(_shown(c) for c in node.children) + ")"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("`", "'")


def summary_markdown(summary: dict) -> str:
    """A :meth:`StructureReport.summary` as Markdown: what moves together, what is abstracted, the random baseline."""
    abstract = ", ".join(summary["abstract"]) or "nothing (every value kept)"
    lines = ["| figure | value |", "|---|---|",
             f"| language | `{summary['language']}`: abstracts {abstract}; compound height {summary['max_height']} |"
             if summary["language"] else f"| language | none (structure columns); compound height {summary['max_height']} |",
             f"| rows | {summary['rows']:,} |",
             f"| distinct atoms / compounds / templates | {summary['atoms']:,} / {summary['compounds']:,} / "
             f"{'-' if summary['templates'] is None else format(summary['templates'], ',')} |",
             f"| structure groups (the unit the split search moves: rows with equal atoms and compounds"
             f"{'' if summary['group'] else '; grouping off, one row each'}) | {summary['groups']:,} "
             f"(rows per group: mean {summary['rows_per_group_mean']:.2f}, max {summary['rows_per_group_max']:,}; "
             f"{summary['rows_in_shared_groups']:.1%} of rows in groups of more than one) |"]
    b = summary.get("baseline")
    if b:
        if b.get("compound_divergence") is not None:
            lines.append(f"| a seeded random split ({b['train_rows']:,} train, {b['test_rows']:,} test, seed "
                         f"{b['seed']}): D_C / D_A | {b['compound_divergence']:.4f} / {b['atom_divergence']:.4f} |")
        o = b.get("overlap")
        if o:
            lines.append(f"| that random split: test rows whose template is in train; test templates in train | "
                         f"{o['test_rows_with_train_template'] / max(1, o['test_rows']):.1%}; "
                         f"{o['test_templates_in_train']:,} of {o['test_templates']:,} |")
    if summary["group"] and summary["templates"] and summary["groups"] <= 1.5 * summary["templates"]:
        lines += ["", f"With {summary['groups']:,} groups for {summary['templates']:,} templates, a structure is "
                  "close to a template: a split that moves whole groups tends to hold out whole templates (a "
                  "template split too). Keep some values (`abstract`) or move single rows (`group=False`, "
                  "`--no-group`) to tell the two apart."]
    return "\n".join(lines)


def describe_structure(
    dataset: "Dataset",
    column: str = "program",
    language: str | Language | None = None,
    *,
    max_height: int = 2,
    top: int = 10,
    progress: bool | None = None,
) -> StructureReport:
    """The :class:`StructureReport` of ``dataset``'s program ``column`` parsed with ``language`` (a
    name or a :class:`~.language.Language`: its ``abstract``, ``max_height`` and ``group``), without
    the random split (:func:`hf_synthsample.splits.structure_report` adds it). Rows that do not parse
    are counted and left out; none parsing is a ``ValueError``.
    """
    from datasets import Dataset

    from ..progress import progress_bar

    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a datasets.Dataset (pick a split of a DatasetDict), got "
                        f"{type(dataset).__name__}")
    if not isinstance(column, str) or column not in dataset.column_names:
        raise ValueError(f"column: no column {column!r}; columns: {dataset.column_names}")
    if language is None:
        from .language import languages

        raise ValueError(f"language: give the structure language of column {column!r}; registered languages: "
                         f"{languages()}")
    lang = get_language(language)
    height = lang.height(check_int("max_height", max_height, min=1))
    top = check_int("top", top, min=1)
    if len(dataset) == 0:
        raise ValueError("dataset has no rows")

    from ..columns import column_arrow

    programs = column_arrow(dataset, column).to_pylist()
    if any(p is not None and not isinstance(p, str) for p in programs):
        bad = next(p for p in programs if p is not None and not isinstance(p, str))
        raise TypeError(f"column: column {column!r} holds {type(bad).__name__} values; it must hold programs as str")
    atom_n, atom_rows, comp_n, comp_rows, tmpl = Counter(), Counter(), Counter(), Counter(), Counter()
    groups: Counter = Counter()
    templates: list = []
    example: dict | None = None
    unparsable = 0
    for i, program in enumerate(progress_bar(programs, desc=f"Reading {lang.name} programs", progress=progress,
                                             min_total=10_000)):
        try:
            if program is None:
                raise ValueError("null")
            tree = lang.parse(program)
        except (ValueError, TypeError, IndexError, KeyError):
            unparsable += 1
            templates.append(None)
            continue
        a, c = _atoms_and_compounds(tree, height)
        t = lang.template(tree)
        templates.append(t)
        atom_n.update(a)
        atom_rows.update(set(a))
        comp_n.update(c)
        comp_rows.update(set(c))
        tmpl[t] += 1
        groups[(tuple(sorted(a)), tuple(sorted(c))) if lang.settings.group else i] += 1
        if example is None:
            example = {"row": i, "program": program, "tree": _shown(tree), "atoms": a, "compounds": c,
                       "template": t}
    n = len(programs) - unparsable
    if not n:
        raise ValueError(f"column: no row of {column!r} parses as {lang.name!r} ({len(programs):,} rows)")
    sizes = np.asarray(sorted(tmpl.values()), dtype=np.int64)
    gs = np.asarray(list(groups.values()), dtype=np.int64)
    report = StructureReport(
        column=column, language=str(lang), abstract=tuple(lang.settings.abstract), group=bool(lang.settings.group),
        max_height=height, rows=n, unparsable=unparsable, num_atoms=len(atom_n),
        top_atoms=_top(atom_n, atom_rows, n, top), num_compounds=len(comp_n),
        top_compounds=_top(comp_n, comp_rows, n, top), num_templates=len(tmpl),
        template_sizes={"min": int(sizes.min()), "median": float(np.median(sizes)), "max": int(sizes.max()),
                        "singletons": int((sizes == 1).sum())},
        top_templates=_top(tmpl, tmpl, n, top), example=example,
        groups={"count": len(gs), "mean": float(gs.mean()), "max": int(gs.max()),
                "rows_in_shared_groups": float(gs[gs > 1].sum() / n)})
    report.row_templates = templates
    return report

