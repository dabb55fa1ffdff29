"""Structure adapters for SCAN, COGS, Karel and Calculator: hand-known trees, counts and errors."""

from __future__ import annotations

import pytest

from conftest import shared_data
from hf_synthsample.structure import abstract_template, atoms, compounds, languages, parse


def test_registered():
    assert {"scan", "scan_actions", "cogs", "karel", "calculator", "thingtalk", "sexpr"} <= set(languages())


def test_scan_trees_by_hand():
    assert parse("jump", "scan").to_sexpr() == "jump"
    assert parse("turn left", "scan").to_sexpr() == "(left turn)"
    assert parse("walk opposite right thrice after look", "scan").to_sexpr() == \
        "(after (thrice (opposite walk right)) look)"
    # templates hide the verb only; atoms and compounds keep it
    assert abstract_template("jump twice", language="scan") == abstract_template("walk twice", language="scan")
    assert atoms("jump twice", language="scan") == ["twice", "jump"]
    assert compounds("jump around left", language="scan", max_height=1) == ["(around jump left)"]


def test_scan_template_count_over_all_commands():
    """13 verb phrases (U, U D x2, U opposite/around D x4, turn D x2, turn opposite/around D x4)
    x 3 repetitions = 39 S; C = S | S and S | S after S = 39 + 2 * 39**2 = 3,081 templates."""
    from hf_synthsample.domains.scan import scan_commands

    commands = scan_commands()
    assert len({abstract_template(c, language="scan") for c, _ in commands}) == 3081


def test_scan_actions_runs():
    tree = parse("I_TURN_LEFT I_TURN_LEFT I_JUMP", "scan_actions")
    assert tree.to_sexpr() == "(actions (run I_TURN_LEFT entity) (run I_JUMP entity))"
    assert abstract_template("I_WALK I_WALK", language="scan_actions") == \
        abstract_template("I_WALK I_WALK I_WALK", language="scan_actions")


@pytest.mark.parametrize("bad", ["", "twice", "jump left left", "turn", "jump and", "jump around"])
def test_scan_errors(bad):
    with pytest.raises(ValueError, match="program"):
        parse(bad, "scan")


@pytest.mark.parametrize("language, program, tree, template", [
    ("cogs", "* sailor ( x _ 1 ) ; dust . agent ( x _ 2 , x _ 1 ) AND dust . theme ( x _ 2 , x _ 4 ) AND boy ( x _ 4 )",
     "(lf (def sailor entity) (agent dust entity entity) (theme dust entity entity) (pred boy entity))",
     "(lf (def func entity) (agent func entity entity) (theme func entity entity) (pred func entity))"),
    ("karel", "DEF run m( IFELSE c( not c( frontIsClear c) c) i( turnLeft i) ELSE e( REPEAT R=3 r( move r) e) m)",
     "(run (ifelse (not frontIsClear) (then turnLeft) (else (repeat entity move))))",
     "(run (ifelse (not property) (then func) (else (repeat entity func))))"),
])
def test_tree_and_template_by_hand(language, program, tree, template):
    assert parse(program, language).to_sexpr() == tree
    assert abstract_template(program, language=language) == template


def test_cogs_by_hand():
    assert parse("LAMBDA a . LAMBDA e . stutter . agent ( e , a )", "cogs").to_sexpr() == \
        "(lf (lambda entity entity) (agent stutter entity entity))"
    assert parse("Layla", "cogs").to_sexpr() == "(lf (name Layla))"
    assert compounds("cat . nmod . beside ( x _ 1 , x _ 3 )", language="cogs", max_height=1) == \
        ["(nmod.beside cat entity entity)"]
    for bad in ["", "eat . agent ( x _ 1", "sailor ( x _ 1 ) ; boy ( x _ 4 )", "LAMBDA . x"]:
        with pytest.raises(ValueError, match="program"):
            parse(bad, "cogs")


def test_cogs_every_real_row_parses():
    n = 0
    for split in ("train", "dev", "test"):
        with open(shared_data("cogs", f"{split}.tsv"), encoding="utf-8") as f:
            for line in f:
                parse(line.split("\t")[1], "cogs")
                n += 1
    assert n == 30155


def test_karel_errors():
    with pytest.raises(ValueError):
        parse("DEF run m( move", "karel")


def test_calculator_by_hand():
    assert parse("5+4*(2+3)", "calculator").to_sexpr() == "(+ entity (* entity (+ entity entity)))"
    assert abstract_template("(1+2)-3", language="calculator") == abstract_template("7+8-9", language="calculator")
    assert compounds("1+2", language="calculator", max_height=1) == ["(+ entity entity)"]
    with pytest.raises(ValueError, match="cannot parse"):
        parse("1+", "calculator")
