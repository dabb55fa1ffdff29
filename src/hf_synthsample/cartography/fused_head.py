"""Per-example measures from per-token log-probabilities, for trainers that never build the logits.

TRL's trainers (trl >= 1) train a causal LM through a *fused LM head* that returns, per next-token
label, its log-probability (``log_probs``, ``[batch, length - 1]``) and whether it is the first
argmax (``is_top1``), never the logits: enough for ``inv_ppl``, ``chia``, ``loss`` and
correctness (so ``forgetting``), not for the margins or EL2N. The values equal
:func:`~hf_synthsample.cartography.measures.sequence_measures` with ``task="causal_lm"``.

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
           "logit_only_measures", "logits_of"]

#: the per-step measures a per-token log-probability (plus "is it the argmax") gives
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


def base_model(model):
    """The model inside a PEFT wrapper, else ``model``."""
    get = getattr(model, "get_base_model", None)
    return get() if callable(get) else model


def has_token_log_probs(output) -> bool:
    """Whether a forward output carries per-token ``log_probs`` and no ``logits`` (a fused LM head).

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> has_token_log_probs(SimpleNamespace(log_probs=torch.zeros(1, 2))), has_token_log_probs((torch.zeros(1),))
        (True, False)
    """
    import torch

    return (not isinstance(output, (tuple, list)) and _field(output, "logits") is None
            and isinstance(_field(output, "log_probs"), torch.Tensor))


def accepts_fused_lm_head(model) -> bool:
    """Whether ``model`` (or the base model inside a PEFT wrapper) takes a ``fused_lm_head`` argument
    (TRL patched it); read off the wrapper itself, as TRL's ``functools.wraps`` shows the old signature.

    Example:
        >>> from transformers import GPT2Config, GPT2LMHeadModel
        >>> accepts_fused_lm_head(GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=10)))
        False
    """
    forward = getattr(base_model(model), "forward", None)
    if forward is None:
        return False
    try:
        params = inspect.signature(forward, follow_wrapped=False).parameters
    except (TypeError, ValueError):  # builtins / C extensions: no signature to read
        return False
    return "fused_lm_head" in params


def token_log_prob_measures(output: Any, labels, *, task: str, measures=LOG_PROB_MEASURES) -> dict:
    """Per-example ``inv_ppl``, ``chia``, ``loss``, ``correct``, ``num_tokens`` from a fused LM head's
    ``log_probs`` and ``is_top1`` and the forward's ``labels`` (shifted by one, as for ``causal_lm``
    logits; the only ``task``); a measure in ``measures`` that needs the logits raises.
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


def logits_of(output, measures) -> Any:
    """The logits of a model output (``ModelOutput`` or the ``return_dict=False`` tuple), or a clear error."""
    import torch

    if isinstance(output, (tuple, list)):  # (loss, logits, ...) when labels are given
        logits = output[1] if len(output) > 1 and output[0].dim() == 0 else output[0]
    else:
        logits = _field(output, "logits")
    if not isinstance(logits, torch.Tensor) or logits.dim() < 2:
        found = list(output.keys()) if hasattr(output, "keys") else type(output).__name__
        raise ValueError(
            f"measures {list(measures)}: the model's forward returned no logits (got {found}); every training "
            f"dynamics measure is computed from them. Use a model that returns `logits` with the loss"
        )
    return logits
