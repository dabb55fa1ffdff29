"""Zhou et al. (2023), "Data Factors for Better Compositional Generalization": SCAN primitive
augmentation (Table 1), dataset size vs number of primitives (Table 3) and SCAN* length
extrapolation (Figure 2), with a Transformer trained from scratch.

    python examples/zhou_scan.py                          # --small (default): a pipeline check, minutes
    python examples/zhou_scan.py --cpu                    # Table 1 jump, 1x vs 20x: about 20 min with --jobs 2, 2,200 CPU-s per seed
    python examples/zhou_scan.py --cpu --splits around_right   # Table 1 around right, 1x vs 20x: ~3,600 CPU-s per seed
    python examples/zhou_scan.py --cpu-table3             # Table 3 with the --cpu model: 5 models per seed, ~9,000 CPU-s
    python examples/zhou_scan.py --cpu-table3 --seed 1 --table3-rows 2x more-primitives augzero   # some rows only
    python examples/zhou_scan.py --cpu-fig2               # Figure 2 at SCAN* L = 4, 8, 16 with a T5 d_model 128
    python examples/zhou_scan.py --tables 1 --splits jump --factors 1 20   # any subset of tables, splits, factors
    accelerate launch examples/zhou_scan.py --paper       # paper scale: GPU, hours per table

What each table is (paper sections 3 and 4.3, appendices A.2, B.1, C.1, C.3):

* ``table1``: rows ``jump`` (SCAN ``addprim_jump``) and ``around_right`` (SCAN
  ``template_around_right``); columns ``1x`` (no augmentation), ``2x``, ``20x`` (``--paper``
  adds ``200x``): exact match (%) on the split's test set after training on the train set with
  Kx primitive augmentation (:class:`~hf_synthsample.domains.scan_augment.PrimitiveAugmenter`:
  verbs for jump; verbs and directions for around right).
* ``table3``: SCAN Around Right, rows ``Origin Dataset`` (1x), ``2x Augmentation``, ``+ More
  primitives`` (the 20x set with its augmented rows down-sampled to the number the 2x set has,
  the original rows all kept: paper footnote 6), ``+ More prim. & larger size`` (20x) and ``+
  AugZero`` (k copies of the whole vocabulary, App. C.3); column ``SCAN (Around Right)`` plus
  the train set size.
* ``figure2``: SCAN* length splits (App. A.2): train on commands of ``0 < l <= L`` words, test on
  ``L < l <= 2L``; the shorter splits are halved from the longest one (``scan_star``
  ``length_<L>`` configs). Rows ``L``, column exact match (%). The paper shows this as a plot
  (Figure 2); the issue asked for a table, so it is both.

Every model of one table trains for the same number of steps (the paper's rule), whatever the
train set size. Results are the mean over ``--seeds``; every run is in ``runs.json``.

Every score is shown with the model's fit beside it (exact match on ``--sanity-size`` rows of its own
training set): a 0 with a high fit is the paper's failure to generalize, a 0 with a low fit is an
undertrained model. ``--cpu`` runs only Table 1's jump row, 1x vs 20x, on the full SCAN train
and test splits (train 14,670 rows, 20x: 270,071; test 7,706, of which 770 are the dev set) with a
scratch BART (d_model 128, 3+3 layers, ffn 256, 4 heads, dropout 0.1) for 6,000 steps of 64 at lr
1e-3, the reference's checkpoint selection (below) and greedy decoding; ``--jobs 2`` trains the two
models side by side (about 20 minutes on 2 cores). Its measured figures are in
``docs/reproductions.md``. Why this model: at d_model 64 (T5 or BART) the 20x model fits its rows
and still writes one fixed augmented verb (``I_LOOK_15``, say) wherever the jump test wants
``I_JUMP``, so jump stays at 8-27 %; at d_model 128 and 3+3 layers it reaches ~90 %. runs.json
records this per run (``errors``: exact, substituted, stopped early, other, and the most common
substitutions). ``--cpu --splits around_right`` is the same model and budget on Table 1's other
row (train 15,225, test 4,476 of which 447 are the dev set). ``--cpu-table3`` runs Table 3 with the
same model, budget and protocol (AugZero with k=20, the 20x set's scale, not the paper's 200);
``--cpu-fig2`` runs Figure 2 on SCAN* L = 4, 8, 16 (halved from 16, 50 primitives, 1,000 train /
200 test rows) with a T5 of the same size (relative positions, which can reach output positions
past the training lengths; BART's absolute ones cannot) for 10,000 steps (L = 16 needs them to fit). Measured figures and
costs of all three: ``docs/reproductions.md``.

``--eval-every N`` scores each model every N training steps (and at its last step) on a fixed
seeded subset of ``--curve-size`` test rows (default 300) and on the fit rows, with the final
evaluation's decoding: the learning curve goes to ``runs.json`` (``curve``) and to a table on
the results page (``curve.md``). Off for ``--small``; ``--cpu`` and ``--paper`` score every 500
steps, which the dev set needs. Training is the same with or without it.

Scale. ``--small`` subsamples the SCAN train sets to 1,000 rows before augmentation
(``--train-size``) and the test sets to 200 (``--test-size``), trains a narrow T5 (d_model 64,
2+2 layers, no dropout, constant learning rate 5e-3) for 200 steps of batch 32, decodes greedily,
and scales SCAN* down (``L`` in 4, 8, 16 halved from 16, 50 primitives, 1,000 train / 100 test
rows). That is ~3.5 min of CPU time for the 11 runs (about 4 min on an idle 2-core machine, 11 on
this shared one under load 8-11); the models are undertrained (exact match ~0 also on their own
training rows: ``train_exact_match`` in ``runs.json``), so its numbers check the pipeline and are
*not* the paper's results. ``--paper`` is the paper's setting (App. B.1): T5
with relative positions, 3+3 layers, d_model 256, feed-forward 512, 4 heads, dropout 0.1, Adam,
batch 128, Noam schedule with factor 2.0 and 5,000 warmup steps (peak learning rate
2.0 * 256^-0.5 * 5000^-0.5 = 1.77e-3, ``inverse_sqrt`` here), 50,000 steps, beam 5, 5 seeds, all
train and test rows, SCAN* ``L`` in 31, 62, 125, 250 halved from 250 with 200 primitives, 200x
augmentation and AugZero k=200. Any flag overrides the preset.

Checkpoint selection (``--dev-fraction``, ``--eval-every``). The paper "select[s] the best model
based on [its] dev-set exact-match accuracy"; SCAN has no dev set, and the reference code (Jiang et
al. 2022, which Zhou et al. follow) makes one by holding out a random 10 % of each *test* set
(``gooddev``), scoring it every 500 steps and reporting the best checkpoint on the other 90 %.
``--cpu`` and ``--paper`` do the same (``--dev-fraction 0.1 --eval-every 500``); runs.json keeps the
chosen step, its dev score and the last checkpoint's test score beside it. ``--dev-fraction 0``
evaluates the last checkpoint on all test rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any, Sequence

#: the result files a run writes at the top of --out; a run first removes those of the previous one
#: (harness.clear_outputs), so tables of two runs never sit side by side
OUTPUTS = ("table*.md", "table*.json", "table*.png", "figure*.md", "figure*.json", "figure*.png", "curve.md",
           "curve.json", "results.md", "results.json", "runs.json")

#: SCAN splits of Table 1 (row label -> exact SCAN config)
SCAN_SPLITS = {"jump": "addprim_jump", "around_right": "template_around_right"}
TABLE3_ROWS = ("Origin Dataset", "2x Augmentation", "+ More primitives", "+ More prim. & larger size", "+ AugZero")
#: --table3-rows names of the Table 3 rows, in TABLE3_ROWS order
TABLE3_ROW_NAMES = dict(zip(("1x", "2x", "more-primitives", "larger", "augzero"), TABLE3_ROWS))
TABLES = ("1", "3", "fig2")
#: per table: the columns drawn as bars (None: every numeric one) and the x-axis label of its PNG
PLOTS = {"table1": (None, "SCAN split (bars: primitive augmentation factor)"),
         "table3": (["SCAN (Around Right)"], "training set"),
         "figure2": (["exact match"], "L: longest training command (words); test commands have L+1 to 2L words")}

_PAPER_LR = 2.0 * 256 ** -0.5 * 5000 ** -0.5
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": dict(sanity_size=8, train_size=48, test_size=12, factors=[1, 2, 20], augzero_k=3, steps=4, batch_size=16,
                 learning_rate=1e-3, warmup_steps=0, scheduler="constant", d_model=16, layers=1, ffn=32, heads=2,
                 dropout=0.1, seeds=[0], num_beams=1, star_lengths=[2, 4], star_source=4, star_primitives=10,
                 star_train=48, star_test=8, rel_buckets=32, tables=list(TABLES), splits=list(SCAN_SPLITS),
                 dev_fraction=0.0, eval_every=None, arch="t5"),
    "small": dict(sanity_size=100, train_size=1000, test_size=200, factors=[1, 2, 20], augzero_k=20, steps=200,
                  batch_size=32, learning_rate=5e-3, warmup_steps=20, scheduler="constant_with_warmup", d_model=64,
                  layers=2, ffn=128, heads=4, dropout=0.0, seeds=[0], num_beams=1, star_lengths=[4, 8, 16], star_source=16,
                  star_primitives=50, star_train=1000, star_test=100, rel_buckets=32, tables=list(TABLES),
                  splits=list(SCAN_SPLITS), dev_fraction=0.0, eval_every=None, arch="t5"),
    # CPU, <= 30 min on 2 cores with --jobs 2: Table 1 jump, 1x vs 20x, the full SCAN train and test splits,
    # the reference's checkpoint selection (10 % of the test rows as dev, every 500 steps). BART d_model 128,
    # 3+3 layers: at d_model 64 (T5 or BART) the 20x model fits its rows and still emits one fixed verb for
    # "jump" (jump 8-27 %); at 128 it reaches ~90 % within 5,000 steps (docs/reproductions.md)
    "cpu": dict(sanity_size=300, train_size=0, test_size=0, factors=[1, 20], augzero_k=20, steps=6_000,
                batch_size=64, learning_rate=1e-3, warmup_steps=100, scheduler="constant_with_warmup", d_model=128,
                layers=3, ffn=256, heads=4, dropout=0.1, seeds=[0], num_beams=1, star_lengths=[4, 8, 16],
                star_source=16, star_primitives=50, star_train=1000, star_test=100, rel_buckets=128, tables=["1"],
                splits=["jump"], dev_fraction=0.1, eval_every=500, arch="bart"),
    # CPU, Table 3 (SCAN around right): the --cpu model and budget on the 1x, 2x, 20x-down-to-2x, 20x and
    # AugZero (k=20: the 20x set's scale, not the paper's 200) train sets; five runs per seed, each costing
    # what one --cpu --splits around_right model does (docs/reproductions.md)
    "cpu-table3": dict(sanity_size=300, train_size=0, test_size=0, factors=[1, 2, 20], augzero_k=20, steps=6_000,
                       batch_size=64, learning_rate=1e-3, warmup_steps=100, scheduler="constant_with_warmup",
                       d_model=128, layers=3, ffn=256, heads=4, dropout=0.1, seeds=[0], num_beams=1,
                       star_lengths=[4, 8, 16], star_source=16, star_primitives=50, star_train=1000, star_test=100,
                       rel_buckets=128, tables=["3"], splits=["around_right"], dev_fraction=0.1, eval_every=500,
                       arch="bart"),
    # CPU, Figure 2 (SCAN* length splits L = 4, 8, 16 halved from 16, 50 primitives, 1,000 train / 200 test
    # rows): T5, whose relative positions can reach output positions longer than any it trained on (BART's
    # learned absolute positions past the training lengths are untrained, so BART cannot show the trend);
    # 10,000 steps: the T5 fits L = 16's rows slowly (19 % after 1,500 steps; no lr in 5e-4..4e-3 is faster)
    "cpu-fig2": dict(sanity_size=200, train_size=0, test_size=0, factors=[1, 20], augzero_k=20, steps=10_000,
                     batch_size=64, learning_rate=1e-3, warmup_steps=100, scheduler="constant_with_warmup",
                     d_model=128, layers=3, ffn=256, heads=4, dropout=0.1, seeds=[0], num_beams=1,
                     star_lengths=[4, 8, 16], star_source=16, star_primitives=50, star_train=1000, star_test=200,
                     rel_buckets=32, tables=["fig2"], splits=["jump"], dev_fraction=0.1, eval_every=500, arch="t5"),
    "paper": dict(sanity_size=1000, train_size=0, test_size=0, factors=[1, 2, 20, 200], augzero_k=200, steps=50_000,
                  batch_size=128, learning_rate=_PAPER_LR, warmup_steps=5_000, scheduler="inverse_sqrt", d_model=256,
                  layers=3, ffn=512, heads=4, dropout=0.1, seeds=[0, 1, 2, 3, 4], num_beams=5, star_lengths=[31, 62, 125, 250],
                  star_source=250, star_primitives=200, star_train=10_000, star_test=1_000, rel_buckets=32,
                  tables=list(TABLES), splits=list(SCAN_SPLITS), dev_fraction=0.1, eval_every=500, arch="t5"),
}


# ------------------------------------------------------------------------------------------------
# Data (no torch needed)
# ------------------------------------------------------------------------------------------------
def subsample(ds, size: int, seed: int):
    """A seeded random ``size``-row subset of ``ds`` (``0`` or ``size >= len``: all rows, in order)."""
    import numpy as np

    if not size or size >= ds.num_rows:
        return ds
    index = np.sort(np.random.default_rng(seed).permutation(ds.num_rows)[:size])
    return ds.select(index)


def scan_split(split: str, *, train_size: int, test_size: int, seed: int, cache_dir: str | None = None):
    """Train and test ``Dataset`` of an exact SCAN split (``addprim_jump``...), subsampled (seeded)."""
    import hf_synthsample

    ds = hf_synthsample.load_dataset("scan", split, seed=seed, cache_dir=cache_dir)
    return subsample(ds["train"], train_size, seed), subsample(ds["test"], test_size, seed + 1)


def augment(train, split: str, factor: int, seed: int):
    """Kx primitive augmentation of a SCAN train set (``factor == 1``: unchanged, ``augmented`` = 0)."""
    from hf_synthsample.domains.scan_augment import PrimitiveAugmenter

    if factor == 1:
        return train.add_column("augmented", [0] * train.num_rows)
    aug = PrimitiveAugmenter.for_split(split, factor, seed=seed)
    return train.map(aug, batched=True, with_indices=True, remove_columns=[], desc=f"{factor}x augmentation")


def more_primitives(aug_large, aug_small, seed: int):
    """Table 3's "+ More primitives": every original row of ``aug_large`` plus as many of its
    augmented rows (seeded sample) as ``aug_small`` has, so its size equals ``aug_small``'s."""
    import numpy as np

    from hf_synthsample.columns import column_array

    flags_large = column_array(aug_large, "augmented")
    n_small = int((column_array(aug_small, "augmented") > 0).sum())
    augmented = np.flatnonzero(flags_large > 0)
    if n_small > len(augmented):
        raise ValueError(f"the large augmentation has {len(augmented)} augmented rows, fewer than the {n_small} asked")
    keep = np.random.default_rng(seed).choice(augmented, size=n_small, replace=False)
    return aug_large.select(np.sort(np.concatenate([np.flatnonzero(flags_large == 0), keep])))


