"""One call to record training dynamics with a Trainer you already built: :func:`track_dynamics`.

For a ``transformers.Trainer`` / ``Seq2SeqTrainer`` or a TRL ``SFTTrainer`` (PEFT and ``bf16``
included) it numbers the training rows (unless they carry ids), wraps the data collator in a
:class:`~hf_synthsample.cartography.CartographyCollator`, keeps the id column through
``remove_unused_columns`` (training batches only; the ``TrainingArguments`` are not changed) and
adds a :class:`~hf_synthsample.cartography.TrainingDynamicsCallback`, all checked first.

Example:
    >>> from datasets import Dataset
    >>> from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
    >>> rows = Dataset.from_dict({"input_ids": [[5, 6, 7]] * 4, "labels": [[-100, 6, 7]] * 4, "note": ["x"] * 4})
    >>> model = GPT2LMHeadModel(GPT2Config(vocab_size=10, n_positions=8, n_embd=8, n_layer=1, n_head=2))
    >>> args = TrainingArguments("/tmp/track-doc", use_cpu=True, report_to=[], save_strategy="no")
    >>> trainer = track_dynamics(Trainer(model=model, args=args, train_dataset=rows), measures=("loss",))
    >>> trainer.train_dataset.column_names
    ['input_ids', 'labels', 'note', 'example_id']
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

from ..hub.provenance import column_digests, dataset_fingerprint
from ..logging import get_logger
from .callback import CartographyCollator, TrainingDynamicsCallback, add_example_ids
from .ids import check_id_column
from .fused_head import LOG_PROB_MEASURES, accepts_fused_lm_head, logit_only_measures

__all__ = ["track_dynamics"]

logger = get_logger(__name__)


def track_dynamics(trainer: Any, measures: Sequence[str] | None = None, **options: Any) -> Any:
    """Make ``trainer`` record per-example, per-epoch training dynamics; returns the same trainer.

    The ``options`` are the fields of :class:`~hf_synthsample.cartography.DynamicsSettings` (the
    :class:`~hf_synthsample.cartography.TrainingDynamicsCallback` it adds holds them; TRL trainers
    give no logits: the margins and ``el2n`` raise there); ``id_column`` is added (row numbers)
    when absent. Raises naming the argument before changing anything (bad trainer, training set
    or ids, dynamics already tracked, packed batches, measures a TRL trainer cannot give).
    Example (see the module docstring for a run): ``track_dynamics(Seq2SeqTrainer(...)).train()``.
    """
    from transformers import Trainer

    if not isinstance(trainer, Trainer):
        raise TypeError(f"trainer must be a transformers.Trainer (Seq2SeqTrainer, trl.SFTTrainer, ...), "
                        f"got {type(trainer).__name__}")
    if measures is not None:
        options["measures"] = measures
    callback = TrainingDynamicsCallback(**options)  # validates options
    id_column = callback.id_column
    _check(trainer, callback)

    dataset = trainer.train_dataset
    known = [dataset_fingerprint(dataset)]
    digests = column_digests(dataset, exclude=(id_column,)) if _is_hf_dataset(dataset) else {}
    if _is_hf_dataset(dataset) and id_column not in dataset.column_names:
        trainer.train_dataset = add_example_ids(dataset, id_column)
        known.append(dataset_fingerprint(trainer.train_dataset))
        logger.info(f"track_dynamics: added the column {id_column!r} (row numbers of trainer.train_dataset); cut "
                    f"data-map subsets from trainer.train_dataset, or call add_example_ids on your dataset "
                    f"before building the trainer to number its own rows")
    if not isinstance(trainer.data_collator, CartographyCollator):
        trainer.data_collator = CartographyCollator(trainer.data_collator, id_column=id_column)
    _keep_id_column(trainer, id_column)
    # the Trainer may hand the callback a column-reduced copy; the dynamics name these too
    callback._known_fingerprints = [f for f in known if f is not None]
    callback._known_digests = digests
    trainer.add_callback(callback)
    return trainer


def _is_hf_dataset(dataset) -> bool:
    import datasets

    return isinstance(dataset, datasets.Dataset)


def _check(trainer, callback: TrainingDynamicsCallback) -> None:
    """Every refusal, before anything is changed."""
    id_column = callback.id_column
    if any(isinstance(c, TrainingDynamicsCallback) for c in trainer.callback_handler.callbacks):
        raise ValueError("trainer: it already records training dynamics (a TrainingDynamicsCallback is registered); "
                         "pass all the measures to one track_dynamics call")
    dataset = trainer.train_dataset
    if dataset is None:
        raise ValueError("trainer: it has no train_dataset; dynamics are recorded on the training set")
    import datasets

    if isinstance(dataset, datasets.IterableDataset):
        raise TypeError("trainer.train_dataset: a streaming IterableDataset has no row numbers to use as example ids; "
                        "use a map-style datasets.Dataset (e.g. Dataset.from_generator)")
    if _is_hf_dataset(dataset) and id_column in dataset.column_names:
        check_id_column(dataset, id_column, "trainer.train_dataset")
    if not _is_hf_dataset(dataset):
        first = dataset[0] if hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__") and len(dataset) else None
        if not (hasattr(first, "keys") and id_column in first):
            raise ValueError(f"trainer.train_dataset: a {type(dataset).__name__} cannot be given ids here; each "
                             f"example must carry its own integer {id_column!r} (or use a datasets.Dataset)")
    collator = trainer.data_collator
    if isinstance(collator, CartographyCollator) and collator.id_column != id_column:
        raise ValueError(f"id_column: the trainer's CartographyCollator reads ids from {collator.id_column!r}, "
                         f"not {id_column!r}; pass id_column={collator.id_column!r}")
    args = trainer.args
    for flag in ("packing", "padding_free"):  # TRL's SFTConfig
        if getattr(args, flag, False):
            raise ValueError(f"args.{flag}=True puts several examples in one row, so a row has no single example "
                             f"id; set {flag}=False to record per-example dynamics")
    from_trl = any(c.__module__.split(".")[0] == "trl" for c in type(trainer).__mro__)  # subclasses too
    if from_trl and accepts_fused_lm_head(trainer.model):
        missing = logit_only_measures(callback.measures)
        if missing:
            raise ValueError(
                f"measures {missing}: {type(trainer).__name__} computes per-token log-probabilities without the "
                f"logits (TRL's fused LM head), and these need the logits. Accepted here: "
                f"{[*LOG_PROB_MEASURES, 'forgetting', 'bleu']}"
            )
        if callback.task not in ("auto", "causal_lm"):
            raise ValueError(f"task: {type(trainer).__name__} trains a causal LM; got task={callback.task!r}")
    if getattr(args, "remove_unused_columns", False) and not callable(
        getattr(trainer, "_set_signature_columns_if_needed", None)
    ):  # pragma: no cover - every transformers since 4.20 has it
        raise ValueError("trainer: this Trainer version gives no way to keep the id column; set "
                         "TrainingArguments(remove_unused_columns=False)")


def _keep_id_column(trainer, id_column: str) -> None:
    """Keep ``id_column`` through ``remove_unused_columns`` in the training batches only (evaluation
    batches with ids would be refused by ``forward`` once the hooks are gone)."""
    if not getattr(trainer.args, "remove_unused_columns", False):
        return
    build = trainer.get_train_dataloader  # the class's (or a subclass's) own method, bound

    @functools.wraps(build)
    def get_train_dataloader(*args, **kwargs):
        trainer._set_signature_columns_if_needed()
        saved = trainer._signature_columns
        if id_column not in saved:
            trainer._signature_columns = [*saved, id_column]
        try:
            return build(*args, **kwargs)
        finally:
            trainer._signature_columns = saved

    trainer.get_train_dataloader = get_train_dataloader
