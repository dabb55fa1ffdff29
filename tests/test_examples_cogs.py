"""examples/cartography_cogs.py end to end at --tiny scale (seconds): tables, plots, bad input."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO_ROOT, shared_data, undeclared_outputs

sys.path.insert(0, str(REPO_ROOT / "examples"))

SCORES = ["dev", "test", "gen", "dev BLEU", "test BLEU", "gen BLEU"]


def _cogs():
    return {split: str(shared_data("cogs", f"{split}.tsv")) for split in ("train", "dev", "test")}


def test_tiny_run_writes_the_paper_tables(tmp_path):
    import cartography_cogs

    paths = _cogs()
    out = tmp_path / "run"
    # dev.tsv stands in for the generalization set (absent from the shared copy) to exercise the gen column
    rc = cartography_cogs.main(["--tiny", "--out", str(out), "--train", paths["train"], "--dev", paths["dev"],
                                "--test", paths["test"], "--gen", paths["dev"]])
    assert rc == 0
    assert undeclared_outputs(out, cartography_cogs.OUTPUTS) == []  # a re-run clears every result file
    results = json.loads((out / "results.json").read_text())
    assert results["settings"]["preset"] == "tiny"
    tables = results["tables"]
    assert list(tables) == ["table2", "table3", "curricula"]
    n = results["settings"]["num_train"]
    for name, pct in (("table2", "33%"), ("table3", "50%")):
        t = tables[name]
        assert t["columns"] == ["subset", "size", "repaired", *SCORES]
        assert [r["subset"] for r in t["rows"]] == [f"{pct} {r}" for r in
                                                     ("easy-to-learn", "ambiguous", "hard-to-learn", "random")] + [
                                                        "100% training"]
        frac = 0.33 if pct == "33%" else 0.5
        for row in t["rows"][:-1]:
            assert row["size"] == max(1, int(frac * n + 0.5))  # every subset has exactly the fraction's size
            assert row["repaired"] in ("yes", "no")
        assert t["rows"][-1]["size"] == n
        for row in t["rows"]:
            for col in SCORES:
                assert 0.0 <= row[col]["value"] <= 100.0
            # each exact match carries the fit of the same model on its own training rows
            assert all(0.0 <= row[col]["fit"] <= 100.0 for col in ("dev", "test", "gen"))
        assert "NOT the paper's numbers" in t["caption"] and "fit: exact match on 8 rows" in t["caption"]
    # the same model trained on the full pool: one run, reported in both tables and as "no curriculum"
    assert tables["table2"]["rows"][-1] == tables["table3"]["rows"][-1]
    cur = tables["curricula"]
    assert cur["columns"] == ["curriculum", "order", *SCORES]
    assert [(r["curriculum"].split()[0], r["order"]) for r in cur["rows"]] == [
        ("none", "uniform random"), ("exponential", "hard-to-easy"), ("10", "hard-to-easy")]
    assert {k: cur["rows"][0][k] for k in SCORES} == {k: tables["table2"]["rows"][-1][k] for k in SCORES}
    for row in cur["rows"]:
        assert all(0.0 <= row[c]["value"] <= 100.0 for c in SCORES)
    md = (out / "results.md").read_text()
    assert "Table 2 layout" in md and "Table 3 layout" in md and "Curricula" in md
    for png in ("datamap.png", "table2.png", "table3.png", "curricula.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the data map covers every training row, over the window the settings asked for
    assert "48 examples" in (out / "datamap.txt").read_text()


def test_tiny_run_on_a_scan_split_with_seeds(tmp_path):
    """COGS gen is not available offline: the subsets run on a SCAN split whose OOD test exists here."""
    import cartography_cogs

    out = tmp_path / "scan"
    rc = cartography_cogs.main(["--tiny", "--data", "scan:addprim_jump", "--num-train", "60", "--num-eval", "10",
                                "--out", str(out), "--seeds", "0", "1", "--regions", "hard-to-learn,random",
                                "--fractions", "0.5", "--no-full", "--no-curricula", "--cache-dir", str(tmp_path / "c")])
    assert rc == 0
    results = json.loads((out / "results.json").read_text())
    t = results["tables"]["table3"]
    assert t["columns"] == ["subset", "size", "repaired", "iid", "ood", "iid BLEU", "ood BLEU"]
    assert [r["subset"] for r in t["rows"]] == ["50% hard-to-learn", "50% random"]
    for row in t["rows"]:
        assert row["size"] == 30 and len(row["ood"]["values"]) == 2 and "sd" in row["ood"]
    runs = json.loads((out / "runs.json").read_text())
    assert [(r["run"], r["seed"]) for r in runs] == [("50%-hard-to-learn", 0), ("50%-hard-to-learn", 1),
                                                    ("50%-random", 0), ("50%-random", 1)]
    assert all(r["rows"] == 30 and r["ood distinct outputs"] >= 1 for r in runs)
    assert "SCAN addprim_jump" in t["caption"] and "--data scan:addprim_jump" in t["caption"]


def test_scan_pool_and_id_based_rows(tmp_path):
    import cartography_cogs

    train, evals = cartography_cogs.read_scan("addprim_jump", num_train=50, num_eval=10, seed=0,
                                              cache_dir=str(tmp_path))
    assert (len(train), len(evals["iid"]), len(evals["ood"])) == (50, 10, 10)
    # the i.i.d. rows are held out of the pool; the OOD rows all hold the held-out primitive in context
    # (SCAN's jump train split repeats the bare "jump" row 1,467 times: the only row both can hold)
    pairs = lambda d: set(zip(d["source"], d["target"]))  # noqa: E731
    assert pairs(train) & pairs(evals["iid"]) <= {("jump", "I_JUMP")}
    assert all("jump" in s.split() and s != "jump" for s in evals["ood"]["source"])
    a = cartography_cogs.parse_args(["--tiny", "--data", "scan:addprim_jump", "--num-train", "50", "--num-eval", "10",
                                     "--cache-dir", str(tmp_path)])
    exp = cartography_cogs.Experiment(a)
    import pyarrow as pa

    from hf_synthsample.cartography import DataMap

    n = len(exp.train)
    dm = DataMap.from_dynamics(pa.table({"example_id": list(range(n)), "epoch": [0] * n, "inv_ppl": [0.5] * n,
                                         "correct": [True] * n}))
    # rows are found by example id (the data map's key), whatever order the ids or the rows come in
    by_id = dict(zip(exp.train["example_id"], exp.train["source"]))
    exp.train = exp.train.shuffle(seed=3)
    rows = exp.rows(dm, [7, 3])
    assert rows["example_id"] == [7, 3] and rows["source"] == [by_id[7], by_id[3]]


def test_missing_data_is_a_clear_error(tmp_path, capsys):
    import cartography_cogs

    for argv, named in ((["--train", str(tmp_path / "nope.tsv")], "--train"),
                        (["--data-dir", str(tmp_path / "no-such-folder")], "--data-dir"),
                        (["--gen", str(tmp_path / "gen.tsv")], "--gen")):
        with pytest.raises(SystemExit) as err:
            cartography_cogs.main(["--tiny", "--out", str(tmp_path / "out"), *argv])
        assert err.value.code == 2
        message = capsys.readouterr().err
        assert named in message and "github.com/najoungkim/COGS" in message, message
    assert not (tmp_path / "out").exists()          # refused before any work


def test_bad_settings_fail_before_any_work(tmp_path):
    import cartography_cogs

    with pytest.raises(SystemExit):
        cartography_cogs.main(["--tiny", "--fractions", "0.33,1.5"])
    with pytest.raises(SystemExit):
        cartography_cogs.main(["--tiny", "--min-epoch", "3"])  # the tiny map run has 3 epochs (0..2)
    with pytest.raises(SystemExit):
        cartography_cogs.main(["--tiny", "--data", "scan:nope"])
    with pytest.raises(SystemExit):
        cartography_cogs.main(["--tiny", "--regions", "hard"])
    with pytest.raises(SystemExit):
        cartography_cogs.main(["--tiny", "--no-full"])  # the curricula need the 100% run


def test_read_cogs_rejects_a_line_without_a_target(tmp_path):
    import cartography_cogs

    bad = tmp_path / "bad.tsv"
    bad.write_text("A frog hopped .\n")
    with pytest.raises(ValueError, match="bad.tsv:1"):
        cartography_cogs.read_cogs(str(bad))


def test_cpu_preset_on_cogs_gen_at_tiny_scale(tmp_path):
    """--cpu (Table 2 layout on COGS gen, fit-based stopping, per-category gen accuracy, --jobs) at seconds' scale."""
    import cartography_cogs

    data = shared_data("cogs", "gen.tsv").parent
    out = tmp_path / "cpu"
    rc = cartography_cogs.main(["--cpu", "--data-dir", str(data), "--out", str(out), "--num-train", "200",
                                "--num-eval", "4", "--gen-per-category", "1", "--d-model", "16", "--ffn", "32",
                                "--layers", "1", "--heads", "2", "--map-epochs", "2", "--min-epoch", "0", "--steps", "4",
                                "--eval-every", "2", "--fit-size", "4", "--max-new-tokens", "16", "--seeds", "0", "1",
                                "--restart-after", "2", "--jobs", "2", "--map-fit-target", "0"])
    assert rc == 0
    assert undeclared_outputs(out, cartography_cogs.OUTPUTS) == []
    results = json.loads((out / "results.json").read_text())
    assert results["settings"]["preset"] == "cpu" and results["settings"]["fit_target"] == 90.0
    # the subset runs at a constant 1.5e-3 (a late learner keeps a lr that generalizes), the map at 3e-3
    assert [results["settings"][k] for k in ("lr", "lr_schedule", "map_lr")] == [1.5e-3, "constant", 3e-3]
    assert list(results["tables"]) == ["table2", "categories"]       # 33 % only, then gen per category
    t = results["tables"]["table2"]
    assert t["columns"] == ["subset", "size", "repaired", *SCORES, "steps"]
    assert [r["subset"] for r in t["rows"]] == ["33% hard-to-learn", "33% random", "100% training"]
    for row in t["rows"]:
        assert 1 <= row["steps"]["value"] <= 4 and len(row["gen"]["values"]) == 2
        assert 0.0 <= row["gen"]["fit"] <= 100.0
    runs = json.loads((out / "runs.json").read_text())
    # the runs come back in the order the tables ask for, whichever worker trained them
    assert [(r["run"], r["seed"]) for r in runs] == [("full", 0), ("full", 1), ("33%-hard-to-learn", 0),
                                                    ("33%-hard-to-learn", 1), ("33%-random", 0), ("33%-random", 1)]
    for r in runs:
        # stopped at the fit target or at the step cap, checked every 2 steps and at the last one
        assert r["steps"] == r["fit_curve"][-1][0] and (r["fit_target_reached"] or r["steps"] == 4)
        # a run under 10 % fit at step 2 started again from another init (at most twice); the last attempt
        # trains to the cap; every abandoned attempt is kept
        assert r["init_seed"] == r["seed"] + 1000 * len(r["abandoned_inits"]) and len(r["abandoned_inits"]) <= 2
        for k, gone in enumerate(r["abandoned_inits"]):
            assert gone["init_seed"] == r["seed"] + 1000 * k and gone["steps"] == 2 and gone["fit_curve"][-1][1] < 10
        if len(r["abandoned_inits"]) < 2:
            assert r["fit_curve"][0][1] >= 10 or r["steps"] < 2
        assert len(r["gen categories"]) == 21 and r["cpu_seconds"] > 0
    cats = results["tables"]["categories"]
    assert cats["columns"] == ["category", "100% training", "33% hard-to-learn", "33% random"]
    assert len(cats["rows"]) == 22 and cats["rows"][-1]["category"] == "all (sampled gen rows)"
    assert "gen 21 (1 of each of its 21 categories)" in t["caption"] and "primitive and exposure rows" in t["caption"]
    assert "data-map model: 2 epochs" in (out / "datamap.txt").read_text()
    assert "CPU time" in (out / "results.md").read_text()
    partial = [json.loads(line) for line in (out / "runs.partial.jsonl").read_text().splitlines()]
    assert sorted((r["run"], r["seed"]) for r in partial) == sorted((r["run"], r["seed"]) for r in runs)


