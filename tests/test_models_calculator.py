"""Models part 1, item 4: the Calculator character-level LSTM classifier (Shin et al. 2019, section 6.1)."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
from datasets import Dataset  # noqa: E402
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer  # noqa: E402

from hf_synthsample.domains.calculator import answer  # noqa: E402
from hf_synthsample.models import (CharLSTMConfig, CharLSTMForSequenceClassification,  # noqa: E402
                                   build_calculator_model, evaluate_classifier, predict_classifier, train_classifier)
from hf_synthsample.models import calculator as calculator_module  # noqa: E402

SMALL = dict(hidden_size=16, embedding_dim=8)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def expressions(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        text = str(rng.randint(0, 9))
        for _ in range(rng.randint(1, 3)):
            text += rng.choice("+-*") + str(rng.randint(0, 9))
        out.append(text)
    return out


def last_digit_dataset(n: int, seed: int) -> Dataset:
    """Expressions labelled with their last digit; ``group``: short (one operator) or long."""
    ex = expressions(n, seed)
    return Dataset.from_dict({
        "expression": ex,
        "answer": [int(e[-1]) for e in ex],
        "group": ["short" if len(e) == 3 else "long" for e in ex],
    })


def test_forward_shapes_loss_and_padding_invariance():
    model, tok = build_calculator_model(**SMALL)
    assert isinstance(model.config, CharLSTMConfig) and model.config.num_labels == 10
    assert model.config.vocab_size == len(tok) == 19
    # N(0, 1) character embeddings (initializer_range's 0.02 kept long expressions from training), pad row 0
    emb = model.embeddings.weight.detach()
    assert 0.5 < emb[1:].std().item() < 1.5 and not emb[tok.pad_token_id].any()
    model.eval()
    texts = ["1+2", "(3-4)*5+6", "7"]
    batch = tok(texts, padding=True, return_tensors="pt")
    labels = torch.tensor([answer(t) for t in texts])
    out = model(**batch, labels=labels)
    assert tuple(out.logits.shape) == (3, 10)
    expected = torch.nn.functional.cross_entropy(out.logits, labels)
    assert torch.allclose(out.loss, expected)
    # a row's logits do not depend on the padding its batch needed
    for i, text in enumerate(texts):
        alone = model(**tok([text], return_tensors="pt")).logits
        assert torch.allclose(alone[0], out.logits[i], atol=1e-6)
    # without attention_mask the pad id marks the padding
    assert torch.allclose(model(input_ids=batch["input_ids"]).logits, out.logits)
    loss, logits = model(**batch, labels=labels, return_dict=False)
    assert torch.equal(logits, out.logits)


def test_save_load_roundtrip_identical_logits(tmp_path):
    model, tok = build_calculator_model(seed=3, **SMALL, num_layers=2, dropout=0.1)
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    assert AutoConfig.from_pretrained(tmp_path).model_type == "hf_synthsample_char_lstm"
    back = AutoModelForSequenceClassification.from_pretrained(tmp_path)
    back_tok = AutoTokenizer.from_pretrained(tmp_path)
    assert isinstance(back, CharLSTMForSequenceClassification)
    assert back.config.num_layers == 2 and back.config.id2label[7] == "7"
    texts = ["(1+2)*3", "9-8"]
    model.eval(), back.eval()
    a = model(**tok(texts, padding=True, return_tensors="pt")).logits
    b = back(**back_tok(texts, padding=True, return_tensors="pt")).logits
    # equal weights (checked below via state_dict); the LSTM kernel may round differently in the last bits
    torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-9)
    sb = back.state_dict()
    assert all(torch.equal(v, sb[k]) for k, v in model.state_dict().items())
    # same seed, same weights; another seed, others
    again, _ = build_calculator_model(seed=3, **SMALL, num_layers=2, dropout=0.1)
    other, _ = build_calculator_model(seed=4, **SMALL, num_layers=2, dropout=0.1)
    sd, sa, so = model.state_dict(), again.state_dict(), other.state_dict()
    assert all(torch.equal(sd[k], sa[k]) for k in sd)
    assert not all(torch.equal(sd[k], so[k]) for k in sd)


def test_lstm_learns_last_digit(tmp_path):
    train, test = last_digit_dataset(640, 0), last_digit_dataset(200, 1)
    model, tok = build_calculator_model(hidden_size=64, embedding_dim=16)
    before = evaluate_classifier(model, tok, test)["accuracy"]
    trainer = train_classifier(model, tok, train, output_dir=str(tmp_path), epochs=4, batch_size=32,
                               learning_rate=1e-2, disable_tqdm=True)
    assert trainer.state.global_step == 4 * 20
    after = evaluate_classifier(model, tok, test, group_column="group")
    assert after["num_examples"] == 200
    assert after["accuracy"] >= 80 > before + 40, (before, after["accuracy"])  # chance is 10 %
    assert set(after) >= {"accuracy_long", "accuracy_short"}


def test_evaluate_classifier_hand_computed(monkeypatch):
    model, tok = build_calculator_model(**SMALL)
    ds = Dataset.from_dict({
        "expression": ["1+2", "3*3", "4-5", "6", "7+7"],
        "answer": [3, 9, 9, 6, 4],
        "distribution": ["dcfg", "t2t", "t2t", "bal", "bal"],
    })
    canned = [3, 9, 1, 5, 4]  # right: rows 0, 1, 4
    monkeypatch.setattr(calculator_module, "predict_classifier", lambda *a, **k: list(canned))
    out = evaluate_classifier(model, tok, ds, group_column="distribution")
    assert out == {
        "accuracy": 60.0, "accuracy_bal": 50.0, "accuracy_dcfg": 100.0, "accuracy_t2t": 50.0,
        "num_examples": 5, "predictions": canned,
    }
    assert set(evaluate_classifier(model, tok, ds)) == {"accuracy", "num_examples", "predictions"}


def test_predict_classifier_order():
    model, tok = build_calculator_model(**SMALL)
    texts = expressions(30, 5)
    together = predict_classifier(model, tok, texts, batch_size=7)
    one_by_one = [predict_classifier(model, tok, [t])[0] for t in texts]
    assert together == one_by_one
    model.train()
    predict_classifier(model, tok, texts[:2])
    assert model.training


def test_calculator_bad_input(tmp_path):
    model, tok = build_calculator_model(**SMALL)
    ds = last_digit_dataset(8, 0)
    with pytest.raises(ValueError, match="unknown CharLSTMConfig field.*'hiden_size'.*accepted"):
        build_calculator_model(hiden_size=3)
    with pytest.raises(ValueError, match="hidden_size must be >= 1"):
        build_calculator_model(hidden_size=0)
    with pytest.raises(ValueError, match="dropout must be < 1"):
        build_calculator_model(dropout=1.0)
    with pytest.raises(ValueError, match="text_column: no column named 'expr'.*available columns"):
        train_classifier(model, tok, ds, text_column="expr", output_dir=str(tmp_path))
    with pytest.raises(ValueError, match="label_column 'answer': 1 label\\(s\\) outside 0..9; first at row 2"):
        train_classifier(model, tok, ds.map(lambda r, i: {"answer": 12 if i == 2 else r["answer"]}, with_indices=True),
                         output_dir=str(tmp_path))
    with pytest.raises(TypeError, match="must hold integers"):
        train_classifier(model, tok, ds, label_column="group", output_dir=str(tmp_path))
    with pytest.raises(ValueError, match="'epoch' is not a TrainingArguments field"):
        train_classifier(model, tok, ds, output_dir=str(tmp_path), epoch=3)
    with pytest.raises(ValueError, match="group_column: no column named 'distribution'"):
        evaluate_classifier(model, tok, ds, group_column="distribution")
    with pytest.raises(TypeError, match="single str"):
        predict_classifier(model, tok, "1+2")
    left = tok(["1+2", "3"], padding=True, return_tensors="pt")
    left["attention_mask"] = left["attention_mask"].flip(1)
    with pytest.raises(ValueError, match="only right padding"):
        model(**left)
