"""ThingTalk parser/printer, structure (templates, atoms, compounds, divergences), the Schema2QA
grammar, the annotated reader, the splits and the builder."""

from __future__ import annotations

import glob
import math
import os
import random
import re
from collections import defaultdict

import pytest
from conftest import shared_data

import hf_synthsample
from hf_synthsample import structure as st
from hf_synthsample.domains import schema2qa as s2q
from hf_synthsample.domains import thingtalk as tt


def _annotated_programs() -> list[tuple[str, str]]:
    folder = shared_data("schema2qa")
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "*.tsv"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                out.extend((os.path.basename(path), p) for p in parts[2:])
    return out


# ---------------------------------------------------------------------- parser / printer


def test_every_annotated_program_parses_and_round_trips():
    programs = _annotated_programs()
    main = [p for p in programs]
    assert len(main) >= 2538  # 2,538 questions (17 carry a second, untyped program)
    for _, program in programs:
        assert tt.to_string(tt.parse(program)) == program


def test_parse_structure_of_a_known_program():
    p = (
        "now => [ param:geo:Location ] of ( ( sort param:distance:Measure(m) asc of ( compute distance ( "
        "param:geo:Location , location:current_location ) of ( ( @org.schema.Restaurant.Restaurant ) filter "
        'param:servesCuisine:String =~ " chinese " ) ) ) [ 1 ] ) => notify'
    )
    tree = tt.parse(p)
    proj = tree.children[0]
    assert proj.rule == "projection"
    index = proj.children[1]
    assert index.rule == "index" and index.children[1].label == "1"
    sort = index.children[0]
    assert sort.rule == "sort" and sort.children[1].label == "asc"
    compute = sort.children[2]
    assert compute.rule == "compute" and compute.children[0].label == "distance"
    filt = compute.children[1]
    assert filt.rule == "filter" and filt.children[0].label == "@org.schema.Restaurant.Restaurant"
    cmp = filt.children[1]
    assert (cmp.label, cmp.children[0].children[0].label, cmp.children[1].label) == ("=~", "servesCuisine", '" chinese "')


def test_or_binds_tighter_than_and():
    p = 'now => ( @org.schema.Book.Book ) filter param:a:String =~ " x " or param:a:String =~ " y " and param:b:Number >= 3 => notify'
    f = tt.parse(p).children[0].children[1]
    assert f.label == "and" and f.children[0].label == "or"


@pytest.mark.parametrize(
    "program, token",
    [
        ("now => ( @org.schema.Book.Book ) filter param:a:Number >> 3 => notify", ">>"),
        ("now => ( @org.schema.Book.Book ) filter => notify", "=>"),
        ('now => ( @org.schema.Book.Book ) filter param:a:String =~ " x => notify', "<end>"),
        ("now => ( @org.schema.Book.Book => notify", "=>"),
        ("now => sort param:a:Number up of ( @org.schema.Book.Book ) => notify", "up"),
        ("now => @org.schema.Book.Book => notify extra", "extra"),
        ("", "<end>"),
    ],
)
def test_unparsable_program_reports_position_and_token(program, token):
    with pytest.raises(tt.ThingTalkSyntaxError) as info:
        tt.parse(program)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.token == token
    assert f"character {err.position}" in str(err) and repr(token) in str(err)
    if token != "<end>":
        assert program[err.position : err.position + len(token)] == token


# ---------------------------------------------------------------------- templates


