"""Splits at chosen compound divergences (issue 21): ``mcd_split(target_divergence=...)`` from
either side, ``minimize=True``, the reachable range and its error, ``divergence_sweep`` and its
folder, ``split --sweep``. Divergences are checked against hand-computed values on a pool small
enough to enumerate every split."""

from __future__ import annotations

import itertools
import json

import datasets
import numpy as np
import pytest

from hf_synthsample.cli import main
from hf_synthsample.splits import (
    SplitSweep,
    UnreachableDivergence,
    divergence_range,
    divergence_sweep,
    mcd_split,
    split_report,
)
from hf_synthsample.structure import atoms, compound_divergence

# ---------------------------------------------------------------------- a pool enumerable by hand
# Five rows, one atom each ("x": D_A is 0 for every split), distinct compound sets, one test row
# (test_size 1/5). Unweighted, each distinct compound once per row (Keysers et al., alpha 0.1):
#   test r1 {c1, c2}: train masses c1 2, c2 2, c3 1, c4 1 (of 6): C = 2 (1/3)^0.1 (1/2)^0.9 = 0.96026 -> D_C 0.0397
#   test r0 {c1}:     train c1 2 of 7: C = (2/7)^0.1 = 0.88225                                        -> D_C 0.1177
#   test r2 {c2}:     the same by symmetry                                                            -> D_C 0.1177
#   test r3 {c1, c2, c3}: train c1 2, c2 2, c4 1 (of 5): C = 2 (0.4)^0.1 (1/3)^0.9 = 0.67893          -> D_C 0.3211
#   test r4 {c4}:     c4 unseen in train: C = 0                                                       -> D_C 1
# so the reachable range is [0.0397, 1] and nothing lies in (0.1277, 0.3111) within 0.01.
HAND = {1: 1 - 2 * (1 / 3) ** 0.1 * 0.5 ** 0.9, 0: 1 - (2 / 7) ** 0.1, 2: 1 - (2 / 7) ** 0.1,
        3: 1 - 2 * 0.4 ** 0.1 * (1 / 3) ** 0.9, 4: 1.0}
COMPS = [["c1"], ["c1", "c2"], ["c2"], ["c1", "c2", "c3"], ["c4"]]


def _hand_pool(order=(3, 0, 4, 2, 1)) -> datasets.Dataset:
    """The five rows, shuffled (``id`` is the row of the table above), with a null-free text column."""
    return datasets.Dataset.from_dict({"id": list(order), "text": [f"row {i}" for i in order],
                                       "a": [["x"]] * 5, "c": [COMPS[i] for i in order]})


HAND_KW = dict(language=None, column="text", atoms_column="a", compounds_column="c", test_size=0.2, patience=10,
               progress=False)


def _test_ids(split) -> list[int]:
    return sorted(split["test"]["id"])


def test_hand_values_match_the_library_measure():
    for i, expected in HAND.items():
        train = [COMPS[j] for j in range(5) if j != i]
        assert compound_divergence(train, [COMPS[i]]) == pytest.approx(expected, abs=1e-12)
    assert HAND[1] == pytest.approx(0.0397, abs=1e-4) and HAND[3] == pytest.approx(0.3211, abs=1e-4)


def test_minimize_maximize_and_targets_on_the_hand_pool():
    ds = _hand_pool()
    low = mcd_split(ds, minimize=True, **HAND_KW)
    assert _test_ids(low) == [1] and low.mcd_result.compound_divergence == pytest.approx(HAND[1], abs=1e-12)
    assert low.mcd_result.goal == "min"
    high = mcd_split(ds, **HAND_KW)
    assert _test_ids(high) == [4] and high.mcd_result.compound_divergence == pytest.approx(1.0)
    # every achievable value, and values within the tolerance of one, from whatever random start
    for seed in range(3):
        for target, rows in ((0.04, [[1]]), (0.12, [[0], [2]]), (0.11, [[0], [2]]), (0.32, [[3]]), (1.0, [[4]]),
                             (0.995, [[4]])):
            s = mcd_split(ds, target_divergence=target, seed=seed, **HAND_KW)
            assert _test_ids(s) in rows, (target, seed, _test_ids(s))
            assert abs(s.mcd_result.compound_divergence - target) <= 0.01
            assert s.mcd_result.stop_reason == "target reached"
            r = split_report(s["train"], s["test"], "text", atoms_column="a", compounds_column="c")
            assert r.compound_divergence == pytest.approx(s.mcd_result.compound_divergence, abs=1e-12)
    # a tighter tolerance: 0.11 is 0.0077 from 0.1177
    with pytest.raises(UnreachableDivergence, match=r"0.11 lies in the reachable range .*\[0.0397, 1.0000\]"):
        mcd_split(ds, target_divergence=0.11, divergence_tolerance=0.005, **HAND_KW)


