"""SCAN and SCAN*: the exact SCAN command set with its rule-based splits, and the SCAN* sampler with
the length-halving procedure (Lake & Baroni 2018; Loula et al. 2018; Zhou et al. 2023;
ALGORITHMS.md section 4).

Commands and their actions are *built* together from the grammar's productions; the tests check
every pair against :mod:`hf_synthsample.domains.scan_interpreter`, which parses command strings.

Exact SCAN::

    C -> S and S | S after S | S ;  S -> V twice | V thrice | V
    V -> X opposite DIR | X around DIR | D | U   (X in U + {turn})
    D -> U DIR | turn DIR ;  U -> walk | look | run | jump ;  DIR -> left | right

gives 20,910 commands. The rule-based splits (:data:`SCAN_SPLITS`) reproduce the public release
as multisets; their rules and the counts they imply are in :func:`scan_split`.

SCAN*: any number of conjunctions (``after`` binds tighter than ``and``), ``n`` verb primitives
``walk look run jump prim4 ... prim{n-1}`` with actions ``I_`` + upper-case name, no ``turn``, and
``around`` / ``opposite`` unified as (turn, verb) repeated 4 / 2 times (SCAN's ``opposite`` =
``turn turn verb`` is available with ``unify_around_opposite=False``).

Example:
    >>> len(scan_commands())
    20910
    >>> {s: len(rows) for s, rows in scan_split("addprim_jump").items()}
    {'train': 14670, 'test': 7706}
    >>> g = StarGrammar(num_primitives=10)
    >>> ex = g.render(g.sample_structure(random.Random(0), 12, 12))
    >>> len(ex.commands.split())
    12
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np

__all__ = ["SCAN_VERBS", "DIRECTIONS", "SCAN_SPLITS", "scan_commands", "scan_split", "StarGrammar", "StarExample",
           "halve", "halving_steps", "structure_length", "StarBlock", "halve_block", "star_primitives"]

SCAN_VERBS: tuple[str, ...] = ("walk", "look", "run", "jump")
DIRECTIONS: tuple[str, ...] = ("left", "right")
_TURN = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
CONJUNCTIONS: tuple[str, ...] = ("and", "after")

#: SCAN configs known from the Hub, with what their test split holds.
SCAN_SPLITS: dict[str, str] = {
    "simple": "a seeded random 80/20 split of all 20,910 commands",
    "length": "train: commands whose action sequence has at most 22 actions; test: the longer ones",
    "addprim_jump": "test: every command with 'jump' except bare 'jump'; train: the rest, with bare 'jump' "
    "repeated to make 10% of the train rows (1,467 times)",
    "addprim_turn_left": "test: every command with 'turn left' except bare 'turn left'; train: the rest, with "
    "bare 'turn left' repeated to make 10% of the train rows (2,189 times)",
    "template_around_right": "test: commands with 'U around right' (U a verb); commands with "
    "'turn around right' are left out of both splits",
    "template_jump_around_right": "test: commands with 'jump around right'; commands with 'turn around right' "
    "are left out of both splits",
    "template_opposite_right": "test: commands with 'U opposite right'; commands with 'turn opposite right' "
    "are left out of both splits",
    "template_right": "test: commands with 'U right'; commands with 'turn right' are left out of both splits",
}


# ---------------------------------------------------------------- Exact SCAN
def _scan_v() -> list[tuple[str, tuple[str, ...]]]:
    """Every V phrase with its actions, in grammar order."""
    act = {x: () if x == "turn" else ("I_" + x.upper(),) for x in (*SCAN_VERBS, "turn")}
    out = [(u, act[u]) for u in SCAN_VERBS]  # V -> U
    out += [(f"{x} {d}", (_TURN[d],) + act[x]) for x in act for d in DIRECTIONS]  # V -> D
    for x in act:  # V -> X opposite DIR | X around DIR
        for d in DIRECTIONS:
            t = _TURN[d]
            out += [(f"{x} opposite {d}", (t, t) + act[x]), (f"{x} around {d}", ((t,) + act[x]) * 4)]
    return out


@functools.lru_cache(maxsize=1)
def _scan_s() -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for v, act in _scan_v():
        out += [(v, act), (f"{v} twice", act * 2), (f"{v} thrice", act * 3)]
    return tuple(out)


@functools.lru_cache(maxsize=1)
def scan_commands() -> tuple[tuple[str, str], ...]:
    """All 20,910 SCAN ``(command, actions)`` pairs, S first, then ``S and S``, then ``S after S``."""
    s = _scan_s()
    out = [(c, " ".join(a)) for c, a in s]
    out += [(f"{c1} and {c2}", " ".join(a1 + a2)) for c1, a1 in s for c2, a2 in s]
    out += [(f"{c1} after {c2}", " ".join(a2 + a1)) for c1, a1 in s for c2, a2 in s]
    return tuple(out)


def _has(command: str, phrase: str) -> bool:
    return f" {phrase} " in f" {command} "


def _oversample(rest: list[tuple[str, str]], bare: tuple[str, str]) -> list[tuple[str, str]]:
    # Lake & Baroni repeat the bare primitive until it makes 10% of the train rows:
    # copies = |rest| / 9 (13,203 / 9 = 1,467 for jump; 19,701 / 9 = 2,189 for turn left).
    return rest + [bare] * round(len(rest) / 9)


def scan_split(name: str, *, seed: int = 0, train_fraction: float = 0.8) -> dict[str, list[tuple[str, str]]]:
    """The ``train`` / ``test`` rows of the SCAN split ``name`` (see :data:`SCAN_SPLITS`), in
    enumeration order (``simple``: in the seeded random order).

    Sizes (train / test): simple 16,728 / 4,182; length 16,990 / 3,920; addprim_jump 14,670 / 7,706;
    addprim_turn_left 21,890 / 1,208; template_around_right, template_opposite_right and
    template_right 15,225 / 4,476; template_jump_around_right 18,528 / 1,173.
    """
    if name not in SCAN_SPLITS:
        raise ValueError(f"name: unknown SCAN split {name!r}; accepted values: {list(SCAN_SPLITS)}")
    rows = list(scan_commands())
    if name == "simple":
        order = list(range(len(rows)))
        random.Random(seed).shuffle(order)
        cut = round(train_fraction * len(rows))
        return {"train": [rows[i] for i in order[:cut]], "test": [rows[i] for i in order[cut:]]}
    if name == "length":
        return {
            "train": [r for r in rows if len(r[1].split()) <= 22],
            "test": [r for r in rows if len(r[1].split()) > 22],
        }
    if name.startswith("addprim_"):
        phrase = name[len("addprim_"):].replace("_", " ")
        bare = next(r for r in rows if r[0] == phrase)
        test = [r for r in rows if _has(r[0], phrase) and r[0] != phrase]
        rest = [r for r in rows if not _has(r[0], phrase)]
        return {"train": _oversample(rest, bare), "test": test}
    # template_*: the held-out template with a verb goes to test, the 'turn' version nowhere
    template = name[len("template_"):].split("_")
    verbs = SCAN_VERBS
    if template[0] == "jump":
        verbs, template = ("jump",), template[1:]
    tail = " ".join(template)
    held = [f"{u} {tail}" for u in verbs]
    kept = [r for r in rows if not _has(r[0], f"turn {tail}")]
    held_out = [any(_has(r[0], h) for h in held) for r in kept]
    return {"train": [r for r, h in zip(kept, held_out) if not h], "test": [r for r, h in zip(kept, held_out) if h]}


# ---------------------------------------------------------------- SCAN*
def star_primitives(n: int) -> tuple[str, ...]:
    """The ``n`` SCAN* verb primitives: SCAN's four, then ``prim4``, ``prim5``, ..."""
    return SCAN_VERBS[:n] + tuple(f"prim{i}" for i in range(len(SCAN_VERBS), n))


