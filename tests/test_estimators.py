"""Conformance of every estimator-like object, as scikit-learn's ``check_estimator`` does: params
round-trip, ``clone`` (ours and ``sklearn.base.clone``), ``set_params`` and assignment of a field,
the constructor's signature, ``get_params(deep=...)``, bad and unknown values refused naming the
field, deterministic results, JSON-safe settings records.

To add an estimator, append a :class:`Case` to ``CASES``: a factory for a configured instance, a
small dataset, how to run it (its result, compared for determinism), a valid change of one
setting and a bad value of one field.
"""

from __future__ import annotations

import inspect
import json
import pickle
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import datasets
import numpy as np
import pytest

from hf_synthsample.cartography import NoiseFlagger, TrainingDynamicsCallback
from hf_synthsample.cartography.noise import LexicalNoiseFlagger
from hf_synthsample.curve import CompositionalityCurve
from hf_synthsample.settings import Estimator, Settings, clone, setting
from hf_synthsample.sampling import (CMaxEntSampler, DifficultySampler, DiversityReporter, HomogenizeSampler,
                                     HybridSampler, RepetitionCurriculum, StreamHomogenizeSampler, UATSampler,
                                     UniformSampler)
from hf_synthsample.splits import MCDSplitter


@dataclass
class Case:
    """One estimator under test."""

    make: Callable[[], Estimator]
    data: Callable[[], datasets.Dataset]
    run: Callable[[Estimator, datasets.Dataset], Any]  # the result compared across runs
    change: dict  # a valid set_params
    bad: tuple[str, Any]  # (field, a value its checks refuse)
    fitted: tuple[str, ...] = ()  # attributes ending in "_" that run sets
    id: str = field(default="")


