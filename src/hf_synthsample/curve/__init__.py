"""The compositionality curve: test accuracy against compound divergence over a sweep of splits,
for your dataset and your model (Keysers et al. 2020, "Measuring Compositional Generalization").

* :func:`compositionality_curve` (and the estimator :class:`CompositionalityCurve`): splits at
  chosen compound divergences (:func:`~hf_synthsample.splits.divergence_sweep`), one model per
  split trained with the stock ``Seq2SeqTrainer`` until it fits its own rows, fit and test exact
  match per split, Spearman's rho; a :class:`CurveResult` with a table, a plot and a Hub folder.
* :class:`CurveSettings`: every setting, checked once.
* :func:`spearman`, :func:`subsample`, :func:`error_kinds`: the figures that need no model.

Names are imported lazily (no torch at import).

Example:
    >>> from hf_synthsample.curve import CurveSettings, spearman
    >>> CurveSettings(targets=[0.0, 0.3, 0.6]).fit_target, spearman([0.0, 0.3, 0.6], [95.0, 80.0, 40.0])
    (95.0, -1.0)
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
