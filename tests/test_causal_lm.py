"""Decoder-only (causal) LMs (issue 46, items 1 and 2): the compositionality curve of a causal LM
(prompt + completion through a template, the loss on the completion only, exact match of greedy
completions) and data maps of a causal-LM fine-tune (stock Trainer and TRL's SFTTrainer,
completion-only), with tiny GPT-2 models built from configs and the library's word tokenizer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hf_synthsample.curve import CurveSettings, compositionality_curve

PROGRAMS = [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh" for a in "abcd" for b in "abc"]
DATA = dict(column="program", language="sexpr", target_column="output", time_limit=60.0, fit_rows=4, test_rows=4,
            batch_size=8, warmup_steps=0, max_steps=2, check_every=1, settle_steps=0, length_bins=0,
            targets=[0.4, 0.6])


def _toy():
    from datasets import Dataset

    return Dataset.from_dict({"program": PROGRAMS, "output": [p.replace("(", "").replace(")", "") for p in PROGRAMS]})


def _gpt2(tok, seed: int = 0, n_positions: int = 64):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    return GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=n_positions, n_embd=16, n_layer=1, n_head=2,
                                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=tok.bos_token_id,
                                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id))


def _word_tok(texts):
    from hf_synthsample.models import build_word_tokenizer

    return build_word_tokenizer(list(texts) + ["OUT:"])


def tiny_gpt2(split, seed):
    """The factory the curve calls per split: a fresh 1-layer GPT-2 and a word tokenizer of the split."""
    texts = [t for part in ("train", "test") for c in ("program", "output") for t in split[part][c]]
    tok = _word_tok(texts)
    return _gpt2(tok, seed), tok


# ---- the helpers ---------------------------------------------------------------------------------

def test_tokenize_masks_the_prompt_and_ends_with_eos():
    from datasets import Dataset

    from hf_synthsample.models.causal import CausalCollator, tokenize_causal

    ds = Dataset.from_dict({"src": ["jump twice", "walk"], "tgt": ["JUMP JUMP", "WALK"], "other": [1, 2]})
    tok = _word_tok(["jump twice walk JUMP WALK"])
    out = tokenize_causal(ds, tok, source_column="src", target_column="tgt", prompt_template="IN: {source} OUT:")
    assert out.column_names == ["src", "tgt", "other", "input_ids", "attention_mask", "labels"]
    row = out[0]
    assert tok.convert_ids_to_tokens(row["input_ids"]) == ["<unk>", "jump", "twice", "OUT:", "JUMP", "JUMP", "</s>"]
    assert row["labels"][:4] == [-100] * 4 and row["labels"][4:] == row["input_ids"][4:]
    batch = CausalCollator(tok.pad_token_id)([{k: r[k] for k in ("input_ids", "labels")} for r in out])
    assert batch["input_ids"].shape == (2, 7) and batch["labels"][1].tolist() == [-100] * 3 + out[1]["input_ids"][3:] + [-100] * 2
    assert batch["attention_mask"].sum(dim=1).tolist() == [7, 5]
    with pytest.raises(ValueError, match="max_length=4: 1 row"):
        tokenize_causal(ds, tok, source_column="src", target_column="tgt", max_length=4)


@pytest.mark.parametrize("template,message", [("{input}", "must hold the placeholder {source}"),
                                              ("{source} {x}", r"placeholder\(s\) \['x'\]"),
                                              ("{source", "not a str.format template")])
def test_prompt_template_checked_at_construction(template, message):
    with pytest.raises(ValueError, match=f"prompt_template.*{message}|{message}"):
        CurveSettings(prompt_template=template)
    assert CurveSettings(prompt_template="Q: {source} {{A}}:").prompt_template == "Q: {source} {{A}}:"


def test_model_kind_and_config_detection():
    from transformers import BertConfig, BertForMaskedLM, GPT2Model

    from hf_synthsample.models.causal import is_causal_lm_config, model_kind

    tok = _word_tok(["a b"])
    assert model_kind(_gpt2(tok)) == "causal_lm"
    assert model_kind(GPT2Model(_gpt2(tok).config)) is None
    bert = BertConfig(vocab_size=10, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    assert model_kind(BertForMaskedLM(bert)) is None
    assert is_causal_lm_config({"model_type": "llama"}) and not is_causal_lm_config({"model_type": "bert"})
    assert is_causal_lm_config({"model_type": "bert", "is_decoder": True})
    assert not is_causal_lm_config({"model_type": "gpt2", "architectures": ["GPT2ForSequenceClassification"]})


def test_greedy_completions_left_padded_are_those_of_one_prompt_at_a_time():
    """Batched left-padded decoding gives each prompt's own greedy completion (new tokens only)."""
    from datasets import Dataset

    from hf_synthsample.models.causal import evaluate_causal, generate_completions, train_causal

    sources = ["a", "a b c d", "b c", "d d d d d", "c"]
    ds = Dataset.from_dict({"src": sources * 4, "tgt": [s.upper() for s in sources] * 4})
    tok = _word_tok(sources + [s.upper() for s in sources])
    model = _gpt2(tok)
    train_causal(model, tok, ds, source_column="src", target_column="tgt", output_dir="unused-causal", max_steps=3,
                 batch_size=4, disable_tqdm=True)
    batched = generate_completions(model, tok, sources, max_new_tokens=6, batch_size=5)
    assert batched == [generate_completions(model, tok, [s], max_new_tokens=6)[0] for s in sources]
    assert all("<pad>" not in p and "</s>" not in p for p in batched)
    result = evaluate_causal(model, tok, ds.select(range(5)), source_column="src", target_column="tgt",
                             max_new_tokens=6)
    assert result["predictions"] == batched and result["num_examples"] == 5


