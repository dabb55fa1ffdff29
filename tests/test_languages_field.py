"""The field's formats as built-in languages (sql, sparql, lambda, funql, python) and users' grammars
(grammar_language): atoms, compounds and templates of small programs counted by hand."""

from __future__ import annotations

import pickle
import sys

import pytest

from hf_synthsample.languages import grammar_language
from hf_synthsample.structure import StructureFunction, abstract_template, atoms, compounds, get_language, languages

ADVISING = ("SELECT DISTINCT COURSEalias0.NAME FROM COURSE AS COURSEalias0 "
            "WHERE COURSEalias0.DEPARTMENT = 'EECS' AND COURSEalias0.NUMBER > 300;")
#: ADVISING with other values (aliases, case, literals): the same template
ADVISING_OTHER_VALUES = ('select distinct courSEalias1.name from course as COURSEalias1 '
                         'where COURSEalias1.department = "MATH" and COURSEalias1.number > 400')
CFQ = ("SELECT DISTINCT ?x0 WHERE { ?x0 a ns:film.actor . "
       "?x0 ns:film.actor.film/ns:film.performance.film M1 . FILTER ( ?x0 != M1 ) }")
LAMBDA = "( lambda $0 e ( and ( state:t $0 ) ( next_to:t $0 texas:s ) ) )"
FUNQL = "answer(population_1(cityid('austin', _)))"
PYTHON = "def f(a):\n    return len(a) + 1\n"

LISTS = r"""
start: instr+
instr: VERB ARG?
VERB: "push" | "pop" | "add"
ARG: /[0-9]+/
%ignore " "
"""


def test_registered_without_importing_the_parsers():
    assert {"sql", "sparql", "lambda", "funql", "python"} <= set(languages())
    for name in ("sql", "sparql", "lambda", "funql", "python"):
        assert get_language(name).description


# ---------------------------------------------------------------------------------------------- sql
def test_sql_by_hand():
    # (select distinct course.name (from course) (where (and (eq course.department 'EECS') (gt course.number 300))))
    # the alias COURSEalias0 names its table; 13 nodes pre-order, the two literals are values
    assert atoms(ADVISING, language="sql") == [
        "select", "distinct", "course.name", "from", "course", "where", "and", "eq", "course.department", "entity",
        "gt", "course.number", "entity"]
    # height 1, bottom-up: the nodes with a leaf child (and / where have none)
    assert compounds(ADVISING, language="sql", max_height=1) == [
        "(from course)", "(eq course.department entity)", "(gt course.number entity)",
        "(select distinct course.name from where)"]
    # height 2 adds (and (eq ..) (gt ..)) (its grandchildren hold leaves) and select's two levels
    assert compounds(ADVISING, language="sql", max_height=2) == [
        "(from course)", "(eq course.department entity)", "(gt course.number entity)",
        "(and (eq course.department entity) (gt course.number entity))",
        "(select distinct course.name from where)", "(select distinct course.name (from course) (where and))"]
    assert abstract_template(ADVISING, language="sql") == (
        "(select distinct course.name (from course) "
        "(where (and (eq course.department entity) (gt course.number entity))))")


def test_sql_values_change_keeps_the_atoms():
    assert atoms(ADVISING_OTHER_VALUES, language="sql") == atoms(ADVISING, language="sql")


def test_sql_spider_aliases_scope_and_forms():
    q = ("SELECT T1.name FROM student AS T1 JOIN city AS T2 ON T1.city_id = T2.id "
         "WHERE T2.pop > -3.5 ORDER BY T1.name DESC LIMIT 1")
    assert abstract_template(q, language="sql") == (
        "(select student.name (from student) (join city (eq student.city_id city.id)) (where (gt city.pop entity)) "
        "(order (desc student.name)) (limit entity))")
    # an alias belongs to the select that declares it: T1 is another table in the subquery
    nested = "SELECT T1.a FROM x AS T1 WHERE T1.b IN (SELECT T1.c FROM y AS T1)"
    assert atoms(nested, language="sql") == [
        "select", "x.a", "from", "x", "where", "in", "x.b", "subquery", "select", "y.c", "from", "y"]