def test_cogs_samples_keep_exposure_rows_and_stratify_gen():
    import cartography_cogs

    train = cartography_cogs.read_cogs(str(shared_data("cogs", "train.tsv")), 300, seed=1, keep_exposure=True)
    cats = train["category"]
    assert len(train) == 300 and sum(c != "in_distribution" for c in cats) == 155   # 143 primitives + 12 exposures
    gen = cartography_cogs.read_cogs(str(shared_data("cogs", "gen.tsv")), seed=1, per_category=3)
    assert len(gen) == 63 and all(gen["category"].count(c) == 3 for c in set(gen["category"]))
    with pytest.raises(ValueError, match="--num-train 100: the 155 primitive/exposure rows"):
        cartography_cogs.read_cogs(str(shared_data("cogs", "train.tsv")), 100, keep_exposure=True)


def test_fit_target_and_jobs_are_checked_before_any_work(tmp_path, capsys):
    import cartography_cogs

    for argv, named in ((["--fit-target", "120"], "--fit-target"), (["--jobs", "0"], "--jobs"),
                        (["--fit-target", "90", "--eval-every", "0"], "--eval-every"),
                        (["--restart-below", "5"], "--restart-below 5 needs --fit-target"),
                        (["--fit-target", "90", "--eval-every", "2", "--fit-size", "4", "--restart-below", "95",
                          "--max-restarts", "1", "--restart-after", "2"], "--restart-below must be"),
                        (["--fit-target", "90", "--eval-every", "2", "--fit-size", "4", "--restart-below", "5",
                          "--max-restarts", "1", "--restart-after", "99999"], "--restart-after must be"),
                        (["--fit-target", "90", "--eval-every", "2", "--fit-size", "4", "--restart-below", "5",
                          "--restart-after", "2"], "--max-restarts >= 1")):
        with pytest.raises(SystemExit):
            cartography_cogs.parse_args(["--tiny", "--out", str(tmp_path / "o"), *argv])
        assert named in capsys.readouterr().err
    # --cpu trained for a fixed number of steps: the preset's restart (which reads fit checks) is off, not an error
    for name in ("train", "dev", "test"):
        (tmp_path / f"{name}.tsv").write_text("a\tb\tin_distribution\n")
    a = cartography_cogs.parse_args(["--cpu", "--data-dir", str(tmp_path), "--fit-target", "0", "--steps", "2500",
                                     "--out", str(tmp_path / "o")])
    assert (a.fit_target, a.restart_below, a.steps) == (0.0, 0.0, 2500)


