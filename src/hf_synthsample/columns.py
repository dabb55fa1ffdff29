"""Fast whole-column access to a ``Dataset``: the Arrow column and one ``take`` of the indices mapping
(milliseconds, where ``with_format("numpy")[name]`` goes row by row in ``datasets`` 4+)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["column_arrow", "column_array"]


def column_arrow(dataset: "Dataset", name: str) -> pa.ChunkedArray:
    """Column ``name`` of ``dataset`` as Arrow, in row order (indices mapping applied)."""
    data = getattr(dataset, "data", None)
    if data is None or not hasattr(data, "column"):
        return pa.chunked_array([pa.array(dataset[name])])
    column = data.column(name)
    indices = getattr(dataset, "_indices", None)
    if indices is not None:
        column = column.take(indices.column(0))
    return column


def column_array(dataset: "Dataset", name: str) -> np.ndarray:
    """Column ``name`` of ``dataset`` as a NumPy array (scalar columns)."""
    return column_arrow(dataset, name).to_numpy()
