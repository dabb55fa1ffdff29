"""The small encoder-decoder Transformer the field trains from scratch on synthetic tasks.

SCAN, COGS and the ThingTalk experiments train a 3 + 3 layer Transformer (d_model 256, feed-forward
512, 4 heads, dropout 0.1) from random weights: :func:`scratch_config` is that model as a stock
``transformers`` config sized to a tokenizer, :func:`build_scratch_model` builds it with seeded weights.

Example:
    >>> from hf_synthsample.models import build_word_tokenizer
    >>> tok = build_word_tokenizer(["jump twice", "I_JUMP I_JUMP"])
    >>> cfg = scratch_config(tok)
    >>> (cfg.num_layers, cfg.num_decoder_layers, cfg.d_model, cfg.d_ff, cfg.num_heads, cfg.dropout_rate)
    (3, 3, 256, 512, 4, 0.1)
    >>> cfg.vocab_size == len(tok), cfg.decoder_start_token_id == tok.pad_token_id
    (True, True)
    >>> scratch_config(tok, "bart", d_model=64).encoder_ffn_dim
    512
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import TYPE_CHECKING, Any

from ..validation import check_choice, check_int

if TYPE_CHECKING:  # pragma: no cover
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["ARCHITECTURES", "SCRATCH_DEFAULTS", "scratch_config", "build_scratch_model"]

ARCHITECTURES: tuple[str, ...] = ("t5", "bart", "lstm")

#: The field's configuration, in each architecture's own config names.
SCRATCH_DEFAULTS: dict[str, dict[str, Any]] = {
    # t5's d_kv is d_model / num_heads
    "t5": dict(d_model=256, d_kv=64, d_ff=512, num_layers=3, num_decoder_layers=3, num_heads=4, dropout_rate=0.1,
               relative_attention_num_buckets=32, relative_attention_max_distance=128, feed_forward_proj="relu"),
    "bart": dict(d_model=256, encoder_layers=3, decoder_layers=3, encoder_ffn_dim=512, decoder_ffn_dim=512,
                 encoder_attention_heads=4, decoder_attention_heads=4, dropout=0.1, attention_dropout=0.0,
                 activation_dropout=0.0, max_position_embeddings=512),
    # the recurrent baseline (models.lstm): one bidirectional encoder layer, an attentional decoder
    "lstm": dict(embedding_dim=128, hidden_size=128, num_layers=1, dropout=0.1),
}

# set from the tokenizer / by the architecture: not user overrides
_RESERVED = {"transformers_version", "architectures", "is_encoder_decoder", "is_decoder"}
_EXTRA_ACCEPTED = {"tie_word_embeddings", "decoder_start_token_id", "bos_token_id", "forced_bos_token_id",
                   "forced_eos_token_id"}


def _classes(architecture: str) -> tuple[type, type]:
    """(config class, model class) of ``architecture``."""
    if architecture == "lstm":
        from .lstm import LSTMSeq2SeqConfig, LSTMSeq2SeqForConditionalGeneration

        return LSTMSeq2SeqConfig, LSTMSeq2SeqForConditionalGeneration
    from transformers import BartConfig, BartForConditionalGeneration, T5Config, T5ForConditionalGeneration

    return {"t5": (T5Config, T5ForConditionalGeneration),
            "bart": (BartConfig, BartForConditionalGeneration)}[architecture]


def _accepted_overrides(config_class) -> dict[str, str]:
    """Accepted override name -> canonical config name (aliases such as ``hidden_size`` included)."""
    names = {f.name for f in dataclasses.fields(config_class)} | _EXTRA_ACCEPTED
    accepted = {n: n for n in names - _RESERVED}
    accepted.update(getattr(config_class, "attribute_map", {}) or {})
    return accepted


def scratch_config(tokenizer: "PreTrainedTokenizerBase", architecture: str = "t5", **overrides: Any) -> "PretrainedConfig":
    """The field's small seq2seq config (3+3 layers, d_model 256, ff 512, 4 heads, dropout 0.1).

    ``architecture``: ``"t5"`` (relative position biases), ``"bart"`` (learned absolute positions,
    512 unless overridden) or ``"lstm"`` (:class:`~hf_synthsample.models.LSTMSeq2SeqForConditionalGeneration`,
    the recurrent baseline). ``overrides`` use the architecture's own config names (unknown ones
    raise ``ValueError``); for T5, ``d_model`` or ``num_heads`` without ``d_kv`` keeps
    ``d_kv = d_model // num_heads``. T5 starts decoding from pad, BART from eos, the LSTM from bos;
    no token is forced at generation.
    """
    architecture = check_choice("architecture", architecture, ARCHITECTURES)
    for attr in ("pad_token_id", "eos_token_id"):
        if getattr(tokenizer, attr, None) is None:
            raise ValueError(f"tokenizer has no {attr[:-3]}: the seq2seq model needs pad and eos tokens")
    config_class = _classes(architecture)[0]
    accepted = _accepted_overrides(config_class)
    unknown = sorted(set(overrides) - set(accepted))
    if unknown:
        hints = {u: difflib.get_close_matches(u, list(accepted), n=3) for u in unknown}
        raise ValueError(
            f"overrides: unknown {config_class.__name__} field(s) {unknown}"
            + "".join(f"; {u!r}: did you mean {h}?" for u, h in hints.items() if h)
            + f"; accepted names: {sorted(accepted)}"
        )
    overrides = {accepted[k]: v for k, v in overrides.items()}
    kwargs = dict(SCRATCH_DEFAULTS[architecture])
    kwargs.update(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    if architecture == "t5":
        kwargs["decoder_start_token_id"] = tokenizer.pad_token_id
        # T5 never uses a BOS, but the Trainer re-aligns (and logs about) a config lacking the tokenizer's
        kwargs["bos_token_id"] = tokenizer.bos_token_id
        if "d_kv" not in overrides and ("d_model" in overrides or "num_heads" in overrides):
            d_model = check_int("d_model", overrides.get("d_model", kwargs["d_model"]), min=1)
            heads = check_int("num_heads", overrides.get("num_heads", kwargs["num_heads"]), min=1)
            if d_model % heads:
                raise ValueError(f"d_model ({d_model}) must be a multiple of num_heads ({heads}), or give d_kv")
            kwargs["d_kv"] = d_model // heads
        if "num_layers" in overrides and "num_decoder_layers" not in overrides:
            kwargs["num_decoder_layers"] = overrides["num_layers"]
    elif architecture == "bart":
        bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        kwargs.update(bos_token_id=bos, decoder_start_token_id=tokenizer.eos_token_id, forced_bos_token_id=None,
                      forced_eos_token_id=None)
    else:  # lstm: decoding starts from BOS where the tokenizer has one, as BART's from EOS otherwise
        bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        kwargs.update(bos_token_id=bos, decoder_start_token_id=bos)
    kwargs.update(overrides)
    vocab = check_int("vocab_size", kwargs["vocab_size"], min=1)
    if vocab < len(tokenizer):
        raise ValueError(f"vocab_size must be >= len(tokenizer) = {len(tokenizer)}, got {vocab}")
    return config_class(**kwargs)


def build_scratch_model(
    tokenizer: "PreTrainedTokenizerBase", architecture: str = "t5", *, seed: int = 0, **overrides: Any
) -> "PreTrainedModel":
    """A randomly initialised ``T5ForConditionalGeneration`` / ``BartForConditionalGeneration`` /
    :class:`~hf_synthsample.models.LSTMSeq2SeqForConditionalGeneration`; same ``seed``, same weights.

    Example:
        >>> from hf_synthsample.models import build_word_tokenizer
        >>> tok = build_word_tokenizer(["a b c"])
        >>> model = build_scratch_model(tok, d_model=32, d_ff=64, num_layers=1, num_heads=2)
        >>> type(model).__name__, model.config.d_kv
        ('T5ForConditionalGeneration', 16)
    """
    from transformers import GenerationConfig, set_seed

    seed = check_int("seed", seed, min=0)
    config = scratch_config(tokenizer, architecture, **overrides)
    set_seed(seed)
    model = _classes(architecture)[1](config)
    # explicit, so generation never forces a token the tokenizer lacks
    model.generation_config = GenerationConfig(
        decoder_start_token_id=config.decoder_start_token_id,
        eos_token_id=config.eos_token_id,
        pad_token_id=config.pad_token_id,
        bos_token_id=getattr(config, "bos_token_id", None),
    )
    return model
