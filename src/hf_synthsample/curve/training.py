"""One model per split: the model a user brings (a factory or a checkpoint folder) or a scratch
seq2seq, trained with the stock ``Seq2SeqTrainer`` (a decoder-only causal LM: the stock ``Trainer`` on
prompt + completion, :mod:`hf_synthsample.models.causal`) until it fits its own rows
(:class:`~hf_synthsample.models.fit_stop.FitTargetCallback`), then scored on the split's test rows.

Example:
    >>> from hf_synthsample.curve.settings import CurveSettings
    >>> factory = resolve_model(None, CurveSettings(d_model=16, heads=2, layers=1, ffn=32).replace(column="commands"))
    >>> from datasets import Dataset, DatasetDict
    >>> split = DatasetDict(train=Dataset.from_dict({"commands": ["jump twice"], "actions": ["I_JUMP I_JUMP"]}),
    ...                     test=Dataset.from_dict({"commands": ["jump"], "actions": ["I_JUMP"]}))
    >>> model, tokenizer = factory(split, 0)
    >>> type(model).__name__, model.config.d_model, tokenizer.convert_ids_to_tokens(tokenizer("jump")["input_ids"])
    ('BartForConditionalGeneration', 16, ['jump', '</s>'])
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Union

from ..logging import get_logger
from .settings import CurveSettings
from .stats import LengthMix, error_kinds, subsample, template_novelty

if TYPE_CHECKING:  # pragma: no cover
    from datasets import DatasetDict

__all__ = ["ModelFactory", "ModelSpec", "resolve_model", "scratch_factory", "checkpoint_factory", "train_split",
           "describe_model", "factory_name", "scratch_options_given", "SCRATCH_OPTIONS"]

logger = get_logger(__name__)

#: ``factory(split, seed) -> (model, tokenizer)``: a fresh encoder-decoder model per call (the same
#: seed, the same weights) and its tokenizer; ``split`` is the ``DatasetDict(train, test)`` it will learn
ModelFactory = Callable[["DatasetDict", int], tuple]
#: what ``model=`` accepts: ``None`` (a scratch model from the settings), a checkpoint folder, a factory
ModelSpec = Union[None, str, os.PathLike, ModelFactory]


def scratch_factory(settings: CurveSettings) -> ModelFactory:
    """A factory of the settings' scratch model with a word tokenizer over the split's texts."""
    from ..models import build_scratch_model, build_word_tokenizer

    s = settings
    if s.architecture == "bart":
        sizes = dict(d_model=s.d_model, encoder_layers=s.layers, decoder_layers=s.layers, encoder_ffn_dim=s.ffn,
                     decoder_ffn_dim=s.ffn, encoder_attention_heads=s.heads, decoder_attention_heads=s.heads,
                     dropout=s.dropout)
    else:
        sizes = dict(d_model=s.d_model, num_layers=s.layers, d_ff=s.ffn, num_heads=s.heads, dropout_rate=s.dropout)

    def build(split: "DatasetDict", seed: int):
        texts = [str(t) for part in ("train", "test") for c in (s.source, s.target_column) for t in split[part][c]]
        tokenizer = build_word_tokenizer(texts)
        return build_scratch_model(tokenizer, s.architecture, seed=seed, **sizes), tokenizer

    return build


def checkpoint_factory(path: str | os.PathLike) -> ModelFactory:
    """A factory loading the checkpoint folder ``path`` afresh per split (checked here: a folder with
    a seq2seq model's or a decoder-only causal LM's ``config.json`` and tokenizer files; its
    ``model_kind`` attribute says which)."""
    from ..models.causal import checkpoint_kind

    folder = Path(path).expanduser()
    kind = checkpoint_kind(folder, "model")
    config = _read_config(folder, path)

    def load(split: "DatasetDict", seed: int):
        if kind == "causal_lm":
            from ..models.causal import load_causal

            return load_causal(folder)
        from ..models import load_seq2seq

        return load_seq2seq(folder)

    load.model_name = folder.name or str(path)  # type: ignore[attr-defined]  # the folder's name, no local path
    load.checkpoint_config = config  # type: ignore[attr-defined]
    load.model_kind = kind  # type: ignore[attr-defined]
    return load


def _read_config(folder: Path, path: Any):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(folder, local_files_only=True)
    except (ValueError, OSError, KeyError) as err:
        raise ValueError(f"model: {str(path)!r} has a config.json transformers cannot read: {err}") from None


def resolve_model(model: ModelSpec, settings: CurveSettings) -> ModelFactory:
    """``model`` as a factory (``None``: scratch, a folder: checkpoint); else ``TypeError``. The
    scratch model's options beside a model are refused (``ValueError`` naming them)."""
    if model is None:
        from ..models.causal import DEFAULT_PROMPT_TEMPLATE

        if settings.prompt_template != DEFAULT_PROMPT_TEMPLATE:
            raise ValueError("prompt_template: the scratch model is a seq2seq model, which reads the source text as "
                             "it is; a prompt template applies to a causal LM given as model=")
        return scratch_factory(settings)
    if isinstance(model, (str, os.PathLike)):
        factory = checkpoint_factory(model)
    elif callable(model):
        factory = model
    else:
        raise TypeError("model must be None (a scratch model from the settings), a checkpoint folder, or a callable "
                        f"(split, seed) -> (model, tokenizer); got {type(model).__name__}")
    changed = scratch_options_given(settings)
    if changed:
        raise ValueError(f"{', '.join(changed)}: the scratch model's options do not apply to a model given as model= "
                         "(a checkpoint folder or a factory): leave them at their defaults, or give no model")
    return factory


