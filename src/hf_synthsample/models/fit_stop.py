"""Train until the model fits its own rows: a ``TrainerCallback`` that scores the model every so many
epochs (or steps) and stops the Trainer once the score reaches a target, so that two training sets
are compared once each has been *learnt* (equal steps are not equal training).

Example:
    >>> from hf_synthsample.models.fit_stop import FitTargetCallback
    >>> cb = FitTargetCallback(lambda model: 95.0, target=90.0, every=2)
    >>> cb.target, cb.every, cb.unit, cb.history, cb.reached
    (90.0, 2, 'epoch', [], False)
    >>> guard = FitTargetCallback(lambda model: 0.0, 90.0, 250, unit="step", abandon_below=5.0, abandon_after=1500)
    >>> guard.abandon_below, guard.abandon_after, guard.abandoned
    (5.0, 1500, False)
"""

from __future__ import annotations

from typing import Any, Callable

from transformers import TrainerCallback

from ..validation import check_float, check_int

__all__ = ["FitTargetCallback", "OutputCollapseCallback"]

UNITS = ("epoch", "step")


class FitTargetCallback(TrainerCallback):
    """Every ``every`` epochs (``unit="epoch"``) or optimizer steps (``unit="step"``, and at the last
    step), ``score(model)`` (a percentage); training stops once it is ``>= target``.

    ``history`` holds ``(epoch or step, score)`` per check, ``reached`` whether the target was met;
    ``on_check(position, score)`` is called after each check. The model is put back in training
    mode after scoring.

    ``abandon_below`` / ``abandon_after``: a run still below ``abandon_below`` at a check at or past
    ``abandon_after`` is stopped with ``abandoned = True``. ``confirm``: called only when ``score``
    reaches the target, and its value is the check's (e.g. ``score`` on a sample, ``confirm`` on all rows).

    ``settle`` (``unit="step"`` only; 0 = off): the last ``settle`` of the Trainer's ``max_steps`` are
    kept for it. Once the target is reached, training goes on for ``settle`` steps with the learning
    rate decayed linearly to 0 and stops with one last check (``settled_at``: the step it started).

    ``anneal`` (0 = off): the last ``anneal`` epochs (or steps) of the Trainer's budget are kept for a run
    that has not reached the target by then: it trains on with the learning rate decayed linearly to 0
    (a fit hovering just under the target at a constant rate), checked as before (``annealed_from``: the
    epoch or step it started). A run that reaches the target earlier never sees it.

    ``max_steps``: the Trainer's step budget, when known here: a ``settle`` phase not shorter than it
    is refused at once (else when training begins, before its first step). A ``score`` or ``confirm``
    that returns no finite number (``None``, ``nan``) is an error naming it.
    """

    def __init__(self, score: Callable[[Any], float], target: float, every: int, *, unit: str = "epoch",
                 on_check: Callable[[int, float], None] | None = None, abandon_below: float | None = None,
                 abandon_after: int | None = None, confirm: Callable[[Any], float] | None = None,
                 settle: int = 0, anneal: int = 0, max_steps: int | None = None):
        if not callable(score):
            raise TypeError(f"score must be a callable model -> percentage, got {type(score).__name__}")
        if confirm is not None and not callable(confirm):
            raise TypeError(f"confirm must be None or a callable model -> percentage, got {type(confirm).__name__}")
        self.confirm = confirm
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {list(UNITS)}, got {unit!r}")
        self.score, self.unit, self.on_check = score, unit, on_check
        self.target = check_float("target", target, min=0.0, max=100.0)
        self.every = check_int("every", every, min=1)
        if (abandon_below is None) != (abandon_after is None):
            raise ValueError("abandon_below and abandon_after go together: give both or neither, got "
                             f"abandon_below={abandon_below!r}, abandon_after={abandon_after!r}")
        self.abandon_below = None if abandon_below is None else check_float(
            "abandon_below", abandon_below, min=0.0, max=self.target)
        self.abandon_after = None if abandon_after is None else check_int("abandon_after", abandon_after, min=1)
        self.settle = check_int("settle", settle, min=0)
        if self.settle and unit != "step":
            raise ValueError(f"settle counts steps: it needs unit='step', got unit={unit!r}")
        self.anneal = check_int("anneal", anneal, min=0)
        if self.settle and self.anneal:
            raise ValueError(f"settle and anneal each keep the budget's last steps: give one, got settle={settle}, "
                             f"anneal={anneal}")
        self.max_steps = None if max_steps is None else check_int("max_steps", max_steps, min=1)
        if self.max_steps is not None:
            self._check_budget(self.max_steps)
        self.settled_at: int | None = None
        self.annealed_from: int | None = None
        self._decay_lr: list[float] = []
        self._decay_step: int | None = None  # the optimizer step an anneal started at
        self.history: list[tuple[int, float]] = []
        self.reached = False
        self.abandoned = False

    def _check_budget(self, max_steps: int) -> None:
        for name, kept in (("settle", self.settle), ("anneal", self.anneal if self.unit == "step" else 0)):
            if kept and kept >= max_steps:
                raise ValueError(f"{name} ({kept} steps) must be shorter than the Trainer's max_steps ({max_steps}): "
                                 f"the {name} phase is kept at the end of the budget, so no step would be left to "
                                 "reach the target; raise max_steps or lower " + name)

    def on_train_begin(self, args, state, control, **kwargs):
        if self.unit == "step" and state.max_steps and state.max_steps > 0:
            self._check_budget(int(state.max_steps))
        return control

    @staticmethod
    def _value(fn: Callable[[Any], float], role: str, model) -> float:
        value = fn(model)
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = None
        if number is None or isinstance(value, bool) or number != number or number in (float("inf"), float("-inf")):
            name = getattr(fn, "__qualname__", None) or type(fn).__name__
            raise ValueError(f"{role} callback {name!r} returned {value!r}: it must return the fit as a finite "
                             "percentage (a number in [0, 100])")
        return number

    def _check(self, position: int, model, control):
        value = self._value(self.score, "score", model)
        if self.confirm is not None and value >= self.target:
            value = self._value(self.confirm, "confirm", model)
        model.train()
        self.history.append((position, value))
        if self.on_check is not None:
            self.on_check(position, value)
        if self.settled_at is not None:  # the settle phase's last check: recorded, then stop
            control.should_training_stop = position >= self.settled_at + self.settle
        elif value >= self.target:
            self.reached = True
            if self.settle:
                self.settled_at = position
            else:
                control.should_training_stop = True
        elif self.abandon_after is not None and position >= self.abandon_after and value < self.abandon_below:
            self.abandoned = True
            control.should_training_stop = True
        return control

    def on_epoch_end(self, args, state, control, model=None, **kwargs):
        epoch = round(state.epoch or 0)
        if self.unit == "epoch" and epoch % self.every == 0:
            control = self._check(epoch, model, control)
        if (self.unit == "epoch" and self.anneal and not control.should_training_stop
                and epoch >= (getattr(state, "num_train_epochs", None) or float("inf")) - self.anneal):
            self._start_anneal(epoch, state.global_step, kwargs.get("optimizer"))
        return control

    def _start_anneal(self, position: int, step: int, optimizer) -> None:
        if self.annealed_from is None and not self.reached:
            self.annealed_from, self._decay_step = position, step
            self._decay_lr = [group["lr"] for group in optimizer.param_groups]

    def on_step_end(self, args, state, control, model=None, optimizer=None, **kwargs):
        step = state.global_step
        if self.settled_at is not None:
            done = step - self.settled_at
            if done >= self.settle or step >= state.max_steps:
                return self._check(step, model, control)
            self._decay(optimizer, 1.0 - done / self.settle)
            return control
        # with a settle phase, its steps are kept at the end of the Trainer's max_steps: the target
        # must be reached by max_steps - settle (a run that has not is stopped there, not fitted)
        last = state.max_steps - self.settle
        if self.unit == "step" and (step % self.every == 0 or step >= last):
            control = self._check(step, model, control)
            if self.settled_at is None and self.settle and step >= last:
                control.should_training_stop = True
            elif self.settled_at is not None:
                self._decay_lr = [group["lr"] for group in optimizer.param_groups]
                self._decay(optimizer, 1.0)
        if self._decay_step is not None and step > self._decay_step:  # an anneal under way: down to 0 at max_steps
            self._decay(optimizer, 1.0 - (step - self._decay_step) / max(state.max_steps - self._decay_step, 1))
        elif (self.unit == "step" and self.anneal and not control.should_training_stop
              and step >= state.max_steps - self.anneal):
            self._start_anneal(step, step, optimizer)
        return control

    def _decay(self, optimizer, share: float) -> None:
        # The Trainer's scheduler sets each group's lr before this callback runs; the settle and
        # anneal phases override it for the next step (linear from the lr at their start down to 0).
        for group, start in zip(optimizer.param_groups, self._decay_lr):
            group["lr"] = start * share