def augzero(train, k: int):
    """AugZero: ``k`` copies of the vocabulary, every example in each copy (paper App. C.3)."""
    from hf_synthsample.domains.scan_augment import AugZero

    return train.map(AugZero(k, ("commands", "actions")), batched=True, desc=f"AugZero k={k}")


def star_length_split(L: int, *, source: int, num_primitives: int, train_size: int, test_size: int, seed: int,
                      cache_dir: str | None = None):
    """Train (``0 < l <= L``) and test (``L < l <= 2L``) of a SCAN* length split halved from ``source``."""
    import hf_synthsample

    ds = hf_synthsample.load_dataset(
        "scan_star", "length", max_length=L, source_max_length=source, num_primitives=num_primitives,
        num_examples=train_size, num_test=test_size, seed=seed, cache_dir=cache_dir)
    return ds["train"], ds["test"]


# ------------------------------------------------------------------------------------------------
# Training and evaluation (hf_synthsample.models)
# ------------------------------------------------------------------------------------------------
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
    callbacks = []
    if args.eval_every:
        # the learning curve: fit and test exact match at every --eval-every steps (and the last step)
        # on fixed seeded subsets, so a checkpoint's scores are comparable along the run
        curve = CurveScorer(
            model, tokenizer, test=subsample(test, args.curve_size, seed + 2),
            fit=subsample(train, args.sanity_size, seed) if args.sanity_size else None, dev=dev,
            every=args.eval_every, last=args.steps, num_beams=args.num_beams, max_new_tokens=longest + 2,
            batch_size=args.eval_batch_size)
        callbacks.append(curve)
    start = time.perf_counter()
    train_seq2seq(
        model, tokenizer, train, source_column="commands", target_column="actions", output_dir=output_dir,
        max_steps=args.steps, batch_size=args.batch_size, learning_rate=args.learning_rate, seed=seed,
        lr_scheduler_type=args.scheduler, warmup_steps=args.warmup_steps,
        callbacks=[c.as_trainer_callback() for c in callbacks],
        disable_tqdm=True)
    curve_s = callbacks[0].seconds if callbacks else 0.0
    train_s = time.perf_counter() - start - curve_s
    last = None
    if dev is not None:
        # the last checkpoint's test score, for the record; then the dev-selected checkpoint
        last = evaluate_seq2seq(
            model, tokenizer, test, source_column="commands", target_column="actions", num_beams=args.num_beams,
            max_new_tokens=longest + 2, batch_size=args.eval_batch_size)["exact_match"]
        callbacks[0].restore_best()
    result = evaluate_seq2seq(
        model, tokenizer, test, source_column="commands", target_column="actions", num_beams=args.num_beams,
        max_new_tokens=longest + 2, batch_size=args.eval_batch_size)
    # the same decoding on a sample of the training rows: tells an undertrained model (both ~0)
    # from one that fits its data and fails to generalize (the paper's baseline)
    seen = evaluate_seq2seq(
        model, tokenizer, subsample(train, args.sanity_size, seed), source_column="commands",
        target_column="actions", num_beams=args.num_beams, max_new_tokens=longest + 2,
        batch_size=args.eval_batch_size) if args.sanity_size else {"exact_match": None}
    out = {"exact_match": float(result["exact_match"]), "num_test": int(result["num_examples"]),
           "errors": error_profile(result["predictions"], [str(a) for a in column_array(test, "actions")]),
           "train_exact_match": seen["exact_match"],
           "train_rows": int(train.num_rows), "train_seconds": round(train_s, 1),
           "eval_seconds": round(time.perf_counter() - start - train_s - curve_s, 1)}
    if callbacks:
        out.update(curve=callbacks[0].points, curve_seconds=round(curve_s, 1))
    if dev is not None:
        out.update(selected_step=callbacks[0].best_step, dev_exact_match=callbacks[0].best_dev,
                   num_dev=int(dev.num_rows), last_exact_match=float(last))
    return out


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


