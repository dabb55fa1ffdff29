"""CartographyCallback: measures vs hand computation, data parallelism, resume, bad input."""

from __future__ import annotations

import math
import os
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from hf_synthsample.cartography import (CartographyCallback, CartographyCollator,  # noqa: E402
                                        TrainingDynamicsCallback, add_example_ids, load_dynamics, sequence_measures)

ALL = ("inv_ppl", "chia", "aum", "min_margin", "margin_deficit", "forgetting", "el2n", "loss")
STEP = ("inv_ppl", "chia", "aum", "min_margin", "margin_deficit", "el2n", "loss")

PAD = 1


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ----------------------------------------------------------------------------- tiny models / data
def bart(dropout=0.0, seed=0):
    from transformers import BartConfig, BartForConditionalGeneration

    torch.manual_seed(seed)
    return BartForConditionalGeneration(BartConfig(
        vocab_size=24, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=32,
        dropout=dropout, attention_dropout=0.0, activation_dropout=0.0, pad_token_id=PAD, bos_token_id=0,
        eos_token_id=2, decoder_start_token_id=0, forced_bos_token_id=None, forced_eos_token_id=None))


def t5(seed=0):
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    return T5ForConditionalGeneration(T5Config(
        vocab_size=24, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2,
        dropout_rate=0.0, pad_token_id=PAD, eos_token_id=2, decoder_start_token_id=PAD))


def gpt2(seed=0):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    return GPT2LMHeadModel(GPT2Config(vocab_size=24, n_positions=32, n_embd=16, n_layer=1, n_head=2,
                                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, pad_token_id=PAD,
                                      eos_token_id=2, bos_token_id=0))


def bert_cls(seed=0):
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    return BertForSequenceClassification(BertConfig(
        vocab_size=24, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=32, num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        pad_token_id=PAD))


def rows_for(task: str, n: int = 23, seed: int = 0) -> list[dict]:
    r = random.Random(seed)
    rows = []
    for _ in range(n):
        x = [r.randint(3, 23) for _ in range(r.randint(2, 6))]
        y = [r.randint(3, 23) for _ in range(r.randint(1, 5))] + [2]  # EOS is a gold token
        if task == "seq2seq":
            rows.append({"input_ids": x + [2], "attention_mask": [1] * (len(x) + 1), "labels": y})
        elif task == "causal_lm":  # prompt masked out of the labels
            rows.append({"input_ids": x + y, "attention_mask": [1] * (len(x) + len(y)),
                         "labels": [-100] * len(x) + y})
        else:
            rows.append({"input_ids": x, "attention_mask": [1] * len(x), "labels": r.randint(0, 2)})
    return rows


def pad_collate(features: list[dict]) -> dict:
    L = max(len(f["input_ids"]) for f in features)
    out = {
        "input_ids": torch.tensor([f["input_ids"] + [PAD] * (L - len(f["input_ids"])) for f in features]),
        "attention_mask": torch.tensor([f["attention_mask"] + [0] * (L - len(f["attention_mask"])) for f in features]),
    }
    if isinstance(features[0]["labels"], int):
        out["labels"] = torch.tensor([f["labels"] for f in features])
    else:
        T = max(len(f["labels"]) for f in features)
        out["labels"] = torch.tensor([f["labels"] + [-100] * (T - len(f["labels"])) for f in features])
    return out


def make_trainer(model, ds, out, callbacks, *, epochs=2, bs=4, lr=1e-3, **kw):
    from transformers import Trainer, TrainingArguments

    kw = {"save_strategy": "no", **kw}
    args = TrainingArguments(output_dir=str(out), per_device_train_batch_size=bs, num_train_epochs=epochs,
                             learning_rate=lr, remove_unused_columns=False, report_to=[], logging_strategy="no",
                             use_cpu=True, disable_tqdm=True, seed=0, **kw)
    return Trainer(model=model, args=args, train_dataset=ds, data_collator=CartographyCollator(pad_collate),
                   callbacks=callbacks)


