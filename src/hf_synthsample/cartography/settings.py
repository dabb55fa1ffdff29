"""The settings of the cartography jobs, declared once and validated at construction (a bad
value names its field): :class:`DataMapSettings` (also the ``datamap`` command's options),
:class:`NoiseSettings`, :class:`LexicalNoiseSettings` and :class:`DynamicsSettings`. A measure is
held by name and handed on as its :class:`~hf_synthsample.cartography.measures.MeasureInfo`
(``.measure_info``).

Example:
    >>> DataMapSettings(measure="loss").measure_info.confidence_sign
    -1.0
    >>> DataMapSettings(min_epoch=2, max_epoch=1)
    Traceback (most recent call last):
    ...
    ValueError: min_epoch (2) must be <= max_epoch (1)
    >>> NoiseSettings(count=5, patience=0)
    Traceback (most recent call last):
    ...
    ValueError: patience must be >= 1, got 0
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..settings import Settings, setting
from ..validation import check_non_empty_str, check_writable_path
from .measures import MAP_MEASURES, MEASURE_INFO, MEASURES, TASKS, MeasureInfo

__all__ = ["DataMapSettings", "NoiseSettings", "LexicalSettings", "LexicalNoiseSettings", "DynamicsSettings",
           "NAN_POLICIES"]

NAN_POLICIES = ("raise", "omit", "drop")


def _map_measure(name: str, value: Any) -> str:
    """A measure a data map's confidence axis can be built on (a name or its ``MeasureInfo``) -> its name."""
    if isinstance(value, MeasureInfo):
        value = value.name
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, one of {list(MAP_MEASURES)}, got {value!r}")
    info = MEASURE_INFO.get(value)
    if info is None:
        raise ValueError(f"{name} must be one of {list(MAP_MEASURES)}, got {value!r}")
    if info.kind not in ("step", "decode"):
        raise ValueError(
            f"{name} {value!r} cannot be a data map's confidence axis: it is "
            + ("counted from the correctness history" if info.kind == "counted" else "an axis of the map itself")
            + f". Build the map on one of {list(MAP_MEASURES)} and rank by it: dm.ranking({value!r})")
    return value


class _MeasureSettings(Settings):
    @property
    def measure_info(self) -> MeasureInfo:
        """The declaration of :attr:`measure` (its direction, label, range)."""
        return MEASURE_INFO[self.measure]


@dataclass(frozen=True)
class DataMapSettings(_MeasureSettings):
    """:meth:`DataMap.from_dynamics <hf_synthsample.cartography.DataMap.from_dynamics>`: the measure
    and epoch window a map is computed over (checked against the dynamics when they are read)."""

    measure: str = setting("inv_ppl", check=_map_measure, kind="any",
                           help="the measure the confidence axis is built on, one the dynamics recorded (bleu: with "
                                "--source eval); confidence is its mean, negated for a higher = harder measure ("
                                + ", ".join(m.name for m in MEASURE_INFO.values()
                                            if m.kind in ("step", "decode") and m.hard_end == "high")
                                + "), so hard-to-learn is always the hard end [inv_ppl]")
    source: str = setting("train", help="training or dropout-free pass [train]", choices=("train", "eval"))
    min_epoch: int | None = setting(None, help="first epoch of the window (0-based) [first recorded]", min=0)
    max_epoch: int | None = setting(None, help="convergence epoch, inclusive [last recorded]", min=0)
    correctness: str | None = setting(None, choices=("correct", "exact_match"),
                                      help="the boolean column counted as correct [exact_match for bleu when "
                                           "recorded, else correct]")
    nan_policy: str = setting("raise", choices=NAN_POLICIES,
                              help="NaN (or missing) values of the measure in the window: raise, omit those epochs (an "
                                   "example left with none is left out), or drop those examples; both log how many "
                                   "[raise]")

    def _check(self) -> None:
        if self.min_epoch is not None and self.max_epoch is not None and self.min_epoch > self.max_epoch:
            raise ValueError(f"min_epoch ({self.min_epoch}) must be <= max_epoch ({self.max_epoch})")


