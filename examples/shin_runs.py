"""The training runs of ``shin_calculator.py``: the Calculator data sets of each run, one model
trained and scored (in this process or a ``--jobs`` worker: :func:`run_job` is importable, as a
spawned worker needs), and the scores it reports (accuracy on the mixture, per source, per number
of operations, and the model's fit on its own distribution).
"""

from __future__ import annotations

import argparse
import os

from harness import ConvergenceStopper

__all__ = ["EVAL_SEED_OFFSET", "HELDOUT_SEED_OFFSET", "OPS_BUCKETS", "identical_sets", "load_data", "load_split",
           "run_job", "to_percent", "train_and_score", "training_config"]

EVAL_SEED_OFFSET = 1_000_003  # the evaluation set's seed: far from every training set's seed
HELDOUT_SEED_OFFSET = 2_000_003  # each training config's held-out (in-distribution) rows
#: num_ops buckets of the per-level table: a single digit, one operation, 2-3, 4-7, 8 or more
OPS_BUCKETS = ((0, 0), (1, 1), (2, 3), (4, 7), (8, None))


def _bucket_name(lo: int, hi: int | None) -> str:
    return f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")


def training_config(base: str, variable: str | None) -> str:
    """The calculator builder config trained on: ``dcfg`` or ``dcfg-homogenized-max-paren-depth``."""
    from hf_synthsample.builders.calculator import homogenized_config_name

    return base if variable is None else homogenized_config_name(base, variable)


def load_split(config: str, a: argparse.Namespace, *, num_examples: int, seed: int):
    import hf_synthsample

    kwargs = dict(num_examples=num_examples, seed=seed, split="train", cache_dir=a.cache_dir, num_proc=a.num_proc)
    if "homogenized" in config:
        kwargs["eps"] = a.eps
    return hf_synthsample.load_dataset("calculator", config, **kwargs)


def load_data(config: str, a: argparse.Namespace):
    """``(train, held-out)`` of a training config: ``num_train`` rows (seed ``--seed``) and ``num_fit``
    fresh rows of the same distribution (another seed) to measure the fit on."""
    return (load_split(config, a, num_examples=a.num_train, seed=a.seed),
            load_split(config, a, num_examples=a.num_fit, seed=a.seed + HELDOUT_SEED_OFFSET))


def identical_sets(train_sets: dict) -> list[list[str]]:
    """Groups of training configs whose rows are identical (e.g. at a large eps, homogenizing on
    ``length`` and on ``num_ops`` both only thin the single digits and keep the same draws).

    Example:
        >>> from datasets import Dataset
        >>> d = {k: Dataset.from_dict({"expression": e}) for k, e in (("a", ["1", "2"]), ("b", ["1", "2"]), ("c", ["3"]))}
        >>> identical_sets(d)
        [['a', 'b']]
    """
    import hashlib

    groups: dict[str, list[str]] = {}
    for name, ds in train_sets.items():
        digest = hashlib.sha256("\n".join(ds["expression"]).encode()).hexdigest()
        groups.setdefault(digest, []).append(name)
    return [g for g in groups.values() if len(g) > 1]


def run_job(job: tuple, a: argparse.Namespace) -> dict[str, float]:
    """Train and score one ``(base, variable, seed)`` model (in this process or a worker)."""
    import torch

    torch.set_num_threads(a.threads)
    base, variable, seed = job
    config = training_config(base, variable)
    train_ds, heldout_ds = load_data(config, a)
    eval_ds = load_split("mixture", a, num_examples=a.num_eval, seed=a.seed + EVAL_SEED_OFFSET)
    return train_and_score(train_ds, heldout_ds, eval_ds, a, seed, os.path.join(a.out, "checkpoints", f"{config}-{seed}"))


