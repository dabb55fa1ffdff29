"""Argument checks and batched inference in input order, shared by the seq2seq and classifier helpers."""

from __future__ import annotations

from typing import Any, Callable, Sequence


def check_texts(texts: Any, name: str) -> list[str]:
    """``texts`` as a list of str (a single str is a mistake: it would be read character by character)."""
    if isinstance(texts, str):
        raise TypeError(f"{name} must be a list of strings (or a Dataset), got a single str (wrap it in a list)")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"{name} must be a list of strings (or a Dataset), got {type(texts).__name__}") from None
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
    if bad is not None:
        raise TypeError(f"{name}: item {bad} is a {type(texts[bad]).__name__} ({texts[bad]!r}), expected str")
    return texts


def check_column_args(**columns: Any) -> None:
    """``TypeError`` unless every named column argument is a str."""
    for name, value in columns.items():
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a column name (str), got {value!r}")


def check_no_nulls(dataset: Any, columns: Sequence[str]) -> None:
    """Every value of the text ``columns`` is present (a missing one would fail deep inside the tokenizer)."""
    from ..columns import column_arrow

    for column in columns:
        values = column_arrow(dataset, column)
        if values.null_count:
            first = next(i for i, v in enumerate(values.is_null().to_pylist()) if v)
            raise ValueError(f"column {column!r} has {values.null_count} missing value(s); first at row {first}")


def run_batched(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    lengths: Sequence[int],
    batch_size: int,
    step: Callable[[Any], list],
) -> list:
    """``step(encoded_batch)`` over batches of similar length (longest first, so running out of memory
    shows at once), results put back in input order; eval mode for the call, the mode restored after."""
    import torch

    order = sorted(range(len(texts)), key=lambda i: -lengths[i])
    out: list = [None] * len(texts)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start:start + batch_size]
                enc = tokenizer([texts[i] for i in idx], padding=True, return_tensors="pt").to(model.device)
                for i, value in zip(idx, step(enc)):
                    out[i] = value
    finally:
        model.train(was_training)
    return out
