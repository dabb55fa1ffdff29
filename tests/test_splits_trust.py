"""Issue 24, splits: Keysers' per-example compound weights (checked by hand), and every bad input
a split meets (nulls, wrong column types, sizes whole structures cannot give) refused before any
work with a message naming the argument, the column and the first bad row."""

from __future__ import annotations

import subprocess
import sys

import datasets
import numpy as np
import pytest

from hf_synthsample.splits import length_split, mcd_split, split_report, template_split, tmcd_split
from hf_synthsample.splits._data import read_structures
from hf_synthsample.structure import (
    compound_divergence,
    compound_weights,
    diagnostics,
    example_compound_weights,
    frequencies,
)

# ---------------------------------------------------------------------- per-example weights by hand

# (b c) occurs 5 times in the pool: inside (a (b c)) once (e1), alone (e2), inside (p (b c) (q b))
# and inside (q (b c)) in e3 (two occurrences, different super-compounds), inside (q (b c)) in e4.
# P((a (b c)) | (b c)) = 1/5, P((p (b c) (q b)) | (b c)) = 1/5, P((q (b c)) | (b c)) = 2/5.
POOL = ["(a (b c))", "(b c)", "(p (b c) (q (b c)))", "(q (b c))"]
BY_HAND = [
    {"(b c)": 1 - 1 / 5, "(a (b c))": 1.0},
    {"(b c)": 1.0},
    {"(b c)": max(1 - 1 / 5, 1 - 2 / 5), "(q (b c))": 1.0, "(p (b c) (q b))": 1.0},  # max over its 2 occurrences
    {"(b c)": 1 - 2 / 5, "(q (b c))": 1.0},
]


def _chernoff_divergence(p: dict, q: dict) -> float:
    sp, sq = sum(p.values()), sum(q.values())
    return 1 - sum((p[k] / sp) ** 0.1 * (q[k] / sq) ** 0.9 for k in p.keys() & q.keys())


def test_example_weights_by_hand():
    got = example_compound_weights(POOL, language="sexpr")
    assert [set(w) for w in got] == [set(w) for w in BY_HAND]
    for w, want in zip(got, BY_HAND):
        for k in want:
            assert w[k] == pytest.approx(want[k], abs=1e-12)
    # the pool-wide variant: one weight per compound, its largest per-example weight ((b c) stands alone in e2)
    assert compound_weights(POOL, language="sexpr") == {"(b c)": 1.0, "(a (b c))": 1.0, "(q (b c))": 1.0,
                                                         "(p (b c) (q b))": 1.0}
    # a pool given as distinct programs with counts is the pool with repeats
    rep = example_compound_weights(POOL + ["(q (b c))"], language="sexpr")
    assert example_compound_weights(POOL, language="sexpr", counts=[1, 1, 1, 2]) == rep[:4]
    assert rep[3]["(b c)"] == pytest.approx(1 - 3 / 6)  # 6 occurrences of (b c), 3 inside (q (b c))


