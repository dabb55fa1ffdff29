"""Per-example confidence measures from logits and labels (ALGORITHMS.md §6).

For a sequence with gold tokens ``y_1..y_T`` (EOS included, padding ``-100`` excluded) and
teacher-forced probabilities ``p_t = p(y_t | x, y_<t)``:

* ``chia``    = (1/T) sum_t p_t                 (arithmetic mean)
* ``inv_ppl`` = exp((1/T) sum_t log p_t)        (geometric mean)
* ``correct`` = every teacher-forced argmax equals its gold token. Under the same weights this
  is exactly "the greedy decode equals the gold sequence": greedy decoding reproduces the gold
  prefix step by step iff each gold token is the argmax after the gold prefix.

For sequence classification T = 1 and both measures are the gold-class probability.

Three task layouts are supported (``TASKS``): ``"seq2seq"`` (logits and labels aligned, as in
BART/T5), ``"causal_lm"`` (decoder-only: logits at position t predict token t+1, the prompt is
masked with -100 in the labels) and ``"classification"`` (logits ``[B, C]``, labels ``[B]``).

Example:
    >>> import torch
    >>> logits = torch.log(torch.tensor([[[0.5, 0.5], [0.9, 0.1], [0.3, 0.7]]]))
    >>> labels = torch.tensor([[0, 0, -100]])
    >>> m = sequence_measures(logits, labels, task="seq2seq")
    >>> round(float(m["chia"][0]), 4), round(float(m["inv_ppl"][0]), 4)
    (0.7, 0.6708)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..validation import check_choice

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["TASKS", "MEASURES", "sequence_measures", "infer_task", "IGNORE_INDEX"]

TASKS = ("seq2seq", "causal_lm", "classification")
#: measures recorded from the training forward pass; "bleu" needs the end-of-epoch decode pass.
MEASURES = ("inv_ppl", "chia", "bleu")
IGNORE_INDEX = -100


def infer_task(model) -> str:
    """The task layout of a ``transformers`` model, from its config and class name.

    Example:
        >>> from transformers import BartConfig, BartForConditionalGeneration
        >>> cfg = BartConfig(vocab_size=20, d_model=8, encoder_layers=1, decoder_layers=1,
        ...     encoder_attention_heads=1, decoder_attention_heads=1, encoder_ffn_dim=8, decoder_ffn_dim=8)
        >>> infer_task(BartForConditionalGeneration(cfg))
        'seq2seq'
    """
    name = type(model).__name__
    config = getattr(model, "config", None)
    if name.endswith("ForSequenceClassification"):
        return "classification"
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    if name.endswith(("ForCausalLM", "LMHeadModel")):
        return "causal_lm"
    raise ValueError(
        f"task: cannot tell the task layout of a {name}; pass task= one of {list(TASKS)} to CartographyCallback"
    )


def sequence_measures(logits: "torch.Tensor", labels: "torch.Tensor", *, task: str = "seq2seq") -> dict:
    """``inv_ppl``, ``chia``, ``correct`` and ``num_tokens`` per example (1-D tensors on the logits' device).

    Gradients never flow through this function; the log-softmax is computed as
    ``logit[gold] - logsumexp(logits)`` in float32 so no ``[B, T, V]`` probability tensor is built.
    An example with no gold token (all labels -100) gets NaN measures and ``num_tokens`` 0.
    """
    import torch

    check_choice("task", task, TASKS)
    with torch.no_grad():
        logits = logits.detach()
        labels = labels.detach()
        if task == "classification":
            if logits.dim() != 2 or labels.dim() != 1:
                raise ValueError(
                    f"task='classification' needs logits [batch, classes] and labels [batch]; got "
                    f"{tuple(logits.shape)} and {tuple(labels.shape)}"
                )
            logits = logits[:, None, :]
            labels = labels[:, None]
        else:
            if logits.dim() != 3 or labels.dim() != 2:
                raise ValueError(
                    f"task={task!r} needs logits [batch, length, vocab] and labels [batch, length]; got "
                    f"{tuple(logits.shape)} and {tuple(labels.shape)}"
                )
            if task == "causal_lm":
                logits = logits[:, :-1, :]
                labels = labels[:, 1:]
            if logits.shape[:2] != labels.shape:
                raise ValueError(f"logits {tuple(logits.shape)} and labels {tuple(labels.shape)} do not align")
        mask = labels != IGNORE_INDEX
        safe = labels.masked_fill(~mask, 0).long()
        logits32 = logits.float()
        gold = logits32.gather(-1, safe[..., None]).squeeze(-1)
        logp = gold - torch.logsumexp(logits32, dim=-1)
        # argmax ties count as correct only if the gold token is the first maximum, as greedy picks it
        hit = logits32.argmax(dim=-1) == safe
        maskf = mask.float()
        n = maskf.sum(dim=1)
        denom = n.clamp(min=1)
        logp = logp * maskf
        chia = (logp.exp() * maskf).sum(dim=1) / denom
        inv_ppl = torch.exp(logp.sum(dim=1) / denom)
        correct = (hit | ~mask).all(dim=1) & (n > 0)
        empty = n == 0
        nan = torch.full_like(chia, float("nan"))
        return {
            "inv_ppl": torch.where(empty, nan, inv_ppl),
            "chia": torch.where(empty, nan, chia),
            "correct": correct,
            "num_tokens": n.to(torch.int32),
        }
