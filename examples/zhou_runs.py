"""The training runs of ``zhou_scan.py``: a scratch T5 (relative positions) or BART trained for a
fixed number of steps, the checkpoint chosen on a dev set cut from the test rows (the reference
protocol), exact match on the other test rows, the fit on training rows and an error profile.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from harness import CurveScorer, dev_test_split, error_profile, subsample

__all__ = ["build_model", "train_and_evaluate", "train_one"]


def build_model(tokenizer, args, seed: int):
    """The scratch model of ``args.arch``: T5 (relative position biases, ``--rel-buckets``) or BART
    (learned absolute positions), with the same width, depth, heads and dropout."""
    from hf_synthsample.models import build_scratch_model

    if args.arch == "t5":
        return build_scratch_model(
            tokenizer, "t5", seed=seed, d_model=args.d_model, d_kv=args.d_model // args.heads, d_ff=args.ffn,
            num_layers=args.layers, num_decoder_layers=args.layers, num_heads=args.heads, dropout_rate=args.dropout,
            relative_attention_num_buckets=args.rel_buckets, relative_attention_max_distance=max(128, args.rel_buckets))
    return build_scratch_model(
        tokenizer, "bart", seed=seed, d_model=args.d_model, encoder_layers=args.layers, decoder_layers=args.layers,
        encoder_ffn_dim=args.ffn, decoder_ffn_dim=args.ffn, encoder_attention_heads=args.heads,
        decoder_attention_heads=args.heads, dropout=args.dropout)


def train_and_evaluate(train, test, args, *, seed: int, output_dir: str) -> dict[str, Any]:
    """Word tokenizer over train + test, a scratch model (``args.arch``), ``args.steps`` steps, exact match on ``test``.

    With ``args.dev_fraction`` a seeded part of ``test`` is a dev set scored every ``args.eval_every``
    steps; the checkpoint with the best dev exact match (on ties the better fit, then the earliest) is the one evaluated on
    the remaining test rows, as in the reference code. The last checkpoint's score is kept beside it.
    """
    from hf_synthsample.columns import column_array
    from hf_synthsample.models import build_word_tokenizer, evaluate_seq2seq, train_seq2seq

    dev, test = dev_test_split(test, args.dev_fraction, seed + 3)
    texts = [str(t) for d in (train, test) for c in ("commands", "actions") for t in column_array(d, c)]
    tokenizer = build_word_tokenizer(texts)
    model = build_model(tokenizer, args, seed)
    longest = int(max(len(a.split()) for a in column_array(test, "actions")))
    if dev is not None:
        longest = max(longest, int(max(len(a.split()) for a in column_array(dev, "actions"))))
    decode = dict(source_column="commands", target_column="actions", num_beams=args.num_beams,
                  max_new_tokens=longest + 2, batch_size=args.eval_batch_size)
    curve = None
    if args.eval_every:
        # the learning curve: fit and test exact match at every --eval-every steps (and the last step)
        # on fixed seeded subsets, so a checkpoint's scores are comparable along the run
        curve = CurveScorer(
            model, tokenizer, test=subsample(test, args.curve_size, seed + 2),
            fit=subsample(train, args.sanity_size, seed) if args.sanity_size else None, dev=dev,
            every=args.eval_every, last=args.steps, num_beams=args.num_beams, max_new_tokens=longest + 2,
            batch_size=args.eval_batch_size, columns=("commands", "actions"))
    start = time.perf_counter()
    train_seq2seq(
        model, tokenizer, train, source_column="commands", target_column="actions", output_dir=output_dir,
        max_steps=args.steps, batch_size=args.batch_size, learning_rate=args.learning_rate, seed=seed,
        lr_scheduler_type=args.scheduler, warmup_steps=args.warmup_steps,
        callbacks=[curve.as_trainer_callback()] if curve else [], disable_tqdm=True)
    curve_s = curve.seconds if curve else 0.0
    train_s = time.perf_counter() - start - curve_s
    last = None
    if dev is not None:  # the last checkpoint's test score, for the record; then the dev-selected checkpoint
        last = evaluate_seq2seq(model, tokenizer, test, **decode)["exact_match"]
        curve.restore_best()
    result = evaluate_seq2seq(model, tokenizer, test, **decode)
    # the same decoding on a sample of the training rows: tells an undertrained model (both ~0)
    # from one that fits its data and fails to generalize (the paper's baseline)
    seen = evaluate_seq2seq(model, tokenizer, subsample(train, args.sanity_size, seed), **decode) \
        if args.sanity_size else {"exact_match": None}
    out = {"exact_match": float(result["exact_match"]), "num_test": int(result["num_examples"]),
           "errors": error_profile(result["predictions"], [str(a) for a in column_array(test, "actions")]),
           "train_exact_match": seen["exact_match"],
           "train_rows": int(train.num_rows), "train_seconds": round(train_s, 1),
           "eval_seconds": round(time.perf_counter() - start - train_s - curve_s, 1)}
    if curve:
        out.update(curve=curve.points, curve_seconds=round(curve_s, 1))
    if dev is not None:
        out.update(selected_step=curve.best_step, dev_exact_match=curve.best_dev,
                   num_dev=int(dev.num_rows), last_exact_match=float(last))
    return out


def train_one(key: tuple, seed: int, data: tuple, args) -> dict[str, Any]:
    """One training run on ``data`` (train, test): its record for ``runs.json``."""
    # the Trainer wants an output_dir; nothing is saved there (no checkpoints)
    with tempfile.TemporaryDirectory(prefix="zhou-scan-") as tmp:
        out = train_and_evaluate(*data, args, seed=seed, output_dir=tmp)
    record = {"key": "/".join(map(str, key)), "seed": seed, **out}
    print(f"  {record}", flush=True)
    return record