def _programs() -> datasets.Dataset:
    progs = [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh" for a in "abcd" for b in "abc"]
    return datasets.Dataset.from_dict({"program": progs, "template": [p[1] + p[4] for p in progs],
                                       "length": [len(p) % 5 for p in progs],
                                       "difficulty": [float((7 * i) % 11) for i in range(len(progs))]})


def _indices(k: int) -> Callable:
    return lambda est, ds: est.indices(ds, k).tolist()


def _split(est, ds) -> tuple:
    split = est.split(ds, progress=False)
    return tuple(split["train"]["program"]), tuple(split["test"]["program"])


def _dynamics():
    """Training dynamics of 12 rows over 4 epochs: the loss falls, rows 3 and 8 stay hard."""
    import pyarrow as pa

    rows = [{"example_id": i, "epoch": e, "loss": (2.0 if i in (3, 8) else 1.0) / (e + 1) + 0.01 * i,
             "margin_deficit": (3.0 if i in (3, 8) else 0.5) / (e + 1) + 0.02 * ((5 * i) % 7),
             "correct": e > 1 and i not in (3, 8)} for e in range(4) for i in range(12)]
    return pa.Table.from_pylist(rows)


CASES = [
    Case(lambda: MCDSplitter(language="sexpr", compound_weights=False, patience=10, seed=1), _programs, _split,
         {"test_size": 0.3}, ("max_atom_divergence", 1.5), ("result_",), "mcd"),
    Case(lambda: MCDSplitter(language="sexpr", compound_weights=False, patience=10, goal=0.45), _programs, _split,
         {"divergence_tolerance": 0.02}, ("divergence_tolerance", -0.1), ("result_",), "mcd-target"),
    Case(lambda: MCDSplitter(method="tmcd", language="sexpr", patience=10, max_atom_divergence=0.1), _programs,
         _split, {"seed": 2}, ("seed", -1), ("result_",), "tmcd"),
    Case(lambda: MCDSplitter(method="random", seed=3), _programs, _split, {"test_size": 0.5}, ("test_size", 0.0),
         id="random-split"),
    Case(lambda: MCDSplitter(method="template", template_column="template", test_size=0.17, seed=1), _programs, _split,
         {"size_tolerance": 0.2}, ("size_tolerance", 0.9), id="template-split"),
    Case(lambda: UniformSampler(seed=1), _programs, _indices(10), {"seed": 2}, ("seed", 1.5), ("order_",),
         "uniform"),
    Case(lambda: UATSampler(-0.5, seed=1), _programs, _indices(10), {"alpha": -1.0}, ("alpha", 0.5), ("order_",),
         "uat"),
    Case(lambda: CMaxEntSampler(language="sexpr", seed=1), _programs, _indices(8), {"w_atoms": 0.5},
         ("w_compounds", -1.0), ("order_",), "cmaxent"),
    Case(lambda: HybridSampler(language="sexpr", seed=1), _programs, _indices(8), {"distinct": False},
         ("device", "tpu"), ("order_",), "hybrid"),
    Case(lambda: HomogenizeSampler("length", seed=1), _programs, _indices(20), {"mode": "sequential"},
         ("mode", "greedy"), ("report_",), "homogenize"),
    Case(lambda: StreamHomogenizeSampler(variables=("length", "template"), eps=0.1, pilot=20, seed=1), _programs,
         lambda est, ds: est.sample(lambda rng: ds[rng.randrange(len(ds))], 15), {"mode": "sequential"}, ("eps", 0.0),
         ("report_",), "homogenize-stream"),
    Case(lambda: DiversityReporter(program_column="program", language="sexpr"), _programs,
         lambda est, ds: est.report(ds.select(range(10)), ds).to_dict(), {"max_height": 1}, ("compound_weights", True),
         ("report_",), "diversity"),
    Case(lambda: DifficultySampler("difficulty", (0.25, 0.75), seed=1), _programs, _indices(10),
         {"quantile": "mix"}, ("quantile", (0.8, 0.2)), id="difficulty"),
    Case(lambda: RepetitionCurriculum(batch_size=4, seed=1), _programs,
         lambda est, ds: est.fit(ds).indices(12).tolist(), {"hold": 0.1}, ("full_at", 1.5),
         ("ranking_", "initial_size_"), "repetition-examples"),
    Case(lambda: RepetitionCurriculum(batch_size=2, repeat="primitives", fraction=0.5), _programs,
         lambda est, ds: est.fit([p.split() for p in ds["template"]]).indices(9).tolist(), {"seed": 3},
         ("repeat", "atoms"), ("ranking_", "chosen_primitives_"), "repetition-primitives"),
    Case(lambda: NoiseFlagger(count=3), _dynamics, lambda est, t: est.flag(t).example_ids.tolist(),
         {"measure": "loss"}, ("loss_drop", 0.0), ("flags_",), "noise-flags"),
    Case(lambda: LexicalNoiseFlagger(fraction=0.2), _programs,
         lambda est, ds: est.flag(ds["program"], ds["template"]).tolist(), {"iterations": 3}, ("smoothing", 0.0),
         ("scores_", "flags_"), "lexical-noise-flags"),
    # the dynamics callback runs inside a Trainer (tests/test_cartography_callback.py): its run here is its record
    Case(lambda: TrainingDynamicsCallback(("aum", "loss"), seed=1), _programs,
         lambda est, ds: est.settings.to_record(), {"eval_examples": 5}, ("eval_batch_size", 0), id="dynamics-callback"),
    # the curve trains models: its run here is its settings' record (the conformance of the params is what is checked)
    Case(lambda: CompositionalityCurve(targets=[0.1, 0.3], column="program", language="sexpr",
                                       target_column="template", seed=1), _programs,
         lambda est, ds: est.settings.to_record(), {"fit_target": 90.0}, ("learning_rate", float("inf")),
         id="curve"),
]


@pytest.fixture(params=CASES, ids=[c.id for c in CASES])
def case(request) -> Case:
    return request.param


def test_params_round_trip(case):
    est = case.make()
    params = est.get_params(deep=False)
    assert list(params) == list(est.settings_class.specs())
    again = type(est)(**params)
    assert again.get_params() == est.get_params() and again.settings == est.settings
    assert type(est)(**est.get_params()).settings == est.settings  # deep params (field__name) too
    assert type(est)(est.settings).settings == est.settings  # the settings object itself


def test_clone_is_unfitted_with_the_same_params(case):
    est, ds = case.make(), case.data()
    case.run(est, ds)
    for name in case.fitted:
        assert getattr(est, name) is not None
    copy = clone(est)
    assert type(copy) is type(est) and copy is not est and copy.get_params() == est.get_params()
    assert not [k for k in vars(copy) if k.endswith("_")]


def test_set_params_then_get_params(case):
    est, ds = case.make(), case.data()
    case.run(est, ds)
    assert est.set_params(**case.change) is est
    params = est.get_params()
    for name, value in case.change.items():
        assert params[name] == value and getattr(est, name) == value
    # the changed settings are the ones that run (nothing kept from the first run)
    assert case.run(est, ds) == case.run(type(est)(**params), ds)


def test_bad_value_refused_naming_the_field(case):
    name, value = case.bad
    est = case.make()
    with pytest.raises((ValueError, TypeError), match=rf"^{name}\b"):
        type(est)(**{**est.get_params(), name: value})
    before = est.get_params()
    with pytest.raises((ValueError, TypeError), match=rf"^{name}\b"):
        est.set_params(**{name: value})
    assert est.get_params() == before  # a refused change leaves the settings as they were


def test_unknown_param_refused(case):
    est = case.make()
    with pytest.raises((ValueError, TypeError), match="no_such_setting"):
        type(est)(**{**est.get_params(), "no_such_setting": 1})
    with pytest.raises(ValueError, match="no setting 'no_such_setting'"):
        est.set_params(no_such_setting=1)


def test_deterministic(case):
    ds = case.data()
    first, second = case.run(case.make(), ds), case.run(case.make(), ds)
    assert first == second
    est = case.make()
    assert case.run(clone(est), ds) == first


def test_settings_record_is_json(case):
    est = case.make()
    record = est.settings.to_record()
    assert isinstance(est.settings, Settings) and json.loads(json.dumps(record)) == record
    assert set(record) <= set(est.settings_class.specs())
    assert json.dumps(est.provenance())


def test_every_estimator_class_has_a_case():
    """A new estimator class in these packages needs a case above."""
    import hf_synthsample.cartography as cartography
    import hf_synthsample.sampling as sampling
    import hf_synthsample.splits as splits

    classes = [getattr(m, n) for m in (sampling, splits, cartography) for n in m.__all__]
    estimators = {c for c in classes if isinstance(c, type) and issubclass(c, Estimator)
                  and hasattr(c, "settings_class")}  # not the abstract bases
    covered = {type(c.make()) for c in CASES}
    assert estimators <= covered, sorted(c.__name__ for c in estimators - covered)
    assert np.all([issubclass(c, Estimator) for c in covered])


def test_assigning_a_field_is_set_params(case):
    """``est.seed = v`` is ``set_params(seed=v)``: validated, and what runs (not an attribute beside the settings)."""
    est, ds = case.make(), case.data()
    (name, value), = list(case.change.items())[:1]
    setattr(est, name, value)
    assert est.get_params()[name] == value and getattr(est, name) == value and name not in vars(est)
    assert est.settings == case.make().set_params(**{name: value}).settings
    assert case.run(est, ds) == case.run(type(est)(**est.get_params()), ds)
    bad_name, bad_value = case.bad
    before = est.get_params()
    with pytest.raises((ValueError, TypeError)) as constructed:
        type(est)(**{**before, bad_name: bad_value})
    with pytest.raises(type(constructed.value), match=rf"^{bad_name}\b") as assigned:
        setattr(est, bad_name, bad_value)
    assert str(assigned.value) == str(constructed.value)  # the same error as at construction
    assert est.get_params() == before
    est.other_attribute_ = 1  # results and private attributes are plain attributes
    est._private = 2
    assert vars(est)["other_attribute_"] == 1 and est._private == 2


def test_signature_lists_the_fields(case):
    est = case.make()
    cls, specs, defaults = type(est), est.settings_class.specs(), est.settings_class.defaults()
    params = inspect.signature(cls).parameters
    assert inspect.signature(cls.__init__).parameters.keys() - {"self"} == params.keys()
    fields = [p for p in params.values() if p.name != "settings"]
    assert sorted(p.name for p in fields) == sorted(specs)
    for p in fields:
        assert p.default == defaults.get(p.name, inspect.Parameter.empty), p.name
        assert p.kind == (inspect.Parameter.POSITIONAL_OR_KEYWORD if p.name in cls.positional
                          else inspect.Parameter.KEYWORD_ONLY), p.name
    if not cls.positional:
        assert params["settings"].kind == inspect.Parameter.POSITIONAL_ONLY and params["settings"].default is None
    assert cls(est.settings).settings == est.settings  # the settings object, by position, still works
    bound = inspect.signature(cls).bind(**{k: v for k, v in est.get_params(deep=False).items()})
    assert cls(*bound.args, **bound.kwargs).settings == est.settings


def test_get_params_deep_and_shallow(case):
    est = case.make()
    shallow = est.get_params(deep=False)
    assert list(shallow) == list(est.settings_class.specs())
    nested = [k for k, v in shallow.items() if isinstance(v, (Settings, Estimator))]
    deep = est.get_params(deep=True)
    assert {k: deep[k] for k in shallow} == shallow
    assert sorted(set(deep) - set(shallow)) == sorted(f"{k}__{sub}" for k in nested for sub in shallow[k].get_params())


def test_sklearn_clone(case):
    """``sklearn.base.clone`` rebuilds each estimator from ``get_params(deep=False)`` and checks that every
    param is held as given (``is``)."""
    sklearn_base = pytest.importorskip("sklearn.base")
    est, ds = case.make(), case.data()
    case.run(est, ds)
    copy = sklearn_base.clone(est)
    assert type(copy) is type(est) and copy is not est and copy.settings == est.settings
    assert not [k for k in vars(copy) if k.endswith("_")]
    assert case.run(copy, ds) == case.run(case.make(), ds)
    changed = sklearn_base.clone(est.set_params(**case.change))
    assert changed.get_params() == est.get_params()


# ------------------------------------------------------------------ nested settings and estimators (deep params)
@dataclass(frozen=True)
class _InnerSettings(Settings):
    size: float = setting(0.5, help="a share", min=0.0, max=1.0)
    names: tuple[str, ...] = setting(("a",), help="names")


class _Inner(Estimator):
    settings_class = _InnerSettings


@dataclass(frozen=True)
class _OuterSettings(Settings):
    seed: int = setting(0, help="seed", min=0)
    options: Any = setting(_InnerSettings(), help="nested settings", kind="any")
    step: Any = setting(None, help="a nested estimator", kind="any", none=True)


class _Outer(Estimator):
    settings_class = _OuterSettings


def test_deep_params_of_nested_settings_and_estimators():
    outer = _Outer(step=_Inner(size=0.25))
    deep = outer.get_params()
    assert deep["options__size"] == 0.5 and deep["step__size"] == 0.25 and deep["step__names"] == ("a",)
    assert set(outer.get_params(deep=False)) == {"seed", "options", "step"}
    step = outer.step
    outer.set_params(options__size=0.75, step__names=["b", "c"])
    assert outer.options == _InnerSettings(size=0.75) and outer.step.get_params() == {"size": 0.25, "names": ("b", "c")}
    assert step.names == ("a",)  # the estimator held before is left as it was (a changed clone is held)
    with pytest.raises(ValueError, match="^size must be <= 1.0"):
        outer.set_params(options__size=2.0)
    with pytest.raises(ValueError, match="no setting 'nope'"):
        outer.set_params(options__nope=1)
    with pytest.raises(ValueError, match="^seed__x: seed holds int"):
        outer.set_params(seed__x=1)
    def values(est):  # an estimator has no ==: its params stand for it
        return {k: v for k, v in est.get_params().items() if k != "step"}

    copy = clone(outer)
    assert copy.step is not outer.step and values(copy) == values(outer)
    sklearn_base = pytest.importorskip("sklearn.base")
    again = sklearn_base.clone(outer)
    assert again.step is not outer.step and values(again) == values(outer)


# ------------------------------------------------------------------ more of scikit-learn's estimator_checks
def _public(est) -> set:
    return {k for k in vars(est) if not k.startswith("_")}


def test_no_attributes_set_in_init(case):
    """``check_no_attributes_set_in_init``: the constructor holds the settings and nothing public beside them."""
    est = case.make()
    assert _public(est) == {"settings"}
    assert not [k for k in vars(est) if k.endswith("_") and not k.startswith("_")]


def test_run_does_not_change_the_params_and_adds_only_fitted_attributes(case):
    """``check_estimators_overwrite_params`` and ``check_dont_overwrite_parameters``: a run leaves the
    settings as they were, and every public attribute it adds ends in ``_``."""
    est, ds = case.make(), case.data()
    before, settings = est.get_params(), est.settings
    case.run(est, ds)
    assert est.get_params() == before and est.settings == settings
    added = _public(est) - {"settings"}
    assert all(k.endswith("_") for k in added), added
    assert set(case.fitted) <= added


def test_run_is_idempotent(case):
    """``check_fit_idempotent``: running the same estimator twice gives the same result."""
    est, ds = case.make(), case.data()
    assert case.run(est, ds) == case.run(est, ds)


def test_pickle_round_trip(case):
    """``check_estimators_pickle``: a pickled estimator (run or not) comes back with its settings and
    fitted attributes, and runs the same."""
    est, ds = case.make(), case.data()
    first = case.run(est, ds)
    again = pickle.loads(pickle.dumps(est))
    assert type(again) is type(est) and again.settings == est.settings
    assert {k for k in vars(again) if k.endswith("_")} == {k for k in vars(est) if k.endswith("_")}
    assert case.run(again, ds) == first
    assert pickle.loads(pickle.dumps(case.make())).get_params() == case.make().get_params()


def test_set_params_with_its_own_params_changes_nothing(case):
    """``check_set_params``: ``set_params(**get_params(deep=False))`` and each value set back are no change."""
    est = case.make()
    params = est.get_params(deep=False)
    assert est.set_params(**params).get_params(deep=False) == params
    for name, value in params.items():
        assert est.set_params(**{name: value}).settings == case.make().settings, name


def test_repr_names_the_changed_settings(case):
    """``check_estimator_repr``: ``repr`` works, names the class and each changed setting."""
    est = case.make()
    text = repr(est)
    assert text.startswith(type(est).__name__ + "(")
    assert all(f"{k}=" in text for k in est.settings.changed())


def test_defaults_in_the_signature_are_the_settings_defaults(case):
    """``check_parameters_default_constructible``: every default the signature shows is the settings
    class's; an estimator constructible without arguments holds exactly those defaults."""
    cls = type(case.make())
    defaults = cls.settings_class.defaults()
    try:
        est = cls()
    except (ValueError, TypeError) as err:  # a field without a default, or a choice to make (fraction or count)
        assert re.match(r"^\w+", str(err)), err
        return
    assert all(est.get_params(deep=False)[k] == v for k, v in defaults.items())