# ---- the curve -----------------------------------------------------------------------------------

def test_curve_with_a_causal_lm_factory(tmp_path):
    curve = compositionality_curve(_toy(), tiny_gpt2, prompt_template="IN: {source} OUT:", **DATA)
    assert [r["config"] for r in curve.records] == ["dc_0.40", "dc_0.60"]
    for r in curve.records:
        assert r["num_test_scored"] == 4 and r["steps"] >= 1 and 0 <= r["test_exact_match"] <= 100
        assert r["fit_history"] and r["parameters"] > 0
    info = curve.model_config
    assert info["kind"] == "causal_lm" and info["class"] == "GPT2LMHeadModel" and info["layers"] == "1"
    assert info["prompt_template"] == "IN: {source} OUT:" and curve.causal_lm
    assert "a causal LM" in curve.model and "tiny_gpt2" in curve.model
    folder = curve.save(str(tmp_path / "out"))
    card = open(f"{folder}/README.md", encoding="utf-8").read()
    assert "a decoder-only causal LM" in card and "stock Trainer" in card and "'IN: {source} OUT:'" in card
    assert "Seq2SeqTrainer" not in card.split("## The splits")[0]
    saved = json.load(open(f"{folder}/curve.json", encoding="utf-8"))
    assert saved["model_config"]["kind"] == "causal_lm" and saved["settings"]["prompt_template"] == "IN: {source} OUT:"


def test_curve_with_a_causal_lm_checkpoint_folder(tmp_path):
    texts = PROGRAMS + [p.replace("(", "").replace(")", "") for p in PROGRAMS]
    tok = _word_tok(texts)
    folder = tmp_path / "tiny-gpt2"
    _gpt2(tok).save_pretrained(folder)
    tok.save_pretrained(folder)
    curve = compositionality_curve(_toy(), str(folder), **DATA)
    assert len(curve.records) == 2 and all(r["num_test_scored"] == 4 for r in curve.records)
    assert curve.model_config["source"] == "checkpoint" and curve.model_config["kind"] == "causal_lm"
    assert curve.model.startswith("checkpoint tiny-gpt2: a causal LM, gpt2 (GPT2LMHeadModel)")
    assert str(tmp_path) not in json.dumps(curve.to_dict())  # no local path in the record


def test_curve_refuses_other_kinds_before_any_work(tmp_path):
    from transformers import BertConfig, GPT2Model

    bert = BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    bert.save_pretrained(tmp_path / "bert")
    with pytest.raises(ValueError, match="model: .*holds a bert model .*not a seq2seq .* or a decoder-only causal LM"):
        compositionality_curve(_toy(), str(tmp_path / "bert"), **DATA)

    def bare(split, seed):
        model, tok = tiny_gpt2(split, seed)
        return GPT2Model(model.config), tok

    with pytest.raises(TypeError, match="with a seq2seq model or a causal LM .* got GPT2Model"):
        compositionality_curve(_toy(), bare, **DATA)
    with pytest.raises(ValueError, match="prompt_template: the scratch model is a seq2seq model"):
        compositionality_curve(_toy(), prompt_template="Q: {source}", **DATA)


