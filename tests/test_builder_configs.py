"""The builder configs are declared with ``setting()``, the Karel and homogenize fields once: in
``ProgramParams`` / ``IOParams`` and ``StreamHomogenizeSettings``, from which the config fields are made."""

from __future__ import annotations

import dataclasses

import pytest

import hf_synthsample
from hf_synthsample.builders import BUILDERS, get_builder_class
from hf_synthsample.builders.base import _BASE_FIELDS, SyntheticConfig, config_parameters
from hf_synthsample.builders.karel import KarelConfig
from hf_synthsample.domains.karel.io import IOParams
from hf_synthsample.domains.karel.programs import ProgramParams
from hf_synthsample.sampling.settings import StreamHomogenizeSettings


def _specs(config_class) -> dict:
    return {f.name: f.metadata["setting"] for f in dataclasses.fields(config_class) if f.name not in _BASE_FIELDS}


@pytest.mark.parametrize("domain", sorted(BUILDERS))
def test_every_config_field_is_a_setting(domain):
    fields = [f for f in dataclasses.fields(get_builder_class(domain).BUILDER_CONFIG_CLASS) if f.name not in _BASE_FIELDS]
    assert fields and all("setting" in f.metadata and f.metadata["setting"].help for f in fields)


@pytest.mark.parametrize("source, renamed", [(ProgramParams, {"mode": "program_mode"}),
                                             (IOParams, {"distribution": "io_distribution"})])
def test_karel_config_fields_are_made_from_the_domain_settings(source, renamed):
    specs, params = _specs(KarelConfig), config_parameters(KarelConfig)
    defaults = source.defaults()
    for name, spec in source.specs().items():
        field = renamed.get(name, name)
        assert specs[field] == spec, field  # help, bounds, choices: the one declaration
        assert params[field] == {"default": defaults[name], "help": spec.help}
    # and the config hands them back as the domain's settings objects
    config = KarelConfig(name="x", program_mode="actions", io_distribution="narrow", max_grid_size=8)
    assert config.program_params().mode == "actions"
    assert config.io_params() == IOParams(distribution="narrow", max_grid_size=8)


def test_homogenize_fields_are_made_from_the_stream_settings():
    specs, source = _specs(SyntheticConfig), StreamHomogenizeSettings.specs()
    for field, name in (("homogenize", "variables"), ("eps", "eps"), ("homogenize_mode", "mode"),
                        ("homogenize_pilot", "pilot")):
        assert specs[field].help == source[name].help and specs[field].choices == source[name].choices
        assert (specs[field].min, specs[field].max) == (source[name].min, source[name].max)
    # the builder's own defaults: nothing homogenized, a pilot of 10,000 draws
    assert (SyntheticConfig.homogenize, SyntheticConfig.homogenize_pilot) == ((), 10_000)
    assert SyntheticConfig.eps == StreamHomogenizeSettings.defaults()["eps"]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"eps": 1.5}, ValueError, r"eps must be <= 1.0, got 1.5"),
    ({"homogenize_pilot": -1}, ValueError, r"homogenize_pilot must be >= 0"),
    ({"homogenize": ["length", "length"]}, ValueError, r"homogenize lists a value twice"),
    ({"homogenize": 3}, TypeError, r"homogenize must be a str or a sequence of str"),
    ({"block_size": 0}, ValueError, r"block_size must be >= 1"),
])
def test_config_errors_name_the_parameter(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        hf_synthsample.load_dataset("calculator", "dcfg", cache_dir=str(tmp_path), **kwargs)
    with pytest.raises(ValueError, match=r"eps must be <= 1.0"):
        StreamHomogenizeSettings(variables=("length",), eps=1.5)


def test_validation_normalises_values_in_place():
    config = KarelConfig(name="x", constructs=["while", "if"], marker_ratio_range=[0, 0.5], homogenize="program_size")
    config.validate(get_builder_class("karel").SALIENT_VARIABLES)
    assert config.constructs == ("while", "if") and config.marker_ratio_range == (0.0, 0.5)
    assert config.homogenize == ("program_size",)