class CurveScorer:
    """Scores the model during training: exact match on ``test`` (and on ``fit``, rows of its own
    training set, when given) after every ``every`` steps and after step ``last``, with the same
    decoding as the final evaluation. ``points`` holds ``{"step", "test_exact_match",
    "train_exact_match", "num_test", "seconds"}`` per checkpoint; ``seconds`` sums the time spent.

    With a ``dev`` set each point also has ``dev_exact_match``, and the weights of the checkpoint
    with the best one are kept in memory (on a dev tie the better-fitting checkpoint, then the
    earliest): :meth:`restore_best` loads them.
    """

    def __init__(self, model, tokenizer, *, test, fit, every: int, last: int, num_beams: int,
                 max_new_tokens: int, batch_size: int, dev=None):
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be a positive number of steps, got {every!r}")
        self.model, self.tokenizer, self.test, self.fit, self.dev = model, tokenizer, test, fit, dev
        self.every, self.last = every, last
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

        return float(evaluate_seq2seq(self.model, self.tokenizer, dataset, source_column="commands",
                                      target_column="actions", **self.decode)["exact_match"])

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


#: the data of the planned runs, read by the forked workers of :meth:`Runner.run_planned`
_PLANNED: list[tuple] = []


def _train_planned(index: int) -> dict[str, Any]:
    key, seed, train, test, args = _PLANNED[index]
    return _train_one(key, seed, train, test, args)