class OutputCollapseCallback(TrainerCallback):
    """Stops a run whose model gives one output for (nearly) every input.

    After epoch ``epoch`` (once), ``outputs(model)`` (e.g. its greedy decodes of some training rows):
    when under ``floor`` % of them are distinct, ``collapsed`` is set and training stops. ``share``:
    the % of distinct outputs at the check (``None`` before it). The model is put back in training
    mode after the check.

    Why: an encoder-decoder whose decoder has learnt the targets' language and ignores its input
    decodes one output for every row; its loss plateaus (0.5 nats per token on COGS logical forms)
    at 0 % exact match, a state it was never seen to leave. Restarting it at once, not after its
    full budget, is the cheap way out (dev/notes/issue-48-cartography.md).

    Example:
        >>> from types import SimpleNamespace
        >>> check = OutputCollapseCallback(lambda model: ["a b"] * 19 + ["c"], epoch=2)
        >>> state, control = SimpleNamespace(epoch=2.0), SimpleNamespace(should_training_stop=False)
        >>> _ = check.on_epoch_end(None, state, control, model=SimpleNamespace(train=lambda: None))
        >>> check.share, check.collapsed, control.should_training_stop
        (10.0, False, False)
    """

    def __init__(self, outputs: Callable[[Any], Any], epoch: int, floor: float = 10.0):
        if not callable(outputs):
            raise TypeError(f"outputs must be a callable model -> outputs, got {type(outputs).__name__}")
        self.outputs = outputs
        self.epoch = check_int("epoch", epoch, min=1)
        self.floor = check_float("floor", floor, min=0.0, max=100.0)
        self.share: float | None = None
        self.collapsed = False

    def on_epoch_end(self, args, state, control, model=None, **kwargs):
        if self.share is None and round(state.epoch or 0) >= self.epoch:
            outputs = list(self.outputs(model))
            if not outputs:
                raise ValueError("outputs callback returned no output: give it rows to decode")
            model.train()
            self.share = round(100.0 * len(set(outputs)) / len(outputs), 1)
            if self.share < self.floor:
                self.collapsed = True
                control.should_training_stop = True
        return control
