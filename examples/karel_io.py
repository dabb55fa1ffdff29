"""Shin et al. (2019), Table 1: a Karel program synthesizer trained on baseline I/O vs uniform I/O,
evaluated (generalization accuracy by execution) on narrow I/O test sets.

    python examples/karel_io.py                       # --small (default): CPU smoke run, about 8 min here
    python examples/karel_io.py --cpu                 # the largest CPU setting tried, see docs/reproductions.md
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

Model: an encoder-decoder Transformer trained from scratch (``hf_synthsample.models``: word-level
tokenizer, scratch T5 with relative positions, stock ``Seq2SeqTrainer``). The shown I/O pairs are
serialised to words (:func:`serialize_task`: grid size, hero cell and direction, wall cells, marker
cells with counts; for the output only the hero and the marker cells that changed, since walls never
change), the target is the program's tokens. Bunel et al. (2018) use a CNN grid encoder with an LSTM
decoder instead; a seq2seq Transformer over a sparse serialisation keeps the example on the package's
one model API, and the paper's comparison (same model, two training distributions) does not depend
on the architecture. Scoring: ``karel_execution`` (exact match; generalization accuracy = the
predicted program maps every shown *and* the held-out input to its output).

Writes to ``--out`` (default ``runs/karel_io``): ``table1.md/.json`` (generalization accuracy %, rows
Baseline / Uniform / difference in pp, one column per test set; each model's fit, the same score on
``--num-fit`` of its own training tasks, beside every cell), ``exact_match.md/.json``,
``tasks.md/.json`` (tasks per test set), ``results.md`` (all three) and ``table1.png``.

Expected runtime: ``--small`` about 2.5 minutes on one CPU thread (a smoke run: grids up to 8x8, a
tiny model and 1,000 programs, far from the paper's accuracies); ``--cpu`` about 17 CPU-minutes
(25 minutes wall at load 3; 5,000 programs, 16 epochs: the largest setting in the 30-minute
budget; the models still fit 2 % of their own training tasks, see docs/reproductions.md);
``--paper`` several hours (an
estimate, not yet measured) on one GPU (100,000 programs, grids up to 16x16, 3+3-layer d_model
256 T5); ``--tiny`` (tests) seconds.
The paper trains on the 1.1M programs of Bunel et al.'s data set; ``--num-train`` scales up.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time

#: the result files a run writes at the top of --out; a run first removes those of the previous one
#: (hf_synthsample.experiments.clear_outputs), so tables of two runs never sit side by side
OUTPUTS = ("table1.*", "exact_match.*", "tasks.*", "results.md")

#: (marker ratio, wall ratio) pairs and marker-count distributions of the paper's narrow sets
NARROW_RATIOS = ((0.05, 0.85), (0.25, 0.65), (0.65, 0.25), (0.85, 0.05))
COUNT_LABELS = {"uniform": "U", "geometric": "G", "ten_minus_geometric": "10-G"}
ALL_NARROW = [f"m{m:g} w{w:g} {c}" for m, w in NARROW_RATIOS for c in COUNT_LABELS.values()]
DIRECTIONS = ("north", "east", "south", "west")

PRESETS = {
    "tiny": dict(num_train=24, num_test=8, num_fit=8, max_grid_size=5, epochs=1.0, d_model=32, layers=1, ffn=64,
                 heads=2, batch_size=8, learning_rate=1e-3, max_new_tokens=24, narrow=ALL_NARROW[:2]),
    "small": dict(num_train=1000, num_test=60, num_fit=60, max_grid_size=8, epochs=4.0, d_model=64, layers=2, ffn=128,
                  heads=4, batch_size=16, learning_rate=1e-3, max_new_tokens=48, narrow=ALL_NARROW),
    # the largest CPU setting: ~20x the small run's training compute (5,000 programs, 16 epochs); docs/reproductions.md
    "cpu": dict(num_train=5000, num_test=100, num_fit=100, max_grid_size=8, epochs=16.0, d_model=64, layers=2, ffn=128,
                heads=4, batch_size=16, learning_rate=1e-3, max_new_tokens=48, narrow=ALL_NARROW),
    "paper": dict(num_train=100_000, num_test=2500, num_fit=500, max_grid_size=16, epochs=30.0, d_model=256, layers=3,
                  ffn=512, heads=4, batch_size=64, learning_rate=5e-4, max_new_tokens=128, narrow=ALL_NARROW),
}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    scale = p.add_mutually_exclusive_group()
    scale.add_argument("--small", dest="preset", action="store_const", const="small", help="CPU smoke run (the default)")
    scale.add_argument("--cpu", dest="preset", action="store_const", const="cpu",
                       help="largest CPU setting tried (docs/reproductions.md): " + ", ".join(
                           f"{k}={v}" for k, v in PRESETS["cpu"].items() if k != "narrow") + ", all 12 narrow sets")
    scale.add_argument("--paper", dest="preset", action="store_const", const="paper",
                       help="paper-scale settings (GPU): " + ", ".join(
                           f"{k}={v}" for k, v in PRESETS["paper"].items() if k != "narrow") + ", all 12 narrow sets")
    scale.add_argument("--tiny", dest="preset", action="store_const", const="tiny", help=argparse.SUPPRESS)
    p.set_defaults(preset="small")
    p.add_argument("--num-train", type=int, default=None, help="training programs (both models)")
    p.add_argument("--num-test", type=int, default=None, help="test programs (each test set resamples their I/O)")
    p.add_argument("--num-fit", type=int, default=None,
                   help="training tasks each model is also scored on (its fit, printed beside every score)")
    p.add_argument("--max-grid-size", type=int, default=None, help="largest grid side, training and test (2..16)")
    p.add_argument("--narrow", nargs="+", choices=ALL_NARROW, default=None, metavar="SET",
                   help=f"narrow test sets [all 12: {', '.join(repr(s) for s in ALL_NARROW)}]")
    p.add_argument("--epochs", type=float, default=None)
    p.add_argument("--d-model", type=int, default=None, help="Transformer width")
    p.add_argument("--layers", type=int, default=None, help="encoder and decoder layers")
    p.add_argument("--ffn", type=int, default=None, help="feed-forward width")
    p.add_argument("--heads", type=int, default=None, help="attention heads")
    p.add_argument("--batch-size", type=int, default=None, help="per-device batch size")
    p.add_argument("--learning-rate", type=float, default=None)
    p.add_argument("--max-new-tokens", type=int, default=None, help="longest generated program")
    p.add_argument("--num-beams", type=int, default=1, help="beam size at test time [1: greedy]")
    p.add_argument("--seed", type=int, default=0)
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
    from hf_synthsample.experiments import apply_preset

    apply_preset(p, a, PRESETS[a.preset], positive=("num_train", "num_test", "num_fit", "d_model", "layers", "ffn", "heads",
                                                    "batch_size", "max_new_tokens", "num_beams", "threads"))
    if not 2 <= a.max_grid_size <= 16:
        p.error(f"--max-grid-size must be in 2..16, got {a.max_grid_size}")
    if a.epochs <= 0 or a.learning_rate <= 0:
        p.error("--epochs and --learning-rate must be > 0")
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


def serialize_task(examples: list[dict], num_grids: int = 5) -> str:
    """The first ``num_grids`` (shown) pairs of a task, serialised and joined with ``|``."""
    return " | ".join(" ".join(serialize_pair(p)) for p in examples[:num_grids])


def vocabulary(max_grid_size: int, max_markers: int = 10) -> list[str]:
    """Every word :func:`serialize_task` and the programs can produce for grids up to ``max_grid_size``."""
    from hf_synthsample.domains.karel.dsl import PROGRAM_TOKENS

    words = ["IN", "OUT", "WALLS", "MARKERS", "DIFF", "|", *DIRECTIONS]
    words += [f"R{k}" for k in range(1, max_grid_size + 1)] + [f"C{k}" for k in range(1, max_grid_size + 1)]
    words += [f"{r}_{c}" for r in range(max_grid_size) for c in range(max_grid_size)]
    words += [f"x{n}" for n in range(max_markers + 1)]
    return words + list(PROGRAM_TOKENS)


def num_grids_for(guid: str, seed: int) -> int:
    """A stable uniform draw from 1..5 per task (the uniform model's number of shown grids)."""
    return 1 + hashlib.blake2b(f"{seed}\x00{guid}".encode(), digest_size=8).digest()[0] % 5


def add_text(batch: dict, *, uniform_grids: bool = False, seed: int = 0) -> dict:
    """``source`` (serialised shown pairs) and ``target`` (program tokens) for ``Dataset.map(batched=True)``."""
    sources = []
    for guid, examples in zip(batch["guid"], batch["examples"]):
        sources.append(serialize_task(examples, num_grids_for(guid, seed) if uniform_grids else 5))
    return {"source": sources, "target": [" ".join(t) for t in batch["program_tokens"]]}


# ------------------------------------------------------------------------------------------------
# Data sets
# ------------------------------------------------------------------------------------------------
def narrow_params(name: str) -> dict:
    """``"m0.05 w0.85 10-G"`` -> the ``resample_io`` keywords of that narrow distribution."""
    m, w, c = name.split()
    counts = {v: k for k, v in COUNT_LABELS.items()}[c]
    return dict(distribution="narrow", marker_ratio=float(m[1:]), wall_ratio=float(w[1:]), marker_counts=counts)


def build_data(a: argparse.Namespace):
    """Training sets (name -> Dataset) and test sets (name -> Dataset), all with source/target columns."""
    import hf_synthsample
    from hf_synthsample.builders.karel import resample_io

    ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=a.num_train, num_test=a.num_test, seed=a.seed,
                                     max_grid_size=a.max_grid_size, cache_dir=a.cache_dir, num_proc=a.num_proc)

    def resample(split, seed, **io):
        return split.map(resample_io, batched=True, desc="resampling I/O",
                         fn_kwargs=dict(seed=seed, max_grid_size=a.max_grid_size, on_failure="drop", **io))

    text = dict(batched=True, desc="serialising")
    uniform = resample(ds["train"], a.seed + 1)
    # the same programs in both training sets: drop the few that got no valid uniform I/O set
    kept = set(uniform["guid"])
    baseline = ds["train"].filter(lambda guid: guid in kept, input_columns="guid")
    train = {
        "Baseline": baseline.map(add_text, **text),
        "Uniform": uniform.map(add_text, fn_kwargs={"uniform_grids": True, "seed": a.seed}, **text),
    }
    tests = {"baseline I/O": ds["test"], "uniform I/O": resample(ds["test"], a.seed + 2)}
    for j, name in enumerate(a.narrow):
        tests[name] = resample(ds["test"], a.seed + 3 + j, **narrow_params(name))
    tests = {k: v.map(add_text, **text) for k, v in tests.items()}
    return train, tests


