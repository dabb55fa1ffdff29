"""``python -m hf_synthsample.cli``: the ``hf-synthsample`` command."""

import sys

from . import main

sys.exit(main())
