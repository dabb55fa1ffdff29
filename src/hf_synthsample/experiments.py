"""Results tables and plots for experiments (the paper-reproduction examples use these).

A :class:`ResultsTable` collects one row per run (e.g. one training distribution) and writes a
Markdown table plus the same rows as JSON, atomically; :meth:`ResultsTable.bar_plot` draws the
numeric columns as grouped bars. Under ``accelerate launch`` only the main process writes.

Example:
    >>> import tempfile
    >>> from hf_synthsample.experiments import ResultsTable
    >>> table = ResultsTable("Accuracy (%)", ["train", "iid", "ood"], caption="2 seeds")
    >>> table.add(train="uniform", iid=91.25, ood=12.5)
    >>> table.add(train="uat", iid=90.0, ood=20.0)
    >>> print(table.to_markdown())
    ### Accuracy (%)
    <BLANKLINE>
    | train | iid | ood |
    |---|---:|---:|
    | uniform | 91.2 | 12.5 |
    | uat | 90.0 | 20.0 |
    <BLANKLINE>
    2 seeds
    >>> paths = table.save(tempfile.mkdtemp(), "table5")
    >>> sorted(p.rsplit(".", 1)[1] for p in paths)
    ['json', 'md']
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from .atomic import save_figure_atomic, write_json_atomic, write_text_atomic
from .validation import check_str_tuple

if TYPE_CHECKING:  # pragma: no cover
    import argparse

__all__ = ["ResultsTable", "apply_preset", "is_main_process"]


def is_main_process() -> bool:
    """True unless this is a non-zero rank of a distributed (``accelerate launch``/torchrun) run."""
    return int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0"))) == 0


def apply_preset(
    parser: "argparse.ArgumentParser",
    args: "argparse.Namespace",
    preset: Mapping[str, Any],
    *,
    positive: Sequence[str] = (),
    non_negative: Sequence[str] = (),
) -> "argparse.Namespace":
    """Fill every flag left unset (``None``) from ``preset``, then check the numeric flags:
    ``positive`` must be > 0 and ``non_negative`` >= 0, else ``parser.error`` names the flag.

    Example:
        >>> import argparse
        >>> p = argparse.ArgumentParser()
        >>> _ = p.add_argument("--steps", type=int)
        >>> apply_preset(p, p.parse_args([]), {"steps": 200}, positive=["steps"]).steps
        200
    """
    for key, value in preset.items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    for names, ok, rule in ((positive, lambda v: v > 0, "> 0"), (non_negative, lambda v: v >= 0, ">= 0")):
        for name in names:
            if not ok(getattr(args, name)):
                parser.error(f"--{name.replace('_', '-')} must be {rule}, got {getattr(args, name)}")
    return args


class ResultsTable:
    """Rows of results with fixed columns, rendered as Markdown and saved with JSON beside it.

    Args:
        title: heading of the table.
        columns: column names, in order; the first is usually the row label.
        caption: text printed under the table (settings, seeds, scale).
        float_format: format of float cells (``"{:.1f}"``); ``None`` cells render as ``-``.
    """

    def __init__(self, title: str, columns: Sequence[str], *, caption: str = "", float_format: str = "{:.1f}"):
        if not isinstance(title, str) or not title:
            raise ValueError(f"title must be a non-empty string, got {title!r}")
        self.title = title
        self.columns = check_str_tuple("columns", columns)
        if not self.columns or len(set(self.columns)) != len(self.columns):
            raise ValueError(f"columns must be non-empty and distinct, got {list(self.columns)}")
        self.caption = caption
        self.float_format = float_format
        self.rows: list[dict[str, Any]] = []

    def add(self, **row: Any) -> None:
        """Add one row; every key must be a column (missing columns stay empty)."""
        unknown = sorted(set(row) - set(self.columns))
        if unknown:
            raise ValueError(f"unknown column(s) {unknown}; accepted: {list(self.columns)}")
        self.rows.append({c: row.get(c) for c in self.columns})

    def _cell(self, value: Any) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        if isinstance(value, float):
            return self.float_format.format(value)
        return str(value)

    def to_markdown(self) -> str:
        """The table as Markdown (numeric columns right-aligned), heading and caption included."""
        numeric = [all(isinstance(r[c], (int, float)) or r[c] is None for r in self.rows) and any(
            isinstance(r[c], (int, float)) for r in self.rows) for c in self.columns]
        lines = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
        lines += ["| " + " | ".join(self._cell(r[c]) for c in self.columns) + " |" for r in self.rows]
        if self.caption:
            lines += ["", self.caption]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: title, columns, caption and rows."""
        return {"title": self.title, "columns": list(self.columns), "caption": self.caption, "rows": self.rows}

    def save(self, folder: str | os.PathLike, name: str) -> list[str]:
        """Write ``<folder>/<name>.md`` and ``<folder>/<name>.json`` atomically; returns the paths.

        Under a distributed launch only the main process writes (the others return ``[]``).
        """
        if not is_main_process():
            return []
        md, js = (os.path.join(os.fspath(folder), f"{name}.{ext}") for ext in ("md", "json"))
        write_text_atomic(md, self.to_markdown() + "\n")
        write_json_atomic(js, self.to_dict(), indent=2)
        return [md, js]

    def bar_plot(self, path: str | os.PathLike, *, label: str | None = None, values: Sequence[str] | None = None,
                 ylabel: str = "") -> str | None:
        """Grouped bars: one group per row (named by ``label``, default the first column), one bar per
        column in ``values`` (default: the numeric columns). Returns the path (``None`` off the main process).
        """
        label = label or self.columns[0]
        values = list(values) if values is not None else [
            c for c in self.columns if c != label and any(isinstance(r[c], (int, float)) for r in self.rows)]
        unknown = sorted(set(values + [label]) - set(self.columns))
        if unknown:
            raise ValueError(f"unknown column(s) {unknown}; accepted: {list(self.columns)}")
        if not self.rows or not values:
            raise ValueError("nothing to plot: the table has no rows or no numeric columns")
        if not is_main_process():
            return None
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        width = 0.8 / len(values)
        fig, ax = plt.subplots(figsize=(max(5.0, 1.2 * len(self.rows) * max(1, len(values)) ** 0.5 + 2), 3.5))
        for j, col in enumerate(values):
            ys = [r[col] if isinstance(r[col], (int, float)) else 0.0 for r in self.rows]
            ax.bar([i + (j - (len(values) - 1) / 2) * width for i in range(len(self.rows))], ys, width, label=col)
        ax.set_xticks(range(len(self.rows)), [str(r[label]) for r in self.rows], rotation=20)
        ax.set_ylabel(ylabel)
        ax.set_title(self.title)
        if len(values) > 1:
            ax.legend(fontsize="small")
        fig.tight_layout()
        return save_figure_atomic(fig, path, dpi=100)
