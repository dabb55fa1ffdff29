"""Models part 1: word/char tokenizers, the scratch T5/BART config, seq2seq train/generate/evaluate/load."""

from __future__ import annotations


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
from datasets import Dataset  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

from hf_synthsample.models import (  # noqa: E402
    build_char_tokenizer,
    build_scratch_model,
    build_word_tokenizer,
    evaluate_seq2seq,
    generate_predictions,
    load_seq2seq,
    scratch_config,
    tokenize_seq2seq,
    train_seq2seq,
)
from hf_synthsample.models import seq2seq as seq2seq_module  # noqa: E402

TINY = dict(d_model=32, d_ff=64, num_layers=1, num_heads=4, dropout_rate=0.0)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# --------------------------------------------------------------------------------------------
# Tokenizers
# --------------------------------------------------------------------------------------------
TEXTS = ["jump twice", "walk left thrice", "I_TURN_LEFT I_WALK", "look around right"]


def test_word_tokenizer_ids_roundtrip_and_unk():
    tok = build_word_tokenizer(TEXTS)
    vocab = tok.get_vocab()
    assert [vocab[t] for t in ("<pad>", "<s>", "</s>", "<unk>")] == [0, 1, 2, 3]
    words = sorted({w for t in TEXTS for w in t.split()})
    assert [vocab[w] for w in words] == list(range(4, 4 + len(words)))
    assert len(tok) == 4 + len(words)
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id, tok.unk_token_id) == (0, 1, 2, 3)
    for text in TEXTS:
        ids = tok(text)["input_ids"]
        assert ids[-1] == tok.eos_token_id and ids.count(tok.eos_token_id) == 1
        assert ids[:-1] == [vocab[w] for w in text.split()]
        assert tok.decode(ids, skip_special_tokens=True) == text
    # whitespace is normalised, unknown words become <unk>
    assert tok.decode(tok("  jump\t twice ")["input_ids"], skip_special_tokens=True) == "jump twice"
    assert tok("jump FLY")["input_ids"] == [vocab["jump"], 3, 2]
    # punctuation-like words survive decoding unchanged (no clean-up of " ," / " .")
    punct = build_word_tokenizer(["eat . agent ( x _ 2 , x _ 1 )"])
    text = "eat . agent ( x _ 2 , x _ 1 )"
    assert punct.decode(punct(text)["input_ids"], skip_special_tokens=True) == text


_WORD = st.text(alphabet=list("abcXYZ019_.,()*+-é中<>/"), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_WORD, min_size=1, max_size=5), min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_word_tokenizer_roundtrip_property(sentences, rnd):
    """Any in-vocabulary text decodes back to its words joined by single spaces; vocab is order-free."""
    texts = [" ".join(words) for words in sentences]
    tok = build_word_tokenizer(texts)
    shuffled = list(texts)
    rnd.shuffle(shuffled)
    assert build_word_tokenizer(shuffled).get_vocab() == tok.get_vocab()
    for words in sentences:
        spaced = "  ".join(words) + "\t"
        ids = tok(spaced)["input_ids"]
        assert tok.unk_token_id not in ids and ids[-1] == tok.eos_token_id
        assert tok.decode(ids, skip_special_tokens=True) == " ".join(words)


def test_word_tokenizer_deterministic_and_options():
    shuffled = list(reversed(TEXTS))
    assert build_word_tokenizer(TEXTS).get_vocab() == build_word_tokenizer(shuffled).get_vocab()
    tok = build_word_tokenizer(["a b", "a c"], min_frequency=2, extra_tokens=["z"])
    assert sorted(tok.get_vocab(), key=tok.get_vocab().get) == ["<pad>", "<s>", "</s>", "<unk>", "a", "z"]
    ds = Dataset.from_dict({"src": ["jump twice"], "tgt": ["I_JUMP I_JUMP"], "n": [1]})
    assert set(build_word_tokenizer(ds, columns=["src", "tgt"]).get_vocab()) >= {"jump", "twice", "I_JUMP"}
    assert "I_JUMP" not in build_word_tokenizer(ds, columns="src").get_vocab()


