"""Salient-variable homogenization: generator-side against theory, pool-side exactly."""

from __future__ import annotations

import math
import random
from collections import Counter

import datasets
import numpy as np
import pytest

from hf_synthsample.sampling import HomogenizeSampler, homogenize_indices, homogenize_stream, kl_to_uniform
from hf_synthsample.sampling.homogenize import StreamHomogenizer, water_fill
from hf_synthsample.sampling.report import HomogenizationReport


def categorical(probs: dict):
    values, weights = list(probs), list(probs.values())

    def draw(rng: random.Random) -> dict:
        return {"v": rng.choices(values, weights)[0]}

    return draw


# ------------------------------------------------------------------------- generator-side
def test_accepted_histogram_matches_theory():
    # P = (0.7, 0.2, 0.1), eps = 0.15: kept mass per value min(P, eps) = (0.15, 0.15, 0.1)
    probs = {"a": 0.7, "b": 0.2, "c": 0.1}
    n = 20_000
    rows, report = homogenize_stream(categorical(probs), n, variables="v", eps=0.15, rng=random.Random(0), pilot=5_000)
    counts = Counter(r["v"] for r in rows)
    expected = {"a": 0.375, "b": 0.375, "c": 0.25}
    for v, p in expected.items():
        se = math.sqrt(p * (1 - p) / n)
        assert abs(counts[v] / n - p) < 4 * se, (v, counts[v] / n, p)
    # draws per accepted: 1 / sum_v min(P(v), eps) = 1 / 0.4
    assert report.theoretical_draws_per_accepted == pytest.approx(2.5, rel=0.03)
    assert report.draws_per_accepted == pytest.approx(2.5, rel=0.03)
    assert report.accepted == n and report.after["v"] == dict(sorted(counts.items()))


def test_paper_algorithm_without_pilot_is_close_too():
    probs = {"a": 0.7, "b": 0.2, "c": 0.1}
    rows, _ = homogenize_stream(categorical(probs), 20_000, variables="v", eps=0.15, rng=random.Random(3))
    share_a = sum(r["v"] == "a" for r in rows) / len(rows)
    assert abs(share_a - 0.375) < 0.02


def test_eps_above_every_probability_rejects_nothing():
    # with a pilot the running estimate starts near P, so p_hat < eps from the first draw on
    rows, report = homogenize_stream(
        categorical({"a": 0.6, "b": 0.4}), 500, variables="v", eps=0.7, rng=random.Random(0), pilot=2_000
    )
    assert report.draws == report.accepted == 500


def test_acceptance_rule_by_hand():
    h = StreamHomogenizer(eps=0.25, initial_counts={"a": 3, "b": 1})
    # after counting this draw: p_hat(a) = 4/5, accept iff u < 0.25 / 0.8 = 0.3125
    assert h.offer("a", 0.31) is True
    # now p_hat(a) = 5/6: accept iff u < 0.3
    assert h.offer("a", 0.31) is False
    # p_hat(b) = 2/7 -> threshold 0.875
    assert h.offer("b", 0.87) is True


def test_sequential_generator_side_flattens_both_variables():
    def draw(rng):
        x = 0 if rng.random() < 0.8 else 1
        y = 0 if rng.random() < (0.9 if x == 0 else 0.3) else 1
        return {"x": x, "y": y}

    rows, report = homogenize_stream(
        draw, 2_000, variables=["x", "y"], eps=0.1, mode="sequential", rng=random.Random(1), pilot=2_000
    )
    assert report.mode == "sequential"
    for v in ("x", "y"):
        assert report.kl_after(v) < 0.25 * report.kl_before(v)
    joint_rows, joint = homogenize_stream(draw, 2_000, variables=["x", "y"], eps=0.05, rng=random.Random(1), pilot=2_000)
    assert "(x, y)" in joint.before and joint.kl_reduction() > 0.9


# ------------------------------------------------------------------------- pool-side
def test_water_fill_by_hand():
    rng = np.random.default_rng(0)
    assert water_fill(np.array([1, 5, 10]), 9, rng).tolist() == [1, 4, 4]
    assert water_fill(np.array([1, 5, 10]), 16, rng).tolist() == [1, 5, 10]
    q = water_fill(np.array([3, 3, 3]), 7, rng)
    assert sorted(q.tolist()) == [2, 2, 3]
    with pytest.raises(ValueError, match="larger than the pool"):
        water_fill(np.array([1, 1]), 3, rng)


def test_pool_side_is_exact_and_deterministic():
    values = [2] * 50 + [4] * 20 + [6] * 5 + [8] * 1
    idx, report = homogenize_indices({"length": values}, 31, seed=7)
    chosen = Counter(values[i] for i in idx)
    # level t: min(c, t) sums: t=12 -> 12+12+5+1 = 30 <= 31 < 32: quotas 12/12 + one extra, 5, 1
    assert sorted(chosen.values()) == [1, 5, 12, 13]
    assert list(idx) == sorted(idx) and len(set(idx)) == 31
    again, _ = homogenize_indices({"length": values}, 31, seed=7)
    assert np.array_equal(idx, again)
    other, _ = homogenize_indices({"length": values}, 31, seed=8)
    assert not np.array_equal(idx, other)
    assert report.after["length"] == dict(sorted(chosen.items()))
    assert report.kl_after() < report.kl_before()


