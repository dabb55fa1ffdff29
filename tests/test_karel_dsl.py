"""Karel DSL, worlds and interpreter: hand-worked cases and property tests."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_synthsample.domains.karel import dsl
from hf_synthsample.domains.karel.interpreter import (
    compile_program,
    coverage_bits_to_set,
    execute,
    execute_fast,
    from_flat,
    required_coverage,
    to_flat,
)
from hf_synthsample.domains.karel.io import IOParams, sample_world
from hf_synthsample.domains.karel.programs import ProgramParams, program_size, sample_program
from hf_synthsample.domains.karel.world import World


def run_both(src: str, world: World, **kw):
    """Run with the reference and the compiled interpreter; they must agree."""
    prog = dsl.parse(src)
    ref = execute(prog, world, **kw)
    fast = execute_fast(prog, world, **kw)
    assert fast == ref
    return ref


def P(body: str) -> str:
    return f"DEF run m( {body} m)"


def test_vocabulary_has_52_tokens():
    assert len(dsl.TOKENS) == 52 == len(set(dsl.TOKENS))


# ------------------------------------------------------------------------------ hand-worked cases
def test_actions_move_turn_pick_put():
    w = World(3, 3, (0, 0, 0), markers={(1, 0): 2})  # facing north at the bottom-left corner
    res = run_both(P("move pickMarker turnRight move putMarker putMarker turnLeft turnLeft"), w)
    assert res.status == "ok" and res.reason is None
    assert res.world.hero == (1, 1, 3)  # north -> (1,0); right -> east, move -> (1,1); two lefts -> west
    assert res.world.markers == {(1, 0): 1, (1, 1): 2}
    assert res.ticks == 8
    assert res.actions == ["move", "pickMarker", "turnRight", "move", "putMarker", "putMarker", "turnLeft", "turnLeft"]


def test_repeat_counts_a_tick_per_iteration():
    res = run_both(P("REPEAT R=3 r( turnLeft r)"), World(1, 1, (0, 0, 0)))
    assert res.world.hero == (0, 0, 1)  # three lefts from north = east
    assert res.ticks == 6  # 3 iterations + 3 actions


def test_while_checks_until_false():
    res = run_both(P("WHILE c( frontIsClear c) w( move w)"), World(1, 4, (0, 0, 1)))
    assert res.world.hero == (0, 3, 1) and res.ticks == 7  # 4 checks + 3 moves
    assert res.coverage == {(0, True), (0, False)}


def test_if_taken_and_not_taken():
    w = World(2, 2, (0, 0, 0), markers={(0, 0): 1})
    taken = run_both(P("IF c( markersPresent c) i( pickMarker i)"), w)
    assert taken.world.markers == {} and taken.ticks == 2 and taken.coverage == {(0, True)}
    skipped = run_both(P("IF c( noMarkersPresent c) i( pickMarker i)"), w)
    assert skipped.world.markers == {(0, 0): 1} and skipped.ticks == 1 and skipped.coverage == {(0, False)}


def test_ifelse_and_not_and_side_conditions():
    w = World(2, 2, (0, 0, 0))  # facing north at bottom-left: left is off the grid, right is clear
    res = run_both(P("IFELSE c( leftIsClear c) i( turnLeft i) ELSE e( turnRight e)"), w)
    assert res.world.hero == (0, 0, 1) and res.coverage == {(0, False)}
    res = run_both(P("IFELSE c( not c( rightIsClear c) c) i( turnLeft i) ELSE e( putMarker e)"), w)
    assert res.world.markers == {(0, 0): 1} and res.ticks == 2  # `not` is one check


def test_nested_branch_points_are_numbered_in_program_order():
    prog = dsl.parse(P("WHILE c( frontIsClear c) w( IF c( markersPresent c) i( pickMarker i) move w) "
                       "IFELSE c( leftIsClear c) i( turnLeft i) ELSE e( turnRight e)"))
    assert required_coverage(prog) == {(i, o) for i in range(3) for o in (True, False)}
    res = execute(prog, World(1, 3, (0, 0, 1), markers={(0, 1): 1}))
    assert res.status == "ok" and res.world.markers == {}
    assert res.coverage == {(0, True), (0, False), (1, True), (1, False), (2, False)}


@pytest.mark.parametrize(
    "body, world, reason",
    [
        ("move", World(2, 2, (0, 0, 2)), "out_of_bounds"),
        ("move", World(1, 2, (0, 0, 1), walls={(0, 1)}), "hit_wall"),
        ("pickMarker", World(1, 1, (0, 0, 0)), "no_marker"),
        ("putMarker putMarker", World(1, 1, (0, 0, 0), markers={(0, 0): 9}), "marker_overflow"),
    ],
)
def test_every_crash_reason(body, world, reason):
    res = run_both(P("turnLeft turnRight " + body), world)
    assert (res.status, res.reason) == ("crashed", reason)
    assert res.world.crashed
    assert res.world.same_state(world) or reason == "marker_overflow"  # the failing step is not performed
    assert res.actions[:2] == ["turnLeft", "turnRight"]


def test_marker_maximum_is_configurable():
    res = run_both(P("putMarker putMarker"), World(1, 1, (0, 0, 0)), max_markers=1)
    assert res.reason == "marker_overflow" and res.world.markers == {(0, 0): 1}


def test_tick_budget_is_exact():
    w = World(1, 1, (0, 0, 0))
    assert run_both(P("turnLeft turnLeft turnLeft"), w, tick_budget=3).status == "ok"
    res = run_both(P("turnLeft turnLeft turnLeft"), w, tick_budget=2)
    assert (res.status, res.reason, res.ticks, len(res.actions)) == ("timeout", "tick_budget", 3, 2)
    res = run_both(P("WHILE c( noMarkersPresent c) w( turnLeft w)"), w)  # never ends on its own
    assert res.status == "timeout" and res.ticks == 201


def test_bad_limits():
    with pytest.raises(ValueError, match="tick_budget"):
        execute(dsl.parse(P("move")), World(1, 1, (0, 0, 0)), tick_budget=-1)
    with pytest.raises(ValueError, match="max_markers"):
        execute(dsl.parse(P("move")), World(1, 1, (0, 0, 0)), max_markers=0)


# ------------------------------------------------------------------------------ parse errors
@pytest.mark.parametrize(
    "src, position",
    [
        ("DEF run m( move", 4),
        ("DEF run m( jump m)", 3),
        ("DEF run m( REPEAT R=25 r( move r) m)", 4),
        ("DEF run m( IF c( move c) i( move i) m)", 5),
        ("DEF run m( move m) move", 5),
        ("run m( move m)", 0),
        ("DEF run m( IFELSE c( markersPresent c) i( move i) e( move e) m)", 10),
    ],
)
def test_parse_errors_name_the_token(src, position):
    with pytest.raises(dsl.KarelSyntaxError) as err:
        dsl.parse(src)
    assert err.value.position == position
    assert f"at token {position}" in str(err.value)


def test_program_json_errors():
    with pytest.raises(ValueError, match="program_json"):
        dsl.from_json({"type": "run", "body": [{"type": "fly"}]})
    with pytest.raises(ValueError, match="program_json"):
        dsl.from_json({"type": "run", "body": [{"type": "repeat", "times": {"value": 40}, "body": []}]})
    with pytest.raises(TypeError, match="program"):
        dsl.parse(42)


def test_malformed_grid_json():
    good = {"rows": 2, "cols": 2, "hero": "0:0:north", "blocked": "", "markers": ""}
    World.from_json(good)
    for bad, field in [
        ({**good, "rows": 0}, "rows"),
        ({**good, "hero": "0:0:up"}, "hero"),
        ({**good, "hero": "5:0:north"}, "off the"),
        ({**good, "blocked": "0:0"}, "stands on a wall"),
        ({**good, "markers": "1:1"}, "markers"),
        ({**good, "blocked": 3}, "blocked"),
    ]:
        with pytest.raises(ValueError, match=field):
            World.from_json(bad)
    with pytest.raises(ValueError, match="not valid JSON"):
        World.from_json("{rows")
    with pytest.raises(ValueError, match="16x16"):
        World(17, 2, (0, 0, 0)).to_tensor()


def test_tensor_layout():
    w = World(2, 3, (1, 2, 3), walls={(0, 1)}, markers={(0, 0): 10})
    t = w.to_tensor()
    assert t.shape == (16, 18, 18) and t[3, 2, 3] == 1 and t[4, 1, 2] == 1 and t[15, 1, 1] == 1
    assert t[5].sum() == 2 * 5 + 2 * 2  # the frame ring around a 2x3 grid (4x5 outline)
    first = w.to_sparse_tensor().split()[0]
    assert first == f"{3 * 324 + 2 * 18 + 3}:1.0"


# ------------------------------------------------------------------------------ properties
_PROGRAM_PARAMS = ProgramParams(max_size=60, max_control_flow=6, p_control=0.4, repeat_min=0, repeat_max=19).validate()
_IO_PARAMS = IOParams(max_grid_size=16, min_grid_size=1).validate()


@pytest.mark.parametrize("src, size", [
    ("DEF run m( move m)", 5),  # counted by hand: DEF, run, m(, move, m)
    ("DEF run m( REPEAT R=3 r( move turnLeft r) m)", 10),
    ("DEF run m( IFELSE c( frontIsClear c) i( move i) ELSE e( turnRight e) m)", 15),
    ("DEF run m( WHILE c( not c( markersPresent c) c) w( putMarker w) m)", 14),
])
def test_program_size_counts_tokens_by_hand(src, size):
    assert program_size(dsl.parse(src)) == size


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32))
def test_print_parse_and_json_round_trips(seed):
    prog = sample_program(random.Random(seed), _PROGRAM_PARAMS)
    tokens = dsl.to_tokens(prog)
    assert dsl.parse(tokens) == prog
    assert dsl.to_tokens(dsl.parse(" ".join(tokens))) == tokens
    assert dsl.from_json(dsl.to_json(prog)) == prog


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32))
def test_world_json_and_tensor_round_trips(seed):
    w = sample_world(random.Random(seed), _IO_PARAMS)
    assert World.from_json(w.to_json()) == w
    assert World.from_tensor(w.to_tensor()) == w
    assert World.from_tensor(w.to_sparse_tensor()) == w
    assert np.array_equal(World.from_tensor(w.to_sparse_tensor()).to_tensor(), w.to_tensor())


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 300))
def test_interpreters_agree_and_respect_the_budget(seed, budget):
    rng = random.Random(seed)
    prog = sample_program(rng, _PROGRAM_PARAMS)
    compiled = compile_program(prog)
    for _ in range(3):
        w = sample_world(rng, _IO_PARAMS)
        ref = execute(prog, w, tick_budget=budget)
        assert execute_fast(compiled, w, tick_budget=budget) == ref
        assert ref.ticks <= budget + 1
        assert (ref.ticks == budget + 1) == (ref.status == "timeout")
        assert ref.coverage <= required_coverage(prog)
        # the sampler's early cycle exit changes nothing but the ticks counted for a timeout
        B, M, pos, d, D = to_flat(w)
        code, pos2, d2, ticks, cov = compiled.run(B, M, pos, d, budget, 10, D, [].append, True)
        assert (code == 3) == (ref.status == "timeout")
        if code != 3:
            assert from_flat(w, M, pos2, d2, code != 0) == ref.world and ticks == ref.ticks
            assert coverage_bits_to_set(cov, compiled.num_branch_points) == ref.coverage


def test_cycle_exit_on_a_hand_case():
    prog = compile_program(dsl.parse(P("WHILE c( noMarkersPresent c) w( turnLeft w)")))
    B, M, pos, d, D = to_flat(World(1, 1, (0, 0, 0)))
    code, _, _, ticks, _ = prog.run(B, M, pos, d, 200, 10, D, [].append, True)
    assert code == 3 and ticks == 9  # the 5th test meets the state of the 1st (4 turns later)


@pytest.mark.parametrize("module", ["dsl", "world", "interpreter", "programs", "io", "features"])
def test_docstring_examples(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"hf_synthsample.domains.karel.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
