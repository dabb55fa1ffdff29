"""Bad input gets a clear error, before any work (issue 12, the inputs part).

Samplers on values they cannot order, configs whose parameters contradict their name, calculator
trees, sizes that cannot fit, deep nesting in every parser, unreadable files on the CLI, progress.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from datasets import Dataset

from hf_synthsample.sampling import (
    CMaxEntSampler,
    DifficultySampler,
    HomogenizeSampler,
    HybridSampler,
    UATSampler,
)
from hf_synthsample.sampling.difficulty import difficulty_bins, difficulty_rank
from hf_synthsample.sampling.homogenize import homogenize_indices


# ---------------------------------------------------------------------- 1. samplers and missing values


def _shuffled_with_missing(values, seed=0):
    """A dataset shaped like users' data: shuffled, then filtered, holding missing values."""
    ds = Dataset.from_dict({"v": values, "keep": [True] * len(values)}).shuffle(seed=seed)
    return ds.filter(lambda r: r["keep"])


@pytest.mark.parametrize("values", [[1.0, None, 2.0, 1.0, 2.0, 3.0], [1.0, float("nan"), 2.0, 1.0, 2.0, 3.0],
                                    ["a", None, "b", "a", "b", "c"], [1, None, 2, 1, 2, 3]])
def test_homogenize_refuses_missing_values(values):
    ds = _shuffled_with_missing(values)
    first = next(i for i, v in enumerate(ds["v"]) if v is None or (isinstance(v, float) and math.isnan(v)))
    with pytest.raises(ValueError, match=rf"column 'v': 1 of 6 rows have a missing value .* first at row {first}"):
        HomogenizeSampler("v").indices(ds, 4)


def test_homogenize_missing_drop_never_selects_them_nor_counts_them_as_a_level():
    ds = _shuffled_with_missing([1.0, None, float("nan"), 2.0, 1.0, 2.0, 1.0])
    s = HomogenizeSampler("v", missing="drop", seed=0)
    chosen = ds.select(s.indices(ds))  # k=None: the largest exactly uniform subset of the usable rows
    assert sorted(chosen["v"]) == [1.0, 1.0, 2.0, 2.0]
    assert s.report_.before["v"] == {1.0: 3, 2.0: 2}
    with pytest.raises(ValueError, match="k: 6 is larger than the 5 rows without a missing value"):
        s.indices(ds, 6)


def test_homogenize_string_column_works_and_numpy_api_refuses_none_and_nan():
    ds = Dataset.from_dict({"v": ["b", "a", "a", "a", "c"]}).shuffle(seed=1)
    assert sorted(ds.select(HomogenizeSampler("v").indices(ds, 3))["v"]) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="1 of 3 values are None, the first at row 1"):
        homogenize_indices({"v": np.array(["a", None, "b"], dtype=object)})
    with pytest.raises(ValueError, match="1 of 3 values are NaN, the first at row 2"):
        homogenize_indices([1.0, 2.0, float("nan")])


@pytest.mark.parametrize("values,error", [(["b", "a", "c", "d"], TypeError), ([True, False, True, False], TypeError),
                                          ([3, 1, None, 2], ValueError), ([3.0, 1.0, float("nan"), 2.0], ValueError)])
def test_difficulty_refuses_what_it_cannot_rank(values, error):
    ds = Dataset.from_dict({"v": values})
    with pytest.raises(error, match="column 'v'"):
        DifficultySampler("v", quantile=(0.5, 1.0)).indices(ds)
    with pytest.raises(error):
        difficulty_rank(values)
    with pytest.raises(error):
        difficulty_bins(values, 2)


def test_difficulty_missing_drop_ranks_the_others():
    # shuffled: rows in a new order; the missing one is never "hardest"
    ds = Dataset.from_dict({"v": [5.0, None, 1.0, 3.0, float("nan"), 4.0]}).shuffle(seed=3)
    s = DifficultySampler("v", quantile=(0.5, 1.0), missing="drop")
    assert sorted(ds.select(s.indices(ds))["v"]) == [4.0, 5.0]
    mix = DifficultySampler("v", quantile="mix", missing="drop").indices(ds, 2)
    assert sorted(ds.select(mix)["v"]) == [1.0, 5.0]
    with pytest.raises(ValueError, match="missing must be one of"):
        DifficultySampler("v", missing="ignore")


