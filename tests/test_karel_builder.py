"""Karel samplers, builder, JSONL, metric: every task checked by the reference interpreter."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import datasets
import evaluate
import pytest

from conftest import karel_tasks

import hf_synthsample
from hf_synthsample.builders.karel import resample_io
from hf_synthsample.domains.karel import dsl
from hf_synthsample.domains.karel import features as F
from hf_synthsample.domains.karel.interpreter import execute, required_coverage
from hf_synthsample.domains.karel.io import GridSource, IOParams, IOSamplingError, sample_io, sample_world
from hf_synthsample.domains.karel.jsonl import read_jsonl, write_jsonl
from hf_synthsample.domains.karel.programs import (
    ProgramParams,
    ProgramSamplingError,
    has_pattern,
    sample_program,
)
from hf_synthsample.domains.karel.world import World
from hf_synthsample.metrics import metric_path

SMALL = dict(max_grid_size=8, num_test=6, seed=3)


def check_task(row: dict, num_shown: int = 5, coverage: bool = True) -> None:
    """The row's program, run by the reference interpreter, gives every recorded output; the shown
    inputs cover every branch; no pair is a no-op; the salient columns match a direct recomputation."""
    prog = dsl.parse(row["program_tokens"])
    assert dsl.from_json(json.loads(row["program_json"])) == prog
    covered = set()
    inputs = []
    for i, ex in enumerate(row["examples"]):
        assert ex["example_index"] == i
        inp, out = World.from_json(ex["inpgrid_json"]), World.from_json(ex["outgrid_json"])
        res = execute(prog, inp)
        assert res.status == "ok"
        assert res.world.to_json() == ex["outgrid_json"]
        assert res.actions == ex["actions"]
        assert not out.same_state(inp)
        if i < num_shown:
            covered |= res.coverage
            inputs.append(inp)
    assert covered == required_coverage(prog) or not coverage
    # salient variables, recomputed from their definitions (exact fractions, halves rounded up)
    def nearest(x: Fraction, step: Fraction) -> float:
        return float(math.floor(x / step + Fraction(1, 2)) * step)

    toks = row["program_tokens"]
    n_control = sum(t in ("REPEAT", "WHILE", "IF", "IFELSE") for t in toks)
    n_actions = sum(t in dsl.ACTIONS for t in toks)
    assert row["program_size"] == len(toks)
    assert row["num_control_flow"] == n_control
    assert row["control_flow_ratio"] == nearest(Fraction(n_control, n_control + n_actions), Fraction(1, 20))
    depth = best = 0
    for t in toks:  # nesting depth from the bracket tokens of control bodies
        if t in ("r(", "w(", "i(", "e("):
            depth += 1
            best = max(best, depth)
        elif t in ("r)", "w)", "i)", "e)"):
            depth -= 1
    assert row["nesting_depth"] == best
    cells = [w.rows * w.cols for w in inputs]
    k = len(inputs)
    assert row["num_grids"] == k == num_shown
    assert row["grid_size"] == nearest(Fraction(sum(w.rows + w.cols for w in inputs), 2 * k), Fraction(1))
    wr = sum(Fraction(len(w.walls), c) for w, c in zip(inputs, cells)) / k
    mr = sum(Fraction(len(w.markers), c) for w, c in zip(inputs, cells)) / k
    assert row["wall_ratio"] == nearest(wr, Fraction(1, 20))
    assert row["marker_ratio"] == nearest(mr, Fraction(1, 20))
    n_marker_cells = sum(len(w.markers) for w in inputs)
    mc = Fraction(sum(sum(w.markers.values()) for w in inputs), n_marker_cells) if n_marker_cells else Fraction(0)
    assert row["marker_count"] == nearest(mc, Fraction(1, 2))


# ------------------------------------------------------------------------------ samplers
def test_program_sampler_controls():
    rng = random.Random(0)
    p = ProgramParams(min_size=10, max_size=30, max_control_flow=2, max_nesting=1, constructs=("while", "if")).validate()
    for _ in range(200):
        prog = sample_program(rng, p)
        toks = dsl.to_tokens(prog)
        assert 10 <= len(toks) <= 30
        assert "REPEAT" not in toks and "IFELSE" not in toks
        assert sum(t in ("WHILE", "IF") for t in toks) <= 2
    p = ProgramParams(pattern="while-in-if", max_size=60).validate()
    assert all(has_pattern(sample_program(rng, p), "while-in-if") for _ in range(20))
    p = ProgramParams(mode="actions", min_actions=1, max_actions=20).validate()
    lengths = {len(sample_program(rng, p)) for _ in range(500)}
    assert lengths == set(range(1, 21))
    reps = {s[1] for _ in range(300) for s in sample_program(rng, ProgramParams(p_control=0.6).validate())
            if isinstance(s, tuple) and s[0] == "repeat"}
    assert reps == set(range(2, 11))


def test_has_pattern_hand_cases():
    prog = dsl.parse("DEF run m( IF c( markersPresent c) i( REPEAT R=2 r( WHILE c( frontIsClear c) w( move w) r) i) m)")
    assert has_pattern(prog, "while-in-if") and has_pattern(prog, "repeat-in-if")
    assert not has_pattern(prog, "while-in-while") and not has_pattern(prog, "if-in-while")


def test_impossible_program_constraints():
    with pytest.raises(ValueError, match="max_size"):
        ProgramParams(min_size=20, max_size=10).validate()
    with pytest.raises(ValueError, match="pattern"):
        ProgramParams(pattern="while-in-while", constructs=("if",)).validate()
    with pytest.raises(ProgramSamplingError, match="no program met"):
        sample_program(random.Random(0), ProgramParams(min_size=38, max_size=38, max_control_flow=0).validate(),
                       max_draws=200)


def test_narrow_grids_have_exact_counts():
    p = IOParams(distribution="narrow", min_grid_size=10, max_grid_size=10, wall_ratio=0.25, marker_ratio=0.05,
                 marker_counts="ten_minus_geometric").validate()
    source = GridSource(random.Random(1), p)
    rows, cols, B, M, pos, d = source.batch(20)
    for j in range(20):
        Bj, Mj = B[j * source.S : (j + 1) * source.S], M[j * source.S : (j + 1) * source.S]
        assert Bj.count(1) == 25 and sum(1 for m in Mj if m) == 5 and B[pos[j]] == 0 and pos[j] // source.S == j
        assert all(1 <= m <= 9 for m in Mj if m)


def test_io_sampling_errors_are_clear():
    never = dsl.parse("DEF run m( pickMarker pickMarker m)")
    no_markers = dict(marker_ratio_range=(0.0, 0.0), max_grid_size=6)
    with pytest.raises(IOSamplingError, match="max_attempts"):
        sample_io(never, random.Random(0), IOParams(**no_markers, max_attempts=50, probe_attempts=60))
    with pytest.raises(IOSamplingError, match="probe_attempts"):
        sample_io(never, random.Random(0), IOParams(**no_markers))
    # the IF after the loop always finds the front blocked: its true branch is never taken
    uncoverable = dsl.parse("DEF run m( WHILE c( frontIsClear c) w( move w) IF c( frontIsClear c) i( turnLeft i) m)")
    with pytest.raises(IOSamplingError, match="never taken"):
        sample_io(uncoverable, random.Random(0), IOParams(max_grid_size=6))
    assert len(sample_io(uncoverable, random.Random(0), IOParams(max_grid_size=6, require_coverage=False))) == 6
    with pytest.raises(ValueError, match="distribution must be one of"):
        IOParams(distribution="gaussian")
    with pytest.raises(ValueError, match="wall_ratio_range"):
        IOParams(wall_ratio_range=(0.5, 0.2)).validate()


# ------------------------------------------------------------------------------ builder
@pytest.mark.parametrize("config", ["baseline", "uniform-io", "narrow-m0.25-w0.65-geometric", "action-only",
                                    "while-in-if"])
def test_every_task_executes_and_covers(config, cache_dir):
    ds = hf_synthsample.load_dataset("karel", config, num_examples=12, cache_dir=cache_dir, **SMALL)
    for split in ("train", "test"):
        for row in ds[split]:
            check_task(row)
            if config == "while-in-if":
                assert has_pattern(dsl.parse(row["program_tokens"]), "while-in-if")
    train = {tuple(t) for t in ds["train"]["program_tokens"]}
    test = {tuple(t) for t in ds["test"]["program_tokens"]}
    assert not train & test and len(train) == 12 and len(test) == 6


def test_num_proc_does_not_change_rows(tmp_path):
    kw = dict(num_examples=8, block_size=3, max_grid_size=6, seed=5)
    one = hf_synthsample.load_dataset("karel", "uniform-io", cache_dir=str(tmp_path / "a"), **kw)["train"]
    two = hf_synthsample.load_dataset("karel", "uniform-io", cache_dir=str(tmp_path / "b"), num_proc=2, **kw)["train"]
    assert one.to_list() == two.to_list()
    assert one._fingerprint == two._fingerprint


def test_homogenized_config_and_tensors(cache_dir):
    ds = hf_synthsample.load_dataset("karel", "baseline-homogenized-nesting-depth", num_examples=10,
                                     homogenize_pilot=30, max_grid_size=8, tensors=True, cache_dir=cache_dir)
    assert hf_synthsample.homogenization_report(ds["train"]) is not None
    row = ds["train"][0]
    for ex in row["examples"]:
        assert World.from_tensor(ex["inpgrid_tensor"]) == World.from_json(ex["inpgrid_json"])
    check_task(row)


def test_builder_bad_input(cache_dir):
    with pytest.raises(ValueError, match="does not exist"):
        hf_synthsample.load_dataset("karel", "no-such-config")
    with pytest.raises(ValueError, match="unknown parameter"):
        hf_synthsample.load_dataset("karel", "baseline", grid=3)
    with pytest.raises(ValueError, match="max_grid_size"):
        hf_synthsample.load_dataset("karel", "baseline", min_grid_size=9, max_grid_size=4)
    with pytest.raises(ValueError, match="tensors"):
        hf_synthsample.load_dataset("karel", "baseline", tensors=True, max_grid_size=18)
    with pytest.raises(ValueError, match="homogenize"):
        hf_synthsample.load_dataset("karel", "baseline", homogenize="colour")
    # the fields ProgramParams / IOParams declare are checked under the config's names
    with pytest.raises(ValueError, match=r"io_distribution must be one of \['uniform', 'narrow'\]"):
        hf_synthsample.load_dataset("karel", "baseline", io_distribution="gaussian")
    with pytest.raises(ValueError, match=r"program_mode must be one of \['grammar', 'actions'\]"):
        hf_synthsample.load_dataset("karel", "baseline", program_mode="random")
    with pytest.raises(TypeError, match="require_coverage must be a bool"):
        hf_synthsample.load_dataset("karel", "baseline", require_coverage="yes")
    with pytest.raises(ValueError, match=r"marker_ratio_range\[1\] must be >= 0.5"):
        hf_synthsample.load_dataset("karel", "baseline", marker_ratio_range=(0.5, 0.2))
    # a program space smaller than the split: 5 one-action programs for 10 rows
    with pytest.raises(ValueError, match="program space"):
        hf_synthsample.load_dataset("karel", "action-only", num_examples=10, max_actions=1)
    # found only while generating (every run exceeds the tick budget): the cause names the parameter
    with pytest.raises(datasets.exceptions.DatasetGenerationError) as err:
        hf_synthsample.load_dataset("karel", "action-only", num_examples=1, min_actions=2, max_actions=3,
                                    tick_budget=1, max_attempts=5, max_programs=50, cache_dir=cache_dir)
    assert isinstance(err.value.__cause__, ValueError) and "max_programs" in str(err.value.__cause__)


def test_resample_io_keeps_programs(cache_dir):
    ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=6, split="train", cache_dir=cache_dir, **SMALL)
    kw = {"seed": 1, "on_failure": "drop", "io_params": IOParams(min_grid_size=4, max_grid_size=5,
                                                                 wall_ratio_range=(0.05, 0.15),
                                                                 marker_ratio_range=(0.0, 0.3))}
    one = ds.map(resample_io, batched=True, batch_size=2, fn_kwargs=kw)
    two = ds.map(resample_io, batched=True, batch_size=4, fn_kwargs=kw)
    assert one.to_list() == two.to_list()
    kept = [ds["guid"].index(g) for g in one["guid"]]  # rows whose program got a valid set, in order
    assert len(kept) >= 3 and kept == sorted(kept)
    assert one["program_tokens"] == [ds["program_tokens"][i] for i in kept]
    assert all(one["examples"][j] != ds["examples"][i] for j, i in enumerate(kept))
    for row in one:
        check_task(row)
        assert all(4 <= ex["inpgrid_json"]["rows"] <= 5 for ex in row["examples"])
    # a distribution no program can run on: rows are dropped, or the error names the cause
    hopeless = {"seed": 1, "tick_budget": 1, "on_failure": "drop"}
    assert ds.map(resample_io, batched=True, fn_kwargs=hopeless).num_rows == 0
    with pytest.raises(IOSamplingError):
        ds.map(resample_io, batched=True, fn_kwargs={**hopeless, "on_failure": "raise"})


def test_jsonl_round_trip_and_errors(tmp_path, cache_dir):
    ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=4, split="train", cache_dir=cache_dir, **SMALL)
    path = write_jsonl(ds, tmp_path / "tasks.jsonl")
    line = json.loads(open(path).readline())
    assert sorted(line) == ["examples", "guid", "program_json", "program_tokens"]
    assert sorted(line["examples"][0]) == ["actions", "example_index", "inpgrid_json", "inpgrid_tensor",
                                           "outgrid_json", "outgrid_tensor"]
    back = read_jsonl(path, cache_dir=cache_dir)
    assert back.features == ds.features and back.to_list() == ds.to_list()
    write_jsonl(ds.select(range(2)), path, tensors=False)  # a changed file is read again, not taken from cache
    assert read_jsonl(path, cache_dir=cache_dir).to_list() == ds.select(range(2)).to_list()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(open(path).readline() + '{"guid": "x", "examples": [], "program_tokens": ["DEF", "run"]}\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        read_jsonl(bad, cache_dir=cache_dir)
    with pytest.raises(ValueError, match="no such file"):
        read_jsonl(tmp_path / "missing.jsonl")


def test_materialize_hub_folder(tmp_path, cache_dir):
    out = hf_synthsample.materialize("karel", tmp_path / "karel", ["baseline", "action-only"], num_examples=5,
                                     max_grid_size=6, cache_dir=cache_dir, plots=False)
    ds = datasets.load_dataset(str(out), "action-only")
    assert ds["train"].num_rows == 5
    check_task(ds["train"][0])
    assert "program_size" in (out / "README.md").read_text()


# ------------------------------------------------------------------------------ metric
def test_execution_metric_hand_computed(cache_dir):
    w = World(1, 3, (0, 0, 1))
    move_twice = {"inpgrid_json": w.to_json(), "outgrid_json": World(1, 3, (0, 2, 1)).to_json()}
    held_out = {"inpgrid_json": World(1, 4, (0, 0, 1)).to_json(), "outgrid_json": World(1, 4, (0, 2, 1)).to_json()}
    task = [move_twice, move_twice, held_out]
    ref = "DEF run m( move move m)"
    preds = [
        ref,  # exact
        "DEF run m( REPEAT R=2 r( move r) m)",  # same behaviour everywhere
        "DEF run m( WHILE c( frontIsClear c) w( move w) m)",  # right on the shown pairs only
        "DEF run m( move move move m)",  # crashes
        "DEF run m( move",  # unparsable
    ]
    metric = evaluate.load(metric_path("karel_execution"))
    out = metric.compute(predictions=preds, references=[ref] * 5, examples=[task] * 5, num_shown=2)
    assert out == {"exact_match": 0.2, "semantic_accuracy": 0.6, "generalization_accuracy": 0.4, "num_unparsable": 1}
    with pytest.raises(ValueError, match="examples"):
        metric.compute(predictions=[ref], references=[ref])


def test_exact_dedup_across_blocks(cache_dir):
    kw = dict(num_examples=20, num_test=6, block_size=5, max_grid_size=5, cache_dir=cache_dir)
    # 155 action-only programs of 1..3 actions; 20 train rows in 4 blocks and 6 test rows
    ds = hf_synthsample.load_dataset("karel", "action-only", dedup="exact", max_actions=3, **kw)
    programs = [tuple(t) for split in ("train", "test") for t in ds[split]["program_tokens"]]
    assert len(set(programs)) == len(programs) == 26
    # 30 programs of 1..2 actions: dedup="split" keeps splits apart, but blocks of a split can repeat
    loose = hf_synthsample.load_dataset("karel", "action-only", max_actions=2, **kw)
    train = [tuple(t) for t in loose["train"]["program_tokens"]]
    assert not set(train) & {tuple(t) for t in loose["test"]["program_tokens"]}
    assert len(set(train)) < len(train)


@pytest.mark.parametrize("sizes", [(2, 6), (12, 16), (20, 24)])  # plain-Python and numpy formatting paths
def test_sample_io_pairs_replay_on_every_grid_size(sizes):
    rng = random.Random(sum(sizes))
    p = IOParams(min_grid_size=sizes[0], max_grid_size=sizes[1], marker_ratio_range=(0.0, 0.5),
                 wall_ratio_range=(0.0, 0.3)).validate()
    programs = ProgramParams(require_move=True, min_actions=2).validate()
    for prog, examples in karel_tasks(rng, programs, p, 4):
        row = {"program_tokens": dsl.to_tokens(prog), "program_json": json.dumps(dsl.to_json(prog)),
               "examples": examples}
        row.update(F.program_features(prog))
        row.update(F.input_features([F.world_stats(World.from_json(e["inpgrid_json"])) for e in examples[:5]]))
        check_task(row)
        assert all(sizes[0] <= e["inpgrid_json"]["rows"] <= sizes[1] for e in examples)


@pytest.mark.parametrize("side", [6, 14])
def test_uniform_cells_follow_their_ratios(side):
    p = IOParams(min_grid_size=side, max_grid_size=side, wall_ratio_range=(0.3, 0.3), marker_ratio_range=(0.2, 0.2),
                 marker_counts="uniform").validate()
    rng = random.Random(side)
    walls = free = marked = markers = 0
    for _ in range(3000 // side):
        w = sample_world(rng, p)
        hero = w.hero[:2]
        cells = side * side - 1  # Karel's cell is made free; every other cell is independent
        walls += len(w.walls)
        free += cells - len(w.walls)
        marked += len(w.markers) - (hero in w.markers)
        markers += sum(n for k, n in w.markers.items() if k != hero)
    n = walls + free
    assert abs(walls / n - 0.3) < 4 * (0.21 / n) ** 0.5
    assert abs(marked / free - 0.2) < 4 * (0.16 / free) ** 0.5
    assert abs(markers / marked - 5) < 0.25  # uniform 1..9


def test_limit_shown(cache_dir):
    from hf_synthsample.builders.karel import limit_shown

    ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=4, split="train", cache_dir=cache_dir, **SMALL)
    for k in (1, 3, 5):
        out = ds.map(limit_shown, batched=True, fn_kwargs={"num_grids": k})
        for row, orig in zip(out, ds):
            assert [e["inpgrid_json"] for e in row["examples"]] == (
                [e["inpgrid_json"] for e in orig["examples"][:k]] + [orig["examples"][5]["inpgrid_json"]])
            check_task(row, num_shown=k, coverage=k == 5)  # fewer shown grids need not cover every branch
    with pytest.raises(ValueError, match="num_grids"):
        ds.map(limit_shown, batched=True, fn_kwargs={"num_grids": 6})


@pytest.mark.parametrize("module", ["hf_synthsample.builders.karel", "hf_synthsample.domains.karel.jsonl"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
