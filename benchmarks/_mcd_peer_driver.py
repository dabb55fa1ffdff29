"""Peer side of bench_splits.py: runs the public MCD swap procedure from a file the user gives.

The procedure is google-research/language ``language/compgen/nqg/tasks/mcd_utils.py`` (Apache
2.0); it is not in this repository. Get it with::

    curl -LO https://raw.githubusercontent.com/google-research/language/master/language/compgen/nqg/tasks/mcd_utils.py

(the figures in docs/benchmarks.md were measured with commit 35c8d9b7918fc472d6bb09ebcd3121d93c787c8e)
and pass its path: ``python benchmarks/bench_splits.py --peer mcd_utils.py``.

This driver (written for this project) loads that file with importlib, reads examples (atoms and
compounds precomputed with hf_synthsample's SCAN definitions) from a JSON file, runs its
``balance_atoms`` then ``maximize_divergence`` for the given swaps with their per-iteration prints
sent to a null stream, and prints one JSON line: wall and CPU seconds, swaps made, compound
divergence and the test examples.

Usage: ``python _mcd_peer_driver.py PATH/TO/mcd_utils.py EXAMPLES.json MAX_SWAPS``
"""

from __future__ import annotations

import collections
import importlib.util
import io
import json
import sys
import time

#: where the peer comes from, for messages
PEER_URL = "https://github.com/google-research/language/blob/master/language/compgen/nqg/tasks/mcd_utils.py"
PEER_RAW = "https://raw.githubusercontent.com/google-research/language/master/language/compgen/nqg/tasks/mcd_utils.py"
PEER_FUNCTIONS = ("balance_atoms", "maximize_divergence", "compute_divergence", "get_all_compounds")


def load_peer(path: str):
    """The module at ``path``; ``ValueError`` if it is not the expected file."""
    spec = importlib.util.spec_from_file_location("mcd_utils_peer", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"--peer: {path} is not a Python file; get mcd_utils.py from {PEER_URL}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [f for f in PEER_FUNCTIONS if not hasattr(module, f)]
    if missing:
        raise ValueError(f"--peer: {path} has no {', '.join(missing)}: it is not google-research/language "
                         f"mcd_utils.py ({PEER_URL})")
    return module


def run(peer_path: str, examples_path: str, max_iterations: int) -> dict:
    peer = load_peer(peer_path)
    with open(examples_path, encoding="utf-8") as f:
        data = json.load(f)
    atoms = {e: set(a) for e, a in zip(data["examples"], data["atoms"])}
    comps = {e: collections.Counter(set(c)) for e, c in zip(data["examples"], data["compounds"])}
    examples_1 = [data["examples"][i] for i in data["train"]]
    examples_2 = [data["examples"][i] for i in data["test"]]
    real_stdout = sys.stdout
    sys.stdout = io.StringIO()  # the procedure prints every iteration; keep it off the terminal
    start, cpu = time.perf_counter(), time.process_time()
    try:
        examples_1, examples_2 = peer.balance_atoms(examples_1, examples_2, atoms.get, max_iterations, 1)
        examples_1, examples_2 = peer.maximize_divergence(examples_1, examples_2, comps.get, atoms.get,
                                                          max_iterations, None, 1)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        log = sys.stdout.getvalue()
    finally:
        sys.stdout = real_stdout
    divergence = peer.compute_divergence(peer.get_all_compounds(examples_1, comps.get),
                                         peer.get_all_compounds(examples_2, comps.get))
    return {"seconds": seconds, "cpu_seconds": cpu, "swaps": log.count("Swapping "),
            "compound_divergence": divergence, "test": examples_2}


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
