"""What a data map says, as text: :func:`datamap_summary` (for a terminal) and
:func:`datamap_markdown` (for a dataset card), each region with its real size (the ``fraction``
rounds to whole examples).

Example:
    >>> import pyarrow as pa
    >>> from hf_synthsample.cartography import DataMap
    >>> dm = DataMap.from_dynamics(pa.table({"example_id": list(range(10)), "epoch": [0] * 10,
    ...                                      "loss": [float(i) for i in range(10)], "correct": [True] * 10}), "loss")
    >>> print(datamap_markdown(dm, 0.33).splitlines()[-3])
    | hard-to-learn | 3 of 10 | 30.0 % | -8.000 | 0.000 | 1.000 | 8.000 |
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["datamap_summary", "datamap_markdown"]

_REGIONS = ("hard-to-learn", "ambiguous", "easy-to-learn")
_AXES = ("confidence", "variability", "correctness")


def _facts(dm: Any, fraction: float) -> tuple[str, str, list[str], int, list[tuple[str, list[float]]]]:
    """What both renderings say: pass, epochs, region columns and size, each region's column means."""
    info = dm.measure_info
    about = f"{dm.source} pass" + (f"; {info.direction}" if info is not None else "")
    epochs = f"{dm.epochs[0]}..{dm.epochs[-1]} ({len(dm.epochs)} recorded)"
    raw = dm.scores.get(dm.measure)
    columns = [*_AXES, *([f"mean {dm.measure}"] if raw is not None else [])]
    k = dm.subset_size(fraction)
    regions = []
    for region in _REGIONS:
        pos = np.searchsorted(dm.example_ids, dm.ranking(region)[:k])
        means = [getattr(dm, a)[pos].mean() for a in _AXES]
        regions.append((region, means + ([np.nanmean(raw[pos])] if raw is not None else [])))
    return about, epochs, columns, k, regions


def datamap_summary(dm: Any, fraction: float = 0.33) -> str:
    """Plain text: sizes, the axes' ranges and each region of ``fraction`` (its real size)."""
    about, epochs, columns, k, regions = _facts(dm, fraction)
    lines = [
        f"Data map: {len(dm):,} examples, measure {dm.measure} ({about}), epochs {epochs}",
        f"  {dm.confidence_label}",
        f"  confidence  mean {dm.confidence.mean():.3f}  min {dm.confidence.min():.3f}  max {dm.confidence.max():.3f}",
        f"  variability mean {dm.variability.mean():.3f}  min {dm.variability.min():.3f}  max {dm.variability.max():.3f}",
        f"  correctness mean {dm.correctness.mean():.3f}  never correct {np.mean(dm.correctness == 0):.1%}  "
        f"always correct {np.mean(dm.correctness == 1):.1%}",
    ]
    for region, means in regions:
        lines.append(f"  {region:14} ({k / len(dm):.0%}, {k:,}): "
                     + ", ".join(f"{c} {m:.3f}" for c, m in zip(columns, means)))
    return "\n".join(lines)


def datamap_markdown(dm: Any, fraction: float = 0.33) -> str:
    """Markdown tables: the map (examples, measure, window, axis), the axes' ranges and each
    region of ``fraction`` with its real count and share."""
    about, epochs, columns, k, regions = _facts(dm, fraction)
    n = len(dm)
    lines = [
        "| data map | |", "|---|---|",
        f"| examples | {n:,} |",
        f"| measure | `{dm.measure}` ({about}) |",
        f"| epochs | {epochs} |",
        f"| confidence axis | {dm.confidence_label} |",
        f"| never correct | {np.mean(dm.correctness == 0):.1%} of the examples |",
        f"| always correct | {np.mean(dm.correctness == 1):.1%} of the examples |",
        "",
        "| axis | mean | min | max |", "|---|---:|---:|---:|",
        *(f"| {a} | {getattr(dm, a).mean():.3f} | {getattr(dm, a).min():.3f} | {getattr(dm, a).max():.3f} |"
          for a in _AXES),
        "",
        "| region | examples | share | " + " | ".join(columns) + " |",
        "|---|" + "---:|" * (2 + len(columns)),
    ]
    for region, means in regions:
        lines.append(f"| {region} | {k:,} of {n:,} | {100 * k / n:.1f} % | "
                     + " | ".join(f"{m:.3f}" for m in means) + " |")
    return "\n".join(lines)
