"""The machinery of ``oren_schema2qa.py``: the Schema2QA data as the models see it (entity
anonymization, the annotated splits, the synthetic pool's template split), the models (a word-level
scratch model, the BERT2BERT warm start and its one shared vocabulary, or a checkpoint), the
training loops (the two stages of pre-training and fine-tuning, each for fixed epochs or until it
fits, and training on a synthetic sample alone), the scoring (exact match, per template, the error
profile), the tables' rows and captions in both settings, and the files a run writes beside its table.
"""

from __future__ import annotations

import math
import os
import shutil
import time

__all__ = ["annotated_caption", "anonymize_batch", "anonymize_pair", "build_arch_model", "build_model",
           "build_warm_start", "decoded_batch", "error_profile", "load_annotated", "max_new_tokens",
           "plot_template_frequencies", "remove_empty_trainer_dir", "run_summary", "shared_tokenizer", "size_label", "synthetic_caption",
           "synthetic_row", "synthetic_split", "table_row", "timing_note", "train_and_evaluate", "train_synthetic",
           "train_to_fit", "warm_start_path", "write_reports", "write_synthetic_runs"]


def anonymize_pair(utterance: str, program: str) -> tuple[str, str]:
    """Replace each quoted value of ``program`` whose words occur contiguously in ``utterance`` by
    ``QUOTED_STRING_i`` on both sides (``i`` by first appearance; a repeated value keeps its
    placeholder). Values not found verbatim in the utterance stay as they are.

    Example:
        >>> anonymize_pair('who wrote the good earth ?', 'filter id =~ " good earth " => notify')
        ('who wrote the QUOTED_STRING_0 ?', 'filter id =~ " QUOTED_STRING_0 " => notify')
    """
    words, toks = utterance.split(), program.split()
    out, seen, i = [], {}, 0
    while i < len(toks):
        if toks[i] != '"':
            out.append(toks[i])
            i += 1
            continue
        try:
            j = toks.index('"', i + 1)
        except ValueError:  # an unbalanced quote: leave the rest untouched
            out.extend(toks[i:])
            break
        value = tuple(toks[i + 1:j])
        at = _find(words, value) if value else -1
        if value in seen or at >= 0:
            if value not in seen:
                seen[value] = f"QUOTED_STRING_{len(seen)}"
                words = words[:at] + [seen[value]] + words[at + len(value):]
            out += ['"', seen[value], '"']
        else:
            out += toks[i:j + 1]
        i = j + 1
    # a value mentioned twice in the utterance: every mention becomes its placeholder
    for value, name in seen.items():
        at = _find(words, value)
        while at >= 0:
            words = words[:at] + [name] + words[at + len(value):]
            at = _find(words, value)
    return " ".join(words), " ".join(out)


def _find(words: list[str], value: tuple[str, ...]) -> int:
    n = len(value)
    for s in range(len(words) - n + 1):
        if tuple(words[s:s + n]) == value:
            return s
    return -1


def decoded_batch(tokenizer):
    """``Dataset.map(batched=True)`` function: ``program`` as ``tokenizer`` encodes and decodes it."""
    def fn(batch: dict) -> dict:
        ids = tokenizer(batch["program"], add_special_tokens=False)["input_ids"]
        return {"program": [" ".join(t.split()) for t in tokenizer.batch_decode(ids, skip_special_tokens=True)]}
    return fn


def anonymize_batch(batch: dict) -> dict:
    """``Dataset.map(batched=True)`` form of :func:`anonymize_pair` on ``utterance`` / ``program``."""
    pairs = [anonymize_pair(u, p) for u, p in zip(batch["utterance"], batch["program"])]
    return {"utterance": [u for u, _ in pairs], "program": [p for _, p in pairs]}


def load_annotated(data_dir: str, *, max_train: int = 0, max_eval: int = 0) -> dict:
    """``{"train", "iid", "comp"}``: the shared annotated train split (its first ``max_train`` rows; 0: all)
    and the two test splits (the first ``max_eval`` rows of each; 0: all)."""
    import hf_synthsample

    iid = hf_synthsample.load_dataset("schema2qa", "annotated-iid", annotated_dir=data_dir)
    comp = hf_synthsample.load_dataset("schema2qa", "annotated-compositional", annotated_dir=data_dir, split="test")
    annotated = {"train": iid["train"], "iid": iid["test"], "comp": comp}
    for limit, splits in ((max_eval, ("iid", "comp")), (max_train, ("train",))):
        if limit:
            annotated.update({s: annotated[s].select(range(min(limit, len(annotated[s])))) for s in splits})
    return annotated