def hand_measures(model, row: dict, task: str, full: bool = False):
    """inv_ppl, chia, T for one example, from an unpadded forward and an explicit softmax loop
    (``full``: a dict with aum, el2n, loss and correct too)."""
    model.eval()
    with torch.no_grad():
        batch = pad_collate([row])
        logits = model(**batch).logits[0].double().numpy()
    if task == "classification":
        targets = [(logits, row["labels"])]
    elif task == "seq2seq":
        targets = [(logits[t], y) for t, y in enumerate(row["labels"])]
    else:
        targets = [(logits[t - 1], y) for t, y in enumerate(row["labels"]) if y != -100]
    probs, margins, norms, hits = [], [], [], []
    for z, y in targets:
        e = np.exp(z - z.max())
        p = e / e.sum()
        probs.append(p[y])
        margins.append(z[y] - max(z[k] for k in range(len(z)) if k != y))
        onehot = np.zeros(len(z))
        onehot[y] = 1.0
        norms.append(math.sqrt(sum((p - onehot) ** 2)))
        hits.append(int(np.argmax(z)) == y)
    T = len(probs)
    inv_ppl, chia = math.exp(sum(math.log(p) for p in probs) / T), sum(probs) / T
    if not full:
        return inv_ppl, chia, T
    return {"inv_ppl": inv_ppl, "chia": chia, "num_tokens": T, "aum": sum(margins) / T, "min_margin": min(margins),
            "margin_deficit": sum(max(0.0, -m) for m in margins), "el2n": sum(norms) / T,
            "loss": -sum(math.log(p) for p in probs) / T, "correct": all(hits)}


# ----------------------------------------------------------------------------- measures
def test_measures_hand_known_logits():
    # p(gold) = 0.5, 0.9 ; third position is padding and must not count
    logits = torch.log(torch.tensor([[[0.5, 0.5], [0.9, 0.1], [0.01, 0.99]]]))
    m = sequence_measures(logits, torch.tensor([[1, 0, -100]]), task="seq2seq")
    assert m["chia"].item() == pytest.approx(0.7)
    assert m["inv_ppl"].item() == pytest.approx(math.sqrt(0.45))
    assert m["num_tokens"].item() == 2
    assert not m["correct"].item()  # argmax of position 0 is token 0 (tie -> first), gold is 1
    m = sequence_measures(logits, torch.tensor([[0, 0, -100]]), task="seq2seq")
    assert m["correct"].item()
    # causal: logits at t predict token t+1; the masked prompt (position 0) is skipped
    m = sequence_measures(logits, torch.tensor([[-100, 1, 0]]), task="causal_lm")
    assert m["chia"].item() == pytest.approx((0.5 + 0.9) / 2)
    # classification: gold-class probability
    m = sequence_measures(torch.log(torch.tensor([[0.2, 0.8], [0.6, 0.4]])), torch.tensor([1, 1]), task="classification")
    assert m["inv_ppl"].tolist() == pytest.approx([0.8, 0.4]) and m["chia"].tolist() == pytest.approx([0.8, 0.4])
    assert m["correct"].tolist() == [True, False]


