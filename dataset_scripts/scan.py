"""Materialize the exact SCAN configs (the Hub's eight splits) as a Hub-layout dataset folder.

Usage (every option of ``hf-synthsample generate scan`` works here too)::

    python dataset_scripts/scan.py --out scan-data [--configs addprim_jump template_around_right]
        [--seed 0] [--overwrite]

The folder holds Parquet files per config and split and a README.md dataset card whose YAML
``configs:`` lists them: ``datasets.load_dataset("scan-data", "addprim_jump")``
loads a config offline, and the same folder can be pushed to the Hub as it is.
"""

import sys

from hf_synthsample.cli import main

if __name__ == "__main__":
    sys.exit(main(["generate", "scan", *sys.argv[1:]]))
