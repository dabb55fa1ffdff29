"""Zhou et al. (2023), "Data Factors for Better Compositional Generalization": SCAN primitive
augmentation (Table 1), dataset size vs number of primitives (Table 3) and SCAN* length
extrapolation (Figure 2), with a Transformer trained from scratch.

    python examples/zhou_scan.py                          # --small (default): a pipeline check, minutes
    python examples/zhou_scan.py --cpu                    # Table 1 jump, 1x vs 20x, <= 30 min of CPU (see Scale)
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
split (14,670 rows; 20x: 270,071) with a narrow T5 (d_model 64, 2+2 layers, 128 relative-position
buckets) for 15,000 steps of 64 at lr 1e-3 (about 14 CPU-minutes per model: at 5,000 steps the 20x
model was still fitting and scored 0), greedy decoding, 1,000 test rows: its measured figures are
in ``docs/reproductions.md``. It shows the paper's direction, not its size (20x: 8.8 % vs 0 %):
the measured learning curve of the 20x model (``--eval-every 5000``) levels off at 7-15 % from
15,000 to 30,000 steps while it fits ~100 % of its rows, so more steps of this model do not reach
+30 pp; the preset keeps the 15,000 steps that fit in 30 minutes.

``--eval-every N`` scores each model every N training steps (and at its last step) on a fixed
seeded subset of ``--curve-size`` test rows (default 300) and on the fit rows, with the final
evaluation's decoding: the learning curve goes to ``runs.json`` (``curve``) and to a table on
the results page (``curve.md``). Off by default; training is the same with or without it.

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
augmentation and AugZero k=200. The paper selects the best checkpoint on a dev set; SCAN has none,
so the final model is evaluated. Any flag overrides the preset.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any, Sequence

#: SCAN splits of Table 1 (row label -> exact SCAN config)
SCAN_SPLITS = {"jump": "addprim_jump", "around_right": "template_around_right"}
TABLE3_ROWS = ("Origin Dataset", "2x Augmentation", "+ More primitives", "+ More prim. & larger size", "+ AugZero")
TABLES = ("1", "3", "fig2")

_PAPER_LR = 2.0 * 256 ** -0.5 * 5000 ** -0.5
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": dict(sanity_size=8, train_size=48, test_size=12, factors=[1, 2, 20], augzero_k=3, steps=4, batch_size=16,
                 learning_rate=1e-3, warmup_steps=0, scheduler="constant", d_model=16, layers=1, ffn=32, heads=2,
                 dropout=0.1, seeds=[0], num_beams=1, star_lengths=[2, 4], star_source=4, star_primitives=10,
                 star_train=48, star_test=8, rel_buckets=32, tables=list(TABLES), splits=list(SCAN_SPLITS)),
    "small": dict(sanity_size=100, train_size=1000, test_size=200, factors=[1, 2, 20], augzero_k=20, steps=200,
                  batch_size=32, learning_rate=5e-3, warmup_steps=20, scheduler="constant_with_warmup", d_model=64,
                  layers=2, ffn=128, heads=4, dropout=0.0, seeds=[0], num_beams=1, star_lengths=[4, 8, 16], star_source=16,
                  star_primitives=50, star_train=1000, star_test=100, rel_buckets=32, tables=list(TABLES),
                  splits=list(SCAN_SPLITS)),
    # CPU, <= 30 min of one core (2 x ~14 CPU-min): Table 1 jump, 1x vs 20x, full SCAN train split, a model
    # that fits it (128 relative-position buckets: the decoder must tell output positions up to 48 apart).
    # 15,000 steps: the 20x jump curve is flat from there (11.2 / 11.2 / 7.0 / 14.6 % at 15k / 20k / 25k /
    # 30k steps, docs/reproductions.md), so doubling the steps would break the 30 min and gain ~3 pp
    "cpu": dict(sanity_size=300, train_size=0, test_size=1000, factors=[1, 20], augzero_k=20, steps=15_000,
                batch_size=64, learning_rate=1e-3, warmup_steps=100, scheduler="constant_with_warmup", d_model=64,
                layers=2, ffn=128, heads=4, dropout=0.0, seeds=[0], num_beams=1, star_lengths=[4, 8, 16],
                star_source=16, star_primitives=50, star_train=1000, star_test=100, rel_buckets=128, tables=["1"],
                splits=["jump"]),
    "paper": dict(sanity_size=1000, train_size=0, test_size=0, factors=[1, 2, 20, 200], augzero_k=200, steps=50_000,
                  batch_size=128, learning_rate=_PAPER_LR, warmup_steps=5_000, scheduler="inverse_sqrt", d_model=256,
                  layers=3, ffn=512, heads=4, dropout=0.1, seeds=[0, 1, 2, 3, 4], num_beams=5, star_lengths=[31, 62, 125, 250],
                  star_source=250, star_primitives=200, star_train=10_000, star_test=1_000, rel_buckets=32,
                  tables=list(TABLES), splits=list(SCAN_SPLITS)),
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
def train_and_evaluate(train, test, args, *, seed: int, output_dir: str) -> dict[str, Any]:
    """Word tokenizer over train + test, a scratch T5, ``args.steps`` steps, exact match on ``test``."""
    from hf_synthsample.columns import column_array
    from hf_synthsample.models import build_scratch_model, build_word_tokenizer, evaluate_seq2seq, train_seq2seq

    texts = [str(t) for d in (train, test) for c in ("commands", "actions") for t in column_array(d, c)]
    tokenizer = build_word_tokenizer(texts)
    model = build_scratch_model(
        tokenizer, "t5", seed=seed, d_model=args.d_model, d_kv=args.d_model // args.heads, d_ff=args.ffn,
        num_layers=args.layers, num_decoder_layers=args.layers, num_heads=args.heads, dropout_rate=args.dropout,
        relative_attention_num_buckets=args.rel_buckets, relative_attention_max_distance=max(128, args.rel_buckets))
    longest = int(max(len(a.split()) for a in column_array(test, "actions")))
    callbacks = []
    if args.eval_every:
        # the learning curve: fit and test exact match at every --eval-every steps (and the last step)
        # on fixed seeded subsets, so a checkpoint's scores are comparable along the run
        curve = CurveScorer(
            model, tokenizer, test=subsample(test, args.curve_size, seed + 2),
            fit=subsample(train, args.sanity_size, seed) if args.sanity_size else None,
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
           "train_exact_match": seen["exact_match"],
           "train_rows": int(train.num_rows), "train_seconds": round(train_s, 1),
           "eval_seconds": round(time.perf_counter() - start - train_s - curve_s, 1)}
    if callbacks:
        out.update(curve=callbacks[0].points, curve_seconds=round(curve_s, 1))
    return out


class CurveScorer:
    """Scores the model during training: exact match on ``test`` (and on ``fit``, rows of its own
    training set, when given) after every ``every`` steps and after step ``last``, with the same
    decoding as the final evaluation. ``points`` holds ``{"step", "test_exact_match",
    "train_exact_match", "num_test", "seconds"}`` per checkpoint; ``seconds`` sums the time spent.
    """

    def __init__(self, model, tokenizer, *, test, fit, every: int, last: int, num_beams: int,
                 max_new_tokens: int, batch_size: int):
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be a positive number of steps, got {every!r}")
        self.model, self.tokenizer, self.test, self.fit = model, tokenizer, test, fit
        self.every, self.last = every, last
        self.decode = dict(num_beams=num_beams, max_new_tokens=max_new_tokens, batch_size=batch_size)
        self.points: list[dict[str, Any]] = []
        self.seconds = 0.0

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
        point["seconds"] = round(time.perf_counter() - start, 1)
        self.seconds += time.perf_counter() - start
        self.points.append(point)
        fit = "-" if point["train_exact_match"] is None else f"{point['train_exact_match']:.1f}"
        print(f"    step {step}: test {point['test_exact_match']:.1f} fit {fit} ({point['seconds']} s)", flush=True)

    def as_trainer_callback(self) -> Any:
        """This scorer as a ``transformers.TrainerCallback`` (imported here: the module's data
        functions need no torch)."""
        from transformers import TrainerCallback

        scorer = self

        class _Callback(TrainerCallback):
            def on_step_end(self, args, state, control, **kwargs):
                scorer.on_step_end(args, state, control, **kwargs)

        return _Callback()


class Runner:
    """Runs (and remembers) one training run per (data key, seed), so tables share runs."""

    def __init__(self, args):
        self.args = args
        self.runs: list[dict[str, Any]] = []
        self._done: dict[tuple, dict] = {}

    def run(self, key: tuple, make_data, seed: int) -> dict[str, Any]:
        if (key, seed) not in self._done:
            train, test = make_data(seed)
            # the Trainer wants an output_dir; nothing is saved there (no checkpoints)
            with tempfile.TemporaryDirectory(prefix="zhou-scan-") as tmp:
                out = train_and_evaluate(train, test, self.args, seed=seed, output_dir=tmp)
            record = {"key": "/".join(map(str, key)), "seed": seed, **out}
            print(f"  {record}", flush=True)
            self.runs.append(record)
            self._done[(key, seed)] = record
        return self._done[(key, seed)]

    def score(self, key: tuple, make_data):
        """Exact match over the seeds (mean ± sd), the fit on training rows beside it."""
        from hf_synthsample.experiments import Score

        runs = [self.run(key, make_data, seed) for seed in self.args.seeds]
        fits = [r["train_exact_match"] for r in runs]
        return Score.of([r["exact_match"] for r in runs], fit=None if None in fits else fits)


def _fit_note(args) -> str:
    return (f"fit: exact match on {args.sanity_size} rows sampled from the model's own training set."
            if args.sanity_size else "")


def _caption(args, extra: str) -> str:
    from hf_synthsample.experiments import describe_settings

    settings = describe_settings(args.preset, args.overrides)
    scale = {"paper": "paper-scale settings", "cpu": "CPU-scale settings (smaller model and budget than the paper)",
             }.get(args.preset, f"{args.preset} settings: a pipeline check, NOT the paper's results")
    scale = f"{settings}: {scale}" if not args.overrides else f"{settings} (the preset is {scale})"
    sizes = (f"train subsample {args.train_size or 'all'} rows before augmentation, test subsample "
             f"{args.test_size or 'all'} rows; " if extra != "star" else
             f"{args.star_train} train / {args.star_test} test rows per split, {args.star_primitives} primitives; ")
    return (f"Exact match (%), mean±sd over {len(args.seeds)} seed(s) {list(args.seeds)}. {scale}. {sizes}T5 from scratch "
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
    from hf_synthsample.experiments import ResultsTable

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
    from hf_synthsample.experiments import ResultsTable

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
        mean = runner.score(key, make)
        rows = runner.run(key, make, args.seeds[0])["train_rows"]
        table.add(**{"dataset": label, "SCAN (Around Right)": mean, "train rows": rows})
    return table


def figure2(args, runner: Runner):
    from hf_synthsample.experiments import ResultsTable

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
    from hf_synthsample.experiments import ResultsTable

    table = ResultsTable(
        f"Learning curves (every {args.eval_every} steps)", ["run", "seed", "step", "fit", "test exact match"],
        caption=f"Exact match (%) at each checkpoint on a fixed seeded subset of {args.curve_size} test rows "
        f"(or all, if fewer); fit: on the {args.sanity_size} training rows of the final fit (- when "
        f"--sanity-size is 0). Same decoding as the tables (beam {args.num_beams}).", fit_note="")
    for run in runs:
        for point in run.get("curve", []):
            table.add(**{"run": run["key"], "seed": run["seed"], "step": point["step"],
                         "fit": point["train_exact_match"], "test exact match": point["test_exact_match"]})
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
                       help="CPU, <= 30 min: Table 1 jump, 1x vs 20x, a model that fits SCAN")
    scale.add_argument("--paper", dest="preset", action="store_const", const="paper", help="paper scale (GPU)")
    scale.add_argument("--tiny", dest="preset", action="store_const", const="tiny", help=argparse.SUPPRESS)
    p.set_defaults(preset="small")
    p.add_argument("--tables", nargs="+", choices=TABLES, help="which tables to run (default: all; --cpu: 1)")
    p.add_argument("--out", default="runs/zhou_scan", help="output folder (default: runs/zhou_scan)")
    p.add_argument("--seed", type=int, default=None, help="one seed (overrides the preset's --seeds)")
    p.add_argument("--seeds", type=int, nargs="+", help="seeds to average over")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: fastest on a shared CPU)")
    p.add_argument("--cache-dir", default=None, help="datasets cache directory")
    p.add_argument("--eval-batch-size", type=int, default=64)
    for name, kind in [("train_size", int), ("test_size", int), ("augzero_k", int), ("steps", int),
                       ("batch_size", int), ("learning_rate", float), ("warmup_steps", int), ("scheduler", str),
                       ("d_model", int), ("layers", int), ("ffn", int), ("heads", int), ("dropout", float),
                       ("num_beams", int), ("star_source", int), ("star_primitives", int), ("star_train", int),
                       ("star_test", int), ("sanity_size", int), ("rel_buckets", int)]:
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None, help=f"override the preset's {name}")
    p.add_argument("--eval-every", type=int, default=None,
                   help="also score each model every N training steps (and at the last step): a learning curve "
                        "(step, fit, test exact match) in runs.json and curve.md (default: off)")
    p.add_argument("--curve-size", type=int, default=300,
                   help="test rows (a fixed seeded subset of the test set) scored at each --eval-every "
                        "checkpoint (default 300); the fit uses the --sanity-size rows")
    p.add_argument("--factors", type=int, nargs="+", help="augmentation factors of Table 1 (1 = none); Table 3 "
                   "needs 1, 2 and a larger one")
    p.add_argument("--splits", nargs="+", choices=list(SCAN_SPLITS),
                   help="Table 1 rows (default: both; --cpu: jump)")
    p.add_argument("--star-lengths", type=int, nargs="+", help="SCAN* L values (each reached by halving --star-source)")
    args = p.parse_args(argv)
    from hf_synthsample.experiments import apply_preset

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
    if args.curve_size < 1:
        p.error(f"--curve-size must be a positive number of test rows, got {args.curve_size}")
    if min(args.factors) < 1:
        p.error(f"--factors must be >= 1 (1 = no augmentation), got {args.factors}")
    if len(set(args.factors)) != len(args.factors):
        p.error(f"--factors: each factor once, got {args.factors}")
    if "3" in args.tables and (1 not in args.factors or 2 not in args.factors or max(args.factors) <= 2):
        p.error(f"--factors must include 1, 2 and a factor above 2 when --tables has 3 (its rows are 1x, 2x and "
                f"the largest factor), got {args.factors}")
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

    from hf_synthsample.experiments import is_main_process

    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    start = time.perf_counter()
    runner = Runner(args)
    data = {split: _scan_data(args, split) for split in SCAN_SPLITS.values()}
    tables = {}
    if "1" in args.tables:
        tables["table1"] = table1(args, runner, data)
    if "3" in args.tables:
        tables["table3"] = table3(args, runner, data)
    if "fig2" in args.tables:
        tables["figure2"] = figure2(args, runner)
    if args.eval_every:
        tables["curve"] = curve_table(args, runner.runs)
    from hf_synthsample.atomic import write_json_atomic, write_text_atomic

    markdown = "\n\n".join(t.to_markdown() for t in tables.values())
    if is_main_process():
        for name, table in tables.items():
            table.save(args.out, name)
            if name == "curve":  # a table only: its rows are checkpoints, not bars
                continue
            values = {"table1": None, "table3": ["SCAN (Around Right)"], "figure2": ["exact match"]}[name]
            table.bar_plot(os.path.join(args.out, f"{name}.png"), values=values, ylabel="exact match (%)")
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
