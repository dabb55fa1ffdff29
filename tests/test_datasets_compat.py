"""The ``datasets`` internals the builders use (``builders/_datasets_compat.py``), checked against the
installed ``datasets``: a release that renames or re-signs one fails here, naming it."""

from __future__ import annotations

import dataclasses
import inspect
import os

import datasets
import pytest

from hf_synthsample.builders import _datasets_compat as compat
from hf_synthsample.builders.calculator import Calculator

VERSION = f"datasets {datasets.__version__}"


@pytest.mark.parametrize("name", sorted(compat.INTERNAL_SIGNATURES))
def test_overridden_internals_keep_their_signatures(name):
    theirs = inspect.signature(getattr(datasets.ArrowBasedBuilder, name))
    assert tuple(theirs.parameters) == compat.INTERNAL_SIGNATURES[name], f"{VERSION} changed {name}{theirs}"
    ours = inspect.signature(compat.HookedBuilder.__dict__[name])
    assert [(p.name, p.kind) for p in ours.parameters.values()] == \
        [(p.name, p.kind) for p in theirs.parameters.values()], f"{VERSION}: {name}{theirs}, overridden as {ours}"


def test_the_hooks_are_no_names_of_datasets():
    for hook in ("check_config_kwargs", "configured", "generated"):
        assert not hasattr(datasets.ArrowBasedBuilder, hook), f"{VERSION} defines {hook}: rename the hook"


def test_the_internals_are_still_called_where_the_hooks_expect():
    # the config is made in __init__, and download_and_prepare writes through _download_and_prepare into a
    # temporary folder it swaps in as _output_dir
    assert "self._create_builder_config(" in inspect.getsource(datasets.DatasetBuilder.__init__), VERSION
    source = inspect.getsource(datasets.DatasetBuilder.download_and_prepare)
    assert "self._download_and_prepare(" in source and 'temporary_assignment(self, "_output_dir"' in source, VERSION
    assert [f.name for f in dataclasses.fields(compat.Key)] == ["original_shard_id", "item_or_batch_id"], VERSION


def test_the_private_attributes_are_where_they_are_read(tmp_path):
    builder = Calculator(config_name="dcfg", cache_dir=str(tmp_path), num_examples=5, homogenize="length",
                         homogenize_pilot=20)
    assert compat.cache_root(builder) == str(tmp_path), VERSION
    assert compat.output_dir(builder) == builder.cache_dir, VERSION
    seen = []
    builder.generated = lambda folder: (seen.append((folder, sorted(os.listdir(folder)))),
                                        type(builder).generated(builder, folder))
    builder.download_and_prepare()
    (folder, files), = seen
    # generated() sees the folder being written, which becomes the cache entry afterwards
    assert folder != builder.cache_dir and not os.path.exists(folder), VERSION
    assert any(f.endswith(".arrow") for f in files), files
    assert "homogenization.json" in os.listdir(builder.cache_dir)


def test_the_config_hooks_run_for_a_builder_made_directly(tmp_path):
    with pytest.raises(ValueError, match="unknown parameter 'bogus'"):
        Calculator(config_name="dcfg", cache_dir=str(tmp_path), bogus=1)
    with pytest.raises(ValueError, match="num_examples must be >= 0"):
        Calculator(config_name="dcfg", cache_dir=str(tmp_path), num_examples=-1)
    assert Calculator(config_name="dcfg", cache_dir=str(tmp_path), max_length=None).config.max_length is None
