"""Example ids (issue 33 item 1): integer or string ids work end to end; anything else, a missing,
negative or repeated id is refused before any work, naming the column; a subset taken by
position from a dataset other than the training set is refused, naming both fingerprints."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")

from datasets import Dataset  # noqa: E402
from transformers import Seq2SeqTrainer  # noqa: E402

from hf_synthsample.cartography import DataMap, TrainingDynamicsCallback, load_dynamics, track_dynamics  # noqa: E402
from hf_synthsample.hub import dataset_fingerprint  # noqa: E402
from test_cartography_track import bart, seq2seq_rows, tokenizer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _trainer(tmp_path, ds, **args):
    from transformers import DataCollatorForSeq2Seq

    from transformers import Seq2SeqTrainingArguments

    model = bart()
    args = Seq2SeqTrainingArguments(str(tmp_path / "run"), **{
        "num_train_epochs": 2, "per_device_train_batch_size": 4, "learning_rate": 1e-2, "report_to": [],
        "save_strategy": "no", "use_cpu": True, "logging_strategy": "no", **args})
    return Seq2SeqTrainer(model=model, args=args, train_dataset=ds,
                          data_collator=DataCollatorForSeq2Seq(tokenizer(), model=model, label_pad_token_id=-100))


@pytest.mark.parametrize("values,kind,message", [
    ([0.5 + i for i in range(20)], TypeError, "must hold integer or string example ids, got double"),
    ([[i] for i in range(20)], TypeError, "must hold integer or string example ids, got list"),
    ([True, False] * 10, TypeError, "must hold integer or string example ids, got bool"),
    ([None] + list(range(1, 20)), ValueError, "1 missing (null) example ids"),
    ([-3] + list(range(1, 20)), ValueError, "negative example ids (first: -3)"),
    ([0] + list(range(19)), ValueError, "repeats example ids (first: 0)"),
    (["a"] * 20, ValueError, "repeats example ids (first: 'a')"),
    ([""] + [f"r{i}" for i in range(19)], ValueError, "empty-string example ids"),
])
def test_bad_ids_are_refused_by_track_dynamics_before_any_change(tmp_path, values, kind, message):
    ds = seq2seq_rows().add_column("uid", values)
    trainer = _trainer(tmp_path, ds)
    collator, callbacks = trainer.data_collator, list(trainer.callback_handler.callbacks)
    with pytest.raises(kind, match="trainer.train_dataset: column 'uid'") as err:
        track_dynamics(trainer, id_column="uid")
    assert message in str(err.value)
    assert trainer.data_collator is collator and trainer.callback_handler.callbacks == callbacks  # unchanged


def test_bad_ids_are_refused_by_the_bare_callback_before_any_step(tmp_path):
    from hf_synthsample.cartography import CartographyCollator

    ds = seq2seq_rows().add_column("uid", [-1] + list(range(1, 20)))
    trainer = _trainer(tmp_path, ds, remove_unused_columns=False)
    trainer.data_collator = CartographyCollator(trainer.data_collator, id_column="uid", drop_columns=["source"])
    trainer.add_callback(TrainingDynamicsCallback(id_column="uid"))
    with pytest.raises(ValueError, match="the training dataset: column 'uid' holds negative example ids"):
        trainer.train()
    assert trainer.state.global_step == 0


def test_string_ids_give_a_map_and_subset_by_id_on_a_shuffled_copy(tmp_path):
    keys = [f"q-{i:03d}" for i in range(20)]
    ds = seq2seq_rows().add_column("key", keys).shuffle(seed=3)
    trainer = track_dynamics(_trainer(tmp_path, ds), ("loss", "aum"), id_column="key")
    assert trainer.train_dataset.column_names == ds.column_names  # its own ids: nothing added
    trainer.train()
    dyn = load_dynamics(tmp_path / "run" / "cartography")
    assert pa.types.is_string(dyn["train"].schema.field("example_id").type)
    assert sorted(set(dyn["train"]["example_id"].to_pylist())) == keys
    assert dyn["meta"]["id_type"] == "str" and dyn["meta"]["num_examples"] == 20
    dm = DataMap.from_dynamics(tmp_path / "run" / "cartography", "loss")
    assert dm.example_ids.tolist() == keys
    hard = dm.select("hard-to-learn", 0.25)
    assert len(hard) == 5 and set(hard.tolist()) <= set(keys)
    # the rows of another copy (unshuffled) are found by id
    original = seq2seq_rows().add_column("key", keys)
    sub = dm.subset(original, "hard-to-learn", 0.25, id_column="key")
    assert sorted(sub["key"]) == sorted(hard.tolist())
    # a by-position subset cannot be taken with string ids
    with pytest.raises(ValueError, match="ids are strings, not row numbers"):
        dm.subset(original.remove_columns("key"), "hard-to-learn", 0.25, id_column="key", assume_id_order=True)
    # oov repair and rankings by measure work with string ids too
    assert len(dm.subset(original, "easy-to-learn", 0.25, id_column="key", oov_columns=["labels"])) == 5
    assert dm.ranking("aum").dtype.kind == "U"


def test_string_ids_survive_a_resume(tmp_path):
    keys = [f"k{i}" for i in range(20)]
    ds = seq2seq_rows().add_column("key", keys)
    args = dict(save_strategy="steps", save_steps=5)
    track_dynamics(_trainer(tmp_path, ds, **args), ("loss",), id_column="key").train()
    out = tmp_path / "run"
    resumed = track_dynamics(_trainer(tmp_path, ds, **args), ("loss",), id_column="key",
                             output_dir=tmp_path / "resumed")
    resumed.train(resume_from_checkpoint=str(out / "checkpoint-5"))
    a = load_dynamics(out / "cartography")["train"].to_pandas().sort_values(["epoch", "example_id"])
    b = load_dynamics(tmp_path / "resumed")["train"].to_pandas().sort_values(["epoch", "example_id"])
    assert a.example_id.tolist() == b.example_id.tolist()
    np.testing.assert_allclose(a.loss, b.loss, rtol=1e-5)


def test_assume_id_order_refuses_another_copy_naming_both_fingerprints(tmp_path):
    ds = seq2seq_rows(24)
    trainer = track_dynamics(_trainer(tmp_path, ds.shuffle(seed=1)), ("loss",))
    trainer.train()
    meta = load_dynamics(tmp_path / "run" / "cartography")["meta"]
    assert meta["num_examples"] == 24
    trained = trainer.train_dataset  # the shuffled set, with the ids track_dynamics added
    assert dataset_fingerprint(trained) in meta["dataset_fingerprints"]
    dm = DataMap.from_dynamics(tmp_path / "run" / "cartography", "loss")
    # the file as loaded: same row count, other rows in each position
    with pytest.raises(ValueError, match="fingerprint") as err:
        dm.subset(ds, "hard-to-learn", 0.25, assume_id_order=True)
    assert dataset_fingerprint(ds) in str(err.value) and dataset_fingerprint(trained) in str(err.value)
    # the training set without its ids (as it was before track_dynamics numbered it) is the right one
    shuffled = ds.shuffle(seed=1)
    by_position = dm.subset(shuffled, "hard-to-learn", 0.25, assume_id_order=True)
    by_id = dm.subset(trained, "hard-to-learn", 0.25)
    assert by_position["labels"] == by_id["labels"]


def test_a_map_from_a_bare_table_keeps_the_row_count_check():
    t = pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0], "loss": [1.0, 2.0, 3.0],
                  "correct": [True, False, False]})
    dm = DataMap.from_dynamics(t, "loss")
    assert dm.dataset_fingerprints == ()
    with pytest.raises(ValueError, match="has 4 rows but the dynamics hold 3 examples"):
        dm.subset(Dataset.from_dict({"x": [1, 2, 3, 4]}), "hard-to-learn", 0.5, assume_id_order=True)
