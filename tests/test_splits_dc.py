"""The figure a search stops at is the split's own D_C: the one ``split_report`` of its two sides
computes (and the sweep, the card and the curve show), for partitions and for shares that leave
rows out (issue 43, item 6: a search reported 0.4003 where its split had 0.418)."""

from __future__ import annotations

import random

import pytest
from datasets import Dataset

from hf_synthsample.splits import divergence_sweep, mcd_split, split_report


def _pool() -> Dataset:
    rng = random.Random(0)
    progs = [f"({op} ({f} {a}) ({rng.choice('xyz')} {b}))" for op in "pqrs" for f in "fghk" for a in "abcde"
             for b in "abc"]
    rng.shuffle(progs)
    return Dataset.from_dict({"program": progs, "id": [f"r{i}" for i in range(len(progs))]})


@pytest.mark.parametrize("train_size,test_size", [(None, 0.25), (0.5, 0.25), (0.3, 0.2)])
@pytest.mark.parametrize("weights", [None, "pool", False])
def test_the_search_reports_its_splits_own_divergence(train_size, test_size, weights):
    ds = _pool()
    split = mcd_split(ds, language="sexpr", test_size=test_size, train_size=train_size, target_divergence=0.5,
                      compound_weights=weights, progress=False)
    result = split.mcd_result
    report = split_report(split["train"], split["test"], language="sexpr", compound_weights=weights)
    assert result.compound_divergence == pytest.approx(report.compound_divergence, abs=1e-9)
    assert result.atom_divergence == pytest.approx(report.atom_divergence, abs=1e-9)
    assert abs(report.compound_divergence - 0.5) <= 0.01  # the guide's promise, on the split itself
    if train_size is not None:
        assert result.num_left_out > 0


def test_leaving_rows_out_changes_the_weights_the_split_is_measured_with():
    # the case that showed the gap: the pool's weights differ from those over the rows kept
    ds = _pool()
    split = mcd_split(ds, language="sexpr", test_size=0.25, train_size=0.5, target_divergence=0.5, progress=False)
    kept = split_report(split["train"], split["test"], language="sexpr").compound_divergence
    assert split.mcd_result.compound_divergence == pytest.approx(kept, abs=1e-9)


def test_a_sweep_that_leaves_rows_out_reports_what_its_searches_reached():
    ds = _pool()
    sweep = divergence_sweep(ds, [0.45, 0.55], language="sexpr", test_size=0.25, train_size=0.5, progress=False)
    for t, split in sweep.splits.items():
        report = split_report(split["train"], split["test"], language="sexpr")
        assert sweep.compound_divergence[t] == pytest.approx(report.compound_divergence, abs=1e-9)
        assert sweep.results[t].compound_divergence == pytest.approx(report.compound_divergence, abs=1e-9)
        assert abs(sweep.compound_divergence[t] - t) <= 0.01
