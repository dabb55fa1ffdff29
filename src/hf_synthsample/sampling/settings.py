"""The settings of each sampler, declared once: validated here, read by the samplers (``get_params``,
``set_params``), provenance records and the CLI.

Example:
    >>> UATSettings(alpha=-0.5).get_params()["alpha"]
    -0.5
    >>> HomogenizeSettings(columns=[])
    Traceback (most recent call last):
    ...
    ValueError: columns: give at least one column to homogenize
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..settings import Settings, setting
from ..validation import check_device, check_float, check_int, check_non_empty_str
from ..structure.language import DEFAULT_LANGUAGE

__all__ = ["StructureSource", "UniformSettings", "UATSettings", "CMaxEntSettings", "HomogenizeSettings", "DifficultySettings",
           "StreamHomogenizeSettings", "DiversitySettings", "RepetitionSettings", "MISSING_POLICIES", "MODES", "SAMPLER_SETTINGS"]

#: what a sampler does with rows whose value it needs is missing (null / NaN): an error, or never select them
MISSING_POLICIES = ("raise", "drop")

#: homogenization modes: the joint distribution of the columns, or one column after another
MODES = ("joint", "sequential")

_PROGRESS = "a display option (the CLI follows datasets' progress bars)"


def _missing(help_of: str) -> Any:
    return setting("raise", help=f"rows whose {help_of} is missing (null or NaN): 'raise' (an error naming the "
                                 "column, the count and the first row) or 'drop' (never selected)",
                   choices=MISSING_POLICIES)


def _progress(name: str, value: Any) -> Any:
    from ..progress import show_progress

    show_progress(value, None)  # checks the type
    return value


def _language(name: str, value: Any) -> Any:
    from ..structure.language import check_language

    return check_language(name, value)


def _at_least_one(what: str) -> Callable[[str, Any], Any]:
    def check(name: str, value: tuple) -> tuple:
        if not value:
            raise ValueError(f"{name}: give at least one {what}")
        return value

    return check


def _weights_check(pool_variant: bool) -> Callable[[str, Any], Any]:
    def check(name: str, value: Any) -> Any:
        if isinstance(value, Mapping):
            for compound, weight in value.items():  # finite, >= 0: an inf or NaN weight is no weight
                check_float(f"{name}[{compound!r}]", weight, min=0.0)
            return value
        if value is None or (pool_variant and isinstance(value, bool)):
            return value
        raise TypeError(f"{name} must be None{', a bool' if pool_variant else ''} or a mapping compound -> weight, "
                        f"got {value!r}")

    return check


def _bins_of(name: str, value: Any) -> Any:
    """One column's bins: a count (int >= 1) or edges (finite numbers, strictly increasing)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a count of bins (an int >= 1) or bin edges (increasing numbers), got {value!r}")
    if isinstance(value, numbers.Integral):
        return check_int(name, value, min=1)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a count of bins (an int >= 1) or bin edges (increasing numbers), got "
                        f"{type(value).__name__} {value!r}")
    edges = [check_float(name, v) for v in value]
    if any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"{name}: bin edges must be strictly increasing, got {list(edges)}")
    return value


def _bins(name: str, value: Any) -> Any:
    """``bins``: ``None``, a count or edges, or a mapping column -> either (its columns: checked by the settings)."""
    if value is None:
        return value
    if isinstance(value, Mapping):
        for column, per_column in value.items():
            if not isinstance(column, str):
                raise TypeError(f"{name}: the keys are column names (str), got {column!r}")
            _bins_of(f"{name}[{column!r}]", per_column)
        return value
    return _bins_of(name, value)


def _quantile(name: str, value: Any) -> Any:
    if isinstance(value, str):
        if value != "mix":
            raise ValueError(f"{name}: a (lo, hi) pair in [0, 1] or 'mix', got {value!r}")
        return value
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(f"{name}: a (lo, hi) pair in [0, 1] or 'mix', got {value!r}") from None
    lo, hi = check_float(name, lo, min=0.0, max=1.0), check_float(name, hi, min=0.0, max=1.0)
    if not lo < hi:
        raise ValueError(f"{name}: need lo < hi, got {value!r}")
    return (lo, hi)


@dataclass(frozen=True)
class UniformSettings(Settings):
    """:class:`~hf_synthsample.sampling.UniformSampler`: ``k`` rows uniformly, without replacement."""

    seed: int = setting(0, help="random seed; same seed, same rows", min=0)


@dataclass(frozen=True)
class StructureSource(Settings):
    """Where the rows' structure comes from: existing ``template`` / ``atoms`` / ``compounds``
    columns, or a program column parsed with a language (``hf_synthsample.structure.languages()``)."""

    program_column: str = setting("program", help="program column parsed when a structure column is missing",
                                  check=check_non_empty_str)
    language: Any = setting(DEFAULT_LANGUAGE, help="structure language of the programs (a name or a "
                                              "hf_synthsample.structure.Language)", kind="any", check=_language)
    max_height: int = setting(2, help="compound height when compounds are computed from programs", min=1)
    skip_unparsable: bool = setting(False, help="leave rows whose program does not parse out instead of failing")
    progress: bool | None = setting(None, help="progress bars while parsing (None: on for 10,000 programs or more "
                                               "unless datasets' bars are off)", kind="any", check=_progress,
                                    cli=_PROGRESS)


@dataclass(frozen=True)
class _StructureSettings(StructureSource):
    """A structural sampler's: the structure source, missing values and the seed."""

    missing: str = _missing("structure value (template, atoms, compounds)")
    seed: int = setting(0, help="random seed; same seed, same rows", min=0)


