"""Where a derived dataset came from: :func:`dataset_fingerprint`.

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"x": [1, 2]})
    >>> dataset_fingerprint(ds) == dataset_fingerprint(ds), dataset_fingerprint(ds) == dataset_fingerprint(ds.shuffle(seed=0))
    (True, False)
"""

from __future__ import annotations

from typing import Any

__all__ = ["dataset_fingerprint"]


def dataset_fingerprint(dataset: Any) -> str | None:
    """The ``datasets`` fingerprint of ``dataset`` (a hash of its data and of every transform that
    made it, so a shuffled, filtered or re-tokenized copy has another one); ``None`` for anything
    that is not a ``datasets.Dataset``. ``datasets`` keeps it in a private attribute; this is the
    one place that reads it."""
    fingerprint = getattr(dataset, "_fingerprint", None)
    return fingerprint if isinstance(fingerprint, str) else None
