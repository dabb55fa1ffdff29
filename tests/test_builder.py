"""The builder pattern through hf_synthsample.load_dataset: determinism, streaming, configs, errors."""

from __future__ import annotations

import os
from collections import Counter

import datasets
import pytest
from datasets.distributed import split_dataset_by_node

import hf_synthsample
from hf_synthsample.builders.calculator import Calculator
from hf_synthsample.domains import calculator as calc
from hf_synthsample.sampling import kl_to_uniform


def rows(ds: datasets.Dataset) -> list[dict]:
    return ds.to_list()


def test_same_seed_same_rows_and_fingerprint_whatever_num_proc(tmp_path):
    kwargs = dict(num_examples=3_000, num_test=700, seed=11, block_size=400)
    one = hf_synthsample.load_dataset("calculator", "mixture", cache_dir=str(tmp_path / "a"), **kwargs)
    two = hf_synthsample.load_dataset("calculator", "mixture", cache_dir=str(tmp_path / "b"), num_proc=2, **kwargs)
    for split in ("train", "test"):
        assert rows(one[split]) == rows(two[split])
        assert one[split]._fingerprint == two[split]._fingerprint
    other = hf_synthsample.load_dataset("calculator", "mixture", cache_dir=str(tmp_path / "c"), **{**kwargs, "seed": 12})
    assert rows(other["train"]) != rows(one["train"])
    assert other["train"]._fingerprint != one["train"]._fingerprint


def test_homogenized_config_same_rows_whatever_num_proc(tmp_path):
    kwargs = dict(num_examples=2_000, seed=3, block_size=300, homogenize_pilot=2_000)
    one = hf_synthsample.load_dataset("calculator", "dcfg-homogenized-num-ops", cache_dir=str(tmp_path / "a"), **kwargs)
    two = hf_synthsample.load_dataset(
        "calculator", "dcfg-homogenized-num-ops", cache_dir=str(tmp_path / "b"), num_proc=2, **kwargs
    )
    assert rows(one["train"]) == rows(two["train"])
    r1, r2 = hf_synthsample.homogenization_report(one["train"]), hf_synthsample.homogenization_report(two["train"])
    assert r1.to_dict() == r2.to_dict()


def test_rows_are_correct_calculator_examples(cache_dir):
    ds = hf_synthsample.load_dataset("calculator", "mixture", num_examples=1_500, cache_dir=cache_dir)["train"]
    assert set(ds.unique("distribution")) == set(calc.DISTRIBUTIONS)
    for row in ds:
        assert row["answer"] == eval(row["expression"]) % 10  # noqa: S307
        features = calc.salient_features(row["expression"])
        assert {k: row[k] for k in features} == features
    assert ds.features["answer"] == datasets.Value("int32")


def test_adding_a_split_does_not_change_the_others(cache_dir):
    a = hf_synthsample.load_dataset("calculator", "t2t", num_examples=500, cache_dir=cache_dir)
    b = hf_synthsample.load_dataset("calculator", "t2t", num_examples=500, num_test=100, cache_dir=cache_dir)
    assert list(a) == ["train"] and sorted(b) == ["test", "train"]
    assert rows(a["train"]) == rows(b["train"])


def test_default_eps_homogenization_of_length_cuts_kl_by_90_percent(cache_dir):
    n = 10_000
    plain = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=n, cache_dir=cache_dir)["train"]
    homog = hf_synthsample.load_dataset("calculator", "dcfg-homogenized-length", num_examples=n, cache_dir=cache_dir)["train"]
    assert homog.num_rows == n
    report = hf_synthsample.homogenization_report(homog)
    assert report.eps == 0.01 and report.variables == ("length",)
    assert report.kl_reduction() >= 0.9
    # the same holds on the datasets themselves (equal sizes, one support)
    before, after = Counter(plain["length"]), Counter(homog["length"])
    support = set(before) | set(after)
    assert 1 - kl_to_uniform(after, support) / kl_to_uniform(before, support) >= 0.9
    # the report's "after" is exactly the dataset
    assert report.after["length"] == dict(sorted(after.items()))
    # measured draws per accepted example track 1 / sum_v min(P(v), eps)
    assert report.draws_per_accepted == pytest.approx(report.theoretical_draws_per_accepted, rel=0.05)
    assert hf_synthsample.homogenization_report(plain) is None


def test_joint_and_sequential_homogenization_through_the_builder(cache_dir):
    for mode in ("joint", "sequential"):
        ds = hf_synthsample.load_dataset(
            "calculator", "t2t", num_examples=1_000, homogenize=["num_parens", "max_paren_depth"],
            homogenize_mode=mode, eps=0.05, cache_dir=cache_dir,
        )["train"]
        report = hf_synthsample.homogenization_report(ds)
        assert report.mode == mode and report.accepted == 1_000
        assert report.kl_after("num_parens") < report.kl_before("num_parens")


