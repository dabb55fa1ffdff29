"""The data-map recipe of examples/cartography_cogs.py (issue 48): the --cpu preset's map values, the fit check
on known outputs, the collapse check, and the stop with a message after the last init (never an endless loop,
never a map from a model that learnt nothing). Tiny synthetic COGS-like files: offline, seconds."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest
from conftest import REPO_ROOT

pytest.importorskip("transformers")
sys.path.insert(0, str(REPO_ROOT / "examples"))

NOUNS = ["cat", "dog", "girl", "boy", "cake", "box"]
VERBS = ["slept", "smiled", "ran", "jumped"]


def _rows():
    """COGS-shaped rows: 'A cat slept .' -> 'cat ( x _ 1 ) AND sleep . agent ( x _ 2 , x _ 1 )'."""
    rows = []
    for n in NOUNS:
        for v in VERBS:
            rows.append((f"A {n} {v} .", f"{n} ( x _ 1 ) AND {v} . agent ( x _ 2 , x _ 1 )", "in_distribution"))
    rows.append(("The cat gave the dog a cake .", "* cat ( x _ 1 ) ; * dog ( x _ 4 ) ; give . agent ( x _ 2 , x _ 1 ) "
                 "AND give . recipient ( x _ 2 , x _ 4 ) AND give . theme ( x _ 2 , x _ 6 ) AND cake ( x _ 6 )",
                 "primitive"))
    return rows


def _data(tmp_path):
    folder = tmp_path / "cogs"
    folder.mkdir(exist_ok=True)
    text = "".join("\t".join(r) + "\n" for r in _rows())
    for split in ("train", "dev", "test"):
        (folder / f"{split}.tsv").write_text(text)
    return folder


def _tiny(tmp_path, *argv):
    return ["--tiny", "--data-dir", str(_data(tmp_path)), "--out", str(tmp_path / "out"), "--no-curricula",
            "--fractions", "0.5", "--regions", "hard-to-learn", "--no-full", *argv]


# ----------------------------------------------------------------------------- the preset
def test_cpu_preset_pins_the_map_recipe(tmp_path):
    """--cpu: the map at lr 3e-3 warmed up over 10 % of its steps (375 of 3,750 on the 4,000-row pool), checked
    for a collapsed model after epoch 5, held to 50 % fit with 2 restarts; the subset runs keep their 100 steps."""
    import cartography_cogs

    a = cartography_cogs.parse_args(["--cpu", "--data-dir", str(_data(tmp_path))])
    assert (a.map_lr, a.map_warmup, a.map_check_epoch, a.map_epochs, a.map_fit_target, a.max_restarts, a.fit_size,
            a.warmup_steps, a.lr, a.lr_schedule, a.map_only) == (
        3e-3, 0.1, 5, 30, 50.0, 2, 200, 100, 1.5e-3, "constant", False)
    exp = SimpleNamespace(a=a, train=range(4000))
    assert cartography_cogs.Experiment.map_warmup_steps(exp) == 375
    # the GPU preset keeps the map of its recorded result (100 warm-up steps, no collapse check)
    g = cartography_cogs.parse_args(["--gpu", "--data-dir", str(_data(tmp_path))])
    assert (g.map_warmup, g.map_check_epoch, g.map_lr, g.warmup_steps) == (None, 0, 5e-4, 100)
    assert cartography_cogs.Experiment.map_warmup_steps(SimpleNamespace(a=g, train=range(4000))) == 100


def test_the_presets_collapse_check_is_off_for_a_map_shorter_than_it(tmp_path):
    import cartography_cogs

    data = ["--cpu", "--data-dir", str(_data(tmp_path))]
    assert cartography_cogs.parse_args([*data, "--map-epochs", "5"]).map_check_epoch == 0
    assert cartography_cogs.parse_args([*data, "--map-epochs", "6"]).map_check_epoch == 5
    assert cartography_cogs.parse_args([*data, "--map-epochs", "4", "--map-check-epoch", "2"]).map_check_epoch == 2


@pytest.mark.parametrize("argv, named", [(["--map-warmup", "1.5"], "--map-warmup"),
                                         (["--map-warmup", "-0.1"], "--map-warmup"),
                                         (["--map-check-epoch", "30"], "--map-check-epoch"),
                                         (["--map-check-epoch", "-1"], "--map-check-epoch")])
def test_bad_map_recipe_options_name_the_flag(tmp_path, capsys, argv, named):
    import cartography_cogs

    with pytest.raises(SystemExit):
        cartography_cogs.parse_args(["--cpu", "--data-dir", str(_data(tmp_path)), *argv])
    assert named in capsys.readouterr().err


# ----------------------------------------------------------------------------- the fit check
class _KnownOutputs:
    """Makes a model's ``generate`` return known token ids: row i of the batch gets ``answers[source]``
    (the decoder start first, as generate returns it), cut at ``max_new_tokens``, padded to the batch's longest."""

    def __init__(self, model, tokenizer, answers):
        self.model, self.tok, self.answers, self.limits = model, tokenizer, answers, []

    def __call__(self, input_ids=None, attention_mask=None, max_new_tokens=None, **kwargs):
        import torch

        self.limits.append(max_new_tokens)
        out = []
        for ids in input_ids.tolist():
            source = self.tok.decode(ids, skip_special_tokens=True)
            new = self.answers[source][:max_new_tokens]
            out.append([self.model.config.decoder_start_token_id] + new)
        width = max(len(o) for o in out)
        return torch.tensor([o + [self.tok.pad_token_id] * (width - len(o)) for o in out])