# ------------------------------------------------------------------------------------------------
# Training and scoring
# ------------------------------------------------------------------------------------------------
def train_model(name: str, train_ds, tokenizer, a: argparse.Namespace):
    from hf_synthsample.models import build_scratch_model, train_seq2seq

    model = build_scratch_model(tokenizer, "t5", seed=a.seed, d_model=a.d_model, num_layers=a.layers,
                                num_decoder_layers=a.layers, d_ff=a.ffn, num_heads=a.heads,
                                d_kv=max(1, a.d_model // a.heads))
    trainer = train_seq2seq(model, tokenizer, train_ds, source_column="source", target_column="target",
                            output_dir=os.path.join(a.out, "checkpoints", name), epochs=a.epochs,
                            batch_size=a.batch_size, learning_rate=a.learning_rate, seed=a.seed,
                            # sources run from ~30 to ~450 words: batches of similar length pad far less
                            train_sampling_strategy="group_by_length", disable_tqdm=a.preset == "tiny")
    return trainer.model


def score(model, tokenizer, test_ds, metric, a: argparse.Namespace) -> dict[str, float | None]:
    """Exact match and generalization accuracy (%) of greedy/beam predictions, by execution
    (``metric``: the loaded ``karel_execution`` module); ``None`` for an empty test set."""
    from hf_synthsample.models import generate_predictions

    if test_ds.num_rows == 0:
        return {"exact_match": None, "generalization_accuracy": None, "semantic_accuracy": None}
    preds = generate_predictions(model, tokenizer, test_ds, source_column="source", batch_size=32,
                                 max_new_tokens=a.max_new_tokens, num_beams=a.num_beams)
    res = metric.compute(predictions=preds, references=list(test_ds["target"]), examples=list(test_ds["examples"]))
    return {k: 100.0 * res[k] for k in ("exact_match", "generalization_accuracy", "semantic_accuracy")}


def _diff(x: float | None, y: float | None) -> float | None:
    return None if x is None or y is None else x - y


def build_tables(scores: dict[str, dict[str, dict[str, float]]], fits: dict[str, dict[str, float]],
                 sizes: dict[str, int], caption: str, num_fit: int):
    """Table 1 (generalization %), the same for exact match, and the test-set sizes; every model
    cell carries the model's fit (the same score on its own training tasks)."""
    from hf_synthsample.experiments import ResultsTable, Score

    tests = list(sizes)
    tables = {}
    for key, title in (("generalization_accuracy", "Karel generalization accuracy (%) by training I/O distribution"),
                       ("exact_match", "Karel exact match (%) by training I/O distribution")):
        t = ResultsTable(title, ["train", *tests], caption=caption, float_format="{:.2f}",
                         fit_note=f"fit: the same score on {num_fit} of the model's own training tasks (its "
                         "training I/O); a fit near 0 means the model learnt too little for the columns to compare "
                         "training distributions.")
        for model_name, per_test in scores.items():
            fit = fits[model_name][key]
            t.add(train=model_name, **{name: None if per_test[name][key] is None else Score(per_test[name][key], fit=fit)
                                       for name in tests})
        if {"Baseline", "Uniform"} <= set(scores):
            t.add(train="Uniform - Baseline (pp)",
                  **{n: _diff(scores["Uniform"][n][key], scores["Baseline"][n][key]) for n in tests})
        tables[key] = t
    sizes_table = ResultsTable("Karel test sets: tasks per set (programs kept, I/O resampled)", ["set", *tests],
                               caption="Programs with no valid I/O set under a narrow distribution are left out.")
    sizes_table.add(set="tasks", **sizes)
    return tables["generalization_accuracy"], tables["exact_match"], sizes_table


def plot_table(table1):
    """Table 1 transposed for the bar plot: one group per test set, one bar per training distribution
    (the model's fit as a tick). Long test-set names are shortened to fit under the bars."""
    from hf_synthsample.experiments import ResultsTable

    models = [r for r in table1.rows if r["train"] in ("Baseline", "Uniform")]
    t = ResultsTable(table1.title, ["test set", *(r["train"] for r in models)], fit_note="")
    for col in table1.columns[1:]:
        t.add(**{"test set": col.replace(" I/O", "").replace(" ", "\n")}, **{r["train"]: r[col] for r in models})
    return t


def main(argv=None) -> int:
    a = parse_args(argv)
    import evaluate
    import torch

    from hf_synthsample.atomic import write_text_atomic
    from hf_synthsample.experiments import clear_outputs, describe_settings, is_main_process
    from hf_synthsample.metrics import metric_path
    from hf_synthsample.models import build_word_tokenizer

    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    clear_outputs(a.out, OUTPUTS)
    start = time.time()
    train, tests = build_data(a)
    metric = evaluate.load(metric_path("karel_execution"))
    tokenizer = build_word_tokenizer([" ".join(vocabulary(a.max_grid_size))])
    scores: dict[str, dict[str, dict[str, float]]] = {}
    fits: dict[str, dict[str, float]] = {}
    for name, train_ds in train.items():
        model = train_model(name, train_ds, tokenizer, a)
        scores[name] = {test: score(model, tokenizer, ds, metric, a) for test, ds in tests.items()}
        fits[name] = score(model, tokenizer, train_ds.select(range(min(a.num_fit, train_ds.num_rows))), metric, a)
        if is_main_process():
            print(f"[{time.time() - start:6.0f}s] {name}: " + ", ".join(
                f"{t} " + ("-" if s["generalization_accuracy"] is None else f"{s['generalization_accuracy']:.1f}")
                for t, s in scores[name].items()) + f"; fit (training tasks) {fits[name]['generalization_accuracy']:.1f}",
                flush=True)
    scale = {"paper": "paper-scale settings", "cpu": "the largest CPU setting tried, far below the paper's scale"
             }.get(a.preset, f"{a.preset} run: a smoke run, NOT the paper's scale or numbers")
    caption = (f"{describe_settings(a.preset, a.overrides)} ({scale}). {a.num_train} training programs (same programs "
               f"for both rows), {a.num_test} test programs, grids up to {a.max_grid_size}x{a.max_grid_size}; scratch "
               f"T5 d_model {a.d_model}, {a.layers}+{a.layers} layers, ffn {a.ffn}, {a.heads} heads, {a.epochs:g} "
               f"epochs, batch {a.batch_size}, lr {a.learning_rate:g}, "
               f"{'greedy' if a.num_beams == 1 else f'beam {a.num_beams}'} decoding; one seed ({a.seed}).")
    table1, exact, sizes = build_tables(scores, fits, {k: v.num_rows for k, v in tests.items()}, caption, a.num_fit)
    for table, name in ((table1, "table1"), (exact, "exact_match"), (sizes, "tasks")):
        table.save(a.out, name)
    if is_main_process():
        text = "\n\n".join(t.to_markdown() for t in (table1, exact, sizes)) + "\n"
        write_text_atomic(os.path.join(a.out, "results.md"), text)
        plot_table(table1).bar_plot(os.path.join(a.out, "table1.png"), ylabel="generalization accuracy (%)")
        print(text)
        print(f"wrote {a.out} in {time.time() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
