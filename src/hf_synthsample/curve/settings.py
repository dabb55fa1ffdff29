"""The settings of a compositionality curve, checked once when made; the ``hf-synthsample curve``
options are generated from the same fields. The splits are made by the
:class:`~hf_synthsample.splits.SweepSettings` the curve holds: every split option
reaches a curve (``sweep``), and its fields may be given by their own names (``targets=``,
``language=``, ``restarts=``; ``sweep__batch_size`` and ``sweep__max_steps`` for the two names the
training has too).

Example:
    >>> s = CurveSettings().replace(targets=[0.1, 0.3], fit_target=95, restarts=3)
    >>> s.sweep.targets, s.sweep.restarts, s.fit_target, s.replace(seed=3).sweep.seed
    ((0.1, 0.3), 3, 95.0, 3)
    >>> CurveSettings(max_steps=0)
    Traceback (most recent call last):
    ...
    ValueError: max_steps must be >= 1, got 0
    >>> CurveSettings().replace(targets=[0.3])
    Traceback (most recent call last):
    ...
    ValueError: targets: a curve needs at least 2 targets, got [0.3]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..settings import Settings, setting
from ..splits.settings import SweepSettings

__all__ = ["CurveSettings", "SCHEDULERS", "ARCHITECTURES", "SWEEP"]

SCHEDULERS = ("linear", "constant_with_warmup", "cosine", "constant")
#: the scratch model built when no model is given (``hf_synthsample.models.build_scratch_model``)
ARCHITECTURES = ("bart", "t5")

#: a curve's splits unless told otherwise: six targets from the lowest D_C the search finds to 0.6, half
#: the rows in train (the rest of the split's fields: :class:`~hf_synthsample.splits.SweepSettings`' defaults),
#: and a search time limit that is a guard (a search it stops short of its target is an error), generous
#: so that a loaded machine never changes the splits
SWEEP = SweepSettings(targets=(0.0, 0.12, 0.24, 0.36, 0.48, 0.6), train_size=0.5, time_limit=600.0)


def _check_sweep(name: str, value: Any) -> SweepSettings:
    if not isinstance(value, SweepSettings):
        raise TypeError(f"{name} must be a hf_synthsample.splits.SweepSettings, got {type(value).__name__} {value!r}")
    if len(value.targets) < 2:
        raise ValueError(f"targets: a curve needs at least 2 targets, got {list(value.targets)}")
    return value


def _check_template(name: str, value: Any) -> str:
    from ..models.causal import check_prompt_template

    return check_prompt_template(name, value)


def _unescape(value: str) -> str:
    """A template typed on a command line: ``\\n`` and ``\\t`` as a newline and a tab."""
    return value.replace("\\n", "\n").replace("\\t", "\t")


def _non_empty(name: str, value: Any) -> Any:
    if value is not None and not value:
        raise ValueError(f"{name} must be a non-empty column name, got {value!r}")
    return value


@dataclass(frozen=True)
class CurveSettings(Settings):
    """Everything a curve needs besides the dataset and the model (``jobs`` / ``threads``: speed only)."""

    sweep: SweepSettings = setting(SWEEP, kind="any", check=_check_sweep, flatten=True,
                                   cli="its fields are options of their own (--targets, --column, --language, ...)",
                                   help="the sweep of splits (hf_synthsample.splits.SweepSettings): its fields may be "
                                        "given by their own names")
    source_column: str | None = setting(None, check=_non_empty, help="the model's input text column [--column]")
    target_column: str = setting("actions", check=_non_empty, help="the model's output text column")
    prompt_template: str = setting("{source}\n", check=_check_template, parse=_unescape,
                                   help="a causal (decoder-only) LM's prompt: the source text put in the placeholder "
                                        "{source}; the completion is the target text and EOS, the loss taken on it "
                                        "only, exact match scored on greedy completions; \\n: a newline (seq2seq "
                                        "models: unused)")
    # training (stock Seq2SeqTrainer; Trainer for a causal LM), to the fit target
    fit_target: float = setting(95.0, min=0.0, max=100.0, min_inclusive=False,
                                help="train each model until its exact match on --fit-rows of its own training rows "
                                     "reaches this (%%)")
    fit_rows: int = setting(300, min=0, help="training rows scored for the fit (a seeded subset; 0 = all)")
    check_every: int = setting(250, min=1, help="steps between two fit checks")
    max_steps: int = setting(3000, min=1, help="step budget of each model: one that has not reached --fit-target by "
                                               "then is reported as not fitted")
    settle_steps: int = setting(1000, min=0, help="steps trained on after the fit target is reached, the learning rate "
                                                  "decayed linearly to 0, before scoring, so that every model is scored "
                                                  "at rest (0 = at the first check that reaches the target); on top of "
                                                  "--max-steps")
    batch_size: int = setting(64, min=1, help="training batch size (per device)")
    learning_rate: float = setting(1e-3, min=0.0, min_inclusive=False, help="peak learning rate")
    warmup_steps: int = setting(100, min=0, help="linear warmup steps")
    scheduler: str = setting("linear", choices=SCHEDULERS,
                             help="learning-rate schedule after the warmup (over --max-steps)")
    # scoring
    test_rows: int = setting(1000, min=0, help="test rows scored per split (a seeded subset, the same for every "
                                               "split; 0 = all)")
    length_bins: int = setting(4, min=0, help="bins of the output length (words of --target-column, at the dataset's "
                                              "quantiles) for the length-standardized test score: each split's exact "
                                              "match per bin, weighed by the dataset's share of the bin, so that splits "
                                              "whose test sides differ in output length are compared at one length mix "
                                              "(0 = off)")
    eval_batch_size: int = setting(128, min=1, help="decoding batch size")
    num_beams: int = setting(1, min=1, help="beams of the decoding (1 = greedy)")
    # the scratch model (only when no model is given)
    architecture: str = setting("bart", choices=ARCHITECTURES, help="scratch model architecture (no --model given)")
    d_model: int = setting(64, min=1, help="scratch model width")
    layers: int = setting(3, min=1, help="scratch model layers, encoder and decoder each")
    ffn: int = setting(128, min=1, help="scratch model feed-forward width")
    heads: int = setting(4, min=1, help="scratch model attention heads (must divide --d-model)")
    dropout: float = setting(0.1, min=0.0, max=1.0, max_inclusive=False, help="scratch model dropout")
    # speed only
    jobs: int = setting(1, min=1, help="models trained at once, each in its own forked process (speed only; for "
                                         "CPUs: on a GPU keep 1)")
    threads: int = setting(1, min=1, help="torch CPU threads per process (speed only)")

    def _check(self) -> None:
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        if self.source == self.target_column:
            raise ValueError(f"target_column must differ from the source column, both are {self.source!r}")

    @property
    def source(self) -> str:
        """The model's input column (``source_column``, else the sweep's ``column``)."""
        return self.source_column or self.sweep.column