SAME = [
    (
        'now => ( @org.schema.Hotel.Hotel ) filter param:petsAllowed:Boolean == true => notify',
        'now => ( @org.schema.Book.Book ) filter param:bookFormat:Enum(EBook,Hardcover) == enum:EBook => notify',
    ),
    (
        "now => aggregate count of ( @org.schema.Person.Person ) => notify",
        "now => aggregate count of ( @org.schema.Hotel.Hotel ) => notify",
    ),
    (
        "now => ( sort param:aggregateRating.ratingValue:Number desc of ( @org.schema.Hotel.Hotel ) ) [ 1 ] => notify",
        "now => ( sort param:datePublished:Date asc of ( @org.schema.Music.MusicAlbum ) ) [ NUMBER_0 ] => notify",
    ),
    (
        'now => ( @org.schema.Movie.Movie ) filter param:duration:Measure(ms) >= 2 unit:h => notify',
        'now => ( @org.schema.Book.Book ) filter param:datePublished:Date <= new Date ( NUMBER_0 , , , ) + 1 unit:year => notify',
    ),
    (
        'now => ( @org.schema.Person.Person ) filter count ( param:award:Array(String) ) >= 1 => notify',
        'now => ( @org.schema.Hotel.Hotel ) filter sum ( param:x:Array(Number) ) == NUMBER_0 => notify',
    ),
    (  # a parameter without its type is the same template as a typed one
        "now => [ param:geo ] of ( @org.schema.Hotel.Hotel ) => notify",
        "now => [ param:telephone:Entity(tt:phone_number) ] of ( @org.schema.Restaurant.Restaurant ) => notify",
    ),
]

DIFFERENT = [
    (  # one clause vs two
        'now => ( @org.schema.Hotel.Hotel ) filter param:a:Boolean == true => notify',
        'now => ( @org.schema.Hotel.Hotel ) filter param:a:Boolean == true and param:b:Number >= 3 => notify',
    ),
    (  # index vs slice
        "now => ( sort param:a:Number desc of ( @org.schema.Hotel.Hotel ) ) [ 1 ] => notify",
        "now => ( sort param:a:Number desc of ( @org.schema.Hotel.Hotel ) ) [ 1 : NUMBER_0 ] => notify",
    ),
    (  # value vs parameter on the right
        "now => ( @org.schema.Hotel.Hotel ) filter param:a:Number == 3 => notify",
        "now => ( @org.schema.Hotel.Hotel ) filter param:a:Number == param:b:Number => notify",
    ),
    (  # projection vs none
        "now => [ param:a:Number ] of ( @org.schema.Hotel.Hotel ) => notify",
        "now => @org.schema.Hotel.Hotel => notify",
    ),
    (  # aggregate with and without a parameter
        "now => aggregate count of ( @org.schema.Hotel.Hotel ) => notify",
        "now => aggregate sum param:a:Number of ( @org.schema.Hotel.Hotel ) => notify",
    ),
]


@pytest.mark.parametrize("a, b", SAME)
def test_same_template_when_only_abstracted_parts_differ(a, b):
    assert hf_synthsample.abstract_template(a) == hf_synthsample.abstract_template(b)


@pytest.mark.parametrize("a, b", DIFFERENT)
def test_different_template_when_structure_differs(a, b):
    assert st.abstract_template(a) != st.abstract_template(b)


def test_template_of_table_2_example():
    p = "now => ( @org.schema.Hotel.Hotel ) filter param:petsAllowed:Boolean == true => notify"
    assert st.abstract_template(p) == "now => ( @table ) filter param:property:type op entity => notify"


_VALUE_TOKEN = re.compile(r"^(\d+(\.\d+)?|[A-Z_]+_\d+|enum:\S+|true|false|location:\S+|time:\S+)$")
_OPS = {"==", "!=", ">=", "<=", ">", "<", "=~", "~=", "contains", "contains~", "in_array", "in_array~", "and", "or", "not"}
_FUNCS = {"sort", "aggregate", "count", "sum", "avg", "min", "max", "distance"}


