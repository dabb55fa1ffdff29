"""What a data map says, as text: :func:`datamap_summary` (plain text, for a terminal) and
:func:`datamap_markdown` (tables, for a dataset card). Both give each region's real size: the
``fraction`` rounds to whole examples (:func:`~hf_synthsample.cartography.datamap.fraction_size`),
and the share printed is that count over the map's examples.

Example:
    >>> import pyarrow as pa
    >>> from hf_synthsample.cartography import DataMap
    >>> dm = DataMap.from_dynamics(pa.table({"example_id": list(range(10)), "epoch": [0] * 10,
    ...                                      "loss": [float(i) for i in range(10)], "correct": [True] * 10}), "loss")
    >>> print(datamap_markdown(dm, 0.33).splitlines()[-3])
    | hard-to-learn | 3 of 10 | 30.0 % | -8.000 | 0.000 | 1.000 | 8.000 |
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .datamap import DataMap

__all__ = ["datamap_summary", "datamap_markdown"]

_REGIONS = ("hard-to-learn", "ambiguous", "easy-to-learn")


def _region_rows(dm: "DataMap", fraction: float) -> list[tuple[str, int, np.ndarray]]:
    """Per region: its name, size and the positions (in ``dm.example_ids``) of its examples."""
    k = dm.subset_size(fraction)
    return [(r, k, np.searchsorted(dm.example_ids, dm.ranking(r)[:k])) for r in _REGIONS]


def datamap_summary(dm: "DataMap", fraction: float = 0.33) -> str:
    """Plain text: sizes, the axes' ranges and each region of ``fraction`` (its real size)."""
    info = dm.measure_info
    raw = dm.scores.get(dm.measure)
    lines = [
        f"Data map: {len(dm):,} examples, measure {dm.measure} ({dm.source} pass"
        + (f"; {info.direction}" if info is not None else "") + "), "
        f"epochs {dm.epochs[0]}..{dm.epochs[-1]} ({len(dm.epochs)} recorded)",
        f"  {dm.confidence_label}",
        f"  confidence  mean {dm.confidence.mean():.3f}  min {dm.confidence.min():.3f}  max {dm.confidence.max():.3f}",
        f"  variability mean {dm.variability.mean():.3f}  min {dm.variability.min():.3f}  max {dm.variability.max():.3f}",
        f"  correctness mean {dm.correctness.mean():.3f}  never correct {np.mean(dm.correctness == 0):.1%}  "
        f"always correct {np.mean(dm.correctness == 1):.1%}",
    ]
    for region, k, pos in _region_rows(dm, fraction):
        lines.append(
            f"  {region:14} ({k / len(dm):.0%}, {k:,}): confidence {dm.confidence[pos].mean():.3f}, "
            f"variability {dm.variability[pos].mean():.3f}, correctness {dm.correctness[pos].mean():.3f}"
            + (f", mean {dm.measure} {np.nanmean(raw[pos]):.3f}" if raw is not None else "")
        )
    return "\n".join(lines)


def datamap_markdown(dm: "DataMap", fraction: float = 0.33) -> str:
    """Markdown tables: the map (examples, measure, window, axis), the axes' ranges and each
    region of ``fraction`` with its real count and share."""
    info = dm.measure_info
    raw = dm.scores.get(dm.measure)
    n = len(dm)
    lines = [
        "| data map | |", "|---|---|",
        f"| examples | {n:,} |",
        f"| measure | `{dm.measure}` ({dm.source} pass" + (f"; {info.direction}" if info is not None else "") + ") |",
        f"| epochs | {dm.epochs[0]}..{dm.epochs[-1]} ({len(dm.epochs)} recorded) |",
        f"| confidence axis | {dm.confidence_label} |",
        f"| never correct | {np.mean(dm.correctness == 0):.1%} of the examples |",
        f"| always correct | {np.mean(dm.correctness == 1):.1%} of the examples |",
        "",
        "| axis | mean | min | max |", "|---|---:|---:|---:|",
        *(f"| {a} | {v.mean():.3f} | {v.min():.3f} | {v.max():.3f} |"
          for a, v in (("confidence", dm.confidence), ("variability", dm.variability),
                       ("correctness", dm.correctness))),
        "",
        "| region | examples | share | confidence | variability | correctness |"
        + (f" mean {dm.measure} |" if raw is not None else ""),
        "|---|---:|---:|---:|---:|---:|" + ("---:|" if raw is not None else ""),
    ]
    for region, k, pos in _region_rows(dm, fraction):
        lines.append(
            f"| {region} | {k:,} of {n:,} | {100 * k / n:.1f} % | {dm.confidence[pos].mean():.3f} | "
            f"{dm.variability[pos].mean():.3f} | {dm.correctness[pos].mean():.3f} |"
            + (f" {np.nanmean(raw[pos]):.3f} |" if raw is not None else "")
        )
    return "\n".join(lines)
