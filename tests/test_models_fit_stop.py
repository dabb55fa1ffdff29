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


def _run_steps(cb, max_steps, lr_of_schedule=lambda step: 1.0):
    """Drive ``cb`` as the Trainer does: after each optimizer step the scheduler sets the lr, then
    ``on_step_end``; returns the lr each step used."""
    model, control = _Model(), _control()
    optimizer = SimpleNamespace(param_groups=[{"lr": lr_of_schedule(0)}])
    used = []
    for step in range(1, max_steps + 1):
        used.append(optimizer.param_groups[0]["lr"])
        optimizer.param_groups[0]["lr"] = lr_of_schedule(step)  # the scheduler's step
        cb.on_step_end(None, SimpleNamespace(global_step=step, max_steps=max_steps), control, model=model,
                       optimizer=optimizer)
        if control.should_training_stop:
            return used, control
    return used, control


def test_settle_trains_on_with_the_lr_decayed_to_zero_then_checks_once_more():
    scores = iter([40.0, 95.0, 97.0])
    cb = FitTargetCallback(lambda m: next(scores), 90.0, 2, unit="step", settle=4)
    used, control = _run_steps(cb, 20, lambda step: 0.5)
    # reached at step 4; steps 5-8 at 0.5 * (1, 3/4, 2/4, 1/4); the last check at step 8 is the fit
    assert cb.reached and cb.settled_at == 4 and control.should_training_stop
    assert used == [0.5, 0.5, 0.5, 0.5, 0.5, 0.375, 0.25, 0.125]
    assert cb.history == [(2, 40.0), (4, 95.0), (8, 97.0)]


def test_settle_keeps_its_steps_at_the_end_of_the_budget():
    cb = FitTargetCallback(lambda m: 50.0, 90.0, 4, unit="step", settle=3)
    used, control = _run_steps(cb, 10)
    # never reached: the last check is at max_steps - settle = 7, and training stops there
    assert cb.history == [(4, 50.0), (7, 50.0)] and len(used) == 7
    assert not cb.reached and cb.settled_at is None and control.should_training_stop
    late = iter([50.0, 91.0, 92.0])
    cb = FitTargetCallback(lambda m: next(late), 90.0, 4, unit="step", settle=3)
    used, control = _run_steps(cb, 10)
    assert cb.history == [(4, 50.0), (7, 91.0), (10, 92.0)] and cb.settled_at == 7 and len(used) == 10


def _run_epochs(cb, epochs, steps_per_epoch, scores):
    """Drive ``cb`` over whole epochs at a constant scheduler lr of 1.0; returns the lr each step used."""
    model, control = _Model(), _control()
    optimizer = SimpleNamespace(param_groups=[{"lr": 1.0}])
    max_steps, used = epochs * steps_per_epoch, []
    for step in range(1, max_steps + 1):
        used.append(optimizer.param_groups[0]["lr"])
        optimizer.param_groups[0]["lr"] = 1.0
        state = SimpleNamespace(global_step=step, max_steps=max_steps, epoch=step / steps_per_epoch,
                                num_train_epochs=epochs)
        cb.on_step_end(None, state, control, model=model, optimizer=optimizer)
        if step % steps_per_epoch == 0:
            cb.on_epoch_end(None, state, control, model=model, optimizer=optimizer)
        if control.should_training_stop:
            break
    return used, control


def test_anneal_decays_the_lr_over_the_budgets_last_epochs_when_the_target_is_not_reached():
    cb = FitTargetCallback(lambda m: 50.0, 90.0, 1, anneal=2)
    used, control = _run_epochs(cb, 6, 2, None)
    # no fit by epoch 4 (= 6 - 2): steps 9-12 use 1, 3/4, 2/4, 1/4; every epoch is still checked
    assert cb.annealed_from == 4 and not cb.reached
    assert used == [1.0] * 9 + [0.75, 0.5, 0.25]
    assert [e for e, _ in cb.history] == [1, 2, 3, 4, 5, 6]
    scores = iter([50.0, 60.0, 70.0, 80.0, 95.0])
    cb = FitTargetCallback(lambda m: next(scores), 90.0, 1, anneal=2)
    used, control = _run_epochs(cb, 6, 2, None)
    assert cb.annealed_from == 4 and cb.reached and control.should_training_stop and len(used) == 10