def test_streaming_shards_split_across_nodes_disjoint_and_reproducible(cache_dir):
    kwargs = dict(num_examples=2_400, block_size=300, seed=5, homogenize_pilot=1_000)
    full = hf_synthsample.load_dataset("calculator", "dcfg-homogenized-length", cache_dir=cache_dir, **kwargs)["train"]
    stream = hf_synthsample.load_dataset("calculator", "dcfg-homogenized-length", streaming=True, **kwargs)["train"]
    assert isinstance(stream, datasets.IterableDataset) and stream.num_shards == 8
    assert list(stream) == rows(full)
    parts = [list(split_dataset_by_node(stream, rank=r, world_size=4)) for r in range(4)]
    assert [len(p) for p in parts] == [600] * 4
    assert sorted(x["expression"] for p in parts for x in p) == sorted(full["expression"])
    assert list(split_dataset_by_node(stream, rank=2, world_size=4)) == parts[2]


def test_equal_configs_share_a_fingerprint(cache_dir):
    a = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=300, cache_dir=cache_dir)["train"]
    b = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=300, seed=0, eps=0.01, cache_dir=cache_dir)["train"]
    assert a._fingerprint == b._fingerprint


def test_none_overrides_are_applied(cache_dir):
    builder = hf_synthsample.load_dataset_builder("calculator", "dcfg", max_length=None, cache_dir=cache_dir)
    assert builder.config.max_length is None
    builder = hf_synthsample.load_dataset_builder("calculator", "dcfg", homogenize=None, cache_dir=cache_dir)
    assert builder.config.homogenize == ()
    # but not where the config's name says it is homogenized (issue 12)
    with pytest.raises(ValueError, match="homogenize=\\(\\) contradicts config 'dcfg-homogenized-length'"):
        hf_synthsample.load_dataset_builder("calculator", "dcfg-homogenized-length", homogenize=None, cache_dir=cache_dir)


def test_builder_class_used_directly(tmp_path):
    builder = Calculator(config_name="bal", cache_dir=str(tmp_path), num_examples=50)
    builder.download_and_prepare()
    ds = builder.as_dataset("train")
    assert ds.num_rows == 50 and set(ds["distribution"]) == {"bal"}


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("karol", "dcfg"), {}, r"unknown domain 'karol'; available domains: \['calculator'"),
        (("calculator", "dcfgg"), {}, r"config 'dcfgg' does not exist.*available configs: \['dcfg'"),
        (("calculator", "dcfg"), {"num_exampels": 5}, r"unknown parameter 'num_exampels'.*accepted parameters: \["),
        (("calculator", "dcfg"), {"homogenize": "depth"}, r"homogenize: unknown value 'depth'; accepted values: \['length'"),
        (("calculator", "dcfg"), {"homogenize": "length", "eps": 0}, r"eps must be > 0"),
        (("calculator", "dcfg"), {"eps": -0.5}, r"eps must be > 0"),
        (("calculator", "dcfg"), {"num_examples": -1}, r"num_examples must be >= 0"),
        (("calculator", "dcfg"), {"num_examples": 0}, r"at least one split must have rows"),
        (("calculator", "dcfg"), {"distribution": "uniform"}, r"distribution must be one of"),
        (("calculator", "dcfg"), {"homogenize_mode": "both"}, r"homogenize_mode must be one of \['joint', 'sequential'\]"),
        (("calculator", "dcfg"), {"t2t_min_depth": 4, "t2t_max_depth": 2}, r"t2t_max_depth must be >= 4"),
        (("calculator", "dcfg"), {"p_digit": 1.5}, r"p_digit must be <= 1"),
    ],
)
def test_bad_input_fails_before_any_work(tmp_path, args, kwargs, match):
    cache = tmp_path / "never-created"
    with pytest.raises(ValueError, match=match):
        hf_synthsample.load_dataset(*args, cache_dir=str(cache), **kwargs)
    assert not cache.exists()


def test_bad_types_and_splits(cache_dir):
    with pytest.raises(TypeError, match="num_examples must be an int"):
        hf_synthsample.load_dataset("calculator", "dcfg", num_examples="10", cache_dir=cache_dir)
    with pytest.raises(TypeError, match="seed must be an int"):
        hf_synthsample.load_dataset("calculator", "dcfg", seed=1.0, cache_dir=cache_dir)
    with pytest.raises(ValueError, match=r"split 'test' is not generated.*\['train'\]"):
        hf_synthsample.load_dataset("calculator", "dcfg", num_examples=10, split="test", cache_dir=cache_dir)
    with pytest.raises(ValueError, match="num_proc must be >= 1"):
        hf_synthsample.load_dataset("calculator", "dcfg", num_examples=10, num_proc=0, cache_dir=cache_dir)


def test_unknown_kwarg_to_builder_directly_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="unknown parameter 'bogus'"):
        Calculator(config_name="dcfg", cache_dir=str(tmp_path), bogus=1)


def test_import_is_light():
    import subprocess
    import sys

    code = "import hf_synthsample, sys; print('torch' in sys.modules, 'datasets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    assert out.stdout.split() == ["False", "False"]


def test_public_names_are_not_shadowed_by_submodules():
    import importlib
    import pkgutil
    import types

    for info in pkgutil.walk_packages(hf_synthsample.__path__, "hf_synthsample."):
        importlib.import_module(info.name)
    for name in set(hf_synthsample.__all__) - {"__version__", "logging"}:
        assert not isinstance(getattr(hf_synthsample, name), types.ModuleType), name
