"""Dataset cartography for compositional generalization on COGS (data map, subsets, curricula).

Reproduces the layout of "Harnessing Dataset Cartography for Improved Compositional
Generalization in Transformers" (Tables 2 and 3, and the curricula of section 3.5) with a
scratch encoder-decoder trained by a stock ``Seq2SeqTrainer``:

1. train on the (sampled) COGS training set with ``CartographyCallback`` and build the data map
   (``datamap.png``; inverse perplexity by default, the paper's best measure). The map model is held
   to a fit target (``--map-fit-target``, exact match on ``--fit-size`` of its rows): a map model
   under it is trained again from another init (at most ``--max-restarts`` times), and if none
   reaches it the run stops with a message: a map from a model that learnt nothing ranks noise.
   Its fit is stated under every table;
2. for each region (easy-to-learn, ambiguous, hard-to-learn) at 33 % and 50 %, plus a random
   subset of the same size and the full set: train a fresh model on the subset (OOV-repaired) and
   report exact match on the i.i.d. dev and test splits and on the generalization set, with corpus
   BLEU beside it (``table2`` / ``table3``; ``--paper`` adds the paper's 50 % combinations);
3. curricula over the data-map ranking (exponential pacing from 4 % x 1.9, and the 10-bin
   schedule) against no curriculum, all for the same number of steps (``curricula``).

Commands::

    python examples/cartography_cogs.py                 # --small (default): CPU, ~4-5 min on 2 quiet cores
    python examples/cartography_cogs.py --cpu --jobs 2  # Table 2 layout on COGS gen, 3 seeds, every model fitted
    python examples/cartography_cogs.py --cpu-scan      # hard-to-learn vs random on SCAN around-right, 3 seeds
    # the same map (no map training), every subset model trained for 3,000 steps (equal steps):
    python examples/cartography_cogs.py --cpu --map-from runs/cartography_cogs --fit-target 0 --steps 3000 --out runs/eq
    python examples/cartography_cogs.py --gpu           # Table 2 layout with the paper's model size: one H100, < 8 min
    python examples/cartography_cogs.py --data scan:length --regions hard-to-learn,random --seeds 0 1 2
    accelerate launch examples/cartography_cogs.py --paper   # GPU(s), many hours

``--small``: 1,000 training rows, 100 of each evaluation split, a narrow model (d_model 64, ffn 256,
2+2 layers), 80 steps of 32 per run: the pipeline and the map, NOT the paper's numbers (exact
match 0, one fixed logical form: BLEU is shown beside it). ``--paper``: Csordás et al.'s COGS
Transformer, which the paper adopts (d_model 512, ffn 512, 4 heads, 2+2 layers, batch 128, 50,000
steps, lr 1e-4), all rows, the 50 % combinations and both curricula over the three rankings (run
phases apart with ``--fractions``, ``--no-curricula``, ``--schedules``). The map epochs and window
(``--map-epochs``, ``--min-epoch``) are our choices: the paper inspects the loss and maps.

``--cpu``: the Table 2 layout on COGS gen at CPU scale: a 4,000-row sample of COGS train that
always holds its 155 primitive and exposure rows (``--keep-exposure``), a 30-epoch map at lr 3e-3
warmed up over its first 10 % of steps (``--map-warmup``: with 100 warm-up steps some pools' map
models decoded one output for every row, their decoder ignoring the sentence, and fitted 0 %; a
model still doing so after epoch 5 is restarted then, ``--map-check-epoch``; ``--map-only`` stops
after the map), then the full pool, the 33 % hard-to-learn and a random 33 % subset,
3 seeds, scored on 40 rows of each of gen's 21 categories (``categories.*``) and 100 dev / test
rows; BART d_model 64, 2+2 layers, constant lr 1.5e-3 (the map: 3e-3, linear). Every run trains
until it fits 90 % of *all* its rows (``--fit-target``, checked every 250 steps on 200 of them,
then on all; at most 5,000 steps; the tables give the steps); a run under 10 % at step 1,500
restarts from another init (``--restart-below``, ``--restart-after``, ``--max-restarts``;
``runs.json`` keeps every attempt).

``--gpu``: the ``--cpu`` layout with the paper's model size (d_model 512, ffn 512, 4 heads, 2+2
layers), batch 64, lr 5e-4 (constant after 100 warm-up steps; the map linear), a 20-epoch map
(1,250 steps), one seed, every run to 90 % fit (at most 2,000 steps). Sized for one H100 in under
8 minutes: the loop there is CPU-bound (17 steps/s for a 6+6-layer BART d512 at batch 64, issue
33; 2+2 layers run faster), so the map takes ~60 s, each of the 3 subset runs 60-100 s to its fit
target (~1,000-1,500 steps, 2,000 at most) with its fit checks and the final decoding (~1,000
rows), data and start-up ~40 s: 5-7 minutes. ``--jobs 1`` on a GPU: the map trains in this
process, and CUDA cannot be used again in a forked worker. More seeds: one more run each, with
``--seeds 1 --data-seed 1`` (another pool and map) or ``--seeds 1 --data-seed 0`` (the same map).

``--data scan:<config>``: the same map and subsets on an exact SCAN split (``--cpu-scan``:
``template_around_right``): the pool is a seeded sample of its train split, ``iid`` held-out rows
of it, ``ood`` its test set. Rows of a subset are found by their ``example_id`` (the data map's
key), never by position. ``--seeds`` repeats every subset run (model init and the random subset)
and the tables give mean±sd, with each model's fit (exact match on its own rows) beside it.

``--data-dir``: the COGS release's folder (``train.tsv``, ``dev.tsv``, ``test.tsv``, ``gen.tsv``;
default ``../shared/data/cogs``). Outputs in ``--out`` (default ``runs/cartography_cogs``):
``results.md`` / ``results.json``, ``table2.*``, ``table3.*``, ``curricula.*``, ``categories.*``,
``datamap.png``, ``datamap.txt``, ``runs.json`` (every run), ``runs.partial.jsonl`` (as they end).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
import time

# read_cogs and read_scan: this example's API for the tests, re-exported
from cartography_runs import (COGS_SOURCE, LR_SCHEDULES, SCAN_CONFIGS, Experiment, Runs,  # noqa: F401
                              check_data, check_fit_flags, cuda_available, data_name, describe_fit, describe_map,
                              layout_prefix, map_failure, read_cogs, read_scan, save_datamap, steps_warning,
                              subset_ids, table_caption, table_name)
from harness import (ResultsTable, add_overrides, add_presets, add_run_flags, cpu_seconds, finish_args,
                     is_main_process, restart_specs, say, start_run, with_restarts, write_results)

#: the result files a run writes at the top of --out; a run first removes those of the previous one
#: (harness.clear_outputs), so tables of two runs never sit side by side
OUTPUTS = ("results.md", "results.json", "runs.json", "table2.*", "table3.*", "subsets-*.*", "curricula.*",
           "categories.*", "datamap.png", "datamap.txt", "datamap.json", "runs.partial.jsonl")

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "shared", "data", "cogs")

REGIONS = ("easy-to-learn", "ambiguous", "hard-to-learn")
#: the paper's Table 3 combinations (2/3 from the first region, 1/3 from the second)
COMBINATIONS = ("ambiguous+easy-to-learn", "hard-to-learn+ambiguous", "hard-to-learn+easy-to-learn")
#: what every preset shares unless it says otherwise: the --small (CPU, under 10 minutes) settings
_BASE = {"num_train": 1000, "num_eval": 100, "d_model": 64, "layers": 2, "ffn": 256, "heads": 4, "batch_size": 32,
         "map_epochs": 4, "min_epoch": 1, "steps": 80, "lr": 2e-3, "max_new_tokens": None, "combinations": False,
         "schedules": ("exponential",), "curriculum_regions": ("easy-to-learn", "hard-to-learn"), "data": "cogs",
         "seeds": [0], "regions": REGIONS + ("random",), "full": True, "fit_size": 100, "warmup_steps": 0,
         "curricula": True, "fit_target": 0.0, "eval_every": 0, "gen_per_category": 0, "keep_exposure": False,
         "fractions": "0.33,0.5", "restart_below": 0.0, "restart_after": 0, "max_restarts": 0, "lr_schedule": "linear",
         "map_lr": None, "map_fit_target": 0.0, "map_warmup": None, "map_check_epoch": 0, "map_only": False}
#: the COGS gen Table 2 layout: full set, 33 % hard-to-learn, 33 % random, every model trained to 90 % of its
#: rows (a collapsed init restarted); the subset runs at a constant lr (under a linear decay a run that left its
#: plateau late had a small lr and memorised its rows), the map linear at its own lr
_GEN = dict(_BASE, num_train=4000, map_epochs=30, steps=5000, lr=1.5e-3, curriculum_regions=("hard-to-learn",),
            seeds=[0, 1, 2], regions=("hard-to-learn", "random"), fit_size=200, warmup_steps=100, curricula=False,
            fit_target=90.0, eval_every=250, gen_per_category=40, keep_exposure=True, fractions="0.33",
            restart_below=10.0, restart_after=1500, max_restarts=2, lr_schedule="constant", map_lr=3e-3,
            map_fit_target=50.0, map_warmup=0.1, map_check_epoch=5)
PRESETS = {
    # seconds: the test suite's smoke run
    "tiny": dict(_BASE, num_train=48, num_eval=8, d_model=32, layers=1, ffn=64, heads=2, batch_size=8, map_epochs=3,
                 steps=6, lr=3e-3, max_new_tokens=24, schedules=("exponential", "bins"),
                 curriculum_regions=("hard-to-learn",), fit_size=8),
    "small": _BASE,
    # CPU, <= 30 minutes: hard-to-learn vs random on SCAN around-right, 3 seeds (the --cpu preset before COGS gen)
    "cpu_scan": dict(_BASE, num_train=6000, num_eval=500, min_epoch=0, steps=1500, lr=1e-3,
                     curriculum_regions=("hard-to-learn",), data="scan:template_around_right", seeds=[0, 1, 2],
                     regions=("hard-to-learn", "random"), full=False, fit_size=200, warmup_steps=50, curricula=False),
    # CPU, about 30 minutes on 2 cores with --jobs 2: the Table 2 layout on COGS gen, 3 seeds
    "cpu": _GEN,
    # one H100, under 8 minutes: the --cpu layout with the paper's model size, one seed (the module docstring)
    "gpu": dict(_GEN, d_model=512, ffn=512, batch_size=64, map_epochs=20, steps=2000, lr=5e-4, seeds=[0],
                restart_after=750, map_lr=5e-4, map_warmup=None, map_check_epoch=0),
    # the paper's COGS Transformer and step budget (GPU)
    "paper": dict(_BASE, num_train=0, num_eval=0, d_model=512, ffn=512, batch_size=128, map_epochs=10, min_epoch=2,
                  steps=50_000, lr=1e-4, combinations=True, schedules=("exponential", "bins"),
                  curriculum_regions=REGIONS, seeds=[0, 1, 2], fit_size=1000, map_fit_target=50.0),
}


# ----------------------------------------------------------------------------- settings
def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    add_presets(p, {"small": "CPU settings, under 10 minutes (the default)",
                    "cpu": "CPU, about 30 min with --jobs 2: Table 2 layout on COGS gen (full, 33%% hard-to-learn, "
                           "33%% random), 3 seeds, every model trained until it fits >= 90%% of its own rows",
                    "cpu_scan": "CPU, <= 30 min: hard-to-learn vs random subsets on SCAN around-right, 3 seeds",
                    "gpu": "one GPU (H100), under 8 min: the --cpu layout with the paper's model size, one seed",
                    "paper": "the paper's model and step budget (GPU)", "tiny": None}, default="small")
    p.add_argument("--data", help="'cogs' (the TSV files below) or 'scan:<config>' (an exact SCAN split built here: "
                   f"{', '.join(SCAN_CONFIGS)}; evaluation on held-out train rows 'iid' and the test split 'ood') "
                   "[small, cpu: cogs; cpu-scan: scan:template_around_right]")
    p.add_argument("--data-dir", default=DEFAULT_DATA,
                   help="folder of the COGS release's train.tsv, dev.tsv, test.tsv (and gen.tsv): "
                        f"{COGS_SOURCE} [../shared/data/cogs]")
    for split, text in (("train", "COGS train.tsv"), ("dev", "COGS dev.tsv (i.i.d.)"), ("test", "COGS test.tsv (i.i.d.)")):
        p.add_argument(f"--{split}", default=None, help=f"{text} [<data-dir>/{split}.tsv]")
    p.add_argument("--gen", default=None, help="COGS gen.tsv, the generalization set (default: <data>/gen.tsv when it exists)")
    add_run_flags(p, out=os.path.join("runs", "cartography_cogs"), jobs_help="subset runs trained at once, each in its "
                  "own forked process (results do not depend on it; 1 on a GPU) [1]")
    p.add_argument("--measure", default="inv_ppl", choices=["inv_ppl", "chia", "bleu"],
                   help="data-map confidence measure [inv_ppl]")
    add_overrides(p, [
        ("num_train", int, "training rows sampled (0: all)"), ("num_eval", int, "rows sampled from each evaluation split (0: all)"),
        ("map_epochs", int, "epochs of the data-map training run"), ("min_epoch", int, "first (0-based) epoch of the data-map window"),
        ("steps", int, "optimizer steps of every subset / curriculum run (with --fit-target: the cap)"),
        ("batch_size", int, "per-device batch size"), ("lr", float, "learning rate"),
        ("map_lr", float, "learning rate of the data-map run, so the subset runs' rate can change without changing "
         "the map [cpu: 3e-3; others: --lr]"),
        ("map_fit_target", float, "the data-map model must fit this %% of its rows (exact match on --fit-size of "
         "them), else it trains again from another init (at most --max-restarts times) and then the run stops "
         "(0: not checked) [cpu, gpu, paper: 50; others: 0]"),
        ("map_warmup", float, "linear lr warm-up of the data-map run, as a share of its steps (0.1: its first 10 %%; "
         "a short warm-up at the map's lr left the model's outputs independent of its input on some pools) "
         "[cpu: 0.1; others: --warmup-steps]"),
        ("map_check_epoch", int, "after this epoch of the data-map run, a model that gives one output for (nearly) "
         "every row (distinct outputs on under 10 %% of --fit-size rows: its decoder ignores the input, a state it "
         "was never seen to leave) is restarted at once instead of training all --map-epochs (0: no check) "
         "[cpu: 5; others: 0]"),
        ("d_model", int, "model width"), ("ffn", int, "feed-forward width"), ("layers", int, "encoder and decoder layers (each)"),
        ("heads", int, "attention heads"), ("max_new_tokens", int, "decode limit (default: longest gold target + 1)"),
        ("fractions", str, "subset fractions [cpu: 0.33; others: 0.33,0.5]"),
        ("schedules", str, "curriculum schedules, comma-separated: exponential, bins (small: exponential; paper: both)"),
        ("curriculum_regions", str, "rankings the curricula start from, comma-separated (easy-to-learn: easy-to-hard, "
         "hard-to-learn: hard-to-easy, ambiguous; small: easy, hard; paper: all three)"),
        ("seeds", int, "seeds of the subset runs (model init, random subset); the data map is built once, with the "
         "first seed; tables give mean±sd", dict(nargs="+")),
        ("data_seed", int, "seed of the training-pool and evaluation samples and of the data-map run (default: the "
         "first of --seeds); e.g. --seeds 2 --data-seed 0 adds seed 2 to a run made with --seeds 0 1"),
        ("regions", str, "subsets trained per fraction, comma-separated: easy-to-learn, ambiguous, hard-to-learn, "
         "random [small: all four; cpu, cpu-scan: hard-to-learn,random]"),
        ("fit_size", int, "training rows of each run scored for its fit (0: none)"),
        ("fit_target", float, "train every subset run until its exact match on all its own rows reaches this %% "
         "(checked every --eval-every steps on --fit-size of them, on all once those reach it; the reported fit is then "
         "on all rows), at most --steps steps; 0: exactly --steps steps [cpu: 90; others: 0]"),
        *restart_specs("step", "cpu", 10, 1500, 2, per="per run (and of the data-map model)"),
        ("eval_every", int, "steps between the --fit-target checks"),
        ("gen_per_category", int, "COGS gen: rows sampled from each of its categories (0: --num-eval rows in all) [cpu: 40]"),
        ("warmup_steps", int, "linear learning-rate warm-up steps of every run"),
        ("lr_schedule", str, "learning rate of the subset runs after the warm-up: 'linear' decays to 0 at --steps, "
         "'constant' stays (a run stopped at its fit target never sees the end of a decay) [cpu: constant; others: "
         "linear]", dict(choices=LR_SCHEDULES))])
    p.add_argument("--seed", type=int, default=None, help="one seed (overrides --seeds)")
    p.add_argument("--map-from", default=None, metavar="DIR",
                   help="reuse the data map of an earlier run of this example (its --out folder, with datamap.json "
                        "and the map's dynamics) instead of training the map model again: the same pool is required "
                        "(--data, --data-seed, --num-train, --keep-exposure; checked by the pool's digest), and the "
                        "map's settings and fit are the earlier run's. Compare subset trainings on one map [off]")
    for name, text in (("combinations", "also the paper's 50 %% region combinations (default: on with --paper)"),
                       ("curricula", "curricula vs no curriculum [small, paper: on; cpu, cpu-scan: off]"),
                       ("full", "also train on 100%% of the pool (the curricula's 'none' row) [small, cpu: on; cpu-scan: off]"),
                       ("map_only", "stop once the data map is built (datamap.png, datamap.txt, results.json with "
                        "its model's fit and time): check a map recipe on a pool without the subset runs [off]"),
                       ("keep_exposure", "COGS: a --num-train sample always keeps the training set's primitive and "
                        "exposure rows (the only rows holding the words the gen set's lexical categories test) "
                        "[cpu: on; others: off]")):
        p.add_argument("--" + name.replace("_", "-"), action=argparse.BooleanOptionalAction, default=None, help=text)
    a = p.parse_args(argv)
    finish_args(p, a, PRESETS, positive=("steps", "batch_size", "map_epochs", "d_model", "ffn", "layers", "heads"),
                non_negative=("fit_size", "warmup_steps", "num_eval", "gen_per_category", "eval_every", "restart_after",
                              "max_restarts", "map_check_epoch"), rates=("lr", "map_lr"), below_one=("map_warmup",),
                percents=("fit_target", "map_fit_target"),
                lists={"schedules": ("exponential", "bins"), "curriculum_regions": REGIONS,
                       "regions": REGIONS + ("random",)}, seed_list=True, outputs=OUTPUTS)
    if a.map_lr is None:
        a.map_lr = a.lr
    check_fit_flags(p, a)
    if a.data_seed is not None and a.data_seed < 0:
        p.error(f"--data-seed: a non-negative seed, got {a.data_seed}")
    # the seed of the pool and evaluation samples and of the data-map run
    a.seed = a.seeds[0] if a.data_seed is None else a.data_seed
    try:
        a.fractions = tuple(float(f) for f in a.fractions.split(","))
    except ValueError:
        p.error(f"--fractions: comma-separated numbers in (0, 1), got {a.fractions!r}")
    if len({round(f, 4) for f in a.fractions}) != len(a.fractions):
        p.error(f"--fractions: each fraction once, got {list(a.fractions)}")
    for f in a.fractions:
        if not 0 < f < 1:
            p.error(f"--fractions: each fraction must be in (0, 1), got {f}")
    if a.curricula and not a.full:
        p.error("the curricula compare against the 100% run: add --full or --no-curricula")
    check_data(p, a)  # --data, and the COGS files exist
    if a.map_check_epoch and "map_check_epoch" not in a.given and not (a.fit_size and a.map_check_epoch < a.map_epochs):
        a.map_check_epoch = 0  # the preset's check does not fit a map this short (or one without fit rows): off
    if a.map_check_epoch and not (a.fit_size and a.map_check_epoch < a.map_epochs):
        p.error(f"--map-check-epoch {a.map_check_epoch} needs --fit-size > 0 and an epoch before --map-epochs "
                f"({a.map_epochs}), got --fit-size {a.fit_size}")
    if not 0 <= a.min_epoch < a.map_epochs:
        p.error(f"--min-epoch must be in [0, --map-epochs), got {a.min_epoch} with --map-epochs {a.map_epochs}")
    if a.map_from is not None:
        check_map_from(p, a)
    if a.jobs > 1 and cuda_available():
        p.error(f"--jobs {a.jobs}: on a GPU the data-map model trains in this process, and CUDA cannot be used again "
                "in a forked worker: use --jobs 1")
    return a


# ----------------------------------------------------------------------------- experiment
def build_datamap(exp: Experiment):
    """Phase 1: the data-map run (the full training pool, ``map_epochs`` epochs, CartographyCallback), held to
    ``--map-fit-target``: a model under it is trained again from another init, and so is one that gives one output
    for nearly every row at ``--map-check-epoch`` (stopped there); ``None`` if no init learnt its rows."""
    from hf_synthsample.cartography import CartographyCallback, CartographyCollator, DataMap
    from hf_synthsample.models import seq2seq_collator
    from hf_synthsample.models.fit_stop import OutputCollapseCallback

    a = exp.a
    measures = ("inv_ppl", "chia") + (("bleu",) if a.measure == "bleu" else ())
    check_rows = exp.fit_sample(exp.train, 0) if a.map_check_epoch else None
    exp.map_notes = []

    def attempt(init_seed: int, last: bool):
        t0 = time.perf_counter()
        model = exp.model(init_seed)
        name = "datamap" if init_seed == a.seed else f"datamap-init{init_seed}"  # each attempt its own dynamics
        callbacks = [CartographyCallback(measures=measures)]
        check = None
        if a.map_check_epoch:
            check = OutputCollapseCallback(lambda m: exp.fit_outputs(m, check_rows), a.map_check_epoch)
            callbacks.append(check)
        # the collator passes each batch's example ids to the callback (which needs the id column kept)
        trainer = exp.fit(exp.train, name, seed=a.seed, epochs=a.map_epochs, model=model, callbacks=callbacks,
                          remove_unused_columns=False, keep_ids=True, learning_rate=a.map_lr,
                          data_collator=CartographyCollator(seq2seq_collator(exp.tokenizer, model)),
                          warmup_steps=exp.map_warmup_steps())
        trainer.accelerator.wait_for_everyone()  # the main process writes the dynamics at train end
        # the map model's own fit: a map from a model that learnt nothing ranks noise
        fit = exp.fit_exact_match(model, exp.fit_sample(exp.train, 0)) if a.fit_size else None
        steps = int(trainer.state.global_step)
        collapsed = check is not None and check.collapsed
        ok = not collapsed and (not a.map_fit_target or (fit is not None and fit >= a.map_fit_target))
        note = {"init_seed": init_seed, "fit": fit, "steps": steps, "epochs": round(float(trainer.state.epoch or 0), 2),
                "distinct_outputs": None if check is None else check.share, "collapsed": collapsed,
                "seconds": round(time.perf_counter() - t0, 1)}
        exp.map_notes.append(note)
        return (name, fit, steps), ok, note

    def restarting(nxt: int, note: dict) -> None:
        why = (f"one output for nearly every row at epoch {a.map_check_epoch} ({note['distinct_outputs']:.1f} % "
               "distinct: its decoder ignores the input)" if note["collapsed"] else
               f"fit {note['fit']:.1f} % < --map-fit-target {a.map_fit_target:g} %")
        say(f"  data-map model (init {note['init_seed']}): {why}: restarting from init {nxt}")

    guarded = a.map_fit_target or a.map_check_epoch
    (name, exp.map_fit, exp.map_steps), exp.map_init, exp.map_abandoned, ok = with_restarts(
        attempt, seed=a.seed, max_restarts=a.max_restarts if guarded else 0, on_restart=restarting)
    if not ok:
        return None
    folder = os.path.join(a.out, "runs", name, "cartography")
    return DataMap.from_dynamics(folder, a.measure, min_epoch=a.min_epoch,
                                 source="eval" if a.measure == "bleu" else "train")


#: the settings of the map run: with --map-from they are the earlier run's, never this command's
MAP_SETTINGS = ("map_epochs", "map_lr", "map_warmup", "map_check_epoch", "map_fit_target")


def check_map_from(p: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """``--map-from``: a finished map of the same data seed, read before any work; the map's settings become the
    earlier run's (so every table states the map that ranked the rows)."""
    folder = a.map_from
    path = os.path.join(folder, "datamap.json")
    if os.path.abspath(folder) == os.path.abspath(a.out):
        p.error(f"--map-from: {folder!r} is --out, whose outputs this run replaces: give the run another --out")
    if a.map_only:
        p.error("--map-from: with --map-only there is nothing to do (the map exists)")
    given = sorted(set(MAP_SETTINGS) & set(a.given))
    if given:
        p.error(f"--map-from: the map is the earlier run's; {', '.join('--' + g.replace('_', '-') for g in given)} "
                "would not change it (train a new map without --map-from)")
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError) as e:
        p.error(f"--map-from: {folder!r} holds no readable datamap.json (an --out folder of this example whose map "
                f"was built): {e}")
    if record.get("error") or not record.get("datamap_model"):
        p.error(f"--map-from: {path} records no map (the run stopped: {record.get('error') or 'no map model'})")
    if record.get("data_seed") != a.seed:
        p.error(f"--map-from: {folder!r} is the map of data seed {record.get('data_seed')}, this run's pool is data "
                f"seed {a.seed} (--data-seed {record.get('data_seed')} to reuse it)")
    model = record["datamap_model"]
    name = "datamap" if model["init_seed"] == record["data_seed"] else f"datamap-init{model['init_seed']}"
    dynamics = os.path.join(folder, "runs", name, "cartography")
    if not os.path.isdir(dynamics):
        p.error(f"--map-from: the map's dynamics {dynamics!r} are missing")
    if not a.min_epoch < record["map_epochs"]:
        p.error(f"--min-epoch {a.min_epoch}: the map of {folder!r} has {record['map_epochs']} epochs")
    for k in MAP_SETTINGS:
        setattr(a, k, record[k] if k != "map_fit_target" else model.get("fit_target", a.map_fit_target))
    a.map_source = {"folder": folder, "dynamics": dynamics, "record": record}


