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


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(score=1, target=90.0, every=1), TypeError, "score must be a callable"),
    (dict(score=len, target=190.0, every=1), ValueError, "target"),
    (dict(score=len, target=90.0, every=0), ValueError, "every"),
    (dict(score=len, target=90.0, every=1, unit="epochs"), ValueError, r"unit must be one of \['epoch', 'step'\]"),
])
def test_bad_arguments(kwargs, err, match):
    with pytest.raises(err, match=match):
        FitTargetCallback(**kwargs)