def test_uat_refuses_null_templates_and_drop_leaves_them_out():
    ds = Dataset.from_dict({"template": ["a", "a", None, "b", None]}).shuffle(seed=0)
    first = ds["template"].index(None)
    with pytest.raises(ValueError, match=rf"template_column: column 'template': 2 of 5 .* first at row {first}"):
        UATSampler().indices(ds, 2)
    s = UATSampler(missing="drop", seed=0)
    picked = ds.select(s.indices(ds, 3))["template"]
    assert None not in picked and sorted(picked) == ["a", "a", "b"]
    assert sorted(s.missing_.tolist()) == [i for i, t in enumerate(ds["template"]) if t is None]
    with pytest.raises(ValueError, match="k: 4 is larger than the 3 rows with a template"):
        s.indices(ds, 4)


@pytest.mark.parametrize("cls", [CMaxEntSampler, HybridSampler])
def test_cmaxent_and_hybrid_refuse_null_structure(cls):
    base = {"template": ["t", "t", "u", "u"], "atoms": [["a"], ["b"], ["c"], ["d"]],
            "compounds": [["x"], ["y"], ["z"], ["w"]]}
    for column, bad in (("atoms", None), ("atoms", [None]), ("compounds", None)):
        data = {k: list(v) for k, v in base.items()}
        data[column][1] = bad
        ds = Dataset.from_dict(data)
        with pytest.raises(ValueError, match=rf"column '{column}': 1 of 4 rows .* first at row 1"):
            cls().indices(ds, 2)
        s = cls(missing="drop", seed=0)
        assert 1 not in s.indices(ds, 3).tolist()
    data = dict(base, template=["t", None, "u", "u"])
    with pytest.raises(ValueError, match="column 'template'") if cls is HybridSampler else _nothing():
        cls().indices(Dataset.from_dict(data), 2)


def _nothing():
    import contextlib

    return contextlib.nullcontext()


def test_cmaxent_refuses_a_string_atoms_column():
    ds = Dataset.from_dict({"atoms": ["a", "b"], "compounds": ["x", "y"]})
    with pytest.raises(TypeError, match="column 'atoms' holds string values; it must hold lists of str"):
        CMaxEntSampler().indices(ds, 1)


# ---------------------------------------------------------------------- 2. parameters that contradict the config's name


@pytest.mark.parametrize("domain,config,override,suggested", [
    ("calculator", "dcfg", {"distribution": "t2t"}, "t2t"),
    ("calculator", "mixture", {"distribution": "bal"}, "bal"),
    ("calculator", "dcfg-homogenized-length", {"homogenize": "num_ops"}, "dcfg-homogenized-num-ops"),
    ("calculator", "dcfg-homogenized-length", {"homogenize": ()}, "dcfg"),
    ("calculator", "t2t-homogenized-length", {"distribution": "dcfg"}, "dcfg-homogenized-length"),
    ("karel", "action-only", {"program_mode": "grammar"}, None),
    ("karel", "narrow-m0.05-w0.85-uniform", {"wall_ratio": 0.5}, "narrow-io"),
    ("karel", "while-in-while", {"pattern": "while-in-if"}, "while-in-if"),
    ("scan_star", "length_31", {"max_length": 62}, "length_62"),
    ("scan_star", "jump", {"kind": "random"}, "random"),
    ("schema2qa", "hotels", {"schema_domain": "books"}, "books"),
    ("schema2qa", "hotels-compositional", {"split": "iid"}, "hotels"),
    ("schema2qa", "annotated-iid", {"split": "compositional"}, "annotated-compositional"),
])
def test_a_parameter_contradicting_the_config_name_is_an_error(domain, config, override, suggested):
    import hf_synthsample

    (field, value), = override.items()
    hint = f"use config {suggested!r} instead" if suggested else "use another config"
    with pytest.raises(ValueError, match=rf"^{field}=.* contradicts config {config!r}, whose name stands for "
                                         rf"{field}=.*; {hint}, or leave {field} out"):
        # load_dataset_builder: load_dataset's own ``split`` keyword (the split to return) would
        # shadow schema2qa's ``split`` parameter
        hf_synthsample.load_dataset_builder(domain, config, num_examples=5, **override)
    # the datasets path (a builder made directly) refuses it too
    from hf_synthsample.builders import get_builder_class

    with pytest.raises(ValueError, match="contradicts config"):
        get_builder_class(domain)(config_name=config, **override)


