"""The curve on a user's own run says exactly what ran (issue 44): the card records the model that
ran (a checkpoint's config and folder name, a factory's name, parameter counts; the scratch settings
only for the scratch model), every headline is qualified, the job shows one progress bar and its
fit checks, and every refused input is refused before any work, naming the option."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from hf_synthsample.curve import CurveResult, CurveSettings, compositionality_curve
from hf_synthsample.curve.result import _example_record

PROGRAMS = [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh" for a in "abcd" for b in "abc"]
DATA = dict(column="program", language="sexpr", target_column="output", time_limit=60.0, fit_rows=4, test_rows=4,
            batch_size=8, warmup_steps=0, max_steps=2, check_every=1, settle_steps=0, length_bins=0)


def _toy():
    from datasets import Dataset

    return Dataset.from_dict({"program": PROGRAMS, "output": [p.replace("(", "").replace(")", "") for p in PROGRAMS]})


def _t5(seed: int = 0):
    from hf_synthsample.models import build_scratch_model, build_word_tokenizer

    tok = build_word_tokenizer([p.replace("(", "").replace(")", "") for p in PROGRAMS] + PROGRAMS)
    return build_scratch_model(tok, "t5", seed=seed, d_model=16, d_ff=32, num_layers=1, num_heads=2), tok


@pytest.fixture
def no_work(monkeypatch):
    """Any sweep or training is a failure: the input must be refused before them."""
    import hf_synthsample.models as models
    import hf_synthsample.splits as splits

    def fail(*a, **k):
        raise AssertionError("work started before the input was refused")

    monkeypatch.setattr(splits, "divergence_sweep", fail)
    monkeypatch.setattr(models, "train_seq2seq", fail)


def _checkpoint(folder):
    model, tok = _t5()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


# ---- refused inputs ------------------------------------------------------------------------------

def test_integer_target_column_refused(no_work):
    from datasets import Dataset

    ds = Dataset.from_dict({"program": PROGRAMS, "output": list(range(len(PROGRAMS)))})
    with pytest.raises(ValueError, match="target_column: column 'output' holds int64, not text"):
        compositionality_curve(ds, **DATA)


@pytest.mark.parametrize("kind", ["gpt2-classifier", "bert"])
def test_checkpoint_that_is_not_seq2seq_refused(tmp_path, no_work, kind):
    from transformers import BertConfig, GPT2Config

    # a decoder-only causal LM is accepted (issue 46: tests/test_causal_lm.py); a GPT-2 classifier is not
    config = (GPT2Config(n_embd=16, n_layer=1, n_head=2, architectures=["GPT2ForSequenceClassification"])
              if kind == "gpt2-classifier"
              else BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32))
    config.save_pretrained(tmp_path / kind)
    with pytest.raises(ValueError, match=f"model: .*holds a {kind.split('-')[0]} model .*not a seq2seq"):
        compositionality_curve(_toy(), str(tmp_path / kind), **DATA)


def test_cli_names_the_option_of_a_checkpoint_that_is_not_seq2seq(tmp_path, capsys):
    from transformers import GPT2Config

    from hf_synthsample.cli import main

    GPT2Config(n_embd=16, n_layer=1, n_head=2).save_pretrained(tmp_path / "gpt")
    data = tmp_path / "toy.jsonl"
    _toy().to_json(str(data))
    out = tmp_path / "curve"
    assert main(["curve", str(data), "--out", str(out), "--column", "program", "--language", "sexpr",
                 "--target-column", "output", "--model", str(tmp_path / "gpt")]) == 2
    assert "--model: " in capsys.readouterr().err and not out.exists()


def test_checkpoint_without_tokenizer_files_refused(tmp_path, no_work):
    model, _ = _t5()
    model.save_pretrained(tmp_path / "bare")
    with pytest.raises(ValueError, match="model: .* has no tokenizer files"):
        compositionality_curve(_toy(), str(tmp_path / "bare"), **DATA)


@pytest.mark.parametrize("option", [dict(d_model=32, heads=2), dict(layers=2), dict(architecture="t5"),
                                    dict(dropout=0.0), dict(ffn=64)])
def test_scratch_options_beside_a_model_refused(tmp_path, no_work, option):
    name = next(iter(option))
    with pytest.raises(ValueError, match=f"{name}.*scratch model's options do not apply"):
        compositionality_curve(_toy(), lambda split, seed: _t5(seed), **DATA, **option)
    with pytest.raises(ValueError, match=f"{name}.*scratch model's options do not apply"):
        compositionality_curve(_toy(), _checkpoint(tmp_path / "ckpt"), **DATA, **option)


def test_cli_scratch_options_with_model_refused(tmp_path, capsys):
    from hf_synthsample.cli import main

    data = tmp_path / "toy.jsonl"
    _toy().to_json(str(data))
    out = tmp_path / "curve"
    assert main(["curve", str(data), "--out", str(out), "--column", "program", "--language", "sexpr",
                 "--target-column", "output", "--model", _checkpoint(tmp_path / "ckpt"), "--d-model", "64",
                 "--layers", "2"]) == 2
    err = capsys.readouterr().err
    assert "--d-model, --layers: the scratch model's options do not apply with --model" in err and not out.exists()


def test_factory_returning_tokenizer_first_refused_before_training(monkeypatch):
    import hf_synthsample.models as models

    def fail(*a, **k):
        raise AssertionError("training started")

    monkeypatch.setattr(models, "train_seq2seq", fail)

    def swapped(split, seed):
        model, tok = _t5(seed)
        return tok, model

    with pytest.raises(TypeError, match=r"returned \(tokenizer, model\).*the contract is \(model, tokenizer\)"):
        compositionality_curve(_toy(), swapped, targets=[0.4, 0.6], **DATA)


def test_fit_callback_settle_not_shorter_than_max_steps_refused():
    from hf_synthsample.models import FitTargetCallback

    with pytest.raises(ValueError, match=r"settle \(10 steps\) must be shorter than the Trainer's max_steps \(10\)"):
        FitTargetCallback(lambda m: 0.0, 90.0, 2, unit="step", settle=10, max_steps=10)
    cb = FitTargetCallback(lambda m: 0.0, 90.0, 2, unit="step", settle=10)  # max_steps known when training begins
    with pytest.raises(ValueError, match=r"settle \(10 steps\) must be shorter than the Trainer's max_steps \(8\)"):
        cb.on_train_begin(None, SimpleNamespace(max_steps=8), SimpleNamespace(should_training_stop=False))
    FitTargetCallback(lambda m: 0.0, 90.0, 2, unit="step", settle=9, max_steps=10)  # shorter: fine


@pytest.mark.parametrize("value", [None, float("nan"), "high"])
def test_score_callback_returning_no_number_refused(value):
    from hf_synthsample.models import FitTargetCallback

    class _Model:
        def train(self, mode=True):
            pass

    def my_score(model):
        return value

    cb = FitTargetCallback(my_score, 90.0, 1, unit="step")
    with pytest.raises(ValueError, match=r"score callback '.*my_score' returned .*: it must return the fit as a finite"):
        cb.on_step_end(None, SimpleNamespace(global_step=1, max_steps=5), SimpleNamespace(should_training_stop=False),
                       model=_Model())
    confirm = FitTargetCallback(lambda m: 95.0, 90.0, 1, unit="step", confirm=my_score)
    with pytest.raises(ValueError, match="confirm callback"):
        confirm.on_step_end(None, SimpleNamespace(global_step=1, max_steps=5),
                            SimpleNamespace(should_training_stop=False), model=_Model())


# ---- headlines -----------------------------------------------------------------------------------

def _capture(monkeypatch):
    import hf_synthsample.atomic as atomic

    kept = {}
    real = atomic.save_figure_atomic

    def keep(fig, path, **kw):
        fig.canvas.draw()
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        kept.update(title=ax.get_title(), ax=ax, figure_box=fig.bbox,
                    labels=[t.get_window_extent(renderer) for t in ax.texts],
                    markers=[ln for ln in ax.lines if ln.get_marker() == "o" and len(ln.get_xdata()) == 1],
                    others=[ln for ln in ax.lines if not (ln.get_marker() == "o" and len(ln.get_xdata()) == 1)])
        return real(fig, path, **kw)

    monkeypatch.setattr(atomic, "save_figure_atomic", keep)
    return kept


def test_not_fitted_curve_says_so_everywhere(monkeypatch, tmp_path):
    kept = _capture(monkeypatch)
    records = [_example_record(t, t, 30.0, em) for t, em in zip([0.1, 0.3, 0.5], [0.0, 40.0, 97.0])]
    result = CurveResult(records=records, model="factory build")
    assert result.not_fitted == [0.1, 0.3, 0.5] and result.spearman_rho == pytest.approx(1.0)
    result.plot(str(tmp_path / "c.png"), title="Compositionality curve on `my.jsonl`")
    title = kept["title"]
    assert "Not a result: 3 of 3 models under the fit target" in title and "`" not in title
    table = result.to_markdown()
    assert "**Not a result: 3 of 3 models under the fit target**" in table
    assert result.headline().startswith("Not a result: 3 of 3 models under the fit target; Spearman")
    # hollow markers drawn over every line; value labels (also at 0 and near 100) inside the figure
    assert len(kept["markers"]) == 3 and all(m.get_mfc() == "white" for m in kept["markers"])
    assert min(m.get_zorder() for m in kept["markers"]) > max(o.get_zorder() for o in kept["others"])
    box = kept["figure_box"]
    assert len(kept["labels"]) == 3
    for label in kept["labels"]:
        assert box.x0 <= label.x0 and label.x1 <= box.x1 and box.y0 <= label.y0 and label.y1 <= box.y1
        axes = kept["ax"].get_window_extent()
        assert axes.y0 <= label.y0 and label.y1 <= axes.y1  # not under the axis either
    assert result.to_dict()["qualifier"] == "not a result: 3 of 3 models under the fit target"


def test_a_fitted_curve_has_no_qualifier():
    records = [_example_record(t, t, 96.0, em) for t, em in zip([0.1, 0.3], [90.0, 40.0])]
    result = CurveResult(records=records)
    assert result.qualifier() == "" and "Not a result" not in result.to_markdown()
    assert result.headline() == "Spearman rho(D_C, test exact match) = -1.000 over 2 splits"


@pytest.mark.parametrize("tests, dcs, reason", [
    ([50.0, 50.0], [0.1, 0.3], "every split has the same test score"),
    ([50.0, 40.0], [0.3, 0.3], "every split has the same D_C"),
    ([50.0], [0.3], "a correlation needs at least 2"),
])
def test_an_undefined_rho_states_its_reason(monkeypatch, tmp_path, tests, dcs, reason):
    kept = _capture(monkeypatch)
    result = CurveResult(records=[_example_record(d, d, 96.0, em) for d, em in zip(dcs, tests)])
    assert math.isnan(result.spearman_rho) and reason in result.rho_undefined_reason
    assert reason in result.to_markdown() and "nan" not in result.to_markdown()
    result.plot(str(tmp_path / "c.png"))
    assert reason in kept["title"].replace("\n", " ") and "nan" not in kept["title"]
    assert result.to_dict()["spearman_rho"] is None and reason in result.to_dict()["rho_undefined"]


# ---- a user's run, end to end ------------------------------------------------------------------

def _no_local_path(folder, tmp_path):
    for name in ("README.md", "curve.json"):
        text = (folder / name).read_text()
        assert str(tmp_path) not in text and "/tmp" not in text, name


def test_curve_of_a_users_checkpoint(tmp_path, monkeypatch, capfd):
    kept = _capture(monkeypatch)
    ckpt = _checkpoint(tmp_path / "my-t5")
    result = compositionality_curve(_toy(), ckpt, targets=[0.4, 0.6], progress=True, **DATA)
    info = result.model_config
    assert info["source"] == "checkpoint" and info["checkpoint"] == "my-t5" and info["model_type"] == "t5"
    assert info["d_model"] == 16 and info["layers"] == "1+1" and info["parameters"] > 0
    assert "architecture" not in info and "bart" not in result.model.lower()  # no scratch settings
    assert result.model.startswith("checkpoint my-t5: t5 (T5ForConditionalGeneration), d_model 16, 1+1 layers")
    assert all(r["parameters"] == info["parameters"] for r in result.records)
    err = capfd.readouterr().err
    assert "compositionality curve" in err and "4/4" in err  # one bar: 2 models x 2 steps
    assert "dc_0.40: step 1, fit" in err  # the fit checks, at the default level
    result.save(str(tmp_path / "hub"), title="Compositionality curve of my run")
    card = (tmp_path / "hub" / "README.md").read_text()
    assert f"Model: checkpoint my-t5: t5 (T5ForConditionalGeneration), d_model 16, 1+1 layers, " \
           f"{info['parameters']:,} parameters" in card
    assert "**Not a result: 2 of 2 models under the fit target**" in card
    saved = json.loads((tmp_path / "hub" / "curve.json").read_text())
    assert saved["model_config"]["checkpoint"] == "my-t5" and saved["qualifier"].startswith("not a result")
    _no_local_path(tmp_path / "hub", tmp_path)
    assert "checkpoint my-t5" in kept["title"] or "my run" in kept["title"]
    assert "Not a result: 2 of 2 models under the fit target" in kept["title"]


def test_curve_of_a_users_factory(tmp_path, monkeypatch, capfd):
    kept = _capture(monkeypatch)

    def build(split, seed):
        return _t5(seed)

    build.model_name = "tiny-t5-16"
    result = compositionality_curve(_toy(), build, targets=[0.4, 0.6], progress=False, **DATA)
    assert result.model_config["source"] == "factory" and result.model_config["model_name"] == "tiny-t5-16"
    assert result.model.startswith("factory tiny-t5-16: t5 (T5ForConditionalGeneration)")
    assert "parameters" in result.model and "d_model 16," in result.model
    result.save(str(tmp_path / "hub"))
    assert "Compositionality curve (factory tiny-t5-16)" in kept["title"]
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "Model: factory tiny-t5-16: t5" in card and "scratch" not in card.split("## The splits")[0]
    _no_local_path(tmp_path / "hub", tmp_path)
    # a lambda is "a lambda", a plain function its own name; a verbosity the user set is kept (no fit checks)
    from hf_synthsample import logging as hfs_logging

    capfd.readouterr()
    hfs_logging.set_verbosity_warning()
    try:
        anonymous = compositionality_curve(_toy(), lambda split, seed: _t5(seed), targets=[0.4, 0.6], progress=False,
                                           **DATA)
    finally:
        hfs_logging.set_verbosity(hfs_logging.NOTSET)
    assert "step 1, fit" not in capfd.readouterr().err
    assert "<lambda>" not in anonymous.model and anonymous.model.startswith("a factory (a lambda): t5")
    anonymous.plot(str(tmp_path / "a.png"))
    assert "<lambda>" not in kept["title"] and "(a factory (a lambda))" in kept["title"]
    from hf_synthsample.curve.training import factory_name

    assert factory_name(_t5) == "_t5" and factory_name(build) == "tiny-t5-16"


def test_cli_curve_of_a_checkpoint(tmp_path, monkeypatch):
    from hf_synthsample.cli import main

    kept = _capture(monkeypatch)
    data = tmp_path / "toy.jsonl"
    _toy().to_json(str(data))
    flags = [f"--{k.replace('_', '-')}" if i == 0 else str(v) for k, v in DATA.items() for i in (0, 1)]
    out = tmp_path / "curve"
    assert main(["curve", str(data), "--out", str(out), "--model", _checkpoint(tmp_path / "my-t5"),
                 "--targets", "0.4", "0.6", *flags]) == 0
    head, qualified = kept["title"].split("\n")[:2]
    assert head.startswith("Compositionality curve of checkpoint my-t5 on ") and head.endswith("toy.jsonl")
    assert qualified == "Not a result: 2 of 2 models under the fit target" and "`" not in kept["title"]
    card = (out / "README.md").read_text()
    assert "Model: checkpoint my-t5: t5 (T5ForConditionalGeneration)" in card and "scratch" not in card
    _no_local_path(out, tmp_path)


def test_scratch_settings_recorded_only_for_the_scratch_model():
    result = compositionality_curve(_toy(), targets=[0.4, 0.6], progress=False, d_model=16, heads=2, layers=1, ffn=32,
                                    **DATA)
    assert result.model_config["source"] == "scratch" and result.model_config["architecture"] == "bart"
    assert result.model.startswith("scratch BART d_model 16, 1+1 layers") and "parameters" in result.model


def test_progress_value_checked():
    with pytest.raises(TypeError, match="progress must be None"):
        compositionality_curve(_toy(), progress="yes", **DATA)
    assert CurveSettings().max_steps == 3000  # the settings are untouched by progress
