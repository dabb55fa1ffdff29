"""Generation, structure / salient columns and Hub-layout folders on Ray Data (docs/guides/engines.md).

:func:`generate` returns the rows of ``hf_synthsample.load_dataset(...)[split]`` in the same order with
any number of workers; :func:`map_columns` runs a ``Dataset.map(batched=True)`` function on the cluster;
:func:`write` / :func:`to_hub_folder` write what ``hf-synthsample generate`` writes. Ray is optional
(``pip install 'hf-synthsample[ray]'``): this module imports without it, and every function raises an
``ImportError`` naming the extra when it is missing. Ray is started when first needed (:func:`start_ray`).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa

from .._version import __version__
from ..validation import check_int
from .blocks import BlockPlan, block_table, plan_split, plan_splits

if TYPE_CHECKING:  # pragma: no cover
    import ray.data

    from ..structure import Language

__all__ = ["require_ray", "start_ray", "warm_workers", "generate", "from_plan", "map_columns", "structure_columns",
    "salient_columns", "write", "to_hub_folder"]

IF_EXISTS = ("error", "overwrite")


#: what Ray and Ray Data print on this process's console when this library starts Ray (a local
#: runtime prints about 130 INFO lines for one small pipeline otherwise); Ray's log files keep all
RAY_CONSOLE_LEVEL = logging.WARNING


def require_ray(start: bool = True):
    """The ``ray`` module with Ray Data (``ImportError`` naming the extra when it is missing);
    ``start``: also start (or join) Ray quietly unless it runs already (:func:`start_ray`)."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as err:
        raise ImportError(
            "hf_synthsample.engines.ray needs Ray Data, which is not installed: pip install 'hf-synthsample[ray]' "
            f"(or pip install 'ray[data]')"
        ) from err
    if start:
        start_ray()
    return ray


def start_ray(address: str | None = None, *, warm: bool = True, worker_niceness: int | None = 0,
              **init_kwargs: Any) -> bool:
    """Start a local Ray runtime, or join ``address`` (default: ``RAY_ADDRESS``; ``"auto"``, a head's
    ``HOST:6379`` or a Ray Client ``"ray://HOST:10001"``), with Ray's and Ray Data's console at
    :data:`RAY_CONSOLE_LEVEL`; ``init_kwargs`` go to ``ray.init`` (``num_cpus``, ``runtime_env``...).
    Returns ``False`` and changes nothing when Ray already runs (a user's own ``ray.init(...)`` keeps
    its settings). Every function here starts Ray this way when needed (see the module's example).

    ``warm``: start one task per CPU of the cluster that imports this library's block function in a
    worker (without waiting for them), so the first job's tasks do not each pay that import.
    ``worker_niceness``: for a local runtime, how much lower the workers' CPU priority is than this
    process's: 0 (Ray's own default is 15), so on a busy machine they get the CPU share that
    ``num_proc``'s processes get; ``None`` keeps Ray's. A cluster's nodes keep their own setting."""
    ray = require_ray(start=False)
    if ray.is_initialized():
        return False
    init_kwargs.setdefault("logging_level", RAY_CONSOLE_LEVEL)
    init_kwargs.setdefault("include_dashboard", False)
    local = address is None and not os.environ.get("RAY_ADDRESS")
    if local and worker_niceness is not None:
        worker_niceness = check_int("worker_niceness", worker_niceness, min=0)
        init_kwargs["_system_config"] = {"worker_niceness": worker_niceness, **init_kwargs.get("_system_config", {})}
    before = signal.getsignal(signal.SIGTERM)
    ray.init(address=address, **init_kwargs)
    _keep_ray_sigterm_out_of_forks(before)
    level = init_kwargs["logging_level"]
    level = logging.getLevelName(level.upper()) if isinstance(level, str) else level
    if isinstance(level, int) and level >= RAY_CONSOLE_LEVEL:  # Ray Data's console follows Ray's
        _quiet_ray_data_console()
    if warm:
        warm_workers()
    return True


def _import_block_function(hold: float) -> tuple[str, int]:
    """Run in a worker: import what the generation tasks need (the block function, ``datasets``,
    every generator's modules); hold the CPU ``hold`` s so the warm-up tasks land on different workers."""
    import time

    from ..builders import BUILDERS, get_builder_class
    from ..load import load_dataset_builder  # noqa: F401 (datasets, the builders' registry)
    from . import blocks  # noqa: F401

    for domain in BUILDERS:  # every generator's modules (its domain code), as the block function imports them
        get_builder_class(domain)

    time.sleep(hold)
    import ray

    return ray.get_runtime_context().get_node_id(), os.getpid()


