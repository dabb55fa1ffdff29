"""Karel dataset builder: program synthesis tasks (program + I/O grids) with salient-variable controls
(Shin et al. 2019, sections 4-5; the DSL and data format of Bunel et al. 2018).

Each row: ``guid``, ``program_tokens``, ``program_json``, ``examples`` (``num_shown`` shown then
``num_held_out`` held-out pairs: ``example_index``, ``actions``, input/output grid JSON, and the sparse
tensors with ``tensors=True``) and the salient variables of :mod:`hf_synthsample.domains.karel.features`.
Every pair runs without a crash or timeout and changes the world; the shown pairs cover every branch.

Configs: ``baseline`` (grammar programs with at least two actions and a move; walls and markers on
10% of cells; grids 2..16), ``uniform-io``, ``narrow-io`` and the paper's twelve
``narrow-m<marker>-w<wall>-<counts>`` sets, ``action-only``, ``while-in-while``, ``while-in-if``, and
``baseline-homogenized-<variable>``.

Deduplication, independent of ``num_proc``: a program is routed by a stable hash of its tokens into
an interval cut in proportion to the split sizes, and a block keeps only programs of its split's
interval (no program in two splits) and redraws one it already used. ``dedup="exact"`` gives every
block an equal share of the interval: no program twice anywhere, for more draws per row.

Example:
    >>> import hf_synthsample
    >>> ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=20, seed=1)
    >>> row = ds["train"][0]
    >>> len(row["examples"]), row["program_tokens"][:3]
    (6, ['DEF', 'run', 'm('])
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random

import datasets

from ..domains.karel import features as F
from .calculator import SHIN2019_CITATION
from ..domains.karel.dsl import parse, to_json, to_tokens
from ..domains.karel.interpreter import compile_program
from ..domains.karel.io import MARKER_COUNTS, IOParams, IOSamplingError, flat_pairs_to_examples, sample_io_flat
from ..domains.karel.programs import ProgramParams, sample_program
from ..settings import setting
from ..validation import check_choice, check_int
from .base import SyntheticBuilder, SyntheticConfig, config_class, homogenized_config_name, params_of, settings_fields

__all__ = ["KarelConfig", "Karel", "karel_features", "resample_io", "resample_karel_io", "limit_shown"]

NARROW_RATIOS = ((0.05, 0.85), (0.25, 0.65), (0.65, 0.25), (0.85, 0.05))
#: the config's names of the fields of ProgramParams and IOParams that it renames
_PROGRAM_NAMES = {"mode": "program_mode"}
_IO_NAMES = {"distribution": "io_distribution"}


@config_class(settings_fields(ProgramParams, rename=_PROGRAM_NAMES), settings_fields(IOParams, rename=_IO_NAMES))
class KarelConfig(SyntheticConfig):
    """Karel generation parameters: the fields of :class:`ProgramParams` (programs) and :class:`IOParams`
    (inputs), declared there, and the builder's own."""

    max_programs: int = setting(10_000, help="programs tried for one row before giving up with an error", min=1)
    tensors: bool = setting(False, help="also store the sparse 16x18x18 tensors of every grid")
    dedup: str = setting("split", choices=("split", "exact"),
                         help="'split': no program in two splits, none twice in a block; 'exact': none twice anywhere "
                              "(each block owns a share of the program hash space; draws grow with the blocks)")

    def validate(self, salient_variables) -> None:
        super().validate(salient_variables)
        self.program_params()  # the checks between fields
        self.io_params()
        if self.program_mode == "actions":
            space = sum(5**n for n in range(max(self.min_actions, 1), min(self.max_actions, 30) + 1))
            need = max(self.split_sizes().values())
            if space < need:
                raise ValueError(f"max_actions: the program space holds {space} action-only programs of "
                                 f"{self.min_actions}..{self.max_actions} actions, fewer than the {need} rows asked for")
        if self.tensors and self.max_grid_size > 16:
            raise ValueError(f"tensors: the tensor encoding holds grids up to 16x16; max_grid_size is {self.max_grid_size}")

    def program_params(self) -> ProgramParams:
        return params_of(self, ProgramParams, _PROGRAM_NAMES)

    def io_params(self) -> IOParams:
        return params_of(self, IOParams, _IO_NAMES)


