"""The compositionality curve: test accuracy against compound divergence over a sweep of splits
(Keysers et al. 2020, "Measuring Compositional Generalization", the CFQ figure of accuracy falling
as the compound divergence D_C of the split rises, at a fixed atom divergence).

    python examples/compositionality_curve.py                   # --small (default): a pipeline check, seconds
    python examples/compositionality_curve.py --cpu --jobs 2    # SCAN, 6 splits D_C 0.0-0.6, <= 30 min on 2 cores
    python examples/compositionality_curve.py --cpu --targets 0.1 0.3 0.5 --seed 1
    accelerate launch examples/compositionality_curve.py --paper   # larger model, all test rows (GPU)

What it does:

1. The pool: all 20,910 SCAN commands (``--pool-size`` rows of them, seeded, for ``--small``).
2. A divergence sweep (:func:`hf_synthsample.splits.divergence_sweep`): one split per
   ``--targets`` value of D_C, each with the same sizes (train ``--train-share``, test
   ``--test-share`` of the pool; the rest left out, as in Keysers et al.'s SCAN MCD splits), the
   atom divergence D_A within ``--max-atom-divergence`` and every test atom in train. The split
   search runs once per target; its D_C and D_A are the sweep's (the ``split_report`` figures).
3. One model per split, trained from scratch: a word tokenizer over the split's rows, a scratch
   BART (``--d-model``, ``--layers`` + ``--layers``, ``--ffn``, ``--heads``, ``--dropout``)
   trained ``--steps`` steps of ``--batch-size`` (constant learning rate after ``--warmup-steps``),
   the last checkpoint scored (no checkpoint selection: nothing of the test set is seen).
4. Every model's **fit** (exact match, greedy, on ``--sanity-size`` rows of its own training
   set) beside its **test exact match** (greedy, on ``--test-rows`` rows of its test set: a seeded
   random subset, the same seed for every split; 0 = all test rows). A model that does not fit
   its training rows says nothing about compositional generalization, so the results page flags
   every fit below ``--min-fit`` (90 %).
5. The Spearman rank correlation between D_C and test exact match over the splits (the issue's
   target: -0.8 or lower), and a plot of test exact match against D_C with the fit beside it.

Outputs: every invocation writes its own folder ``<--out>/<preset>-seed<seed>-<UTC time>/`` (so
tables of two runs never mix): ``runs.json`` (one record per split: D_C, D_A, sizes, fit, test
exact match, error kinds, seconds), ``results.md`` and ``results.json`` (the table, Spearman's
rho, wall and CPU time, machine load, the command), ``curve.png``, and ``splits/``: the sweep as a Hub
folder (a config per target, its card with each split's report).

Presets (any flag overrides the preset):

* ``--small``: 2,000 SCAN commands, targets 0.1 / 0.3 / 0.5, a one-layer d_model 16 BART for 30
  steps: seconds, for the test; the models fit nothing, so its numbers are *not* a result.
* ``--cpu``: all SCAN commands, train 50 % / test 25 % (10,455 / 5,228 rows), 6 targets 0.0,
  0.12, ..., 0.6 (with ``--jobs 2``, 3 rounds of 2 models: a 7th split would add a round), BART
  d_model 64, 3+3 layers, ffn 128, 4 heads, dropout 0.1, 2,000 steps of 64 at peak lr 1e-3 (100
  warmup steps, then linear decay to 0), fit on 300 train rows, test on 1,000 test rows per split
  (~4 CPU-minutes per model; 17.5 min wall in all at load ~4). Why this model: at a constant lr
  1e-3 it fits 92-96 % of its training rows after 1,500-2,000 steps on the random and the D_C 0.6
  split alike (single runs, dev/notes/issue-21-curve.md), with a few points of noise from
  step to step; the decay settles the last checkpoint. The d_model 128 model of
  ``zhou_scan.py`` costs ~3x more. Measured figures: ``docs/compositionality-curve.md``.
* ``--paper``: the field's model (d_model 256, 3+3, ffn 512), 10,000 steps, all test rows, fit on
  1,000 train rows (GPU).
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import sys
import tempfile
import time
from typing import Any, Sequence

PRESETS: dict[str, dict[str, Any]] = {
    # seconds: the pipeline end to end on a small pool; the models are far from fitting (no result)
    "small": dict(pool_size=2_000, targets=[0.1, 0.3, 0.5], train_share=0.5, test_share=0.25,
                  max_atom_divergence=0.02, steps=30, batch_size=32, learning_rate=5e-3, warmup_steps=0,
                  d_model=16, layers=1, ffn=32, heads=2, dropout=0.0, sanity_size=20, test_rows=40,
                  search_seconds=10.0, scheduler="constant_with_warmup"),
    # <= 30 min on 2 cores with --jobs 2 (docs/compositionality-curve.md)
    "cpu": dict(pool_size=0, targets=[0.0, 0.12, 0.24, 0.36, 0.48, 0.6], train_share=0.5, test_share=0.25,
                max_atom_divergence=0.02, steps=2_000, batch_size=64, learning_rate=1e-3, warmup_steps=100,
                d_model=64, layers=3, ffn=128, heads=4, dropout=0.1, sanity_size=300, test_rows=1_000,
                search_seconds=60.0, scheduler="linear"),
    "paper": dict(pool_size=0, targets=[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6], train_share=0.5, test_share=0.25,
                  max_atom_divergence=0.02, steps=10_000, batch_size=128, learning_rate=5e-4, warmup_steps=1_000,
                  d_model=256, layers=3, ffn=512, heads=4, dropout=0.1, sanity_size=1_000, test_rows=0,
                  search_seconds=120.0, scheduler="linear"),
}

#: the issue's target: Spearman's rho between D_C and test exact match at or below this
TARGET_RHO = -0.8
#: the issue's fit requirement: every model fits at least this share (%) of its training rows
MIN_FIT = 90.0


# ------------------------------------------------------------------------------------------------
# Data and splits (no torch needed)
# ------------------------------------------------------------------------------------------------
def scan_pool(size: int = 0, seed: int = 0):
    """All 20,910 SCAN ``commands`` / ``actions`` pairs as a ``Dataset`` (``size`` > 0: a seeded
    subset of that many rows, in grammar order).

    Example:
        >>> scan_pool(5, seed=0).num_rows, scan_pool().num_rows
        (5, 20910)
    """
    import numpy as np
    from datasets import Dataset

    from hf_synthsample.domains.scan import scan_commands

    rows = scan_commands()
    if size and size < len(rows):
        keep = np.sort(np.random.default_rng(seed).permutation(len(rows))[:size])
        rows = [rows[i] for i in keep]
    return Dataset.from_dict({"commands": [c for c, _ in rows], "actions": [a for _, a in rows]})


def make_sweep(pool, args):
    """The divergence sweep of ``pool`` at ``args.targets``
    (:func:`hf_synthsample.splits.divergence_sweep`: ``splits``, ``compound_divergence`` and
    ``atom_divergence`` keyed by target; every split the same sizes, D_A within the bound)."""
    from hf_synthsample.splits import divergence_sweep

    return divergence_sweep(pool, list(args.targets), column="commands", language="scan", test_size=args.test_share,
                            train_size=args.train_share, max_atom_divergence=args.max_atom_divergence,
                            seed=args.seed, time_limit=args.search_seconds, progress=False)


def subsample(ds, size: int, seed: int):
    """A seeded random ``size``-row subset of ``ds``, rows in input order (``0`` or ``size >= len``: all).

    Example:
        >>> from datasets import Dataset
        >>> list(subsample(Dataset.from_dict({"x": list(range(10))}), 3, seed=0)["x"])
        [2, 4, 6]
    """
    import numpy as np

    if not size or size >= ds.num_rows:
        return ds
    return ds.select(np.sort(np.random.default_rng(seed).permutation(ds.num_rows)[:size]))


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's correlation of the ranks, ties sharing their mean rank.
    ``nan`` when either side is constant (no ranking to correlate).

    Example:
        >>> spearman([0.0, 0.1, 0.2, 0.3], [90.0, 50.0, 60.0, 1.0])
        -0.8
        >>> spearman([0.0, 0.1, 0.2], [0.0, 0.0, 0.0])
        nan
    """
    import numpy as np

    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    if len(x) < 2:
        raise ValueError(f"a correlation needs at least 2 points, got {len(x)}")

    def ranks(values) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        order = np.argsort(v, kind="stable")
        r = np.empty(len(v))
        r[order] = np.arange(1, len(v) + 1)
        for value in np.unique(v):  # ties share the mean of their ranks
            tied = v == value
            r[tied] = r[tied].mean()
        return r

    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return round(float(np.corrcoef(rx, ry)[0, 1]), 12)


