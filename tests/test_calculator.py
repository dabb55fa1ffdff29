"""Calculator domain: printer, parser, evaluator, salient features and the four distributions."""

from __future__ import annotations

import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_synthsample.domains import calculator as calc

digits = st.integers(min_value=0, max_value=9)
trees = st.recursive(
    digits,
    lambda children: st.tuples(st.sampled_from(calc.OPERATORS), children, children),
    max_leaves=24,
)


def paren_pairs(text: str) -> list[tuple[int, int]]:
    stack, pairs = [], []
    for i, ch in enumerate(text):
        if ch == "(":
            stack.append(i)
        elif ch == ")":
            pairs.append((stack.pop(), i))
    return pairs


@settings(max_examples=400, deadline=None)
@given(trees)
def test_printed_string_keeps_the_value(tree):
    text = calc.to_string(tree)
    # two independent oracles: our parser/evaluator, and Python's own arithmetic
    assert calc.evaluate(calc.parse(text)) == calc.evaluate(tree)
    assert eval(text) % 10 == calc.evaluate(tree)  # noqa: S307 - digits and + - * ( ) only


@settings(max_examples=400, deadline=None)
@given(trees)
def test_every_remaining_parenthesis_is_needed(tree):
    text = calc.to_string(tree)
    parsed = calc.parse(text)
    for open_, close in paren_pairs(text):
        without = text[:open_] + text[open_ + 1 : close] + text[close + 1 :]
        assert calc.parse(without) != parsed, f"removing the pair at {open_} of {text!r} keeps the parse"
    # printing is a fixed point: a minimal string prints back to itself
    assert calc.to_string(parsed) == text


@settings(max_examples=200, deadline=None)
@given(trees)
def test_rendered_features_equal_a_scan_of_the_string(tree):
    r = calc.render(tree)
    features = calc.salient_features(r.text)
    assert features == calc._row_features(r)
    assert features["num_ops"] == calc.num_leaves(tree) - 1


@pytest.mark.parametrize(
    "tree, text",
    [
        (("+", 1, ("-", 2, 3)), "1+2-3"),
        (("-", 1, ("-", 2, 3)), "1-(2-3)"),
        (("-", 1, ("+", 2, 3)), "1-(2+3)"),
        (("*", ("+", 1, 2), 3), "(1+2)*3"),
        (("*", 1, ("*", 2, 3)), "1*2*3"),
        (("-", ("-", 1, 2), 3), "1-2-3"),
        (("*", 4, ("-", ("*", 2, 3), 1)), "4*(2*3-1)"),
    ],
)
def test_printer_by_hand(tree, text):
    assert calc.to_string(tree) == text


def test_paper_example_features():
    f = calc.salient_features("(1+2)*(3-4)+5")
    # digits 1-4 at depth 1, 5 at depth 0: mean 4/5 = 0.8
    assert f == {"length": 14, "num_ops": 4, "num_parens": 2, "mean_paren_depth": 0.8, "max_paren_depth": 1}
    assert calc.answer("(1+2)*(3-4)+5") == 2  # -3 + 5 = 2
    assert calc.answer("0-7") == 3  # floor modulo


def test_rounding_rules():
    assert [calc.round_length(n) for n in (1, 2, 3, 5)] == [2, 2, 4, 6]
    assert calc.round_mean_depth(1, 4) == 0.3  # 0.25 rounds half up
    assert calc.round_mean_depth(2, 3) == 0.7
    assert calc.round_mean_depth(0, 5) == 0.0


@pytest.mark.parametrize("bad", ["", "1+", "(1+2", "1+2)", "12", "a", "1 + 2", "1/2", "()"])
def test_parse_errors_name_the_position(bad):
    with pytest.raises(ValueError, match="position"):
        calc.parse(bad)


def _t2t_mean_leaves_exact(d: int) -> float:
    leaves = [1.0]
    for k in range(1, d + 1):
        leaves.append(leaves[k - 1] + sum(leaves[:k]) / k)
    return leaves[d]


@pytest.mark.parametrize("d, published", [(1, 2), (2, 3.51), (3, 5.67), (4, 8.70), (5, 12.83), (6, 18.57)])
def test_t2t_depth_is_exact_and_leaf_counts_match(d, published):
    params = calc.CalculatorParams(t2t_min_depth=d, t2t_max_depth=d)
    rng = random.Random(d)
    leaves = []
    for _ in range(8000):
        tree = calc.sample(rng, "t2t", params)
        assert calc.tree_depth(tree) == d
        leaves.append(calc.num_leaves(tree))
    mean = statistics.fmean(leaves)
    se = statistics.pstdev(leaves) / len(leaves) ** 0.5
    assert abs(mean - _t2t_mean_leaves_exact(d)) < 4 * se + 1e-9
    # the published figures are themselves estimates (to ~0.06)
    assert abs(mean - published) < 4 * se + 0.07


def test_bal_trees_are_complete_and_balanced():
    rng = random.Random(0)
    for d in range(0, 5):
        tree = calc.sample(rng, "bal", calc.CalculatorParams(bal_min_depth=d, bal_max_depth=d))
        assert calc.tree_depth(tree) == d and calc.num_leaves(tree) == 2**d


def test_dcfg_cannot_recurse_forever():
    # p_digit far below 1/2 would be infinite in expectation without the cap
    params = calc.CalculatorParams(p_digit=0.05, max_tree_depth=4, max_length=None)
    rng = random.Random(0)
    depths = [calc.tree_depth(calc.sample(rng, "dcfg", params)) for _ in range(300)]
    assert max(depths) == 4


def test_dcfg_and_rcfg_respect_max_length():
    rng = random.Random(1)
    params = calc.CalculatorParams(max_length=9)
    for dist in ("dcfg", "rcfg"):
        for _ in range(300):
            assert len(calc.to_string(calc.sample(rng, dist, params))) <= 9


def test_rcfg_makes_runs_of_associative_operators():
    rng = random.Random(2)
    params = calc.CalculatorParams(p_digit=0.5, max_length=None, max_run=4)
    texts = [calc.to_string(calc.sample(rng, "rcfg", params)) for _ in range(2000)]
    # a run of four operands joined by one associative operator shows up as e.g. a+b+c+d
    assert any(t.count("+") >= 3 or t.count("*") >= 3 for t in texts)


def test_impossible_max_length_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(calc, "_MAX_REDRAWS", 20)
    params = calc.CalculatorParams(p_digit=1e-6, max_tree_depth=8, max_length=1)
    with pytest.raises(ValueError, match="max_length"):
        calc.sample(random.Random(0), "dcfg", params)


def test_sample_rejects_unknown_distribution():
    with pytest.raises(ValueError, match="distribution must be one of"):
        calc.sample(random.Random(0), "uniform")
