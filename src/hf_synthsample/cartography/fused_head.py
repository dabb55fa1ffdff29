"""Per-example measures from per-token log-probabilities, for trainers that never build the logits.

TRL's ``SFTTrainer`` (and its other trainers, trl >= 1) trains a causal LM through a *fused LM
head*: ``model(..., labels=labels, fused_lm_head=True)`` projects the hidden states onto the
vocabulary in tiles and returns, per next-token label, its log-probability (``log_probs``, float32,
shape ``[batch, length - 1]``, 0 where the label is -100) and whether it is the first argmax
(``is_top1``), never the ``[batch, length, vocab]`` logits. The training forward pass therefore
carries exactly what ``inv_ppl``, ``chia``, ``loss`` and exact-match correctness (so
``forgetting``) need, and nothing the margins or EL2N need (the whole distribution).

The values are the same as :func:`~hf_synthsample.cartography.measures.sequence_measures` with
``task="causal_lm"`` on the logits (same shift, same -100 mask, first-argmax correctness).

Example (log p of two gold tokens 0.5 and 0.25; the first position is the unscored prompt):
    >>> import math, torch
    >>> from types import SimpleNamespace
    >>> out = SimpleNamespace(logits=None, log_probs=torch.log(torch.tensor([[1.0, 0.5, 0.25]])),
    ...                       is_top1=torch.tensor([[True, True, False]]))
    >>> m = token_log_prob_measures(out, torch.tensor([[7, -100, 4, 5]]), task="causal_lm")
    >>> round(float(m["inv_ppl"][0]), 4), round(float(m["chia"][0]), 4), bool(m["correct"][0])
    (0.3536, 0.375, False)
"""

from __future__ import annotations

import inspect
from typing import Any

from .measures import IGNORE_INDEX, STEP_MEASURES, _per_example

__all__ = ["LOG_PROB_MEASURES", "has_token_log_probs", "token_log_prob_measures", "accepts_fused_lm_head",
           "logit_only_measures"]

#: the per-step measures a per-token log-probability (plus "is it the argmax") gives; the other
#: STEP_MEASURES (margins, EL2N) need the logits of every vocabulary entry
LOG_PROB_MEASURES = ("inv_ppl", "chia", "loss")


def logit_only_measures(measures) -> list[str]:
    """The names in ``measures`` that need full logits (not given by a fused LM head).

    Example:
        >>> logit_only_measures(("inv_ppl", "aum", "forgetting", "el2n"))
        ['aum', 'el2n']
    """
    return [m for m in measures if m in STEP_MEASURES and m not in LOG_PROB_MEASURES]


def _field(output, name: str):
    return output.get(name) if hasattr(output, "get") else getattr(output, name, None)


def has_token_log_probs(output) -> bool:
    """Whether a forward output carries per-token ``log_probs`` and no ``logits`` (a fused LM head).

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> has_token_log_probs(SimpleNamespace(log_probs=torch.zeros(1, 2))), has_token_log_probs((torch.zeros(1),))
        (True, False)
    """
    import torch

    if isinstance(output, (tuple, list)):
        return False
    return _field(output, "logits") is None and isinstance(_field(output, "log_probs"), torch.Tensor)


def accepts_fused_lm_head(model) -> bool:
    """Whether ``model`` (or the base model inside a PEFT wrapper) takes a ``fused_lm_head`` argument,
    i.e. TRL patched it (``trl.trainer.utils.add_fused_lm_head``) so its trainers can skip the logits.

    TRL keeps the original signature visible through ``functools.wraps``, so the patch is read off the
    unwrapped function.

    Example:
        >>> from transformers import GPT2Config, GPT2LMHeadModel
        >>> accepts_fused_lm_head(GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=10)))
        False
    """
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    forward = getattr(base, "forward", None)
    if forward is None:
        return False
    try:
        params = inspect.signature(forward, follow_wrapped=False).parameters
    except (TypeError, ValueError):  # builtins / C extensions: no signature to read
        return False
    return "fused_lm_head" in params


def token_log_prob_measures(output: Any, labels, *, task: str, measures=LOG_PROB_MEASURES) -> dict:
    """Per-example ``inv_ppl``, ``chia``, ``loss``, ``correct``, ``num_tokens`` (1-D float32 / bool /
    int32 tensors) from a fused LM head's ``log_probs`` and ``is_top1`` and the gold ``labels``.

    Args:
        output: the forward output (``log_probs`` and ``is_top1``, each ``[batch, length - 1]``).
        labels: the labels the forward was given, ``[batch, length]``, -100 where not scored (the
            prompt, padding); shifted by one like ``task="causal_lm"`` logits.
        task: must be ``"causal_lm"`` (a fused LM head is a decoder-only head).
        measures: the per-step measures asked for; one that needs the logits raises ``ValueError``.

    An example with no gold token gets NaN measures and ``num_tokens`` 0, as in ``sequence_measures``.
    """
    import torch

    if task != "causal_lm":
        raise ValueError(f"task={task!r}: per-token log-probabilities (a fused LM head) come from a decoder-only "
                         f"model; expected task 'causal_lm'")
    missing = logit_only_measures(measures)
    if missing:
        raise ValueError(
            f"measures {missing} need the model's full logits, but this trainer's forward pass returns per-token "
            f"log-probabilities only (TRL's fused LM head). Measures available here: "
            f"{[*LOG_PROB_MEASURES, 'forgetting', 'bleu']}"
        )
    log_probs, is_top1 = _field(output, "log_probs"), _field(output, "is_top1")
    if is_top1 is None:
        raise ValueError("the forward output has log_probs but no is_top1; exact-match correctness (and forgetting) "
                         "needs whether each gold token is the argmax")
    with torch.no_grad():
        gold = labels.detach()[:, 1:]  # position t scores token t + 1, as the causal_lm logits do
        if tuple(log_probs.shape) != tuple(gold.shape) or tuple(is_top1.shape) != tuple(gold.shape):
            raise ValueError(
                f"log_probs {tuple(log_probs.shape)} / is_top1 {tuple(is_top1.shape)} do not align with the shifted "
                f"labels {tuple(gold.shape)} (prompt-learning adapters and pre-shifted labels are not supported)"
            )
        # float32 whatever the head's dtype
        return _per_example(log_probs.detach().float(), is_top1.detach().bool(), gold != IGNORE_INDEX)
