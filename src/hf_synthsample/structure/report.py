"""Structural diagnostics of a pool of programs: templates, their coverage of a reference set,
entropies and divergences, and the template rank-frequency plot."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

from ..atomic import save_figure_atomic
from ..validation import check_int
from .distributions import (_example_weights, _occurrence_supers, _weighting, atom_divergence, compound_divergence,
                            compound_weights, entropy, frequencies)
from .extraction import structure
from .language import get_language
from .language import DEFAULT_LANGUAGE

__all__ = ["template_counts", "template_coverage", "plot_template_frequencies", "diagnostics", "structure_diagnostics"]


def template_counts(templates: Iterable[str]) -> dict[str, int]:
    """Template -> examples, most frequent first."""
    return dict(Counter(templates).most_common())


def template_coverage(pool_templates: Iterable[str], reference_templates: Iterable[str]) -> tuple[float, list[str]]:
    """Share of the reference set's distinct templates that occur in the pool, and the uncovered ones.

    Example:
        >>> template_coverage(["t1", "t2"], ["t1", "t3", "t3"])
        (0.5, ['t3'])
    """
    pool = set(pool_templates)
    ref = sorted(set(reference_templates))
    if not ref:
        raise ValueError("reference_templates is empty: nothing to cover")
    missing = [t for t in ref if t not in pool]
    return 1.0 - len(missing) / len(ref), missing


def plot_template_frequencies(templates: Iterable[str] | Mapping[str, int], path: str, title: str = "") -> str:
    """Rank-frequency plot (log scale) of templates, written to ``path`` (PNG); returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = dict(templates) if isinstance(templates, Mapping) else template_counts(templates)
    values = sorted(counts.values(), reverse=True)
    if not values:
        raise ValueError("templates is empty: nothing to plot")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(range(1, len(values) + 1), values, width=1.0)
    ax.set_yscale("log")
    ax.set_xlabel("template rank")
    ax.set_ylabel("examples")
    ax.set_title(title or f"{len(values)} templates, {sum(values):,} examples")
    fig.tight_layout()
    return save_figure_atomic(fig, path, dpi=100)


def diagnostics(
    programs: Iterable[str],
    reference: Iterable[str] | None = None,
    language: str = DEFAULT_LANGUAGE,
    max_height: int = 2,
    compound_weighting: bool | str = False,
) -> dict[str, Any]:
    """Templates, entropies (nats) and, against a ``reference``, template coverage and atom and
    compound divergences of a set of programs (``compound_weighting``: weights over ``programs``).

    Example:
        >>> d = diagnostics(["(a (b c))", "(a (b 'x))"], reference=["(a (b c))"], language="sexpr")
        >>> d["num_templates"], d["template_coverage"], d["atom_divergence"] > 0
        (2, 1.0, True)
    """
    get_language(language)  # an unknown language fails before any work
    max_height = check_int("max_height", max_height, min=1)

    def extract(items):
        rows = [structure(p, language, max_height) for p in items]
        return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]

    mode = _weighting("compound_weighting", compound_weighting)
    programs = list(programs)
    if not programs:
        raise ValueError("programs is empty: nothing to describe")
    reference = None if reference is None else list(reference)
    t, a, c = extract(programs)
    weights = compound_weights(programs, language, max_height) if mode == "pool" else None
    if mode == "example":
        rows, p = _occurrence_supers(programs, language, max_height, None, also=reference or [])
        per = [_example_weights(r, p) for r in rows]
        c = per[:len(programs)]
    out: dict[str, Any] = {
        "num_programs": len(programs),
        "num_templates": len(set(t)),
        "template_counts": template_counts(t),
        "atom_entropy": entropy(frequencies(a)),
        "compound_entropy": entropy(frequencies(c, weights)),
    }
    if reference is not None:
        rt, ra, rc = extract(reference)
        if mode == "example":
            rc = per[len(programs):]
        coverage, missing = template_coverage(t, rt)
        out.update(
            template_coverage=coverage,
            uncovered_templates=missing,
            atom_divergence=atom_divergence(a, ra),
            compound_divergence=compound_divergence(c, rc, weights),
        )
    return out


#: the package-level name (``hf_synthsample.structure_diagnostics``)
structure_diagnostics = diagnostics
