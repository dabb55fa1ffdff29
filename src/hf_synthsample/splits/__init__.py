"""Train/test splits for compositional generalization, for any dataset and program language.

:func:`mcd_split` / :func:`tmcd_split` (maximum compound divergence under an atom constraint,
Keysers et al. 2020; Shaw et al. 2021), :func:`template_split`, :func:`length_split`,
:func:`random_split`, :func:`divergence_sweep` (MCD splits at chosen divergences) and
:func:`split_report`, and :func:`structure_report` (the data's structure before a split, beside a
seeded random split); :class:`MCDSplitter` makes each from one :class:`SplitSettings`. Every split
is a ``DatasetDict(train, test)`` of the input rows, each side in input order, the same for a seed.
"""

from .._lazy import attach

_LAZY = {
    ".splitter": ("MCDSplitter", "mcd_split", "tmcd_split", "divergence_sweep", "divergence_range"),
    ".settings": ("SplitSettings", "SweepSettings", "Goal"),
    ".mcd": ("MCDResult", "mcd_search", "UnreachableDivergence"),
    ".sweep": ("SplitSweep",),
    ".simple": ("template_split", "length_split", "random_split"),
    ".report": ("SplitReport", "split_report", "save_split"),
    "._data": ("parent_child_compounds",),
    ".disjoint": ("structure_report",),
}

__getattr__, __dir__ = attach(__name__, _LAZY)
__all__ = __dir__()
