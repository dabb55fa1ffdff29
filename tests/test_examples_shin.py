"""examples/shin_calculator.py end to end at a tiny size: Table 3 layout, per-source table, plot."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import shin_calculator  # noqa: E402


def test_tiny_run_writes_table3_layout(tmp_path, cache_dir, capsys):
    out = tmp_path / "run"
    assert shin_calculator.main(["--tiny", "--out", str(out), "--cache-dir", cache_dir]) == 0
    table3 = json.loads((out / "table3.json").read_text())
    # tiny preset: base DCFG only, homogenized on length and on the number of operations
    assert table3["columns"] == ["train", "Original", "Length", "#Operations"]
    assert [r["train"] for r in table3["rows"]] == ["DCFG"]
    row = table3["rows"][0]
    assert 0.0 <= row["Original"] <= 100.0
    for col in ("Length", "#Operations"):  # changes in pp: the homogenized model's accuracy lies in 0..100
        assert -row["Original"] <= row[col] <= 100.0 - row["Original"]
    per_source = json.loads((out / "per_source.json").read_text())
    assert per_source["columns"] == ["train", "mixture", "dcfg", "t2t", "rcfg", "bal"]
    assert [r["train"] for r in per_source["rows"]] == ["dcfg", "dcfg-homogenized-length", "dcfg-homogenized-num-ops"]
    for r in per_source["rows"]:
        for col in per_source["columns"][1:]:
            assert 0.0 <= r[col] <= 100.0, (r, col)
        # the mixture accuracy is a weighted mean of the per-source accuracies
        assert min(r[c] for c in ("dcfg", "t2t", "rcfg", "bal")) - 1e-9 <= r["mixture"]
        assert r["mixture"] <= max(r[c] for c in ("dcfg", "t2t", "rcfg", "bal")) + 1e-9
    # Table 3 is consistent with the per-source table: deltas are differences of mixture accuracies
    mix = {r["train"]: r["mixture"] for r in per_source["rows"]}
    assert math.isclose(row["Original"], mix["dcfg"])
    assert math.isclose(row["Length"], mix["dcfg-homogenized-length"] - mix["dcfg"])
    md = (out / "results.md").read_text()
    assert "| train | Original | Length | #Operations |" in md and "pp |" in md and "tiny run" in md
    assert (out / "per_source.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "DCFG" in capsys.readouterr().out


def test_bad_arguments_fail_before_work(tmp_path):
    with pytest.raises(SystemExit):
        shin_calculator.main(["--tiny", "--num-train", "0", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        shin_calculator.main(["--base", "bal", "--out", str(tmp_path)])
    assert not any(tmp_path.iterdir())


def test_render_table3_units():
    from hf_synthsample.experiments import ResultsTable

    t = ResultsTable("t", ["train", "Original", "Length"], float_format="{:+.2f}")
    t.add(train="DCFG", Original=78.25, Length=3.84)
    t.add(train="T2T", Original=83.83, Length=-1.5)
    md = shin_calculator.render_table3(t)
    assert "| DCFG | 78.25% | +3.84pp |" in md and "| T2T | 83.83% | -1.50pp |" in md