def train_and_score(train_ds, heldout_ds, eval_ds, a: argparse.Namespace, seed: int, workdir: str) -> dict[str, float]:
    """Train one fresh classifier; its accuracy (%) on the mixture overall, per source distribution
    and per ``num_ops`` bucket, and its fit: on its first ``num_fit`` training rows (``fit_train``)
    and on fresh rows of its own distribution (``fit_heldout``).

    With ``a.patience`` (train to convergence, :class:`ConvergenceStopper`) training stops on the
    ``fit_heldout`` score (or at ``a.max_steps``) and the best checkpoint by that score is scored;
    ``steps`` (steps trained), ``best_step`` (the checkpoint kept), ``stopped_early`` and ``curve``
    (``[[step, held-out %], ...]``) are added. Without it, ``steps`` is the fixed schedule's."""
    import numpy as np

    from hf_synthsample.models import build_calculator_model, evaluate_classifier, train_classifier

    model, tokenizer = build_calculator_model(seed=seed, hidden_size=a.hidden_size, embedding_dim=a.embedding_dim)

    def heldout_score() -> float:
        return float(evaluate_classifier(model, tokenizer, heldout_ds, text_column="expression",
                                         label_column="answer")["accuracy"])

    def mixture_score() -> float:  # recorded only: never selects a checkpoint nor stops training
        return float(evaluate_classifier(model, tokenizer, eval_ds, text_column="expression",
                                         label_column="answer")["accuracy"])

    stopper = None
    schedule: dict = dict(epochs=a.epochs)
    if a.patience is not None:
        stopper = ConvergenceStopper(model, heldout_score, eval_every=a.eval_every, patience=a.patience,
                                     min_delta=a.min_delta, min_steps=a.min_steps, monitor=mixture_score)
        schedule = dict(epochs=1.0, max_steps=a.max_steps, callbacks=[stopper.as_callback()])
    trainer = train_classifier(model, tokenizer, train_ds, text_column="expression", label_column="answer",
                               output_dir=workdir, batch_size=a.batch_size,
                               learning_rate=a.learning_rate, seed=seed, lr_scheduler_type=a.lr_scheduler,
                               disable_tqdm=a.preset == "tiny" or a.jobs > 1, **schedule)  # interleaved bars are noise
    steps = int(trainer.state.global_step)
    if stopper is not None:
        stopper.restore()
    scores = evaluate_classifier(trainer.model, tokenizer, eval_ds, text_column="expression",
                                 label_column="answer", group_column="distribution")
    out = to_percent(scores)
    correct = np.asarray(scores["predictions"]) == np.asarray(eval_ds["answer"])
    num_ops = np.asarray(eval_ds["num_ops"])
    for lo, hi in OPS_BUCKETS:
        rows = (num_ops >= lo) & (num_ops <= (hi if hi is not None else num_ops.max()))
        out[f"ops {_bucket_name(lo, hi)}"] = float(100.0 * correct[rows].mean()) if rows.any() else None
    fit_rows = train_ds.select(range(min(a.num_fit, len(train_ds))))
    for name, ds in (("fit_train", fit_rows), ("fit_heldout", heldout_ds)):
        out[name] = float(evaluate_classifier(trainer.model, tokenizer, ds, text_column="expression",
                                              label_column="answer")["accuracy"])
    out["steps"] = steps
    if stopper is not None:
        out.update(best_step=stopper.best_step, stopped_early=stopper.stopped_early,
                   curve=[[step, score] for step, score in stopper.curve],
                   mixture_curve=[[step, score] for step, score in stopper.monitor_curve])
    return out


def to_percent(scores: dict) -> dict[str, float]:
    """``evaluate_classifier``'s ``{"accuracy": pct, "accuracy_dcfg": pct, ...}`` -> ``{"mixture": pct, "dcfg": pct, ...}``."""
    return {("mixture" if k == "accuracy" else k[len("accuracy_"):]): float(v)
            for k, v in scores.items() if k == "accuracy" or k.startswith("accuracy_")}