def test_repeating_a_named_parameter_or_changing_an_unnamed_one_is_fine():
    import hf_synthsample

    b = hf_synthsample.load_dataset_builder("calculator", "dcfg", distribution="dcfg", homogenize="length")
    assert (b.config.name, b.config.distribution, b.config.homogenize) == ("dcfg", "dcfg", ("length",))
    b = hf_synthsample.load_dataset_builder("calculator", "dcfg-homogenized-length", homogenize=["length"], eps=0.1)
    assert b.config.homogenize == ("length",)
    with pytest.raises(ValueError, match="unknown parameter 'named_parameters'"):
        hf_synthsample.load_dataset_builder("calculator", "dcfg", named_parameters=())


def test_generate_cli_refuses_a_contradicting_parameter(tmp_path, capsys):
    from hf_synthsample.cli import main

    rc = main(["generate", "calculator", "--out", str(tmp_path / "out"), "--configs", "dcfg",
               "--distribution", "t2t", "--num-examples", "10"])
    assert rc == 2
    assert "--distribution t2t contradicts config 'dcfg'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------- 3. calculator trees: one validation


@pytest.mark.parametrize("tree,error,match", [
    (("+", 1, 99), ValueError, r"leaves must be digits 0-9, got 99 at path \[2\]"),
    (("+", 1, ("-", 2, -1)), ValueError, r"got -1 at path \[2, 2\]"),
    (("^", 1, 2), ValueError, "operator must be one of"),
    (("+", 1), ValueError, "an inner node is \\(op, left, right\\), got 2 items"),
    (("+", True, 2), TypeError, "got bool True"),
    ("1+2", TypeError, "got str"),
])
def test_evaluate_and_to_string_check_trees_alike(tree, error, match):
    from hf_synthsample.domains import calculator as calc

    for f in (calc.evaluate, calc.to_string, calc.render, calc.tree_depth, calc.num_leaves):
        with pytest.raises(error, match=match):
            f(tree)


def test_calculator_deep_trees_and_long_chains_need_no_recursion():
    from hf_synthsample.domains import calculator as calc

    deep = "(" * 5000 + "7" + ")" * 5000
    assert calc.evaluate(calc.parse(deep)) == 7 and calc.to_string(calc.parse(deep)) == "7"
    chain = calc.parse("+".join(["3"] * 5000))  # a left chain 4999 levels deep
    assert calc.evaluate(chain) == 15000 % 10 and calc.tree_depth(chain) == 4999 and calc.num_leaves(chain) == 5000
    tree = 1
    for _ in range(3000):
        tree = ("-", 2, tree)  # a right chain: printed with 2999 nested parentheses
    text = calc.to_string(tree)
    assert text.count("(") == 2999 and calc.evaluate(calc.parse(text)) == calc.evaluate(tree)


# ---------------------------------------------------------------------- 5. deep nesting: the parser's error, with the depth


def _deep_inputs(n: int) -> dict:
    from hf_synthsample.structure import Node

    body: list = []
    for _ in range(n):  # built in Python: json.loads itself recurses too deep for it
        body = [{"type": "repeat", "times": {"value": 2}, "body": body}]
    node = Node("b")
    for _ in range(n):
        node = Node("a", (node,))
    return {
        "karel": ("DEF run m( " + "WHILE c( frontIsClear c) w( " * n + "move " + "w) " * n + "m)"),
        "karel_not": "DEF run m( IF c( " + "not c( " * n + "frontIsClear " + "c) " * n + "c) i( move i) m)",
        "karel_json": {"type": "run", "body": body},
        "thingtalk_tables": "now => " + "( " * n + "@T" + " )" * n + " => notify",
        "thingtalk_filters": "now => ( @T ) filter " + "( " * n + "param:a:Number == 1" + " )" * n + " => notify",
        "thingtalk_not": "now => ( @T ) filter " + "not " * n + "param:a:Number == 1 => notify",
        "thingtalk_chain": "now => ( @T ) " + "filter param:a:Number == 1 " * n + "=> notify",
        "thingtalk_values": "now => ( @T ) filter param:a:Number == " + "[ " * n + "1" + " ]" * n + " => notify",
        "sexpr": "(a " * n + "b" + ")" * n,
        "calculator_chain": "+".join(["1"] * n),
        "node": node,
    }