_BASELINE = dict(require_move=True, min_actions=2, io_distribution="uniform", wall_ratio_range=(0.1, 0.1),
                 marker_ratio_range=(0.1, 0.1), marker_counts="geometric")


def _builder_configs() -> list[KarelConfig]:
    return [
        KarelConfig(name="baseline", **_BASELINE, description="Grammar programs with at least two actions and a "
                    "move; inputs with walls and markers each on 10% of cells (geometric counts); grids 2..16."),
        KarelConfig(name="uniform-io", require_move=True, min_actions=2, named_parameters=("io_distribution",),
                    description="Baseline programs with the uniform salient I/O distribution (Shin et al. 2019, "
                    "section 4.2)."),
        KarelConfig(name="narrow-io", require_move=True, min_actions=2, io_distribution="narrow",
                    named_parameters=("io_distribution",),
                    description="Baseline programs with a narrow I/O distribution (marker_ratio, wall_ratio and "
                    "marker_counts are parameters)."),
        *(KarelConfig(name=f"narrow-m{mr:g}-w{wr:g}-{counts.replace('_', '-')}", require_move=True, min_actions=2,
                      io_distribution="narrow", marker_ratio=mr, wall_ratio=wr, marker_counts=counts,
                      named_parameters=("io_distribution", "marker_ratio", "wall_ratio", "marker_counts"),
                      description=f"Narrow I/O: marker ratio {mr}, wall ratio {wr}, {counts} marker counts (paper "
                      "Table 1).") for mr, wr in NARROW_RATIOS for counts in MARKER_COUNTS),
        KarelConfig(name="action-only", program_mode="actions", min_actions=1, max_actions=20,
                    named_parameters=("program_mode",),
                    description="Action-only programs of 1..20 uniform actions (paper section 4.3), uniform I/O."),
        *(KarelConfig(name=pattern, **_BASELINE, pattern=pattern, min_nesting=2, p_control=0.5, max_size=50,
                      named_parameters=("pattern",), description=f"Every program nests a "
                      f"{pattern.replace('-', ' ')} (paper section 4.3), baseline I/O.")
          for pattern in ("while-in-while", "while-in-if")),
        # num_grids is constant within a config (num_shown)
        *(KarelConfig(name=homogenized_config_name("baseline", v), **_BASELINE, homogenize=(v,), eps=0.05,
                      homogenize_pilot=500, named_parameters=("homogenize",),
                      description=f"Baseline homogenized on {v} (generator-side).")
          for v in F.SALIENT_VARIABLES if v != "num_grids"),
    ]


def karel_features(tensors: bool = False) -> datasets.Features:
    """The ``Features`` of Karel rows (and of :func:`~hf_synthsample.domains.karel.jsonl.read_jsonl`)."""
    grid = {k: datasets.Value(t) for k, t in (("rows", "int32"), ("cols", "int32"), ("crashed", "bool"),
                                               ("hero", "string"), ("blocked", "string"), ("markers", "string"))}
    example = {
        "example_index": datasets.Value("int32"),
        "actions": datasets.List(datasets.Value("string")),
        "inpgrid_json": grid,
        "outgrid_json": dict(grid),
    }
    if tensors:
        example["inpgrid_tensor"] = datasets.Value("string")
        example["outgrid_tensor"] = datasets.Value("string")
    cols = {
        "guid": datasets.Value("string"),
        "program_tokens": datasets.List(datasets.Value("string")),
        "program_json": datasets.Value("string"),
        "examples": datasets.List(example),
    }
    for v in F.SALIENT_VARIABLES:
        cols[v] = datasets.Value("float64" if v in ("control_flow_ratio", "marker_ratio", "wall_ratio", "marker_count")
                                 else "int32")
    return datasets.Features(cols)


