"""Models for synthetic tasks: tokenizers from a dataset's vocabulary, the field's small seq2seq
Transformer, a pre-trained encoder-decoder warm-started from a local encoder checkpoint
(``warm_start_seq2seq``, BERT2BERT), training / generation / exact-match helpers, and the Calculator
character LSTM.

Everything is a stock ``transformers`` object (``PreTrainedTokenizerFast``, ``T5Config``,
``Seq2SeqTrainer``, ``PreTrainedModel``), so ``save_pretrained`` / ``from_pretrained``,
``accelerate launch`` and the Hub work as usual. Names are imported lazily (no torch at import).

Example:
    >>> from hf_synthsample.models import build_word_tokenizer, scratch_config
    >>> scratch_config(build_word_tokenizer(["a b"])).num_heads
    4
"""

from __future__ import annotations

from .._lazy import attach

_LAZY = {
    "build_word_tokenizer": ".tokenization",
    "build_char_tokenizer": ".tokenization",
    "scratch_config": ".scratch",
    "build_scratch_model": ".scratch",
    "tokenize_seq2seq": ".seq2seq",
    "seq2seq_collator": ".seq2seq",
    "train_seq2seq": ".seq2seq",
    "generate_predictions": ".seq2seq",
    "evaluate_seq2seq": ".seq2seq",
    "load_seq2seq": ".seq2seq",
    "warm_start_seq2seq": ".warm_start",
    "shipped_minilm_path": ".warm_start",
    "FitTargetCallback": ".fit_stop",
    "LSTMSeq2SeqConfig": ".lstm",
    "LSTMSeq2SeqForConditionalGeneration": ".lstm",
    "CharLSTMConfig": ".calculator",
    "CharLSTMForSequenceClassification": ".calculator",
    "build_calculator_model": ".calculator",
    "train_classifier": ".calculator",
    "predict_classifier": ".calculator",
    "evaluate_classifier": ".calculator",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = attach(__name__, _LAZY)
