"""Results tables: one row per run, cells that carry the model's fit beside the score.

A :class:`ResultsTable` collects one row per run (e.g. one training distribution) and writes a
Markdown table plus the same rows as JSON, atomically; :meth:`ResultsTable.bar_plot` draws the
numeric columns as grouped bars. Under ``accelerate launch`` only the main process writes.

Example:
    >>> import tempfile
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

A zero out-of-distribution score means little until one knows whether the model fitted its own
training data, so a cell can carry that fit beside the score (a :class:`Score`), with the spread
over seeds; the caption then says what "fit" is:

    >>> t = ResultsTable("Exact match (%)", ["split", "1x", "20x"], fit_note="fit: exact match on training rows")
    >>> t.add(split="jump", **{"1x": Score.of([0.0, 2.0], fit=[98.0, 99.0]), "20x": Score(71.5, fit=97.0)})
    >>> print(t.to_markdown())
    ### Exact match (%)
    <BLANKLINE>
    | split | 1x | 20x |
    |---|---:|---:|
    | jump | 1.0±1.4 (fit 98.5) | 71.5 (fit 97.0) |
    <BLANKLINE>
    fit: exact match on training rows
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
from typing import Any, Sequence

from hf_synthsample.atomic import save_figure_atomic, write_json_atomic, write_text_atomic
from hf_synthsample.validation import check_str_tuple

from .run_folder import is_main_process

__all__ = ["ResultsTable", "Score", "SignedScore"]


def _mean_sd(values: Sequence[float] | None, name: str) -> tuple[float | None, float | None, list[float] | None]:
    if values is None:
        return None, None, None
    vals = [float(v) for v in values if v is not None]
    if not vals:
        raise ValueError(f"{name}: no values to average")
    return statistics.fmean(vals), (statistics.stdev(vals) if len(vals) > 1 else None), vals


@dataclasses.dataclass(frozen=True)
class Score:
    """A table cell: a score (mean over seeds), its spread, and the model's fit beside it.

    ``fit`` is the same metric on the model's own training (in-distribution) rows: it tells a
    model that learnt its data and failed to generalize (fit high, score 0) from one that learnt
    nothing (both 0). ``sd`` is the sample standard deviation over ``values`` (the seeds).

    Example:
        >>> s = Score.of([10.0, 20.0, 30.0], fit=[90.0, 100.0, 95.0])
        >>> s.value, s.sd, s.fit, s.format("{:.1f}")
        (20.0, 10.0, 95.0, '20.0±10.0 (fit 95.0)')
    """

    value: float
    fit: float | None = None
    sd: float | None = None
    values: tuple[float, ...] | None = None
    fit_sd: float | None = None

    def __post_init__(self):
        for name in ("value", "fit", "sd", "fit_sd"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise TypeError(f"Score.{name} must be a number or None, got {type(v).__name__}")

    @classmethod
    def of(cls, values: Sequence[float], fit: Sequence[float] | float | None = None) -> "Score":
        """Mean and sd of ``values`` (one per seed), with the mean ``fit`` (a number or one per seed)."""
        value, sd, vals = _mean_sd(values, "values")
        if fit is None or isinstance(fit, (int, float)):
            return cls(value, fit=None if fit is None else float(fit), sd=sd, values=tuple(vals))
        fit_mean, fit_sd, _ = _mean_sd(fit, "fit")
        return cls(value, fit=fit_mean, sd=sd, values=tuple(vals), fit_sd=fit_sd)

    def format(self, float_format: str = "{:.1f}") -> str:
        text = float_format.format(self.value)
        if self.sd is not None:
            text += "±" + float_format.format(self.sd).lstrip("+")
        if self.fit is not None:
            text += " (fit " + float_format.format(self.fit).lstrip("+") + ")"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(self).items()
                if v is not None}


class SignedScore(Score):
    """A change (e.g. in percentage points): printed with its sign (``+3.84±0.50``), the fit without.

    Example:
        >>> SignedScore(3.5, sd=0.5).format("{:.2f}"), SignedScore(-1.0).format()
        ('+3.50±0.50', '-1.00')
    """

    def format(self, float_format: str = "{:.2f}") -> str:
        text = super().format(float_format)
        return text if text.startswith("-") else "+" + text

    @classmethod
    def of_score(cls, score: Score) -> "SignedScore":
        """The same cell, printed with its sign."""
        return cls(**{f.name: getattr(score, f.name) for f in dataclasses.fields(score)})



def _number(value: Any) -> float | None:
    """The plotted number of a cell (a Score's value), ``None`` for text and empty cells."""
    if isinstance(value, Score):
        return float(value.value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
        return float(value)
    return None


class ResultsTable:
    """Rows of results with fixed columns, rendered as Markdown and saved with JSON beside it.

    Args:
        title: heading of the table.
        columns: column names, in order; the first is usually the row label.
        caption: text printed under the table (settings, seeds, scale).
        float_format: format of float cells (``"{:.1f}"``); ``None`` cells render as ``-``.
        fit_note: what a :class:`Score`'s ``fit`` is (e.g. "fit: exact match on 200 training
            rows"); printed after the caption when a cell carries a fit.

    A cell is a number, a text, ``None`` or a :class:`Score` (mean ± sd over seeds, with the
    model's fit on its own training data beside it).
    """

    def __init__(self, title: str, columns: Sequence[str], *, caption: str = "", float_format: str = "{:.1f}",
                 fit_note: str = "fit: the same score on the model's own training (in-distribution) rows"):
        if not isinstance(title, str) or not title:
            raise ValueError(f"title must be a non-empty string, got {title!r}")
        self.title = title
        self.columns = check_str_tuple("columns", columns)
        if not self.columns or len(set(self.columns)) != len(self.columns):
            raise ValueError(f"columns must be non-empty and distinct, got {list(self.columns)}")
        self.caption = caption
        self.float_format = float_format
        self.fit_note = fit_note
        self.rows: list[dict[str, Any]] = []

    def add(self, **row: Any) -> None:
        """Add one row; every key must be a column (missing columns stay empty)."""
        unknown = sorted(set(row) - set(self.columns))
        if unknown:
            raise ValueError(f"unknown column(s) {unknown}; accepted: {list(self.columns)}")
        self.rows.append({c: row.get(c) for c in self.columns})

    def _cell(self, value: Any) -> str:
        if isinstance(value, Score):
            return value.format(self.float_format)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "-"
        if isinstance(value, float):
            return self.float_format.format(value)
        return str(value)

    def _has_fit(self) -> bool:
        return any(isinstance(v, Score) and v.fit is not None for r in self.rows for v in r.values())

    def full_caption(self) -> str:
        """The caption, with the note on what "fit" is when a cell shows one."""
        parts = [self.caption] if self.caption else []
        if self._has_fit() and self.fit_note:
            parts.append(self.fit_note)
        return " ".join(parts)

    def to_markdown(self) -> str:
        """The table as Markdown (numeric columns right-aligned), heading and caption included."""
        numeric = [all(_number(r[c]) is not None or r[c] is None for r in self.rows)
                   and any(_number(r[c]) is not None for r in self.rows) for c in self.columns]
        lines = [f"### {self.title}", "", "| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
        lines += ["| " + " | ".join(self._cell(r[c]) for c in self.columns) + " |" for r in self.rows]
        caption = self.full_caption()
        if caption:
            lines += ["", caption]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: title, columns, caption and rows (a :class:`Score` as a dict)."""
        rows = [{c: (v.to_dict() if isinstance(v, Score) else v) for c, v in r.items()} for r in self.rows]
        return {"title": self.title, "columns": list(self.columns), "caption": self.full_caption(), "rows": rows}

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

    def bar_labels(self, label: str | Sequence[str] | None = None) -> list[str]:
        """One x-axis label per row: the ``label`` column(s) joined by " / ". Labels must differ
        (two bars with one name cannot be told apart): a repeat raises ``ValueError``."""
        names = [label or self.columns[0]] if label is None or isinstance(label, str) else list(label)
        unknown = sorted(set(names) - set(self.columns))
        if unknown:
            raise ValueError(f"label: unknown column(s) {unknown}; accepted: {list(self.columns)}")
        labels = [" / ".join(self._cell(r[n]) for n in names) for r in self.rows]
        repeated = sorted({x for x in labels if labels.count(x) > 1})
        if repeated:
            raise ValueError(f"label: rows share the label(s) {repeated}; pass label= a list of columns that "
                             f"tells them apart (columns: {list(self.columns)})")
        return labels

    def bar_plot(self, path: str | os.PathLike, *, label: str | Sequence[str] | None = None,
                 values: Sequence[str] | None = None, ylabel: str = "", xlabel: str | None = None) -> str | None:
        """Grouped bars: one group per row (named by ``label``: a column or several joined, default
        the first column; names must differ), one bar per column in ``values`` (default: the
        numeric columns). A :class:`Score` cell draws its sd as an error bar and its fit as a
        black tick over the bar; when every plotted value is 0 the chart says so (and where the
        fit is). The x axis is labelled ``xlabel`` (default: the ``label`` column names); the
        legend sits outside the axes, so it never hides a bar. Returns the path (``None`` off
        the main process).
        """
        label_cols = [label or self.columns[0]] if label is None or isinstance(label, str) else list(label)
        values = list(values) if values is not None else [
            c for c in self.columns if c not in label_cols and any(_number(r[c]) is not None for r in self.rows)]
        unknown = sorted(set(values + label_cols) - set(self.columns))
        if unknown:
            raise ValueError(f"unknown column(s) {unknown}; accepted: {list(self.columns)}")
        if not self.rows or not values:
            raise ValueError("nothing to plot: the table has no rows or no numeric columns")
        xlabels = self.bar_labels(label_cols)
        if not is_main_process():
            return None
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        width = 0.8 / len(values)
        n = len(self.rows)
        fig, ax = plt.subplots(figsize=(min(14.0, max(5.0, 1.2 * n * max(1, len(values)) ** 0.5 + 2)), 4.0))
        plotted, fit_shown = [], False
        for j, col in enumerate(values):
            xs = [i + (j - (len(values) - 1) / 2) * width for i in range(n)]
            cells = [r[col] for r in self.rows]
            ys = [_number(c) or 0.0 for c in cells]
            plotted += [_number(c) for c in cells if _number(c) is not None]
            err = [c.sd if isinstance(c, Score) and c.sd is not None else 0.0 for c in cells]
            ax.bar(xs, ys, width, label=col, yerr=err if any(err) else None, capsize=2)
            fits = [(x, c.fit) for x, c in zip(xs, cells) if isinstance(c, Score) and c.fit is not None]
            if fits:
                ax.scatter([x for x, _ in fits], [f for _, f in fits], marker="_", s=max(40.0, 400 * width),
                           color="black", linewidths=2, zorder=3, label=None if fit_shown else "fit (training rows)")
                fit_shown = True
        ax.set_xticks(range(n), xlabels, rotation=20 if max(len(x) for x in xlabels) > 6 else 0, ha="right"
                      if max(len(x) for x in xlabels) > 6 else "center", fontsize="small")
        ax.set_xlabel(" / ".join(label_cols) if xlabel is None else xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(self.title, fontsize="medium")
        if plotted and all(v == 0 for v in plotted):
            note = "every plotted value is 0" + (" (black ticks: fit on training rows)" if fit_shown else "")
            ax.text(0.5, 0.5, note, transform=ax.transAxes, ha="center", va="center", fontsize="medium",
                    bbox=dict(facecolor="white", edgecolor="grey"))
            if not fit_shown:
                ax.set_ylim(0, 1)
        if len(values) > 1 or fit_shown:
            # right of the axes: inside, a legend covers the bars under it
            ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        fig.tight_layout()
        return save_figure_atomic(fig, path, dpi=100)