def _train_one(key: tuple, seed: int, train, test, args) -> dict[str, Any]:
    # the Trainer wants an output_dir; nothing is saved there (no checkpoints)
    with tempfile.TemporaryDirectory(prefix="zhou-scan-") as tmp:
        out = train_and_evaluate(train, test, args, seed=seed, output_dir=tmp)
    record = {"key": "/".join(map(str, key)), "seed": seed, **out}
    print(f"  {record}", flush=True)
    return record


def _run_forked(n: int, jobs: int) -> list[dict[str, Any]]:
    """Train planned runs ``0 .. n-1`` in ``jobs`` forked processes (run ``i`` in process ``i % jobs``),
    records in order (:func:`hf_synthsample.processes.run_forked`)."""
    from hf_synthsample.processes import run_forked

    return run_forked(_train_planned, n, jobs, describe=lambda i: f"training run {i}")


class Runner:
    """Runs (and remembers) one training run per (data key, seed), so tables share runs.

    With ``planning`` on, :meth:`run` only notes what a table asks for (and answers a zero
    placeholder); :meth:`run_planned` then trains the noted runs in ``jobs`` worker processes, and
    the tables are built again from the finished runs. Results do not depend on ``jobs``: each run
    is seeded on its own, and ``runs`` keeps the order the tables ask in.
    """

    def __init__(self, args):
        self.args = args
        self.runs: list[dict[str, Any]] = []
        self._done: dict[tuple, dict] = {}
        self.planning = False
        self._plan: list[tuple] = []

    def run(self, key: tuple, make_data, seed: int) -> dict[str, Any]:
        if (key, seed) in self._done:
            return self._done[(key, seed)]
        if self.planning:
            if all((key, seed) != (k, s) for k, s, _ in self._plan):
                self._plan.append((key, seed, make_data))
            return {"exact_match": 0.0, "train_exact_match": 0.0, "train_rows": 0}
        train, test = make_data(seed)
        record = _train_one(key, seed, train, test, self.args)
        self.runs.append(record)
        self._done[(key, seed)] = record
        return record

    def run_planned(self, jobs: int) -> None:
        """Train every planned run, ``jobs`` at a time (forked workers; the data is made here first,
        so the workers never write the datasets cache at the same time)."""
        _PLANNED[:] = [(key, seed, *make(seed), self.args) for key, seed, make in self._plan]
        if jobs > 1 and len(_PLANNED) > 1:
            records = _run_forked(len(_PLANNED), jobs)
        else:
            records = [_train_planned(i) for i in range(len(_PLANNED))]
        for (key, seed, _), record in zip(self._plan, records):
            self.runs.append(record)
            self._done[(key, seed)] = record
        self._plan, self.planning = [], False
        _PLANNED.clear()

    def score(self, key: tuple, make_data):
        """Exact match over the seeds (mean ± sd), the fit on training rows beside it."""
        from harness import Score

        runs = [self.run(key, make_data, seed) for seed in self.args.seeds]
        fits = [r["train_exact_match"] for r in runs]
        return Score.of([r["exact_match"] for r in runs], fit=None if None in fits else fits)


