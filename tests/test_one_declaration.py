"""One declaration per idea (issue 47, item 2): the split functions take ``settings=`` plus
``**changes`` and show the settings' fields with the settings' defaults (nothing re-declared); the
language has one default (none: say which), refused naming ``language`` and the accepted names."""

from __future__ import annotations

import inspect

import pytest
from datasets import Dataset

from hf_synthsample.splits import (MCDSplitter, SplitSettings, SweepSettings, divergence_range, divergence_sweep,
                                   length_split, mcd_split, random_split, split_report, structure_report, template_split,
                                   tmcd_split)

FUNCTIONS = {mcd_split: SplitSettings, tmcd_split: SplitSettings, divergence_range: SplitSettings,
             divergence_sweep: SweepSettings, random_split: SplitSettings, template_split: SplitSettings,
             split_report: SplitSettings, structure_report: SplitSettings, length_split: SplitSettings}


def _programs() -> Dataset:
    return Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh" for a in "abcd"
                                          for b in "abc"]})


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_the_signature_shows_the_settings_fields_with_their_defaults(fn):
    cls = FUNCTIONS[fn]
    params = inspect.signature(fn).parameters
    defaults = cls.defaults()
    fields = [p for p in params.values() if p.name in cls.specs()]
    assert fields and "settings" in params and params["settings"].default is None
    for p in fields:
        assert p.default == defaults.get(p.name, inspect.Parameter.empty), (fn.__name__, p.name)
    assert not [p for p in params if p.startswith("_")]
    assert "method" not in params  # each function is one method


def test_the_report_takes_the_split_settings():
    ds = _programs()
    s = SplitSettings(language="sexpr", compound_weights=False)
    split = mcd_split(ds, settings=s, patience=10, progress=False)
    a = split_report(split["train"], split["test"], settings=s)
    b = split_report(split["train"], split["test"], "program", "sexpr", compound_weights=False)
    assert a.to_dict() == b.to_dict() and abs(a.compound_divergence - split.mcd_result.compound_divergence) < 1e-9
    with pytest.raises(TypeError, match="has no setting 'languag'"):
        split_report(split["train"], split["test"], languag="sexpr")


def test_language_has_one_default_and_a_missing_one_is_named():
    assert SplitSettings().language is None and SweepSettings(targets=(0.5,)).language is None
    for fn in (mcd_split, tmcd_split, divergence_range, template_split):
        assert inspect.signature(fn).parameters["language"].default is None
    ds = _programs()
    for call in (lambda: mcd_split(ds), lambda: tmcd_split(ds), lambda: divergence_range(ds),
                 lambda: divergence_sweep(ds, [0.5]), lambda: template_split(ds)):
        with pytest.raises(ValueError, match=r"^language: .*'program'.*accepted: .*sexpr.*thingtalk"):
            call()


def test_settings_plus_changes_is_the_estimator():
    ds = _programs()
    s = SplitSettings(language="sexpr", compound_weights=False, patience=10)
    a = mcd_split(ds, settings=s, seed=2, progress=False)
    b = MCDSplitter(s.replace(seed=2)).split(ds, progress=False)
    assert a["test"]["program"] == b["test"]["program"]
    c = mcd_split(ds, "program", "sexpr", compound_weights=False, patience=10, seed=2, progress=False)
    assert c["test"]["program"] == a["test"]["program"]
    assert mcd_split(ds, settings=s, seed=2, progress=False, return_result=True)[1].compound_divergence == \
        a.mcd_result.compound_divergence


def test_wrong_settings_and_double_values_refused():
    ds = _programs()
    with pytest.raises(ValueError, match=r"^method: mcd_split makes method 'mcd' splits, not 'template'"):
        mcd_split(ds, settings=SplitSettings(method="template", template_column="program"))
    with pytest.raises(TypeError, match="settings must be a SweepSettings"):
        divergence_sweep(ds, settings=SplitSettings(language="sexpr"))
    with pytest.raises(TypeError, match="multiple values for argument 'language'"):
        mcd_split(ds, "program", "sexpr", language="scan")
    with pytest.raises(TypeError, match="takes column, language by position"):
        mcd_split(ds, "program", "sexpr", 0.3)
    with pytest.raises(TypeError, match="has no setting 'languag'"):
        mcd_split(ds, languag="sexpr")
    with pytest.raises(ValueError, match="goal, target_divergence, minimize"):
        mcd_split(ds, language="sexpr", goal="min", target_divergence=0.3)


