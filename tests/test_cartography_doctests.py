"""The examples in the docstrings of the cartography modules that ``test_doctests.py`` does not list
run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "hf_synthsample.cartography.ids",
    "hf_synthsample.cartography.summary",
    "hf_synthsample.cartography.publish",
    "hf_synthsample.cartography.decode",
    "hf_synthsample.cartography.noise",
    "hf_synthsample.cartography.track",
    "hf_synthsample.cartography.callback",
    "hf_synthsample.cartography.collator",
    "hf_synthsample.cartography.dynamics_table",
    "hf_synthsample.cartography.settings",
    "hf_synthsample.hub.provenance",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
