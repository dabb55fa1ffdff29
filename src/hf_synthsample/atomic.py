"""Write files so that a reader never sees a half-written one: write a temp file beside, then rename.

One place for the idea; JSON, text, Parquet and figures all go through :func:`atomic_path`.

Example:
    >>> import os, tempfile
    >>> from hf_synthsample.atomic import write_json_atomic
    >>> path = os.path.join(tempfile.mkdtemp(), "sub", "x.json")
    >>> write_json_atomic(path, {"a": 1})
    >>> open(path).read()
    '{"a": 1}'
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Any, Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temp path in ``path``'s folder (created if needed); on success rename it to ``path``.

    On an exception the temp file is removed and ``path`` is left as it was.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    base = os.path.basename(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".tmp-{base}-", suffix=os.path.splitext(base)[1])
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(text)


def write_json_atomic(path: str | os.PathLike, obj: Any, **dump_kwargs: Any) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (``dump_kwargs`` go to :func:`json.dump`)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, **dump_kwargs)


def save_figure_atomic(fig: Any, path: str | os.PathLike, **savefig_kwargs: Any) -> str:
    """Save a matplotlib figure atomically (format from the extension, default PNG) and close it."""
    import matplotlib.pyplot as plt

    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lstrip(".") or "png"
    savefig_kwargs.setdefault("bbox_inches", "tight")
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, **savefig_kwargs)
    finally:
        plt.close(fig)
    return path
