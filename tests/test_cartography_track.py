"""track_dynamics: one call on a built Trainer / Seq2SeqTrainer / TRL SFTTrainer, PEFT, bf16 on CPU.

Data are shuffled, filtered and selected after the ids are added; the expected values are
hand-computed per example id (gold-token counts) or recomputed from the very logits of the
training forward passes.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")

from datasets import Dataset  # noqa: E402
from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments, Trainer, TrainingArguments  # noqa: E402

from hf_synthsample.cartography import (  # noqa: E402
    CartographyCollator,
    TrainingDynamicsCallback,
    add_example_ids,
    load_dynamics,
    sequence_measures,
    track_dynamics,
)
from hf_synthsample.cartography.fused_head import token_log_prob_measures  # noqa: E402


def _need(module: str):
    return pytest.importorskip(module, reason=f"{module} is not installed (pip install 'hf-synthsample[{module}]'); "
                                              f"CI installs it")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ----------------------------------------------------------------------------- tiny data / models
WORDS = ["<pad>", "<s>", "</s>", "<unk>", "jump", "walk", "look", "twice", "thrice", "JUMP", "WALK", "LOOK"]
PAD, EOS = 0, 2


def tokenizer():
    """A word-level tokenizer from a fixed vocabulary (offline; no EOS appended: TRL adds its own)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")


def bart(seed=0):
    from transformers import BartConfig, BartForConditionalGeneration

    torch.manual_seed(seed)
    return BartForConditionalGeneration(BartConfig(
        vocab_size=len(WORDS), d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=32,
        dropout=0.0, pad_token_id=PAD, bos_token_id=1, eos_token_id=EOS, decoder_start_token_id=EOS,
        forced_bos_token_id=None, forced_eos_token_id=None))


def gpt2(seed=0):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    return GPT2LMHeadModel(GPT2Config(vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=1, n_head=2,
                                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, pad_token_id=PAD,
                                      eos_token_id=EOS, bos_token_id=1))


def commands(n: int = 18):
    """SCAN-like prompt/completion rows; row i repeats its action 2 or 3 times (i % 2)."""
    verbs = ["jump", "walk", "look"]
    rows = []
    for i in range(n):
        verb, times = verbs[i % 3], 2 + i % 2
        rows.append({"prompt": f"{verb} {'twice' if times == 2 else 'thrice'}",
                     "completion": " " + " ".join([verb.upper()] * times)})
    return rows


def seq2seq_rows(n: int = 20) -> Dataset:
    """Tokenized seq2seq rows with a raw-text column the model does not take; example i has
    i % 4 + 1 gold tokens (EOS included)."""
    return Dataset.from_dict({
        "source": [f"row {i}" for i in range(n)],
        "input_ids": [[4 + i % 3, 7 + i % 2, EOS] for i in range(n)],
        "labels": [[9 + (i + k) % 3 for k in range(i % 4)] + [EOS] for i in range(n)],
    })


def s2s_args(tmp_path, **kw):
    return Seq2SeqTrainingArguments(str(tmp_path / "run"), num_train_epochs=2, per_device_train_batch_size=4,
                                    learning_rate=1e-2, report_to=[], save_strategy="no", use_cpu=True,
                                    logging_strategy="no", **kw)


def by_id(table, column) -> dict:
    return {(int(i), int(e)): v for i, e, v in zip(table["example_id"].to_numpy(), table["epoch"].to_numpy(),
                                                   table[column].to_numpy(zero_copy_only=False))}


def capture(model):
    """Record (ids, labels, logits) of every training forward, before the callback pops the ids."""
    seen, pending = [], {}

    def pre(module, args, kwargs):
        if module.training:
            pending["ids"] = kwargs["cartography_ids"].clone()
        return None

    def post(module, args, kwargs, output):
        if module.training:
            seen.append((pending.pop("ids"), kwargs["labels"].detach().clone(), output.logits.detach().clone()))
        return None

    model.register_forward_pre_hook(pre, with_kwargs=True, prepend=True)
    model.register_forward_hook(post, with_kwargs=True)
    return seen


