"""FitTargetCallback: checks on the stated cadence, stops at the target, records the curve."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("transformers")

from hf_synthsample.models import FitTargetCallback  # noqa: E402


class _Model:
    def __init__(self):
        self.trained = 0

    def train(self, mode: bool = True):
        self.trained += 1


def _control():
    return SimpleNamespace(should_training_stop=False)


def test_epoch_checks_every_n_and_stops_at_target():
    scores = iter([10.0, 60.0, 90.0, 99.0])
    seen = []
    cb = FitTargetCallback(lambda m: next(scores), 90.0, 2, on_check=lambda e, v: seen.append((e, v)))
    model, control = _Model(), _control()
    for epoch in (1, 2, 3, 4, 5, 6):  # checks at 2, 4, 6
        cb.on_epoch_end(None, SimpleNamespace(epoch=float(epoch)), control, model=model)
        cb.on_step_end(None, SimpleNamespace(global_step=epoch, max_steps=6), control, model=model)  # epoch unit: no-op
    assert cb.history == [(2, 10.0), (4, 60.0), (6, 90.0)] == seen
    assert cb.reached and control.should_training_stop and model.trained == 3


def test_step_checks_every_n_and_at_the_last_step():
    cb = FitTargetCallback(lambda m: 50.0, 90.0, 4, unit="step")
    model, control = _Model(), _control()
    for step in range(1, 11):
        cb.on_step_end(None, SimpleNamespace(global_step=step, max_steps=10), control, model=model)
        cb.on_epoch_end(None, SimpleNamespace(epoch=float(step)), control, model=model)  # step unit: no-op
    assert cb.history == [(4, 50.0), (8, 50.0), (10, 50.0)]
    assert not cb.reached and not control.should_training_stop


def test_a_run_still_below_the_floor_after_the_given_step_is_abandoned():
    scores = iter([0.0, 0.0, 0.5, 0.0, 80.0])
    cb = FitTargetCallback(lambda m: next(scores), 90.0, 250, unit="step", abandon_below=5.0, abandon_after=1000)
    model, control = _Model(), _control()
    for step in range(250, 1251, 250):
        cb.on_step_end(None, SimpleNamespace(global_step=step, max_steps=3000), control, model=model)
        if control.should_training_stop:
            break
    # 0.0 at 250-750 is early days; at 1000 the run is still under 5 %: stopped, not reached
    assert cb.history == [(250, 0.0), (500, 0.0), (750, 0.5), (1000, 0.0)]
    assert cb.abandoned and not cb.reached and control.should_training_stop


def test_a_run_that_learns_is_not_abandoned():
    scores = iter([0.0, 30.0, 95.0])
    cb = FitTargetCallback(lambda m: next(scores), 90.0, 1, abandon_below=5.0, abandon_after=2)
    model, control = _Model(), _control()
    for epoch in (1, 2, 3):
        cb.on_epoch_end(None, SimpleNamespace(epoch=float(epoch)), control, model=model)
    assert cb.reached and not cb.abandoned


def test_confirm_runs_only_at_the_target_and_its_value_decides():
    sample = iter([50.0, 92.0, 95.0])
    everything = iter([86.0, 91.0])
    calls = []

    def confirm(model):
        calls.append(1)
        return next(everything)

    cb = FitTargetCallback(lambda m: next(sample), 90.0, 1, confirm=confirm)
    model, control = _Model(), _control()
    for epoch in (1, 2, 3):
        cb.on_epoch_end(None, SimpleNamespace(epoch=float(epoch)), control, model=model)
        if control.should_training_stop:
            break
    # epoch 1: the sample is under the target, no full pass; epoch 2: the sample passes, all rows
    # do not (86); epoch 3: both pass
    assert cb.history == [(1, 50.0), (2, 86.0), (3, 91.0)]
    assert len(calls) == 2 and cb.reached and model.trained == 3


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(score=len, target=90.0, every=1, confirm=3), TypeError, "confirm must be None or a callable"),
    (dict(score=len, target=90.0, every=1, abandon_below=5.0), ValueError, "abandon_below and abandon_after go together"),
    (dict(score=len, target=90.0, every=1, abandon_below=95.0, abandon_after=3), ValueError, "abandon_below"),
    (dict(score=len, target=90.0, every=1, abandon_below=5.0, abandon_after=0), ValueError, "abandon_after"),
    (dict(score=1, target=90.0, every=1), TypeError, "score must be a callable"),
    (dict(score=len, target=190.0, every=1), ValueError, "target"),
    (dict(score=len, target=90.0, every=0), ValueError, "every"),
    (dict(score=len, target=90.0, every=1, unit="epochs"), ValueError, r"unit must be one of \['epoch', 'step'\]"),
])
def test_bad_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        FitTargetCallback(**kwargs)
