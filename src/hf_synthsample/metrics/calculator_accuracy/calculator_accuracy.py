"""Calculator accuracy: predicted answer (0-9) equals the expression's value mod 10 (hf-synthsample local evaluate module)."""

import evaluate

from hf_synthsample.metrics import pair_metric_info
from hf_synthsample.metrics.scores import calculator_accuracy

_DESCRIPTION = "Accuracy of Calculator answers, overall and per group (e.g. the source distribution of a mixture)."
_KWARGS = """
Args:
    predictions (list of int): predicted answers 0-9.
    references (list of int): gold answers 0-9.
    groups (list of str, optional): a group per example; adds accuracy_<group> entries.
Returns:
    accuracy (float), and accuracy_<group> (float) per group.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class CalculatorAccuracy(evaluate.Metric):
    def _info(self):
        return pair_metric_info(_DESCRIPTION, _KWARGS, citation='Shin et al., Synthetic Datasets for Neural Program Synthesis, ICLR 2019.', dtype='int32')

    def _compute(self, predictions, references, groups=None):
        return calculator_accuracy(predictions, references, groups)