#: the settings that shape the scratch model (only when no model is given)
SCRATCH_OPTIONS = ("architecture", "d_model", "layers", "ffn", "heads", "dropout")


def scratch_options_given(settings: CurveSettings) -> list[str]:
    """The scratch model's settings that differ from their defaults."""
    default = CurveSettings()
    return [name for name in SCRATCH_OPTIONS if getattr(settings, name) != getattr(default, name)]


def factory_name(model: Any) -> str:
    """A factory's name for a card or a title: its ``model_name`` attribute, else its ``__qualname__``
    (the function's own name, without ``<locals>``); a lambda is "a lambda"."""
    own = getattr(model, "model_name", None)
    if isinstance(own, str) and own:
        return own
    name = getattr(model, "__qualname__", None) or type(model).__qualname__
    name = name.rsplit("<locals>.", 1)[-1]
    return "a lambda" if "<lambda>" in name else name


def describe_model(model: Any) -> dict[str, Any]:
    """What a built model is: class, ``model_type``, width, layers and parameter count (from its config)."""
    config = getattr(model, "config", None)
    out: dict[str, Any] = {"class": type(model).__name__}
    if config is not None:
        out["model_type"] = getattr(config, "model_type", None)
        width = next((getattr(config, k) for k in ("d_model", "hidden_size", "n_embd") if
                      isinstance(getattr(config, k, None), int)), None)
        if width is not None:
            out["d_model"] = width
        enc = next((getattr(config, k) for k in ("encoder_layers", "num_layers", "num_hidden_layers")
                    if isinstance(getattr(config, k, None), int)), None)
        dec = next((getattr(config, k) for k in ("decoder_layers", "num_decoder_layers")
                    if isinstance(getattr(config, k, None), int)), enc)
        from ..models.causal import model_kind

        kind = model_kind(model)
        if kind is not None:
            out["kind"] = kind
        if enc is not None:
            out["layers"] = str(enc) if kind == "causal_lm" else f"{enc}+{dec}"
    try:
        out["parameters"] = int(sum(p.numel() for p in model.parameters()))
    except (AttributeError, TypeError):
        pass
    return out


def _looks_like_tokenizer(obj: Any) -> bool:
    from transformers import PreTrainedTokenizerBase

    return isinstance(obj, PreTrainedTokenizerBase)


def _looks_like_model(obj: Any) -> bool:
    import torch

    return isinstance(obj, torch.nn.Module) and hasattr(obj, "generate")


def _built(made: Any) -> tuple:
    """The factory's ``(model, tokenizer)``, checked before any training."""
    if not isinstance(made, tuple) or len(made) != 2:
        raise TypeError(f"model: the factory must return (model, tokenizer), got {type(made).__name__}")
    model, tokenizer = made
    if _looks_like_tokenizer(model) and _looks_like_model(tokenizer):
        raise TypeError(f"model: the factory returned (tokenizer, model) ({type(model).__name__}, "
                        f"{type(tokenizer).__name__}); the contract is (model, tokenizer): swap them")
    if not _looks_like_model(model):
        raise TypeError(f"model: the factory must return (model, tokenizer) with a seq2seq model or a causal LM (a "
                        f"torch module with generate) first, got {type(model).__name__}")
    from ..models.causal import model_kind

    config = getattr(model, "config", None)
    if config is not None and not getattr(config, "is_encoder_decoder", False) and model_kind(model) is None:
        raise TypeError(f"model: the factory returned a {type(model).__name__}, not a seq2seq (encoder-decoder) "
                        "model or a decoder-only causal LM with its head (e.g. GPT2LMHeadModel, LlamaForCausalLM): "
                        "the curve fine-tunes one with Seq2SeqTrainer / Trainer")
    if not callable(tokenizer):
        raise TypeError(f"model: the factory must return (model, tokenizer) with a tokenizer second, got "
                        f"{type(tokenizer).__name__}")
    if model_kind(model) == "causal_lm" and getattr(tokenizer, "pad_token_id", 0) is None \
            and getattr(tokenizer, "eos_token", None) is not None:
        tokenizer.pad_token = tokenizer.eos_token  # a causal LM's tokenizer often has none; left-padded prompts need one
    return made


