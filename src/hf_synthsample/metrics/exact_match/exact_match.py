"""Exact match of predicted programs / action sequences (hf-synthsample local evaluate module)."""

import evaluate

from hf_synthsample.metrics import pair_metric_info
from hf_synthsample.metrics.scores import exact_match

_DESCRIPTION = "Fraction of predictions identical to their reference; whitespace runs are collapsed unless normalize_whitespace=False."
_KWARGS = """
Args:
    predictions (list of str): predicted sequences.
    references (list of str): gold sequences.
    normalize_whitespace (bool): collapse whitespace runs before comparing (default True).
Returns:
    exact_match (float): in [0, 1].
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class ExactMatch(evaluate.Metric):
    def _info(self):
        return pair_metric_info(_DESCRIPTION, _KWARGS)

    def _compute(self, predictions, references, normalize_whitespace=True):
        return {"exact_match": exact_match(predictions, references, normalize_whitespace)}
