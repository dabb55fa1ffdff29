"""Materialize the Karel configs as a Hub-layout dataset folder.

Usage (every option of ``hf-synthsample generate karel`` works here too)::

    python dataset_scripts/karel.py --out karel-data [--configs baseline uniform-io]
        [--num-examples 100000] [--num-test 10000] [--seed 0] [--num-proc 2] [--overwrite]

The folder holds Parquet files per config and split and a README.md dataset card whose YAML
``configs:`` lists them: ``datasets.load_dataset("karel-data", "uniform-io")``
loads a config offline, and the same folder can be pushed to the Hub as it is.
"""

import sys

from hf_synthsample.cli import main

if __name__ == "__main__":
    sys.exit(main(["generate", "karel", *sys.argv[1:]]))