def pool_digest(train) -> str:
    """The training pool's rows digest (source and target, in order; the library's ``rows_digest``)."""
    from hf_synthsample.hub.provenance import rows_digest

    return rows_digest(train.select_columns(["source", "target"]))


def reuse_datamap(exp: Experiment):
    """Phase 1 from an earlier run (``--map-from``): its map, its model's record; ``ValueError`` when the pool is not
    the one the map was built on."""
    from hf_synthsample.cartography import DataMap

    a, source = exp.a, exp.a.map_source
    record, model = source["record"], source["record"]["datamap_model"]
    digest = pool_digest(exp.train)
    if record.get("pool_rows") != len(exp.train) or record.get("pool_digest", digest) != digest:
        raise ValueError(f"--map-from: the map of {source['folder']!r} was built on another pool ({record.get('pool_rows')} "
                         f"rows, digest {record.get('pool_digest')}; this run: {len(exp.train)} rows, digest {digest}): "
                         "give the same --data, --num-train and --keep-exposure")
    exp.map_fit, exp.map_steps, exp.map_init = model["fit"], model["steps"], model["init_seed"]
    exp.map_abandoned, exp.map_notes = model.get("abandoned_inits", []), record.get("attempts", [])
    dm = DataMap.from_dynamics(source["dynamics"], a.measure, min_epoch=a.min_epoch,
                               source="eval" if a.measure == "bleu" else "train")
    if sorted(dm.example_ids.tolist()) != sorted(exp.train["example_id"]):
        raise ValueError(f"--map-from: the map of {source['folder']!r} ranks other example ids than this pool's")
    checked = "digest" if "pool_digest" in record else "size and example ids (no digest recorded)"
    say(f"data map reused from {source['folder']} (its model: fit {exp.map_fit} %, {exp.map_steps} steps; "
        f"same pool: {checked})")
    return dm