class _Shape(NamedTuple):
    words: str  # suffix after the verb, e.g. " around left twice"
    length: int  # words including the verb
    turn: str | None
    steps: int  # (turn, verb) repetitions: 0 plain, 1 direction, 2 opposite (unified), 4 around
    repeat: int
    scan_opposite: bool  # SCAN's "turn turn verb" opposite


def _shapes(unify: bool) -> tuple[_Shape, ...]:
    out = []
    for mod in ("", *DIRECTIONS, *(f"{m} {d}" for m in ("opposite", "around") for d in DIRECTIONS)):
        for rep, rep_word in ((1, ""), (2, " twice"), (3, " thrice")):
            words = (f" {mod}" if mod else "") + rep_word
            d = mod.split()[-1] if mod else None
            steps = 0 if not mod else 1 if " " not in mod else (4 if mod.startswith("around") else 2)
            scan_opp = mod.startswith("opposite") and not unify
            out.append(_Shape(words, len(words.split()) + 1, d, steps, rep, scan_opp))
    return tuple(out)


class StarExample(NamedTuple):
    """A rendered SCAN* example with its complexity figures."""

    commands: str
    actions: str
    input_length: int
    output_length: int
    unique_primitives: int


#: A SCAN* command as structure: per part its shape index and primitive index, and the
#: conjunction (0 = and, 1 = after) before every part but the first.
Structure = tuple[list[int], list[int], list[int]]


