"""examples/zhou_scan.py: the data transforms of Tables 1 and 3 (hand-known sizes) and a --tiny run
of the whole example (tables' rows, columns and value ranges; not the paper's accuracies)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import load_example, undeclared_outputs

REPO = Path(__file__).resolve().parents[1]


zhou = load_example("zhou_scan")


def test_scan_split_subsample_and_augmentation(cache_dir):
    train, test = zhou.scan_split("addprim_jump", train_size=40, test_size=10, seed=0, cache_dir=cache_dir)
    assert (train.num_rows, test.num_rows) == (40, 10)
    # the held-out primitive never appears in a train command except bare; every test command has it
    assert all(c == "jump" or "jump" not in c.split() for c in train["commands"])
    assert all("jump" in c.split() and c != "jump" for c in test["commands"])
    same, _ = zhou.scan_split("addprim_jump", train_size=40, test_size=10, seed=0, cache_dir=cache_dir)
    assert same["commands"] == train["commands"]

    one = zhou.augment(train, "addprim_jump", 1, seed=0)
    assert one["commands"] == train["commands"] and set(one["augmented"]) == {0}
    two = zhou.augment(train, "addprim_jump", 2, seed=0)
    # every row keeps its original and gains at most 2 distinct variants, each with mutated verbs only
    assert [c for c, a in zip(two["commands"], two["augmented"]) if a == 0] == train["commands"]
    assert train.num_rows < two.num_rows <= 3 * train.num_rows
    for c, a, flag in zip(two["commands"], two["actions"], two["augmented"]):
        if flag:
            mutated = [w.rsplit("_", 1)[0] for w in c.split() if w.rsplit("_", 1)[-1].isdigit()]
            assert mutated and set(mutated) <= {"walk", "run", "look", "jump"}
            assert any(t.rsplit("_", 1)[-1].isdigit() for t in a.split())


def test_more_primitives_keeps_originals_and_matches_2x_size(cache_dir):
    train, _ = zhou.scan_split("template_around_right", train_size=60, test_size=5, seed=1, cache_dir=cache_dir)
    two = zhou.augment(train, "template_around_right", 2, seed=1)
    twenty = zhou.augment(train, "template_around_right", 20, seed=1)
    mixed = zhou.more_primitives(twenty, two, seed=1)
    assert mixed.num_rows == two.num_rows
    assert sorted(c for c, a in zip(mixed["commands"], mixed["augmented"]) if a == 0) == sorted(train["commands"])
    # the augmented rows come from the 20x set: suffixes above 2 occur
    suffixes = {int(w.rsplit("_", 1)[1]) for c in mixed["commands"] for w in c.split() if "_" in w}
    assert max(suffixes) > 2
    with pytest.raises(ValueError, match="fewer than"):
        zhou.more_primitives(two, twenty, seed=1)


def test_augzero_and_star_length_split(cache_dir):
    train, _ = zhou.scan_split("template_around_right", train_size=7, test_size=5, seed=0, cache_dir=cache_dir)
    zero = zhou.augzero(train, 3)
    assert zero.num_rows == 21
    assert zero["commands"][1] == " ".join(w + "_2" for w in train["commands"][0].split())
    tr, te = zhou.star_length_split(4, source=16, num_primitives=10, train_size=30, test_size=10, seed=0,
                                    cache_dir=cache_dir)
    assert max(tr["input_length"]) <= 4 < min(te["input_length"]) and max(te["input_length"]) <= 8
    assert all(len(c.split()) == n for c, n in zip(te["commands"], te["input_length"]))


def test_bad_arguments():
    with pytest.raises(SystemExit):
        zhou.parse_args(["--tables", "2"])
    with pytest.raises(SystemExit):
        zhou.parse_args(["--factors", "1", "20"])  # Table 3 (asked by default) needs 1x and 2x
    with pytest.raises(SystemExit):
        zhou.parse_args(["--tables", "3", "--factors", "1", "2"])  # and a factor above 2
    with pytest.raises(SystemExit):
        zhou.parse_args(["--tables", "1", "--splits", "length"])
    with pytest.raises(SystemExit):
        zhou.parse_args(["--star-lengths", "5", "--star-source", "16"])  # 16 halves to 8, 4, 2, 1
    with pytest.raises(SystemExit):
        zhou.parse_args(["--steps", "0"])
    args = zhou.parse_args(["--paper", "--steps", "7"])
    assert (args.steps, args.d_model, args.layers, args.ffn, args.heads, args.num_beams) == (7, 256, 3, 512, 4, 5)
    assert args.seeds == [0, 1, 2, 3, 4] and args.batch_size == 128 and abs(args.learning_rate - 1.768e-3) < 1e-6


def test_tiny_run_writes_the_tables(tmp_path, cache_dir):
    out = tmp_path / "zhou"
    assert zhou.main(["--tiny", "--out", str(out), "--cache-dir", cache_dir]) == 0
    result = json.loads((out / "results.json").read_text())
    tables = result["tables"]
    t1 = tables["table1"]
    assert t1["columns"] == ["split", "1x", "2x", "20x"]
    assert [r["split"] for r in t1["rows"]] == ["jump", "around_right"]
    t3 = tables["table3"]
    assert [r["dataset"] for r in t3["rows"]] == list(zhou.TABLE3_ROWS)
    # the 1x / 2x / 20x rows of Table 3 are Table 1's around-right runs (shared, same numbers)
    ar = t1["rows"][1]
    assert [r["SCAN (Around Right)"] for r in t3["rows"][:2]] == [ar["1x"], ar["2x"]]
    # each score carries the fit on the model's own training rows (a zero can be read)
    assert all(0.0 <= ar[c]["fit"] <= 100.0 for c in ("1x", "2x", "20x"))
    assert "fit: exact match on 8 rows sampled" in t1["caption"]
    assert t3["rows"][3]["SCAN (Around Right)"] == ar["20x"]
    sizes = [r["train rows"] for r in t3["rows"]]
    assert sizes[0] == 48 and sizes[1] == sizes[2] < sizes[3] and sizes[4] == 3 * 48
    f2 = tables["figure2"]
    assert [r["L"] for r in f2["rows"]] == [2, 4]
    values = [v for t in (t1, t3, f2) for r in t["rows"] for c, v in r.items()
              if c in {"1x", "2x", "20x", "SCAN (Around Right)", "exact match"}]
    assert len(values) == 6 + 5 + 2 and all(0.0 <= v["value"] <= 100.0 for v in values)
    assert "NOT the paper's results" in t1["caption"]
    for name in ("results.md", "table1.md", "table3.png", "figure2.png", "table1.png", "runs.json"):
        assert (out / name).exists(), name
    assert undeclared_outputs(out, zhou.OUTPUTS) == []
    runs = json.loads((out / "runs.json").read_text())
    assert len(runs) == 6 + 2 + 2  # Table 3 reuses Table 1's three around-right runs


def test_any_subset_of_tables_splits_and_factors(tmp_path, cache_dir):
    # "jump, 1x vs 20x" alone (issue 16: --factors had to include 1 and 2 even with --tables 1)
    args = zhou.parse_args(["--tables", "1", "--splits", "jump", "--factors", "1", "20"])
    assert (args.tables, args.splits, args.factors) == (["1"], ["jump"], [1, 20])
    out = tmp_path / "jump"
    # what a previous full run left: its tables go, the user's own files and sub-folders stay
    from harness import clear_outputs

    clear_outputs(out, zhou.OUTPUTS)  # a previous run claimed its names, then wrote:
    for name in ("table3.md", "table3.png", "figure2.json", "results.md", "notes.txt"):
        (out / name).write_text("previous run")
    (out / "checkpoints").mkdir()
    assert zhou.main(["--tiny", "--tables", "1", "--splits", "jump", "--factors", "1", "20", "--out", str(out),
                      "--cache-dir", cache_dir, "--steps", "2"]) == 0
    assert not any((out / n).exists() for n in ("table3.md", "table3.png", "figure2.json"))
    assert (out / "notes.txt").read_text() == "previous run" and (out / "checkpoints").is_dir()
    assert "previous run" not in (out / "results.md").read_text()
    t1 = json.loads((out / "results.json").read_text())["tables"]["table1"]
    assert t1["columns"] == ["split", "1x", "20x"] and [r["split"] for r in t1["rows"]] == ["jump"]
    # the caption names the flags that overrode the preset
    assert "preset --tiny with --factors 1 20 --steps 2" in t1["caption"]
    assert len(json.loads((out / "runs.json").read_text())) == 2


def test_learning_curve_checkpoints(tmp_path, cache_dir):
    # --eval-every: the fit and test exact match at every N steps and at the last step, in runs.json
    # and in a curve table on the results page
    out = tmp_path / "curve"
    assert zhou.main(["--tiny", "--tables", "1", "--splits", "jump", "--factors", "1", "20", "--out", str(out),
                      "--cache-dir", cache_dir, "--eval-every", "3", "--curve-size", "5"]) == 0
    runs = json.loads((out / "runs.json").read_text())
    assert [r["key"] for r in runs] == ["scan/addprim_jump/1x", "scan/addprim_jump/20x"]
    for run in runs:
        assert [p["step"] for p in run["curve"]] == [3, 4]  # every 3 of the 4 steps, and the last
        assert all(p["num_test"] == 5 and 0.0 <= p["test_exact_match"] <= 100.0
                   and 0.0 <= p["train_exact_match"] <= 100.0 for p in run["curve"])
    curve = json.loads((out / "results.json").read_text())["tables"]["curve"]
    assert curve["columns"] == ["run", "seed", "step", "fit", "test exact match"]
    assert [(r["run"][-3:], r["step"]) for r in curve["rows"]] == [("/1x", 3), ("/1x", 4), ("20x", 3), ("20x", 4)]
    assert "Learning curves (every 3 steps)" in (out / "results.md").read_text()
    assert (out / "curve.md").exists()

    # a curve subset as large as the test set scores the same rows as the table at the last step
    out = tmp_path / "whole"
    assert zhou.main(["--tiny", "--tables", "1", "--splits", "jump", "--factors", "20", "--out", str(out),
                      "--cache-dir", cache_dir, "--eval-every", "2", "--curve-size", "100"]) == 0
    (run,) = json.loads((out / "runs.json").read_text())
    assert [p["step"] for p in run["curve"]] == [2, 4]
    assert run["curve"][-1]["num_test"] == run["num_test"] == 12
    assert run["curve"][-1]["test_exact_match"] == run["exact_match"]
    assert run["curve"][-1]["train_exact_match"] == run["train_exact_match"]
    # without the flag there is no curve
    args = zhou.parse_args(["--tiny"])
    assert args.eval_every is None


@pytest.mark.parametrize("flag, value", [("--eval-every", "0"), ("--eval-every", "-5"), ("--curve-size", "0"),
                                         ("--curve-size", "-1")])
def test_bad_curve_flags_name_the_flag(flag, value, capsys):
    with pytest.raises(SystemExit):
        zhou.parse_args(["--tiny", flag, value])
    err = capsys.readouterr().err
    assert f"{flag} must be a positive number" in err and value in err


def test_dev_split_and_checkpoint_selection(cache_dir):
    # the reference's protocol: a seeded 10 % of the test rows chooses the checkpoint, the rest is scored
    _, test = zhou.scan_split("addprim_jump", train_size=20, test_size=50, seed=0, cache_dir=cache_dir)
    shuffled = test.shuffle(seed=3)
    dev, rest = zhou.dev_test_split(shuffled, 0.1, seed=7)
    assert (dev.num_rows, rest.num_rows) == (5, 45)
    assert sorted([*dev["commands"], *rest["commands"]]) == sorted(test["commands"])
    assert list(zhou.dev_test_split(shuffled, 0.1, seed=7)[0]["commands"]) == list(dev["commands"])
    assert zhou.dev_test_split(shuffled, 0.0, seed=7) == (None, shuffled)
    with pytest.raises(ValueError, match="no test rows"):
        zhou.dev_test_split(test.select(range(1)), 0.5, seed=0)

    import torch

    from hf_synthsample.models import build_scratch_model, build_word_tokenizer

    tok = build_word_tokenizer(["walk I_WALK"])
    model = build_scratch_model(tok, d_model=8, d_ff=16, num_layers=1, num_heads=2)
    scorer = zhou.CurveScorer(model, tok, test=rest, fit=None, dev=dev, every=1, last=4, num_beams=1,
                              max_new_tokens=2, batch_size=8)
    dev_scores = iter([10.0, 50.0, 50.0, 20.0])  # best at step 2, tied at 3: no fit rows, the earliest wins
    scorer._score = lambda dataset: next(dev_scores) if dataset is dev else 0.0
    weights = {}

    class State:
        global_step = 0

    for step in (1, 2, 3, 4):
        with torch.no_grad():
            next(model.parameters()).fill_(float(step))  # each checkpoint has its own weights
        weights[step] = next(model.parameters()).clone()
        State.global_step = step
        scorer.on_step_end(None, State, None)
    assert (scorer.best_step, scorer.best_dev) == (2, 50.0)
    assert [p["dev_exact_match"] for p in scorer.points] == [10.0, 50.0, 50.0, 20.0]
    scorer.restore_best()
    assert torch.equal(next(model.parameters()), weights[2])
    # with fit rows, a dev tie goes to the better-fitting checkpoint (dev 0 everywhere: the best fit)
    for devs, fits, chosen in (([10.0, 50.0, 50.0, 20.0], [70.0, 80.0, 95.0, 99.0], 3),
                               ([0.0, 0.0, 0.0, 0.0], [69.0, 96.0, 91.5, 96.0], 2),
                               ([10.0, 50.0, 50.0, 20.0], [70.0, 80.0, 80.0, 99.0], 2)):
        fit_rows = rest.select(range(2))
        scorer = zhou.CurveScorer(model, tok, test=rest, fit=fit_rows, dev=dev, every=1, last=4, num_beams=1,
                                  max_new_tokens=2, batch_size=8)
        dev_iter, fit_iter = iter(devs), iter(fits)
        scorer._score = lambda d: next(dev_iter) if d is dev else next(fit_iter) if d is fit_rows else 0.0
        for step in (1, 2, 3, 4):
            State.global_step = step
            scorer.on_step_end(None, State, None)
        assert (scorer.best_step, scorer.best_dev, scorer.best_fit) == (chosen, devs[chosen - 1], fits[chosen - 1])


@pytest.mark.parametrize("argv, message", [(["--dev-fraction", "1"], "--dev-fraction must be in [0, 1)"),
                                           (["--dev-fraction", "-0.1"], "--dev-fraction must be in [0, 1)"),
                                           (["--dev-fraction", "0.1"], "--dev-fraction needs --eval-every")])
def test_bad_dev_fraction_names_the_flag(argv, message, capsys):
    with pytest.raises(SystemExit):
        zhou.parse_args(["--tiny", *argv])
    assert message in capsys.readouterr().err


def test_jobs_give_the_same_runs(tmp_path, cache_dir):
    # --jobs 2 trains the runs the tables ask for in two processes: same runs, same order, same tables
    common = ["--tiny", "--tables", "1", "--splits", "jump", "--factors", "1", "20", "--steps", "2",
              "--cache-dir", cache_dir]
    results = {}
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        assert zhou.main([*common, "--jobs", str(jobs), "--out", str(out)]) == 0
        runs = json.loads((out / "runs.json").read_text())
        results[jobs] = ([{k: v for k, v in r.items() if "seconds" not in k} for r in runs],
                         json.loads((out / "results.json").read_text())["tables"]["table1"]["rows"])
    assert [r["key"] for r in results[2][0]] == ["scan/addprim_jump/1x", "scan/addprim_jump/20x"]
    assert results[1] == results[2]
    with pytest.raises(SystemExit):
        zhou.parse_args(["--jobs", "0"])


def test_error_profile_by_hand():
    refs = ["I_JUMP I_JUMP", "I_TURN_LEFT I_JUMP", "I_JUMP I_WALK", "I_JUMP I_JUMP I_JUMP", "I_RUN"]
    preds = ["I_JUMP I_JUMP", "I_TURN_LEFT I_LOOK_3", "I_LOOK_3 I_WALK", "I_JUMP", "I_RUN I_RUN"]
    profile = zhou.error_profile(preds, refs)
    assert {k: profile[k] for k in ("exact", "substituted", "stopped_early", "other")} == {
        "exact": 1, "substituted": 2, "stopped_early": 1, "other": 1}
    assert profile["top_substitutions"] == [["I_JUMP -> I_LOOK_3", 2]]
    with pytest.raises(ValueError, match="same length"):
        zhou.error_profile(["a"], [])


def test_cpu_presets_for_around_right_table3_and_figure2(capsys):
    # the around-right row of Table 1 is the --cpu model and budget on the other split
    cpu = zhou.parse_args(["--cpu"])
    ar = zhou.parse_args(["--cpu", "--splits", "around_right"])
    assert (ar.tables, ar.splits, ar.factors) == (["1"], ["around_right"], [1, 20])
    same = ("steps", "batch_size", "learning_rate", "d_model", "layers", "ffn", "heads", "dropout", "arch",
            "dev_fraction", "eval_every", "sanity_size", "train_size", "test_size")
    assert all(getattr(ar, k) == getattr(cpu, k) for k in same) and ar.overrides == {"splits": ["around_right"]}
    # Table 3: the same model, around right, 1x / 2x / 20x (and 20x down to 2x's size) / AugZero k=20
    t3 = zhou.parse_args(["--cpu-table3"])
    assert (t3.tables, t3.splits, t3.factors, t3.augzero_k) == (["3"], ["around_right"], [1, 2, 20], 20)
    assert all(getattr(t3, k) == getattr(cpu, k) for k in same) and t3.overrides == {}
    # Figure 2: T5 (relative positions: BART's absolute ones are untrained past the training lengths)
    f2 = zhou.parse_args(["--cpu-fig2"])
    assert (f2.tables, f2.arch, f2.star_lengths, f2.star_source, f2.star_primitives) == (["fig2"], "t5", [4, 8, 16],
                                                                                           16, 50)
    assert (f2.d_model, f2.layers, f2.star_train, f2.star_test, f2.dev_fraction) == (128, 3, 1000, 200, 0.1)
    assert (f2.steps, f2.learning_rate) == (10_000, 1e-3)  # the recorded run's: L = 16 fits only after ~9,000 steps
    for argv in (["--cpu", "--cpu-fig2"], ["--cpu-table3", "--paper"]):  # one preset at a time
        with pytest.raises(SystemExit):
            zhou.parse_args(argv)
        assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # Table 3 still needs 1x, 2x and a larger factor
        zhou.parse_args(["--cpu-table3", "--factors", "1", "20"])
    assert "--factors must include 1, 2 and a factor above 2" in capsys.readouterr().err


# the presets' own data and tables at toy sizes (each a few seconds): model, steps and sizes overridden
_TOY_MODEL = ["--d-model", "16", "--layers", "1", "--ffn", "32", "--heads", "2", "--steps", "2", "--eval-every", "1",
              "--sanity-size", "8", "--curve-size", "5", "--batch-size", "8"]


def test_cpu_table3_preset_runs_at_toy_size(tmp_path, cache_dir):
    out = tmp_path / "t3"
    assert zhou.main(["--cpu-table3", *_TOY_MODEL, "--train-size", "30", "--test-size", "20", "--augzero-k", "3",
                      "--out", str(out), "--cache-dir", cache_dir]) == 0
    tables = json.loads((out / "results.json").read_text())["tables"]
    assert set(tables) == {"table3", "curve"}
    t3 = tables["table3"]
    assert [r["dataset"] for r in t3["rows"]] == list(zhou.TABLE3_ROWS)
    assert t3["caption"].startswith("Exact match (%)") and "preset --cpu-table3 with" in t3["caption"]
    assert "CPU-scale settings" in t3["caption"] and "AugZero k=3" in t3["caption"]
    assert all(0.0 <= r["SCAN (Around Right)"]["fit"] <= 100.0 for r in t3["rows"])
    sizes = [r["train rows"] for r in t3["rows"]]
    assert sizes[0] == 30 and sizes[1] == sizes[2] < sizes[3] and sizes[4] == 90
    runs = json.loads((out / "runs.json").read_text())
    assert [r["key"].split("/")[-1] for r in runs] == ["1x", "2x", "20x-down-to-2x", "20x", "augzero-3"]
    assert all(r["num_dev"] == 2 and r["selected_step"] in (1, 2) for r in runs)  # the dev set chose each
    # some rows only (in table order, whatever order they are named in): the same runs, the same scores
    some = tmp_path / "t3-some"
    assert zhou.main(["--cpu-table3", *_TOY_MODEL, "--train-size", "30", "--test-size", "20", "--augzero-k", "3",
                      "--table3-rows", "augzero", "2x", "--out", str(some), "--cache-dir", cache_dir]) == 0
    rows = json.loads((some / "results.json").read_text())["tables"]["table3"]["rows"]
    assert [r["dataset"] for r in rows] == ["2x Augmentation", "+ AugZero"]
    assert rows == [t3["rows"][1], t3["rows"][4]]


def test_table3_rows_are_named_once_from_the_accepted_names(capsys):
    assert zhou.parse_args(["--cpu-table3"]).table3_rows == list(zhou.TABLE3_ROWS)
    for bad, said in ((["2x", "2x"], "each row once"), (["3x"], "invalid choice")):
        with pytest.raises(SystemExit):
            zhou.parse_args(["--cpu-table3", "--table3-rows", *bad])
        err = capsys.readouterr().err
        assert "--table3-rows" in err and said in err


def test_cpu_fig2_preset_runs_at_toy_size(tmp_path, cache_dir):
    out = tmp_path / "f2"
    assert zhou.main(["--cpu-fig2", *_TOY_MODEL, "--star-lengths", "2", "4", "--star-source", "4",
                      "--star-primitives", "10", "--star-train", "40", "--star-test", "20", "--out", str(out),
                      "--cache-dir", cache_dir]) == 0
    tables = json.loads((out / "results.json").read_text())["tables"]
    assert set(tables) == {"figure2", "curve"}
    f2 = tables["figure2"]
    assert [(r["L"], r["test lengths"]) for r in f2["rows"]] == [(2, "3-4"), (4, "5-8")]
    assert "preset --cpu-fig2 with" in f2["caption"] and "T5 from scratch" in f2["caption"]
    assert all(0.0 <= r["exact match"]["fit"] <= 100.0 for r in f2["rows"])
    runs = json.loads((out / "runs.json").read_text())
    assert [r["key"] for r in runs] == ["scan_star/L2", "scan_star/L4"] and all(r["num_dev"] == 2 for r in runs)


def test_a_users_own_results_file_stops_the_run_before_work(tmp_path, cache_dir, capsys):
    """--out holding the user's own results.md: an error naming --out, nothing removed or written."""
    out = tmp_path / "mine"
    out.mkdir()
    (out / "results.md").write_text("my notes")
    with pytest.raises(SystemExit) as stop:  # a parse error: before anything is cleared or built
        zhou.main(["--tiny", "--out", str(out), "--cache-dir", cache_dir, "--steps", "2"])
    assert stop.value.code == 2
    assert re.search(r"--out: .*results\.md was not written by an hf-synthsample run", capsys.readouterr().err)
    assert sorted(p.name for p in out.iterdir()) == ["results.md"]
    assert (out / "results.md").read_text() == "my notes"