def test_the_fit_check_on_known_outputs(tmp_path):
    """Exact match through the real tokenizer, decode and metric: gold ids ending in </s> count (also on the
    longest row: the length limit leaves room for its </s>), and so do gold ids padded after it; one wrong word,
    a missing last word, one word too many or an early </s> do not; nor does the longest row's words followed by
    another word instead of </s> (cut at the limit: a missing end of sequence is not hidden by the limit)."""
    import cartography_cogs

    a = cartography_cogs.parse_args(_tiny(tmp_path))
    exp = cartography_cogs.Experiment(a)
    tok = exp.tokenizer
    longest = max(range(len(exp.train)), key=lambda i: len(exp.train[i]["target"].split()))
    rows = exp.train.select([i for i in range(len(exp.train)) if i != longest][:6] + [longest])
    sources, targets = list(rows["source"]), list(rows["target"])
    gold = [tok(text_target=t)["input_ids"] for t in targets]  # words, then </s>
    assert all(g[-1] == tok.eos_token_id for g in gold)
    eos, pad, wrong = tok.eos_token_id, tok.pad_token_id, tok.convert_tokens_to_ids("dog")
    answers = {
        sources[0]: gold[0],                           # exact
        sources[1]: gold[1] + [pad] * 3,               # exact, padded after </s> (as generate pads a finished row)
        sources[2]: [wrong] + gold[2][1:],             # first word wrong
        sources[3]: gold[3][:-2] + [eos],              # last word missing
        sources[4]: gold[4][:-1] + [wrong, eos],       # one word too many
        sources[5]: gold[5][:3] + [eos],               # ends early
        sources[6]: gold[6],                           # the longest row, exact
    }
    model = exp.model(0)
    model.generate = _KnownOutputs(model, tok, answers)
    assert exp.fit_exact_match(model, rows) == pytest.approx(100 * 3 / 7)
    # the limit is the longest target's words + 1 (its </s>): the longest row fits, nothing longer can match
    assert set(model.generate.limits) == {1 + len(targets[6].split())}
    outputs = exp.fit_outputs(model, rows)
    assert outputs[0] == targets[0] and outputs[6] == targets[6] and outputs[2] != targets[2]
    assert outputs[5] == " ".join(targets[5].split()[:3])
    # the longest row's words, then a word where its </s> should be: cut at the limit, and not a match
    model.generate = _KnownOutputs(model, tok, dict(answers, **{sources[6]: gold[6][:-1] + [wrong, wrong]}))
    assert exp.fit_exact_match(model, rows) == pytest.approx(100 * 2 / 7)


# ----------------------------------------------------------------------------- the collapse check
def _state(epoch):
    return SimpleNamespace(epoch=float(epoch))


def test_output_collapse_callback_stops_a_model_with_one_output_for_every_row():
    from hf_synthsample.models.fit_stop import OutputCollapseCallback

    calls = []
    model = SimpleNamespace(train=lambda: calls.append("train"))
    check = OutputCollapseCallback(lambda m: ["* cake ( x _ 1 ) ; give"] * 199 + ["other"], epoch=5)
    for epoch in (1, 2, 3, 4):  # nothing before its epoch
        control = SimpleNamespace(should_training_stop=False)
        check.on_epoch_end(None, _state(epoch), control, model=model)
        assert check.share is None and not control.should_training_stop
    control = SimpleNamespace(should_training_stop=False)
    check.on_epoch_end(None, _state(5), control, model=model)
    assert check.share == 1.0 and check.collapsed and control.should_training_stop and calls == ["train"]
    # a model that learns: 93 of 100 outputs distinct (measured at epoch 4 of a learning map model)
    healthy = OutputCollapseCallback(lambda m: [f"out {i % 93}" for i in range(100)], epoch=5)
    control = SimpleNamespace(should_training_stop=False)
    healthy.on_epoch_end(None, _state(5), control, model=model)
    assert healthy.share == 93.0 and not healthy.collapsed and not control.should_training_stop
    # checked once: a later epoch does not decode again
    healthy.outputs = lambda m: pytest.fail("decoded twice")
    healthy.on_epoch_end(None, _state(6), control, model=model)


