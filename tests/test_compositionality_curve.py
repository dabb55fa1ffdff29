"""examples/compositionality_curve.py: Spearman's rho by hand, the error kinds, bad flags, and a
--small run end to end (files, sizes, divergences; its tiny models fit nothing: no accuracy asserted)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from conftest import load_example

curve = load_example("compositionality_curve")


def test_spearman_by_hand():
    # ranks x 1 2 3 4 5, y 5 4 2 3 1: d^2 = 0+0+1+1+0 = 2, rho = 1 - 6*2/(5*24) = 0.9 -> negated
    assert curve.spearman([0.0, 0.1, 0.2, 0.3, 0.4], [99.0, 80.0, 20.0, 35.0, 1.0]) == pytest.approx(-0.9)
    # input order does not matter; only ranks do (a monotone transform changes nothing)
    assert curve.spearman([0.4, 0.0, 0.3, 0.1, 0.2], [1.0, 99.0, 35.0, 80.0, 20.0]) == pytest.approx(-0.9)
    assert curve.spearman([1, 2, 3], [10, 20, 1000]) == pytest.approx(1.0)
    # ties share their mean rank: y ranks 1.5 1.5 3 -> Pearson of (1 2 3) and (1.5 1.5 3) = sqrt(3)/2
    assert curve.spearman([1, 2, 3], [0.0, 0.0, 5.0]) == pytest.approx(math.sqrt(3) / 2)
    assert math.isnan(curve.spearman([1, 2, 3], [4.0, 4.0, 4.0]))
    with pytest.raises(ValueError, match="same length"):
        curve.spearman([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="at least 2"):
        curve.spearman([1], [1])


def test_error_kinds_and_subsample():
    kinds = curve.error_kinds(["I_WALK", "I_RUN I_RUN", "I_WALK I_JUMP", ""], ["I_WALK", "I_RUN I_WALK", "I_WALK", "I_RUN"])
    assert kinds == {"exact": 1, "substituted": 1, "stopped_early": 1, "other": 1}
    pool = curve.scan_pool(50, seed=3)
    assert pool.num_rows == 50 and pool.column_names == ["commands", "actions"]
    assert list(pool["commands"]) == list(curve.scan_pool(50, seed=3)["commands"])
    assert list(pool["commands"]) != list(curve.scan_pool(50, seed=4)["commands"])
    # same seed, same positions: the scored test rows of every split are drawn alike
    a, b = curve.subsample(pool, 7, seed=1), curve.subsample(pool.shuffle(seed=0), 7, seed=1)
    assert a.num_rows == b.num_rows == 7 and curve.subsample(pool, 0, seed=1).num_rows == 50


@pytest.mark.parametrize("flags, message", [
    (["--targets", "0.3", "0.1"], "increasing"),
    (["--targets", "0.1", "0.1"], "increasing"),
    (["--targets", "0.2"], "at least 2"),
    (["--targets", "0.1", "1.5"], r"\[0, 1\]"),
    (["--train-share", "0.8", "--test-share", "0.3"], "--train-share"),
    (["--steps", "0"], "--steps"),
    (["--jobs", "0"], "--jobs"),
    (["--d-model", "30", "--heads", "4"], "--d-model"),
    (["--fit-target", "120"], "--fit-target must be <= 100"),
    (["--check-every", "0"], "--check-every must be >= 1"),
    (["--sanity-size", "-1"], "--sanity-size must be >= 0"),
])
def test_bad_flags(flags, message, capsys):
    with pytest.raises(SystemExit):
        curve.parse_args(flags)
    assert re.search(message, capsys.readouterr().err)


def test_small_run_end_to_end(tmp_path):
    out = tmp_path / "out"
    flags = ["--small", "--pool-size", "600", "--targets", "0.1", "0.4", "--steps", "4", "--sanity-size", "6",
             "--test-rows", "10", "--search-seconds", "3", "--out", str(out)]
    assert curve.main(flags) == 0
    (folder,) = out.iterdir()  # one folder per invocation
    assert folder.name.startswith("small-seed0-")
    # the run folder is the library's (atomic_folder writes its marker), so a later --overwrite may replace it
    assert sorted(p.name for p in folder.iterdir()) == [".hf-synthsample", "curve.png", "results.json", "results.md",
                                                         "runs.json", "splits"]
    assert (folder / "splits" / "README.md").is_file()
    runs = json.loads((folder / "runs.json").read_text())
    assert [r["target"] for r in runs] == [0.1, 0.4]
    for r in runs:
        # the sweep's sizes: train 50 % and test 25 % of the 600-row pool, the rest left out
        assert (r["train_rows"], r["test_rows"], r["num_test_scored"], r["num_fit"]) == (300, 150, 10, 6)
        assert 0.0 <= r["fit"] <= 100.0 and 0.0 <= r["test_exact_match"] <= 100.0
        assert r["atom_divergence"] <= 0.02 + 1e-9
        assert sum(r["errors"].values()) == 10
        # trained to the fit target: at most --steps steps, the fit of the last check, never "fitted" here
        assert r["steps"] == 4 and r["fit_history"] == [[4, r["fit"]]] and r["fit_reached"] is False
    # the harder split is harder (D_C at or above its target, or the random split's when that is higher)
    assert runs[1]["compound_divergence"] >= 0.4 - 0.02 > runs[0]["compound_divergence"]
    summary = json.loads((folder / "results.json").read_text())
    assert summary["fits_below_min"] == sum(r["fit"] < 90 for r in runs) and summary["target_met"] is False
    assert summary["cpu_seconds"] > 0 and summary["wall_seconds"] > 0
    text = (folder / "results.md").read_text()
    assert "Spearman rho" in text and "fit" in text and "**no**" in text
    assert summary["not_fitted"] == [0.1, 0.4] and summary["settings"]["max_steps"] == 4
    # splits/ is a Hub folder plain datasets reads, the curve's table in its card
    import datasets

    test = datasets.load_dataset(str(folder / "splits"), "dc_0.40")["test"]
    assert test.num_rows == 150 and test.column_names == ["commands", "actions"]
    assert "Spearman rho" in (folder / "splits" / "README.md").read_text()
    # a second run never writes into the first one's folder
    assert curve.main(flags + ["--seed", "1"]) == 0
    assert len(list(out.iterdir())) == 2


def test_docstring_examples():
    import doctest

    failures, tried = doctest.testmod(curve, optionflags=doctest.ELLIPSIS)
    assert tried >= 1 and failures == 0  # the recipe's own; the library's are in tests/test_curve.py


def test_failed_write_leaves_no_half_folder(tmp_path, monkeypatch):
    def broken_plot(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(curve, "plot_curve", broken_plot)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="disk full"):
        curve.main(["--small", "--pool-size", "400", "--targets", "0.1", "0.3", "--steps", "2", "--sanity-size", "4",
                    "--test-rows", "4", "--search-seconds", "3", "--out", str(out)])
    assert list(out.iterdir()) == []  # no run folder, no temp folder left beside it


COGS_TRAIN = Path(curve.COGS_TRAIN)


def test_cogs_pool_reads_the_release_layout(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("A cat ran .\tcat ( x _ 1 ) AND run . agent ( x _ 2 , x _ 1 )\tin_distribution\n"
                    "Emma\tEmma\tprimitive\n"
                    "Emma ran .\trun . agent ( x _ 1 , Emma )\tin_distribution\n")
    pool = curve.cogs_pool(str(path))
    assert pool.column_names == ["source", "target"] and list(pool["source"]) == ["A cat ran .", "Emma ran ."]
    assert list(curve.cogs_pool(str(path), max_target_tokens=10)["source"]) == ["Emma ran ."]
    with pytest.raises(ValueError, match="--cogs: no in-distribution rows"):
        curve.cogs_pool(str(path), max_target_tokens=2)
    path.write_text("A cat ran .\tcat ( x _ 1 )\n")
    with pytest.raises(ValueError, match="line 1 has 2 tab-separated fields"):
        curve.cogs_pool(str(path))


@pytest.mark.parametrize("flags, message", [
    (["--data", "cogs", "--cogs", "/nonexistent/train.tsv"], "--cogs: /nonexistent/train.tsv is not a file"),
    (["--max-target-tokens", "-1"], "--max-target-tokens must be >= 0"),
])
def test_bad_cogs_flags(flags, message, capsys):
    with pytest.raises(SystemExit):
        curve.parse_args(flags)
    assert message in capsys.readouterr().err


def test_cogs_preset_reads_the_logical_forms():
    if not COGS_TRAIN.is_file():
        pytest.skip(f"the COGS release is not at {COGS_TRAIN} (../shared/data/cogs: github.com/najoungkim/COGS)")
    args = curve.parse_args(["--cpu-cogs"])
    s = args.settings
    assert (args.data, args.pool_size, args.max_target_tokens) == ("cogs", 10_000, 40)
    assert (s.sweep.train_size, s.sweep.test_size, s.sweep.targets[0]) == (0.2, 0.1, 0.25)
    assert (s.sweep.column, s.sweep.language, s.source, s.target_column, s.settle_steps) == ("target", "cogs", "source", "target", 1000)


def test_small_cogs_run_end_to_end(tmp_path):
    if not COGS_TRAIN.is_file():
        pytest.skip(f"the COGS release is not at {COGS_TRAIN} (../shared/data/cogs: github.com/najoungkim/COGS)")
    out = tmp_path / "out"
    # 600 rows hold too few of each word for D_A <= 0.02; their reachable D_C range is 0.28-0.52
    flags = ["--small", "--data", "cogs", "--max-target-tokens", "40", "--pool-size", "600", "--targets", "0.0", "0.45",
             "--max-atom-divergence", "0.05", "--steps", "2", "--sanity-size", "4", "--test-rows", "6",
             "--search-seconds", "120", "--out", str(out)]
    assert curve.main(flags) == 0
    (folder,) = out.iterdir()
    runs = json.loads((folder / "runs.json").read_text())
    assert runs[0]["compound_divergence"] < 0.4 <= runs[1]["compound_divergence"]
    assert [r["train_rows"] for r in runs] == [300, 300]
    summary = json.loads((folder / "results.json").read_text())
    assert summary["data"] == "cogs" and summary["settings"]["sweep"]["language"] == "cogs"  # the split settings, nested
    assert "(COGS)" in (folder / "results.md").read_text()
