"""The data map as a PNG scatter plot: :func:`plot_datamap` (what :meth:`DataMap.plot
<hf_synthsample.cartography.DataMap.plot>` draws)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..atomic import save_figure_atomic
from .html import REGION_COLOURS

__all__ = ["plot_datamap"]


def plot_datamap(dm: Any, path: str | os.PathLike, *, sample_fraction: float | None = None, seed: int = 0,
                 title: str | None = None, fraction: float = 0.33) -> str:
    """Draw ``dm`` into the PNG ``path``; returns the path (see :meth:`DataMap.plot`)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.colors import BoundaryNorm

    cutoffs = dm.region_cutoffs(fraction)
    idx = np.arange(len(dm))
    if sample_fraction is not None:
        idx = np.sort(np.random.default_rng(seed).choice(idx, size=dm.subset_size(sample_fraction), replace=False))
    fig, ax = plt.subplots(figsize=(6.5, 5), dpi=120)
    # correctness in 10 bins over [0, 1], as the seed paper plots it; 1.0 is in the last bin
    cmap = plt.get_cmap("coolwarm", 10)
    norm = BoundaryNorm(np.linspace(0.0, 1.0, 11), cmap.N)
    sc = ax.scatter(dm.variability[idx], dm.confidence[idx], c=dm.correctness[idx], cmap=cmap, norm=norm,
                    s=6, alpha=0.7)
    fig.colorbar(sc, ax=ax, ticks=np.linspace(0.0, 1.0, 6), label="correctness (fraction of epochs correct)")
    # the region boundaries, in the HTML map's colours; each label sits on its region's side
    box = dict(facecolor="white", alpha=0.7, edgecolor="none", pad=1)
    style = dict(fontsize="small", bbox=box, transform=None)
    for name, va in (("hard-to-learn", "top"), ("easy-to-learn", "bottom")):
        y = cutoffs[name][1]
        ax.axhline(y, color=REGION_COLOURS[name], ls="--", lw=1)
        style["transform"] = ax.get_yaxis_transform()
        ax.text(0.99, y, f"{name} ({fraction:.0%}) {'↓' if va == 'top' else '↑'}", color=REGION_COLOURS[name],
                ha="right", va=va, **style)
    x = cutoffs["ambiguous"][1]
    ax.axvline(x, color=REGION_COLOURS["ambiguous"], ls="--", lw=1)
    style["transform"] = ax.get_xaxis_transform()
    ax.text(x, 0.98, f" ambiguous ({fraction:.0%}) →", color=REGION_COLOURS["ambiguous"], ha="left", va="top",
            **style)
    ax.set_xlabel("variability (std of the measure over the epochs)")
    ax.set_ylabel(dm.confidence_label)
    ax.set_title(title or f"Data map ({dm.measure}): {len(idx)} examples, epochs {dm.epochs[0]}-{dm.epochs[-1]}")
    return save_figure_atomic(fig, path)
