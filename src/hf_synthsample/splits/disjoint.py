"""The random split a split is read against, and the structure summaries cards carry.

:func:`random_split_baseline` measures a seeded random split of a split's sizes as
:func:`~.report.split_report` measures a split (its D_C, D_A and template overlap);
:func:`describe_split` puts it, the template statement of :mod:`.overlap` and the structure summary
into a split's report; :func:`structure_report` is the structure of a dataset before any split with
that random split beside it. The measures and the rule live in :mod:`.overlap` (re-exported here).

Example:
    >>> train, test = random_indices(8, test_rows=2, seed=0)
    >>> len(train), len(test), sorted(set(train) | set(test)) == list(range(8))
    (6, 2, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..logging import get_logger
from ..settings import signature_from
from .overlap import (TEMPLATE_DISJOINT_RATIO, RandomBaseline, TemplateOverlap, check_template_disjoint,
                      template_statement, warning_advice)
from .settings import SplitSettings, settings_of

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["TEMPLATE_DISJOINT_RATIO", "TemplateOverlap", "RandomBaseline", "random_indices", "read_templates",
           "random_split_baseline", "template_statement", "check_template_disjoint", "warning_advice",
           "structure_summary", "describe_split", "structure_report", "record_template_overlap"]

logger = get_logger(__name__)

#: the fields of the split settings a structure report reads (the random split beside it)
_REPORT_FIELDS = ("column", "language", "max_height", "seed", "test_size", "train_size")

def random_indices(n: int, test_rows: int, train_rows: int | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)`` row indices (sorted) of a seeded random split of ``n`` rows with these sizes
    (train: the rest unless ``train_rows``); the split the baselines measure."""
    order = np.random.default_rng(seed).permutation(n)
    end = n if train_rows is None else test_rows + train_rows
    return np.sort(order[test_rows:end]), np.sort(order[:test_rows])


def read_templates(dataset: "Dataset", s: Any) -> list | None:
    """Each row's abstract template (``None`` where it does not parse), from split settings ``s``: its
    ``template_column``, or its program ``column`` parsed with its ``language``; ``None`` when neither is given."""
    from ..columns import column_arrow

    if s.template_column is not None:
        return column_arrow(dataset, s.template_column).to_pylist()
    if s.language is None or s.column not in dataset.column_names:
        return None
    from ..sampling.structural import StructureColumns

    src = StructureColumns(s.column, s.language, s.max_height, skip_unparsable=True, progress=False)
    return src.read(dataset.select_columns([s.column]), ["template"])[0]["template"]


def random_split_baseline(dataset: "Dataset", *, test_rows: int, train_rows: int | None = None, seed: int | None = None,
                          templates: Sequence[Any] | None = None, **report_kwargs: Any) -> RandomBaseline:
    """The :class:`RandomBaseline` of ``dataset`` for these sizes: the random split of
    :func:`random_indices` measured by :func:`~.report.split_report` (``report_kwargs``: its
    arguments, e.g. ``column``, ``language``, ``compound_weights``); ``templates`` (each row's, e.g.
    from :func:`read_templates`) spares reading them again. ``seed``: None is the split's default
    (:class:`~.settings.SplitSettings` ``seed``), so a baseline drawn for a split with no seed given is the same.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": [f"(f (g {a}) {b})" for a in "abcd" for b in "xyz"]})
        >>> b = random_split_baseline(ds, test_rows=3, language="sexpr", compound_weights=False)
        >>> (b.train_rows, b.test_rows), b.overlap.test_rows, 0 <= b.compound_divergence <= 1
        ((9, 3), 3, True)
    """
    from .report import split_report

    n = len(dataset)
    if not (1 <= test_rows < n) or (train_rows is not None and not (1 <= train_rows <= n - test_rows)):
        raise ValueError(f"test_rows, train_rows: {test_rows}, {train_rows} do not fit {n} rows (at least one row a "
                         "side, together at most all)")
    seed = SplitSettings.defaults()["seed"] if seed is None else seed
    train, test = random_indices(n, test_rows, train_rows, seed)
    out = RandomBaseline(seed=seed, train_rows=len(train), test_rows=len(test))
    report = split_report(dataset.select(train), dataset.select(test), **report_kwargs)
    out.compound_divergence, out.atom_divergence = report.compound_divergence, report.atom_divergence
    if templates is not None:
        out.overlap = TemplateOverlap.of([templates[i] for i in train], [templates[i] for i in test])
    elif report.test_templates is not None:
        out.overlap = TemplateOverlap(report.test_rows, report.test_rows_with_train_template, report.test_templates,
                                      report.test_templates_in_train)
    return out


def structure_summary(structures: Any, templates: Sequence[Any] | None, language: Any, max_height: int,
                      baseline: RandomBaseline | None = None) -> dict:
    """The compact structure summary split and curve cards carry (the keys of
    :meth:`~hf_synthsample.structure.StructureReport.summary`), from the structures a search read."""
    from ..structure import get_language

    lang = None if language is None else get_language(language)
    sizes = np.asarray(structures.sizes, dtype=np.int64)
    rows = int(sizes.sum())
    return {"rows": rows, "atoms": len(structures.atom_names), "compounds": len(structures.compound_names),
            "templates": None if templates is None else len({t for t in templates if t is not None}),
            "groups": len(sizes), "rows_per_group_mean": float(sizes.mean()) if len(sizes) else 0.0,
            "rows_per_group_max": int(sizes.max(initial=0)),
            "rows_in_shared_groups": float(sizes[sizes > 1].sum() / max(1, rows)),
            "language": None if lang is None else str(lang),
            "abstract": [] if lang is None else list(lang.settings.abstract),
            "group": True if lang is None else bool(lang.settings.group),
            "max_height": max_height if lang is None else lang.height(max_height),
            "baseline": None if baseline is None else baseline.to_dict()}