def test_new_measures_hand_known_logits_three_layouts():
    """aum / el2n / loss on fixed logits: padding excluded, EOS (a gold token like any other) included."""
    z = torch.tensor([[[2.0, 0.0, 1.0], [0.0, 3.0, 0.0], [5.0, 0.0, 0.0]]])  # position 2: padding
    p = [np.exp(r) / np.exp(r).sum() for r in z[0].double().numpy()]

    def norm(q, y):
        return math.sqrt(sum((q[k] - (k == y)) ** 2 for k in range(3)))

    # seq2seq: gold 2 (margin 1 - 2 = -1), then EOS = 1 (margin 3 - 0 = 3); the pad position is ignored
    m = sequence_measures(z, torch.tensor([[2, 1, -100]]), task="seq2seq")
    assert m["aum"].item() == pytest.approx((-1 + 3) / 2)
    assert m["min_margin"].item() == pytest.approx(-1)  # the weakest gold token; the pad (margin 5 - 0) ignored
    assert m["margin_deficit"].item() == pytest.approx(1)  # only the negative margin counts, summed
    assert m["el2n"].item() == pytest.approx((norm(p[0], 2) + norm(p[1], 1)) / 2, rel=1e-5)
    assert m["loss"].item() == pytest.approx(-(math.log(p[0][2]) + math.log(p[1][1])) / 2, rel=1e-5)
    assert m["num_tokens"].item() == 2 and not m["correct"].item()
    # causal LM: logits at t predict t+1; labels [prompt, 1, 0] -> positions 0 (gold 1) and 1 (gold 0)
    m = sequence_measures(z, torch.tensor([[-100, 1, 0]]), task="causal_lm")
    assert m["aum"].item() == pytest.approx(((0 - 2) + (0 - 3)) / 2)
    assert m["min_margin"].item() == pytest.approx(-3)
    assert m["margin_deficit"].item() == pytest.approx(2 + 3)
    assert m["el2n"].item() == pytest.approx((norm(p[0], 1) + norm(p[1], 0)) / 2, rel=1e-5)
    # classification: the paper's margin on the class logits
    m = sequence_measures(z[0], torch.tensor([0, 1, 2]), task="classification")
    assert m["aum"].tolist() == pytest.approx([1.0, 3.0, -5.0])
    assert m["min_margin"].tolist() == pytest.approx([1.0, 3.0, -5.0])  # one token: the same margin
    assert m["margin_deficit"].tolist() == pytest.approx([0.0, 0.0, 5.0])
    assert m["el2n"].tolist() == pytest.approx([norm(p[0], 0), norm(p[1], 1), norm(p[2], 2)], rel=1e-5)
    assert m["loss"].tolist() == pytest.approx([-math.log(p[0][0]), -math.log(p[1][1]), -math.log(p[2][2])], rel=1e-5)
    assert m["correct"].tolist() == [True, True, False]
    # a tie at the maximum: margin 0; correct only when gold is the first maximum (greedy's pick)
    m = sequence_measures(torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]), torch.tensor([0, 1]), task="classification")
    assert m["aum"].tolist() == [0.0, 0.0] and m["correct"].tolist() == [True, False]
    # an example with no gold token: NaN, not 0
    m = sequence_measures(z, torch.tensor([[-100, -100, -100]]), task="seq2seq")
    assert all(math.isnan(m[k].item()) for k in STEP) and m["num_tokens"].item() == 0
    # only what is asked for is computed
    assert "aum" not in sequence_measures(z, torch.tensor([[2, 1, -100]]), measures=("el2n",))


def test_el2n_is_accurate_when_the_gold_probability_is_close_to_one():
    z = torch.tensor([[30.0, 0.0, 0.0]])  # p_gold = 1 - 1.9e-13: 1 - 2 p + sum p^2 would cancel to 0
    expected = math.sqrt(2 * math.exp(-30) ** 2 + (2 * math.exp(-30)) ** 2)
    got = sequence_measures(z, torch.tensor([0]), task="classification")["el2n"].item()
    assert got == pytest.approx(expected, rel=1e-4, abs=0)


def test_measures_are_the_same_in_small_chunks(monkeypatch):
    from hf_synthsample.cartography import measures

    torch.manual_seed(0)
    logits, labels = torch.randn(3, 5, 7), torch.randint(0, 7, (3, 5))
    labels[0, 3:] = -100
    whole = sequence_measures(logits, labels)
    monkeypatch.setattr(measures, "_CHUNK_ELEMENTS", 8)  # one position per chunk
    parts = sequence_measures(logits, labels)
    for k in ("inv_ppl", "chia", "aum", "min_margin", "margin_deficit", "el2n", "loss", "correct", "num_tokens"):
        assert torch.equal(whole[k], parts[k]), k


@pytest.mark.parametrize("task,factory", [("seq2seq", bart), ("seq2seq", t5), ("causal_lm", gpt2),
                                          ("classification", bert_cls)])
def test_callback_values_equal_hand_computed(tmp_path, task, factory):
    """lr=0 keeps the weights fixed, so the values recorded from the (shuffled, padded) training
    batches must equal an unpadded per-example computation; EOS counts, padding does not."""
    from datasets import Dataset

    rows = rows_for(task)
    ds = add_example_ids(Dataset.from_list(rows))
    model = factory()
    cb = TrainingDynamicsCallback(measures=ALL)
    make_trainer(model, ds, tmp_path, [cb], epochs=2, lr=0.0).train()
    t = load_dynamics(tmp_path / "cartography")
    assert t["meta"]["task"] == task and t["meta"]["measures"] == list(ALL)
    df = t["train"].to_pandas()
    assert len(df) == 2 * len(rows)
    assert sorted(zip(df.example_id, df.epoch)) == [(i, e) for i in range(len(rows)) for e in (0, 1)]
    for row_id, row in enumerate(rows):
        want = hand_measures(model, row, task, full=True)
        got = df[df.example_id == row_id]
        for k in STEP:
            assert got[k].to_numpy() == pytest.approx([want[k]] * 2, rel=1e-4, abs=1e-5), k
        assert got.num_tokens.tolist() == [want["num_tokens"]] * 2
        assert got.correct.tolist() == [want["correct"]] * 2