def test_cpu_scan_keeps_the_scan_preset_of_the_recorded_result():
    """The SCAN around-right result in docs/reproductions.md was run with these settings (then --cpu)."""
    import cartography_cogs

    a = cartography_cogs.parse_args(["--cpu-scan"])
    assert (a.data, a.num_train, a.num_eval, a.d_model, a.steps, a.lr, a.map_epochs, a.fractions, a.full,
            a.fit_target, a.keep_exposure) == ("scan:template_around_right", 6000, 500, 64, 1500, 1e-3, 4, (0.33, 0.5),
                                               False, 0.0, False)
    assert a.regions == ("hard-to-learn", "random") and a.seeds == [0, 1, 2] and a.overrides == {}


def test_cpu_keeps_the_settings_of_the_recorded_cogs_gen_result(tmp_path):
    """The COGS gen rows of docs/reproductions.md were run with these settings (4,000-row pool)."""
    import cartography_cogs

    for name in ("train", "dev", "test"):
        (tmp_path / f"{name}.tsv").write_text("a\tb\tin_distribution\n")
    a = cartography_cogs.parse_args(["--cpu", "--data-dir", str(tmp_path)])
    assert (a.data, a.num_train, a.num_eval, a.d_model, a.layers, a.steps, a.lr, a.lr_schedule, a.map_lr,
            a.map_epochs, a.min_epoch, a.fractions, a.full, a.fit_target, a.keep_exposure, a.gen_per_category) == (
        "cogs", 4000, 100, 64, 2, 5000, 1.5e-3, "constant", 3e-3, 30, 1, (0.33,), True, 90.0, True, 40)
    assert a.regions == ("hard-to-learn", "random") and a.seeds == [0, 1, 2] and a.overrides == {}


