"""examples/shin_calculator.py end to end at a tiny size: Table 3 layout, fit beside every score,
per-source and per-level tables, plot."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from conftest import undeclared_outputs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import shin_calculator  # noqa: E402


def _md_row(md: str, label: str) -> list[str]:
    line = next(x for x in md.splitlines() if x.startswith(f"| {label} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_tiny_run_writes_table3_layout(tmp_path, cache_dir, capsys):
    out = tmp_path / "run"
    assert shin_calculator.main(["--tiny", "--seeds", "2", "--out", str(out), "--cache-dir", cache_dir]) == 0
    assert undeclared_outputs(out, shin_calculator.OUTPUTS) == []  # a re-run clears every result file
    table3 = json.loads((out / "table3.json").read_text())
    # tiny preset: base DCFG only, homogenized on length and on the number of operations
    assert table3["columns"] == ["train", "Original (%)", "Length (pp)", "#Operations (pp)"]
    assert [r["train"] for r in table3["rows"]] == ["DCFG"]
    row = table3["rows"][0]
    original = row["Original (%)"]
    assert 0.0 <= original["value"] <= 100.0 and 0.0 <= original["fit"] <= 100.0
    assert len(original["values"]) == 2 and "sd" in original  # two seeds: a spread
    per_source = json.loads((out / "per_source.json").read_text())
    assert per_source["columns"] == ["train", "steps", "best step", "fit: train rows", "fit: held-out", "mixture", "dcfg",
                                     "t2t", "rcfg", "bal"]
    assert [r["train"] for r in per_source["rows"]] == ["dcfg", "dcfg-homogenized-length", "dcfg-homogenized-num-ops"]
    runs = json.loads((out / "runs.json").read_text())["runs"]
    assert len(runs) == 6 and {r["seed"] for r in runs} == {0, 1}
    for r in per_source["rows"]:
        assert r["steps"]["value"] == 7  # the fixed schedule: 1 epoch of 200 rows, batch 32
        assert r["best step"] is None  # no checkpoint selection without --patience
        for col in per_source["columns"][3:]:
            assert 0.0 <= r[col]["value"] <= 100.0, (r, col)
        # per seed, the mixture accuracy is a weighted mean of the per-source accuracies
        for run in (x for x in runs if x["config"] == r["train"]):
            assert min(run[c] for c in ("dcfg", "t2t", "rcfg", "bal")) - 1e-9 <= run["mixture"]
            assert run["mixture"] <= max(run[c] for c in ("dcfg", "t2t", "rcfg", "bal")) + 1e-9
    # Table 3 is consistent with the runs: a change is the mean of the per-seed differences
    mix = {(r["config"], r["seed"]): r["mixture"] for r in runs}
    assert math.isclose(original["value"], (mix[("dcfg", 0)] + mix[("dcfg", 1)]) / 2)
    deltas = [mix[("dcfg-homogenized-length", s)] - mix[("dcfg", s)] for s in (0, 1)]
    assert math.isclose(row["Length (pp)"]["value"], sum(deltas) / 2)
    assert math.isclose(row["Length (pp)"]["sd"], abs(deltas[0] - deltas[1]) / math.sqrt(2), abs_tol=1e-9)
    # the fit of a homogenized cell is that model's own training-row accuracy
    fit = [r for r in per_source["rows"] if r["train"] == "dcfg-homogenized-length"][0]["fit: train rows"]["value"]
    assert math.isclose(row["Length (pp)"]["fit"], fit)
    per_level = json.loads((out / "per_level.json").read_text())
    assert per_level["columns"] == ["train", "ops 0", "ops 1", "ops 2-3", "ops 4-7", "ops 8+"]
    # an accuracy prints unsigned, a change signed (table3.md printed "+49.80" for the original)
    for md in ((out / "table3.md").read_text(), (out / "results.md").read_text()):
        cells = _md_row(md, "DCFG")
        assert cells[1][0].isdigit() and "(fit " in cells[1], cells
        assert all(c[0] in "+-" and "(fit " in c for c in cells[2:]), cells
        assert "preset --tiny with --seeds 2" in md and "fit:" in md
    assert (out / "per_source.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "dcfg-homogenized-num-ops seed 1" in capsys.readouterr().out


def test_signed_score_format():
    s = shin_calculator.SignedScore(3.84, fit=61.2, sd=0.5)
    assert s.format("{:.2f}") == "+3.84±0.50 (fit 61.20)"
    assert shin_calculator.SignedScore(-1.5).format("{:.2f}") == "-1.50"


def test_presets_and_overrides():
    a = shin_calculator.parse_args(["--cpu"])
    # the parenthesis variables need 100,000 rows and long training (docs/reproductions.md); every model gets
    # the same 20,000 steps (min = max: no early stop) and keeps its best own-distribution checkpoint (issue 22)
    assert (a.num_train, a.seeds, a.lr_scheduler, a.eps, a.patience, a.variables) == (
        100_000, 3, "constant", 0.05, 6, ["max_paren_depth", "mean_paren_depth", "num_parens"])
    assert (a.min_steps, a.max_steps, a.eval_every) == (20_000, 20_000, 500)
    assert a.overrides == {}
    # a lower cap keeps the budgets equal (the preset's minimum follows it); an explicit minimum is kept
    assert shin_calculator.parse_args(["--cpu", "--max-steps", "5000"]).min_steps == 5000
    a = shin_calculator.parse_args(["--cpu", "--min-steps", "8000"])
    assert (a.min_steps, a.max_steps, a.overrides) == (8000, 20_000, {"min_steps": 8000})
    assert shin_calculator.parse_args(["--cpu", "--patience", "6", "--min-steps", "0"]).min_steps == 0
    a = shin_calculator.parse_args(["--cpu", "--patience", "0", "--epochs", "6", "--num-train", "20000"])
    assert a.overrides == {"patience": 0, "epochs": 6.0, "num_train": 20_000} and a.patience is None
    assert shin_calculator.parse_args([]).preset == "small"


def test_bad_arguments_fail_before_work(tmp_path):
    for argv in (["--tiny", "--num-train", "0"], ["--base", "bal"], ["--tiny", "--jobs", "0"],
                 ["--tiny", "--lr-scheduler", "step"], ["--tiny", "--num-fit", "-1"]):
        with pytest.raises(SystemExit):
            shin_calculator.main([*argv, "--out", str(tmp_path)])
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_jobs_do_not_change_results(tmp_path, cache_dir):
    runs = []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        assert shin_calculator.main(["--tiny", "--variables", "num_ops", "--jobs", str(jobs), "--out", str(out),
                                     "--cache-dir", cache_dir]) == 0
        runs.append(json.loads((out / "runs.json").read_text())["runs"])
    assert runs[0] == runs[1]


def test_identical_training_sets_are_named(tmp_path, cache_dir):
    # eps above every value's frequency rejects nothing: the two homogenized sets keep the same draws
    # (they differ from plain DCFG, whose stream draws no acceptance numbers)
    out = tmp_path / "run"
    assert shin_calculator.main(["--tiny", "--eps", "0.99", "--out", str(out), "--cache-dir", cache_dir]) == 0
    runs = json.loads((out / "runs.json").read_text())
    assert runs["identical_training_sets"] == [["dcfg-homogenized-length", "dcfg-homogenized-num-ops"]]
    caption = json.loads((out / "table3.json").read_text())["caption"]
    assert "dcfg-homogenized-length = dcfg-homogenized-num-ops" in caption


def test_convergence_stopper_stops_and_keeps_the_best():
    import torch

    model = torch.nn.Linear(1, 1, bias=False)
    scores = iter([10.0, 30.0, 30.4, 25.0, 29.0])

    def score() -> float:
        value = next(scores)
        with torch.no_grad():  # the weights at each evaluation carry its score, to check which is kept
            model.weight.fill_(value)
        return value

    stop = shin_calculator.ConvergenceStopper(model, score, eval_every=5, patience=3, min_delta=0.5)
    # +0.4 is not a gain > 0.5 (patience counts from step 10), but it is the best checkpoint
    assert [stop.evaluate(step) for step in (5, 10, 15, 20, 25)] == [False, False, False, False, True]
    assert (stop.best_step, stop.best_score, stop.stopped_early) == (15, 30.4, True)
    assert stop.curve == [(5, 10.0), (10, 30.0), (15, 30.4), (20, 25.0), (25, 29.0)]
    stop.restore()
    assert model.weight.item() == pytest.approx(30.4)


def test_convergence_stopper_ties_keep_the_later_checkpoint_and_min_steps_holds():
    import torch

    model = torch.nn.Linear(1, 1, bias=False)
    values = [40.0, 50.0, 50.0, 49.0, 50.0, 48.0, 47.0]
    scores = iter(values)
    stop = shin_calculator.ConvergenceStopper(model, lambda: next(scores), eval_every=1, patience=1, min_delta=0.0,
                                              min_steps=6, monitor=lambda: 7.0)
    # patience 1 is exhausted at step 3, but no stop before min_steps 6; at the cap (last) it is no early stop
    assert [stop.evaluate(step, last=step == 7) for step in range(1, 8)] == [False] * 5 + [True, False]
    assert stop.best_step == 5 and stop.best_score == 50.0  # the plateau's latest checkpoint, not its first (2)
    assert not stop.stopped_early and stop.monitor_curve == [(s, 7.0) for s in range(1, 8)]


def _converge_run(tmp_path, cache_dir, *flags: str) -> tuple[list[dict], Path]:
    out = tmp_path / "_".join(flags).replace("-", "")
    assert shin_calculator.main(["--tiny", "--variables", "length", "--eval-every", "2", *flags, "--out", str(out),
                                 "--cache-dir", cache_dir]) == 0
    return json.loads((out / "runs.json").read_text())["runs"], out


def test_train_to_convergence_stops_caps_and_keeps_best(tmp_path, cache_dir):
    # patience 1 with an unreachable min-delta: the second evaluation never counts as a gain -> stop at step 4
    runs, out = _converge_run(tmp_path, cache_dir, "--patience", "1", "--min-delta", "100", "--max-steps", "50")
    for r in runs:
        assert r["stopped_early"] and r["steps"] == 4, r
        assert [s for s, _ in r["curve"]] == [2, 4] and [s for s, _ in r["mixture_curve"]] == [2, 4]
        # the kept model is the best checkpoint (the latest among ties): its held-out fit is that evaluation's score
        (s2, v2), (s4, v4) = r["curve"]
        assert r["best_step"] == (4 if v4 >= v2 else 2)
        assert math.isclose(r["fit_heldout"], max(v2, v4))
        # the mixture curve is recorded only: the score reported is the kept checkpoint's
        assert math.isclose(r["mixture"], dict(map(tuple, r["mixture_curve"]))[r["best_step"]])
    per_source = json.loads((out / "per_source.json").read_text())
    assert per_source["columns"][:2] == ["train", "steps"]
    assert per_source["rows"][0]["steps"]["value"] == 4
    assert "trained to convergence" in (out / "table3.md").read_text()
    # a patience never exhausted: the cap holds (tiny: 200 rows = 7 steps an epoch, so the cap spans epochs)
    runs, _ = _converge_run(tmp_path, cache_dir, "--patience", "100", "--min-delta", "0", "--max-steps", "9")
    for r in runs:
        assert r["steps"] == 9 and not r["stopped_early"], r
        assert [s for s, _ in r["curve"]] == [2, 4, 6, 8, 9]  # the last step is evaluated too
        best = max(score for _, score in r["curve"])
        assert math.isclose(r["fit_heldout"], best) and r["best_step"] == max(s for s, v in r["curve"] if v == best)
    # equal budgets: a patience exhausted at step 4 does not stop a run before --min-steps (here the cap)
    runs, out = _converge_run(tmp_path, cache_dir, "--patience", "1", "--min-delta", "100", "--max-steps", "9",
                              "--min-steps", "9")
    for r in runs:
        assert r["steps"] == 9 and not r["stopped_early"] and [s for s, _ in r["curve"]] == [2, 4, 6, 8, 9], r
    assert "9 steps for every model (equal budgets" in (out / "table3.md").read_text()
    # a minimum below the cap: the stop comes at the first evaluation at or after it
    runs, _ = _converge_run(tmp_path, cache_dir, "--patience", "1", "--min-delta", "100", "--max-steps", "50",
                            "--min-steps", "5")
    for r in runs:
        assert r["stopped_early"] and r["steps"] == 6 and [s for s, _ in r["curve"]] == [2, 4, 6], r


def test_convergence_flags_are_checked(tmp_path, capsys):
    for argv, flag in ((["--patience", "-1"], "--patience"), (["--patience", "2", "--eval-every", "0"], "--eval-every"),
                       (["--patience", "2", "--min-delta", "-1"], "--min-delta"),
                       (["--patience", "2", "--max-steps", "0"], "--max-steps"),
                       (["--max-steps", "100"], "--max-steps"),  # without --patience it would be silently unused
                       (["--patience", "2", "--eval-every", "50", "--max-steps", "10"], "--eval-every"),
                       (["--patience", "2", "--epochs", "3"], "--epochs"),
                       (["--patience", "2", "--min-steps", "-1"], "--min-steps"),
                       (["--patience", "2", "--eval-every", "2", "--min-steps", "30", "--max-steps", "20"], "--min-steps"),
                       (["--min-steps", "10"], "--min-steps")):
        with pytest.raises(SystemExit):
            shin_calculator.main(["--tiny", *argv, "--out", str(tmp_path)])
        assert flag in capsys.readouterr().err, argv
    assert not any(tmp_path.iterdir())
    a = shin_calculator.parse_args(["--cpu", "--patience", "4"])
    assert (a.patience, a.eval_every, a.min_delta, a.max_steps, a.min_steps) == (4, 500, 0.5, 20_000, 20_000)
    assert shin_calculator.parse_args(["--small"]).patience is None
    assert shin_calculator.parse_args(["--cpu"]).patience == 6


def test_resume_trains_only_the_missing_models(tmp_path, cache_dir, capsys):
    out = tmp_path / "run"
    common = ["--tiny", "--variables", "length", "--out", str(out), "--cache-dir", cache_dir]
    assert shin_calculator.main([*common, "--seeds", "1"]) == 0
    first = json.loads((out / "runs.json").read_text())["runs"]
    capsys.readouterr()
    # a second seed: the seed-0 models are kept (not retrained), only the seed-1 ones train
    assert shin_calculator.main([*common, "--seeds", "2", "--resume"]) == 0
    printed = capsys.readouterr().out
    assert "--resume: kept 2 finished model(s)" in printed and "training 2" in printed
    assert "seed 0:" not in printed and "dcfg-homogenized-length seed 1:" in printed
    runs = json.loads((out / "runs.json").read_text())["runs"]
    assert [r for r in runs if r["seed"] == 0] == first and {r["seed"] for r in runs} == {0, 1}
    assert not (out / "runs.partial.json").exists()
    # other settings: refused before any work, the previous results untouched
    with pytest.raises(ValueError, match="--resume.*num_train"):
        shin_calculator.main([*common, "--num-train", "300", "--resume"])
    assert json.loads((out / "runs.json").read_text())["runs"] == runs


@pytest.mark.parametrize("argv, flag", [
    (["--learning-rate", "nan"], "--learning-rate"), (["--learning-rate", "-0.01"], "--learning-rate"),
    (["--lr-scheduler", "bogus"], "--lr-scheduler"), (["--eps", "nan"], "--eps"), (["--epochs", "-1"], "--epochs"),
    (["--threads", "0"], "--threads"), (["--seed", "-1"], "--seed")])
def test_bad_options_name_the_flag_before_any_work(tmp_path, capsys, argv, flag):
    with pytest.raises(SystemExit) as err:
        shin_calculator.main(["--tiny", *argv, "--out", str(tmp_path / "o")])
    assert err.value.code == 2 and flag in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    (tmp_path / "f").write_text("mine")
    with pytest.raises(SystemExit):  # an --out that is a file
        shin_calculator.main(["--tiny", "--out", str(tmp_path / "f")])
    assert "--out" in capsys.readouterr().err and (tmp_path / "f").read_text() == "mine"
