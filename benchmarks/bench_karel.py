"""Karel task generation throughput, side by side with the PyPI package ``karel`` 1.3.0.

The work: one task = one random program + 6 I/O pairs (5 shown + 1 held out). Ours: baseline
programs (grammar, at least two actions and a move), inputs with walls and markers each on 10%
of cells (geometric marker counts) on an N x N grid; every pair checked (no crash, no timeout, no
no-op) and the shown pairs covering every branch, programs that cannot get such a set dropped
(their time counted), and the pairs formatted as grid JSON (what a dataset row holds). The
peer (``benchmarks/_karel_peer.py``): ``random_code`` + 6 worlds of ``world_size=(N, N)`` with
input state, run and output state; it checks nothing (failed actions are silent no-ops there).
An N x N grid means the field's N x N frame (the 18 x 18 tensor holds a 16 x 16 grid): the peer's
``world_size=(N, N)`` includes its border walls, so both sides get (N-2) x (N-2) usable cells
(``--interior same``); ``--interior full`` gives ours N x N cells instead (more work for us). Runs alternate ours / peer per size so
both see the same machine load.

The peer must live in its own environment (never a dependency of this project)::

    python -m venv /tmp/karel-bench
    /tmp/karel-bench/bin/pip install karel==1.3.0 pyparsing numpy

Usage::

    python benchmarks/bench_karel.py [--sizes 8 18] [--seconds 10] [--peer-python /tmp/karel-bench/bin/python]

Prints tasks/s for both and the ratio. Without the peer environment only our figures are printed.
Ours uses the numba runner when numba is importable (the `fast` extra; the first line says
which path ran): same rows, faster.
``HF_SYNTHSAMPLE_NO_NUMBA=1`` measures the pure-Python path.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

from hf_synthsample.domains.karel.interpreter import compile_program
from hf_synthsample.domains.karel.io import IOParams, IOSamplingError, flat_pairs_to_examples, sample_io_flat
from hf_synthsample.domains.karel.programs import ProgramParams, sample_program

HERE = os.path.dirname(os.path.abspath(__file__))


def ours(size: int, seconds: float, seed: int) -> dict:
    """Our tasks per second on ``size x size`` grids (usable cells)."""
    rng = random.Random(seed)
    pp = ProgramParams(require_move=True, min_actions=2).validate()
    iop = IOParams(min_grid_size=size, max_grid_size=size, wall_ratio_range=(0.1, 0.1),
                   marker_ratio_range=(0.1, 0.1), marker_counts="geometric").validate()
    warm = random.Random(seed + 1)  # untimed: loads (or compiles) the optional numba runner, like the peer's imports
    for _ in range(20):
        try:
            sample_io_flat(compile_program(sample_program(warm, pp)), warm, iop)
        except IOSamplingError:
            pass
    tasks = dropped = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        program = sample_program(rng, pp)
        try:
            pairs = sample_io_flat(compile_program(program), rng, iop)
        except IOSamplingError:
            dropped += 1
            continue
        flat_pairs_to_examples(pairs)
        tasks += 1
    return {"tasks": tasks, "seconds": time.perf_counter() - start, "dropped_programs": dropped}


def peer(python: str, size: int, seconds: float, seed: int) -> dict | None:
    if not os.path.exists(python):
        return None
    out = subprocess.run([python, os.path.join(HERE, "_karel_peer.py"), str(size), str(seconds), str(seed)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 18], help="grid sides N [8 18]")
    ap.add_argument("--seconds", type=float, default=10.0, help="seconds per measurement [10]")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--interior", choices=["same", "full"], default="same",
                    help="our grid for N: 'same' (N-2) x (N-2) cells like the peer's bordered world, 'full' N x N [same]")
    ap.add_argument("--peer-python", default="/tmp/karel-bench/bin/python",
                    help="interpreter of the venv holding karel==1.3.0 [/tmp/karel-bench/bin/python]")
    args = ap.parse_args(argv)
    from hf_synthsample.domains.karel import io as karel_io

    runner = "numba batch runner" if karel_io._fast is not None else "pure Python (numba not installed or HF_SYNTHSAMPLE_NO_NUMBA set)"
    print(f"ours: {runner}; one process each")
    print(f"{'grid':>6} {'ours tasks/s':>13} {'peer tasks/s':>13} {'ratio':>7}  (dropped programs)")
    for size in args.sizes:
        p = peer(args.peer_python, size, args.seconds, args.seed)
        o = ours(size - 2 if args.interior == "same" else size, args.seconds, args.seed)
        ours_rate = o["tasks"] / o["seconds"]
        peer_rate = p["tasks"] / p["seconds"] if p else float("nan")
        print(f"{size:>3}x{size:<2} {ours_rate:>13.0f} {peer_rate:>13.0f} {ours_rate / peer_rate:>6.1f}x  ({o['dropped_programs']})")
    if not os.path.exists(args.peer_python):
        print(f"peer skipped: {args.peer_python} not found (see --help to create the venv)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
