"""The attentional LSTM encoder-decoder (models.lstm): shapes, loss, padding, decoding, save/load, training."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from datasets import Dataset  # noqa: E402

from hf_synthsample.models import (LSTMSeq2SeqForConditionalGeneration, build_scratch_model,  # noqa: E402
                                   build_word_tokenizer, evaluate_seq2seq, generate_predictions, load_seq2seq,
                                   scratch_config, train_seq2seq)

COUNTS = {"once": 1, "twice": 2, "thrice": 3}
TINY = dict(hidden_size=32, embedding_dim=16, dropout=0.0)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def scan_like() -> Dataset:
    src = [f"w{v} {c}" for v in range(10) for c in COUNTS]
    tgt = [" ".join([f"W{v}"] * n) for v in range(10) for n in COUNTS.values()]
    return Dataset.from_dict({"src": src, "tgt": tgt})


@pytest.fixture
def tok():
    return build_word_tokenizer(scan_like(), columns=["src", "tgt"])


def test_config_from_tokenizer_and_overrides(tok):
    cfg = scratch_config(tok, "lstm", hidden_size=64)
    assert (cfg.hidden_size, cfg.embedding_dim, cfg.num_layers, cfg.vocab_size) == (64, 128, 1, len(tok))
    assert cfg.decoder_start_token_id == tok.bos_token_id and cfg.is_encoder_decoder
    with pytest.raises(ValueError, match="unknown LSTMSeq2SeqConfig field.*'hiden_size': did you mean"):
        scratch_config(tok, "lstm", hiden_size=64)
    with pytest.raises(ValueError, match="hidden_size must be even"):
        build_scratch_model(tok, "lstm", hidden_size=33)


def test_loss_is_the_mean_token_cross_entropy_and_ignores_minus_100(tok):
    model = build_scratch_model(tok, "lstm", **TINY).eval()
    enc = tok(["w1 twice", "w2 once"], padding=True, return_tensors="pt")
    labels = tok(["W1 W1", "W2"], padding=True, return_tensors="pt")["input_ids"]
    labels = labels.masked_fill(labels == tok.pad_token_id, -100)
    out = model(**enc, labels=labels)
    assert out.logits.shape == (2, labels.shape[1], len(tok))
    keep = labels != -100
    by_hand = -out.logits.log_softmax(-1)[keep].gather(-1, labels[keep][:, None]).mean()
    assert out.loss.item() == pytest.approx(by_hand.item(), rel=1e-5)
    # teacher forcing: the first decoder input is the start token, then the labels shifted right
    shifted = model._shift_right(labels)
    assert shifted[:, 0].tolist() == [tok.bos_token_id] * 2 and (shifted != -100).all()


def test_padding_does_not_change_a_row(tok):
    model = build_scratch_model(tok, "lstm", **TINY).eval()
    alone = tok(["w1 once"], return_tensors="pt")
    batch = tok(["w1 once", "w9 thrice w9 thrice"], padding=True, return_tensors="pt")
    labels = tok(["W1"], return_tensors="pt")["input_ids"]
    a = model(**alone, labels=labels).logits
    b = model(**batch, labels=torch.cat([labels, labels])).logits[:1]
    assert torch.allclose(a, b, atol=1e-6)
    with pytest.raises(ValueError, match="only right padding"):
        model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"].flip(1), labels=torch.cat([labels, labels]))


def test_greedy_generate_matches_step_by_step_argmax(tok):
    model = build_scratch_model(tok, "lstm", seed=3, **TINY).eval()
    enc = tok(["w3 thrice"], return_tensors="pt")
    out = model.generate(**enc, max_new_tokens=5)
    assert out[0, 0].item() == model.config.decoder_start_token_id
    prefix = out[:, :1]
    for t in range(1, out.shape[1]):  # re-run the teacher-forced decoder on the generated prefix
        logits = model(**enc, decoder_input_ids=prefix).logits[:, -1]
        assert logits.argmax(-1).item() == out[0, t].item()
        prefix = out[:, : t + 1]
    with pytest.raises(ValueError, match="greedily only: num_beams must be 1"):
        model.generate(**enc, num_beams=2)


def test_learns_a_scan_like_task_and_round_trips(tok, tmp_path):
    ds = scan_like()
    model = build_scratch_model(tok, "lstm", seed=0, **TINY)
    train = Dataset.from_dict({"src": list(ds["src"]) * 8, "tgt": list(ds["tgt"]) * 8}).shuffle(seed=1)
    train_seq2seq(model, tok, train, source_column="src", target_column="tgt", output_dir=str(tmp_path / "run"),
                  max_steps=120, batch_size=16, learning_rate=1e-2, disable_tqdm=True)
    scores = evaluate_seq2seq(model, tok, ds.shuffle(seed=2), source_column="src", target_column="tgt", max_new_tokens=4)
    assert scores["exact_match"] >= 90, scores["predictions"]
    model.save_pretrained(tmp_path / "ckpt")
    tok.save_pretrained(tmp_path / "ckpt")
    loaded, loaded_tok = load_seq2seq(tmp_path / "ckpt")
    assert isinstance(loaded, LSTMSeq2SeqForConditionalGeneration)
    texts = ["w4 twice", "w0 thrice", "w7 once"]
    assert generate_predictions(loaded, loaded_tok, texts, max_new_tokens=4) == generate_predictions(
        model, tok, texts, max_new_tokens=4)


def test_seeded_weights(tok):
    a = build_scratch_model(tok, "lstm", seed=5, **TINY).state_dict()
    b = build_scratch_model(tok, "lstm", seed=5, **TINY).state_dict()
    c = build_scratch_model(tok, "lstm", seed=6, **TINY).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a) and not all(torch.equal(a[k], c[k]) for k in a)
