"""The language registry: one table (``structure.LANGUAGES``) read lazily, languages from other packages
through the ``hf_synthsample.languages`` entry point group, and a session's languages in worker processes.

Module level stays light (no ``datasets`` import): spawned workers import this module to unpickle ``_words``.
"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap

import pytest

from hf_synthsample.structure import (ENTRY_POINT_GROUP, LANGUAGES, Language, Node, StructureFunction, atoms,
                                      get_language, languages, register_language)
from hf_synthsample.structure import language as registry


def _words(text: str) -> Node:
    """A user's parse function, importable by spawned workers: words as leaves, digits as values."""
    return Node("seq", tuple(Node(w, kind="entity" if w.isdigit() else "") for w in text.split()))


@pytest.fixture
def fresh_registry(monkeypatch):
    """The registry's caches emptied for one test and restored after it."""
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    monkeypatch.setattr(registry, "_LOADED", {})


# ---------------------------------------------------------------------- the table


def test_every_table_entry_is_a_language_of_its_name_with_a_description():
    assert len(LANGUAGES) == 12
    for name, target in LANGUAGES.items():
        assert target.count(":") == 1 and target.startswith("hf_synthsample.")
        lang = get_language(name)
        assert isinstance(lang, Language) and lang.name == name and lang.description
        assert lang.to_record() == name  # built in with today's defaults
    # a domain's language lives with its domain; the field's formats in languages/
    assert {n for n, t in LANGUAGES.items() if ".domains." in t} == {"thingtalk", "scan", "scan_actions", "cogs",
                                                                      "karel", "calculator"}
    assert {n for n, t in LANGUAGES.items() if ".languages." in t} == {"sql", "sparql", "lambda", "funql", "python"}


