"""Noise detection with training dynamics: which recorded measure finds mislabelled rows?

    nice -n 5 python benchmarks/bench_noise.py --preset lstm-scan-300 --seed 0 1 2    # the recipe: SCAN, 300 rows
    nice -n 5 python benchmarks/bench_noise.py --preset lstm-scan-1000 --seed 0 1 2   # SCAN, 1,000 rows
    nice -n 5 python benchmarks/bench_noise.py --preset lstm-cogs                     # COGS, 1,000 rows
    nice -n 5 python benchmarks/bench_noise.py --preset scan-1000 --seed 0 1 2        # the same with Transformers
    nice -n 5 python benchmarks/bench_noise.py --preset scan-300 | cogs

``--preset lstm-*`` is the recipe of docs/training-dynamics.md, "Finding mislabelled rows": the
attentional LSTM (``--arch lstm``, hidden 64, dropout 0.5, constant lr 2e-3, batch 16; COGS:
hidden 128, dropout 0.3), ``inv_ppl`` over the recipe window: 91.1 / 91.1 / 88.9 % of the wrong
rows on 300 SCAN rows (150 epochs), 91.3 / 93.3 / 92.0 % on 1,000 (40 epochs), 70.0 % on COGS
(seed 0; chance 15 %); docs/benchmarks.md, "The recipe's model".

``--preset scan-1000`` reproduces docs/benchmarks.md, "Noise detection: the label-free recipe":
15 % noise, scratch BART d_model 128 (2+2 layers), 20 epochs, batch 32, lr 1e-3; the recipe
(``flag_noisy``: ``margin_deficit`` over the epochs after 90 % of the loss drop) finds 86.7, 90.0
and 83.3 % of the wrong rows (seeds 0, 1, 2). Flags given beside a preset override it. The older
table (every measure, every rate, all epochs) came from
``--datasets scan cogs --tasks seq2seq --noise 0.05 0.15 0.30 --d-model 128 --epochs 20``.
``--method lexical`` flags rows with :func:`~hf_synthsample.cartography.flag_noisy_lexical` instead
(no training, a fraction of a second; ``--method both`` prints it beside the trained run's lines):
``--preset scan-300 --method lexical --seed 0 1 2`` finds 95.6, 84.4 and 93.3 % of the wrong rows.
``--canaries K`` appends K more wrong rows with :func:`~hf_synthsample.cartography.add_canaries`
and prints the share of them the recipe flags beside the share of the injected wrong rows (the
canaries count as clean rows in every other figure of such a run).

For each dataset and noise rate, ``rate`` of the rows (seeded) get another row's target (a donor
row with a different target, so every chosen row is really wrong), a small model is trained
from scratch with :class:`~hf_synthsample.cartography.TrainingDynamicsCallback` recording every
measure (``inv_ppl``, ``chia``, ``aum``, ``el2n``, ``loss``, ``forgetting``), and every measure
(plus the data map's ``variability`` and ``correctness``) ranks the rows hardest-first
(``DataMap.ranking(m, order="hardest-first")``). Printed: precision and recall of the noisy rows
among the lowest-ranked ``--flag`` (15 %) of the rows, one training run per (dataset, task,
rate), all measures from that same run (the same budget for every measure); a second line per
run summarises the measures over the first half of the epochs only, a third over the second half,
a fourth over the label-free recipe's window (:func:`~hf_synthsample.cartography.noise_window`),
followed by the fit: the fraction of all / clean / noisy rows fitted (teacher-forced exact match)
at the window's last epoch, the mean training loss and whether it had plateaued. Only the
scoring (precision, recall, clean / noisy fit) reads the noise mask; the window never does.

Data: SCAN ``simple`` from the package's builder (command -> actions) and COGS
(``../shared/data/cogs/train.tsv``: sentence -> logical form), ``--num-examples`` rows each.
Tasks:

* ``seq2seq``: the target sequence itself (a scratch BART, word-level tokenizer; ``--d-model``,
  ``--layers``; the model and trainer of :mod:`hf_synthsample.models`);
* ``classification``: a class read off the target (SCAN: the first action, 6 classes; COGS: the
  lemma of the first verb, rows of the 10 most frequent verbs), predicted from the source by a
  scratch 2-layer BERT classifier; the noise swaps classes (another row's class, a different one).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

MEASURES = ("inv_ppl", "chia", "aum", "min_margin", "margin_deficit", "el2n", "loss", "forgetting")
RANKED = (*MEASURES, "variability", "correctness")
#: the settings of docs/benchmarks.md, "Noise detection: the label-free recipe" (explicit flags override them)
PRESETS = {
    "scan-1000": dict(datasets=["scan"], tasks=["seq2seq"], noise=[0.15], num_examples=1000, epochs=20, batch_size=32,
                      lr=1e-3, d_model=128),
    "scan-300": dict(datasets=["scan"], tasks=["seq2seq"], noise=[0.15], num_examples=300, epochs=60, batch_size=16,
                     lr=1e-3, d_model=64, arch="t5", warmup=0.1),
    "cogs": dict(datasets=["cogs"], tasks=["seq2seq"], noise=[0.15], num_examples=1000, epochs=30, batch_size=32,
                 lr=1e-3, d_model=128),
}
#: the recipe's model (docs/training-dynamics.md, "Finding mislabelled rows"): the attentional LSTM, which
#: learns the task before it memorises rows (hidden 64, one layer, dropout 0.5, constant lr 2e-3, batch 16)
_LSTM = dict(arch="lstm", d_model=64, layers=1, dropout=0.5, lr=2e-3, batch_size=16, warmup=0.0, scheduler="constant")
PRESETS.update({
    "lstm-scan-300": dict(PRESETS["scan-300"], **_LSTM, epochs=150),  # the loss still falls at 80
    "lstm-scan-1000": dict(PRESETS["scan-1000"], **_LSTM, epochs=40),
    # hidden 64 fitted no COGS row (0 %, plateaued): the budget rule asks for a larger model
    "lstm-cogs": dict(PRESETS["cogs"], **{**_LSTM, "d_model": 128, "dropout": 0.3}, epochs=40),
})


# ------------------------------------------------------------------------------------------------ data
def default_cogs() -> str:
    """``shared/data/cogs/train.tsv`` beside the checkout (or beside the folder holding a git worktree)."""
    for up in (("..", ".."), ("..", "..", "..")):
        path = os.path.normpath(os.path.join(HERE, *up, "shared", "data", "cogs", "train.tsv"))
        if os.path.exists(path):
            return path
    return os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data", "cogs", "train.tsv"))


def load_rows(name: str, n: int, seed: int, cogs_path: str) -> tuple[list[str], list[str]]:
    """``n`` (source, target) rows of SCAN simple or COGS, seeded sample."""
    if name == "scan":
        import hf_synthsample

        ds = hf_synthsample.load_dataset("scan", "simple", seed=seed)["train"]
        idx = np.sort(np.random.default_rng(seed).permutation(len(ds))[:n])
        ds = ds.select(idx)
        return list(ds["commands"]), list(ds["actions"])
    from cartography_cogs import read_cogs

    ds = read_cogs(cogs_path, n, seed=seed)
    return list(ds["source"]), list(ds["target"])


def class_of(name: str, target: str) -> str | None:
    """The classification label read off a target: SCAN's first action, COGS's first verb lemma."""
    if name == "scan":
        return target.split()[0]
    m = re.search(r"(\w+) \. (?:agent|theme|recipient|ccomp|xcomp)", target)
    return m.group(1) if m else None


def inject_noise(targets: list, rate: float, seed: int) -> tuple[list, np.ndarray]:
    """``rate`` of the rows get the target of a random donor row whose target differs; the noisy mask."""
    rng = np.random.default_rng(seed)
    n = len(targets)
    k = int(round(rate * n))
    chosen = np.sort(rng.choice(n, size=k, replace=False))
    out = list(targets)
    noisy = np.zeros(n, dtype=bool)
    for i in chosen:
        for _ in range(1000):
            j = int(rng.integers(n))
            if targets[j] != targets[i]:
                out[i] = targets[j]
                noisy[i] = True
                break
    return out, noisy


# ------------------------------------------------------------------------------------------------ training
def train_seq2seq_run(sources, targets, out_dir, a):
    from datasets import Dataset

    from hf_synthsample.cartography import CartographyCollator, TrainingDynamicsCallback, add_example_ids
    from hf_synthsample.models import (
        build_scratch_model,
        build_word_tokenizer,
        seq2seq_collator,
        tokenize_seq2seq,
        train_seq2seq,
    )

    raw = Dataset.from_dict({"source": sources, "target": targets})
    tok = build_word_tokenizer(raw, columns=["source", "target"])
    ds = add_example_ids(tokenize_seq2seq(raw, tok, source_column="source", target_column="target")
                         .remove_columns(["source", "target"]))
    if a.arch == "bart":
        model = build_scratch_model(tok, "bart", seed=a.seed, d_model=a.d_model, encoder_layers=a.layers,
                                    decoder_layers=a.layers, encoder_attention_heads=4, decoder_attention_heads=4,
                                    encoder_ffn_dim=2 * a.d_model, decoder_ffn_dim=2 * a.d_model,
                                    dropout=a.dropout, max_position_embeddings=256)
    elif a.arch == "lstm":  # --d-model is the hidden size, --layers the LSTM layers
        model = build_scratch_model(tok, "lstm", seed=a.seed, hidden_size=a.d_model, embedding_dim=a.d_model,
                                    num_layers=a.layers, dropout=a.dropout)
    else:
        model = build_scratch_model(tok, "t5", seed=a.seed, d_model=a.d_model, num_layers=a.layers, num_heads=4,
                                    d_ff=2 * a.d_model, dropout_rate=a.dropout)
    cb = TrainingDynamicsCallback(measures=MEASURES)
    train_seq2seq(model, tok, ds, source_column="source", target_column="target", output_dir=out_dir,
                  epochs=a.epochs, batch_size=a.batch_size, learning_rate=a.lr, seed=a.seed, callbacks=[cb],
                  remove_unused_columns=False, disable_tqdm=True, use_cpu=True, warmup_steps=a.warmup,
                  lr_scheduler_type=a.scheduler,
                  data_collator=CartographyCollator(seq2seq_collator(tok, model)))
    return os.path.join(out_dir, "cartography")


def train_classification_run(sources, labels, out_dir, a):
    import torch
    from datasets import Dataset
    from transformers import BertConfig, BertForSequenceClassification, DataCollatorWithPadding, Trainer, TrainingArguments

    from hf_synthsample.cartography import CartographyCollator, TrainingDynamicsCallback, add_example_ids
    from hf_synthsample.models import build_word_tokenizer

    classes = sorted(set(labels))
    y = [classes.index(c) for c in labels]
    tok = build_word_tokenizer(sources)
    enc = tok(sources)
    ds = add_example_ids(Dataset.from_dict({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"],
                                            "labels": y}))
    torch.manual_seed(a.seed)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=len(tok), hidden_size=a.d_model, num_hidden_layers=a.layers, num_attention_heads=4,
        intermediate_size=2 * a.d_model, max_position_embeddings=128, num_labels=len(classes),
        pad_token_id=tok.pad_token_id))
    args = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=a.batch_size, num_train_epochs=a.epochs,
                             learning_rate=a.lr, remove_unused_columns=False, report_to=[], logging_strategy="no",
                             save_strategy="no", use_cpu=True, disable_tqdm=True, seed=a.seed, warmup_steps=0)
    cb = TrainingDynamicsCallback(measures=MEASURES)
    Trainer(model=model, args=args, train_dataset=ds, callbacks=[cb],
            data_collator=CartographyCollator(DataCollatorWithPadding(tok))).train()
    return os.path.join(out_dir, "cartography")


# ------------------------------------------------------------------------------------------------ scoring
def detection(folder: str, noisy: np.ndarray, flag: float, min_epoch: int | None = None,
              max_epoch: int | None = None) -> dict[str, tuple[float, float]]:
    """Per measure: (precision, recall) of the noisy rows among the hardest ``flag`` of the rows
    (measures summarised over epochs ``min_epoch..max_epoch``, default all)."""
    from hf_synthsample.cartography import DataMap

    dm = DataMap.from_dynamics(folder, "inv_ppl", min_epoch=min_epoch, max_epoch=max_epoch)
    assert len(dm) == len(noisy)
    out = {}
    for m in RANKED:
        picked = dm.select_by(m, fraction=flag, order="hardest-first")
        hits = int(noisy[picked].sum())
        out[m] = (hits / len(picked), hits / max(1, int(noisy.sum())))
    return out


def recipe(folder: str, noisy: np.ndarray, flag: float) -> tuple[tuple[int, int], dict, dict]:
    """The label-free recipe (:func:`~hf_synthsample.cartography.noise_window`): the window, the
    recall of every measure over it, and the fit figures (all / clean / noisy rows fitted at the
    window's last epoch; the loss; whether it had plateaued)."""
    import pyarrow.parquet as pq

    from hf_synthsample.cartography import fit_curve, flag_noisy, noise_window

    lo, hi = noise_window(folder)
    det = detection(folder, noisy, flag, lo, hi)
    t = pq.read_table(os.path.join(folder, "dynamics.parquet"), columns=["example_id", "epoch", "correct"])
    ids, ep, ok = (np.asarray(t.column(c)) for c in ("example_id", "epoch", "correct"))
    at = ep == hi
    fitted_noisy = noisy[ids[at]]
    curve = fit_curve(folder)
    flags = flag_noisy(folder, fraction=flag)
    fit = {"all": float(ok[at].mean()), "clean": float(ok[at][~fitted_noisy].mean()),
           "noisy": float(ok[at][fitted_noisy].mean()) if fitted_noisy.any() else float("nan"),
           "loss": (float(curve["loss"][0]), float(curve["loss"][-1])), "plateaued": flags.plateaued}
    return (lo, hi), det, fit


def lexical_line(name, task, rate, sources, targets, noisy, canaries, a, lexical_results: list) -> None:
    """The lexical check (:func:`~hf_synthsample.cartography.flag_noisy_lexical`, no training):
    recall and precision of the wrong rows among the flagged, and how well its tables fit."""
    from hf_synthsample.cartography import canary_recall, flag_noisy_lexical, lexical_noise_scores

    t0 = time.perf_counter()
    flags = flag_noisy_lexical(sources, targets, fraction=a.flag)
    dt = time.perf_counter() - t0
    scores = lexical_noise_scores(sources, targets)
    hits = int(noisy[flags].sum())
    recall, precision = hits / max(1, int(noisy.sum())), hits / len(flags)
    lexical_results.append((name, task, rate, recall))
    wrong = noisy.copy()
    wrong[canaries] = True
    fwd = np.exp(scores["forward"])
    # no model is trained, so no training accuracy: the fit is how well the tables explain the rows
    # (the worst target token's probability given the source: median over clean / wrong rows)
    print(f"  {name + ' lexical':17} {task:14} {rate:5.0%} {len(sources):5d} {dt:5.1f}s  recall {100 * recall:5.1f} "
          f"(precision {100 * precision:5.1f}); fit: worst target token p(token | source), median clean "
          f"{np.median(fwd[~wrong]):.2f}, wrong {np.median(fwd[noisy]):.2f}"
          + (f"; canaries flagged {canary_recall(flags, canaries):.1%}" if len(canaries) else ""), flush=True)


def averaged_recall(folder: str, sources, targets, noisy: np.ndarray, flag: float) -> float:
    """Recall of the hardest ``flag`` of the rows by the mean of two hardness ranks: the lexical
    check's ``score`` and the recipe's ``margin_deficit`` over its window (ties: by position)."""
    from hf_synthsample.cartography import DataMap, lexical_noise_scores, noise_window

    n = len(noisy)
    score = lexical_noise_scores(sources, targets)["score"]
    lexical = np.empty(n)
    lexical[np.argsort(score, kind="stable")] = np.arange(1, n + 1)  # ranks 1..n, n = hardest
    lo, hi = noise_window(folder)
    dm = DataMap.from_dynamics(folder, "loss", min_epoch=lo, max_epoch=hi, nan_policy="omit")
    dynamics = np.zeros(n)
    # the benchmark's ids are the row positions (add_example_ids)
    dynamics[dm.ranking("margin_deficit", order="hardest-first")] = np.arange(len(dm), 0, -1)
    k = max(1, int(math.floor(flag * n + 0.5)))
    flagged = np.argsort(-(lexical + dynamics), kind="stable")[:k]
    return float(noisy[flagged].sum()) / max(1, int(noisy.sum()))


def run_dataset(name: str, a, tmp: str, tag_seed: bool, results: list, recipe_results: list,
                lexical_results: list) -> None:
    """Every (task, rate) run of one dataset and seed: train, print the windows and the recipe."""
    sources, targets = load_rows(name, a.num_examples, a.seed, a.cogs)
    for task in a.tasks:
        src, tgt = sources, targets
        if task == "classification":
            labels = [class_of(name, t) for t in targets]
            if name == "cogs":  # the 10 most frequent verbs
                from collections import Counter

                top = {c for c, _ in Counter(x for x in labels if x).most_common(10)}
                keep = [i for i, c in enumerate(labels) if c in top]
                src, tgt = [sources[i] for i in keep], [labels[i] for i in keep]
            else:
                tgt = labels
        for rate in a.noise:
            noisy_tgt, noisy = inject_noise(tgt, rate, a.seed + int(rate * 1000))
            src_run, canaries = src, np.zeros(0, dtype=np.int64)
            if a.canaries:  # extra wrong rows of known position: the user's label-free check
                from datasets import Dataset

                from hf_synthsample.cartography import add_canaries

                with_canaries, canaries = add_canaries(Dataset.from_dict({"s": list(src), "t": list(noisy_tgt)}), "t",
                                                       count=a.canaries, seed=a.seed)
                src_run, noisy_tgt = with_canaries["s"], with_canaries["t"]
                noisy = np.concatenate([noisy, np.zeros(len(canaries), dtype=bool)])
            if a.method in ("lexical", "both"):
                lexical_line(name, task, rate, src_run, noisy_tgt, noisy, canaries, a, lexical_results)
                if a.method == "lexical":
                    continue
            out = os.path.join(a.keep or tmp, f"{name}-{task}-{rate}" + (f"-s{a.seed}" if tag_seed else ""))
            t0 = time.perf_counter()
            run = train_seq2seq_run if task == "seq2seq" else train_classification_run
            folder = run(src_run, noisy_tgt, out, a)
            dt = time.perf_counter() - t0
            np.save(os.path.join(folder, "noisy.npy"), noisy)
            last = int(math.ceil(a.epochs)) - 1
            half = max(0, (last + 1) // 2 - 1)
            for window, lo, hi in (("all", None, None), ("1st half", None, half), ("2nd half", half + 1, None)):
                if lo is not None and lo > last:
                    continue
                det = detection(folder, noisy, a.flag, lo, hi)
                if window == "all":
                    results.append((name, task, rate, det))
                cells = "  ".join(f"{100 * det[m][0]:5.1f}/{100 * det[m][1]:5.1f}" for m in RANKED)
                label = f"{name} ({window})" if window != "all" else f"{name} s{a.seed}"
                print(f"  {label:17} {task:14} {rate:5.0%} {len(src):5d} {dt:5.0f}s  {cells}", flush=True)
            (lo, hi), det, fit = recipe(folder, noisy, a.flag)
            recipe_results.append((name, task, rate, det))
            cells = "  ".join(f"{100 * det[m][0]:5.1f}/{100 * det[m][1]:5.1f}" for m in RANKED)
            label = f"{name} (e{lo}-{hi})"
            print(f"  {label:17} {task:14} {rate:5.0%} {len(src):5d} {dt:5.0f}s  {cells}", flush=True)
            print(f"    recipe window: epochs {lo}-{hi} (after 90 % of the loss drop, no labels); fitted at epoch "
                  f"{hi}: all {fit['all']:.1%}, clean {fit['clean']:.1%}, noisy {fit['noisy']:.1%}; mean loss "
                  f"{fit['loss'][0]:.3f} -> {fit['loss'][1]:.3f}, "
                  f"{'plateaued' if fit['plateaued'] else 'still falling (train longer)'}", flush=True)
            if a.method == "both":
                print(f"    lexical + recipe ranks averaged: {100 * averaged_recall(folder, src_run, noisy_tgt, noisy, a.flag):.1f} "
                      f"% of the wrong rows flagged", flush=True)
            if len(canaries):
                from hf_synthsample.cartography import canary_recall, flag_noisy

                for m in ("margin_deficit", "min_margin"):
                    flags = flag_noisy(folder, fraction=a.flag, measure=m)
                    real = float(noisy[flags.example_ids].sum()) / max(1, int(noisy.sum()))
                    print(f"    canaries ({len(canaries)} rows more, ids {int(canaries[0])}..{int(canaries[-1])}): "
                          f"{m}: {canary_recall(flags, canaries):.1%} of the canaries flagged, "
                          f"{real:.1%} of the injected wrong rows", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=["scan", "cogs"], choices=["scan", "cogs"])
    p.add_argument("--tasks", nargs="+", default=["seq2seq", "classification"], choices=["seq2seq", "classification"])
    p.add_argument("--noise", nargs="+", type=float, default=[0.05, 0.15, 0.30], help="noise rates [0.05 0.15 0.30]")
    p.add_argument("--flag", type=float, default=0.15, help="fraction of rows flagged, lowest-ranked [0.15]")
    p.add_argument("--num-examples", type=int, default=1000, help="rows per dataset [1000]")
    p.add_argument("--epochs", type=float, default=10, help="[10]")
    p.add_argument("--batch-size", type=int, default=32, help="[32]")
    p.add_argument("--lr", type=float, default=1e-3, help="[1e-3]")
    p.add_argument("--d-model", type=int, default=64, help="[64]")
    p.add_argument("--layers", type=int, default=2, help="[2]")
    p.add_argument("--arch", default="bart", choices=["bart", "t5", "lstm"],
                   help="seq2seq architecture (lstm: --d-model is its hidden size) [bart]")
    p.add_argument("--dropout", type=float, default=0.1, help="[0.1]")
    p.add_argument("--warmup", type=float, default=0.0, help="warm-up, fraction of the steps [0]")
    p.add_argument("--scheduler", default="linear", help="learning-rate schedule [linear]")
    p.add_argument("--seed", type=int, nargs="+", default=[0], help="seeds (data sample, noise, model), one run each [0]")
    p.add_argument("--canaries", type=int, default=0,
                   help="append this many canary rows (add_canaries) and print their recall beside the real one [0]")
    p.add_argument("--method", default="dynamics", choices=["dynamics", "lexical", "both"],
                   help="dynamics: train and rank by the recorded measures; lexical: flag_noisy_lexical only (no "
                        "training, seconds); both [dynamics]")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads [1]")
    p.add_argument("--keep", default=None, help="keep each run's dynamics (and noisy mask) under this folder")
    p.add_argument("--cogs", default=default_cogs(), help=f"COGS train TSV [{default_cogs()}]")
    p.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="a setting of docs/benchmarks.md (flags given beside it override it)")
    preset = p.parse_known_args(argv)[0].preset
    if preset:
        p.set_defaults(**PRESETS[preset])
    a = p.parse_args(argv)

    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    torch.set_num_threads(a.threads)
    print(f"noise detection: {a.num_examples} rows, {a.epochs:g} epochs, batch {a.batch_size}, lr {a.lr:g}, "
          f"d_model {a.d_model}, {a.layers} layers, {a.arch}, dropout {a.dropout:g}, seeds {a.seed}; flagged: the hardest {a.flag:.0%} by each measure")
    print("  precision / recall (%) of the noisy rows among the flagged rows")
    if a.method == "lexical":
        header = f"  {'dataset':17} {'task':14} {'noise':>5} {'rows':>5} {'time':>6}  lexical check (no training)"
    else:
        header = (f"  {'dataset (epochs)':17} {'task':14} {'noise':>5} {'rows':>5} {'time':>6}  "
                  + "  ".join(f"{m:>11}" for m in RANKED))
    print(header)
    results, recipe_results, lexical_results = [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-noise-") as tmp:
        for seed in a.seed:
            run_args = argparse.Namespace(**{**vars(a), "seed": seed})
            for name in a.datasets:
                run_dataset(name, run_args, tmp, len(a.seed) > 1, results, recipe_results, lexical_results)
    if lexical_results:
        print(f"  mean recall over all runs (lexical check): {100 * np.mean([r[-1] for r in lexical_results]):.1f}")
    if not results:
        return 0
    best: dict[str, list[float]] = {m: [] for m in RANKED}
    for *_, det in results:
        for m in RANKED:
            best[m].append(det[m][1])
    print("  mean recall over all runs (all epochs): " + ", ".join(f"{m} {100 * np.mean(v):.1f}" for m, v in
                                                     sorted(best.items(), key=lambda kv: -np.mean(kv[1]))))
    best = {m: [det[m][1] for *_, det in recipe_results] for m in RANKED}
    print("  mean recall over all runs (recipe window): " + ", ".join(f"{m} {100 * np.mean(v):.1f}" for m, v in
                                                         sorted(best.items(), key=lambda kv: -np.mean(kv[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
