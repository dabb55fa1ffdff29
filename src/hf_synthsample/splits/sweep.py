"""Splits of one dataset from easy to hard at chosen compound divergences, the atoms held alike
(Keysers et al. 2020): :func:`run_sweep` (behind :func:`~.splitter.divergence_sweep` and
``MCDSplitter.sweep``) reads the structure once and runs the MCD search towards each target; each split is :func:`~hf_synthsample.splits.splitter.mcd_split`'s for that target
and seed, all of the same sizes. The target ``0`` is the lowest ``D_C`` the minimising search
finds; a target out of the reachable range (:func:`~.splitter.divergence_range`) is a ``ValueError``
naming it.

Example:
    >>> from datasets import Dataset
    >>> from hf_synthsample.splits import divergence_sweep
    >>> ds = Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh"
    ...                                     for a in "abcd" for b in "abc"]})
    >>> sweep = divergence_sweep(ds, [0.35, 0.45, 0.6], language="sexpr", compound_weights=False, progress=False)
    >>> [abs(sweep.compound_divergence[t] - t) <= 0.01 for t in sweep.splits]
    [True, True, True]
    >>> {(len(s["train"]), len(s["test"])) for s in sweep.splits.values()}
    {(54, 18)}
    >>> sweep.config_names
    {0.35: 'dc_0.35', 0.45: 'dc_0.45', 0.6: 'dc_0.60'}
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..progress import show_progress
from ._data import as_split, check_dataset
from .mcd import UnreachableDivergence, search
from .settings import TARGET_DECIMALS, Goal, SweepSettings, check_targets

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

    from .report import SplitReport

__all__ = ["SplitSweep", "check_targets"]

logger = logging.getLogger(__name__)


def _config_names(targets: Sequence[float]) -> dict[float, str]:
    """``dc_0.10``-style names: two decimals unless the targets need more to be told apart."""
    for d in range(2, TARGET_DECIMALS + 1):
        names = {t: f"dc_{t:.{d}f}" for t in targets}
        if len(set(names.values())) == len(targets) and all(abs(float(n[3:]) - t) < 1e-12 for t, n in names.items()):
            return names
    return {t: f"dc_{t:.{TARGET_DECIMALS}f}" for t in targets}


@dataclass
class SplitSweep:
    """Splits at chosen compound divergences (:func:`divergence_sweep`), each figure keyed by target."""

    splits: dict
    compound_divergence: dict
    atom_divergence: dict
    results: dict
    config_names: dict
    settings: dict = field(default_factory=dict)
    seconds: float = 0.0
    read_seconds: float = 0.0
    report_kwargs: dict = field(default_factory=dict, repr=False)
    _reports: dict = field(default_factory=dict, repr=False)
    #: a seeded random split of the same sizes (:class:`~.disjoint.RandomBaseline`), measured as the reports
    random_baseline: Any = None
    #: the compact structure summary of the rows (:func:`~.disjoint.structure_summary`) the card carries
    structure: dict | None = None

    @property
    def reports(self) -> "dict[float, SplitReport]":
        """Target -> :func:`~hf_synthsample.splits.report.split_report` of the split (computed once, on first use)."""
        return {t: self._report(t) for t in self.splits}

    def _report(self, t: float, progress: Any = None) -> "SplitReport":
        """The report of target ``t`` (computed once); one step of a caller's ``progress`` bar."""
        if t not in self._reports:
            from .report import split_report

            self._reports[t] = split_report(self.splits[t]["train"], self.splits[t]["test"], **self.report_kwargs)
            self._with_baseline(self._reports[t])
        if progress is not None:
            progress.update(1)
        return self._reports[t]

    def _with_baseline(self, report: "SplitReport") -> "SplitReport":
        if self.random_baseline is not None and report.random_baseline is None:
            report.set_baseline(self.random_baseline)
        return report

    @property
    def template_statements(self) -> dict:
        """Target -> "also template-disjoint: ..." (beside the random split of the same sizes) or ``None``."""
        return {t: getattr(r, "template_statement", None) for t, r in self.results.items()}

    @property
    def targets(self) -> list[float]:
        return list(self.splits)

    @property
    def sizes(self) -> dict:
        """Target -> ``{"train": rows, "test": rows, "left_out": rows}``."""
        return {t: {"train": len(s["train"]), "test": len(s["test"]), "left_out": self.results[t].num_left_out}
                for t, s in self.splits.items()}

    def __len__(self) -> int:
        return len(self.splits)

    def __iter__(self):
        return iter(self.splits)

    def __getitem__(self, target: float) -> "DatasetDict":
        return self.splits[target]

    def __repr__(self) -> str:
        figs = ", ".join(f"{t:g}: {self.compound_divergence[t]:.3f}" for t in self.splits)
        first = next(iter(self.sizes.values()))
        return (f"SplitSweep({len(self)} splits, D_C by target {{{figs}}}, train {first['train']:,}, "
                f"test {first['test']:,}, {self.seconds:.1f}s)")

    def to_markdown(self) -> str:
        """One row per split: target, config, D_C, D_A, sizes, unseen compound share, search time."""
        lines = ["| config | target D_C | D_C | D_A | train | test | left out | test compound mass unseen in train "
                 "| search s |", "|---|---|---|---|---|---|---|---|---|"]
        reports = self.reports
        for t, name in self.config_names.items():
            z, r = self.sizes[t], reports[t]
            lines.append(f"| `{name}` | {t:g} | {self.compound_divergence[t]:.4f} | {self.atom_divergence[t]:.4f} | "
                         f"{z['train']:,} | {z['test']:,} | {z['left_out']:,} | {r.unseen_compound_share:.1%} | "
                         f"{self.results[t].seconds:.1f} |")
        b = self.random_baseline
        if b is not None:
            lines += ["", f"Beside {b.describe()}."]
        marked = {t: x for t, x in self.template_statements.items() if x}
        if marked:
            lines += ["", "**Template-disjoint splits** (rows of one structure move together): " + "; ".join(
                f"`{self.config_names[t]}` is {x}" for t, x in marked.items()) + "."]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_markdown()

    def save(self, folder: str, *, if_exists: str = "error", provenance: Mapping[str, Any] | None = None,
             title: str | None = None, plots: bool = True, license: str | None = None, card_text: str = "",
             extra_files: Mapping[str, Any] | None = None, metadata: Mapping[str, Any] | None = None,
             progress: Any = None) -> str:
        """Write the sweep as one Hub-layout folder (a config per target, ``dc_0.10``) whose card holds
        the table, each split's report and plot; ``card_text``, ``extra_files`` and ``metadata`` add a
        caller's results; ``progress``: a ``tqdm`` bar advanced per report and plot. Returns the folder.

        Example:
            >>> import tempfile, datasets
            >>> from hf_synthsample.splits import divergence_sweep
            >>> ds = datasets.Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq"
            ...                                  for f in "fgh" for a in "abcd" for b in "abc"]})
            >>> sweep = divergence_sweep(ds, [0.45, 0.6], language="sexpr", compound_weights=False, progress=False)
            >>> out = sweep.save(tempfile.mkdtemp() + "/sweep", plots=False)
            >>> sorted(len(datasets.load_dataset(out, name)["test"]) for name in ("dc_0.45", "dc_0.60"))
            [18, 18]
        """
        import yaml

        from ..hub import write_hub_folder
        from ..hub.card import redact_local_paths
        from .report import _jsonable

        reports = {t: self._report(t, progress) for t in self.splits}
        # no local folders in a card (the metadata is redacted by the writer; the body here)
        settings = redact_local_paths({**self.settings, **dict(provenance or {})})
        body = [f"# {title or 'Compound-divergence sweep'}", "",
                f"Made with hf-synthsample: {len(self)} train/test splits of the same rows at chosen compound "
                f"divergences (MCD search towards each target, Keysers et al. 2020), each with the same sizes and "
                f"the atom divergence within {settings.get('max_atom_divergence')}. One config per target: "
                f"`datasets.load_dataset(folder, \"{next(iter(self.config_names.values()))}\")`.", "",
                *([card_text, ""] if card_text else []), self.to_markdown(), "", "## Settings", "", "```yaml",
                yaml.safe_dump(_jsonable(settings), sort_keys=False, allow_unicode=True).strip(), "```"]
        if self.structure:
            from ..structure.summary import summary_markdown

            body += ["", "## Structure of the data", "", summary_markdown(self.structure)]
        meta_splits = {}
        extra = dict(extra_files or {})  # the plots are drawn inside the folder's temp copy by write_hub_folder (nothing in /tmp)
        for t, name in self.config_names.items():
            report = reports[t]
            body += ["", f"## `{name}`: target D_C {t:g}", "", report.to_markdown()]
            if plots:
                rel = f"plots/{name}.png"
                extra[rel] = report.plot if progress is None else _advancing(report.plot, progress)
                body += ["", f"![split report of {name}]({rel})"]
            r = self.results[t]
            meta_splits[name] = {"target": t, "compound_divergence": self.compound_divergence[t],
                                 "atom_divergence": self.atom_divergence[t],
                                 "search_compound_divergence": r.compound_divergence, **self.sizes[t],
                                 "stop_reason": r.stop_reason, "seconds": round(r.seconds, 2),
                                 "template_statement": getattr(r, "template_statement", None),
                                 "split_report": report.to_dict()}
        if if_exists == "add":  # the configs of an earlier sweep the folder keeps stay described
            earlier_splits, earlier_sections = _earlier_sweep(folder, set(meta_splits))
            meta_splits = {**earlier_splits, **meta_splits}
            if earlier_sections:
                body += ["", "## Splits of an earlier sweep in this folder", "", *earlier_sections]
        sweep_meta = {"settings": settings, "splits": meta_splits}
        if self.structure:
            sweep_meta["structure"] = self.structure
        meta = {"hf_synthsample": {"split_sweep": _jsonable(sweep_meta),
                                   **_jsonable(dict(metadata or {}))}}
        out = write_hub_folder(folder, {self.config_names[t]: s for t, s in self.splits.items()},
                               body="\n".join(body), metadata=meta, extra_files=extra, if_exists=if_exists,
                               license=license)
        return str(out)