def test_gpu_preset_is_figure2_past_the_cpu_lengths_and_runs_at_toy_size(tmp_path, cache_dir):
    g = zhou.parse_args(["--gpu"])
    # Figure 2 where the paper's curve rises (L >= 31), with the paper's T5 and 200 primitives
    assert (g.tables, g.arch, g.star_lengths, g.star_source, g.star_primitives) == (["fig2"], "t5", [31, 62], 62, 200)
    assert (g.d_model, g.layers, g.ffn, g.heads, g.batch_size, g.steps) == (256, 3, 512, 4, 128, 2_500)
    assert (g.dev_fraction, g.eval_every, g.curve_size, g.eval_batch_size) == (0.1, 500, 100, 256)
    out = tmp_path / "gpu"
    assert zhou.main(["--gpu", *_TOY_MODEL, "--star-lengths", "2", "4", "--star-source", "4", "--star-primitives", "10",
                      "--star-train", "40", "--star-test", "20", "--eval-batch-size", "8", "--out", str(out),
                      "--cache-dir", cache_dir]) == 0
    f2 = json.loads((out / "results.json").read_text())["tables"]["figure2"]
    assert [r["L"] for r in f2["rows"]] == [2, 4] and "preset --gpu with" in f2["caption"]
    assert "sized for one H100" in f2["caption"] and all(0 <= r["exact match"]["fit"] <= 100 for r in f2["rows"])