def test_only_the_requested_measures_are_written(tmp_path):
    from datasets import Dataset

    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=8)))
    make_trainer(bart(), ds, tmp_path, [CartographyCallback(measures=("aum",))], epochs=1).train()
    cols = load_dynamics(tmp_path / "cartography")["train"].column_names
    assert cols == ["example_id", "epoch", "step", "order", "rank", "aum", "correct", "num_tokens"]
    assert CartographyCallback is TrainingDynamicsCallback


# ----------------------------------------------------------------------------- data parallelism
def _two_process_run(out: str, world_run: bool, lr: float = 1e-3) -> None:
    from datasets import Dataset

    if world_run:  # accelerate would give each CPU process 2 threads; the machine has 2 cores
        os.environ["OMP_NUM_THREADS"] = "1"
    torch.set_num_threads(1)
    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=37)))
    cb = TrainingDynamicsCallback(measures=ALL)
    # 37 rows, 2 x 4 per step: shuffled, an uneven last batch padded by wrap-around, grad accumulation
    make_trainer(bart(dropout=0.1 if lr else 0.0), ds, out, [cb], epochs=3, bs=4, gradient_accumulation_steps=2,
                 lr=lr).train()


def test_two_processes_record_each_example_once_per_epoch(tmp_path):
    from cartography_two_process_run import spawn_launcher

    single, double = tmp_path / "single", tmp_path / "double"
    _two_process_run(str(single), False)
    spawn_launcher(_two_process_run, args=(str(double), True), num_processes=2)
    one = load_dynamics(single / "cartography")["train"].to_pandas()
    two = load_dynamics(double / "cartography")["train"].to_pandas()
    key1 = list(zip(one.example_id, one.epoch))
    key2 = list(zip(two.example_id, two.epoch))
    assert len(set(key2)) == len(key2) and len(set(key1)) == len(key1)
    assert set(key1) == set(key2) == {(i, e) for i in range(37) for e in range(3)}
    assert set(two["rank"]) == {0, 1}  # both processes contributed
    for k in STEP:  # every new column present and filled
        assert two[k].notna().all() and one[k].notna().all(), k


@pytest.mark.slow
def test_two_processes_give_the_single_process_values(tmp_path):
    """Frozen weights (lr=0, no dropout): each (example, epoch) row of a 2-process run holds exactly
    the values a single process records, for every measure (batch composition cannot matter)."""
    from cartography_two_process_run import spawn_launcher

    single, double = tmp_path / "single", tmp_path / "double"
    _two_process_run(str(single), False, 0.0)
    spawn_launcher(_two_process_run, args=(str(double), True, 0.0), num_processes=2)
    one = load_dynamics(single / "cartography")["train"].to_pandas().sort_values(["epoch", "example_id"])
    two = load_dynamics(double / "cartography")["train"].to_pandas().sort_values(["epoch", "example_id"])
    assert list(zip(one.example_id, one.epoch)) == list(zip(two.example_id, two.epoch))
    for k in STEP:
        np.testing.assert_allclose(one[k], two[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert one.correct.tolist() == two.correct.tolist()


# ----------------------------------------------------------------------------- resume
class _Crash(Exception):
    pass


class _KillAt(transformers.TrainerCallback):
    def __init__(self, step):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise _Crash()


def test_kill_and_resume_gives_the_same_dynamics(tmp_path):
    from datasets import Dataset

    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=30)))
    common = dict(epochs=3, bs=4, save_strategy="steps", save_steps=5)
    full = tmp_path / "full"
    make_trainer(bart(dropout=0.1), ds, full, [CartographyCallback(ALL)], **common).train()

    part = tmp_path / "part"
    with pytest.raises(_Crash):  # dies at step 13: the rows of steps 11-13 were never saved
        make_trainer(bart(dropout=0.1), ds, part, [CartographyCallback(ALL), _KillAt(13)], **common).train()
    saved = load_dynamics(part / "checkpoint-10" / "cartography")["train"].to_pandas()
    assert 0 < len(saved) < 90 and saved.step.max() < 10
    make_trainer(bart(dropout=0.1), ds, part, [CartographyCallback(ALL)], **common).train(
        resume_from_checkpoint=str(part / "checkpoint-10"))

    a = load_dynamics(full / "cartography")["train"].to_pandas().sort_values(["epoch", "example_id"])
    b = load_dynamics(part / "cartography")["train"].to_pandas().sort_values(["epoch", "example_id"])
    assert len(a) == len(b) == 90
    assert list(zip(a.example_id, a.epoch)) == list(zip(b.example_id, b.epoch))
    assert a.step.tolist() == b.step.tolist()
    for k in STEP:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert a.correct.tolist() == b.correct.tolist()