# ----------------------------------------------------------------------------- stock Trainer
def test_one_call_on_a_seq2seq_trainer_ids_survive_shuffle_filter_select(tmp_path):
    from transformers import DataCollatorForSeq2Seq

    tok, model = tokenizer(), bart()
    data = add_example_ids(seq2seq_rows()).shuffle(seed=3).filter(lambda r: r["example_id"] % 5 != 0).select(range(12))
    collator = DataCollatorForSeq2Seq(tok, model=model, label_pad_token_id=-100)
    args = s2s_args(tmp_path)  # remove_unused_columns stays True: the text column is dropped, the ids kept
    trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=data, data_collator=collator)
    assert track_dynamics(trainer, measures=("inv_ppl", "loss", "aum")) is trainer
    trainer.train()

    table = load_dynamics(tmp_path / "run" / "cartography")["train"]
    ids = sorted(data["example_id"])
    assert sorted(set(table["example_id"].to_pylist())) == ids and len(ids) == 12
    assert table.num_rows == 2 * 12  # each example once per epoch
    tokens = by_id(table, "num_tokens")
    assert {k: int(v) for k, v in tokens.items()} == {(i, e): i % 4 + 1 for i in ids for e in (0, 1)}
    # the user's objects are as they were, the collator is wrapped, the wrapped one still answers
    assert args.remove_unused_columns is True
    assert trainer.train_dataset is data and "source" in trainer.train_dataset.column_names
    assert isinstance(trainer.data_collator, CartographyCollator) and trainer.data_collator.collator is collator
    assert trainer.data_collator.tokenizer is tok


def test_ids_are_added_when_the_training_set_has_none(tmp_path):
    from transformers import DataCollatorForSeq2Seq

    tok, model = tokenizer(), bart()
    data = seq2seq_rows(10).shuffle(seed=0)  # no ids: the trainer's rows are numbered 0..9
    trainer = track_dynamics(Seq2SeqTrainer(model=model, args=s2s_args(tmp_path), train_dataset=data,
                                            data_collator=DataCollatorForSeq2Seq(tok, model=model)))
    assert trainer.train_dataset["example_id"] == list(range(10))
    trainer.train()
    table = load_dynamics(tmp_path / "run" / "cartography")["train"]
    gold = [len(r) for r in trainer.train_dataset["labels"]]  # row j's gold-token count (EOS included)
    assert {k: int(v) for k, v in by_id(table, "num_tokens").items()} == {(j, e): gold[j] for j in range(10)
                                                                          for e in (0, 1)}