def _earlier_sweep(folder: str, replaced: set) -> tuple[dict, list[str]]:
    """``(splits, sections)`` of the sweep card already in ``folder``: its YAML records and its
    Markdown sections (``## `name`...``) of the configs not in ``replaced``, which an ``"add"`` keeps."""
    import re
    from pathlib import Path

    from ..hub.card import read_card

    meta, text = read_card(Path(folder) / "README.md")
    splits = ((meta.get("hf_synthsample") or {}).get("split_sweep") or {}).get("splits") or {}
    kept = {name: record for name, record in splits.items() if name not in replaced}
    sections = []
    for name in kept:
        found = re.search(r"^## `" + re.escape(name) + r"`.*?(?=^## |\Z)", text, flags=re.M | re.S)
        if found:
            sections.append(found.group(0).strip())
    return kept, sections


def run_sweep(dataset: "Dataset", s: SweepSettings, *, progress: bool | None = None) -> SplitSweep:
    """The sweep of :func:`divergence_sweep` for settings ``s``."""
    from tqdm.auto import tqdm

    from ._data import settings_structures
    from .report import split_report

    targets = list(s.targets)
    check_dataset(dataset)
    text = s.text_column or s.column
    if text not in dataset.column_names:  # the reports read it (duplicates, lengths): say so before the work
        raise ValueError(f"{'text_column' if s.text_column else 'column'}: no column {text!r} for the split reports "
                         f"(duplicates, lengths); columns: {dataset.column_names}")
    if progress is None:
        progress = show_progress(None, None)
    t0 = time.perf_counter()
    st = settings_structures(dataset, s, templates=s.template_column is None)
    read_seconds = time.perf_counter() - t0
    # the extremes first: an unreachable target fails before the others are searched
    order = sorted(range(len(targets)), key=lambda i: (i not in (0, len(targets) - 1), i))
    results: dict = {}
    # a caller's bar (one for its whole job: hf-synthsample split --sweep) is advanced, not replaced
    own = not hasattr(progress, "update")
    bar = tqdm(total=len(targets), disable=not progress, desc="divergence sweep", unit=" split") if own else progress
    try:
        for i in order:
            t = targets[i]
            # 0 is the lowest D_C the search finds (the minimising search), not a D_C of 0
            goal = Goal("min") if t == 0.0 else Goal("target", t)
            try:
                res = search(st, s, goal=goal, progress=False)
            except UnreachableDivergence as err:
                raise err.named("targets") from err
            if goal.is_target and abs(res.compound_divergence - t) > s.divergence_tolerance:
                # a time or step limit stopped it
                limit = "time_limit" if res.stop_reason == "time limit" else "max_steps"
                raise ValueError(f"{limit}: the search for target {t} stopped ({res.stop_reason}) at D_C "
                                 f"{res.compound_divergence:.4f}, outside divergence_tolerance "
                                 f"{s.divergence_tolerance}; raise {limit} or leave it out")
            logger.info("sweep target %s: %r", t, res)
            results[t] = res
            bar.update(1)
            bar.set_postfix(target=f"{t:g}", D_C=f"{res.compound_divergence:.4f}")
    finally:
        if own:
            bar.close()
    report_kwargs = dict(column=s.column, language=s.language, text_column=s.text_column,
                         compound_weights=s.compound_weights, max_height=s.max_height, atoms_column=s.atoms_column,
                         compounds_column=s.compounds_column, template_column=s.template_column,
                         length_column=s.length_column)
    splits, reports, dc, da = {}, {}, {}, {}
    for t in targets:
        res = results[t]
        split = as_split(dataset, res.test_indices, res.train_indices)
        split.mcd_result = res
        splits[t] = split
        if res.num_left_out == 0 and not len(st.unparsable):
            # a partition: the report's pool (train + test) is the search's, weights included
            dc[t], da[t] = res.compound_divergence, res.atom_divergence
        else:
            reports[t] = split_report(split["train"], split["test"], **report_kwargs)
            dc[t], da[t] = reports[t].compound_divergence, reports[t].atom_divergence
    out = SplitSweep(splits=splits, compound_divergence=dc, atom_divergence=da, results=results,
                     config_names=_config_names(targets), settings={**s.to_record(), "num_rows": len(dataset)},
                     seconds=time.perf_counter() - t0, read_seconds=read_seconds, report_kwargs=report_kwargs,
                     _reports=reports)
    _describe(out, dataset, s, st)
    logger.info("%r", out)
    return out


