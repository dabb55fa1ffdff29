"""The dataset-builder pattern every synthetic domain uses.

A domain builder subclasses :class:`SyntheticBuilder` and supplies its ``FEATURES``, a config class
(a :class:`SyntheticConfig` dataclass whose fields are declared with ``setting()``, or made from a
domain's settings class by :func:`config_class` and :func:`settings_fields`) and ``_draw(rng)``, which
returns one row. The base class validates the config by those declarations before any work, cuts
each split into blocks of ``block_size`` rows, each drawn from its own ``SeedSequence([seed, stream,
block])`` (so the rows do not depend on ``num_proc``, and a streamed dataset's shards are whole
blocks), homogenizes inside each block from one shared pilot (``homogenize=``; counts merged into
``homogenization.json``, read by :func:`homogenization_report`), writes whole Arrow tables, and
hashes the source of the modules that make the rows into the cache key. ``split_plans`` and
``block_table`` are the one block function every engine (``datasets``, :mod:`hf_synthsample.engines`) calls.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import inspect
import json
import math
import os
import random
import shutil
import sys
import typing
from typing import Any, Callable, ClassVar, Iterator, Mapping, Sequence

import datasets
import numpy as np
import pyarrow as pa

from .._version import __version__
from ..logging import get_logger

from ..atomic import write_json_atomic
from ..sampling.homogenize import HomogenizerChain, merge_stats, pilot_counts, report_from_stats
from ..sampling.report import HomogenizationReport, decode_value, encode_value
from ..sampling.settings import StreamHomogenizeSettings
from ..settings import Settings, setting
from ..validation import check_str_tuple
from ._datasets_compat import HookedBuilder, Key, cache_root, output_dir

logger = get_logger(__name__)

__all__ = ["SyntheticConfig", "SyntheticBuilder", "homogenization_report", "config_parameters", "config_class",
    "settings_fields", "check_settings", "check_named_parameters", "block_rng", "cache_name", "homogenized_config_name"]

SPLIT_STREAMS = {"train": 0, "validation": 1, "test": 2}
_PILOT_STREAM = 1_000
_STATS_DIRNAME = "_homogenization_blocks"
REPORT_FILENAME = "homogenization.json"
# Fields of datasets.BuilderConfig that are not generation parameters.
_BASE_FIELDS = {"name", "version", "data_dir", "data_files", "description", "named_parameters"}


#: Most blocks per split: the block list is built before any row is drawn, so 10**15 rows must be refused
#: up front rather than fill memory (10**6 blocks: a billion rows at the default ``block_size``).
MAX_BLOCKS = 1_000_000
#: Sizes below this many rows in all skip the disk estimate (they cannot matter).
_ESTIMATE_FROM_ROWS = 100_000


def homogenized_config_name(base: str, variable: str) -> str:
    """The name of config ``base`` homogenized on ``variable``: ``dcfg`` + ``max_paren_depth`` ->
    ``dcfg-homogenized-max-paren-depth``."""
    return f"{base}-homogenized-{variable.replace('_', '-')}"


def settings_fields(source: type[Settings], *, rename: Mapping[str, str] | None = None, exclude: Sequence[str] = (),
                    override: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, tuple[Any, dataclasses.Field]]:
    """Config fields made from the declarations of ``source``: ``{config field: (type, field)}`` for
    :func:`config_class`, each the source field's ``setting()`` (default, help, bounds or choices).

    ``rename``: source field -> config field; ``override``: source field -> changes of its declaration
    (``default`` or :class:`~hf_synthsample.settings.Spec` fields) where the builder means otherwise."""
    rename, override = rename or {}, override or {}
    hints, defaults = typing.get_type_hints(source), source.defaults()
    out = {}
    for name, spec in source.specs().items():
        if name not in exclude:
            changes = dict(override.get(name, {}))
            default = changes.pop("default", defaults.get(name, dataclasses.MISSING))
            field = dataclasses.field(default=default, metadata={"setting": dataclasses.replace(spec, **changes)})
            out[rename.get(name, name)] = (hints[name], field)
    return out


def config_class(*groups: Mapping[str, tuple[Any, dataclasses.Field]], after: str | None = None) -> Callable[[type], type]:
    """Decorator: the class as a ``dataclasses.dataclass`` with the fields of ``groups`` (:func:`settings_fields`)
    before its own, or after its own field ``after``."""

    def make(cls: type) -> type:
        own = dict(cls.__dict__.get("__annotations__", {}))
        keys = list(own)
        at = keys.index(after) + 1 if after else 0
        added = {}
        for group in groups:
            for name, (hint, field) in group.items():
                added[name] = hint
                setattr(cls, name, field)
        cls.__annotations__ = {**{k: own[k] for k in keys[:at]}, **added, **{k: own[k] for k in keys[at:]}}
        return dataclasses.dataclass(cls)

    return make


@functools.cache
def _settings_class(config_class: type) -> type[Settings]:
    """A frozen :class:`Settings` class with the ``setting()`` fields of ``config_class`` (names, types, declarations)."""
    hints = typing.get_type_hints(config_class)
    fields = [(f.name, hints[f.name], dataclasses.field(default=f.default, metadata=f.metadata))
              for f in dataclasses.fields(config_class) if "setting" in f.metadata]
    return dataclasses.make_dataclass(f"_{config_class.__name__}Settings", fields, bases=(Settings,), frozen=True)


def check_settings(config: Any) -> Settings:
    """Check each ``setting()`` field of ``config`` by its declaration (``ValueError``/``TypeError`` naming the
    field) and normalise its value in place (``[1, 2]`` -> ``(1, 2)``); returns the checked values."""
    cls = _settings_class(type(config))
    checked = cls(**{name: getattr(config, name) for name in cls.specs()})
    for name in cls.specs():
        setattr(config, name, getattr(checked, name))
    return checked


#: the homogenize fields of every config: :class:`StreamHomogenizeSettings`' declarations, under the builders'
#: names; the builder homogenizes nothing by default, and from a pilot of 10,000 draws
_HOMOGENIZE = settings_fields(
    StreamHomogenizeSettings, exclude=("seed",),
    rename={"variables": "homogenize", "mode": "homogenize_mode", "pilot": "homogenize_pilot"},
    override={"variables": {"default": (), "check": None}, "pilot": {"default": 10_000}})


@config_class(_HOMOGENIZE, after="block_size")
class SyntheticConfig(datasets.BuilderConfig):
    """Parameters every synthetic domain shares. Domain configs add their own fields."""

    num_examples: int = setting(10_000, help="rows in the train split", min=0)
    num_validation: int = setting(0, help="rows in the validation split (0: no split)", min=0)
    num_test: int = setting(0, help="rows in the test split (0: no split)", min=0)
    seed: int = setting(0, help="random seed; same seed, same rows", min=0)
    block_size: int = setting(1_000, help="rows per independently seeded block (the unit of sharding)", min=1)
    #: the parameters the config's name stands for (``dcfg``: ``distribution``), which no override may
    #: change (:func:`check_named_parameters`); not a generation parameter.
    named_parameters: tuple = dataclasses.field(default=(), repr=False, compare=False)

    def validate(self, salient_variables: Mapping[str, str]) -> None:
        """Check and normalise every parameter; raise before any work starts."""
        check_settings(self)
        if self.num_examples + self.num_validation + self.num_test == 0:
            raise ValueError("num_examples, num_validation, num_test: at least one split must have rows")
        self.homogenize = check_str_tuple("homogenize", self.homogenize, choices=salient_variables)
        # the requested sizes (SyntheticConfig's own: a subclass may read files to size its splits)
        check_block_count(SyntheticConfig.split_sizes(self), self.block_size)

    def split_sizes(self) -> dict[str, int]:
        return {"train": self.num_examples, "validation": self.num_validation, "test": self.num_test}

    def parameters(self) -> dict[str, Any]:
        """The generation parameters and their values (for cards and provenance)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _BASE_FIELDS}