def warm_workers(hold: float = 0.1) -> list:
    """Start one task per CPU of the cluster that imports the block function (and ``datasets``)
    in a Ray worker, and return their object refs without waiting: Ray keeps those workers for the
    next tasks of this job, which then start without the 1-2 s import. :func:`start_ray` calls it;
    ``ray.get`` of the refs gives each task's ``(node id, worker pid)``."""
    ray = require_ray(start=False)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    task = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(_import_block_function)
    return [task.remote(hold) for _ in range(max(1, cpus))]


_FORK_HOOKS: list = []


def _keep_ray_sigterm_out_of_forks(before: Any) -> None:
    """Forked children get back the SIGTERM handler from before ``ray.init``."""
    # Ray's handler (sys.exit) outlives ray.shutdown; in a forked pool worker, terminate() then raised
    # SystemExit that could leave it blocked on the queue lock (load_dataset(num_proc=2) after Ray hung).
    ray_handler = signal.getsignal(signal.SIGTERM)
    if ray_handler is before or not hasattr(os, "register_at_fork"):
        return

    def restore_in_child() -> None:
        if signal.getsignal(signal.SIGTERM) is ray_handler:
            signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)

    if not _FORK_HOOKS:  # once per process: the hook checks the handler it finds at fork time
        os.register_at_fork(after_in_child=lambda: [hook() for hook in _FORK_HOOKS])
    _FORK_HOOKS.append(restore_in_child)


def _quiet_ray_data_console() -> None:
    """Ray Data's console handler at :data:`RAY_CONSOLE_LEVEL` (not its log file), unless the user
    gave Ray Data a logging config of their own (``RAY_DATA_LOGGING_CONFIG``)."""
    if os.environ.get("RAY_DATA_LOGGING_CONFIG"):
        return
    for handler in logging.getLogger("ray.data").handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.setLevel(max(handler.level, RAY_CONSOLE_LEVEL))


# ---------------------------------------------------------------------------------- generation
#: read tasks per CPU of the cluster when ``rows_per_task`` is not given: a few, so that a slow
#: or busy worker does not hold the last task alone, while each task stays long against Ray's
#: per-task cost (about 0.1-0.2 s of scheduling on a busy 2-core machine)
TASKS_PER_CPU = 4

#: below this many rows a split gets fewer tasks than ``TASKS_PER_CPU`` per CPU (never fewer than
#: one per CPU): small splits do not become many tiny tasks and files
MIN_ROWS_PER_TASK = 5_000

#: rows a generation task yields at a time (whole blocks): its memory is a few of these, however
#: large the task; Ray Data merges them into blocks of its ``target_max_block_size``
ROWS_PER_YIELD = 50_000


def _ranges(sizes: Sequence[int], rows_per_task: int) -> list[tuple[int, int]]:
    """``(first, stop)`` ranges of consecutive parts (of ``sizes`` rows) of about ``rows_per_task`` rows each."""
    ranges, start, rows = [], 0, 0
    for i, n in enumerate(sizes):
        rows += n
        if rows >= rows_per_task or i == len(sizes) - 1:
            ranges.append((start, i + 1))
            start, rows = i + 1, 0
    return ranges


def _cluster_cpus() -> int:
    import ray

    try:
        return max(1, int(ray.cluster_resources().get("CPU", 1)))
    except Exception:  # pragma: no cover - a cluster that cannot say
        return 1


