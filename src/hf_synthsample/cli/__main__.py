"""``python -m hf_synthsample.cli``: the ``hf-synthsample`` command."""

import sys

from . import main

if __name__ == "__main__":  # importing the module (e.g. to list the package's names) runs nothing
    sys.exit(main())