def test_word_tokenizer_save_load(tmp_path):
    tok = build_word_tokenizer(TEXTS)
    tok.save_pretrained(tmp_path)
    back = AutoTokenizer.from_pretrained(tmp_path)
    batch = TEXTS + ["unknown words here", "jump  twice"]
    assert back(batch)["input_ids"] == tok(batch)["input_ids"]
    assert back.get_vocab() == tok.get_vocab()
    ids = tok(batch)["input_ids"]
    assert back.batch_decode(ids, skip_special_tokens=True) == tok.batch_decode(ids, skip_special_tokens=True)
    assert (back.pad_token, back.eos_token, back.unk_token) == ("<pad>", "</s>", "<unk>")


def test_char_tokenizer(tmp_path):
    tok = build_char_tokenizer()
    expr = "(1+2)*3-4"
    ids = tok(expr)["input_ids"]
    assert tok.convert_ids_to_tokens(ids) == list(expr) + ["</s>"]
    assert tok.decode(ids, skip_special_tokens=True) == expr
    assert len(tok) == 4 + len("0123456789+-*()")
    assert tok("1/2")["input_ids"][1] == tok.unk_token_id
    tok.save_pretrained(tmp_path)
    back = AutoTokenizer.from_pretrained(tmp_path)
    assert back([expr, "7"])["input_ids"] == tok([expr, "7"])["input_ids"]
    assert build_char_tokenizer(["ba", "c"]).get_vocab() == build_char_tokenizer(alphabet="cab").get_vocab()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: build_word_tokenizer("jump twice"), TypeError, "single str"),
        (lambda: build_word_tokenizer(["a", 3]), TypeError, "item 1"),
        (lambda: build_word_tokenizer(["a"], min_frequency=0), ValueError, "min_frequency"),
        (lambda: build_word_tokenizer(["a"], special_tokens=("<pad>", "<s>")), ValueError, "special_tokens"),
        (lambda: build_word_tokenizer(["a"], extra_tokens=["two words"]), ValueError, "extra_tokens"),
        (lambda: build_word_tokenizer(Dataset.from_dict({"x": ["a"]})), ValueError, "columns.*available columns"),
        (lambda: build_word_tokenizer(Dataset.from_dict({"x": ["a"]}), columns=["y"]), ValueError, "'y'.*\\['x'\\]"),
        (lambda: build_word_tokenizer(["a"], columns=["y"]), ValueError, "columns"),
        (lambda: build_char_tokenizer(alphabet=["ab"]), ValueError, "alphabet"),
        (lambda: build_char_tokenizer(alphabet=""), ValueError, "no characters"),
    ],
)
def test_tokenizer_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --------------------------------------------------------------------------------------------
# Scratch config
# --------------------------------------------------------------------------------------------
def test_scratch_t5_config_is_the_fields(tmp_path):
    from transformers import AutoConfig, T5Config

    tok = build_word_tokenizer(TEXTS)
    cfg = scratch_config(tok)
    assert isinstance(cfg, T5Config)
    assert (cfg.num_layers, cfg.num_decoder_layers, cfg.d_model, cfg.d_ff, cfg.num_heads, cfg.d_kv) == (3, 3, 256, 512, 4, 64)
    assert cfg.dropout_rate == 0.1
    assert (cfg.relative_attention_num_buckets, cfg.relative_attention_max_distance) == (32, 128)
    assert cfg.vocab_size == len(tok)
    assert (cfg.pad_token_id, cfg.eos_token_id, cfg.decoder_start_token_id) == (0, 2, 0)
    cfg.save_pretrained(tmp_path)
    back = AutoConfig.from_pretrained(tmp_path)
    drop = {"_name_or_path"}
    assert {k: v for k, v in back.to_dict().items() if k not in drop} == {k: v for k, v in cfg.to_dict().items() if k not in drop}
    small = scratch_config(tok, d_model=64, num_heads=2)
    assert (small.d_model, small.d_kv, small.num_heads) == (64, 32, 2)
    assert scratch_config(tok, num_layers=2).num_decoder_layers == 2
    assert scratch_config(tok, hidden_size=128).d_model == 128  # the config's own alias


def test_scratch_bart_config():
    from transformers import BartConfig

    tok = build_word_tokenizer(TEXTS)
    cfg = scratch_config(tok, "bart")
    assert isinstance(cfg, BartConfig)
    assert (cfg.encoder_layers, cfg.decoder_layers, cfg.d_model, cfg.encoder_ffn_dim, cfg.decoder_ffn_dim) == (3, 3, 256, 512, 512)
    assert (cfg.encoder_attention_heads, cfg.decoder_attention_heads, cfg.dropout) == (4, 4, 0.1)
    assert cfg.max_position_embeddings == 512
    assert scratch_config(tok, "bart", max_position_embeddings=64).max_position_embeddings == 64
    assert (cfg.pad_token_id, cfg.bos_token_id, cfg.eos_token_id, cfg.decoder_start_token_id) == (0, 1, 2, 2)
    assert getattr(cfg, "forced_bos_token_id", None) is None and cfg.forced_eos_token_id is None