# ------------------------------------------------------------------------------------------------
# Training and evaluation (hf_synthsample.models)
# ------------------------------------------------------------------------------------------------
def error_kinds(predictions: Sequence[str], references: Sequence[str]) -> dict[str, int]:
    """How the outputs are wrong: ``exact``; ``substituted`` (right length, some tokens replaced);
    ``stopped_early`` (a strict prefix of the reference); ``other``.

    Example:
        >>> error_kinds(["A B", "A C", "A", "B B B"], ["A B", "A B", "A B", "A B"])
        {'exact': 1, 'substituted': 1, 'stopped_early': 1, 'other': 1}
    """
    counts = dict.fromkeys(("exact", "substituted", "stopped_early", "other"), 0)
    for pred, ref in zip(predictions, references, strict=True):
        p, r = pred.split(), ref.split()
        kind = ("exact" if p == r else "substituted" if len(p) == len(r)
                else "stopped_early" if len(p) < len(r) and r[:len(p)] == p else "other")
        counts[kind] += 1
    return counts


def train_and_score(train, test, args, *, seed: int, output_dir: str) -> dict[str, Any]:
    """A scratch BART trained on ``train``; its fit (exact match on ``args.sanity_size`` training rows)
    and its exact match on ``args.test_rows`` rows of ``test`` (greedy decoding, the last checkpoint)."""
    from hf_synthsample.models import build_scratch_model, build_word_tokenizer, evaluate_seq2seq, train_seq2seq

    texts = [str(t) for d in (train, test) for c in ("commands", "actions") for t in d[c]]
    tokenizer = build_word_tokenizer(texts)
    model = build_scratch_model(
        tokenizer, "bart", seed=seed, d_model=args.d_model, encoder_layers=args.layers, decoder_layers=args.layers,
        encoder_ffn_dim=args.ffn, decoder_ffn_dim=args.ffn, encoder_attention_heads=args.heads,
        decoder_attention_heads=args.heads, dropout=args.dropout)
    scored = subsample(test, args.test_rows, seed + 1)  # the same seed for every split of the sweep
    fit_rows = subsample(train, args.sanity_size, seed + 2)
    longest = max(len(str(a).split()) for d in (scored, fit_rows) for a in d["actions"])
    decode = dict(source_column="commands", target_column="actions", num_beams=1, max_new_tokens=longest + 2,
                  batch_size=args.eval_batch_size)
    start = time.perf_counter()
    train_seq2seq(model, tokenizer, train, source_column="commands", target_column="actions", output_dir=output_dir,
                  max_steps=args.steps, batch_size=args.batch_size, learning_rate=args.learning_rate, seed=seed,
                  lr_scheduler_type=args.scheduler, warmup_steps=args.warmup_steps, disable_tqdm=True)
    train_s = time.perf_counter() - start
    result = evaluate_seq2seq(model, tokenizer, scored, **decode)
    fit = evaluate_seq2seq(model, tokenizer, fit_rows, **decode)
    return {"test_exact_match": float(result["exact_match"]), "num_test_scored": int(scored.num_rows),
            "fit": float(fit["exact_match"]), "num_fit": int(fit_rows.num_rows),
            "errors": error_kinds(result["predictions"], [str(a) for a in scored["actions"]]),
            "train_seconds": round(train_s, 1), "eval_seconds": round(time.perf_counter() - start - train_s, 1)}