def _fit_note(args) -> str:
    return (f"fit: exact match on {args.sanity_size} rows sampled from the model's own training set."
            if args.sanity_size else "")


def _caption(args, extra: str) -> str:
    from harness import describe_settings

    settings = describe_settings(args.preset, args.overrides)
    cpu = "CPU-scale settings (smaller model and budget than the paper)"
    scale = {"paper": "paper-scale settings", "cpu": cpu, "cpu-table3": cpu, "cpu-fig2": cpu + ", SCAN* scaled down",
             }.get(args.preset, f"{args.preset} settings: a pipeline check, NOT the paper's results")
    scale = f"{settings}: {scale}" if not args.overrides else f"{settings} (the preset is {scale})"
    sizes = (f"train subsample {args.train_size or 'all'} rows before augmentation, test subsample "
             f"{args.test_size or 'all'} rows; " if extra != "star" else
             f"{args.star_train} train / {args.star_test} test rows per split, {args.star_primitives} primitives; ")
    if args.dev_fraction:
        sizes += (f"checkpoint chosen every {args.eval_every} steps by exact match on {args.dev_fraction:g} of the "
                  f"test rows held out as a dev set (the reference's protocol), scored on the other test rows; ")
    return (f"Exact match (%), mean±sd over {len(args.seeds)} seed(s) {list(args.seeds)}. {scale}. {sizes}{args.arch.upper()} from scratch "
            f"d_model {args.d_model}, {args.layers}+{args.layers} layers, ffn {args.ffn}, {args.heads} heads; "
            f"{args.steps} steps of batch {args.batch_size}, lr {args.learning_rate:.3g} ({args.scheduler}); "
            f"beam {args.num_beams}.")