def _oracle_template(program: str) -> str:
    """An independent token-level abstraction (regexes and a scan, no parser)."""
    p = re.sub(r'(location: )?" [^"]*? "( \^\^\S+)?', " V ", program)
    p = re.sub(r"new \S+ \( [^)]*\)", " V ", p)
    p = re.sub(r"(start_of|end_of) unit:\S+", " V ", p)
    toks = p.split()
    out: list[str] = []
    for i, t in enumerate(toks):
        if i == 0:  # the program's own "now =>"
            out.append(t)
        elif t == "V" or _VALUE_TOKEN.match(t) or t == "now":
            out.append("E")
        elif t.startswith("unit:") and out and out[-1] == "E":
            continue
        elif t.startswith("param:"):
            out.append("P")
        elif t.startswith("@"):
            out.append("T")
        elif t in _OPS:
            out.append("O")
        elif t in _FUNCS:
            out.append("F")
        elif t in ("asc", "desc"):
            out.append("M")
        else:
            out.append(t)
    s = " ".join(out)
    # collapse value arithmetic and array literals into one value
    prev = None
    while prev != s:
        prev = s
        s = re.sub(r"E [+-] E", "E", s)
        s = re.sub(r"(O) \[ E( , E)* \]", r"\1 E", s)
    return s


def test_annotated_templates_partition_like_an_independent_abstraction():
    programs = [p for _, p in _annotated_programs()]
    by_template, by_oracle = defaultdict(set), defaultdict(set)
    for i, p in enumerate(programs):
        by_template[st.abstract_template(p)].add(i)
        by_oracle[_oracle_template(p)].add(i)
    assert sorted(map(sorted, by_template.values())) == sorted(map(sorted, by_oracle.values()))
    assert len(by_template) == 76  # distinct templates of the 2,538 questions (typed and untyped params merged)


# ---------------------------------------------------------------------- atoms and compounds


def test_compounds_by_hand():
    assert st.compounds("(a (b c) (d (e f)))", language="sexpr", max_height=2) == [
        "(b c)",
        "(e f)",
        "(d (e f))",
        "(a (b c) (d e))",
    ]
    # height 1: (a b d) has a terminal (d); (d e) does not
    assert st.compounds("(a (b c) (d (e f)))", language="sexpr", max_height=1) == ["(b c)", "(e f)"]
    assert st.compounds("(a b c)", language="sexpr", max_height=3) == ["(a b c)"]
    # values are abstracted
    assert st.compounds("(eq x '5)", language="sexpr", max_height=1) == ["(eq x entity)"]
    assert st.atoms("(eq x '5)", language="sexpr") == ["eq", "x", "entity"]


def test_thingtalk_compounds_by_hand():
    p = "now => ( @org.schema.Hotel.Hotel ) filter param:petsAllowed:Boolean == true => notify"
    got = st.compounds(p, max_height=1)
    assert got == [
        "(param petsAllowed Boolean)",
        "(== param entity)",
        "(filter @org.schema.Hotel.Hotel ==)",
    ]
    assert st.atoms(p) == ["program", "filter", "@org.schema.Hotel.Hotel", "==", "param", "petsAllowed", "Boolean", "entity"]


def test_compound_weights_by_hand():
    # (b c) always occurs inside (a (b c)): weight 0; in the second pool it is also seen alone.
    w = st.compound_weights(["(a (b c))", "(a (b c))"], language="sexpr", max_height=2)
    assert w == {"(b c)": 0.0, "(a (b c))": 1.0}
    w = st.compound_weights(["(a (b c))", "(x (b c))", "(b c)"], language="sexpr", max_height=2)
    # P((a (b c)) | (b c)) = 1/3, P((x (b c)) | (b c)) = 1/3; the lone occurrence has no super-compound
    assert w["(b c)"] == 1.0
    w = st.compound_weights(["(a (b c))", "(x (b c))"], language="sexpr", max_height=2)
    assert w["(b c)"] == pytest.approx(0.5)


