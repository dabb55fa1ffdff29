"""The right-padded batch check both LSTMs need before packing their sequences."""

from __future__ import annotations

import torch


def right_padded_lengths(input_ids: torch.Tensor, attention_mask: torch.Tensor | None, pad_token_id: int | None):
    """``(mask as bool, per-row lengths)`` of a right-padded ``(batch, length)`` batch (without
    ``attention_mask``: ``input_ids != pad_token_id``); ``ValueError`` for any other batch."""
    if input_ids is None or input_ids.dim() != 2:
        raise ValueError(f"input_ids must be a (batch, length) tensor, got "
                         f"{None if input_ids is None else tuple(input_ids.shape)}")
    if attention_mask is None:
        attention_mask = input_ids.ne(pad_token_id) if pad_token_id is not None else torch.ones_like(
            input_ids, dtype=torch.bool)
    mask = attention_mask.bool()
    lengths = mask.long().sum(dim=1)
    if bool((lengths == 0).any()):
        raise ValueError("input_ids: a row has no tokens (all padding)")
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    if not torch.equal(mask, positions[None, :] < lengths[:, None]):
        raise ValueError("attention_mask: only right padding is supported (set tokenizer.padding_side='right')")
    return mask, lengths
