"""Shin et al. (2019), Table 3: a character-level LSTM trained on DCFG (and T2T) Calculator data,
unhomogenized and homogenized on each salient variable, evaluated on a fresh mixture of the four
distributions (DCFG, T2T, RCFG, BAL).

    python examples/shin_calculator.py                      # --small (default): quick pipeline check, ~8 min
    python examples/shin_calculator.py --cpu                # the CPU reproduction, see docs/reproductions.md
    python examples/shin_calculator.py --paper              # paper-scale settings (GPU), see PRESETS
    accelerate launch examples/shin_calculator.py --paper   # the same under accelerate

For each base distribution (``--base``: DCFG for ``--small``/``--cpu``, DCFG and T2T, the paper's two
rows, for ``--paper``) the script trains one model on the base distribution and one on each of the
five homogenized variants (``<base>-homogenized-<variable>`` configs of the ``calculator`` builder,
generator-side homogenization with ``--eps``), all with the same size, model, seeds and schedule;
every model is scored on one evaluation set drawn from the ``mixture`` config with a seed no
training set uses, and on its own data (the fit). Writes to ``--out`` (default
``runs/shin_calculator``):

* ``table3.md/.json``: rows = base distribution; columns = Original accuracy (%), then the change
  in percentage points (pp) when training on the base homogenized on Length, Max Depth, Mean
  Depth, #Operations, #Parens (the paper's layout); mean ± sd over ``--seeds`` training seeds
  (a change is paired by seed), each model's fit (accuracy on its own training rows) beside it;
* ``per_source.md/.json``: every model's fit (its training rows; fresh rows of its own
  distribution) and its accuracy on the whole mixture and on the rows of each source;
* ``per_level.md/.json``: accuracy on the mixture by number of operations (0 = a single digit);
* ``per_source.png`` (the second table as grouped bars), ``results.md`` (all three), ``runs.json``
  (every seed's figures and the settings).

Why the schedule matters (docs/reproductions.md, "Shin et al. — Calculator, Table 3"): DCFG at
this library's ``p_digit`` is mostly single digits, which a model fits in a few hundred steps; a
homogenized set is mostly long expressions, which it fits far more slowly. Stopped early (the
``--small`` run, or a decaying learning rate), the homogenized models are caught half-trained and
score *below* the original. The length and #operations sets overtake DCFG with 20,000 rows and
5,000 steps (``--cpu --patience 0 --num-train 20000 --variables length num_ops``); the three
parenthesis sets need more *data*: at 20,000 rows their models memorise (68-78 % on their own
training rows, 57 % on fresh rows) whatever the steps. So ``--cpu`` trains the three
parenthesis variables on 100,000 rows per set, 3 seeds (all five would not fit the 30-minute
budget). ``--patience N`` switches every model to a train-to-convergence protocol instead of a
fixed ``--epochs`` (``--patience 0``: off): every ``--eval-every`` steps the model is scored on
fresh rows of its own training distribution (the ``fit: held-out`` rows, never the mixture); it
stops once ``N`` evaluations in a row gained no more than ``--min-delta`` pp, but not before
``--min-steps``, or at ``--max-steps``; the checkpoint with the highest such score (the latest
among ties) is the one evaluated. ``--cpu`` sets ``--min-steps`` to ``--max-steps`` (20,000):
every model trains the same budget and only the checkpoint is selected (issue 22: with patience
alone, the original's score rested on where a transient plateau stopped it: 70.4 stopped at 7,500
steps vs 81.3 run to 20,000). Steps used and the step kept are in the per-source table; the
held-out curve of every model is in ``runs.json`` (``curve``, ``steps``, ``best_step``,
``stopped_early``), with its mixture accuracy at the same evaluations (``mixture_curve``, recorded
only, never used to select or stop).
The paper does not state its Calculator training sizes or schedule; the ``--paper`` preset is
this repository's documented choice (100,000 training rows per set, 20,000 evaluation rows,
256-unit LSTM, 20 epochs), not the paper's own.

Expected runtime: ``--small`` about 2 minutes on one CPU thread of a 2-core machine (docs/benchmarks.md); ``--cpu
--jobs 2`` about 30 minutes on 2 free cores (12 models of 20,000 steps; an estimate from the
2026-11-25 run's 16 ms a step; measured 1,900 CPU-s a seed at load 10-13, docs/reproductions.md); ``--paper`` roughly an hour on one
GPU (an estimate, not yet measured); ``--tiny`` (tests) a few seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

from harness import (ConvergenceStopper, ResultsTable, Score, SignedScore, add_overrides, add_presets,  # noqa: F401
                     add_run_flags, describe_settings, finish_args, is_main_process, run_jobs, start_run,
                     write_results)
from shin_runs import (EVAL_SEED_OFFSET, OPS_BUCKETS, _bucket_name, identical_sets, load_data,  # noqa: F401
                       load_split, run_job, train_and_score, training_config)

#: the result files a run writes at the top of --out; a run first removes those of the previous one
#: (harness.clear_outputs), so tables of two runs never sit side by side
OUTPUTS = ("table3.*", "per_source.*", "per_level.*", "results.md", "runs.json", "runs.partial.json")

#: Table 3 column per salient variable (the builder's variable names), in the paper's order.
VARIABLE_COLUMNS = {
    "length": "Length",
    "max_paren_depth": "Max Depth",
    "mean_paren_depth": "Mean Depth",
    "num_ops": "#Operations",
    "num_parens": "#Parens",
}
SOURCES = ("dcfg", "t2t", "rcfg", "bal")
BASES = ("dcfg", "t2t")

#: Settings per scale; every entry is also a command-line flag that overrides it.
#: ``cpu`` is the CPU reproduction (docs/reproductions.md): the three parenthesis variables (the
#: ones that need more data than 20,000 rows), 100,000 rows per set, every model trained for the
#: same 20,000 steps (``min_steps = max_steps``: equal budgets, no early stop) at a constant lr, the
#: checkpoint kept the best of its 40 evaluations on fresh rows of its own distribution, 3 seeds
#: (issue 22: with patience alone the original's score rested on where patience stopped it); eps=0.05: the five
#: homogenized sets are all different there (at eps >= 0.1 some coincide: only the single digits,
#: or only the parenthesis-free rows, are thinned). Length and #operations: ``--variables``.
#: The train-to-convergence protocol (``--patience``; ``train_and_score``) is off in the other
#: presets (``patience=None``: train ``--epochs``); ``eval_every``, ``min_delta``, ``max_steps`` and ``min_steps``
#: are its settings when ``--patience`` switches it on.
CONVERGE_OFF = dict(patience=None, eval_every=500, min_delta=0.5, max_steps=20_000, min_steps=0)
PRESETS = {
    "tiny": dict(num_train=200, num_eval=200, num_fit=100, epochs=1, hidden_size=32, embedding_dim=16, batch_size=32,
                 learning_rate=3e-3, lr_scheduler="linear", eps=0.01, seeds=1, bases=["dcfg"], variables=["length", "num_ops"],
                 **CONVERGE_OFF),
    "small": dict(num_train=4000, num_eval=2000, num_fit=500, epochs=4, hidden_size=128, embedding_dim=32,
                  batch_size=32, learning_rate=3e-3, lr_scheduler="linear", eps=0.01, seeds=1, bases=["dcfg"],
                  variables=list(VARIABLE_COLUMNS), **CONVERGE_OFF),
    "cpu": dict(num_train=100_000, num_eval=2000, num_fit=1000, epochs=8, hidden_size=128, embedding_dim=32,
                batch_size=32, learning_rate=3e-3, lr_scheduler="constant", eps=0.05, seeds=3, bases=["dcfg"],
                variables=["max_paren_depth", "mean_paren_depth", "num_parens"],
                **dict(CONVERGE_OFF, patience=6, min_steps=20_000)),
    "paper": dict(num_train=100_000, num_eval=20_000, num_fit=2000, epochs=20, hidden_size=256, embedding_dim=64,
                  batch_size=128, learning_rate=1e-3, lr_scheduler="linear", eps=0.01, seeds=3, bases=list(BASES),
                  variables=list(VARIABLE_COLUMNS), **CONVERGE_OFF),
}
SCHEDULERS = ("linear", "constant", "cosine")
def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_presets(p, {
        "small": "quick pipeline check on a CPU (the default; NOT the paper's effect)",
        "cpu": "CPU reproduction (12 models of 20,000 steps; about 30 min with --jobs 2 on 2 free cores, an estimate: "
               "1,900 CPU-s a seed measured at load 10-13; see docs/reproductions.md): "
               + ", ".join(f"{k}={v}" for k, v in PRESETS["cpu"].items() if k != "variables"),
        "paper": "paper-scale settings (GPU): " + ", ".join(f"{k}={v}" for k, v in PRESETS["paper"].items()),
        "tiny": None}, default="small")
    p.add_argument("--base", dest="bases", nargs="+", choices=BASES, default=None,
                   help="base distribution(s), one table row each [small, cpu: dcfg; paper: dcfg t2t]")
    add_overrides(p, [
        ("variables", str, "salient variables to homogenize on, one column each [all five]",
         dict(nargs="+", choices=list(VARIABLE_COLUMNS))),
        ("num_train", int, "training rows per data set"), ("num_eval", int, "rows of the mixture evaluation set"),
        ("num_fit", int, "rows to measure each model's fit on: its first N training rows and N fresh rows of its own "
         "distribution"),
        ("epochs", float, "training epochs"), ("hidden_size", int, "LSTM hidden units"),
        ("embedding_dim", int, "character embedding size"), ("batch_size", int, "per-device batch size"),
        ("learning_rate", float, "Adam(W) learning rate"),
        ("lr_scheduler", str, "learning-rate schedule [small, paper: linear decay; cpu: constant]",
         dict(choices=SCHEDULERS)),
        ("eps", float, "homogenization tolerance eps [cpu: 0.05; others: 0.01]"),
        ("seeds", int, "training seeds per cell (mean and sd reported) [tiny, small: 1; cpu, paper: 3]")])
    p.add_argument("--seed", type=int, default=0, help="data seed and first training seed [0]")
    conv = p.add_argument_group(
        "train to convergence", "with --patience, every model trains until its accuracy on fresh rows of its own "
        "distribution (--num-fit rows, the fit: held-out column) has not improved by more than --min-delta pp for "
        "--patience evaluations, one every --eval-every steps, but not before --min-steps, or to --max-steps steps; "
        "the evaluated checkpoint with the highest such score (the latest among ties) is kept (the mixture is "
        "never looked at). --epochs is then unused.")
    add_overrides(conv, [
        ("patience", int, "evaluations without improvement before stopping (switches the protocol on; 0: off) "
         "[--cpu: 6; other presets: off]"),
        ("eval_every", int, "steps between own-distribution evaluations [500]"),
        ("min_delta", float, "smallest gain (pp of held-out accuracy) that counts as an improvement [0.5]"),
        ("max_steps", int, "cap on training steps per model [20000]"),
        ("min_steps", int, "no model stops before this many steps, whatever its patience; equal to --max-steps, "
         "every model trains the same budget and only the checkpoint is selected [--cpu: = --max-steps (equal "
         "budgets); other presets: 0]")])
    add_run_flags(p, out=os.path.join("runs", "shin_calculator"))
    p.add_argument("--num-proc", type=int, default=None, help="processes generating each data set")
    p.add_argument("--resume", action="store_true",
                   help="keep the models a previous run with the same settings finished in --out (its runs.json or "
                   "runs.partial.json) and train only the missing ones; --seeds, --variables and --base may grow")
    a = p.parse_args(argv)
    finish_args(p, a, PRESETS, positive=("num_train", "num_eval", "num_fit", "hidden_size", "embedding_dim",
                                         "batch_size", "seeds", "epochs", "eps"), non_negative=("seed",),
                rates=("learning_rate",), outputs=OUTPUTS)
    if a.patience == 0:  # 0: the fixed-epochs protocol, also where the preset trains to convergence (--cpu)
        a.patience = None
    for flag, value, ok, rule in (("--patience", a.patience, a.patience is None or a.patience >= 1, ">= 0 (0: off)"),
                                  ("--eval-every", a.eval_every, a.eval_every >= 1, ">= 1"),
                                  ("--min-delta", a.min_delta, a.min_delta >= 0, ">= 0 (pp)"),
                                  ("--max-steps", a.max_steps, a.max_steps >= 1, ">= 1"),
                                  ("--min-steps", a.min_steps, a.min_steps >= 0, ">= 0")):
        if not ok:
            p.error(f"{flag} must be {rule}, got {value}")
    if a.patience is None:
        unused = [f"--{k.replace('_', '-')}" for k in ("eval_every", "min_delta", "max_steps", "min_steps")
                  if k in a.overrides]
        if unused:
            p.error(f"{', '.join(unused)} only apply with --patience N (train to convergence); set --patience or "
                    "drop them")
    elif a.eval_every > a.max_steps:
        p.error(f"--eval-every ({a.eval_every}) must be <= --max-steps ({a.max_steps}): no evaluation would run")
    elif "epochs" in a.overrides:
        p.error("--epochs does not apply with --patience (training stops on the held-out score or --max-steps); "
                "pass --patience 0 to train a fixed number of epochs")
    elif a.min_steps > a.max_steps:
        if "min_steps" in a.overrides:
            p.error(f"--min-steps ({a.min_steps}) must be <= --max-steps ({a.max_steps})")
        a.min_steps = a.max_steps  # the preset's equal budget follows a lower --max-steps
    return a




def build_tables(results: dict[tuple[str, str | None], list[dict]], a: argparse.Namespace, caption: str):
    """Table 3 (original accuracy and change per homogenized variable, mean ± sd over seeds, each
    model's fit on its training rows beside it), the per-source table and the per-level table."""
    fit_note = (f"fit: the same model's accuracy on {a.num_fit} of its own training rows; a change (pp) is "
                "the mean over seeds of (homogenized - original) with the same seed, ± its sd.")
    columns = ["train", "Original (%)"] + [f"{VARIABLE_COLUMNS[v]} (pp)" for v in a.variables]
    table3 = ResultsTable("Calculator accuracy on the mixture: original (%) and change when homogenized (pp)",
                          columns, caption=caption, float_format="{:.2f}", fit_note=fit_note)
    per_source = ResultsTable(
        "Calculator accuracy (%) on the mixture and each source, with the fit on the model's own distribution",
        ["train", "steps", "best step", "fit: train rows", "fit: held-out", "mixture", *SOURCES], caption=caption,
        float_format="{:.1f}",
        fit_note="")
    levels = [f"ops {_bucket_name(lo, hi)}" for lo, hi in OPS_BUCKETS]
    per_level = ResultsTable("Calculator accuracy (%) on the mixture by number of operations", ["train", *levels],
                             caption=caption, float_format="{:.1f}", fit_note="")

    def cell(runs: list[dict], key: str):
        vals = [r[key] for r in runs if r.get(key) is not None]
        return Score.of(vals) if vals else None

    for base in a.bases:
        original = results[(base, None)]
        row = {"train": base.upper(),
               "Original (%)": Score.of([r["mixture"] for r in original], fit=[r["fit_train"] for r in original])}
        for v in a.variables:
            hom = results[(base, v)]
            deltas = [h["mixture"] - o["mixture"] for h, o in zip(hom, original)]
            row[f"{VARIABLE_COLUMNS[v]} (pp)"] = SignedScore.of_score(Score.of(deltas, fit=[h["fit_train"] for h in hom]))
        table3.add(**row)
        for variable in (None, *a.variables):
            runs = results[(base, variable)]
            name = training_config(base, variable)
            per_source.add(train=name, steps=cell(runs, "steps"), **{"best step": cell(runs, "best_step"),
                                                                     "fit: train rows": cell(runs, "fit_train"),
                                          "fit: held-out": cell(runs, "fit_heldout")},
                           **{k: cell(runs, k) for k in ("mixture", *SOURCES)})
            per_level.add(train=name, **{k: cell(runs, k) for k in levels})
    return table3, per_source, per_level


def plot_table(per_source):
    """The per-source table for the bar plot: mixture and sources, the mixture bar carrying the
    model's fit on its own training rows (drawn as a tick)."""
    t = ResultsTable(per_source.title.split(",")[0] + " (tick: fit on own training rows)",
                     ["train", "mixture", *SOURCES], fit_note="")
    for r in per_source.rows:
        mix, fit = r["mixture"], r["fit: train rows"]
        t.add(train=r["train"], mixture=dataclasses.replace(mix, fit=fit.value if fit else None),
              **{k: r[k] for k in SOURCES})
    return t


#: settings that do not change a model's result (or only choose which models run): a run may be
#: resumed (``--resume``) with other values of these
RESUME_FREE = ("jobs", "threads", "num_proc", "cache_dir", "out", "resume", "overrides", "given", "seeds", "variables", "bases")


def load_finished(a: argparse.Namespace) -> dict[tuple, dict]:
    """``{(base, variable, seed): scores}`` of the models a previous run finished in ``a.out``
    (``runs.json``, then ``runs.partial.json``); a ValueError naming ``--resume`` if that run's
    settings differ from ``a`` in anything but :data:`RESUME_FREE`."""
    import json

    names = {training_config(b, v): (b, v) for b in BASES for v in (None, *VARIABLE_COLUMNS)}
    found: dict[tuple, dict] = {}
    mine = json.loads(json.dumps({k: v for k, v in vars(a).items() if k not in RESUME_FREE}))
    for name in ("runs.json", "runs.partial.json"):
        path = os.path.join(a.out, name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            previous = json.load(f)
        theirs = {k: v for k, v in previous.get("settings", {}).items() if k not in RESUME_FREE}
        differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k, "<unset>") != theirs.get(k, "<unset>"))
        if differ:
            raise ValueError(f"--resume: {path} was written with other settings ("
                             + ", ".join(f"{k}: {theirs.get(k, '<unset>')!r} there, {mine.get(k, '<unset>')!r} now"
                                         for k in differ) + "); use another --out or the same settings")
        for run in previous.get("runs", []):
            run = dict(run)
            base, variable = names[run.pop("config")]
            found[(base, variable, run.pop("seed"))] = run
    return found


