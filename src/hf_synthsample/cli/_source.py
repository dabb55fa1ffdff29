"""Reading the data a subcommand works on: a generator's ``DOMAIN/CONFIG``, a Hub-layout folder or
one Parquet / JSON / CSV file, with every failure a ``ValueError`` naming the option and the file.
"""

from __future__ import annotations

import argparse
import os

from ._common import key_values

#: a generator config's parameter holding the rows of each split
SPLIT_ROWS = {"train": "num_examples", "validation": "num_validation", "test": "num_test"}


def resolve_source(args: argparse.Namespace):
    """The data of ``SOURCE`` for ``sample`` and ``split``: a generator's ``DOMAIN/CONFIG`` (with
    ``--builder-param``), else a folder or file. Returns the dataset, its provenance source and
    the builder parameters."""
    from ..builders import list_domains

    builder_params = key_values("--builder-param", args.builder_param)
    domain, _, config = args.source.partition("/")
    if not os.path.exists(args.source) and domain in list_domains():
        from ..builders import get_builder_class
        from ..load import load_dataset, resolve_config

        configs = list(get_builder_class(domain).builder_configs)
        if config and config not in configs:
            raise ValueError(f"source: {domain} has no config {config!r}; its configs: {configs}")
        try:  # --builder-param checked before generating
            resolve_config(domain, config or None, **builder_params)
        except (ValueError, TypeError) as err:
            named = any(str(err).startswith(name) for name in builder_params)  # the translator names it
            raise type(err)(str(err) if named else f"--builder-param: {err}") from None
        ds = load_dataset(domain, config or None, split=args.split, **builder_params)
        return ds, f"hf_synthsample:{domain}/{config or 'default'}", builder_params
    if builder_params:
        raise ValueError(f"--builder-param: only for a DOMAIN/CONFIG source ({list_domains()}), not {args.source!r}")
    return load_source(args.source, args.config, args.split), os.path.abspath(args.source), builder_params


def rows_to_generate(args: argparse.Namespace) -> int | None:
    """The rows a ``DOMAIN/CONFIG`` source generates for ``--split``, where its config says (else ``None``)."""
    from ..builders import list_domains
    from ..load import resolve_config

    domain, _, config = args.source.partition("/")
    if os.path.exists(args.source) or domain not in list_domains() or args.split not in SPLIT_ROWS:
        return None
    try:
        _, cfg, _ = resolve_config(domain, config or None, **key_values("--builder-param", args.builder_param))
    except (ValueError, TypeError):
        return None  # resolve_source says what is wrong, naming the option
    rows = getattr(cfg, SPLIT_ROWS[args.split], None)
    return rows if isinstance(rows, int) and not isinstance(rows, bool) else None


def load_source(source: str, config: str | None, split: str, option: str = "source"):
    """The ``split`` of a Hub-layout folder or of one Parquet / JSON / CSV file, for every command
    that reads user data. A file that is empty, not in the format its name says, or damaged is a
    ``ValueError`` naming ``option``, the file and what is wrong (never only Arrow's message)."""
    import datasets

    from ..load import check_split_selection

    check_split_selection(split, arg="--split")  # an empty slice or a split read twice: refused before reading
    if os.path.isdir(source):
        try:
            return datasets.load_dataset(source, config, split=split)
        except (ValueError, FileNotFoundError, datasets.exceptions.DatasetGenerationError) as err:
            raise ValueError(f"{option}: cannot read the folder {source!r} (config {config!r}, split {split!r}): "
                             f"{_reason(err)}") from err
    if not os.path.exists(source):
        raise ValueError(f"{option}: {source!r} is neither a folder nor a file")
    if config is not None:
        raise ValueError(f"--config: only for a Hub-layout folder; {option} {source!r} is a file (drop --config)")
    ext = source.rsplit(".", 1)[-1].lower()
    builder = {"parquet": "parquet", "json": "json", "jsonl": "json", "csv": "csv"}.get(ext)
    if builder is None:
        raise ValueError(f"{option}: unsupported file type {ext!r} of {source!r}; accepted: parquet, json, jsonl, csv")
    if os.path.getsize(source) == 0:
        raise ValueError(f"{option}: the file {source!r} is empty (0 bytes): no rows to read")
    if builder == "parquet":
        with open(source, "rb") as f:
            head = f.read(4)
            f.seek(max(0, os.path.getsize(source) - 4))
            tail = f.read(4)
        if head != b"PAR1" or tail != b"PAR1":
            raise ValueError(f"{option}: the file {source!r} is not a Parquet file, or a damaged one (a Parquet file "
                             "starts and ends with 'PAR1'); check the file, or give it the extension of its format")
    from ..split_spec import source_split

    name = source_split(split, "--split")  # a file is one split: named after the split (or slice) asked for
    try:
        ds = datasets.load_dataset(builder, data_files={name: source}, split=split)
    except Exception as err:  # Arrow / JSON / CSV parser errors come in many types; name the file
        if "corresponds to no data" in str(err):  # datasets' words for a split without rows
            raise ValueError(f"{option}: the file {source!r} holds no rows (a header only?)") from err
        raise ValueError(f"{option}: cannot read {source!r} as {ext.upper()}: {_reason(err)}") from err
    if len(ds) == 0:
        raise ValueError(f"{option}: the file {source!r} holds no rows")
    return ds


def _reason(err: BaseException) -> str:
    """The innermost message of a (chained) error: datasets wraps the parser's own error."""
    while err.__cause__ is not None or (err.__context__ is not None and not str(err).strip()):
        err = err.__cause__ or err.__context__
    text = str(err).strip() or type(err).__name__
    return f"{type(err).__name__}: {text}"[:500]


def folder_configs(out: str) -> set[str]:
    """Config names of the Hub-layout folder ``out`` (its card's ``configs:``, and top-level folders)."""
    from ..atomic import recover_folder
    from ..hub import read_card_metadata

    recover_folder(out)
    if not os.path.isdir(out):
        return set()
    try:
        listed = {c.get("config_name") for c in read_card_metadata(out).get("configs") or []}
    except ValueError as err:  # a user's card that does not parse
        raise ValueError(f"--out: {err}") from None
    return listed | {e.name for e in os.scandir(out) if e.is_dir()} - {"plots"}