def test_unreachable_targets_name_the_range():
    ds = _hand_pool()
    # below the lowest split (0.0397 - 0.01 > 0.02)
    with pytest.raises(ValueError, match=r"target_divergence: 0.02 is out of the reachable range of compound "
                                         r"divergence \[0.0397, 1.0000\]") as err:
        mcd_split(ds, target_divergence=0.02, **HAND_KW)
    assert (err.value.low, err.value.high) == (pytest.approx(HAND[1]), pytest.approx(1.0))
    # inside the range, in the gap between 0.1177 and 0.3211
    with pytest.raises(ValueError, match=r"target_divergence: 0.2 lies in the reachable range"):
        mcd_split(ds, target_divergence=0.2, **HAND_KW)
    assert divergence_range(ds, **{k: v for k, v in HAND_KW.items() if k != "progress"}) == (
        pytest.approx(HAND[1]), pytest.approx(1.0))


def _scan(n: int = 600) -> datasets.Dataset:
    """``n`` SCAN commands of the exact grammar (a seeded sample, shuffled), with ids."""
    from hf_synthsample.domains.scan import scan_commands

    full = [c for c, _ in scan_commands()]
    rng = np.random.default_rng(0)
    pick = rng.choice(len(full), n, replace=False)
    return datasets.Dataset.from_dict({"id": pick.tolist(), "commands": [full[i] for i in pick]})


def test_target_from_both_sides_on_scan():
    # 600 SCAN commands, Keysers weights (the default for a language): a random split has D_C
    # 0.17, the minimising search 0.03, the maximising one 0.60 (seed 0)
    ds = _scan()
    kw = dict(column="commands", language="scan", test_size=0.25, patience=10, progress=False)
    start = mcd_split(ds, max_steps=0, **kw).mcd_result.compound_divergence  # the random split of seed 0
    low = mcd_split(ds, minimize=True, **kw).mcd_result
    high = mcd_split(ds, **kw).mcd_result
    assert low.compound_divergence < start - 0.1 < start + 0.3 < high.compound_divergence
    assert low.swaps > 0 and low.holdouts == 0  # lowering: swaps only
    for target in (low.compound_divergence + 0.01, 0.1, 0.3, 0.5):  # down, down, up, up from the same start
        s = mcd_split(ds, target_divergence=target, **kw)
        res = s.mcd_result
        assert abs(res.compound_divergence - target) <= 0.01 and res.stop_reason == "target reached"
        assert len(s["test"]) == 150 and len(s["train"]) == 450
        assert res.atom_divergence <= 0.02 and all(da <= 0.02 + 1e-9 for *_, da in res.history)
        tr = {x for p in s["train"]["commands"] for x in atoms(p, "scan")}
        assert {x for p in s["test"]["commands"] for x in atoms(p, "scan")} <= tr
        r = split_report(s["train"], s["test"], "commands", language="scan")
        assert r.compound_divergence == pytest.approx(res.compound_divergence, abs=1e-9)


def test_stop_at_divergence_keeps_the_maximiser_path():
    from hf_synthsample.splits import mcd_search
    from hf_synthsample.splits._data import read_structures

    ds = _scan()
    st = read_structures(ds, column="commands", language="scan", max_height=2, atoms_column=None,
                         compounds_column=None, compound_weights=None)
    kw = dict(test_size=0.25, patience=10, progress=False)
    full = mcd_search(st, **kw)
    part = mcd_search(st, stop_at_divergence=0.3, **kw)
    assert part.stop_reason == "target reached" and 0.3 <= part.compound_divergence < full.compound_divergence
    # the same rounds as the maximiser up to the stop: its history is a prefix of the full one's
    assert [h[2] for h in part.history[:-1]] == [h[2] for h in full.history[:len(part.history) - 1]]
    for bad in (dict(minimize=True), dict(target_divergence=0.2)):
        with pytest.raises(ValueError, match="stop_at_divergence: only for the maximising search"):
            mcd_search(st, stop_at_divergence=0.3, **bad, **kw)


# ---------------------------------------------------------------------- the sweep


def test_sweep_on_the_hand_pool_and_its_folder(tmp_path):
    ds = _hand_pool()
    targets = [0.04, 0.12, 0.32, 1.0]
    kw = {k: v for k, v in HAND_KW.items()}
    sweep = divergence_sweep(ds, targets, **kw)
    assert isinstance(sweep, SplitSweep) and list(sweep.splits) == targets == sweep.targets
    assert [_test_ids(sweep.splits[t]) for t in targets] in ([[1], [0], [3], [4]], [[1], [2], [3], [4]])
    for t in targets:
        i = _test_ids(sweep.splits[t])[0]
        assert sweep.compound_divergence[t] == pytest.approx(HAND[i], abs=1e-12)
        assert sweep.atom_divergence[t] == 0.0
        r = split_report(sweep.splits[t]["train"], sweep.splits[t]["test"], "text", atoms_column="a", compounds_column="c")
        assert r.compound_divergence == pytest.approx(sweep.compound_divergence[t], abs=1e-12)
        assert sweep.reports[t].compound_divergence == pytest.approx(HAND[i], abs=1e-12)
        assert sweep.sizes[t] == {"train": 4, "test": 1, "left_out": 0}
    assert sweep.config_names == {0.04: "dc_0.04", 0.12: "dc_0.12", 0.32: "dc_0.32", 1.0: "dc_1.00"}
    out = sweep.save(str(tmp_path / "sweep"), provenance={"source": "hand pool"})
    for t, name in sweep.config_names.items():
        assert (tmp_path / "sweep" / "plots" / f"{name}.png").stat().st_size > 0
    for t in (0.12, 1.0):
        loaded = datasets.load_dataset(out, sweep.config_names[t])
        assert sorted(loaded["test"]["id"]) == _test_ids(sweep.splits[t]) and len(loaded["train"]) == 4
    card = (tmp_path / "sweep" / "README.md").read_text()
    assert "| `dc_0.04` | 0.04 | 0.0397 | 0.0000 | 4 | 1 | 0 |" in card and "source: hand pool" in card
    from hf_synthsample.hub import read_card_metadata

    meta = read_card_metadata(out)["hf_synthsample"]["split_sweep"]
    assert meta["splits"]["dc_0.32"]["compound_divergence"] == pytest.approx(HAND[3])
    assert meta["settings"]["targets"] == targets
    with pytest.raises(FileExistsError):
        sweep.save(out)


def test_sweep_sizes_bound_determinism_and_report_on_shuffled_subsets():
    progs = [f"({op} ({f} {a}) ({g} {b}))" for op, f, a, g, b in itertools.product("pqr", "fgh", "abcd", "fgh", "abcd")]
    ds = datasets.Dataset.from_dict({"id": list(range(len(progs))), "program": progs})
    ds = ds.shuffle(seed=5).filter(lambda r: r["id"] % 3 != 0).select(range(200))
    targets = np.array([0.36, 0.5, 0.65])  # a NumPy array is fine; 0.65 needs rows left out
    kw = dict(language="sexpr", test_size=0.25, train_size=0.5, max_atom_divergence=0.05, seed=3, patience=10,
              progress=False)
    a = divergence_sweep(ds, targets, **kw)
    b = divergence_sweep(ds, targets, **kw)
    c = divergence_sweep(ds, targets, **{**kw, "seed": 4})
    assert list(a.splits) == targets.tolist()
    for t in a.targets:
        s = a.splits[t]
        assert a.sizes[t] == {"train": 100, "test": 50, "left_out": 50}
        assert abs(a.results[t].compound_divergence - t) <= 0.01
        assert a.atom_divergence[t] <= 0.05
        ids_tr, ids_te = set(s["train"]["id"]), set(s["test"]["id"])
        assert not ids_tr & ids_te and ids_tr | ids_te <= set(ds["id"])
        r = split_report(s["train"], s["test"], language="sexpr")  # the report on the returned rows
        assert a.compound_divergence[t] == pytest.approx(r.compound_divergence, abs=1e-12)
        assert a.atom_divergence[t] == pytest.approx(r.atom_divergence, abs=1e-12)
        # weights recomputed on the kept rows: close to the search's figure, within the tolerance
        assert abs(a.compound_divergence[t] - t) <= 0.01 + 0.005
        assert list(s["test"]["id"]) == list(b.splits[t]["test"]["id"])  # same seed, same splits
        if t == 0.5:  # each split is mcd_split's for its target and seed
            single = mcd_split(ds, target_divergence=t, **kw)
            assert list(single["test"]["id"]) == list(s["test"]["id"])
    assert any(list(a.splits[t]["test"]["id"]) != list(c.splits[t]["test"]["id"]) for t in a.targets)
    # the harder the split, the more test compound mass is unseen in train
    shares = [a.reports[t].unseen_compound_share for t in a.targets]
    assert shares == sorted(shares)


