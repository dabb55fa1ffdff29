"""Structural diversity of a subset (:mod:`hf_synthsample.structure`'s diagnostics): templates,
atom / compound entropy, divergence to a reference, from a dataset's structure columns or programs.

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"program": ["(f a)", "(f b)", "(g a)"]})
    >>> rep = diversity_report(ds, reference=ds.select([0]), language="sexpr")
    >>> rep.num_templates, round(rep.atom_divergence, 3) > 0
    (3, True)
    >>> print(rep.to_markdown().splitlines()[0])
    | subset | rows | templates | atom entropy | compound entropy | template coverage | D_A | D_C |
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from ..settings import Estimator
from .settings import DiversitySettings
from .structural import StructureColumns
from ..structure.language import DEFAULT_LANGUAGE

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["DiversityReport", "DiversityReporter", "diversity_report", "compare_subsets"]


@dataclass
class DiversityReport:
    """Structural diversity figures of one subset (entropies in nats)."""

    name: str
    num_rows: int
    num_templates: int
    atom_entropy: float
    compound_entropy: float
    template_counts: dict[str, int] = field(default_factory=dict, repr=False)
    template_coverage: float | None = None
    atom_divergence: float | None = None
    compound_divergence: float | None = None

    _HEADER = ("| subset | rows | templates | atom entropy | compound entropy | template coverage | D_A | D_C |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|")

    def row(self) -> str:
        def f(x):
            return "" if x is None else f"{x:.4f}"

        return (f"| {self.name} | {self.num_rows} | {self.num_templates} | {self.atom_entropy:.4f} | "
                f"{self.compound_entropy:.4f} | {f(self.template_coverage)} | {f(self.atom_divergence)} | "
                f"{f(self.compound_divergence)} |")

    def to_markdown(self) -> str:
        """A Markdown table (for dataset cards); D_A / D_C are divergences to the reference, if given."""
        return self._HEADER + "\n" + self.row()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def plot(self, path: str) -> str:
        """Rank-frequency plot of the subset's templates (PNG); returns ``path``."""
        from ..structure import plot_template_frequencies

        return plot_template_frequencies(self.template_counts, path, title=f"{self.name}: {self.num_templates} templates")


def _structure(dataset, source: StructureColumns):
    cols, bad = source.read(dataset, ["template", "atoms", "compounds"])
    keep = set(bad.tolist())
    return [[x for i, x in enumerate(cols[c]) if i not in keep] for c in ("template", "atoms", "compounds")]


def diversity_report(dataset: "Dataset", reference: "Dataset | None" = None, *, name: str = "subset",
                     compound_weights: Mapping[str, float] | None = None, program_column: str = "program",
                     language: str = DEFAULT_LANGUAGE, max_height: int = 2, skip_unparsable: bool = False) -> DiversityReport:
    """Diversity figures of ``dataset``; with ``reference`` also the coverage of its templates and the
    divergences ``D_A`` (C_0.5), ``D_C`` (C_0.1). The keywords but ``name``: see :class:`DiversityReporter`."""
    reporter = DiversityReporter(compound_weights=compound_weights, program_column=program_column, language=language,
                                 max_height=max_height, skip_unparsable=skip_unparsable)
    return reporter.report(dataset, reference, name=name)


class DiversityReporter(Estimator):
    """:func:`diversity_report` as an estimator, configured by
    :class:`~hf_synthsample.sampling.settings.DiversitySettings`; ``report_``: the last :class:`DiversityReport`.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": ["(f a)", "(f b)", "(g a)"]})
        >>> DiversityReporter(language="sexpr").report(ds, name="all").num_templates
        3
    """

    settings_class = DiversitySettings

    def report(self, dataset: "Dataset", reference: "Dataset | None" = None, *, name: str = "subset") -> DiversityReport:
        """The figures of ``dataset`` (``name`` in tables); with ``reference``, its coverage and divergences."""
        from .. import structure as st

        weights = self.compound_weights
        source = StructureColumns.of(self.settings)
        t, a, c = _structure(dataset, source)
        rep = DiversityReport(name=name, num_rows=len(t), num_templates=len(set(t)),
                              atom_entropy=st.entropy(st.frequencies(a)),
                              compound_entropy=st.entropy(st.frequencies(c, weights)),
                              template_counts=st.template_counts(t))
        if reference is not None:
            rt, ra, rc = _structure(reference, source)
            rep.template_coverage = st.template_coverage(t, rt)[0]
            rep.atom_divergence = st.atom_divergence(a, ra)
            rep.compound_divergence = st.compound_divergence(c, rc, weights)
        self.report_ = rep
        return rep


def compare_subsets(reports: list[DiversityReport]) -> str:
    """One Markdown table with a row per report."""
    return DiversityReport._HEADER + "\n" + "\n".join(r.row() for r in reports)
