"""Shin et al. (2019), Table 3: a character-level LSTM trained on DCFG (and T2T) Calculator data,
unhomogenized and homogenized on each salient variable, evaluated on a fresh mixture of the four
distributions (DCFG, T2T, RCFG, BAL).

    python examples/shin_calculator.py                      # --small (default): CPU, about 8 min here
    python examples/shin_calculator.py --paper              # paper-scale settings (GPU), see PRESETS
    accelerate launch examples/shin_calculator.py --paper   # the same under accelerate

For each base distribution (``--base``: DCFG for ``--small``, DCFG and T2T, the paper's two rows, for
``--paper``; ``--base dcfg t2t`` adds the T2T row to a small run) the script
trains one model on the base distribution and one on each of the five homogenized variants
(``<base>-homogenized-<variable>`` configs of the ``calculator`` builder, generator-side
homogenization with ``--eps``), all with the same size, model, seed and schedule; every model is
scored on one evaluation set drawn from the ``mixture`` config with a seed no training set uses.
Writes to ``--out`` (default ``runs/shin_calculator``):

* ``table3.md/.json``: rows = base distribution; columns = Original accuracy (%), then the change
  in percentage points (pp) when training on the base homogenized on Length, Max Depth, Mean
  Depth, #Operations, #Parens (the paper's layout);
* ``per_source.md/.json``: accuracy of every trained model on the whole mixture and on the rows
  of each source distribution (the mixture's ``distribution`` column);
* ``per_source.png``: the second table as grouped bars.

With ``--seeds K`` every cell is the mean over K training seeds (model init and data order;
the data sets stay fixed), which the small runs need: their differences are within a few
points of seed noise. The paper does not state its Calculator training sizes or schedule; the
``--paper`` preset is this repository's documented choice (100,000 training rows per set,
20,000 evaluation rows, 256-unit LSTM, 20 epochs), not the paper's own.

Expected runtime: ``--small`` about 8 minutes on one CPU thread of a 2-core machine;
``--small --base dcfg t2t`` twice that; ``--paper`` roughly an hour on one GPU (12 models; an
estimate, not yet measured); ``--tiny`` (tests) a few seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

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
PRESETS = {
    "tiny": dict(num_train=200, num_eval=200, epochs=1, hidden_size=32, embedding_dim=16, batch_size=32,
                 learning_rate=3e-3, bases=["dcfg"], variables=["length", "num_ops"]),
    "small": dict(num_train=4000, num_eval=2000, epochs=4, hidden_size=128, embedding_dim=32, batch_size=32,
                  learning_rate=3e-3, bases=["dcfg"], variables=list(VARIABLE_COLUMNS)),
    "paper": dict(num_train=100_000, num_eval=20_000, epochs=20, hidden_size=256, embedding_dim=64,
                  batch_size=128, learning_rate=1e-3, bases=list(BASES), variables=list(VARIABLE_COLUMNS)),
}
EVAL_SEED_OFFSET = 1_000_003  # the evaluation set's seed: far from every training set's seed


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    scale = p.add_mutually_exclusive_group()
    scale.add_argument("--small", dest="preset", action="store_const", const="small",
                       help="CPU-sized run (the default)")
    scale.add_argument("--paper", dest="preset", action="store_const", const="paper",
                       help="paper-scale settings (GPU): " + ", ".join(f"{k}={v}" for k, v in PRESETS["paper"].items()))
    scale.add_argument("--tiny", dest="preset", action="store_const", const="tiny", help=argparse.SUPPRESS)
    p.set_defaults(preset="small")
    p.add_argument("--base", dest="bases", nargs="+", choices=BASES, default=None,
                   help="base distribution(s), one table row each [small: dcfg; paper: dcfg t2t]")
    p.add_argument("--variables", nargs="+", choices=list(VARIABLE_COLUMNS), default=None,
                   help="salient variables to homogenize on, one column each [all five]")
    p.add_argument("--num-train", type=int, default=None, help="training rows per data set")
    p.add_argument("--num-eval", type=int, default=None, help="rows of the mixture evaluation set")
    p.add_argument("--epochs", type=float, default=None, help="training epochs")
    p.add_argument("--hidden-size", type=int, default=None, help="LSTM hidden units")
    p.add_argument("--embedding-dim", type=int, default=None, help="character embedding size")
    p.add_argument("--batch-size", type=int, default=None, help="per-device batch size")
    p.add_argument("--learning-rate", type=float, default=None, help="Adam(W) learning rate")
    p.add_argument("--eps", type=float, default=0.01, help="homogenization tolerance eps [0.01]")
    p.add_argument("--seeds", type=int, default=1, help="training seeds averaged per cell [1]")
    p.add_argument("--seed", type=int, default=0, help="data and training seed [0]")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest on a small shared CPU) [1]")
    p.add_argument("--num-proc", type=int, default=None, help="processes generating each data set")
    p.add_argument("--cache-dir", default=None, help="datasets cache for the generated data [HF default]")
    p.add_argument("--out", default=os.path.join("runs", "shin_calculator"), help="output folder [runs/shin_calculator]")
    a = p.parse_args(argv)
    from hf_synthsample.experiments import apply_preset

    apply_preset(p, a, PRESETS[a.preset], positive=("num_train", "num_eval", "hidden_size", "embedding_dim",
                                                    "batch_size", "seeds", "threads"))
    if a.epochs <= 0 or a.learning_rate <= 0 or a.eps <= 0:
        p.error("--epochs, --learning-rate and --eps must be > 0")
    return a


def training_config(base: str, variable: str | None) -> str:
    """The calculator builder config trained on: ``dcfg`` or ``dcfg-homogenized-max-paren-depth``."""
    from hf_synthsample.builders.calculator import homogenized_config_name

    return base if variable is None else homogenized_config_name(base, variable)


def load_split(config: str, a: argparse.Namespace, *, num_examples: int, seed: int):
    import hf_synthsample

    kwargs = dict(num_examples=num_examples, seed=seed, split="train", cache_dir=a.cache_dir, num_proc=a.num_proc)
    if "homogenized" in config:
        kwargs["eps"] = a.eps
    return hf_synthsample.load_dataset("calculator", config, **kwargs)


def train_and_score(train_ds, eval_ds, a: argparse.Namespace, seed: int, workdir: str) -> dict[str, float]:
    """Train one fresh classifier; its accuracy (%) on the mixture overall and per source distribution."""
    from hf_synthsample.models import build_calculator_model, evaluate_classifier, train_classifier

    model, tokenizer = build_calculator_model(seed=seed, hidden_size=a.hidden_size, embedding_dim=a.embedding_dim)
    trainer = train_classifier(model, tokenizer, train_ds, text_column="expression", label_column="answer",
                               output_dir=workdir, epochs=a.epochs, batch_size=a.batch_size,
                               learning_rate=a.learning_rate, seed=seed, disable_tqdm=a.preset == "tiny")
    scores = evaluate_classifier(trainer.model, tokenizer, eval_ds, text_column="expression",
                                 label_column="answer", group_column="distribution")
    return to_percent(scores)


def to_percent(scores: dict) -> dict[str, float]:
    """``evaluate_classifier``'s ``{"accuracy": pct, "accuracy_dcfg": pct, ...}`` -> ``{"mixture": pct, "dcfg": pct, ...}``."""
    return {("mixture" if k == "accuracy" else k[len("accuracy_"):]): float(v)
            for k, v in scores.items() if k == "accuracy" or k.startswith("accuracy_")}