def test_example_weighted_divergence_by_hand_in_the_split_report_and_the_search_engine():
    # train e1, e3; test e2, e4 (P(G'|G) over the four rows)
    train = {"(b c)": 0.8 + 0.8, "(a (b c))": 1, "(q (b c))": 1, "(p (b c) (q b))": 1}
    test = {"(b c)": 1 + 0.6, "(q (b c))": 1}
    by_hand = _chernoff_divergence(train, test)
    pool_hand = _chernoff_divergence({**train, "(b c)": 2}, {**test, "(b c)": 2})
    assert by_hand != pytest.approx(pool_hand)
    w = example_compound_weights(POOL, language="sexpr")
    assert compound_divergence([w[0], w[2]], [w[1], w[3]]) == pytest.approx(by_hand, abs=1e-12)
    assert frequencies([w[0], w[2]]) == pytest.approx(train)

    # rows shuffled and repeated as users' data is: the report reads the same masses
    ds = datasets.Dataset.from_dict({"program": POOL, "side": ["train", "test", "train", "test"]})
    ds = datasets.concatenate_datasets([ds, ds]).shuffle(seed=3)
    tr, te = ds.filter(lambda r: r["side"] == "train"), ds.filter(lambda r: r["side"] == "test")
    assert split_report(tr, te, language="sexpr").compound_divergence == pytest.approx(by_hand, abs=1e-12)
    assert split_report(tr, te, language="sexpr", compound_weights="example").compound_divergence == \
        pytest.approx(by_hand, abs=1e-12)
    assert split_report(tr, te, language="sexpr", compound_weights="pool").compound_divergence == \
        pytest.approx(pool_hand, abs=1e-12)

    # the search engine's compound masses per structure are the same weights
    st = read_structures(ds, column="program", language="sexpr", max_height=2, atoms_column=None,
                         compounds_column=None, compound_weights=None)
    ptr, idx, val, _ = st.compounds
    programs = list(ds["program"])
    for g in range(len(st.sizes)):
        row = int(st.members[g][0])
        got = {st.compound_names[c]: v for c, v in zip(idx[ptr[g]:ptr[g + 1]], val[ptr[g]:ptr[g + 1]])}
        assert got == pytest.approx(BY_HAND[POOL.index(programs[row])])


def test_diagnostics_weightings():
    d = diagnostics(POOL[:2], reference=POOL[2:], language="sexpr", compound_weighting="example")
    # P over the programs only (e1, e2): (b c) inside (a (b c)) 1 of 2 times; the reference's
    # super-compounds of (b c) never hold it there (P = 0), so (b c) weighs 1 in e3 and e4
    rows = [{"(b c)": 0.5, "(a (b c))": 1.0}, {"(b c)": 1.0}]
    ref = [{"(b c)": 1.0, "(q (b c))": 1.0, "(p (b c) (q b))": 1.0}, {"(b c)": 1.0, "(q (b c))": 1.0}]
    assert d["compound_divergence"] == pytest.approx(_chernoff_divergence(frequencies(rows), frequencies(ref)))
    with pytest.raises(ValueError, match="compound_weighting: accepted values"):
        diagnostics(POOL, language="sexpr", compound_weighting="keysers")


