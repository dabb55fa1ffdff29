"""Data-factor transforms for SCAN-like data (Zhou et al. 2023, section 3, 4.4, 5 and App. C),
written as ``Dataset.map(batched=True)`` functions.

* :class:`PrimitiveAugmenter` -- Kx primitive augmentation (Jiang et al. 2022, replicated in
  Zhou et al. App. C.1): ``k`` mutated copies ``walk_1 .. walk_k`` of each primitive of a lexicon.
* :class:`AugZero` -- augmentation with zero prior knowledge (App. C.3): ``k`` copies of the
  whole vocabulary.
* :func:`scan_complexity_columns` -- complexity difficulty (section 5.1).

Example:
    >>> import datasets
    >>> ds = datasets.Dataset.from_dict({"commands": ["walk left"], "actions": ["I_TURN_LEFT I_WALK"]})
    >>> list(ds.map(AugZero(3), batched=True)["commands"])
    ['walk left', 'walk_2 left_2', 'walk_3 left_3']
    >>> ds.map(scan_complexity_columns, batched=True)[0]["unique_primitives"]
    1
"""

from __future__ import annotations

import random
from typing import Iterable, Mapping, Sequence

from ..validation import check_choice, check_int
from .scan import SCAN_VERBS
from .scan_interpreter import FUNCTION_WORDS

__all__ = ["PrimitiveAugmenter", "AugZero", "scan_complexity_columns", "scan_lexicon", "induce_lexicon"]


def scan_lexicon(directions: bool = False, verbs: Sequence[str] = SCAN_VERBS) -> dict[str, str]:
    """Input word -> action token of the SCAN primitives (verbs, and ``left``/``right`` if asked).

    Example:
        >>> scan_lexicon(directions=True)["left"]
        'I_TURN_LEFT'
    """
    lex = {v: "I_" + v.upper() for v in verbs}
    if directions:
        lex.update(left="I_TURN_LEFT", right="I_TURN_RIGHT")
    return lex


#: Words that only shape the output (the dictionary ignores them, as the paper does).
STRUCTURE_WORDS = frozenset({"and", "after", "twice", "thrice", "around", "opposite", "turn"})


def induce_lexicon(commands: Sequence[str], actions: Sequence[str],
                   ignore: Iterable[str] = STRUCTURE_WORDS) -> dict[str, str]:
    """The rule-based dictionary of Zhou et al. App. C.1 (after Jiang et al. 2022): input word
    ``v`` -> output token ``w`` where ``v`` in the input is both sufficient (every example with
    ``v`` has ``w``) and necessary (every example with ``w`` has ``v``) for ``w`` in the output.
    Words in ``ignore`` (structure words such as ``around``, ``twice``) and words with no such
    token or several are left out.

    Example:
        >>> induce_lexicon(["walk", "walk left", "run twice", "turn left"],
        ...                ["I_WALK", "I_TURN_LEFT I_WALK", "I_RUN I_RUN", "I_TURN_LEFT"])
        {'left': 'I_TURN_LEFT', 'run': 'I_RUN', 'walk': 'I_WALK'}
    """
    if len(commands) != len(actions):
        raise ValueError(f"commands and actions must have the same length, got {len(commands)} and {len(actions)}")
    with_word: dict[str, set[int]] = {}
    with_token: dict[str, set[int]] = {}
    outputs = []
    for i, (c, a) in enumerate(zip(commands, actions)):
        for v in set(c.split()):
            with_word.setdefault(v, set()).add(i)
        out = set(a.split())
        outputs.append(out)
        for w in out:
            with_token.setdefault(w, set()).add(i)
    lexicon = {}
    ignore = frozenset(ignore)
    for v, rows in sorted(with_word.items()):
        if v in ignore:
            continue
        always = set.intersection(*(outputs[i] for i in rows))  # sufficient
        pairs = [w for w in always if with_token[w] <= rows]  # necessary
        if len(pairs) == 1:
            lexicon[v] = pairs[0]
    return lexicon


def _check_columns(batch: Mapping, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in batch]
    if missing:
        raise ValueError(f"columns: no column named {missing[0]!r} in the batch; available columns: {list(batch)}")


