"""Example ids in the training batches: :func:`add_example_ids` (row numbers as an id column) and
:class:`CartographyCollator` (a data collator wrapper that hands each batch its ids under
``"cartography_ids"``, for :class:`~hf_synthsample.cartography.TrainingDynamicsCallback`)."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

__all__ = ["add_example_ids", "CartographyCollator", "ID_KEY"]

ID_KEY = "cartography_ids"


def add_example_ids(dataset, id_column: str = "example_id"):
    """``dataset`` with a column ``id_column`` holding the row numbers 0..n-1.

    Example:
        >>> from datasets import Dataset
        >>> add_example_ids(Dataset.from_dict({"x": [5, 6]}))[:]["example_id"]
        [0, 1]
    """
    if id_column in dataset.column_names:
        raise ValueError(f"id_column: the dataset already has a column {id_column!r}; pick another name")
    return dataset.add_column(id_column, np.arange(len(dataset), dtype=np.int64))


class CartographyCollator:
    """Wraps a data collator (default: ``transformers.default_data_collator``) so each batch carries
    the example ids of ``id_column`` as ``batch["cartography_ids"]``; ``drop_columns`` are dropped
    before the wrapped collator, and features without ids (an evaluation set) collate unchanged.

    Example:
        >>> import torch
        >>> batch = CartographyCollator()([{"input_ids": [1, 2], "labels": [3, 4], "example_id": 7}])
        >>> batch["cartography_ids"].tolist(), sorted(batch)
        ([7], ['cartography_ids', 'input_ids', 'labels'])
    """

    def __init__(self, collator: Callable | None = None, *, id_column: str = "example_id",
                 drop_columns: Sequence[str] = ()):
        if collator is None:
            from transformers import default_data_collator

            collator = default_data_collator
        if not callable(collator):
            raise TypeError(f"collator must be callable, got {type(collator).__name__}")
        self.collator = collator
        self.id_column = id_column
        self.drop_columns = tuple(drop_columns)

    def __call__(self, features: list[dict]) -> dict:
        import torch

        drop = set(self.drop_columns) | {self.id_column}
        has_ids = [self.id_column in f for f in features]
        if any(has_ids) and not all(has_ids):
            raise ValueError(f"id_column {self.id_column!r} is missing from some features of the batch")
        ids = [f[self.id_column] for f in features] if all(has_ids) and features else None
        batch = self.collator([{k: v for k, v in f.items() if k not in drop} for f in features])
        if ids is not None:
            # integer ids as a tensor (moved to the device with the batch); string ids as they are,
            # coded by the callback (a tensor cannot hold them)
            batch[ID_KEY] = list(ids) if any(isinstance(i, str) for i in ids) else torch.tensor(
                [int(i) for i in ids], dtype=torch.long)
        return batch

    def __getattr__(self, name: str):
        # what a Trainer reads off its collator (e.g. ``tokenizer``, saved with checkpoints when there
        # is no processing_class) comes from the wrapped one; own names never recurse (unpickling)
        if name.startswith("__") or name in ("collator", "id_column", "drop_columns"):
            raise AttributeError(name)
        return getattr(self.collator, name)
