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


#: at most this many float32 log-probabilities exist at once (256 MiB), whatever the vocabulary
_CHUNK_ELEMENTS = 1 << 26


def _gold_logprobs(logits: "torch.Tensor", gold: "torch.Tensor") -> tuple:
    """log p(gold) in float32 and whether gold is the (first) argmax, per position.

    ``log_softmax`` is faster than ``logit - logsumexp`` on CPU; it is run on chunks of positions so
    the float32 temporary stays bounded for large vocabularies.
    """
    import torch

    shape = gold.shape
    flat = logits.reshape(-1, logits.shape[-1])
    g = gold.reshape(-1)
    rows = max(1, _CHUNK_ELEMENTS // max(1, flat.shape[-1]))
    logp, hit = [], []
    for start in range(0, flat.shape[0], rows):
        ls = torch.log_softmax(flat[start:start + rows], dim=-1, dtype=torch.float32)
        gs = g[start:start + rows]
        logp.append(ls.gather(-1, gs[:, None]).squeeze(-1))
        # ties count as correct only when gold is the first maximum, as greedy decoding picks it
        hit.append(ls.argmax(dim=-1) == gs)
    return torch.cat(logp).reshape(shape), torch.cat(hit).reshape(shape)


def sequence_measures(logits: "torch.Tensor", labels: "torch.Tensor", *, task: str = "seq2seq") -> dict:
    """``inv_ppl``, ``chia``, ``correct`` and ``num_tokens`` per example (1-D tensors on the logits' device).

    Gradients never flow through this function; log-probabilities are computed in float32, in
    chunks of at most 2^26 values, so memory stays bounded for large vocabularies.
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
        logp, hit = _gold_logprobs(logits, safe)
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