def main(argv=None) -> int:
    a = parse_args(argv)
    from hf_synthsample.atomic import write_json_atomic

    resumed = load_finished(a) if a.resume else {}
    start_run(a.out, OUTPUTS, a.threads)
    start = time.time()
    eval_ds = load_split("mixture", a, num_examples=a.num_eval, seed=a.seed + EVAL_SEED_OFFSET)
    configs = [(base, variable) for base in a.bases for variable in (None, *a.variables)]
    # generate every set once, here (the training jobs read the cache), and find identical ones
    same = identical_sets({training_config(b, v): load_data(training_config(b, v), a)[0] for b, v in configs})
    # seed-major: a run stopped part-way has every config at the first seed(s) (results do not depend on order)
    jobs = [(base, variable, a.seed + k) for k in range(a.seeds) for base, variable in configs]
    done: dict[tuple, dict] = {job: resumed[job] for job in jobs if job in resumed}
    jobs = [job for job in jobs if job not in done]

    def save_partial():
        if is_main_process():
            # every finished model on disk at once: a run stopped part-way keeps them (runs.partial.json)
            write_json_atomic(os.path.join(a.out, "runs.partial.json"), {
                "settings": {k: v for k, v in vars(a).items()},
                "runs": [{"config": training_config(b, v), "seed": sd, **r} for (b, v, sd), r in done.items()]},
                indent=2)

    if done:
        save_partial()  # the resumed models stay on disk while the missing ones train
        print(f"--resume: kept {len(done)} finished model(s) from {a.out}, training {len(jobs)}", flush=True)

    def report(job, scores):
        done[job] = scores
        save_partial()
        if is_main_process():
            print(f"[{time.time() - start:6.0f}s] {training_config(job[0], job[1])} seed {job[2]}: " + ", ".join(
                f"{key} {v:.1f}" for key, v in scores.items() if isinstance(v, float)
            ) + f", steps {scores['steps']}" + (f" (best {scores['best_step']})" if "best_step" in scores else ""),
                flush=True)

    run_jobs(run_job, jobs, a.jobs, on_done=report, spawn_args=(a,))
    results = {(b, v): [done[(b, v, a.seed + k)] for k in range(a.seeds)] for b, v in configs}
    scale = {"paper": "paper-scale settings",
             "cpu": "CPU reproduction (smaller data, model and schedule than the paper, which states none of them)"
             }.get(a.preset, f"{a.preset} run: a pipeline check, NOT the paper's scale or effect")
    if a.patience is None:
        schedule = f"{a.epochs:g} epochs"
    elif a.min_steps >= a.max_steps:
        schedule = (f"{a.max_steps} steps for every model (equal budgets, no early stop), the checkpoint kept the "
                    f"best of its evaluations every {a.eval_every} steps on {a.num_fit} held-out rows of its own "
                    "distribution (latest among ties; the mixture is never looked at; best step per model in the "
                    "per-source table)")
    else:
        schedule = (f"trained to convergence (held-out own-distribution accuracy on {a.num_fit} rows every "
                    f"{a.eval_every} steps, stop after {a.patience} evaluations without a gain > {a.min_delta:g} pp"
                    + (f" but not before {a.min_steps} steps" if a.min_steps else "")
                    + f", cap {a.max_steps} steps, best checkpoint kept (latest among ties); steps per model in the "
                    "per-source table)")
    caption = (f"{describe_settings(a.preset, a.overrides)} ({scale}). Train {a.num_train} rows per set "
               f"(homogenized with eps={a.eps:g}), evaluate on {a.num_eval} fresh mixture rows; char LSTM "
               f"{a.hidden_size} units (embedding {a.embedding_dim}), {schedule} of batch {a.batch_size}, "
               f"lr {a.learning_rate:g} ({a.lr_scheduler}); mean ± sd over {a.seeds} training seed(s) from {a.seed} "
               f"(data fixed).")
    if same:
        caption += (f" At eps={a.eps:g} these training sets are identical (homogenization only thinned the same "
                    "dominant values), so their columns are one measurement, not several: "
                    + "; ".join(" = ".join(g) for g in same) + ".")
    table3, per_source, per_level = build_tables(results, a, caption)
    write_results(a.out, {"table3": table3, "per_source": per_source, "per_level": per_level}, runs={
        "settings": {k: v for k, v in vars(a).items()}, "identical_training_sets": same,
        "runs": [{"config": training_config(b, v), "seed": a.seed + k, **r}
                 for (b, v), runs in results.items() for k, r in enumerate(runs)]},
        plots={"per_source": dict(table=plot_table(per_source), ylabel="accuracy (%)")})
    if is_main_process():
        partial = os.path.join(a.out, "runs.partial.json")
        if os.path.exists(partial):  # superseded by runs.json
            os.remove(partial)
        print(f"wrote {a.out} in {time.time() - start:.0f}s")
    return 0


if __name__ == "__main__":
    from harness import run_main

    sys.exit(run_main(main))