def mean_scores(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]}


def build_tables(results: dict[tuple[str, str | None], dict[str, float]], a: argparse.Namespace, caption: str):
    """Table 3 (original accuracy and +pp per homogenized variable) and the per-source table."""
    from hf_synthsample.experiments import ResultsTable

    columns = ["train", "Original"] + [VARIABLE_COLUMNS[v] for v in a.variables]
    table3 = ResultsTable("Calculator accuracy on the mixture: original (%) and change when homogenized (pp)",
                          columns, caption=caption, float_format="{:+.2f}")
    per_source = ResultsTable("Calculator accuracy (%) on the mixture and on each source distribution",
                              ["train", "mixture", *SOURCES], caption=caption, float_format="{:.2f}")
    for base in a.bases:
        original = results[(base, None)]["mixture"]
        row = {"train": base.upper(), "Original": original}
        row.update({VARIABLE_COLUMNS[v]: results[(base, v)]["mixture"] - original for v in a.variables})
        table3.add(**row)
        for variable in (None, *a.variables):
            scores = results[(base, variable)]
            per_source.add(train=training_config(base, variable), **{k: scores.get(k) for k in ("mixture", *SOURCES)})
    return table3, per_source


def render_table3(table3) -> str:
    """Markdown of Table 3 with the paper's units: Original as a percentage, the rest as +pp."""
    md = table3.to_markdown().splitlines()
    out = []
    for line in md:
        if line.startswith("| ") and not line.startswith("| train"):
            cells = line.strip("| ").split(" | ")
            cells = [cells[0], cells[1].lstrip("+") + "%"] + [c + "pp" if c != "-" else c for c in cells[2:]]
            line = "| " + " | ".join(cells) + " |"
        out.append(line)
    return "\n".join(out)


def main(argv=None) -> int:
    a = parse_args(argv)
    import torch

    from hf_synthsample.atomic import write_text_atomic
    from hf_synthsample.experiments import is_main_process

    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    start = time.time()
    eval_ds = load_split("mixture", a, num_examples=a.num_eval, seed=a.seed + EVAL_SEED_OFFSET)
    results: dict[tuple[str, str | None], dict[str, float]] = {}
    for base in a.bases:
        for variable in (None, *a.variables):
            config = training_config(base, variable)
            train_ds = load_split(config, a, num_examples=a.num_train, seed=a.seed)
            runs = [train_and_score(train_ds, eval_ds, a, a.seed + k, os.path.join(a.out, "checkpoints", config))
                    for k in range(a.seeds)]
            results[(base, variable)] = mean_scores(runs)
            if is_main_process():
                print(f"[{time.time() - start:6.0f}s] {config}: " + ", ".join(
                    f"{k} {v:.2f}" for k, v in results[(base, variable)].items()), flush=True)
    scale = ("paper-scale settings" if a.preset == "paper" else
             f"{a.preset} run: NOT the paper's scale or numbers (differences of a few pp are within seed noise)")
    caption = (f"{scale}. Train {a.num_train} rows per set (homogenized with eps={a.eps}), evaluate on "
               f"{a.num_eval} fresh mixture rows; char LSTM {a.hidden_size} units, {a.epochs:g} epochs, "
               f"batch {a.batch_size}, lr {a.learning_rate:g}; mean of {a.seeds} seed(s) from {a.seed}.")
    table3, per_source = build_tables(results, a, caption)
    table3.save(a.out, "table3")
    per_source.save(a.out, "per_source")
    if is_main_process():
        text = render_table3(table3) + "\n\n" + per_source.to_markdown() + "\n"
        write_text_atomic(os.path.join(a.out, "results.md"), text)
        per_source.bar_plot(os.path.join(a.out, "per_source.png"), ylabel="accuracy (%)")
        print(text)
        print(f"wrote {a.out} in {time.time() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
