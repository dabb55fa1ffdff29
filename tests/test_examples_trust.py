"""Issue 44, the examples: an option that does not apply is refused, not ignored; every option,
folder and model is checked at parse time, before anything is cleared or built; a user's mistake
is one line ``prog: error: ...`` with exit status 2, never a traceback."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import REPO_ROOT

SCAN_COGS = ["--data", "scan:addprim_jump", "--num-train", "60", "--num-eval", "10"]


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _refused(parse, argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        parse(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err, err
    assert "Traceback" not in err
    line = [x for x in err.splitlines() if "error:" in x]
    assert len(line) == 1  # one clear line (after argparse's usage)
    return err


# ----------------------------------------------------------------------------- options that do not apply
@pytest.mark.parametrize("argv, message", [
    (["--tiny", "--fit-target", "0", "--anneal-epochs", "2"], "--anneal-epochs does not apply without --fit-target"),
    (["--tiny", "--max-restarts", "2"], "--max-restarts does not apply without --restart-below"),
    (["--tiny", "--restart-after", "1"], "--restart-after does not apply without --restart-below"),
    (["--tiny", "--synthetic-split", "--max-restarts", "1"], "--max-restarts does not apply"),
])
def test_oren_refuses_options_that_do_not_apply(argv, message, capsys, tmp_path):
    _refused(_load("oren_schema2qa").parse_args, argv + ["--out", str(tmp_path / "out")], message, capsys)
    assert not (tmp_path / "out").exists()


def test_oren_accepts_the_options_where_they_apply(tmp_path):
    oren = _load("oren_schema2qa")
    data = tmp_path / "data"
    data.mkdir()
    a = oren.parse_args(["--tiny", "--fit-target", "90", "--anneal-epochs", "1", "--restart-below", "5",
                         "--restart-after", "1", "--max-restarts", "1", "--data-dir", str(data),
                         "--out", str(tmp_path / "out")])
    assert (a.anneal_epochs, a.max_restarts) == (1, 1)


def test_cartography_refuses_max_restarts_alone(capsys, tmp_path):
    cogs = _load("cartography_cogs")
    _refused(cogs.parse_args, ["--tiny", *SCAN_COGS, "--max-restarts", "2", "--out", str(tmp_path / "o")],
             "--max-restarts does not apply without --restart-below", capsys)


def test_curve_refuses_cogs_options_on_scan_and_an_out_file(capsys, tmp_path):
    curve = _load("compositionality_curve")
    _refused(curve.parse_args, ["--max-target-tokens", "30"], "--max-target-tokens does not apply to --data scan",
             capsys)
    _refused(curve.parse_args, ["--cogs", str(tmp_path / "train.tsv")], "--cogs does not apply to --data scan", capsys)
    (tmp_path / "file").write_text("mine")
    _refused(curve.parse_args, ["--out", str(tmp_path / "file")], "--out: ", capsys)
    assert (tmp_path / "file").read_text() == "mine"
    assert curve.parse_args(["--out", str(tmp_path / "runs")]).data == "scan"


# ----------------------------------------------------------------------------- folders and models at parse time
def test_a_user_file_in_out_is_refused_before_anything_is_cleared(capsys, tmp_path):
    cogs = _load("cartography_cogs")
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.md").write_text("my notes")
    _refused(cogs.parse_args, ["--tiny", *SCAN_COGS, "--out", str(out)], "was not written by an hf-synthsample run",
             capsys)
    assert (out / "results.md").read_text() == "my notes"
    oren = _load("oren_schema2qa")
    _refused(oren.parse_args, ["--tiny", "--out", str(out)], "was not written by an hf-synthsample run", capsys)
    (tmp_path / "file").write_text("x")
    _refused(oren.parse_args, ["--tiny", "--out", str(tmp_path / "file")], "--out", capsys)


def _tiny_bert(folder):
    from transformers import BertConfig, BertModel

    from hf_synthsample.models import build_word_tokenizer

    tok = build_word_tokenizer(["jump twice", "I_JUMP I_JUMP"])
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=32,
                         pad_token_id=tok.pad_token_id)).save_pretrained(folder)
    tok.save_pretrained(folder)


def test_oren_checks_the_model_at_parse_time(capsys, tmp_path):
    oren = _load("oren_schema2qa")
    data = tmp_path / "data"
    data.mkdir()
    common = ["--tiny", "--data-dir", str(data), "--out", str(tmp_path / "out")]
    _refused(oren.parse_args, common + ["--init", f"warm:{tmp_path / 'nowhere'}"], "--init: ", capsys)
    (tmp_path / "empty").mkdir()
    _refused(oren.parse_args, common + ["--init", f"warm:{tmp_path / 'empty'}"], "not an encoder checkpoint", capsys)
    _tiny_bert(tmp_path / "bert")
    # a BERT is an encoder to warm-start from, not a seq2seq checkpoint
    _refused(oren.parse_args, common + ["--init", str(tmp_path / "bert")], "not an encoder-decoder", capsys)
    _refused(oren.parse_args, common + ["--init", str(tmp_path / "empty")], "has no config.json", capsys)
    assert oren.parse_args(common + ["--init", f"warm:{tmp_path / 'bert'}"]).init.startswith("warm:")
    assert not (tmp_path / "out").exists()


def test_missing_annotated_data_is_a_parse_error(capsys, tmp_path):
    oren = _load("oren_schema2qa")
    _refused(oren.parse_args, ["--tiny", "--data-dir", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")],
             "--data-dir: the annotated Schema2QA folder", capsys)
    assert not (tmp_path / "o").exists()


def test_a_mistake_found_while_running_is_one_line(capsys, monkeypatch):
    from harness import run_main

    monkeypatch.setattr(sys, "argv", ["demo.py"])

    def main(argv):
        raise FileExistsError("--out: results.md was not written by an hf-synthsample run")

    assert run_main(main) == 2
    err = capsys.readouterr().err
    assert err == "demo.py: error: --out: results.md was not written by an hf-synthsample run\n"