def test_pool_side_default_size_is_the_largest_uniform_subset():
    values = ["a"] * 9 + ["b"] * 3 + ["c"] * 4
    idx, report = homogenize_indices(values, seed=0)
    assert Counter(values[i] for i in idx) == {"a": 3, "b": 3, "c": 3}
    assert report.kl_after() == 0.0


def test_pool_side_sequential_is_lexicographic():
    # x: 0 x6, 1 x2 ; inside x=0, y is 0 x5, 1 x1
    x = [0, 0, 0, 0, 0, 0, 1, 1]
    y = [0, 0, 0, 0, 0, 1, 0, 1]
    idx, report = homogenize_indices({"x": x, "y": y}, 4, mode="sequential", seed=0)
    picked = [(x[i], y[i]) for i in idx]
    assert Counter(p[0] for p in picked) == {0: 2, 1: 2}  # x exactly balanced first
    assert Counter(p for p in picked if p[0] == 0) == {(0, 0): 1, (0, 1): 1}  # then y within x=0


def test_pool_side_joint_and_bins():
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 4, size=400)
    depth = rng.random(400) ** 3
    idx, report = homogenize_indices({"length": lengths, "depth": depth}, 200, bins={"depth": 2}, seed=1)
    assert len(idx) == 200 and "(length, depth)" in report.after
    assert report.kl_after() < report.kl_before()


def test_kl_to_uniform_by_hand():
    assert kl_to_uniform({"a": 3, "b": 1}) == pytest.approx(0.75 * math.log(1.5) + 0.25 * math.log(0.5))
    assert kl_to_uniform({"a": 1}, support=["a", "b"]) == pytest.approx(math.log(2))


# ------------------------------------------------------------------------- sampler on datasets
@pytest.fixture
def pool():
    return datasets.Dataset.from_dict(
        {"text": [f"x{i}" for i in range(12)], "length": [2] * 8 + [4] * 3 + [6], "tags": [[1]] * 12}
    )


def test_sampler_select_and_filter_agree(pool):
    sampler = HomogenizeSampler("length", seed=3)
    picked = pool.select(sampler.indices(pool, 6))
    assert sorted(picked["length"]) == [2, 2, 2, 4, 4, 6] or sorted(Counter(picked["length"]).values()) == [1, 2, 3]
    filtered = pool.filter(sampler.filter_function(pool, 6), with_indices=True, batched=True)
    assert filtered["text"] == picked["text"]
    assert sampler.sample(pool, 6)["text"] == picked["text"]
    assert sampler.mask(pool, 6).sum() == 6
    assert isinstance(sampler.report_, HomogenizationReport)
    assert "columns=['length']" in repr(sampler)


def test_sampler_results_survive_a_prior_select(pool):
    sub = pool.select([11, 10, 9, 0, 1, 2, 3])
    idx = HomogenizeSampler("length", seed=0).indices(sub)
    assert sorted(sub.select(idx)["length"]) == [2, 4, 6]


@pytest.mark.parametrize(
    "kwargs, k, error, match",
    [
        ({"columns": "nope"}, None, ValueError, "no column named 'nope'.*available columns"),
        ({"columns": "tags"}, None, TypeError, "scalar"),
        ({"columns": "length"}, 13, ValueError, "k must be <= 12"),
        ({"columns": "length"}, -1, ValueError, "k must be >= 0"),
    ],
)
def test_sampler_bad_input(pool, kwargs, k, error, match):
    with pytest.raises(error, match=match):
        HomogenizeSampler(**kwargs).indices(pool, k)


def test_sampler_bad_parameters_and_empty_dataset(pool):
    with pytest.raises(ValueError, match="mode must be one of"):
        HomogenizeSampler("length", mode="greedy")
    with pytest.raises(TypeError, match="seed must be an int"):
        HomogenizeSampler("length", seed=1.5)
    with pytest.raises(ValueError, match="empty"):
        HomogenizeSampler("length").indices(pool.select([]))


def test_generator_side_bad_parameters():
    draw = categorical({"a": 1.0})
    with pytest.raises(ValueError, match="eps must be >"):
        homogenize_stream(draw, 10, variables="v", eps=0, rng=random.Random(0))
    with pytest.raises(ValueError, match="n must be >= 0"):
        homogenize_stream(draw, -1, variables="v", rng=random.Random(0))


def test_report_round_trips_and_renders(tmp_path):
    _, report = homogenize_stream(categorical({(1, 2): 0.9, (3, 4): 0.1}), 200, variables="v", eps=0.2, rng=random.Random(0))
    again = HomogenizationReport.from_dict(report.to_dict())
    assert again.before == report.before and again.after == report.after
    assert "KL to uniform" in str(report) and "| v |" in report.to_markdown()
    path = report.plot(str(tmp_path / "h.png"))
    assert open(path, "rb").read(4) == b"\x89PNG"