#: the data of the planned runs, read by the forked workers of :func:`run_all`
_PLANNED: list[tuple] = []


def _train_one(index: int) -> dict[str, Any]:
    target, train, test, args = _PLANNED[index]
    # the Trainer wants an output_dir; nothing is saved there (no checkpoints)
    with tempfile.TemporaryDirectory(prefix="compositionality-curve-") as tmp:
        record = train_and_score(train, test, args, seed=args.seed, output_dir=tmp)
    print(f"  target {target}: fit {record['fit']:.1f}, test {record['test_exact_match']:.1f} "
          f"({record['train_seconds']:.0f} s training)", flush=True)
    return record


def _set_threads() -> None:
    import torch

    torch.set_num_threads(_PLANNED[0][3].threads)


def run_all(planned: list[tuple], jobs: int) -> list[dict[str, Any]]:
    """Train every ``(target, train, test, args)`` of ``planned``, ``jobs`` at a time: forked workers
    (run ``i`` in worker ``i % jobs``) that die with this process; records in ``planned`` order."""
    from hf_synthsample.processes import run_forked

    _PLANNED[:] = planned
    try:
        if jobs == 1 or len(planned) == 1:
            return [_train_one(i) for i in range(len(planned))]
        return run_forked(_train_one, len(planned), jobs, setup=_set_threads,
                          describe=lambda i: f"training run {i} (target {planned[i][0]})")
    finally:
        _PLANNED.clear()


