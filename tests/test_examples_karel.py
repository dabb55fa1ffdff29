"""examples/karel_io.py: the I/O serialisation (hand-checked) and a tiny end-to-end run (Table 1 layout)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import undeclared_outputs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import karel_io  # noqa: E402


def test_serialize_pair_by_hand():
    grid = {"rows": 3, "cols": 2, "crashed": False, "hero": "2:0:north", "blocked": "0:0 1:1", "markers": "2:1:3 0:1:1"}
    out = dict(grid, hero="2:1:east", markers="0:1:1 2:1:2")  # moved east, picked one marker
    words = karel_io.serialize_pair({"inpgrid_json": grid, "outgrid_json": out})
    assert words == ["IN", "R3", "C2", "2_0", "north", "WALLS", "0_0", "1_1", "MARKERS", "2_1", "x3", "0_1", "x1",
                     "OUT", "2_1", "east", "DIFF", "2_1", "x2"]
    gone = dict(grid, markers="0:1:1")  # every marker of 2_1 picked: the output says x0
    assert karel_io.serialize_pair({"inpgrid_json": grid, "outgrid_json": gone})[-2:] == ["2_1", "x0"]
    assert set(words) <= set(karel_io.vocabulary(3))


def test_num_grids_and_narrow_names():
    draws = [karel_io.num_grids_for(f"{i:016x}", 0) for i in range(500)]
    assert set(draws) == {1, 2, 3, 4, 5}
    assert all(80 <= draws.count(k) <= 120 for k in range(1, 6))  # about uniform (100 each)
    assert karel_io.num_grids_for("abc", 0) == karel_io.num_grids_for("abc", 0)
    assert karel_io.narrow_params("m0.05 w0.85 10-G") == dict(
        distribution="narrow", marker_ratio=0.05, wall_ratio=0.85, marker_counts="ten_minus_geometric")
    assert len(karel_io.ALL_NARROW) == 12


def test_tiny_run_writes_table1_layout(tmp_path, cache_dir):
    out = tmp_path / "run"
    assert karel_io.main(["--tiny", "--out", str(out), "--cache-dir", cache_dir]) == 0
    assert undeclared_outputs(out, karel_io.OUTPUTS) == []  # a re-run clears every result file
    tests = ["baseline I/O", "uniform I/O", "m0.05 w0.85 U", "m0.05 w0.85 G"]
    for name in ("table1", "exact_match"):
        table = json.loads((out / f"{name}.json").read_text())
        assert table["columns"] == ["train", *tests]
        assert [r["train"] for r in table["rows"]] == ["Baseline", "Uniform", "Uniform - Baseline (pp)"]
        base, uni, diff = table["rows"]
        for t in tests:
            if base[t] is None:  # an empty narrow set has no score
                continue
            # every model cell carries the model's fit (the same score on its own training tasks)
            assert 0.0 <= base[t]["value"] <= 100.0 and 0.0 <= uni[t]["value"] <= 100.0
            assert 0.0 <= base[t]["fit"] <= 100.0 and 0.0 <= uni[t]["fit"] <= 100.0
            assert diff[t] == pytest.approx(uni[t]["value"] - base[t]["value"])
        assert "fit: the same score on 8 of the model's own training tasks" in table["caption"]
    sizes = json.loads((out / "tasks.json").read_text())["rows"][0]
    assert 1 <= sizes["baseline I/O"] <= 8 and all(0 <= sizes[t] <= sizes["baseline I/O"] for t in tests)
    md = (out / "results.md").read_text()
    assert "smoke run" in md and "preset --tiny" in md and "(fit " in md
    png = (out / "table1.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert width <= 3 * height, (width, height)  # not a strip (was 2565x340 with all 14 sets)


def test_plot_with_all_fourteen_sets_is_not_a_strip(tmp_path):
    from hf_synthsample.experiments import ResultsTable, Score

    cols = ["baseline I/O", "uniform I/O", *karel_io.ALL_NARROW]
    t = ResultsTable("t", ["train", *cols])
    t.add(train="Baseline", **{c: Score(5.0, fit=20.0) for c in cols})
    t.add(train="Uniform", **{c: Score(7.0, fit=18.0) for c in cols})
    png = (tmp_path / "p.png")
    karel_io.plot_table(t).bar_plot(png, ylabel="%")
    data = png.read_bytes()
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width <= 4 * height, (width, height)


def test_bad_arguments_fail_before_work(tmp_path):
    with pytest.raises(SystemExit):
        karel_io.main(["--tiny", "--max-grid-size", "40", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        karel_io.main(["--narrow", "m0.5 w0.5 U", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        karel_io.main(["--tiny", "--num-fit", "0", "--out", str(tmp_path)])
    assert not any(tmp_path.iterdir())