def params_of(config: Any, cls: type, renamed: Mapping[str, str] | None = None) -> Any:
    """A ``cls`` dataclass from the config's fields of the same names (``renamed``: its field -> config field)."""
    renamed = renamed or {}
    return cls(**{f.name: getattr(config, renamed.get(f.name, f.name)) for f in dataclasses.fields(cls)})


def config_parameters(config_class: type) -> dict[str, dict]:
    """``{name: {"default": ..., "help": ...}}`` for the user-settable fields of a config class."""
    out = {}
    for f in dataclasses.fields(config_class):
        if f.name in _BASE_FIELDS:
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        out[f.name] = {"default": default, "help": f.metadata["setting"].help}
    return out


def check_named_parameters(builder_class: type, base: datasets.BuilderConfig, config: datasets.BuilderConfig,
                           overridden: Sequence[str]) -> None:
    """Refuse an override that contradicts the config's name (its ``named_parameters``), before any work:
    ``load_dataset("calculator", "dcfg", distribution="t2t")`` would write T2T rows named ``dcfg``.
    ``base`` and ``config`` are the named config before and after the overrides, both validated."""
    for field in getattr(base, "named_parameters", ()):
        if field not in overridden or getattr(config, field) == getattr(base, field):
            continue
        # the most specific config of the same family (its name stands for some of the same
        # parameters) whose name fits the values asked for
        fit = max((c for c in builder_class.BUILDER_CONFIGS
                   if getattr(c, "named_parameters", ()) and set(c.named_parameters) <= set(base.named_parameters)
                   and all(_same(getattr(c, f), getattr(config, f)) for f in c.named_parameters)),
                  key=lambda c: len(c.named_parameters), default=None)
        hint = f"use config {fit.name!r} instead" if fit is not None else "use another config"
        raise ValueError(
            f"{field}={getattr(config, field)!r} contradicts config {base.name!r}, whose name stands for "
            f"{field}={getattr(base, field)!r}; {hint}, or leave {field} out"
        )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return tuple(a) == tuple(b)
    if isinstance(a, str) and isinstance(b, (list, tuple)):  # homogenize="length" vs ("length",)
        return (a,) == tuple(b)
    return a == b