def _flat_stats(pair: tuple) -> tuple:
    rows, cols, B, M = pair[:4]
    return rows, cols, B.count(1), len(M) - M.count(0), sum(M)


def task_row(program, pairs: list, num_shown: int, guid: str, *, tensors: bool = False) -> dict:
    """A dataset row from a program and its flat pairs (see ``io.sample_io_flat``)."""
    tokens = to_tokens(program)
    row = {
        "guid": guid,
        "program_tokens": tokens,
        "program_json": json.dumps(to_json(program)),
        "examples": flat_pairs_to_examples(pairs, tensors=tensors),
    }
    row.update(F.program_features(program))
    row.update(F.input_features([_flat_stats(p) for p in pairs[:num_shown]]))
    return row


def _route(key: str) -> float:
    """A stable point of [0, 1) for a program's token string."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") / 2**64


class Karel(SyntheticBuilder):
    """Karel program synthesis tasks with the salient variables of Shin et al. (2019)."""

    DOMAIN = "karel"
    BUILDER_CONFIG_CLASS = KarelConfig
    BUILDER_CONFIGS = _builder_configs()
    DEFAULT_CONFIG_NAME = "baseline"
    SALIENT_VARIABLES = F.SALIENT_VARIABLES
    SOURCE_MODULES = tuple(f"hf_synthsample.domains.karel.{m}" for m in ("dsl", "world", "interpreter", "programs",
                                                                        "io", "features"))
    CARD_METADATA = {"task_categories": ["text-generation"]}  # programs from I/O grids, no natural language
    DESCRIPTION = (
        "Karel program synthesis (Bunel et al., 2018; Shin et al., 2019): each row is a program in the "
        "52-token Karel DSL with I/O pairs (grid JSON: shown pairs then held-out pairs). Every pair runs "
        "without crashing, changes the world, and the shown inputs cover every branch. Columns: guid, "
        "program_tokens, program_json, examples, and the salient variables program_size, num_control_flow, "
        "control_flow_ratio, nesting_depth, grid_size, marker_ratio, wall_ratio, marker_count, num_grids."
    )
    CITATION = SHIN2019_CITATION + """
