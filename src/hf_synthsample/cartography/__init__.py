"""Dataset cartography: training dynamics, data maps, subsets and curricula (ALGORITHMS.md §6).

Example:
    >>> from hf_synthsample.cartography import sequence_measures, CartographyCallback
"""

from .callback import CartographyCallback, CartographyCollator, add_example_ids, load_dynamics
from .measures import infer_task, sequence_measures

__all__ = [
    "CartographyCallback",
    "CartographyCollator",
    "add_example_ids",
    "load_dynamics",
    "infer_task",
    "sequence_measures",
]
