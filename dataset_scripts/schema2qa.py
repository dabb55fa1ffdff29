"""Materialize the Schema2QA configs as a Hub-layout dataset folder.

Usage (every option of ``hf-synthsample generate schema2qa`` works here too)::

    python dataset_scripts/schema2qa.py --out schema2qa-data --configs all hotels [--num-examples 100000]
    python dataset_scripts/schema2qa.py --out schema2qa-data --add --annotated-dir ../shared/data/schema2qa \\
        --configs annotated-iid annotated-compositional all-compositional

The annotated and compositional configs need ``--annotated-dir`` (a folder of ``<domain>.tsv``
files: id, utterance, program). ``datasets.load_dataset("schema2qa-data", "hotels")`` loads a
config offline, and the same folder can be pushed to the Hub as it is.
"""

import sys

from hf_synthsample.cli import main

if __name__ == "__main__":
    sys.exit(main(["generate", "schema2qa", *sys.argv[1:]]))
