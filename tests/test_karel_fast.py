"""Karel's fast paths: batched candidate grids, the optional numba runner, derivation counts."""

from __future__ import annotations

import random

import numpy as np
import pytest

from conftest import karel_tasks

from hf_synthsample.domains.karel import io
from hf_synthsample.domains.karel.dsl import to_tokens
from hf_synthsample.domains.karel.interpreter import compile_program
from hf_synthsample.domains.karel.io import GridSource, IOParams, IOSamplingError, sample_io_flat
from hf_synthsample.domains.karel.programs import (
    ProgramParams,
    _Grammar,
    action_count,
    control_flow_count,
    program_size,
    sample_program,
)

_PARAMS = [
    dict(min_grid_size=6, max_grid_size=6, wall_ratio_range=(0.1, 0.1), marker_ratio_range=(0.1, 0.1),
         marker_counts="geometric"),
    dict(min_grid_size=2, max_grid_size=16, marker_counts="uniform"),
    dict(min_grid_size=3, max_grid_size=9, marker_counts="ten_minus_geometric", max_markers=4,
         wall_ratio_range=(0.1, 0.6), reject_noop=False),
    dict(distribution="narrow", min_grid_size=4, max_grid_size=7, wall_ratio=0.2, marker_ratio=0.3),
    dict(max_grid_size=5, require_coverage=False, probe_attempts=3, max_attempts=40),
]


def test_splitmix_words_and_count_tables_by_hand():
    # SplitMix64's first output for seed 0 is 0xE220A8397B1DCDAF (its reference implementation)
    assert int(io._mix(0, np.array([0], np.uint64))[0]) == 0xE220A8397B1DCDAF
    # Geom(0.5) on 1.. capped at 9 from a byte: count k on 256 / 2**k bytes, 9 on one (P = 2**-8)
    geo = np.bincount(io._count_table("geometric", 10), minlength=11)
    assert geo.tolist() == [0, 128, 64, 32, 16, 8, 4, 2, 1, 1, 0]
    ten = np.bincount(io._count_table("ten_minus_geometric", 10), minlength=11)
    assert ten.tolist() == [0, 1, 1, 2, 4, 8, 16, 32, 64, 128, 0]
    assert io._count_table("geometric", 3).max() == 3
    lo = np.array([0, 2**32 // 9 - 1, 2**32 // 9 + 1, 2**32 - 1], np.uint64)  # a word's low 32 bits
    assert io._counts(lo, "uniform", 10).tolist() == [1, 1, 2, 9]


def test_batch_layout_and_karel_cell():
    p = IOParams(min_grid_size=2, max_grid_size=5, wall_ratio_range=(1.0, 1.0), marker_ratio_range=(0.0, 0.0)).validate()
    source = GridSource(random.Random(0), p)
    rows, cols, B, M, pos, d = source.batch(50)
    S, W = source.S, source.W
    for j in range(50):
        grid = B[j * S : (j + 1) * S]
        inside = {(r + 1) * W + c + 1 for r in range(rows[j]) for c in range(cols[j])}
        # every cell a wall but Karel's, made free; off the grid (ring and beyond the size) 2
        assert [i for i in range(S) if grid[i] == 0] == [pos[j] - j * S] and pos[j] - j * S in inside
        assert all(grid[i] == (1 if i in inside else 2) for i in range(S) if i != pos[j] - j * S)
        assert 0 <= d[j] < 4 and not any(M[j * S : (j + 1) * S])


def test_grammar_counts_match_the_tree_walks():
    rng = random.Random(0)
    for params in (ProgramParams(), ProgramParams(p_control=0.6, p_not=0.5, max_control_flow=9)):
        p = params.validate()
        for _ in range(300):
            g = _Grammar(rng, p)
            prog = g.body(0)
            assert g.size == program_size(prog) and g.actions == action_count(prog)
            assert (g.moves > 0) == ("move" in to_tokens(prog))
            assert p.max_control_flow - g.control_left == control_flow_count(prog)


def _tasks(fast, params: dict, n: int, seed: int) -> list:
    old = io._fast
    io._fast = fast
    try:
        rng = random.Random(seed)
        programs = ProgramParams(require_move=True, min_actions=2).validate()
        p = IOParams(**params).validate()
        out = []
        for _ in range(n):
            prog = sample_program(rng, programs)
            try:
                out.append(sample_io_flat(compile_program(prog), rng, p))
            except IOSamplingError as e:
                out.append(str(e))
        return out
    finally:
        io._fast = old


@pytest.mark.parametrize("params", _PARAMS)
def test_numba_runner_gives_the_pure_path_rows(params):
    if io._fast is None:
        pytest.skip("numba is not installed (optional): the pure path is the only one")
    pure = _tasks(None, params, 40, 7)
    assert _tasks(io._fast, params, 40, 7) == pure
    assert any(isinstance(t, list) for t in pure) and any(isinstance(t, str) for t in pure)
    if params["max_grid_size"] > 5:
        p = IOParams(**params).validate()
        a = GridSource(random.Random(3), p).arrays(32, io._fast)
        b = GridSource(random.Random(3), p).arrays(32, None)
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_pure_path_pairs_replay_with_the_reference_interpreter(monkeypatch):
    from hf_synthsample.domains.karel.interpreter import execute
    from hf_synthsample.domains.karel.world import World

    monkeypatch.setattr(io, "_fast", None)
    rng = random.Random(11)
    programs = ProgramParams(require_move=True, min_actions=2).validate()
    for prog, examples in karel_tasks(rng, programs, IOParams(**_PARAMS[1]).validate(), 5):
        for ex in examples:
            res = execute(prog, World.from_json(ex["inpgrid_json"]))
            assert res.ok and res.world == World.from_json(ex["outgrid_json"]) and res.actions == ex["actions"]