def test_data_seed_keeps_the_pool_and_map_of_another_run():
    import cartography_cogs

    data = ["--data-dir", str(shared_data("cogs", "train.tsv").parent)]
    a = cartography_cogs.parse_args(["--cpu", *data, "--seeds", "2", "--data-seed", "0"])
    assert a.seeds == [2] and a.seed == 0   # subset runs at seed 2, pool / evaluation rows / data map at seed 0
    assert cartography_cogs.parse_args(["--cpu", *data, "--seeds", "1", "2"]).seed == 1


def test_lr_schedule_reaches_the_subset_runs_not_the_map(tmp_path, monkeypatch):
    """--lr-schedule constant / --lr: every subset run's Trainer gets a constant lr after the warm-up; the
    data map keeps its own (linear) schedule and --map-lr, so the map does not change with the options."""
    import cartography_cogs

    seen = []
    fit = cartography_cogs.Experiment.fit

    def spy(self, dataset, name, **kwargs):
        trainer = fit(self, dataset, name, **kwargs)
        seen.append((name, trainer.args.lr_scheduler_type.value, trainer.args.learning_rate))
        return trainer

    monkeypatch.setattr(cartography_cogs.Experiment, "fit", spy)
    paths = _cogs()
    out = tmp_path / "out"
    rc = cartography_cogs.main(["--tiny", "--out", str(out), "--train", paths["train"], "--dev", paths["dev"],
                                "--test", paths["test"], "--no-curricula", "--fractions", "0.5",
                                "--lr-schedule", "constant", "--lr", "0.002", "--map-lr", "0.003"])
    assert rc == 0
    assert seen[0] == ("datamap", "linear", 0.003)
    assert len(seen) > 1 and set(seen[1:]) == {(name, "constant_with_warmup", 0.002) for name, *_ in seen[1:]}
    assert "then constant; the map run: 0.003, linear" in (out / "results.md").read_text()
    for bad in (["--lr-schedule", "cosine"], ["--map-lr", "0"]):
        with pytest.raises(SystemExit):
            cartography_cogs.main(["--tiny", *bad])


