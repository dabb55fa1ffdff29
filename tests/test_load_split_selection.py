"""Split specs that select nothing or read rows twice are refused before any work, naming the argument."""

from __future__ import annotations

import os
import re

import datasets
import pytest

import hf_synthsample
from hf_synthsample.cli import main
from hf_synthsample.load import check_split_selection


@pytest.mark.parametrize("spec, match", [
    ("train[50:10]", r"split='train\[50:10\]': the slice 'train\[50:10\]' selects no rows"),
    ("train[10:10]", "selects no rows"),
    ("train[-5:-10]", "selects no rows"),
    ("train[:0]", "selects no rows"),
    ("train[100%:]", "selects no rows"),
    ("train+train", r"split='train\+train': 'train' reads rows that 'train' reads too"),
    ("train[:10]+train", "'train' reads rows that 'train\\[:10\\]' reads too"),
    ("train[10:20]+train[15:30]", "'train\\[15:30\\]' reads rows that 'train\\[10:20\\]' reads too"),
    ("train[10%:20%]+train[15%:30%]", "reads rows that"),
    ("train[-10:]+train[-20:-5]", "reads rows that"),
    ("train[5:]+train[-3:]", "reads rows that"),  # both run to the split's end
])
def test_a_spec_alone_that_selects_nothing_or_twice_is_refused(spec, match):
    with pytest.raises(ValueError, match=match):
        check_split_selection(spec)


@pytest.mark.parametrize("spec", ["train", "train+test", "train[10:20]+train[20:30]", "train[:10%]+train[-10%:]",
                                  "validation[0:5]+train[1%:2%]", "train[5:-3]", "test[-5%:](pct1_dropremainder)",
                                  datasets.Split.TEST])
def test_disjoint_and_undecidable_specs_pass_unchanged(spec):
    assert check_split_selection(spec) == str(spec)


@pytest.mark.parametrize("spec, sizes, match", [
    ("train[200:]", {"train": 100}, "selects no rows of the 100 rows of 'train'"),
    ("train[5:-3]", {"train": 6}, "selects no rows of the 6 rows of 'train'"),
    ("train[:10%]+train[-10%:]", {"train": 5}, "'train\\[:10%\\]' selects no rows"),
    ("train[:60]+train[40:]", {"train": 100}, r"reads rows that 'train\[:60\]' reads too \(rows 40 to 59 of 100\)"),
    ("train[:60%]+train[-50%:]", {"train": 10}, r"\(rows 5 to 5 of 10\)"),
])
def test_with_the_sizes_the_check_is_exact(spec, sizes, match):
    with pytest.raises(ValueError, match=match):
        check_split_selection(spec, sizes)


def test_with_the_sizes_disjoint_slices_pass():
    assert check_split_selection("train[:50%]+train[-50%:]", {"train": 10}) == "train[:50%]+train[-50%:]"
    assert check_split_selection("train[5:-3]", {"train": 100}) == "train[5:-3]"


@pytest.mark.parametrize("spec, match", [
    ("train[50:10]", "selects no rows"),
    ("train+train", "reads rows that 'train' reads too"),
    ("train[150:]", "selects no rows of the 100 rows of 'train'"),  # needs the config's split sizes
    ("train[:60]+train[-50:]", r"\(rows 50 to 59 of 100\)"),
])
def test_load_dataset_refuses_before_generating(spec, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        hf_synthsample.load_dataset("calculator", "dcfg", num_examples=100, split=spec, cache_dir=str(tmp_path))
    assert not any(name.endswith(".arrow") for _, _, files in os.walk(tmp_path) for name in files)


def test_load_dataset_reads_disjoint_slices_of_one_split(tmp_path):
    ds = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=100, seed=0, split="train[:10]+train[-5:]",
                                     cache_dir=str(tmp_path))
    full = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=100, seed=0, split="train",
                                       cache_dir=str(tmp_path))
    assert ds["expression"] == full["expression"][:10] + full["expression"][-5:]


@pytest.mark.parametrize("spec, match", [
    ("train[50:10]", "--split='train\\[50:10\\]': the slice 'train\\[50:10\\]' selects no rows"),
    ("train+train", "--split='train\\+train': 'train' reads rows that 'train' reads too"),
])
def test_cli_names_the_flag_for_a_file_source(spec, match, tmp_path, capsys):
    src = tmp_path / "pool.parquet"
    datasets.Dataset.from_dict({"length": [1, 2, 3] * 20}).to_parquet(str(src))
    out = tmp_path / "h"
    assert main(["homogenize", str(src), "--columns", "length", "--out", str(out), "--split", spec]) == 2
    err = capsys.readouterr().err
    assert re.search(match, err), err
    assert not out.exists()