# ------------------------------------------------------------------------------------------------
# Tables
# ------------------------------------------------------------------------------------------------
def _scan_data(args, split: str):
    cache: dict[int, tuple] = {}

    def base(seed: int):
        if seed not in cache:
            cache[seed] = scan_split(split, train_size=args.train_size, test_size=args.test_size, seed=seed,
                                     cache_dir=args.cache_dir)
        return cache[seed]

    return base


def table1(args, runner: Runner, data: dict):
    from harness import ResultsTable

    columns = [f"{k}x" for k in args.factors]
    table = ResultsTable("Table 1: SCAN primitive augmentation", ["split", *columns], caption=_caption(args, "scan"),
                         fit_note=_fit_note(args))
    for row in args.splits:
        split = SCAN_SPLITS[row]
        cells = {}
        for k, col in zip(args.factors, columns):
            cells[col] = runner.score(
                ("scan", split, f"{k}x"), lambda s, k=k, split=split: _augmented(data[split], split, k, s))
        table.add(split=row, **cells)
    return table


def _augmented(base, split: str, k: int, seed: int):
    train, test = base(seed)
    return augment(train, split, k, seed), test


def table3(args, runner: Runner, data: dict):
    from harness import ResultsTable

    split = SCAN_SPLITS["around_right"]
    base = data[split]
    large = max(args.factors)

    def more_prims(seed: int):
        train, test = base(seed)
        return more_primitives(augment(train, split, large, seed), augment(train, split, 2, seed), seed), test

    def zero(seed: int):
        train, test = base(seed)
        return augzero(train, args.augzero_k), test

    makers = {
        TABLE3_ROWS[0]: (("scan", split, "1x"), lambda s: _augmented(base, split, 1, s)),
        TABLE3_ROWS[1]: (("scan", split, "2x"), lambda s: _augmented(base, split, 2, s)),
        TABLE3_ROWS[2]: (("scan", split, f"{large}x-down-to-2x"), more_prims),
        TABLE3_ROWS[3]: (("scan", split, f"{large}x"), lambda s: _augmented(base, split, large, s)),
        TABLE3_ROWS[4]: (("scan", split, f"augzero-{args.augzero_k}"), zero),
    }
    table = ResultsTable(
        "Table 3: dataset size vs number of primitives", ["dataset", "SCAN (Around Right)", "train rows"],
        caption=_caption(args, "scan") + f" '+ More primitives': the {large}x set down-sampled to the 2x set's size; "
        f"'+ More prim. & larger size': {large}x; AugZero k={args.augzero_k}.", fit_note=_fit_note(args))
    for label, (key, make) in makers.items():
        if label not in args.table3_rows:
            continue
        mean = runner.score(key, make)
        rows = runner.run(key, make, args.seeds[0])["train_rows"]
        table.add(**{"dataset": label, "SCAN (Around Right)": mean, "train rows": rows})
    return table


def figure2(args, runner: Runner):
    from harness import ResultsTable

    table = ResultsTable("Figure 2: SCAN* length generalization (train 0<l<=L, test L<l<=2L)",
                         ["L", "train lengths", "test lengths", "exact match"], caption=_caption(args, "star")
                         + f" Splits halved from L={args.star_source}.", fit_note=_fit_note(args))
    for L in args.star_lengths:
        def make(seed: int, L=L):
            return star_length_split(L, source=args.star_source, num_primitives=args.star_primitives,
                                     train_size=args.star_train, test_size=args.star_test, seed=seed,
                                     cache_dir=args.cache_dir)

        mean = runner.score(("scan_star", f"L{L}"), make)
        table.add(**{"L": L, "train lengths": f"1-{L}", "test lengths": f"{L + 1}-{2 * L}", "exact match": mean})
    return table