@dataclass(frozen=True)
class UATSettings(_StructureSettings):
    """:class:`~hf_synthsample.sampling.UATSampler`: row weights ``p(template)^alpha``."""

    alpha: float = setting(-1.0, help="template weight exponent: 0 uniform over rows, -1 uniform over templates",
                           min=-1.0, max=0.0)
    template_column: str = setting("template", help="template column (else computed from the program column)")


@dataclass(frozen=True)
class CMaxEntSettings(_StructureSettings):
    """:class:`~hf_synthsample.sampling.CMaxEntSampler` and ``HybridSampler``: the greedy of atom and
    compound entropy."""

    w_atoms: float = setting(1.0, help="weight of the atom entropy", min=0.0)
    w_compounds: float = setting(1.0, help="weight of the compound entropy", min=0.0)
    compound_weights: Any = setting(None, help="True: one weight per compound over the pool; a mapping compound -> "
                                               "weight; None: all 1", kind="any", check=_weights_check(True),
                                    cli="a mapping or the pool variant: set it from Python")
    device: str = setting("cpu", help="torch device of the per-step vector work ('cuda' for big pools)",
                          check=check_device)  # before any work, not at the first tensor
    distinct: bool = setting(True, help="each structure (program with values abstracted) at most once")


@dataclass(frozen=True)
class HomogenizeSettings(Settings):
    """:class:`~hf_synthsample.sampling.HomogenizeSampler`: as uniform as the pool allows over columns."""

    columns: tuple[str, ...] = setting(help="salient column name(s)", check=_at_least_one("column to homogenize"))
    mode: str = setting("joint", help="'joint' (the joint distribution) or 'sequential' (one column after "
                                      "another)", choices=MODES)
    bins: Any = setting(None, help="bins for numeric columns: a count, edges, or a mapping column -> either",
                        kind="any", check=_bins,
                        cli="edges or a mapping: set it from Python (the CLI's --bins is a count)")
    missing: str = _missing("value in a column")
    seed: int = setting(0, help="random seed; same seed, same rows", min=0)

    def _check(self) -> None:
        if isinstance(self.bins, Mapping):
            unknown = [c for c in self.bins if c not in self.columns]
            if unknown:
                raise ValueError(f"bins: {unknown[0]!r} is not one of the columns; its keys must be among "
                                 f"{list(self.columns)}")


@dataclass(frozen=True)
class DiversitySettings(StructureSource):
    """:class:`~hf_synthsample.sampling.DiversityReporter` and ``diversity_report``: a structure source, weights."""

    compound_weights: Any = setting(None, help="a mapping compound -> weight of the compound entropy and D_C; None: "
                                               "all 1", kind="any", check=_weights_check(False),
                                    cli="a mapping: set it from Python")


@dataclass(frozen=True)
class StreamHomogenizeSettings(Settings):
    """:class:`~hf_synthsample.sampling.StreamHomogenizeSampler` and ``homogenize_stream``: rejection
    sampling of a generator's rows (generator-side homogenization)."""

    variables: tuple[str, ...] = setting(help="salient variable name(s) to homogenize: keys of the drawn rows",
                                         check=_at_least_one("salient variable to homogenize"))
    eps: float = setting(0.01, help="tolerance in (0, 1]: values rarer than eps are always kept, commoner ones "
                                    "thinned to about eps each; expected draws per row 1 / sum_v min(P(v), eps)",
                         min=0.0, min_inclusive=False, max=1.0)
    mode: str = setting("joint", help="'joint' (the tuple of values) or 'sequential' (nested rejection samplers, "
                                      "one per variable)", choices=MODES)
    pilot: int = setting(0, help="draws that start the running estimate (0: the paper's algorithm)", min=0)
    seed: int = setting(0, help="seed of the random source (draws and acceptances) when none is given", min=0)


@dataclass(frozen=True)
class DifficultySettings(Settings):
    """:class:`~hf_synthsample.sampling.DifficultySampler`: rows by difficulty quantile."""

    column: str = setting(help="the difficulty column (numeric)")
    quantile: Any = setting((0.0, 0.5), help="(lo, hi) in [0, 1], lo < hi: rows ranked in [lo N, hi N); or 'mix': "
                                            "the k // 2 easiest and the rest hardest", kind="any", check=_quantile)
    missing: str = _missing("difficulty")
    seed: int = setting(0, help="which k rows of a quantile are taken", min=0)


@dataclass(frozen=True)
class RepetitionSettings(Settings):
    """:class:`~hf_synthsample.sampling.RepetitionCurriculum`: which rows are repeated first, and when
    the pool of rows grows (the shares of the optimizer steps)."""

    batch_size: int = setting(help="examples per optimizer step", min=1)
    repeat: str = setting("examples", choices=("examples", "primitives"),
                          help="the initial pool: a random fraction of the examples, or the examples whose "
                               "primitives all lie in a random fraction of the primitives")
    fraction: float = setting(0.2, help="share of the examples (or primitives) drawn for the initial pool",
                              min=0.0, max=1.0)
    hold: float = setting(0.2, help="share of the steps trained on the initial pool only", min=0.0, max=1.0)
    full_at: float = setting(0.8, help="share of the steps after which the pool holds every example (>= hold)",
                             min=0.0, max=1.0)
    seed: int = setting(0, help="random seed of the initial pool and the batch draws; same seed, same order", min=0)

    def _check(self) -> None:
        if self.full_at < self.hold:
            raise ValueError(f"full_at must be >= hold ({self.hold}), got {self.full_at}")


#: the CLI's sampler names -> their settings
SAMPLER_SETTINGS = {"uniform": UniformSettings, "uat": UATSettings, "cmaxent": CMaxEntSettings,
                    "hybrid": CMaxEntSettings}
