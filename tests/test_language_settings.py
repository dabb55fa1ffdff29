"""A language is an object with settings (issue 43, item 2): which values are abstracted, the
compound height, and whether rows of one structure move together; every built-in language keeps
its behaviour by default."""

from __future__ import annotations

import pickle

import pytest
from datasets import Dataset

from hf_synthsample.splits import mcd_split, split_report
from hf_synthsample.structure import (Language, LanguageSettings, Node, StructureFunction, abstract_template, atoms,
                                      compounds, get_language, languages, value_type)

PROGRAM = "(limit 3 (city 'boston') (near x_1))"


def test_every_value_is_abstracted_by_default_as_before():
    # hand-counted: limit, 3 -> entity, city, 'boston' -> entity, near, x_1 (a bare leaf: not a value in sexpr)
    assert atoms(PROGRAM, language="sexpr") == ["limit", "entity", "city", "entity", "near", "x_1"]
    assert abstract_template(PROGRAM, language="sexpr") == "(limit entity (city entity) (near x_1))"
    assert get_language("sexpr").settings == LanguageSettings()
    for name in languages():  # the built-ins all start from the defaults
        assert get_language(name).settings == LanguageSettings(), name


@pytest.mark.parametrize("abstract,expected_atoms,template", [
    (("string", "entity"), ["limit", "3", "city", "entity", "near", "x_1"], "(limit 3 (city entity) (near x_1))"),
    (("number", "entity"), ["limit", "entity", "city", "'boston'", "near", "x_1"],
     "(limit entity (city 'boston') (near x_1))"),
    ((), ["limit", "3", "city", "'boston'", "near", "x_1"], "(limit 3 (city 'boston') (near x_1))"),
])
def test_each_value_type_is_abstracted_or_kept_on_its_own(abstract, expected_atoms, template):
    lang = get_language("sexpr", abstract=abstract)
    assert atoms(PROGRAM, language=lang) == expected_atoms
    assert abstract_template(PROGRAM, language=lang) == template


def test_kept_values_enter_the_compounds():
    lang = get_language("sexpr", abstract=("string", "entity"))
    assert compounds("(limit 3 (city 'b'))", language=lang, max_height=1) == ["(city entity)", "(limit 3 city)"]
    assert compounds("(limit 3 (city 'b'))", language="sexpr", max_height=1) == ["(city entity)",
                                                                                  "(limit entity city)"]


def test_an_entity_typed_value_of_a_built_in_language_can_be_kept():
    # COGS variables are values of type entity: kept, two forms that differ in a variable differ in structure
    a, b = "cat ( x _ 1 )", "cat ( x _ 2 )"
    assert atoms(a, language="cogs") == atoms(b, language="cogs")
    keep = get_language("cogs", abstract=("number", "string"))
    assert atoms(a, language=keep) != atoms(b, language=keep)


def test_value_types_come_from_the_label():
    assert [value_type(v) for v in ("7", "-2.5", "1e3", "'x'", '"y z"', "x _ 1", "true")] == [
        "number", "number", "number", "string", "string", "entity", "entity"]


def test_the_compound_height_is_a_language_setting():
    lang = get_language("sexpr", max_height=1)
    assert compounds("(a (b c))", language=lang) == compounds("(a (b c))", language="sexpr", max_height=1)
    assert lang.height() == 1 and get_language("sexpr").height() == 2
    with pytest.raises(ValueError, match="max_height: 3 differs from the compound height 1"):
        compounds("(a (b c))", language=lang, max_height=3)


def test_settings_are_validated_before_any_work():
    with pytest.raises(ValueError, match="unknown value type 'numbers'; accepted: number, string, entity"):
        get_language("sql", abstract=("numbers",))
    with pytest.raises(ValueError, match="max_height must be >= 1"):
        get_language("sql", max_height=0)
    with pytest.raises(TypeError, match="group must be a bool"):
        get_language("sql", group="no")
    with pytest.raises(ValueError, match="has no setting 'height'"):
        get_language("sql", height=3)
    with pytest.raises(ValueError, match="unknown language 'sqll'"):
        get_language("sqll")
    with pytest.raises(TypeError, match="language must be a language name"):
        get_language(3)