def _tiny_cogs(out, *argv):
    paths = _cogs()
    return ["--tiny", "--out", str(out), "--train", paths["train"], "--dev", paths["dev"], "--test", paths["test"],
            "--no-curricula", "--fractions", "0.5", "--regions", "hard-to-learn", "--no-full", *argv]


def test_a_map_model_under_its_fit_target_restarts_then_stops_with_a_message(tmp_path, capsys):
    """The map model is held to --map-fit-target: another init, then a clear stop; never a silent map."""
    import cartography_cogs

    out = tmp_path / "out"
    assert cartography_cogs.main(_tiny_cogs(out, "--map-fit-target", "50", "--max-restarts", "1")) == 1
    err = capsys.readouterr().err
    assert "the data-map model fitted 0.0 %" in err and "--map-fit-target 50" in err and "2 init(s)" in err
    assert (out / "runs" / "datamap").is_dir() and (out / "runs" / "datamap-init1000").is_dir()
    assert not (out / "results.md").exists() and not (out / "datamap.png").exists()  # no map, no subset


def test_a_restarted_map_model_is_reported_beside_every_table(tmp_path, monkeypatch):
    import cartography_cogs

    calls = []  # the first map init learns nothing (0 %); every later fit is 100 %

    def fit_exact_match(self, model, rows):
        calls.append(len(rows))
        return 0.0 if len(calls) == 1 else 100.0

    monkeypatch.setattr(cartography_cogs.Experiment, "fit_exact_match", fit_exact_match)
    out = tmp_path / "out"
    assert cartography_cogs.main(_tiny_cogs(out, "--map-fit-target", "50", "--max-restarts", "2")) == 0
    results = json.loads((out / "results.json").read_text())
    model = results["datamap_model"]
    assert (model["init_seed"], model["fit"], model["fit_target"]) == (1000, 100.0, 50.0)
    assert [(m["init_seed"], m["fit"]) for m in model["abandoned_inits"]] == [(0, 0.0)]
    for table in results["tables"].values():  # the map model's fit under every table
        assert "data-map model: 3 epochs" in table["caption"] and "fit (exact match on 8 of its rows) 100.0 %" in \
            table["caption"] and "after 1 restart(s)" in table["caption"]