def test_scratch_config_bad_input():
    tok = build_word_tokenizer(TEXTS)
    with pytest.raises(ValueError, match="architecture must be one of \\['t5', 'bart', 'lstm'\\]"):
        scratch_config(tok, "gpt2")
    with pytest.raises(ValueError, match="unknown T5Config field.*'d_modle'.*did you mean.*d_model"):
        scratch_config(tok, d_modle=64)
    with pytest.raises(ValueError, match="unknown BartConfig field.*num_layers"):
        scratch_config(tok, "bart", num_layers=2)
    with pytest.raises(ValueError, match="multiple of num_heads"):
        scratch_config(tok, d_model=30)
    with pytest.raises(ValueError, match="vocab_size"):
        scratch_config(tok, vocab_size=3)
    with pytest.raises(TypeError, match="seed"):
        build_scratch_model(tok, seed=1.5, **TINY)


def test_build_scratch_model_seeded_and_save_load(tmp_path):
    from transformers import AutoModelForSeq2SeqLM

    tok = build_word_tokenizer(TEXTS)
    a = build_scratch_model(tok, seed=3, **TINY)
    b = build_scratch_model(tok, seed=3, **TINY)
    c = build_scratch_model(tok, seed=4, **TINY)
    pa, pb, pc = (dict(m.named_parameters()) for m in (a, b, c))
    assert all(torch.equal(pa[k], pb[k]) for k in pa)
    assert not all(torch.equal(pa[k], pc[k]) for k in pa)
    a.save_pretrained(tmp_path)
    back = AutoModelForSeq2SeqLM.from_pretrained(tmp_path)
    x = tok(["jump twice"], return_tensors="pt")
    a.eval(), back.eval()
    with torch.no_grad():
        la = a(**x, labels=x["input_ids"]).logits
        lb = back(**x, labels=x["input_ids"]).logits
    assert torch.equal(la, lb)
    bart = build_scratch_model(tok, "bart", d_model=32, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=64,
                               decoder_ffn_dim=64, max_position_embeddings=16)
    assert type(bart).__name__ == "BartForConditionalGeneration"


# --------------------------------------------------------------------------------------------
# tokenize / train / generate / evaluate
# --------------------------------------------------------------------------------------------
COUNTS = {"once": 1, "twice": 2, "thrice": 3}


def scan_like() -> Dataset:
    """30 SCAN-like commands: a primitive and a repetition count -> the action repeated."""
    src = [f"w{v} {c}" for v in range(10) for c in COUNTS]
    tgt = [" ".join([f"W{v}"] * n) for v in range(10) for n in COUNTS.values()]
    return Dataset.from_dict({"src": src, "tgt": tgt})


def test_tokenize_seq2seq_columns_and_lengths():
    ds = scan_like()
    tok = build_word_tokenizer(ds, columns=["src", "tgt"])
    out = tokenize_seq2seq(ds, tok, source_column="src", target_column="tgt")
    assert out.column_names == ["src", "tgt", "input_ids", "attention_mask", "labels"]
    row = out[5]  # "w1 thrice" -> "W1 W1 W1"
    assert row["input_ids"] == tok("w1 thrice")["input_ids"]
    assert row["labels"] == [tok.convert_tokens_to_ids("W1")] * 3 + [2]
    assert row["attention_mask"] == [1, 1, 1]
    assert tokenize_seq2seq(ds, tok, source_column="src", target_column="tgt", max_target_length=4).num_rows == 30
    with pytest.raises(ValueError, match="max_target_length=3: 10 row\\(s\\).*first at row 2 with 4 tokens"):
        tokenize_seq2seq(ds, tok, source_column="src", target_column="tgt", max_target_length=3)
    with pytest.raises(ValueError, match="max_source_length=2: 30 row\\(s\\).*first at row 0"):
        tokenize_seq2seq(ds, tok, source_column="src", target_column="tgt", max_source_length=2)
    with pytest.raises(ValueError, match="target_column: no column named 'target'.*\\['src', 'tgt'\\]"):
        tokenize_seq2seq(ds, tok, source_column="src", target_column="target")
    with pytest.raises(ValueError, match="max_source_length must be >= 1"):
        tokenize_seq2seq(ds, tok, source_column="src", target_column="tgt", max_source_length=0)
    with pytest.raises(TypeError, match="tokenizer"):
        tokenize_seq2seq(ds, "tok", source_column="src", target_column="tgt")
    holes = Dataset.from_dict({"src": ["w1 once", "w2 once", None], "tgt": ["W1", "W2", "W3"]})
    with pytest.raises(ValueError, match="column 'src' has 1 missing value\\(s\\); first at row 2"):
        tokenize_seq2seq(holes, tok, source_column="src", target_column="tgt")


