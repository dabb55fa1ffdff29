"""Training dynamics for a stock ``transformers.Trainer``: :class:`TrainingDynamicsCallback`
(also importable under its first name, :class:`CartographyCallback`).

:func:`add_example_ids` numbers the rows and :class:`CartographyCollator` hands each batch its ids
(``remove_unused_columns=False``; :func:`~hf_synthsample.cartography.track_dynamics` does this
set-up in one call). At train start the callback hooks the model: a pre-hook pops the ids, a
forward hook reads the logits and labels of that very forward pass (no extra pass). Values stay on
the device until a sync point (epoch end, save, train end), where they are gathered across
processes and de-duplicated (each (example, epoch) kept the first time seen). ``on_save`` writes
them into ``checkpoint-N/cartography/`` so a resumed run loses and repeats nothing. Stored as
``dynamics.parquet`` (``eval_dynamics.parquet`` for the dropout-free pass) and ``cartography.json``
in ``output_dir`` (default ``<TrainingArguments.output_dir>/cartography``); epochs are the
Trainer's 0-based indices and example ids the dataset's own.

Example (see README "Dataset cartography" for a full run):
    >>> from hf_synthsample.cartography import CartographyCallback, CartographyCollator
    >>> cb = CartographyCallback(measures=("inv_ppl", "chia"))
    >>> cb.measures
    ('inv_ppl', 'chia')
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
from transformers import TrainerCallback

from ..logging import get_logger
from ..settings import Estimator

from ..atomic import write_json_atomic
from ..validation import check_writable_path
from ..hub.provenance import column_digests, dataset_fingerprint, model_record
from .ids import check_id_column, id_codes
from .settings import DynamicsSettings
from .measures import MEASURES, STEP_MEASURES, infer_task, sequence_measures
from .collator import ID_KEY, CartographyCollator, add_example_ids
from .fused_head import base_model, has_token_log_probs, logits_of, token_log_prob_measures
from .store import (_EVAL_SCHEMA, _TRAIN_SCHEMA, CHECKPOINT_SUBDIR, DYNAMICS_FILE, EVAL_DYNAMICS_FILE, META_FILE,
                    _concat, _dedup, _empty, _read_parquet, _write_parquet, load_dynamics, read_meta)

logger = get_logger(__name__)

__all__ = ["TrainingDynamicsCallback", "CartographyCallback", "CartographyCollator", "add_example_ids",
           "load_dynamics", "ID_KEY", "DYNAMICS_FILE", "EVAL_DYNAMICS_FILE", "META_FILE"]

# ----------------------------------------------------------------------------- callback
class TrainingDynamicsCallback(Estimator, TrainerCallback):
    """Records per-example, per-epoch training dynamics during ``Trainer.train()``.

    The arguments are the fields of :class:`~hf_synthsample.cartography.settings.DynamicsSettings`
    (``cb.settings``: what runs; assigning a field is ``set_params``):
    ``measures`` among :data:`~hf_synthsample.cartography.measures.MEASURES` (``correct`` and the
    gold token count always; ``bleu`` implies ``eval_pass``, a dropout-free pass at each epoch end);
    ``resume_from``'s dynamics must end at the resume step. Raises at construction for bad
    arguments, at train start for a dataset without valid ids or labels or a measure the model
    cannot give, and at the first forward when the model returns no logits.

    Example:
        >>> TrainingDynamicsCallback(measures=("aum", "forgetting", "el2n", "loss")).measures
        ('aum', 'forgetting', 'el2n', 'loss')
    """

    settings_class = DynamicsSettings
    positional = ("measures",)

    def __init__(self, *args: Any, **params: Any) -> None:
        # validated once, by the settings' fields (a bad value names its argument); they are what runs
        super().__init__(*args, **params)
        # fingerprints of copies of the training set holding the same rows (set by track_dynamics)
        self._known_fingerprints: list[str] = []
        # per column, digests of the rows of the training set track_dynamics saw (before its ids)
        self._known_digests: dict[str, str] = {}
        self._reset()

    # -- state
    @property
    def _step_measures(self) -> tuple:
        """The per-step measures beyond the always-computed ``inv_ppl``/``chia``/``loss``."""
        return tuple(m for m in ("aum", "min_margin", "margin_deficit", "el2n") if m in self.measures)

    def _reset(self) -> None:
        self._handles: list = []
        self._pending: list = []
        self._pending_eval: list[dict] = []
        self._train = _empty(_TRAIN_SCHEMA)
        self._eval = _empty(_EVAL_SCHEMA)
        self._epoch = 0
        self._order = 0
        self._ids = None
        self._state = None
        self._task = None
        self._dataset = None
        self._collate = None
        self._tokenizer = None
        self._num_examples = None
        self._model = None
        self._id_values = None  # sorted string ids (their codes are their ranks); None for integer ids
        self._code_of: dict | None = None
        self._row_codes = None  # per row of the training dataset, its id's code
        self._fingerprints: list[str] = []
        self._digests: dict[str, str] = {}
        self._model_record: dict | None = None

    # -- hooks on the model
    def _pre_hook(self, module, args, kwargs):
        self._ids = self._coded(kwargs.pop(ID_KEY, None))
        return args, kwargs

    def _coded(self, ids):
        """String ids (a list from the collator) as a tensor of their codes; host data, no device sync."""
        if ids is None or not isinstance(ids, (list, tuple)):
            return ids
        import torch

        if self._code_of is None:
            raise TypeError(f"id_column {self.id_column!r}: the batch carries string ids but the training dataset's "
                            f"ids are not strings")
        return torch.tensor([self._code_of[i] for i in ids], dtype=torch.long)

    def _post_hook(self, module, args, kwargs, output):
        ids, self._ids = self._ids, None
        if ids is None or not module.training:
            return None
        labels = kwargs.get("labels")
        if labels is None:
            raise ValueError(
                "CartographyCallback: the training forward pass got no `labels` (label smoothing and "
                "compute_loss_func pop them before the forward); the measures need the gold labels"
            )
        if has_token_log_probs(output):  # TRL's fused LM head: per-token log-probs, no logits
            m = token_log_prob_measures(output, labels, task=self._task, measures=self._step_measures)
        else:
            m = sequence_measures(logits_of(output, self.measures), labels, task=self._task,
                                  measures=self._step_measures)
        self._pending.append((ids.detach(), self._epoch, self._state.global_step, self._order, m))
        self._order += ids.shape[0]
        return None

    # -- helpers
    @staticmethod
    def _process():
        from accelerate import PartialState

        state = PartialState()
        return state.process_index, state.num_processes

    def _flush_pending(self) -> dict:
        import torch

        rank, _ = self._process()
        if not self._pending:
            return _empty(_TRAIN_SCHEMA)
        sizes = [p[0].shape[0] for p in self._pending]
        # one device->host copy per column, not one per step
        # measures not asked for are not computed: _concat leaves them NaN (and they are not written)
        cat = {k: torch.cat([p[4][k] for p in self._pending]).cpu().numpy()
               for k in ("inv_ppl", "chia", "loss", *self._step_measures, "correct", "num_tokens")}
        table = {
            "example_id": torch.cat([p[0] for p in self._pending]).cpu().numpy(),
            "epoch": np.repeat([p[1] for p in self._pending], sizes),
            "step": np.repeat([p[2] for p in self._pending], sizes),
            "order": np.concatenate([p[3] + np.arange(n) for p, n in zip(self._pending, sizes)]),
            "rank": np.full(sum(sizes), rank),
            **cat,
        }
        self._pending = []
        return _concat([table], _TRAIN_SCHEMA)

    def _sync(self) -> None:
        """Gather every process's new rows, merge them into the tables (same on every process)."""
        local = self._flush_pending()
        local_eval = _concat(self._pending_eval, _EVAL_SCHEMA)
        self._pending_eval = []
        _, world = self._process()
        if world > 1:
            from accelerate.utils import gather_object

            gathered = gather_object([(local, local_eval)])
            local = _concat([g[0] for g in gathered], _TRAIN_SCHEMA)
            local_eval = _concat([g[1] for g in gathered], _EVAL_SCHEMA)
        self._train = _merge(self._train, local, _TRAIN_SCHEMA)
        self._eval = _merge(self._eval, local_eval, _EVAL_SCHEMA)

    def _meta(self) -> dict:
        epochs = sorted(set(self._train["epoch"].tolist()))
        return {
            "format": "hf-synthsample cartography dynamics v1",
            "measures": list(self.measures),
            "task": self._task,
            "id_column": self.id_column,
            "num_examples": self._num_examples,
            # the training set recorded on: a data map takes rows by position from no other dataset
            "dataset_fingerprints": list(self._fingerprints),
            # per column (the id column aside), a digest of the training set's values in row order: a
            # copy of the rows reloaded from a file has another fingerprint but these digests
            "dataset_digests": dict(sorted(self._digests.items())),
            # the model the dynamics are of (a data-map subset's card names it)
            "model": self._model_record,
            "id_type": "str" if self._id_values is not None else "int",
            "epochs": epochs,
            "eval_pass": self.eval_pass,
            "eval_epochs": sorted(set(self._eval["epoch"].tolist())),
            # the optimizer steps these dynamics cover (a resume checks it reaches the resume step)
            "global_step": int(self._state.global_step) if self._state is not None else None,
        }

    def _write(self, folder: str) -> None:
        if self._process()[0] != 0:  # rank 0 writes
            return
        os.makedirs(folder, exist_ok=True)
        step = [m for m in STEP_MEASURES if m in self.measures]
        if not step and "forgetting" in self.measures:  # a data map needs one measure besides `correct`
            step = ["inv_ppl"]
        keep = ["example_id", "epoch", "step", "order", "rank", *step, "correct", "num_tokens"]
        _write_parquet(os.path.join(folder, DYNAMICS_FILE), self._with_ids(self._train), keep)
        if self.eval_pass:
            ekeep = ["example_id", "epoch", "step", "order", "rank", "inv_ppl", "chia",
                     *[m for m in step if m not in ("inv_ppl", "chia")], "correct", "num_tokens"]
            if "bleu" in self.measures:
                ekeep += ["bleu", "exact_match"]
            _write_parquet(os.path.join(folder, EVAL_DYNAMICS_FILE), self._with_ids(self._eval), ekeep)
        write_json_atomic(os.path.join(folder, META_FILE), self._meta(), indent=2, sort_keys=True)

    def _with_ids(self, table: dict) -> dict:
        """``table`` with the dataset's own ids in place of their codes."""
        if self._id_values is None:
            return table
        return {**table, "example_id": self._id_values[table["example_id"]]}

    def _final_dir(self, args) -> str:
        return self.output_dir or os.path.join(args.output_dir, "cartography")

    @property
    def dynamics(self) -> "Any":
        """The recorded training dynamics so far, as a ``pyarrow.Table`` (synced rows only)."""
        import pyarrow as pa

        return pa.table(self._train)

    # -- validation at train start
    def _validate(self, args, model, train_dataloader) -> None:
        dataset = getattr(train_dataloader, "dataset", None)
        self._dataset = dataset
        self._collate = getattr(train_dataloader, "collate_fn", None)
        names = getattr(dataset, "column_names", None)
        if names is not None:
            if self.id_column not in names:
                hint = (
                    " The Trainer removed it: set TrainingArguments(remove_unused_columns=False)."
                    if getattr(args, "remove_unused_columns", False)
                    else " Add one with hf_synthsample.cartography.add_example_ids(dataset)."
                )
                raise ValueError(f"CartographyCallback: the training dataset has no id column {self.id_column!r}.{hint} "
                                 f"(Or let hf_synthsample.cartography.track_dynamics(trainer) do the set-up.)")
            label_names = ["labels", "label", "label_ids", *(getattr(args, "label_names", None) or [])]
            if not any(n in names for n in label_names):
                raise ValueError(
                    f"CartographyCallback: the training dataset has no labels column (one of {label_names}); "
                    f"columns: {names}"
                )
            ids = check_id_column(dataset, self.id_column, "CartographyCallback: the training dataset")
            self._id_values, self._row_codes = id_codes(ids)
            if self._id_values is not None:
                self._code_of = {v: i for i, v in enumerate(self._id_values.tolist())}
            self._num_examples = int(len(ids))
            self._fingerprints = list(dict.fromkeys([*self._known_fingerprints, dataset_fingerprint(dataset)]))
            known = dict(self._known_digests)
            rest = [c for c in names if c != self.id_column and c not in known]  # a column-reduced copy: none
            self._digests = {**known, **column_digests(dataset, columns=rest)}
        elif dataset is not None and hasattr(dataset, "__len__"):
            self._num_examples = len(dataset)
        if not isinstance(self._collate, CartographyCollator) and not isinstance(
            getattr(self._collate, "data_collator", None), CartographyCollator
        ):
            raise ValueError(
                "CartographyCallback: wrap the Trainer's data collator in CartographyCollator(...) so the "
                "batches carry the example ids (or let hf_synthsample.cartography.track_dynamics(trainer) do the set-up)"
            )
        self._task = infer_task(base_model(model)) if self.task == "auto" else self.task
        self._model_record = model_record(base_model(model))
        accepted = [m for m in MEASURES if m != "bleu"]
        if "bleu" in self.measures and self._task == "classification":
            raise ValueError(
                "measures: 'bleu' needs greedy decodes of a generative model; this is task 'classification'. "
                f"Accepted measures for it: {accepted}"
            )
        config = getattr(model, "config", None)
        if self._task == "classification" and (
            getattr(config, "problem_type", None) in ("regression", "multi_label_classification")
            or getattr(config, "num_labels", 2) < 2
        ):
            raise ValueError(
                f"measures {list(self.measures)}: a {getattr(config, 'problem_type', None) or 'single-output'} head "
                f"(num_labels={getattr(config, 'num_labels', None)}) has no gold class to score; the measures "
                f"{accepted} need single-label classification with at least 2 classes"
            )
        if getattr(args, "label_smoothing_factor", 0) > 0:
            raise ValueError(
                "CartographyCallback: label_smoothing_factor > 0 makes the Trainer pop the labels before the "
                "forward pass; the measures need them (use label_smoothing_factor=0)"
            )

    # -- TrainerCallback events
    def on_train_begin(self, args, state, control, model=None, train_dataloader=None, **kwargs):
        self._reset()
        self._state = state
        self._tokenizer = kwargs.get("processing_class")
        self._validate(args, model, train_dataloader)
        check_writable_path("output_dir", self._final_dir(args), folder=True)  # before any step, not at the first write
        if state.global_step > 0:
            self._restore(args, state)
        self._model = model
        self._handles = [
            model.register_forward_pre_hook(self._pre_hook, with_kwargs=True),
            model.register_forward_hook(self._post_hook, with_kwargs=True),
        ]

    def _restore(self, args, state) -> None:
        ckpt = self.resume_from or os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        folder = os.path.join(ckpt, CHECKPOINT_SUBDIR)
        if not os.path.exists(os.path.join(folder, META_FILE)):
            raise ValueError(
                f"CartographyCallback: resuming at step {state.global_step} but {folder!r} holds no dynamics; "
                f"pass resume_from=<the checkpoint folder> so the earlier epochs are not lost"
            )
        meta = read_meta(os.path.join(folder, META_FILE))
        train = _dedup(_read_parquet(os.path.join(folder, DYNAMICS_FILE), _TRAIN_SCHEMA, self._id_values))
        # the dynamics must end where the Trainer resumes: an older checkpoint's would silently lose
        # the steps in between (an epoch's worth), a later one's would hold steps trained again
        saved = meta.get("global_step")
        if saved is None and len(train["step"]):  # written before global_step was recorded:
            saved = int(train["step"].max()) + 1  # rows of step S's forward passes carry S - 1
        if saved is not None and int(saved) != state.global_step:
            lost = (f"the examples of steps {int(saved) + 1}..{state.global_step} would be missing from the dynamics"
                    if int(saved) < state.global_step else
                    f"steps {state.global_step + 1}..{int(saved)} would be recorded from two different runs")
            raise ValueError(
                f"CartographyCallback: the Trainer resumes at step {state.global_step} but the dynamics in "
                f"{folder!r} reach step {int(saved)}; {lost}. Pass resume_from=<the checkpoint the Trainer resumes "
                f"from> (here {os.path.join(args.output_dir, f'checkpoint-{state.global_step}')!r}) or leave "
                f"resume_from unset"
            )
        self._train = train
        if os.path.exists(os.path.join(folder, EVAL_DYNAMICS_FILE)):
            self._eval = _dedup(_read_parquet(os.path.join(folder, EVAL_DYNAMICS_FILE), _EVAL_SCHEMA, self._id_values))
        self._order = int(self._train["order"].max()) + 1 if len(self._train["order"]) else 0
        logger.info(f"CartographyCallback: restored {len(self._train['example_id'])} rows from {folder}")

    def on_epoch_begin(self, args, state, control, **kwargs):
        # state.epoch is epoch + fraction done; a resumed run starts mid-epoch
        self._epoch = int(math.floor(state.epoch + 1e-6)) if state.epoch else 0

    def on_epoch_end(self, args, state, control, model=None, **kwargs):
        if self.eval_pass:
            from .eval_pass import run_eval_pass

            self._pending_eval.append(run_eval_pass(self, args, state, model if model is not None else self._model))
        self._sync()
        self._write(self._final_dir(args))

    def on_save(self, args, state, control, **kwargs):
        self._sync()
        ckpt = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        if os.path.isdir(ckpt):
            self._write(os.path.join(ckpt, CHECKPOINT_SUBDIR))

    def on_train_end(self, args, state, control, **kwargs):
        self._sync()
        self._write(self._final_dir(args))
        for h in self._handles:
            h.remove()
        self._handles = []


#: the first name of :class:`TrainingDynamicsCallback`, kept working
CartographyCallback = TrainingDynamicsCallback


def _merge(table: dict, new: dict, schema: dict) -> dict:
    """``table`` plus ``new`` rows, deduplicated; only the epochs the new rows touch are re-sorted."""
    if not len(new["example_id"]):
        return table
    first = int(new["epoch"].min())
    cut = int(np.searchsorted(table["epoch"], first, side="left"))
    old = {k: v[:cut] for k, v in table.items()}
    recent = {k: v[cut:] for k, v in table.items()}
    return _concat([old, _dedup(_concat([recent, new], schema))], schema)
