"""Train, run and score seq2seq models on synthetic datasets with the stock ``transformers`` stack.

Training is a stock ``Seq2SeqTrainer``; a tokenized row longer than a given maximum is an error,
never silently truncated. Exact match is the package's ``exact_match`` evaluate module.

Example:
    >>> from datasets import Dataset
    >>> from hf_synthsample.models import build_word_tokenizer
    >>> ds = Dataset.from_dict({"src": ["jump twice", "walk"], "tgt": ["I_JUMP I_JUMP", "I_WALK"]})
    >>> tok = build_word_tokenizer(ds, columns=["src", "tgt"])
    >>> tokenize_seq2seq(ds, tok, source_column="src", target_column="tgt")[0]["labels"]
    [4, 4, 2]
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..validation import check_columns, check_int, check_not_empty
from ._inference import check_column_args, check_no_nulls, check_texts, run_batched
from ._training import training_arguments

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset
    from transformers import PreTrainedModel, PreTrainedTokenizerBase, Seq2SeqTrainer

__all__ = ["check_seq2seq_folder", "tokenize_seq2seq", "seq2seq_collator", "train_seq2seq", "generate_predictions", "evaluate_seq2seq",
           "load_seq2seq", "MODEL_INPUTS"]

#: Columns :func:`tokenize_seq2seq` adds.
MODEL_INPUTS: tuple[str, ...] = ("input_ids", "attention_mask", "labels")


def _check_tokenizer(tokenizer: Any) -> None:
    if not callable(tokenizer) or not hasattr(tokenizer, "pad_token_id"):
        raise TypeError(f"tokenizer must be a transformers tokenizer, got {type(tokenizer).__name__}")
    if tokenizer.pad_token_id is None:
        raise ValueError("tokenizer has no pad token: set tokenizer.pad_token before batching")


def _check_seq2seq_model(model: Any) -> None:
    config = getattr(model, "config", None)
    if config is None or not getattr(config, "is_encoder_decoder", False) or not hasattr(model, "generate"):
        raise TypeError(
            f"model must be an encoder-decoder transformers model (e.g. T5ForConditionalGeneration, "
            f"BartForConditionalGeneration), got {type(model).__name__}"
        )


def _too_long(dataset: "Dataset", column: str, limit: int | None, name: str) -> None:
    """Raise when a row of ``column`` (a list column) is longer than ``limit``."""
    if limit is None:
        return
    import numpy as np
    import pyarrow.compute as pc

    from ..columns import column_arrow

    lengths = pc.list_value_length(column_arrow(dataset, column)).to_numpy(zero_copy_only=False)
    over = np.flatnonzero(lengths > limit)
    if over.size:
        first = int(over[0])
        raise ValueError(
            f"{name}={limit}: {over.size} row(s) are longer (tokens, eos included); first at row {first} "
            f"with {int(lengths[first])} tokens. Raise {name} or filter those rows: nothing is truncated."
        )


def tokenize_seq2seq(
    dataset: "Dataset",
    tokenizer: "PreTrainedTokenizerBase",
    *,
    source_column: str,
    target_column: str,
    max_source_length: int | None = None,
    max_target_length: int | None = None,
    num_proc: int | None = None,
) -> "Dataset":
    """``dataset`` with ``input_ids``, ``attention_mask`` (source) and ``labels`` (target) added.

    ``max_source_length`` / ``max_target_length``: the longest allowed tokenized row (eos included);
    a longer row raises ``ValueError``. The other columns are kept.
    """
    _check_tokenizer(tokenizer)
    check_column_args(source_column=source_column, target_column=target_column)
    check_columns(dataset, [source_column], name="source_column")
    check_columns(dataset, [target_column], name="target_column")
    check_no_nulls(dataset, [source_column, target_column])
    for name, value in (("max_source_length", max_source_length), ("max_target_length", max_target_length)):
        if value is not None:
            check_int(name, value, min=1)
    if num_proc is not None:
        num_proc = check_int("num_proc", num_proc, min=1)

    def encode(batch: dict) -> dict:
        enc = tokenizer(batch[source_column])
        labels = tokenizer(text_target=batch[target_column])["input_ids"]
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "labels": labels}

    out = dataset.map(encode, batched=True, num_proc=num_proc, desc="tokenizing")
    _too_long(out, "input_ids", max_source_length, "max_source_length")
    _too_long(out, "labels", max_target_length, "max_target_length")
    return out


def seq2seq_collator(tokenizer: "PreTrainedTokenizerBase", model: "PreTrainedModel | None" = None):
    """The batch collator :func:`train_seq2seq` uses: dynamic padding, labels padded with -100.

    With ``model``, it also builds ``decoder_input_ids`` from the labels (the model's own shift).
    """
    from transformers import DataCollatorForSeq2Seq

    return DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100, padding=True)


def _prepare(dataset, tokenizer, source_column, target_column, max_length, name):
    check_not_empty(dataset, name=name)
    if not {"input_ids", "labels"} <= set(dataset.column_names):
        dataset = tokenize_seq2seq(dataset, tokenizer, source_column=source_column, target_column=target_column,
                                   max_source_length=max_length, max_target_length=max_length)
    else:
        _too_long(dataset, "input_ids", max_length, "max_source_length")
        _too_long(dataset, "labels", max_length, "max_target_length")
    # The raw text is not a model input, and the padding collator cannot batch strings.
    text = [c for c in (source_column, target_column) if c in dataset.column_names and c not in MODEL_INPUTS]
    return dataset.remove_columns(text)


def train_seq2seq(
    model: "PreTrainedModel",
    tokenizer: "PreTrainedTokenizerBase",
    train_dataset: "Dataset",
    *,
    source_column: str,
    target_column: str,
    output_dir: str | os.PathLike,
    eval_dataset: "Dataset | dict[str, Dataset] | None" = None,
    epochs: float = 1.0,
    max_steps: int = -1,
    batch_size: int = 32,
    learning_rate: float = 5e-4,
    seed: int = 0,
    callbacks: Iterable[Any] = (),
    data_collator: Any = None,
    resume_from_checkpoint: str | bool | None = None,
    **training_args: Any,
) -> "Seq2SeqTrainer":
    """Train ``model`` on ``train_dataset`` with a stock ``Seq2SeqTrainer``; returns the trainer.

    ``train_dataset`` / ``eval_dataset`` hold the text columns (tokenized here) or are already
    tokenized by :func:`tokenize_seq2seq`; rows longer than a BART model's
    ``max_position_embeddings`` raise. ``data_collator`` replaces :func:`seq2seq_collator`.
    ``training_args``: any other ``Seq2SeqTrainingArguments`` field (unknown names raise); the
    defaults here: no logging, no saving, no evaluation, ``report_to="none"``.

    Example:
        >>> from datasets import Dataset
        >>> from hf_synthsample.models import build_scratch_model, build_word_tokenizer
        >>> ds = Dataset.from_dict({"src": ["a b", "b a"] * 8, "tgt": ["b a", "a b"] * 8})
        >>> tok = build_word_tokenizer(ds, columns=["src", "tgt"])
        >>> model = build_scratch_model(tok, d_model=16, d_ff=32, num_layers=1, num_heads=2)
        >>> import tempfile
        >>> trainer = train_seq2seq(model, tok, ds, source_column="src", target_column="tgt",
        ...                         output_dir=tempfile.mkdtemp(), max_steps=2, batch_size=8, disable_tqdm=True)
        {'train_runtime': ...}
        >>> trainer.state.global_step
        2
    """
    from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments

    _check_seq2seq_model(model)
    _check_tokenizer(tokenizer)
    check_column_args(source_column=source_column, target_column=target_column)
    callbacks = list(callbacks)
    if data_collator is not None and not callable(data_collator):
        raise TypeError(f"data_collator must be callable, got {type(data_collator).__name__}")
    args = training_arguments(Seq2SeqTrainingArguments, output_dir=output_dir, epochs=epochs, max_steps=max_steps,
                              batch_size=batch_size, learning_rate=learning_rate, seed=seed, extra=training_args)
    if not hasattr(train_dataset, "column_names"):
        raise TypeError(f"train_dataset must be a datasets.Dataset, got {type(train_dataset).__name__}")
    if not {"input_ids", "labels"} <= set(train_dataset.column_names):
        check_columns(train_dataset, [source_column], name="source_column")
        check_columns(train_dataset, [target_column], name="target_column")
    # learned absolute positions (BART) have a hard limit: say so instead of an index error on the device
    max_len = getattr(model.config, "max_position_embeddings", None) if model.config.model_type != "t5" else None
    prepare = functools.partial(_prepare, tokenizer=tokenizer, source_column=source_column,
                                target_column=target_column, max_length=max_len)
    train_dataset = prepare(train_dataset, name="train_dataset")
    if isinstance(eval_dataset, dict):
        eval_dataset = {k: prepare(v, name=f"eval_dataset[{k!r}]") for k, v in eval_dataset.items()}
    elif eval_dataset is not None:
        eval_dataset = prepare(eval_dataset, name="eval_dataset")
    trainer = Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=data_collator if data_collator is not None else seq2seq_collator(tokenizer, model),
        processing_class=tokenizer,
        callbacks=callbacks,
    )
    trainer.train(resume_from_checkpoint=resume_from_checkpoint)
    return trainer


def _source_texts(dataset_or_texts: Any, source_column: str | None) -> list[str]:
    if hasattr(dataset_or_texts, "column_names"):
        if source_column is None:
            raise ValueError(
                "source_column: name the source text column when passing a Dataset; "
                f"available columns: {dataset_or_texts.column_names}"
            )
        check_columns(dataset_or_texts, [source_column], name="source_column")
        from ..columns import column_arrow

        texts = column_arrow(dataset_or_texts, source_column).to_pylist()
    else:
        texts = dataset_or_texts
    return check_texts(texts, "dataset_or_texts")


def generate_predictions(
    model: "PreTrainedModel",
    tokenizer: "PreTrainedTokenizerBase",
    dataset_or_texts: "Dataset | Sequence[str]",
    *,
    source_column: str | None = None,
    batch_size: int = 64,
    max_new_tokens: int = 128,
    num_beams: int = 1,
) -> list[str]:
    """Decoded outputs of ``model`` for each source text, in input order.

    Greedy decoding (beam search with ``num_beams > 1``), special tokens skipped; sources batched
    by length. The model is in eval mode for the call and restored afterwards.

    Example:
        >>> from hf_synthsample.models import build_scratch_model, build_word_tokenizer
        >>> tok = build_word_tokenizer(["a b c"])
        >>> model = build_scratch_model(tok, d_model=16, d_ff=32, num_layers=1, num_heads=2)
        >>> preds = generate_predictions(model, tok, ["a b", "c"], max_new_tokens=3)
        >>> len(preds), all(set(p.split()) <= {"a", "b", "c"} for p in preds)
        (2, True)
    """
    _check_seq2seq_model(model)
    _check_tokenizer(tokenizer)
    batch_size = check_int("batch_size", batch_size, min=1)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, min=1)
    num_beams = check_int("num_beams", num_beams, min=1)
    texts = _source_texts(dataset_or_texts, source_column)
    if not texts:
        return []
    lengths = [len(ids) for ids in tokenizer(texts)["input_ids"]]

    def step(enc) -> list[str]:
        generated = model.generate(
            input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
            max_new_tokens=max_new_tokens, num_beams=num_beams, do_sample=False,
        )
        return [" ".join(text.split()) for text in tokenizer.batch_decode(generated, skip_special_tokens=True)]

    return run_batched(model, tokenizer, texts, lengths, batch_size, step)


@functools.lru_cache(maxsize=None)
def _load_metric(name: str):
    import evaluate

    from ..metrics import metric_path

    return evaluate.load(metric_path(name))


def evaluate_seq2seq(
    model: "PreTrainedModel",
    tokenizer: "PreTrainedTokenizerBase",
    dataset: "Dataset",
    *,
    source_column: str,
    target_column: str,
    **generate_kwargs: Any,
) -> dict[str, Any]:
    """Exact match (percent) of the model's predictions against ``target_column``.

    Returns ``{"exact_match": percent in [0, 100], "num_examples": n, "predictions": [...]}``
    (predictions in row order). ``generate_kwargs`` go to :func:`generate_predictions`
    (``batch_size``, ``max_new_tokens``, ``num_beams``).
    """
    from ..columns import column_arrow

    _check_generation_eval(dataset, source_column, target_column, generate_kwargs)
    references = column_arrow(dataset, target_column).to_pylist()
    predictions = generate_predictions(model, tokenizer, dataset, source_column=source_column, **generate_kwargs)
    return _exact_match_result(predictions, references)


def _check_generation_eval(dataset: "Dataset", source_column: str, target_column: str, generate_kwargs: dict) -> None:
    """The checks of an exact-match evaluation (``evaluate_seq2seq``, ``evaluate_causal``) before any decoding."""
    check_columns(dataset, [source_column], name="source_column")
    check_columns(dataset, [target_column], name="target_column")
    check_not_empty(dataset, name="dataset")
    unknown = sorted(set(generate_kwargs) - {"batch_size", "max_new_tokens", "num_beams"})
    if unknown:
        raise ValueError(f"generate_kwargs: unknown {unknown}; accepted: ['batch_size', 'max_new_tokens', 'num_beams']")


def _exact_match_result(predictions: list[str], references: list) -> dict[str, Any]:
    """``{"exact_match": percent, "num_examples": n, "predictions": [...]}`` with the package's ``exact_match``."""
    score = _load_metric("exact_match").compute(predictions=predictions, references=references)["exact_match"]
    return {"exact_match": 100.0 * score, "num_examples": len(predictions), "predictions": predictions}


#: the files one of which a saved tokenizer has (``save_pretrained`` writes ``tokenizer.json`` for a fast
#: tokenizer; slow ones keep their vocabulary: WordPiece, BPE, SentencePiece)
_TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model",
                    "source.spm")


