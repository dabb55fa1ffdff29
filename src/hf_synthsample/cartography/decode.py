"""Batched greedy decoding on the device, for the ``bleu`` measure's end-of-epoch pass.

:func:`greedy_continuations` runs an encoder-decoder's own cached argmax loop, reading the host
only every 8 tokens (``generate`` reads it after every token); decoder-only models and generation
configs that change greedy decoding use ``generate``, so the decodes are always ``generate``'s.

Example:
    >>> import torch
    >>> from transformers import BartConfig, BartForConditionalGeneration
    >>> _ = torch.manual_seed(0)
    >>> model = BartForConditionalGeneration(BartConfig(vocab_size=12, d_model=16, encoder_layers=1, decoder_layers=1,
    ...     encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
    ...     max_position_embeddings=32, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=2,
    ...     forced_bos_token_id=None, forced_eos_token_id=None)).eval()
    >>> batch = {"input_ids": torch.tensor([[4, 5, 2], [6, 2, 0]]), "attention_mask": torch.tensor([[1, 1, 1], [1, 1, 0]])}
    >>> ours = greedy_continuations(model, batch, 6)
    >>> ref = model.generate(**batch, max_new_tokens=6, do_sample=False, num_beams=1)[:, 1:].tolist()
    >>> all(o[:len(r)] == r for o, r in zip(ours, ref))
    True
"""

from __future__ import annotations

from typing import Any

__all__ = ["greedy_continuations"]

#: tokens decoded between two host reads of "has every example ended?"
_CHECK_EVERY = 8

# generation-config fields that make generate() differ from a plain argmax loop, with their no-op values
_NEUTRAL = {"forced_bos_token_id": None, "forced_eos_token_id": None, "min_length": 0, "min_new_tokens": None,
            "no_repeat_ngram_size": 0, "encoder_no_repeat_ngram_size": 0, "repetition_penalty": 1.0,
            "encoder_repetition_penalty": 1.0, "bad_words_ids": None, "suppress_tokens": None,
            "begin_suppress_tokens": None, "sequence_bias": None, "exponential_decay_length_penalty": None,
            "renormalize_logits": False, "forced_decoder_ids": None}


def _plain_greedy(model) -> bool:
    """Whether an own argmax loop decodes exactly as ``generate(do_sample=False, num_beams=1)``."""
    cfg = getattr(model, "generation_config", None)
    return (bool(getattr(getattr(model, "config", None), "is_encoder_decoder", False))
            and callable(getattr(model, "get_encoder", None))
            and getattr(cfg, "decoder_start_token_id", None) is not None
            and all(getattr(cfg, k, None) in (None, v, [], ()) for k, v in _NEUTRAL.items()))


def _cache_keyword(model) -> str:
    """The decoder cache's keyword: ``cache`` (transformers >= 5.2x) or ``past_key_values`` (earlier)."""
    import inspect

    from .fused_head import base_model

    return "cache" if "cache" in inspect.signature(base_model(model).forward).parameters else "past_key_values"


def greedy_continuations(model: Any, batch: dict, max_new_tokens: int) -> list[list[int]]:
    """The greedy continuation of each example of ``batch`` (``input_ids``, ``attention_mask``),
    ``max_new_tokens`` tokens each (the decoder start token left out), as lists of token ids; an
    example that ended goes on decoding until the batch stops (the caller reads up to its EOS)."""
    import torch

    inputs = {k: batch[k] for k in ("input_ids", "attention_mask") if k in batch}
    if not _plain_greedy(model):
        greedy = {"max_new_tokens": max_new_tokens, "do_sample": False, "num_beams": 1}
        return [g[1:] for g in model.generate(**inputs, **greedy).tolist()]
    cfg = model.generation_config
    with torch.no_grad():
        encoder_outputs = model.get_encoder()(**inputs, return_dict=True)
        n = inputs["input_ids"].shape[0]
        token = torch.full((n, 1), int(cfg.decoder_start_token_id), dtype=torch.long, device=inputs["input_ids"].device)
        out = torch.empty((n, max_new_tokens), dtype=torch.long, device=token.device)
        cache_kw = _cache_keyword(model)
        eos = cfg.eos_token_id if isinstance(cfg.eos_token_id, (list, tuple)) else [cfg.eos_token_id]
        eos = torch.tensor([e for e in eos if e is not None], dtype=torch.long, device=token.device)
        done = torch.zeros(n, dtype=torch.bool, device=token.device)
        past = None
        steps = max_new_tokens
        for t in range(max_new_tokens):
            step = model(encoder_outputs=encoder_outputs, attention_mask=inputs.get("attention_mask"),
                         decoder_input_ids=token, use_cache=True, return_dict=True, **{cache_kw: past})
            token = step.logits[:, -1, :].argmax(dim=-1, keepdim=True)
            out[:, t] = token[:, 0]
            past = getattr(step, cache_kw)
            done |= torch.isin(token[:, 0], eos)
            # stop once every example has ended: read on the host every _CHECK_EVERY tokens, not
            # after each (each read waits for the device)
            if (t + 1) % _CHECK_EVERY == 0 and t + 1 < max_new_tokens and bool(done.all()):
                steps = t + 1
                break
    return out[:, :steps].tolist()  # the one device -> host copy of the tokens
