"""Histograms, KL to uniform, and the homogenization report (Shin et al. 2019, App. B.5)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Mapping

from ..atomic import save_figure_atomic

__all__ = ["kl_to_uniform", "sorted_histogram", "HomogenizationReport", "encode_value", "decode_value"]


def _sort_key(value: Any):
    # Histograms mix ints, floats, strings and tuples; order numbers numerically and the rest by repr.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    return (1, 0, repr(value))


def sorted_histogram(counts: Mapping[Hashable, int]) -> dict:
    """``counts`` as a dict ordered by value."""
    return {k: counts[k] for k in sorted(counts, key=_sort_key)}


def kl_to_uniform(counts: Mapping[Hashable, int], support: Iterable[Hashable] | None = None) -> float:
    """KL(P || Uniform(V)) in nats, P the normalised ``counts`` and V ``support`` (default: the values seen).

    Example:
        >>> round(kl_to_uniform({"a": 3, "b": 1}), 4)  # 0.75 ln 1.5 + 0.25 ln 0.5
        0.1308
        >>> kl_to_uniform({"a": 2, "b": 2})
        0.0
    """
    total = sum(counts.values())
    if total <= 0:
        raise ValueError("counts: need at least one observation to compute a KL divergence")
    k = len(set(support)) if support is not None else sum(1 for c in counts.values() if c > 0)
    return max(sum(c / total * math.log(c / total * k) for c in counts.values() if c > 0), 0.0)


def encode_value(value: Any) -> Any:
    """A stratum value as JSON holds it (a tuple as a list)."""
    return list(value) if isinstance(value, tuple) else value


def decode_value(value: Any) -> Any:
    """:func:`encode_value` undone (lists back to tuples)."""
    return tuple(decode_value(v) for v in value) if isinstance(value, list) else value


def _bar(frac: float, width: int = 20) -> str:
    return "#" * int(round(frac * width))


@dataclass
class HomogenizationReport:
    """What homogenization did to the salient variables.

    ``method``: ``"generator"`` (rejection sampling; ``eps``, ``draws`` and
    ``theoretical_draws_per_accepted``: ``prod over levels of 1 / sum_v min(P(v), eps)``) or
    ``"pool"``. ``before`` / ``after``: per histogram key (the variable names, plus ``"(a, b)"``
    for the joint value of several), the counts over what was drawn (or the pool) and what was kept.
    """

    variables: tuple[str, ...]
    mode: str
    method: str
    eps: float | None
    before: dict[str, dict] = field(default_factory=dict)
    after: dict[str, dict] = field(default_factory=dict)
    draws: int | None = None
    accepted: int = 0
    theoretical_draws_per_accepted: float | None = None

    @property
    def keys(self) -> list[str]:
        return list(self.before)

    def kl_before(self, key: str | None = None) -> float:
        key = self._key(key)
        return kl_to_uniform(self.before[key], self._support(key))

    def kl_after(self, key: str | None = None) -> float:
        key = self._key(key)
        return kl_to_uniform(self.after[key], self._support(key))

    def kl_reduction(self, key: str | None = None) -> float:
        """Relative drop of KL to uniform, ``1 - after / before`` (0 when before is already 0)."""
        before = self.kl_before(key)
        return 0.0 if before == 0 else 1.0 - self.kl_after(key) / before

    @property
    def draws_per_accepted(self) -> float | None:
        if self.draws is None or self.accepted == 0:
            return None
        return self.draws / self.accepted

    @property
    def homogenized_key(self) -> str:
        """The histogram key that the algorithm made uniform."""
        return self.variables[0] if len(self.variables) == 1 else joint_key(self.variables)

    def _key(self, key: str | None) -> str:
        key = self.homogenized_key if key is None else key
        if key not in self.before:
            raise ValueError(f"key: no histogram {key!r}; available: {self.keys}")
        return key

    def _support(self, key: str) -> set:
        # One support for before and after, so the two KLs are comparable.
        return set(self.before[key]) | set(self.after[key])

    def _draw_cost(self, note: str = "") -> str:
        theory = self.theoretical_draws_per_accepted
        return f"{self.draws_per_accepted:.3f} measured" + (f", {theory:.3f} theoretical{note}" if theory else "")

    def summary(self) -> str:
        """One line per histogram key: KL before / after and the reduction, plus the draw cost."""
        lines = [f"KL to uniform of {key}: before {self.kl_before(key):.4f} nats, after {self.kl_after(key):.4f} "
                 f"nats ({100 * self.kl_reduction(key):.1f}% lower)" for key in self.keys]
        if self.draws_per_accepted is not None:
            lines.append(f"draws per accepted example: {self._draw_cost(' (1 / sum_v min(P(v), eps))')} "
                         f"[{self.draws} draws, {self.accepted} accepted, eps={self.eps}]")
        return "\n".join(lines)

    def histogram_table(self, key: str | None = None) -> str:
        """The before/after histogram of one key as a fixed-width text table."""
        key = self._key(key)
        before, after = self.before[key], self.after[key]
        nb, na = sum(before.values()) or 1, sum(after.values()) or 1
        values = sorted(self._support(key), key=_sort_key)
        width = max([len(str(v)) for v in values] + [len(key)])
        head = f"{key:>{width}}  {'before':>16}  {'':20}  {'after':>16}  "
        rows = [head, "-" * len(head)]
        for v in values:
            b, a = before.get(v, 0), after.get(v, 0)
            rows.append(
                f"{str(v):>{width}}  {b:>8} ({100 * b / nb:5.1f}%)  {_bar(b / nb):20}  "
                f"{a:>8} ({100 * a / na:5.1f}%)  {_bar(a / na)}"
            )
        return "\n".join(rows)

    def __str__(self) -> str:
        title = (f"Homogenization ({self.method}-side, {self.mode}) of {', '.join(self.variables)}"
                 + (f", eps={self.eps}" if self.eps is not None else ""))
        return "\n\n".join([title, self.histogram_table(), self.summary()])

    def to_markdown(self) -> str:
        """A Markdown table of the figures, for dataset cards."""
        lines = ["| salient variable | KL before (nats) | KL after (nats) | reduction | values |",
                 "|---|---:|---:|---:|---:|"]
        lines += [f"| {key} | {self.kl_before(key):.4f} | {self.kl_after(key):.4f} | "
                  f"{100 * self.kl_reduction(key):.1f}% | {len(self._support(key))} |" for key in self.keys]
        text = "\n".join(lines)
        if self.draws_per_accepted is not None:
            text += (f"\n\nDraws per accepted example: {self._draw_cost()} "
                     f"(eps = {self.eps}, {self.draws} draws for {self.accepted} examples).")
        return text

    def plot(self, path: str, key: str | None = None) -> str:
        """Save the before/after histogram of ``key`` as an image (PNG by extension); returns ``path``."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        key = self._key(key)
        before, after = self.before[key], self.after[key]
        values = sorted(self._support(key), key=_sort_key)
        nb, na = sum(before.values()) or 1, sum(after.values()) or 1
        xs = range(len(values))
        fig, ax = plt.subplots(figsize=(max(6, 0.25 * len(values) + 2), 3.5))
        ax.bar([x - 0.2 for x in xs], [before.get(v, 0) / nb for v in values], 0.4, label="before")
        ax.bar([x + 0.2 for x in xs], [after.get(v, 0) / na for v in values], 0.4, label="after")
        ax.axhline(1 / len(values), color="grey", lw=0.8, ls="--", label="uniform")
        step = max(1, len(values) // 25)
        ax.set_xticks(list(xs)[::step], [str(v) for v in values][::step], rotation=45)
        ax.set_xlabel(key)
        ax.set_ylabel("fraction")
        ax.set_title(f"{key}: KL to uniform {self.kl_before(key):.3f} -> {self.kl_after(key):.3f} nats")
        ax.legend()
        fig.tight_layout()
        return save_figure_atomic(fig, path, dpi=100)

    def to_dict(self) -> dict:
        """A JSON-safe dict (histograms as ``[value, count]`` pairs, tuples as lists)."""
        return {
            "variables": list(self.variables),
            "mode": self.mode,
            "method": self.method,
            "eps": self.eps,
            "before": {k: [[encode_value(v), c] for v, c in h.items()] for k, h in self.before.items()},
            "after": {k: [[encode_value(v), c] for v, c in h.items()] for k, h in self.after.items()},
            "draws": self.draws,
            "accepted": self.accepted,
            "theoretical_draws_per_accepted": self.theoretical_draws_per_accepted,
            "kl_before": {k: self.kl_before(k) for k in self.keys},
            "kl_after": {k: self.kl_after(k) for k in self.keys},
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> "HomogenizationReport":
        return cls(
            variables=tuple(data["variables"]),
            mode=data["mode"],
            method=data["method"],
            eps=data["eps"],
            before={k: {decode_value(v): c for v, c in pairs} for k, pairs in data["before"].items()},
            after={k: {decode_value(v): c for v, c in pairs} for k, pairs in data["after"].items()},
            draws=data.get("draws"),
            accepted=data.get("accepted", 0),
            theoretical_draws_per_accepted=data.get("theoretical_draws_per_accepted"),
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


def joint_key(variables: Iterable[str]) -> str:
    """Histogram key of the joint value of several variables."""
    return "(" + ", ".join(variables) + ")"