_SIZE_PARAMS = {"train": "num_examples", "validation": "num_validation", "test": "num_test"}


def check_block_count(sizes: Mapping[str, int], block_size: int) -> None:
    """Refuse split sizes needing more than :data:`MAX_BLOCKS` blocks (before any work)."""
    for split, size in sizes.items():
        blocks = -(-size // block_size)
        if blocks > MAX_BLOCKS:
            name = _SIZE_PARAMS.get(split, split)
            raise ValueError(
                f"{name}: {size:,} rows are {blocks:,} blocks of block_size={block_size:,}, more than the "
                f"{MAX_BLOCKS:,} accepted (hf_synthsample.builders.base.MAX_BLOCKS); lower {name} or raise block_size "
                f"(at most {MAX_BLOCKS * block_size:,} rows per split with this block_size)"
            )


def _free_bytes(path: str) -> int:
    """Free bytes on the disk holding ``path`` (its nearest existing parent)."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return shutil.disk_usage(path).free


def _human(num: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if num < 1000:
            return f"{num:,.1f} {unit}"
        num /= 1000
    return f"{num:,.1f} PB"


def check_fits_on_disk(builder: "SyntheticBuilder", sizes: Mapping[str, int]) -> None:
    """Refuse a size whose Arrow files cannot fit on the cache's disk, before any row is generated
    (bytes per row from 32 rows of a seed of their own; under 100,000 rows in all, no estimate)."""
    total = sum(sizes.values())
    if total < _ESTIMATE_FROM_ROWS:
        return
    try:
        rows = builder._draw_block(block_rng(0, _PILOT_STREAM + 1, 0), 32)
        per_row = pa.Table.from_pylist(rows, schema=builder.info.features.arrow_schema).nbytes / max(len(rows), 1)
    except NotImplementedError:  # a builder without row draws (exact SCAN): sizes are fixed and small
        return
    need = per_row * total
    where = cache_root(builder)
    free = _free_bytes(where)
    if need > free:
        parts = ", ".join(f"{_SIZE_PARAMS.get(k, k)}={v:,}" for k, v in sizes.items() if v)
        raise ValueError(
            f"num_examples: {total:,} rows ({parts}) need about {_human(need)} of disk ({_human(per_row)} per row) "
            f"in {where}, which has {_human(free)} free; lower num_examples / num_validation / num_test, "
            "use streaming=True, or pass a cache_dir on a larger disk"
        )


#: prefix of every builder's ``dataset_name`` (its folder in the ``datasets`` cache)
CACHE_PREFIX = "hf_synthsample_"


def cache_name(domain: str) -> str:
    """The ``dataset_name`` (cache folder) of ``domain``'s builder: ``hf_synthsample_<domain>``.

    Example:
        >>> cache_name("scan_star")
        'hf_synthsample_scan_star'
    """
    if not domain:
        raise ValueError("domain: a builder class must set DOMAIN (its name in hf_synthsample.builders.BUILDERS)")
    return CACHE_PREFIX + domain


def block_rng(seed: int, stream: int, block: int) -> random.Random:
    """The random source of one block: independent of every other ``(stream, block)``."""
    state = np.random.SeedSequence([seed, stream, block]).generate_state(4, np.uint32)
    return random.Random(int.from_bytes(state.tobytes(), "little"))


def _code_hash(cls: type) -> str:
    h = hashlib.sha256(__version__.encode())
    modules = [__name__, "hf_synthsample.sampling.homogenize", cls.__module__, *cls.SOURCE_MODULES]
    for name in dict.fromkeys(modules):
        path = inspect.getsourcefile(sys.modules[name]) if name in sys.modules else None
        if path and os.path.exists(path):
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]


class SyntheticBuilder(HookedBuilder):
    """Base builder of the synthetic domains (see the module docstring)."""

    BUILDER_CONFIG_CLASS = SyntheticConfig
    VERSION = datasets.Version("1.0.0")
    #: the domain name this builder is registered under (``hf_synthsample.builders.BUILDERS``)
    DOMAIN: ClassVar[str] = ""
    #: name -> description of the salient variables (each one is also a column)
    SALIENT_VARIABLES: ClassVar[dict[str, str]] = {}
    #: modules whose source determines the rows (besides the builder's own), for the cache hash
    SOURCE_MODULES: ClassVar[tuple[str, ...]] = ()
    DESCRIPTION: ClassVar[str] = ""
    CITATION: ClassVar[str] = ""
    HOMEPAGE: ClassVar[str] = ""
    #: Hub card YAML known for the domain (``language``, ``task_categories``; a ``license`` only if known)
    CARD_METADATA: ClassVar[dict[str, Any]] = {}
    #: column -> ``datasets.Value`` dtype, in column order (read by :meth:`_features`)
    FEATURES: ClassVar[dict[str, str]] = {}

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("hash", _code_hash(type(self)))
        # the cache folder is named after dataset_name: a plain "calculator" is what datasets.load_dataset
        # finds offline in the same cache, and SCAN / SCAN* (one module) would share one
        kwargs.setdefault("dataset_name", cache_name(self.DOMAIN))
        super().__init__(*args, **kwargs)

    def download_and_prepare(self, *args, **kwargs):
        """``datasets``' method, with the ``num_proc`` workers dying with this process (see ``processes``)."""
        from ..processes import children_die_with_parent

        with children_die_with_parent():
            return super().download_and_prepare(*args, **kwargs)

    # ------------------------------------------------------------------ config handling
    def check_config_kwargs(self, config_name: str | None, config_kwargs: dict[str, Any]) -> None:
        if config_name is not None and config_name not in self.builder_configs:
            raise ValueError(f"config {config_name!r} does not exist for {self.DOMAIN}; "
                             f"available configs: {list(self.builder_configs)}")
        accepted = config_parameters(self.BUILDER_CONFIG_CLASS)
        unknown = [k for k in config_kwargs if k == "named_parameters" or (k not in accepted and k not in _BASE_FIELDS)]
        if unknown:
            raise ValueError(
                f"unknown parameter {unknown[0]!r} for {self.DOMAIN} configs; accepted parameters: {sorted(accepted)}"
            )

    def configured(self, config: datasets.BuilderConfig, config_kwargs: dict[str, Any]) -> None:
        for key, value in config_kwargs.items():
            if value is None:  # datasets skips None overrides; here None is meaningful (e.g. max_length)
                setattr(config, key, None)
        config.validate(self.SALIENT_VARIABLES)
        if config_kwargs and getattr(config, "named_parameters", ()):
            base = copy.deepcopy(self.builder_configs[config.name])
            base.validate(self.SALIENT_VARIABLES)
            check_named_parameters(type(self), base, config, list(config_kwargs))

    # ------------------------------------------------------------------ domain hooks
    def _features(self) -> datasets.Features:
        """The columns: :attr:`FEATURES` (a domain with nested columns overrides this)."""
        return datasets.Features({name: datasets.Value(dtype) for name, dtype in self.FEATURES.items()})

    def _draw(self, rng: random.Random) -> dict:  # pragma: no cover - abstract
        """One row of the configured distribution (before homogenization)."""
        raise NotImplementedError

    def _start_block(self, split: str, stream: int, block: int) -> None:
        """Called before each block is drawn (domains that keep per-block state reset it here)."""

    def _draw_block(self, rng: random.Random, n: int) -> list[dict]:
        """``n`` rows; domains may override for speed (same rows as ``n`` calls of ``_draw``)."""
        draw = self._draw
        return [draw(rng) for _ in range(n)]

    # ------------------------------------------------------------------ datasets hooks
    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=self.DESCRIPTION, features=self._features(), citation=self.CITATION,
                                    homepage=self.HOMEPAGE)

    def _split_generators(self, dl_manager):
        streaming = isinstance(dl_manager, datasets.StreamingDownloadManager)
        if not streaming:
            check_fits_on_disk(self, self.config.split_sizes())
        homogenized = getattr(self.config, "homogenize", ()) and not streaming
        stats_dir = os.path.join(output_dir(self), _STATS_DIRNAME) if homogenized else None
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"blocks": list(blocks), **context})
            for split, (blocks, context) in self.split_plans(stats_dir).items()
        ]

    # ------------------------------------------------------------------ the block function (every engine's)
    def split_plans(self, stats_dir: str | None = None) -> dict[str, tuple[list, dict]]:
        """``split -> (blocks, context)``: each generated split's block specs and the split-wide inputs
        every block needs (computed once: the homogenization pilot...), small picklable values;
        ``block_table(blocks[i], **context)`` is block ``i`` of the split."""
        cfg = self.config
        pilot = None
        if cfg.homogenize:
            counts = pilot_counts(self._draw, block_rng(cfg.seed, _PILOT_STREAM, 0), cfg.homogenize_pilot,
                                  cfg.homogenize, cfg.homogenize_mode, cfg.eps)
            pilot = tuple(counts)  # a tuple: datasets shards gen_kwargs over lists only
        plans = {}
        for split, size in cfg.split_sizes().items():
            if size == 0:
                continue
            stream = SPLIT_STREAMS[split]
            blocks = [
                (stream, b, min(cfg.block_size, size - b * cfg.block_size))
                for b in range(math.ceil(size / cfg.block_size))
            ]
            plans[split] = (blocks, {"split": split, "pilot": pilot, "stats_dir": stats_dir})
        return plans

    def block_num_rows(self, block) -> int:
        """Rows of the block with spec ``block`` (known before it is generated)."""
        return int(block[2])

    def block_table(self, block, *, split, pilot=None, stats_dir=None) -> pa.Table:
        """The rows of one block (spec ``(stream, block, size)``) as an Arrow table."""
        cfg = self.config
        stream, index, size = block
        rng = block_rng(cfg.seed, stream, index)
        self._start_block(split, stream, index)
        if cfg.homogenize:
            rows = self._accepted_rows(lambda _: self._draw(rng), rng, block, split, pilot, stats_dir)
        else:
            rows = self._draw_block(rng, size)
        return pa.Table.from_pylist(rows, schema=self.info.features.arrow_schema)

    def _accepted_rows(self, draw: Callable[[int], dict | None], rng: random.Random, block, split: str,
                       pilot, stats_dir: str | None) -> list[dict]:
        """The block's rows: ``draw(rows so far)`` (``None``: a rejected draw) through the homogenizer, if any."""
        cfg = self.config
        _, index, size = block
        chain = HomogenizerChain(cfg.homogenize, cfg.eps, cfg.homogenize_mode, pilot) if cfg.homogenize else None
        rows: list[dict] = []
        while len(rows) < size:
            row = draw(len(rows))
            if row is not None and (chain is None or chain.offer(row, rng)):
                rows.append(row)
        if chain is not None and stats_dir is not None:
            stats = _convert_stats(chain.stats(), lambda h: [[encode_value(v), c] for v, c in h.items()])
            write_json_atomic(os.path.join(stats_dir, f"{split}-{index:07d}.json"), stats)
        return rows

    def _generate_tables(self, blocks, **context) -> Iterator[tuple[Key, pa.Table]]:
        for i, block in enumerate(blocks):
            yield Key(i, 0), self.block_table(block, **context)

    def generated(self, folder: str) -> None:
        """Merge the blocks' homogenization counts into ``homogenization.json`` beside the splits."""
        stats_dir = os.path.join(folder, _STATS_DIRNAME)
        if not os.path.isdir(stats_dir):
            return
        per_split: dict[str, list] = {}
        for fname in sorted(os.listdir(stats_dir)):
            split = fname.rsplit("-", 1)[0]
            with open(os.path.join(stats_dir, fname)) as f:
                stats = _convert_stats(json.load(f), lambda pairs: {decode_value(v): c for v, c in pairs})
            per_split.setdefault(split, []).append(stats)
        cfg = self.config
        reports = {
            split: report_from_stats(merge_stats(stats), cfg.homogenize, cfg.homogenize_mode, cfg.eps).to_dict()
            for split, stats in per_split.items()
        }
        write_json_atomic(os.path.join(folder, REPORT_FILENAME), reports)
        shutil.rmtree(stats_dir)
        for split, report in reports.items():
            logger.info(
                f"{self.DOMAIN}/{cfg.name} {split}: homogenized {', '.join(cfg.homogenize)} with "
                f"{report['draws']} draws for {report['accepted']} rows"
            )


def _convert_stats(stats: Mapping, hist: Callable[[Any], Any]) -> dict:
    """The homogenization statistics with every histogram passed through ``hist`` (to and from JSON)."""
    return {"draws": stats["draws"], "accepted": stats["accepted"],
            **{key: {v: hist(h) for v, h in stats[key].items()} for key in ("before", "after")},
            **{key: [hist(h) for h in stats[key]] for key in ("offered", "level_accepted")}}


def homogenization_report(dataset: datasets.Dataset) -> HomogenizationReport | None:
    """The generator-side :class:`HomogenizationReport` of a split built with ``homogenize=`` (from
    its cache directory's ``homogenization.json``), or ``None``."""
    files = getattr(dataset, "cache_files", None) or []
    if not files:
        return None
    path = os.path.join(os.path.dirname(files[0]["filename"]), REPORT_FILENAME)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        reports = json.load(f)
    split = str(dataset.split) if dataset.split is not None else None
    if split not in reports:
        return None
    return HomogenizationReport.from_dict(reports[split])