@pytest.mark.parametrize("kwargs, err", [(dict(outputs=None, epoch=1), TypeError), (dict(epoch=0), ValueError),
                                         (dict(epoch=1, floor=120.0), ValueError)])
def test_output_collapse_callback_bad_arguments(kwargs, err):
    from hf_synthsample.models.fit_stop import OutputCollapseCallback

    kwargs = {"outputs": lambda m: ["a"], **kwargs}
    with pytest.raises(err):
        OutputCollapseCallback(**kwargs)


# ----------------------------------------------------------------------------- the stop after the last init
def test_a_collapsed_map_model_is_stopped_at_its_check_epoch_restarted_then_the_run_stops_with_what_to_change(
        tmp_path, capsys, monkeypatch):
    """Every init gives one output for every row: each is stopped after --map-check-epoch (not trained for all
    --map-epochs), restarted --max-restarts times, and then the run stops (rc 1) with a message naming the
    warm-up, the lr and the restarts, with values; no map, no subset, datamap.json records every init."""
    import cartography_cogs

    decoded = []

    def one_output(self, model, rows):
        decoded.append(len(rows))
        return ["cat ( x _ 1 )"] * len(rows)

    monkeypatch.setattr(cartography_cogs.Experiment, "fit_outputs", one_output)
    argv = _tiny(tmp_path, "--map-epochs", "4", "--map-check-epoch", "1", "--map-fit-target", "50", "--fit-size", "20",
                 "--max-restarts", "2", "--map-warmup", "0.02", "--map-lr", "0.003")
    assert cartography_cogs.main(argv) == 1
    err = capsys.readouterr().err
    assert "from 3 init(s)" in err and "one output for nearly every row at epoch 1" in err
    assert "--map-warmup 0.04" in err and "--map-lr 0.001" in err and "--max-restarts 3" in err
    out = tmp_path / "out"
    assert not (out / "results.md").exists() and not (out / "datamap.png").exists()
    record = json.loads((out / "datamap.json").read_text())
    assert [n["init_seed"] for n in record["attempts"]] == [0, 1000, 2000]
    assert all(n["collapsed"] and n["epochs"] == 1.0 and n["distinct_outputs"] == 5.0
               for n in record["attempts"])  # 1 distinct output of the 20 --fit-size rows
    assert record["error"].startswith("error: the data-map model fitted") and len(decoded) == 3


def test_a_map_model_that_learns_part_of_its_rows_gets_more_epochs_in_the_message(tmp_path, capsys, monkeypatch):
    import cartography_cogs

    monkeypatch.setattr(cartography_cogs.Experiment, "fit_exact_match", lambda self, model, rows: 30.0)
    assert cartography_cogs.main(_tiny(tmp_path, "--map-fit-target", "50", "--max-restarts", "1")) == 1
    err = capsys.readouterr().err
    assert "fitted 30.0 %" in err and "from 2 init(s) (30.0 %, 30.0 %)" in err
    assert "--map-epochs 6; now 3" in err and "--max-restarts 2" in err and "ignores" not in err


def test_map_only_stops_after_the_map_with_its_fit_and_time(tmp_path, monkeypatch):
    import cartography_cogs

    monkeypatch.setattr(cartography_cogs.Experiment, "fit_exact_match", lambda self, model, rows: 100.0)
    assert cartography_cogs.main(_tiny(tmp_path, "--map-only", "--map-fit-target", "50", "--map-check-epoch", "1",
                                       "--max-restarts", "1")) == 0
    out = tmp_path / "out"
    record = json.loads((out / "datamap.json").read_text())
    model = record["datamap_model"]
    assert (model["fit"], model["init_seed"], model["abandoned_inits"], record["error"]) == (100.0, 0, [], None)
    assert model["seconds"] > 0 and record["wall_time_s"] > 0 and model["distinct_outputs"] is not None
    assert (out / "datamap.txt").exists() and not (out / "results.md").exists() and not (out / "table2.md").exists()