def _describe(sweep: SplitSweep, dataset: "Dataset", s: SweepSettings, st: Any) -> None:
    """The sweep's random baseline (the first split's sizes, the sweep's seed), each split's template
    statement (one warning for all, issue 43) and the structure summary."""
    from .disjoint import (random_split_baseline, read_templates, record_template_overlap, structure_summary,
                           warning_advice)

    templates = st.templates if st.templates is not None else read_templates(dataset, s)
    for res in sweep.results.values():  # quietly: one warning below names every split
        if templates is not None:
            record_template_overlap(dataset, res, s, templates, warn=False)
    first = next(iter(sweep.sizes.values()))
    structural = s.language is not None or (s.atoms_column is not None and s.compounds_column is not None)
    if structural or templates is not None:
        sweep.random_baseline = random_split_baseline(
            dataset, test_rows=first["test"], train_rows=first["train"], seed=s.seed,
            templates=templates, **sweep.report_kwargs)
        for report in sweep._reports.values():
            sweep._with_baseline(report)
    sweep.structure = structure_summary(st, templates, s.language, s.max_height, sweep.random_baseline)
    marked = {t: x for t, x in sweep.template_statements.items() if x}
    if marked:
        logger.warning("the splits at D_C target(s) %s are %s%s", ", ".join(f"{t:g}" for t in marked),
                       next(iter(marked.values())) if len(marked) == 1 else
                       "; ".join(f"{t:g}: {x}" for t, x in marked.items()), warning_advice(s.language))


def _advancing(draw: Any, bar: Any) -> Any:
    """``draw(path)`` (a plot written into the folder's temp copy), then one step of ``bar``."""
    def drawn(path: str) -> Any:
        out = draw(path)
        bar.update(1)
        return out

    return drawn
