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

# module -> the public names it defines
_LAZY = {
    ".load": ("load_dataset", "load_dataset_builder"),
    ".builders": ("list_domains",),
    ".builders.base": ("homogenization_report",),
    ".sampling.homogenize": ("HomogenizeSampler", "homogenize_indices", "homogenize_stream"),
    ".sampling.report": ("HomogenizationReport", "kl_to_uniform"),
    ".hub": ("materialize", "write_hub_folder", "Provenance", "save_curated", "push_curated"),
    ".domains.scan_augment": ("AugZero", "PrimitiveAugmenter", "scan_complexity_columns"),
    ".domains.scan_interpreter": ("interpret_scan",),
    ".structure": ("abstract_template", "atoms", "compounds", "StructureFunction", "structure_diagnostics"),
    ".sampling.structural": ("UniformSampler", "UATSampler", "CMaxEntSampler", "HybridSampler"),
    ".sampling.diversity": ("DiversityReport", "diversity_report"),
    ".sampling.difficulty": ("ComplexityFunction", "DifficultySampler", "prototype_difficulty"),
    ".sampling.repetition": ("RepetitionCurriculum",),
    ".splits.splitter": ("mcd_split", "tmcd_split", "divergence_sweep"),
    ".splits.simple": ("template_split", "length_split", "random_split"),
    ".splits.report": ("split_report",),
    ".splits.disjoint": ("structure_report",),
    ".curve.run": ("compositionality_curve", "CompositionalityCurve"),
    ".builders.karel": ("resample_karel_io",),
    ".cartography.callback": ("CartographyCallback", "TrainingDynamicsCallback", "CartographyCollator",
        "add_example_ids"),
    ".cartography.track": ("track_dynamics",),
    ".cartography.store": ("load_dynamics",),
    ".cartography.datamap": ("DataMap",),
    ".curriculum": ("ExponentialPacing", "BinnedCurriculum"),
    ".models.tokenization": ("build_word_tokenizer", "build_char_tokenizer"),
    ".models.scratch": ("scratch_config", "build_scratch_model"),
    ".models.seq2seq": ("tokenize_seq2seq", "train_seq2seq", "generate_predictions", "evaluate_seq2seq",
        "load_seq2seq"),
    ".models.calculator": ("CharLSTMConfig", "CharLSTMForSequenceClassification", "build_calculator_model",
        "train_classifier", "predict_classifier", "evaluate_classifier"),
}

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
    from .splits.splitter import divergence_sweep, mcd_split, tmcd_split
    from .splits.disjoint import structure_report
    from .splits.report import split_report
    from .curve.run import CompositionalityCurve, compositionality_curve
    from .splits.simple import length_split, random_split, template_split
    from .structure import StructureFunction, abstract_template, atoms, compounds, structure_diagnostics


__getattr__, __dir__ = attach(__name__, _LAZY, extra=("__version__", "logging"))
__all__ = __dir__()
