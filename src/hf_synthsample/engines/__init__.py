"""Engines that generate and sample pools beyond one process: the engine-neutral block function
(:mod:`~hf_synthsample.engines.blocks`, shared with the ``datasets`` builders) and Ray Data
(:mod:`~hf_synthsample.engines.ray`, optional: ``pip install 'hf-synthsample[ray]'``)."""

from .blocks import BlockPlan, block_table, plan_split, plan_splits

__all__ = ["BlockPlan", "block_table", "plan_split", "plan_splits"]