def test_entropy_and_divergences_by_hand():
    assert st.entropy({"a": 1, "b": 1, "c": 2}) == pytest.approx(-(2 * 0.25 * math.log(0.25) + 0.5 * math.log(0.5)))
    assert st.chernoff_coefficient({"a": 1, "b": 3}, {"a": 1}, 0.5) == pytest.approx(0.5)
    same = [["x", "y"], ["y", "z"]]
    assert st.atom_divergence(same, same) == pytest.approx(0.0, abs=1e-12)
    assert st.compound_divergence(same, same) == pytest.approx(0.0, abs=1e-12)
    assert st.atom_divergence([["x"]], [["y"]]) == 1.0
    assert st.compound_divergence([["x", "x"]], [["y", "z"]]) == 1.0
    # p = (1/2, 1/2), q = (1, 0): C_0.1 = 0.5^0.1 * 1
    assert st.compound_divergence([["x", "y"]], [["x"]]) == pytest.approx(1 - 0.5**0.1)


def test_structure_map_function_adds_columns():
    import datasets

    programs = [p for _, p in _annotated_programs()[:50]]
    ds = datasets.Dataset.from_dict({"program": programs})
    out = ds.map(st.StructureFunction(max_height=2), batched=True, batch_size=16)
    assert out.column_names == ["program", "template", "atoms", "compounds"]
    row = out[7]
    assert row["template"] == st.abstract_template(programs[7])
    assert row["atoms"] == st.atoms(programs[7])
    assert row["compounds"] == st.compounds(programs[7], max_height=2)


def test_template_coverage_and_plot(tmp_path):
    cov, missing = st.template_coverage(["a", "b"], ["a", "c", "c", "d"])
    assert cov == pytest.approx(1 / 3) and missing == ["c", "d"]
    path = st.plot_template_frequencies(["a", "a", "b"], str(tmp_path / "t.png"))
    assert os.path.getsize(path) > 0
    with pytest.raises(ValueError, match="reference_templates"):
        st.template_coverage(["a"], [])


def test_unknown_language():
    with pytest.raises(ValueError, match="registered languages"):
        st.abstract_template("x", language="klingon")


# ---------------------------------------------------------------------- the grammar

_SUPERLATIVES = ("first", "top", "closest", "nearest", "highest", "most", "best", "lowest", "fewest", "smallest",
                 "latest", "earliest", "oldest", "longest", "shortest")


def _check_mentions(utterance: str, program: str) -> None:
    """Every value of ``program`` is said in ``utterance`` (an independent reading of the program)."""
    words = f" {utterance} "
    for quoted in re.findall(r'" ([^"]*?) "', program):
        assert f" {quoted} " in words, (quoted, utterance)
    for ph in re.findall(r"\b[A-Z_]+_\d+\b", program):
        assert f" {ph} " in words, (ph, utterance)
    for enum in re.findall(r"enum:(\w+)", program):
        assert enum.lower() in words, (enum, utterance)
    # plain numbers, except the implicit "+ 1 unit:year" of a calendar-year range and the rank 1
    prog = re.sub(r"\+ 1 unit:year", "", program)
    prog = re.sub(r"\[ 1 (\]|:)", r"[ \1", prog)
    for num in re.findall(r"(?<![\w:])(\d+)(?![\w:])", re.sub(r'" [^"]*? "', "", prog)):
        assert f" {num} " in words, (num, utterance)
    if re.search(r"\[ 1 (\]|:)", program):
        assert any(w in words for w in _SUPERLATIVES), utterance
    if "location:current_location" in program:
        assert any(w in words for w in (" me ", " here ", "nearby", " my ")), utterance
    negated = bool(re.search(r"== false\b", program)) or " not " in program
    if negated:
        assert " not " in words or "n't" in words, utterance


@pytest.mark.parametrize("domain", ["all", *s2q.DOMAIN_NAMES])
def test_generated_programs_parse_and_mention_their_values(domain):
    rng = random.Random(7)
    for _ in range(1500):
        row = s2q.generate(rng, domain)
        tree = tt.parse(row["program"])
        assert tt.to_string(tree) == row["program"]
        assert row["template"] == st.abstract_template(row["program"])
        assert domain in ("all", row["domain"])
        assert row["program_length"] == len(row["program"].split())
        _check_mentions(row["utterance"], row["program"])


