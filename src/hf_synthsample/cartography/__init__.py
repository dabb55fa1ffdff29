"""Dataset cartography: training dynamics, data maps, subsets and curricula (ALGORITHMS.md §6).

* :class:`CartographyCallback` + :class:`CartographyCollator` + :func:`add_example_ids`: record
  per-example, per-epoch inverse perplexity / CHIA / correctness (and optionally BLEU) during a
  stock ``Trainer`` run, saved as Parquet with each checkpoint.
* :class:`DataMap`: confidence / variability / correctness, regions, subsets with OOV repair,
  plot and summary.
* :class:`ExponentialPacing`, :class:`BinnedCurriculum`: curricula as a training order.

Example:
    >>> from hf_synthsample.cartography import DataMap, CartographyCallback
    >>> CartographyCallback(measures=("inv_ppl",)).measures
    ('inv_ppl',)
"""

from .callback import CartographyCallback, CartographyCollator, add_example_ids, load_dynamics
from .curricula import BinnedCurriculum, CurriculumSchedule, ExponentialPacing, curriculum_order
from .datamap import REGIONS, DataMap, example_tokens, parse_regions
from .measures import infer_task, sequence_measures

__all__ = [
    "CartographyCallback",
    "CartographyCollator",
    "add_example_ids",
    "load_dynamics",
    "DataMap",
    "REGIONS",
    "example_tokens",
    "parse_regions",
    "ExponentialPacing",
    "BinnedCurriculum",
    "CurriculumSchedule",
    "curriculum_order",
    "infer_task",
    "sequence_measures",
]
