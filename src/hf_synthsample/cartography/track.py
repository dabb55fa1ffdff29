"""One call to record training dynamics with a Trainer you already built: :func:`track_dynamics`.

It does for a ``transformers.Trainer`` / ``Seq2SeqTrainer`` or a TRL ``SFTTrainer`` (a causal LM,
a PEFT model, ``bf16=True`` included) what the four pieces of :mod:`.callback` do by hand:

1. gives ``trainer.train_dataset`` an ``example_id`` column (row numbers) unless it has one
   (ids added before a ``shuffle`` / ``filter`` / ``select`` survive it, so add them yourself with
   :func:`~hf_synthsample.cartography.add_example_ids` to number your own dataset's rows);
2. wraps ``trainer.data_collator`` in a :class:`~hf_synthsample.cartography.CartographyCollator`;
3. keeps the id column in the training batches through the Trainer's ``remove_unused_columns``
   (the other unused columns are still dropped, so the collator sees what it saw before, and
   evaluation batches get no ids); the ``TrainingArguments`` are not changed;
4. adds a :class:`~hf_synthsample.cartography.TrainingDynamicsCallback`.

Everything is checked before the trainer is changed: a bad argument leaves it as it was.

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
import os
from typing import Any, Sequence

from ..hub.provenance import dataset_fingerprint
from ..logging import get_logger
from .callback import CartographyCollator, TrainingDynamicsCallback, add_example_ids
from .ids import check_id_column
from .fused_head import LOG_PROB_MEASURES, accepts_fused_lm_head, logit_only_measures

__all__ = ["track_dynamics"]

logger = get_logger(__name__)


def track_dynamics(
    trainer: Any,
    measures: Sequence[str] | None = None,
    *,
    output_dir: str | os.PathLike | None = None,
    id_column: str = "example_id",
    **options: Any,
) -> Any:
    """Make ``trainer`` record per-example, per-epoch training dynamics; returns the same trainer.

    Args:
        trainer: a built ``transformers.Trainer`` (``Seq2SeqTrainer``, TRL ``SFTTrainer``, ...),
            with its model, arguments, training set and (optional) data collator.
        measures: as in :class:`~hf_synthsample.cartography.TrainingDynamicsCallback` (default: its
            default). TRL trainers compute per-token log-probabilities without logits, so there
            ``inv_ppl``, ``chia``, ``loss``, ``forgetting`` and ``bleu`` are available; the margins and
            ``el2n`` raise.
        output_dir: where the dynamics go (default ``<args.output_dir>/cartography``).
        id_column: the example-id column; added (row numbers of ``trainer.train_dataset``) when absent.
            A column the dataset has must hold one id per row: integers >= 0 or non-empty
            strings, none missing or repeated (any other type is refused here, naming the
            column). The dynamics and data maps name examples by these ids.
        **options: any other ``TrainingDynamicsCallback`` argument (``task``, ``eval_pass``,
            ``eval_examples``, ``seed``, ``resume_from``, ...).

    Raises ``TypeError`` / ``ValueError`` naming the argument before changing anything: not a
    Trainer, no or a streaming training set, a torch dataset without ids, an id column holding
    anything but integers >= 0 or strings (or a missing, empty or repeated id), dynamics already
    tracked, a collator already wrapped for another id column, packed or padding-free batches
    (one row holds several examples), or measures a TRL trainer's fused LM head cannot give.

    Example (see the module docstring for a run): ``track_dynamics(Seq2SeqTrainer(...)).train()``.
    """
    from transformers import Trainer

    if not isinstance(trainer, Trainer):
        raise TypeError(f"trainer must be a transformers.Trainer (Seq2SeqTrainer, trl.SFTTrainer, ...), "
                        f"got {type(trainer).__name__}")
    kwargs = dict(options)
    if measures is not None:
        kwargs["measures"] = measures
    callback = TrainingDynamicsCallback(output_dir=output_dir, id_column=id_column, **kwargs)  # validates options
    _check(trainer, callback)

    dataset = trainer.train_dataset
    known = [dataset_fingerprint(dataset)]
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
    trainer.add_callback(callback)
    return trainer


def _is_hf_dataset(dataset) -> bool:
    try:
        import datasets
    except ImportError:  # pragma: no cover - datasets is a core dependency
        return False
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
    try:
        import datasets

        streaming = isinstance(dataset, datasets.IterableDataset)
    except ImportError:  # pragma: no cover
        streaming = False
    if streaming:
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
    """Keep ``id_column`` in the training batches through the Trainer's ``remove_unused_columns``.

    The Trainer (and TRL, which overrides the list) decides which columns the model takes. While
    the training dataloader is built, the id joins that list, so the training set keeps it and the
    other unused columns (raw text) are still dropped before the collator. Evaluation and
    prediction dataloaders are built with the list as it was: an eval set that carries ids too
    (ids added before a train/test split) gives its batches no ids, which ``forward`` and
    ``generate`` would refuse once the callback's hooks are gone.
    """
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