def curve_table(args, runs: list[dict[str, Any]]):
    """The learning curves of ``runs`` (``--eval-every``): one row per (run, seed, checkpoint)."""
    from harness import ResultsTable

    dev = bool(args.dev_fraction)
    table = ResultsTable(
        f"Learning curves (every {args.eval_every} steps)",
        ["run", "seed", "step", "fit", *(["dev exact match"] if dev else []), "test exact match"],
        caption=f"Exact match (%) at each checkpoint on a fixed seeded subset of {args.curve_size} test rows "
        f"(or all, if fewer); fit: on the {args.sanity_size} training rows of the final fit (- when "
        f"--sanity-size is 0)" + (f"; dev: the {args.dev_fraction:g} of the test rows held out to choose the "
                                 f"checkpoint (* marks the chosen one)" if dev else "")
        + f". Same decoding as the tables (beam {args.num_beams}).", fit_note="")
    for run in runs:
        for point in run.get("curve", []):
            row = {"run": run["key"], "seed": run["seed"], "step": point["step"], "fit": point["train_exact_match"],
                   "test exact match": point["test_exact_match"]}
            if dev:
                mark = "*" if point["step"] == run.get("selected_step") else ""
                row["dev exact match"] = f"{point['dev_exact_match']:.1f}{mark}"
            table.add(**row)
    return table