def size_label(k: int) -> str:
    """The paper's size suffix: 1000 -> ``1K``, 120000 -> ``120K``, 40 -> ``40``."""
    return f"{k // 1000}K" if k >= 1000 and k % 1000 == 0 else f"{k / 1000:g}K" if k >= 1000 else str(k)


def run_summary(row: str, seed: int, res: dict) -> str:
    """The progress line of a finished run: its fit (each stage's, in the annotated setting), its epochs,
    its scores and its CPU time (``res``: :func:`train_and_evaluate` or :func:`train_synthetic`)."""
    if "finetune_epochs" not in res:  # the synthetic split: one stage, scored on the held-out templates
        return (f"{row} seed {seed}: fit {res['fit']:.1f} after {res['epochs']} epochs (curve {res['fit_curve']}), "
                f"comp EM {res['comp']:.1f}, per-template {res['template_comp']:.1f}, {res['cpu_s']:.0f} CPU-s")
    pretrained = (f"pre-train fit {res['pretrain_fit']:.1f} after {res['pretrain_epochs']} epochs"
                  + (f" (annealed from epoch {res['pretrain_annealed_from']})" if "pretrain_annealed_from" in res else "")
                  + ", " if res["pretrain_fit"] is not None else "")
    if res.get("abandoned_inits"):
        pretrained = f"init {res['init_seed']} after {len(res['abandoned_inits'])} restart(s), " + pretrained
    return (f"{row} seed {seed}: {pretrained}fit {res['fit']:.1f} after {res['finetune_epochs']} fine-tuning epochs "
            f"(curve {res['finetune_curve']}), iid EM {res['iid']:.1f}, comp EM {res['comp']:.1f}, "
            f"{res['cpu_s']:.0f} CPU-s")