def _auto_tasks(total_rows: int) -> int:
    """A multiple of the cluster's CPUs (so the last round keeps every CPU busy): up to
    :data:`TASKS_PER_CPU` tasks per CPU, fewer for small splits (about :data:`MIN_ROWS_PER_TASK`
    rows each, and never fewer than one per CPU)."""
    cpus = _cluster_cpus()
    return cpus * min(TASKS_PER_CPU, max(1, total_rows // (MIN_ROWS_PER_TASK * cpus)))


def _even_ranges(sizes: Sequence[int], tasks: int) -> list[tuple[int, int]]:
    """``(first, stop)`` ranges of consecutive parts cut into at most ``tasks`` groups of about
    equal rows (whole parts; a cut at the part boundary nearest each ``k / tasks`` of the rows)."""
    ends = np.cumsum(np.asarray(sizes, dtype=np.int64))
    if len(ends) == 0:
        return []
    total = int(ends[-1])
    cuts = []
    for k in range(1, tasks):
        target = k * total / tasks
        i = int(np.searchsorted(ends, target))  # first part ending at or after target
        if i > 0 and target - ends[i - 1] < ends[i] - target:
            i -= 1
        cuts.append(i + 1)
    bounds = sorted({0, *(c for c in cuts if 0 < c < len(ends)), len(ends)})
    return list(zip(bounds[:-1], bounds[1:]))


def _task_plan(plan: BlockPlan, start: int, stop: int) -> BlockPlan:
    """Blocks ``start..stop`` of ``plan`` as a plan of their own: a task ships only its blocks."""
    return dataclasses.replace(plan, blocks=plan.blocks[start:stop], num_rows=plan.num_rows[start:stop])


def _plan_tables(plan: BlockPlan, first_row: int, index_column: str | None) -> Iterator[pa.Table]:
    """Every block of ``plan`` (a task's slice) in order, yielded about :data:`ROWS_PER_YIELD` rows at
    a time (plus the split row index from ``first_row``, if asked)."""
    pending: list[pa.Table] = []
    rows = 0
    row = first_row
    for i in range(len(plan)):
        table = block_table(plan, i)
        pending.append(table)
        rows += table.num_rows
        if rows >= ROWS_PER_YIELD or i == len(plan) - 1:
            out = pending[0] if len(pending) == 1 else pa.concat_tables(pending)
            if index_column is not None:
                out = out.append_column(index_column, pa.array(np.arange(row, row + out.num_rows, dtype=np.int64)))
            row += out.num_rows
            pending, rows = [], 0
            yield out


def _read(tasks: Sequence[tuple[Callable[[], Iterator[pa.Table]], int, list | None]], schema: pa.Schema, *,
          name: str, size: int | None, num_blocks: int) -> "ray.data.Dataset":
    """The ordered Ray dataset of read tasks ``(read, rows, input files)`` (``size``: estimated bytes)."""
    ray = require_ray()
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    class _Source(Datasource):
        def estimate_inmemory_data_size(self):
            return size

        def get_name(self) -> str:
            return name

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            return [ReadTask(read, BlockMetadata(num_rows=rows, size_bytes=None, input_files=files, exec_stats=None),
                             schema=schema) for read, rows, files in tasks]

    return _ordered(ray.data.read_datasource(_Source(), override_num_blocks=num_blocks))


def _ordered(ds: "ray.data.Dataset") -> "ray.data.Dataset":
    # rows in block order whatever the scheduling: the dataset keeps this for every later step
    ds.context.execution_options.preserve_order = True
    return ds


def generate(domain: str, config: str | None = None, split: str = "train", *, num_examples: int | None = None,
             seed: int | None = None, rows_per_task: int | None = None, index_column: str | None = None,
             **params: Any) -> "ray.data.Dataset":
    """The rows of ``hf_synthsample.load_dataset(domain, config, **params)[split]`` as a Ray dataset,
    in the same order whatever the number of workers (``num_examples``, ``seed``: ``None``, the config's).

    ``rows_per_task``: rows one read task generates (whole blocks; default: about
    :data:`TASKS_PER_CPU` tasks per CPU of the cluster; a task yields :data:`ROWS_PER_YIELD` rows at
    a time, so its memory does not grow with it). ``index_column``: also add the split row index
    (``int64``) under this name, for :mod:`hf_synthsample.engines.sampling`.
    """
    require_ray()
    if num_examples is not None:
        params["num_examples"] = num_examples
    if seed is not None:
        params["seed"] = seed
    if index_column is not None and not (isinstance(index_column, str) and index_column):
        raise TypeError(f"index_column must be a non-empty str or None, got {index_column!r}")
    return from_plan(plan_split(domain, config, split, **params), rows_per_task=rows_per_task, index_column=index_column)


def from_plan(plan: BlockPlan, *, rows_per_task: int | None = None,
              index_column: str | None = None) -> "ray.data.Dataset":
    """The Ray dataset of a :class:`~hf_synthsample.engines.blocks.BlockPlan` (see :func:`generate`)."""
    require_ray()
    if rows_per_task is not None:
        rows_per_task = check_int("rows_per_task", rows_per_task, min=1)
    if index_column is not None and index_column in plan.schema.names:
        raise ValueError(f"index_column: {index_column!r} is already a column; columns: {plan.schema.names}")
    schema = plan.schema if index_column is None else plan.schema.append(pa.field(index_column, pa.int64()))
    offsets = plan.offsets
    tasks = [(functools.partial(_plan_tables, _task_plan(plan, start, stop), int(offsets[start]), index_column),
              int(offsets[stop] - offsets[start]), None)
             for start, stop in (_even_ranges(plan.num_rows, _auto_tasks(plan.total_rows)) if rows_per_task is None
                                 else _ranges(plan.num_rows, rows_per_task))]
    return _read(tasks, schema, name=f"hf_synthsample[{plan.domain}/{plan.config_name}/{plan.split}]",
                 size=plan.total_rows * 200, num_blocks=len(tasks))


# ---------------------------------------------------------------------------------- columns
def _batch_columns(fn: Callable[[Mapping], Mapping], inputs: Sequence[str] | None,
                   types: Mapping[str, pa.DataType] | None = None) -> Callable[[pa.Table], pa.Table]:
    """A ``map_batches`` function: ``fn`` on an Arrow batch, its columns appended (or replaced);
    ``types``: the Arrow types of new columns known in advance (no inference from the values:
    for lists of strings it costs about a fifth of a structure extraction)."""
    types = dict(types or {})
    def run(table: pa.Table) -> pa.Table:
        names = table.column_names if inputs is None else list(inputs)
        missing = [c for c in names if c not in table.column_names]
        if missing:
            raise ValueError(f"input_columns: no column {missing[0]!r}; columns: {table.column_names}")
        for name, values in fn(table.select(names).to_pydict()).items():
            if len(values) != table.num_rows:
                raise ValueError(f"the function returned {len(values)} values for column {name!r}, "
                                 f"expected one per row ({table.num_rows})")
            if name in table.column_names:  # recomputed: keep the column's type
                i = table.column_names.index(name)
                table = table.set_column(i, name, pa.array(values, type=table.schema.field(i).type))
            else:
                table = table.append_column(name, pa.array(values, type=types.get(name)))
        return table

    return run


def _known_schema(ds: "ray.data.Dataset") -> pa.Schema | None:
    """The dataset's schema when Ray knows it without running anything (a read, a finished step);
    ``None`` after a step whose output is only known once it runs."""
    try:
        schema = ds.schema(fetch_if_missing=False)
    except Exception:  # pragma: no cover - Ray versions without the argument, or a plan that cannot say
        return None
    if schema is None:
        return None
    base = getattr(schema, "base_schema", schema)
    return base if isinstance(base, pa.Schema) else None


def check_columns(ds: "ray.data.Dataset", columns: Sequence[str], arg: str, why: str = "",
                  programs: bool = False) -> None:
    """``columns`` are in ``ds`` (and hold ``str`` with ``programs``) wherever Ray knows the schema
    without running; otherwise the tasks check them when they run."""
    schema = _known_schema(ds)
    if schema is None:
        return
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise ValueError(f"{arg}: no column {missing[0]!r}{why}; columns: {schema.names}")
    for c in columns if programs else ():
        t = schema.field(c).type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
            raise TypeError(f"{arg}: column {c!r} holds {t} values; it must hold programs as str")


def map_columns(ds: "ray.data.Dataset", fn: Callable[[Mapping], Mapping], *, input_columns: Sequence[str] | None = None,
                batch_size: int = 1_000, output_types: Mapping[str, pa.DataType] | None = None) -> "ray.data.Dataset":
    """Append the columns of a ``Dataset.map(batched=True)`` function ``fn`` (dict of lists of
    ``input_columns``, default all -> dict of lists), computed on the cluster; row order is kept.
    ``output_types``: Arrow types of (some of) the new columns, else inferred from each batch."""
    require_ray()
    if not callable(fn):
        raise TypeError(f"fn must be callable (a Dataset.map(batched=True) function), got {fn!r}")
    batch_size = check_int("batch_size", batch_size, min=1)
    if input_columns is not None:
        if isinstance(input_columns, str) or not all(isinstance(c, str) for c in input_columns):
            raise TypeError(f"input_columns must be a list of column names, got {input_columns!r}")
        check_columns(ds, input_columns, "input_columns")
    return _ordered(ds.map_batches(_batch_columns(fn, input_columns, output_types), batch_format="pyarrow",
                                   batch_size=batch_size,
                                   zero_copy_batch=True))


def structure_columns(ds: "ray.data.Dataset", column: str = "program", language: "str | Language" = "thingtalk",
                      max_height: int = 2, outputs: Sequence[str] = ("template", "atoms", "compounds"),
                      batch_size: int = 1_000) -> "ray.data.Dataset":
    """``template`` / ``atoms`` / ``compounds`` of ``column`` on the cluster
    (:class:`hf_synthsample.structure.StructureFunction`, same values).

    ``language``: a name or a :class:`~hf_synthsample.structure.Language`. It is looked up here, in
    this process, and the ``Language`` object itself goes to the workers (pickled with the task), so
    a language registered in this session (``register_language``) or built here
    (``grammar_language(...)``, ``Language("mine", parse)``) works on every node without being
    registered there; its parse function must be picklable by value or importable on the workers.
    """
    from ..structure import StructureFunction, get_language

    lang = get_language(language)  # the object, here: workers need no registry of their own
    fn = StructureFunction(column, lang, max_height, outputs)  # validates before any task
    check_columns(ds, [column], "column", programs=True)
    return map_columns(ds, fn, input_columns=[column], batch_size=batch_size, output_types=STRUCTURE_TYPES)


#: the Arrow types of :func:`structure_columns`' columns
STRUCTURE_TYPES = {"template": pa.string(), "atoms": pa.list_(pa.string()), "compounds": pa.list_(pa.string())}


def salient_columns(ds: "ray.data.Dataset", domain: str, batch_size: int = 1_000, **kwargs) -> "ray.data.Dataset":
    """``domain``'s salient-variable columns recomputed on the cluster (:func:`hf_synthsample.salient.salient_columns`)."""
    from ..salient import SALIENT_DOMAINS
    from ..salient import salient_columns as local

    fn = local(domain, **kwargs)
    need = list(SALIENT_DOMAINS[domain])
    check_columns(ds, need, "ds", why=f" (the {domain} salient columns are computed from {need})")
    return map_columns(ds, fn, input_columns=need, batch_size=batch_size)


# ---------------------------------------------------------------------------------- Hub folders
def _parquet_sink(folder: str, split: str, rows_per_file: int):
    """A datasink writing each task's blocks in order (one ``ParquetWriter``, no threads) to
    ``part-<split>-<task>-<i>.parquet``, a new file every ``rows_per_file`` rows."""
    import pyarrow.parquet as pq
    from ray.data.block import BlockAccessor
    from ray.data.datasource import Datasink

    class OrderedParquetDatasink(Datasink):
        def write(self, blocks, ctx) -> int:
            writer, part, in_file, total = None, 0, 0, 0
            try:
                for block in blocks:
                    table = BlockAccessor.for_block(block).to_arrow()
                    start = 0
                    while start < table.num_rows:
                        if writer is None or in_file >= rows_per_file:
                            if writer is not None:
                                writer.close()
                                part += 1
                            path = os.path.join(folder, f"part-{split}-{ctx.task_idx:08d}-{part:06d}.parquet")
                            writer, in_file = pq.ParquetWriter(path, table.schema), 0
                        piece = table.slice(start, rows_per_file - in_file)
                        writer.write_table(piece, row_group_size=min(rows_per_file, 100_000))
                        start += piece.num_rows
                        in_file += piece.num_rows
                        total += piece.num_rows
            finally:
                if writer is not None:
                    writer.close()
            return total

    return OrderedParquetDatasink()


def _write_parts(tmp: Path, parts: Mapping[str, Mapping[str, "ray.data.Dataset"]], rows_per_file: int) -> tuple[dict, dict]:
    """Write every (config, split) dataset under ``tmp``; returns ``{config: {split: rows}}`` and
    ``{config: {split: [file names]}}`` (content-named, as every Hub folder writer names them)."""
    import pyarrow.parquet as pq

    from ..hub.folder import name_by_content

    rows: dict = {config: {} for config in parts}
    files: dict = {config: {} for config in parts}
    for config, splits in parts.items():
        target = tmp / config
        target.mkdir(parents=True, exist_ok=True)
        for split, ds in splits.items():
            _ordered(ds).write_datasink(_parquet_sink(str(target), split, rows_per_file))
            written = sorted((p for p in os.listdir(target) if p.startswith(f"part-{split}-")),
                             key=lambda name: [int(n) for n in name[: -len(".parquet")].split("-")[-2:]])
            rows[config][split] = sum(pq.ParquetFile(target / name).metadata.num_rows for name in written)
            files[config][split] = [name_by_content(target / name, split, i, len(written))
                                    for i, name in enumerate(written)]
    return rows, files


def write(data: "ray.data.Dataset | Mapping[str, ray.data.Dataset]", folder: str | os.PathLike, *,
          config_name: str = "default", if_exists: str = "error", metadata: Mapping[str, Any] | None = None,
          body: str | None = None, rows_per_file: int = 500_000) -> Path:
    """Write a Ray dataset (or ``{split: dataset}``) as one config of a Hub-layout folder, which
    ``datasets.load_dataset(folder)`` reads back in the same row order; on any failure nothing is
    left behind. ``rows_per_file``: the most rows per Parquet file."""
    require_ray()
    from ..hub.folder import check_target

    splits = {"train": data} if not isinstance(data, Mapping) else dict(data)
    if not splits:
        raise ValueError("data: give a dataset or a non-empty {split: dataset} mapping")
    folder = check_target(folder, if_exists, IF_EXISTS)
    rows_per_file = check_int("rows_per_file", rows_per_file, min=1)
    return _write_folder(folder, {config_name: splits}, metadata or {}, body or f"# {folder.name}\n", rows_per_file)


def _write_folder(folder: Path, parts, metadata: Mapping, body: str | Callable[[dict], str], rows_per_file: int) -> Path:
    from ..atomic import atomic_folder
    from ..hub import render_card, size_category

    # the shared temp-then-swap: a failure (a worker's included) leaves nothing, a kill is recovered next time
    with atomic_folder(folder) as tmp:
        rows, files = _write_parts(tmp, parts, rows_per_file)
        entries = [{"config_name": name, "data_files": [{"split": s, "path": [f"{name}/{f}" for f in files[name][s]]}
                                                       for s in splits]}
                   for name, splits in parts.items()]
        entries[0]["default"] = True
        # the largest config's rows: each config is a data set of its own (hub.card.dataset_rows)
        meta = {"size_categories": [size_category(max(sum(s.values()) for s in rows.values()))], **metadata,
                "configs": entries}
        text = body(rows) if callable(body) else body
        (tmp / "README.md").write_text(render_card(meta, text))
    return folder


def to_hub_folder(domain: str, folder: str | os.PathLike, configs: Sequence[str] | None = None, *,
                  if_exists: str = "error", rows_per_task: int | None = None, rows_per_file: int = 500_000,
                  license: str | None = None, **params: Any) -> Path:
    """Generate every split of ``configs`` (default: the domain's default config) on Ray and write
    them as ``hf-synthsample generate DOMAIN`` does, with a card recording how the data was made.
    ``license``: the card's Hub license id (e.g. ``"cc-by-4.0"``; none unless given)."""
    require_ray()
    from ..builders import get_builder_class
    from ..hub.card import check_license
    from ..hub.folder import check_target
    from ..hub.materialization import card_body, config_section

    license = check_license(license)
    cls = get_builder_class(domain)
    names = list(configs) if configs else [cls.DEFAULT_CONFIG_NAME]
    folder = check_target(folder, if_exists, IF_EXISTS)
    rows_per_file = check_int("rows_per_file", rows_per_file, min=1)
    if rows_per_task is not None:
        rows_per_task = check_int("rows_per_task", rows_per_task, min=1)
    plans = {name: plan_splits(domain, name, **params) for name in names}  # validates every config first
    parts = {name: {s: from_plan(plan, rows_per_task=rows_per_task) for s, plan in splits.items()}
             for name, splits in plans.items()}
    provenance = {name: next(iter(splits.values())).parameters for name, splits in plans.items()}
    metadata = {
        **cls.CARD_METADATA,
        "pretty_name": f"{domain.capitalize()} (generated with hf-synthsample {__version__} on Ray)",
        "tags": ["synthetic", "hf-synthsample", domain],
        "hf_synthsample": {"version": __version__, "domain": domain, "engine": "ray", "configs": provenance},
        **({"license": license} if license is not None else {}),
    }

    def body(rows: dict) -> str:
        sections = ["\n".join(config_section(name, cls.builder_configs[name].description, rows[name], provenance[name]))
                    for name in plans]
        return card_body(cls, domain, metadata["pretty_name"], names[0], params, sections,
                         engine=" on Ray Data (`hf_synthsample.engines.ray`)")

    return _write_folder(folder, parts, metadata, body, rows_per_file)
