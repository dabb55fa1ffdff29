"""Hub-layout dataset folders: Parquet per config and split, and a README.md dataset card whose
YAML ``configs:`` lists them, so that ``datasets.load_dataset(folder, config)`` loads a config
offline, and the folder can be pushed to the Hub as it is. Folders are written atomically
(:func:`hf_synthsample.atomic.atomic_folder`). Layout::

    folder/
      README.md                      # YAML (configs, provenance) + card text
      <config>/<split>-00000-of-00001-<digest>.parquet
      <extra files, e.g. plots/...png>
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..atomic import FOLDER_MARKER, atomic_folder, check_replaceable, recover_folder, written_by_library
from ..validation import check_choice, check_int, check_path
from .card import (check_license, dataset_rows, keep_auto_detected, read_card, read_card_metadata, render_card,
                   size_category)

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

__all__ = ["write_hub_folder", "check_config_name", "check_can_add"]

_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
IF_EXISTS = ("error", "overwrite", "add")


def check_config_name(name: Any, arg: str = "config_name") -> str:
    """``name`` if it can name a config (a folder of the Hub layout), else ``ValueError`` naming ``arg``."""
    if not isinstance(name, str) or not _CONFIG_NAME.match(name) or name == "README.md":
        raise ValueError(f"{arg}: invalid config name {name!r} (letters, digits, '_', '-', '.'; "
                         "starting with a letter or digit)")
    return name


def check_target(folder: str | os.PathLike, if_exists: str, choices: tuple[str, ...] = IF_EXISTS) -> Path:
    """``folder`` as a ``Path``, once a writer may write it with ``if_exists`` (one of ``choices``): a
    write killed earlier is put back first, and ``"overwrite"`` replaces only a folder hf-synthsample wrote."""
    check_choice("if_exists", if_exists, choices)
    folder = Path(folder)
    recover_folder(folder)  # a write killed earlier may have left the old folder aside: put it back first
    if folder.exists() and if_exists == "error":
        raise FileExistsError(f"{folder} exists; pass if_exists=" + " or ".join(repr(c) for c in choices[1:]))
    if folder.exists() and not folder.is_dir():
        raise FileExistsError(f"folder: {folder} exists and is not a folder")
    if if_exists == "overwrite":
        check_replaceable(folder, name="folder")
    return folder


def _as_dict(dataset: "Dataset | DatasetDict") -> dict:
    """``{split: Dataset}``; a single ``Dataset`` goes under its split's name (a slice such as
    ``train[:10%]``, from ``load_dataset(..., split=...)``, under the split it was cut from)."""
    from datasets import Dataset

    from ..split_spec import source_split

    if isinstance(dataset, Dataset):
        return {source_split(dataset.split, "dataset.split (a DatasetDict names splits freely)") if dataset.split is not None else "train": dataset}
    return dict(dataset)


def write_hub_folder(
    folder: str | os.PathLike,
    configs: Mapping[str, "Dataset | DatasetDict"],
    *,
    body: str,
    metadata: Mapping[str, Any] | None = None,
    default_config: str | None = None,
    extra_files: Mapping[str, bytes | str | os.PathLike | Callable[[str], Any]] | None = None,
    if_exists: str = "error",
    max_rows_per_file: int = 500_000,
    license: str | None = None,
) -> Path:
    """Write ``configs`` (name -> ``DatasetDict`` or single-split ``Dataset``) as a Hub-layout folder;
    returns its path.

    Args:
        metadata: extra YAML metadata (``configs`` and ``size_categories`` are filled in here).
        default_config: the config ``datasets.load_dataset(folder)`` picks (default: the first).
        extra_files: relative path -> ``bytes``, ``str`` (text), ``pathlib.Path`` (a file to copy),
            or a callable writing the file at the (temp) path it is given (e.g. a report's ``plot``).
        if_exists: ``"error"``, ``"overwrite"`` (replace the folder) or ``"add"`` (keep the
            folder's other configs and files). Only a folder hf-synthsample wrote (it holds
            :data:`~hf_synthsample.atomic.FOLDER_MARKER`) has configs replaced; adding to a user's
            folder keeps its files and card text, and refuses a config name it already has.
        license: the card's Hub license id (none unless given, or kept from the card with ``"add"``).

    Example:
        >>> import tempfile, datasets
        >>> out = write_hub_folder(tempfile.mkdtemp() + "/toy", {"tiny": datasets.Dataset.from_dict({"x": [1, 2]})},
        ...                        body="# toy")
        >>> list(datasets.load_dataset(str(out), "tiny")["train"]["x"])
        [1, 2]
    """
    folder = Path(check_path("folder", folder))
    check_int("max_rows_per_file", max_rows_per_file, min=1)
    license = check_license(license)
    if not configs:
        raise ValueError("configs: give at least one config to write")
    for name in configs:
        check_config_name(name, "configs")
    if default_config is not None and default_config not in configs:
        raise ValueError(f"default_config must be one of {list(configs)}, got {default_config!r}")
    check_target(folder, if_exists)
    users = if_exists == "add" and folder.is_dir() and not written_by_library(folder)
    if users:  # a folder of the user's: add, never replace
        check_can_add(folder, list(configs))
        previous_text = read_card(folder / "README.md")[1].strip()
        if previous_text and previous_text not in body:
            body = previous_text.rstrip() + "\n\n" + body  # the user's card text is kept
    splits = {name: _as_dict(ds) for name, ds in configs.items()}
    for name, parts in splits.items():
        if not any(len(ds) for ds in parts.values()):
            raise ValueError(f"configs: config {name!r} has no rows")

    previous_meta: dict = {}
    if folder.exists() and if_exists == "add":
        previous_meta = read_card_metadata(folder)
        if "configs" not in previous_meta:  # data found automatically: keep it reachable
            existing = [p.relative_to(folder).as_posix() for p in sorted(folder.rglob("*")) if p.is_file()]
            previous_meta["configs"] = keep_auto_detected(existing, list(configs), str(folder))

    with atomic_folder(folder, mark=not users, keeps_old=if_exists == "add") as tmp:
        if folder.exists() and if_exists == "add":
            replaced = {*configs, "README.md"}
            # Hard links, not copies: files are never written in place (an extra file is unlinked
            # before it is rewritten), so the old folder stays intact until the swap.
            shutil.copytree(folder, tmp, dirs_exist_ok=True, copy_function=_link_or_copy,
                            ignore=lambda d, names: [n for n in names if Path(d) == folder and n in replaced])
        entries = []
        for name, parts in splits.items():
            data_files = []
            for split, ds in parts.items():
                if len(ds) == 0:
                    continue
                (tmp / name).mkdir(parents=True, exist_ok=True)
                paths = _write_parquet_shards(ds, tmp / name, split, max_rows_per_file)
                data_files.append({"split": split, "path": [f"{name}/{p}" for p in paths]})
            entries.append({"config_name": name, "data_files": data_files})
        kept = [c for c in previous_meta.get("configs", []) if c.get("config_name") not in configs]
        all_entries = kept + entries
        mark_default(all_entries, default_config or marked_default(kept) or entries[0]["config_name"])
        meta = {**{k: v for k, v in previous_meta.items() if k != "configs"}, **(metadata or {}),
                **({"license": license} if license is not None else {}), "configs": all_entries}
        # the largest config in the folder, kept ones included: each config is a data set of its own
        # (see card.dataset_rows), so the tag is never the sum of configs cut from the same rows
        rows = dataset_rows(tmp, all_entries)
        if rows is not None:
            meta["size_categories"] = [size_category(rows)]
        for rel, content in (extra_files or {}).items():
            target = tmp / rel
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise ValueError(f"extra_files: {rel!r} must be a relative path inside the folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)  # may be a hard link to the old folder's file
            if isinstance(content, bytes):
                target.write_bytes(content)
            elif isinstance(content, os.PathLike):
                shutil.copyfile(content, target)
            elif callable(content):
                content(str(target))
            else:
                target.write_text(str(content))
        (tmp / "README.md").write_text(render_card(meta, body))
    return folder


def marked_default(entries: list[dict]) -> str | None:
    """The name of the ``configs:`` entry marked ``default``, if any."""
    return next((c["config_name"] for c in entries if c.get("default")), None)


def mark_default(entries: list[dict], default: str) -> None:
    """Mark the ``configs:`` entry named ``default`` as the default (and no other), in place."""
    for entry in entries:
        entry.pop("default", None)
        if entry["config_name"] == default:
            entry["default"] = True


def check_can_add(folder: str | os.PathLike, configs: list[str], name: str = "configs") -> None:
    """``FileExistsError`` when adding ``configs`` to ``folder`` would replace a config of a folder
    hf-synthsample did not write (it holds no marker)."""
    folder = Path(folder)
    if not folder.is_dir() or written_by_library(folder):
        return
    listed = {c.get("config_name") for c in read_card_metadata(folder).get("configs") or []}
    taken = sorted(n for n in configs if (folder / n).exists() or n in listed)
    if taken:
        raise FileExistsError(
            f"{name}: {folder} already has config {taken[0]!r} and was not written by hf-synthsample (it holds no "
            f"{FOLDER_MARKER} file), so it is not replaced: choose another config name, or delete "
            f"{folder / taken[0]} yourself (and its entry in README.md)")


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # a filesystem without hard links
        shutil.copy2(src, dst)


def _write_parquet_shards(ds: "Dataset", folder: Path, split: str, max_rows_per_file: int) -> list[str]:
    """Write ``ds`` as ``<split>-<i>-of-<n>-<digest>.parquet`` files in ``folder``; returns their names."""
    n_files = max(1, math.ceil(len(ds) / max_rows_per_file))
    names = []
    for i in range(n_files):
        shard = ds.shard(num_shards=n_files, index=i, contiguous=True) if n_files > 1 else ds
        staging = folder / f".{split}-{i:05d}.parquet"
        shard.to_parquet(str(staging))
        names.append(name_by_content(staging, split, i, n_files))
    return names


def name_by_content(path: str | os.PathLike, split: str, index: int, count: int) -> str:
    """Rename a written Parquet file to ``<split>-<index>-of-<count>-<digest>.parquet`` beside it;
    returns the new name."""
    # datasets caches a local folder by its card and file names, not contents: without the digest a
    # folder rewritten with new rows under the same names would keep loading the old rows
    path = Path(path)
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    name = f"{split}-{index:05d}-of-{count:05d}-{digest.hexdigest()[:16]}.parquet"
    os.replace(path, path.parent / name)
    return name
