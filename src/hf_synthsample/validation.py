"""Parameter checks shared by configs, samplers and the CLI: each names the argument, what was
given and what is accepted, before any work starts."""

from __future__ import annotations

import math
import numbers
import os
from typing import Any, Iterable, Sequence

__all__ = ["MAX_NESTING", "nesting_message", "check_int", "check_float", "check_non_empty_str", "check_choice",
           "check_columns", "check_not_empty", "check_str_tuple", "check_writable_path", "check_device", "check_path"]

#: The deepest nesting the program parsers accept and the structure module walks: deeper input is a
#: ``ValueError``, never a ``RecursionError``. Far above any real program (Calculator trees <= 30).
MAX_NESTING = 100


def nesting_message(depth: int | None = None) -> str:
    """The one wording of a too-deep input, for every parser (``depth=None``: stopped at the limit)."""
    where = "(the limit is hf_synthsample.validation.MAX_NESTING)"
    if depth is None:
        return f"nested more than {MAX_NESTING} levels deep {where}"
    return f"nested {depth} levels deep, more than the {MAX_NESTING} accepted {where}"


def check_int(name: str, value: Any, *, min: int | None = None, max: int | None = None) -> int:
    """An integer (not a bool) within ``[min, max]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    value = int(value)
    if min is not None and value < min:
        raise ValueError(f"{name} must be >= {min}, got {value}")
    if max is not None and value > max:
        raise ValueError(f"{name} must be <= {max}, got {value}")
    return value


def check_non_empty_str(name: str, value: Any) -> str:
    """A non-empty ``str`` (a column name, ...)."""
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a non-empty str, got {value!r}")
    return value


def check_float(name: str, value: Any, *, min: float | None = None, max: float | None = None,
                min_inclusive: bool = True, max_inclusive: bool = True, allow_inf: bool = False) -> float:
    """A finite real number within the given bounds (open or closed); NaN never, +-inf only with ``allow_inf``.

    Example:
        >>> check_float("learning_rate", float("inf"), min=0.0, min_inclusive=False)
        Traceback (most recent call last):
        ...
        ValueError: learning_rate must be a finite number > 0.0, got inf
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    value = float(value)
    if value != value or (math.isinf(value) and not allow_inf):
        what = "a number (not NaN)" if allow_inf else "a finite number"
        raise ValueError(f"{name} must be {what}{_range(min, max, min_inclusive, max_inclusive)}, got {value}")
    if min is not None and (value < min or (not min_inclusive and value == min)):
        raise ValueError(f"{name} must be {'>=' if min_inclusive else '>'} {min}, got {value}")
    if max is not None and (value > max or (not max_inclusive and value == max)):
        raise ValueError(f"{name} must be {'<=' if max_inclusive else '<'} {max}, got {value}")
    return value


def _range(min: float | None, max: float | None, min_inclusive: bool, max_inclusive: bool) -> str:
    """`` in [0, 1)``, `` > 0``, `` <= 1`` or nothing: the accepted range, for a message."""
    if min is not None and max is not None:
        return f" in {'[' if min_inclusive else '('}{min}, {max}{']' if max_inclusive else ')'}"
    if min is not None:
        return f" {'>=' if min_inclusive else '>'} {min}"
    if max is not None:
        return f" {'<=' if max_inclusive else '<'} {max}"
    return ""


