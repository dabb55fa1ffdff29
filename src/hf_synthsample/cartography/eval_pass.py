"""The optional dropout-free end-of-epoch pass of
:class:`~hf_synthsample.cartography.TrainingDynamicsCallback` (``eval_pass=True``, implied by
``bleu``): the step measures with the model in eval mode and, for ``bleu``, greedy decodes scored
against the gold. Values are copied to the host once, at the end; each example's decode limit is
its own (gold length + 5 unless ``max_new_tokens``), so a score never depends on its batch.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .collator import ID_KEY
from .decode import greedy_continuations
from .fused_head import logits_of
from .measures import IGNORE_INDEX, sequence_measures
from .store import _EVAL_SCHEMA, _concat

__all__ = ["run_eval_pass"]


def _eval_rows(cb) -> np.ndarray:
    """The training rows the pass covers, in id order: all, or ``eval_examples`` ids drawn with ``seed``."""
    codes = cb._row_codes if cb._row_codes is not None else np.arange(len(cb._dataset))
    rows = np.argsort(codes, kind="stable")
    if cb.eval_examples is not None and cb.eval_examples < len(rows):
        ids = np.sort(np.random.default_rng(cb.seed).choice(codes[rows], size=cb.eval_examples, replace=False))
        rows = rows[np.searchsorted(codes[rows], ids)]
    return rows


def _rows(dataset, positions) -> list[dict]:
    """Rows at ``positions`` as feature dicts; one batched read for a ``datasets.Dataset``."""
    if hasattr(dataset, "column_names"):
        cols = dataset[[int(p) for p in positions]]
        keys = list(cols)
        return [dict(zip(keys, values)) for values in zip(*(cols[k] for k in keys))]
    return [dataset[int(p)] for p in positions]


def run_eval_pass(cb, args, state, model) -> dict:
    """This process's rows of the pass over ``cb``'s training examples (a table in the eval schema)."""
    import torch

    rank, world = cb._process()
    rows = _eval_rows(cb)[rank::world]
    bs = cb.eval_batch_size or args.per_device_eval_batch_size
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    ids, measures, bleu, exact = [], [], [], []
    try:
        with torch.no_grad():
            for start in range(0, len(rows), bs):
                batch = cb._collate(_rows(cb._dataset, rows[start:start + bs]))
                ids.append(cb._coded(batch.pop(ID_KEY)))
                host_labels = batch["labels"]
                batch = {k: v.to(device) if hasattr(v, "to") else v for k, v in batch.items()}
                out = model(**batch)
                measures.append(sequence_measures(logits_of(out, cb.measures), batch["labels"], task=cb._task,
                                                  measures=cb._step_measures))
                if "bleu" in cb.measures:
                    b, e = _decode_scores(cb, model, batch, host_labels)
                    bleu.append(b)
                    exact.append(e)
    finally:
        model.train(was_training)
    if not ids:
        return _concat([], _EVAL_SCHEMA)
    n = len(rows)
    # one device -> host copy per column for the whole pass
    values = {k: torch.cat([m[k] for m in measures]).cpu().numpy() for k in measures[0]}
    part = {
        "example_id": torch.cat(ids).cpu().numpy(), "epoch": np.full(n, cb._epoch), "step": np.full(n, state.global_step),
        "order": np.arange(n), "rank": np.full(n, rank), **values,
        **({"bleu": np.concatenate(bleu), "exact_match": np.concatenate(exact)} if bleu else {}),
    }
    return _concat([part], _EVAL_SCHEMA)  # measures not computed are left blank (NaN)


def _decode_scores(cb, model, batch: dict, host_labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """Sentence BLEU (0..1) and exact match of each example's greedy decode against its gold."""
    import sacrebleu
    import torch

    gold_ids = host_labels.tolist()  # on the host already: no device read
    limits = [cb.max_new_tokens or sum(t != IGNORE_INDEX for t in g) + 5 for g in gold_ids]
    max_new = max(limits)
    cfg = model.generation_config if hasattr(model, "generation_config") else model.config
    eos = getattr(cfg, "eos_token_id", None)
    eos = set(eos) if isinstance(eos, (list, tuple)) else {eos}
    special = {t for t in (getattr(cfg, "pad_token_id", None), getattr(cfg, "bos_token_id", None),
                           getattr(cfg, "decoder_start_token_id", None), *eos) if isinstance(t, int)}
    if cb._task == "seq2seq":
        continuations = greedy_continuations(model, batch, max_new)
    else:  # decoder-only: the prompt is what the labels mask; decode one example at a time
        continuations = []
        pad = getattr(cfg, "pad_token_id", None)
        for ids, lab, limit in zip(batch["input_ids"], gold_ids, limits):
            start = next((i for i, t in enumerate(lab) if t != IGNORE_INDEX), len(lab))
            prompt = ids[:start][None]
            out = model.generate(prompt, attention_mask=torch.ones_like(prompt),
                                 pad_token_id=pad if pad is not None else next(iter(eos)),
                                 max_new_tokens=limit, do_sample=False, num_beams=1)
            continuations.append(out[0, start:].tolist())
    bleu, exact = [], []
    for cont, gold_row, limit in zip(continuations, gold_ids, limits):
        # up to the first EOS, without special tokens
        hyp = [t for t in itertools.takewhile(lambda t: t not in eos, cont[:limit]) if t not in special]
        gold = [t for t in gold_row if t != IGNORE_INDEX and t not in special]
        # sacrebleu: the decode is the hypothesis, the gold is the (single) reference
        bleu.append(sacrebleu.sentence_bleu(_detok(cb, hyp), [_detok(cb, gold)]).score / 100.0)
        exact.append(hyp == gold)
    return np.asarray(bleu, dtype=np.float32), np.asarray(exact, dtype=bool)


def _detok(cb, ids: list[int]) -> str:
    tok = cb._tokenizer
    if tok is not None and hasattr(tok, "decode"):
        return tok.decode(ids, skip_special_tokens=True)
    return " ".join(map(str, ids))