def describe_split(report: Any, dataset: "Dataset", splitter: Any, *, warn: bool = False) -> Any:
    """Add to ``report`` (a :class:`~.report.SplitReport` of ``splitter``'s last split of ``dataset``,
    measured with the weights the split command uses) the random baseline of its sizes, the template
    statement and the structure summary; returns ``report``. Used by ``hf-synthsample split``."""
    s = splitter.settings
    kwargs = dict(column=s.column, language=s.language, text_column=s.text_column, length_column=s.length_column,
                  atoms_column=s.atoms_column, compounds_column=s.compounds_column, template_column=s.template_column,
                  compound_weights=s.weights_in_effect if s.search else None, max_height=s.max_height)
    templates = getattr(splitter, "templates_", None)
    if templates is None:
        templates = read_templates(dataset, s)
    partition = report.train_rows + report.test_rows == len(dataset)
    baseline = random_split_baseline(dataset, test_rows=report.test_rows,
                                     train_rows=None if partition else report.train_rows, seed=s.seed,
                                     templates=templates, **kwargs)
    # a template split holds out templates by design: no statement for it
    report.set_baseline(baseline, warn=warn and s.method != "template", what=f"the {s.method} split",
                        language=s.language)
    if s.method == "template":
        report.template_statement = None
    structures = getattr(splitter, "structures_", None)
    if structures is not None:
        report.structure = structure_summary(structures, templates, s.language, s.max_height, baseline)
    return report


@signature_from(SplitSettings, positional=("column", "language"),
                fixed=tuple(n for n in SplitSettings.specs() if n not in _REPORT_FIELDS))
def structure_report(dataset: "Dataset", *args: Any, settings: SplitSettings | None = None, top: int = 10,
                     progress: bool | None = None, **changes: Any) -> Any:
    """The structure of ``dataset``'s program ``column`` before any split
    (:func:`hf_synthsample.structure.describe_structure`: atoms, compounds, templates, what the
    language abstracts, the structure groups) with a seeded random split of ``test_size`` (and
    ``train_size``) beside it: its D_C, D_A and shared templates, measured as a split's report
    measures them (``test_size=None``: no random split). ``settings`` and ``changes``:
    :class:`~.settings.SplitSettings`' (``column``, ``language`` also by position). Every argument is
    checked before any work.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": ["(f 1)", "(f 2)", "(g 1)", "(g (h 3))"]})
        >>> r = structure_report(ds, language="sexpr", test_size=0.5)
        >>> r.num_templates, r.baseline["test_rows"], 0.0 <= r.baseline["compound_divergence"] <= 1.0
        (3, 2, True)
    """
    from ..structure import describe_structure
    from ._data import check_test_size, check_train_size
    from .settings import _accepted

    baseline = changes.get("test_size", 0.0) is not None
    if not baseline:
        del changes["test_size"]
    s = settings_of(SplitSettings, args, settings, changes, name="structure_report")
    column, language, max_height, seed, test_size, train_size = (s.column, s.language, s.max_height, s.seed,
                                                                 s.test_size, s.train_size)
    if language is None:
        raise ValueError(f"language: give the structure language of the program column {column!r} ({_accepted()})")
    n_all = len(dataset) if hasattr(dataset, "column_names") else 0
    if baseline and n_all:
        check_train_size(train_size, check_test_size(test_size, n_all)[1], n_all)
    report = describe_structure(dataset, column, language, max_height=max_height, top=top, progress=progress)
    if not baseline:
        return report
    templates, n = report.row_templates, report.rows
    pool = dataset.select_columns([column])
    if report.unparsable:  # the baseline's report reads every row it is given: the parsed ones, at the same shares
        keep = [i for i, t in enumerate(templates) if t is not None]
        pool, templates = pool.select(keep), [templates[i] for i in keep]
        report.notes["baseline"] = f"over the {n:,} rows that parse"
    if n < 2:
        return report
    test_rows = min(max(1, int(round(test_size * n))), n - 1)
    train_rows = None if train_size is None else min(max(1, int(round(train_size * n))), n - test_rows)
    baseline = random_split_baseline(pool, test_rows=test_rows, train_rows=train_rows, seed=seed, templates=templates,
                                      column=column, language=language, max_height=report.max_height)
    report.baseline = baseline.to_dict()
    return report


def record_template_overlap(dataset: "Dataset", result: Any, s: Any, templates: list | None = None,
                            what: str | None = None, warn: bool = True) -> list | None:
    """Record on an MCD ``result`` whether its test side is also template-disjoint, beside a seeded
    random split of the same sizes (split settings ``s``), warning if so with ``warn``; returns each
    row's template (``None`` without a language or template column)."""
    if templates is None:
        templates = read_templates(dataset, s)
    if templates is None:
        return None
    test, train = result.test_indices, result.train_indices
    rtrain, rtest = random_indices(len(dataset), len(test), None if s.train_size is None else len(train), s.seed)
    split_o = TemplateOverlap.of([templates[i] for i in train], [templates[i] for i in test])
    random_o = TemplateOverlap.of([templates[i] for i in rtrain], [templates[i] for i in rtest])
    result.template_overlap = {"split": split_o.to_dict(), "random": random_o.to_dict()}
    if warn:
        result.template_statement = check_template_disjoint(split_o, random_o, what=what or f"the {s.method} split",
                                                            language=s.language)
    else:
        result.template_statement = template_statement(split_o, random_o)
    return templates
