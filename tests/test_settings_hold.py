"""Settings hold what they were given, checked: a non-finite number is refused where a finite one is
meant, an unknown mapping key or a string for a bool is refused, and a list, dict or set given for a
field is held as an immutable copy (the caller's object can change afterwards without changing the
settings). Assigning an estimator's field goes through ``set_params``."""

from __future__ import annotations

import importlib
import json
import math
import pickle
import pkgutil
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import hf_synthsample
from hf_synthsample.cartography.settings import DynamicsSettings, LexicalNoiseSettings, NoiseSettings
from hf_synthsample.curve import CompositionalityCurve, CurveSettings
from hf_synthsample.rewards.curriculum import CurriculumSettings
from hf_synthsample.sampling import CMaxEntSampler, HomogenizeSampler, UniformSampler
from hf_synthsample.sampling.homogenize import homogenize_indices
from hf_synthsample.sampling.settings import (CMaxEntSettings, DifficultySettings, DiversitySettings,
                                              HomogenizeSettings, RepetitionSettings, StreamHomogenizeSettings)
from hf_synthsample.settings import FrozenMapping, Settings, freeze, setting
from hf_synthsample.splits import MCDSplitter
from hf_synthsample.splits.settings import SplitSettings, SweepSettings
from hf_synthsample.validation import check_float

NON_FINITE = [float("inf"), float("-inf"), float("nan")]

#: the fields a settings class needs to be made (those without a default)
REQUIRED = {HomogenizeSettings: {"columns": ("a",)}, StreamHomogenizeSettings: {"variables": ("a",)},
            DifficultySettings: {"column": "d"}, RepetitionSettings: {"batch_size": 1},
            SweepSettings: {"targets": (0.1, 0.2)}, NoiseSettings: {"count": 1}, LexicalNoiseSettings: {"count": 1},
            CurriculumSettings: {"column": "depth"}}


def _settings_classes() -> list[type]:
    """Every settings class of the package (its modules imported), the private bases left out."""
    for mod in pkgutil.walk_packages(hf_synthsample.__path__, "hf_synthsample."):
        if mod.name.split(".")[1] in ("curve", "sampling", "splits", "cartography", "structure", "rewards") \
                and not mod.name.rsplit(".", 1)[1].startswith("_") and mod.name.endswith("settings"):
            importlib.import_module(mod.name)
    found, todo = [], [Settings]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls is not Settings and cls.__module__.startswith("hf_synthsample.") and not cls.__name__.startswith("_"):
            found.append(cls)
    return sorted(set(found), key=lambda c: c.__qualname__)


def _float_fields() -> list[tuple[type, str]]:
    return [(cls, name) for cls in _settings_classes() for name, spec in cls.specs().items() if spec.kind == "float"]


# ---------------------------------------------------------------------------------- non-finite numbers
def test_the_float_fields_are_found():
    found = set(_float_fields())
    assert {(CurveSettings, "learning_rate"), (CMaxEntSettings, "w_atoms"), (StreamHomogenizeSettings, "eps"),
            (SplitSettings, "time_limit"), (NoiseSettings, "min_gain")} <= found


@pytest.mark.parametrize("value", NON_FINITE, ids=["inf", "-inf", "nan"])
def test_every_float_setting_refuses_non_finite(value):
    for cls, name in _float_fields():
        with pytest.raises(ValueError, match=rf"^{name} must be a finite number") as err:
            cls(**{**REQUIRED.get(cls, {}), name: value})
        spec = cls.specs()[name]
        if spec.min is not None:  # the accepted range is named
            assert str(spec.min) in str(err.value), (cls, name, str(err.value))


@pytest.mark.parametrize("make, name", [
    (lambda v: CompositionalityCurve(learning_rate=v), "learning_rate"),
    (lambda v: CMaxEntSampler(w_atoms=v), "w_atoms"),
    (lambda v: MCDSplitter(time_limit=v), "time_limit"),
])
def test_estimators_refuse_non_finite(make, name):
    for value in NON_FINITE:
        with pytest.raises(ValueError, match=rf"^{name} must be a finite number"):
            make(value)


def test_check_float_names_the_range_and_allows_inf_only_when_asked():
    with pytest.raises(ValueError, match=r"^learning_rate must be a finite number > 0.0, got inf$"):
        check_float("learning_rate", math.inf, min=0.0, min_inclusive=False)
    with pytest.raises(ValueError, match=r"^share must be a finite number in \(0.0, 1.0\], got nan$"):
        check_float("share", math.nan, min=0.0, max=1.0, min_inclusive=False)
    assert check_float("limit", math.inf, min=0.0, allow_inf=True) == math.inf
    with pytest.raises(ValueError, match=r"^limit must be a number \(not NaN\) >= 0.0, got nan$"):
        check_float("limit", math.nan, min=0.0, allow_inf=True)
    with pytest.raises(ValueError, match=r"^limit must be <= 1.0, got inf$"):
        check_float("limit", math.inf, max=1.0, allow_inf=True)
    assert check_float("x", np.float32(0.5), min=0.0) == 0.5 and check_float("x", 3) == 3.0