@pytest.mark.parametrize("argv, flag", [
    (["--learning-rate", "nan"], "--learning-rate"), (["--learning-rate", "-1e-3"], "--learning-rate"),
    (["--learning-rate", "inf"], "--learning-rate"), (["--scheduler", "bogus"], "--scheduler"),
    (["--dropout", "2"], "--dropout"), (["--dropout", "-0.1"], "--dropout"), (["--eval-batch-size", "0"], "--eval-batch-size"),
    (["--threads", "0"], "--threads"), (["--seed", "-1"], "--seeds"), (["--seeds", "1", "1"], "--seeds: distinct"),
    (["--steps", "nan"], "--steps")])
def test_bad_options_name_the_flag_before_any_work(tmp_path, capsys, argv, flag):
    with pytest.raises(SystemExit) as err:
        zhou.main(["--tiny", *argv, "--out", str(tmp_path / "o")])
    assert err.value.code == 2 and flag in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_an_out_that_is_a_file_is_refused_before_any_work(tmp_path, capsys):
    (tmp_path / "f").write_text("mine")
    with pytest.raises(SystemExit):
        zhou.main(["--tiny", "--out", str(tmp_path / "f")])
    assert "--out" in capsys.readouterr().err and (tmp_path / "f").read_text() == "mine"


