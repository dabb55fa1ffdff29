"""Scoring a model while it trains, and keeping its best checkpoint: the paper examples choose
the checkpoint they report by a score on held-out rows (a dev set, or fresh rows of the training
distribution), never by the test set.

* :class:`CurveScorer` (seq2seq, exact match): a learning curve on test and fit rows every N steps,
  and with a dev set the best-dev checkpoint (the reference protocol of Zhou et al.'s SCAN runs);
* :func:`subsample`: a seeded subset of rows; :func:`dev_test_split`: the dev set such a choice reads, cut from the test rows (the reference's
  protocol where a data set has none); :func:`curve_table`: the curve as a results table;
  :func:`error_profile`: what kind of wrong the wrong outputs are;
* :class:`ConvergenceStopper` (any score): stop once the score stops improving, keep the best
  checkpoint (Shin et al.'s Calculator models trained to convergence).

For a fit *target* (train until the model fits N % of its rows) the library has
``hf_synthsample.models.FitTargetCallback``; :func:`harness.runs.with_restarts` restarts a run
whose init learnt nothing.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

__all__ = ["ConvergenceStopper", "CurveScorer", "curve_table", "dev_test_split", "error_profile", "subsample"]


class CurveScorer:
    """Scores the model during training: exact match on ``test`` (and on ``fit``, rows of its own
    training set, when given) after every ``every`` steps and after step ``last``, with the same
    decoding as the final evaluation. ``points`` holds ``{"step", "test_exact_match",
    "train_exact_match", "num_test", "seconds"}`` per checkpoint; ``seconds`` sums the time spent.

    ``columns``: the datasets' source and target columns.

    With a ``dev`` set each point also has ``dev_exact_match``, and the weights of the checkpoint
    with the best one are kept in memory (on a dev tie the better-fitting checkpoint, then the
    earliest): :meth:`restore_best` loads them.
    """

    def __init__(self, model, tokenizer, *, test, fit, every: int, last: int, num_beams: int,
                 max_new_tokens: int, batch_size: int, dev=None, columns: tuple[str, str] = ("source", "target")):
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be a positive number of steps, got {every!r}")
        self.model, self.tokenizer, self.test, self.fit, self.dev = model, tokenizer, test, fit, dev
        self.every, self.last, self.columns = every, last, tuple(columns)
        self.decode = dict(num_beams=num_beams, max_new_tokens=max_new_tokens, batch_size=batch_size)
        self.points: list[dict[str, Any]] = []
        self.seconds = 0.0
        self.best_dev: float | None = None
        self.best_step: int | None = None
        self.best_fit: float | None = None
        self._best_state: dict | None = None

    def restore_best(self) -> None:
        """Load the weights of the best-dev checkpoint into the model."""
        if self._best_state is None:
            raise RuntimeError("no dev-scored checkpoint yet: restore_best needs a dev set and one checkpoint")
        self.model.load_state_dict(self._best_state)

    def _score(self, dataset) -> float:
        from hf_synthsample.models import evaluate_seq2seq

        return float(evaluate_seq2seq(self.model, self.tokenizer, dataset, source_column=self.columns[0],
                                      target_column=self.columns[1], **self.decode)["exact_match"])

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Score at a checkpoint step (``state.global_step``); other steps do nothing."""
        step = state.global_step
        if step % self.every and step != self.last:
            return
        start = time.perf_counter()  # generate_predictions restores the model's train mode
        point = {"step": int(step), "test_exact_match": self._score(self.test), "num_test": int(self.test.num_rows),
                 "train_exact_match": self._score(self.fit) if self.fit is not None else None}
        dev = ""
        if self.dev is not None:
            point["dev_exact_match"] = self._score(self.dev)
            fit = point["train_exact_match"]
            # a dev tie goes to the better-fitting checkpoint, then to the earliest: on a split where dev
            # stays at 0 (SCAN* length), the earliest would be an under-trained model scored beside its fit
            tie_fits_better = (point["dev_exact_match"] == self.best_dev and fit is not None
                               and self.best_fit is not None and fit > self.best_fit)
            if self.best_dev is None or point["dev_exact_match"] > self.best_dev or tie_fits_better:
                self.best_dev, self.best_step, self.best_fit = point["dev_exact_match"], int(step), fit
                self._best_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            dev = f"dev {point['dev_exact_match']:.1f} "
        point["seconds"] = round(time.perf_counter() - start, 1)
        self.seconds += time.perf_counter() - start
        self.points.append(point)
        fit = "-" if point["train_exact_match"] is None else f"{point['train_exact_match']:.1f}"
        print(f"    step {step}: {dev}test {point['test_exact_match']:.1f} fit {fit} ({point['seconds']} s)",
              flush=True)

    def as_trainer_callback(self) -> Any:
        """This scorer as a ``transformers.TrainerCallback`` (imported here: the module's data
        functions need no torch)."""
        from transformers import TrainerCallback

        scorer = self

        class _Callback(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                scorer.on_step_end(args, state, control, **kwargs)

        return _Callback()


class ConvergenceStopper:
    """Early stopping on the model's own distribution, as a ``transformers`` ``TrainerCallback``.

    Every ``eval_every`` optimizer steps (and at the last step), ``score()`` (the accuracy in % on
    held-out rows of the training distribution) is recorded in ``curve`` as ``(step, score)``. Two
    separate rules:

    * the checkpoint kept is the one with the highest score, the latest among ties (its weights are
      copied to CPU memory; ``restore()`` loads them back): on a plateau the later, longer-trained
      checkpoint wins, not the first one to reach it;
    * stopping: a score above the best so far by more than ``min_delta`` is a gain; after
      ``patience`` evaluations in a row without one training stops, but never before ``min_steps``
      (``min_steps`` equal to the Trainer's ``max_steps``, the cap: every model trains the same
      budget and only the checkpoint is selected).

    ``monitor`` (optional): another score recorded at each evaluation in ``monitor_curve``, for the
    record only (it never selects or stops; the example passes the mixture, to show what the
    selection costs or gains).

    Example:
        >>> import torch
        >>> m = torch.nn.Linear(1, 1)
        >>> scores = iter([50.0, 60.0, 60.2, 59.0, 70.0])
        >>> stop = ConvergenceStopper(m, lambda: next(scores), eval_every=10, patience=2, min_delta=0.5)
        >>> [stop.evaluate(step) for step in (10, 20, 30, 40)]  # 60.2 and 59.0 are no gain over 60.0
        [False, False, False, True]
        >>> stop.best_step, stop.best_score, stop.curve[-1]  # but 60.2 is the best checkpoint
        (30, 60.2, (40, 59.0))
    """

    def __init__(self, model, score, *, eval_every: int, patience: int, min_delta: float, min_steps: int = 0,
                 monitor=None) -> None:
        self.model, self.score, self.monitor = model, score, monitor
        self.eval_every, self.patience, self.min_delta, self.min_steps = eval_every, patience, min_delta, min_steps
        self.curve: list[tuple[int, float]] = []
        self.monitor_curve: list[tuple[int, float]] = []
        self.best_score: float | None = None
        self.best_step: int | None = None
        self.best_state: dict | None = None
        self.gain_score: float | None = None  # the last score that counted as a gain (patience's reference)
        self.stale = 0
        self.stopped_early = False

    def evaluate(self, step: int, last: bool = False) -> bool:
        """Score the model at ``step``; returns whether training should stop (patience exhausted
        at or after ``min_steps``; ``last``: the cap's step, where training ends anyway and
        ``stopped_early`` stays False)."""
        value = float(self.score())
        self.curve.append((step, value))
        if self.monitor is not None:
            self.monitor_curve.append((step, float(self.monitor())))
        if self.best_score is None or value >= self.best_score:
            self.best_score, self.best_step = value, step
            self.best_state = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
        if self.gain_score is None or value > self.gain_score + self.min_delta:
            self.gain_score, self.stale = value, 0
        else:
            self.stale += 1
        self.stopped_early = self.stale >= self.patience and step >= self.min_steps and not last
        return self.stopped_early

    def restore(self) -> None:
        """Load the best evaluated weights into the model."""
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)

    def as_callback(self):
        """The ``TrainerCallback`` calling :meth:`evaluate` on the schedule and stopping the Trainer."""
        from transformers import TrainerCallback

        stopper = self

        class _Callback(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                step = state.global_step
                last = state.max_steps > 0 and step >= state.max_steps
                if step % stopper.eval_every == 0 or last:
                    if stopper.evaluate(step, last=last):
                        control.should_training_stop = True
                return control

        return _Callback()


def subsample(ds, size: int, seed: int):
    """A seeded random ``size``-row subset of ``ds`` (``0`` or ``size >= len``: all rows, in order)."""
    import numpy as np

    if not size or size >= ds.num_rows:
        return ds
    index = np.sort(np.random.default_rng(seed).permutation(ds.num_rows)[:size])
    return ds.select(index)


def dev_test_split(test, fraction: float, seed: int):
    """The reference's model-selection protocol (Jiang et al. 2022's ``gooddev``, used by Zhou et al.):
    a seeded ``fraction`` of the test rows becomes a dev set for choosing the checkpoint, the rest stays
    the test set. ``fraction == 0``: no dev set (``None``, all test rows)."""
    import numpy as np

    if not fraction:
        return None, test
    n_dev = max(1, int(test.num_rows * fraction))
    if n_dev >= test.num_rows:
        raise ValueError(f"dev_fraction {fraction} leaves no test rows out of {test.num_rows}")
    order = np.random.default_rng(seed).permutation(test.num_rows)
    return test.select(np.sort(order[:n_dev])), test.select(np.sort(order[n_dev:]))


def error_profile(predictions: Sequence[str], references: Sequence[str], top: int = 5) -> dict[str, Any]:
    """What kind of wrong the wrong outputs are: ``exact``; ``substituted`` (same length, some tokens
    replaced: the structure is right, a primitive is not); ``stopped_early`` (a strict prefix of the
    reference); ``other``; and ``top_substitutions``, the most common ``"reference token -> output
    token"`` pairs over the substituted rows, each counted once per row, as ``[pair, rows]``.

    Example:
        >>> error_profile(["A B", "A C", "A", "B B B"], ["A B", "A B", "A B", "A B"])["top_substitutions"]
        [['B -> C', 1]]
    """
    import collections

    if len(predictions) != len(references):
        raise ValueError(f"predictions and references must have the same length, got {len(predictions)} "
                         f"and {len(references)}")
    counts = collections.Counter()
    pairs: collections.Counter = collections.Counter()
    for pred, ref in zip(predictions, references):
        p, r = pred.split(), ref.split()
        if p == r:
            counts["exact"] += 1
        elif len(p) == len(r):
            counts["substituted"] += 1
            pairs.update({f"{b} -> {a}" for a, b in zip(p, r) if a != b})
        elif len(p) < len(r) and r[:len(p)] == p:
            counts["stopped_early"] += 1
        else:
            counts["other"] += 1
    return {**{k: counts[k] for k in ("exact", "substituted", "stopped_early", "other")},
            "top_substitutions": [[pair, n] for pair, n in pairs.most_common(top)]}


def curve_table(runs: list[dict[str, Any]], *, every: int, curve_size: int, fit_size: int, dev_fraction: float,
                num_beams: int = 1):
    """The learning curves of ``runs`` (records with a :class:`CurveScorer`'s ``curve`` points, and
    ``key``, ``seed``, ``selected_step``) as a table: one row per (run, seed, checkpoint)."""
    from .tables import ResultsTable

    dev = bool(dev_fraction)
    table = ResultsTable(
        f"Learning curves (every {every} steps)",
        ["run", "seed", "step", "fit", *(["dev exact match"] if dev else []), "test exact match"],
        caption=f"Exact match (%) at each checkpoint on a fixed seeded subset of {curve_size} test rows "
        f"(or all, if fewer); fit: on the {fit_size} training rows of the final fit (- when "
        f"--sanity-size is 0)" + (f"; dev: the {dev_fraction:g} of the test rows held out to choose the "
                                 f"checkpoint (* marks the chosen one)" if dev else "")
        + f". Same decoding as the tables (beam {num_beams}).", fit_note="")
    for run in runs:
        for point in run.get("curve", []):
            row = {"run": run["key"], "seed": run["seed"], "step": point["step"], "fit": point["train_exact_match"],
                   "test exact match": point["test_exact_match"]}
            if dev:
                mark = "*" if point["step"] == run.get("selected_step") else ""
                row["dev exact match"] = f"{point['dev_exact_match']:.1f}{mark}"
            table.add(**row)
    return table