@pytest.mark.parametrize("make", [lambda w: CMaxEntSettings(compound_weights=w),
                                  lambda w: DiversitySettings(compound_weights=w),
                                  lambda w: SplitSettings(compound_weights=w)])
def test_compound_weights_refuse_non_finite(make):
    for value in NON_FINITE:
        with pytest.raises(ValueError, match=r"^compound_weights\b"):
            make({"(a b)": value})
    assert dict(make({"(a b)": 2.0}).compound_weights) == {"(a b)": 2.0}


def test_non_finite_inside_any_fields():
    with pytest.raises(ValueError, match=r"^quantile must be a finite number"):
        DifficultySettings(column="d", quantile=(0.1, math.nan))
    with pytest.raises(ValueError, match=r"^targets\b"):
        CurveSettings.build(targets=[0.1, math.inf])
    with pytest.raises(ValueError, match=r"^bins must be a finite number"):
        HomogenizeSettings(columns=("a",), bins=[0.0, math.inf])


# ---------------------------------------------------------------------------------- unknown keys, strings for bools
def test_bins_refuse_an_unknown_column():
    with pytest.raises(ValueError, match=r"^bins: 'dd' is not one of the columns; its keys must be among \['length'\]"):
        HomogenizeSettings(columns=("length",), bins={"dd": 3})
    with pytest.raises(ValueError, match=r"^bins: 'dd'"):
        HomogenizeSampler("length", bins={"dd": 3})
    sampler = HomogenizeSampler("length", bins={"length": 3})
    with pytest.raises(ValueError, match=r"^bins: 'dd'"):
        sampler.set_params(bins={"length": 3, "dd": 2})
    with pytest.raises(ValueError, match=r"^bins: 'dd'"):  # the function, too
        homogenize_indices({"length": [1, 2, 3]}, 2, bins={"dd": 2})


@pytest.mark.parametrize("bins, error", [(True, TypeError), (0, ValueError), ("3", TypeError), ([2, 1], ValueError),
                                         ({"length": [1, 1]}, ValueError), ({"length": "x"}, TypeError),
                                         ({1: 3}, TypeError)])
def test_bins_refuse_bad_values(bins, error):
    with pytest.raises(error, match=r"^bins\b"):
        HomogenizeSettings(columns=("length",), bins=bins)


def test_valid_bins_still_bin():
    from datasets import Dataset

    ds = Dataset.from_dict({"length": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]})
    for bins in (3, [4.5, 8.5], {"length": 3}, {"length": [4.5, 8.5]}, np.array([4.5, 8.5])):
        sampler = HomogenizeSampler("length", bins=bins, seed=0)
        picked = ds.select(sampler.indices(ds, 6))["length"]
        assert sorted(np.digitize(picked, [4.5, 8.5]).tolist()) == [0, 0, 1, 1, 2, 2], bins


@pytest.mark.parametrize("value", ["no", "yes", "False", 1, 0, None, np.bool_(True)])
def test_eval_pass_refuses_what_is_not_a_bool(value):
    with pytest.raises(TypeError, match=r"^eval_pass must be True or False, got"):
        DynamicsSettings(eval_pass=value)
    assert DynamicsSettings(eval_pass=True).eval_pass is True and DynamicsSettings().eval_pass is False


def test_bool_fields_refuse_strings():
    for cls, name in [(cls, n) for cls in _settings_classes() for n, s in cls.specs().items() if s.kind == "bool"]:
        with pytest.raises(TypeError, match=rf"^{name} must be a bool"):
            cls(**{**REQUIRED.get(cls, {}), name: "no"})


# ---------------------------------------------------------------------------------- immutable copies
def test_a_list_is_held_as_a_tuple():
    targets = [0.1, 0.2]
    s = CurveSettings.build(targets=targets)
    targets.append(0.3)
    targets[0] = 0.0
    assert s.sweep.targets == (0.1, 0.2) and type(s.sweep.targets) is tuple
    sweep_targets = [0.0, 0.3]
    sweep = SweepSettings(targets=sweep_targets, language="scan")
    sweep_targets.append(0.5)
    assert sweep.targets == (0.0, 0.3)
    columns = ["a", "b"]
    h = HomogenizeSettings(columns=columns)
    columns.append("c")
    assert h.columns == ("a", "b")
    # canonical values as before: numbers as floats, pairs as tuples
    assert CurveSettings.build(targets=(0, 0.5)).sweep.targets == (0.0, 0.5)
    assert type(CurveSettings.build(targets=(0, 1)).sweep.targets[0]) is float
    assert DifficultySettings(column="d", quantile=[0, 1]).quantile == (0.0, 1.0)


