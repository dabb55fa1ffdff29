"""The training runs of ``karel_io.py``: a scratch T5 or attentional bi-LSTM trained on one training
distribution, until it fits ``--fit-target`` of its own tasks (checked every ``--check-every``
epochs), and its scores by execution (exact match, generalization accuracy, and how often it copies a
training program).
"""

from __future__ import annotations

import argparse
import os
import time

__all__ = ["score", "train_model"]


def train_model(name: str, train_ds, tokenizer, a: argparse.Namespace, seed: int | None = None, metric=None):
    """A scratch model trained on ``train_ds``; with ``--fit-target`` it stops once it fits that
    share of its first ``--num-fit`` tasks. Returns ``(model, fit curve)``."""
    from hf_synthsample.models import build_scratch_model, train_seq2seq

    seed = a.seed if seed is None else seed
    if a.arch == "lstm":
        model = build_scratch_model(tokenizer, "lstm", seed=seed, hidden_size=a.hidden_size,
                                    embedding_dim=a.hidden_size, dropout=a.dropout)
    else:
        model = build_scratch_model(tokenizer, "t5", seed=seed, d_model=a.d_model, num_layers=a.layers,
                                    num_decoder_layers=a.layers, d_ff=a.ffn, num_heads=a.heads,
                                    d_kv=max(1, a.d_model // a.heads), dropout_rate=a.dropout)
    callbacks, extra = [], {}
    if a.fit_target > 0:
        from hf_synthsample.models import FitTargetCallback

        fit_rows, label, curve = train_ds.select(range(min(a.num_fit, train_ds.num_rows))), f"{name} seed {seed}", []

        def on_check(epoch: int, fit: float) -> None:  # the curve keeps the CPU seconds of each check
            curve.append((epoch, round(fit, 2), round(time.process_time(), 1)))
            print(f"  {label} epoch {epoch}: fit {fit:.1f} ({time.process_time():.0f} CPU-s)", flush=True)

        callbacks.append(FitTargetCallback(lambda m: score(m, tokenizer, fit_rows, metric, a)["generalization_accuracy"],
                                           a.fit_target, a.check_every, on_check=on_check))
    if a.lr_schedule == "constant":
        extra = dict(lr_scheduler_type="constant_with_warmup", warmup_steps=0.02)
    trainer = train_seq2seq(model, tokenizer, train_ds, source_column="source", target_column="target",
                            output_dir=os.path.join(a.out, "checkpoints", f"{name}-{seed}"), epochs=a.epochs,
                            batch_size=a.batch_size, learning_rate=a.learning_rate, seed=seed,
                            # sources run from ~30 to ~450 words: batches of similar length pad far less
                            train_sampling_strategy="group_by_length", disable_tqdm=a.preset.startswith("tiny"),
                            callbacks=callbacks, **extra)
    curve = curve if callbacks else []
    return trainer.model, curve, round(trainer.state.epoch or 0, 2)


def score(model, tokenizer, test_ds, metric, a: argparse.Namespace,
          known: set | None = None) -> dict[str, float | None]:
    """Exact match and generalization accuracy (%) of greedy/beam predictions, by execution
    (``metric``: the loaded ``karel_execution`` module); ``None`` for an empty test set. With
    ``known`` (the training programs' token strings), also the error profile: ``copied``, the share
    of predictions that are one of those programs verbatim (a memorizing model answers new tasks
    with old programs), and ``unparsable``."""
    from hf_synthsample.models import generate_predictions

    if test_ds.num_rows == 0:
        return {"exact_match": None, "generalization_accuracy": None, "semantic_accuracy": None}
    preds = generate_predictions(model, tokenizer, test_ds, source_column="source", batch_size=32,
                                 max_new_tokens=a.max_new_tokens, num_beams=a.num_beams)
    res = metric.compute(predictions=preds, references=list(test_ds["target"]), examples=list(test_ds["examples"]))
    out = {k: 100.0 * res[k] for k in ("exact_match", "generalization_accuracy", "semantic_accuracy")}
    if known is not None:
        out["copied"] = 100.0 * sum(" ".join(p.split()) in known for p in preds) / len(preds)
        out["unparsable"] = 100.0 * res["num_unparsable"] / len(preds)
    return out
