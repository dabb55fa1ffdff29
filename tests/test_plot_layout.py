"""Result plots: every bar chart has an x-axis label, and its legend never hides a bar."""

from __future__ import annotations

import pytest

from conftest import keep_saved_figures, load_example
from harness import ResultsTable, Score


def _capture(monkeypatch):
    """Keep the figure ``bar_plot`` saves, drawn, for inspection."""
    import harness.tables as experiments

    def read(fig):
        ax = fig.axes[0]
        return dict(xlabel=ax.get_xlabel(), legend=ax.get_legend(), ax=ax,
                    legend_box=ax.get_legend().get_window_extent() if ax.get_legend() else None,
                    bars=[p.get_window_extent() for p in ax.patches])

    return keep_saved_figures(monkeypatch, experiments, read)


def per_source_table() -> ResultsTable:
    """The Shin per-source layout: 6 groups of 5 bars near 100 %, fit ticks, a 6-entry legend."""
    t = ResultsTable("Per-source accuracy (%)", ["train", "mixture", "dcfg", "t2t", "rcfg", "bal"], fit_note="")
    for i, name in enumerate(["dcfg", "t2t", "rcfg", "bal", "Original", "Length"]):
        t.add(train=name, mixture=Score.of([88.0 + i, 90.0 + i], fit=[99.0, 98.0]), dcfg=Score.of([95.0, 96.0]),
              t2t=Score.of([91.0, 93.0]), rcfg=Score.of([85.0, 89.0]), bal=Score.of([97.0, 98.0]))
    return t


def test_the_legend_hides_no_bar(monkeypatch, tmp_path):
    kept = _capture(monkeypatch)
    per_source_table().bar_plot(tmp_path / "per_source.png", ylabel="accuracy (%)")
    assert kept["legend"] is not None and len(kept["legend"].get_texts()) == 6  # 5 sources + the fit tick
    box = kept["legend_box"]
    assert kept["bars"] and not any(box.overlaps(bar) for bar in kept["bars"])
    assert (tmp_path / "per_source.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bar_plots_label_the_x_axis(monkeypatch, tmp_path):
    kept = _capture(monkeypatch)
    t = ResultsTable("Figure 2", ["L", "train lengths", "exact match"])
    for L in (2, 4):
        t.add(L=L, **{"train lengths": f"1-{L}", "exact match": Score.of([50.0, 60.0], fit=[99.0, 100.0])})
    t.bar_plot(tmp_path / "a.png", values=["exact match"])
    assert kept["xlabel"] == "L"  # default: the label column
    t.bar_plot(tmp_path / "b.png", values=["exact match"], label=["L", "train lengths"])
    assert kept["xlabel"] == "L / train lengths"
    t.bar_plot(tmp_path / "c.png", values=["exact match"], xlabel="L: longest training command (words)")
    assert kept["xlabel"] == "L: longest training command (words)"


def test_zhou_figure2_names_its_x_axis():
    zhou = load_example("zhou_scan")
    assert set(zhou.PLOTS) == {"table1", "table3", "figure2"}
    values, xlabel = zhou.PLOTS["figure2"]
    assert values == ["exact match"] and xlabel.startswith("L: longest training command")
    assert all(label for _, label in zhou.PLOTS.values())
