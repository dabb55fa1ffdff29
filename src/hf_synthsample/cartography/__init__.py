"""Dataset cartography: training dynamics, data maps, subsets and curricula (ALGORITHMS.md §6).

* :func:`track_dynamics` (or by hand: :class:`TrainingDynamicsCallback` alias
  :class:`CartographyCallback`, :class:`CartographyCollator`, :func:`add_example_ids`): record
  per-example, per-epoch measures during a stock ``Trainer`` run, saved with each checkpoint.
* :class:`DataMap`: confidence / variability / correctness, regions, subsets, plots;
  :func:`save_datamap_subset`, :func:`datamap_provenance` (a subset's provenance); each measure's direction is declared once in :data:`MEASURE_INFO`.
* :func:`flag_noisy`, :func:`flag_noisy_lexical`: likely mislabelled rows, without labels.
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
    ".publish": ("save_datamap_subset", "datamap_provenance"),
}

if TYPE_CHECKING:  # pragma: no cover
    from .callback import CartographyCallback, TrainingDynamicsCallback
    from .collator import CartographyCollator, add_example_ids
    from .store import load_dynamics
    from .track import track_dynamics
    from ..curriculum import BinnedCurriculum, CurriculumSchedule, ExponentialPacing, curriculum_order
    from .datamap import MAP_REGIONS, REGIONS, DataMap, example_tokens, parse_regions
    from .publish import datamap_provenance, save_datamap_subset
    from .measures import (HARD_END, MAP_MEASURES, MEASURE_INFO, MEASURES, MeasureInfo, forgetting_events,
                           infer_task, measure_info, sequence_measures)
    from .settings import DataMapSettings, DynamicsSettings, LexicalNoiseSettings, LexicalSettings, NoiseSettings
    from .noise import (LexicalNoiseFlagger, NoiseFlagger, NoiseFlags, add_canaries, canary_recall, fit_curve, flag_noisy, flag_noisy_lexical,
                        lexical_noise_scores, noise_window)


__getattr__, __dir__ = attach(__name__, _LAZY)
__all__ = __dir__()