# ------------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------------
def results_table(args, records: list[dict[str, Any]], rho: float):
    from hf_synthsample.experiments import ResultsTable, describe_settings

    table = ResultsTable(
        "Test exact match against compound divergence (SCAN)",
        ["target D_C", "D_C", "D_A", "train rows", "test rows", "scored test rows", "fit", "test exact match"],
        caption=(f"{describe_settings(args.preset, args.overrides)}; seed {args.seed}. Pool: "
                 f"{args.pool_rows} SCAN commands; train {args.train_share:g} / test {args.test_share:g} of the pool "
                 f"(the rest left out), D_A <= {args.max_atom_divergence:g}. BART from scratch d_model {args.d_model}, "
                 f"{args.layers}+{args.layers} layers, ffn {args.ffn}, {args.heads} heads, dropout {args.dropout:g}; "
 f"{args.steps} steps of {args.batch_size} at lr {args.learning_rate:g} ({args.scheduler}, "
                 f"{args.warmup_steps} warmup steps), last checkpoint, greedy decoding. Fit: exact match (%) on "
                 f"{args.sanity_size} rows of the model's own training set; test: exact match (%) on a seeded random "
                 f"subset of the test set (the same seed for every split). Spearman rho(D_C, test exact match) = "
                 f"{rho:.3f} over {len(records)} splits (target <= {TARGET_RHO}); fits below {MIN_FIT:g} %: "
                 f"{sum(r['fit'] < MIN_FIT for r in records)}."),
        float_format="{:.3f}", fit_note="")
    for r in records:
        table.add(**{"target D_C": f"{r['target']:g}", "D_C": r["compound_divergence"], "D_A": r["atom_divergence"],
                     "train rows": r["train_rows"], "test rows": r["test_rows"], "scored test rows": r["num_test_scored"],
                     "fit": f"{r['fit']:.1f}" + (" (below 90)" if r["fit"] < MIN_FIT else ""),
                     "test exact match": f"{r['test_exact_match']:.1f}"})
    return table