def test_run_gpu_preset_script_writes_a_citable_results_folder(tmp_path, cache_dir):
    """benchmarks/run_gpu_preset.sh: the preset under `timeout`, its tables, log, machine and command in a dated
    folder; a run stopped by the timeout says so (exit 124)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, RESULTS=str(tmp_path / "results"), PYTHON=sys.executable)
    toy = [*_TOY_MODEL, "--star-lengths", "2", "--star-source", "4", "--star-primitives", "10", "--star-train", "40",
           "--star-test", "20", "--eval-batch-size", "8", "--cache-dir", cache_dir]
    script = str(REPO / "benchmarks" / "run_gpu_preset.sh")
    done = subprocess.run([script, "zhou", *toy], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    (folder,) = (tmp_path / "results").iterdir()
    assert folder.name.startswith("zhou_scan-gpu-")
    readme = (folder / "README.md").read_text()
    assert readme.startswith("# `zhou_scan --gpu`: finished") and "examples/zhou_scan.py --gpu --out" in readme
    assert "Figure 2: SCAN* length generalization" in readme and "preset --gpu with" in readme
    assert {"results.md", "figure2.json", "runs.json", "log.txt", "machine.txt"} <= {p.name for p in folder.iterdir()}
    stopped = subprocess.run([script, "zhou", *toy], env=dict(env, GPU_TIMEOUT="1"), capture_output=True, text=True)
    assert stopped.returncode == 124
    newest = max((tmp_path / "results").iterdir(), key=lambda p: p.name)
    assert "STOPPED by the 1-second timeout" in (newest / "README.md").read_text()
    bad = subprocess.run([script, "nosuch"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown example 'nosuch' (zhou, karel, cogs or oren)" in bad.stderr
    bad = subprocess.run([script, "zhou"], env=dict(env, PRESET="gpu; rm"), capture_output=True, text=True)
    assert bad.returncode == 2 and "PRESET must be a preset name" in bad.stderr
