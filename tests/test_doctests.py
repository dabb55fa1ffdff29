"""The examples in the public docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "hf_synthsample",
    "hf_synthsample.settings",
    "hf_synthsample.cli._common",
    "hf_synthsample.cli._errors",
    "hf_synthsample.domains.calculator",
    "hf_synthsample.builders.calculator",
    "hf_synthsample.sampling.base",
    "hf_synthsample.sampling.difficulty",
    "hf_synthsample.sampling.structural",
    "hf_synthsample.progress",
    "hf_synthsample.sampling.homogenize",
    "hf_synthsample.sampling.report",
    "hf_synthsample.hub",
    "hf_synthsample.hub.card",
    "hf_synthsample.hub.folder",
    "hf_synthsample.load",
    "hf_synthsample.hub.materialization",
    "hf_synthsample.hub.publish",
    "hf_synthsample.metrics.scores",
    "hf_synthsample.curriculum",
    "hf_synthsample.cartography.datamap",
    "hf_synthsample.logging",
    "hf_synthsample.sampling.repetition",
    "hf_synthsample.atomic",
    "hf_synthsample.processes",
    # the paper examples' shared machinery (examples/harness; conftest puts examples/ on sys.path)
    "harness", "harness.tables", "harness.options", "harness.runs", "harness.run_folder", "harness.checkpoints",
    "hf_synthsample.languages",
    "hf_synthsample.domains.scan_language", "hf_synthsample.domains.cogs_language",
    "hf_synthsample.domains.karel.language", "hf_synthsample.domains.calculator_language",
    "hf_synthsample.structure",
    "hf_synthsample.languages.sql", "hf_synthsample.languages.sparql", "hf_synthsample.languages.lambda_terms",
    "hf_synthsample.languages.python", "hf_synthsample.languages.grammar",
    "hf_synthsample.structure.language",
    "hf_synthsample.splits.overlap",
    "hf_synthsample.splits.disjoint",
    "hf_synthsample._lazy",
    "hf_synthsample.models",
    "hf_synthsample.models.tokenization",
    "hf_synthsample.models.scratch",
    "hf_synthsample.models.seq2seq",
    "hf_synthsample.models.causal",
    "hf_synthsample.models.calculator",
    "hf_synthsample.models.lstm",
    "hf_synthsample.engines.blocks",
    "hf_synthsample.salient",
    "hf_synthsample.engines.sampling",
    "hf_synthsample.splits._data",
    "hf_synthsample.splits.mcd",
    "hf_synthsample.splits.simple",
    "hf_synthsample.splits.report",
    "hf_synthsample.validation",
    "hf_synthsample.split_spec",
    "hf_synthsample.splits.spec",
    "hf_synthsample.extras",
    "hf_synthsample.builders.base",
    "hf_synthsample.splits.sweep",
    "hf_synthsample.splits.settings",
    "hf_synthsample.splits.splitter",
    "hf_synthsample.sampling.settings",
    # cartography and hub modules added with issue 33
    "hf_synthsample.cartography.ids", "hf_synthsample.cartography.summary", "hf_synthsample.cartography.publish",
    "hf_synthsample.cartography.decode", "hf_synthsample.cartography.noise", "hf_synthsample.cartography.track",
    "hf_synthsample.cartography.callback", "hf_synthsample.cartography.collator",
    "hf_synthsample.cartography.dynamics_table", "hf_synthsample.cartography.settings", "hf_synthsample.hub.provenance",
    "hf_synthsample.models.warm_start",
    # verifiable rewards (issue 46)
    "hf_synthsample.rewards", "hf_synthsample.rewards.normalize", "hf_synthsample.rewards.verifiers",
    "hf_synthsample.rewards.trl", "hf_synthsample.rewards.prompts",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
