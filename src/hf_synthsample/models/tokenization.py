"""Tokenizers built from a synthetic dataset's own vocabulary (``tokenizers`` inside ``transformers``).

One id per whitespace-separated word (SCAN, COGS, ThingTalk programs) or per character (Calculator
expressions), as ``transformers.PreTrainedTokenizerFast`` objects. Ids are deterministic: the
special tokens first (``<pad>``=0, ``<s>``=1, ``</s>``=2, ``<unk>``=3 by default), then the vocabulary
sorted. Encoding appends ``</s>``.

Example:
    >>> tok = build_word_tokenizer(["jump twice", "walk left"])
    >>> tok.convert_ids_to_tokens(tok("walk twice")["input_ids"])
    ['walk', 'twice', '</s>']
    >>> tok.decode(tok("jump  left")["input_ids"], skip_special_tokens=True)
    'jump left'
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

from ..validation import check_columns, check_int, check_str_tuple

if TYPE_CHECKING:  # pragma: no cover
    from transformers import PreTrainedTokenizerFast

__all__ = ["build_word_tokenizer", "build_char_tokenizer", "DEFAULT_SPECIAL_TOKENS", "CALCULATOR_ALPHABET"]

#: pad, beginning of sequence, end of sequence, unknown: in this order, ids 0..3.
DEFAULT_SPECIAL_TOKENS: tuple[str, str, str, str] = ("<pad>", "<s>", "</s>", "<unk>")
#: Every character a Calculator expression can hold (digits, operators, parentheses).
CALCULATOR_ALPHABET = "0123456789+-*()"


def _texts(texts: Any, columns: Any) -> Iterator[str]:
    """The strings to read (an iterable of str, or the given columns of a ``Dataset``), each checked."""
    if isinstance(texts, str):
        raise TypeError("texts must be an iterable of strings or a Dataset, got a single str (wrap it in a list)")
    if hasattr(texts, "column_names") and hasattr(texts, "features"):
        columns = check_str_tuple("columns", columns)
        if not columns:
            raise ValueError(
                f"columns: name the text columns to read when texts is a Dataset; available columns: {texts.column_names}"
            )
        check_columns(texts, columns, name="columns")
        from ..columns import column_arrow

        texts = [s for c in columns for s in column_arrow(texts, c).to_pylist()]
    elif columns is not None:
        raise ValueError("columns is only accepted when texts is a Dataset")
    elif not isinstance(texts, Iterable):
        raise TypeError(f"texts must be an iterable of strings or a Dataset, got {type(texts).__name__}")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts: item {i} is a {type(text).__name__} ({text!r}), expected str")
        yield text


def _check_specials(special_tokens: Any) -> tuple[str, str, str, str]:
    specials = check_str_tuple("special_tokens", special_tokens)
    if len(specials) != 4 or any(not s or any(ch.isspace() for ch in s) for s in specials):
        raise ValueError(
            "special_tokens must be 4 distinct non-empty strings without whitespace (pad, bos, eos, unk), "
            f"got {special_tokens!r}"
        )
    return specials  # type: ignore[return-value]


def _wrap(tokenizer_object: Any, specials: Sequence[str], name: str) -> "PreTrainedTokenizerFast":
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    pad, bos, eos, unk = specials
    eos_id = tokenizer_object.token_to_id(eos)
    # Every sequence ends with </s>: the decoder learns when to stop, the encoder sees the end.
    tokenizer_object.post_processor = processors.TemplateProcessing(
        single=f"$A {eos}", pair=f"$A {eos} $B {eos}", special_tokens=[(eos, eos_id)]
    )
    # no clean-up: it glues " ," and " ." to the previous word, corrupting "eat . agent ( x _ 2 , x _ 1 )"
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer_object, pad_token=pad, bos_token=bos, eos_token=eos,
                                   unk_token=unk, clean_up_tokenization_spaces=False, padding_side="right",
                                   name_or_path=name)


def build_word_tokenizer(
    texts: Any,
    *,
    columns: str | Sequence[str] | None = None,
    min_frequency: int = 1,
    special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
    extra_tokens: Sequence[str] = (),
) -> "PreTrainedTokenizerFast":
    """A whitespace word-level tokenizer whose vocabulary is the words of ``texts``.

    ``texts``: strings, or a ``Dataset`` whose ``columns`` are read (e.g. ``["source", "target"]``:
    one shared vocabulary). Words seen fewer than ``min_frequency`` times map to ``<unk>``;
    ``extra_tokens`` are added even when absent (e.g. a test split's words).

    Example:
        >>> tok = build_word_tokenizer(["b a", "a c"], min_frequency=2)
        >>> tok.convert_ids_to_tokens(tok("a b c")["input_ids"])
        ['a', '<unk>', '<unk>', '</s>']
        >>> len(tok)
        5
    """
    from tokenizers import Tokenizer, models, pre_tokenizers

    min_frequency = check_int("min_frequency", min_frequency, min=1)
    specials = _check_specials(special_tokens)
    extra = check_str_tuple("extra_tokens", extra_tokens)
    if any(not t or any(ch.isspace() for ch in t) for t in extra):
        raise ValueError(f"extra_tokens must be non-empty words without whitespace, got {list(extra)}")
    counts: Counter[str] = Counter()
    for text in _texts(texts, columns):
        counts.update(text.split())
    words = {w for w, c in counts.items() if c >= min_frequency} | set(extra)
    words -= set(specials)
    vocab = {tok: i for i, tok in enumerate(specials)}
    vocab.update({w: i for i, w in enumerate(sorted(words), start=len(specials))})
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=specials[3]))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # no decoder: ``tokenizers`` joins decoded tokens with single spaces, which is what we want
    return _wrap(tokenizer, specials, "hf-synthsample-word")


def build_char_tokenizer(
    texts: Any = None,
    *,
    alphabet: str | Sequence[str] | None = None,
    columns: str | Sequence[str] | None = None,
    special_tokens: Sequence[str] = DEFAULT_SPECIAL_TOKENS,
) -> "PreTrainedTokenizerFast":
    """A tokenizer with one token per character (Calculator expressions).

    The characters are those of ``alphabet``, plus those found in ``texts``; with neither, the
    Calculator alphabet ``0123456789+-*()``. Characters outside the vocabulary map to ``<unk>``.

    Example:
        >>> tok = build_char_tokenizer(alphabet="ab")
        >>> tok.convert_ids_to_tokens(tok("abz")["input_ids"])
        ['a', 'b', '<unk>', '</s>']
        >>> tok.decode(tok("ab")["input_ids"], skip_special_tokens=True)
        'ab'
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    specials = _check_specials(special_tokens)
    chars: set[str] = set()
    if alphabet is not None:
        if isinstance(alphabet, str):
            chars.update(alphabet)
        else:
            items = check_str_tuple("alphabet", tuple(alphabet))
            if any(len(c) != 1 for c in items):
                raise ValueError(f"alphabet must be a string or single characters, got {list(items)}")
            chars.update(items)
    if texts is not None:
        for text in _texts(texts, columns):
            chars.update(text)
    elif columns is not None:
        raise ValueError("columns is only accepted together with a Dataset as texts")
    if alphabet is None and texts is None:
        chars.update(CALCULATOR_ALPHABET)
    if not chars:
        raise ValueError("alphabet and texts hold no characters: the tokenizer would know no symbol")
    vocab = {tok: i for i, tok in enumerate(specials)}
    vocab.update({c: i for i, c in enumerate(sorted(chars - set(specials)), start=len(specials))})
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=specials[3]))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    return _wrap(tokenizer, specials, "hf-synthsample-char")
