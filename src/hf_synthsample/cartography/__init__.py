"""Dataset cartography: training dynamics, data maps, subsets and curricula (ALGORITHMS.md §6).

* :func:`track_dynamics`: one call on a built ``Trainer`` (or TRL ``SFTTrainer``) that wires the
  three pieces below (ids, collator, column handling) and adds the callback.
* :class:`TrainingDynamicsCallback` (alias :class:`CartographyCallback`) +
  :class:`CartographyCollator` + :func:`add_example_ids`: record per-example, per-epoch inverse
  perplexity / CHIA / AUM margin / EL2N / loss / correctness (forgetting events are counted from
  it; optionally BLEU) during a stock ``Trainer`` run, saved as Parquet with each checkpoint.
* :class:`DataMap`: confidence / variability / correctness, regions, subsets with OOV repair,
  plot and summary; :func:`save_datamap_subset`: a subset as a Hub-layout folder with its provenance. Each measure's direction (which end is hard) is declared once in
  :data:`MEASURE_INFO`; the map's confidence axis, regions and rankings follow it.
* :func:`flag_noisy` (+ :func:`fit_curve`, :func:`noise_window`): likely mislabelled rows, by
  rules read off the run's own dynamics (no labels needed); :func:`flag_noisy_lexical`: the same
  without training, from a word-to-word table of the rows (small sets).
* :class:`ExponentialPacing`, :class:`BinnedCurriculum`: curricula as a training order.

Names are imported lazily: the data-map side does not pull in ``transformers``.

Example:
    >>> from hf_synthsample.cartography import DataMap, CartographyCallback
    >>> CartographyCallback(measures=("inv_ppl",)).measures
    ('inv_ppl',)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

_LAZY = {
    ".callback": ("TrainingDynamicsCallback", "CartographyCallback"),
    ".collator": ("CartographyCollator", "add_example_ids"),
    ".track": ("track_dynamics",),
    ".store": ("load_dynamics",),
    ".datamap": ("DataMap", "REGIONS", "example_tokens", "parse_regions", "MAP_REGIONS"),
    "..curriculum": ("ExponentialPacing", "BinnedCurriculum", "CurriculumSchedule", "curriculum_order"),
    ".noise": ("fit_curve", "noise_window", "flag_noisy", "NoiseFlags", "NoiseFlagger", "add_canaries",
        "canary_recall", "lexical_noise_scores", "flag_noisy_lexical", "LexicalNoiseFlagger"),
    ".settings": ("DataMapSettings", "NoiseSettings", "DynamicsSettings", "LexicalSettings", "LexicalNoiseSettings"),
    ".measures": ("infer_task", "sequence_measures", "forgetting_events", "MEASURES", "MAP_MEASURES", "HARD_END",
        "MEASURE_INFO", "MeasureInfo", "measure_info"),
    ".publish": ("save_datamap_subset",),
}

if TYPE_CHECKING:  # pragma: no cover
    from .callback import CartographyCallback, TrainingDynamicsCallback
    from .collator import CartographyCollator, add_example_ids
    from .store import load_dynamics
    from .track import track_dynamics
    from ..curriculum import BinnedCurriculum, CurriculumSchedule, ExponentialPacing, curriculum_order
    from .datamap import MAP_REGIONS, REGIONS, DataMap, example_tokens, parse_regions
    from .publish import save_datamap_subset
    from .measures import (HARD_END, MAP_MEASURES, MEASURE_INFO, MEASURES, MeasureInfo, forgetting_events,
                           infer_task, measure_info, sequence_measures)
    from .settings import DataMapSettings, DynamicsSettings, LexicalNoiseSettings, LexicalSettings, NoiseSettings
    from .noise import (LexicalNoiseFlagger, NoiseFlagger, NoiseFlags, add_canaries, canary_recall, fit_curve, flag_noisy, flag_noisy_lexical,
                        lexical_noise_scores, noise_window)


__getattr__, __dir__ = attach(__name__, _LAZY)
__all__ = __dir__()
