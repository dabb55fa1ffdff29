"""The training runs of ``cartography_cogs.py``: the COGS / SCAN data, the shared pieces of every
run (tokenizer, scratch BART, training, scoring) and the subset runs held to a fit target.

* :func:`read_cogs` / :func:`read_scan`: the training pool and the evaluation splits;
* :class:`Experiment`: the data, the word tokenizer (the pool's vocabulary, as in the paper), the
  model, ``fit`` (a stock ``Seq2SeqTrainer`` run) and ``evaluate`` (exact match and corpus BLEU per
  split, COGS gen per category, and the model's fit on its own rows);
* :func:`train_one`: one subset run, trained until it fits ``--fit-target`` of *all* its rows, an
  init that learnt nothing restarted (:func:`harness.with_restarts`);
* :class:`Runs`: the runs the tables ask for (:class:`harness.RunBook`) and their cells over seeds;
* the checks of the data and training-to-fit flags (:func:`check_data`, :func:`check_fit_flags`);
* the data map's files (:func:`save_datamap`) and the tables' captions: the data, the schedule, the
  preset and the data-map model's fit (:func:`table_caption`).
"""

from __future__ import annotations

import argparse
import json
import os
import time

from harness import (ResultsTable, RunBook, Score, check_restart_flags, describe_settings, is_main_process, say,
                     with_restarts)

__all__ = ["COGS_SOURCE", "EVAL_SPLITS", "Experiment", "LR_SCHEDULES", "Runs", "SCAN_CONFIGS", "check_data",
           "check_fit_flags", "cuda_available", "data_name", "describe_fit", "describe_map", "layout_prefix",
           "map_failure", "read_cogs", "read_scan", "save_datamap", "score_columns", "steps_warning", "subset_ids",
           "table_caption", "table_name", "train_one"]

#: where users get the data (the examples never download it)
COGS_SOURCE = "https://github.com/najoungkim/COGS, data/*.tsv"
#: the exact SCAN splits usable as --data scan:<config> (an out-of-distribution test set exists here)
SCAN_CONFIGS = ("length", "addprim_jump", "addprim_turn_left", "template_around_right", "template_jump_around_right",
                "template_opposite_right", "simple")
EVAL_SPLITS = {"cogs": ("dev", "test", "gen"), "scan": ("iid", "ood")}
#: --lr-schedule -> the Trainer's lr_scheduler_type
LR_SCHEDULES = {"linear": "linear", "constant": "constant_with_warmup"}


def score_columns(data: str) -> tuple[str, ...]:
    """Exact-match columns of the evaluation splits, then their BLEU columns."""
    splits = EVAL_SPLITS["scan" if data.startswith("scan:") else "cogs"]
    return splits + tuple(f"{s} BLEU" for s in splits)