def test_pool_covers_most_annotated_templates():
    annotated = {st.abstract_template(p) for _, p in _annotated_programs()}
    rng = random.Random(0)
    pool = {s2q.generate(rng)["template"] for _ in range(30_000)}
    coverage, missing = st.template_coverage(pool, annotated)
    assert coverage >= 0.85, missing
    assert len(pool) >= 250


def test_generate_is_deterministic_and_rejects_unknown_domain():
    a = [s2q.generate(random.Random(3), "books") for _ in range(1)]
    b = [s2q.generate(random.Random(3), "books") for _ in range(1)]
    assert a == b
    with pytest.raises(ValueError, match="unknown domain 'cars'"):
        s2q.generate(random.Random(0), "cars")


# ---------------------------------------------------------------------- builder and splits


def test_builder_pool_per_domain(cache_dir):
    ds = hf_synthsample.load_dataset("schema2qa", "music", num_examples=300, block_size=100, cache_dir=cache_dir)
    train = ds["train"]
    assert set(train["domain"]) == {"music"}
    again = hf_synthsample.load_dataset("schema2qa", "music", num_examples=300, block_size=100, num_proc=2, cache_dir=cache_dir + "2")
    assert list(again["train"]["program"]) == list(train["program"])
    with pytest.raises(ValueError, match="schema_domain must be one of"):
        hf_synthsample.load_dataset("schema2qa", "all", schema_domain="cars", cache_dir=cache_dir)


def test_missing_annotated_folder(cache_dir, tmp_path):
    with pytest.raises(ValueError, match="annotated_dir: config 'annotated-iid' needs"):
        hf_synthsample.load_dataset("schema2qa", "annotated-iid", cache_dir=cache_dir)
    with pytest.raises(ValueError, match="is not an existing folder"):
        hf_synthsample.load_dataset("schema2qa", "annotated-iid", annotated_dir=str(tmp_path / "nope"), cache_dir=cache_dir)
    with pytest.raises(ValueError, match="no <domain>.tsv file"):
        s2q.read_annotated(tmp_path)


def test_annotated_splits_are_template_disjoint_and_share_train(cache_dir):
    folder = str(shared_data("schema2qa"))
    comp = hf_synthsample.load_dataset("schema2qa", "annotated-compositional", annotated_dir=folder, cache_dir=cache_dir)
    iid = hf_synthsample.load_dataset("schema2qa", "annotated-iid", annotated_dir=folder, cache_dir=cache_dir)
    assert list(comp["train"]["id"]) == list(iid["train"]["id"])
    t = {k: set(v["template"]) for k, v in comp.items()}
    assert not (t["train"] & t["validation"]) and not (t["train"] & t["test"]) and not (t["validation"] & t["test"])
    assert t["validation"] and t["test"]
    ids = [i for d in (comp, iid) for k in d for i in d[k]["id"]]
    assert len(set(ids)) == 2538  # every question lands somewhere, none twice across the five sets
    assert len(ids) - len(comp["train"]) == 2538
    # i.i.d. sets come from the train templates (a rare one may miss the train cut, as in the paper)
    iid_t = set(iid["validation"]["template"]) | set(iid["test"]["template"])
    assert not iid_t & (t["validation"] | t["test"])
    assert len(iid_t - t["train"]) <= 10


def test_pool_compositional_split(cache_dir):
    folder = str(shared_data("schema2qa"))
    ann = hf_synthsample.load_dataset("schema2qa", "annotated-compositional", annotated_dir=folder, cache_dir=cache_dir)
    held_dev, held_test = set(ann["validation"]["template"]), set(ann["test"]["template"])
    pool = hf_synthsample.load_dataset(
        "schema2qa", "all-compositional", annotated_dir=folder, num_examples=2000, num_validation=50, num_test=50, cache_dir=cache_dir
    )
    assert not set(pool["train"]["template"]) & (held_dev | held_test)
    assert set(pool["validation"]["template"]) <= held_dev
    assert set(pool["test"]["template"]) <= held_test