def check_choice(name: str, value: Any, choices: Iterable[Any], *, empty: str | None = None) -> Any:
    """One of ``choices``; an empty ``choices`` says why nothing can be accepted (``empty``).

    Example:
        >>> check_choice("measure", "loss", [], empty="the dynamics folder records no measure")
        Traceback (most recent call last):
        ...
        ValueError: measure: no value can be accepted, because the dynamics folder records no measure (got 'loss')
    """
    choices = list(choices)
    if not choices:
        why = empty or "the list of accepted values is empty (a caller's bug or an empty input)"
        raise ValueError(f"{name}: no value can be accepted, because {why} (got {value!r})")
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_str_tuple(name: str, value: Any, choices: Iterable[str] | None = None) -> tuple[str, ...]:
    """A string or a sequence of strings, returned as a tuple (each checked against ``choices``)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a str or a sequence of str, got {value!r}")
    if choices is not None:
        allowed = list(choices)
        if not allowed and value:
            raise ValueError(f"{name}: no value can be accepted here (nothing to choose from), got {list(value)}")
        for v in value:
            if v not in allowed:
                raise ValueError(f"{name}: unknown value {v!r}; accepted values: {allowed}")
    if len(set(value)) != len(value):
        raise ValueError(f"{name} lists a value twice: {list(value)}")
    return tuple(value)


def check_columns(dataset: Any, columns: Sequence[str], *, name: str = "column") -> None:
    """Every name in ``columns`` is a column of ``dataset`` (a ``Dataset`` or anything with ``column_names``)."""
    available = list(getattr(dataset, "column_names", None) or [])
    missing = [c for c in columns if c not in available]
    if missing:
        raise ValueError(f"{name}: no column named {missing[0]!r} in the dataset; available columns: {available}")


def check_not_empty(dataset: Any, *, name: str = "dataset") -> None:
    """``dataset`` has at least one row."""
    if len(dataset) == 0:
        raise ValueError(f"{name} is empty: nothing to sample from")


def check_writable_path(name: str, path: Any, *, folder: bool) -> str:
    """``path`` (a folder if ``folder``, else a file) can be written: not a path of the other kind,
    and its nearest existing parent is a writable folder on a writable disk. Returns ``path``.

    Example:
        >>> import tempfile, os
        >>> f = os.path.join(tempfile.mkdtemp(), "notes.txt")
        >>> _ = open(f, "w").write("x")
        >>> check_writable_path("output_dir", os.path.join(f, "run"), folder=True)
        Traceback (most recent call last):
        ...
        ValueError: output_dir: cannot write .../notes.txt/run: .../notes.txt is a file, not a folder
    """
    path = check_path(name, path)
    if folder and os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{name}: {path} is a file; give the path of a folder to write")
    if not folder and os.path.isdir(path):
        raise ValueError(f"{name}: {path} is a folder; give the path of a file to write")
    if folder and os.path.isdir(path) and not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{name}: cannot write in {path}: permission denied (choose a folder you can write to)")
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(f"{name}: cannot write {path}: {parent} is a file, not a folder")
    if _read_only(parent):
        raise ValueError(f"{name}: cannot write {path}: {parent} is on a read-only file system")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{name}: cannot write {path}: permission denied in {parent} (choose a folder you can "
                         "write to)")
    return path


def _read_only(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows): the write itself will say
        return False


def check_device(name: str, device: Any) -> str:
    """A torch device this machine has (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``).

    Example:
        >>> check_device("device", "cpu")
        'cpu'
        >>> check_device("device", "tpu")
        Traceback (most recent call last):
        ...
        ValueError: device: 'tpu' is not a torch device (e.g. 'cpu', 'cuda', 'cuda:0', 'mps')
    """
    if not isinstance(device, str) or not device:
        raise TypeError(f"{name} must be a device name (str, e.g. 'cpu' or 'cuda'), got {device!r}")
    if device == "cpu":
        return device
    import torch

    try:
        parsed = torch.device(device)
    except RuntimeError:
        raise ValueError(f"{name}: {device!r} is not a torch device (e.g. 'cpu', 'cuda', 'cuda:0', 'mps')") from None
    if parsed.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"{name}: {device!r}, but this machine's torch sees no CUDA device; use 'cpu'")
        if parsed.index is not None and parsed.index >= count:
            raise ValueError(f"{name}: {device!r}, but this machine has {count} CUDA device(s) (cuda:0..cuda:{count - 1})")
    if parsed.type == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise ValueError(f"{name}: {device!r}, but this machine's torch has no MPS device; use 'cpu'")
    return device


def check_path(name: str, value: Any) -> str:
    """A non-empty path (``str`` or ``os.PathLike``), returned as a ``str``.

    Example:
        >>> check_path("folder", None)
        Traceback (most recent call last):
        ...
        TypeError: folder must be a path (str or os.PathLike), got NoneType None
    """
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got {type(value).__name__} {value!r}")
    value = os.fspath(value)
    if not value:
        raise ValueError(f"{name}: give a path, got an empty one")
    return value
