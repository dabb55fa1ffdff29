"""Provenance is true (issue 44, items 4 and 5): no local path in a card, ``size_categories`` of
the data set's own rows, map subsets that name their model and refuse what the map cannot cut,
ids checked by a content digest; and the older kinds (``!!set`` metadata, ``select_by`` naming
its argument, ``to_html`` onto a folder, ``--plot map.jpg --overwrite``)."""

from __future__ import annotations

import os

import datasets
import pytest
import yaml

from hf_synthsample.hub.card import read_card_metadata, redact_local_paths_in_text, render_card
from hf_synthsample.hub.folder import write_hub_folder


# ---------------------------------------------------------------- no local path in a card
def test_render_card_redacts_local_paths_in_the_markdown_too():
    text = render_card({"hf_synthsample": {"split": {"source": "/home/alice/data/train.jsonl"}}},
                       "## Provenance\n\n```yaml\nsource: /home/alice/data/train.jsonl\nout: /srv/u/run/out\n```\n"
                       "see https://huggingface.co/docs/hub/a and n/a, 1/2")
    assert "/home/alice" not in text and "/srv/u" not in text
    assert "<local>/train.jsonl" in text and "<local>/out" in text
    assert "https://huggingface.co/docs/hub/a" in text and "n/a" in text and "1/2" in text


def test_paths_in_text_keep_punctuation_and_relative_paths():
    assert redact_local_paths_in_text("written to /tmp/x/out.") == "written to <local>/out."
    assert redact_local_paths_in_text("![p](plots/a-b.png) data/train.csv") == "![p](plots/a-b.png) data/train.csv"
    # a known path with a space, and a one-component one, wherever it stands
    assert redact_local_paths_in_text("`/data` and `/home/u/my data/f.json`", ["/data", "/home/u/my data/f.json"]) \
        == "`<local>/data` and `<local>/f.json`"


def test_write_hub_folder_card_has_no_absolute_path(tmp_path):
    out = write_hub_folder(tmp_path / "f", {"c": datasets.Dataset.from_dict({"x": [1]})},
                           body=f"# from `{tmp_path}/src.parquet`", metadata={"src": str(tmp_path / "src.parquet")})
    text = (out / "README.md").read_text()
    assert str(tmp_path) not in text and text.count("<local>/src.parquet") == 2


# ---------------------------------------------------------------- YAML-safe metadata
def test_a_set_in_metadata_is_a_sorted_list_not_a_python_tag(tmp_path):
    text = render_card({"hf_synthsample": {"columns": {"b", "a", "c"}, "mixed": frozenset({1, "x"})}}, "# t")
    assert "!!set" not in text and "!!python" not in text
    meta = yaml.safe_load(text.split("---")[1])
    assert meta["hf_synthsample"]["columns"] == ["a", "b", "c"]
    assert sorted(map(str, meta["hf_synthsample"]["mixed"])) == ["1", "x"]


# ---------------------------------------------------------------- size_categories
def test_size_categories_is_the_largest_config_not_the_sum(tmp_path):
    pool = datasets.Dataset.from_dict({"x": list(range(600))})
    out = write_hub_folder(tmp_path / "f", {"a": pool, "b": pool, "c": pool.select(range(10))}, body="# t")
    # 1,210 rows in all, but the largest data set a user loads has 600
    assert read_card_metadata(out)["size_categories"] == ["n<1K"]
    write_hub_folder(out, {"d": datasets.Dataset.from_dict({"x": list(range(1_500))})}, body="# t", if_exists="add")
    assert read_card_metadata(out)["size_categories"] == ["1K<n<10K"]


# ---------------------------------------------------------------- data-map subsets and ids
import json  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from datasets import Dataset  # noqa: E402

from hf_synthsample.cartography import DataMap, datamap_provenance, load_dynamics, save_datamap_subset  # noqa: E402
from hf_synthsample.cartography.store import DYNAMICS_FILE, META_FILE  # noqa: E402
from hf_synthsample.hub.card import load_card  # noqa: E402
from hf_synthsample.hub.provenance import column_digests, dataset_fingerprint, rows_digest  # noqa: E402

N = 20
MODEL = {"class": "T5ForConditionalGeneration", "model_type": "t5", "name_or_path": "<local>/my-t5",
         "num_parameters": 1234}


def _table() -> pa.Table:
    return pa.table({"example_id": list(range(N)) * 2, "epoch": [0] * N + [1] * N,
                     "loss": [float(i % 7) + e for e in (0.0, 0.5) for i in range(N)],
                     "correct": [i % 3 == 0 for i in range(N)] * 2})


