"""The salient variables of a Karel task (Shin et al. 2019, section 4.1), one column each.

Program-space variables come from the program, input-space ones from the *shown* input grids (what
a model is given); :data:`SALIENT_VARIABLES` describes each. Rounding (exact, halves up) keeps
every variable finite-valued, as homogenization needs.

Example:
    >>> from hf_synthsample.domains.karel.dsl import parse
    >>> program_features(parse("DEF run m( WHILE c( frontIsClear c) w( move w) m)"))
    {'program_size': 11, 'num_control_flow': 1, 'control_flow_ratio': 0.5, 'nesting_depth': 1}
    >>> input_features([(2, 4, 1, 2, 3)])  # rows, cols, walls, marker cells, markers
    {'grid_size': 3, 'marker_ratio': 0.25, 'wall_ratio': 0.15, 'marker_count': 1.5, 'num_grids': 1}
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

from .dsl import Body
from .programs import action_count, control_flow_count, nesting_depth, program_size

__all__ = ["SALIENT_VARIABLES", "PROGRAM_VARIABLES", "INPUT_VARIABLES", "round_to", "program_features",
           "input_features", "world_stats"]

# num_control_flow is what the paper calls its "control flow ratio" (a count)
PROGRAM_VARIABLES: dict[str, str] = {
    "program_size": "program size in tokens",
    "num_control_flow": "number of control structures (repeat, while, if, ifelse)",
    "control_flow_ratio": "control structures / statements, to the nearest 0.05",
    "nesting_depth": "deepest nesting of control structures",
}
INPUT_VARIABLES: dict[str, str] = {
    "grid_size": "mean (rows + cols) / 2 of the shown input grids, to the nearest integer",
    "marker_ratio": "mean fraction of cells with >= 1 marker in the shown inputs, to the nearest 0.05",
    "wall_ratio": "mean fraction of wall cells in the shown inputs, to the nearest 0.05",
    "marker_count": "markers per marker cell over the shown inputs, to the nearest 0.5",
    "num_grids": "number of shown I/O pairs",
}
SALIENT_VARIABLES: dict[str, str] = {**PROGRAM_VARIABLES, **INPUT_VARIABLES}


def round_to(x: float | Fraction, step: float) -> float:
    """``x`` to the nearest multiple of ``step``, exact halves up (``round_to(Fraction(1, 8), 0.05) == 0.15``).

    Pass a ``Fraction`` for an exact result: floats such as ``0.075`` sit a hair below their half."""
    k = Fraction(1) / Fraction(step).limit_denominator(1000)
    return float(math.floor(Fraction(x) * k + Fraction(1, 2)) / k)


def program_features(program: Body) -> dict:
    """The program-space salient variables of ``program``."""
    n_control = control_flow_count(program)
    statements = n_control + action_count(program)
    return {
        "program_size": program_size(program),
        "num_control_flow": n_control,
        "control_flow_ratio": round_to(Fraction(n_control, statements), 0.05) if statements else 0.0,
        "nesting_depth": nesting_depth(program),
    }


def world_stats(world) -> tuple:
    """``(rows, cols, walls, marker cells, markers)`` of a :class:`~hf_synthsample.domains.karel.world.World`."""
    return (world.rows, world.cols, len(world.walls), len(world.markers), sum(world.markers.values()))


def input_features(stats: Sequence[tuple]) -> dict:
    """The input-space salient variables from the :func:`world_stats` of the shown inputs (exact arithmetic)."""
    n = len(stats)
    if n == 0:
        raise ValueError("stats: at least one shown input grid is needed")
    marker_cells = sum(s[3] for s in stats)
    return {
        "grid_size": math.floor(Fraction(sum(s[0] + s[1] for s in stats), 2 * n) + Fraction(1, 2)),
        "marker_ratio": round_to(sum(Fraction(s[3], s[0] * s[1]) for s in stats) / n, 0.05),
        "wall_ratio": round_to(sum(Fraction(s[2], s[0] * s[1]) for s in stats) / n, 0.05),
        "marker_count": round_to(Fraction(sum(s[4] for s in stats), marker_cells), 0.5) if marker_cells else 0.0,
        "num_grids": n,
    }
