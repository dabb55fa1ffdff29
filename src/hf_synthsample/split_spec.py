"""The old home of :mod:`hf_synthsample.splits.spec` (split specifications as ``datasets`` reads them)."""

from .splits.spec import check_split, normalize_split, source_split, split_names  # noqa: F401
