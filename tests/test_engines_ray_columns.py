"""Issue 24: Ray column checks happen when the plan is built, wherever Ray knows the schema."""

from __future__ import annotations

import pytest

pytest.importorskip("ray.data", reason="Ray Data is not installed: pip install 'hf-synthsample[ray]'")

from hf_synthsample.engines import ray as hr  # noqa: E402


def _no_task(monkeypatch):
    """Any task submitted fails the test: the errors below must come before one."""
    import ray.data

    def boom(*a, **k):
        raise AssertionError("a Ray task ran before the column check")

    monkeypatch.setattr(ray.data.Dataset, "materialize", boom)
    monkeypatch.setattr(ray.data.Dataset, "iter_batches", boom)


def test_missing_and_mistyped_columns_are_errors_when_the_plan_is_built(local_ray, monkeypatch):
    ds = hr.generate("calculator", "dcfg", num_examples=100, block_size=50)
    _no_task(monkeypatch)
    cols = "['expression', 'answer', 'distribution'"
    with pytest.raises(ValueError, match=rf"column: no column 'nope'; columns: \{cols}"):
        hr.structure_columns(ds, "nope", "calculator")
    with pytest.raises(TypeError, match="column: column 'length' holds int32 values; it must hold programs as str"):
        hr.structure_columns(ds, "length", "calculator")
    with pytest.raises(ValueError, match=r"input_columns: no column 'nope'"):
        hr.map_columns(ds, lambda b: b, input_columns=["nope"])
    with pytest.raises(TypeError, match="input_columns must be a list of column names"):
        hr.map_columns(ds, lambda b: b, input_columns="expression")
    with pytest.raises(ValueError, match=r"ds: no column 'expression' \(the calculator salient columns are computed "
                                         r"from \['expression'\]\)"):
        hr.salient_columns(ds.drop_columns(["expression"]), "calculator")


def test_after_a_step_of_unknown_output_the_tasks_still_check(local_ray):
    ds = hr.map_columns(hr.generate("calculator", "dcfg", num_examples=40, block_size=20),
                        lambda b: {"n": [1] * len(b["expression"])}, input_columns=["expression"])
    assert hr._known_schema(ds) is None  # Ray cannot say before running: the check is deferred, not skipped
    with pytest.raises(Exception, match="input_columns: no column 'nope'"):
        hr.map_columns(ds, lambda b: b, input_columns=["nope"]).materialize()
