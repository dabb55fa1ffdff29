"""BLEU via sacrebleu, predictions as hypotheses and gold as references (hf-synthsample local evaluate module)."""

import evaluate

from hf_synthsample.metrics import pair_metric_info
from hf_synthsample.metrics.scores import bleu

_DESCRIPTION = "Corpus BLEU and mean sentence BLEU with sacrebleu (one reference per prediction)."
_KWARGS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str): one gold reference each.
    tokenize (str): sacrebleu tokenizer (default "13a").
Returns:
    bleu (float, 0-100): corpus BLEU; mean_sentence_bleu (float, 0-100).
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class Bleu(evaluate.Metric):
    def _info(self):
        return pair_metric_info(_DESCRIPTION, _KWARGS, citation='Post, A Call for Clarity in Reporting BLEU Scores, WMT 2018.')

    def _compute(self, predictions, references, tokenize="13a"):
        return bleu(predictions, references, tokenize)