def test_length_split_reads_the_settings_and_its_length():
    ds = Dataset.from_dict({"program": ["a", "a b", "a b c", "a b c d"], "n": [1, 2, 3, 4]})
    words = length_split(ds)  # no length: the words of the column, as the method of the settings
    assert words["test"]["program"] == ["a b c d"]
    assert MCDSplitter(method="length").split(ds)["test"]["program"] == words["test"]["program"]
    assert length_split(ds, "n", test_size=0.5)["test"]["n"] == [3, 4]
    assert length_split(ds, settings=SplitSettings(method="length", length_column="n"), threshold=2)["test"]["n"] == \
        [2, 3, 4]
    assert length_split(ds, lambda row: row["n"], threshold=4)["test"]["n"] == [4]  # a function of the row
    assert length_split(ds, len, column="program", threshold=5)["test"]["n"] == [3, 4]  # of the column's values
    with pytest.raises(ValueError, match="^test_size, threshold: give one of them"):
        length_split(ds, "n", test_size=0.5, threshold=2)


def test_the_split_methods_keep_their_effective_size_tolerance():
    s = SplitSettings(method="template")
    assert s.size_tolerance is None and s.size_tolerance_share == 0.05 and SplitSettings().size_tolerance_share == 0.0
    ds = Dataset.from_dict({"program": [f"(f {i})" for i in range(8)], "t": list("aabbccdd")})
    assert len(template_split(ds, template_column="t", test_size=0.25)["test"]) == 2
    assert len(random_split(ds, 0.5, seed=1)["test"]) == 4


# ------------------------------------------------------------------ the curve holds the sweep's settings
def test_every_split_option_reaches_a_curve_by_its_own_name():
    from hf_synthsample.curve import CompositionalityCurve, CurveSettings
    from hf_synthsample.curve.settings import SWEEP

    s = CurveSettings()
    assert s.sweep is SWEEP and s.sweep.language is None  # the one default: say which
    assert not set(SweepSettings.specs()) - set(s.sweep.get_params())
    changes = dict(restarts=3, divergence_tolerance=0.02, compound_weights=False, size_tolerance=0.01, patience=7,
                   max_height=3, skip_unparsable=True, text_column="t", seed=4, language="sexpr", column="program")
    curve = CompositionalityCurve(targets=[0.1, 0.3], sweep__batch_size=16, sweep__max_steps=50, batch_size=8,
                                  max_steps=20, **changes)
    for name, value in changes.items():
        assert getattr(curve.settings.sweep, name) == value == getattr(curve, name), name
        assert curve.get_params()[f"sweep__{name}"] == value
    assert (curve.settings.sweep.batch_size, curve.settings.sweep.max_steps) == (16, 50)
    assert (curve.batch_size, curve.max_steps) == (8, 20)  # the training's own
    curve.restarts = 5  # set_params, into the sweep
    assert curve.settings.sweep.restarts == 5 and "restarts" not in vars(curve)
    record = curve.settings.to_record()["sweep"]
    assert record["restarts"] == 5 and record["divergence_tolerance"] == 0.02 and record["compound_weights"] == "none"
    with pytest.raises(TypeError, match="sweep must be a hf_synthsample.splits.SweepSettings"):
        CurveSettings(sweep=SplitSettings())
    with pytest.raises(ValueError, match="^targets: a curve needs at least 2 targets"):
        curve.set_params(targets=[0.2])


def test_the_curve_command_has_every_split_option():
    from hf_synthsample.cli import _build_parser
    from hf_synthsample.cli import curve as command

    parser = _build_parser()
    args = parser.parse_args(["curve", "data.jsonl", "--out", "o", "--targets", "0.1", "0.4", "--column", "program",
                              "--language", "sexpr", "--restarts", "3", "--divergence-tolerance", "0.02",
                              "--compound-weights", "none", "--sweep-batch-size", "32", "--sweep-max-steps", "500",
                              "--batch-size", "16", "--max-steps", "40", "--time-limit", "30", "--seed", "2"])
    s = command.settings_of(args)
    assert s.sweep.changed() == {"targets": (0.1, 0.4), "seed": 2, "language": "sexpr",
                                 "compound_weights": False, "divergence_tolerance": 0.02, "time_limit": 30.0,
                                 "max_steps": 500, "batch_size": 32, "restarts": 3, "train_size": 0.5}
    assert (s.batch_size, s.max_steps) == (16, 40)
    default = command.settings_of(parser.parse_args(["curve", "--out", "o"]))  # the default source: SCAN's columns
    assert (default.sweep.column, default.sweep.language, default.target_column) == ("commands", "scan", "actions")
    from hf_synthsample.curve.settings import SWEEP

    assert default.sweep.replace(column="program", language=None) == SWEEP
