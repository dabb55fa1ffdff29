"""Zhou et al. (2023), "Data Factors for Better Compositional Generalization": SCAN primitive
augmentation (Table 1), dataset size vs number of primitives (Table 3) and SCAN* length
extrapolation (Figure 2), with a Transformer trained from scratch.

    python examples/zhou_scan.py                          # --small (default): a pipeline check, minutes
    python examples/zhou_scan.py --cpu                    # Table 1 jump, 1x vs 20x: about 20 min with --jobs 2, 2,200 CPU-s per seed
    python examples/zhou_scan.py --cpu --splits around_right   # Table 1 around right, 1x vs 20x: ~3,600 CPU-s per seed
    python examples/zhou_scan.py --cpu-table3             # Table 3 with the --cpu model: 5 models per seed, ~9,000 CPU-s
    python examples/zhou_scan.py --cpu-table3 --seed 1 --table3-rows 2x more-primitives augzero   # some rows only
    python examples/zhou_scan.py --cpu-fig2               # Figure 2 at SCAN* L = 4, 8, 16 with a T5 d_model 128
    python examples/zhou_scan.py --gpu                    # Figure 2 at L = 31, 62 (the paper's rise): one H100, < 8 min
    python examples/zhou_scan.py --tables 1 --splits jump --factors 1 20   # any subset of tables, splits, factors
    accelerate launch examples/zhou_scan.py --paper       # paper scale: GPU, hours per table

* ``table1``: rows ``jump`` (SCAN ``addprim_jump``) and ``around_right`` (``template_around_right``),
  columns ``1x`` (no augmentation), ``2x``, ``20x`` (``--paper``: and ``200x``): test exact match
  (%) after training with Kx primitive augmentation (``PrimitiveAugmenter``).
* ``table3`` (around right): ``Origin Dataset`` (1x), ``2x Augmentation``, ``+ More primitives`` (the
  20x set's augmented rows down-sampled to the 2x set's number, originals kept: footnote 6), ``+
  More prim. & larger size`` (20x), ``+ AugZero`` (k copies of the vocabulary, App. C.3).
* ``figure2``: SCAN* length splits (App. A.2): train on ``0 < l <= L`` words, test ``L < l <= 2L``,
  the shorter splits halved from the longest; a table and a plot.

Every model of a table trains the same number of steps (the paper's rule); results are the mean
over ``--seeds``, every run is in ``runs.json`` (with an error profile), and every score has the
model's fit beside it (exact match on ``--sanity-size`` of its own training rows: a 0 with a high
fit is the paper's failure to generalize, a 0 with a low fit an undertrained model). Checkpoints:
as in the reference code (Jiang et al. 2022, which Zhou et al. follow), ``--dev-fraction 0.1``
of each test set is a dev set scored every ``--eval-every`` steps, the best checkpoint (ties: the
better fit, then the earliest) is scored on the other 90 %; ``curve.md`` has the learning curves.

Presets (any flag overrides them; the caption names the flags that did): ``--small`` subsamples
SCAN (1,000 / 200 rows) and trains a narrow T5 200 steps: undertrained, a pipeline check only.
``--cpu``: Table 1 jump on the full splits (20x: 270,071 rows) with a scratch BART (d_model 128,
3+3 layers, ffn 256, dropout 0.1) for 6,000 steps of 64 at lr 1e-3 (at d_model 64 the 20x model
writes one fixed augmented verb for ``jump``: 8-27 %). ``--cpu-table3``: Table 3 with that model
(AugZero k=20). ``--cpu-fig2``: Figure 2 at L = 4, 8, 16 (halved from 16, 50 primitives) with a
T5 of that size (relative positions reach output positions past the training lengths; BART's
cannot), 10,000 steps: the floor (0 %, fitted models). ``--paper`` (App. B.1): T5 d_model 256,
ffn 512, batch 128, inverse-sqrt lr (peak 1.77e-3), 50,000 steps, beam 5, 5 seeds, L up to 250.

``--gpu``: Figure 2 where the paper's curve rises, L = 31 and 62 (halved from 62, the paper's 200
primitives, 10,000 train / 500 test rows; test outputs up to ~310 actions), the paper's T5 at
batch 128 for 2,500 steps, dev every 500 steps, curve and fit on 100 rows, decoding in batches of
256. Sized for one H100 in under 8 minutes: the loop there is CPU-bound (17 steps/s measured for
a larger BART, issue 33), so 2 x 2,500 steps take 250-330 s, 12 checkpoint scorings and the final
decoding ~100 s (greedy, ~310 tokens at ~8 ms a token per batch), data and start-up ~40 s. A low
fit means more steps: ``--gpu --star-lengths 31 --steps 5000``. Figures: ``docs/reproductions.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Sequence

from harness import (SCHEDULERS, CurveScorer, ResultsTable, RunBook, Score, add_overrides, add_presets,  # noqa: F401
                     add_run_flags, curve_table, describe_settings, dev_test_split, error_profile, finish_args,
                     start_run, subsample, write_results)
from zhou_runs import build_model, train_and_evaluate, train_one  # noqa: F401 (the example's API)

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
#: every preset shares these unless it says otherwise
_BASE = dict(sanity_size=100, train_size=1000, test_size=200, factors=[1, 2, 20], augzero_k=20, steps=200, batch_size=32,
             learning_rate=5e-3, warmup_steps=20, scheduler="constant_with_warmup", d_model=64, layers=2, ffn=128,
             heads=4, dropout=0.0, seeds=[0], num_beams=1, star_lengths=[4, 8, 16], star_source=16, star_primitives=50,
             star_train=1000, star_test=100, rel_buckets=32, tables=list(TABLES), splits=list(SCAN_SPLITS),
             dev_fraction=0.0, eval_every=None, arch="t5", curve_size=300, eval_batch_size=64)
#: the --cpu model and budget: BART d_model 128, 3+3 layers, 6,000 steps, the reference's dev selection
_CPU = dict(_BASE, sanity_size=300, train_size=0, test_size=0, factors=[1, 20], steps=6_000, batch_size=64,
            learning_rate=1e-3, warmup_steps=100, d_model=128, layers=3, ffn=256, dropout=0.1, rel_buckets=128,
            tables=["1"], splits=["jump"], dev_fraction=0.1, eval_every=500, arch="bart")
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": dict(_BASE, sanity_size=8, train_size=48, test_size=12, augzero_k=3, steps=4, batch_size=16,
                 learning_rate=1e-3, warmup_steps=0, scheduler="constant", d_model=16, layers=1, ffn=32, heads=2,
                 dropout=0.1, star_lengths=[2, 4], star_source=4, star_primitives=10, star_train=48, star_test=8),
    "small": _BASE,
    # CPU, <= 30 min on 2 cores with --jobs 2: Table 1 jump, 1x vs 20x (docs/reproductions.md)
    "cpu": _CPU,
    # CPU, Table 3 (SCAN around right) with the --cpu model and budget; five runs per seed
    "cpu-table3": dict(_CPU, factors=[1, 2, 20], tables=["3"], splits=["around_right"]),
    # CPU, Figure 2 at L = 4, 8, 16 with a T5 (relative positions), 10,000 steps: L = 16 fits slowly
    "cpu-fig2": dict(_CPU, sanity_size=200, steps=10_000, star_test=200, rel_buckets=32, tables=["fig2"], arch="t5"),
    # one H100, < 8 min: Figure 2 at L = 31 and 62 with the paper's T5 (sizing: the module docstring)
    "gpu": dict(_CPU, sanity_size=100, steps=2_500, batch_size=128, d_model=256, ffn=512, star_lengths=[31, 62],
                star_source=62, star_primitives=200, star_train=10_000, star_test=500, rel_buckets=32,
                tables=["fig2"], arch="t5", curve_size=100, eval_batch_size=256),
    "paper": dict(_BASE, sanity_size=1000, train_size=0, test_size=0, factors=[1, 2, 20, 200], augzero_k=200,
                  steps=50_000, batch_size=128, learning_rate=_PAPER_LR, warmup_steps=5_000, scheduler="inverse_sqrt",
                  d_model=256, layers=3, ffn=512, dropout=0.1, seeds=[0, 1, 2, 3, 4], num_beams=5,
                  star_lengths=[31, 62, 125, 250], star_source=250, star_primitives=200, star_train=10_000,
                  star_test=1_000, dev_fraction=0.1, eval_every=500),
}


# ------------------------------------------------------------------------------------------------
# Data (no torch needed)
# ------------------------------------------------------------------------------------------------
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
# Scores over seeds and captions (each run: zhou_runs.train_one, a scratch T5 or BART, the checkpoint
# chosen on a dev set, exact match, fit and error profile)
# ------------------------------------------------------------------------------------------------
def score(book: RunBook, args, key: tuple, make_data) -> Score | None:
    """Exact match over the seeds (mean ± sd), the fit on training rows beside it (``None`` while planning)."""
    runs = [book.get(key, seed, make_data) for seed in args.seeds]
    if None in runs:
        return None
    fits = [r["train_exact_match"] for r in runs]
    return Score.of([r["exact_match"] for r in runs], fit=None if None in fits else fits)


def _fit_note(args) -> str:
    return (f"fit: exact match on {args.sanity_size} rows sampled from the model's own training set."
            if args.sanity_size else "")


def _caption(args, extra: str) -> str:
    settings = describe_settings(args.preset, args.overrides)
    cpu = "CPU-scale settings (smaller model and budget than the paper)"
    scale = {"paper": "paper-scale settings", "cpu": cpu, "cpu-table3": cpu, "cpu-fig2": cpu + ", SCAN* scaled down",
             "gpu": "GPU settings sized for one H100 in under 8 minutes (fewer steps than the paper)",
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


def _augmented(base, split: str, k: int, seed: int):
    train, test = base(seed)
    return augment(train, split, k, seed), test


def table1(args, book: RunBook, data: dict):
    columns = [f"{k}x" for k in args.factors]
    table = ResultsTable("Table 1: SCAN primitive augmentation", ["split", *columns], caption=_caption(args, "scan"),
                         fit_note=_fit_note(args))
    for row in args.splits:
        split = SCAN_SPLITS[row]
        table.add(split=row, **{col: score(book, args, ("scan", split, f"{k}x"),
                                           lambda s, k=k, split=split: _augmented(data[split], split, k, s))
                                for k, col in zip(args.factors, columns)})
    return table


def table3(args, book: RunBook, data: dict):
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
        if label in args.table3_rows:
            first = book.get(key, args.seeds[0], make)
            table.add(**{"dataset": label, "SCAN (Around Right)": score(book, args, key, make),
                         "train rows": first and first["train_rows"]})
    return table


def figure2(args, book: RunBook):
    table = ResultsTable("Figure 2: SCAN* length generalization (train 0<l<=L, test L<l<=2L)",
                         ["L", "train lengths", "test lengths", "exact match"], caption=_caption(args, "star")
                         + f" Splits halved from L={args.star_source}.", fit_note=_fit_note(args))
    for L in args.star_lengths:
        def make(seed: int, L=L):
            return star_length_split(L, source=args.star_source, num_primitives=args.star_primitives,
                                     train_size=args.star_train, test_size=args.star_test, seed=seed,
                                     cache_dir=args.cache_dir)

        table.add(**{"L": L, "train lengths": f"1-{L}", "test lengths": f"{L + 1}-{2 * L}",
                     "exact match": score(book, args, ("scan_star", f"L{L}"), make)})
    return table


# ------------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Presets: " + "; ".join(f"{k}: {v}" for k, v in PRESETS.items()))
    add_presets(p, {
        "small": "CPU scale (default)",
        "cpu": "CPU, about 20 min with --jobs 2 (2,200 CPU-s per seed): Table 1 jump, 1x vs 20x, a model that fits SCAN",
        "cpu-table3": "CPU, Table 3 (around right: 1x, 2x, more primitives, 20x, AugZero k=20) with the --cpu model: "
                      "five runs per seed, each as costly as one --cpu model",
        "cpu-fig2": "CPU, Figure 2 (SCAN* L = 4, 8, 16) with a T5 d_model 128, 3+3 layers (relative positions), "
                    "10,000 steps (~8,000 CPU-s)",
        "gpu": "one GPU (H100), under 8 min: Figure 2 at SCAN* L = 31 and 62 with the paper's T5, 2,500 steps",
        "paper": "paper scale (GPU)", "tiny": None}, default="small")
    p.add_argument("--tables", nargs="+", choices=TABLES,
                   help="which tables to run (default: all; --cpu: 1; --cpu-table3: 3; --cpu-fig2, --gpu: fig2)")
    add_run_flags(p, out="runs/zhou_scan", jobs_help="models trained at once, each in its own process with --threads "
                  "threads (default 1; --jobs 2 on a 2-core machine halves the wall time; results are the same)")
    p.add_argument("--seed", type=int, default=None, help="one seed (overrides the preset's --seeds)")
    p.add_argument("--seeds", type=int, nargs="+", help="seeds to average over")
    p.add_argument("--arch", choices=["t5", "bart"], default=None,
                   help="model: t5 (relative position biases) or bart (learned absolute positions) "
                        "(default: the preset's; --cpu: bart)")
    add_overrides(p, [(name, kind, None) for name, kind in [
        ("train_size", int), ("test_size", int), ("augzero_k", int), ("steps", int), ("batch_size", int),
        ("learning_rate", float), ("warmup_steps", int), ("d_model", int), ("layers", int), ("ffn", int),
        ("heads", int), ("dropout", float), ("num_beams", int), ("star_source", int), ("star_primitives", int),
        ("star_train", int), ("star_test", int), ("sanity_size", int), ("rel_buckets", int),
        ("eval_batch_size", int)]])
    add_overrides(p, [
        ("scheduler", str, f"learning-rate schedule, one of {', '.join(SCHEDULERS)} (default: the preset's)"),
        ("eval_every", int, "also score each model every N training steps (and at the last step): a learning curve "
         "(step, fit, test exact match) in runs.json and curve.md (default: the preset's; --cpu, --gpu and --paper: "
         "500, else off)"),
        ("dev_fraction", float, "part of each test set held out as a dev set for choosing the checkpoint (scored "
         "every --eval-every steps; the best one is evaluated on the other test rows), as the reference code does "
         "with 0.1; 0 = evaluate the last checkpoint on all test rows (default: the preset's; --cpu and --paper: 0.1)"),
        ("curve_size", int, "test rows (a fixed seeded subset of the test set) scored at each --eval-every "
         "checkpoint (default 300; --gpu: 100); the fit uses the --sanity-size rows"),
        ("factors", int, "augmentation factors of Table 1 (1 = none); Table 3 needs 1, 2 and a larger one",
         dict(nargs="+")),
        ("splits", str, "Table 1 rows (default: both; --cpu: jump; the around-right row: --cpu --splits around_right)",
         dict(nargs="+", choices=list(SCAN_SPLITS))),
        ("star_lengths", int, "SCAN* L values (each reached by halving --star-source)", dict(nargs="+"))])
    p.add_argument("--table3-rows", nargs="+", choices=list(TABLE3_ROW_NAMES), default=list(TABLE3_ROW_NAMES),
                   help="Table 3 rows to train (default: all five): 1x (origin), 2x, more-primitives (the largest "
                        "factor down-sampled to 2x's size), larger (the largest factor), augzero. Runs are "
                        "deterministic per seed, so rows of one seed run apart fit one table")
    args = p.parse_args(argv)
    if args.eval_every is not None and args.eval_every < 1:
        p.error(f"--eval-every must be a positive number of steps (omit it for no learning curve), "
                f"got {args.eval_every}")
    if args.curve_size is not None and args.curve_size < 1:
        p.error(f"--curve-size must be a positive number of test rows, got {args.curve_size}")
    # train/test/sanity sizes: 0 means all rows / none
    finish_args(p, args, PRESETS, positive=(
        "steps", "batch_size", "augzero_k", "d_model", "layers", "ffn", "heads", "num_beams", "star_train", "star_test",
        "star_primitives", "rel_buckets", "eval_batch_size"),
        non_negative=("train_size", "test_size", "sanity_size", "warmup_steps"), rates=("learning_rate",),
        below_one=("dropout",), choices={"scheduler": SCHEDULERS}, seed_list=True, outputs=OUTPUTS)
    if not 0.0 <= args.dev_fraction < 1.0:
        p.error(f"--dev-fraction must be in [0, 1) (0 = no dev set), got {args.dev_fraction}")
    if args.dev_fraction and not args.eval_every:
        p.error("--dev-fraction needs --eval-every (the steps at which the dev set chooses a checkpoint)")
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
    start = start_run(args.out, OUTPUTS, args.threads, args.jobs)
    book = RunBook(lambda key, seed, data: train_one(key, seed, data, args))
    data = {split: _scan_data(args, split) for split in SCAN_SPLITS.values()}

    def build_tables():
        tables = {}
        if "1" in args.tables:
            tables["table1"] = table1(args, book, data)
        if "3" in args.tables:
            tables["table3"] = table3(args, book, data)
        if "fig2" in args.tables:
            tables["figure2"] = figure2(args, book)
        return tables

    if args.jobs > 1:  # note the runs the tables ask for, train them in parallel, then build the tables
        book.planning = True
        build_tables()
        book.train_planned(args.jobs)
    tables = build_tables()
    if args.eval_every:
        tables["curve"] = curve_table(book.records, every=args.eval_every, curve_size=args.curve_size,
                                       fit_size=args.sanity_size, dev_fraction=args.dev_fraction,
                                       num_beams=args.num_beams)  # a table only: its rows are checkpoints, not bars
    plots = {name: dict(values=PLOTS[name][0], xlabel=PLOTS[name][1], ylabel="exact match (%)")
             for name in tables if name != "curve"}
    write_results(args.out, tables, runs=book.records, plots=plots,
                  results={"preset": args.preset, "wall_seconds": round(time.perf_counter() - start, 1)})
    print(f"\nwrote {args.out}/results.md (+ .json, runs.json, PNG plots) in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    from harness import run_main

    sys.exit(run_main(main))
