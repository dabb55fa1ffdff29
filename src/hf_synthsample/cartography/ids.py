"""Example ids: an integer >= 0 or a non-empty string, one per row, never repeated or missing
(checked before any work). A dataset's own ids are written to the dynamics unchanged, so a data
map finds the rows of any copy by them; while training, string ids travel as integer codes (their
rank among the sorted ids).

Example:
    >>> from datasets import Dataset
    >>> check_id_column(Dataset.from_dict({"id": ["b", "a"]}), "id", "dataset").tolist()
    ['b', 'a']
    >>> check_id_column(Dataset.from_dict({"id": [0.5, 1.0]}), "id", "dataset")
    Traceback (most recent call last):
    ...
    TypeError: dataset: column 'id' must hold integer or string example ids, got double
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_id_column", "check_id_values", "id_codes", "as_ids"]


def check_id_values(col: Any, name: str, where: str) -> np.ndarray:
    """The ids of the Arrow column ``col`` as a NumPy array (``int64`` or ``str``); an error naming
    column ``name`` for any other type, a missing, negative, empty or repeated id."""
    import pyarrow as pa

    is_int = pa.types.is_integer(col.type)
    if not (is_int or pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        raise TypeError(f"{where}: column {name!r} must hold integer or string example ids, got {col.type}")
    if col.null_count:
        raise ValueError(f"{where}: column {name!r} has {col.null_count} missing (null) example ids; every row "
                         f"needs its own id")
    if is_int:
        ids = col.to_numpy().astype(np.int64)
        if len(ids) and ids.min() < 0:
            raise ValueError(f"{where}: column {name!r} holds negative example ids (first: {int(ids[ids < 0][0])}); "
                             f"ids are integers >= 0 or strings")
    else:
        ids = np.asarray(col.to_pylist(), dtype=str)
        if len(ids) and (ids == "").any():
            raise ValueError(f"{where}: column {name!r} holds empty-string example ids (first at row "
                             f"{int(np.flatnonzero(ids == '')[0])})")
    uniq, counts = np.unique(ids, return_counts=True)
    if len(uniq) != len(ids):
        raise ValueError(f"{where}: column {name!r} repeats example ids (first: {uniq[counts > 1][0].item()!r}); each "
                         f"example needs its own")
    return ids


def check_id_column(dataset: Any, id_column: str, where: str) -> np.ndarray:
    """The ids in column ``id_column`` of ``dataset``, checked by :func:`check_id_values`."""
    from ..columns import column_arrow

    return check_id_values(column_arrow(dataset, id_column), id_column, where)


def id_codes(ids: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """``(values, codes)``: integer ids are their own codes (``values`` is ``None``); string ids
    are coded by their rank among the sorted ``values``.

    Example:
        >>> import numpy as np
        >>> values, codes = id_codes(np.asarray(["b", "c", "a"]))
        >>> values.tolist(), codes.tolist()
        (['a', 'b', 'c'], [1, 2, 0])
    """
    if ids.dtype.kind in "iu":
        return None, ids.astype(np.int64)
    values, codes = np.unique(ids, return_inverse=True)
    return values, codes.astype(np.int64)


def as_ids(ids: Any) -> np.ndarray:
    """Example ids as an ``int64`` array (integers) or a ``str`` array (strings).

    Example:
        >>> as_ids([3, 1]).dtype.kind, as_ids(["b", "a"]).dtype.kind
        ('i', 'U')
    """
    arr = np.asarray(ids)
    return arr.astype(str) if arr.dtype.kind in "USO" and len(arr) else arr.astype(np.int64)
