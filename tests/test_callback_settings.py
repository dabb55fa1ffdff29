"""The dynamics callback's settings say what runs (issue 47, item 4): nothing is copied onto the
callback and changed there; ``bleu`` resolves ``eval_pass`` inside the settings, and assigning a
field goes through ``set_params``."""

from __future__ import annotations

import inspect

import pytest

from hf_synthsample.cartography import DynamicsSettings, TrainingDynamicsCallback, track_dynamics


def test_bleu_turns_the_eval_pass_on_in_the_settings():
    cb = TrainingDynamicsCallback(("bleu", "loss"))
    assert cb.settings.eval_pass is True and cb.eval_pass is True
    assert cb.settings == DynamicsSettings(measures=("bleu", "loss"), eval_pass=True)
    assert cb.get_params()["eval_pass"] is True
    assert DynamicsSettings(measures=("bleu",)).eval_pass is True and DynamicsSettings().eval_pass is False
    # a callback built from its own settings runs the same
    assert TrainingDynamicsCallback(**cb.get_params()).settings == cb.settings


def test_nothing_is_copied_onto_the_callback():
    cb = TrainingDynamicsCallback(measures=("aum",), eval_examples=4, seed=3)
    fields = set(DynamicsSettings.specs())
    assert not fields & set(vars(cb)), fields & set(vars(cb))
    cb.eval_pass = True  # set_params: validated, and in the settings
    cb.measures = ["loss", "bleu"]
    assert cb.settings.eval_pass is True and cb.settings.measures == ("loss", "bleu") and "measures" not in vars(cb)
    with pytest.raises(TypeError, match="^eval_pass must be True or False"):
        cb.eval_pass = "yes"
    with pytest.raises(ValueError, match="^eval_examples must be >= 1"):
        cb.set_params(eval_examples=0)
    assert cb.settings.eval_examples == 4


def test_the_meta_records_the_settings_eval_pass(tmp_path):
    cb = TrainingDynamicsCallback(("bleu",))
    assert cb._meta()["eval_pass"] is cb.settings.eval_pass is True
    assert TrainingDynamicsCallback()._meta()["eval_pass"] is False


def test_signature_and_positional_measures():
    params = inspect.signature(TrainingDynamicsCallback).parameters
    assert list(params)[0] == "measures" and params["measures"].default == ("inv_ppl", "chia")
    assert set(params) == set(DynamicsSettings.specs())
    assert TrainingDynamicsCallback(["loss"]).measures == ("loss",)
    s = DynamicsSettings(measures=("el2n",))
    assert TrainingDynamicsCallback(s).settings is s and TrainingDynamicsCallback(s, seed=2).seed == 2
    with pytest.raises(TypeError, match="multiple values for argument 'measures'"):
        TrainingDynamicsCallback(["loss"], measures=["aum"])
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        TrainingDynamicsCallback(["loss"], "x")


def test_track_dynamics_reads_its_options_from_the_settings():
    params = inspect.signature(track_dynamics).parameters
    assert list(params) == ["trainer", "measures", "options"]  # no field re-declared