def _write_tsv(folder, domain, programs):
    folder.mkdir(exist_ok=True)
    with open(folder / f"{domain}.tsv", "w") as f:
        for i, p in enumerate(programs):
            f.write(f"{i}\tq {i}\t{p}\n")


def test_empty_pool_after_split(cache_dir, tmp_path):
    rare = "now => ( @org.schema.Hotel.Hotel ) filter " + " and ".join(f"param:p{i}:Number == {i}" for i in range(9)) + " => notify"
    common = 'now => ( @org.schema.Hotel.Hotel ) filter param:id:Entity(org.schema.Hotel:Hotel) =~ " x " => notify'
    folder = tmp_path / "ann"
    _write_tsv(folder, "hotels", [rare] + [common] * 9)
    rare_t, common_t = st.abstract_template(rare), st.abstract_template(common)
    seed = next(
        s for s in range(200)
        if (lambda sets: rare_t in sets[1] and common_t in sets[0])(s2q.compositional_split([rare_t] + [common_t] * 9, s, 0.5, 0.5))
    )
    with pytest.raises(ValueError, match="validation split .* is empty after the compositional split"):
        hf_synthsample.load_dataset(
            "schema2qa", "hotels-compositional", annotated_dir=str(folder), split_seed=seed, num_examples=10,
            num_validation=10, num_test=0, comp_validation_fraction=0.5, comp_test_fraction=0.5, cache_dir=cache_dir,
        )


def test_bad_annotated_program_names_file_and_line(tmp_path):
    folder = tmp_path / "bad"
    _write_tsv(folder, "books", ["now => @org.schema.Book.Book => notify", "now => ( @org.schema.Book.Book ) filter => notify"])
    with pytest.raises(ValueError, match=r"books.tsv:2: program: expected a parameter .* \(token 6: '=>'\)"):
        s2q.read_annotated(folder)


def test_materialize_hub_folder(tmp_path, cache_dir):
    import datasets

    folder = str(shared_data("schema2qa"))
    out = hf_synthsample.materialize(
        "schema2qa", tmp_path / "hub", ["books", "annotated-compositional"], num_examples=120, annotated_dir=folder,
        cache_dir=cache_dir, plots=False,
    )
    books = datasets.load_dataset(str(out), "books")
    assert books["train"].num_rows == 120
    ann = datasets.load_dataset(str(out), "annotated-compositional")
    assert set(ann) == {"train", "validation", "test"}


def test_structure_diagnostics_against_reference():
    programs = [p for _, p in _annotated_programs()]
    d = hf_synthsample.structure_diagnostics(programs[:300], reference=programs[:300])
    assert d["template_coverage"] == 1.0 and d["uncovered_templates"] == []
    assert d["atom_divergence"] == pytest.approx(0.0, abs=1e-9) and d["compound_divergence"] == pytest.approx(0.0, abs=1e-9)
    assert d["num_templates"] == len(d["template_counts"]) and sum(d["template_counts"].values()) == 300
    assert 0 < d["atom_entropy"] < d["compound_entropy"]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as hst  # noqa: E402

_items = hst.lists(hst.lists(hst.sampled_from("abcdef"), min_size=1, max_size=4), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(_items, _items)
def test_divergences_are_bounded_and_atom_divergence_symmetric(a, b):
    da, dc = st.atom_divergence(a, b), st.compound_divergence(a, b)
    assert 0.0 <= da <= 1.0 and 0.0 <= dc <= 1.0
    assert da == pytest.approx(st.atom_divergence(b, a))
    assert st.atom_divergence(a, a) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(hst.integers(min_value=0, max_value=2**32), hst.sampled_from(["all", *s2q.DOMAIN_NAMES]))
def test_any_seed_generates_a_parsable_round_tripping_program(seed, domain):
    row = s2q.generate(random.Random(seed), domain)
    assert tt.to_string(tt.parse(row["program"])) == row["program"]
    _check_mentions(row["utterance"], row["program"])