def _expand(batch: Mapping, source_rows: list[int], new_values: Mapping[str, list]) -> dict:
    """Every column of ``batch`` repeated along ``source_rows``, with ``new_values`` replacing some."""
    return {**{name: [values[i] for i in source_rows] for name, values in batch.items()}, **new_values}


class PrimitiveAugmenter:
    """Kx primitive augmentation, for ``Dataset.map(aug, batched=True, with_indices=True)``.

    Up to ``2k`` times per example, each lexicon word in it is replaced by one of its ``k + 1``
    forms (``walk``, ``walk_1`` .. ``walk_k``, uniformly), the same form everywhere in the example,
    and its action token likewise (``I_WALK`` -> ``I_WALK_j``); up to ``k`` distinct variants are
    kept, after the original row if ``keep_original``. Randomness is seeded by ``seed`` and the row
    index, so results do not depend on the batch size.

    Args:
        k: copies per primitive (2, 20, 200 in the paper); ``k >= 1``.
        lexicon: input word -> action token (default: SCAN's verbs, see :func:`scan_lexicon`).
        directions: add ``left``/``right`` to the default lexicon (the around-right split).
        columns: (input column, output column).

    Example:
        >>> import datasets
        >>> ds = datasets.Dataset.from_dict({"commands": ["jump twice"], "actions": ["I_JUMP I_JUMP"]})
        >>> out = ds.map(PrimitiveAugmenter(2, seed=0), batched=True, with_indices=True)
        >>> out.num_rows, out[0]["commands"]
        (3, 'jump twice')
    """

    def __init__(self, k: int, lexicon: Mapping[str, str] | None = None, *, directions: bool = False, seed: int = 0,
                 columns: Sequence[str] = ("commands", "actions"), keep_original: bool = True) -> None:
        self.k = check_int("k", k, min=1)
        self.seed = check_int("seed", seed, min=0)
        lex = dict(scan_lexicon(directions) if lexicon is None else lexicon)
        if not lex:
            raise ValueError("lexicon must map at least one word to its action token")
        if len(set(lex.values())) != len(lex):
            raise ValueError("lexicon: two words map to the same action token; each primitive needs its own")
        self.lexicon = lex
        if len(columns) != 2 or not all(isinstance(c, str) for c in columns):
            raise ValueError(f"columns must be (input column, output column), got {columns!r}")
        self.columns = tuple(columns)
        self.keep_original = bool(keep_original)

    @classmethod
    def for_split(cls, split: str, k: int, **kwargs) -> "PrimitiveAugmenter":
        """The paper's setting for a SCAN split: verbs for ``addprim_jump``; verbs and directions
        for ``template_around_right``."""
        check_choice("split", split, ["addprim_jump", "template_around_right"])
        return cls(k, directions=split == "template_around_right", **kwargs)

    def _variants(self, command: str, actions: str, rng: random.Random) -> list[tuple[str, str]]:
        tokens = command.split()
        present = sorted({t for t in tokens if t in self.lexicon})
        if not present:
            return []
        out: dict[tuple[str, str], None] = {}
        act_tokens = actions.split()
        for _ in range(2 * self.k):
            forms = {w: rng.randint(0, self.k) for w in present}
            if not any(forms.values()):
                continue  # the original itself
            word_map = {w: f"{w}_{j}" for w, j in forms.items() if j}
            act_map = {self.lexicon[w]: f"{self.lexicon[w]}_{j}" for w, j in forms.items() if j}
            variant = (
                " ".join(word_map.get(t, t) for t in tokens),
                " ".join(act_map.get(a, a) for a in act_tokens),
            )
            out[variant] = None
            if len(out) == self.k:
                break
        return list(out)

    def __call__(self, batch: Mapping, indices: Sequence[int] | None = None) -> dict:
        if indices is None:
            raise ValueError("PrimitiveAugmenter needs the row indices: use ds.map(aug, batched=True, with_indices=True)")
        _check_columns(batch, self.columns)
        cin, cout = self.columns
        out = []  # (source row, command, actions, variant)
        for i, (command, act, index) in enumerate(zip(batch[cin], batch[cout], indices)):
            if self.keep_original:
                out.append((i, command, act, 0))
            variants = self._variants(command, act, random.Random(f"{self.seed}-{index}"))
            out += [(i, c, a, j) for j, (c, a) in enumerate(variants, 1)]
        rows, commands, actions, variant = (list(col) for col in zip(*out)) if out else ([], [], [], [])
        return _expand(batch, rows, {cin: commands, cout: actions, "augmented": variant})

    def __repr__(self) -> str:
        return f"PrimitiveAugmenter(k={self.k}, lexicon={sorted(self.lexicon)}, seed={self.seed})"