def is_seq2seq_config(config: dict) -> bool:
    """Whether a ``config.json`` (as a dict) is an encoder-decoder's: it says so, or its ``model_type``
    has a seq2seq class in transformers. A config transformers cannot place counts as one (not refused)."""
    if config.get("is_encoder_decoder") is True:
        return True
    try:
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
        from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES
    except ImportError:  # pragma: no cover - transformers moved them: do not guess
        return True
    kind = config.get("model_type")
    return kind not in CONFIG_MAPPING_NAMES or kind in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES


def read_checkpoint_config(path: str | os.PathLike, name: str = "path_or_repo_id") -> Any:
    """The ``config.json`` of a local checkpoint folder, else a ``ValueError`` naming the argument ``name``."""
    import json

    path = Path(path)
    if not path.is_dir() or not (path / "config.json").is_file():
        raise ValueError(f"{name}: {str(path)!r} is not a checkpoint folder (a folder with config.json and the "
                         "tokenizer files, as save_pretrained writes)")
    try:
        return json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{name}: {str(path)!r} has a config.json that cannot be read: {err}") from err


def check_tokenizer_files(path: str | os.PathLike, name: str = "path_or_repo_id") -> None:
    """A ``ValueError`` naming ``name`` unless the folder holds a saved tokenizer (one of its files)."""
    if not any((Path(path) / f).is_file() for f in _TOKENIZER_FILES):
        raise ValueError(f"{name}: {str(path)!r} has no tokenizer files (none of {', '.join(_TOKENIZER_FILES)}): "
                         "save the tokenizer beside the model (tokenizer.save_pretrained(folder))")