@pytest.mark.parametrize("n", [300, 500])
def test_deep_input_is_the_documented_parse_error_with_the_depth(n):
    from hf_synthsample import structure as st
    from hf_synthsample.domains import thingtalk as tt
    from hf_synthsample.domains.karel import dsl
    from hf_synthsample.validation import MAX_NESTING

    deep = _deep_inputs(n)
    limit = rf"nested (more than {MAX_NESTING}|{n + 1} levels deep, more than the {MAX_NESTING})"
    for key in ("karel", "karel_not"):
        with pytest.raises(dsl.KarelSyntaxError, match=limit):
            dsl.parse(deep[key])
        with pytest.raises(ValueError, match=limit):
            st.abstract_template(deep[key], "karel")
    with pytest.raises(ValueError, match=rf"program_json: {limit}"):
        dsl.from_json(deep["karel_json"])
    for key in ("thingtalk_tables", "thingtalk_filters", "thingtalk_not", "thingtalk_chain", "thingtalk_values"):
        with pytest.raises(tt.ThingTalkSyntaxError, match=limit):
            tt.parse(deep[key])
        with pytest.raises(ValueError, match=limit):
            st.structure(deep[key], "thingtalk")
    with pytest.raises(ValueError, match=limit):
        st.abstract_template(deep["sexpr"], "sexpr")
    with pytest.raises(ValueError, match=rf"the tree is nested {n} levels deep"):
        st.abstract_template(deep["calculator_chain"], "calculator")
    for f in (st.abstract_template, st.atoms, st.compounds):
        with pytest.raises(ValueError, match=rf"the tree is nested {n + 1} levels deep"):
            f(deep["node"], "sexpr")


def test_nesting_up_to_the_limit_parses_and_walks():
    from hf_synthsample import structure as st
    from hf_synthsample.domains import thingtalk as tt
    from hf_synthsample.domains.karel import dsl
    from hf_synthsample.domains.karel.interpreter import compile_program
    from hf_synthsample.validation import MAX_NESTING

    n = MAX_NESTING
    prog = dsl.parse("DEF run m( " + "REPEAT R=2 r( " * n + "move " + "r) " * n + "m)")
    compile_program(prog)
    assert dsl.from_json(dsl.to_json(prog)) == prog
    assert len(tt.render(tt.parse("now => ( @T ) " + "filter param:a:Number == 1 " * (n - 5) + "=> notify"))[0]) > 0
    shallow = MAX_NESTING // 3  # every walker of the structure module over a tree at the limit
    for program, language in ((f"{'(a ' * (n - 1)}b{')' * (n - 1)}", "sexpr"),
                              ("now => ( @T ) filter " + "( " * shallow + "param:a:Number == 1" + " )" * shallow
                               + " => notify", "thingtalk")):
        template, atoms, compounds = st.structure(program, language, max_height=3)
        assert template and atoms and compounds
        st.compound_weights([program], language)


# hypothesis: random and nested input gives the documented errors only, never a hang


_PARSERS = {}


def _parsers():
    if not _PARSERS:
        from hf_synthsample import structure as st
        from hf_synthsample.domains import calculator as calc
        from hf_synthsample.domains import thingtalk as tt
        from hf_synthsample.domains.karel import dsl

        _PARSERS.update({
            "calculator": (calc.parse, "()+-*0123456789 x"),
            "karel": (dsl.parse, None),
            "thingtalk": (tt.parse, None),
            **{f"structure:{lang}": ((lambda text, lang=lang: st.structure(text, lang, max_height=3)), None)
               for lang in st.languages()},
        })
    return _PARSERS


_KAREL_TOKENS = ["DEF", "run", "m(", "m)", "REPEAT", "R=2", "r(", "r)", "WHILE", "c(", "c)", "w(", "w)", "IF", "i(",
                 "i)", "IFELSE", "ELSE", "e(", "e)", "not", "move", "frontIsClear", "turnLeft"]
_TT_TOKENS = ["now", "=>", "notify", "(", ")", "@T", "filter", "param:a:Number", "==", "1", "and", "or", "not",
              "[", "]", ",", "of", "join", "{", "}", "sort", "asc", "aggregate", "count", "compute", '"', "x"]
_SEXPR = ["(", ")", "a", "b", "'v", "3"]


def _token_text(tokens):
    from hypothesis import strategies as hs

    return hs.lists(hs.sampled_from(tokens), max_size=60).map(" ".join)


def _nested_text(open_, middle, close, prefix="", suffix=""):
    from hypothesis import strategies as hs

    # the depths around the limit and far beyond it are always among the draws (far: hypothesis
    # raises the recursion limit by 2,000 frames while a test runs)
    depths = hs.one_of(hs.sampled_from([0, 1, 99, 100, 101, 300, 500, 3000, 6000]), hs.integers(min_value=0, max_value=700))
    return depths.map(lambda n: prefix + open_ * n + middle + close * n + suffix)