def plot_template_frequencies(reports, path: str) -> str:
    """Normalized template frequency by rank, one line per sample (the view of the paper's Fig. 7):
    a flat, long line is a structurally diverse sample."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hf_synthsample.atomic import save_figure_atomic

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for rep in reports:
        counts = sorted(rep.template_counts.values(), reverse=True)
        ax.plot(range(1, len(counts) + 1), [c / rep.num_rows for c in counts], label=f"{rep.name} ({len(counts)})")
    ax.set_yscale("log")
    ax.set_xlabel("template rank")
    ax.set_ylabel("share of the sample")
    ax.set_title("Abstract templates of each synthetic sample")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return save_figure_atomic(fig, path, dpi=100)


def warm_start_path(a) -> str | None:
    """The encoder folder of a warm start (``--init minilm-bert2bert`` / ``warm:FOLDER``), else ``None``."""
    if a.init == "minilm-bert2bert":
        from hf_synthsample.models import shipped_minilm_path

        return shipped_minilm_path()
    return a.init[len("warm:"):] if a.init.startswith("warm:") else None


def build_warm_start(a, texts, seed: int):
    """``(model, tokenizer)``: the BERT2BERT warm start of :func:`warm_start_path`, its vocabulary adapted
    to ``texts`` (the training rows, ``utterance`` and ``program``): every program word a whole token,
    only the word pieces the rows use kept. The same ``texts`` give the same tokenizer in every run."""
    from hf_synthsample.models import warm_start_seq2seq

    utterances, programs = texts
    words = sorted({w for p in programs for w in p.split()})
    return warm_start_seq2seq(warm_start_path(a), decoder_layers=a.decoder_layers, seed=seed, new_tokens=words,
                              keep_vocabulary=list(utterances) + list(programs),
                              hidden_dropout_prob=a.dropout, attention_probs_dropout_prob=a.dropout)


def build_model(a, tokenizer, seed: int):
    """A fresh model for one row: the checkpoint in ``a.init``, or a seeded scratch model
    (``a.arch``: the word-level T5 of width ``a.d_model``, or :func:`build_arch_model` of width
    ``a.hidden_size``)."""
    from hf_synthsample.models import build_scratch_model, load_seq2seq

    if warm_start_path(a) is not None:
        return build_warm_start(a, a.vocab_texts, seed)
    if a.init == "scratch":
        if a.arch != "t5":
            return build_arch_model(a, tokenizer, seed, a.hidden_size), tokenizer
        return build_scratch_model(tokenizer, "t5", seed=seed, d_model=a.d_model, num_layers=a.layers,
                                   num_decoder_layers=a.layers, d_ff=a.ffn, num_heads=a.heads,
                                   d_kv=a.d_model // a.heads), tokenizer
    import torch

    torch.manual_seed(seed)
    return load_seq2seq(a.init)


def train_and_evaluate(a, tokenizer, pretrain, annotated, seed: int, workdir: str) -> dict:
    """Pre-train on ``pretrain`` (skipped when ``None``), fine-tune on the annotated train split,
    exact match (%) on the two test splits and on the annotated train rows (``fit``).

    With ``a.fit_target > 0`` each stage trains until it fits (:func:`train_to_fit`: the synthetic
    sample, at most ``a.pretrain_epochs``; the annotated rows, at most ``a.finetune_epochs``), else
    for exactly that many epochs (linear decay). With ``a.restart_below``, a first stage whose fit is
    still under it at epoch ``a.restart_after`` is abandoned and the model built again from init
    ``seed + 1000`` (then ``+ 2000``, ... at most ``a.max_restarts`` times; the data order stays
    ``seed``). Also returns each stage's epochs and fit curve, the pre-trained model's fit on its
    sample, the init used and the abandoned ones, and the compositional predictions."""
    from harness import with_restarts

    from hf_synthsample.models import evaluate_seq2seq

    t0 = time.process_time()
    splits = [annotated[s] for s in ("train", "iid", "comp")] + ([pretrain] if pretrain is not None else [])
    max_new = max_new_tokens(tokenizer, *splits)
    restarts = a.max_restarts if a.fit_target and a.restart_below else 0

    first = "pretrain" if pretrain is not None else "finetune"  # the stage that starts from the init

    def attempt(init_seed: int, last: bool):
        model, tok = build_model(a, tokenizer, init_seed)
        out = _train_stages(a, model, tok, pretrain, annotated, seed, workdir, max_new,
                            guarded=None if last else first)
        note = {"init_seed": init_seed, "stage": first, "fit_curve": out[f"{first}_curve"]}
        return (model, tok, out), not out["abandoned"], note

    (model, tokenizer, out), init_seed, abandoned, _ = with_restarts(
        attempt, seed=seed, max_restarts=restarts,
        on_restart=lambda nxt, note: print(
            f"  init {note['init_seed']}: {note['stage']} fit {note['fit_curve'][-1][1]:.1f} % at epoch "
            f"{note['fit_curve'][-1][0]} (< {a.restart_below:g} %): restarting from init {nxt}", flush=True))
    out.update(init_seed=init_seed, abandoned_inits=abandoned)
    model.eval()
    # fit: the same decoding on every annotated row the model was fine-tuned on
    for split, test in (("fit", annotated["train"]), ("iid", annotated["iid"]), ("comp", annotated["comp"])):
        res = evaluate_seq2seq(model, tokenizer, test, source_column="utterance", target_column="program",
                               batch_size=64, max_new_tokens=max_new)
        out[split] = float(res["exact_match"])
        if split == "comp":
            out["comp_predictions"] = [" ".join(p.split()) for p in res["predictions"]]
    out["cpu_s"] = time.process_time() - t0
    return out


def _train_stages(a, model, tokenizer, pretrain, annotated, seed: int, workdir: str, max_new: int, *,
                  guarded: str | None) -> dict:
    """The two stages of :func:`train_and_evaluate` on ``model``; the stage named ``guarded`` may be
    abandoned (``out["abandoned"]``) under ``a.restart_below`` at epoch ``a.restart_after``."""
    from hf_synthsample.models import evaluate_seq2seq, train_seq2seq

    out = {"pretrain_epochs": 0, "pretrain_curve": [], "pretrain_fit": None, "abandoned": False}
    for stage, rows, cap in (("pretrain", pretrain, a.pretrain_epochs), ("finetune", annotated["train"], a.finetune_epochs)):
        if rows is None:
            continue
        workdir_stage = os.path.join(workdir, stage)
        stage_fit = None  # the fit on all its rows, when the stop measured it
        if a.fit_target > 0:
            run = train_to_fit(a, model, tokenizer, rows, cap, seed, workdir_stage, max_new,
                               guard=stage == guarded)
            out[f"{stage}_epochs"], out[f"{stage}_curve"], stage_fit = run["epochs"], run["fit_curve"], run["fit"]
            if run["annealed_from"] is not None:  # not fitted at its cap: trained on at a decaying lr
                out[f"{stage}_annealed_from"] = run["annealed_from"]
            if run["abandoned"]:
                out["abandoned"] = True
                return out
        else:
            train_seq2seq(model, tokenizer, rows, source_column="utterance", target_column="program",
                          output_dir=workdir_stage, epochs=cap, batch_size=a.batch_size, learning_rate=a.learning_rate,
                          seed=seed, warmup_steps=a.warmup, lr_scheduler_type="linear", disable_tqdm=True)
            out[f"{stage}_epochs"], out[f"{stage}_curve"] = cap, []
        if stage == "pretrain":  # how well the pre-trained model fits its sample, before fine-tuning
            if stage_fit is None:
                model.eval()
                stage_fit = evaluate_seq2seq(model, tokenizer, rows, source_column="utterance",
                                             target_column="program", batch_size=64, max_new_tokens=max_new)["exact_match"]
                model.train()
            out["pretrain_fit"] = float(stage_fit)
    return out


def error_profile(comp, runs: list[tuple[str, dict]]) -> str:
    """Markdown: per compositional test template (gold), its rows, and for each run label the
    exact-match hits, the rows whose prediction has the gold *abstract template* (structure right,
    an entity / property / table wrong) and the prediction templates most often emitted instead
    (``unparsable`` when the prediction is not a ThingTalk program)."""
    import collections

    from hf_synthsample.structure import abstract_template

    def template(program: str) -> str:
        try:
            return abstract_template(program)
        except ValueError:
            return "unparsable"

    gold_t, gold = list(comp["template"]), [" ".join(p.split()) for p in comp["program"]]
    order = [t for t, _ in collections.Counter(gold_t).most_common()]
    lines = ["| gold template | rows | run | EM hits | template right | most emitted instead (rows) |",
             "|---|---:|---|---:|---:|---|"]
    for t in order:
        idx = [i for i, g in enumerate(gold_t) if g == t]
        for label, preds in runs:
            pt = [template(preds[i]) for i in idx]
            hits = sum(preds[i] == gold[i] for i in idx)
            right = sum(p == t for p in pt)
            wrong = collections.Counter(p for p in pt if p != t).most_common(2)
            lines.append(f"| `{t}` | {len(idx)} | {label} | {hits} | {right} | "
                         + "; ".join(f"`{w}` ({n})" for w, n in wrong) + " |")
    return "\n".join(lines)


def table_row(method: str, ems: list[dict], reports=None, with_sd: bool = False) -> dict:
    """One table row: mean exact match over the repeats (and their sample sd), mean diversity figures.

    Example:
        >>> table_row("UAT+1K", [{"iid": 50.0, "comp": 10.0}, {"iid": 60.0, "comp": 20.0}], with_sd=True)["iid EM sd"]
        7.0710678118654755
    """
    import statistics

    row = {"method": method}
    if all("fit" in e for e in ems):
        row["train EM (fit)"] = statistics.fmean(e["fit"] for e in ems)
    if all(e.get("pretrain_fit") is not None for e in ems):
        row["pre-train fit"] = statistics.fmean(e["pretrain_fit"] for e in ems)
    if all("finetune_epochs" in e for e in ems):  # mean epochs of the two stages, "pre-train + fine-tune"
        row["epochs"] = (f"{statistics.fmean(e['pretrain_epochs'] for e in ems):g} + "
                         f"{statistics.fmean(e['finetune_epochs'] for e in ems):g}")
    for split in ("iid", "comp"):
        values = [e[split] for e in ems]
        row[f"{split} EM"] = statistics.fmean(values)
        if with_sd:
            row[f"{split} EM sd"] = statistics.stdev(values) if len(values) > 1 else None
    if reports:
        counts = [r.num_templates for r in reports]
        row["templates"] = counts[0] if len(counts) == 1 else statistics.fmean(counts)
        row["compound entropy"] = statistics.fmean(r.compound_entropy for r in reports)
        row["comp templates covered (%)"] = 100.0 * statistics.fmean(r.template_coverage for r in reports)
    return row


def synthetic_split(pool, test_size: float, seed: int, max_eval: int) -> tuple:
    """``(train side, compositional test)``: the pool's abstract templates held out whole
    (:func:`hf_synthsample.splits.template_split` on the ``template`` column, ``test_size`` of the
    rows), the test side then reduced to a seeded ``max_eval`` rows (0: all)."""
    from hf_synthsample.splits import template_split

    split = template_split(pool, template_column="template", test_size=test_size, seed=seed, size_tolerance=0.2)
    test = split["test"]
    if max_eval and len(test) > max_eval:
        test = test.shuffle(seed=seed).select(range(max_eval))
    return split["train"], test


def build_arch_model(a, tokenizer, seed: int, width: int):
    """A seeded scratch model of architecture ``a.arch`` (``lstm``: the attentional LSTM, hidden and
    embedding size ``width``; ``t5`` / ``bart``: ``a.layers`` + ``a.layers`` layers, d_model ``width``),
    dropout ``a.dropout``."""
    from hf_synthsample.models import build_scratch_model

    if a.arch == "lstm":
        return build_scratch_model(tokenizer, "lstm", seed=seed, hidden_size=width, embedding_dim=width,
                                   dropout=a.dropout)
    if a.arch == "t5":
        return build_scratch_model(tokenizer, "t5", seed=seed, d_model=width, num_layers=a.layers,
                                   num_decoder_layers=a.layers, d_ff=a.ffn, num_heads=a.heads,
                                   d_kv=width // a.heads, dropout_rate=a.dropout)
    return build_scratch_model(tokenizer, a.arch, seed=seed, d_model=width, encoder_layers=a.layers,
                               decoder_layers=a.layers, encoder_ffn_dim=a.ffn, decoder_ffn_dim=a.ffn,
                               encoder_attention_heads=a.heads, decoder_attention_heads=a.heads, dropout=a.dropout)


def train_to_fit(a, model, tokenizer, rows, max_epochs: float, seed: int, workdir: str, max_new: int, *,
                 guard: bool = False) -> dict:
    """Train ``model`` on ``rows`` until greedy decoding reproduces ``a.fit_target`` % of them (checked
    on 300 of them, on all once those reach it) every ``a.check_every`` epochs, at most ``max_epochs`` (batch
    ``a.batch_size``, constant lr ``a.learning_rate`` after a warm-up over ``a.warmup`` of the cap's steps; with
    ``a.anneal_epochs``, a run not fitted at the cap trains that many more epochs at a decaying lr, ``annealed_from``
    the cap). The one fit-checking loop of this example:
    the synthetic split and both stages of the annotated setting use it.
    ``guard``: a fit still under ``a.restart_below`` at epoch ``a.restart_after`` stops the run (``abandoned``).
    Returns ``{"epochs", "fit_curve": [(epoch, fit)], "cpu_s", "fit", "abandoned", "annealed_from"}`` (``fit``: on all rows
    when the target was reached, else ``None``)."""
    from hf_synthsample.models import FitTargetCallback, evaluate_seq2seq, train_seq2seq

    def fit_on(subset):
        return lambda model: evaluate_seq2seq(model, tokenizer, subset, source_column="utterance",
                                              target_column="program", batch_size=64,
                                              max_new_tokens=max_new)["exact_match"]

    # 300 rows at each check, all of them once those reach the target: the run stops when all its rows fit
    fit_rows = rows.select(range(min(300, len(rows))))
    anneal = a.anneal_epochs
    stop = FitTargetCallback(
        fit_on(fit_rows), a.fit_target, a.check_every, confirm=fit_on(rows) if len(rows) > len(fit_rows) else None,
        on_check=lambda epoch, fit: print(f"  epoch {epoch}: fit {fit:.1f} ({time.process_time():.0f} CPU-s)", flush=True),
        anneal=anneal, **(dict(abandon_below=a.restart_below, abandon_after=a.restart_after)
                          if guard and a.restart_below else {}))
    t0 = time.process_time()
    # the anneal's epochs come after the cap: the warm-up stays a share of the cap's steps, so a run fitted within
    # the cap trains exactly as without them
    warmup = math.ceil(a.warmup * math.ceil(max_epochs * math.ceil(len(rows) / a.batch_size))) if anneal else a.warmup
    trainer = train_seq2seq(model, tokenizer, rows, source_column="utterance", target_column="program",
                            output_dir=workdir, epochs=max_epochs + anneal, batch_size=a.batch_size,
                            learning_rate=a.learning_rate, seed=seed, warmup_steps=warmup,
                            lr_scheduler_type="constant_with_warmup", disable_tqdm=True, callbacks=[stop])
    # a run stopped at the target was just scored on all its rows (the last check): the caller need not decode them again
    return {"epochs": round(trainer.state.epoch or 0), "fit_curve": stop.history, "cpu_s": time.process_time() - t0,
            "fit": stop.history[-1][1] if stop.reached else None, "abandoned": stop.abandoned,
            "annealed_from": stop.annealed_from}


def max_new_tokens(tokenizer, *datasets) -> int:
    """Decoding length: the longest tokenized program of ``datasets`` plus 8."""
    return max(len(tokenizer(p)["input_ids"]) for d in datasets for p in d["program"]) + 8


def train_synthetic(a, tokenizer, sample, test, seed: int, workdir: str) -> dict:
    """A scratch model trained on ``sample`` alone until it fits ``a.fit_target`` % of its rows (checked
    every ``a.check_every`` epochs, at most ``a.epochs``); exact match on ``test``, per row and per test
    template."""
    import collections

    from hf_synthsample.models import evaluate_seq2seq

    model = build_arch_model(a, tokenizer, seed, a.hidden_size)
    max_new = max_new_tokens(tokenizer, sample, test)
    t0 = time.process_time()
    run = train_to_fit(a, model, tokenizer, sample, a.epochs, seed, workdir, max_new)
    model.eval()
    fit = run["fit"] if run["fit"] is not None else evaluate_seq2seq(
        model, tokenizer, sample, source_column="utterance", target_column="program", batch_size=64,
        max_new_tokens=max_new)["exact_match"]
    res = evaluate_seq2seq(model, tokenizer, test, source_column="utterance", target_column="program",
                           batch_size=64, max_new_tokens=max_new)
    per_template = collections.defaultdict(list)
    for t, p, g in zip(test["template"], res["predictions"], test["program"]):
        per_template[t].append(" ".join(p.split()) == " ".join(g.split()))
    template_em = 100.0 * sum(sum(v) / len(v) for v in per_template.values()) / len(per_template)
    return {"fit": float(fit), "comp": float(res["exact_match"]), "template_comp": template_em,
            "epochs": run["epochs"], "fit_curve": run["fit_curve"], "cpu_s": time.process_time() - t0,
            "per_template": {t: [sum(v), len(v)] for t, v in per_template.items()}}


def remove_empty_trainer_dir(out: str) -> None:
    """Remove ``out/trainer``, the Trainer's output folders (nothing is saved there: ``save_strategy="no"``),
    only while it holds no file: a file in it is someone's, and stays."""
    trainer_dir = os.path.join(out, "trainer")
    if not any(files for _, _, files in os.walk(trainer_dir)):
        shutil.rmtree(trainer_dir, ignore_errors=True)


