"""Splits at pool scale: the bulk rounds against today's swap search on small pools (the same or a
higher D_C at the same budget, D_A within its bound, the same rows for a seed and whatever
``num_proc``), and the one parse of each distinct program (the same structure and weights as a
row-by-row parse). Timing stays in ``benchmarks/bench_pool_splits.py``."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest
from datasets import Dataset

from hf_synthsample.splits import mcd_split, split_report
from hf_synthsample.splits._bulk import BULK_MIN_GROUPS
from hf_synthsample.structure import example_compound_weights, structure
from hf_synthsample.structure.pool_parse import occurrence_table, parse_pool


def _programs(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)

    def term(d: int) -> str:
        if d == 0 or rng.random() < 0.3:
            return rng.choice("abcdefgh")
        return f"({rng.choice('fghkm')} {' '.join(term(d - 1) for _ in range(rng.choice([1, 2])))})"

    return [f"({rng.choice('pqrs')} {term(3)} {term(2)})" for _ in range(n)]


@pytest.fixture(scope="module")
def pool() -> Dataset:
    return Dataset.from_dict({"program": _programs(5000)})


def _split(ds, **kw):
    kw = {"language": "sexpr", "seed": 0, "patience": 5, "size_tolerance": 0.01, "progress": False,
          "bulk_rounds": True, **kw}
    return mcd_split(ds, **kw)


def test_bulk_rounds_are_on_by_default_from_a_number_of_structures(pool, monkeypatch):
    import hf_synthsample.splits.mcd as mcd

    small = _split(pool, max_steps=0, bulk_rounds=None).mcd_result  # 4,729 structures: the swap search alone by default
    assert small.num_groups < BULK_MIN_GROUPS
    assert small.compound_divergence == _split(pool, max_steps=0, bulk_rounds=False).mcd_result.compound_divergence
    monkeypatch.setattr(mcd, "BULK_MIN_GROUPS", 1_000)
    auto = _split(pool, max_steps=0, bulk_rounds=None).mcd_result
    assert auto.compound_divergence == _split(pool, max_steps=0, bulk_rounds=True).mcd_result.compound_divergence
    assert auto.compound_divergence > small.compound_divergence + 0.1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bulk_rounds_reach_at_least_todays_search_at_the_same_budget(pool, seed):
    new = _split(pool, seed=seed).mcd_result
    old = _split(pool, seed=seed, bulk_rounds=False).mcd_result
    assert new.compound_divergence >= old.compound_divergence - 0.005
    for r in (new, old):
        assert r.atom_divergence <= 0.02 + 1e-9
        assert abs(len(r.test_indices) - 1250) <= 50
    # at a small budget of swaps the bulk rounds are what makes the difference
    new, old = (_split(pool, seed=seed, max_steps=64, bulk_rounds=b).mcd_result for b in (True, False))
    assert new.compound_divergence > old.compound_divergence + 0.02


def test_the_reported_divergence_is_the_splits_own(pool):
    split = _split(pool)
    report = split_report(split["train"], split["test"], language="sexpr")
    assert split.mcd_result.compound_divergence == pytest.approx(report.compound_divergence, abs=1e-9)
    assert split.mcd_result.atom_divergence == pytest.approx(report.atom_divergence, abs=1e-9)


def test_rows_left_out_in_blocks(pool):
    split = _split(pool, train_size=0.5)
    r = split.mcd_result
    assert abs(len(split["train"]) - 2500) <= 50 and abs(len(split["test"]) - 1250) <= 50
    assert r.num_left_out > 0 and r.atom_divergence <= 0.02 + 1e-9
    report = split_report(split["train"], split["test"], language="sexpr")
    assert r.compound_divergence == pytest.approx(report.compound_divergence, abs=1e-9)
    assert r.compound_divergence > _split(pool).mcd_result.compound_divergence  # leaving rows out reaches further


def test_a_target_with_bulk_rounds(pool):
    r = _split(pool, target_divergence=0.3).mcd_result
    assert abs(r.compound_divergence - 0.3) <= 0.01


def test_same_seed_same_rows_whatever_num_proc(pool):
    shuffled = pool.shuffle(seed=3)
    runs = [_split(shuffled, seed=4, num_proc=n, max_steps=200).mcd_result for n in (1, 2, 1)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.test_indices, runs[0].test_indices)
        assert r.compound_divergence == runs[0].compound_divergence


def test_forced_bulk_rounds_on_a_small_pool():
    ds = Dataset.from_dict({"program": _programs(600, seed=5)})
    r = _split(ds, bulk_rounds=True, size_tolerance=0.02).mcd_result
    assert r.atom_divergence <= 0.02 + 1e-9 and r.compound_divergence > 0.2


def test_bulk_rounds_setting_is_checked():
    with pytest.raises(TypeError, match="bulk_rounds"):
        _split(Dataset.from_dict({"program": _programs(50)}), bulk_rounds="yes")
    with pytest.raises(ValueError, match="num_proc"):
        _split(Dataset.from_dict({"program": _programs(50)}), num_proc=0)


@pytest.mark.parametrize("num_proc", [1, 2])
def test_each_distinct_program_parsed_once_gives_the_row_by_row_structure(num_proc):
    progs = _programs(400, seed=1)
    progs = progs + progs[:100] + [None, "(broken", progs[7]]  # repeats, a null, an unparsable program
    random.Random(2).shuffle(progs)
    parsed = parse_pool(pa.array(progs), "sexpr", num_proc=num_proc, progress=False)
    bad = set(parsed.bad_rows().tolist())
    assert bad == {i for i, p in enumerate(progs) if p is None or p == "(broken"}
    for i, p in enumerate(progs):
        if i in bad:
            continue
        u = parsed.index[i]
        t, a, c = structure(p, "sexpr")
        assert parsed.values["template"][u].as_py() == t
        assert parsed.values["atoms"][u].as_py() == a
        assert parsed.values["compounds"][u].as_py() == c
    assert len(parsed.values["template"]) == len(set(progs) - {None})
    errors = dict(parsed.row_errors())
    assert sorted(errors) == sorted(bad)
    assert errors[progs.index(None)] == "TypeError: the program is null"
    assert errors[progs.index("(broken")].startswith("ValueError")


@pytest.mark.parametrize("num_proc", [1, 2])
def test_occurrence_table_weights_are_keysers(num_proc):
    progs = sorted(set(_programs(300, seed=4)))
    counts = np.random.default_rng(0).integers(0, 4, len(progs))  # 0: counted nowhere, still weighed
    table = occurrence_table(progs, "sexpr", 2, num_proc=num_proc, progress=False)
    prog, comp, w = table.weights(counts)
    got: dict = {}
    for p, c, x in zip(prog.tolist(), comp.tolist(), w.tolist()):
        got.setdefault(p, {})[table.names[c]] = x
    inside = [i for i in range(len(progs)) if counts[i] > 0]
    outside = [i for i in range(len(progs)) if counts[i] == 0]
    from hf_synthsample.structure.distributions import _example_weights, _occurrence_supers

    rows, p = _occurrence_supers([progs[i] for i in inside], "sexpr", 2, counts=[int(counts[i]) for i in inside],
                                 also=[progs[i] for i in outside])
    want = {i: _example_weights(r, p) for i, r in zip([*inside, *outside], rows)}
    assert got.keys() == want.keys()
    for i in want:
        assert got[i] == pytest.approx(want[i], abs=1e-12)
    # all counted once: example_compound_weights itself
    prog, comp, w = table.weights(np.ones(len(progs)))
    ref = example_compound_weights(progs, language="sexpr")
    for p_, c, x in zip(prog.tolist(), comp.tolist(), w.tolist()):
        assert x == pytest.approx(ref[p_][table.names[c]], abs=1e-12)


def test_num_proc_is_refused_where_nothing_is_parsed():
    from hf_synthsample.splits.settings import SplitSettings

    with pytest.raises(ValueError, match="num_proc: not used by the random method"):
        SplitSettings(method="random", num_proc=2).require_structure()