@pytest.mark.parametrize("bf16,weights", [(True, "float32"), (True, "bfloat16"), (False, "bfloat16")])
def test_bf16_on_cpu_measures_are_float32_from_the_bf16_logits(tmp_path, bf16, weights):
    """A causal LM on CPU under ``bf16=True`` (autocast; accelerate hands the bfloat16 logits back upcast
    to float32) or with bfloat16 weights and ``bf16=False`` (bfloat16 logit tensors): the logits hold
    bfloat16 values, the measures are computed in float32 from them (the recorded values equal float32
    math on the captured logits, which bfloat16 math misses by ~1e-3), and the prompt is masked."""
    model = gpt2().to(getattr(torch, weights))
    n = 12
    prompt_len = [2 + i % 2 for i in range(n)]
    completion_len = [1 + i % 3 for i in range(n)]
    ids_ = [[4 + (i + k) % 8 for k in range(p + c)] + [EOS] for i, (p, c) in enumerate(zip(prompt_len, completion_len))]
    labels = [[-100] * p + row[p:] for row, p in zip(ids_, prompt_len)]
    data = add_example_ids(Dataset.from_dict({"input_ids": ids_, "labels": labels}))
    data = data.shuffle(seed=1).filter(lambda r: r["example_id"] != 4)
    from transformers import DataCollatorForSeq2Seq

    args = TrainingArguments(str(tmp_path / "run"), num_train_epochs=2, per_device_train_batch_size=4,
                             learning_rate=1e-2, report_to=[], save_strategy="no", use_cpu=True, bf16=bf16,
                             logging_strategy="no")
    trainer = Trainer(model=model, args=args, train_dataset=data,
                      data_collator=DataCollatorForSeq2Seq(tokenizer(), label_pad_token_id=-100))
    track_dynamics(trainer, measures=("inv_ppl", "chia", "aum", "el2n", "loss"))
    seen = capture(model)
    trainer.train()

    assert seen and all(torch.equal(lg, lg.bfloat16().to(lg.dtype)) for _, _, lg in seen)  # bfloat16 values
    assert {lg.dtype for _, _, lg in seen} == {torch.float32 if bf16 else torch.bfloat16}
    table = load_dynamics(tmp_path / "run" / "cartography")["train"]
    epochs = table["epoch"].to_numpy()
    step_ids = np.concatenate([i.numpy() for i, _, _ in seen])
    assert len(step_ids) == table.num_rows
    epoch_of_step = np.repeat(np.arange(len(seen)) // 3, [len(i) for i, _, _ in seen])  # 11 rows: 3 steps/epoch
    for name in ("inv_ppl", "chia", "aum", "el2n", "loss"):
        recorded = by_id(table, name)
        expected, expected_bf16 = {}, {}
        for (ids, lab, logits), start in zip(seen, np.cumsum([0] + [len(i) for i, _, _ in seen])[:-1]):
            m32 = sequence_measures(logits.float(), lab, task="causal_lm", measures=(name,))[name]
            lp16 = torch.log_softmax(logits.bfloat16(), dim=-1).float()  # what bfloat16 math would give
            m16 = sequence_measures(lp16, lab, task="causal_lm", measures=(name,))[name]
            for j, i in enumerate(ids.tolist()):
                expected[(i, int(epoch_of_step[start + j]))] = float(m32[j])
                expected_bf16[(i, int(epoch_of_step[start + j]))] = float(m16[j])
        keys = sorted(recorded)
        assert keys == sorted(expected) and set(epochs) == {0, 1}
        got = np.array([recorded[k] for k in keys])
        np.testing.assert_allclose(got, [expected[k] for k in keys], rtol=1e-6, atol=1e-7)
        if name in ("inv_ppl", "chia", "loss"):  # bfloat16 log-softmax would have been measurably off
            assert np.max(np.abs(got - [expected_bf16[k] for k in keys])) > 1e-4
    gold = {int(i): completion_len[int(i)] + 1 for i in data["example_id"]}  # completion + EOS; prompt masked
    assert {k: int(v) for k, v in by_id(table, "num_tokens").items()} == {(i, e): g for i, g in gold.items()
                                                                          for e in (0, 1)}


def test_an_already_wrapped_collator_and_the_old_recipe_keep_working(tmp_path):
    from transformers import DataCollatorForSeq2Seq

    tok, model = tokenizer(), bart()
    wrapped = CartographyCollator(DataCollatorForSeq2Seq(tok, model=model), drop_columns=["source"])
    data = add_example_ids(seq2seq_rows(8))
    trainer = Seq2SeqTrainer(model=model, args=s2s_args(tmp_path, remove_unused_columns=False), train_dataset=data,
                             data_collator=wrapped)
    track_dynamics(trainer, measures=("loss",))
    assert trainer.data_collator is wrapped  # not wrapped twice
    trainer.train()
    assert load_dynamics(tmp_path / "run" / "cartography")["train"].num_rows == 16


def test_collator_delegates_attributes_and_pickles():
    from transformers import DataCollatorForSeq2Seq

    tok = tokenizer()
    c = CartographyCollator(DataCollatorForSeq2Seq(tok, label_pad_token_id=-100))
    assert c.label_pad_token_id == -100 and c.tokenizer is tok
    with pytest.raises(AttributeError):
        c.no_such_attribute
    back = pickle.loads(pickle.dumps(CartographyCollator(id_column="idx")))
    assert back.id_column == "idx" and back([{"input_ids": [1], "idx": 4}])["cartography_ids"].tolist() == [4]


def test_bad_input_is_refused_before_the_trainer_changes(tmp_path):
    from transformers import DataCollatorForSeq2Seq

    tok, model = tokenizer(), bart()
    collator = DataCollatorForSeq2Seq(tok, model=model)
    trainer = Seq2SeqTrainer(model=model, args=s2s_args(tmp_path), train_dataset=seq2seq_rows(6), data_collator=collator)
    before = (trainer.train_dataset, trainer.data_collator, list(trainer.callback_handler.callbacks))
    with pytest.raises(ValueError, match="measures"):
        track_dynamics(trainer, measures=("perplexity",))
    with pytest.raises(TypeError, match="eval_pas"):
        track_dynamics(trainer, eval_pas=True)
    with pytest.raises(TypeError, match="trainer must be a transformers.Trainer"):
        track_dynamics(model)
    with pytest.raises(ValueError, match="id_column"):
        trainer.data_collator = CartographyCollator(collator, id_column="idx")
        track_dynamics(trainer)
    trainer.data_collator = collator
    assert (trainer.train_dataset, trainer.data_collator, list(trainer.callback_handler.callbacks)) == before

    track_dynamics(trainer)
    with pytest.raises(ValueError, match="already records training dynamics"):
        track_dynamics(trainer, measures=("loss",))
    assert sum(isinstance(c, TrainingDynamicsCallback) for c in trainer.callback_handler.callbacks) == 1

    torch_rows = [{"input_ids": [4, EOS], "labels": [9, EOS]}] * 3  # a plain list: no ids to add
    t2 = Seq2SeqTrainer(model=model, args=s2s_args(tmp_path), train_dataset=torch_rows, data_collator=collator)
    with pytest.raises(ValueError, match="trainer.train_dataset: a list cannot be given ids"):
        track_dynamics(t2)
    stream = seq2seq_rows(4).to_iterable_dataset()
    t3 = Seq2SeqTrainer(model=model, args=s2s_args(tmp_path, max_steps=1), train_dataset=stream,
                        data_collator=collator)
    with pytest.raises(TypeError, match="streaming IterableDataset"):
        track_dynamics(t3)


# ----------------------------------------------------------------------------- TRL
def sft_config(tmp_path, **kw):
    trl = _need("trl")
    base = dict(num_train_epochs=2, per_device_train_batch_size=4, learning_rate=1e-2, report_to=[],
                save_strategy="no", use_cpu=True, logging_strategy="no", bf16=False)
    base.update(kw)
    return trl.SFTConfig(str(tmp_path / "sft"), **base)


def test_sft_trainer_prompt_completion_masks_the_prompt_under_bf16(tmp_path):
    trl = _need("trl")
    raw = add_example_ids(Dataset.from_list(commands(18)))
    data = raw.shuffle(seed=2).filter(lambda r: r["example_id"] % 4 != 1).select(range(11))
    trainer = trl.SFTTrainer(model=gpt2(), args=sft_config(tmp_path, bf16=True), train_dataset=data,
                             processing_class=tokenizer())
    track_dynamics(trainer, measures=("inv_ppl", "chia", "loss", "forgetting"))
    trainer.train()

    table = load_dynamics(tmp_path / "sft" / "cartography")["train"]
    ids = sorted(data["example_id"])
    assert sorted(set(table["example_id"].to_pylist())) == ids and table.num_rows == 2 * len(ids)
    # gold tokens: the completion's words + EOS; the prompt ("jump twice") is not scored
    gold = {i: len(commands(18)[i]["completion"].split()) + 1 for i in ids}
    assert {k: int(v) for k, v in by_id(table, "num_tokens").items()} == {(i, e): g for i, g in gold.items()
                                                                          for e in (0, 1)}
    values = {m: table[m].to_numpy() for m in ("inv_ppl", "chia", "loss")}
    np.testing.assert_allclose(values["inv_ppl"], np.exp(-values["loss"]), rtol=1e-5)
    assert np.all((values["inv_ppl"] > 0) & (values["inv_ppl"] <= values["chia"] + 1e-6))  # geometric <= arithmetic


def test_sft_trainer_language_modelling_text_field(tmp_path):
    trl = _need("trl")
    texts = [r["prompt"] + r["completion"] for r in commands(9)]
    data = add_example_ids(Dataset.from_dict({"sentence": texts})).shuffle(seed=0)
    trainer = trl.SFTTrainer(model=gpt2(), args=sft_config(tmp_path, dataset_text_field="sentence"),
                             train_dataset=data, processing_class=tokenizer())
    track_dynamics(trainer, measures=("loss",))
    trainer.train()
    table = load_dynamics(tmp_path / "sft" / "cartography")["train"]
    # every token but the first is scored: words + EOS - 1
    gold = {i: len(texts[i].split()) for i in range(9)}
    assert {k: int(v) for k, v in by_id(table, "num_tokens").items()} == {(i, e): g for i, g in gold.items()
                                                                          for e in (0, 1)}


def test_sft_trainer_refuses_what_its_fused_head_cannot_give(tmp_path):
    trl = _need("trl")
    data = Dataset.from_list(commands(6))
    trainer = trl.SFTTrainer(model=gpt2(), args=sft_config(tmp_path), train_dataset=data,
                             processing_class=tokenizer())
    collator = trainer.data_collator
    with pytest.raises(ValueError, match=r"measures \['aum', 'el2n'\].*Accepted here"):
        track_dynamics(trainer, measures=("inv_ppl", "aum", "el2n"))
    assert trainer.data_collator is collator and "example_id" not in trainer.train_dataset.column_names

    class MySFT(trl.SFTTrainer):  # a user's subclass, defined outside trl
        pass

    mine = MySFT(model=gpt2(), args=sft_config(tmp_path), train_dataset=data, processing_class=tokenizer())
    with pytest.raises(ValueError, match=r"measures \['min_margin'\]"):
        track_dynamics(mine, measures=("min_margin",))
    packed = trl.SFTTrainer(model=gpt2(), args=sft_config(tmp_path, packing=True, max_length=16),
                            train_dataset=data, processing_class=tokenizer())
    with pytest.raises(ValueError, match="args.packing=True"):
        track_dynamics(packed)


def test_fused_head_measures_equal_the_logit_measures():
    """TRL's fused LM head (per-token log-probs, no logits) gives the causal_lm measures of the logits."""
    _need("trl")
    from trl.trainer.utils import add_fused_lm_head

    model = gpt2(seed=3).eval()
    add_fused_lm_head(model, outputs=("log_probs", "is_top1"))
    input_ids = torch.tensor([[4, 7, 9, 9, EOS, PAD], [5, 8, 10, 10, 10, EOS], [6, 7, 11, EOS, PAD, PAD]])
    labels = input_ids.clone()
    labels[:, :2] = -100  # the prompt
    labels[input_ids == PAD] = -100
    labels[2, 2:] = -100  # an example with no gold token: NaN, 0 tokens
    attention = (input_ids != PAD).long()
    with torch.no_grad():
        fused = model(input_ids=input_ids, attention_mask=attention, labels=labels, fused_lm_head=True)
        logits = model(input_ids=input_ids, attention_mask=attention).logits
    assert getattr(fused, "logits", None) is None
    got = token_log_prob_measures(fused, labels, task="causal_lm")
    want = sequence_measures(logits, labels, task="causal_lm", measures=("inv_ppl", "chia", "loss"))
    for k in ("inv_ppl", "chia", "loss"):
        torch.testing.assert_close(got[k], want[k], rtol=1e-5, atol=1e-6, equal_nan=True)
    assert got["num_tokens"].tolist() == want["num_tokens"].tolist() == [3, 4, 0]
    assert got["correct"].tolist() == want["correct"].tolist()
    with pytest.raises(ValueError, match="need the model's full logits"):
        token_log_prob_measures(fused, labels, task="causal_lm", measures=("min_margin",))


# ----------------------------------------------------------------------------- PEFT
def test_peft_lora_seq2seq_model(tmp_path):
    peft = _need("peft")
    from transformers import DataCollatorForSeq2Seq

    tok = tokenizer()
    model = peft.get_peft_model(bart(), peft.LoraConfig(task_type="SEQ_2_SEQ_LM", r=4, lora_alpha=8,
                                                        target_modules=["q_proj", "v_proj"]))
    data = add_example_ids(seq2seq_rows(12)).shuffle(seed=5).select(range(10))
    trainer = track_dynamics(Seq2SeqTrainer(model=model, args=s2s_args(tmp_path), train_dataset=data,
                                            data_collator=DataCollatorForSeq2Seq(tok, model=model)),
                             measures=("inv_ppl", "min_margin", "el2n"))
    seen = capture(model)
    trainer.train()
    table = load_dynamics(tmp_path / "run" / "cartography")["train"]
    assert {k: int(v) for k, v in by_id(table, "num_tokens").items()} == {
        (i, e): i % 4 + 1 for i in data["example_id"] for e in (0, 1)}
    # the first step's values are the seq2seq measures of its own logits
    ids, lab, logits = seen[0]
    want = sequence_measures(logits, lab, task="seq2seq", measures=("el2n",))["el2n"]
    recorded = by_id(table, "el2n")
    np.testing.assert_allclose([recorded[(i, 0)] for i in ids.tolist()], want.numpy(), rtol=1e-6)


def test_peft_lora_gpt2_plain_peft_model_and_in_sft_trainer_bf16(tmp_path):
    peft = _need("peft")
    trl = _need("trl")
    # a PeftModel without task_type: the task is read off the base model
    lora = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn"], fan_in_fan_out=True)
    plain = peft.get_peft_model(gpt2(), lora)
    assert type(plain).__name__ == "PeftModel"
    rows = Dataset.from_dict({"input_ids": [[4, 7, 9, EOS]] * 4, "labels": [[-100, -100, 9, EOS]] * 4})
    args = TrainingArguments(str(tmp_path / "plain"), num_train_epochs=1, per_device_train_batch_size=2,
                             report_to=[], save_strategy="no", use_cpu=True, logging_strategy="no")
    track_dynamics(Trainer(model=plain, args=args, train_dataset=rows), measures=("loss",)).train()
    meta = load_dynamics(tmp_path / "plain" / "cartography")["meta"]
    assert meta["task"] == "causal_lm"

    data = add_example_ids(Dataset.from_list(commands(8))).shuffle(seed=1)
    trainer = trl.SFTTrainer(model=gpt2(), args=sft_config(tmp_path, bf16=True), train_dataset=data,
                             processing_class=tokenizer(),
                             peft_config=peft.LoraConfig(task_type="CAUSAL_LM", r=4, lora_alpha=8,
                                                         target_modules=["c_attn"], fan_in_fan_out=True))
    assert isinstance(trainer.model, peft.PeftModel)
    track_dynamics(trainer, measures=("chia", "forgetting"))
    trainer.train()
    table = load_dynamics(tmp_path / "sft" / "cartography")["train"]
    gold = {i: len(commands(8)[i]["completion"].split()) + 1 for i in range(8)}
    assert {k: int(v) for k, v in by_id(table, "num_tokens").items()} == {(i, e): g for i, g in gold.items()
                                                                          for e in (0, 1)}
    assert np.isfinite(table["chia"].to_numpy()).all()


def test_an_eval_set_with_ids_is_evaluated_as_before(tmp_path):
    """Ids added before a train/test split: the eval set keeps its example_id column, but the Trainer
    drops it from evaluation batches as usual (no ids reach forward or generate), before, during and
    after training."""
    from transformers import DataCollatorForSeq2Seq

    tok, model = tokenizer(), bart()
    split = add_example_ids(seq2seq_rows(16)).train_test_split(test_size=4, seed=0)
    args = s2s_args(tmp_path, eval_strategy="epoch", predict_with_generate=True, generation_max_length=8)
    trainer = track_dynamics(Seq2SeqTrainer(model=model, args=args, train_dataset=split["train"],
                                            eval_dataset=split["test"],
                                            data_collator=DataCollatorForSeq2Seq(tok, model=model)),
                             measures=("loss",))
    before = trainer.evaluate()
    trainer.train()
    after = trainer.evaluate()
    assert np.isfinite(before["eval_loss"]) and np.isfinite(after["eval_loss"])
    assert trainer.predict(split["test"]).predictions.shape[0] == 4
    table = load_dynamics(tmp_path / "run" / "cartography")["train"]
    assert sorted(set(table["example_id"].to_pylist())) == sorted(split["train"]["example_id"])
