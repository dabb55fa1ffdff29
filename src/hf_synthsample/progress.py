"""Progress bars on long work, the way ``datasets`` shows them.

Every long job takes ``progress: bool | None``: ``True`` always shows a bar, ``False`` never;
``None`` (the default) shows one when the work is long (at least ``min_total`` units) unless
``datasets``' bars are off (``HF_DATASETS_DISABLE_PROGRESS_BARS=1``, ``disable_progress_bars()``).

Example:
    >>> from datasets.utils import are_progress_bars_disabled
    >>> show_progress(None, total=10**6) == (not are_progress_bars_disabled())
    True
    >>> show_progress(True, total=1), show_progress(False, total=10**6), show_progress(None, total=10)
    (True, False, False)
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["show_progress", "progress_bar"]


def show_progress(progress: bool | None, total: int | None, min_total: int = 1_000) -> bool:
    """Whether to show a bar over ``total`` units of work."""
    if progress is not None:
        if not isinstance(progress, bool):
            raise TypeError(f"progress must be None (automatic), True or False, got {progress!r}")
        return progress
    if total is not None and total < min_total:
        return False
    from datasets.utils import are_progress_bars_disabled

    return not are_progress_bars_disabled()


def progress_bar(iterable: Iterable | None = None, *, total: int | None = None, desc: str,
                 progress: bool | None = None, min_total: int = 1_000):
    """A ``tqdm`` bar over ``iterable`` shown per :func:`show_progress` (a silent one otherwise)."""
    from tqdm.auto import tqdm

    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    return tqdm(iterable, total=total, desc=desc, disable=not show_progress(progress, total, min_total))
