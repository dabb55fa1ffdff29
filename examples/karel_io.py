"""Shin et al. (2019), Table 1: a Karel program synthesizer trained on baseline I/O vs uniform I/O,
evaluated (generalization accuracy by execution) on narrow I/O test sets.

    python examples/karel_io.py                       # --small (default): CPU smoke run, about 8 min here
    python examples/karel_io.py --cpu --jobs 2        # reduced but faithful CPU setting, see docs/reproductions.md
    python examples/karel_io.py --cpu-t5              # the earlier --cpu (full programs, T5; fits 2 %)
    python examples/karel_io.py --paper               # paper-scale settings (GPU), see PRESETS
    accelerate launch examples/karel_io.py --paper    # the same under accelerate

Data (all from the ``karel`` builder of this package; nothing downloaded):

* programs: the ``baseline`` config's ``train`` and ``test`` splits (program-disjoint: the builder
  routes every program to one split);
* **Baseline** training set: the train programs with their baseline I/O (walls and markers each on
  10 % of cells); **Uniform** training set: the *same programs* with new I/O from the paper's uniform
  salient I/O procedure (``resample_io``), and, as in the paper's section 5.1, a uniform number of
  shown grids (1..5; drawn per task here, per mini-batch in the paper);
* test sets: the test programs with their baseline I/O, with uniform I/O, and with each of the
  paper's twelve narrow I/O distributions (marker ratio m, wall ratio w, marker counts U = uniform
  1..9, G = geometric, 10-G = ten minus geometric), I/O resampled, programs kept (section 4.2).
  A program that gets no valid I/O set under a narrow distribution is left out of that set
  (the ``tasks`` table gives the sizes).

Model: a scratch encoder-decoder (``hf_synthsample.models``: word-level tokenizer, stock
``Seq2SeqTrainer``): a T5 with relative positions (``--arch t5``, the ``--small``/``--cpu-t5``/
``--paper`` presets) or the attentional bi-LSTM of ``hf_synthsample.models.lstm`` (``--arch lstm``,
``--cpu``). The shown I/O pairs are serialised to words, the target is the program's tokens:
``--frame absolute`` (:func:`serialize_pair`: grid size, hero cell and direction, wall cells, marker
cells with counts; for the output only the hero and the marker cells that changed, since walls never
change) or ``--frame egocentric`` (:func:`serialize_pair_egocentric`: the same, with every cell an
offset ahead/right of Karel's input cell and facing, the distances to the four borders and the output
facing as quarter turns: lossless, and the same action gives the same words wherever Karel stands,
as a CNN's translation equivariance gives Bunel et al.'s grid encoder). Bunel et al. (2018) use a
CNN grid encoder with an LSTM decoder; the paper's comparison (same model, two training
distributions) does not depend on the architecture. Scoring: ``karel_execution`` (exact match;
generalization accuracy = the predicted program maps every shown *and* the held-out input to its
output). With ``--fit-target`` a model trains until it fits that share of its first ``--num-fit``
training tasks (checked every ``--check-every`` epochs, at most ``--epochs``); ``--seeds`` model
seeds train on the same data, ``--jobs 2`` two at a time (forked processes).

``--cpu`` (reduced but faithful): programs of at most 16 tokens with at most one ``if``/``ifelse``
(conditions on walls and markers: what makes the I/O distribution matter), nesting 1, bodies of at
most 3 statements, the baseline's "two actions and a move"; grids 2..5; egocentric serialisation;
LSTM; and ``--seen``: the same Table 1 columns over *training* programs with newly drawn I/O
(programs seen in training, inputs not), since at CPU scale no model generalizes to new programs
(docs/reproductions.md).

Writes to ``--out`` (default ``runs/karel_io``): ``table1.md/.json`` (generalization accuracy %, rows
Baseline / Uniform / difference in pp (and per seed), one column per test set; each model's fit, the
same score on ``--num-fit`` of its own training tasks, beside every cell), ``exact_match.md/.json``,
``tasks.md/.json`` (tasks per test set), with ``--seen`` the same three as ``*_seen``,
``results.md`` (all), ``runs.json`` (per model and seed: scores, fit, fit curve, epochs, CPU-s) and
``table1.png``.

Expected runtime: ``--small`` about 2.5 minutes on one CPU thread (a smoke run: grids up to 8x8, a
tiny model and 1,000 programs, far from the paper's accuracies); ``--cpu --jobs 2`` 747 CPU-s, 19
minutes wall at load 7-8 (3 seeds x 2 models of 40-55 epochs, about 120 CPU-s each with their 28
test sets; both fit 80-95 %, all test sets 1-8 %: the fit is memorized tasks, docs/reproductions.md);
``--cpu-t5`` about 17 CPU-minutes (25 minutes wall at load 3; 5,000 programs, 16 epochs; the models
fit 2 % of their own training tasks); ``--paper`` several hours (an estimate, not yet measured) on
one GPU (100,000 programs, grids up to 16x16, 3+3-layer d_model 256 T5); ``--tiny``/``--tiny-cpu``
(tests) seconds. The paper trains on the 1.1M programs of Bunel et al.'s data set; ``--num-train``
scales up.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time

#: the result files a run writes at the top of --out; a run first removes those of the previous one
#: (harness.clear_outputs), so tables of two runs never sit side by side
OUTPUTS = ("table1.*", "exact_match.*", "tasks.*", "table1_seen.*", "exact_match_seen.*", "tasks_seen.*", "results.md",
           "runs.json")

#: (marker ratio, wall ratio) pairs and marker-count distributions of the paper's narrow sets
NARROW_RATIOS = ((0.05, 0.85), (0.25, 0.65), (0.65, 0.25), (0.85, 0.05))
COUNT_LABELS = {"uniform": "U", "geometric": "G", "ten_minus_geometric": "10-G"}
ALL_NARROW = [f"m{m:g} w{w:g} {c}" for m, w in NARROW_RATIOS for c in COUNT_LABELS.values()]
DIRECTIONS = ("north", "east", "south", "west")

#: the builder's program defaults (ProgramParams), used by every preset but --cpu
_FULL_PROGRAMS = dict(max_program_size=40, max_control_flow=4, max_nesting=3, max_body=4, min_grid_size=2,
                     constructs=("repeat", "while", "if", "ifelse"))
#: the earlier T5 presets: no fit-based stopping, linear decay, one seed
_T5 = dict(seen=0, frame="absolute", arch="t5", hidden_size=None, dropout=0.1, fit_target=0.0, check_every=0,
           lr_schedule="linear", seeds=1,
           **_FULL_PROGRAMS)

PRESETS = {
    "tiny": dict(num_train=24, num_test=8, num_fit=8, max_grid_size=5, epochs=1.0, d_model=32, layers=1, ffn=64,
                 heads=2, batch_size=8, learning_rate=1e-3, max_new_tokens=24, narrow=ALL_NARROW[:2], **_T5),
    # the tiny run of the --cpu recipe (tests): short programs, LSTM, fit-based stopping, two seeds
    "tiny-cpu": dict(num_train=24, num_test=8, num_fit=8, max_grid_size=4, epochs=2.0, d_model=None, layers=None,
                     ffn=None, heads=None, batch_size=8, learning_rate=2e-3, max_new_tokens=20, narrow=ALL_NARROW[:2],
                     seen=8, frame="egocentric", arch="lstm", hidden_size=32, dropout=0.0, fit_target=80.0,
                     check_every=1, lr_schedule="constant",
                     seeds=2, max_program_size=14, max_control_flow=1, max_nesting=1, max_body=2, min_grid_size=2,
                     constructs=("if", "ifelse")),
    "small": dict(num_train=1000, num_test=60, num_fit=60, max_grid_size=8, epochs=4.0, d_model=64, layers=2, ffn=128,
                  heads=4, batch_size=16, learning_rate=1e-3, max_new_tokens=48, narrow=ALL_NARROW, **_T5),
    # reduced but faithful (docs/reproductions.md): short programs with at most one control structure
    # (conditions on walls/markers), grids up to 6x6, egocentric I/O words, an attentional LSTM trained
    # until it fits 80 % of its own tasks; 200 programs: the scale at which a model fits on a CPU
    "cpu": dict(num_train=200, num_test=200, num_fit=200, max_grid_size=6, epochs=100.0, d_model=None, layers=None,
                ffn=None, heads=None, batch_size=16, learning_rate=2e-3, max_new_tokens=24, narrow=ALL_NARROW,
                seen=200, frame="egocentric", arch="lstm", hidden_size=128, dropout=0.1, fit_target=80.0,
                check_every=5, lr_schedule="constant", seeds=3, max_program_size=16, max_control_flow=1,
                max_nesting=1, max_body=3, min_grid_size=2, constructs=("repeat", "while", "if", "ifelse")),
    # the earlier --cpu (2026-11-25, kept for its recorded figures): ~20x the small run's training compute
    # (5,000 programs, 16 epochs); both models fit 2 % of their own tasks
    "cpu-t5": dict(num_train=5000, num_test=100, num_fit=100, max_grid_size=8, epochs=16.0, d_model=64, layers=2,
                   ffn=128, heads=4, batch_size=16, learning_rate=1e-3, max_new_tokens=48, narrow=ALL_NARROW, **_T5),
    "paper": dict(num_train=100_000, num_test=2500, num_fit=500, max_grid_size=16, epochs=30.0, d_model=256, layers=3,
                  ffn=512, heads=4, batch_size=64, learning_rate=5e-4, max_new_tokens=128, narrow=ALL_NARROW, **_T5),
}
ARCHS = ("t5", "lstm")
LR_SCHEDULES = ("linear", "constant")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    scale = p.add_mutually_exclusive_group()

    def settings(name):
        return ", ".join(f"{k}={v}" for k, v in PRESETS[name].items() if k != "narrow" and v is not None)

    scale.add_argument("--small", dest="preset", action="store_const", const="small", help="CPU smoke run (the default)")
    scale.add_argument("--cpu", dest="preset", action="store_const", const="cpu",
                       help="reduced but faithful CPU setting (docs/reproductions.md): " + settings("cpu")
                       + ", all 12 narrow sets")
    scale.add_argument("--cpu-t5", dest="preset", action="store_const", const="cpu-t5",
                       help="the earlier --cpu (full program distribution, T5; fits 2 %%): " + settings("cpu-t5"))
    scale.add_argument("--paper", dest="preset", action="store_const", const="paper",
                       help="paper-scale settings (GPU): " + settings("paper") + ", all 12 narrow sets")
    scale.add_argument("--tiny", dest="preset", action="store_const", const="tiny", help=argparse.SUPPRESS)
    scale.add_argument("--tiny-cpu", dest="preset", action="store_const", const="tiny-cpu", help=argparse.SUPPRESS)
    p.set_defaults(preset="small")
    p.add_argument("--num-train", type=int, default=None, help="training programs (both models)")
    p.add_argument("--num-test", type=int, default=None, help="test programs (each test set resamples their I/O)")
    p.add_argument("--num-fit", type=int, default=None,
                   help="training tasks each model is also scored on (its fit, printed beside every score)")
    p.add_argument("--max-grid-size", type=int, default=None, help="largest grid side, training and test (2..16)")
    p.add_argument("--min-grid-size", type=int, default=None, help="smallest grid side (1..--max-grid-size)")
    p.add_argument("--max-program-size", type=int, default=None, help="longest program in tokens (>= 6)")
    p.add_argument("--max-control-flow", type=int, default=None, help="most control structures per program (>= 0)")
    p.add_argument("--max-nesting", type=int, default=None, help="deepest control-flow nesting (>= 0)")
    p.add_argument("--constructs", nargs="+", choices=("repeat", "while", "if", "ifelse"), default=None, metavar="C",
                   help="allowed control structures (repeat, while, if, ifelse)")
    p.add_argument("--max-body", type=int, default=None, help="most statements per body (>= 1)")
    p.add_argument("--narrow", nargs="+", choices=ALL_NARROW, default=None, metavar="SET",
                   help=f"narrow test sets [all 12: {', '.join(repr(s) for s in ALL_NARROW)}]")
    p.add_argument("--frame", choices=FRAMES, default=None,
                   help="I/O serialisation: absolute cells or cells relative to Karel (egocentric)")
    p.add_argument("--seen", type=int, default=None,
                   help="also score the first N training programs with new I/O draws (baseline, uniform, each narrow "
                   "set): programs seen in training, inputs not [0: off]")
    p.add_argument("--arch", choices=ARCHS, default=None, help="scratch model: t5 or an attentional bi-LSTM (lstm)")
    p.add_argument("--epochs", type=float, default=None, help="training epochs (with --fit-target: the cap)")
    p.add_argument("--fit-target", type=float, default=None,
                   help="stop training once the fit (generalization accuracy %% on --num-fit own training tasks, "
                   "checked every --check-every epochs) reaches this; 0: train all --epochs")
    p.add_argument("--check-every", type=int, default=None, help="epochs between fit checks (with --fit-target)")
    p.add_argument("--hidden-size", type=int, default=None, help="LSTM width (--arch lstm)")
    p.add_argument("--dropout", type=float, default=None, help="dropout (0 <= p < 1)")
    p.add_argument("--d-model", type=int, default=None, help="Transformer width (--arch t5)")
    p.add_argument("--layers", type=int, default=None, help="encoder and decoder layers (--arch t5)")
    p.add_argument("--ffn", type=int, default=None, help="feed-forward width (--arch t5)")
    p.add_argument("--heads", type=int, default=None, help="attention heads (--arch t5)")
    p.add_argument("--batch-size", type=int, default=None, help="per-device batch size")
    p.add_argument("--learning-rate", type=float, default=None)
    p.add_argument("--lr-schedule", choices=LR_SCHEDULES, default=None,
                   help="linear decay or constant (after 2%% warm-up)")
    p.add_argument("--max-new-tokens", type=int, default=None, help="longest generated program")
    p.add_argument("--num-beams", type=int, default=1, help="beam size at test time [1: greedy]")
    p.add_argument("--seed", type=int, default=0, help="data seed and first model seed [0]")
    p.add_argument("--seeds", type=int, default=None, help="model seeds (seed, seed+1, ...) on the same data")
    p.add_argument("--jobs", type=int, default=1, help="models trained side by side in forked processes [1]")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest on a small shared CPU) [1]")
    p.add_argument("--num-proc", type=int, default=None, help="processes generating the programs")
    p.add_argument("--cache-dir", default=None, help="datasets cache for the generated data [HF default]")
    p.add_argument("--out", default=os.path.join("runs", "karel_io"), help="output folder [runs/karel_io]")
    a = p.parse_args(argv)
    from hf_synthsample.validation import check_writable_path

    try:  # a file or an unwritable folder is an error now, not after the first epoch
        check_writable_path("--out", a.out, folder=True)
    except ValueError as err:
        p.error(str(err))
    from harness import apply_preset

    preset = dict(PRESETS[a.preset])
    arch = a.arch or preset["arch"]
    for k, v in (("d_model", 64), ("layers", 2), ("ffn", 128), ("heads", 4), ("hidden_size", 128)):
        if preset[k] is None and (arch == "t5") == (k != "hidden_size"):
            preset[k] = v  # a width for the other architecture's preset
    model_sizes = ("hidden_size",) if arch == "lstm" else ("d_model", "layers", "ffn", "heads")
    apply_preset(p, a, preset, positive=("num_train", "num_test", "num_fit", "batch_size", "max_new_tokens",
                                         "num_beams", "threads", "seeds", "jobs", "max_body", "min_grid_size",
                                         *model_sizes),
                 non_negative=("fit_target", "check_every", "max_control_flow", "max_nesting", "seen"))
    if not 2 <= a.max_grid_size <= 16:
        p.error(f"--max-grid-size must be in 2..16, got {a.max_grid_size}")
    if a.min_grid_size > a.max_grid_size:
        p.error(f"--min-grid-size must be at most --max-grid-size ({a.max_grid_size}), got {a.min_grid_size}")
    if a.max_program_size < 6:
        p.error(f"--max-program-size must be >= 6 (DEF run m( ... m) around at least two actions, one a move), "
                f"got {a.max_program_size}")
    if a.epochs <= 0 or a.learning_rate <= 0:
        p.error("--epochs and --learning-rate must be > 0")
    if a.fit_target > 100:
        p.error(f"--fit-target is a percentage (0..100), got {a.fit_target}")
    if a.fit_target > 0 and a.check_every < 1:
        p.error(f"--check-every must be >= 1 with --fit-target {a.fit_target:g}, got {a.check_every}")
    if not 0 <= a.dropout < 1:
        p.error(f"--dropout must be in [0, 1), got {a.dropout}")
    if arch == "lstm" and a.num_beams > 1:
        p.error(f"--num-beams: the LSTM decodes greedily only (--num-beams 1), got {a.num_beams}")
    if arch == "lstm" and a.hidden_size % 2:
        p.error(f"--hidden-size must be even (each encoder direction has half), got {a.hidden_size}")
    return a


# ------------------------------------------------------------------------------------------------
# Serialising I/O pairs to words
# ------------------------------------------------------------------------------------------------
def _markers(grid: dict) -> dict[str, int]:
    out = {}
    for item in grid["markers"].split():
        r, c, n = item.split(":")
        out[f"{r}_{c}"] = int(n)
    return out


def _hero(grid: dict) -> list[str]:
    r, c, d = grid["hero"].split(":")
    return [f"{r}_{c}", d]


def serialize_pair(pair: dict) -> list[str]:
    """One I/O pair as words: ``IN R<rows> C<cols> <hero cell> <dir> WALLS <cells> MARKERS <cell x<n>>...
    OUT <hero cell> <dir> DIFF <cell x<n>>...`` (cells ``r_c``; the output lists only changed marker cells).

    Example:
        >>> grid = {"rows": 2, "cols": 3, "hero": "0:1:east", "blocked": "1:2", "markers": "0:0:2"}
        >>> out = dict(grid, hero="0:2:east", markers="0:0:2 0:2:1")
        >>> " ".join(serialize_pair({"inpgrid_json": grid, "outgrid_json": out}))
        'IN R2 C3 0_1 east WALLS 1_2 MARKERS 0_0 x2 OUT 0_2 east DIFF 0_2 x1'
    """
    inp, out = pair["inpgrid_json"], pair["outgrid_json"]
    words = ["IN", f"R{inp['rows']}", f"C{inp['cols']}", *_hero(inp), "WALLS"]
    words += [cell.replace(":", "_") for cell in inp["blocked"].split()]
    words.append("MARKERS")
    before, after = _markers(inp), _markers(out)
    for cell, n in before.items():
        words += [cell, f"x{n}"]
    words += ["OUT", *_hero(out), "DIFF"]
    for cell in sorted(set(before) | set(after), key=lambda s: tuple(map(int, s.split("_")))):
        if before.get(cell, 0) != after.get(cell, 0):
            words += [cell, f"x{after.get(cell, 0)}"]
    return words


#: (forward, right) unit vectors as (row, col) steps for each facing direction (north is row + 1)
_FRAME = {"north": ((1, 0), (0, 1)), "east": ((0, 1), (-1, 0)), "south": ((-1, 0), (0, -1)), "west": ((0, -1), (1, 0))}
FRAMES = ("absolute", "egocentric")


def serialize_pair_egocentric(pair: dict) -> list[str]:
    """One I/O pair as words in Karel's frame of reference (the input's hero cell and facing):
    ``IN F<k> B<k> L<k> R<k> WALLS <cells> MARKERS <cell x<n>>... OUT <cell> T<q> DIFF <cell x<n>>...``
    with cells as ``<ahead>_<right>`` offsets (``+1_+0`` is the cell in front), ``F/B/L/R<k>`` the
    cells between Karel and the border ahead, behind, left and right, and ``T<q>`` the output
    facing as quarter turns clockwise. Lossless (the grid, Karel's cell and facing can be rebuilt),
    and the same action gives the same words wherever Karel stands, as a CNN's translation
    equivariance gives Bunel et al.'s grid encoder.

    Example:
        >>> grid = {"rows": 2, "cols": 3, "hero": "0:1:east", "blocked": "1:2", "markers": "0:0:2"}
        >>> out = dict(grid, hero="0:2:east", markers="0:0:2 0:2:1")
        >>> " ".join(serialize_pair_egocentric({"inpgrid_json": grid, "outgrid_json": out}))
        'IN F1 B1 L1 R0 WALLS +1_-1 MARKERS -1_+0 x2 OUT +1_+0 T0 DIFF +1_+0 x1'
    """
    inp, out = pair["inpgrid_json"], pair["outgrid_json"]
    hr, hc, d = inp["hero"].split(":")
    hr, hc = int(hr), int(hc)
    (fr, fc), (rr, rc) = _FRAME[d]

    def rel(cell: str) -> str:
        r, c = (int(x) for x in cell.replace(":", "_").split("_")[:2])
        dr, dc = r - hr, c - hc
        return f"{dr * fr + dc * fc:+d}_{dr * rr + dc * rc:+d}"

    def reach(dr: int, dc: int) -> int:  # cells from Karel to the border along (dr, dc)
        k, r, c = 0, hr + dr, hc + dc
        while 0 <= r < inp["rows"] and 0 <= c < inp["cols"]:
            k, r, c = k + 1, r + dr, c + dc
        return k

    words = ["IN", f"F{reach(fr, fc)}", f"B{reach(-fr, -fc)}", f"L{reach(-rr, -rc)}", f"R{reach(rr, rc)}", "WALLS"]
    words += sorted((rel(cell) for cell in inp["blocked"].split()), key=_offset_key)
    words.append("MARKERS")
    before, after = _markers(inp), _markers(out)
    for cell in sorted(before, key=lambda x: _offset_key(rel(x))):
        words += [rel(cell), f"x{before[cell]}"]
    orr, occ, od = out["hero"].split(":")
    words += ["OUT", rel(f"{orr}_{occ}"), f"T{(DIRECTIONS.index(od) - DIRECTIONS.index(d)) % 4}", "DIFF"]
    for cell in sorted(set(before) | set(after), key=lambda x: _offset_key(rel(x))):
        if before.get(cell, 0) != after.get(cell, 0):
            words += [rel(cell), f"x{after.get(cell, 0)}"]
    return words


def _offset_key(word: str) -> tuple[int, int]:
    """Cells nearest Karel first (then ahead before behind, left before right)."""
    f, r = (int(x) for x in word.split("_"))
    return (abs(f) + abs(r), -f, r)


def serialize_task(examples: list[dict], num_grids: int = 5, frame: str = "absolute") -> str:
    """The first ``num_grids`` (shown) pairs of a task, serialised (``frame``: :func:`serialize_pair`
    or :func:`serialize_pair_egocentric`) and joined with ``|``."""
    one = serialize_pair if frame == "absolute" else serialize_pair_egocentric
    return " | ".join(" ".join(one(p)) for p in examples[:num_grids])


def vocabulary(max_grid_size: int, max_markers: int = 10, frame: str = "absolute") -> list[str]:
    """Every word :func:`serialize_task` and the programs can produce for grids up to ``max_grid_size``."""
    from hf_synthsample.domains.karel.dsl import PROGRAM_TOKENS

    g = max_grid_size
    words = ["IN", "OUT", "WALLS", "MARKERS", "DIFF", "|"]
    if frame == "absolute":
        words += list(DIRECTIONS)
        words += [f"R{k}" for k in range(1, g + 1)] + [f"C{k}" for k in range(1, g + 1)]
        words += [f"{r}_{c}" for r in range(g) for c in range(g)]
    else:
        words += [f"{side}{k}" for side in "FBLR" for k in range(g)] + [f"T{q}" for q in range(4)]
        words += [f"{f:+d}_{r:+d}" for f in range(1 - g, g) for r in range(1 - g, g)]
    words += [f"x{n}" for n in range(max_markers + 1)]
    return words + list(PROGRAM_TOKENS)


def num_grids_for(guid: str, seed: int) -> int:
    """A stable uniform draw from 1..5 per task (the uniform model's number of shown grids)."""
    return 1 + hashlib.blake2b(f"{seed}\x00{guid}".encode(), digest_size=8).digest()[0] % 5


def add_text(batch: dict, *, uniform_grids: bool = False, seed: int = 0, frame: str = "absolute") -> dict:
    """``source`` (serialised shown pairs) and ``target`` (program tokens) for ``Dataset.map(batched=True)``."""
    sources = []
    for guid, examples in zip(batch["guid"], batch["examples"]):
        sources.append(serialize_task(examples, num_grids_for(guid, seed) if uniform_grids else 5, frame))
    return {"source": sources, "target": [" ".join(t) for t in batch["program_tokens"]]}


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
        return split.map(resample_io, batched=True, desc="resampling I/O",
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
# Training and scoring
# ------------------------------------------------------------------------------------------------
def train_model(name: str, train_ds, tokenizer, a: argparse.Namespace, seed: int | None = None, metric=None):
    """A scratch model trained on ``train_ds``; with ``--fit-target`` it stops once it fits that
    share of its first ``--num-fit`` tasks. Returns ``(model, fit curve)``."""
    from hf_synthsample.models import build_scratch_model, train_seq2seq

    seed = a.seed if seed is None else seed
    if a.arch == "lstm":
        model = build_scratch_model(tokenizer, "lstm", seed=seed, hidden_size=a.hidden_size,
                                    embedding_dim=a.hidden_size, dropout=a.dropout)
    else:
        model = build_scratch_model(tokenizer, "t5", seed=seed, d_model=a.d_model, num_layers=a.layers,
                                    num_decoder_layers=a.layers, d_ff=a.ffn, num_heads=a.heads,
                                    d_kv=max(1, a.d_model // a.heads), dropout_rate=a.dropout)
    callbacks, extra = [], {}
    if a.fit_target > 0:
        from hf_synthsample.models import FitTargetCallback

        fit_rows, label, curve = train_ds.select(range(min(a.num_fit, train_ds.num_rows))), f"{name} seed {seed}", []

        def on_check(epoch: int, fit: float) -> None:  # the curve keeps the CPU seconds of each check
            curve.append((epoch, round(fit, 2), round(time.process_time(), 1)))
            print(f"  {label} epoch {epoch}: fit {fit:.1f} ({time.process_time():.0f} CPU-s)", flush=True)

        callbacks.append(FitTargetCallback(lambda m: score(m, tokenizer, fit_rows, metric, a)["generalization_accuracy"],
                                           a.fit_target, a.check_every, on_check=on_check))
    if a.lr_schedule == "constant":
        extra = dict(lr_scheduler_type="constant_with_warmup", warmup_steps=0.02)
    trainer = train_seq2seq(model, tokenizer, train_ds, source_column="source", target_column="target",
                            output_dir=os.path.join(a.out, "checkpoints", f"{name}-{seed}"), epochs=a.epochs,
                            batch_size=a.batch_size, learning_rate=a.learning_rate, seed=seed,
                            # sources run from ~30 to ~450 words: batches of similar length pad far less
                            train_sampling_strategy="group_by_length", disable_tqdm=a.preset.startswith("tiny"),
                            callbacks=callbacks, **extra)
    curve = curve if callbacks else []
    return trainer.model, curve, round(trainer.state.epoch or 0, 2)


def score(model, tokenizer, test_ds, metric, a: argparse.Namespace,
          known: set | None = None) -> dict[str, float | None]:
    """Exact match and generalization accuracy (%) of greedy/beam predictions, by execution
    (``metric``: the loaded ``karel_execution`` module); ``None`` for an empty test set. With
    ``known`` (the training programs' token strings), also the error profile: ``copied``, the share
    of predictions that are one of those programs verbatim (a memorizing model answers new tasks
    with old programs), and ``unparsable``."""
    from hf_synthsample.models import generate_predictions

    if test_ds.num_rows == 0:
        return {"exact_match": None, "generalization_accuracy": None, "semantic_accuracy": None}
    preds = generate_predictions(model, tokenizer, test_ds, source_column="source", batch_size=32,
                                 max_new_tokens=a.max_new_tokens, num_beams=a.num_beams)
    res = metric.compute(predictions=preds, references=list(test_ds["target"]), examples=list(test_ds["examples"]))
    out = {k: 100.0 * res[k] for k in ("exact_match", "generalization_accuracy", "semantic_accuracy")}
    if known is not None:
        out["copied"] = 100.0 * sum(" ".join(p.split()) in known for p in preds) / len(preds)
        out["unparsable"] = 100.0 * res["num_unparsable"] / len(preds)
    return out


def _diff(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None else x - y


def build_tables(scores: dict[str, list[dict[str, dict[str, float]]]], fits: dict[str, list[dict[str, float]]],
                 sizes: dict[str, int], caption: str, num_fit: int):
    """Table 1 (generalization %), the same for exact match, and the test-set sizes; every model
    cell carries the model's fit (the same score on its own training tasks). ``scores[model]`` and
    ``fits[model]`` hold one entry per seed: a cell is the mean (±sd over seeds), and with several
    seeds the difference row is followed by one row per seed (the paired differences)."""
    from harness import ResultsTable, Score

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
    from harness import ResultsTable

    models = [r for r in table1.rows if r["train"] in ("Baseline", "Uniform")]
    t = ResultsTable(table1.title, ["test set", *(r["train"] for r in models)], fit_note="")
    for col in table1.columns[1:]:
        t.add(**{"test set": col.replace(" I/O", "").replace(" ", "\n")}, **{r["train"]: r[col] for r in models})
    return t


def main(argv=None) -> int:
    a = parse_args(argv)
    import json

    import evaluate
    import torch

    from hf_synthsample.atomic import write_text_atomic
    from harness import clear_outputs, describe_settings, is_main_process
    from hf_synthsample.metrics import metric_path
    from hf_synthsample.models import build_word_tokenizer
    from hf_synthsample.processes import run_forked

    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    clear_outputs(a.out, OUTPUTS)
    start, cpu0 = time.time(), time.process_time()
    train, tests = build_data(a)
    metric = evaluate.load(metric_path("karel_execution"))
    tokenizer = build_word_tokenizer([" ".join(vocabulary(a.max_grid_size, frame=a.frame))])
    seeds = [a.seed + i for i in range(a.seeds)]
    runs = [(name, s) for s in seeds for name in train]  # seeds outermost: with --jobs 2 the pair trains side by side

    def run_one(i: int) -> dict:
        torch.set_num_threads(a.threads)
        name, seed = runs[i]
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

    results = run_forked(run_one, len(runs), a.jobs, describe=lambda i: f"{runs[i][0]} seed {runs[i][1]}")
    scores = {name: [r["scores"] for (n, _), r in zip(runs, results) if n == name] for name in train}
    fits = {name: [r["fit"] for (n, _), r in zip(runs, results) if n == name] for name in train}
    scale = {"paper": "paper-scale settings",
             "cpu": "a reduced but faithful CPU setting: short programs with control flow, small grids",
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
    outputs = [(table1, "table1"), (exact, "exact_match"), (tasks, "tasks")]
    if a.seen:
        seen = {k: v for k, v in sizes.items() if k.startswith(SEEN)}
        s_table1, s_exact, s_tasks = build_tables(
            scores, fits, seen, caption + f" Test sets over the first {a.seen} *training* programs, I/O newly drawn "
            "(programs seen in training, inputs not).", a.num_fit)
        for t in (s_table1, s_exact, s_tasks):
            t.title += ": training programs, new I/O (--seen)"
        outputs += [(s_table1, "table1_seen"), (s_exact, "exact_match_seen"), (s_tasks, "tasks_seen")]
    for table, name in outputs:
        table.save(a.out, name)
    if is_main_process():
        text = "\n\n".join(t.to_markdown() for t, _ in outputs) + "\n"
        write_text_atomic(os.path.join(a.out, "results.md"), text)
        write_text_atomic(os.path.join(a.out, "runs.json"), json.dumps(
            [{"train": n, "seed": s, **r} for (n, s), r in zip(runs, results)], indent=1))
        plot_table(table1).bar_plot(os.path.join(a.out, "table1.png"), ylabel="generalization accuracy (%)")
        print(text)
        print(f"wrote {a.out} in {time.time() - start:.0f}s ({cpu:.0f} CPU-s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
