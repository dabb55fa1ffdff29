"""hf_synthsample.curve: the compositionality curve as a library call (offline, seconds): the table,
Spearman's rho by hand, training to the fit target, a user's factory and checkpoint folder, the plot
and the Hub folder read back with plain ``datasets``, determinism, and bad settings refused."""

from __future__ import annotations

import doctest
import importlib
import json
import math

import pytest

from hf_synthsample.curve import CompositionalityCurve, CurveResult, CurveSettings, compositionality_curve
from hf_synthsample.curve.result import _example_record

# a toy language: (op (f a) b), 72 programs; the output spells the program without brackets
PROGRAMS = [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh" for a in "abcd" for b in "abc"]
DATA = dict(column="program", language="sexpr", target_column="output", time_limit=60.0, fit_rows=8, test_rows=8,
            batch_size=8, warmup_steps=0)
TINY = dict(DATA, d_model=16, heads=2, layers=1, ffn=32)  # the scratch model's options: only without a model


def _toy(output=None):
    from datasets import Dataset

    outputs = [output or p.replace("(", "").replace(")", "") for p in PROGRAMS]
    return Dataset.from_dict({"program": PROGRAMS, "output": outputs})


@pytest.mark.parametrize("module", ["settings", "stats", "result", "training", "run", "__init__"])
def test_docstring_examples(module):
    name = "hf_synthsample.curve" + ("" if module == "__init__" else f".{module}")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 1 and result.failed == 0


def test_spearman_of_a_fixed_table():
    # ranks of D_C 1 2 3 4, of test 4 2 3 1: d^2 = 9 + 0 + 0 + 9 = 18, rho = 1 - 6 * 18 / (4 * 15) = -0.8
    records = [_example_record(t, t, 96.0, em) for t, em in zip([0.0, 0.2, 0.4, 0.6], [90.0, 70.0, 75.0, 20.0])]
    result = CurveResult(records=records)
    assert result.spearman_rho == pytest.approx(-0.8)
    assert result.all_fitted and result.not_fitted == []
    table = result.to_markdown()
    assert sum(line.startswith("| 0") for line in table.splitlines()) == 4 and "**75.0**" in table and "= -0.800 over 4 splits" in table
    records[1]["fit_reached"] = False  # a model that did not fit is reported, never dropped
    assert CurveResult(records=records).not_fitted == [0.2] and "**no**" in CurveResult(records=records).to_markdown()
    assert math.isnan(CurveResult(records=records[:1] * 2).spearman_rho)  # equal D_C: no ranking
    assert CurveResult(records=records[:1] * 2).to_dict()["spearman_rho"] is None  # valid JSON, no NaN


def test_length_mix_by_hand():
    from hf_synthsample.curve.stats import LengthMix

    # a shuffled pool; sorted 1 2 3 3 5 7 8 9, quantiles (lower) at 1/4, 2/4, 3/4: positions 1.75, 3.5, 5.25 -> 2, 3, 7
    mix = LengthMix.of([5, 1, 3, 3, 9, 7, 2, 8], bins=4)
    assert mix.cuts == (2, 3, 7) and mix.shares == (0.25,) * 4 and mix.labels == ("<= 2", "3", "4-7", "8-9")
    # bins: {1} right, {3} right, none in 4-7, {9, 8, 9} one of three right:
    # (0.25 * 100 + 0.25 * 100 + 0.25 * 100 / 3) / 0.75 = 77.78 (the empty bin left out, the others scaled up)
    value, per_bin = mix.standardize([True, False, True, True, False], [1, 9, 3, 8, 9])
    assert value == pytest.approx(700 / 9, abs=1e-5)
    assert [(b["rows"], b["exact_match"]) for b in per_bin] == [(1, 100.0), (1, 100.0), (0, None), (3, pytest.approx(100 / 3))]
    # a split scored on the pool's own mix keeps its plain exact match
    assert mix.standardize([True, False] * 4, [1, 2, 3, 3, 5, 7, 8, 9])[0] == pytest.approx(50.0)
    assert LengthMix.of([4, 4, 4], bins=3).cuts == () and LengthMix.of([4, 4, 4], bins=3).labels == ("<= 4",)
    with pytest.raises(ValueError, match="no rows"):
        LengthMix.of([], bins=2)
    with pytest.raises(ValueError, match="same length"):
        mix.standardize([True], [1, 2])
    with pytest.raises(ValueError, match="length_bins must be >= 0"):
        CurveSettings(length_bins=-1)


def test_curve_end_to_end(tmp_path):
    import datasets

    result = compositionality_curve(_toy(), targets=[0.4, 0.5, 0.6], max_steps=3, check_every=2, **TINY)
    assert [r["config"] for r in result.records] == ["dc_0.40", "dc_0.50", "dc_0.60"]
    for r in result.records:
        assert abs(r["compound_divergence"] - r["target"]) <= 0.03 and r["atom_divergence"] <= 0.02 + 1e-9
        assert (r["train_rows"], r["test_rows"], r["num_test_scored"], r["num_fit"]) == (36, 18, 8, 8)
        # checked at step 2 and at the budget's end; a 3-step model fits nothing and says so
        assert [step for step, _ in r["fit_history"]] == [2, 3] and r["fit"] == r["fit_history"][-1][1]
        assert r["steps"] == 3 and r["fit_reached"] is False
        assert sum(r["errors"].values()) == 8 and 0.0 <= r["test_exact_match"] <= 100.0
        # scored at the dataset's mix of output lengths too: every scored row in one bin
        assert sum(b["rows"] for b in r["test_by_length"]) == 8 and 0.0 <= r["test_exact_match_length_std"] <= 100.0
    assert len(result.test_exact_match_length_std) == 3 and "at the length mix" in result.to_markdown()
    for r in result.records:  # the rows of templates the training side lacks, counted within the scored rows
        u = r["unseen_templates"]
        assert 0 <= u["rows"] <= 8 and (u["exact_match"] is None) == (u["rows"] == 0)
    assert "unseen templates" in result.to_markdown()
    assert result.not_fitted == [0.4, 0.5, 0.6] and "scratch BART d_model 16" in result.model
    png = result.plot(str(tmp_path / "curve.png"))
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    folder = result.save(str(tmp_path / "hub"))
    for r in result.records:  # every split, read back with plain datasets, is the sweep's
        loaded = datasets.load_dataset(folder, r["config"])
        assert loaded["train"]["program"] == result.sweep.splits[r["target"]]["train"]["program"]
        assert loaded["test"].num_rows == 18
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "**Not a result: 3 of 3 models under the fit target**" in card
    assert "Spearman rho(D_C, test exact match)" in card and "| 0.5 | " in card and "](curve.png)" in card
    saved = json.loads((tmp_path / "hub" / "curve.json").read_text())
    assert saved["records"] == json.loads(json.dumps(result.records)) and saved["settings"]["max_steps"] == 3
    with pytest.raises(FileExistsError):
        result.save(str(tmp_path / "hub"))


def test_random_split_level_and_the_warning_below_it(caplog):
    """The reference level: D_C of the seeded random split with the sweep's sizes (recomputed here from
    the permutation); a target the search drives below it is named in a warning and the card says why."""
    import logging

    import numpy as np

    from hf_synthsample.splits.report import split_report

    ds = _toy()
    with caplog.at_level(logging.WARNING, logger="hf_synthsample.curve.run"):
        result = compositionality_curve(ds, targets=[0.0, 0.6], max_steps=1, check_every=1, **TINY)
    order = np.random.default_rng(0).permutation(72)  # test: the first 18 rows of it, train: the next 36
    by_hand = split_report(ds.select(sorted(order[18:54])), ds.select(sorted(order[:18])),
                           **result.sweep.report_kwargs).compound_divergence
    assert result.random_compound_divergence == pytest.approx(by_hand)
    # the lowest split this toy allows (0.41) lies below the random one's (0.47); the 0.6 split does not
    assert result.compound_divergence[0] < result.random_compound_divergence - 0.01 < result.compound_divergence[1]
    assert "D_C target(s) 0 lie below a random split's D_C" in caplog.text
    assert f"A random split of the same sizes has D_C {by_hand:.3f}" in result.to_markdown()
    assert result.to_dict()["random_compound_divergence"] == result.random_compound_divergence


def test_trained_to_the_fit_target_from_a_factory_and_a_folder(tmp_path):
    """A model that can fit stops at the first check that reaches the target (a constant output is
    learnt in a few steps), whether it comes from the user's factory or a checkpoint folder."""
    from hf_synthsample.models import build_scratch_model, build_word_tokenizer

    calls = []

    def factory(split, seed):
        calls.append((split["train"].num_rows, seed))
        tok = build_word_tokenizer(PROGRAMS + ["ok"])
        return build_scratch_model(tok, "t5", seed=seed, d_model=16, d_ff=32, num_layers=1, num_heads=2), tok

    settings = CurveSettings.build(targets=[0.4, 0.6], learning_rate=1e-2, max_steps=200, check_every=5, fit_target=100.0,
                             scheduler="constant", seed=3, settle_steps=0, **DATA)
    est = CompositionalityCurve(settings).fit(_toy(output="ok"), factory)
    assert calls == [(36, 3), (36, 3)]  # one fresh model per split, the curve's seed
    for r in est.records_:
        assert r["fit_reached"] and r["fit"] == 100.0 and r["steps"] < 200 and r["steps"] % 5 == 0
        assert all(fit < 100.0 for _, fit in r["fit_history"][:-1])  # it stopped at the first fitted check
        assert r["test_exact_match"] == 100.0
    assert est.result_.all_fitted and math.isnan(est.spearman_rho_)  # a constant test score ranks nothing
    # the same from a checkpoint folder (save_pretrained output): loaded afresh for every split
    model, tok = factory({"train": _toy()}, 3)
    model.save_pretrained(tmp_path / "ckpt")
    tok.save_pretrained(tmp_path / "ckpt")
    from_folder = compositionality_curve(_toy(output="ok"), str(tmp_path / "ckpt"), settings=settings)
    assert [r["steps"] for r in from_folder.records] == [r["steps"] for r in est.records_]
    assert from_folder.model.startswith("checkpoint ckpt: t5 (T5ForConditionalGeneration), d_model 16, 1+1 layers, ")
    assert from_folder.model_config["checkpoint"] == "ckpt" and from_folder.model_config["parameters"] > 0
    # every row right, so 100 % at any length mix; with length_bins=0 the records and the table leave it out
    assert est.result_.test_exact_match_length_std == [100.0, 100.0]
    off = compositionality_curve(_toy(output="ok"), factory, settings=settings.replace(length_bins=0))
    assert off.test_exact_match_length_std is None and off.spearman_rho_length_std is None
    assert "test_by_length" not in off.records[0] and "length mix" not in off.to_markdown()
    assert off.to_dict()["spearman_rho_length_std"] is None
    # with a settle phase: the same first fitted check, then 10 more steps (lr to 0) and one more check
    settled = compositionality_curve(_toy(output="ok"), factory, settings=settings.replace(settle_steps=10))
    for r, first in zip(settled.records, est.records_):
        assert r["fit_step"] == first["steps"] and r["steps"] == first["steps"] + 10
        assert r["fit_history"][:-1] == first["fit_history"] and r["fit_history"][-1][0] == r["steps"]


def test_deterministic_whatever_the_jobs():
    one = compositionality_curve(_toy(), targets=[0.4, 0.6], max_steps=2, check_every=1, seed=1, jobs=1, **TINY)
    two = compositionality_curve(_toy(), targets=[0.4, 0.6], max_steps=2, check_every=1, seed=1, jobs=2, **TINY)
    strip = [{k: v for k, v in r.items() if not k.endswith("seconds")} for r in one.records]
    assert strip == [{k: v for k, v in r.items() if not k.endswith("seconds")} for r in two.records]


@pytest.mark.parametrize("changes, error, message", [
    (dict(targets=[0.3]), ValueError, "targets: a curve needs at least 2"),
    (dict(targets=[0.5, 0.3]), ValueError, "targets: must be sorted ascending"),
    (dict(targets=[0.1, 1.5]), ValueError, r"targets: 1.5 is out of \[0, 1\]"),
    (dict(fit_target=0), ValueError, "fit_target must be > 0"),
    (dict(fit_target=101), ValueError, "fit_target must be <= 100"),
    (dict(max_steps=0), ValueError, "max_steps must be >= 1"),
    (dict(check_every=0), ValueError, "check_every must be >= 1"),
    (dict(train_size=0.8, test_size=0.3), ValueError, "train_size: 0.8 \\+ test_size 0.3 is over 1"),
    (dict(scheduler="cyclic"), ValueError, "scheduler must be one of"),
    (dict(d_model=30, heads=4), ValueError, "d_model \\(30\\) must be a multiple of heads"),
    (dict(column=""), ValueError, "column must be a non-empty"),
    (dict(column="actions"), ValueError, "target_column must differ"),
    (dict(seed=1.5), TypeError, "seed must be an int"),
    (dict(no_such=1), ValueError, "no_such"),
])
def test_bad_settings_refused(changes, error, message):
    with pytest.raises(error, match=message):
        CurveSettings().replace(**changes) if "no_such" in changes else CurveSettings.build(**changes)


def test_bad_inputs_refused_before_any_work(tmp_path):
    ds = _toy()
    with pytest.raises(ValueError, match="target_column: the dataset has no column 'actions'"):
        compositionality_curve(ds, column="program", language="sexpr")
    with pytest.raises(ValueError, match="column: the dataset has no column 'commands'"):
        compositionality_curve(ds, target_column="output", column="commands", language="scan")
    with pytest.raises(ValueError, match=r"^language: the mcd method needs the structure language of the program "
                                         r"column 'program' \(accepted: .*sexpr"):
        compositionality_curve(ds, target_column="output")
    with pytest.raises(TypeError, match="dataset must be a datasets.Dataset"):
        compositionality_curve({"program": PROGRAMS}, **TINY)
    with pytest.raises(TypeError, match="model must be None"):
        compositionality_curve(ds, 42, **TINY)
    with pytest.raises(ValueError, match="model: .* is not a checkpoint folder"):
        compositionality_curve(ds, str(tmp_path), **TINY)
    with pytest.raises(TypeError, match="settings must be a CurveSettings"):
        compositionality_curve(ds, settings={"seed": 0})
    with pytest.raises(TypeError, match="the factory must return \\(model, tokenizer\\)"):
        compositionality_curve(ds, lambda split, seed: None, targets=[0.4, 0.6], **DATA)


def _toy_file(tmp_path):
    path = tmp_path / "toy.jsonl"
    _toy().to_json(str(path))
    return str(path)


TINY_FLAGS = ["--column", "program", "--language", "sexpr", "--target-column", "output", "--time-limit", "60",
              "--d-model", "16", "--heads", "2", "--layers", "1", "--ffn", "32", "--fit-rows", "8", "--test-rows", "8",
              "--batch-size", "8", "--max-steps", "2", "--check-every", "1"]


def test_cli_curve_on_a_users_file(tmp_path, capsys):
    import datasets

    from hf_synthsample.cli import main

    out = tmp_path / "curve"
    assert main(["curve", _toy_file(tmp_path), "--out", str(out), "--targets", "0.4", "0.6", *TINY_FLAGS]) == 0
    printed = capsys.readouterr().out
    assert "Spearman rho(D_C, test exact match)" in printed and f"Wrote {out}/" in printed
    assert datasets.load_dataset(str(out), "dc_0.60")["test"].num_rows == 18
    saved = json.loads((out / "curve.json").read_text())
    assert [r["target"] for r in saved["records"]] == [0.4, 0.6] and saved["settings"]["max_steps"] == 2
    card = (out / "README.md").read_text()
    assert "source: toy.jsonl" in card or "toy.jsonl" in card  # provenance, without the local folder


@pytest.mark.parametrize("flags, message", [
    (["--fit-target", "120"], "--fit-target must be <= 100"),
    (["--targets", "0.6", "0.4"], "--targets: must be sorted ascending"),
    (["--targets", "0.4"], "--targets: a curve needs at least 2"),
    (["--target-column", "nope"], "--target-column: the dataset has no column 'nope'"),
    (["--model", "no-such-folder"], "--model: 'no-such-folder' is not a checkpoint folder"),
])
def test_cli_curve_refuses_bad_options(tmp_path, capsys, flags, message):
    from hf_synthsample.cli import main

    out = tmp_path / "curve"
    argv = ["curve", _toy_file(tmp_path), "--out", str(out), "--targets", "0.4", "0.6", *TINY_FLAGS, *flags]
    assert main(argv) == 2
    assert message in capsys.readouterr().err and not out.exists()
