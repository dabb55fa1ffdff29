"""Materialize the SCAN* configs (random, length_31..length_250, jump) as a Hub-layout dataset folder.

Usage (every option of ``hf-synthsample generate scan_star`` works here too)::

    python dataset_scripts/scan_star.py --out scan_star-data [--configs length_31 length_62 length_125 length_250]
        [--num-examples 100000] [--num-test 10000] [--seed 0] [--num-proc 2] [--overwrite]

The folder holds Parquet files per config and split and a README.md dataset card whose YAML
``configs:`` lists them: ``datasets.load_dataset("scan_star-data", "length_31")``
loads a config offline, and the same folder can be pushed to the Hub as it is.
"""

import sys

from hf_synthsample.cli import main

if __name__ == "__main__":
    sys.exit(main(["generate", "scan_star", *sys.argv[1:]]))
