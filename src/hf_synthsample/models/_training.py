"""``TrainingArguments`` for the package's train helpers: validated named arguments, quiet defaults."""

from __future__ import annotations

import dataclasses
import difflib
import os
from typing import Any

from ..validation import check_float, check_int

# Named arguments of the train helpers that replace TrainingArguments fields.
_NAMED_ARGS = {"num_train_epochs": "epochs", "per_device_train_batch_size": "batch_size"}


def training_arguments(
    args_class: type,
    *,
    output_dir: Any,
    epochs: Any,
    max_steps: Any,
    batch_size: Any,
    learning_rate: Any,
    seed: Any,
    extra: dict[str, Any],
):
    """``args_class(...)`` (a ``TrainingArguments`` dataclass) from checked arguments: no logging, no
    saving, no evaluation, ``report_to="none"``, unless ``extra`` (other fields of ``args_class``) says."""
    import torch

    if not isinstance(output_dir, (str, os.PathLike)):
        raise TypeError(f"output_dir must be a path, got {type(output_dir).__name__}")
    epochs = check_float("epochs", epochs, min=0, min_inclusive=False)
    max_steps = check_int("max_steps", max_steps, min=-1)
    if max_steps == 0:
        raise ValueError("max_steps must be -1 (train for `epochs`) or >= 1, got 0")
    batch_size = check_int("batch_size", batch_size, min=1)
    learning_rate = check_float("learning_rate", learning_rate, min=0, min_inclusive=False)
    seed = check_int("seed", seed, min=0)
    fields = {f.name for f in dataclasses.fields(args_class) if f.init}
    for key in extra:
        if key in _NAMED_ARGS:
            raise ValueError(f"training_args: pass {key} as {_NAMED_ARGS[key]}= instead")
        if key not in fields:
            hint = difflib.get_close_matches(key, sorted(fields), n=3)
            raise ValueError(
                f"training_args: {key!r} is not a {args_class.__name__} field"
                + (f"; did you mean {hint}?" if hint else "")
                + f" (see transformers.{args_class.__name__} for the accepted names)"
            )
    defaults = dict(
        output_dir=str(output_dir), num_train_epochs=epochs, max_steps=max_steps,
        per_device_train_batch_size=batch_size, per_device_eval_batch_size=batch_size,
        learning_rate=learning_rate, seed=seed, report_to="none", save_strategy="no", logging_strategy="no",
        eval_strategy="no",
        # pinning only helps (and only works without a warning) with an accelerator
        dataloader_pin_memory=torch.cuda.is_available(),
    )
    return args_class(**{**defaults, **extra})
