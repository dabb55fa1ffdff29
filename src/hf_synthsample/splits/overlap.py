"""Is a split also a template split? The test side's template overlap with training beside a seeded
random split's of the same sizes (the measures and the rule; :mod:`.disjoint` makes the random split).

With every value abstracted, a structure (the atoms and compounds of a row) is close to an abstract
template, and the MCD search moves rows of one structure together (``LanguageSettings.group``): the
test side may then hold only templates training lacks, a template split as well as a
compound-divergence one. :func:`template_statement` says so when

    the share of test rows whose template occurs in train < ``TEMPLATE_DISJOINT_RATIO`` (1/2)
    x that share for a seeded random split of the same sizes,

and :func:`check_template_disjoint` also logs it as a warning. :func:`random_split_baseline` gives
the random split's D_C, D_A and template overlap, measured as :func:`~.report.split_report` measures a
split (the D_C with the weights the cards use).

Example:
    >>> split = TemplateOverlap.of(["t1", "t1", "t2"], ["t3", "t4"])
    >>> rand = TemplateOverlap.of(["t1", "t3"], ["t1", "t2", "t4"])
    >>> template_statement(split, rand)
    'also template-disjoint: 100 % of test rows have a template no training row has (a random split of the same sizes: 67 %)'
    >>> template_statement(rand, rand) is None
    True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable

from ..logging import get_logger

__all__ = ["TEMPLATE_DISJOINT_RATIO", "TemplateOverlap", "RandomBaseline", "template_statement",
           "check_template_disjoint", "warning_advice"]

logger = get_logger("hf_synthsample.splits.disjoint")  # the warning's logger, as before the move

#: a split is stated (and warned about) as template-disjoint when the share of its test rows whose
#: template occurs in train is below this fraction of a same-sized random split's share
TEMPLATE_DISJOINT_RATIO = 0.5


@dataclass(frozen=True)
class TemplateOverlap:
    """How much of a test side's templates occur in train: rows and distinct templates."""

    test_rows: int
    test_rows_with_train_template: int
    test_templates: int
    test_templates_in_train: int

    @classmethod
    def of(cls, train_templates: Iterable[Any], test_templates: Iterable[Any]) -> "TemplateOverlap":
        """From each side's templates (``None``, an unparsable row, is left out)."""
        train = {t for t in train_templates if t is not None}
        test = [t for t in test_templates if t is not None]
        distinct = set(test)
        return cls(len(test), int(sum(t in train for t in test)), len(distinct), len(distinct & train))

    @property
    def row_share(self) -> float:
        """Share of test rows whose template occurs in train."""
        return self.test_rows_with_train_template / max(1, self.test_rows)

    @property
    def template_share(self) -> float:
        """Share of the test side's distinct templates that occur in train."""
        return self.test_templates_in_train / max(1, self.test_templates)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class RandomBaseline:
    """A seeded random split of a split's sizes: its D_C and D_A (``None`` without structure) and
    its template overlap (``None`` without templates), the reference a split is read against."""

    seed: int
    train_rows: int
    test_rows: int
    compound_divergence: float | None = None
    atom_divergence: float | None = None
    overlap: TemplateOverlap | None = None

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "overlap"}
        out["overlap"] = None if self.overlap is None else self.overlap.to_dict()
        return out

    def describe(self) -> str:
        """One line: ``a seeded random split of the same sizes (seed 0): D_C 0.069, D_A 0.004, ...``."""
        parts = []
        if self.compound_divergence is not None:
            parts.append(f"D_C {self.compound_divergence:.3f}, D_A {self.atom_divergence:.3f}")
        if self.overlap is not None:
            o = self.overlap
            parts.append(f"{o.test_templates_in_train:,} of {o.test_templates:,} test templates in train, "
                         f"{o.row_share:.0%} of test rows with a training template")
        return f"a seeded random split of the same sizes (seed {self.seed}): " + ("; ".join(parts) or "no structure")


def template_statement(overlap: TemplateOverlap | None, random: TemplateOverlap | RandomBaseline | float | None,
                       ratio: float = TEMPLATE_DISJOINT_RATIO) -> str | None:
    """``"also template-disjoint: ..."`` when the share of test rows with a training template is below
    ``ratio`` x the random split's (``random``: its overlap, baseline or share), else ``None``."""
    if isinstance(random, RandomBaseline):
        random = random.overlap
    if overlap is None or random is None:
        return None
    share = random.row_share if isinstance(random, TemplateOverlap) else float(random)
    if share <= 0 or not overlap.test_rows or overlap.row_share >= ratio * share:
        return None
    what = "also template-disjoint" if overlap.test_rows_with_train_template == 0 else "close to a template split"
    return (f"{what}: {100 * (1 - overlap.row_share):.0f} % of test rows have a template no training row has (a "
            f"random split of the same sizes: {100 * (1 - share):.0f} %)")


def warning_advice(language: Any) -> str:
    """What to change, for a warning: with grouping on, keep some values or move single rows."""
    settings = getattr(language, "settings", None)
    if settings is None and isinstance(language, str):
        from ..structure import get_language

        settings = get_language(language).settings
    if settings is None or not settings.group:
        return ""
    return (" (rows of one structure move together and values are abstracted; to tell compound divergence from "
            "template novelty keep some values, abstract=('entity',) / --abstract entity, or move single rows, "
            "group=False / --no-group; `hf-synthsample structure` shows the data's structure)")


def check_template_disjoint(overlap: TemplateOverlap | None, random: TemplateOverlap | RandomBaseline | float | None,
                            *, what: str = "the split", language: Any = None) -> str | None:
    """:func:`template_statement`, logged as a warning (with what to change) when there is one."""
    statement = template_statement(overlap, random)
    if statement is not None:
        logger.warning("%s is %s%s", what, statement, warning_advice(language))
    return statement