@dataclass
class StarGrammar:
    """SCAN* with ``num_primitives`` verbs: samples command structures and renders them.

    Example:
        >>> g = StarGrammar(num_primitives=4)
        >>> g.render(([0, 3], [0, 1], [1])).commands
        'walk after look left'
    """

    num_primitives: int = 200
    unify_around_opposite: bool = True
    p_and: float = 0.5
    primitives: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.primitives = star_primitives(self.num_primitives)
        self.shapes = _shapes(self.unify_around_opposite)
        # parts rendered once: part_words[shape][prim], part_actions[shape][prim]
        self.part_words = [[p + s.words for p in self.primitives] for s in self.shapes]
        self.part_actions = [[self._actions(s, "I_" + p.upper()) for p in self.primitives] for s in self.shapes]
        self.part_length = [s.length for s in self.shapes]
        self.part_action_count = [len(self.part_actions[i][0].split()) for i in range(len(self.shapes))]
        # shapes a part may take when `r` words are left: it must fit, and never leave exactly one
        # word (a conjunction needs a part after it)
        self._conj_words = [[[f" {c} {w}" for w in row] for row in self.part_words] for c in CONJUNCTIONS]
        self._allowed = [
            [i for i, s in enumerate(self.shapes) if s.length <= r and r - s.length != 1] for r in range(7)
        ]
        self._allowed_count = np.asarray([len(a) for a in self._allowed])
        self._allowed_table = np.asarray([a + [0] * (len(self.shapes) - len(a)) for a in self._allowed])

    @staticmethod
    def _actions(s: _Shape, verb: str) -> str:
        if s.turn is None:
            one = [verb]
        elif s.scan_opposite:
            one = [_TURN[s.turn], _TURN[s.turn], verb]
        else:
            one = [_TURN[s.turn], verb] * s.steps
        return " ".join(one * s.repeat)

    def sample_block(self, rng: random.Random, n: int, min_length: int, max_length: int,
                     pool: Sequence[int] | None = None, max_unique: int | None = None,
                     force: int | None = None) -> "StarBlock":
        """``n`` command structures of ``min_length..max_length`` words (length uniform).

        Parts are drawn left to right, each shape uniform among those that fit the words left
        (never leaving exactly one word), so every length is hit exactly. ``pool``: primitive
        indices to draw from (default all); ``max_unique``: each example uses only that many
        distinct primitives of the pool; ``force``: this primitive appears in at least one part.
        """
        # numpy, whole block: every part while >= 6 words are left (every shape fits), then the tails by rounds
        gen = np.random.Generator(np.random.PCG64(rng.getrandbits(64)))
        pool_arr = np.arange(self.num_primitives) if pool is None else np.asarray(pool, dtype=np.int64)
        targets = gen.integers(min_length, max_length + 1, n)
        width = max_length // 2 + 1  # parts that can fit; the tail adds at most 3 more
        cols = width + 6
        shapes = gen.integers(0, len(self.shapes), (n, cols))
        plen = np.asarray(self.part_length)
        lens = plen[shapes[:, :width]]
        cost = lens + 1
        cost[:, 0] -= 1
        cum = np.cumsum(cost, axis=1)
        # words left for part j once its conjunction is placed
        left = targets[:, None] - cum + lens
        k = (left >= 6).sum(axis=1)  # the prefix where every shape fits
        r = targets - np.where(k > 0, cum[np.arange(n), np.maximum(k - 1, 0)], 0)
        # the tail, one part per round for every example that still has words left
        while True:
            idx = np.flatnonzero(r > 0)
            if not len(idx):
                break
            rr = r[idx] - (k[idx] > 0)
            rc = np.minimum(rr, 6)
            pick = self._allowed_table[rc, (gen.random(len(idx)) * self._allowed_count[rc]).astype(np.int64)]
            shapes[idx, k[idx]] = pick
            k[idx] += 1
            r[idx] = rr - plen[pick]
        conj_draw = (gen.random((n, cols)) < 1.0 - self.p_and).astype(np.int8)
        if max_unique is not None and max_unique < len(pool_arr):
            # the forced primitive counts as one of the example's max_unique primitives
            base = pool_arr if force is None else pool_arr[pool_arr != force]
            m = max_unique if force is None else max_unique - 1
            choice = base[np.argsort(gen.random((n, len(base))), axis=1)[:, :m]]
            if force is not None:
                choice = np.concatenate([choice, np.full((n, 1), force, dtype=choice.dtype)], axis=1)
        else:
            choice = np.broadcast_to(pool_arr, (n, len(pool_arr)))
        prim_draw = choice[np.arange(n)[:, None], gen.integers(0, choice.shape[1], (n, cols))]
        used_cols = np.arange(cols)[None, :] < k[:, None]  # row-major: example by example
        prims = prim_draw[used_cols].astype(np.int64)
        conjs = conj_draw[used_cols]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(k, out=offsets[1:])
        conjs[offsets[:-1]] = -1  # the first part has no conjunction
        if force is not None:
            has = np.zeros(n, dtype=bool)
            np.logical_or.at(has, np.repeat(np.arange(n), k), prims == force)
            missing = np.flatnonzero(~has)
            at = offsets[missing] + (gen.random(len(missing)) * k[missing]).astype(np.int64)
            prims[at] = force
        return StarBlock(shapes[used_cols].astype(np.int64), prims, conjs, offsets)

    def sample_structure(self, rng: random.Random, min_length: int, max_length: int, **kwargs) -> Structure:
        """One structure (the first row :meth:`sample_block` would draw with this ``rng``)."""
        return self.sample_block(rng, 1, min_length, max_length, **kwargs).structures()[0]

    @functools.cached_property
    def _tables(self) -> tuple:
        import pyarrow as pa

        words = [w for prefix in ("", " and ", " after ") for row in self.part_words for w in (prefix + x for x in row)]
        actions = [a for row in self.part_actions for a in row]
        return pa.array(words, pa.large_string()), pa.array(actions, pa.large_string())

    def render_block(self, block: "StarBlock") -> dict:
        """Columns ``commands``, ``actions`` (pyarrow arrays), ``input_length``, ``output_length``,
        ``unique_primitives`` (numpy) of every example of ``block``; the same values as
        :meth:`render` on each structure, computed for the whole block at once."""
        import pyarrow as pa
        import pyarrow.compute as pc

        words, actions = self._tables
        n, P = len(block), self.num_primitives
        part = block.shapes * P + block.prims
        offsets = pa.array(block.offsets.astype(np.int64))
        word_idx = (block.conjs.astype(np.int64) + 1) * (len(self.shapes) * P) + part
        commands = pc.binary_join(pa.LargeListArray.from_arrays(offsets, words.take(word_idx)), pa.scalar("", pa.large_string()))
        # actions: and-groups in order, the parts of a group (an after-chain) last to first
        group = np.cumsum(block.conjs != 1)
        order = np.lexsort((-np.arange(len(part)), group))
        acts = pc.binary_join(pa.LargeListArray.from_arrays(offsets, actions.take(part[order])), pa.scalar(" ", pa.large_string()))
        ex = block.example_ids()
        plen = np.asarray(self.part_length)[block.shapes]
        pcount = np.asarray(self.part_action_count)[block.shapes]
        m = np.diff(block.offsets)
        key = np.sort(ex * P + block.prims)
        uniq = key[np.concatenate([[True], key[1:] != key[:-1]])] if len(key) else key
        return {
            "commands": commands,
            "actions": acts,
            "input_length": np.bincount(ex, weights=plen, minlength=n).astype(np.int64) + np.maximum(m - 1, 0),
            "output_length": np.bincount(ex, weights=pcount, minlength=n).astype(np.int64),
            "unique_primitives": np.bincount(uniq // P, minlength=n),
        }

    def render(self, structure: Structure) -> StarExample:
        """Command, actions (``after`` runs its right side first, ``and`` in order) and complexity."""
        shapes, prims, conjs = structure
        pa, cw = self.part_actions, self._conj_words
        words = [self.part_words[shapes[0]][prims[0]]]
        words += [cw[c][s][p] for c, s, p in zip(conjs, shapes[1:], prims[1:])]
        # each and-group is a chain of afters: its parts run last to first
        out: list[str] = []
        group = [pa[shapes[0]][prims[0]]]
        for c, s, p in zip(conjs, shapes[1:], prims[1:]):
            if c == 0:
                out += group[::-1]
                group = []
            group.append(pa[s][p])
        out += group[::-1]
        plen, pcount = self.part_length, self.part_action_count
        n_in = sum([plen[s] for s in shapes]) + len(conjs)
        n_out = sum([pcount[s] for s in shapes])
        return StarExample("".join(words), " ".join(out), n_in, n_out, len(set(prims)))


@dataclass
class StarBlock:
    """Many SCAN* structures as flat arrays: example ``i`` has the parts
    ``offsets[i]:offsets[i + 1]`` (shape and primitive index each) and ``conjs`` holds the
    conjunction before each part (0 and, 1 after; -1 for an example's first part)."""

    shapes: np.ndarray
    prims: np.ndarray
    conjs: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def example_ids(self) -> np.ndarray:
        return np.repeat(np.arange(len(self)), np.diff(self.offsets))

    def structures(self) -> list[Structure]:
        """The examples as :data:`Structure` tuples (lists)."""
        s, p, c, o = self.shapes.tolist(), self.prims.tolist(), self.conjs.tolist(), self.offsets.tolist()
        return [(s[a:b], p[a:b], c[a + 1 : b]) for a, b in zip(o[:-1], o[1:])]

    @classmethod
    def from_structures(cls, structures: Sequence[Structure]) -> "StarBlock":
        shapes = [x for s in structures for x in s[0]]
        prims = [x for s in structures for x in s[1]]
        conjs = [x for s in structures for x in ([-1] + list(s[2]) if s[0] else [])]
        offsets = np.zeros(len(structures) + 1, dtype=np.int64)
        np.cumsum([len(s[0]) for s in structures], out=offsets[1:])
        return cls(np.asarray(shapes, np.int64), np.asarray(prims, np.int64), np.asarray(conjs, np.int8), offsets)

    def lengths(self, grammar: "StarGrammar") -> np.ndarray:
        """Words per example."""
        cost = np.asarray(grammar.part_length)[self.shapes] + (self.conjs >= 0)
        return np.bincount(self.example_ids(), weights=cost, minlength=len(self)).astype(np.int64)

    def take(self, index: np.ndarray) -> "StarBlock":
        """The examples ``index`` (in that order)."""
        index = np.asarray(index, dtype=np.int64)
        m = np.diff(self.offsets)[index]
        offsets = np.zeros(len(index) + 1, dtype=np.int64)
        np.cumsum(m, out=offsets[1:])
        src = np.repeat(self.offsets[:-1][index] - offsets[:-1], m) + np.arange(offsets[-1])
        return StarBlock(self.shapes[src], self.prims[src], self.conjs[src], offsets)

    @staticmethod
    def concat(blocks: Sequence["StarBlock"]) -> "StarBlock":
        shift = np.cumsum([0] + [b.offsets[-1] for b in blocks[:-1]])
        offsets = np.concatenate([[0]] + [b.offsets[1:] + d for b, d in zip(blocks, shift)])
        columns = (np.concatenate([getattr(b, name) for b in blocks]) for name in ("shapes", "prims", "conjs"))
        return StarBlock(*columns, offsets.astype(np.int64))


def halve_block(grammar: StarGrammar, block: StarBlock) -> StarBlock:
    """:func:`halve` on every example of ``block`` at once (examples may become empty)."""
    cost = np.asarray(grammar.part_length)[block.shapes] + (block.conjs >= 0)
    m = np.diff(block.offsets)
    ex = block.example_ids()
    total = block.lengths(grammar)
    cum = np.cumsum(cost)
    before = np.concatenate([[0], cum])[block.offsets[:-1]]  # words of the earlier examples
    keep = cum - np.repeat(before, m) <= np.repeat(total // 2, m)  # a prefix of each example
    offsets = np.zeros(len(block) + 1, dtype=np.int64)
    np.cumsum(np.bincount(ex[keep], minlength=len(block)), out=offsets[1:])
    return StarBlock(block.shapes[keep], block.prims[keep], block.conjs[keep], offsets)


def structure_length(grammar: StarGrammar, structure: Structure) -> int:
    """Words in the command of ``structure``."""
    shapes, _, conjs = structure
    return sum(grammar.part_length[s] for s in shapes) + len(conjs)


def halve(grammar: StarGrammar, structure: Structure) -> Structure:
    """Zhou et al.'s halving (App. A.2): split at the conjunctions and keep the most leading parts
    whose total length (conjunctions between them included) is at most half the original length.
    The result may be empty (no parts) for a command whose first part is longer than that."""
    shapes, prims, conjs = structure
    budget = structure_length(grammar, structure) // 2
    keep = 0
    while keep < len(shapes) and structure_length(grammar, (shapes[: keep + 1], (), conjs[:keep])) <= budget:
        keep += 1
    return shapes[:keep], prims[:keep], conjs[: max(keep - 1, 0)]


def halving_steps(source_max_length: int, max_length: int) -> int:
    """How many halvings (``L -> L // 2``) lead from ``source_max_length`` to ``max_length``;
    ``ValueError`` naming the reachable values if none does."""
    reachable = []
    length = source_max_length
    while length >= 1:
        reachable.append(length)
        if length == max_length:
            return len(reachable) - 1
        length //= 2
    raise ValueError(
        f"max_length: {max_length} is not reached by halving source_max_length={source_max_length}; "
        f"accepted values: {reachable}"
    )