def test_sql_keeps_numbers_when_asked():
    keep = get_language("sql", abstract=("string", "entity"))
    assert atoms("SELECT a FROM t WHERE b = 'x' AND c > 3", language=keep) == [
        "select", "a", "from", "t", "where", "and", "eq", "b", "entity", "gt", "c", "3"]
    every = get_language("sql", abstract="none")
    assert atoms("SELECT a FROM t WHERE b = \"x\"", language=every)[-1] == "'x'"  # a double-quoted value: a string


@pytest.mark.parametrize("bad", ["", ";", "SELECT a FROM t WHERE", "SELECT 1; SELECT 2", "SELECT (a FROM t"])
def test_sql_errors(bad):
    with pytest.raises(ValueError, match="^program:"):
        atoms(bad, language="sql")


def test_sql_imported_lazily():
    import subprocess

    code = ("import sys; from hf_synthsample.structure import get_language; get_language('sql'); "
            "assert 'sqlglot' not in sys.modules and 'lark' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------------------------------- sparql
def test_sparql_by_hand():
    # (query (select distinct ?x0) (where (triple ?x0 a ns:film.actor)
    #   (triple ?x0 (path ns:film.actor.film ns:film.performance.film) M1) (filter (!= ?x0 M1)))): 19 nodes
    assert atoms(CFQ, language="sparql") == [
        "query", "select", "distinct", "entity", "where", "triple", "entity", "a", "ns:film.actor", "triple",
        "entity", "path", "ns:film.actor.film", "ns:film.performance.film", "entity", "filter", "!=", "entity",
        "entity"]
    # height 1: select, both triples, the path and the comparison (filter, where, query hold no leaf)
    assert compounds(CFQ, language="sparql", max_height=1) == [
        "(select distinct entity)", "(triple entity a ns:film.actor)",
        "(path ns:film.actor.film ns:film.performance.film)", "(triple entity path entity)", "(!= entity entity)"]
    assert abstract_template(CFQ, language="sparql") == (
        "(query (select distinct entity) (where (triple entity a ns:film.actor) "
        "(triple entity (path ns:film.actor.film ns:film.performance.film) entity) (filter (!= entity entity))))")


def test_sparql_count_and_lowercase_multiline_queries():
    count = CFQ.replace("DISTINCT ?x0", "count(*)", 1)
    assert abstract_template(count, language="sparql").startswith("(query (select (count *)) ")
    multi = "select distinct ?x0 where {\n?x0 ns:people.person.gender ns:m.05zppz .\n}"
    assert atoms(multi, language="sparql") == [
        "query", "select", "distinct", "entity", "where", "triple", "entity", "ns:people.person.gender",
        "ns:m.05zppz"]


@pytest.mark.parametrize("bad", ["", "SELECT DISTINCT ?x0 WHERE { ?x0 a ns:film.actor", "SELECT WHERE { }",
                                 "SELECT ?x0 WHERE { ?x0 a }"])
def test_sparql_errors(bad):
    with pytest.raises(ValueError, match="^program:"):
        atoms(bad, language="sparql")


# ------------------------------------------------------------------------------------- lambda, funql
def test_lambda_by_hand():
    # (lambda $0 e (and (state:t $0) (next_to:t $0 texas:s))): $0 and texas:s are values, e an atom
    assert atoms(LAMBDA, language="lambda") == [
        "lambda", "entity", "e", "and", "state:t", "entity", "next_to:t", "entity", "entity"]
    assert compounds(LAMBDA, language="lambda", max_height=2) == [
        "(state:t entity)", "(next_to:t entity entity)", "(and (state:t entity) (next_to:t entity entity))",
        "(lambda entity e and)", "(lambda entity e (and state:t next_to:t))"]
    assert abstract_template(LAMBDA, language="lambda") == \
        "(lambda entity e (and (state:t entity) (next_to:t entity entity)))"


def test_lambda_keeps_numbers_when_asked():
    keep_numbers = get_language("lambda", abstract=("string", "entity"))
    assert atoms("( > ( population:i $0 ) 150000 )", language=keep_numbers) == [">", "population:i", "entity",
                                                                                 "150000"]


def test_funql_by_hand():
    # (answer (population_1 (cityid 'austin' _))): 'austin' a value, _ an atom
    assert atoms(FUNQL, language="funql") == ["answer", "population_1", "cityid", "entity", "_"]
    assert compounds(FUNQL, language="funql", max_height=1) == ["(cityid entity _)"]
    # height 2: answer's grandchildren (cityid) hold no leaf, so answer gives none
    assert compounds(FUNQL, language="funql", max_height=2) == ["(cityid entity _)", "(population_1 (cityid entity _))"]
    assert abstract_template("answer(count(state(next_to_2(stateid('texas')))))", language="funql") == \
        "(answer (count (state (next_to_2 (stateid entity)))))"


@pytest.mark.parametrize("language,bad", [("lambda", "( lambda $0 e"), ("lambda", ")"), ("lambda", ""),
                                          ("funql", "answer("), ("funql", "answer(x,)"), ("funql", "")])
def test_lambda_funql_errors(language, bad):
    with pytest.raises(ValueError, match="^program:"):
        atoms(bad, language=language)


# ------------------------------------------------------------------------------------------- python
def test_python_by_hand():
    # (module (functiondef f (arguments (arg a)) (return (binop (call len a) add 1)))):
    # f, a and 1 are values, the builtin len and the operator add atoms
    assert atoms(PYTHON, language="python") == [
        "module", "functiondef", "entity", "arguments", "arg", "entity", "return", "binop", "call", "len", "entity",
        "add", "entity"]
    assert compounds(PYTHON, language="python", max_height=1) == [
        "(arg entity)", "(call len entity)", "(binop call add entity)", "(functiondef entity arguments return)"]
    assert abstract_template(PYTHON, language="python") == \
        "(module (functiondef entity (arguments (arg entity)) (return (binop (call len entity) add entity))))"


def test_python_keeps_every_name_when_asked():
    every = get_language("python", abstract="none")
    assert atoms("s = 'hi' + x.upper()", language=every) == [
        "module", "assign", "s", "binop", "'hi'", "add", "call", "attribute", "x", "upper"]


@pytest.mark.parametrize("bad", ["def f(:", "x = = 1", "  indented", "a\0b"])
def test_python_errors(bad):
    with pytest.raises(ValueError, match="^program:"):
        atoms(bad, language="python")


# ------------------------------------------------------------------------------------------ all five
@pytest.mark.parametrize("language, program, other_values, other_structure", [
    ("sql", ADVISING, ADVISING_OTHER_VALUES, ADVISING.replace(">", "<")),
    ("sparql", CFQ, CFQ.replace("?x0", "?x1").replace("M1", "M3"),
     CFQ.replace("ns:film.actor .", "ns:film.director .")),
    ("lambda", LAMBDA, LAMBDA.replace("texas:s", "ohio:s").replace("$0", "$1"), LAMBDA.replace("next_to:t", "loc:t")),
    ("funql", FUNQL, "answer(population_1(cityid('new york', _)))", "answer(area_1(cityid('austin', _)))"),
    ("python", PYTHON, "def g(b):\n    return len(b) + 7", "def f(a):\n    return len(a) * 1"),
])
def test_a_values_change_keeps_the_template_a_structure_change_alters_it(language, program, other_values,
                                                                          other_structure):
    template = abstract_template(program, language=language)
    assert abstract_template(other_values, language=language) == template
    assert abstract_template(other_structure, language=language) != template


@pytest.mark.parametrize("language,text", [
    ("sql", "SELECT " + "(" * 3000 + "1" + ")" * 3000), ("funql", "f(" * 3000 + "1" + ")" * 3000),
    ("lambda", "( f " * 3000 + "1" + " )" * 3000), ("python", "x = " + "[" * 3000 + "]" * 3000),
    ("sparql", "SELECT ?x WHERE { " + " . ".join(["?x a ns:b"] * 3000) + " }")])
def test_deep_or_long_programs_are_value_errors_or_parse(language, text):
    if language == "sparql":  # long, not deep: query, select, ?x, where + 3,000 triples of 4 nodes
        assert len(atoms(text, language=language)) == 4 + 4 * 3000
        return
    with pytest.raises(ValueError, match="^program:"):
        atoms(text, language=language)


# ---------------------------------------------------------------------------------- grammar_language
def test_grammar_language_by_hand():
    lists = grammar_language("lists", LISTS, values=["ARG"])
    # (start (instr push 3) (instr push 4) (instr add)): 3 and 4 values
    assert atoms("push 3 push 4 add", language=lists) == [
        "start", "instr", "push", "entity", "instr", "push", "entity", "instr", "add"]
    assert compounds("push 3 pop", language=lists, max_height=1) == ["(instr push entity)", "(instr pop)"]
    assert compounds("push 3 pop", language=lists, max_height=2) == [
        "(instr push entity)", "(instr pop)", "(start (instr push entity) (instr pop))"]
    assert abstract_template("push 3 pop", language=lists) == "(start (instr push entity) (instr pop))"
    assert abstract_template("push 9 pop", language=lists) == abstract_template("push 3 pop", language=lists)
    assert abstract_template("push 3 add", language=lists) != abstract_template("push 3 pop", language=lists)


def test_grammar_language_value_types():
    words = grammar_language("words", r"""
        start: (NUM | WORD)+
        NUM: /[0-9]+/
        WORD: /[a-z]+/
        %ignore " "
    """, values={"NUM": "number", "WORD": "string"})
    tree = words.parse("go 3")
    assert [c.label for c in tree.children] == ["'go'", "3"]  # a string terminal gets its quotes
    assert atoms("go 3", language=words.configure(abstract=("number",))) == ["start", "'go'", "entity"]
    assert atoms("go 3", language=words.configure(abstract=("string",))) == ["start", "entity", "3"]


def test_grammar_language_errors():
    with pytest.raises(ValueError, match="^grammar:"):
        grammar_language("bad", "start: (")
    with pytest.raises(ValueError, match="^grammar:"):
        grammar_language("bad", "start: undefined_rule")
    with pytest.raises(ValueError, match="^values:"):
        grammar_language("bad", LISTS, values=["NOPE"])
    with pytest.raises(ValueError, match="^values:"):
        grammar_language("bad", LISTS, values={"ARG": "date"})
    with pytest.raises(TypeError, match="values"):
        grammar_language("bad", LISTS, values="ARG")
    lists = grammar_language("lists", LISTS, values=["ARG"], parser="lalr")
    with pytest.raises(ValueError, match="^program:"):
        lists.parse("jump 3")
    with pytest.raises(ValueError, match="^program:"):
        lists.parse("")
    deep = grammar_language("deep", 'start: "(" start ")" | WORD\nWORD: /[a-z]+/', parser="lalr")
    with pytest.raises(ValueError, match="^program:"):
        deep.parse("(" * 3000 + "a" + ")" * 3000)


def test_grammar_language_register_and_pickle():
    lists = grammar_language("test_field_lists", LISTS, values=["ARG"], register=True, description="list ops")
    assert get_language("test_field_lists") is lists and lists.description == "list ops"
    again = pickle.loads(pickle.dumps(lists))
    assert again == lists and atoms("pop", language=again) == ["start", "instr", "pop"]


def test_grammar_language_rows_through_dataset_map():
    import datasets

    lists = grammar_language("lists", LISTS, values=["ARG"])
    ds = datasets.Dataset.from_dict({"program": ["push 3 pop", "push 4 pop", "add"]})
    ds = ds.map(StructureFunction(language=lists, max_height=1), batched=True)
    assert list(ds["template"]) == ["(start (instr push entity) (instr pop))"] * 2 + ["(start (instr add))"]
    assert list(ds["atoms"])[2] == ["start", "instr", "add"]
    assert list(ds["compounds"]) == [["(instr push entity)", "(instr pop)"]] * 2 + [["(instr add)"]]
