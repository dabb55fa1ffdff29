"""Fine-tune, run and score decoder-only (causal) language models on synthetic datasets with the stock
``transformers`` stack: each row becomes a prompt (a template over the source text) and a completion
(the target text, then EOS); the loss is taken on the completion only (labels -100 over the prompt
and the padding); exact match is scored on greedy completions (left padding, the new tokens only).

Example:
    >>> from datasets import Dataset
    >>> from hf_synthsample.models import build_word_tokenizer
    >>> ds = Dataset.from_dict({"src": ["jump twice"], "tgt": ["I_JUMP I_JUMP"]})
    >>> tok = build_word_tokenizer(ds, columns=["src", "tgt"])
    >>> row = tokenize_causal(ds, tok, source_column="src", target_column="tgt")[0]
    >>> tok.convert_ids_to_tokens(row["input_ids"]), row["labels"]
    (['jump', 'twice', 'I_JUMP', 'I_JUMP', '</s>'], [-100, -100, 4, 4, 2])
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..validation import check_columns, check_int, check_not_empty
from ._inference import check_column_args, check_no_nulls, check_texts
from ._training import training_arguments

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset
    from transformers import PreTrainedModel, PreTrainedTokenizerBase, Trainer

__all__ = ["DEFAULT_PROMPT_TEMPLATE", "check_prompt_template", "model_kind", "is_causal_lm_config", "checkpoint_kind",
           "tokenize_causal", "CausalCollator", "train_causal", "generate_completions", "evaluate_causal",
           "load_causal", "IGNORE_INDEX"]

#: the prompt of a row: its source text, then a newline (the completion follows)
DEFAULT_PROMPT_TEMPLATE = "{source}\n"
IGNORE_INDEX = -100
_CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")


def check_prompt_template(name: str, value: Any) -> str:
    """``value`` if it is a ``str.format`` template whose only field is ``{source}`` (present), else an
    error naming ``name``.

    Example:
        >>> check_prompt_template("prompt_template", "Q: {source}\\nA:")
        'Q: {source}\\nA:'
        >>> check_prompt_template("prompt_template", "{input}")
        Traceback (most recent call last):
        ...
        ValueError: prompt_template must hold the placeholder {source} (the row's source text), got '{input}'
    """
    import string

    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str with the placeholder {{source}}, got {type(value).__name__}")
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(value) if f is not None}
    except ValueError as err:
        raise ValueError(f"{name}: {value!r} is not a str.format template ({err}); write a literal brace as "
                         "{{ or }}") from None
    if "source" not in fields:
        raise ValueError(f"{name} must hold the placeholder {{source}} (the row's source text), got {value!r}")
    other = sorted(fields - {"source"})
    if other:
        raise ValueError(f"{name}: {value!r} has the placeholder(s) {other}; only {{source}} is filled (write a "
                         "literal brace as {{ or }})")
    return value


def _causal_class_names() -> set[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    names: set[str] = set()
    for v in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values():
        names.update([v] if isinstance(v, str) else v)
    return names


def _is_causal_class(name: str) -> bool:
    return name in _causal_class_names() or name.endswith(_CAUSAL_SUFFIXES)


def is_causal_lm_config(config: dict) -> bool:
    """Whether a ``config.json`` (as a dict) is a decoder-only LM's: not an encoder-decoder, and its
    ``architectures`` name a causal-LM class, or (none named) its ``model_type`` has one in transformers
    (an encoder family's, BERT / RoBERTa, only with ``is_decoder``).

    Example:
        >>> is_causal_lm_config({"model_type": "gpt2"}), is_causal_lm_config({"model_type": "bert"})
        (True, False)
    """
    if config.get("is_encoder_decoder") is True:
        return False
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                        MODEL_FOR_MASKED_LM_MAPPING_NAMES)

    archs = config.get("architectures") or []
    if archs:
        return any(_is_causal_class(a) for a in archs)
    kind = config.get("model_type")
    if kind not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return False
    return kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES or config.get("is_decoder") is True


def model_kind(model: Any) -> str | None:
    """``"seq2seq"`` (an encoder-decoder), ``"causal_lm"`` (a decoder-only LM with a head) or ``None``
    (another kind: an encoder, a classifier, a bare model), from the built model's config and class.

    Example:
        >>> from transformers import GPT2Config, GPT2LMHeadModel, GPT2Model
        >>> cfg = GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=10)
        >>> model_kind(GPT2LMHeadModel(cfg)), model_kind(GPT2Model(cfg))
        ('causal_lm', None)
    """
    get = getattr(model, "get_base_model", None)  # a PEFT wrapper: the model inside
    model = get() if callable(get) else model
    config = getattr(model, "config", None)
    if config is None or not hasattr(model, "generate"):
        return None
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    return "causal_lm" if _is_causal_class(type(model).__name__) else None


def _check_tokenizer(tokenizer: Any) -> None:
    if not callable(tokenizer) or not hasattr(tokenizer, "eos_token_id"):
        raise TypeError(f"tokenizer must be a transformers tokenizer, got {type(tokenizer).__name__}")
    if tokenizer.eos_token_id is None:
        raise ValueError("tokenizer has no eos token: a causal LM's completion ends with it (set tokenizer.eos_token)")
    if tokenizer.pad_token_id is None:
        raise ValueError("tokenizer has no pad token: set one before batching (e.g. tokenizer.pad_token = "
                         "tokenizer.eos_token)")


def _check_causal_model(model: Any) -> None:
    if model_kind(model) != "causal_lm":
        raise TypeError(f"model must be a decoder-only transformers LM with a head (e.g. GPT2LMHeadModel, "
                        f"LlamaForCausalLM), got {type(model).__name__}")


def _prompt_ids(tokenizer: Any, sources: Sequence[str], template: str) -> list[list[int]]:
    """Each source through ``template``, tokenized without the tokenizer's end token (a BOS first when
    the tokenizer adds one); an empty prompt is an error (generation needs a first token)."""
    prompts = [template.format(source=s) for s in sources]
    ids = tokenizer(prompts, add_special_tokens=False)["input_ids"]
    bos = tokenizer.bos_token_id
    if getattr(tokenizer, "add_bos_token", False) and bos is not None:
        ids = [[bos, *x] for x in ids]
    empty = next((i for i, x in enumerate(ids) if not x), None)
    if empty is not None:
        raise ValueError(f"prompt_template: the prompt of row {empty} ({prompts[empty]!r}) has no tokens; a causal LM "
                         "completes a prompt of at least one token")
    return ids


def tokenize_causal(
    dataset: "Dataset",
    tokenizer: "PreTrainedTokenizerBase",
    *,
    source_column: str,
    target_column: str,
    prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
    max_length: int | None = None,
    num_proc: int | None = None,
) -> "Dataset":
    """``dataset`` with ``input_ids`` (prompt + completion + EOS), ``attention_mask`` and ``labels``
    (-100 over the prompt) added; the other columns are kept. ``max_length``: the longest allowed row
    (tokens, EOS included); a longer one raises ``ValueError`` (nothing is truncated)."""
    _check_tokenizer(tokenizer)
    check_column_args(source_column=source_column, target_column=target_column)
    check_prompt_template("prompt_template", prompt_template)
    check_columns(dataset, [source_column], name="source_column")
    check_columns(dataset, [target_column], name="target_column")
    check_no_nulls(dataset, [source_column, target_column])
    if max_length is not None:
        check_int("max_length", max_length, min=2)
    eos = tokenizer.eos_token_id

    def encode(batch: dict) -> dict:
        prompts = _prompt_ids(tokenizer, batch[source_column], prompt_template)
        completions = tokenizer(list(batch[target_column]), add_special_tokens=False)["input_ids"]
        ids = [p + c + [eos] for p, c in zip(prompts, completions)]
        labels = [[IGNORE_INDEX] * len(p) + c + [eos] for p, c in zip(prompts, completions)]
        return {"input_ids": ids, "attention_mask": [[1] * len(x) for x in ids], "labels": labels}

    out = dataset.map(encode, batched=True, num_proc=num_proc, desc="tokenizing")
    if max_length is not None:
        from .seq2seq import _too_long

        _too_long(out, "input_ids", max_length, "max_length")
    return out


class CausalCollator:
    """Right-pads ``input_ids`` (with ``pad_token_id``), ``attention_mask`` (0) and ``labels`` (-100)
    into tensors; other keys are left out (the Trainer drops the text columns first).

    Example:
        >>> batch = CausalCollator(0)([{"input_ids": [5, 6, 2], "labels": [-100, 6, 2]}, {"input_ids": [7, 2],
        ...                                                                              "labels": [-100, 2]}])
        >>> batch["input_ids"].tolist(), batch["labels"].tolist(), batch["attention_mask"].tolist()
        ([[5, 6, 2], [7, 2, 0]], [[-100, 6, 2], [-100, 2, -100]], [[1, 1, 1], [1, 1, 0]])
    """

    def __init__(self, pad_token_id: int):
        self.pad_token_id = check_int("pad_token_id", pad_token_id, min=0)

    def __call__(self, features: list[dict]) -> dict:
        import torch

        longest = max(len(f["input_ids"]) for f in features)

        def pad(key: str, value: int, default=None) -> "torch.Tensor":
            rows = [list(f[key]) if key in f else default(f) for f in features]
            return torch.tensor([r + [value] * (longest - len(r)) for r in rows], dtype=torch.long)

        batch = {"input_ids": pad("input_ids", self.pad_token_id),
                 "attention_mask": pad("attention_mask", 0, lambda f: [1] * len(f["input_ids"]))}
        if any("labels" in f for f in features):
            batch["labels"] = pad("labels", IGNORE_INDEX, lambda f: list(f["input_ids"]))
        return batch


def train_causal(
    model: "PreTrainedModel",
    tokenizer: "PreTrainedTokenizerBase",
    train_dataset: "Dataset",
    *,
    source_column: str,
    target_column: str,
    output_dir: str | os.PathLike,
    prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
    epochs: float = 1.0,
    max_steps: int = -1,
    batch_size: int = 32,
    learning_rate: float = 5e-4,
    seed: int = 0,
    callbacks: Iterable[Any] = (),
    **training_args: Any,
) -> "Trainer":
    """Fine-tune ``model`` on ``train_dataset``'s prompt + completion rows (the loss on the completion
    only) with a stock ``Trainer``; returns the trainer. ``training_args``: any other
    ``TrainingArguments`` field; the defaults here: no logging, no saving, no evaluation."""
    from transformers import Trainer, TrainingArguments

    _check_causal_model(model)
    _check_tokenizer(tokenizer)
    check_not_empty(train_dataset, name="train_dataset")
    args = training_arguments(TrainingArguments, output_dir=output_dir, epochs=epochs, max_steps=max_steps,
                              batch_size=batch_size, learning_rate=learning_rate, seed=seed, extra=training_args)
    limit = getattr(model.config, "n_positions", None) or getattr(model.config, "max_position_embeddings", None)
    data = tokenize_causal(train_dataset, tokenizer, source_column=source_column, target_column=target_column,
                           prompt_template=prompt_template, max_length=limit)
    data = data.remove_columns([c for c in data.column_names if c not in ("input_ids", "attention_mask", "labels")])
    trainer = Trainer(model=model, args=args, train_dataset=data, data_collator=CausalCollator(tokenizer.pad_token_id),
                      processing_class=tokenizer, callbacks=list(callbacks))
    trainer.train()
    return trainer


def generate_completions(
    model: "PreTrainedModel",
    tokenizer: "PreTrainedTokenizerBase",
    sources: Sequence[str],
    *,
    prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
    batch_size: int = 64,
    max_new_tokens: int = 128,
    num_beams: int = 1,
) -> list[str]:
    """The greedy (``num_beams`` > 1: beam) completion of each source's prompt, in input order: prompts
    left-padded and batched by length, the new tokens only decoded (special tokens skipped, up to EOS),
    whitespace runs collapsed. The model is in eval mode for the call and restored afterwards."""
    import torch

    _check_causal_model(model)
    _check_tokenizer(tokenizer)
    check_prompt_template("prompt_template", prompt_template)
    batch_size = check_int("batch_size", batch_size, min=1)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, min=1)
    num_beams = check_int("num_beams", num_beams, min=1)
    sources = check_texts(sources, "sources")
    if not sources:
        return []
    prompts = _prompt_ids(tokenizer, sources, prompt_template)
    order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    out: list = [None] * len(prompts)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                longest = max(len(prompts[i]) for i in idx)
                ids = torch.tensor([[pad] * (longest - len(prompts[i])) + prompts[i] for i in idx], device=device)
                mask = torch.tensor([[0] * (longest - len(prompts[i])) + [1] * len(prompts[i]) for i in idx],
                                    device=device)
                generated = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_new_tokens,
                                           num_beams=num_beams, do_sample=False, pad_token_id=pad, eos_token_id=eos)
                for i, row in zip(idx, generated[:, longest:].tolist()):
                    row = row[:row.index(eos)] if eos in row else row
                    out[i] = " ".join(tokenizer.decode(row, skip_special_tokens=True).split())
    finally:
        model.train(was_training)
    return out


def evaluate_causal(
    model: "PreTrainedModel",
    tokenizer: "PreTrainedTokenizerBase",
    dataset: "Dataset",
    *,
    source_column: str,
    target_column: str,
    prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
    **generate_kwargs: Any,
) -> dict[str, Any]:
    """Exact match (percent) of the greedy completions against ``target_column`` (the package's
    ``exact_match``: whitespace runs collapsed). Returns ``{"exact_match", "num_examples",
    "predictions"}`` as :func:`~hf_synthsample.models.evaluate_seq2seq`; ``generate_kwargs`` go to
    :func:`generate_completions` (``batch_size``, ``max_new_tokens``, ``num_beams``)."""
    from ..columns import column_arrow
    from .seq2seq import _check_generation_eval, _exact_match_result

    _check_generation_eval(dataset, source_column, target_column, generate_kwargs)
    references = [str(t) for t in column_arrow(dataset, target_column).to_pylist()]
    predictions = generate_completions(model, tokenizer, column_arrow(dataset, source_column).to_pylist(),
                                       prompt_template=prompt_template, **generate_kwargs)
    return _exact_match_result(predictions, references)


def checkpoint_kind(path: str | os.PathLike, name: str = "path") -> str:
    """``"seq2seq"`` or ``"causal_lm"``: the kind of the local checkpoint folder ``path`` (a
    ``config.json`` and tokenizer files, as ``save_pretrained`` writes), else a ``ValueError`` naming
    the argument ``name``, the folder and what is wrong (before any weights load)."""
    from .seq2seq import (check_seq2seq_folder, check_tokenizer_files, is_seq2seq_config, _config_holds,
                          read_checkpoint_config)

    folder = Path(path)
    config = read_checkpoint_config(folder, name)
    if isinstance(config, dict) and not is_seq2seq_config(config):
        if not is_causal_lm_config(config):
            raise ValueError(f"{name}: {str(folder)!r} holds {_config_holds(config)}, not a seq2seq (encoder-decoder) "
                             "model or a decoder-only causal LM: pass a BART / T5 / ... or a GPT-2 / Llama / ... "
                             "checkpoint")
        check_tokenizer_files(folder, name)
        return "causal_lm"
    check_seq2seq_folder(folder, name)  # the seq2seq checks and their messages
    return "seq2seq"


def load_causal(path: str | os.PathLike, **from_pretrained_kwargs: Any):
    """``(model, tokenizer)`` of a local causal-LM checkpoint folder (``AutoModelForCausalLM``); a
    tokenizer without a pad token gets its EOS as pad."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if checkpoint_kind(path, "path") != "causal_lm":
        raise ValueError(f"path: {str(path)!r} holds a seq2seq model; load it with load_seq2seq")
    model = AutoModelForCausalLM.from_pretrained(path, **from_pretrained_kwargs)
    tokenizer = AutoTokenizer.from_pretrained(path, **from_pretrained_kwargs)
    if tokenizer.pad_token_id is None and tokenizer.eos_token_id is not None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer
