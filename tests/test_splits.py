"""Compositional splits (issue 13): MCD / TMCD, template, length and random splits, the split
report and the ``split`` command. Divergences are checked against hand-computed values."""

from __future__ import annotations

import itertools
import logging
import math
import random

import datasets
import numpy as np
import pytest

from conftest import shared_data
from hf_synthsample.splits import (
    length_split,
    mcd_split,
    random_split,
    save_split,
    split_report,
    template_split,
    tmcd_split,
)
from hf_synthsample.structure import atom_divergence, atoms, compound_divergence, compound_weights, compounds


def _pool(n: int | None = None, seed: int = 0) -> list[str]:
    """Programs ``(op (f l) (g m))`` of a tiny grammar: 3 x 3 x 4 x 3 x 4 = 432 distinct ones."""
    progs = [f"({op} ({f} {a}) ({g} {b}))" for op, f, a, g, b in
             itertools.product("pqr", "fgh", "abcd", "fgh", "abcd")]
    random.Random(seed).shuffle(progs)
    return progs[:n] if n else progs


def _ds(progs: list[str]) -> datasets.Dataset:
    return datasets.Dataset.from_dict({"id": list(range(len(progs))), "program": progs})


def _sides(split) -> tuple[list, list]:
    return list(split["train"]["program"]), list(split["test"]["program"])


# ---------------------------------------------------------------------- divergences by hand

TRAIN = ["(g (f x))", "(g (f y))"]
TEST = ["(h (f x))"]


def test_divergences_by_hand_unweighted_and_weighted():
    # compounds (height <= 2, each with a terminal): (f x), (g (f x)) | (f y), (g (f y)) || (f x), (h (f x))
    # unweighted: p(f x) = 1/4, q(f x) = 1/2, the only shared compound
    unweighted = 1 - (1 / 4) ** 0.1 * (1 / 2) ** 0.9
    # Keysers weights over the pool: (f x) sits in (g (f x)) and (h (f x)), each 1 of its 2
    # occurrences -> w = 1 - 1/2 = 0.5; (f y) always in (g (f y)) -> w = 0; the others 1.
    w = compound_weights(TRAIN + TEST, language="sexpr")
    assert w == {"(f x)": 0.5, "(g (f x))": 1.0, "(f y)": 0.0, "(g (f y))": 1.0, "(h (f x))": 1.0}
    # weighted masses: train (f x) .5 + (g (f x)) 1 + (g (f y)) 1 = 2.5; test (f x) .5 + (h (f x)) 1 = 1.5
    weighted = 1 - (0.5 / 2.5) ** 0.1 * (0.5 / 1.5) ** 0.9
    # atoms: train g 2, f 2, x 1, y 1 (of 6); test h, f, x (of 3)
    atoms_by_hand = 1 - (math.sqrt(2 / 6 * 1 / 3) + math.sqrt(1 / 6 * 1 / 3))
    assert unweighted == pytest.approx(0.533484, abs=1e-6)
    assert weighted == pytest.approx(0.683267, abs=1e-6)

    tr, te = _ds(TRAIN), _ds(TEST)
    r0 = split_report(tr, te, language="sexpr", compound_weights=False)
    r1 = split_report(tr, te, language="sexpr", compound_weights=True)
    assert r0.compound_divergence == pytest.approx(unweighted, abs=1e-12)
    assert r1.compound_divergence == pytest.approx(weighted, abs=1e-12)
    assert r0.atom_divergence == pytest.approx(atoms_by_hand, abs=1e-12)
    assert r0.unseen_atoms == ["h"]
    # the structure module's definitions agree
    ca = [compounds(p, "sexpr") for p in TRAIN]
    cb = [compounds(p, "sexpr") for p in TEST]
    assert compound_divergence(ca, cb) == pytest.approx(unweighted, abs=1e-12)
    assert compound_divergence(ca, cb, w) == pytest.approx(weighted, abs=1e-12)
    assert atom_divergence([atoms(p, "sexpr") for p in TRAIN], [atoms(p, "sexpr") for p in TEST]) == \
        pytest.approx(atoms_by_hand, abs=1e-12)


def test_compound_weights_with_counts_equal_repeated_programs():
    progs = ["(g (f x))", "(h (f x))", "(g (f y))"]
    counts = [3, 1, 2]
    repeated = [p for p, c in zip(progs, counts) for _ in range(c)]
    assert compound_weights(progs, "sexpr", counts=counts) == compound_weights(repeated, "sexpr")
    with pytest.raises(ValueError, match="counts"):
        compound_weights(progs, "sexpr", counts=[1, 2])


# ---------------------------------------------------------------------- the MCD search


def _first_improvement(train: list[str], test: list[str], max_da: float, max_passes: int = 6) -> float:
    """Keysers et al. (2020) swap procedure, plainly: for each train row, the first test row whose
    swap raises the compound divergence while every test atom stays in train and the atom
    divergence stays within the bound; repeat until a pass finds no swap."""
    A = {p: atoms(p, "sexpr") for p in train + test}
    C = {p: compounds(p, "sexpr") for p in train + test}

    def dc(tr, te):
        return compound_divergence([C[p] for p in tr], [C[p] for p in te])

    def ok(tr, te):
        seen = {a for p in tr for a in A[p]}
        return all(a in seen for p in te for a in A[p]) and \
            atom_divergence([A[p] for p in tr], [A[p] for p in te]) <= max_da

    tr, te = list(train), list(test)
    best = dc(tr, te)
    for _ in range(max_passes):
        improved = False
        for i in range(len(tr)):
            for j in range(len(te)):
                tr2, te2 = tr.copy(), te.copy()
                tr2[i], te2[j] = te[j], tr[i]
                d = dc(tr2, te2)
                if d > best + 1e-12 and ok(tr2, te2):
                    tr, te, best = tr2, te2, d
                    improved = True
                    break
        if not improved:
            break
    return best


def test_search_beats_plain_first_improvement_and_keeps_the_atom_constraint():
    progs = _pool(48, seed=3)
    ds = _ds(progs)
    max_da = 0.05
    split = mcd_split(ds, language="sexpr", test_size=0.25, max_atom_divergence=max_da, compound_weights=False,
                      seed=0, progress=False)
    res = split.mcd_result
    tr, te = _sides(split)
    # the baseline from a seeded random start (valid: every test atom is in train)
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(progs))
    base_te = [progs[i] for i in perm[:12]]
    base_tr = [progs[i] for i in perm[12:]]
    seen = {a for p in base_tr for a in atoms(p, "sexpr")}
    assert all(a in seen for p in base_te for a in atoms(p, "sexpr"))  # a valid start
    baseline = _first_improvement(base_tr, base_te, max_da)
    ours = compound_divergence([compounds(p, "sexpr") for p in tr], [compounds(p, "sexpr") for p in te])
    assert ours == pytest.approx(res.compound_divergence, abs=1e-9)
    assert ours >= baseline - 1e-9, (ours, baseline)
    # atom constraint: at the end and after every round of the search
    assert {a for p in te for a in atoms(p, "sexpr")} <= {a for p in tr for a in atoms(p, "sexpr")}
    assert atom_divergence([atoms(p, "sexpr") for p in tr], [atoms(p, "sexpr") for p in te]) <= max_da + 1e-12
    assert all(da <= max_da + 1e-9 for *_, da in res.history)
    assert res.compound_divergence > res.initial_compound_divergence


def test_partition_of_shuffled_filtered_input_and_seeds():
    base = _ds(_pool())
    ds = base.shuffle(seed=7).filter(lambda r: r["id"] % 5 != 0)  # an indices mapping over a shuffled table
    a = mcd_split(ds, language="sexpr", test_size=0.3, seed=1, compound_weights=False, max_steps=2000, progress=False)
    ids = sorted(list(a["train"]["id"]) + list(a["test"]["id"]))
    assert ids == sorted(ds["id"])  # no loss, no duplicate
    assert len(a["test"]) == round(0.3 * len(ds))
    # rows keep the input order on each side
    pos = {i: k for k, i in enumerate(list(ds["id"]))}
    assert [pos[i] for i in list(a["test"]["id"])] == sorted(pos[i] for i in list(a["test"]["id"]))
    b = mcd_split(ds, language="sexpr", test_size=0.3, seed=1, compound_weights=False, max_steps=2000, progress=False)
    c = mcd_split(ds, language="sexpr", test_size=0.3, seed=2, compound_weights=False, max_steps=2000, progress=False)
    assert list(a["test"]["id"]) == list(b["test"]["id"])
    assert list(a["test"]["id"]) != list(c["test"]["id"])
    for s in (a, c):
        tr_atoms = {x for p in list(s["train"]["program"]) for x in atoms(p, "sexpr")}
        assert {x for p in list(s["test"]["program"]) for x in atoms(p, "sexpr")} <= tr_atoms


def test_rows_sharing_a_structure_move_together():
    # values are abstracted: (f 'v1) and (f 'v2) are one structure
    progs = [f"({op} ({f} '{v}))" for op in "pqrs" for f in "fgh" for v in range(5)]
    ds = _ds(progs)
    s = mcd_split(ds, language="sexpr", test_size=0.25, compound_weights=False, size_tolerance=0.05, seed=0,
                  max_atom_divergence=0.2, progress=False)
    shape = lambda p: p.split("'")[0]  # noqa: E731
    assert not {shape(p) for p in list(s["test"]["program"])} & {shape(p) for p in list(s["train"]["program"])}
    assert abs(len(s["test"]) - 0.25 * len(ds)) <= 0.05 * len(ds)
    assert s.mcd_result.num_groups == 12


def test_user_columns_and_tmcd():
    progs = _pool(120, seed=1)
    ds = _ds(progs).map(lambda r: {"my_atoms": atoms(r["program"], "sexpr"),
                                   "my_compounds": compounds(r["program"], "sexpr")})
    s1 = mcd_split(ds, language=None, atoms_column="my_atoms", compounds_column="my_compounds",
                   seed=0, max_steps=500, progress=False)  # user compounds: unweighted by default
    s2 = mcd_split(ds, language="sexpr", compound_weights=False, seed=0, max_steps=500, progress=False)
    assert list(s1["test"]["id"]) == list(s2["test"]["id"])  # the same structure, from columns or parsed
    t = tmcd_split(ds, language="sexpr", seed=0, max_atom_divergence=0.05, max_steps=500, progress=False)
    assert len(t["train"]) + len(t["test"]) == len(ds)
    r = split_report(t["train"], t["test"], language="sexpr", compound_weights=False)
    assert r.unseen_atoms == []
    # a user compound function: root-child pairs only
    t2 = tmcd_split(ds, language="sexpr", compounds_fn=lambda tree: [f"{tree.label}>{c.label}" for c in tree.children],
                    seed=0, max_atom_divergence=0.05, max_steps=300, progress=False)
    assert t2.mcd_result.compound_divergence >= 0


def test_stop_reasons_in_result_and_log(caplog):
    ds = _ds(_pool(100))
    kw = dict(language="sexpr", compound_weights=False, seed=0, progress=False)
    with caplog.at_level(logging.INFO, logger="hf_synthsample.splits.mcd"):
        # within the reachable range of this pool (0.33-0.42 with seed 0): the search stops near it
        assert mcd_split(ds, target_divergence=0.4, **kw).mcd_result.stop_reason == "target reached"
        assert mcd_split(ds, max_steps=10, **kw).mcd_result.stop_reason == "max steps"
        assert mcd_split(ds, time_limit=1e-9, **kw).mcd_result.stop_reason == "time limit"
        assert mcd_split(ds, **kw).mcd_result.stop_reason == "no improving move"
    text = caplog.text
    for reason in ("target reached", "max steps", "time limit", "no improving move"):
        assert f"stopped: {reason}" in text


def test_bad_input_fails_before_the_search():
    ds = _ds(_pool(40))
    with pytest.raises(ValueError, match="language: unknown language 'klingon'"):
        mcd_split(ds, language="klingon")
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="test_size"):
            mcd_split(ds, language="sexpr", test_size=bad)
    with pytest.raises(TypeError, match="test_size"):
        mcd_split(ds, language="sexpr", test_size="half")
    broken = _ds(_pool(10) + ["(a (b", "(c))", "(d e)"])
    with pytest.raises(ValueError, match=r"2 of 13 programs do not parse.*row 10"):
        mcd_split(broken, language="sexpr")
    with pytest.raises(ValueError, match="column: .*'nope'"):
        mcd_split(ds, column="nope", language="sexpr")
    # an unmeetable atom bound names the atoms furthest apart
    with pytest.raises(ValueError, match=r"max_atom_divergence: 1e-07 cannot be met.*atoms furthest apart: '"):
        mcd_split(ds, language="sexpr", max_atom_divergence=1e-7, progress=False)
    # a test size that whole structures cannot give while every test atom stays in train
    lopsided = _ds(["(a x)"] * 30 + ["(b y)", "(b y)", "(c z)", "(c z)"])
    with pytest.raises(ValueError, match=r"test_size: cannot put 8 rows"):
        mcd_split(lopsided, language="sexpr", progress=False)
    with pytest.raises(TypeError, match="dataset must be a datasets.Dataset"):
        mcd_split({"program": ["(a b)"]}, language="sexpr")


def test_train_size_leaves_rows_out_by_hand():
    # one atom everywhere; compounds c1..c3 each sit in several of the first four rows and c4 in
    # the last two, so with one test row every partition shares a compound with train (D_C < 1);
    # with one train row and the other four left out, e.g. test {c4} and train {c1, c2}: D_C = 1
    comps = [["c1", "c2"], ["c2", "c3"], ["c3", "c1"], ["c1", "c2", "c3"], ["c4"], ["c4", "c5"]]
    ds = datasets.Dataset.from_dict({"id": list(range(6)), "a": [["x"]] * 6, "c": comps})
    kw = dict(language=None, atoms_column="a", compounds_column="c", test_size=1 / 6, seed=0, progress=False)
    part = mcd_split(ds, **kw)
    assert len(part["train"]) == 5 and part.mcd_result.num_left_out == 0
    assert part.mcd_result.compound_divergence < 1 - 1e-9
    sub = mcd_split(ds, train_size=1 / 6, **kw)
    res = sub.mcd_result
    assert len(sub["train"]) == 1 and len(sub["test"]) == 1 and res.num_left_out == 4 and "left out=4" in repr(res)
    assert not set(sub["train"]["id"]) & set(sub["test"]["id"])
    assert res.compound_divergence == pytest.approx(1.0)
    train_c = {c for row in sub["train"]["c"] for c in row}
    assert not train_c & {c for row in sub["test"]["c"] for c in row}


def test_train_size_subset_of_shuffled_filtered_input():
    base = _ds(_pool())
    ds = base.shuffle(seed=3).filter(lambda r: r["id"] % 7 != 0)
    kw = dict(language="sexpr", test_size=0.25, seed=2, compound_weights=False, max_steps=1500, progress=False)
    part = mcd_split(ds, **kw)
    a = mcd_split(ds, train_size=0.5, **kw)
    tr, te = list(a["train"]["id"]), list(a["test"]["id"])
    assert len(te) == round(0.25 * len(ds)) and len(tr) == round(0.5 * len(ds))
    assert not set(tr) & set(te) and set(tr) | set(te) <= set(ds["id"])
    assert a.mcd_result.num_left_out == len(ds) - len(tr) - len(te)
    pos = {i: k for k, i in enumerate(list(ds["id"]))}
    assert [pos[i] for i in tr] == sorted(pos[i] for i in tr)  # input order kept
    tr_atoms = {x for p in list(a["train"]["program"]) for x in atoms(p, "sexpr")}
    assert {x for p in list(a["test"]["program"]) for x in atoms(p, "sexpr")} <= tr_atoms
    rep = split_report(a["train"], a["test"], language="sexpr", compound_weights=False)
    assert rep.compound_divergence == pytest.approx(a.mcd_result.compound_divergence, abs=1e-9)
    assert rep.atom_divergence <= 0.02 + 1e-12
    # leaving out the rows that tie train to test is worth it
    assert a.mcd_result.compound_divergence > part.mcd_result.compound_divergence
    b = mcd_split(ds, train_size=0.5, **kw)
    c = mcd_split(ds, train_size=0.5, **{**kw, "seed": 3})
    assert list(b["train"]["id"]) == tr and list(b["test"]["id"]) == te
    assert list(c["test"]["id"]) != te
    for bad in (0, 1, 0.8, -0.5):
        with pytest.raises(ValueError, match="train_size"):
            mcd_split(ds, train_size=bad, **kw)
    with pytest.raises(TypeError, match="train_size"):
        mcd_split(ds, train_size="half", **kw)


def test_skip_unparsable_keeps_the_rows_in_train():
    progs = _pool(40) + ["(broken"]
    s = mcd_split(_ds(progs), language="sexpr", skip_unparsable=True, compound_weights=False, max_steps=200,
                  progress=False)
    assert "(broken" in list(s["train"]["program"]) and len(s["train"]) + len(s["test"]) == 41


# ---------------------------------------------------------------------- template, length, random


def test_template_length_random_splits():
    progs = [f"({op} {v})" for op in "abcdefgh" for v in ("x", "y", "'1", "'2")] + ["(a (b c))"]
    ds = _ds(progs).shuffle(seed=0)
    t = template_split(ds, language="sexpr", test_size=0.25, seed=0)
    from hf_synthsample.structure import abstract_template

    tt = {abstract_template(p, "sexpr") for p in list(t["test"]["program"])}
    assert tt and not tt & {abstract_template(p, "sexpr") for p in list(t["train"]["program"])}
    assert len(t["test"]) <= round(0.25 * len(ds))
    assert sorted(list(t["train"]["id"]) + list(t["test"]["id"])) == list(range(len(ds)))
    assert template_split(ds, language="sexpr", seed=0)["test"]["id"] == list(t["test"]["id"])

    words = datasets.Dataset.from_dict({"command": ["a", "a b", "a b", "a b c", "a b c d", "a b c d", "x y"]})
    ls = length_split(words, lambda s: len(s.split()), column="command", test_size=0.3)
    assert list(ls["test"]["command"]) == ["a b c d", "a b c d"]  # lengths >= 4: 2/7 is the share closest to 0.3
    ln = length_split(words.map(lambda r: {"n": len(r["command"])}), "n", threshold=5)
    assert min(list(ln["test"]["n"])) >= 5 > max(list(ln["train"]["n"]))
    with pytest.raises(ValueError, match="length: no column 'nope'"):
        length_split(words, "nope")
    with pytest.raises(ValueError, match="threshold"):
        length_split(words.map(lambda r: {"n": 1}), "n", threshold=1)

    r = random_split(ds, test_size=0.25, seed=3)
    assert len(r["test"]) == round(0.25 * len(ds))
    assert sorted(list(r["train"]["id"]) + list(r["test"]["id"])) == list(range(len(ds)))
    assert random_split(ds, test_size=0.25, seed=3)["test"]["id"] == list(r["test"]["id"])
    assert random_split(ds, test_size=0.25, seed=4)["test"]["id"] != list(r["test"]["id"])


# ---------------------------------------------------------------------- report and folder


def test_report_leakage_templates_lengths_and_plot(tmp_path):
    train = datasets.Dataset.from_dict({"program": ["(a x)", "(a y)", "(b (c x))"],
                                        "text": ["Show 4 hotels!", "a b", "c"]})
    test = datasets.Dataset.from_dict({"program": ["(a x)", "(d 'v)", "(b (c y))"],
                                       "text": ["show 5 hotels", "a b", "new words here"]})
    r = split_report(train, test, language="sexpr", text_column="text", compound_weights=False)
    assert (r.exact_duplicates, r.near_duplicates) == (1, 2)  # "a b"; and "show 0 hotels"
    assert r.unseen_atoms == ["d", "entity"]
    assert (r.test_templates, r.test_templates_in_train, r.test_rows_with_train_template) == (3, 1, 1)  # (a x)
    assert r.lengths["test"]["max"] == 3 and r.lengths["train"]["mean"] == pytest.approx((3 + 2 + 1) / 3)
    md = r.to_markdown()
    assert "| compound divergence (1 - C_0.1) |" in md and "near duplicates" in md
    png = r.plot(str(tmp_path / "r.png"))
    assert open(png, "rb").read(4) == b"\x89PNG"
    # without a language: sizes, leakage and lengths only
    plain = split_report(train, test, text_column="text")
    assert plain.compound_divergence is None and plain.near_duplicates == 2
    out = save_split(datasets.DatasetDict({"train": train, "test": test}), str(tmp_path / "folder"), r,
                     provenance={"method": "hand"})
    card = open(f"{out}/README.md").read()
    assert "## Split report" in card and "method: hand" in card
    loaded = datasets.load_dataset(out, "default")
    assert len(loaded["train"]) == 3 and len(loaded["test"]) == 3


# ---------------------------------------------------------------------- real data


def _tsv_column(path, col: int, n: int | None = None) -> list[str]:
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t")[col] for line in f if line.strip()]
    return rows[:n] if n else rows


@pytest.mark.slow
def test_cogs_train_mcd_split():
    progs = _tsv_column(shared_data("cogs", "train.tsv"), 1, 4000)
    ds = _ds(progs)
    s = mcd_split(ds, language="cogs", seed=0, max_steps=3000, progress=False)
    res = s.mcd_result
    assert sorted(list(s["train"]["id"]) + list(s["test"]["id"])) == list(range(len(ds)))
    r = split_report(s["train"], s["test"], language="cogs")
    assert r.unseen_atoms == [] and r.atom_divergence <= 0.02 + 1e-9
    assert r.compound_divergence == pytest.approx(res.compound_divergence, abs=1e-9)
    rnd = random_split(ds, seed=0)
    assert res.compound_divergence > split_report(rnd["train"], rnd["test"], language="cogs").compound_divergence + 0.05


def test_schema2qa_annotated_mcd_split():
    folder = shared_data("schema2qa")
    progs = [p for name in sorted(folder.glob("*.tsv")) for p in _tsv_column(name, 2)]
    ds = _ds(progs)
    s = mcd_split(ds, language="thingtalk", seed=0, max_steps=1500, size_tolerance=0.01, progress=False)
    res = s.mcd_result
    assert sorted(list(s["train"]["id"]) + list(s["test"]["id"])) == list(range(len(ds)))
    assert abs(len(s["test"]) - 0.25 * len(ds)) <= 0.01 * len(ds) + 1
    assert res.atom_divergence <= 0.02 + 1e-9 and res.compound_divergence > res.initial_compound_divergence
    r = split_report(s["train"], s["test"], language="thingtalk")
    assert r.unseen_atoms == []


@pytest.mark.slow
def test_scan_from_the_builder_mcd_split():
    from hf_synthsample.domains.scan import scan_commands

    ds = datasets.Dataset.from_dict({"commands": [c for c, _ in scan_commands()]})
    s = mcd_split(ds, "commands", "scan", seed=0, max_steps=5000, compound_weights=False, progress=False)
    assert len(s["train"]) + len(s["test"]) == 20_910 and len(s["test"]) == 5228
    assert s.mcd_result.compound_divergence > 0.35 and s.mcd_result.atom_divergence <= 0.02


# ---------------------------------------------------------------------- CLI


@pytest.mark.slow
def test_cli_split_writes_a_folder_with_the_report(tmp_path, capsys):
    from hf_synthsample.cli import main

    src = tmp_path / "pool.parquet"
    _ds(_pool(80)).to_parquet(str(src))
    for method in ("mcd", "tmcd", "template", "length", "random"):
        out = tmp_path / method
        argv = ["split", str(src), "--method", method, "--language", "sexpr", "--out", str(out),
                "--test-size", "0.25", "--seed", "1"]
        if method in ("mcd", "tmcd"):
            argv += ["--max-steps", "300", "--max-atom-divergence", "0.05"]
        if method == "length":
            argv += ["--length-column", "id"]
        assert main(argv) == 0, capsys.readouterr().err
        card = (out / "README.md").read_text()
        assert "## Split report" in card and f"method: {method}" in card and (out / "split_report.png").exists()
        loaded = datasets.load_dataset(str(out), method)
        assert len(loaded["train"]) + len(loaded["test"]) == 80
    cols = tmp_path / "cols.parquet"
    _ds(_pool(60)).map(lambda r: {"a": atoms(r["program"], "sexpr"), "c": compounds(r["program"], "sexpr")}) \
        .to_parquet(str(cols))
    assert main(["split", str(cols), "--method", "mcd", "--atoms-column", "a", "--compounds-column", "c",
                 "--out", str(tmp_path / "cols"), "--max-steps", "100", "--max-atom-divergence", "0.1"]) == 0
    assert "compound divergence" in (tmp_path / "cols" / "README.md").read_text()
    assert main(["split", str(src), "--method", "mcd", "--language", "sexpr", "--out", str(tmp_path / "x"),
                 "--test-size", "1.5"]) == 2
    assert "--test-size" in capsys.readouterr().err
    assert main(["split", str(src), "--method", "mcd", "--out", str(tmp_path / "y")]) == 2
    assert "--language" in capsys.readouterr().err
    # --train-size leaves rows out (MCD / TMCD only)
    assert main(["split", str(src), "--method", "mcd", "--language", "sexpr", "--out", str(tmp_path / "sub"),
                 "--train-size", "0.5", "--max-steps", "200", "--max-atom-divergence", "0.05", "--restarts", "1"]) == 0
    sub = datasets.load_dataset(str(tmp_path / "sub"), "mcd")
    assert (len(sub["train"]), len(sub["test"])) == (40, 20)
    assert "left_out_rows: 20" in (tmp_path / "sub" / "README.md").read_text()
    assert main(["split", str(src), "--method", "random", "--out", str(tmp_path / "z"), "--train-size", "0.5"]) == 2
    assert "--train-size" in capsys.readouterr().err
    assert main(["split", str(src), "--method", "mcd", "--language", "sexpr", "--out", str(tmp_path / "w"),
                 "--train-size", "0.9"]) == 2
    assert "--train-size" in capsys.readouterr().err


def test_restarts_keep_the_best_and_stay_deterministic():
    ds = _ds(_pool(120, seed=5))
    kw = dict(language="sexpr", compound_weights=False, seed=4, patience=5, progress=False)
    one = mcd_split(ds, **kw).mcd_result
    three = mcd_split(ds, restarts=2, **kw)
    again = mcd_split(ds, restarts=2, **kw)
    assert three.mcd_result.compound_divergence >= one.compound_divergence
    assert list(three["test"]["id"]) == list(again["test"]["id"])
    assert three.mcd_result.steps > one.steps and three.mcd_result.starts == 3 and one.starts == 1


def test_cli_split_compound_weights_option(tmp_path, capsys):
    """--compound-weights picks the weighting (recorded in the card), and contradicting options
    are refused before any work."""
    from hf_synthsample.cli import main

    src = tmp_path / "pool.parquet"
    _ds(_pool(60)).shuffle(seed=3).to_parquet(str(src))
    base = ["split", str(src), "--method", "mcd", "--language", "sexpr", "--max-steps", "100",
            "--max-atom-divergence", "0.1", "--seed", "0"]
    for mode, recorded in (("example", "compound_weights: example"), ("pool", "compound_weights: pool"),
                           ("none", "compound_weights: none")):
        out = tmp_path / mode
        assert main(base + ["--compound-weights", mode, "--out", str(out)]) == 0, capsys.readouterr().err
        assert recorded in (out / "README.md").read_text()
    assert main(base + ["--out", str(tmp_path / "default")]) == 0
    assert "compound_weights: example" in (tmp_path / "default" / "README.md").read_text()
    capsys.readouterr()
    assert main(base + ["--compound-weights", "pool", "--no-compound-weights", "--out", str(tmp_path / "x")]) == 2
    assert "--no-compound-weights contradicts --compound-weights pool" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert main(["split", str(src), "--method", "random", "--compound-weights", "pool", "--out", str(tmp_path / "y")]) == 2
    err = capsys.readouterr().err  # refused, naming the option and the methods it applies to
    assert "--compound-weights" in err and "--method" in err and "mcd, tmcd" in err
