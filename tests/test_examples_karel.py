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
    from harness import ResultsTable, Score

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


def test_tiny_cpu_recipe_runs_two_seeds_with_fit_stopping(tmp_path, cache_dir):
    """The --cpu recipe at tiny scale: short programs with control flow, small grids, the LSTM,
    fit-based stopping, two model seeds on the same data, a per-seed difference row, runs.json."""
    out = tmp_path / "run"
    assert karel_io.main(["--tiny-cpu", "--out", str(out), "--cache-dir", cache_dir]) == 0
    assert undeclared_outputs(out, karel_io.OUTPUTS) == []
    table = json.loads((out / "table1.json").read_text())
    assert [r["train"] for r in table["rows"]] == ["Baseline", "Uniform", "Uniform - Baseline (pp)",
                                                   "  seed 1 of 2", "  seed 2 of 2"]
    base, uni, diff, d1, d2 = table["rows"]
    assert len(base["baseline I/O"]["values"]) == 2 and "fit" in base["baseline I/O"]
    assert diff["baseline I/O"] == pytest.approx((d1["baseline I/O"] + d2["baseline I/O"]) / 2)
    assert "bi-LSTM" in table["caption"] and "trained until it fits 80 %" in table["caption"]
    runs = json.loads((out / "runs.json").read_text())
    assert [(r["train"], r["seed"]) for r in runs] == [("Baseline", 0), ("Uniform", 0), ("Baseline", 1), ("Uniform", 1)]
    for r in runs:  # a fit check every epoch until the target or the 2-epoch cap
        assert 1 <= len(r["fit_curve"]) <= 2 and r["epochs"] <= 2
        assert all(0.0 <= fit <= 100.0 for _, fit, _ in r["fit_curve"])
        # the error profile: predictions that copy a training program verbatim, unparsable ones
        assert 0.0 <= r["scores"]["baseline I/O"]["copied"] <= 100.0 and "unparsable" in r["scores"]["uniform I/O"]


def test_cpu_preset_programs_keep_control_flow(cache_dir):
    """--cpu's program settings give short programs, most with a condition on walls or markers."""
    import hf_synthsample

    a = karel_io.parse_args(["--cpu", "--num-train", "60", "--num-test", "4"])
    cfg = karel_io.program_config(a)
    ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=60, num_test=4, seed=0, cache_dir=cache_dir,
                                     **cfg)["train"]
    assert max(ds["program_size"]) <= a.max_program_size and max(ds["nesting_depth"]) <= 1
    assert sum(ds["num_control_flow"]) >= 15  # many programs hold one control structure, with a condition
    assert sum("c(" in tokens for tokens in ds["program_tokens"]) >= 15
    assert karel_io.program_config(karel_io.parse_args(["--cpu-t5"])) == {"max_grid_size": 8}  # the old data


@pytest.mark.parametrize("flags", [
    ["--max-program-size", "5"], ["--min-grid-size", "7"], ["--fit-target", "120"],
    ["--fit-target", "80", "--check-every", "0"], ["--dropout", "1.5"], ["--hidden-size", "33"], ["--seeds", "0"],
    ["--jobs", "0"], ["--max-body", "0"], ["--arch", "gru"], ["--lr-schedule", "cosine"], ["--num-beams", "3"],
    ["--seen", "-1"],
], ids=" ".join)
def test_bad_cpu_options_name_the_flag(tmp_path, capsys, flags):
    with pytest.raises(SystemExit):
        karel_io.main(["--cpu", *flags, "--out", str(tmp_path / "o")])
    assert flags[-2] in capsys.readouterr().err  # the last flag given is the bad one
    assert not (tmp_path / "o").exists()


def test_gpu_preset_is_more_programs_than_a_cpu_fits_and_runs_at_toy_size(tmp_path, cache_dir):
    g = karel_io.parse_args(["--gpu"])
    cpu = karel_io.parse_args(["--cpu"])
    # the --cpu programs and grids, 50x the 200 programs a CPU fits (by memorising them)
    assert g.num_train == 10_000 == 50 * cpu.num_train and (g.arch, g.frame, g.hidden_size, g.num_proc) == (
        "lstm", "egocentric", 256, 8)
    same = ("max_program_size", "max_control_flow", "max_nesting", "max_body", "max_grid_size", "constructs", "narrow",
            "seen", "fit_target", "num_test")
    assert all(getattr(g, k) == getattr(cpu, k) for k in same)
    out = tmp_path / "gpu"
    assert karel_io.main(["--gpu", "--num-train", "24", "--num-test", "6", "--num-fit", "6", "--seen", "4",
                          "--narrow", "m0.05 w0.85 U", "--hidden-size", "16", "--epochs", "1", "--check-every", "1",
                          "--num-proc", "2", "--out", str(out), "--cache-dir", cache_dir]) == 0
    table = json.loads((out / "table1.json").read_text())
    assert table["columns"] == ["train", "baseline I/O", "uniform I/O", "m0.05 w0.85 U"]
    assert "preset --gpu with" in table["caption"] and "sized for one H100" in table["caption"]
    assert (out / "table1_seen.json").exists()


@pytest.mark.parametrize("flags, name", [
    (["--learning-rate", "nan"], "--learning-rate"), (["--learning-rate", "-1"], "--learning-rate"),
    (["--dropout", "2"], "--dropout"), (["--epochs", "nan"], "--epochs"), (["--num-proc", "0"], "--num-proc"),
    (["--threads", "0"], "--threads")])
def test_bad_options_name_the_flag_before_any_work(tmp_path, capsys, flags, name):
    with pytest.raises(SystemExit):
        karel_io.main(["--tiny", *flags, "--out", str(tmp_path / "o")])
    assert name in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    (tmp_path / "f").write_text("mine")
    with pytest.raises(SystemExit):  # an --out that is a file
        karel_io.main(["--tiny", "--out", str(tmp_path / "f")])
    assert "--out" in capsys.readouterr().err and (tmp_path / "f").read_text() == "mine"
