"""Ray Data engine: the same rows as load_dataset, structure / salient columns, Hub folders, bad input."""

from __future__ import annotations

import os
import re

import datasets
import pytest

import hf_synthsample
from hf_synthsample.engines import ray as hr
from hf_synthsample.engines.blocks import block_table, plan_split

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'hf-synthsample[ray]'")
pytest.importorskip("ray.data", reason="Ray Data is not installed: pip install 'hf-synthsample[ray]'")

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("local_ray")]


def _rows(ds):
    return [dict(r) for r in ds.take_all()]


# every domain, with a config that exercises its own block path (homogenized, split-dependent, exact)
CASES = [
    ("calculator", "mixture", dict(num_examples=700, num_test=150, block_size=100, seed=4), "test"),
    ("calculator", "dcfg-homogenized-length", dict(num_examples=500, block_size=100, seed=1, homogenize_pilot=500), "train"),
    ("scan", "addprim_jump", dict(block_size=3000, seed=2), "test"),
    ("scan_star", "length_31", dict(num_examples=400, num_test=120, block_size=100, seed=5, num_primitives=20), "test"),
    ("schema2qa", "all", dict(num_examples=600, num_validation=90, block_size=100, seed=7), "validation"),
    ("karel", "baseline", dict(num_examples=40, num_test=12, block_size=10, seed=3, max_grid_size=8), "test"),
]


@pytest.mark.parametrize("domain,config,params,split", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_generate_same_rows_as_load_dataset(domain, config, params, split, cache_dir):
    ref = hf_synthsample.load_dataset(domain, config, split=split, cache_dir=cache_dir, **params)
    expected = ref.to_list()
    # one block per task, the default (a few tasks per CPU) and everything in one task: the rows do
    # not depend on the partition
    for rows_per_task in (1, None, 10**9):
        got = _rows(hr.generate(domain, config, split, rows_per_task=rows_per_task, **params))
        assert got == expected


def test_train_split_and_block_function_shared_with_builder(cache_dir):
    params = dict(num_examples=1_050, block_size=100, seed=11)
    ref = hf_synthsample.load_dataset("schema2qa", "hotels", split="train", num_proc=2, cache_dir=cache_dir, **params)
    plan = plan_split("schema2qa", "hotels", "train", **params)
    assert plan.num_rows == (100,) * 10 + (50,)
    assert block_table(plan, 10).to_pylist() == ref.select(range(1_000, 1_050)).to_list()
    got = _rows(hr.generate("schema2qa", "hotels", num_examples=1_050, seed=11, block_size=100, rows_per_task=250,
                            index_column="row"))
    assert [r.pop("row") for r in got] == list(range(1_050))
    assert got == ref.to_list()


def test_structure_and_salient_columns_match_local_functions(cache_dir):
    from hf_synthsample.salient import salient_columns
    from hf_synthsample.structure import StructureFunction

    params = dict(num_examples=300, block_size=100, seed=2)
    ref = hf_synthsample.load_dataset("schema2qa", "all", split="train", cache_dir=cache_dir, **params)
    local = ref.map(StructureFunction(), batched=True, batch_size=64)
    ds = hr.structure_columns(hr.generate("schema2qa", "all", **params), batch_size=37)
    ds = hr.salient_columns(ds, "schema2qa")
    got = _rows(ds)
    for col in ("template", "atoms", "compounds", "num_clauses", "program_length", "utterance"):
        assert [r[col] for r in got] == local[col], col
    # the local batched salient function gives the generator's values too (so the Ray one does)
    assert ref.map(salient_columns("schema2qa"), batched=True)["program_length"] == ref["program_length"]
    # recomputed on other domains: the generator's values
    for domain, config, extra in (("calculator", "mixture", {}), ("scan_star", "random", {}),
                                  ("karel", "baseline", {"max_grid_size": 8})):
        p = dict(num_examples=60 if domain == "karel" else 300, block_size=30, seed=1, **extra)
        want = hf_synthsample.load_dataset(domain, config, split="train", cache_dir=cache_dir, **p).to_list()
        got = _rows(hr.salient_columns(hr.generate(domain, config, **p), domain, batch_size=17))
        assert got == want, domain


def test_to_hub_folder_loads_with_datasets_and_records_provenance(tmp_path, cache_dir):
    params = dict(num_examples=900, num_test=200, block_size=100, seed=3)
    out = hr.to_hub_folder("calculator", tmp_path / "calc", ["dcfg", "t2t"], rows_per_file=250, **params)
    ref = hf_synthsample.load_dataset("calculator", "t2t", cache_dir=cache_dir, **params)
    back = datasets.load_dataset(str(out), "t2t")
    for split in ("train", "test"):
        assert back[split].to_list() == ref[split].to_list()
    assert datasets.load_dataset(str(out))["train"].num_rows == 900  # the default config: dcfg
    assert len([f for f in os.listdir(out / "dcfg") if f.startswith("train-")]) == 4
    from hf_synthsample.hub import read_card_metadata

    meta = read_card_metadata(out)
    assert meta["hf_synthsample"]["engine"] == "ray"
    assert meta["hf_synthsample"]["configs"]["t2t"]["seed"] == 3
    assert "load_dataset('calculator', 'dcfg'" in (out / "README.md").read_text()
    # an existing folder: an error without overwrite (before any task), replaced with it
    with pytest.raises(FileExistsError, match="overwrite"):
        hr.to_hub_folder("calculator", out, ["dcfg"], **params)
    hr.to_hub_folder("calculator", out, ["bal"], if_exists="overwrite", num_examples=100)
    assert sorted(os.listdir(out)) == [".hf-synthsample", "README.md", "bal"]  # the marker: a folder hf-synthsample wrote


def test_worker_failure_leaves_no_folder(tmp_path):
    def fail_late(batch):
        if 150 in batch["idx"]:
            raise RuntimeError("worker died")
        return {"y": batch["idx"]}

    ds = hr.map_columns(hr.generate("calculator", "dcfg", num_examples=400, block_size=50, index_column="idx"),
                        fail_late, input_columns=["idx"], batch_size=50)
    with pytest.raises(Exception, match="worker died"):
        hr.write(ds, tmp_path / "out")
    assert os.listdir(tmp_path) == []
    # an existing folder is left untouched by a failed overwrite
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "x.txt").write_text("old")
    # a folder hf-synthsample wrote (its marker lists every file in it): replaceable
    (tmp_path / "keep" / ".hf-synthsample").write_text('{"files": ["x.txt"]}')
    with pytest.raises(Exception, match="worker died"):
        hr.write(ds, tmp_path / "keep", if_exists="overwrite")
    assert sorted(os.listdir(tmp_path)) == ["keep"] and (tmp_path / "keep" / "x.txt").read_text() == "old"