def test_tiny_t5_learns_scan_like_task(tmp_path):
    ds = scan_like()
    tok = build_word_tokenizer(ds, columns=["src", "tgt"])
    model = build_scratch_model(tok, **TINY)
    before = evaluate_seq2seq(model, tok, ds, source_column="src", target_column="tgt", max_new_tokens=4)
    assert before["exact_match"] < 10  # chance: a random decoder almost never emits the exact sequence
    train = Dataset.from_dict({"src": list(ds["src"]) * 8, "tgt": list(ds["tgt"]) * 8})
    trainer = train_seq2seq(model, tok, train, source_column="src", target_column="tgt", output_dir=str(tmp_path),
                            max_steps=60, batch_size=16, learning_rate=1e-2, disable_tqdm=True)
    assert trainer.state.global_step == 60
    assert not any(tmp_path.iterdir())  # no saving unless asked
    after = evaluate_seq2seq(model, tok, ds, source_column="src", target_column="tgt", max_new_tokens=4)
    assert after["num_examples"] == 30
    assert after["exact_match"] >= 90, after["predictions"]
    model.train()
    generate_predictions(model, tok, ["w1 once"], max_new_tokens=2)
    assert model.training  # restored after generation


def test_generate_predictions_order_and_decoding():
    tok = build_word_tokenizer(["a b c d"])

    class Echo(torch.nn.Module):
        """Stands in for a seq2seq model: 'generates' its input reversed, so order is checkable."""

        config = type("C", (), {"is_encoder_decoder": True})()
        device = torch.device("cpu")

        def generate(self, input_ids, attention_mask, **kwargs):
            rows = [ids[mask.bool()].flip(0) for ids, mask in zip(input_ids, attention_mask)]
            width = max(len(r) for r in rows)
            return torch.stack([torch.cat([r, r.new_zeros(width - len(r))]) for r in rows])

    texts = ["a", "a b c d", "b c", "d", "c b a"]
    preds = generate_predictions(Echo(), tok, texts, batch_size=2)
    assert preds == ["a", "d c b a", "c b", "d", "a b c"]  # eos/pad skipped, input order kept
    ds = Dataset.from_dict({"s": texts})
    assert generate_predictions(Echo(), tok, ds, source_column="s", batch_size=3) == preds
    assert generate_predictions(Echo(), tok, []) == []
    with pytest.raises(ValueError, match="source_column.*available columns: \\['s'\\]"):
        generate_predictions(Echo(), tok, ds)
    with pytest.raises(TypeError, match="single str"):
        generate_predictions(Echo(), tok, "a b")
    with pytest.raises(ValueError, match="num_beams must be >= 1"):
        generate_predictions(Echo(), tok, texts, num_beams=0)
    with pytest.raises(TypeError, match="encoder-decoder"):
        generate_predictions(torch.nn.Linear(2, 2), tok, texts)


def test_evaluate_seq2seq_hand_computed(monkeypatch):
    tok = build_word_tokenizer(["a b c"])
    ds = Dataset.from_dict({"s": ["1", "2", "3", "4"], "t": ["a b", "c", "a  c", "b"]})
    canned = ["a b", "c", "a c", "a"]  # 3 of 4 right (whitespace collapsed): 75 %
    monkeypatch.setattr(seq2seq_module, "generate_predictions", lambda *a, **k: list(canned))
    model = build_scratch_model(tok, **TINY)
    out = evaluate_seq2seq(model, tok, ds, source_column="s", target_column="t")
    assert out == {"exact_match": 75.0, "num_examples": 4, "predictions": canned}
    with pytest.raises(ValueError, match="target_column: no column named 'x'"):
        evaluate_seq2seq(model, tok, ds, source_column="s", target_column="x")
    with pytest.raises(ValueError, match="generate_kwargs: unknown \\['beams'\\]"):
        evaluate_seq2seq(model, tok, ds, source_column="s", target_column="t", beams=2)
    with pytest.raises(ValueError, match="dataset is empty"):
        evaluate_seq2seq(model, tok, ds.select([]), source_column="s", target_column="t")


