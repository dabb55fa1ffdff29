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
    "MCDSplitter": ".splitter",
    "SplitSettings": ".settings",
    "SweepSettings": ".settings",
    "Goal": ".settings",
    "MCDResult": ".mcd",
    "mcd_split": ".mcd",
    "tmcd_split": ".mcd",
    "mcd_search": ".mcd",
    "UnreachableDivergence": ".mcd",
    "SplitSweep": ".sweep",
    "divergence_sweep": ".sweep",
    "divergence_range": ".sweep",
    "template_split": ".simple",
    "length_split": ".simple",
    "random_split": ".simple",
    "SplitReport": ".report",
    "split_report": ".report",
    "save_split": ".report",
    "parent_child_compounds": "._data",
}

__all__ = list(_LAZY)

__getattr__, __dir__ = attach(__name__, _LAZY)
