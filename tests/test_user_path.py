"""A new user's path with their own data (issue 33): a JSONL file with string ids, loaded and
shuffled; a tiny T5 built from a config; ``track_dynamics``; a data map; a subset cut from the file
as loaded, by id; a curated folder with its card; the folder read back with plain ``datasets``."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

VERBS = ["jump", "walk", "look", "run"]
TIMES = {"twice": 2, "thrice": 3, "once": 1}


def write_jsonl(path, n: int = 40) -> list[str]:
    """SCAN-like rows with the user's own string ids; returns the ids in file order."""
    ids = []
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            verb, word = VERBS[i % 4], list(TIMES)[i % 3]
            row = {"qid": f"cmd-{i:03d}", "command": f"{verb} {word}", "actions": " ".join([verb.upper()] * TIMES[word])}
            f.write(json.dumps(row) + "\n")
            ids.append(row["qid"])
    return ids


def test_own_jsonl_with_string_ids_to_a_curated_folder(tmp_path):
    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments, T5Config
    from transformers import T5ForConditionalGeneration

    from hf_synthsample.cartography import DataMap, datamap_provenance, track_dynamics
    from hf_synthsample.hub import load_card, save_curated
    from hf_synthsample.hub.provenance import rows_digest
    from hf_synthsample.models import build_word_tokenizer, tokenize_seq2seq

    path = tmp_path / "commands.jsonl"
    ids = write_jsonl(path)
    raw = datasets.load_dataset("json", data_files=str(path), split="train")
    train = raw.shuffle(seed=7)
    tok = build_word_tokenizer(train, columns=["command", "actions"])
    tokenized = tokenize_seq2seq(train, tok, source_column="command", target_column="actions")
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(T5Config(
        vocab_size=len(tok), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2,
        dropout_rate=0.0, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id))
    args = Seq2SeqTrainingArguments(str(tmp_path / "run"), num_train_epochs=3, per_device_train_batch_size=8,
                                    learning_rate=1e-2, report_to=[], save_strategy="no", use_cpu=True,
                                    logging_strategy="no", seed=0)
    trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=tokenized,
                             data_collator=DataCollatorForSeq2Seq(tok, model=model, label_pad_token_id=-100))
    track_dynamics(trainer, ("loss", "aum"), id_column="qid").train()

    dm = DataMap.from_dynamics(tmp_path / "run" / "cartography", "loss")
    assert sorted(dm.example_ids.tolist()) == sorted(ids) and dm.epochs == (0, 1, 2)
    # the file as loaded (not the shuffled training set): rows found by id, never by position
    with pytest.raises(ValueError, match="ids are strings, not row numbers"):
        dm.subset(raw.remove_columns("qid"), "hard-to-learn", 0.3, assume_id_order=True)
    subset = dm.subset(raw, "hard-to-learn", 0.3, id_column="qid")
    chosen = dm.select("hard-to-learn", 0.3).tolist()
    assert sorted(subset["qid"]) == chosen and len(chosen) == 12
    by_id = {r["qid"]: r for r in raw}
    assert [r["command"] for r in subset] == [by_id[q]["command"] for q in subset["qid"]]

    provenance = datamap_provenance(raw, dm, "hard-to-learn", 0.3, source=str(path), id_column="qid",
                                         dynamics=tmp_path / "run" / "cartography")
    plot = dm.plot(tmp_path / "map.png", fraction=0.3)
    folder = save_curated(subset, tmp_path / "curated", provenance, config_name="hard",
                          statistics=dm.to_markdown(0.3), plots={"datamap": plot})

    back = datasets.load_dataset(str(folder), "hard", split="train")  # plain datasets, no hf_synthsample
    assert back.column_names == raw.column_names
    assert sorted(back["qid"]) == chosen
    card = load_card(folder)
    record = card.data.to_dict()["hf_synthsample"]["curated"]["hard"]
    assert record["source"] == "<local>/commands.jsonl" and record["source_size"] == 40
    assert record["source_fingerprint"] == rows_digest(raw)  # the file's rows, not one copy in memory
    assert record["sampler_params"]["model"]["class"] == type(model).__name__
    assert record["sampler"] == "DataMap.select" and record["sampler_params"]["selected"] == 12
    assert "| share of the source | 12 of 40 rows (30.0 %) |" in card.text
    assert "| hard-to-learn | 12 of 40 | 30.0 % |" in card.text
    assert (folder / "plots" / "hard-datamap.png").exists()
    assert np.isfinite(dm.confidence).all()