def plot_curve(path: str, records: list[dict[str, Any]], rho: float, title: str) -> str:
    """Test exact match (and the fit) against D_C, one point per split; written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hf_synthsample.atomic import save_figure_atomic

    dc = [r["compound_divergence"] for r in records]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(dc, [r["fit"] for r in records], "s--", color="0.55", label="fit (exact match on training rows)")
    ax.plot(dc, [r["test_exact_match"] for r in records], "o-", color="C0", label="test exact match")
    for r in records:
        ax.annotate(f"{r['test_exact_match']:.0f}", (r["compound_divergence"], r["test_exact_match"]),
                    textcoords="offset points", xytext=(0, -13), ha="center", fontsize=8)
    ax.axhline(MIN_FIT, color="0.7", lw=0.8, ls=":", label=f"fit needed ({MIN_FIT:g} %)")
    ax.set_xlabel("compound divergence D_C of the split")
    ax.set_ylabel("exact match (%)")
    ax.set_ylim(-3, 105)
    ax.set_title(f"{title}\nSpearman rho(D_C, test) = {rho:.2f} over {len(records)} splits", fontsize=10)
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure_atomic(fig, path, dpi=120)
    return path


# ------------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Presets: " + "; ".join(f"{k}: {v}" for k, v in PRESETS.items()))
    scale = p.add_mutually_exclusive_group()
    scale.add_argument("--small", dest="preset", action="store_const", const="small",
                       help="a pipeline check in seconds (default; not a result)")
    scale.add_argument("--cpu", dest="preset", action="store_const", const="cpu",
                       help="SCAN, 6 splits, <= 30 min on 2 cores with --jobs 2")
    scale.add_argument("--paper", dest="preset", action="store_const", const="paper", help="larger model (GPU)")
    p.set_defaults(preset="small")
    p.add_argument("--out", default=os.path.join("runs", "compositionality_curve"),
                   help="parent folder; each run writes its own subfolder <preset>-seed<seed>-<UTC time>")
    p.add_argument("--seed", type=int, default=0, help="seed of the split search, the subsets and the models")
    p.add_argument("--jobs", type=int, default=1, help="models trained at once, each in its own process (default 1)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads per process (default 1)")
    p.add_argument("--eval-batch-size", type=int, default=128)
    p.add_argument("--targets", type=float, nargs="+", help="target D_C of each split, increasing, in [0, 1]")
    p.add_argument("--scheduler", choices=["linear", "constant_with_warmup", "cosine"], default=None,
                   help="learning-rate schedule after the warmup (default: the preset's; --cpu: linear decay to 0)")
    for name, kind in [("pool_size", int), ("train_share", float), ("test_share", float),
                       ("max_atom_divergence", float), ("search_seconds", float), ("steps", int),
                       ("batch_size", int), ("learning_rate", float), ("warmup_steps", int), ("d_model", int),
                       ("layers", int), ("ffn", int), ("heads", int), ("dropout", float), ("sanity_size", int),
                       ("test_rows", int)]:
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None, help=f"override the preset's {name}")
    args = p.parse_args(argv)
    from hf_synthsample.experiments import apply_preset

    apply_preset(p, args, PRESETS[args.preset],
                 positive=("steps", "batch_size", "learning_rate", "d_model", "layers", "ffn", "heads", "sanity_size",
                           "search_seconds", "train_share", "test_share"),
                 non_negative=("pool_size", "warmup_steps", "test_rows", "dropout", "max_atom_divergence"))
    if args.seed < 0:
        p.error(f"--seed must be >= 0, got {args.seed}")
    for flag, value in (("--jobs", args.jobs), ("--threads", args.threads), ("--eval-batch-size", args.eval_batch_size)):
        if value < 1:
            p.error(f"{flag} must be a positive integer, got {value}")
    targets = list(args.targets)
    if any(not 0.0 <= t <= 1.0 for t in targets):
        p.error(f"--targets must be in [0, 1], got {targets}")
    if len(targets) < 2 or any(b <= a for a, b in zip(targets, targets[1:])):
        p.error(f"--targets must be at least 2 values, strictly increasing (no repeats), got {targets}")
    if args.train_share + args.test_share > 1.0:
        p.error(f"--train-share + --test-share must be <= 1, got {args.train_share} + {args.test_share}")
    if args.dropout >= 1.0:
        p.error(f"--dropout must be in [0, 1), got {args.dropout}")
    if args.d_model % args.heads:
        p.error(f"--d-model {args.d_model} must be divisible by --heads {args.heads}")
    return args


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the forked trainings)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from hf_synthsample.atomic import atomic_folder, write_json_atomic, write_text_atomic
    from hf_synthsample.experiments import is_main_process

    torch.set_num_threads(args.threads)
    stamp = datetime.datetime.now(datetime.timezone.utc)
    folder = os.path.join(args.out, f"{args.preset}-seed{args.seed}-{stamp:%Y%m%dT%H%M%SZ}")
    if os.path.lexists(folder):  # never mix two runs' tables: say so before any work
        raise FileExistsError(f"--out: {folder} exists already (another run started this second); run again")
    start, cpu0, load0 = time.perf_counter(), _cpu_seconds(), os.getloadavg()
    pool = scan_pool(args.pool_size, args.seed)
    args.pool_rows = pool.num_rows
    sweep = make_sweep(pool, args)
    split_s = time.perf_counter() - start
    print(f"sweep of {len(args.targets)} splits in {split_s:.0f} s: "
          + ", ".join(f"{t:g} -> {sweep.compound_divergence[t]:.3f}" for t in args.targets), flush=True)
    planned = [(t, sweep.splits[t]["train"], sweep.splits[t]["test"], args) for t in args.targets]
    trained = run_all(planned, args.jobs)
    records = []
    for t, record in zip(args.targets, trained):
        split = sweep.splits[t]
        records.append({"target": t, "compound_divergence": float(sweep.compound_divergence[t]),
                        "atom_divergence": float(sweep.atom_divergence[t]), "train_rows": int(split["train"].num_rows),
                        "test_rows": int(split["test"].num_rows), "seed": args.seed, **record})
    rho = spearman([r["compound_divergence"] for r in records], [r["test_exact_match"] for r in records])
    table = results_table(args, records, rho)
    wall, cpu, load1 = time.perf_counter() - start, _cpu_seconds() - cpu0, os.getloadavg()
    command = "python " + " ".join([os.path.relpath(sys.argv[0])] + list(sys.argv[1:] if argv is None else argv))
    summary = {"preset": args.preset, "seed": args.seed, "spearman_rho": rho, "target_rho": TARGET_RHO,
               "target_met": bool(rho <= TARGET_RHO and all(r["fit"] >= MIN_FIT for r in records)),
               "min_fit": MIN_FIT, "fits_below_min": sum(r["fit"] < MIN_FIT for r in records),
               "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1), "split_seconds": round(split_s, 1),
               "load_average_start": [round(x, 2) for x in load0], "load_average_end": [round(x, 2) for x in load1],
               "jobs": args.jobs, "threads": args.threads, "command": command, "table": table.to_dict()}
    if is_main_process():
        markdown = (table.to_markdown() + f"\n\nSpearman rho = {rho:.3f} (target <= {TARGET_RHO}, every fit >= "
                    f"{MIN_FIT:g} %: {'met' if summary['target_met'] else 'NOT met'}). Wall {wall / 60:.1f} min, CPU "
                    f"{cpu / 60:.1f} min (--jobs {args.jobs}, --threads {args.threads}), load average "
                    f"{load0[0]:.1f} at the start, {load1[0]:.1f} at the end. Command: `{command}`\n")
        with atomic_folder(folder) as tmp:  # the whole folder appears at once, or not at all
            write_json_atomic(tmp / "runs.json", records, indent=2)
            write_json_atomic(tmp / "results.json", summary, indent=2)
            write_text_atomic(tmp / "results.md", markdown)
            plot_curve(str(tmp / "curve.png"), records, rho,
                       f"SCAN, {args.preset} preset, BART d_model {args.d_model}, {args.steps} steps, seed {args.seed}")
            sweep.save(str(tmp / "splits"), plots=False)  # the splits themselves, a config per target
        print(markdown)
        print(f"wrote {folder}/ (runs.json, results.md, results.json, curve.png, splits/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