def test_bad_input_is_an_error_before_any_task(tmp_path):
    with pytest.raises(ValueError, match="available domains"):
        hr.generate("nope")
    with pytest.raises(ValueError, match="available configs"):
        hr.generate("calculator", "nope")
    with pytest.raises(ValueError, match="unknown parameter 'foo'"):
        hr.generate("calculator", "dcfg", foo=1)
    with pytest.raises(ValueError, match="available splits"):
        hr.generate("calculator", "dcfg", "test")
    with pytest.raises(ValueError, match="num_examples"):
        hr.generate("calculator", "dcfg", num_examples=-1)
    with pytest.raises(ValueError, match="if_exists"):
        hr.to_hub_folder("calculator", tmp_path / "x", if_exists="replace")
    with pytest.raises(ValueError, match="unknown parameter 'foo'"):
        hr.to_hub_folder("calculator", tmp_path / "x", ["dcfg"], foo=2)
    assert os.listdir(tmp_path) == []


def test_cli_generate_engine_ray(tmp_path, capsys):
    from hf_synthsample.cli import main

    out = tmp_path / "star"
    assert main(["generate", "scan_star", "--engine", "ray", "--out", str(out), "--configs", "length_31",
                 "--num-examples", "300", "--num-test", "50", "--num-primitives", "12", "--seed", "4"]) == 0
    ref = hf_synthsample.load_dataset("scan_star", "length_31", num_examples=300, num_test=50, num_primitives=12, seed=4)
    back = datasets.load_dataset(str(out), "length_31")
    assert back["test"].to_list() == ref["test"].to_list() and back["train"]["commands"] == ref["train"]["commands"]
    # bad input: an error naming the option, nothing written
    assert main(["generate", "scan_star", "--engine", "ray", "--out", str(out), "--num-examples", "10"]) != 0
    assert "--overwrite" in capsys.readouterr().err
    assert main(["generate", "calculator", "--engine", "ray", "--out", str(tmp_path / "c"), "--num-proc", "2"]) != 0
    assert "--num-proc" in capsys.readouterr().err and not (tmp_path / "c").exists()


def test_write_splits_with_list_columns(tmp_path, cache_dir):
    params = dict(num_examples=300, num_test=80, block_size=100, seed=6)
    parts = {s: hr.structure_columns(hr.generate("schema2qa", "books", s, **params)) for s in ("train", "test")}
    out = hr.write(parts, tmp_path / "s", config_name="books-structure", rows_per_file=120,
                   metadata={"note": "structure columns"})
    back = datasets.load_dataset(str(out))
    ref = hf_synthsample.load_dataset("schema2qa", "books", cache_dir=cache_dir, **params)
    from hf_synthsample.structure import StructureFunction

    for split in ("train", "test"):
        assert back[split]["compounds"] == ref[split].map(StructureFunction(), batched=True)["compounds"]
    names = sorted(os.listdir(out / "books-structure"))
    # content-named like every Hub folder writer's files: <split>-<i>-of-<n>-<sha256[:16]>.parquet
    assert [re.sub(r"-[0-9a-f]{16}\.parquet$", "", n) for n in names] == [
        "test-00000-of-00001", *(f"train-0000{i}-of-00003" for i in range(3))]


def test_overwritten_folder_reloads_the_new_rows(tmp_path, cache_dir):
    # datasets caches a local folder by its card and file names: same names would serve the old rows
    out = tmp_path / "calc"
    hr.to_hub_folder("calculator", out, ["dcfg"], num_examples=200, num_test=20, seed=1)
    first = datasets.load_dataset(str(out), "dcfg", split="train", cache_dir=cache_dir)["expression"]
    hr.to_hub_folder("calculator", out, ["dcfg"], num_examples=200, num_test=20, seed=2, if_exists="overwrite")
    second = datasets.load_dataset(str(out), "dcfg", split="train", cache_dir=cache_dir)["expression"]
    ref = hf_synthsample.load_dataset("calculator", "dcfg", split="train", num_examples=200, num_test=20, seed=2,
                                      cache_dir=cache_dir)["expression"]
    assert second == ref and second != first
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temp or backup folder left