def test_prompt_template_refused_beside_a_seq2seq_model():
    from hf_synthsample.models import build_scratch_model, build_word_tokenizer

    def t5(split, seed):
        tok = build_word_tokenizer(PROGRAMS + [p.replace("(", "").replace(")", "") for p in PROGRAMS])
        return build_scratch_model(tok, "t5", seed=seed, d_model=16, d_ff=32, num_layers=1, num_heads=2), tok

    with pytest.raises(ValueError, match="prompt_template .* is a causal LM's prompt"):
        compositionality_curve(_toy(), t5, prompt_template="Q: {source}", **DATA)


# ---- data maps of a causal-LM fine-tune ----------------------------------------------------------

NOISE = 0.1


def _planted(n: int = 100, seed: int = 0):
    """Rows "a c f" -> "A C F" (3 words of 6), 10 % of them with a random wrong completion planted."""
    rng = np.random.default_rng(seed)
    words = "a b c d e f".split()
    rows = []
    for _ in range(n):
        src = list(rng.choice(words, 3))
        rows.append({"source": " ".join(src), "target": " ".join(w.upper() for w in src)})
    planted = sorted(rng.choice(n, int(NOISE * n), replace=False).tolist())
    for i in planted:
        wrong = rows[i]["target"]
        while wrong == rows[i]["target"]:
            wrong = " ".join(w.upper() for w in rng.choice(words, 3))
        rows[i]["target"] = wrong
    return rows, planted


def _recall(found, planted) -> float:
    return len(set(np.asarray(found).tolist()) & set(planted)) / len(planted)


def _found(folder, planted, measures):
    from hf_synthsample.cartography import DataMap, flag_noisy, load_dynamics

    dynamics = load_dynamics(folder)
    table = dynamics["train"]
    assert sorted(set(table["num_tokens"].to_pylist())) == [4]  # the completion's 3 words + EOS, never the prompt
    recalls = {m: _recall(DataMap.from_dynamics(dynamics, m).select("hard-to-learn", NOISE), planted) for m in measures}
    recalls["flag_noisy"] = _recall(flag_noisy(dynamics, fraction=NOISE, measure=measures[-1]).example_ids, planted)
    return recalls


def test_data_map_of_a_causal_lm_finds_planted_wrong_completions_stock_trainer(tmp_path):
    import torch
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments

    from hf_synthsample.cartography import track_dynamics
    from hf_synthsample.models.causal import CausalCollator, tokenize_causal

    rows, planted = _planted()
    ds = Dataset.from_list(rows)
    tok = _word_tok([r["source"] + " " + r["target"] for r in rows])
    data = tokenize_causal(ds, tok, source_column="source", target_column="target")
    with_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        args = TrainingArguments(str(tmp_path / "run"), num_train_epochs=15, per_device_train_batch_size=16,
                                 learning_rate=3e-3, lr_scheduler_type="constant", report_to=[], save_strategy="no",
                                 use_cpu=True, logging_strategy="no", seed=0, disable_tqdm=True)
        trainer = track_dynamics(Trainer(model=_bigger(tok), args=args, train_dataset=data,
                                         data_collator=CausalCollator(tok.pad_token_id)),
                                 measures=("inv_ppl", "chia", "loss", "margin_deficit", "forgetting"))
        trainer.train()
    finally:
        torch.set_num_threads(with_threads)
    recalls = _found(tmp_path / "run" / "cartography", planted, ("inv_ppl", "margin_deficit"))
    assert recalls == {"inv_ppl": 1.0, "margin_deficit": 1.0, "flag_noisy": 1.0}, recalls


