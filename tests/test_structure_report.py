"""Issue 43: the structure of a dataset (``structure_report``, ``hf-synthsample structure``) and the
statement that an MCD split is also template-disjoint (result, report, card, plot, curve)."""

from __future__ import annotations

import json
import logging

import pytest
from datasets import Dataset

from hf_synthsample.cli import main
from hf_synthsample.splits import mcd_split, split_report, structure_report
from hf_synthsample.splits.disjoint import (TEMPLATE_DISJOINT_RATIO, TemplateOverlap, random_split_baseline,
                                            template_statement)
from hf_synthsample.structure import get_language

SMALL = ["(f 1)", "(f 2)", "(g 1)", "(g (h 3))", "(g (h 'x))", "(f 'y)"]


def _numbers() -> Dataset:
    """48 templates, each 3 rows differing only in numbers: with values abstracted a structure is a template."""
    return Dataset.from_dict({"program": [f"({op} ({f} {n}) ({g} {n + 1}))" for op in "pqr" for f in "abcd"
                                          for g in "wxyz" for n in range(3)]})


def test_counts_by_hand():
    r = structure_report(Dataset.from_dict({"program": SMALL}), language="sexpr", test_size=0.5, top=3)
    # atoms: f g h entity; rows 0,1,5 -> (f entity); 2 -> (g entity); 3,4 -> (g (h entity))
    assert r.num_atoms == 4 and r.rows == 6 and r.unparsable == 0
    assert r.top_atoms[0] == {"value": "entity", "count": 6, "row_share": 1.0}
    # compounds (height 2): (f entity) x3, (g entity) x1, (h entity) x2, (g (h entity)) x2
    assert r.num_compounds == 4
    assert [(c["value"], c["count"]) for c in r.top_compounds] == [("(f entity)", 3), ("(h entity)", 2),
                                                                   ("(g (h entity))", 2)]
    assert r.num_templates == 3 and r.template_sizes == {"min": 1, "median": 2.0, "max": 3, "singletons": 1}
    assert r.top_templates[0]["value"] == "(f entity)" and r.top_templates[0]["count"] == 3
    assert r.groups == {"count": 3, "mean": 2.0, "max": 3, "rows_in_shared_groups": 5 / 6}
    assert r.example == {"row": 0, "program": "(f 1)", "tree": "(f [1 -> entity])", "atoms": ["f", "entity"],
                         "compounds": ["(f entity)"], "template": "(f entity)"}
    assert r.abstract == ("number", "string", "entity") and r.group is True
    b = r.baseline
    assert (b["train_rows"], b["test_rows"]) == (3, 3) and b["overlap"]["test_rows"] == 3
    md = r.to_markdown()
    assert "structure groups" in md and "`(f entity)`" in md and "a seeded random split" in md
    json.dumps(r.to_dict())


def test_grouping_off_and_values_kept():
    ds = Dataset.from_dict({"program": SMALL})
    off = structure_report(ds, language=get_language("sexpr", group=False), test_size=None)
    assert off.groups["count"] == 6 and off.groups["rows_in_shared_groups"] == 0 and off.baseline is None
    kept = structure_report(ds, language=get_language("sexpr", abstract=()), test_size=None)
    assert kept.num_atoms == 8 and kept.groups["count"] == 6  # f g h 1 2 3 'x' 'y'
    assert kept.example["tree"] == "(f 1)" and kept.abstract == ()


def test_the_groups_are_the_ones_the_search_moves():
    from hf_synthsample.splits._data import read_structures

    ds = _numbers()
    for lang in (get_language("sexpr"), get_language("sexpr", group=False)):
        st = read_structures(ds, column="program", language=lang, max_height=2, atoms_column=None,
                             compounds_column=None, compound_weights=False)
        assert structure_report(ds, language=lang, test_size=None).groups["count"] == len(st.sizes)


def test_unparsable_rows_are_counted_and_left_out():
    r = structure_report(Dataset.from_dict({"program": SMALL + ["(f (", None]}), language="sexpr", test_size=0.5)
    assert r.unparsable == 2 and r.rows == 6 and r.baseline["test_rows"] == 3


@pytest.mark.parametrize("kwargs, error, match", [
    ({"column": "nope", "language": "sexpr"}, ValueError, "column: no column 'nope'"),
    ({"language": None}, ValueError, "language: give the structure language"),
    ({"language": "klingon"}, ValueError, "language: unknown language"),
    ({"language": "sexpr", "top": 0}, ValueError, "top"),
    ({"language": "sexpr", "max_height": 0}, ValueError, "max_height"),
    ({"language": "sexpr", "test_size": 1.5}, ValueError, "test_size"),
    ({"language": "sexpr", "seed": -1}, ValueError, "seed"),
])
def test_bad_input_is_refused_before_work(kwargs, error, match):
    with pytest.raises(error, match=match):
        structure_report(Dataset.from_dict({"program": SMALL}), **kwargs)
    with pytest.raises(TypeError, match="datasets.Dataset"):
        structure_report({"program": SMALL}, language="sexpr")