def _train() -> Dataset:
    return Dataset.from_dict({"input_ids": [[i, i + 1] for i in range(N)], "text": [f"row {i}" for i in range(N)]})


def _dynamics(folder, trained: Dataset, **meta) -> str:
    """A dynamics folder as the callback writes it, recorded on ``trained`` (ids added)."""
    os.makedirs(folder, exist_ok=True)
    pq.write_table(_table(), os.path.join(folder, DYNAMICS_FILE))
    with_ids = trained.add_column("example_id", list(range(N)))
    record = {"measures": ["loss"], "epochs": [0, 1], "num_examples": N,
              "dataset_fingerprints": [dataset_fingerprint(trained), dataset_fingerprint(with_ids)],
              "dataset_digests": column_digests(trained), "model": MODEL, **meta}
    with open(os.path.join(folder, META_FILE), "w") as f:
        json.dump(record, f)
    return str(folder)


def test_a_map_from_a_load_dynamics_table_keeps_the_training_set_and_model(tmp_path):
    trained = _train()
    folder = _dynamics(tmp_path / "dyn", trained)
    table = load_dynamics(folder)["train"]
    dm = DataMap.from_dynamics(table, "loss")  # the table alone
    assert dm.dataset_fingerprints and dm.dataset_digests and dm.model == MODEL
    shuffled = trained.shuffle(seed=0)
    with pytest.raises(ValueError, match="assume_id_order.*cannot hold") as err:
        dm.subset(shuffled, "hard-to-learn", 0.3, assume_id_order=True)
    assert "differ from the training set's" in str(err.value)
    # a part of the table cut by the user (one epoch) still knows the training set's rows
    one_epoch = DataMap.from_dynamics(table.filter(pa.compute.equal(table["epoch"], 0)), "loss")
    with pytest.raises(ValueError, match="cannot hold"):
        one_epoch.subset(shuffled, "hard-to-learn", 0.3, assume_id_order=True)
    assert len(one_epoch.subset(trained, "hard-to-learn", 0.3, assume_id_order=True)) == 6


@pytest.mark.parametrize("fmt", ["parquet", "json"])
def test_an_identical_reloaded_copy_is_cut_and_a_shuffled_one_refused(tmp_path, fmt):
    trained = _train()
    dm = DataMap.from_dynamics(_dynamics(tmp_path / "dyn", trained), "loss")
    path = str(tmp_path / f"train.{fmt}")
    getattr(trained, f"to_{fmt}")(path)
    reloaded = datasets.load_dataset(fmt, data_files=path, split="train")
    assert dataset_fingerprint(reloaded) not in dm.dataset_fingerprints  # another copy, the same rows
    expected = dm.subset(trained, "hard-to-learn", 0.3, assume_id_order=True)
    assert dm.subset(reloaded, "hard-to-learn", 0.3, assume_id_order=True)["text"] == expected["text"]
    getattr(trained.shuffle(seed=1), f"to_{fmt}")(path)
    shuffled = datasets.load_dataset(fmt, data_files=path, split="train")
    with pytest.raises(ValueError, match="assume_id_order=True cannot hold"):
        dm.subset(shuffled, "hard-to-learn", 0.3, assume_id_order=True)
    with pytest.raises(ValueError, match="none of the training set's columns"):
        dm.subset(Dataset.from_dict({"other": list(range(N))}), "hard-to-learn", 0.3, assume_id_order=True)


def test_map_subset_provenance_names_the_model_and_the_rows(tmp_path):
    trained = _train()
    dm = DataMap.from_dynamics(_dynamics(tmp_path / "dyn", trained), "loss")
    path = str(tmp_path / "train.parquet")
    trained.to_parquet(path)
    reloaded = datasets.load_dataset("parquet", data_files=path, split="train")
    p = datamap_provenance(reloaded, dm, "hard-to-learn", 0.3, assume_id_order=True, source=path)
    assert p.sampler_params["model"] == MODEL
    # the digest of the rows the file holds, not of one copy in memory
    assert p.source_fingerprint == rows_digest(trained) == rows_digest(reloaded)
    out = save_datamap_subset(dm, tmp_path / "out", "hard-to-learn", 0.3, dataset=reloaded, assume_id_order=True,
                              source=path, dynamics=str(tmp_path / "dyn"), plot=False)
    text = (out / "README.md").read_text()
    assert str(tmp_path) not in text and "T5ForConditionalGeneration" in text and "1,234 parameters" in text
    assert load_card(out).data.to_dict()["hf_synthsample"]["datamap"]["model"] == MODEL


