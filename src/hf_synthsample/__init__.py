"""hf-synthsample: synthetic data generators, samplers and dataset cartography for Hugging Face.

The public API is imported lazily, so ``import hf_synthsample`` is fast and pulls in neither
``torch`` nor ``datasets`` until something that needs them is used.

Example:
    >>> import hf_synthsample
    >>> ds = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=100, homogenize="length")
    >>> ds["train"][0]["answer"] in range(10)
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import logging  # stdlib only: sets up the hf_synthsample.* loggers' verbosity (see its docstring)
from ._lazy import attach
from ._version import __version__

# public name -> module that defines it
_LAZY = {
    "load_dataset": "hf_synthsample.load",
    "load_dataset_builder": "hf_synthsample.load",
    "list_domains": "hf_synthsample.builders",
    "homogenization_report": "hf_synthsample.builders.base",
    "HomogenizeSampler": "hf_synthsample.sampling.homogenize",
    "homogenize_indices": "hf_synthsample.sampling.homogenize",
    "homogenize_stream": "hf_synthsample.sampling.homogenize",
    "HomogenizationReport": "hf_synthsample.sampling.report",
    "kl_to_uniform": "hf_synthsample.sampling.report",
    "materialize": "hf_synthsample.hub",
    "write_hub_folder": "hf_synthsample.hub",
    "Provenance": "hf_synthsample.hub",
    "save_curated": "hf_synthsample.hub",
    "push_curated": "hf_synthsample.hub",
    "AugZero": "hf_synthsample.domains.scan_augment",
    "PrimitiveAugmenter": "hf_synthsample.domains.scan_augment",
    "scan_complexity_columns": "hf_synthsample.domains.scan_augment",
    "interpret_scan": "hf_synthsample.domains.scan_interpreter",
    "abstract_template": "hf_synthsample.structure",
    "atoms": "hf_synthsample.structure",
    "compounds": "hf_synthsample.structure",
    "StructureFunction": "hf_synthsample.structure",
    "UniformSampler": "hf_synthsample.sampling.structural",
    "UATSampler": "hf_synthsample.sampling.structural",
    "CMaxEntSampler": "hf_synthsample.sampling.structural",
    "HybridSampler": "hf_synthsample.sampling.structural",
    "DiversityReport": "hf_synthsample.sampling.diversity",
    "diversity_report": "hf_synthsample.sampling.diversity",
    "ComplexityFunction": "hf_synthsample.sampling.difficulty",
    "DifficultySampler": "hf_synthsample.sampling.difficulty",
    "prototype_difficulty": "hf_synthsample.sampling.difficulty",
    "RepetitionCurriculum": "hf_synthsample.sampling.repetition",
    "structure_diagnostics": "hf_synthsample.structure",
    "mcd_split": "hf_synthsample.splits.mcd",
    "tmcd_split": "hf_synthsample.splits.mcd",
    "divergence_sweep": "hf_synthsample.splits.sweep",
    "template_split": "hf_synthsample.splits.simple",
    "length_split": "hf_synthsample.splits.simple",
    "random_split": "hf_synthsample.splits.simple",
    "split_report": "hf_synthsample.splits.report",
    "compositionality_curve": "hf_synthsample.curve.run",
    "CompositionalityCurve": "hf_synthsample.curve.run",
    "resample_karel_io": "hf_synthsample.builders.karel",
    "CartographyCallback": "hf_synthsample.cartography.callback",
    "TrainingDynamicsCallback": "hf_synthsample.cartography.callback",
    "CartographyCollator": "hf_synthsample.cartography.callback",
    "add_example_ids": "hf_synthsample.cartography.callback",
    "track_dynamics": "hf_synthsample.cartography.track",
    "load_dynamics": "hf_synthsample.cartography.store",
    "DataMap": "hf_synthsample.cartography.datamap",
    "ExponentialPacing": "hf_synthsample.curriculum",
    "BinnedCurriculum": "hf_synthsample.curriculum",
    "build_word_tokenizer": "hf_synthsample.models.tokenization",
    "build_char_tokenizer": "hf_synthsample.models.tokenization",
    "scratch_config": "hf_synthsample.models.scratch",
    "build_scratch_model": "hf_synthsample.models.scratch",
    "tokenize_seq2seq": "hf_synthsample.models.seq2seq",
    "train_seq2seq": "hf_synthsample.models.seq2seq",
    "generate_predictions": "hf_synthsample.models.seq2seq",
    "evaluate_seq2seq": "hf_synthsample.models.seq2seq",
    "load_seq2seq": "hf_synthsample.models.seq2seq",
    "CharLSTMConfig": "hf_synthsample.models.calculator",
    "CharLSTMForSequenceClassification": "hf_synthsample.models.calculator",
    "build_calculator_model": "hf_synthsample.models.calculator",
    "train_classifier": "hf_synthsample.models.calculator",
    "predict_classifier": "hf_synthsample.models.calculator",
    "evaluate_classifier": "hf_synthsample.models.calculator",
}

__all__ = ["__version__", "logging", *_LAZY]

if TYPE_CHECKING:  # pragma: no cover
    from .builders import list_domains
    from .builders.base import homogenization_report
    from .domains.scan_augment import AugZero, PrimitiveAugmenter, scan_complexity_columns
    from .domains.scan_interpreter import interpret_scan
    from .cartography.callback import CartographyCallback, CartographyCollator, TrainingDynamicsCallback, add_example_ids
    from .cartography.store import load_dynamics
    from .cartography.track import track_dynamics
    from .curriculum import BinnedCurriculum, ExponentialPacing
    from .cartography.datamap import DataMap
    from .hub import Provenance, materialize, push_curated, save_curated, write_hub_folder
    from .load import load_dataset, load_dataset_builder
    from .models.calculator import (
        CharLSTMConfig,
        CharLSTMForSequenceClassification,
        build_calculator_model,
        evaluate_classifier,
        predict_classifier,
        train_classifier,
    )
    from .models.scratch import build_scratch_model, scratch_config
    from .models.seq2seq import evaluate_seq2seq, generate_predictions, load_seq2seq, tokenize_seq2seq, train_seq2seq
    from .models.tokenization import build_char_tokenizer, build_word_tokenizer
    from .sampling.homogenize import HomogenizeSampler, homogenize_indices, homogenize_stream
    from .sampling.report import HomogenizationReport, kl_to_uniform
    from .sampling.difficulty import ComplexityFunction, DifficultySampler, prototype_difficulty
    from .sampling.diversity import DiversityReport, diversity_report
    from .sampling.repetition import RepetitionCurriculum
    from .sampling.structural import CMaxEntSampler, HybridSampler, UATSampler, UniformSampler
    from .splits.mcd import mcd_split, tmcd_split
    from .splits.report import split_report
    from .splits.sweep import divergence_sweep
    from .curve.run import CompositionalityCurve, compositionality_curve
    from .splits.simple import length_split, random_split, template_split
    from .structure import StructureFunction, abstract_template, atoms, compounds, structure_diagnostics


__getattr__, __dir__ = attach(__name__, _LAZY, extra=("__version__", "logging"))