def check_seq2seq_folder(path: str | os.PathLike, name: str = "path_or_repo_id") -> None:
    """A local checkpoint folder holds an encoder-decoder's ``config.json`` and tokenizer files, else a
    ``ValueError`` naming the argument ``name``, the folder and what is missing (before any weights load)."""
    config = read_checkpoint_config(path, name)
    if isinstance(config, dict) and not is_seq2seq_config(config):
        raise ValueError(f"{name}: {str(path)!r} holds {_config_holds(config)}, not a seq2seq (encoder-decoder) model: "
                         "pass a BART / T5 / ... checkpoint, or warm-start an encoder-decoder from a BERT-family "
                         "encoder with warm_start_seq2seq")
    check_tokenizer_files(path, name)


def _config_holds(config: dict) -> str:
    """``a <model_type> model (<architectures>)``: what a ``config.json`` (as a dict) holds, for messages."""
    kind = config.get("model_type", "model")
    return f"a {kind} model ({', '.join(config.get('architectures') or []) or kind})"


def load_seq2seq(path_or_repo_id: str | os.PathLike, **from_pretrained_kwargs: Any):
    """``(model, tokenizer)`` of a seq2seq checkpoint (BART, T5, ...) to fine-tune.

    ``path_or_repo_id`` is a local folder (``save_pretrained`` output) or a Hub id, which must be in
    the local cache when offline (``HF_HUB_OFFLINE=1``) or the Hub cannot be reached: else an
    ``OSError`` says so, at once. A path that does not exist and is no Hub id raises
    ``FileNotFoundError``. A local folder without tokenizer files, or holding a model that is not an
    encoder-decoder, is a ``ValueError`` naming the folder, before any weights load.
    ``from_pretrained_kwargs`` (e.g. ``revision``) go to both ``from_pretrained`` calls.
    """
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    if not isinstance(path_or_repo_id, (str, os.PathLike)) or not str(path_or_repo_id):
        raise TypeError(f"path_or_repo_id must be a local folder or a Hub id (str), got {path_or_repo_id!r}")
    path = Path(path_or_repo_id).expanduser()
    if path.exists():
        if not path.is_dir() or not (path / "config.json").is_file():
            raise ValueError(f"path_or_repo_id: {str(path)!r} is not a checkpoint folder (no config.json in it)")
        check_seq2seq_folder(path)
        return (AutoModelForSeq2SeqLM.from_pretrained(path, **from_pretrained_kwargs),
                AutoTokenizer.from_pretrained(path, **from_pretrained_kwargs))
    repo_id = str(path_or_repo_id)
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError:
        raise FileNotFoundError(f"path_or_repo_id: {repo_id!r} is not a local folder (no such path) and not a "
                                "Hugging Face Hub id ('name' or 'namespace/name')") from None
    offline = any(os.environ.get(v, "").upper() in {"1", "ON", "YES", "TRUE"} for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    if not offline and not from_pretrained_kwargs.get("local_files_only") and not _in_cache(repo_id, from_pretrained_kwargs):
        endpoint = _hub_unreachable()
        if endpoint:  # else the download would retry for most of a minute and end in a raw ConnectError
            raise OSError(f"path_or_repo_id: {repo_id!r} is not a local folder, not in the Hugging Face cache, and the "
                          f"Hugging Face Hub ({endpoint}) cannot be reached from here to download it. Download it "
                          f"where the Hub is reachable (`hf download {repo_id}`) or pass a local checkpoint folder.")
    try:
        if offline:
            from_pretrained_kwargs.setdefault("local_files_only", True)
        return (AutoModelForSeq2SeqLM.from_pretrained(repo_id, **from_pretrained_kwargs),
                AutoTokenizer.from_pretrained(repo_id, **from_pretrained_kwargs))
    except OSError as err:
        if offline:
            raise OSError(
                f"path_or_repo_id: {repo_id!r} is not a local folder and is not in the Hugging Face cache, and "
                "HF_HUB_OFFLINE=1 forbids downloading it. Download it first where the Hub is reachable "
                f"(`hf download {repo_id}`) or pass a local checkpoint folder."
            ) from err
        raise


def _in_cache(repo_id: str, kwargs: dict) -> bool:
    """Whether the Hub cache already holds ``repo_id``'s config (so loading needs no network)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, "config.json", cache_dir=kwargs.get("cache_dir"),
                                   revision=kwargs.get("revision"))
    return isinstance(found, str)


def _hub_unreachable(timeout: float = 3.0) -> str | None:
    """The Hub endpoint when no connection to it opens within ``timeout`` seconds, else ``None``."""
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname, port), timeout=timeout).close()
    except OSError:
        return constants.ENDPOINT
    return None