def test_listing_the_languages_imports_no_parser_and_a_lookup_imports_only_its_own_module():
    code = textwrap.dedent("""
        import sys
        import hf_synthsample.structure as st
        heavy = ("sqlglot", "lark", "hf_synthsample.languages", "hf_synthsample.domains.thingtalk",
                 "hf_synthsample.domains.scan_language", "hf_synthsample.domains.karel.language")
        assert {"sql", "sparql", "scan", "karel", "thingtalk"} <= set(st.languages())
        assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]
        print(st.atoms("jump twice", "scan"))
        assert "hf_synthsample.domains.scan_language" in sys.modules
        assert not [m for m in heavy[:-2] if m in sys.modules]
        print(st.abstract_template("SELECT a FROM t WHERE b = 1", "sql"))
        assert "sqlglot" in sys.modules and "lark" not in sys.modules
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["['twice', 'jump']", "(select a (from t) (where (eq b entity)))"]


def test_a_session_language_takes_precedence_and_unknown_names_list_the_languages(fresh_registry):
    mine = register_language("scan", _words)
    assert get_language("scan") is mine and atoms("jump 2", "scan") == ["seq", "jump", "entity"]
    with pytest.raises(ValueError, match=r"unknown language 'nope'; registered languages: \[.*'sql'"):
        get_language("nope")


# ---------------------------------------------------------------------- entry points


def _plugin(tmp_path, monkeypatch, entry_points: str, module: str) -> None:
    """An installed distribution ``theirs`` (its dist-info and module on ``sys.path``), as pip leaves one."""
    (tmp_path / "theirs_languages.py").write_text(textwrap.dedent(module))
    info = tmp_path / "theirs-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: theirs\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n" + textwrap.dedent(entry_points))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "theirs_languages", raising=False)


_THEIRS = """
    from hf_synthsample.structure import Language, Node

    def parse_pairs(text):
        return Node("pairs", tuple(Node("pair", (Node(k), Node(v, kind="entity")))
                                   for k, v in (p.split("=") for p in text.split())))

    THEIRS = Language("theirs", parse_pairs, description="key=value pairs")
    OTHER_NAME = Language("other", parse_pairs)
"""


def test_a_package_adds_a_language_through_the_entry_point_group(tmp_path, monkeypatch, fresh_registry):
    _plugin(tmp_path, monkeypatch, """
        theirs = theirs_languages:THEIRS
        theirs_fn = theirs_languages:parse_pairs
        sql = theirs_languages:THEIRS
    """, _THEIRS)
    assert {"theirs", "theirs_fn"} <= set(languages())
    assert "theirs_languages" not in sys.modules  # listed, not imported
    lang = get_language("theirs")
    assert lang.description == "key=value pairs" and atoms("a=1 b=2", "theirs") == [
        "pairs", "pair", "a", "entity", "pair", "b", "entity"]
    assert get_language("theirs") is lang  # loaded once
    fn = get_language("theirs_fn")  # a parse function becomes a Language of the entry point's name
    assert fn.name == "theirs_fn" and fn.template(fn.parse("a=1")) == "(pairs (pair a entity))"
    assert get_language("sql").description.startswith("SQL")  # a built-in name stays built in
    assert get_language("theirs", abstract="none").to_record() == {"name": "theirs", "abstract": []}


def test_a_broken_entry_point_names_itself(tmp_path, monkeypatch, fresh_registry):
    _plugin(tmp_path, monkeypatch, """
        gone = theirs_languages:MISSING
        renamed = theirs_languages:OTHER_NAME
        number = theirs_languages:N
    """, textwrap.dedent(_THEIRS) + "\nN = 3\n")
    with pytest.raises(ImportError, match=r"cannot load entry point 'gone' = 'theirs_languages:MISSING' \(group "
                                          r"'hf_synthsample.languages'\): AttributeError"):
        get_language("gone")
    with pytest.raises(ValueError, match="gives Language 'other'; the names must match"):
        get_language("renamed")
    with pytest.raises(TypeError, match="must be a Language or a parse function"):
        get_language("number")


# ---------------------------------------------------------------------- worker processes


def _map_in_spawned_workers(fn: StructureFunction, batches: list[list[str]]) -> list[dict]:
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        return pool.map(fn, [{"program": b} for b in batches])


def test_a_session_language_and_a_grammar_language_work_in_spawned_workers(fresh_registry):
    from hf_synthsample.languages import grammar_language

    register_language("test_registry_words", _words)  # registered here only: a spawned worker starts empty
    stack = grammar_language("test_registry_stack", """
        start: instr+
        instr: VERB ARG?
        VERB: "push" | "pop" | "add"
        ARG: /[0-9]+/
        %ignore " "
    """, values={"ARG": "number"})
    batches = [["jump 2 walk", "look 7"], ["run 3"]]
    got = _map_in_spawned_workers(StructureFunction(language="test_registry_words", max_height=1), batches)
    assert got == [StructureFunction(language="test_registry_words", max_height=1)({"program": b}) for b in batches]
    assert got[0]["template"] == ["(seq jump entity walk)", "(seq look entity)"]
    assert got[1]["compounds"] == [["(seq run entity)"]]
    got = _map_in_spawned_workers(StructureFunction(language=stack), [["push 3 pop"], ["push 1 push 2 add"]])
    assert [g["template"] for g in got] == [["(start (instr push entity) (instr pop))"],
                                            ["(start (instr push entity) (instr push entity) (instr add))"]]


def test_a_session_language_works_in_a_datasets_map_with_two_processes(fresh_registry):
    import datasets

    register_language("test_registry_words2", _words)
    fn = StructureFunction(language="test_registry_words2")
    assert fn.language is get_language("test_registry_words2")  # the object travels, not the name
    del registry._REGISTERED["test_registry_words2"]  # gone from every registry: workers need none
    ds = datasets.Dataset.from_dict({"program": ["a 1 b", "c 2", "d", "e 3 f 4"]})
    two = ds.map(fn, batched=True, batch_size=1, num_proc=2)
    assert list(two["template"]) == ["(seq a entity b)", "(seq c entity)", "(seq d)", "(seq e entity f entity)"]
    assert list(two["atoms"])[1] == ["seq", "c", "entity"]
