"""SCAN and SCAN* dataset builders (two domains: ``scan`` and ``scan_star``).

``scan`` is the exact SCAN benchmark: all 20,910 commands, enumerated, cut into the Hub's eight
splits (``simple``, ``length``, ``addprim_jump``...), in a seeded order; their multiset is the public
release's. ``scan_star`` draws SCAN* commands (Zhou et al. 2023) in seeded blocks: ``random``, the
length splits ``length_31`` .. ``length_250`` (by repeated halving; ``length``: any ``max_length``)
and ``jump``.

Example:
    >>> import hf_synthsample
    >>> ds = hf_synthsample.load_dataset("scan", "addprim_jump")
    >>> ds["train"].num_rows, ds["test"].num_rows
    (14670, 7706)
    >>> star = hf_synthsample.load_dataset("scan_star", "length_31", num_examples=200, num_test=50)
    >>> max(star["train"]["input_length"]) <= 31 < min(star["test"]["input_length"])
    True
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import random

import datasets
import numpy as np
import pyarrow as pa

from ..domains import scan as sc
from ..settings import setting
from ..validation import check_choice, check_int
from .base import SyntheticBuilder, SyntheticConfig, block_rng, check_settings

__all__ = ["ScanConfig", "Scan", "ScanStarConfig", "ScanStar"]

_SCAN_CITATION = """@inproceedings{lake2018generalization,
  title={Generalization without Systematicity: On the Compositional Skills of Sequence-to-Sequence Recurrent Networks},
  author={Lake, Brenden and Baroni, Marco},
  booktitle={International Conference on Machine Learning},
  year={2018}
}
@inproceedings{loula2018rearranging,
  title={Rearranging the Familiar: Testing Compositional Generalization in Recurrent Networks},
  author={Loula, Jo{\\~a}o and Baroni, Marco and Lake, Brenden},
  booktitle={BlackboxNLP Workshop at EMNLP},
  year={2018}
}"""
_STAR_CITATION = """@inproceedings{zhou2023data,
  title={Data Factors for Better Compositional Generalization},
  author={Zhou, Xiang and Jiang, Yichen and Bansal, Mohit},
  booktitle={Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  year={2023}
}"""
_MAX_LENGTH = 10_000
_MAX_PRIMITIVES = 10_000
_DRAW_AHEAD = 32


# -------------------- Exact SCAN
@dataclasses.dataclass
class ScanConfig(datasets.BuilderConfig):
    """An exact SCAN split. Only the row order (and ``simple``'s random split) depend on parameters."""

    seed: int = setting(0, help="seed of the row order (and of the random 80/20 cut of 'simple')", min=0)
    shuffle: bool = setting(True, help="rows in a seeded random order (False: enumeration order)")
    train_fraction: float = setting(0.8, help="'simple' only: fraction of the commands in train, in (0, 1)",
                                    min=0.0, max=1.0, min_inclusive=False, max_inclusive=False)
    block_size: int = setting(5_000, help="rows per shard", min=1)

    def validate(self, salient_variables=None) -> None:
        check_choice("config", self.name, list(sc.SCAN_SPLITS))
        check_settings(self)

    def split_sizes(self) -> dict[str, int]:
        return {split: len(rows) for split, rows in _scan_rows(self.name, self.seed, self.train_fraction, self.shuffle).items()}

    parameters = SyntheticConfig.parameters


@functools.lru_cache(maxsize=4)
def _scan_rows(name: str, seed: int, train_fraction: float, shuffle: bool) -> dict[str, list[tuple[str, str]]]:
    out = sc.scan_split(name, seed=seed, train_fraction=train_fraction)
    if shuffle:
        for split, rows in out.items():
            rows = list(rows)
            random.Random(f"{seed}-{split}").shuffle(rows)
            out[split] = rows
    return out


class Scan(SyntheticBuilder):
    """Exact SCAN: all 20,910 commands and the Hub's eight splits (deterministic enumeration)."""

    DOMAIN = "scan"
    BUILDER_CONFIG_CLASS = ScanConfig
    BUILDER_CONFIGS = [ScanConfig(name=name, description=text) for name, text in sc.SCAN_SPLITS.items()]
    DEFAULT_CONFIG_NAME = "simple"
    SALIENT_VARIABLES: dict[str, str] = {}
    SOURCE_MODULES = ("hf_synthsample.domains.scan",)
    DESCRIPTION = (
        "SCAN (Lake & Baroni, 2018; template splits: Loula et al., 2018): navigation commands "
        "('jump around left twice after walk') and their action sequences, enumerated exactly from "
        "the grammar (20,910 commands) and split by the published rules. Columns: commands, actions."
    )
    CITATION = _SCAN_CITATION
    HOMEPAGE = "https://github.com/brendenlake/SCAN"
    CARD_METADATA = {"language": ["en"], "task_categories": ["text-generation"]}  # commands -> actions

    FEATURES = {"commands": "string", "actions": "string"}

    def split_plans(self, stats_dir=None) -> dict[str, tuple[list, dict]]:
        cfg = self.config
        return {
            split: ([(b, min(b + cfg.block_size, size)) for b in range(0, size, cfg.block_size)], {"split": split})
            for split, size in cfg.split_sizes().items()
        }

    def block_num_rows(self, block) -> int:
        return int(block[1] - block[0])

    def block_table(self, block, *, split) -> pa.Table:
        cfg = self.config
        start, stop = block
        part = _scan_rows(cfg.name, cfg.seed, cfg.train_fraction, cfg.shuffle)[split][start:stop]
        return pa.table({"commands": [c for c, _ in part], "actions": [a for _, a in part]},
                        schema=self.info.features.arrow_schema)


# -------------------- SCAN*
KINDS = ("random", "length", "jump")
STAR_SALIENT = {
    "input_length": "words in the command",
    "output_length": "actions in the action sequence",
    "unique_primitives": "distinct verb primitives in the command",
}


@dataclasses.dataclass
class ScanStarConfig(SyntheticConfig):
    """SCAN* generation parameters."""

    kind: str = setting("random", help=f"one of {KINDS}: plain draws, a length split, or the jump split", choices=KINDS)
    num_primitives: int = setting(200, help="verb primitives: walk look run jump prim4 ... (outputs I_<NAME>)",
                                  min=1, max=_MAX_PRIMITIVES)
    min_length: int = setting(1, help="random/jump: shortest command (words)", min=1)
    max_length: int = setting(62, help="random/jump: longest command (words); length: L (train 0<l<=L, test "
                                       "L<l<=2L)", min=1, max=_MAX_LENGTH)
    source_max_length: int = setting(250, help="length: L of the longest dataset the split is halved from",
                                     min=1, max=_MAX_LENGTH // 2)
    max_unique_primitives: int | None = setting(None, help="most distinct primitives per example (None: no limit)",
                                                min=1)
    p_and: float = setting(0.5, help="probability that a conjunction is 'and' (else 'after')", min=0.0, max=1.0)
    unify_around_opposite: bool = setting(True, help="'X opposite D' = (turn X) x2 like around's x4; False: SCAN's "
                                                     "turn turn X")
    held_out_primitive: str = setting("jump", help="jump: primitive seen only bare in train, in every test command")
    held_out_fraction: float = setting(0.1, help="jump: fraction of train rows that are the bare held-out primitive",
                                       min=0.0, max=1.0, max_inclusive=False)

    def validate(self, salient_variables) -> None:
        super().validate(salient_variables)
        check_int("min_length", self.min_length, max=self.max_length)
        if self.max_unique_primitives is not None and self.max_unique_primitives > self.num_primitives:
            raise ValueError(
                f"max_unique_primitives must be <= num_primitives={self.num_primitives} (there are only "
                f"{self.num_primitives} primitives), got {self.max_unique_primitives}"
            )
        if self.kind == "length":
            sc.halving_steps(self.source_max_length, self.max_length)
        if self.kind == "jump":
            if self.num_primitives < 2:
                raise ValueError(f"num_primitives must be >= 2 for the jump split, got {self.num_primitives}")
            check_choice("held_out_primitive", self.held_out_primitive, sc.star_primitives(self.num_primitives))
            if self.max_length < 2:
                raise ValueError(f"max_length must be >= 2 for the jump split (test commands hold more than the bare "
                                 f"primitive), got {self.max_length}")


def _star_configs() -> list[ScanStarConfig]:
    halved = "halved from the L=source_max_length dataset"
    return [
        ScanStarConfig(name="random", named_parameters=("kind",), description="SCAN* commands of 1..max_length "
                       "words (uniform), 200 primitives, any number of conjunctions."),
        ScanStarConfig(name="length", kind="length", named_parameters=("kind",), num_test=1_000,
                       description="SCAN* length split at any L=max_length: train 0<l<=L, test L<l<=2L words, "
                       f"{halved} (the named length_L configs fix L to the paper's values)."),
        *(ScanStarConfig(name=f"length_{L}", kind="length", max_length=L, named_parameters=("kind", "max_length"),
                         num_test=1_000, description=f"SCAN* length split L={L}: train 0<l<={L}, test {L}<l<={2 * L} "
                         f"words, {halved} (Zhou et al. 2023, App. A.2).") for L in (31, 62, 125, 250)),
        ScanStarConfig(name="jump", kind="jump", num_test=1_000, named_parameters=("kind",),
                       description="SCAN* jump split: train has 'jump' only bare (held_out_fraction of the rows); "
                       "every test command uses 'jump' with other primitives."),
    ]


class ScanStar(SyntheticBuilder):
    """SCAN* (Zhou et al. 2023): random draws, length splits by halving, and the jump split."""

    DOMAIN = "scan_star"
    BUILDER_CONFIG_CLASS = ScanStarConfig
    BUILDER_CONFIGS = _star_configs()
    DEFAULT_CONFIG_NAME = "random"
    SALIENT_VARIABLES = STAR_SALIENT
    CARD_METADATA = {"language": ["en"], "task_categories": ["text-generation"]}
    SOURCE_MODULES = ("hf_synthsample.domains.scan",)
    DESCRIPTION = (
        "SCAN* (Zhou et al., 2023): SCAN with any number of 'and'/'after' conjunctions ('after' binds "
        "tighter), a configurable number of verb primitives, no 'turn', and 'around'/'opposite' unified. "
        "Columns: commands, actions, and the complexity columns input_length, output_length, unique_primitives."
    )
    CITATION = _STAR_CITATION

    FEATURES = {"commands": "string", "actions": "string", "input_length": "int32", "output_length": "int32",
                "unique_primitives": "int32"}

    @functools.cached_property
    def _grammar(self) -> sc.StarGrammar:
        cfg = self.config
        return sc.StarGrammar(cfg.num_primitives, cfg.unify_around_opposite, cfg.p_and)

    #: the split ``_draw`` draws for (the homogenization pilot: train; see ``block_table``)
    _split = "train"

    _buffer: tuple = (None, [])  # (rng, rows drawn ahead for it)

    def _draw(self, rng: random.Random) -> dict:
        # row-by-row draws (homogenization) come from a block drawn ahead with the same rng (32 rows cost
        # about one); blocks are drawn one rng at a time, so one buffer keeps the rows deterministic
        owner, rows = self._buffer
        if owner is not rng or not rows:
            rows = self._draw_block(rng, _DRAW_AHEAD)[::-1]
            self._buffer = (rng, rows)
        return rows.pop()

    def _draw_block(self, rng: random.Random, n: int) -> list[dict]:
        # row by row (homogenization): the per-structure renderer, equal to render_block's rows
        g = self._grammar
        return [g.render(s)._asdict() for s in self._block(rng, n, self._split).structures()]

    def _table(self, rng: random.Random, n: int, split: str) -> pa.Table:
        cols = self._grammar.render_block(self._block(rng, n, split))
        schema = self.info.features.arrow_schema
        return pa.table([pa.array(cols[f.name]).cast(f.type) for f in schema], schema=schema)

    def _block(self, rng: random.Random, n: int, split: str) -> sc.StarBlock:
        cfg, g = self.config, self._grammar
        if cfg.kind == "random":
            return g.sample_block(rng, n, cfg.min_length, cfg.max_length, max_unique=cfg.max_unique_primitives)
        if cfg.kind == "length":
            return self._length_block(rng, n, split)
        return self._jump_block(rng, n, split)

    def _length_block(self, rng: random.Random, n: int, split: str) -> sc.StarBlock:
        cfg, g = self.config, self._grammar
        steps = sc.halving_steps(cfg.source_max_length, cfg.max_length)
        test = split == "test"
        S = cfg.source_max_length
        lo, hi = (S + 1, 2 * S) if test else (1, S)
        chunks, count, empty = [], 0, 0
        while count < n:
            # halve the longest dataset's block (the first chunk); an example must stay inside the bounds of
            # every intermediate split, else it is dropped and further chunks of the stream fill the block
            block = g.sample_block(rng, n, lo, hi, max_unique=cfg.max_unique_primitives)
            bound = S
            for _ in range(steps):
                block = sc.halve_block(g, block)
                bound //= 2
                length = block.lengths(g)
                keep = (bound < length) & (length <= 2 * bound) if test else (length > 0) & (length <= bound)
                block = block.take(np.flatnonzero(keep))
            chunks.append(block)
            count += len(block)
            empty = empty + 1 if len(block) == 0 else 0
            if empty == 20:
                raise ValueError(
                    f"max_length={cfg.max_length}: halving source_max_length={S} leaves no {split} example "
                    "inside the bounds; choose a larger source_max_length"
                )
        return sc.StarBlock.concat(chunks).take(np.arange(n))

    def _jump_block(self, rng: random.Random, n: int, split: str) -> sc.StarBlock:
        cfg, g = self.config, self._grammar
        held = g.primitives.index(cfg.held_out_primitive)
        if split == "test":
            # a one-word command is the bare primitive itself: the train split's, not a test case
            return g.sample_block(
                rng, n, max(cfg.min_length, 2), cfg.max_length, max_unique=cfg.max_unique_primitives, force=held
            )
        bare = np.asarray([rng.random() < cfg.held_out_fraction for _ in range(n)], dtype=bool)
        nb = int(bare.sum())
        pool = [i for i in range(cfg.num_primitives) if i != held]
        rest = g.sample_block(rng, n - nb, cfg.min_length, cfg.max_length, pool=pool, max_unique=cfg.max_unique_primitives)
        bare_block = sc.StarBlock(
            np.zeros(nb, np.int64), np.full(nb, held, np.int64), np.full(nb, -1, np.int8), np.arange(nb + 1, dtype=np.int64)
        )
        order = np.empty(n, dtype=np.int64)
        order[~bare] = np.arange(n - nb)
        order[bare] = n - nb + np.arange(nb)
        return sc.StarBlock.concat([rest, bare_block]).take(order)

    def block_table(self, block, *, split, pilot=None, stats_dir=None) -> pa.Table:
        cfg = self.config
        if cfg.homogenize:
            # the base class draws through _draw: give it a copy bound to this split, so that
            # interleaved split generators (streaming) never see each other's split
            bound = copy.copy(self)
            bound._split = split
            return super(ScanStar, bound).block_table(block, split=split, pilot=pilot, stats_dir=stats_dir)
        stream, index, size = block
        return self._table(block_rng(cfg.seed, stream, index), size, split)