def test_cli_end_to_end(tmp_path, capsys):
    path = tmp_path / "d.jsonl"
    _numbers().to_json(str(path))
    out = tmp_path / "s.json"
    assert main(["structure", str(path), "--language", "sexpr", "--top", "2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "## Templates (48)" in text and "structure groups" in text and "close to a template" in text
    saved = json.loads(out.read_text())
    assert saved["groups"]["count"] == 48 and saved["baseline"]["test_rows"] == 36
    assert main(["structure", str(path), "--language", "sexpr", "--no-group", "--abstract", "none"]) == 0
    assert "| 144 (rows per group" in capsys.readouterr().out
    assert main(["structure", str(path), "--language", "sexpr", "--abstract", "numbr"]) == 2
    assert "--abstract" in capsys.readouterr().err
    assert main(["structure", str(path), "--language", "sexpr", "--column", "x"]) == 2
    assert "--column" in capsys.readouterr().err


def test_statement_rule():
    rand = TemplateOverlap(test_rows=100, test_rows_with_train_template=64, test_templates=50, test_templates_in_train=30)
    assert template_statement(TemplateOverlap(100, 0, 20, 0), rand).startswith("also template-disjoint: 100 %")
    assert template_statement(TemplateOverlap(100, 31, 20, 5), rand).startswith("close to a template split: 69 %")
    assert template_statement(TemplateOverlap(100, int(64 * TEMPLATE_DISJOINT_RATIO), 20, 5), rand) is None
    assert template_statement(TemplateOverlap(100, 0, 20, 0), TemplateOverlap(100, 0, 20, 0)) is None


def test_grouped_mcd_split_is_stated_template_disjoint(caplog, tmp_path):
    ds = _numbers()
    with caplog.at_level(logging.WARNING, logger="hf_synthsample"):
        split = mcd_split(ds, language=get_language("sexpr"), compound_weights=False, max_atom_divergence=0.1,
                          progress=False)
    res = split.mcd_result
    assert res.template_statement.startswith("also template-disjoint: 100 %")
    assert res.template_overlap["split"]["test_rows_with_train_template"] == 0
    assert res.template_overlap["random"]["test_rows_with_train_template"] > 0
    assert "also template-disjoint" in caplog.text and "group=False" in caplog.text
    baseline = random_split_baseline(ds, test_rows=len(split["test"]), language="sexpr", compound_weights=False)
    report = split_report(split["train"], split["test"], language="sexpr", compound_weights=False,
                          baseline=baseline)
    assert report.template_statement == res.template_statement
    assert report.random_baseline["compound_divergence"] == pytest.approx(baseline.compound_divergence)
    assert "**template-disjoint**" in report.to_markdown() and "a random split of the same sizes" in report.to_markdown()
    from hf_synthsample.splits import save_split

    out = save_split(split, str(tmp_path / "s"), report)
    assert "Note: this split is also template-disjoint" in (tmp_path / "s" / "README.md").read_text()
    assert out


def test_values_kept_no_statement(caplog):
    with caplog.at_level(logging.WARNING, logger="hf_synthsample"):
        split = mcd_split(_numbers(), language=get_language("sexpr", abstract=()), compound_weights=False,
                          max_atom_divergence=0.1, progress=False)
    assert split.mcd_result.template_statement is None and "template-disjoint" not in caplog.text


def test_split_cli_and_sweep_cards_say_so(tmp_path, capsys):
    path = tmp_path / "d.jsonl"
    _numbers().to_json(str(path))
    assert main(["split", str(path), "--out", str(tmp_path / "one"), "--method", "mcd", "--language", "sexpr",
                 "--max-atom-divergence", "0.1", "--compound-weights", "none"]) == 0
    card = (tmp_path / "one" / "README.md").read_text()
    assert "also template-disjoint" in card and "## Structure of the data" in card
    assert "a random split of the same sizes: D_C / D_A" in card
    from hf_synthsample.splits import divergence_sweep

    # grouped, every split this data allows holds whole templates out (its reachable D_C: 0.33 to 0.37)
    sweep = divergence_sweep(_numbers(), [0.35], language="sexpr", compound_weights=False, max_atom_divergence=0.1,
                             progress=False)
    assert sweep.random_baseline is not None and sweep.structure["groups"] == 48
    assert sweep.template_statements[0.35].startswith("also template-disjoint")
    assert "**Template-disjoint splits**" in sweep.to_markdown() and "Beside a seeded random split" in sweep.to_markdown()
    sweep.save(str(tmp_path / "sw"), plots=False)
    assert "## Structure of the data" in (tmp_path / "sw" / "README.md").read_text()


def test_a_grouped_split_whose_structures_are_not_its_templates_gets_no_statement(caplog):
    # SCAN's template hides the verbs (func) that its atoms and compounds keep: "jump twice" and
    # "walk twice" are two structures of one template, so moving whole structures leaves the test
    # side's templates in training, as a random split does, and nothing is stated
    from hf_synthsample.domains.scan import scan_commands

    ds = Dataset.from_dict({"commands": [c for c, _ in scan_commands()][:1500]})
    with caplog.at_level(logging.WARNING, logger="hf_synthsample"):
        split = mcd_split(ds, column="commands", language="scan", test_size=0.25, seed=0, target_divergence=0.2,
                          progress=False)
    res = split.mcd_result
    assert res.num_groups > 1000  # grouped (the default): one group per structure, far more than templates
    over = res.template_overlap
    assert over["split"]["test_rows_with_train_template"] / over["split"]["test_rows"] > 0.5
    assert res.template_statement is None and "template-disjoint" not in caplog.text