def _bool(name: str, value: Any) -> bool:
    """A bool: ``True`` or ``False`` (a string such as ``"no"`` is not read as one)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def _fraction() -> Any:
    return setting(None, help="share of the rows to flag, in (0, 1] (or give count)", min=0.0, max=1.0,
                   min_inclusive=False)


def _count() -> Any:
    return setting(None, help="how many rows to flag (or give fraction)", min=1)


def _one_of(job: str, unit: str, settings: Any) -> None:
    if (settings.fraction is None) == (settings.count is None):
        raise ValueError(f"{job}: give exactly one of fraction= (in (0, 1]) or count= (1..number of {unit})")


@dataclass(frozen=True)
class NoiseSettings(_MeasureSettings):
    """:func:`~hf_synthsample.cartography.flag_noisy`: how many rows to flag, by which measure, over
    which window, and when the loss counts as plateaued."""

    fraction: float | None = _fraction()
    count: int | None = _count()
    measure: str = setting("margin_deficit", choices=tuple(n for n in MEASURE_INFO if n != "confidence"),
                           help="what ranks the rows, hard end first: inv_ppl for a model that memorises some wrong "
                                "rows late, margin_deficit for short targets, min_margin for long ones")
    loss_drop: float = setting(0.9, help="the window starts at the first epoch whose mean loss has made this share "
                                         "of its fall", min=0.0, max=1.0, min_inclusive=False)
    min_gain: float = setting(0.02, help="plateaued: the loss fell by less than this (relative) per epoch", min=0.0)
    patience: int = setting(3, help="plateaued: over this many last epochs", min=1)

    def _check(self) -> None:
        _one_of("flag_noisy", "examples", self)


@dataclass(frozen=True)
class LexicalSettings(Settings):
    """:func:`~hf_synthsample.cartography.lexical_noise_scores`: the word-to-word tables (IBM Model 1) fitted by EM."""

    iterations: int = setting(10, help="EM steps of each translation table", min=1)
    smoothing: float = setting(1e-3, help="added to every word pair's count at each EM step", min=0.0,
                               min_inclusive=False)


@dataclass(frozen=True)
class LexicalNoiseSettings(LexicalSettings):
    """:class:`~hf_synthsample.cartography.LexicalNoiseFlagger` and ``flag_noisy_lexical``: the
    tables, and how many rows to flag."""

    fraction: float | None = _fraction()
    count: int | None = _count()

    def _check(self) -> None:
        _one_of("flag_noisy_lexical", "rows", self)


def _folder(name: str, value: Any) -> str:
    """A folder path as ``str``; ``True`` or another type is a ``TypeError`` naming the field (not
    ``os.fspath``'s bare message): the Trainer's ``resume_from_checkpoint=True`` has no folder here."""
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a checkpoint folder (str or os.PathLike), got {type(value).__name__} "
                        f"{value!r}; pass the folder the Trainer resumes from")
    return os.fspath(value)


@dataclass(frozen=True)
class DynamicsSettings(Settings):
    """:class:`~hf_synthsample.cartography.TrainingDynamicsCallback` and ``track_dynamics``: what is
    recorded and where."""

    measures: tuple[str, ...] = setting(("inv_ppl", "chia"), choices=MEASURES, kind="strs",
                                        help="measures to record (correct and the gold token count always are)")
    output_dir: Any = setting(None, kind="any", none=True,
                              check=lambda name, v: check_writable_path(name, v, folder=True),
                              help="where the final dynamics go [<args.output_dir>/cartography]")
    task: str = setting("auto", choices=("auto", *TASKS), help="the task layout, or auto (from the model class)")
    id_column: str = setting("example_id", kind="any", check=check_non_empty_str, help="the example-id column")
    eval_pass: Any = setting(False, kind="any", check=_bool,
                             help="also a dropout-free pass at each epoch end (implied by bleu: held True with it)")
    eval_examples: int | None = setting(None, min=1, help="examples of that pass, drawn with seed [all]")
    eval_batch_size: int | None = setting(None, min=1, help="batch size of that pass [per_device_eval_batch_size]")
    max_new_tokens: int | None = setting(None, min=1, help="decode length limit [gold length + 5]")
    seed: int = setting(0, help="seed of the eval_examples draw", min=0)
    resume_from: Any = setting(None, kind="any", none=True, check=_folder,
                               help="a checkpoint folder whose dynamics to reload on resume")

    def _check(self) -> None:
        if not self.measures:
            raise ValueError(f"measures must name at least one of {list(MEASURES)}")
        if "bleu" in self.measures and not self.eval_pass:  # bleu is scored by that pass: the settings say it runs
            object.__setattr__(self, "eval_pass", True)
