"""``benchmarks/cartography_pools.py``: the comparison over pools, on output folders whose figures are
known by hand."""
import importlib.util
import json
import math
import os
import sys

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "cartography_pools.py")


@pytest.fixture(scope="module")
def pools():
    spec = importlib.util.spec_from_file_location("cartography_pools_under_test", _PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass reads its own module
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(spec.name, None)


def _folder(tmp_path, name, data_seed, runs, map_fit=100.0):
    d = tmp_path / name
    d.mkdir()
    rows = [{"run": run, "seed": seed, "gen": gen, "dev": 80.0, "fit": fit} for run, seed, gen, fit in runs]
    (d / "runs.json").write_text(json.dumps(rows))
    (d / "datamap.json").write_text(json.dumps({"data_seed": data_seed, "datamap_model": {"fit": map_fit}}))
    return str(d)


def test_pairs_means_and_paired_differences_by_hand(pools, tmp_path, capsys):
    # hard 40 / 10 / 30, random 20 / 30 / 10: differences +20 / -20 / +20, mean 20/3, sd sqrt(1600/3)
    a = _folder(tmp_path, "a", 10, [("33%-random", 10, 20.0, 91.0), ("33%-hard-to-learn", 10, 40.0, 92.0)])
    b = _folder(tmp_path, "b", 11, [("33%-hard-to-learn", 11, 10.0, 95.0), ("33%-random", 11, 30.0, 90.0),
                                    ("33%-easy-to-learn", 11, 70.0, 99.0)])
    c = _folder(tmp_path, "c", 12, [("33%-hard-to-learn", 12, 30.0, 90.5), ("33%-random", 12, 10.0, 93.0)])
    pairs = [p for f in (a, b, c) for p in pools.read_pairs(f)]
    assert [(p.data_seed, p.hard, p.random, p.difference) for p in pairs] == [
        (10, 40.0, 20.0, 20.0), (11, 10.0, 30.0, -20.0), (12, 30.0, 10.0, 20.0)]
    s = pools.summary(pairs)
    assert s["pairs"] == 3 and s["hard_ahead"] == 2 and s["left_out"] == []
    assert s["hard"] == pytest.approx((80 / 3, math.sqrt(((40 - 80 / 3) ** 2 + (10 - 80 / 3) ** 2 + (30 - 80 / 3) ** 2) / 2)))
    assert s["difference"] == pytest.approx((20 / 3, math.sqrt(1600 / 3)))
    t = (20 / 3) / (math.sqrt(1600 / 3) / math.sqrt(3))  # 0.5
    assert s["t"] == pytest.approx(t) and s["t"] == pytest.approx(0.5)
    assert s["p"] == pytest.approx(1 - t / math.sqrt(2 + t * t))  # two-sided p at 2 degrees of freedom: 2/3
    out = tmp_path / "summary.md"
    assert pools.main([a, b, c, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| 12 | 33% | 12 | 100.0 % | 30.0 (90.5; -) | 10.0 (93.0; -) | +20.0 |" in text
    assert "Per pool" not in text  # one pair a pool: the pairs are the pools
    assert "+6.7 ± 23.1" in text and "ahead in 2 of 3 pairs" in text
    assert out.read_text().strip() == text.strip() and not os.path.exists(str(out) + ".tmp")


def test_a_pair_with_an_unfitted_model_is_flagged_and_left_out(pools, tmp_path, capsys):
    a = _folder(tmp_path, "a", 10, [("33%-hard-to-learn", 10, 40.0, 92.0), ("33%-random", 10, 20.0, 91.0)])
    b = _folder(tmp_path, "b", 11, [("33%-hard-to-learn", 11, 90.0, 89.9), ("33%-random", 11, 0.0, 95.0)])
    pairs = [p for f in (a, b) for p in pools.read_pairs(f)]
    s = pools.summary(pairs)
    assert s["pairs"] == 1 and s["left_out"] == [(b, 11)] and s["hard"] == (40.0, 0.0) and s["t"] is None
    assert pools.summary(pairs, keep_unfitted=True)["hard"][0] == 65.0
    assert pools.main([a, b]) == 0
    text = capsys.readouterr().out
    assert "+90.0 (a model under 90 %)" in text and "no paired t" in text
    with pytest.raises(ValueError, match="--keep-unfitted"):
        pools.summary(pairs[1:])


def test_bad_folders_and_metrics_are_named(pools, tmp_path):
    with pytest.raises(ValueError, match="holds no runs.json"):
        pools.read_pairs(str(tmp_path))
    lone = _folder(tmp_path, "lone", 3, [("33%-hard-to-learn", 3, 40.0, 92.0)])
    with pytest.raises(ValueError, match="no 'hard-to-learn' and 'random' run with the same seed"):
        pools.read_pairs(lone)
    a = _folder(tmp_path, "a", 10, [("33%-hard-to-learn", 10, 40.0, 92.0), ("33%-random", 10, 20.0, 91.0)])
    with pytest.raises(ValueError, match="metric: 'gen EM' is not a score.*accepted: seed, gen, dev, fit"):
        pools.read_pairs(a, metric="gen EM")
    with pytest.raises(SystemExit):
        pools.main([a, "--fit-target", "120"])


def test_pairs_of_one_pool_are_averaged_before_the_test_over_pools(pools, tmp_path, capsys):
    # pool 10: two model seeds (+20, +10 -> +15); pool 11: -5; pool 12: +20 -> pools +15 / -5 / +20
    a = _folder(tmp_path, "a", 10, [("33%-hard-to-learn", 10, 40.0, 92.0), ("33%-random", 10, 20.0, 91.0),
                                    ("33%-hard-to-learn", 110, 30.0, 92.0), ("33%-random", 110, 20.0, 91.0)])
    b = _folder(tmp_path, "b", 11, [("33%-hard-to-learn", 11, 10.0, 95.0), ("33%-random", 11, 15.0, 90.0)])
    c = _folder(tmp_path, "c", 12, [("33%-hard-to-learn", 12, 30.0, 90.5), ("33%-random", 12, 10.0, 93.0)])
    pairs = [p for f in (a, b, c) for p in pools.read_pairs(f)]
    assert [p.seed for p in pairs] == [10, 110, 11, 12]
    s = pools.summary(pairs)
    assert s["pools"] == {10: 15.0, 11: -5.0, 12: 20.0}
    assert s["pool_difference"] == pytest.approx((10.0, math.sqrt((25 + 225 + 100) / 2)))
    assert s["pool_t"] == pytest.approx(10.0 / (math.sqrt(175) / math.sqrt(3)))
    assert pools.main([a, b, c]) == 0
    assert "10: +15.0, 11: -5.0, 12: +20.0; over the 3 pools +10.0 ± 13.2" in capsys.readouterr().out
