"""Models for synthetic tasks: tokenizers from a dataset's vocabulary, the field's small seq2seq
models (Transformer, LSTM, BERT2BERT warm start), training / generation / exact-match helpers, and
the Calculator character LSTM; all stock ``transformers`` objects. Names are imported lazily.

Example:
    >>> from hf_synthsample.models import build_word_tokenizer, scratch_config
    >>> scratch_config(build_word_tokenizer(["a b"])).num_heads
    4
"""

from __future__ import annotations

from .._lazy import attach

_LAZY = {
    ".tokenization": ("build_word_tokenizer", "build_char_tokenizer"),
    ".scratch": ("scratch_config", "build_scratch_model"),
    ".seq2seq": ("tokenize_seq2seq", "seq2seq_collator", "train_seq2seq", "generate_predictions", "evaluate_seq2seq",
        "load_seq2seq"),
    ".causal": ("tokenize_causal", "CausalCollator", "train_causal", "generate_completions", "evaluate_causal",
        "load_causal", "model_kind"),
    ".warm_start": ("warm_start_seq2seq", "shipped_minilm_path"),
    ".fit_stop": ("FitTargetCallback",),
    ".lstm": ("LSTMSeq2SeqConfig", "LSTMSeq2SeqForConditionalGeneration"),
    ".calculator": ("CharLSTMConfig", "CharLSTMForSequenceClassification", "build_calculator_model",
        "train_classifier", "predict_classifier", "evaluate_classifier"),
}

__getattr__, __dir__ = attach(__name__, _LAZY)
__all__ = __dir__()