def _bigger(tok):
    """2 layers of width 32: learns the word-to-word mapping of the clean rows in 15 short epochs."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=16, n_embd=32, n_layer=2, n_head=2,
                                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=1,
                                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id))


def test_data_map_of_a_causal_lm_finds_planted_wrong_completions_sft_trainer(tmp_path):
    trl = pytest.importorskip("trl")
    import torch
    from datasets import Dataset
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from hf_synthsample.cartography import add_example_ids, track_dynamics

    rows, planted = _planted()
    ds = add_example_ids(Dataset.from_dict({"prompt": [r["source"] for r in rows],
                                            "completion": [" " + r["target"] for r in rows]}))
    # the same vocabulary, no EOS appended by the tokenizer: TRL adds its own
    vocab = _word_tok([r["source"] + " " + r["target"] for r in rows]).get_vocab()
    words = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=words, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                  unk_token="<unk>")
    args = trl.SFTConfig(str(tmp_path / "sft"), num_train_epochs=15, per_device_train_batch_size=16,
                         learning_rate=3e-3, lr_scheduler_type="constant", report_to=[], save_strategy="no",
                         use_cpu=True, logging_strategy="no", seed=0, disable_tqdm=True, bf16=False)
    with_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        trainer = track_dynamics(trl.SFTTrainer(model=_bigger(tok), args=args, train_dataset=ds, processing_class=tok),
                                 measures=("inv_ppl", "chia", "loss", "forgetting"))
        trainer.train()
    finally:
        torch.set_num_threads(with_threads)
    recalls = _found(tmp_path / "sft" / "cartography", planted, ("inv_ppl", "loss"))
    assert recalls == {"inv_ppl": 1.0, "loss": 1.0, "flag_noisy": 1.0}, recalls


def test_causal_lm_statistics_stay_on_the_device_until_the_epoch_ends(tmp_path, monkeypatch):
    """No host read in the forward hook of a causal LM's training step; the values reach the host once
    per epoch (one flush of all the epoch's steps), as for seq2seq."""
    import torch
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments

    from hf_synthsample.cartography import CartographyCollator, TrainingDynamicsCallback, add_example_ids
    from hf_synthsample.models.causal import CausalCollator, tokenize_causal

    rows, _ = _planted(24)
    tok = _word_tok([r["source"] + " " + r["target"] for r in rows])
    data = add_example_ids(tokenize_causal(Dataset.from_list(rows), tok, source_column="source",
                                           target_column="target"))
    cb = TrainingDynamicsCallback(measures=("inv_ppl", "margin_deficit", "el2n", "forgetting"))
    inside: list = []
    post, flush = cb._post_hook, cb._flush_pending

    def watched(*args, **kwargs):
        inside.append(True)
        try:
            return post(*args, **kwargs)
        finally:
            inside.pop()

    flushes: list = []

    def counted():
        assert all(isinstance(v, torch.Tensor) for p in cb._pending for v in p[4].values())
        flushes.append(len(cb._pending))
        return flush()

    cb._post_hook, cb._flush_pending = watched, counted
    for name in ("cpu", "item", "tolist", "numpy"):
        def guard(self, *args, _orig=getattr(torch.Tensor, name), _name=name, **kwargs):
            if inside:
                raise AssertionError(f"Tensor.{_name} (a host read) in the training step's hook")
            return _orig(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, guard)
    args = TrainingArguments(str(tmp_path / "run"), num_train_epochs=3, per_device_train_batch_size=8,
                             learning_rate=1e-3, report_to=[], save_strategy="no", use_cpu=True, logging_strategy="no",
                             remove_unused_columns=False, disable_tqdm=True)
    Trainer(model=_gpt2(tok), args=args, train_dataset=data, callbacks=[cb],
            data_collator=CartographyCollator(CausalCollator(tok.pad_token_id))).train()
    assert flushes == [3, 3, 3, 0]  # 3 steps an epoch, flushed at each epoch end; nothing left at the end
    assert cb._task == "causal_lm" and len(cb.dynamics) == 3 * 24
    assert set(cb.dynamics.column("num_tokens").to_pylist()) == {4}


def test_cli_prompt_template_reads_a_typed_newline():
    import argparse

    from hf_synthsample.settings import add_arguments, settings_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser, CurveSettings)
    parsed = settings_from_args(CurveSettings, parser.parse_args(["--prompt-template", r"Q: {source}\nA:"]))
    assert parsed.prompt_template == "Q: {source}\nA:"
    with pytest.raises(ValueError, match="--prompt-template must hold the placeholder"):
        settings_from_args(CurveSettings, parser.parse_args(["--prompt-template", "Q"]))