def check_data(parser: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """``--data`` is ``cogs`` or an exact SCAN split; for COGS, ``--train`` / ``--dev`` / ``--test`` default to
    the files of ``--data-dir`` and must exist, and ``--gen`` defaults to ``gen.tsv`` beside ``--train`` when
    there is one. Each error names its flag and where the release is (``parser.error``)."""
    if a.data != "cogs" and not (a.data.startswith("scan:") and a.data[5:] in SCAN_CONFIGS):
        parser.error(f"--data: 'cogs' or scan:<config> with config in {list(SCAN_CONFIGS)}, got {a.data!r}")
    for split in ("train", "dev", "test"):
        if getattr(a, split) is None:
            setattr(a, split, os.path.join(a.data_dir, f"{split}.tsv"))
    if a.data == "cogs":
        missing = [f"--{s} {getattr(a, s)!r}" for s in ("train", "dev", "test") if not os.path.isfile(getattr(a, s))]
        if missing:
            parser.error(f"the COGS files are missing ({'; '.join(missing)}): download the public release "
                         f"({COGS_SOURCE}) and pass its folder as --data-dir, or run on SCAN with --data scan:<config>")
        if a.gen is None:
            guess = os.path.join(os.path.dirname(a.train), "gen.tsv")
            a.gen = guess if os.path.exists(guess) else None
    if a.gen is not None and not os.path.isfile(a.gen):
        parser.error(f"--gen {a.gen!r} is not a file (COGS gen.tsv: {COGS_SOURCE})")


def check_fit_flags(parser: argparse.ArgumentParser, a: argparse.Namespace) -> None:
    """The flags of training to a fit target agree: ``--fit-target`` and ``--map-fit-target`` have rows to
    score (``--fit-size``) and steps to check at (``--eval-every``); ``--restart-below`` goes with
    ``--fit-target``, under it, at a step before ``--steps``, with at least one restart allowed."""
    if a.fit_target and not (a.fit_size and a.eval_every):
        parser.error(f"--fit-target {a.fit_target:g} needs --fit-size > 0 and --eval-every > 0 (got {a.fit_size}, "
                     f"{a.eval_every})")
    if a.map_fit_target and not a.fit_size:
        parser.error(f"--map-fit-target {a.map_fit_target:g} needs --fit-size > 0 (the rows the map model's fit is "
                     "scored on)")
    check_restart_flags(parser, a, unit="step", cap=a.steps, cap_flag="--steps",
                        restarts_elsewhere=bool(getattr(a, "map_fit_target", 0)))  # the map model restarts too


def read_cogs(path: str, num_examples: int = 0, seed: int = 0, *, keep_exposure: bool = False,
              per_category: int = 0):
    """A COGS-style TSV (sentence, logical form, category) as a ``Dataset`` with columns
    ``source``, ``target``, ``category``; a seeded sample of ``num_examples`` rows (0: all).

    ``keep_exposure``: the sample holds every row whose category is not ``in_distribution`` (COGS
    train's 143 primitives and 12 exposure examples, the only rows with the words the gen set's
    lexical categories test) and ``num_examples`` minus those of the others. ``per_category``: a
    stratified sample instead, that many rows of each category (file order kept).

    Example:
        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x.tsv")
        >>> _ = open(path, "w").write("A frog hopped .\\tfrog ( x _ 1 ) AND hop . agent ( x _ 2 , x _ 1 )\\tin_distribution\\n")
        >>> read_cogs(path)[0]["category"]
        'in_distribution'
    """
    import random

    from datasets import Dataset

    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 2:
                raise ValueError(f"{path}:{lineno}: expected source<TAB>target[<TAB>category], got {line[:80]!r}")
            rows.append((parts[0], parts[1], parts[2] if len(parts) > 2 else ""))
    if per_category:
        rng, by_category = random.Random(seed), {}
        for i, r in enumerate(rows):
            by_category.setdefault(r[2], []).append(i)
        picked = sorted(i for _, idx in sorted(by_category.items()) for i in rng.sample(idx, min(per_category, len(idx))))
        rows = [rows[i] for i in picked]
    elif num_examples and num_examples < len(rows):
        kept = [r for r in rows if keep_exposure and r[2] != "in_distribution"]
        if len(kept) > num_examples:
            raise ValueError(f"--num-train {num_examples}: the {len(kept)} primitive/exposure rows of {path} do not "
                             "fit (give more rows, or --no-keep-exposure)")
        rest = [r for r in rows if not (keep_exposure and r[2] != "in_distribution")]
        rows = kept + random.Random(seed).sample(rest, num_examples - len(kept))
    return Dataset.from_dict({"source": [r[0] for r in rows], "target": [r[1] for r in rows],
                              "category": [r[2] for r in rows]})


def read_scan(config: str, *, num_train: int, num_eval: int, seed: int, cache_dir: str | None = None):
    """An exact SCAN split as ``(train pool, {"iid": ..., "ood": ...})`` with the COGS example's
    columns (``source``, ``target``, ``category``).

    The pool is a seeded sample of ``num_train`` rows of the split's train set (0: all but the
    i.i.d. rows); ``iid`` is ``num_eval`` other rows of that train set (never trained on: the
    in-distribution test SCAN lacks); ``ood`` is ``num_eval`` rows of the split's test set (0: all).
    """
    import numpy as np

    import hf_synthsample

    ds = hf_synthsample.load_dataset("scan", config, seed=seed, cache_dir=cache_dir)
    train, test = ds["train"], ds["test"]
    order = np.random.default_rng(seed).permutation(train.num_rows)
    n_iid = min(num_eval or 1000, train.num_rows // 5)
    pool_rows = order[n_iid:] if not num_train else order[n_iid:n_iid + num_train]

    def shaped(d, rows, category):
        d = d.select(np.sort(rows))
        return d.rename_columns({"commands": "source", "actions": "target"}).add_column(
            "category", [category] * d.num_rows)

    ood_rows = np.arange(test.num_rows) if not num_eval or num_eval >= test.num_rows else np.sort(
        np.random.default_rng(seed + 1).permutation(test.num_rows)[:num_eval])
    return shaped(train, pool_rows, "train"), {"iid": shaped(train, order[:n_iid], "iid"),
                                                "ood": shaped(test, ood_rows, config)}




class Experiment:
    """The shared pieces of every run: data, tokenizer, model settings, evaluation."""

    def __init__(self, a: argparse.Namespace):
        from hf_synthsample.cartography import add_example_ids
        from hf_synthsample.models import build_word_tokenizer

        self.a = a
        if a.data == "cogs":
            train = read_cogs(a.train, a.num_train, a.seed, keep_exposure=a.keep_exposure)
            self.evals = {"dev": read_cogs(a.dev, a.num_eval, a.seed), "test": read_cogs(a.test, a.num_eval, a.seed)}
            if a.gen:
                self.evals["gen"] = read_cogs(a.gen, a.num_eval, a.seed, per_category=a.gen_per_category)
        else:
            train, self.evals = read_scan(a.data[5:], num_train=a.num_train, num_eval=a.num_eval, seed=a.seed,
                                          cache_dir=a.cache_dir)
        # every row carries its example id: subsets are chosen by id (the data map's key), never by position
        self.train = add_example_ids(train)
        self.columns = score_columns(a.data)
        # the vocabulary is the training pool's (as in the paper): dev/test words never seen in
        # training become <unk> and those rows cannot be matched exactly
        self.tokenizer = build_word_tokenizer(self.train, columns=["source", "target"])
        self.max_new_tokens = a.max_new_tokens or 1 + max(
            len(t.split()) for ds in self.evals.values() for t in ds["target"])
        self.lengths = [len(t.split()) for t in self.train["target"]]

    def tokens_by_id(self) -> list[frozenset]:
        """Each pool row's words (source and target), indexed by example id: the OOV repair reads them by id."""
        from hf_synthsample.cartography import example_tokens

        tokens = [frozenset()] * (max(self.train["example_id"]) + 1)
        for i, t in zip(self.train["example_id"], example_tokens(self.train, ["source", "target"])):
            tokens[i] = t
        return tokens

    def rows(self, dm, example_ids) -> "Dataset":
        """The pool rows with these example ids (in the given order), matched by ``example_id``."""
        return self.train.select(dm.positions(self.train, list(example_ids)).tolist())

    def model(self, seed: int):
        from hf_synthsample.models import build_scratch_model

        a = self.a
        return build_scratch_model(
            self.tokenizer, "bart", seed=seed, d_model=a.d_model, encoder_layers=a.layers, decoder_layers=a.layers,
            encoder_attention_heads=a.heads, decoder_attention_heads=a.heads, encoder_ffn_dim=a.ffn,
            decoder_ffn_dim=a.ffn, max_position_embeddings=512)

    def fit_sample(self, rows, seed: int):
        """``fit_size`` rows of ``rows`` (a seeded sample, in row order): seed 0 is the reported fit's, seed 1
        the stopping rule's (a ``FitTargetCallback``)."""
        import numpy as np

        n = min(self.a.fit_size, len(rows))
        return rows.select(np.sort(np.random.default_rng(seed).permutation(len(rows))[:n]))

    def fit_exact_match(self, model, sample) -> float:
        """Exact match (%) of greedy decodes on training rows (decoded up to their longest target + 1 tokens:
        the target's words and the end of sequence; a longer output cannot match any of them)."""
        from hf_synthsample.models import evaluate_seq2seq

        limit = 1 + max(len(t.split()) for t in sample["target"])
        return float(evaluate_seq2seq(model, self.tokenizer, sample, source_column="source", target_column="target",
                                      max_new_tokens=limit, batch_size=128)["exact_match"])

    def fit_outputs(self, model, sample) -> list[str]:
        """The greedy decodes :meth:`fit_exact_match` scores (same length limit), one per row of ``sample``."""
        from hf_synthsample.models import generate_predictions

        limit = 1 + max(len(t.split()) for t in sample["target"])
        return generate_predictions(model, self.tokenizer, sample, source_column="source", max_new_tokens=limit,
                                    batch_size=128)

    def map_warmup_steps(self) -> int:
        """The data-map run's warm-up steps: ``--map-warmup`` (a share of its steps) when given, else ``--warmup-steps``."""
        import math

        a = self.a
        if a.map_warmup is None:
            return a.warmup_steps
        world = int(os.environ.get("WORLD_SIZE", "1"))
        return round(a.map_warmup * math.ceil(len(self.train) / (a.batch_size * world)) * a.map_epochs)

    def fit(self, dataset, name: str, *, seed: int, max_steps: int | None = None, epochs: float = 1.0, callbacks=(),
            model=None, keep_ids: bool = False, **training_args):
        """Train a fresh model on ``dataset`` (``max_steps`` optimizer steps, or ``epochs``)."""
        model = model if model is not None else self.model(seed)
        from hf_synthsample.models import train_seq2seq

        a = self.a
        training_args.setdefault("warmup_steps", a.warmup_steps)
        training_args.setdefault("learning_rate", a.lr)
        drop = [c for c in ("category", "example_id") if c in dataset.column_names and not (keep_ids and c == "example_id")]
        return train_seq2seq(
            model, self.tokenizer, dataset.remove_columns(drop), source_column="source",
            target_column="target", output_dir=os.path.join(a.out, "runs", name), epochs=epochs,
            max_steps=max_steps or -1, batch_size=a.batch_size, seed=seed, callbacks=callbacks,
            use_cpu=not cuda_available(), disable_tqdm=True, **training_args)

    def evaluate(self, trainer, trained_on=None, *, fit: float | None = None) -> dict[str, float | None]:
        """Exact match (%) and corpus BLEU of greedy decodes on each evaluation split (``gen*`` are
        ``None`` when the set is absent), and ``fit``: exact match on ``fit_size`` rows of
        ``trained_on`` (the run's own training rows), or ``fit`` when the caller already measured it on
        this model. BLEU is a secondary, graded view."""
        import numpy as np

        from hf_synthsample.metrics.scores import bleu
        from hf_synthsample.models import evaluate_seq2seq

        model = trainer.accelerator.unwrap_model(trainer.model)
        scores: dict[str, float | None] = {c: None for c in self.columns}
        for split, ds in self.evals.items():
            r = evaluate_seq2seq(model, self.tokenizer, ds, source_column="source", target_column="target",
                                 max_new_tokens=self.max_new_tokens, batch_size=128)
            scores[split] = float(r["exact_match"])
            # the logical forms are already whitespace-tokenized: no BLEU re-tokenization
            scores[f"{split} BLEU"] = float(bleu(r["predictions"], ds["target"], tokenize="none")["bleu"])
            scores[f"{split} distinct outputs"] = len(set(r["predictions"]))
            if split == "gen" and len(set(ds["category"])) > 1:  # COGS gen: exact match per category
                ok = np.array([" ".join(p.split()) == " ".join(t.split()) for p, t in zip(r["predictions"], ds["target"])])
                cats = np.array(ds["category"])
                scores["gen categories"] = {str(c): float(100.0 * ok[cats == c].mean()) for c in sorted(set(cats))}
        scores["fit"] = fit
        if fit is None and trained_on is not None and self.a.fit_size:  # with a fit target: on all rows, the figure it is about
            rows = trained_on if self.a.fit_target else self.fit_sample(trained_on, 0)
            scores["fit"] = self.fit_exact_match(model, rows)
        return scores


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def subset_ids(exp: Experiment, dm, region: str, fraction: float, tokens, seed: int) -> tuple[list[int], bool]:
    """Example ids of a subset, OOV-repaired when the sample allows it (returns ids, repaired)."""
    try:
        return dm.select(region, fraction, tokens=tokens, seed=seed).tolist(), True
    except ValueError as err:
        if "cannot cover" not in str(err):
            raise
        return dm.select(region, fraction, seed=seed).tolist(), False



def train_one(exp: Experiment, name: str, seed: int, data) -> dict:
    """Train and score one model on ``data`` (rows, Trainer keywords): its record (scores, fit, steps trained,
    fit curve, abandoned inits, seconds)."""
    rows, fit_kwargs = data
    a = exp.a
    t0, c0 = time.perf_counter(), time.process_time()

    def attempt(init_seed: int, last: bool):
        stopper, kwargs = None, dict(fit_kwargs)
        if a.fit_target:
            stopper = _stopper(exp, rows, f"{name} seed {seed}" + (f" (init {init_seed})" if init_seed != seed else ""),
                               last=last or not a.restart_below)
            kwargs["callbacks"] = [stopper]
        trainer = exp.fit(rows, f"{name}-seed{seed}", seed=seed, max_steps=a.steps, model=exp.model(init_seed),
                          lr_scheduler_type=LR_SCHEDULES[a.lr_schedule], **kwargs)
        note = stopper and {"init_seed": init_seed, "steps": int(trainer.state.global_step),
                            "fit_curve": [[p, round(v, 2)] for p, v in stopper.history]}
        return (trainer, stopper), stopper is None or not stopper.abandoned, note

    (trainer, stopper), init_seed, abandoned, _ = with_restarts(
        attempt, seed=seed, max_restarts=a.max_restarts if a.restart_below else 0,
        on_restart=lambda nxt, note: say(
            f"    {name} seed {seed}: fit {note['fit_curve'][-1][1]:.1f} % at step {note['fit_curve'][-1][0]} "
            f"(< {a.restart_below:g} %): this init did not learn; restarting from init {nxt}"))
    # a run stopped at the target has just been scored on all its rows (the stopper's last check)
    scores = exp.evaluate(trainer, trained_on=rows,
                          fit=stopper.history[-1][1] if stopper is not None and stopper.reached else None)
    record = {"run": name, "seed": seed, "rows": len(rows), **scores, "steps": int(trainer.state.global_step)}
    if "category" in rows.column_names:  # COGS: how many primitive / exposure rows the subset kept
        record["exposure_rows"] = sum(c != "in_distribution" for c in rows["category"])
    if stopper is not None:
        record.update(fit_target_reached=stopper.reached, fit_curve=[[p, round(v, 2)] for p, v in stopper.history],
                      init_seed=init_seed, abandoned_inits=abandoned)
    record.update(seconds=round(time.perf_counter() - t0, 1), cpu_seconds=round(time.process_time() - c0, 1))
    say(f"  {record}")
    if is_main_process():  # each finished run at once: a run stopped part-way keeps what it trained
        with open(os.path.join(a.out, "runs.partial.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
    return record


def _stopper(exp: Experiment, rows, label: str, *, last: bool):
    """The run's ``FitTargetCallback``: every ``eval_every`` steps the fit on ``fit_size`` of its rows, and once
    that reaches the target the fit on all of them (the figure the target is about); unless this is the
    ``last`` attempt, a fit still under ``restart_below`` at ``restart_after`` steps abandons it."""
    from hf_synthsample.models import FitTargetCallback

    a = exp.a
    sample = exp.fit_sample(rows, 1)
    guard = dict(abandon_below=a.restart_below, abandon_after=a.restart_after) if a.restart_below and not last else {}
    return FitTargetCallback(
        lambda model: exp.fit_exact_match(model, sample), a.fit_target, a.eval_every, unit="step", **guard,
        confirm=lambda model: exp.fit_exact_match(model, rows),
        on_check=lambda step, v: say(f"    {label}: step {step}, fit {v:.1f} % (stops at {a.fit_target:g} %)"))


class Runs:
    """The subset runs the tables ask for (a :class:`harness.RunBook`: one per subset and seed, trained once,
    ``--jobs`` at a time), and their table cells: mean±sd over the seeds, each model's fit beside it."""

    def __init__(self, exp: Experiment):
        self.exp = exp
        self.book = RunBook(lambda name, seed, data: train_one(exp, name, seed, data))
        self.records = self.book.records

    def train(self, name: str, make_rows, **fit_kwargs) -> dict:
        """Train one model per seed on ``make_rows(seed)``; returns the table cells (Score per column)."""
        exp = self.exp
        per_seed = []
        for seed in exp.a.seeds:
            rows = make_rows(seed)  # always called: the tables read what it notes (subset sizes, repairs)
            per_seed.append(self.book.get(name, seed, lambda s, rows=rows: (rows, fit_kwargs)))
        if None in per_seed:
            return {col: None for col in self.columns()}
        cells, fits = {}, [s["fit"] for s in per_seed]
        for col in exp.columns:
            values = [s[col] for s in per_seed]
            cells[col] = None if None in values else (
                Score.of(values) if col.endswith("BLEU") or None in fits else Score.of(values, fit=fits))
        if exp.a.fit_target:
            cells["steps"] = Score.of([s["steps"] for s in per_seed])
        return cells

    def columns(self) -> tuple[str, ...]:
        return self.exp.columns + (("steps",) if self.exp.a.fit_target else ())

    def run_planned(self, jobs: int) -> None:
        """Train every noted run, ``jobs`` at a time, every subset at the first seed first (a run stopped
        part-way has whole seeds); the records keep the order the tables asked."""
        self.book.train_planned(jobs, order=lambda name, seed: self.exp.a.seeds.index(seed))

    def category_table(self, names: list[tuple[str, str]]):
        """COGS gen exact match (%) per category, one column per run (mean±sd over seeds, with its fit)."""
        by_run = {label: [r for r in self.records if r["run"] == name and r.get("gen categories")]
                  for name, label in names}
        by_run = {k: v for k, v in by_run.items() if v}
        if not by_run:
            return None
        cats = sorted(next(iter(by_run.values()))[0]["gen categories"])
        table = ResultsTable("COGS gen exact match (%) per category", ["category", *by_run],
                             fit_note=describe_fit(self.exp))
        for cat in cats:
            table.add(category=cat, **{label: Score.of([r["gen categories"][cat] for r in recs])
                                       for label, recs in by_run.items()})
        table.add(category="all (sampled gen rows)", **{label: Score.of([r["gen"] for r in recs],
                                                                         fit=[r["fit"] for r in recs])
                                                         for label, recs in by_run.items()})
        return table


def describe_fit(exp: Experiment) -> str:
    rows = "all of the run's own training rows" if exp.a.fit_target else (
        f"{exp.a.fit_size} rows sampled from the run's own training rows")
    return f"fit: exact match on {rows} (the model fitted its data when this is high)." if exp.a.fit_size else ""


def steps_warning(exp: Experiment, records: list[dict]) -> str:
    """With ``--fit-target``, a warning when runs compared at one fraction and seed stopped at different steps:
    gen exact match rises with the steps trained past the fit target (18 ``--cpu`` runs on new pools: Spearman
    0.80 between a run's stopping step and its gen EM), so such a gap is partly training length."""
    if not exp.a.fit_target:
        return ""
    steps: dict = {}
    for r in records:
        if r.get("steps") is not None and "-" in r["run"] and not r["run"].startswith("curriculum"):
            steps.setdefault((r["run"].split("-", 1)[0], r["seed"]), {})[r["run"]] = r["steps"]
    uneven = {k: v for k, v in steps.items() if len(set(v.values())) > 1}
    if not uneven:
        return ""
    (fraction, seed), runs = next(iter(uneven.items()))
    shown = ", ".join(f"{name} {n}" for name, n in runs.items())
    return (f"Warning: runs compared here stopped at different steps ({len(uneven)} of {len(steps)} fraction/seed "
            f"groups; seed {seed}: {shown}). Out-of-distribution exact match keeps rising after the fit target is "
            "reached, so part of such a gap is training length: compare at equal steps too (--fit-target 0 "
            "--steps N, past every run's stop; --map-from reuses this map).")


def describe_map(exp: Experiment) -> str:
    """The data-map model's training and fit, stated with every table (a map ranks what its model learnt)."""
    a = exp.a
    fit = "" if exp.map_fit is None else f"; its fit (exact match on {a.fit_size} of its rows) {exp.map_fit:.1f} %"
    if exp.map_fit is not None and a.map_fit_target:
        fit += f" (target {a.map_fit_target:g} %" + (f"; init {exp.map_init} after {len(exp.map_abandoned)} restart(s)"
                                                    if exp.map_abandoned else "") + ")"
    elif exp.map_fit is not None and exp.map_fit < 10:
        fit += " (no --map-fit-target: a map of a model that learnt almost nothing, not a ranking of the data)"
    reused = f" (reused from {a.map_from}: --map-from)" if getattr(a, "map_from", None) else ""
    return f"data-map model{reused}: {a.map_epochs} epochs, {exp.map_steps} steps{fit}"


def map_failure(exp: Experiment) -> str:
    """The error when no init of the data-map model learnt its rows (under ``--map-fit-target``, or one output for
    nearly every row at ``--map-check-epoch``): every init's fit, why no subset is cut, and what to change, with
    values: a longer warm-up or a lower lr for a model that ignored its input, more epochs for one still learning."""
    a = exp.a
    notes = getattr(exp, "map_notes", None) or [*exp.map_abandoned, {"fit": exp.map_fit, "collapsed": False}]
    tried = ", ".join(f"{n['fit']:.1f} %" + (f" (one output for nearly every row at epoch {a.map_check_epoch})"
                                             if n.get("collapsed") else "") for n in notes)
    head = (f"error: the data-map model fitted {exp.map_fit:.1f} % of its rows (exact match on {a.fit_size} of them), "
            f"under --map-fit-target {a.map_fit_target:g} %, from {len(notes)} init(s) ({tried})"
            if a.map_fit_target else
            f"error: the data-map model gave one output for nearly every row from {len(notes)} init(s) ({tried})")
    warmup = exp.map_warmup_steps()
    steps = max((n.get("steps") or 0 for n in notes), default=0)
    now = f"now {warmup} steps" + (f", {a.map_warmup:g} of the run" if a.map_warmup is not None else "")
    longer = min(0.3, 2 * a.map_warmup) if a.map_warmup else 0.1
    lower = a.map_lr / 3
    todo = []
    if any(n.get("collapsed") or (n["fit"] is not None and n["fit"] < 1.0) for n in notes):
        todo.append(f"the model learnt nothing from its input (its decoder learns the targets' language and ignores "
                    f"the sentence when the lr rises too fast): warm up longer (--map-warmup {longer:g}; {now}) or "
                    f"lower the lr (--map-lr {lower:.2g}; now {a.map_lr:g})")
    if any(not n.get("collapsed") and n["fit"] is not None and n["fit"] >= 1.0 for n in notes):
        todo.append(f"a model that learnt part of its rows needs more epochs (--map-epochs {2 * a.map_epochs}; "
                    f"now {a.map_epochs}) or a lower lr (--map-lr {lower:.2g})")
    todo.append(f"more inits (--max-restarts {a.max_restarts + 1}; now {a.max_restarts})")
    if a.map_fit_target:
        todo.append(f"or a lower --map-fit-target (now {a.map_fit_target:g})")
    return (f"{head}: a map of a model that did not learn its rows ranks noise, so no subset is cut from it "
            f"(steps trained: {steps} at most). What to change: " + "; ".join(todo) + ".")


def save_datamap(exp: Experiment, dm) -> None:
    """Print the data map's summary and its model's fit; the main process writes ``datamap.png`` (a random
    third of the rows from 300 rows on, as the paper plots) and ``datamap.txt`` (the same text)."""
    from hf_synthsample.atomic import write_text_atomic

    a = exp.a
    summary = dm.summary(a.fractions[0])
    say(summary)
    say(describe_map(exp))
    if is_main_process():
        third = len(dm) >= 300
        dm.plot(os.path.join(a.out, "datamap.png"), sample_fraction=0.33 if third else None, seed=a.seed,
                title=f"{data_name(a)} data map ({a.measure}), {len(dm)} examples"
                + (", a random third plotted" if third else ""))
        write_text_atomic(os.path.join(a.out, "datamap.txt"), summary + "\n" + describe_map(exp) + "\n")


def layout_prefix(fraction: float) -> str:
    """The paper's table for a fraction: Table 2 holds the 33 % subsets, Table 3 the 50 % ones."""
    number = {0.33: 2, 0.5: 3}.get(round(fraction, 2))
    return f"Table {number} layout: " if number else ""


def table_name(fraction: float) -> str:
    """File name of a fraction's table: ``table2`` (33 %), ``table3`` (50 %), else ``subsets-<pct>``."""
    number = {0.33: 2, 0.5: 3}.get(round(fraction, 2))
    return f"table{number}" if number else f"subsets-{round(fraction * 100)}"


def data_name(a) -> str:
    return "COGS" if a.data == "cogs" else f"SCAN {a.data[5:]}"


def table_caption(exp: Experiment, dm) -> str:
    a = exp.a
    sizes = ", ".join(f"{k} {len(v)}" for k, v in exp.evals.items())
    gen = ("" if "gen" in exp.evals or a.data != "cogs" else
           " No generalization set given (--gen, or gen.tsv in --data-dir).")
    splits = ("" if a.data == "cogs" else
              " iid: held-out rows of the SCAN train split (never trained on); ood: the split's test set.")
    scale = {"paper": "the paper's model and budget", "cpu": "CPU scale (small model, sampled rows)",
             "gpu": "GPU scale: the paper's model size, one H100 in under 8 minutes (sampled rows, fewer steps)",
             "cpu_scan": "CPU scale (small model, few steps)"}.get(
        a.preset, "a pipeline check: NOT the paper's numbers")
    restart = (f"; a run under {a.restart_below:g} % fit at step {a.restart_after} restarted from another init, "
               f"at most {a.max_restarts} times (runs.json: abandoned_inits)" if a.restart_below else "")
    schedule = (f"every run trained until its exact match on all its own rows reaches {a.fit_target:g} % "
                f"(checked every {a.eval_every} steps on {a.fit_size} of them, on all once those reach it; at most "
                f"{a.steps} steps; 'steps': the steps each took{restart}), batches "
                if a.fit_target else f"every run {a.steps} steps ")
    if "gen" in exp.evals and a.gen_per_category:
        sizes += f" ({a.gen_per_category} of each of its {len(set(exp.evals['gen']['category']))} categories)"
    pool = (" (the 155 primitive and exposure rows of COGS train always in the sample)"
            if a.keep_exposure and a.data == "cogs" else "")
    return (f"{data_name(a)}, {len(exp.train)} training rows{pool}; evaluation rows: {sizes}; {schedule}of "
            f"{a.batch_size} per device, lr {a.lr:g} ({a.warmup_steps} warm-up steps, then {a.lr_schedule}; the map "
            f"run: {a.map_lr:g}, linear" + (f" after {exp.map_warmup_steps()} warm-up steps ({a.map_warmup:.0%} of "
                                             "its steps)" if a.map_warmup is not None else "") +
            f"), BART d_model {a.d_model}, "
            f"{a.layers}+{a.layers} layers; mean±sd over seeds {list(a.seeds)} (model init and the random subset); "
            f"data map from seed {a.seed}, epochs {dm.epochs[0]}..{dm.epochs[-1]} of {a.map_epochs}.{splits}{gen} "
            f"{describe_settings(a.preset.replace('_', '-'), a.overrides)}: {scale}. {describe_map(exp)}.")