def _check_only_documented_errors(parse, text):
    try:
        parse(text)
    except (ValueError, TypeError) as err:  # the documented errors (syntax errors are ValueErrors)
        assert not isinstance(err, RecursionError)
        assert str(err)


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as hs  # noqa: E402

_FUZZ = settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


def _parsed_or_refused(parse, text, error, message):
    """``parse(text)``, or None where it raises ``error`` saying ``message`` (any other error fails the test)."""
    try:
        return parse(text)
    except error as err:
        assert message in str(err)
        return None


@_FUZZ
@given(text=hs.one_of(hs.text(max_size=80), _token_text(list("()+-*0123456789")),
                      _nested_text("(", "1", ")"), _nested_text("(", "2", ")", "1+")))
def test_property_calculator_parser(text):
    from hf_synthsample.domains import calculator as calc

    tree = _parsed_or_refused(calc.parse, text, ValueError, "cannot parse")
    if tree is None:
        return
    assert calc.parse(calc.to_string(tree)) is not None and 0 <= calc.evaluate(tree) <= 9


@_FUZZ
@given(text=hs.one_of(hs.text(max_size=80), _token_text(_KAREL_TOKENS),
                      _nested_text("WHILE c( frontIsClear c) w( ", "move", " w)", "DEF run m( ", " m)"),
                      _nested_text("not c( ", "frontIsClear", " c)", "DEF run m( IF c( ", " c) i( move i) m)")))
def test_property_karel_parser(text):
    from hf_synthsample.domains.karel import dsl

    prog = _parsed_or_refused(dsl.parse, text, dsl.KarelSyntaxError, "program:")
    if prog is None:
        return
    assert dsl.parse(dsl.to_tokens(prog)) == prog


@_FUZZ
@given(text=hs.one_of(hs.text(max_size=80), _token_text(_TT_TOKENS),
                      _nested_text("( ", "param:a:Number == 1", " )", "now => ( @T ) filter ", " => notify"),
                      _nested_text("[ ", "1", " ]", "now => ( @T ) filter param:a:Number == ", " => notify"),
                      _nested_text("( ", "@T", " )", "now => ", " => notify"),
                      _nested_text("filter param:a:Number == 1 ", "", "", "now => ( @T ) ", "=> notify")))
def test_property_thingtalk_parser(text):
    from hf_synthsample.domains import thingtalk as tt

    tree = _parsed_or_refused(tt.parse, text, tt.ThingTalkSyntaxError, "program:")
    if tree is not None:
        tt.render(tree)


@_FUZZ
@given(language=hs.sampled_from(["thingtalk", "sexpr", "scan", "scan_actions", "cogs", "karel", "calculator"]),
       text=hs.one_of(hs.text(max_size=80), _token_text(_SEXPR + _TT_TOKENS[:8] + _KAREL_TOKENS[:8]),
                      _nested_text("(a ", "b", ")"), _nested_text("(", "1", ")"),
                      hs.sampled_from([100, 101, 500, 6000]).map(lambda n: "+".join(["1"] * n))))
def test_property_structure_adapters(language, text):
    from hf_synthsample import structure as st

    try:
        st.structure(text, language, max_height=3)
    except ValueError as err:  # every adapter's parse error is a ValueError
        assert str(err)


# ---------------------------------------------------------------------- 4. sizes that cannot fit


@pytest.mark.parametrize("domain,config", [("calculator", "dcfg"), ("karel", "baseline"), ("scan_star", "random"),
                                           ("schema2qa", "all")])
@pytest.mark.parametrize("streaming", [False, True])
def test_a_size_beyond_the_block_ceiling_is_refused_at_once(domain, config, streaming):
    import hf_synthsample

    with pytest.raises(ValueError, match=r"^num_examples: 1,000,000,000,000,000 rows are .* more than the 1,000,000 "
                                         r"accepted \(hf_synthsample.builders.base.MAX_BLOCKS\)"):
        hf_synthsample.load_dataset(domain, config, num_examples=10**15, streaming=streaming)
    with pytest.raises(ValueError, match=r"^num_test: "):
        hf_synthsample.load_dataset(domain, config, num_examples=10, num_test=10**12, block_size=10)


