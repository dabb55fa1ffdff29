"""The data-map curricula; they live in :mod:`hf_synthsample.curriculum` (one room for every
curriculum schedule), re-exported here so ``hf_synthsample.cartography.curricula`` keeps working."""

from ..curriculum import BinnedCurriculum, CurriculumSchedule, ExponentialPacing, curriculum_order

__all__ = ["CurriculumSchedule", "ExponentialPacing", "BinnedCurriculum", "curriculum_order"]