class AugZero:
    """AugZero: ``k`` copies of the vocabulary, for ``Dataset.map(aug, batched=True)``.

    Copy 1 is the original vocabulary; copy ``j >= 2`` rewrites every token ``w`` of ``columns``
    to ``w_j``. With ``expand=True`` (the paper) every example becomes ``k`` rows, one per copy;
    with ``expand=False`` it is rewritten with one copy drawn uniformly from ``1..k`` (seeded by
    ``seed`` and the row index: ``map(..., with_indices=True)``). ``copy_column`` records ``j``.

    Example:
        >>> AugZero(2)({"commands": ["walk"], "actions": ["I_WALK"]})
        {'commands': ['walk', 'walk_2'], 'actions': ['I_WALK', 'I_WALK_2'], 'copy': [1, 2]}
    """

    def __init__(self, k: int, columns: Sequence[str] = ("commands", "actions"), copy_column: str = "copy", *,
                 expand: bool = True, seed: int = 0) -> None:
        self.k = check_int("k", k, min=1)
        if not columns or not all(isinstance(c, str) for c in columns):
            raise ValueError(f"columns must be a non-empty sequence of column names, got {columns!r}")
        self.columns = tuple(columns)
        self.copy_column = copy_column
        if not isinstance(expand, bool):
            raise TypeError(f"expand must be a bool, got {expand!r}")
        self.expand = expand
        self.seed = check_int("seed", seed, min=0)

    @staticmethod
    def rewrite(text: str, copy: int) -> str:
        """``text`` in vocabulary copy ``copy`` (1: unchanged)."""
        if copy == 1:
            return text
        suffix = f"_{copy}"
        return " ".join([t + suffix for t in text.split()])

    def __call__(self, batch: Mapping, indices: Sequence[int] | None = None) -> dict:
        _check_columns(batch, self.columns)
        n = len(batch[self.columns[0]])
        if self.expand:
            rows = [i for i in range(n) for _ in range(self.k)]
            copies = [j for _ in range(n) for j in range(1, self.k + 1)]
        else:
            if indices is None:
                raise ValueError("AugZero(expand=False) needs the row indices: use ds.map(aug, batched=True, with_indices=True)")
            rows = list(range(n))
            copies = [random.Random(f"{self.seed}-{i}").randint(1, self.k) for i in indices]
        new: dict[str, list] = {col: [self.rewrite(batch[col][i], j) for i, j in zip(rows, copies)] for col in self.columns}
        new[self.copy_column] = copies
        return _expand(batch, rows, new)

    def __repr__(self) -> str:
        return f"AugZero(k={self.k}, columns={list(self.columns)}, expand={self.expand})"


def _is_primitive(token: str) -> bool:
    base, sep, suffix = token.partition("_")
    return not (base in FUNCTION_WORDS and (not sep or suffix.isdigit()))


def scan_complexity_columns(batch: Mapping, input_column: str = "commands", output_column: str = "actions") -> dict:
    """Complexity difficulty of SCAN-like rows, for ``Dataset.map(batched=True)``: ``input_length`` and
    ``output_length`` (tokens) and ``unique_primitives`` (distinct words but the function words and
    their AugZero copies).

    Example:
        >>> scan_complexity_columns({"commands": ["walk and walk_1 left"], "actions": ["I_WALK I_TURN_LEFT I_WALK_1"]})
        {'input_length': [4], 'output_length': [3], 'unique_primitives': [2]}
    """
    _check_columns(batch, (input_column, output_column))
    inputs = [c.split() for c in batch[input_column]]
    return {
        "input_length": [len(t) for t in inputs],
        "output_length": [len(a.split()) for a in batch[output_column]],
        "unique_primitives": [len({t for t in tokens if _is_primitive(t)}) for tokens in inputs],
    }