def test_a_size_that_does_not_fit_on_disk_is_refused_before_work(tmp_path, monkeypatch):
    import hf_synthsample
    from hf_synthsample.builders import base

    monkeypatch.setattr(base, "_free_bytes", lambda path: 1_000_000)  # a 1 MB disk
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match=r"^num_examples: 200,000 rows \(num_examples=200,000\) need about .* MB of disk "
                                         r".* which has 1.0 MB free"):
        hf_synthsample.load_dataset("calculator", "dcfg", num_examples=200_000, cache_dir=str(cache))
    assert not list(cache.rglob("*.arrow"))  # nothing generated
    # small sizes are not estimated; they go through
    assert hf_synthsample.load_dataset("calculator", "dcfg", num_examples=20, cache_dir=str(cache))["train"].num_rows == 20


# ---------------------------------------------------------------------- 6. unreadable files on the CLI


@pytest.mark.parametrize("name,content,match", [
    ("data.parquet", b"hello\n", "is not a Parquet file, or a damaged one"),
    ("data.parquet", b"", r"is empty \(0 bytes\)"),
    ("data.json", b"", r"is empty \(0 bytes\)"),
    ("data.json", b'{"a": 1\n', "cannot read .* as JSON: ArrowInvalid: JSON parse error"),
    ("data.csv", b"template\n", r"holds no rows \(a header only\?\)"),
])
@pytest.mark.parametrize("command", ["sample", "homogenize"])
def test_cli_names_the_unreadable_file_and_what_is_wrong(tmp_path, capsys, name, content, match, command):
    from hf_synthsample.cli import main

    path = tmp_path / name
    path.write_bytes(content)
    args = (["sample", str(path), "--sampler", "uniform", "-k", "1"] if command == "sample"
            else ["homogenize", str(path), "--columns", "template"])
    assert main([*args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"hf-synthsample {command}: error: source:" in err and repr(str(path)) in err
    import re

    assert re.search(match, err), err
    assert not (tmp_path / "out").exists()


def test_cli_homogenize_missing_option(tmp_path, capsys):
    from hf_synthsample.cli import main

    path = tmp_path / "pool.json"
    Dataset.from_dict({"v": [1, 1, None, 2, 2, 2]}).to_json(str(path))
    assert main(["homogenize", str(path), "--columns", "v", "--out", str(tmp_path / "a")]) == 2
    assert "column 'v': 1 of 6 rows have a missing value" in capsys.readouterr().err
    assert main(["homogenize", str(path), "--columns", "v", "--missing", "drop", "--out", str(tmp_path / "b")]) == 0
    import datasets

    out = datasets.load_dataset(str(tmp_path / "b"), "homogenized", split="train")
    assert sorted(out["v"]) == [1, 1, 2, 2]


# ---------------------------------------------------------------------- 7. progress on long work, the datasets way


def _pool(n):
    return Dataset.from_dict({"program": [f"(f{i % 7} (g{i % 13} 'v{i}) h{i % 5})" for i in range(n)]})


@pytest.mark.slow
@pytest.mark.parametrize("bars_off", [False, True])
def test_long_sampling_shows_progress_by_default_unless_datasets_bars_are_off(monkeypatch, capsys, bars_off):
    import datasets.utils

    monkeypatch.setattr(datasets.utils, "are_progress_bars_disabled", lambda: bars_off)
    pool = _pool(12_000)
    UATSampler(language="sexpr", seed=0).indices(pool, 10)
    err = capsys.readouterr().err
    assert ("Parsing sexpr programs" in err) is (not bars_off)
    small = Dataset.from_dict({"atoms": [[f"a{i}"] for i in range(1_200)], "compounds": [[f"c{i}"] for i in range(1_200)]})
    CMaxEntSampler(seed=0).indices(small, 1_000)
    assert ("CMaxEnt" in capsys.readouterr().err) is (not bars_off)
    CMaxEntSampler(seed=0).indices(small, 10)  # short work: no bar
    assert "CMaxEnt" not in capsys.readouterr().err


def test_progress_true_and_false_force_it(monkeypatch, capsys):
    import datasets.utils

    monkeypatch.setattr(datasets.utils, "are_progress_bars_disabled", lambda: True)
    pool = _pool(50)
    UATSampler(language="sexpr", progress=True).indices(pool, 5)
    assert "Parsing sexpr programs" in capsys.readouterr().err
    monkeypatch.setattr(datasets.utils, "are_progress_bars_disabled", lambda: False)
    UATSampler(language="sexpr", progress=False).indices(_pool(12_000), 5)
    assert "Parsing" not in capsys.readouterr().err
    with pytest.raises(TypeError, match="progress must be None"):
        CMaxEntSampler(progress="yes")