def shared_tokenizer(a, annotated: dict, samples: dict, say=print) -> tuple:
    """``(tokenizer, annotated, samples)``: the one vocabulary every row trains with (same model size
    and init), built from all training text, never the test splits: a word tokenizer for a scratch
    model, the warm start's adapted vocabulary (also kept in ``a.vocab_texts`` for
    :func:`build_model`; the gold programs are then rewritten as that tokenizer decodes them), or
    ``None`` for a checkpoint (its own tokenizer)."""
    tokenizer = None
    if a.init == "scratch":
        from datasets import concatenate_datasets

        from hf_synthsample.models import build_word_tokenizer

        # one vocabulary for every row (same model size and init): all training text, never the test splits
        cols = ["utterance", "program"]
        texts = concatenate_datasets([annotated["train"].select_columns(cols)]
                                     + [d.select_columns(cols) for ds in samples.values() for d in ds])
        tokenizer = build_word_tokenizer(texts, columns=cols)
        say(f"word vocabulary: {len(tokenizer):,} tokens")
    elif warm_start_path(a) is not None:
        # one vocabulary for every row, from all training text (never the test splits); the gold
        # programs are then written as the tokenizer decodes them (an uncased word piece outside
        # that vocabulary comes back lower-cased), so exact match compares what a model can emit
        a.vocab_texts = ([u for d in [annotated["train"], *(d for ds in samples.values() for d in ds)] for u in d["utterance"]],
                         [q for d in [annotated["train"], *(d for ds in samples.values() for d in ds)] for q in d["program"]])
        _, tokenizer = build_warm_start(a, a.vocab_texts, a.seed)
        annotated = {s: d.map(decoded_batch(tokenizer), batched=True) for s, d in annotated.items()}
        samples = {r: [d.map(decoded_batch(tokenizer), batched=True) for d in ds] for r, ds in samples.items()}
        say(f"warm start from {warm_start_path(a)}: vocabulary adapted to {len(tokenizer):,} tokens")
    return tokenizer, annotated, samples