@pytest.mark.parametrize("targets, error, match", [
    ([0.5, 0.2], ValueError, r"targets: must be sorted ascending without duplicates, got \[0.5, 0.2\]"),
    ([0.2, 0.2], ValueError, r"targets: must be sorted ascending without duplicates"),
    ([0.1, 0.1 + 1e-9], ValueError, r"targets: must be sorted ascending without duplicates"),
    ([-0.1, 0.2], ValueError, r"targets: -0.1 is out of \[0, 1\]"),
    ([0.2, 1.5], ValueError, r"targets: 1.5 is out of \[0, 1\]"),
    ([float("nan")], ValueError, r"targets: nan is out of \[0, 1\]"),
    ([], ValueError, r"targets: give at least one"),
    ("0.1,0.2", TypeError, r"targets must be a list"),
    ({0.1, 0.2}, TypeError, r"targets must be a list"),
    (0.3, TypeError, r"targets must be a list"),
    ([0.1, None], TypeError, r"targets must hold numbers"),
    ([True], TypeError, r"targets must hold numbers"),
])
def test_sweep_refuses_bad_targets_before_any_work(monkeypatch, targets, error, match):
    import hf_synthsample.splits._data as data_module

    def no_work(*a, **k):
        raise AssertionError("the structure was read before the targets were checked")

    monkeypatch.setattr(data_module, "read_structures", no_work)
    with pytest.raises(error, match=match):
        divergence_sweep(_hand_pool(), targets, **HAND_KW)


def test_sweep_unreachable_and_limited_targets():
    ds = _hand_pool()
    # the extremes are searched first: 0.02 fails before 0.12 and 0.32 are searched
    with pytest.raises(ValueError, match=r"targets: 0.02 is out of the reachable range of compound divergence "
                                         r"\[0.0397, 1.0000\]"):
        divergence_sweep(ds, [0.02, 0.12, 0.32], **HAND_KW)
    # a time limit that stops a search before the target is an error, not an off-target split
    with pytest.raises(ValueError, match=r"time_limit: the search for target 1.0 stopped \(time limit\)"):
        divergence_sweep(ds, [1.0], time_limit=1e-9, seed=1, **HAND_KW)
    for bad, match in ((dict(test_size=0), "test_size"), (dict(divergence_tolerance=-0.1), "divergence_tolerance"),
                       (dict(seed=-1), "seed"), (dict(column="program"), "column: no column 'program' for the split "
                                                                         "reports"),
                       (dict(text_column="nope"), "text_column: no column 'nope'")):
        with pytest.raises(ValueError, match=match):
            divergence_sweep(ds, [0.5], **{**HAND_KW, **bad})


def test_cli_split_sweep(tmp_path, capsys):
    src = tmp_path / "pool.jsonl"
    ds = _hand_pool()
    src.write_text("".join(json.dumps(r) + "\n" for r in ds))
    out = tmp_path / "out"
    base = ["split", str(src), "--method", "mcd", "--column", "text", "--atoms-column", "a", "--compounds-column", "c",
            "--test-size", "0.2", "--out", str(out)]
    assert main(base + ["--sweep", "0.32,1"]) == 0
    printed = capsys.readouterr().out
    assert "dc_0.32, dc_1.00" in printed
    assert sorted(datasets.load_dataset(str(out), "dc_0.32")["test"]["id"]) == [3]
    card = (out / "README.md").read_text()
    assert "Compound-divergence sweep of `<local>/pool.jsonl`" in card and "| `dc_1.00` | 1 | 1.0000 |" in card
    assert str(tmp_path) not in card  # no local folders in the card
    assert "compound_weights: none" in card  # the weights in effect (user compounds: none), as a split's card says
    for sweep, match in (("0.3,0.1", "--sweep: must be sorted ascending"), ("0.1,x", "--sweep: expected comma-separated"),
                         ("0.1,1.2", "--sweep: 1.2 is out of [0, 1]"),
                         ("0.02,0.5", "--sweep: 0.02 is out of the reachable range of compound divergence [0.0397")):
        assert main(base + ["--sweep", sweep, "--overwrite"]) == 2
        assert match in capsys.readouterr().err
    assert main(base + ["--sweep", "0.1", "--method", "template", "--template-column", "text", "--overwrite"]) == 2
    assert "--sweep: only the mcd method" in capsys.readouterr().err
    assert main(base + ["--sweep", "0.1", "--target-divergence", "0.1", "--overwrite"]) == 2
    assert "--target-divergence: not used with --sweep" in capsys.readouterr().err
