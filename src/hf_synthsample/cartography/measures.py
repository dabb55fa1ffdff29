"""Per-example confidence measures from logits and labels.

The measures (``chia``, ``inv_ppl``, ``correct``, ``aum``, ``min_margin``, ``margin_deficit``, ``el2n``,
``loss``; ``forgetting`` from the ``correct`` history) are defined in docs/training-dynamics.md; which end
of each scale is hard is declared once, in :data:`MEASURE_INFO`. Task layouts (``TASKS``): ``"seq2seq"``,
``"causal_lm"`` (logits at t predict token t+1) and ``"classification"`` (``[B, C]``, ``[B]``; T = 1).

Example:
    >>> import torch
    >>> logits = torch.log(torch.tensor([[[0.5, 0.5], [0.9, 0.1], [0.3, 0.7]]]))
    >>> labels = torch.tensor([[0, 0, -100]])
    >>> m = sequence_measures(logits, labels, task="seq2seq")
    >>> round(float(m["chia"][0]), 4), round(float(m["inv_ppl"][0]), 4)
    (0.7, 0.6708)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import check_choice

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["TASKS", "MEASURES", "STEP_MEASURES", "MAP_MEASURES", "HARD_END", "MeasureInfo", "MEASURE_INFO",
           "measure_info", "sequence_measures", "forgetting_events", "infer_task", "IGNORE_INDEX"]

TASKS = ("seq2seq", "causal_lm", "classification")


@dataclass(frozen=True)
class MeasureInfo:
    """What a measure's values mean: the one declaration every reader follows.

    ``hard_end``: the end of the scale holding the hard examples (``"low"`` for confidences,
    ``"high"`` for errors and losses); data maps orient their confidence axis and rankings by it.
    ``kind``: ``"step"`` (from the training step's logits), ``"decode"`` (the end-of-epoch decode
    pass), ``"counted"`` (from the ``correct`` history) or ``"axis"`` (an axis of the data map).

    Example:
        >>> measure_info("loss").hard_end, measure_info("loss").confidence_sign
        ('high', -1.0)
        >>> measure_info("loss").confidence_label
        'confidence = −mean loss (higher = easier)'
        >>> measure_info("inv_ppl").confidence_label
        'confidence = mean inv_ppl (higher = easier)'
    """

    name: str
    hard_end: str
    label: str
    low: float
    high: float
    kind: str

    @property
    def confidence_sign(self) -> float:
        """The sign a data map multiplies the window mean by: +1 when higher = more confident, else -1."""
        return 1.0 if self.hard_end == "low" else -1.0

    @property
    def confidence_label(self) -> str:
        """The data map's confidence axis when built on this measure, as plots and summaries name it."""
        sign = "" if self.hard_end == "low" else "−"
        return f"confidence = {sign}mean {self.name} (higher = easier)"

    @property
    def direction(self) -> str:
        """``"higher = more confident"`` or ``"higher = harder"``."""
        return "higher = more confident" if self.hard_end == "low" else "higher = harder"


_INF = math.inf
#: every measure a callback records or a data map has, with its direction (``hard_end``), in the
#: order the callback and the data map list them
MEASURE_INFO: dict[str, MeasureInfo] = {m.name: m for m in (
    MeasureInfo("inv_ppl", "low", "inverse perplexity: geometric mean of the gold-token probabilities", 0.0, 1.0,
                "step"),
    MeasureInfo("chia", "low", "arithmetic mean of the gold-token probabilities (CHIA)", 0.0, 1.0, "step"),
    MeasureInfo("aum", "low", "mean gold-token logit margin (area under the margin)", -_INF, _INF, "step"),
    MeasureInfo("min_margin", "low", "smallest gold-token logit margin of the sequence", -_INF, _INF, "step"),
    MeasureInfo("margin_deficit", "high", "summed shortfall of the gold-token margins below 0", 0.0, _INF, "step"),
    MeasureInfo("forgetting", "high", "forgetting events (correct, then incorrect at the next epoch)", 0.0, _INF,
                "counted"),
    MeasureInfo("el2n", "high", "mean error L2 norm ||softmax - onehot(gold)||", 0.0, math.sqrt(2.0), "step"),
    MeasureInfo("loss", "high", "mean gold-token cross-entropy", 0.0, _INF, "step"),
    MeasureInfo("bleu", "low", "sentence BLEU of the greedy decode (0..1)", 0.0, 1.0, "decode"),
    MeasureInfo("confidence", "low", "the data map's confidence axis (oriented: higher = easier)", -_INF, _INF,
                "axis"),
    MeasureInfo("variability", "high", "standard deviation of the measure over the epoch window", 0.0, _INF,
                "axis"),
    MeasureInfo("correctness", "low", "fraction of the window's epochs with an exact greedy match", 0.0, 1.0,
                "axis"),
)}