def map_record(exp: Experiment) -> dict:
    """What results.json keeps of the data-map model: its fit, steps, time and every init tried."""
    a = exp.a
    last = exp.map_notes[-1] if exp.map_notes else {}
    return {"steps": exp.map_steps, "fit": exp.map_fit, "fit_target": a.map_fit_target, "init_seed": exp.map_init,
            "warmup_steps": exp.map_warmup_steps(), "lr": a.map_lr, "seconds": last.get("seconds"),
            "distinct_outputs": last.get("distinct_outputs"), "abandoned_inits": exp.map_abandoned,
            "map_from": a.map_source["folder"] if a.map_from else None}


def write_map_record(exp: Experiment, elapsed: float, error: str | None = None) -> None:
    """``datamap.json``: the data-map model's record (every init: fit, steps, seconds), the pool and the map
    settings, the wall and CPU time so far, and the error when no init learnt its rows."""
    from hf_synthsample.atomic import write_text_atomic

    a = exp.a
    if is_main_process():
        record = {"data_seed": a.seed, "pool_rows": len(exp.train), "preset": a.preset, "overrides": a.overrides,
                  "map_epochs": a.map_epochs, "map_lr": a.map_lr, "map_warmup": a.map_warmup,
                  "map_check_epoch": a.map_check_epoch, "datamap_model": map_record(exp),
                  "attempts": exp.map_notes, "wall_time_s": round(elapsed, 1), "cpu_seconds": round(cpu_seconds(), 1),
                  "pool_digest": pool_digest(exp.train), "error": error}
        write_text_atomic(os.path.join(a.out, "datamap.json"), json.dumps(record, indent=1, default=str) + "\n")