def test_a_tuple_given_is_held_as_given():
    t = (0.1, 0.2)
    assert CurveSettings.build(targets=t).sweep.targets is t
    assert SplitSettings(column="p").column == "p"


def test_a_dict_is_held_as_a_read_only_copy():
    edges = [1.0, 2.0]
    bins = {"a": edges}
    s = HomogenizeSettings(columns=("a",), bins=bins)
    bins["a"] = 5
    bins["b"] = 1
    edges.append(3.0)
    assert isinstance(s.bins, FrozenMapping) and dict(s.bins) == {"a": (1.0, 2.0)}
    with pytest.raises(TypeError):
        s.bins["a"] = 3  # type: ignore[index]
    weights = {"(a b)": 1.0}
    m = MCDSplitter(language="sexpr", compound_weights=weights)
    weights["(a b)"] = 9.0
    assert dict(m.compound_weights) == {"(a b)": 1.0}


@dataclass(frozen=True)
class _Bag(Settings):
    items: Any = setting(None, help="anything", kind="any")


def test_freeze_is_generic():
    assert _Bag(items={1, 2}).items == frozenset({1, 2}) and type(_Bag(items={1, 2}).items) is frozenset
    nested = _Bag(items={"a": [1, {"b": [2]}], "c": {3}}).items
    assert nested == {"a": (1, {"b": (2,)}), "c": frozenset({3})}
    assert isinstance(nested["a"][1], FrozenMapping)
    arr = np.arange(3)
    assert _Bag(items=arr).items is arr  # not a list, dict or set: held as given
    assert freeze(nested) is nested and freeze((1, 2)) == (1, 2)


def test_frozen_values_keep_equality_records_pickling_and_hashing():
    a = HomogenizeSettings(columns=["a"], bins={"a": [1, 2]})
    b = HomogenizeSettings(columns=("a",), bins={"a": (1, 2)})
    assert a == b and hash(a) == hash(b) and a.bins == {"a": (1, 2)}
    record = a.to_record()
    assert json.loads(json.dumps(record)) == record == {"columns": ["a"], "mode": "joint", "bins": {"a": [1, 2]},
                                                        "missing": "raise", "seed": 0}
    assert pickle.loads(pickle.dumps(a)) == a
    assert a.changed() == {"columns": ("a",), "bins": {"a": (1, 2)}}
    split = SplitSettings(compound_weights={"x": 1})
    assert split.to_record()["compound_weights"] == {"x": 1.0}
    assert json.dumps(MCDSplitter(compound_weights={"x": 1}).provenance())


def test_sklearn_clone_of_mapping_and_sequence_settings():
    sklearn_base = pytest.importorskip("sklearn.base")
    for est in (MCDSplitter(language="sexpr", compound_weights={"(a b)": 2}, goal=0.3),
                HomogenizeSampler(["a", "b"], bins={"a": [1, 2]}),
                CompositionalityCurve(targets=[0, 0.5], language="sexpr", column="program", target_column="t")):
        copy = sklearn_base.clone(est)
        assert copy.settings == est.settings and copy is not est
        assert pickle.loads(pickle.dumps(est)).settings == est.settings


# ---------------------------------------------------------------------------------- assigning a field
def test_assigning_a_field_is_validated_and_used():
    est = UniformSampler(seed=1)
    with pytest.raises(ValueError) as constructed:
        UniformSampler(seed=-5)
    with pytest.raises(ValueError) as assigned:
        est.seed = -5
    assert str(assigned.value) == str(constructed.value) == "seed must be >= 0, got -5"
    assert est.seed == 1 and est.get_params()["seed"] == 1
    est.seed = 3
    assert est.get_params()["seed"] == 3 and est.settings.seed == 3 and "seed" not in vars(est)
    from datasets import Dataset

    ds = Dataset.from_dict({"x": list(range(20))})
    assert est.indices(ds, 5).tolist() == UniformSampler(seed=3).indices(ds, 5).tolist()
    est.order_ = [1]  # not a field: a plain attribute
    assert vars(est)["order_"] == [1]
    curve = CompositionalityCurve()
    curve.targets = [0.2, 0.4]
    assert curve.settings.sweep.targets == (0.2, 0.4) == curve.targets and "targets" not in vars(curve)
    with pytest.raises(ValueError, match=r"^learning_rate must be a finite number"):
        curve.learning_rate = math.nan


def test_the_dynamics_settings_refuse_a_resume_flag_and_a_negative_seed_before_any_work():
    from hf_synthsample.cartography.settings import DynamicsSettings

    with pytest.raises(TypeError, match="resume_from must be a checkpoint folder .* got bool True"):
        DynamicsSettings(resume_from=True)
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"):
        DynamicsSettings(seed=-1)
    assert DynamicsSettings(resume_from="ckpt/checkpoint-8").resume_from == "ckpt/checkpoint-8"
