"""The split maker, scikit-learn style: :class:`MCDSplitter` takes one :class:`~.settings.SplitSettings`
and makes the split (any method), a sweep of MCD splits, or the reachable range of D_C; :func:`mcd_split`
and :func:`tmcd_split` are its function form.

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh"
    ...                                     for a in "abcd" for b in "abc"]})
    >>> splitter = MCDSplitter(language="sexpr", compound_weights=False, goal=0.45)
    >>> split = splitter.split(ds, progress=False)
    >>> abs(splitter.result_.compound_divergence - 0.45) <= 0.01, len(split["test"])
    (True, 18)
    >>> low, high = splitter.set_params(patience=20).reachable_range(ds)
    >>> low < 0.45 < high
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..settings import Estimator, signature_from
from ._data import as_split, check_sides, parent_child_compounds, settings_structures
from .settings import Goal, SplitSettings, SweepSettings, settings_of

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

    from .mcd import MCDResult

    from .sweep import SplitSweep

__all__ = ["MCDSplitter", "mcd_split", "tmcd_split", "divergence_sweep", "divergence_range"]


class MCDSplitter(Estimator):
    """Makes the split its :class:`~.settings.SplitSettings` describe, a ``sweep`` or the
    ``reachable_range``, all from the same settings. Fitted: ``result_`` (the last search's), ``sweep_``, ``range_``;
    after a search ``structures_`` (the groups it moved) and ``templates_`` (each row's, or ``None``).
    """

    settings_class = SplitSettings

    def split(self, dataset: "Dataset", *, progress: bool | None = None) -> "DatasetDict":
        """``DatasetDict(train, test)`` of ``dataset``'s rows, each side in input order."""
        from . import simple

        s = self.settings
        s.require_structure()
        self.result_ = self.structures_ = self.templates_ = None
        if s.search:
            tmcd = s.method == "tmcd" and s.compounds_column is None
            return self._search_split(dataset, parent_child_compounds if tmcd else None, progress)
        if s.method == "template":
            return simple.by_template(dataset, s)
        if s.method == "length":  # ``column`` is read only by the default length
            return simple.by_length(dataset, s.length_column, column=s.column, test_size=s.test_size, threshold=None,
                                    size_tolerance=s.size_tolerance_share)
        return simple.by_random(dataset, s)

    def _search_split(self, dataset: "Dataset", compounds_fn: Callable | None, progress: bool | None) -> "DatasetDict":
        from .mcd import search

        s = self.settings
        self.structures_ = settings_structures(dataset, s, compounds_fn, templates=s.template_column is None)
        result = search(self.structures_, s, progress=progress)
        # the guard every search path ends with: no side short without a word
        check_sides(len(result.test_indices), len(result.train_indices), len(dataset), s.test_size, s.train_size,
                    s.size_tolerance_share)
        split = as_split(dataset, result.test_indices, result.train_indices)
        split.mcd_result = self.result_ = result
        from .disjoint import record_template_overlap

        self.templates_ = record_template_overlap(dataset, result, s, self.structures_.templates)
        return split

    def sweep(self, dataset: "Dataset", targets: Sequence[float] | None = None, *,
              progress: bool | None = None) -> "SplitSweep":
        """MCD splits at each of ``targets`` (default: the settings'); see :func:`~.sweep.divergence_sweep`."""
        from .sweep import run_sweep

        s = self.settings
        if targets is not None or not isinstance(s, SweepSettings):
            s = SweepSettings(**{**s.get_params(), "targets": targets})
        s.require_structure()
        self.sweep_ = run_sweep(dataset, s, progress=progress)
        return self.sweep_

    def reachable_range(self, dataset: "Dataset") -> tuple[float, float]:
        """``(lowest, highest)`` D_C the minimising and maximising searches find for these settings."""
        from .mcd import search_range

        self.settings.require_structure()
        self.range_ = search_range(settings_structures(dataset, self.settings), self.settings)
        return self.range_


#: the fields the split functions take by position after the dataset (``mcd_split(ds, "commands", "scan")``)
_POSITIONAL = ("column", "language")


@signature_from(SplitSettings, positional=_POSITIONAL, fixed=("method",))
def mcd_split(dataset: "Dataset", *args: Any, settings: SplitSettings | None = None,
              target_divergence: float | None = None, minimize: bool = False, progress: bool | None = None,
              return_result: bool = False, _compounds_fn: Callable | None = None, _method: str = "mcd",
              **changes: Any) -> "DatasetDict | tuple[DatasetDict, MCDResult]":
    """A maximum-compound-divergence split (Keysers et al. 2020): ``MCDSplitter(settings).split(dataset)``.

    ``settings`` (a :class:`~hf_synthsample.splits.settings.SplitSettings`) and ``changes`` (its fields;
    ``column`` and ``language`` also by position); the goal also as ``target_divergence`` or ``minimize``
    (default: the highest D_C). The split has ``.mcd_result`` (returned too with ``return_result``); a
    limit returns the split reached so far.
    """
    if target_divergence is not None or minimize:
        if "goal" in changes:
            raise ValueError("goal, target_divergence, minimize: give the goal one way")
        changes["goal"] = Goal.of(target_divergence, minimize)
    s = settings_of(SplitSettings, args, settings, changes, positional=_POSITIONAL, fixed={"method": _method},
                    name=f"{_method}_split")
    splitter = MCDSplitter(s)
    s.require_structure()
    split = splitter._search_split(dataset, _compounds_fn, progress)
    return (split, splitter.result_) if return_result else split


@signature_from(SplitSettings, positional=_POSITIONAL, fixed=("method",))
def tmcd_split(dataset: "Dataset", *args: Any, settings: SplitSettings | None = None,
               compounds_fn: Callable | None = None, **changes: Any) -> "DatasetDict | tuple[DatasetDict, MCDResult]":
    """A TMCD split (Shaw et al. 2021): :func:`mcd_split` with the parent-child pairs of the tree
    (:func:`~hf_synthsample.splits._data.parent_child_compounds`) or ``compounds_fn(tree)`` as compounds,
    unweighted unless ``compound_weights`` says otherwise.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": [f"({f} ({g} {a}))" for f in "pq" for g in "rs" for a in "abcd"]})
        >>> split = tmcd_split(ds, language="sexpr", test_size=0.25, max_atom_divergence=0.1, progress=False)
        >>> len(split["test"]), split.mcd_result.compound_divergence > 0
        (4, True)
    """
    if compounds_fn is not None and not callable(compounds_fn):
        raise TypeError(f"compounds_fn must be callable (tree -> list of compounds), got {compounds_fn!r}")
    column_given = changes.get("compounds_column", getattr(settings, "compounds_column", None))
    if column_given and compounds_fn is not None:
        raise ValueError("compounds_fn and compounds_column: give one source of compounds, not both")
    fn = compounds_fn or (None if column_given else parent_child_compounds)
    return mcd_split(dataset, *args, settings=settings, _compounds_fn=fn, _method="tmcd", **changes)


@signature_from(SweepSettings, positional=("targets",), fixed=("method", "goal"))
def divergence_sweep(dataset: "Dataset", *args: Any, settings: SweepSettings | None = None,
                     progress: bool | None = None, **changes: Any) -> SplitSweep:
    """A :class:`SplitSweep` of ``dataset`` at each compound divergence of ``targets``: ``settings`` (a
    :class:`~hf_synthsample.splits.settings.SweepSettings`) and ``changes`` (its fields); ``progress``
    may be a caller's ``tqdm`` bar. An unreachable target is an
    :class:`~hf_synthsample.splits.mcd.UnreachableDivergence`.
    """
    s = settings_of(SweepSettings, args, settings, changes, positional=("targets",), name="divergence_sweep")
    return MCDSplitter(s).sweep(dataset, progress=progress)


@signature_from(SplitSettings, positional=(), fixed=("method",))
def divergence_range(dataset: "Dataset", *, settings: SplitSettings | None = None,
                     **changes: Any) -> tuple[float, float]:
    """``(lowest, highest)`` D_C the minimising and maximising searches find for ``settings`` and ``changes``
    (:class:`~hf_synthsample.splits.settings.SplitSettings`' fields: this seed and ``restarts``; a sweep runs
    2): the targets :func:`divergence_sweep` can reach, +/- its tolerance.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh"
        ...                                     for a in "abcd" for b in "abc"]})
        >>> low, high = divergence_range(ds, language="sexpr", compound_weights=False, patience=20)
        >>> 0.3 < low < 0.4 < 0.6 < high
        True
    """
    s = settings_of(SplitSettings, (), settings, changes, fixed={"method": "mcd"}, name="divergence_range")
    return MCDSplitter(s).reachable_range(dataset)