def test_train_seq2seq_bad_input(tmp_path):
    ds = scan_like()
    tok = build_word_tokenizer(ds, columns=["src", "tgt"])
    model = build_scratch_model(tok, **TINY)
    kw = dict(source_column="src", target_column="tgt", output_dir=str(tmp_path))
    with pytest.raises(ValueError, match="'learning_rat' is not a Seq2SeqTrainingArguments field.*learning_rate"):
        train_seq2seq(model, tok, ds, **kw, learning_rat=1e-3)
    with pytest.raises(ValueError, match="pass num_train_epochs as epochs="):
        train_seq2seq(model, tok, ds, **kw, num_train_epochs=2)
    with pytest.raises(ValueError, match="epochs must be > 0"):
        train_seq2seq(model, tok, ds, **kw, epochs=0)
    with pytest.raises(ValueError, match="max_steps must be -1"):
        train_seq2seq(model, tok, ds, **kw, max_steps=0)
    with pytest.raises(ValueError, match="source_column: no column named 'source'"):
        train_seq2seq(model, tok, ds, source_column="source", target_column="tgt", output_dir=str(tmp_path))
    with pytest.raises(ValueError, match="train_dataset is empty"):
        train_seq2seq(model, tok, ds.select([]), **kw)
    with pytest.raises(TypeError, match="encoder-decoder"):
        train_seq2seq(torch.nn.Linear(2, 2), tok, ds, **kw)
    bart = build_scratch_model(tok, "bart", d_model=16, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=16,
                               decoder_ffn_dim=16, max_position_embeddings=3)
    with pytest.raises(ValueError, match="max_target_length=3: 10 row"):
        train_seq2seq(bart, tok, ds, **kw, max_steps=1)


# --------------------------------------------------------------------------------------------
# Fine-tuning path
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("architecture", ["bart", "t5"])
def test_load_seq2seq_local_folder_and_finetune(tmp_path, architecture):
    from transformers import BartConfig, BartForConditionalGeneration, T5Config, T5ForConditionalGeneration

    ds = scan_like()
    tok = build_word_tokenizer(ds, columns=["src", "tgt"])
    torch.manual_seed(0)
    if architecture == "bart":  # built from the config classes directly, as a "pretrained" checkpoint
        cfg = BartConfig(vocab_size=len(tok), d_model=16, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=32,
                         decoder_ffn_dim=32, encoder_attention_heads=2, decoder_attention_heads=2,
                         max_position_embeddings=32, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                         decoder_start_token_id=2)
        model = BartForConditionalGeneration(cfg)
    else:
        cfg = T5Config(vocab_size=len(tok), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2,
                       pad_token_id=0, eos_token_id=2, decoder_start_token_id=0)
        model = T5ForConditionalGeneration(cfg)
    folder = tmp_path / "ckpt"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    loaded, loaded_tok = load_seq2seq(str(folder))
    assert type(loaded) is type(model)
    assert loaded_tok(list(ds["src"]))["input_ids"] == tok(list(ds["src"]))["input_ids"]
    trainer = train_seq2seq(loaded, loaded_tok, ds, source_column="src", target_column="tgt",
                            output_dir=str(tmp_path / "run"), max_steps=2, batch_size=8)
    assert trainer.state.global_step == 2
    preds = generate_predictions(loaded, loaded_tok, ds.select(range(3)), source_column="src", max_new_tokens=3, num_beams=2)
    assert len(preds) == 3 and all(isinstance(p, str) for p in preds)