def write_reports(out: str, runs: list, results: list[dict], reports: dict, comp) -> None:
    """The files beside the annotated setting's table: ``templates.png`` (the samples' template
    rank-frequency), ``runs.json`` (each run's record), ``errors.md`` (:func:`error_profile` on the
    compositional test rows ``comp``) and ``diversity.md`` (the samples' diversity compared);
    the empty Trainer folder is removed."""
    import json

    from hf_synthsample.atomic import write_text_atomic
    from hf_synthsample.sampling.diversity import compare_subsets

    remove_empty_trainer_dir(out)
    all_reports = [rep for reps in reports.values() for rep in reps]
    plot_template_frequencies(all_reports, os.path.join(out, "templates.png"))
    write_text_atomic(os.path.join(out, "runs.json"), json.dumps(
        [{"method": r, "seed": s, **{k: v for k, v in res.items() if k != "comp_predictions"}}
         for (r, s, _), res in zip(runs, results)], indent=1))
    labels = [(f"{r} s{s}", res["comp_predictions"]) for (r, s, _), res in zip(runs, results)]
    write_text_atomic(os.path.join(out, "errors.md"),
                      "### Compositional test rows: what each model emits, per gold abstract template\n\n"
                      "EM hits: exact matches; template right: the prediction has the gold abstract template "
                      "(an entity, property or table wrong); most emitted instead: the predictions' own "
                      "templates when not the gold one.\n\n" + error_profile(comp, labels) + "\n")
    write_text_atomic(os.path.join(out, "diversity.md"),
                      "### Structural diversity of the synthetic samples\n\n"
                      "Entropies in nats; template coverage, D_A and D_C against the annotated compositional "
                      "test split.\n\n" + compare_subsets(all_reports) + "\n")