def test_mcd_split_compound_weights_modes_and_bad_values():
    progs = [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fg" for a in "abc" for b in "xy"]
    ds = datasets.Dataset.from_dict({"program": progs})
    kw = dict(max_steps=200, progress=False, max_atom_divergence=0.2)
    for mode in ("example", "pool", True, False, None, {"(f a)": 0.5}):
        s = mcd_split(ds, language="sexpr", compound_weights=mode, **kw)
        assert len(s["test"]) == 6 and len(s["train"]) == 18
        want = "example" if mode is None else mode
        r = split_report(s["train"], s["test"], language="sexpr", compound_weights=want)
        assert r.compound_divergence == pytest.approx(s.mcd_result.compound_divergence, abs=1e-9)
    with pytest.raises(ValueError, match="compound_weights: unknown weighting 'keysers'"):
        mcd_split(ds, language="sexpr", compound_weights="keysers", **kw)
    with pytest.raises(ValueError, match=r"compound_weights: the weight of '\(f a\)' is -1"):
        mcd_split(ds, language="sexpr", compound_weights={"(f a)": -1}, **kw)
    with pytest.raises(TypeError, match="compound_weights must be"):
        mcd_split(ds, language="sexpr", compound_weights=1.5, **kw)
    cols = ds.map(lambda r: {"a": r["program"].strip("()").split(), "c": [r["program"]]})
    with pytest.raises(ValueError, match="compound_weights='pool' needs program trees"):
        mcd_split(cols, language=None, atoms_column="a", compounds_column="c", compound_weights="pool", **kw)


# ---------------------------------------------------------------------- nulls and wrong types


def _structured(n: int = 48) -> datasets.Dataset:
    progs = [f"({op} {a} {b})" for op in "fgh" for a in "abcd" for b in "abcd"][:n]
    return datasets.Dataset.from_dict({"program": progs, "atoms": [p.strip("()").split() for p in progs],
                                       "compounds": [[p] for p in progs]})


def _refused_by_every_split(ds, arg, error, msg, **mcd_kwargs):
    """``mcd_split``, ``split_report`` and (for ``compounds_column``) ``tmcd_split`` on the 48 rows of ``ds``
    raise ``error`` matching ``msg``."""
    with pytest.raises(error, match=msg):
        mcd_split(ds, language=None, atoms_column="atoms", compounds_column="compounds", progress=False, **mcd_kwargs)
    with pytest.raises(error, match=msg):
        split_report(ds.select(range(30)), ds.select(range(30, 48)), atoms_column="atoms", compounds_column="compounds")
    if arg == "compounds_column":
        with pytest.raises(error, match=msg):
            tmcd_split(ds, language="sexpr", compounds_column="compounds", progress=False)


@pytest.mark.parametrize("where", ["list", "item"])
@pytest.mark.parametrize("arg", ["atoms_column", "compounds_column"])
def test_nulls_in_structure_columns_are_refused_naming_the_column_and_first_row(arg, where):
    ds = _structured().shuffle(seed=1)  # rows count in the dataset's current order
    col = "atoms" if arg == "atoms_column" else "compounds"
    bad = {5, 9}

    def spoil(r, i):
        if i in bad:
            return {col: None if where == "list" else r[col][:1] + [None]}
        return {col: r[col]}

    ds = ds.map(spoil, with_indices=True)
    msg = rf"{arg}: column '{col}': 2 of 48 rows hold a null list or a null item, the first at row 5"
    _refused_by_every_split(ds, arg, ValueError, msg, max_atom_divergence=1.0)


def test_empty_atom_lists_are_refused():
    ds = _structured().map(lambda r, i: {"atoms": [] if i == 7 else r["atoms"]}, with_indices=True)
    with pytest.raises(ValueError, match=r"atoms_column: column 'atoms': 1 of 48 rows hold an empty list, the first "
                                         r"at row 7"):
        mcd_split(ds, language=None, atoms_column="atoms", compounds_column="compounds", progress=False)


@pytest.mark.parametrize("arg", ["atoms_column", "compounds_column"])
def test_a_string_column_where_lists_are_expected_is_a_type_error(arg, monkeypatch):
    col = "atoms" if arg == "atoms_column" else "compounds"
    ds = _structured().map(lambda r: {col: " ".join(r[col])})

    def no_work(*a, **k):  # the check comes before any parsing or encoding
        raise AssertionError("work started before the column check")

    monkeypatch.setattr("hf_synthsample.sampling.structural.StructureColumns.read_encoded", no_work)
    msg = rf"{arg}: column '{col}' holds string values; it must hold lists of str"
    _refused_by_every_split(ds, arg, TypeError, msg)


def test_a_list_program_column_is_a_type_error():
    ds = datasets.Dataset.from_dict({"program": [["f", "a"], ["g", "b"]] * 4})
    for fn in (mcd_split, tmcd_split, template_split):
        with pytest.raises(TypeError, match=r"column: column 'program' holds list<item: string> values; it must hold "
                                            r"programs as str"):
            fn(ds, language="sexpr")


def test_fixed_length_structure_lists_are_read_like_lists():
    ds = _structured()
    fixed = ds.cast_column("atoms", datasets.Sequence(datasets.Value("string"), length=3))
    kw = dict(language=None, atoms_column="atoms", compounds_column="compounds", progress=False, max_steps=100,
              max_atom_divergence=1.0)
    a, b = mcd_split(ds, **kw), mcd_split(fixed, **kw)
    assert list(a["test"]["program"]) == list(b["test"]["program"])


def test_template_column_nulls_and_types_are_refused():
    t = ["a", "b", "c", "d"] * 5
    ds = datasets.Dataset.from_dict({"program": ["(x y)"] * 20, "t": [None if i in (6, 11) else v for i, v in enumerate(t)]})
    with pytest.raises(ValueError, match=r"template_column: column 't': 2 of 20 rows have no template \(null\), the "
                                         r"first at row 6"):
        template_split(ds, template_column="t")
    with pytest.raises(ValueError, match="template_column: column 't'"):
        split_report(ds.select(range(10)), ds.select(range(10, 20)), template_column="t")
    lists = datasets.Dataset.from_dict({"t": [[v] for v in t]})
    with pytest.raises(TypeError, match="template_column: column 't' holds list<item: string> values"):
        template_split(lists, template_column="t")
    # a null *program* is never a template named 'None': it is an unparsable row (an error naming it)
    progs = datasets.Dataset.from_dict({"program": [None if i == 3 else f"(f {i % 4})" for i in range(20)]})
    with pytest.raises(ValueError, match=r"program: 1 of 20 programs do not parse .*rows \[3\]"):
        template_split(progs, language="sexpr")


# ---------------------------------------------------------------------- sides smaller than asked


def test_template_split_never_returns_a_short_test_side_without_an_error():
    ds = datasets.Dataset.from_dict({"t": ["a"] * 30 + ["b"] * 30 + ["c"] * 30 + ["d"] * 10}).shuffle(seed=0)
    with pytest.raises(ValueError, match=r"test_size: whole templates give 10 test rows where 25 are asked .*"
                                         r"size_tolerance 0.05 allows 20 to 25.*largest of 30, 30, 30, 10 rows"):
        template_split(ds, template_column="t", test_size=0.25)
    s = template_split(ds, template_column="t", test_size=0.25, size_tolerance=0.15)
    assert len(s["test"]) == 10 and set(s["test"]["t"]) == {"d"}
    many = datasets.Dataset.from_dict({"t": [f"t{i % 40}" for i in range(200)]}).shuffle(seed=2)
    for seed in range(5):
        s = template_split(many, template_column="t", test_size=0.25, seed=seed)
        assert 40 <= len(s["test"]) <= 50  # within 5 % of the 200 rows, never over
        assert not set(s["test"]["t"]) & set(s["train"]["t"])
    with pytest.raises(ValueError, match="size_tolerance"):
        template_split(many, template_column="t", size_tolerance=0.9)


def test_length_split_never_returns_a_short_test_side_without_an_error():
    ds = datasets.Dataset.from_dict({"n": [1] * 90 + [2] * 10}).shuffle(seed=0)
    with pytest.raises(ValueError, match=r"test_size: rows of one length stay together.*nearest shares are 0.100 "
                                         r"\(test 10 rows\)"):
        length_split(ds, "n", test_size=0.25)
    assert len(length_split(ds, "n", test_size=0.1)["test"]) == 10
    assert len(length_split(ds, "n", test_size=0.25, size_tolerance=0.15)["test"]) == 10
    assert len(length_split(ds, "n", threshold=2)["test"]) == 10
    with pytest.raises(ValueError, match="test_size, threshold: give one of them"):
        length_split(ds, "n", test_size=0.1, threshold=2)
    with pytest.raises(TypeError, match="length: column 'n' holds string values; it must hold numbers"):
        length_split(datasets.Dataset.from_dict({"n": ["1", "2", "3", "4"]}), "n")
    with pytest.raises(ValueError, match=r"length: 1 of 4 rows have no length \(null or NaN\), the first at row 2"):
        length_split(datasets.Dataset.from_dict({"n": [1, 2, None, 4]}), "n", test_size=0.25, size_tolerance=0.5)
    with pytest.raises(TypeError, match=r"length: the function must return numbers; it returned 'a' \(str\) for row 0"):
        length_split(datasets.Dataset.from_dict({"c": ["a", "b c", "d", "e"]}), lambda s: s, column="c")
    with pytest.raises(ValueError, match=r"length_column: column 'n' of test: 1 of 2 rows have no length"):
        split_report(datasets.Dataset.from_dict({"program": ["a", "b"], "n": [1.0, 2.0]}),
                     datasets.Dataset.from_dict({"program": ["a", "b"], "n": [1.0, float("nan")]}), length_column="n")


def test_mcd_split_says_why_a_test_side_cannot_be_filled():
    # one structure holds 40 of 48 rows (values are abstracted): whole structures cannot make 12 test rows
    progs = ["(f 'v)"] * 40 + [f"(g {a})" for a in "abcdefgh"]
    ds = datasets.Dataset.from_dict({"program": progs}).shuffle(seed=0)
    with pytest.raises(ValueError, match=r"test_size: cannot put 12 rows .* only \d+ fit \(rows of one structure move "
                                         r"together: the largest structures hold 40, 1, 1"):
        mcd_split(ds, language="sexpr", max_atom_divergence=1.0, compound_weights=False, progress=False)


def test_loosened_atom_bound_keeps_both_sides_their_size():
    progs = [f"({op} ({f} {a}) {b})" for op in "pqr" for f in "fg" for a in "abcd" for b in "xy"]
    ds = datasets.Dataset.from_dict({"program": progs}).shuffle(seed=4)
    for bound in (0.02, 0.5, 1.0):
        for kw in ({}, {"train_size": 0.5}, {"size_tolerance": 0.1}):
            s = mcd_split(ds, language="sexpr", max_atom_divergence=bound, max_steps=300, progress=False, **kw)
            tol = int(0.1 * len(ds)) if kw.get("size_tolerance") else 0
            assert abs(len(s["test"]) - 12) <= tol and len(s["test"]) >= 1
            if "train_size" in kw:
                assert len(s["train"]) == 24
            else:
                assert len(s["train"]) + len(s["test"]) == 48


# ---------------------------------------------------------------------- structure adapters


def test_structure_imports_no_adapter_module_and_adapters_register_themselves():
    code = ("import sys, hf_synthsample.structure as st; "
            "assert 'hf_synthsample.languages' not in sys.modules and 'hf_synthsample.domains.thingtalk' not in sys.modules; "
            "st.register_language('scan', lambda s: st.Node('mine')); "  # a user's adapter of a built-in name stays
            "print(st.atoms('jump', 'scan'), 'thingtalk' in st.languages(), st.atoms('(a b)', 'sexpr'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['mine'] True ['a', 'b']"


def test_structure_function_refuses_null_and_non_string_programs():
    from hf_synthsample.structure import StructureFunction

    fn = StructureFunction(language="sexpr")
    with pytest.raises(ValueError, match="column: column 'program' holds a null program"):
        datasets.Dataset.from_dict({"program": ["(a b)", None]}).map(fn, batched=True)
    with pytest.raises(TypeError, match="column: column 'program' holds list values; it must hold programs as str"):
        datasets.Dataset.from_dict({"program": [["a", "b"]]}).map(fn, batched=True)


def test_the_side_guard_names_the_argument_and_the_sizes():
    from hf_synthsample.splits._data import check_sides

    check_sides(25, 75, 100, 0.25, None, 0.0)
    check_sides(23, 50, 100, 0.25, 0.5, 0.02)
    with pytest.raises(ValueError, match=r"test_size: the split has 20 test rows where 25 \(\+/- 2\) were asked"):
        check_sides(20, 80, 100, 0.25, None, 0.02)
    with pytest.raises(ValueError, match=r"test_size: the split has 0 test rows"):
        check_sides(0, 100, 100, 0.25, None, 0.5)
    with pytest.raises(ValueError, match=r"train_size: the split has 40 train rows where 50 \(\+/- 0\) were asked"):
        check_sides(25, 40, 100, 0.25, 0.5, 0.0)
    with pytest.raises(ValueError, match=r"test_size: the split has 70 train rows beside 25 test rows of 100"):
        check_sides(25, 70, 100, 0.25, None, 0.0)


def test_split_report_refuses_null_and_list_texts():
    train = datasets.Dataset.from_dict({"program": ["(a x)", None], "text": ["a", "b"]})
    test = datasets.Dataset.from_dict({"program": ["(b x)", None], "text": ["c", "d"]})
    with pytest.raises(ValueError, match=r"column: column 'program' of train: 1 of 2 rows are null, the first at row 1"):
        split_report(train, test)
    lists = datasets.Dataset.from_dict({"program": ["(a x)"], "text": [["a", "b"]]})
    with pytest.raises(TypeError, match="text_column: column 'text' holds list<item: string> values"):
        split_report(lists, lists, text_column="text")