def test_load_seq2seq_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OSError, match="not in the Hugging Face cache.*HF_HUB_OFFLINE=1"):
        load_seq2seq("hf-synthsample-tests/no-such-model-anywhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="not a checkpoint folder \\(no config.json"):
        load_seq2seq(tmp_path / "empty")
    with pytest.raises(TypeError, match="path_or_repo_id"):
        load_seq2seq(3)


def test_load_seq2seq_unreachable_hub_fails_at_once(tmp_path, monkeypatch):
    """No network and no offline flag: a clear error naming the Hub and the id, before any download
    (which would retry for most of a minute and end in a raw ConnectError)."""
    import socket

    import transformers

    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    attempts = []

    def refuse(address, *args, **kwargs):
        attempts.append(address)
        raise OSError("network unreachable")

    def no_download(*args, **kwargs):
        raise AssertionError("from_pretrained was called although the Hub is unreachable")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(transformers.AutoModelForSeq2SeqLM, "from_pretrained", no_download)
    with pytest.raises(OSError, match="'hf-synthsample-tests/no-such-model'.*Hugging Face Hub \\(https://.*cannot be "
                                      "reached.*hf download hf-synthsample-tests/no-such-model"):
        load_seq2seq("hf-synthsample-tests/no-such-model")
    assert len(attempts) == 1 and attempts[0][1] == 443
    # a missing local path that is no Hub id either: said so, not "Repo id must use alphanumeric chars"
    with pytest.raises(FileNotFoundError, match="'\\./no/such/ckpt' is not a local folder.*not a Hugging Face Hub id"):
        load_seq2seq("./no/such/ckpt")
    with pytest.raises(FileNotFoundError, match="not a local folder"):
        load_seq2seq(tmp_path / "missing" / "ckpt")


@pytest.mark.parametrize("kwargs, match", [(dict(max_new_tokens=-1), "max_new_tokens must be >= 1, got -1"),
                                           (dict(max_new_tokens=0), "max_new_tokens must be >= 1"),
                                           (dict(max_length=1), "max_length must be >= 2")])
def test_generate_refuses_empty_limits(kwargs, match):
    """generate(max_new_tokens=-1) decoded nothing on the LSTM (the T5's transformers generate refuses it)."""
    tok = build_word_tokenizer(TEXTS)
    enc = tok(["jump twice"], return_tensors="pt")
    lstm = build_scratch_model(tok, "lstm", hidden_size=16, embedding_dim=16, seed=0)
    with pytest.raises(ValueError, match=match):
        lstm.generate(**enc, **kwargs)
    t5 = build_scratch_model(tok, **TINY)
    if "max_new_tokens" in kwargs:
        with pytest.raises(ValueError, match="max_new_tokens"):
            t5.generate(**enc, **kwargs)
        with pytest.raises(ValueError, match="max_new_tokens must be >= 1"):
            generate_predictions(lstm, tok, ["jump"], **kwargs)
    assert lstm.generate(**enc, max_length=3).shape == (1, 3)


def test_train_seq2seq_with_cartography(tmp_path):
    """The documented cartography path: wrapped collator, callback, example ids kept."""
    from hf_synthsample.cartography import CartographyCallback, CartographyCollator, add_example_ids, load_dynamics
    from hf_synthsample.models import seq2seq_collator

    ds = add_example_ids(scan_like())
    tok = build_word_tokenizer(ds, columns=["src", "tgt"])
    model = build_scratch_model(tok, **TINY)
    train_seq2seq(model, tok, ds, source_column="src", target_column="tgt", output_dir=str(tmp_path), epochs=2,
                  batch_size=8, data_collator=CartographyCollator(seq2seq_collator(tok, model)),
                  callbacks=[CartographyCallback(measures=("inv_ppl",))], remove_unused_columns=False,
                  disable_tqdm=True)
    dynamics = load_dynamics(tmp_path / "cartography")["train"].to_pydict()
    assert sorted(set(zip(dynamics["example_id"], dynamics["epoch"]))) == [(i, e) for i in range(30) for e in range(2)]


def test_load_seq2seq_names_a_folder_without_tokenizer_or_not_seq2seq(tmp_path):
    """Issue 44: the folder and the missing files, not the tokenizer library's message; a BERT is no seq2seq."""
    import pytest
    from transformers import BartConfig, BartForConditionalGeneration, BertConfig, BertModel

    from hf_synthsample.models import load_seq2seq

    BartForConditionalGeneration(BartConfig(vocab_size=20, d_model=8, encoder_layers=1, decoder_layers=1,
                                            encoder_attention_heads=1, decoder_attention_heads=1, encoder_ffn_dim=8,
                                            decoder_ffn_dim=8)).save_pretrained(tmp_path / "bart")
    with pytest.raises(ValueError, match=r"'.*bart' has no tokenizer files \(none of tokenizer.json, vocab.txt"):
        load_seq2seq(tmp_path / "bart")
    BertModel(BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
                         intermediate_size=8)).save_pretrained(tmp_path / "bert")
    with pytest.raises(ValueError, match="holds a bert model .*not a seq2seq"):
        load_seq2seq(tmp_path / "bert")
