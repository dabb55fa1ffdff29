"""A user's own grammar end to end (issue 43): its structure report, an MCD split and a curve with
a 2-step model, all read through the same ``Language`` object."""

from __future__ import annotations

import itertools

import pytest
from datasets import Dataset

from hf_synthsample.languages import grammar_language
from hf_synthsample.splits import mcd_split, split_report
from hf_synthsample.splits import structure_report

GRAMMAR = r"""
    start: instr ("then" instr)*
    instr: VERB ARG? MOD?
    VERB: "push" | "pop" | "add" | "swap"
    MOD: "twice" | "thrice"
    ARG: /[0-9]+/
    %ignore " "
"""


def _data() -> Dataset:
    rows = []
    for v1, v2, m in itertools.product(("push", "pop", "add", "swap"), ("push", "add", "swap"),
                                       ("", " twice", " thrice")):
        for n in (1, 7):
            a = f"{v1} {n}{m}" if v1 == "push" else f"{v1}{m}"
            rows.append(f"{a} then {v2} {n + 1}" if v2 == "push" else f"{a} then {v2}")
    rows = sorted(set(rows))
    # the model's target: the instructions spelled out (a toy task, for the pipeline)
    return Dataset.from_dict({"program": rows, "target": [r.replace(" then ", " ; ").upper() for r in rows]})


@pytest.fixture(scope="module")
def lang():
    return grammar_language("stack_e2e", GRAMMAR, values={"ARG": "number"})


def test_the_structure_report_of_a_user_grammar(lang):
    ds = _data()
    report = structure_report(ds, column="program", language=lang, seed=0)
    d = report.to_dict()
    assert d["rows"] == len(ds) and d["unparsable"] == 0
    # by hand: 4 first verbs x 3 second verbs x 3 modifiers = 36 shapes; the 18 with a push come with
    # the numbers 1 and 7 (36 rows), the other 18 once (54 rows). Numbers are abstracted, so
    # "push 1 ..." and "push 7 ..." share their template and their group: 36 of each
    assert len(ds) == 54
    assert d["num_templates"] == 36
    assert d["groups"]["count"] == 36 and d["groups"]["max"] == 2
    text = report.to_markdown()
    assert "stack_e2e" in text and "number" in text


def test_an_mcd_split_of_a_user_grammar_reports_the_split_it_made(lang):
    ds = _data()
    split = mcd_split(ds, language=lang, test_size=0.25, train_size=0.5, seed=0, size_tolerance=0.05,
                      progress=False)
    result = split.mcd_result
    report = split_report(split["train"], split["test"], language=lang)
    assert result.compound_divergence == pytest.approx(report.compound_divergence, abs=1e-9)
    assert report.unseen_atoms == []
    kept = grammar_language("stack_e2e", GRAMMAR, values={"ARG": "number"}).configure(group=False)
    single = mcd_split(ds, language=kept, test_size=0.25, seed=0, progress=False)
    assert single.mcd_result.num_groups == len(ds)


def test_a_curve_of_a_user_grammar_with_a_two_step_model(lang):
    from hf_synthsample.curve import compositionality_curve

    ds = _data()
    curve = compositionality_curve(ds, targets=[0.4, 0.55], column="program", language=lang, target_column="target",
                                   train_size=0.5, test_size=0.25, time_limit=30, max_steps=2, check_every=1,
                                   settle_steps=0, d_model=16, heads=2, layers=1, ffn=32, fit_rows=8, test_rows=8,
                                   length_bins=0)
    assert [r["config"] for r in curve.records] == ["dc_0.40", "dc_0.55"]
    for r in curve.records:
        assert abs(r["compound_divergence"] - r["target"]) <= 0.01
    assert curve.settings.sweep.language is lang