def test_a_run_fitted_before_the_anneal_never_sees_it():
    scores = iter([50.0, 60.0, 95.0])
    cb = FitTargetCallback(lambda m: next(scores), 90.0, 1, anneal=2)
    used, control = _run_epochs(cb, 6, 2, None)
    assert cb.reached and cb.annealed_from is None and used == [1.0] * 6


def test_anneal_in_steps():
    cb = FitTargetCallback(lambda m: 50.0, 90.0, 4, unit="step", anneal=4)
    used, control = _run_steps(cb, 10)
    assert cb.annealed_from == 6 and used == [1.0] * 7 + [0.75, 0.5, 0.25]
    assert cb.history == [(4, 50.0), (8, 50.0), (10, 50.0)] and not cb.reached


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(score=len, target=90.0, every=1, anneal=-1), ValueError, "anneal"),
    (dict(score=len, target=90.0, every=1, unit="step", settle=2, anneal=2), ValueError, "give one"),
    (dict(score=len, target=90.0, every=1, settle=-1), ValueError, "settle"),
    (dict(score=len, target=90.0, every=1, settle=5), ValueError, "settle counts steps"),
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


def _stock_run(tmp_path, cb, rows: int, **kwargs) -> tuple:
    """Train a tiny BART with the stock Trainer (constant scheduler lr 1e-3) and ``cb``; returns the
    trainer and the lr each step used (read at ``on_step_begin``, after the scheduler and ``cb``)."""
    from datasets import Dataset
    from transformers import TrainerCallback

    from hf_synthsample.models import build_scratch_model, build_word_tokenizer, train_seq2seq

    data = Dataset.from_dict({"src": ["a b", "b a", "a a", "b b"][:rows] * 4,
                              "tgt": ["x y", "y x", "x x", "y y"][:rows] * 4})
    tokenizer = build_word_tokenizer(list(data["src"]) + list(data["tgt"]))
    model = build_scratch_model(tokenizer, "bart", seed=0, d_model=16, encoder_layers=1, decoder_layers=1,
                                encoder_ffn_dim=16, decoder_ffn_dim=16, encoder_attention_heads=2,
                                decoder_attention_heads=2)
    lrs = []

    class Record(TrainerCallback):
        def on_step_begin(self, args, state, control, optimizer=None, **kw):
            lrs.append(optimizer.param_groups[0]["lr"])

    trainer = train_seq2seq(model, tokenizer, data, source_column="src", target_column="tgt",
                            output_dir=str(tmp_path), learning_rate=1e-3, seed=0, lr_scheduler_type="constant",
                            callbacks=[Record(), cb], disable_tqdm=True, **kwargs)
    return trainer, lrs


def test_settle_with_the_stock_trainer(tmp_path):
    """The real Trainer: the scheduler sets the lr before ``on_step_end``, the settle phase overrides it."""
    cb = FitTargetCallback(lambda m: 100.0, 90.0, 2, unit="step", settle=4)
    trainer, lrs = _stock_run(tmp_path, cb, 4, max_steps=50, batch_size=4)
    assert trainer.state.global_step == 6 and cb.settled_at == 2 and cb.history == [(2, 100.0), (6, 100.0)]
    assert lrs == pytest.approx([1e-3, 1e-3, 1e-3, 7.5e-4, 5e-4, 2.5e-4])


def test_anneal_with_the_stock_trainer(tmp_path):
    """The real Trainer, epoch checks: a run not fitted by the budget's last epoch trains it at a decaying lr."""
    cb = FitTargetCallback(lambda m: 0.0, 90.0, 1, anneal=1)
    _, lrs = _stock_run(tmp_path, cb, 2, epochs=3, batch_size=2)
    # 4 steps an epoch; the third epoch's steps at 1e-3 * (1, 3/4, 2/4, 1/4)
    assert cb.annealed_from == 2 and [e for e, _ in cb.history] == [1, 2, 3]
    assert lrs == pytest.approx([1e-3] * 9 + [7.5e-4, 5e-4, 2.5e-4])
