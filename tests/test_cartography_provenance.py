"""A data-map subset's provenance (issue 33 item 2): the same record as a sampler's, no private
attributes; a card that states the real count and share as Markdown tables; the CLI's
``datamap --select ... --dataset`` folder names its source, keeps the example ids, holds its plot."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

datasets = pytest.importorskip("datasets")

from datasets import Dataset  # noqa: E402

from hf_synthsample.cartography import DataMap, datamap_provenance, save_datamap_subset  # noqa: E402
from hf_synthsample.cartography.store import DYNAMICS_FILE, META_FILE  # noqa: E402
from hf_synthsample.hub import Provenance, load_card, save_curated  # noqa: E402
from hf_synthsample.hub.provenance import rows_digest  # noqa: E402

N = 20


def table() -> pa.Table:
    # example i has loss i % 7 (+ 0.5 at epoch 1): the hardest are the 6s, 5s, ...
    return pa.table({"example_id": list(range(N)) * 2, "epoch": [0] * N + [1] * N,
                     "loss": [float(i % 7) + e for e in (0.0, 0.5) for i in range(N)],
                     "correct": [i % 3 == 0 for i in range(N)] * 2})


def write_dynamics(folder, **meta) -> str:
    os.makedirs(folder, exist_ok=True)
    pq.write_table(table(), os.path.join(folder, DYNAMICS_FILE))
    with open(os.path.join(folder, META_FILE), "w") as f:
        json.dump({"measures": ["loss"], "epochs": [0, 1], "num_examples": N, **meta}, f)
    return str(folder)


def train() -> Dataset:
    return Dataset.from_dict({"text": [f"row {i}" for i in range(N)]})


def test_from_datamap_fills_the_fields_from_sampler_fills():
    from hf_synthsample import HomogenizeSampler

    dm = DataMap.from_dynamics(table(), "loss")
    ds = train()
    p = datamap_provenance(ds, dm, "hard-to-learn+easy-to-learn", 0.3, proportions=[0.5, 0.5], seed=3,
                                source="train.jsonl", assume_id_order=True)
    pool = Dataset.from_dict({"length": [2, 2, 4, 6]})
    q = Provenance.from_sampler(pool, HomogenizeSampler("length", seed=0), source="pool")
    filled = {k for k, v in p.to_dict().items() if v not in (None, {}, "")}
    assert filled >= {k for k, v in q.to_dict().items() if v not in (None, {}, "")}
    # the rows' own digest: the same for the file train.jsonl names as for this copy in memory
    assert p.source_fingerprint == rows_digest(ds) and p.source_size == N and p.seed == 3
    assert p.sampler_params == {"measure": "loss", "pass": "train", "epochs": [0, 1],
                                "region": "hard-to-learn+easy-to-learn", "fraction": 0.3, "selected": 6,
                                "examples": N, "model": None, "proportions": [0.5, 0.5]}
    with pytest.raises(ValueError, match="region must be one of"):
        datamap_provenance(ds, dm, "hardest", 0.3)
    with pytest.raises(ValueError, match="fraction"):
        datamap_provenance(ds, dm, "hard-to-learn", 0.0)
    with pytest.raises(TypeError, match="datamap must be a DataMap"):
        datamap_provenance(ds, "dm", "hard-to-learn", 0.3)


def test_a_curated_card_states_the_real_count_and_share_as_tables(tmp_path):
    dm = DataMap.from_dynamics(table(), "loss")
    ds = train()
    sub = dm.subset(ds, "hard-to-learn", 0.3, assume_id_order=True)
    folder = save_curated(sub, tmp_path / "out", datamap_provenance(ds, dm, "hard-to-learn", 0.3,
                                                                         assume_id_order=True),
                          config_name="hard", statistics=dm.to_markdown(0.3))
    text = load_card(folder).text
    assert "| share of the source | 6 of 20 rows (30.0 %) |" in text
    assert "| hard-to-learn | 6 of 20 | 30.0 % |" in text and "33 %" not in text and "33%" not in text
    table_lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table_lines) > 15  # tables, not a paragraph or a code block
    assert "```" not in text


def test_summary_states_the_real_share():
    dm = DataMap.from_dynamics(table(), "loss")
    assert "hard-to-learn  (30%, 6)" in dm.summary(0.3)
    assert "hard-to-learn  (35%, 7)" in dm.summary(0.33)  # 0.33 of 20 rounds to 7 = 35 %, said so


def test_cli_select_with_a_dataset_names_its_source_keeps_ids_and_holds_the_plot(tmp_path, capsys):
    from hf_synthsample.cli import main

    dyn = write_dynamics(tmp_path / "dyn")
    src = tmp_path / "train.parquet"
    train().to_parquet(str(src))
    out, plot = tmp_path / "subset", tmp_path / "map.png"
    assert main(["datamap", dyn, "--measure", "loss", "--select", "hard-to-learn", "--fraction", "0.3",
                 "--dataset", str(src), "--assume-id-order", "--out", str(out), "--plot", str(plot)]) == 0
    sub = datasets.load_dataset(str(out), split="train")
    expected = DataMap.from_dynamics(table(), "loss").select("hard-to-learn", 0.3).tolist()
    assert list(sub["example_id"]) == expected and list(sub["text"]) == [f"row {i}" for i in expected]
    card = load_card(out)
    record = card.data.to_dict()["hf_synthsample"]["curated"]["hard_to_learn"]
    loaded = datasets.load_dataset("parquet", data_files=str(src), split="train")
    assert record["source"].endswith("train.parquet") and record["source_size"] == N
    assert record["source_fingerprint"] == rows_digest(loaded) == rows_digest(train())  # the file's rows
    assert record["sampler"] == "DataMap.select" and record["sampler_params"]["selected"] == 6
    png = out / "plots" / "hard_to_learn-datamap.png"
    assert png.read_bytes() == plot.read_bytes()
    assert "![hard_to_learn](plots/hard_to_learn-datamap.png)" in card.text
    assert "6 of 20 examples (30.0 %)" in card.text


def test_cli_select_without_a_dataset_draws_the_plot_into_the_folder(tmp_path):
    from hf_synthsample.cli import main

    dyn = write_dynamics(tmp_path / "dyn", dataset_fingerprints=["abc123"])
    out = tmp_path / "subset"
    assert main(["datamap", dyn, "--measure", "loss", "--select", "ambiguous", "--fraction", "0.25",
                 "--out", str(out)]) == 0
    sub = datasets.load_dataset(str(out), split="train")
    assert len(sub) == 5 and "example_id" in sub.column_names
    assert (out / "plots" / "ambiguous-datamap.png").read_bytes()[:4] == b"\x89PNG"
    record = load_card(out).data.to_dict()["hf_synthsample"]["curated"]["ambiguous"]
    assert record["source_config"]["training_set_fingerprint"] == "abc123"


def test_save_datamap_subset_with_string_ids(tmp_path):
    keys = [f"k{i:02d}" for i in range(N)]
    t = table().set_column(0, "example_id", pa.array(keys * 2))
    dm = DataMap.from_dynamics(t, "loss")
    ds = train().add_column("key", keys).shuffle(seed=0)
    out = save_datamap_subset(dm, tmp_path / "s", "hard-to-learn", 0.3, dataset=ds, id_column="key", plot=False)
    sub = datasets.load_dataset(str(out), split="train")
    assert sorted(sub["key"]) == dm.select("hard-to-learn", 0.3).tolist()
    assert not (out / "plots").exists()
    with pytest.raises(ValueError, match="plot: .* is not a file"):
        save_datamap_subset(dm, tmp_path / "t", "hard-to-learn", 0.3, plot=tmp_path / "none.png")
    assert np.all(np.isin(sub["key"], keys))