# ----------------------------------------------------------------------------- --map-from
def test_map_from_reuses_an_earlier_map_without_training_it_again(tmp_path, monkeypatch):
    """A subset run on the map of an earlier --map-only run: no map model is trained, the hard-to-learn subset is
    the one a run that trains the same map cuts, and every record names the map's source and its model's fit."""
    import cartography_cogs

    monkeypatch.setattr(cartography_cogs.Experiment, "fit_exact_match", lambda self, model, rows: 100.0)
    first = tmp_path / "out"
    assert cartography_cogs.main(_tiny(tmp_path, "--map-only", "--seeds", "3")) == 0
    record = json.loads((first / "datamap.json").read_text())
    assert record["pool_digest"].startswith("rows-sha256:")
    trained = []
    real_fit = cartography_cogs.Experiment.fit

    def fit(self, dataset, name, **kwargs):
        trained.append(name)
        return real_fit(self, dataset, name, **kwargs)

    monkeypatch.setattr(cartography_cogs.Experiment, "fit", fit)
    again = [a if a != str(first) else str(tmp_path / "again") for a in _tiny(tmp_path, "--seeds", "3")]
    reuse = [a if a != str(first) else str(tmp_path / "reuse") for a in _tiny(tmp_path, "--seeds", "3")]
    assert cartography_cogs.main(again) == 0 and "datamap" in trained
    trained.clear()
    assert cartography_cogs.main([*reuse, "--map-from", str(first)]) == 0
    assert trained and not any(n.startswith("datamap") for n in trained)  # no map model trained
    runs = {r["run"]: r for r in json.loads((tmp_path / "reuse" / "runs.json").read_text())}
    runs_again = {r["run"]: r for r in json.loads((tmp_path / "again" / "runs.json").read_text())}
    assert runs.keys() == runs_again.keys() and all(
        runs[k]["rows"] == runs_again[k]["rows"] and runs[k]["dev"] == runs_again[k]["dev"] for k in runs)
    results = json.loads((tmp_path / "reuse" / "results.json").read_text())
    assert results["datamap_model"]["map_from"] == str(first) and results["datamap_model"]["fit"] == 100.0
    assert f"reused from {first}" in (tmp_path / "reuse" / "results.md").read_text()
    assert not (tmp_path / "reuse" / "runs" / "datamap").exists()


def test_map_from_refuses_another_pool_and_what_it_cannot_change(tmp_path, monkeypatch, capsys):
    import cartography_cogs

    monkeypatch.setattr(cartography_cogs.Experiment, "fit_exact_match", lambda self, model, rows: 100.0)
    first = tmp_path / "out"
    assert cartography_cogs.main(_tiny(tmp_path, "--map-only", "--seeds", "3")) == 0
    other = [a if a != str(first) else str(tmp_path / "other") for a in _tiny(tmp_path, "--seeds", "3")]
    for extra, named in ((["--map-from", str(tmp_path / "nowhere")], "holds no readable datamap.json"),
                         (["--map-from", str(first), "--data-seed", "4"], "data seed 3, this run's pool is data seed 4"),
                         (["--map-from", str(first), "--map-epochs", "9"], "--map-epochs would not change it"),
                         (["--map-from", str(first), "--map-only"], "nothing to do")):
        with pytest.raises(SystemExit):
            cartography_cogs.parse_args([*other, *extra])
        assert named in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cartography_cogs.parse_args([*_tiny(tmp_path, "--seeds", "3"), "--map-from", str(first)])
    assert "is --out" in capsys.readouterr().err
    # the same data seed, another pool (fewer rows): refused before any subset is trained
    assert cartography_cogs.main([*other, "--map-from", str(first), "--num-train", "10"]) == 2
    assert "was built on another pool" in capsys.readouterr().err
    assert not (tmp_path / "other" / "runs.json").exists()


def test_runs_compared_at_different_stopping_steps_are_warned_about():
    """A fit-target run: subsets of one fraction and seed that stopped at different steps get a warning naming
    them and the equal-steps command; equal steps, or fixed steps (no --fit-target), get none."""
    from cartography_runs import steps_warning

    records = [{"run": "33%-hard-to-learn", "seed": 10, "steps": 2000}, {"run": "33%-random", "seed": 10, "steps": 1500},
               {"run": "33%-hard-to-learn", "seed": 11, "steps": 1750}, {"run": "33%-random", "seed": 11, "steps": 1750},
               {"run": "full", "seed": 10, "steps": 2250}]
    fit = SimpleNamespace(a=SimpleNamespace(fit_target=90.0))
    text = steps_warning(fit, records)
    assert "1 of 2 fraction/seed groups; seed 10: 33%-hard-to-learn 2000, 33%-random 1500" in text
    assert "--fit-target 0 --steps N" in text and "--map-from" in text
    assert steps_warning(fit, records[2:]) == ""
    assert steps_warning(SimpleNamespace(a=SimpleNamespace(fit_target=0.0)), records) == ""
