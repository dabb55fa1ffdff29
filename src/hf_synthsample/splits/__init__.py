"""Train/test splits for compositional generalization, for any dataset and program language.

* :func:`mcd_split` / :func:`tmcd_split`: maximum compound divergence under an atom constraint
  (Keysers et al. 2020; Shaw et al. 2021).
* :func:`template_split` (whole abstract templates held out), :func:`length_split` (longest rows
  in test), :func:`random_split`.
* :func:`divergence_sweep`: a family of MCD splits at chosen compound divergences (easy to hard,
  the atoms held alike), saved as one Hub folder with a config per target; :func:`divergence_range`.
* :func:`split_report`: sizes, atom and compound divergence, unseen atoms, template overlap,
  exact and near-duplicate leakage, lengths, as a table and a plot.

:class:`MCDSplitter` makes each of them from one :class:`SplitSettings` (scikit-learn style:
``MCDSplitter(method="mcd", language="scan").split(ds)``, ``.sweep(ds, targets)``,
``.reachable_range(ds)``).

Every split returns a ``DatasetDict`` with ``train`` and ``test``: a partition of the input rows,
each side in input order, the same for the same seed.
"""

from .._lazy import attach

_LAZY = {
    ".splitter": ("MCDSplitter",),
    ".settings": ("SplitSettings", "SweepSettings", "Goal"),
    ".mcd": ("MCDResult", "mcd_split", "tmcd_split", "mcd_search", "UnreachableDivergence"),
    ".sweep": ("SplitSweep", "divergence_sweep", "divergence_range"),
    ".simple": ("template_split", "length_split", "random_split"),
    ".report": ("SplitReport", "split_report", "save_split"),
    "._data": ("parent_child_compounds",),
}

__getattr__, __dir__ = attach(__name__, _LAZY)
__all__ = __dir__()