def _step_progress(bar: Any):
    """A ``TrainerCallback`` advancing a caller's bar by one per optimizer step."""
    from transformers import TrainerCallback

    class StepProgress(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            bar.update(1)

    return StepProgress()


def train_split(split: "DatasetDict", factory: ModelFactory, settings: CurveSettings, *, output_dir: str,
                name: str = "split", length_mix: LengthMix | None = None, progress: Any = None) -> dict[str, Any]:
    """Train one model on ``split["train"]`` until it fits (``fit_target`` on ``fit_rows``, at most
    ``max_steps``), then score it on ``test_rows`` of ``split["test"]``; returns the record. With a
    ``length_mix`` the record also holds the test score at that mix of output lengths; ``progress``: a
    caller's ``tqdm`` bar, advanced per step (to the model's whole budget at its end). The record's
    ``model`` is :func:`describe_model` of the model trained."""
    from ..models import FitTargetCallback
    from ..models.causal import DEFAULT_PROMPT_TEMPLATE, model_kind

    s, seed = settings, settings.sweep.seed
    model, tokenizer = _built(factory(split, seed))
    causal = model_kind(model) == "causal_lm"
    if not causal and s.prompt_template != DEFAULT_PROMPT_TEMPLATE:
        raise ValueError(f"prompt_template ({s.prompt_template!r}) is a causal LM's prompt; the model is a "
                         f"{type(model).__name__} (seq2seq), which reads the source text as it is: leave it at its "
                         "default")
    scored = subsample(split["test"], s.test_rows, seed + 1)  # the same positions for every split
    fit_rows = subsample(split["train"], s.fit_rows, seed + 2)
    references = [str(t) for d in (scored, fit_rows) for t in d[s.target_column]]
    if causal:  # the completion's tokens (no special ones), then EOS
        longest = max(len(ids) for ids in tokenizer(references, add_special_tokens=False)["input_ids"])
    else:
        longest = max(len(ids) for ids in tokenizer(text_target=references)["input_ids"])
    decode = dict(source_column=s.source, target_column=s.target_column, num_beams=s.num_beams,
                  max_new_tokens=longest + 1, batch_size=s.eval_batch_size)
    if causal:
        from ..models.causal import evaluate_causal as evaluate, train_causal as train

        decode["prompt_template"] = s.prompt_template
        trainer_options = {"prompt_template": s.prompt_template}
    else:
        from ..models import evaluate_seq2seq as evaluate, train_seq2seq as train

        trainer_options = {}

    def fit_score(m) -> float:
        return float(evaluate(m, tokenizer, fit_rows, **decode)["exact_match"])

    fit_score.__qualname__ = "the curve's fit score"

    def on_check(step: int, value: float) -> None:
        logger.info("%s: step %d, fit %.1f %% (target %g)", name, step, value, s.fit_target)
        if progress is not None:
            progress.set_postfix_str(f"{name}: fit {value:.1f} % at step {step}", refresh=False)

    budget = s.max_steps + s.settle_steps
    stop = FitTargetCallback(fit_score, s.fit_target, s.check_every, unit="step", on_check=on_check,
                             settle=s.settle_steps, max_steps=budget)
    callbacks = [stop] if progress is None else [stop, _step_progress(progress)]
    start = time.perf_counter()
    trainer = train(model, tokenizer, split["train"], source_column=s.source, target_column=s.target_column,
                    output_dir=output_dir, max_steps=budget, batch_size=s.batch_size, learning_rate=s.learning_rate,
                    seed=seed, lr_scheduler_type=s.scheduler, warmup_steps=s.warmup_steps, callbacks=callbacks,
                    disable_tqdm=True, **trainer_options)
    train_s = time.perf_counter() - start
    if progress is not None:  # a model that stopped early: the rest of its budget done
        progress.update(max(0, budget - int(trainer.state.global_step)))
    if not stop.reached:
        logger.warning("%s: the model did not reach its fit target %g %% in %d steps (fit %.1f %%): its test score "
                       "says little about generalization", name, s.fit_target, s.max_steps, stop.history[-1][1])
    result = evaluate(model, tokenizer, scored, **decode)
    references = [str(t) for t in scored[s.target_column]]
    # the exact_match metric's comparison (whitespace runs collapsed), row by row
    correct = [p.split() == r.split() for p, r in zip(result["predictions"], references)]
    by_length = {}
    if length_mix is not None:
        value, bins = length_mix.standardize(correct, LengthMix.words(references))
        by_length = {"test_exact_match_length_std": value, "test_by_length": bins}
    if s.sweep.language:
        column = s.sweep.column
        by_length["unseen_templates"] = template_novelty(split["train"][column], scored[column], correct,
                                                         s.sweep.language)
    return {"test_exact_match": float(result["exact_match"]), **by_length, "num_test_scored": int(scored.num_rows),
            "fit": float(stop.history[-1][1]), "num_fit": int(fit_rows.num_rows), "fit_reached": bool(stop.reached),
            "steps": int(trainer.state.global_step),
            "fit_step": int(stop.history[-1][0] if stop.settled_at is None else stop.settled_at),
            "fit_history": [[int(a), float(b)] for a, b in stop.history],
            "errors": error_kinds(result["predictions"], references), "model": describe_model(model),
            "train_seconds": round(train_s, 1), "eval_seconds": round(time.perf_counter() - start - train_s, 1)}
