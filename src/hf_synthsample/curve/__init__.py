"""The compositionality curve: test accuracy against compound divergence over a sweep of splits,
for your dataset and your model (Keysers et al. 2020): :func:`compositionality_curve` (the estimator
:class:`CompositionalityCurve`) with its :class:`CurveSettings` gives a :class:`CurveResult`;
:func:`spearman`, :func:`subsample`, :func:`error_kinds` need no model. Imported lazily (no torch).

Example:
    >>> from hf_synthsample.curve import CurveSettings, spearman
    >>> CurveSettings().replace(targets=[0.0, 0.3, 0.6]).sweep.targets, spearman([0.0, 0.3, 0.6], [95.0, 80.0, 40.0])
    ((0.0, 0.3, 0.6), -1.0)
"""

from __future__ import annotations

from .._lazy import attach

_LAZY = {
    ".run": ("compositionality_curve", "CompositionalityCurve"),
    ".result": ("CurveResult",),
    ".settings": ("CurveSettings",),
    ".training": ("resolve_model", "scratch_factory", "checkpoint_factory", "train_split"),
    ".stats": ("spearman", "subsample", "error_kinds"),
}

__getattr__, __dir__ = attach(__name__, _LAZY)
__all__ = __dir__()