def anneal_note(a) -> str:
    """What ``--anneal-epochs`` added to training, for both settings' captions (empty when off)."""
    return (f", then up to {a.anneal_epochs} more with the lr decayed to 0 for a stage not fitted by its cap"
            if a.anneal_epochs else "")


def annotated_caption(a, annotated: dict, seeds: list[int]) -> str:
    """The annotated setting's table caption: the preset and overrides, the model and how each stage
    was trained, the repeats, and what each column measures."""
    from harness import describe_settings

    return (f"{describe_settings(a.preset, a.overrides)}; pool {a.pool_size:,} (seed {a.seed}); init {a.init}"
            + ((f" (word-level T5, d_model {a.d_model}, {a.layers}+{a.layers} layers)" if a.arch == "t5" else
                f" (word-level {a.arch}, width {a.hidden_size}, dropout {a.dropout:g})") if a.init == "scratch" else
               f" (BERT2BERT warm start: the encoder checkpoint as encoder and its first "
               f"{a.decoder_layers or 'all'} layers as decoder, new cross-attention; program words added as "
               f"whole tokens, unused word pieces dropped; gold programs as the tokenizer decodes them; "
               f"dropout {a.dropout:g})" if warm_start_path(a) is not None else "")
            + (f"; each stage trained until greedy decoding fits {a.fit_target:g} % of its rows (on 300, then on all), "
               f"checked every {a.check_every} epochs, at most {a.pretrain_epochs:g} epochs of pre-training and "
               f"{a.finetune_epochs:g} of fine-tuning (batch {a.batch_size}, constant lr {a.learning_rate:g} after a "
               f"{a.warmup * 100:g} % warm-up)"
               + anneal_note(a)
               if a.fit_target > 0 else f"; pre-train {a.pretrain_epochs:g} ep, fine-tune {a.finetune_epochs:g} ep (lr "
                                        f"{a.learning_rate:g}, linear decay after a {a.warmup * 100:g} % warm-up)")
            + f" on {len(annotated['train']):,} annotated rows; "
            + (f"a first stage still under {a.restart_below:g} % at epoch {a.restart_after} trained again from another "
               f"init (at most {a.max_restarts} times; runs.json keeps the abandoned inits' curves); "
               if a.fit_target > 0 and a.restart_below else "")
            + (f"mean (sd) of {a.repeats} repeats, seeds {seeds}" if a.repeats > 1 else f"seed {a.seed}")
            + f"; anonymized entities: {a.anonymize}; i.i.d. test {len(annotated['iid'])} rows, compositional "
            f"test {len(annotated['comp'])} rows. train EM (fit): exact match on all "
            f"{len(annotated['train']):,} annotated train rows (the fine-tuning data); pre-train fit: on all "
            "the synthetic sample after pre-training; epochs: pre-training + fine-tuning (mean). templates / "
            "compound entropy (nats) / comp templates covered: of the synthetic sample.")


