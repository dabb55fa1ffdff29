"""Peer side of bench_karel.py: task generation with the PyPI package ``karel`` 1.3.0.

Run by bench_karel.py through the benchmark venv's interpreter (never imported by the library).
Written for this project: it calls the package's public API (``KarelForSynthesisParser``) and
copies none of its code; the package itself lives only in that separate venv.
Per task, as that package's own data generation does: a random program (``random_code``), then
six random worlds of ``world_size=(N, N)`` (its border walls included), each with its input state,
a run of the program (failed actions are silent no-ops there; runs over its call limit raise
TimeoutError, and worlds with over 10 markers in a cell have no state encoding: both are redrawn) and its output state. Prints one JSON line: tasks, seconds.
"""

import json
import sys
import time

import numpy as np
from karel import KarelForSynthesisParser
from karel.utils import TimeoutError


def main(size: int, seconds: float, seed: int) -> None:
    parser = KarelForSynthesisParser(rng=np.random.RandomState(seed))
    tasks = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        code = parser.random_code(stmt_max_depth=3)
        pairs = []
        attempts = 0
        while len(pairs) < 6 and attempts < 100:
            attempts += 1
            parser.new_game(world_size=(size, size))
            before = parser.get_state()
            try:
                parser.run(code)
                after = parser.get_state()
            except (TimeoutError, IndexError):  # IndexError: over 10 markers in a cell, no state encoding
                continue
            pairs.append((before, after))
        tasks += 1
    print(json.dumps({"tasks": tasks, "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]))