def test_map_subset_provenance_refuses_a_dataset_the_map_cannot_cut(tmp_path):
    trained = _train().add_column("example_id", list(range(N)))
    dm = DataMap.from_dynamics(_dynamics(tmp_path / "dyn", _train()), "loss")
    subset = dm.subset(trained, "hard-to-learn", 0.3)
    with pytest.raises(ValueError, match="^dataset: 14 of the data map's 20 example ids are not in"):
        datamap_provenance(subset, dm, "hard-to-learn", 0.3)  # a subset as its own source
    with pytest.raises(ValueError, match="^dataset has no 'example_id' column"):
        datamap_provenance(Dataset.from_dict({"x": list(range(N))}), dm, "hard-to-learn", 0.3)
    with pytest.raises(ValueError, match="assume_id_order=True cannot hold"):
        datamap_provenance(_train().shuffle(seed=2), dm, "hard-to-learn", 0.3, assume_id_order=True)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="are not in"):
        save_datamap_subset(dm, out, "hard-to-learn", 0.3, dataset=subset, plot=False)
    assert not out.exists()


def test_a_map_from_a_hand_made_table_names_no_model():
    dm = DataMap.from_dynamics(_table(), "loss")
    assert dm.model is None and dm.dataset_digests == {}
    p = datamap_provenance(None, dm, "hard-to-learn", 0.3)
    assert p.sampler_params["model"] is None


# ---------------------------------------------------------------- older kinds
def test_select_by_a_region_names_measure_not_order():
    dm = DataMap.from_dynamics(_table(), "loss")
    with pytest.raises(ValueError, match="^measure: 'hard-to-learn' is a region") as err:
        dm.select_by("hard-to-learn", count=2)
    assert "order" not in str(err.value).split(";")[0]


def test_to_html_onto_a_folder_is_a_clear_error(tmp_path):
    dm = DataMap.from_dynamics(_table(), "loss")
    with pytest.raises(ValueError, match="^path: .* is a folder; give the path of a file"):
        dm.to_html(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match="^path: cannot write .* is a file, not a folder"):
        dm.to_html(blocker / "map.html")


def test_cli_plot_jpg_rerun_with_overwrite_replaces_its_own_file(tmp_path, capsys):
    pytest.importorskip("PIL")
    from hf_synthsample.cli import main

    folder = _dynamics(tmp_path / "dyn", _train())
    jpg = tmp_path / "map.jpg"
    args = ["datamap", folder, "--measure", "loss", "--plot", str(jpg)]
    assert main(args) == 0 and jpg.read_bytes()[:3] == b"\xff\xd8\xff"
    assert main(args) == 2 and "exists; pass --overwrite" in capsys.readouterr().err
    assert main(args + ["--overwrite"]) == 0
    # a file of another kind under that name is never replaced, and an unknown format is refused up front
    jpg.write_text("my notes")
    assert main(args + ["--overwrite"]) == 2 and "is not a JPEG file" in capsys.readouterr().err
    assert main(["datamap", folder, "--plot", str(tmp_path / "map.gifx")]) == 2
    assert "--plot" in capsys.readouterr().err


def test_cli_jpg_plot_with_a_subset_draws_a_png_for_the_card(tmp_path):
    pytest.importorskip("PIL")
    from hf_synthsample.cli import main

    folder = _dynamics(tmp_path / "dyn", _train())
    out = tmp_path / "out"
    assert main(["datamap", folder, "--measure", "loss", "--plot", str(tmp_path / "map.jpg"), "--select",
                 "hard-to-learn", "--out", str(out)]) == 0
    png = out / "plots" / "hard_to_learn-datamap.png"
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_sweep_folder_added_to_keeps_describing_the_earlier_splits(tmp_path):
    from hf_synthsample.splits import divergence_sweep

    ds = Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh" for a in "abcd"
                                        for b in "abc"]})
    out = tmp_path / "sweep"
    divergence_sweep(ds, [0.45], language="sexpr", compound_weights=False, progress=False).save(str(out), plots=False)
    divergence_sweep(ds, [0.6], language="sexpr", compound_weights=False, progress=False).save(
        str(out), plots=False, if_exists="add")
    meta = read_card_metadata(out)
    assert set(meta["hf_synthsample"]["split_sweep"]["splits"]) == {"dc_0.45", "dc_0.60"}
    text = load_card(out).text
    assert "## `dc_0.45`" in text and "## `dc_0.60`" in text
    assert {c["config_name"] for c in meta["configs"]} == {"dc_0.45", "dc_0.60"}