def subset_tables(exp: Experiment, dm, runs: Runs):
    """Phase 2: one table per fraction (regions, combinations, random, 100 %)."""
    a = exp.a
    tokens = exp.tokens_by_id()  # the OOV repair keeps every pool word in a subset
    full_row = None
    if a.full:
        full = runs.train("full", lambda seed: exp.train)
        full_row = dict(subset="100% training", size=len(exp.train), repaired="-", **full)
    tables, not_repaired = [], []
    for fraction in a.fractions:
        pct = f"{fraction:.0%}"
        table = ResultsTable(
            f"{layout_prefix(fraction)}exact match (%) after training on {pct} subsets ({a.measure} data map)",
            ["subset", "size", "repaired", *runs.columns()], caption=table_caption(exp, dm),
            fit_note=describe_fit(exp))
        regions = [r for r in a.regions if r != "random"] + (
            list(COMBINATIONS) if a.combinations and fraction >= 0.5 else []) + (
            ["random"] if "random" in a.regions else [])
        for region in regions:
            sizes, repaired = set(), set()

            def make(seed, region=region):
                ids, ok = subset_ids(exp, dm, region, fraction, tokens, seed)
                sizes.add(len(ids))
                repaired.add(ok)
                return exp.rows(dm, ids)

            cells = runs.train(f"{pct}-{region}", make)
            if False in repaired:
                not_repaired.append(f"{pct} {region}")
            table.add(subset=f"{pct} {region}", size=sizes.pop(), repaired="yes" if repaired == {True} else "no",
                      **cells)
        if full_row:
            table.add(**full_row)
        tables.append(table)
    if not_repaired:
        note = (" OOV repair impossible (the sampled pool has more singleton words than a subset can hold) for: "
                + ", ".join(not_repaired) + "; those subsets are plain region cuts.")
        for table in tables:
            table.caption += note
    return tables, full_row