# ------------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Presets: " + "; ".join(f"{k}: {v}" for k, v in PRESETS.items()))
    scale = p.add_mutually_exclusive_group()
    scale.add_argument("--small", dest="preset", action="store_const", const="small", help="CPU scale (default)")
    scale.add_argument("--cpu", dest="preset", action="store_const", const="cpu",
                       help="CPU, about 20 min with --jobs 2 (2,200 CPU-s per seed): Table 1 jump, 1x vs 20x, a model that fits SCAN")
    scale.add_argument("--cpu-table3", dest="preset", action="store_const", const="cpu-table3",
                       help="CPU, Table 3 (around right: 1x, 2x, more primitives, 20x, AugZero k=20) with the --cpu "
                            "model: five runs per seed, each as costly as one --cpu model")
    scale.add_argument("--cpu-fig2", dest="preset", action="store_const", const="cpu-fig2",
                       help="CPU, Figure 2 (SCAN* L = 4, 8, 16) with a T5 d_model 128, 3+3 layers (relative "
                            "positions), 10,000 steps (~8,000 CPU-s)")
    scale.add_argument("--paper", dest="preset", action="store_const", const="paper", help="paper scale (GPU)")
    scale.add_argument("--tiny", dest="preset", action="store_const", const="tiny", help=argparse.SUPPRESS)
    p.set_defaults(preset="small")
    p.add_argument("--tables", nargs="+", choices=TABLES,
                   help="which tables to run (default: all; --cpu: 1; --cpu-table3: 3; --cpu-fig2: fig2)")
    p.add_argument("--out", default="runs/zhou_scan", help="output folder (default: runs/zhou_scan)")
    p.add_argument("--seed", type=int, default=None, help="one seed (overrides the preset's --seeds)")
    p.add_argument("--seeds", type=int, nargs="+", help="seeds to average over")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: fastest on a shared CPU)")
    p.add_argument("--cache-dir", default=None, help="datasets cache directory")
    p.add_argument("--eval-batch-size", type=int, default=64)
    p.add_argument("--jobs", type=int, default=1,
                   help="models trained at once, each in its own process with --threads threads (default 1; "
                        "--jobs 2 on a 2-core machine halves the wall time; results are the same)")
    p.add_argument("--arch", choices=["t5", "bart"], default=None,
                   help="model: t5 (relative position biases) or bart (learned absolute positions) "
                        "(default: the preset's; --cpu: bart)")
    for name, kind in [("train_size", int), ("test_size", int), ("augzero_k", int), ("steps", int),
                       ("batch_size", int), ("learning_rate", float), ("warmup_steps", int), ("scheduler", str),
                       ("d_model", int), ("layers", int), ("ffn", int), ("heads", int), ("dropout", float),
                       ("num_beams", int), ("star_source", int), ("star_primitives", int), ("star_train", int),
                       ("star_test", int), ("sanity_size", int), ("rel_buckets", int)]:
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None, help=f"override the preset's {name}")
    p.add_argument("--eval-every", type=int, default=None,
                   help="also score each model every N training steps (and at the last step): a learning curve "
                        "(step, fit, test exact match) in runs.json and curve.md (default: the preset's; "
                        "--cpu and --paper: 500, else off)")
    p.add_argument("--dev-fraction", type=float, default=None,
                   help="part of each test set held out as a dev set for choosing the checkpoint (scored every "
                        "--eval-every steps; the best one is evaluated on the other test rows), as the reference "
                        "code does with 0.1; 0 = evaluate the last checkpoint on all test rows (default: the "
                        "preset's; --cpu and --paper: 0.1)")
    p.add_argument("--curve-size", type=int, default=300,
                   help="test rows (a fixed seeded subset of the test set) scored at each --eval-every "
                        "checkpoint (default 300); the fit uses the --sanity-size rows")
    p.add_argument("--factors", type=int, nargs="+", help="augmentation factors of Table 1 (1 = none); Table 3 "
                   "needs 1, 2 and a larger one")
    p.add_argument("--splits", nargs="+", choices=list(SCAN_SPLITS),
                   help="Table 1 rows (default: both; --cpu: jump; the around-right row: --cpu --splits around_right)")
    p.add_argument("--star-lengths", type=int, nargs="+", help="SCAN* L values (each reached by halving --star-source)")
    p.add_argument("--table3-rows", nargs="+", choices=list(TABLE3_ROW_NAMES), default=list(TABLE3_ROW_NAMES),
                   help="Table 3 rows to train (default: all five): 1x (origin), 2x, more-primitives (the largest "
                        "factor down-sampled to 2x's size), larger (the largest factor), augzero. Runs are "
                        "deterministic per seed, so rows of one seed run apart fit one table")
    args = p.parse_args(argv)
    from hf_synthsample.validation import check_writable_path

    try:  # a file or an unwritable folder is an error now, not after the first epoch
        check_writable_path("--out", args.out, folder=True)
    except ValueError as err:
        p.error(str(err))
    from harness import apply_preset

    # train/test/sanity sizes: 0 means all rows / none
    apply_preset(p, args, PRESETS[args.preset],
                 positive=("steps", "batch_size", "augzero_k", "d_model", "layers", "ffn", "heads", "num_beams",
                           "star_train", "star_test", "star_primitives", "rel_buckets"),
                 non_negative=("train_size", "test_size", "sanity_size", "warmup_steps"))
    if args.seed is not None:
        args.seeds = [args.seed]
    if args.eval_every is not None and args.eval_every < 1:
        p.error(f"--eval-every must be a positive number of steps (omit it for no learning curve), "
                f"got {args.eval_every}")
    if args.jobs < 1:
        p.error(f"--jobs must be a positive number of processes, got {args.jobs}")
    if not 0.0 <= args.dev_fraction < 1.0:
        p.error(f"--dev-fraction must be in [0, 1) (0 = no dev set), got {args.dev_fraction}")
    if args.dev_fraction and not args.eval_every:
        p.error("--dev-fraction needs --eval-every (the steps at which the dev set chooses a checkpoint)")
    if args.curve_size < 1:
        p.error(f"--curve-size must be a positive number of test rows, got {args.curve_size}")
    if min(args.factors) < 1:
        p.error(f"--factors must be >= 1 (1 = no augmentation), got {args.factors}")
    if len(set(args.factors)) != len(args.factors):
        p.error(f"--factors: each factor once, got {args.factors}")
    if "3" in args.tables and (1 not in args.factors or 2 not in args.factors or max(args.factors) <= 2):
        p.error(f"--factors must include 1, 2 and a factor above 2 when --tables has 3 (its rows are 1x, 2x and "
                f"the largest factor), got {args.factors}")
    if len(set(args.table3_rows)) != len(args.table3_rows):
        p.error(f"--table3-rows: each row once, got {args.table3_rows}")
    args.table3_rows = [label for name, label in TABLE3_ROW_NAMES.items() if name in args.table3_rows]
    from hf_synthsample.domains.scan import halving_steps

    for L in args.star_lengths:
        try:  # the SCAN* length splits are halved from --star-source: say so before any training
            halving_steps(args.star_source, L)
        except ValueError as err:
            p.error(f"--star-lengths {L}: {err}")
    if args.d_model % args.heads:
        p.error(f"--d-model {args.d_model} must be divisible by --heads {args.heads}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from harness import clear_outputs, is_main_process

    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    clear_outputs(args.out, OUTPUTS)
    start = time.perf_counter()
    runner = Runner(args)
    data = {split: _scan_data(args, split) for split in SCAN_SPLITS.values()}

    def build_tables():
        tables = {}
        if "1" in args.tables:
            tables["table1"] = table1(args, runner, data)
        if "3" in args.tables:
            tables["table3"] = table3(args, runner, data)
        if "fig2" in args.tables:
            tables["figure2"] = figure2(args, runner)
        return tables

    if args.jobs > 1:  # note the runs the tables ask for, train them in parallel, then build the tables
        runner.planning = True
        build_tables()
        runner.run_planned(args.jobs)
    tables = build_tables()
    if args.eval_every:
        tables["curve"] = curve_table(args, runner.runs)
    from hf_synthsample.atomic import write_json_atomic, write_text_atomic

    markdown = "\n\n".join(t.to_markdown() for t in tables.values())
    if is_main_process():
        for name, table in tables.items():
            table.save(args.out, name)
            if name == "curve":  # a table only: its rows are checkpoints, not bars
                continue
            values, xlabel = PLOTS[name]
            table.bar_plot(os.path.join(args.out, f"{name}.png"), values=values, ylabel="exact match (%)",
                           xlabel=xlabel)
        write_text_atomic(os.path.join(args.out, "results.md"), markdown + "\n")
        write_json_atomic(os.path.join(args.out, "results.json"),
                          {"preset": args.preset, "tables": {n: t.to_dict() for n, t in tables.items()},
                           "wall_seconds": round(time.perf_counter() - start, 1)}, indent=2)
        write_json_atomic(os.path.join(args.out, "runs.json"), runner.runs, indent=2)
        print(markdown)
        print(f"\nwrote {args.out}/results.md (+ .json, runs.json, PNG plots) in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