def test_a_users_language_from_a_parse_function_and_its_record():
    words = Language("words", lambda s: Node("seq", tuple(Node(w, kind="entity" if w.isdigit() else "")
                                                           for w in s.split())))
    assert atoms("jump 3", language=words) == ["seq", "jump", "entity"]
    assert words.to_record() == "words"
    kept = words.configure(abstract=(), group=False)
    assert kept.to_record() == {"name": "words", "abstract": [], "group": False}
    assert repr(kept) == "Language('words', abstract=(), group=False)"
    assert atoms("jump 3", language=kept) == ["seq", "jump", "3"]


def test_a_configured_built_in_language_pickles_for_worker_processes():
    lang = get_language("sexpr", abstract=("string",), group=False)
    back = pickle.loads(pickle.dumps(lang))
    assert back == lang and atoms(PROGRAM, language=back) == atoms(PROGRAM, language=lang)


def test_structure_columns_follow_the_settings_in_a_batched_map_with_workers():
    ds = Dataset.from_dict({"program": [f"(f {i} 'a')" for i in range(8)]})
    lang = get_language("sexpr", abstract=("string",))
    one = ds.map(StructureFunction(language=lang), batched=True, batch_size=3)
    two = ds.map(StructureFunction(language=lang), batched=True, batch_size=3, num_proc=2)
    assert one["template"] == two["template"] == [f"(f {i} entity)" for i in range(8)]


def _numbers_only():
    # every program differs from its neighbours only in its numbers: with numbers abstracted, one
    # structure per shape (12 shapes, 8 rows each)
    progs = [f"({op} ({f} {n}) {b})" for op in "pq" for f in "fgh" for b in "ab" for n in range(8)]
    return Dataset.from_dict({"program": progs})


def test_grouping_moves_whole_structures_and_no_group_moves_rows():
    ds = _numbers_only()
    grouped = mcd_split(ds, language="sexpr", test_size=0.25, seed=0, compound_weights=False,
                        size_tolerance=0.1, progress=False)
    single = mcd_split(ds, language=get_language("sexpr", group=False), test_size=0.25, seed=0,
                       compound_weights=False, progress=False)
    assert grouped.mcd_result.num_groups == 12
    assert single.mcd_result.num_groups == len(ds)
    tmpl = lambda d: {abstract_template(p, language="sexpr") for p in d["program"]}  # noqa: E731
    assert not tmpl(grouped["train"]) & tmpl(grouped["test"])  # whole structures: template-disjoint


def test_the_split_records_the_language_it_read():
    from hf_synthsample.splits import MCDSplitter

    lang = get_language("sexpr", group=False)
    splitter = MCDSplitter(language=lang, compound_weights=False, test_size=0.25)
    assert splitter.provenance()["params"]["language"] == {"name": "sexpr", "group": False}
    split = splitter.split(_numbers_only(), progress=False)
    report = split_report(split["train"], split["test"], language=lang, compound_weights=False)
    assert report.compound_divergence == pytest.approx(splitter.result_.compound_divergence, abs=1e-9)


def test_the_split_command_takes_language_options(tmp_path, capsys):
    from hf_synthsample.cli import main

    data = tmp_path / "pool.jsonl"
    _numbers_only().to_json(str(data))
    out = tmp_path / "split"
    assert main(["split", str(data), "--out", str(out), "--method", "mcd", "--language", "sexpr", "--no-group",
                 "--abstract", "string,entity", "--no-compound-weights"]) == 0
    card = (out / "README.md").read_text()
    assert "group: false" in card and "abstract:" in card
    capsys.readouterr()
    assert main(["split", str(data), "--out", str(tmp_path / "x"), "--method", "mcd", "--language", "sexpr",
                 "--abstract", "digits"]) == 2
    assert "--abstract: unknown value type 'digits'; accepted: number, string, entity" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
