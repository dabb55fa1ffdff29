"""Distributions of atoms and compounds over a dataset (Keysers et al. 2020): compound weights,
frequencies, entropy, the Chernoff coefficient, atom and compound divergence."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..validation import check_float, check_int
from .tree import Node
from .language import DEFAULT_LANGUAGE

__all__ = ["COMPOUND_WEIGHTINGS", "example_compound_weights", "compound_weights", "frequencies", "entropy",
           "chernoff_coefficient", "divergence", "atom_divergence", "compound_divergence"]

#: the accepted ``compound_weights`` modes of the splits and diagnostics: Keysers et al.'s weight
#: of each compound *in each example* (the default), or one weight per compound over the pool
COMPOUND_WEIGHTINGS = ("example", "pool")


def _occurrence_supers(programs: list, language: str, max_height: int, counts: Sequence[int] | None,
                       also: Sequence = ()):
    """Per program, each compound occurrence as ``(compound, distinct super-compounds holding it)``
    (the compounds at ``n`` or at an ancestor ``k`` up, of height ``>= h + k``), and ``P(G'|G)`` over
    the pool (each program counted ``counts[i]`` times; the programs ``also`` count nowhere)."""
    from .pool_parse import program_occurrences

    max_height = check_int("max_height", max_height, min=1)
    mults = [1] * len(programs)
    if counts is not None:
        mults = [check_int("counts", c, min=1) for c in counts]
        if len(mults) != len(programs):
            raise ValueError(f"counts: {len(mults)} counts for {len(programs)} programs; give one per program")
    seen: Counter = Counter()
    inside: Counter = Counter()
    per_program = []
    for program, mult in zip([*programs, *also], [*mults, *[0] * len(also)]):
        rows = program_occurrences(program, language, max_height)
        for s, sups in rows:
            seen[s] += mult
            for sup in sups:
                inside[s, sup] += mult
        per_program.append(rows)
    return per_program, lambda g, sup: inside[g, sup] / seen[g] if seen[g] else 0.0


def _example_weights(rows: list, p: Callable) -> dict[str, float]:
    w: dict[str, float] = {}
    for s, sups in rows:
        v = 1.0 - max((p(s, sup) for sup in sups), default=0.0)
        if v > w.get(s, -1.0):
            w[s] = v
    return w


def _largest(weights: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Each compound's largest weight over ``weights``."""
    out: dict[str, float] = {}
    for w in weights:
        for s, v in w.items():
            if v > out.get(s, -1.0):
                out[s] = v
    return out


def example_compound_weights(
    programs: Iterable[str | Node], language: str = DEFAULT_LANGUAGE, max_height: int = 2, counts: Sequence[int] | None = None
) -> list[dict[str, float]]:
    """Keysers et al. (2020) compound weights, one mapping per example: ``w(G, e) = max over G's
    occurrences g in e of (1 - max over g's super-compounds G' of P(G'|G))``; ``counts``: multiplicities.

    Example:
        >>> w = example_compound_weights(["(a (b c))", "(x (b c))", "(b c)"], language="sexpr")
        >>> w[0]["(b c)"], w[0]["(a (b c))"], w[2]["(b c)"]  # (b c) is inside (a (b c)) 1 of its 3 times
        (0.6666666666666667, 1.0, 1.0)
    """
    per_program, p = _occurrence_supers(list(programs), language, max_height, counts)
    return [_example_weights(rows, p) for rows in per_program]


def compound_weights(
    programs: Iterable[str | Node], language: str = DEFAULT_LANGUAGE, max_height: int = 2, counts: Sequence[int] | None = None
) -> dict[str, float]:
    """Pool-wide compound weights: each compound's largest :func:`example_compound_weights` weight
    (*not* Keysers et al.'s weighting, which is per example); ``counts``: multiplicities.

    Example:
        >>> w = compound_weights(["(a (b c))", "(a (b c))"], language="sexpr", max_height=2)
        >>> w["(b c)"], w["(a (b c))"]
        (0.0, 1.0)
    """
    per_program, p = _occurrence_supers(list(programs), language, max_height, counts)
    return _largest(_example_weights(rows, p) for rows in per_program)


def _weighting(name: str, value: Any) -> str | None:
    """``"example"``, ``"pool"`` or ``None`` (unweighted) from a ``compound_weights``-like argument."""
    if value is True:
        return "example"
    if value is False or value is None:
        return None
    if isinstance(value, str) and value in COMPOUND_WEIGHTINGS:
        return value
    raise ValueError(f"{name}: accepted values: True or 'example' (Keysers et al.'s per-example weights), 'pool' "
                     f"(one weight per compound over the pool), False (unweighted); got {value!r}")


def frequencies(items: Iterable[Iterable[str] | Mapping[str, float]] | Iterable[str],
                weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Counts of items over a dataset (per-example lists or a flat list): an example counts each
    distinct item **once**, or its own weights as a mapping; ``weights`` multiplies each count.

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
    """Compound divergence ``D_C = 1 - C_0.1(F_C(a) || F_C(b))`` of per-example compound lists or
    mappings (:func:`example_compound_weights`); ``weights``: one per compound (:func:`compound_weights`).

    Example:
        >>> w = example_compound_weights(["(g (f x))", "(h (f x))"], language="sexpr")
        >>> round(compound_divergence(w[:1], w[1:]), 4)  # only (f x) is shared, with weight 1/2 on both sides
        0.6667
    """
    return max(0.0, divergence(a, b, 0.1, weights))