def test_gpu_preset_is_the_papers_model_size_and_runs_at_toy_size(tmp_path):
    import cartography_cogs

    data = shared_data("cogs", "gen.tsv").parent
    g = cartography_cogs.parse_args(["--gpu", "--data-dir", str(data)])
    assert (g.d_model, g.ffn, g.heads, g.layers) == (512, 512, 4, 2)  # Csordas et al.'s COGS Transformer
    assert (g.num_train, g.fit_target, g.map_fit_target, g.seeds, g.regions, g.full) == (
        4000, 90.0, 50.0, [0], ("hard-to-learn", "random"), True)
    out = tmp_path / "gpu"
    assert cartography_cogs.main(["--gpu", "--data-dir", str(data), "--out", str(out), "--num-train", "200",
                                  "--num-eval", "4", "--gen-per-category", "1", "--d-model", "16", "--ffn", "32",
                                  "--layers", "1", "--heads", "2", "--map-epochs", "2", "--min-epoch", "0",
                                  "--steps", "4", "--eval-every", "2", "--fit-size", "4", "--max-new-tokens", "16",
                                  "--restart-after", "2", "--max-restarts", "1", "--map-fit-target", "0"]) == 0
    t = json.loads((out / "results.json").read_text())["tables"]["table2"]
    assert [r["subset"] for r in t["rows"]] == ["33% hard-to-learn", "33% random", "100% training"]
    assert "preset --gpu with" in t["caption"] and "the paper's model size" in t["caption"]


@pytest.mark.parametrize("argv, named", [
    (["--lr", "nan"], "--lr"), (["--lr", "-0.001"], "--lr"), (["--map-lr", "inf"], "--map-lr"),
    (["--lr-schedule", "bogus"], "--lr-schedule"), (["--map-fit-target", "120"], "--map-fit-target"),
    (["--map-fit-target", "50", "--fit-size", "0"], "--map-fit-target"), (["--threads", "0"], "--threads"),
    (["--fractions", "a,b"], "--fractions")])
def test_bad_options_name_the_flag_before_any_work(tmp_path, capsys, argv, named):
    import cartography_cogs

    with pytest.raises(SystemExit) as err:
        cartography_cogs.main(["--tiny", "--out", str(tmp_path / "o"), *argv])
    assert err.value.code == 2 and named in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_an_out_that_is_a_file_and_jobs_on_a_gpu_are_refused(tmp_path, capsys, monkeypatch):
    import cartography_cogs

    (tmp_path / "f").write_text("mine")
    with pytest.raises(SystemExit):
        cartography_cogs.main(["--tiny", "--out", str(tmp_path / "f")])
    assert "--out" in capsys.readouterr().err and (tmp_path / "f").read_text() == "mine"
    monkeypatch.setattr(cartography_cogs, "cuda_available", lambda: True)  # forked workers cannot use CUDA again
    with pytest.raises(SystemExit):
        cartography_cogs.parse_args(["--tiny", "--data", "scan:simple", "--jobs", "2", "--out", str(tmp_path / "o")])
    assert "--jobs 2" in capsys.readouterr().err
