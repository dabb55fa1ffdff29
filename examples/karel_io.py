"""Shin et al. (2019), Table 1: a Karel program synthesizer trained on baseline I/O vs uniform I/O,
evaluated (generalization accuracy by execution) on narrow I/O test sets.

    python examples/karel_io.py                       # --small (default): CPU smoke run, about 8 min here
    python examples/karel_io.py --cpu --jobs 2        # reduced but faithful CPU setting, see docs/reproductions.md
    python examples/karel_io.py --gpu                 # 10,000 programs (50x what a CPU fits): one H100, < 8 min
    python examples/karel_io.py --cpu-t5              # the earlier --cpu (full programs, T5; fits 2 %)
    accelerate launch examples/karel_io.py --paper    # paper-scale settings (GPU), see PRESETS

Data (all from the ``karel`` builder of this package; nothing downloaded):

* programs: the ``baseline`` config's ``train`` and ``test`` splits (program-disjoint);
* **Baseline** training set: the train programs with their baseline I/O (walls and markers each on
  10 % of cells); **Uniform** training set: the *same programs* with new I/O from the paper's uniform
  salient I/O procedure (``resample_io``) and, as in the paper's section 5.1, a uniform number of
  shown grids (1..5; drawn per task here, per mini-batch in the paper);
* test sets: the test programs with their baseline I/O, with uniform I/O, and with each of the
  paper's twelve narrow I/O distributions (marker ratio m, wall ratio w, marker counts U = uniform
  1..9, G = geometric, 10-G = ten minus geometric), I/O resampled, programs kept (section 4.2); a
  program with no valid I/O set under a narrow distribution is left out (``tasks`` gives sizes).

Model: a scratch encoder-decoder (``hf_synthsample.models``: word-level tokenizer, stock
``Seq2SeqTrainer``), a T5 (``--arch t5``) or the attentional bi-LSTM (``--arch lstm``), reading the
shown I/O pairs as words (``karel_words.py``: ``--frame absolute`` or ``egocentric``) and writing
the program's tokens. Bunel et al. (2018) use a CNN grid encoder with an LSTM decoder; the paper's
comparison (same model, two training distributions) does not depend on the architecture. Scoring:
``karel_execution`` (generalization accuracy = the predicted program maps every shown *and* the
held-out input to its output). ``--fit-target``: a model trains until it fits that share of its
first ``--num-fit`` training tasks (checked every ``--check-every`` epochs, at most ``--epochs``);
``--seeds`` model seeds train on the same data, ``--jobs 2`` two at a time (forked processes).

``--cpu`` (reduced but faithful): programs of at most 16 tokens with at most one ``if``/``ifelse``
(conditions on walls and markers: what makes the I/O distribution matter), nesting 1, bodies of at
most 3 statements; grids 2..6; egocentric words; an LSTM (hidden 128) trained to 80 % fit; 200
programs, the scale at which a model fits on a CPU, by memorising them; and ``--seen``: the same
columns over *training* programs with new I/O (programs seen, inputs not). With 300-3,000 programs
nothing fits inside a CPU budget (docs/reproductions.md), so the CPU cannot decide Table 1.

``--gpu``: the ``--cpu`` programs and grids at 10,000 training programs (50x), an LSTM with hidden
256, batch 64, 12 epochs (the 80 % fit target stops it earlier, checked every 4 epochs), one seed,
generated with 8 processes. Sized for one H100 in under 8 minutes: data ~100 s (the builder makes
~240 tasks/s per process; 10,000 programs, their uniform I/O and 28 test sets of 200 programs),
training 2 x ~80 s (157 steps an epoch; the loop is CPU-bound on an H100, ~20-25 steps/s), scoring
28 sets and the fit checks 2 x ~50 s, start-up ~30 s: about 6-7 minutes. It decides Karel when
the ``seen`` columns come near the fit (the model reads grids, not memorised tasks): then the
narrow columns compare the two training distributions.

Writes to ``--out`` (default ``runs/karel_io``): ``table1.md/.json`` (generalization accuracy %,
rows Baseline / Uniform / difference in pp (and per seed), one column per test set, each model's
fit beside every cell), ``exact_match.md/.json``, ``tasks.md/.json``, with ``--seen`` the same three
as ``*_seen``, ``results.md``, ``runs.json`` (per model and seed: scores, fit curve, epochs, CPU-s)
and ``table1.png``. Runtime: ``--small`` ~2.5 CPU-min (a smoke run, far from the paper);
``--cpu --jobs 2`` 747 CPU-s (19 min at load 7-8; both models fit 80-95 %, every test set 1-8 %:
the fit is memorized tasks); ``--cpu-t5`` ~17 CPU-min (fits 2 %); ``--paper`` hours on a GPU
(100,000 programs, grids up to 16x16, T5 d_model 256; the paper: Bunel et al.'s 1.1M programs).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from harness import (ResultsTable, Score, add_overrides, add_presets, add_run_flags, describe_settings, finish_args,
                     is_main_process, run_jobs, start_run, write_results)
from karel_runs import score, train_model  # noqa: F401 (the example's API)
from karel_words import (DIRECTIONS, FRAMES, add_text, num_grids_for, serialize_pair,  # noqa: F401 (re-exported)
                         serialize_pair_egocentric, serialize_task, vocabulary)

#: the result files a run writes at the top of --out; a run first removes those of the previous one
#: (harness.clear_outputs), so tables of two runs never sit side by side
OUTPUTS = ("table1.*", "exact_match.*", "tasks.*", "table1_seen.*", "exact_match_seen.*", "tasks_seen.*", "results.md",
           "runs.json")

#: (marker ratio, wall ratio) pairs and marker-count distributions of the paper's narrow sets
NARROW_RATIOS = ((0.05, 0.85), (0.25, 0.65), (0.65, 0.25), (0.85, 0.05))
COUNT_LABELS = {"uniform": "U", "geometric": "G", "ten_minus_geometric": "10-G"}
ALL_NARROW = [f"m{m:g} w{w:g} {c}" for m, w in NARROW_RATIOS for c in COUNT_LABELS.values()]

#: the builder's program defaults (ProgramParams), used by every preset but --cpu
_FULL_PROGRAMS = dict(max_program_size=40, max_control_flow=4, max_nesting=3, max_body=4, min_grid_size=2,
                     constructs=("repeat", "while", "if", "ifelse"))
#: the earlier T5 presets: no fit-based stopping, linear decay, one seed
_T5 = dict(seen=0, frame="absolute", arch="t5", hidden_size=None, dropout=0.1, fit_target=0.0, check_every=0,
           lr_schedule="linear", seeds=1, num_proc=None, **_FULL_PROGRAMS)
#: reduced but faithful (docs/reproductions.md): short programs with at most one control structure
#: (conditions on walls/markers), grids up to 6x6, egocentric I/O words, an attentional LSTM trained
#: until it fits 80 % of its own tasks; 200 programs: the scale at which a model fits on a CPU
_CPU = dict(num_train=200, num_test=200, num_fit=200, max_grid_size=6, epochs=100.0, d_model=None, layers=None,
            ffn=None, heads=None, batch_size=16, learning_rate=2e-3, max_new_tokens=24, narrow=ALL_NARROW,
            seen=200, frame="egocentric", arch="lstm", hidden_size=128, dropout=0.1, fit_target=80.0,
            check_every=5, lr_schedule="constant", seeds=3, max_program_size=16, max_control_flow=1,
            max_nesting=1, max_body=3, min_grid_size=2, constructs=("repeat", "while", "if", "ifelse"), num_proc=None)
PRESETS = {
    "tiny": dict(num_train=24, num_test=8, num_fit=8, max_grid_size=5, epochs=1.0, d_model=32, layers=1, ffn=64,
                 heads=2, batch_size=8, learning_rate=1e-3, max_new_tokens=24, narrow=ALL_NARROW[:2], **_T5),
    # the tiny run of the --cpu recipe (tests): short programs, LSTM, fit-based stopping, two seeds
    "tiny-cpu": dict(_CPU, num_train=24, num_test=8, num_fit=8, max_grid_size=4, epochs=2.0, batch_size=8,
                     max_new_tokens=20, narrow=ALL_NARROW[:2], seen=8, hidden_size=32, dropout=0.0, check_every=1,
                     seeds=2, max_program_size=14, max_body=2, constructs=("if", "ifelse")),
    "small": dict(num_train=1000, num_test=60, num_fit=60, max_grid_size=8, epochs=4.0, d_model=64, layers=2, ffn=128,
                  heads=4, batch_size=16, learning_rate=1e-3, max_new_tokens=48, narrow=ALL_NARROW, **_T5),
    "cpu": _CPU,
    # one H100, under 8 minutes: the --cpu programs at 50x the programs a CPU fits (sizing: the module docstring)
    "gpu": dict(_CPU, num_train=10_000, hidden_size=256, batch_size=64, epochs=12.0, check_every=4, seeds=1,
                num_proc=8),
    # the earlier --cpu (2026-11-25, kept for its recorded figures): 5,000 programs, 16 epochs; fits 2 %
    "cpu-t5": dict(num_train=5000, num_test=100, num_fit=100, max_grid_size=8, epochs=16.0, d_model=64, layers=2,
                   ffn=128, heads=4, batch_size=16, learning_rate=1e-3, max_new_tokens=48, narrow=ALL_NARROW, **_T5),
    "paper": dict(num_train=100_000, num_test=2500, num_fit=500, max_grid_size=16, epochs=30.0, d_model=256, layers=3,
                  ffn=512, heads=4, batch_size=64, learning_rate=5e-4, max_new_tokens=128, narrow=ALL_NARROW, **_T5),
}
ARCHS = ("t5", "lstm")
LR_SCHEDULES = ("linear", "constant")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)

    def settings(name):
        return ", ".join(f"{k}={v}" for k, v in PRESETS[name].items() if k != "narrow" and v is not None)

    add_presets(p, {"small": "CPU smoke run (the default)",
                    "cpu": "reduced but faithful CPU setting (docs/reproductions.md): " + settings("cpu")
                           + ", all 12 narrow sets",
                    "gpu": "one GPU (H100), under 8 min: the --cpu programs at 10,000 programs: " + settings("gpu"),
                    "cpu-t5": "the earlier --cpu (full program distribution, T5; fits 2 %%): " + settings("cpu-t5"),
                    "paper": "paper-scale settings (GPU): " + settings("paper") + ", all 12 narrow sets",
                    "tiny": None, "tiny-cpu": None}, default="small")
    add_overrides(p, [
        ("num_train", int, "training programs (both models)"),
        ("num_test", int, "test programs (each test set resamples their I/O)"),
        ("num_fit", int, "training tasks each model is also scored on (its fit, printed beside every score)"),
        ("max_grid_size", int, "largest grid side, training and test (2..16)"),
        ("min_grid_size", int, "smallest grid side (1..--max-grid-size)"),
        ("max_program_size", int, "longest program in tokens (>= 6)"),
        ("max_control_flow", int, "most control structures per program (>= 0)"),
        ("max_nesting", int, "deepest control-flow nesting (>= 0)"),
        ("constructs", str, "allowed control structures (repeat, while, if, ifelse)",
         dict(nargs="+", choices=("repeat", "while", "if", "ifelse"), metavar="C")),
        ("max_body", int, "most statements per body (>= 1)"),
        ("narrow", str, f"narrow test sets [all 12: {', '.join(repr(s) for s in ALL_NARROW)}]",
         dict(nargs="+", choices=ALL_NARROW, metavar="SET")),
        ("frame", str, "I/O serialisation: absolute cells or cells relative to Karel (egocentric)", dict(choices=FRAMES)),
        ("seen", int, "also score the first N training programs with new I/O draws (baseline, uniform, each narrow "
         "set): programs seen in training, inputs not [0: off]"),
        ("arch", str, "scratch model: t5 or an attentional bi-LSTM (lstm)", dict(choices=ARCHS)),
        ("epochs", float, "training epochs (with --fit-target: the cap)"),
        ("fit_target", float, "stop training once the fit (generalization accuracy %% on --num-fit own training "
         "tasks, checked every --check-every epochs) reaches this; 0: train all --epochs"),
        ("check_every", int, "epochs between fit checks (with --fit-target)"),
        ("hidden_size", int, "LSTM width (--arch lstm)"), ("dropout", float, "dropout (0 <= p < 1)"),
        ("d_model", int, "Transformer width (--arch t5)"), ("layers", int, "encoder and decoder layers (--arch t5)"),
        ("ffn", int, "feed-forward width (--arch t5)"), ("heads", int, "attention heads (--arch t5)"),
        ("batch_size", int, "per-device batch size"), ("learning_rate", float, "Adam(W) learning rate"),
        ("lr_schedule", str, "linear decay or constant (after 2%% warm-up)", dict(choices=LR_SCHEDULES)),
        ("max_new_tokens", int, "longest generated program"),
        ("seeds", int, "model seeds (seed, seed+1, ...) on the same data"),
        ("num_proc", int, "processes generating the programs and their I/O [--gpu: 8]")])
    p.add_argument("--num-beams", type=int, default=1, help="beam size at test time [1: greedy]")
    p.add_argument("--seed", type=int, default=0, help="data seed and first model seed [0]")
    add_run_flags(p, out=os.path.join("runs", "karel_io"),
                  jobs_help="models trained side by side in forked processes [1]")
    a = p.parse_args(argv)
    preset = dict(PRESETS[a.preset])
    arch = a.arch or preset["arch"]
    for k, v in (("d_model", 64), ("layers", 2), ("ffn", 128), ("heads", 4), ("hidden_size", 128)):
        if preset[k] is None and (arch == "t5") == (k != "hidden_size"):
            preset[k] = v  # a width for the other architecture's preset
    model_sizes = ("hidden_size",) if arch == "lstm" else ("d_model", "layers", "ffn", "heads")
    finish_args(p, a, PRESETS, preset=preset, positive=(
        "num_train", "num_test", "num_fit", "batch_size", "max_new_tokens", "num_beams", "seeds", "max_body",
        "min_grid_size", "epochs", *model_sizes), non_negative=("fit_target", "check_every", "max_control_flow",
                                                               "max_nesting", "seen", "seed"),
        rates=("learning_rate",), below_one=("dropout",), percents=("fit_target",), outputs=OUTPUTS)
    if a.num_proc is not None and a.num_proc < 1:
        p.error(f"--num-proc must be a positive number of processes, got {a.num_proc}")
    if not 2 <= a.max_grid_size <= 16:
        p.error(f"--max-grid-size must be in 2..16, got {a.max_grid_size}")
    if a.min_grid_size > a.max_grid_size:
        p.error(f"--min-grid-size must be at most --max-grid-size ({a.max_grid_size}), got {a.min_grid_size}")
    if a.max_program_size < 6:
        p.error(f"--max-program-size must be >= 6 (DEF run m( ... m) around at least two actions, one a move), "
                f"got {a.max_program_size}")
    if a.fit_target > 0 and a.check_every < 1:
        p.error(f"--check-every must be >= 1 with --fit-target {a.fit_target:g}, got {a.check_every}")
    if arch == "lstm" and a.num_beams > 1:
        p.error(f"--num-beams: the LSTM decodes greedily only (--num-beams 1), got {a.num_beams}")
    if arch == "lstm" and a.hidden_size % 2:
        p.error(f"--hidden-size must be even (each encoder direction has half), got {a.hidden_size}")
    return a


# ------------------------------------------------------------------------------------------------
# Data sets
# ------------------------------------------------------------------------------------------------
#: the ``karel`` builder's baseline I/O (walls and markers each on 10 % of cells, geometric counts)
BASELINE_IO = dict(wall_ratio_range=(0.1, 0.1), marker_ratio_range=(0.1, 0.1), marker_counts="geometric")
#: the prefix of the test sets over training programs (``--seen``)
SEEN = "seen: "


def narrow_params(name: str) -> dict:
    """``"m0.05 w0.85 10-G"`` -> the ``resample_io`` keywords of that narrow distribution."""
    m, w, c = name.split()
    counts = {v: k for k, v in COUNT_LABELS.items()}[c]
    return dict(distribution="narrow", marker_ratio=float(m[1:]), wall_ratio=float(w[1:]), marker_counts=counts)


def program_config(a: argparse.Namespace) -> dict:
    """The ``karel`` builder's config keywords of the run (the ``baseline`` config, programs and grids
    reduced where the preset says; the builder's defaults are left implicit, so the earlier presets
    keep their cached data)."""
    out = {"max_grid_size": a.max_grid_size}
    for key, name in (("min_grid_size", "min_grid_size"), ("max_size", "max_program_size"),
                      ("max_control_flow", "max_control_flow"), ("max_nesting", "max_nesting"),
                      ("max_body", "max_body"),
                      ("constructs", "constructs")):
        if list(getattr(a, name)) != list(_FULL_PROGRAMS[name]) if name == "constructs" else \
                getattr(a, name) != _FULL_PROGRAMS[name]:
            out[key] = tuple(getattr(a, name)) if name == "constructs" else getattr(a, name)
    return out


def build_data(a: argparse.Namespace):
    """Training sets (name -> Dataset) and test sets (name -> Dataset), all with source/target columns."""
    import hf_synthsample
    from hf_synthsample.builders.karel import resample_io

    ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=a.num_train, num_test=a.num_test, seed=a.seed,
                                     cache_dir=a.cache_dir, num_proc=a.num_proc, **program_config(a))

    def resample(split, seed, **io):
        return split.map(resample_io, batched=True, desc="resampling I/O", num_proc=a.num_proc,
                         fn_kwargs=dict(seed=seed, min_grid_size=a.min_grid_size, max_grid_size=a.max_grid_size,
                                        on_failure="drop", **io))

    text = dict(batched=True, desc="serialising", fn_kwargs={"frame": a.frame})
    uniform = resample(ds["train"], a.seed + 1)
    # the same programs in both training sets: drop the few that got no valid uniform I/O set
    kept = set(uniform["guid"])
    baseline = ds["train"].filter(lambda guid: guid in kept, input_columns="guid")
    train = {
        "Baseline": baseline.map(add_text, **text),
        "Uniform": uniform.map(add_text, **{**text, "fn_kwargs": {"uniform_grids": True, "seed": a.seed,
                                                                  "frame": a.frame}}),
    }
    tests = {"baseline I/O": ds["test"], "uniform I/O": resample(ds["test"], a.seed + 2)}
    for j, name in enumerate(a.narrow):
        tests[name] = resample(ds["test"], a.seed + 3 + j, **narrow_params(name))
    if a.seen:  # the first --seen training programs with new I/O draws (programs seen in training, inputs not)
        seen = baseline.select(range(min(a.seen, baseline.num_rows)))
        tests[f"{SEEN}baseline I/O"] = resample(seen, a.seed + 100, **BASELINE_IO)
        tests[f"{SEEN}uniform I/O"] = resample(seen, a.seed + 101)
        for j, name in enumerate(a.narrow):
            tests[SEEN + name] = resample(seen, a.seed + 102 + j, **narrow_params(name))
    tests = {k: v.map(add_text, **text) for k, v in tests.items()}
    return train, tests


# ------------------------------------------------------------------------------------------------
# Tables (each model: karel_runs.train_model, a scratch T5 or LSTM trained to its fit target, scored by
# execution with karel_runs.score)
# ------------------------------------------------------------------------------------------------
def _diff(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None else x - y


def build_tables(scores: dict[str, list[dict[str, dict[str, float]]]], fits: dict[str, list[dict[str, float]]],
                 sizes: dict[str, int], caption: str, num_fit: int):
    """Table 1 (generalization %), the same for exact match, and the test-set sizes; every model
    cell carries the model's fit (the same score on its own training tasks). ``scores[model]`` and
    ``fits[model]`` hold one entry per seed: a cell is the mean (±sd over seeds), and with several
    seeds the difference row is followed by one row per seed (the paired differences)."""
    tests = list(sizes)
    tables = {}
    for key, title in (("generalization_accuracy", "Karel generalization accuracy (%) by training I/O distribution"),
                       ("exact_match", "Karel exact match (%) by training I/O distribution")):
        t = ResultsTable(title, ["train", *tests], caption=caption, float_format="{:.2f}",
                         fit_note=f"fit: the same score on {num_fit} of the model's own training tasks (its "
                         "training I/O); a fit near 0 means the model learnt too little for the columns to compare "
                         "training distributions.")
        means = {}
        for model_name, runs in scores.items():
            fit = [f[key] for f in fits[model_name]]
            cells = {}
            for name in tests:
                values = [r[name][key] for r in runs]
                cells[name] = None if values[0] is None else Score.of(values, fit=fit)
            means[model_name] = {n: None if c is None else c.value for n, c in cells.items()}
            t.add(train=model_name, **cells)
        if {"Baseline", "Uniform"} <= set(scores):
            t.add(train="Uniform - Baseline (pp)",
                  **{n: _diff(means["Uniform"][n], means["Baseline"][n]) for n in tests})
            seeds = len(scores["Baseline"])
            for i in range(seeds if seeds > 1 else 0):
                t.add(train=f"  seed {i + 1} of {seeds}",
                      **{n: _diff(scores["Uniform"][i][n][key], scores["Baseline"][i][n][key]) for n in tests})
        tables[key] = t
    sizes_table = ResultsTable("Karel test sets: tasks per set (programs kept, I/O resampled)", ["set", *tests],
                               caption="Programs with no valid I/O set under a narrow distribution are left out.")
    sizes_table.add(set="tasks", **sizes)
    return tables["generalization_accuracy"], tables["exact_match"], sizes_table


def plot_table(table1):
    """Table 1 transposed for the bar plot: one group per test set, one bar per training distribution
    (the model's fit as a tick). Long test-set names are shortened to fit under the bars."""
    models = [r for r in table1.rows if r["train"] in ("Baseline", "Uniform")]
    t = ResultsTable(table1.title, ["test set", *(r["train"] for r in models)], fit_note="")
    for col in table1.columns[1:]:
        t.add(**{"test set": col.replace(" I/O", "").replace(" ", "\n")}, **{r["train"]: r[col] for r in models})
    return t


def main(argv=None) -> int:
    a = parse_args(argv)
    import evaluate
    import torch

    from hf_synthsample.metrics import metric_path
    from hf_synthsample.models import build_word_tokenizer

    start_run(a.out, OUTPUTS, a.threads, a.jobs)
    start, cpu0 = time.time(), time.process_time()
    train, tests = build_data(a)
    metric = evaluate.load(metric_path("karel_execution"))
    tokenizer = build_word_tokenizer([" ".join(vocabulary(a.max_grid_size, frame=a.frame))])
    seeds = [a.seed + i for i in range(a.seeds)]
    runs = [(name, s) for s in seeds for name in train]  # seeds outermost: with --jobs 2 the pair trains side by side

    def run_one(run: tuple) -> dict:
        torch.set_num_threads(a.threads)
        name, seed = run
        t0 = time.process_time()
        model, curve, epochs = train_model(name, train[name], tokenizer, a, seed=seed, metric=metric)
        fit_rows = train[name].select(range(min(a.num_fit, train[name].num_rows)))
        known = set(train[name]["target"])
        res = {"scores": {test: score(model, tokenizer, ds, metric, a, known) for test, ds in tests.items()},
               "fit": score(model, tokenizer, fit_rows, metric, a),
               "fit_curve": curve, "epochs": epochs, "cpu_s": round(time.process_time() - t0, 1)}
        head = f"[{time.time() - start:6.0f}s] {name} seed {seed} ({epochs:g} epochs, {res['cpu_s']:.0f} CPU-s): "
        print(head + ", ".join(
            f"{t} " + ("-" if s["generalization_accuracy"] is None else f"{s['generalization_accuracy']:.1f}")
            for t, s in res["scores"].items()) + f"; fit (training tasks) {res['fit']['generalization_accuracy']:.1f}",
            flush=True)
        return res

    results = run_jobs(run_one, runs, a.jobs, describe=lambda run: f"{run[0]} seed {run[1]}")
    scores = {name: [r["scores"] for (n, _), r in zip(runs, results) if n == name] for name in train}
    fits = {name: [r["fit"] for (n, _), r in zip(runs, results) if n == name] for name in train}
    scale = {"paper": "paper-scale settings",
             "cpu": "a reduced but faithful CPU setting: short programs with control flow, small grids",
             "gpu": "the --cpu programs and grids at 10,000 programs, sized for one H100 in under 8 minutes",
             "cpu-t5": "the largest CPU setting tried with the full program distribution, far below the paper's scale",
             }.get(a.preset, f"{a.preset} run: a smoke run, NOT the paper's scale or numbers")
    model = (f"attentional bi-LSTM (hidden {a.hidden_size}, dropout {a.dropout:g})" if a.arch == "lstm" else
             f"T5 d_model {a.d_model}, {a.layers}+{a.layers} layers, ffn {a.ffn}, {a.heads} heads")
    stop = (f"trained until it fits {a.fit_target:g} % of {a.num_fit} own training tasks (checked every "
            f"{a.check_every} epochs, at most {a.epochs:g}; epochs used: "
            + "; ".join(n + " " + ", ".join(f"{r['epochs']:g}" for (m, _), r in zip(runs, results) if m == n)
                        for n in train) + ")") if a.fit_target > 0 else f"{a.epochs:g} epochs"
    programs = (f"programs of at most {a.max_program_size} tokens, {a.max_control_flow} control structure(s), "
                f"nesting {a.max_nesting}, bodies of {a.max_body}")
    cpu = time.process_time() - cpu0 + (sum(r["cpu_s"] for r in results) if a.jobs > 1 and len(runs) > 1 else 0)
    caption = (f"{describe_settings(a.preset, a.overrides)} ({scale}). {a.num_train} training programs (same programs "
               f"for both rows; {programs}), {a.num_test} test programs, grids {a.min_grid_size}..{a.max_grid_size}; "
               f"scratch {model}, {stop}, batch {a.batch_size}, lr {a.learning_rate:g} ({a.lr_schedule}), "
               f"{'greedy' if a.num_beams == 1 else f'beam {a.num_beams}'} decoding; model seeds {seeds} "
               f"(mean±sd over seeds). Wall {time.time() - start:.0f} s, {cpu:.0f} CPU-s.")
    sizes = {k: v.num_rows for k, v in tests.items()}
    held = {k: v for k, v in sizes.items() if not k.startswith(SEEN)}
    table1, exact, tasks = build_tables(scores, fits, held, caption, a.num_fit)
    tables = {"table1": table1, "exact_match": exact, "tasks": tasks}
    if a.seen:
        seen = {k: v for k, v in sizes.items() if k.startswith(SEEN)}
        seen_tables = build_tables(scores, fits, seen, caption + f" Test sets over the first {a.seen} *training* "
                                   "programs, I/O newly drawn (programs seen in training, inputs not).", a.num_fit)
        for name, t in zip(("table1_seen", "exact_match_seen", "tasks_seen"), seen_tables):
            t.title += ": training programs, new I/O (--seen)"
            tables[name] = t
    write_results(a.out, tables, runs=[{"train": n, "seed": s, **r} for (n, s), r in zip(runs, results)],
                  plots={"table1": dict(table=plot_table(table1), ylabel="generalization accuracy (%)")})
    if is_main_process():
        print(f"wrote {a.out} in {time.time() - start:.0f}s ({cpu:.0f} CPU-s)")
    return 0


if __name__ == "__main__":
    from harness import run_main

    sys.exit(run_main(main))
