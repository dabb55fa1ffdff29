"""Adapting a pre-trained WordPiece vocabulary to a task: whole-word tokens added, unused ones dropped.

BERT's 30,522 word pieces are mostly unused on a synthetic task, yet every decoding step pays a
softmax over all of them, and a formal language is cut into many pieces.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence


def _remap_post_processor(node: Any, new_id: dict[int, int]) -> Any:
    """``node`` (a tokenizer.json post-processor) with every special-token id mapped by ``new_id``."""
    if isinstance(node, list):
        return [_remap_post_processor(n, new_id) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("cls", "sep") and isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
            out[key] = [value[0], new_id[value[1]]]  # BertProcessing / RobertaProcessing
        elif key == "ids" and isinstance(value, list) and all(isinstance(v, int) for v in value):
            out[key] = [new_id[v] for v in value]  # TemplateProcessing's special_tokens
        else:
            out[key] = _remap_post_processor(value, new_id)
    return out


def adapt_vocabulary(
    tokenizer: Any, texts: Iterable[str] | None, new_tokens: Sequence[str] = ()
) -> tuple[Any, list[list[int]], int]:
    """``(new tokenizer, sources, first_new)``: ``tokenizer`` with ``new_tokens`` added as whole words and only
    the pieces ``texts`` use kept (plus special tokens and single characters; ``None``: every piece
    kept); ``sources[j]``: the old ids whose embeddings new id ``j`` starts from (mean); ids from
    ``first_new`` on are the added words. WordPiece fast tokenizers only (else ``ValueError``).
    """
    from tokenizers import AddedToken, Tokenizer
    from transformers import PreTrainedTokenizerFast

    backend = getattr(tokenizer, "backend_tokenizer", None)
    spec = json.loads(backend.to_str()) if backend is not None else {}
    if spec.get("model", {}).get("type") != "WordPiece":
        raise ValueError("vocabulary adaptation (new_tokens / keep_vocabulary) supports WordPiece fast tokenizers "
                         f"(BERT family) only, got {type(tokenizer).__name__} "
                         f"({spec.get('model', {}).get('type', 'no fast tokenizer')})")
    bad = [t for t in new_tokens if not isinstance(t, str) or not t or t != t.strip() or " " in t]
    if bad:
        raise ValueError(f"new_tokens: whole words without spaces, got {bad[:3]}")
    vocab: dict[str, int] = spec["model"]["vocab"]
    prefix = spec["model"].get("continuing_subword_prefix", "##")
    specials = {a["id"] for a in spec["added_tokens"]}
    added = [t for t in dict.fromkeys(new_tokens) if t not in vocab]
    pieces = {t: tokenizer(t, add_special_tokens=False)["input_ids"] for t in added}
    # the pieces the corpus uses once the new words are whole tokens: tokenize with them added
    probe = Tokenizer.from_str(backend.to_str())
    probe.add_tokens([AddedToken(t, single_word=True, normalized=False) for t in added])
    last = max(vocab.values())
    used = set(specials) if texts is not None else set(vocab.values())
    texts = list(texts or ())
    for start in range(0, len(texts), 1000):
        for enc in probe.encode_batch(texts[start:start + 1000], add_special_tokens=False):
            used.update(i for i in enc.ids if i <= last)
    single = {i for t, i in vocab.items() if len(t) == 1 or (t.startswith(prefix) and len(t) == len(prefix) + 1)}
    kept = sorted((used | single | specials) & set(range(last + 1)))
    new_id = {old: j for j, old in enumerate(kept)}
    spec["model"]["vocab"] = {t: new_id[i] for t, i in sorted(vocab.items(), key=lambda kv: kv[1]) if i in new_id}
    spec["added_tokens"] = [dict(a, id=new_id[a["id"]]) for a in spec["added_tokens"]]
    spec["added_tokens"] += [{"id": len(kept) + n, "content": t, "single_word": True, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": False} for n, t in enumerate(added)]
    if spec.get("post_processor"):
        spec["post_processor"] = _remap_post_processor(spec["post_processor"], new_id)
    names = {k: getattr(tokenizer, k) for k in ("unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
                                                 "bos_token", "eos_token") if getattr(tokenizer, k, None) is not None}
    new = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(spec)),
                                  model_max_length=tokenizer.model_max_length, **names)
    unk = tokenizer.unk_token_id
    sources = [[old] for old in kept] + [[i for i in pieces[t] if i != unk] or [unk] for t in added]
    return new, sources, len(kept)


def gather_embeddings(module: Any, sources: list[list[int]], first_new: int, seed: int) -> None:
    """Replace ``module``'s input embeddings (and an output layer tied to them, with its bias) by rows
    built from ``sources`` (the mean of the listed old rows), in place; sets ``config.vocab_size``.
    The rows from ``first_new`` on get Gaussian noise of the embeddings' own scale, seeded by ``seed``."""
    # without the noise, words sharing their pieces start as near-equal rows that a tied output layer
    # cannot tell apart (measured: a MiniLM BERT2BERT fitted 48 rows at 0-10 % without it, 38 % with it)
    import torch

    def build(weight: "torch.Tensor") -> "torch.Tensor":
        return torch.stack([weight[ids].mean(dim=0) for ids in sources])

    with torch.no_grad():
        old_in = module.get_input_embeddings()
        new_in = torch.nn.Embedding(len(sources), old_in.weight.shape[1], padding_idx=old_in.padding_idx)
        rows = build(old_in.weight)
        noise = torch.randn(len(sources) - first_new, rows.shape[1], generator=torch.Generator().manual_seed(seed))
        rows[first_new:] += noise * old_in.weight.std()
        new_in.weight.copy_(rows)
        if old_in.padding_idx is not None and old_in.padding_idx < len(sources):
            new_in.padding_idx = [j for j, ids in enumerate(sources) if ids == [old_in.padding_idx]][0]
        module.set_input_embeddings(new_in)
        old_out = module.get_output_embeddings() if hasattr(module, "get_output_embeddings") else None
        if old_out is not None:
            new_out = torch.nn.Linear(old_out.weight.shape[1], len(sources), bias=old_out.bias is not None)
            new_out.weight = new_in.weight  # tied, as the checkpoint's decoder is
            if old_out.bias is not None:
                new_out.bias.copy_(build(old_out.bias[:, None])[:, 0])
            module.set_output_embeddings(new_out)
    module.config.vocab_size = len(sources)