def curricula_table(exp: Experiment, dm, full_row: dict, runs: Runs):
    """Phase 3: curricula over the data-map ranking vs no curriculum (same steps, same batch size)."""
    from hf_synthsample.cartography import curriculum_order

    a = exp.a
    table = ResultsTable(f"Curricula: exact match (%) after {a.steps} steps ({a.measure} data map)",
                         ["curriculum", "order", *runs.columns()], caption=table_caption(exp, dm),
                         fit_note=describe_fit(exp))
    table.add(curriculum="none", order="uniform random", **{c: full_row[c] for c in runs.columns()})
    names = {"exponential": "exponential pacing (4% x1.9)", "bins": "10 bins (Zhang et al.)"}
    first = {"easy-to-learn": "easy-to-hard", "hard-to-learn": "hard-to-easy", "ambiguous": "ambiguous first"}
    # the examples per optimizer step; under data parallelism each process takes its share of a step
    world = int(os.environ.get("WORLD_SIZE", "1"))
    for schedule in a.schedules:
        for region in a.curriculum_regions:
            def make(seed, schedule=schedule, region=region):
                # rows of exp.train (it carries example_id, so rows are matched by id, not position)
                order = curriculum_order(dm, region, exp.train, schedule=schedule, num_steps=a.steps,
                                         batch_size=a.batch_size * world, lengths=exp.lengths, seed=seed)
                return exp.train.select(order)

            cells = runs.train(f"curriculum-{schedule}-{region}", make, train_sampling_strategy="sequential")
            table.add(curriculum=names[schedule], order=first[region], **cells)
    return table


