"""Distributions of atoms and compounds over a dataset, and the measures that compare them:
entropy, the Chernoff coefficient, atom and compound divergence (Keysers et al. 2020)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable, Mapping

from ..validation import check_float

__all__ = ["frequencies", "entropy", "chernoff_coefficient", "divergence", "atom_divergence", "compound_divergence"]


def frequencies(items: Iterable[Iterable[str] | Mapping[str, float]] | Iterable[str],
                weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Weighted counts of items over a dataset (a list of per-example lists, or a flat list).

    An example contributes each distinct atom / compound **once**, however often it occurs in the
    program (Keysers et al. 2020 count examples, not occurrences); an example given as a mapping
    item -> weight (:func:`example_compound_weights`) contributes its own weights. ``weights``
    multiplies every count by a weight per item (e.g. the pool-wide :func:`compound_weights`).
    The same rule is the CMaxEnt objective (:mod:`hf_synthsample.sampling.cmaxent`).

    Example:
        >>> frequencies([["a", "b", "a"], ["a"]])
        {'a': 2.0, 'b': 1.0}
        >>> frequencies([{"a": 0.5, "b": 1.0}, ["a"]])
        {'a': 1.5, 'b': 1.0}
    """
    counts: Counter = Counter()
    for x in items:
        if isinstance(x, str):
            counts[x] += 1
        elif isinstance(x, Mapping):
            counts.update({k: float(v) for k, v in x.items()})
        else:
            counts.update(list(dict.fromkeys(x)))  # distinct, in order of first occurrence
    if weights is None:
        return {k: float(v) for k, v in counts.items() if v > 0}
    return {k: v * weights.get(k, 1.0) for k, v in counts.items() if v * weights.get(k, 1.0) > 0}


def entropy(counts: Mapping[Any, float]) -> float:
    """Shannon entropy (nats) of the normalised ``counts``.

    Example:
        >>> round(entropy({"a": 1, "b": 1}), 6) == round(math.log(2), 6)
        True
    """
    total = float(sum(counts.values()))
    if total <= 0:
        return 0.0
    return -sum((c / total) * math.log(c / total) for c in counts.values() if c > 0)


def chernoff_coefficient(p: Mapping[Any, float], q: Mapping[Any, float], alpha: float) -> float:
    """``C_alpha(P||Q) = sum_k p_k^alpha q_k^(1-alpha)`` of the normalised distributions.

    Example:
        >>> chernoff_coefficient({"a": 1}, {"a": 3}, 0.5)
        1.0
    """
    alpha = check_float("alpha", alpha, min=0, max=1)
    sp, sq = float(sum(p.values())), float(sum(q.values()))
    if sp <= 0 or sq <= 0:
        raise ValueError("p, q: both distributions must have positive mass")
    keys = p.keys() & q.keys()
    return sum((p[k] / sp) ** alpha * (q[k] / sq) ** (1 - alpha) for k in keys)


def divergence(a: Iterable, b: Iterable, alpha: float, weights: Mapping[str, float] | None = None) -> float:
    """``1 - C_alpha(F(a) || F(b))`` for two datasets given as per-example item lists."""
    return 1.0 - chernoff_coefficient(frequencies(a, weights), frequencies(b, weights), alpha)


def atom_divergence(a: Iterable[Iterable[str]], b: Iterable[Iterable[str]]) -> float:
    """Atom divergence ``D_A = 1 - C_0.5(F_A(a) || F_A(b))`` (Keysers et al. 2020).

    Example:
        >>> atom_divergence([["x", "y"]], [["x", "y"]]), atom_divergence([["x"]], [["y"]])
        (0.0, 1.0)
    """
    return max(0.0, divergence(a, b, 0.5))


def compound_divergence(
    a: Iterable[Iterable[str]], b: Iterable[Iterable[str]], weights: Mapping[str, float] | None = None
) -> float:
    """Compound divergence ``D_C = 1 - C_0.1(F_C(a) || F_C(b))``.

    ``a`` and ``b`` hold per-example compound lists, or per-example mappings compound -> weight
    (Keysers et al.'s weights: :func:`example_compound_weights`); ``weights`` is one weight per
    compound (the pool-wide :func:`compound_weights`).

    Example:
        >>> from hf_synthsample.structure import example_compound_weights
        >>> w = example_compound_weights(["(g (f x))", "(h (f x))"], language="sexpr")
        >>> round(compound_divergence(w[:1], w[1:]), 4)  # only (f x) is shared, with weight 1/2 on both sides
        0.6667
    """
    return max(0.0, divergence(a, b, 0.1, weights))
