"""Samplers that select rows of a ``Dataset`` (usable with ``select`` / ``filter``) and their reports."""

from .base import BaseSampler
from .homogenize import HomogenizeSampler, StreamHomogenizeSampler, homogenize_indices, homogenize_stream
from .report import HomogenizationReport, kl_to_uniform
from .difficulty import ComplexityFunction, DifficultySampler, prototype_difficulty
from .diversity import DiversityReport, DiversityReporter, diversity_report
from .repetition import RepetitionCurriculum
from .structural import CMaxEntSampler, HybridSampler, UATSampler, UniformSampler

__all__ = ["BaseSampler", "HomogenizeSampler", "homogenize_indices", "homogenize_stream", "StreamHomogenizeSampler",
    "HomogenizationReport", "kl_to_uniform", "UniformSampler", "UATSampler", "CMaxEntSampler", "HybridSampler",
    "DiversityReport", "diversity_report", "DiversityReporter", "ComplexityFunction", "DifficultySampler",
    "prototype_difficulty", "RepetitionCurriculum"]