def synthetic_caption(a, test, seeds: list[int]) -> str:
    """The ``--synthetic-split`` table's caption: the preset and overrides, the split, how each model was
    trained, the seeds, and what each column measures."""
    from harness import describe_settings

    return (f"{describe_settings(a.preset, a.overrides)} --synthetic-split; pool {a.pool_size:,} (seed {a.seed}), "
            f"templates held out whole ({a.test_size:g} of the rows), test {len(test)} rows of "
            f"{len(set(test['template']))} templates; scratch {a.arch} (width {a.hidden_size}) trained on the "
            f"sample alone until it fits {a.fit_target:g} % of its rows (on 300, then on all), checked every "
            f"{a.check_every} epochs, at most {a.epochs:g}{anneal_note(a)}; batch {a.batch_size}, lr {a.learning_rate:g} "
            f"after a {a.warmup * 100:g} % warm-up; "
            f"entities anonymized; mean over seeds {seeds} (sample and model seed), sd = sample sd. "
            "comp template EM: mean over test templates of their rows' EM. templates: of the sample; compound "
            "divergence (D_C, Keysers et al.) of the sample to the test rows: lower = more of the test's compounds "
            "seen.")


def synthetic_row(method: str, reports: list, results: list[dict]) -> dict:
    """A ``--synthetic-split`` table row: the means over one sampler's runs (one per seed) of the fit, the
    scores and epochs (``train_synthetic``'s results) and of its samples' diversity (``reports``), and the
    sample sd of comp EM (``None`` for one run)."""
    import statistics

    comp = [r["comp"] for r in results]
    return {"method": method, "train EM (fit)": statistics.fmean(r["fit"] for r in results),
            "comp EM": statistics.fmean(comp), "comp EM sd": statistics.stdev(comp) if len(comp) > 1 else None,
            "comp template EM": statistics.fmean(r["template_comp"] for r in results),
            "epochs": statistics.fmean(r["epochs"] for r in results),
            "templates": statistics.fmean(rep.num_templates for rep in reports),
            "compound divergence to test": statistics.fmean(rep.compound_divergence for rep in reports)}


def timing_note(start: float, cpu0: float, results: list[dict], jobs: int) -> str:
    """`` Wall time N s; CPU N s.`` since ``start`` / ``cpu0``: the CPU time of this process, and with
    ``jobs`` > 1 that of the forked workers too (each result's ``cpu_s``)."""
    cpu = time.process_time() - cpu0 + sum(r["cpu_s"] for r in results) * (jobs > 1)
    return f" Wall time {time.perf_counter() - start:.0f} s; CPU {cpu:.0f} s."


def write_synthetic_runs(out: str, runs: list, results: list[dict]) -> None:
    """``synthetic_runs.json``: each ``--synthetic-split`` run's method, seed and record (fit curve,
    per-template hits); the empty Trainer folder is removed."""
    import json

    from hf_synthsample.atomic import write_text_atomic

    write_text_atomic(os.path.join(out, "synthetic_runs.json"), json.dumps(
        [{"method": r[0], "seed": r[1], **res} for r, res in zip(runs, results)], indent=1))
    remove_empty_trainer_dir(out)