@inproceedings{bunel2018leveraging,
  title={Leveraging Grammar and Reinforcement Learning for Neural Program Synthesis},
  author={Bunel, Rudy and Hausknecht, Matthew and Devlin, Jacob and Singh, Rishabh and Kohli, Pushmeet},
  booktitle={International Conference on Learning Representations},
  year={2018}
}"""

    def _features(self) -> datasets.Features:
        return karel_features(self.config.tensors)

    @functools.cached_property
    def _params(self) -> tuple[ProgramParams, IOParams]:
        return self.config.program_params(), self.config.io_params()

    def _start_block(self, split: str, stream: int, block: int) -> None:
        cfg = self.config
        sizes = {k: v for k, v in cfg.split_sizes().items() if v}
        total, lo = sum(sizes.values()), 0.0
        for name, n in sizes.items():
            hi = lo + n / total
            if name == split:
                break
            lo = hi
        if cfg.dedup == "exact":  # each block owns an equal share of its split's interval
            share = (hi - lo) / math.ceil(sizes[split] / cfg.block_size)
            lo, hi = lo + block * share, lo + (block + 1) * share
        self._interval = (lo, hi)
        self._seen: set = set()

    def _draw(self, rng: random.Random) -> dict:
        pp, iop = self._params
        lo, hi = getattr(self, "_interval", (0.0, 1.0))  # the homogenization pilot has no block
        seen = getattr(self, "_seen", set())
        route = lo > 0.0 or hi < 1.0
        for _ in range(self.config.max_programs):
            program = sample_program(rng, pp)
            key = " ".join(to_tokens(program))
            if key in seen or (route and not lo <= _route(key) < hi):
                continue
            try:
                pairs = sample_io_flat(compile_program(program), rng, iop)
            except IOSamplingError:
                continue
            seen.add(key)
            return task_row(program, pairs, iop.num_shown, f"{rng.getrandbits(64):016x}", tensors=self.config.tensors)
        raise ValueError(
            f"max_programs: no new program with a valid I/O set in {self.config.max_programs} programs; the program "
            "space is exhausted for this split size, or the I/O constraints (max_attempts, wall ratios, coverage) "
            "are too strict for these programs"
        )


def resample_io(batch: dict, *, seed: int = 0, io_params: IOParams | None = None, tensors: bool = False,
                on_failure: str = "raise", **io_kwargs) -> dict:
    """Keep the programs, replace the I/O (the paper's section 4.2/5.1): for ``Dataset.map(batched=True)``.

    A row's pairs are seeded by ``seed``, its ``guid`` and program (not by batch size or ``num_proc``).
    ``on_failure="drop"`` drops rows whose program gets no valid I/O set; ``"raise"`` raises
    :class:`~hf_synthsample.domains.karel.io.IOSamplingError`.

    Example:
        >>> import hf_synthsample
        >>> from hf_synthsample.builders.karel import resample_io
        >>> ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=8, split="train")
        >>> new = ds.map(resample_io, batched=True, fn_kwargs={"seed": 1, "max_grid_size": 8, "on_failure": "drop"})
        >>> set(map(tuple, new["program_tokens"])) <= set(map(tuple, ds["program_tokens"])), max(new["grid_size"]) <= 8
        (True, True)
    """
    check_choice("on_failure", on_failure, ("raise", "drop"))
    p = (io_params or IOParams()).replace(**io_kwargs)
    out: dict = {k: [] for k in (*batch, "examples", *F.SALIENT_VARIABLES)}
    for i, tokens in enumerate(batch["program_tokens"]):
        guid = batch["guid"][i] if "guid" in batch else ""
        program = parse(tokens)
        digest = hashlib.blake2b(f"{seed}\x00{guid}\x00{' '.join(tokens)}".encode(), digest_size=16).digest()
        rng = random.Random(int.from_bytes(digest, "big"))
        try:
            pairs = sample_io_flat(compile_program(program), rng, p)
        except IOSamplingError:
            if on_failure == "drop":
                continue
            raise
        row = task_row(program, pairs, p.num_shown, guid, tensors=tensors)
        for k in out:
            out[k].append(row[k] if k in row else batch[k][i])
    return out


def limit_shown(batch: dict, *, num_grids: int, num_shown: int = 5) -> dict:
    """Keep ``num_grids`` of the ``num_shown`` shown pairs (and every held-out pair) per row: the
    "number of grids" variable, for ``Dataset.map(batched=True)`` or a ``set_transform``.

    Example:
        >>> import hf_synthsample
        >>> ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=4, split="train")
        >>> two = ds.map(limit_shown, batched=True, fn_kwargs={"num_grids": 2})
        >>> len(two[0]["examples"]), two[0]["num_grids"]
        (3, 2)
    """
    from ..domains.karel.world import World

    num_shown = check_int("num_shown", num_shown, min=1)
    num_grids = check_int("num_grids", num_grids, min=1, max=num_shown)
    out = {k: list(v) for k, v in batch.items()}
    out["examples"] = []
    for k in F.INPUT_VARIABLES:
        out.setdefault(k, [None] * len(batch["examples"]))
    for i, examples in enumerate(batch["examples"]):
        kept = list(examples[:num_grids]) + list(examples[num_shown:])
        out["examples"].append([{**ex, "example_index": j} for j, ex in enumerate(kept)])
        stats = [F.world_stats(World.from_json(ex["inpgrid_json"])) for ex in kept[:num_grids]]
        for k, v in F.input_features(stats).items():
            out[k][i] = v
    return out


#: the name under which ``hf_synthsample`` exports :func:`resample_io`
resample_karel_io = resample_io