#: measures a callback can record
MEASURES = tuple(n for n, m in MEASURE_INFO.items() if m.kind != "axis")
#: the per-(example, epoch) columns computed from the logits of a training step
STEP_MEASURES = tuple(n for n, m in MEASURE_INFO.items() if m.kind == "step")
#: the per-(example, epoch) columns a data map can be built on (its confidence axis)
MAP_MEASURES = tuple(n for n, m in MEASURE_INFO.items() if m.kind in ("step", "decode"))
#: each measure's ``hard_end``, from :data:`MEASURE_INFO` (kept for older callers)
HARD_END = {n: m.hard_end for n, m in MEASURE_INFO.items()}


def measure_info(name: str) -> MeasureInfo:
    """The declaration of measure ``name`` (``ValueError`` naming the accepted ones otherwise).

    Example:
        >>> measure_info("el2n").direction
        'higher = harder'
    """
    if not isinstance(name, str) or name not in MEASURE_INFO:
        raise ValueError(f"measure must be one of {list(MEASURE_INFO)}, got {name!r}")
    return MEASURE_INFO[name]


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


def _position_values(logits: "torch.Tensor", gold: "torch.Tensor", want: frozenset) -> dict:
    """Per position ``logp`` (float32), ``hit`` (gold is the first argmax), ``margin`` and ``el2n``
    when asked for: one bounded chunk of positions at a time, with no host read (no device sync)."""
    import torch

    shape = gold.shape
    flat = logits.reshape(-1, logits.shape[-1])
    g = gold.reshape(-1)
    rows = max(1, _CHUNK_ELEMENTS // max(1, flat.shape[-1]))
    out: dict[str, list] = {"logp": [], "hit": [], "margin": [], "el2n": []}
    for start in range(0, flat.shape[0], rows):
        ls = torch.log_softmax(flat[start:start + rows], dim=-1, dtype=torch.float32)
        gs = g[start:start + rows, None]
        lg = ls.gather(-1, gs).squeeze(-1)
        out["logp"].append(lg)
        # greedy decoding picks the first maximum, as max's index does (no branch on a value: no sync)
        top, first = ls.max(dim=-1)
        out["hit"].append(first == gs[:, 0])
        if want & {"aum", "min_margin", "margin_deficit"} and ls.shape[-1] > 1:
            # the largest other value: the runner-up when gold is the first maximum, else the maximum
            # (a gold tied with an earlier maximum gets margin 0). The runner-up is the maximum with
            # the first maximum masked, in place and restored: topk(2) costs ~7x a max on CPU
            at = first[:, None]
            ls.scatter_(-1, at, float("-inf"))
            runner_up = ls.amax(dim=-1)
            ls.scatter_(-1, at, top[:, None])
            out["margin"].append(lg - torch.where(first == gs[:, 0], runner_up, top))
        if "el2n" in want:
            # ||p - e_y||^2 = sum_{k != y} p_k^2 + (sum_{k != y} p_k)^2 with p_y zeroed: no
            # cancellation (sum_k p_k^2 - 2 p_y + 1, or 1 - p_y, is 0 in float32 when p_y ~ 1)
            p = ls.exp_()
            p.scatter_(-1, gs, 0.0)
            rest = torch.linalg.vector_norm(p, dim=-1)
            out["el2n"].append(torch.sqrt(rest * rest + p.sum(dim=-1) ** 2))
    return {k: (v[0] if len(v) == 1 else torch.cat(v)).reshape(shape) for k, v in out.items() if v}


def sequence_measures(logits: "torch.Tensor", labels: "torch.Tensor", *, task: str = "seq2seq",
                      measures: "tuple[str, ...] | None" = None) -> dict:
    """Per-example measures (1-D tensors on the logits' device, no gradients): ``inv_ppl``, ``chia``,
    ``loss``, ``correct``, ``num_tokens`` always, the margins (together) and ``el2n`` when ``measures``
    names them (default: all). An example with no gold token gets NaN measures and ``num_tokens`` 0.

    Example (margins 0.9 - 0.1 and 0.5 - 0.5, averaged):
        >>> import torch
        >>> m = sequence_measures(torch.log(torch.tensor([[[0.1, 0.9], [0.5, 0.5]]])), torch.tensor([[1, 0]]))
        >>> round(float(m["aum"][0]), 4), round(float(m["loss"][0]), 4)
        (1.0986, 0.3993)
    """
    import torch

    check_choice("task", task, TASKS)
    want = frozenset(STEP_MEASURES if measures is None else measures)
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
        if want & {"aum", "min_margin", "margin_deficit", "el2n"} and logits.shape[-1] < 2:
            raise ValueError(f"margins and el2n need at least 2 classes; the logits have {logits.shape[-1]}")
        mask = labels != IGNORE_INDEX
        safe = labels.masked_fill(~mask, 0).long()
        pos = _position_values(logits, safe, want)
        return _per_example(pos["logp"], pos["hit"], mask, pos.get("margin"), pos.get("el2n"))


def _per_example(logp, hit, mask, margin=None, el2n=None) -> dict:
    """Per-example values from per-token ``logp``, ``hit`` (margins, EL2N) at the gold positions ``mask``."""
    import torch

    maskf = mask.float()
    n = maskf.sum(dim=1)
    denom = n.clamp(min=1)
    logp = logp * maskf
    mean_logp = logp.sum(dim=1) / denom
    out = {
        "inv_ppl": torch.exp(mean_logp),
        "chia": (logp.exp() * maskf).sum(dim=1) / denom,
        "loss": -mean_logp,
    }
    if margin is not None:
        out["aum"] = (margin * maskf).sum(dim=1) / denom
        out["min_margin"] = margin.masked_fill(~mask, float("inf")).amin(dim=1)
        out["margin_deficit"] = ((-margin).clamp(min=0) * maskf).sum(dim=1)
    if el2n is not None:
        out["el2n"] = (el2n * maskf).sum(dim=1) / denom
    empty = n == 0
    nan = torch.full_like(out["chia"], float("nan"))
    out = {k: torch.where(empty, nan, v) for k, v in out.items()}
    out["correct"] = (hit | ~mask).all(dim=1) & (n > 0)
    out["num_tokens"] = n.to(torch.int32)
    return out


def forgetting_events(example_ids, epochs, correct) -> tuple:
    """Forgetting events per example (Toneva et al. 2019) from a correctness history.

    A forgetting event is an epoch where the example is incorrect after being correct at the
    previous recorded epoch of that example (epochs sorted). Returns ``(ids, events,
    never_learned)``: the sorted unique ids, the number of events (int64) and whether the example
    was never correct (0 events, yet to be ranked as the most forgotten, as the paper does).

    Example:
        >>> ids, ev, never = forgetting_events([7, 7, 7, 7, 3, 3], [0, 1, 2, 3, 1, 0], [1, 0, 1, 0, 0, 0])
        >>> ids.tolist(), ev.tolist(), never.tolist()
        ([3, 7], [0, 2], [True, False])
    """
    ids = np.asarray(example_ids, dtype=np.int64)
    ep = np.asarray(epochs, dtype=np.int64)
    ok = np.asarray(correct, dtype=bool)
    if not (len(ids) == len(ep) == len(ok)):
        raise ValueError("example_ids, epochs and correct must have the same length")
    order = np.lexsort((ep, ids))
    ids, ok = ids[order], ok[order]
    uniq = np.unique(ids)
    forgot = np.zeros(len(ids), dtype=bool)  # correct, then incorrect at the example's next epoch
    forgot[1:] = ok[:-1] & ~ok[1:] & (ids[1:] == ids[:-1])
    inverse = np.searchsorted(uniq, ids)
    events = np.bincount(inverse, weights=forgot, minlength=len(uniq)).astype(np.int64)
    learned = np.bincount(inverse, weights=ok, minlength=len(uniq)) > 0
    return uniq, events, ~learned
