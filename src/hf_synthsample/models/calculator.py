"""The Calculator model of Shin et al. (2019, section 6.1): a character-level LSTM classifier.

:class:`CharLSTMForSequenceClassification` (registered with ``AutoModelForSequenceClassification``)
classifies an expression's value mod 10 from the LSTM's final hidden state at each row's last real
token (batches are right-padded), so padding never changes a prediction.

Example:
    >>> model, tok = build_calculator_model(hidden_size=16, embedding_dim=8)
    >>> batch = tok(["1+2", "(3-4)*5"], padding=True, return_tensors="pt")
    >>> out = model(**batch, labels=torch.tensor([3, 5]))
    >>> tuple(out.logits.shape), out.loss.ndim
    ((2, 10), 0)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import torch
from torch import nn
from transformers import AutoConfig, AutoModelForSequenceClassification, PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import SequenceClassifierOutput

from ..validation import check_columns, check_float, check_int, check_not_empty
from ._inference import check_column_args, check_no_nulls, check_texts, run_batched
from ._padding import right_padded_lengths
from ._training import training_arguments
from .tokenization import CALCULATOR_ALPHABET, build_char_tokenizer

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset
    from transformers import PreTrainedTokenizerBase, Trainer

__all__ = ["CharLSTMConfig", "CharLSTMForSequenceClassification", "build_calculator_model", "train_classifier",
           "predict_classifier", "evaluate_classifier", "NUM_ANSWERS"]

#: Calculator answers are the expression's value modulo 10.
NUM_ANSWERS = 10


class CharLSTMConfig(PretrainedConfig):
    """Config of :class:`CharLSTMForSequenceClassification` (``num_labels`` defaults to 10; ``dropout``
    acts between LSTM layers and before the dense head)."""

    model_type = "hf_synthsample_char_lstm"

    vocab_size: int = 4 + len(CALCULATOR_ALPHABET)
    embedding_dim: int = 32
    hidden_size: int = 256
    num_layers: int = 1
    dropout: float = 0.0
    initializer_range: float = 0.02
    pad_token_id: int | None = 0
    bos_token_id: int | None = 1
    eos_token_id: int | None = 2

    def __post_init__(self, **kwargs):
        if self.id2label is None:
            kwargs.setdefault("num_labels", NUM_ANSWERS)
        super().__post_init__(**kwargs)


class CharLSTMForSequenceClassification(PreTrainedModel):
    """Embedding -> LSTM -> dense layer on the final hidden state -> ``num_labels`` logits."""

    config_class = CharLSTMConfig
    base_model_prefix = "char_lstm"
    main_input_name = "input_ids"

    def __init__(self, config: CharLSTMConfig):
        super().__init__(config)
        self.embeddings = nn.Embedding(config.vocab_size, config.embedding_dim, padding_idx=config.pad_token_id)
        self.lstm = nn.LSTM(
            config.embedding_dim,
            config.hidden_size,
            num_layers=config.num_layers,
            batch_first=True,
            dropout=config.dropout if config.num_layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(config.dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Embedding):
            # N(0, 1), nn.Embedding's own default, not initializer_range (0.02): with 0.02 the LSTM's
            # inputs are tiny next to its state and long expressions barely train (Shin et al. example,
            # 4,000 length-homogenized DCFG rows, 4 epochs: 19% mixture accuracy vs 48% with N(0, 1)).
            from transformers import initialization as init

            init.normal_(module.weight, mean=0.0, std=1.0)
            if module.padding_idx is not None:
                init.zeros_(module.weight[module.padding_idx])
        else:
            super()._init_weights(module)

    def forward(
        self,
        input_ids: torch.LongTensor,
        attention_mask: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        return_dict: bool | None = None,
    ) -> SequenceClassifierOutput | tuple:
        _, lengths = right_padded_lengths(input_ids, attention_mask, self.config.pad_token_id)
        packed = nn.utils.rnn.pack_padded_sequence(
            self.embeddings(input_ids), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        _, (h_n, _) = self.lstm(packed)
        logits = self.classifier(self.dropout(h_n[-1]))  # the last layer's state after each row's last token
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits, labels.view(-1).long())
        return_dict = return_dict if return_dict is not None else self.config.return_dict
        if not return_dict:
            return (logits,) if loss is None else (loss, logits)
        return SequenceClassifierOutput(loss=loss, logits=logits)


AutoConfig.register(CharLSTMConfig.model_type, CharLSTMConfig, exist_ok=True)
AutoModelForSequenceClassification.register(CharLSTMConfig, CharLSTMForSequenceClassification, exist_ok=True)

_OVERRIDABLE = ("embedding_dim", "hidden_size", "num_layers", "dropout", "initializer_range")


def build_calculator_model(*, seed: int = 0, **overrides: Any):
    """``(model, tokenizer)``: a seeded random :class:`CharLSTMForSequenceClassification` and the
    character tokenizer over the Calculator alphabet; ``overrides`` are :class:`CharLSTMConfig` sizes.

    Example:
        >>> model, tok = build_calculator_model(seed=1, hidden_size=32, num_layers=2)
        >>> model.config.num_labels, model.lstm.num_layers, len(tok)
        (10, 2, 19)
    """
    from transformers import set_seed

    seed = check_int("seed", seed, min=0)
    unknown = sorted(set(overrides) - set(_OVERRIDABLE))
    if unknown:
        raise ValueError(f"overrides: unknown CharLSTMConfig field(s) {unknown}; accepted: {list(_OVERRIDABLE)}")
    for name in ("embedding_dim", "hidden_size", "num_layers"):
        if name in overrides:
            check_int(name, overrides[name], min=1)
    if "dropout" in overrides:
        check_float("dropout", overrides["dropout"], min=0, max=1, max_inclusive=False)
    tokenizer = build_char_tokenizer()
    config = CharLSTMConfig(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        id2label={i: str(i) for i in range(NUM_ANSWERS)},
        label2id={str(i): i for i in range(NUM_ANSWERS)},
        **overrides,
    )
    set_seed(seed)
    return CharLSTMForSequenceClassification(config), tokenizer


def _check_classifier(model: Any, tokenizer: Any) -> None:
    if not isinstance(model, PreTrainedModel) or getattr(model.config, "num_labels", None) is None:
        raise TypeError(f"model must be a transformers sequence-classification model, got {type(model).__name__}")
    if not callable(tokenizer) or getattr(tokenizer, "pad_token_id", None) is None:
        raise TypeError(f"tokenizer must be a transformers tokenizer with a pad token, got {type(tokenizer).__name__}")


def _encode(dataset: "Dataset", tokenizer, text_column: str, label_column: str, num_labels: int, name: str):
    """``input_ids`` / ``attention_mask`` / ``labels`` columns (text and label columns dropped)."""
    import numpy as np

    from ..columns import column_array

    check_not_empty(dataset, name=name)
    check_no_nulls(dataset, [text_column, label_column])
    labels = column_array(dataset, label_column)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"label_column {label_column!r} must hold integers, got dtype {labels.dtype}")
    bad = np.flatnonzero((labels < 0) | (labels >= num_labels))
    if bad.size:
        raise ValueError(
            f"label_column {label_column!r}: {bad.size} label(s) outside 0..{num_labels - 1}; first at row {int(bad[0])} "
            f"({int(labels[bad[0]])})"
        )

    def encode(batch: dict) -> dict:
        enc = tokenizer(batch[text_column])
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "labels": batch[label_column]}

    drop = [text_column] + ([label_column] if label_column != "labels" else [])
    return dataset.map(encode, batched=True, remove_columns=drop, desc="tokenizing")


def train_classifier(model: PreTrainedModel, tokenizer: "PreTrainedTokenizerBase", train_dataset: "Dataset", *,
                     text_column: str = "expression", label_column: str = "answer", output_dir: str | os.PathLike,
                     epochs: float = 1.0, batch_size: int = 32, learning_rate: float = 1e-3, seed: int = 0,
                     max_steps: int = -1, eval_dataset: "Dataset | None" = None, callbacks: Iterable[Any] = (),
                     **training_args: Any) -> "Trainer":
    """Train a classifier (e.g. :func:`build_calculator_model`) with a stock ``Trainer``; returns it.

    ``label_column`` holds integer classes in ``0..num_labels-1``. ``training_args`` are other
    ``TrainingArguments`` fields; the defaults here: no logging, no saving, ``report_to="none"``.

    Example:
        >>> import tempfile
        >>> from datasets import Dataset
        >>> model, tok = build_calculator_model(hidden_size=8, embedding_dim=4)
        >>> ds = Dataset.from_dict({"expression": ["1+2", "3*3"], "answer": [3, 9]})
        >>> trainer = train_classifier(model, tok, ds, output_dir=tempfile.mkdtemp(), max_steps=1, disable_tqdm=True)
        {'train_runtime': ...}
        >>> trainer.state.global_step
        1
    """
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    _check_classifier(model, tokenizer)
    check_column_args(text_column=text_column, label_column=label_column)
    args = training_arguments(TrainingArguments, output_dir=output_dir, epochs=epochs, max_steps=max_steps,
                              batch_size=batch_size, learning_rate=learning_rate, seed=seed, extra=training_args)
    datasets = {"train_dataset": train_dataset} | ({} if eval_dataset is None else {"eval_dataset": eval_dataset})
    for name, ds in datasets.items():
        if not hasattr(ds, "column_names"):
            raise TypeError(f"{name} must be a datasets.Dataset, got {type(ds).__name__}")
        check_columns(ds, [text_column], name="text_column")
        check_columns(ds, [label_column], name="label_column")
    encoded = {k: _encode(v, tokenizer, text_column, label_column, model.config.num_labels, k) for k, v in datasets.items()}
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=encoded["train_dataset"],
        eval_dataset=encoded.get("eval_dataset"),
        data_collator=DataCollatorWithPadding(tokenizer),
        processing_class=tokenizer,
        callbacks=list(callbacks),
    )
    trainer.train()
    return trainer


def predict_classifier(
    model: PreTrainedModel, tokenizer: "PreTrainedTokenizerBase", texts: Sequence[str], *, batch_size: int = 256
) -> list[int]:
    """The predicted class (argmax) of each text, in input order (batched by length).

    Example:
        >>> model, tok = build_calculator_model(hidden_size=8, embedding_dim=4)
        >>> preds = predict_classifier(model, tok, ["1+2", "(3-4)*5"])
        >>> len(preds), all(0 <= p < 10 for p in preds)
        (2, True)
    """
    _check_classifier(model, tokenizer)
    batch_size = check_int("batch_size", batch_size, min=1)
    texts = check_texts(texts, "texts")

    def step(enc) -> list[int]:
        logits = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
        return [int(p) for p in logits.argmax(dim=-1).tolist()]

    return run_batched(model, tokenizer, texts, [len(t) for t in texts], batch_size, step)


def evaluate_classifier(model: PreTrainedModel, tokenizer: "PreTrainedTokenizerBase", dataset: "Dataset", *,
                        text_column: str = "expression", label_column: str = "answer", group_column: str | None = None,
                        batch_size: int = 256) -> dict[str, Any]:
    """Accuracy (percent) overall and per group, with the package's ``calculator_accuracy`` module.

    Returns ``{"accuracy": pct, "accuracy_<group>": pct per value of group_column (sorted),
    "num_examples": n, "predictions": [...]}``; ``group_column`` is e.g. ``"distribution"`` for the
    Calculator mixture test set (Shin et al. Table 3).
    """
    from ..columns import column_arrow
    from .seq2seq import _load_metric

    _check_classifier(model, tokenizer)
    check_columns(dataset, [text_column], name="text_column")
    check_columns(dataset, [label_column], name="label_column")
    if group_column is not None:
        check_columns(dataset, [group_column], name="group_column")
    check_not_empty(dataset, name="dataset")
    texts = column_arrow(dataset, text_column).to_pylist()
    references = column_arrow(dataset, label_column).to_pylist()
    groups = None if group_column is None else [str(g) for g in column_arrow(dataset, group_column).to_pylist()]
    predictions = predict_classifier(model, tokenizer, texts, batch_size=batch_size)
    scores = _load_metric("calculator_accuracy").compute(predictions=predictions, references=references, groups=groups)
    out: dict[str, Any] = {k: 100.0 * v for k, v in scores.items()}
    out.update(num_examples=len(predictions), predictions=predictions)
    return out
