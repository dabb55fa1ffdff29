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

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..settings import Estimator
from ._data import as_split, check_sides, parent_child_compounds, settings_structures
from .settings import SWEEP_RESTARTS, Goal, SplitSettings, SweepSettings

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
            return simple.template_split(dataset, s.column, s.language, test_size=s.test_size, seed=s.seed,
                                         template_column=s.template_column, size_tolerance=s.size_tolerance_share)
        if s.method == "length":  # ``column`` is read only by the default length
            return simple.length_split(dataset, _words if s.length_column is None else s.length_column,
                                       column=s.column, test_size=s.test_size, size_tolerance=s.size_tolerance_share)
        return simple.random_split(dataset, s.test_size, seed=s.seed)

    def _search_split(self, dataset: "Dataset", compounds_fn: Callable | None, progress: bool | None) -> "DatasetDict":
        from .mcd import search

        s = self.settings
        self.structures_ = settings_structures(dataset, s, compounds_fn)
        result = search(self.structures_, s, progress=progress)
        # the guard every search path ends with: no side short without a word
        check_sides(len(result.test_indices), len(result.train_indices), len(dataset), s.test_size, s.train_size,
                    s.size_tolerance_share)
        split = as_split(dataset, result.test_indices, result.train_indices)
        split.mcd_result = self.result_ = result
        from .disjoint import record_template_overlap

        self.templates_ = record_template_overlap(dataset, result, s)
        return split

    def sweep(self, dataset: "Dataset", targets: Sequence[float] | None = None, *,
              progress: bool | None = None) -> "SplitSweep":
        """MCD splits at each of ``targets`` (default: the settings'); see :func:`~.sweep.divergence_sweep`."""
        from .sweep import run_sweep

        s = self.settings
        if targets is not None or not isinstance(s, SweepSettings):
            s = SweepSettings(**{**s.get_params(), "targets": targets})
        self.sweep_ = run_sweep(dataset, s, progress=progress)
        return self.sweep_

    def reachable_range(self, dataset: "Dataset") -> tuple[float, float]:
        """``(lowest, highest)`` D_C the minimising and maximising searches find for these settings."""
        from .mcd import search_range

        self.range_ = search_range(settings_structures(dataset, self.settings), self.settings)
        return self.range_


def _words(text: Any) -> int:
    """The length split's default length: words of the text."""
    return len(str(text).split())


def mcd_split(
    dataset: "Dataset", column: str = "program", language: str | None = "thingtalk", *, test_size: float = 0.25,
    max_atom_divergence: float = 0.02, seed: int = 0,
    compound_weights: bool | str | Mapping[str, float] | None = None, max_height: int = 2,
    atoms_column: str | None = None, compounds_column: str | None = None, target_divergence: float | None = None,
    minimize: bool = False, divergence_tolerance: float = 0.01, time_limit: float | None = None,
    max_steps: int | None = None, patience: int = 100, batch_size: int = 64, size_tolerance: float = 0.0,
    restarts: int = 0, train_size: float | None = None, skip_unparsable: bool = False, progress: bool | None = None,
    return_result: bool = False, _compounds_fn: Callable | None = None,
) -> "DatasetDict | tuple[DatasetDict, MCDResult]":
    """A maximum-compound-divergence split (Keysers et al. 2020): ``MCDSplitter(...).split(dataset)``.

    The arguments are :class:`~hf_synthsample.splits.settings.SplitSettings`' fields, but for the goal:
    ``target_divergence`` or ``minimize`` (default: the highest D_C). The split has ``.mcd_result``
    (returned too with ``return_result``); a limit returns the split reached so far.
    """
    splitter = MCDSplitter(
        column=column, language=language, test_size=test_size, max_atom_divergence=max_atom_divergence, seed=seed,
        compound_weights=compound_weights, max_height=max_height, atoms_column=atoms_column,
        compounds_column=compounds_column, goal=Goal.of(target_divergence, minimize),
        divergence_tolerance=divergence_tolerance, time_limit=time_limit, max_steps=max_steps, patience=patience,
        batch_size=batch_size, size_tolerance=size_tolerance, restarts=restarts, train_size=train_size,
        skip_unparsable=skip_unparsable)
    split = splitter._search_split(dataset, _compounds_fn, progress)
    return (split, splitter.result_) if return_result else split