def test_resume_without_saved_dynamics_fails_at_train_start(tmp_path):
    from datasets import Dataset

    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=12)))
    out = tmp_path / "run"
    make_trainer(bart(), ds, out, [], epochs=1, save_strategy="steps", save_steps=2).train()
    with pytest.raises(ValueError, match="holds no dynamics"):
        make_trainer(bart(), ds, out, [CartographyCallback()], epochs=2, save_strategy="steps",
                     save_steps=2).train(resume_from_checkpoint=str(out / "checkpoint-2"))


# ----------------------------------------------------------------------------- eval pass, BLEU
@pytest.mark.parametrize("task,factory", [("seq2seq", bart), ("seq2seq", t5), ("causal_lm", gpt2)])
def test_eval_pass_bleu_and_exact_match(tmp_path, task, factory):
    import sacrebleu
    from datasets import Dataset

    rows = rows_for(task, n=16)
    ds = add_example_ids(Dataset.from_list(rows))
    model = factory()
    cb = CartographyCallback(measures=("inv_ppl", "bleu"), eval_examples=6, seed=3)
    make_trainer(model, ds, tmp_path, [cb], epochs=1, lr=0.0).train()
    ev = load_dynamics(tmp_path / "cartography")["eval"].to_pandas()
    assert len(ev) == 6 and ev.epoch.tolist() == [0] * 6
    model.eval()
    for _, r in ev.iterrows():
        row = rows[int(r.example_id)]
        inv_ppl, _, _ = hand_measures(model, row, task)
        assert r.inv_ppl == pytest.approx(inv_ppl, rel=1e-4)
        gold = [t for t in row["labels"] if t not in (-100, 2)]
        limit = len(gold) + 1 + 5  # gold tokens with EOS, + 5
        with torch.no_grad():
            if task == "seq2seq":
                gen = model.generate(torch.tensor([row["input_ids"]]), max_new_tokens=limit,
                                     do_sample=False, num_beams=1)[0].tolist()[1:]
            else:  # decode from the prompt (the masked part of the labels)
                prompt = row["input_ids"][: row["labels"].index(next(t for t in row["labels"] if t != -100))]
                gen = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                     max_new_tokens=limit, do_sample=False, num_beams=1,
                                     pad_token_id=PAD)[0].tolist()[len(prompt):]
        hyp = []
        for t in gen:
            if t == 2:
                break
            if t not in (0, 1):
                hyp.append(t)
        # the decode is the hypothesis, the gold the reference (swapping them changes the score)
        expected = sacrebleu.sentence_bleu(" ".join(map(str, hyp)), [" ".join(map(str, gold))]).score / 100
        assert r.bleu == pytest.approx(expected, abs=1e-5)
        assert bool(r.exact_match) == (hyp == gold)


# ----------------------------------------------------------------------------- bad input
def test_bad_measures_fail_at_construction():
    with pytest.raises(ValueError, match="accepted values"):
        CartographyCallback(measures=("perplexity",))
    with pytest.raises(ValueError, match="task"):
        CartographyCallback(task="regression")
    with pytest.raises(ValueError, match="eval_examples"):
        CartographyCallback(eval_examples=0)


