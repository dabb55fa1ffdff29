"""What a train/test split holds out, and what leaks: :func:`split_report` and :func:`save_split`.

Sizes; with structure, the atom and compound divergences (Keysers et al. 2020), unseen test atoms
and compound mass; template overlap; exact and near-duplicate leakage (:func:`normalize_text`); lengths.

Example:
    >>> from datasets import Dataset
    >>> train = Dataset.from_dict({"program": ["(a (b x))", "(a (c y))", "(d x)"]})
    >>> test = Dataset.from_dict({"program": ["(a (b y))", "(D  x)"]})
    >>> r = split_report(train, test, language="sexpr", compound_weights=False)
    >>> r.exact_duplicates, r.near_duplicates, r.unseen_atoms
    (0, 1, ['D'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..settings import signature_from
from .settings import SplitSettings, settings_of

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

__all__ = ["SplitReport", "split_report", "normalize_text", "save_split"]

_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_PUNCT = re.compile(r"[^\w\s\"]")
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def normalize_text(text: Any) -> str:
    """The near-duplicate key: lower case, quoted values as ``"v"``, digits as ``0``, punctuation dropped.

    Example:
        >>> normalize_text('Show me hotels with 4 stars, near "Palo Alto"!')
        'show me hotels with 0 stars near "v"'
    """
    t = str(text).lower()
    t = _QUOTED.sub('"v"', t)
    t = _DIGITS.sub("0", t)
    t = _PUNCT.sub(" ", t)
    return _SPACE.sub(" ", t).strip()


@dataclass
class SplitReport:
    """Figures of one train/test split (see :func:`split_report`)."""

    train_rows: int
    test_rows: int
    text_column: str
    exact_duplicates: int
    near_duplicates: int
    lengths: dict
    atom_divergence: float | None = None
    compound_divergence: float | None = None
    unseen_atoms: list = field(default_factory=list)
    unseen_compound_share: float | None = None
    test_templates: int | None = None
    test_templates_in_train: int | None = None
    test_rows_with_train_template: int | None = None
    notes: dict = field(default_factory=dict)
    #: a seeded random split of the same sizes (:class:`~.disjoint.RandomBaseline` as a dict), when measured
    random_baseline: dict | None = None
    #: "also template-disjoint: ..." when the test side shares far fewer templates with train than the
    #: random split does (:func:`~.disjoint.template_statement`), else ``None``
    template_statement: str | None = None
    #: a compact summary of the data's structure (:meth:`~hf_synthsample.structure.StructureReport.summary`)
    structure: dict | None = None
    _length_values: dict = field(default_factory=dict, repr=False)
    _compound_freqs: tuple | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    @property
    def template_overlap(self) -> Any:
        """The test side's :class:`~.disjoint.TemplateOverlap` with train (``None`` without templates)."""
        from .overlap import TemplateOverlap

        if self.test_templates is None:
            return None
        return TemplateOverlap(self.test_rows, self.test_rows_with_train_template, self.test_templates,
                               self.test_templates_in_train)

    def set_baseline(self, baseline: Any, *, warn: bool = False, what: str = "the split",
                     language: Any = None) -> "SplitReport":
        """Record a :class:`~.disjoint.RandomBaseline` (or its dict) and the template statement it gives
        (logged as a warning with ``warn``); returns ``self``."""
        from .overlap import RandomBaseline, TemplateOverlap, check_template_disjoint, template_statement

        if isinstance(baseline, dict):
            overlap = baseline.get("overlap")
            baseline = RandomBaseline(**{**baseline, "overlap": TemplateOverlap(**overlap) if overlap else None})
        if not isinstance(baseline, RandomBaseline):
            raise TypeError(f"baseline must be a RandomBaseline or its dict, got {type(baseline).__name__}")
        self.random_baseline = baseline.to_dict()
        check = check_template_disjoint if warn else (lambda o, r, **_: template_statement(o, r))
        self.template_statement = check(self.template_overlap, baseline, what=what, language=language)
        return self

    def structure_markdown(self) -> str:
        """The structure summary (when recorded) as Markdown lines, else ``""``."""
        if not self.structure:
            return ""
        from ..structure.summary import summary_markdown

        return summary_markdown(self.structure)

    def to_markdown(self) -> str:
        """The report as a Markdown table."""
        n = self.test_rows
        rows = [("train rows", f"{self.train_rows:,}"), ("test rows", f"{self.test_rows:,} "
                f"({self.test_rows / max(1, self.train_rows + self.test_rows):.1%})")]
        if self.compound_divergence is not None:
            rows += [("compound divergence (1 - C_0.1)", f"{self.compound_divergence:.4f}"),
                     ("atom divergence (1 - C_0.5)", f"{self.atom_divergence:.4f}"),
                     ("test compound mass unseen in train", f"{self.unseen_compound_share:.1%}"),
                     ("test atoms missing from train", ", ".join(map(str, self.unseen_atoms[:10])) +
                      (" ..." if len(self.unseen_atoms) > 10 else "") if self.unseen_atoms else "none")]
        if self.test_templates is not None:
            rows += [("test templates also in train", f"{self.test_templates_in_train:,} of {self.test_templates:,}"),
                     ("test rows whose template is in train",
                      f"{self.test_rows_with_train_template:,} ({self.test_rows_with_train_template / max(1, n):.1%})")]
        b = self.random_baseline
        if b is not None:
            if b.get("compound_divergence") is not None:
                rows.append(("a random split of the same sizes: D_C / D_A",
                             f"{b['compound_divergence']:.4f} / {b['atom_divergence']:.4f} (seed {b['seed']})"))
            o = b.get("overlap")
            if o:
                rows.append(("a random split of the same sizes: test rows whose template is in train",
                             f"{o['test_rows_with_train_template']:,} of {o['test_rows']:,} "
                             f"({o['test_rows_with_train_template'] / max(1, o['test_rows']):.1%}); "
                             f"{o['test_templates_in_train']:,} of {o['test_templates']:,} test templates"))
        if self.template_statement:
            rows.append(("**template-disjoint**", f"**{self.template_statement}**"))
        rows += [(f"exact duplicates (`{self.text_column}` of a test row equals a train row's)",
                  f"{self.exact_duplicates:,} ({self.exact_duplicates / max(1, n):.1%})"),
                 ("near duplicates (equal once normalized)", f"{self.near_duplicates:,} ({self.near_duplicates / max(1, n):.1%})")]
        for side in ("train", "test"):
            s = self.lengths[side]
            rows.append((f"{side} length ({self.lengths['unit']}): mean / median / min / max",
                         f"{s['mean']:.1f} / {s['median']:.0f} / {s['min']:.0f} / {s['max']:.0f}"))
        lines = ["| figure | value |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_markdown()

    def plot(self, path: str) -> str:
        """Length histograms of both sides and, with structure, train vs test compound frequencies (PNG)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ..atomic import save_figure_atomic

        panels = 2 if self._compound_freqs is not None else 1
        fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 3.6))
        axes = np.atleast_1d(axes)
        ax = axes[0]
        tr, te = self._length_values["train"], self._length_values["test"]
        hi = max(float(np.max(tr, initial=0)), float(np.max(te, initial=0)))
        bins = np.arange(0, hi + 2) - 0.5 if hi <= 80 else 40
        ax.hist(tr, bins=bins, alpha=0.6, density=True, label=f"train ({self.train_rows:,})")
        ax.hist(te, bins=bins, alpha=0.6, density=True, label=f"test ({self.test_rows:,})")
        ax.set_xlabel(f"length ({self.lengths['unit']})")
        ax.set_ylabel("share of rows")
        ax.legend()
        if panels == 2:
            _compound_panel(axes[1], *self._compound_freqs)
            axes[1].set_title(f"D_C = {self.compound_divergence:.3f}, D_A = {self.atom_divergence:.3f}")
        if self.template_statement:  # what the split also is, over both panels
            import textwrap

            fig.suptitle(textwrap.fill(self.template_statement[:1].upper() + self.template_statement[1:],
                                       width=60 * panels), fontsize=9, color="tab:red")
        fig.tight_layout()
        return save_figure_atomic(fig, path, dpi=100)


def _compound_panel(ax: Any, p: np.ndarray, q: np.ndarray) -> None:
    """Train vs test frequency of each compound (log-log); one side's absent ones on an "absent" line."""
    floor = 0.5 * min(p[p > 0].min(initial=1.0), q[q > 0].min(initial=1.0))
    both, train_only, test_only = (p > 0) & (q > 0), (p > 0) & (q <= 0), (p <= 0) & (q > 0)
    ax.scatter(p[both], q[both], s=4, alpha=0.4, label=f"on both sides ({int(both.sum()):,})")
    if train_only.any():
        ax.scatter(p[train_only], np.full(int(train_only.sum()), floor), s=10, marker="v", color="tab:orange",
                   label=f"absent from test ({int(train_only.sum()):,})")
    if test_only.any():
        ax.scatter(np.full(int(test_only.sum()), floor), q[test_only], s=10, marker="<", color="tab:red",
                   label=f"absent from train ({int(test_only.sum()):,})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    if train_only.any() or test_only.any():
        ax.axvline(floor, color="grey", lw=0.5, ls=":")
        ax.axhline(floor, color="grey", lw=0.5, ls=":")
        for axis in (ax.xaxis, ax.yaxis):
            axis.remove_overlapping_locs = False  # the mark stays even where it falls on a power of 10
            axis.set_ticks([floor], labels=["absent"], minor=True)
        ax.legend(fontsize="small")
    ax.set_xlabel("compound frequency in train")
    ax.set_ylabel("compound frequency in test")


def _lengths(ds: "Dataset", text_column: str, length_column: str | None) -> np.ndarray:
    from ..columns import column_arrow

    if length_column is not None:
        return np.asarray(column_arrow(ds, length_column).to_pylist(), dtype=np.float64)
    return np.asarray([len(str(t).split()) for t in column_arrow(ds, text_column).to_pylist()], dtype=np.float64)


def _stats(x: np.ndarray) -> dict:
    if not len(x):
        return {"mean": 0.0, "median": 0.0, "min": 0.0, "max": 0.0}
    return {"mean": float(x.mean()), "median": float(np.median(x)), "min": float(x.min()), "max": float(x.max())}


#: the fields of the split settings a report reads
_REPORT_FIELDS = ("column", "language", "text_column", "length_column", "compound_weights", "max_height",
                  "atoms_column", "compounds_column", "template_column")


@signature_from(SplitSettings, positional=("column", "language"),
                fixed=tuple(n for n in SplitSettings.specs() if n not in _REPORT_FIELDS))
def split_report(train: "Dataset", test: "Dataset", *args: Any, settings: SplitSettings | None = None,
                 baseline: Any = None, **changes: Any) -> SplitReport:
    """Report on a train/test split; ``settings`` and ``changes``: :class:`~.settings.SplitSettings`'
    (``column`` and ``language`` also by position). The structural figures need ``language`` (or
    ``atoms_column`` and ``compounds_column``). ``text_column`` (default ``column``) is checked for
    duplicates and measured in words unless ``length_column`` is given; templates: ``template_column``
    or the language's. ``baseline``: a :class:`~.disjoint.RandomBaseline` of the same sizes to report
    beside the split (:meth:`SplitReport.set_baseline`: with it, the template statement).
    """
    from datasets import concatenate_datasets

    from ..columns import column_arrow

    s = settings_of(SplitSettings, args, settings, changes, name="split_report")
    column, language, text_column, length_column, compound_weights, max_height, atoms_column, compounds_column, \
        template_column = (getattr(s, n) for n in _REPORT_FIELDS)

    sides = {"train": train, "test": test}
    for name, ds in sides.items():
        if not hasattr(ds, "column_names"):
            raise TypeError(f"{name} must be a datasets.Dataset, got {type(ds).__name__}")
        if not len(ds):
            raise ValueError(f"{name} has no rows")
    text_column = text_column or column
    for arg, col in (("text_column", text_column), ("length_column", length_column), ("template_column", template_column)):
        for name, ds in sides.items():
            if col is not None and col not in ds.column_names:
                raise ValueError(f"{arg}: no column {col!r} in {name}; columns: {ds.column_names}")
    from ..sampling.base import check_column_values
    from ._data import _bad_rows, check_compound_weights, check_template_column

    compound_weights = check_compound_weights(compound_weights)  # read_structures takes it checked
    text_arg = "text_column" if text_column != column else "column"
    for name, ds in sides.items():  # types and nulls before any work
        ok = check_column_values(ds, text_column, kind="scalar", missing="drop", name=text_arg)
        if ok is not None:  # a null text would be an "exact duplicate" of any other null
            raise ValueError(f"{text_arg}: column {text_column!r} of {name}: {_bad_rows(~ok, 'are null')}; fill them "
                             "or leave those rows out first (dataset.filter)")
        if template_column is not None:
            check_template_column(ds, template_column)
        if length_column is not None:
            ok = check_column_values(ds, length_column, kind="numeric", missing="drop", name="length_column")
            if ok is not None:
                raise ValueError(f"length_column: column {length_column!r} of {name}: "
                                 f"{_bad_rows(~ok, 'have no length (null or NaN)')}; fill them or leave those rows "
                                 "out first (dataset.filter)")
    texts = {s: column_arrow(ds, text_column).to_pylist() for s, ds in sides.items()}
    train_exact = set(map(str, texts["train"]))
    train_near = {normalize_text(t) for t in texts["train"]}
    exact = sum(str(t) in train_exact for t in texts["test"])
    near = sum(normalize_text(t) in train_near for t in texts["test"])
    lv = {s: _lengths(ds, text_column, length_column) for s, ds in sides.items()}
    report = SplitReport(
        train_rows=len(train), test_rows=len(test), text_column=text_column, exact_duplicates=int(exact),
        near_duplicates=int(near),
        lengths={"unit": length_column or "words", "train": _stats(lv["train"]), "test": _stats(lv["test"])},
        _length_values=lv,
    )
    st = None
    if language is not None or (atoms_column is not None and compounds_column is not None):
        from ._data import read_structures
        from ._engine import Engine

        cols = sorted({c for c in (column if language is not None else None, atoms_column, compounds_column) if c})
        both = concatenate_datasets([train.select_columns(cols), test.select_columns(cols)])
        side = np.concatenate([np.zeros(len(train), np.int64), np.ones(len(test), np.int64)])
        st = read_structures(both, column=column, language=language, max_height=max_height, atoms_column=atoms_column,
                             compounds_column=compounds_column, compound_weights=compound_weights, side=side,
                             templates=template_column is None)
        e = Engine(st.sizes, st.atoms, st.compounds, np.asarray(st.group_side, dtype=np.int8).copy())
        report.atom_divergence = e.atom_divergence
        report.compound_divergence = e.compound_divergence
        unseen = np.flatnonzero((e.A.Q > 0) & (e.A.P < 0.5))
        report.unseen_atoms = sorted(str(st.atom_names[a]) for a in unseen)
        report.unseen_compound_share = float(e.C.Q[e.C.P <= 0].sum() / max(e.C.SQ, 1e-300))
        report._compound_freqs = (e.C.P / max(e.C.SP, 1e-300), e.C.Q / max(e.C.SQ, 1e-300))
    if template_column is not None or language is not None:
        if st is not None and st.templates is not None:  # read in the same parse as the structure
            tt = {"train": st.templates[:len(train)], "test": st.templates[len(train):]}
        elif template_column is not None:
            tt = {s: column_arrow(ds, template_column).to_pylist() for s, ds in sides.items()}
        else:
            from ..sampling.structural import StructureColumns

            src = StructureColumns(column, language)
            tt = {s: src.read(ds, ["template"])[0]["template"] for s, ds in sides.items()}
        train_t = set(tt["train"])
        test_t = set(tt["test"])
        report.test_templates = len(test_t)
        report.test_templates_in_train = len(test_t & train_t)
        report.test_rows_with_train_template = int(sum(t in train_t for t in tt["test"]))
    if baseline is not None:
        report.set_baseline(baseline)
    return report


def save_split(
    split: "DatasetDict",
    folder: str,
    report: SplitReport | None = None,
    *,
    config_name: str = "default",
    provenance: Mapping[str, Any] | None = None,
    title: str | None = None,
    if_exists: str = "error",
    license: str | None = None,
) -> str:
    """Write ``split`` as a Hub-layout folder whose card carries the report, its plot, the provenance
    and ``license``; returns the folder.

    Example:
        >>> import tempfile, datasets
        >>> from hf_synthsample.splits import random_split
        >>> ds = datasets.Dataset.from_dict({"program": ["(a x)", "(a y)", "(b x)", "(b y)"]})
        >>> s = random_split(ds, test_size=0.5, seed=0)
        >>> out = save_split(s, tempfile.mkdtemp() + "/split", split_report(s["train"], s["test"]))
        >>> sorted(datasets.load_dataset(out, "default"))
        ['test', 'train']
    """
    import yaml

    from ..hub import write_hub_folder
    from ..hub.card import check_license
    from ..validation import check_path

    check_path("folder", folder)
    if set(split) != {"train", "test"}:
        raise ValueError(f"split must have exactly the splits 'train' and 'test', got {sorted(split)}")
    check_license(license)
    provenance = dict(provenance or {})
    body = [f"# {title or 'Train/test split'}", "",
            f"Made with hf-synthsample: {len(split['train']):,} train rows, {len(split['test']):,} test rows."]
    if provenance:
        body += ["", "## Provenance", "", "```yaml",
                 yaml.safe_dump(provenance, sort_keys=False, allow_unicode=True).strip(), "```"]
    extra, meta = {}, {"hf_synthsample": {"split": provenance}}
    if report is not None:
        if report.template_statement:
            body += ["", f"**Note: this split is {report.template_statement}.** Rows of one structure moved together "
                     "and values were abstracted; see the structure of the data below."]
        body += ["", "## Split report", "", report.to_markdown(), "", "![split report](split_report.png)"]
        if report.structure:
            body += ["", "## Structure of the data", "", report.structure_markdown()]
        extra["split_report.png"] = report.plot  # drawn inside the folder's temp copy
        meta["hf_synthsample"]["split_report"] = _jsonable(report.to_dict())
    out = write_hub_folder(folder, {config_name: split}, body="\n".join(body), metadata=meta,
                           extra_files=extra, if_exists=if_exists, license=license)
    return str(out)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value