def tmcd_split(
    dataset: "Dataset", column: str = "program", language: str | None = "thingtalk", *,
    compounds_fn: Callable | None = None, compound_weights: bool | str | Mapping[str, float] = False, **kwargs: Any,
) -> "DatasetDict | tuple[DatasetDict, MCDResult]":
    """A TMCD split (Shaw et al. 2021): :func:`mcd_split` with the parent-child pairs of the tree
    (:func:`~hf_synthsample.splits._data.parent_child_compounds`) or ``compounds_fn(tree)`` as compounds.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": [f"({f} ({g} {a}))" for f in "pq" for g in "rs" for a in "abcd"]})
        >>> split = tmcd_split(ds, language="sexpr", test_size=0.25, max_atom_divergence=0.1, progress=False)
        >>> len(split["test"]), split.mcd_result.compound_divergence > 0
        (4, True)
    """
    if compounds_fn is not None and not callable(compounds_fn):
        raise TypeError(f"compounds_fn must be callable (tree -> list of compounds), got {compounds_fn!r}")
    if "compounds_column" in kwargs and compounds_fn is not None:
        raise ValueError("compounds_fn and compounds_column: give one source of compounds, not both")
    fn = compounds_fn or (None if kwargs.get("compounds_column") else parent_child_compounds)
    return mcd_split(dataset, column, language, compound_weights=compound_weights, _compounds_fn=fn, **kwargs)


def divergence_sweep(
    dataset: "Dataset", targets: Sequence[float], *, column: str = "program", language: str | None = "thingtalk",
    test_size: float = 0.25, train_size: float | None = None, max_atom_divergence: float = 0.02, seed: int = 0,
    compound_weights: bool | str | Mapping[str, float] | None = None, max_height: int = 2,
    atoms_column: str | None = None, compounds_column: str | None = None, divergence_tolerance: float = 0.01,
    time_limit: float | None = None, max_steps: int | None = None, patience: int = 100, batch_size: int = 64,
    size_tolerance: float = 0.0, restarts: int = SWEEP_RESTARTS, skip_unparsable: bool = False,
    text_column: str | None = None, progress: bool | None = None,
) -> SplitSweep:
    """A :class:`SplitSweep` of ``dataset`` at each compound divergence of ``targets``; the arguments
    are :class:`~hf_synthsample.splits.settings.SweepSettings`' fields, ``progress`` may be a caller's
    ``tqdm`` bar. An unreachable target is an :class:`~hf_synthsample.splits.mcd.UnreachableDivergence`.
    """
    settings = SweepSettings(
        targets=targets, column=column, language=language, test_size=test_size, train_size=train_size,
        max_atom_divergence=max_atom_divergence, seed=seed, compound_weights=compound_weights, max_height=max_height,
        atoms_column=atoms_column, compounds_column=compounds_column, divergence_tolerance=divergence_tolerance,
        time_limit=time_limit, max_steps=max_steps, patience=patience, batch_size=batch_size,
        size_tolerance=size_tolerance, restarts=restarts, skip_unparsable=skip_unparsable, text_column=text_column)
    return MCDSplitter(settings).sweep(dataset, progress=progress)


def divergence_range(
    dataset: "Dataset", *, column: str = "program", language: str | None = "thingtalk", test_size: float = 0.25,
    train_size: float | None = None, max_atom_divergence: float = 0.02, seed: int = 0,
    compound_weights: bool | str | Mapping[str, float] | None = None, max_height: int = 2,
    atoms_column: str | None = None, compounds_column: str | None = None, patience: int = 100, restarts: int = 0,
    size_tolerance: float = 0.0, skip_unparsable: bool = False,
) -> tuple[float, float]:
    """``(lowest, highest)`` D_C the minimising and maximising searches find for this seed and
    ``restarts`` (a sweep runs 2): the targets :func:`divergence_sweep` can reach, +/- its tolerance.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh"
        ...                                     for a in "abcd" for b in "abc"]})
        >>> low, high = divergence_range(ds, language="sexpr", compound_weights=False, patience=20)
        >>> 0.3 < low < 0.4 < 0.6 < high
        True
    """
    return MCDSplitter(column=column, language=language, test_size=test_size, train_size=train_size,
                       max_atom_divergence=max_atom_divergence, seed=seed, compound_weights=compound_weights,
                       max_height=max_height, atoms_column=atoms_column, compounds_column=compounds_column,
                       patience=patience, restarts=restarts, size_tolerance=size_tolerance,
                       skip_unparsable=skip_unparsable).reachable_range(dataset)