def _fails_before_any_step(tmp_path, ds, model, cb, match, **kw):
    class _NoStep(transformers.TrainerCallback):
        def on_step_begin(self, *a, **k):
            raise AssertionError("a training step ran before the error")

    with pytest.raises(ValueError, match=match):
        make_trainer(model, ds, tmp_path, [cb, _NoStep()], **kw).train()


def test_bad_input_fails_at_train_start(tmp_path):
    from datasets import Dataset

    rows = rows_for("seq2seq", n=8)
    with_ids = add_example_ids(Dataset.from_list(rows))
    _fails_before_any_step(tmp_path, Dataset.from_list(rows), bart(), CartographyCallback(), "no id column")
    no_labels = add_example_ids(Dataset.from_list([{k: v for k, v in r.items() if k != "labels"} for r in rows]))
    _fails_before_any_step(tmp_path, no_labels, bart(), CartographyCallback(), "no labels column")
    cls_ds = add_example_ids(Dataset.from_list(rows_for("classification", n=8)))
    _fails_before_any_step(tmp_path, cls_ds, bert_cls(), CartographyCallback(measures=("inv_ppl", "bleu")), "bleu")

    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(output_dir=str(tmp_path), remove_unused_columns=True, report_to=[], use_cpu=True,
                             disable_tqdm=True, save_strategy="no")
    trainer = Trainer(model=bart(), args=args, train_dataset=with_ids, data_collator=CartographyCollator(pad_collate),
                      callbacks=[CartographyCallback()])
    with pytest.raises(ValueError, match="remove_unused_columns=False"):
        trainer.train()
    trainer = Trainer(model=bart(), args=TrainingArguments(output_dir=str(tmp_path), remove_unused_columns=False,
                                                           report_to=[], use_cpu=True, save_strategy="no"),
                      train_dataset=with_ids, data_collator=pad_collate, callbacks=[CartographyCallback()])
    with pytest.raises(ValueError, match="CartographyCollator"):
        trainer.train()


def test_measures_a_model_cannot_give_fail_before_any_step(tmp_path):
    from datasets import Dataset

    reg = bert_cls()
    reg.config.problem_type, reg.config.num_labels = "regression", 1
    cls_ds = add_example_ids(Dataset.from_list(rows_for("classification", n=8)))
    _fails_before_any_step(tmp_path, cls_ds, reg, CartographyCallback(measures=("aum", "forgetting")),
                           r"measures \['aum', 'forgetting'\].*regression")


class _NoLogits(torch.nn.Module):
    """A model whose forward returns only the loss (as some fused-loss models do)."""

    def __init__(self):
        super().__init__()
        self.inner = bart()
        self.config = self.inner.config

    def forward(self, **kw):
        return {"loss": self.inner(**kw).loss}


def test_a_model_without_logits_fails_at_the_first_forward(tmp_path):
    from datasets import Dataset

    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=8)))
    model = _NoLogits()
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(ValueError, match=r"measures \['aum', 'el2n'\]: the model's forward returned no logits"):
        make_trainer(model, ds, tmp_path, [CartographyCallback(measures=("aum", "el2n"), task="seq2seq")]).train()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))  # no optimizer step ran


# ----------------------------------------------------------------------------- curricula in a Trainer
def test_trainer_follows_a_curriculum_order(tmp_path):
    """A stock Trainer with train_sampling_strategy="sequential" trains on the schedule's batches, in order."""
    from datasets import Dataset

    from hf_synthsample.cartography import ExponentialPacing

    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=20)))
    order = ExponentialPacing(np.arange(20)[::-1], batch_size=4, start=0.2, growth=2.0, seed=0).indices(6)
    seen = []

    def logging_collate(features):
        seen.append([f["example_id"] for f in features])
        return pad_collate([{k: v for k, v in f.items() if k != "example_id"} for f in features])

    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, num_train_epochs=1,
                             remove_unused_columns=False, report_to=[], save_strategy="no", use_cpu=True,
                             disable_tqdm=True, train_sampling_strategy="sequential")
    Trainer(model=bart(), args=args, train_dataset=ds.select(order), data_collator=logging_collate).train()
    assert [i for b in seen for i in b] == order.tolist()
    assert set(seen[0]) <= {19, 18, 17, 16}  # 20 % of the ranking first: its 4 best-ranked rows