def main(argv=None) -> int:
    a = parse_args(argv)  # the COGS files exist: parse_args checked them
    start_run(a.out, OUTPUTS, a.threads, a.jobs)
    # sacrebleu warns that COGS logical forms end in a tokenized '.': they are meant to
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    start = time.perf_counter()
    exp = Experiment(a)
    say(f"{data_name(a)}: {len(exp.train)} training rows, vocabulary {len(exp.tokenizer)}, preset --{a.preset}")
    try:
        dm = reuse_datamap(exp) if a.map_from else build_datamap(exp)
    except ValueError as e:  # --map-from: another pool's map
        print(f"error: {e}", file=sys.stderr)
        return 2
    if dm is None:  # a map from a model that learnt nothing ranks noise: no subset is cut from it
        write_map_record(exp, time.perf_counter() - start, error=map_failure(exp))
        print(map_failure(exp), file=sys.stderr)
        return 1
    # every Trainer.train() starts with a full gc.collect(): once the first run has imported every
    # library, moving their objects out of the collector's reach makes that ~0.5-1 s -> a few ms
    # per run (many short runs here); the map run's own garbage is collected first
    gc.collect()
    gc.freeze()
    save_datamap(exp, dm)  # datamap.png, datamap.txt
    write_map_record(exp, time.perf_counter() - start)
    if a.map_only:  # a map recipe checked on a pool: the map model's fit and time (datamap.json), no subset run
        say(f"\n--map-only: wall time {time.perf_counter() - start:.0f} s; results in {a.out}")
        return 0
    runs = Runs(exp)
    if a.jobs > 1:  # note the runs the tables ask for, train them in parallel, then build the tables
        runs.book.planning = True
        _, full_row = subset_tables(exp, dm, runs)
        if a.curricula:
            curricula_table(exp, dm, full_row, runs)
        runs.run_planned(a.jobs)
    tables, full_row = subset_tables(exp, dm, runs)
    names = [table_name(f) for f in a.fractions]
    if a.curricula:
        tables.append(curricula_table(exp, dm, full_row, runs))
        names.append("curricula")
    labels = ([("full", "100% training")] if a.full else []) + [
        (f"{f:.0%}-{r}", f"{f:.0%} {r}") for f in a.fractions for r in a.regions]
    categories = runs.category_table(labels)
    if categories is not None:
        categories.caption = table_caption(exp, dm)
        tables.append(categories)
        names.append("categories")
    elapsed = time.perf_counter() - start
    tables = dict(zip(names, tables))
    plots = {name: dict(values=[c for c in exp.columns if any(r[c] is not None for r in table.rows)],
                        ylabel="exact match (%) / BLEU",
                        # two curricula share a schedule name: the order tells their bars apart
                        label=["curriculum", "order"] if name == "curricula" else None)
             for name, table in tables.items() if name != "categories"}
    warning = steps_warning(exp, runs.records)
    if warning:
        say(warning)
    write_results(a.out, tables, runs=runs.records, plots=plots, footer=(
        f"\n\n{describe_map(exp)}.\n\n" + (f"{warning}\n\n" if warning else "") +
        f"Wall time: {elapsed:.0f} s; CPU time {cpu_seconds():.0f} s (this process and its "
        f"workers, --jobs {a.jobs}); load average {os.getloadavg()[0]:.1f}.\n"), results={
        "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(a).items()},
        "wall_time_s": round(elapsed, 1), "cpu_seconds": round(cpu_seconds(), 1), "datamap_model": map_record(exp)})
    say(f"\nwall time {elapsed:.0f} s; results in {a.out}")
    return 0


if __name__ == "__main__":
    from harness import run_main

    sys.exit(run_main(main))
