"""The compositionality curve in one call: a sweep of splits at chosen compound divergences, one
model per split trained until it fits its own rows, each model's fit beside its test exact match,
and Spearman's rho between the splits' D_C and the test scores (Keysers et al. 2020).

Example (a toy language and a tiny model, 2 steps each: the pipeline, not a result):
    >>> from datasets import Dataset
    >>> rows = [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh" for a in "abcd" for b in "abc"]
    >>> ds = Dataset.from_dict({"program": rows, "output": [r.replace("(", "").replace(")", "") for r in rows]})
    >>> curve = compositionality_curve(ds, targets=[0.4, 0.6], column="program", language="sexpr",
    ...                                target_column="output", time_limit=5, max_steps=2, check_every=1,
    ...                                d_model=16, heads=2, layers=1, ffn=32, fit_rows=8, test_rows=8)
    {'train_runtime': ...}
    >>> [r["config"] for r in curve.records], [r["num_test_scored"] for r in curve.records]
    (['dc_0.40', 'dc_0.60'], [8, 8])
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from typing import TYPE_CHECKING, Any, Iterator

from ..logging import get_logger
from ..settings import Estimator, signature_from
from .result import CurveResult
from .settings import CurveSettings
from .training import ModelSpec, resolve_model, train_split

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["compositionality_curve", "CompositionalityCurve"]

logger = get_logger(__name__)


def _check_dataset(dataset: Any, settings: CurveSettings) -> None:
    """The dataset and its columns, before any work; a missing column names the setting."""
    settings.sweep.require_structure()  # a language to read the column with
    if not (hasattr(dataset, "column_names") and hasattr(dataset, "select") and hasattr(dataset, "features")):
        raise TypeError(f"dataset must be a datasets.Dataset (one split, e.g. load_dataset(...)['train']), "
                        f"got {type(dataset).__name__}")
    if len(dataset) == 0:
        raise ValueError("dataset has no rows")
    for name, column in (("column", settings.sweep.column), ("source_column", settings.source),
                         ("target_column", settings.target_column)):
        if column not in dataset.column_names:
            raise ValueError(f"{name}: the dataset has no column {column!r}; its columns: {dataset.column_names}")
    for name, column in (("source_column" if settings.source_column else "column", settings.source),
                         ("target_column", settings.target_column)):
        feature = dataset.features.get(column)
        dtype = getattr(feature, "dtype", None)
        if dtype not in ("string", "large_string"):
            raise ValueError(f"{name}: column {column!r} holds {dtype or type(feature).__name__}, not text: the model "
                             "reads and writes text (make it a string column first, e.g. "
                             f"dataset.map(lambda r: {{{column!r}: str(r[{column!r}])}}))")


def _describe(model: ModelSpec, s: CurveSettings, built: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The model that ran, as a line and as a record: a checkpoint's config and folder name (no local
    path), a factory's name, the scratch settings only for the scratch model; each with the built
    model's class, sizes and parameter count (``built``: :func:`~.training.describe_model`, per split)."""
    first = dict(built[0]) if built else {}
    counts = sorted({b.get("parameters") for b in built if b.get("parameters") is not None})
    if model is None:
        info = {"source": "scratch", "name": f"scratch {s.architecture.upper()}", "architecture": s.architecture,
                "d_model": s.d_model, "layers": f"{s.layers}+{s.layers}", "ffn": s.ffn, "heads": s.heads,
                "dropout": s.dropout}
        text = (f"scratch {s.architecture.upper()} d_model {s.d_model}, {s.layers}+{s.layers} layers, ffn {s.ffn}, "
                f"{s.heads} heads, dropout {s.dropout:g}")
    else:
        if isinstance(model, (str, os.PathLike)):
            name = os.path.basename(os.path.normpath(str(model)))  # no local path in a card
            info = {"source": "checkpoint", "name": f"checkpoint {name}", "checkpoint": name}
        else:
            from .training import factory_name

            name = factory_name(model)
            info = {"source": "factory", "name": f"factory {name}" if name != "a lambda" else "a factory (a lambda)",
                    "model_name": name}
        info.update({k: first[k] for k in ("kind", "class", "model_type", "d_model", "layers")
                     if first.get(k) is not None})
        if first.get("kind") == "causal_lm":
            info["prompt_template"] = s.prompt_template
        sizes = ", ".join(x for x in (first.get("kind") == "causal_lm" and "a causal LM",
                                      first.get("model_type") and f"{first['model_type']} ({first.get('class')})",
                                      first.get("d_model") and f"d_model {first['d_model']}",
                                      first.get("layers") and f"{first['layers']} layers") if x)
        text = info["name"] + (f": {sizes}" if sizes else "")
    if counts:
        info["parameters"] = counts[0] if len(counts) == 1 else counts
        text += ", " + (f"{counts[0]:,} parameters" if len(counts) == 1
                        else f"{counts[0]:,} to {counts[-1]:,} parameters (the vocabulary differs per split)")
    return text, info


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """``n`` torch threads for the block, the caller's number restored after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _random_divergence(dataset: "Dataset", sweep: Any, s: CurveSettings) -> float:
    """D_C of a seeded random split with the sweep's sizes, measured as its splits are: below it, a
    search lowers D_C only by choosing an unusual test side (SCAN: every one-phrase command in test)."""
    import numpy as np

    from ..splits.report import split_report

    sizes = next(iter(sweep.sizes.values()))
    order = np.random.default_rng(s.sweep.seed).permutation(len(dataset))
    test, train = np.sort(order[:sizes["test"]]), np.sort(order[sizes["test"]:sizes["test"] + sizes["train"]])
    return float(split_report(dataset.select(train), dataset.select(test), **sweep.report_kwargs).compound_divergence)


@signature_from(CurveSettings)
def compositionality_curve(dataset: "Dataset", model: ModelSpec = None, *, settings: CurveSettings | None = None,
                           progress: bool | None = None, **changes: Any) -> CurveResult:
    """The compositionality curve (a :class:`CurveResult`) of ``model`` on ``dataset``.

    ``model``: ``None`` (a scratch seq2seq from the settings), a checkpoint folder or a callable
    ``(split, seed) -> (model, tokenizer)`` (its ``model_name`` attribute, else its name, is the
    card's name for it); ``changes`` override ``settings``' fields (those of its ``sweep`` by their own
    names too: ``targets``, ``language``, ``restarts``, ...); the scratch model's settings
    beside a ``model`` are refused. A model that does not reach ``fit_target`` is reported, never
    dropped. Deterministic for a seed (whatever ``jobs``).

    ``progress``: one bar over the whole job (the models' training steps; ``None``: shown unless
    ``datasets``' bars are off). The fit checks are logged at INFO, which the curve shows unless
    hf-synthsample's verbosity was set (:func:`hf_synthsample.logging.set_verbosity`).
    """
    return CompositionalityCurve(settings, **changes).fit(dataset, model, progress=progress).result_


@contextlib.contextmanager
def _shown(bar: Any) -> Iterator[None]:
    """The curve's INFO records (fit checks, each model's scores) shown during the block, unless the
    user set hf-synthsample's verbosity; written above the bar, not through it."""
    import logging

    from ..logging import NOTSET, get_logger as library_logger

    root, curve_logger = library_logger(), logging.getLogger("hf_synthsample.curve")
    chosen = root.__dict__.get("_own_level", root.__dict__.get("level", NOTSET)) or curve_logger.level
    before = curve_logger.level
    if not chosen:
        curve_logger.setLevel(logging.INFO)
    try:
        if bar is not None and not bar.disable:
            from tqdm.contrib.logging import logging_redirect_tqdm

            with logging_redirect_tqdm(loggers=[root]):
                yield
        else:
            yield
    finally:
        curve_logger.setLevel(before)


def _curve(dataset: "Dataset", model: ModelSpec, s: CurveSettings, progress: bool | None = None) -> CurveResult:
    """:func:`compositionality_curve` with its settings made."""
    from ..progress import show_progress

    _check_dataset(dataset, s)
    factory = resolve_model(model, s)
    show_progress(progress, None)  # a bad value refused before any work
    budget = len(s.sweep.targets) * (s.max_steps + s.settle_steps)
    from tqdm.auto import tqdm

    bar = tqdm(total=budget, desc="compositionality curve", unit=" step",
               disable=not show_progress(progress, budget, min_total=1))
    try:
        with _shown(bar):
            return _run(dataset, model, factory, s, bar)
    finally:
        bar.close()


def _run(dataset: "Dataset", model: ModelSpec, factory: Any, s: CurveSettings, bar: Any) -> CurveResult:
    from ..splits import divergence_sweep

    start = time.perf_counter()
    sweep = divergence_sweep(dataset, settings=s.sweep, progress=False)
    targets = s.sweep.targets
    logger.info("sweep of %d splits in %.0f s: %s", len(sweep), sweep.seconds,
                ", ".join(f"{t:g} -> {sweep.compound_divergence[t]:.3f}" for t in targets))
    names = sweep.config_names
    # the sweep's random split of the same sizes and seed (measured as its splits are), else measured here
    baseline = sweep.random_baseline
    random_dc = baseline.compound_divergence if baseline is not None and baseline.compound_divergence is not None \
        else _random_divergence(dataset, sweep, s)
    tolerance = sweep.settings["divergence_tolerance"]  # what "at a target" means for the sweep
    below = [t for t in targets if sweep.compound_divergence[t] < random_dc - tolerance]
    if below:
        logger.warning("D_C target(s) %s lie below a random split's D_C %.3f: a search gets there by moving rows "
                       "with few compounds into test (SCAN: every one-phrase command), so those test sides are "
                       "not representative; a curve can start at the random level", ", ".join(f"{t:g}" for t in below),
                       random_dc)
    mix = None
    if s.length_bins:  # the whole dataset's mix of output lengths: every split is also scored at it
        from .stats import LengthMix

        mix = LengthMix.of(LengthMix.words(dataset[s.target_column]), s.length_bins)

    forked = not (s.jobs == 1 or len(targets) == 1)

    def one(i: int) -> dict[str, Any]:
        target = targets[i]
        if not forked:
            bar.set_description_str(f"compositionality curve, model {i + 1}/{len(targets)}", refresh=False)
        with tempfile.TemporaryDirectory(prefix="compositionality-curve-") as tmp:  # the Trainer's; nothing saved
            record = train_split(sweep.splits[target], factory, s, output_dir=tmp, name=names[target],
                                 length_mix=mix, progress=None if forked else bar)
        logger.info("%s: fit %.1f %% (%s, %d steps), test exact match %.1f %%%s", names[target], record["fit"],
                    "reached" if record["fit_reached"] else "NOT reached", record["steps"], record["test_exact_match"],
                    f" ({record['test_exact_match_length_std']:.1f} % at the dataset's length mix)" if mix else "")
        return record

    from ..processes import run_forked

    if not forked:
        with _torch_threads(s.threads):
            trained = [one(i) for i in range(len(targets))]
    else:  # forked workers (the factory may be any callable of the caller's); they die with this process
        bar.set_description_str(f"compositionality curve, {len(targets)} models in {s.jobs} processes")
        trained = run_forked(one, len(targets), s.jobs, threads=s.threads,
                             describe=lambda i: f"the model of split {names[targets[i]]}")
        bar.update(bar.total - bar.n)
    built = [record.pop("model", {}) for record in trained]
    sizes = sweep.sizes
    records = [{"target": t, "config": names[t], "compound_divergence": float(sweep.compound_divergence[t]),
                "atom_divergence": float(sweep.atom_divergence[t]), "train_rows": int(sizes[t]["train"]),
                "test_rows": int(sizes[t]["test"]), "seed": s.sweep.seed,
                "template_statement": sweep.template_statements.get(t), **record}
               for t, record in zip(targets, trained)]
    text, info = _describe(model, s, built)
    for record, b in zip(records, built):
        if b.get("parameters") is not None:
            record["parameters"] = b["parameters"]
    result = CurveResult(records=records, settings=s, sweep=sweep, model=text, model_config=info,
                         seconds=time.perf_counter() - start, random_compound_divergence=random_dc,
                         random_baseline=None if baseline is None else baseline.to_dict())
    std = result.spearman_rho_length_std
    logger.info("%s%s", result.headline(), f"; at the dataset's length mix {std:.3f}" if std == std and mix else "")
    if result.not_fitted:
        logger.warning("models that did not reach the fit target %g %%: D_C target(s) %s", s.fit_target,
                       ", ".join(f"{t:g}" for t in result.not_fitted))
    return result


class CompositionalityCurve(Estimator):
    """:func:`compositionality_curve` as an estimator: settings in, ``fit(dataset, model)``, results
    in ``result_``, ``records_``, ``spearman_rho_``, ``sweep_``.

    Example:
        >>> est = CompositionalityCurve(targets=[0.1, 0.5], seed=2)
        >>> est.get_params()["sweep__targets"], est.seed
        ((0.1, 0.5), 2)
    """

    settings_class = CurveSettings

    def fit(self, dataset: "Dataset", model: ModelSpec = None, *, progress: bool | None = None
            ) -> "CompositionalityCurve":
        """Run the curve of ``model`` on ``dataset`` (``progress``: as :func:`compositionality_curve`); returns ``self``."""
        result = _curve(dataset, model, self.settings, progress)
        self.result_, self.records_, self.sweep_ = result, result.records, result.sweep
        self.spearman_rho_ = result.spearman_rho
        return self
