"""Dataset cards: the YAML front matter and Markdown body of a Hub-layout folder's ``README.md``.

Cards are ``huggingface_hub.DatasetCard`` objects written for the Hub: an absolute local path goes
in as ``<local>/<last component>`` (:func:`portable_path`), and a ``license`` only when given.

Example:
    >>> print(render_card({"size_categories": [size_category(2_100)], "license": "cc-by-4.0"}, "# toy"))
    ---
    license: cc-by-4.0
    size_categories:
    - 1K<n<10K
    ---
    <BLANKLINE>
    # toy
    <BLANKLINE>
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import yaml

if TYPE_CHECKING:  # pragma: no cover
    from huggingface_hub import DatasetCard

__all__ = [
    "make_card", "render_card", "load_card", "read_card_metadata", "check_license", "size_category", "portable_path",
    "redact_local_paths", "redact_local_paths_in_text", "count_rows", "dataset_rows", "auto_detected_config", "keep_auto_detected",
]


_SIZE_BOUNDS = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]
#: the Hub's ``size_categories`` tags, smallest first
SIZE_CATEGORIES = [label for _, label in _SIZE_BOUNDS] + ["n>1B"]


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` tag for ``n`` rows."""
    return next((label for bound, label in _SIZE_BOUNDS if n < bound), "n>1B")


# The Hub's license identifiers are lower-case SPDX-like ids ("apache-2.0", "cc-by-4.0", "mit",
# "openrail++", "other", "unknown"); the list itself lives on the Hub, so only the form is checked here.
_LICENSE = re.compile(r"^[a-z0-9][a-z0-9.+\-]*$")


def check_license(license: Any, arg: str = "license") -> str | None:
    """``license`` if it has the form of a Hub license id, ``None`` for no license; ``ValueError``
    naming ``arg`` otherwise.

    Example:
        >>> check_license("cc-by-4.0")
        'cc-by-4.0'
    """
    if license is None:
        return None
    if not isinstance(license, str) or not _LICENSE.match(license):
        raise ValueError(f"{arg}: {license!r} is not a Hub license id (lower-case, e.g. 'cc-by-4.0', 'apache-2.0', "
                         "'mit', 'other'; see https://huggingface.co/docs/hub/repositories-licenses)")
    return license


def _plain(value: Any) -> Any:
    """``value`` with tuples as lists and sets as sorted lists (YAML has neither; ``yaml.dump``
    would tag them ``!!python/tuple`` / ``!!set``, which ``safe_load`` and the Hub refuse)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [_plain(v) for v in value]
        try:
            return sorted(items)
        except TypeError:  # mixed types: a stable order all the same
            return sorted(items, key=lambda v: (type(v).__name__, repr(v)))
    return value


def make_card(metadata: Mapping[str, Any], body: str) -> "DatasetCard":
    """A ``huggingface_hub.DatasetCard``: ``metadata`` as its ``DatasetCardData`` (absolute local
    paths redacted, ``license`` checked) and ``body`` as its Markdown text."""
    from huggingface_hub import DatasetCard, DatasetCardData

    local = _local_paths(metadata)
    meta = _plain(redact_local_paths(dict(metadata)))
    check_license(meta.get("license"), "license")
    try:
        yaml.safe_dump(meta)  # only plain YAML values: a card must load anywhere, with safe_load
    except yaml.YAMLError as err:
        raise TypeError(f"metadata: every value must be a string, number, bool, None, list or mapping: {err}") from None
    data = DatasetCardData(**meta)
    body = redact_local_paths_in_text(body, local)  # the Markdown too: no local path anywhere in a card
    return DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body.strip()}\n")


def render_card(metadata: Mapping[str, Any], body: str) -> str:
    """The README.md text of :func:`make_card`."""
    return str(make_card(metadata, body))


def load_card(folder: str | os.PathLike) -> "DatasetCard | None":
    """The ``DatasetCard`` of ``folder/README.md`` (or of the card file ``folder``), read locally;
    ``None`` when there is no card or it has no YAML front matter."""
    from huggingface_hub import DatasetCard

    path = Path(folder)
    path = path / "README.md" if path.is_dir() else path
    if not path.is_file() or not path.read_text().startswith("---"):
        return None
    try:
        return DatasetCard.load(path)  # a Path that is a file: read locally
    except yaml.YAMLError as err:  # a user's card: say which file, never only the parser's words
        raise ValueError(f"{path}: its YAML block (between the '---' lines) does not parse: "
                         f"{' '.join(str(err).split())}; fix it, or write to another folder") from None
    except ValueError as err:  # huggingface_hub: "repo card metadata block should be a dict"
        if "should be a dict" not in str(err):
            raise
        text = path.read_text()
        end = text.find("\n---", 3)
        kind = type(yaml.safe_load(text[3:end] if end != -1 else text[3:])).__name__
        raise ValueError(f"{path}: its YAML block is a {kind}, not a mapping of keys to values; fix it, "
                         "or write to another folder") from None


def read_card_metadata(folder: str | os.PathLike) -> dict:
    """The YAML front matter of ``folder/README.md`` as a dict (empty if there is none)."""
    card = load_card(folder)
    return card.data.to_dict() if card is not None else {}


def read_card(path: Path) -> tuple[dict, str]:
    """``(metadata, body)`` of the card file ``path``; without YAML it is all body, missing ``({}, "")``."""
    if not path.is_file():
        return {}, ""
    card = load_card(path)
    if card is None:
        return {}, path.read_text()
    return card.data.to_dict(), card.text.lstrip("\n")


#: how a local path is written into a card meant for the Hub (see :func:`portable_path`)
LOCAL_PATH_PREFIX = "<local>/"
# a path of this machine: /x..., ~/x, ~user/x, C:\x or \\server
_ABSOLUTE = re.compile(r"^(/[^/\s]|~[^\s/]*/|[A-Za-z]:[\\/]|\\\\)")


def portable_path(path: str | os.PathLike) -> str:
    """How a local path is recorded in a dataset card: an absolute (or ``~``) path becomes
    ``<local>/<its last component>`` (no user names or mount points); a relative one stays (with ``/``).

    Example:
        >>> portable_path("/home/alice/data/annotated/"), portable_path("data/annotated")
        ('<local>/annotated', 'data/annotated')
    """
    text = os.fspath(path)
    if not _ABSOLUTE.match(text):
        return text.replace(os.sep, "/")
    name = re.split(r"[\\/]", text.rstrip("/\\"))[-1]
    return LOCAL_PATH_PREFIX + (name if name and name != "~" else "")


def _local_paths(value: Any) -> set[str]:
    """Every absolute local path (string or ``os.PathLike``) in ``value`` (nested dicts, lists,
    tuples, sets)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        return {value} if _ABSOLUTE.match(value) else set()
    if isinstance(value, Mapping):
        return set().union(*(_local_paths(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple, set, frozenset)):
        return set().union(*(_local_paths(v) for v in value)) if value else set()
    return set()


# an absolute path inside prose: /a/b..., ~/a, ~user/a, C:\a or \\server\a, not part of a URL or
# a word (``https://host/a/b``, ``n/a``, ``1/2`` are kept); at least two components for a POSIX path
_PATH_IN_TEXT = re.compile(
    r"(?<![\w/.:~<>-])(?:/[\w.~+@%-]+(?:/[\w.~+@%-]*)+|~[\w.-]*/[\w.~+@%/-]*|[A-Za-z]:\\[^\s`'\"|)]*"
    r"|\\\\[^\s`'\"|)]+)")


def redact_local_paths_in_text(text: str, known: Sequence[str] = ()) -> str:
    """``text`` (a card's Markdown) with every absolute local path written as :func:`portable_path`:
    the ``known`` ones wherever they occur, then any other that stands as a path of its own.

    Example:
        >>> redact_local_paths_in_text("from `/home/alice/data/train.jsonl`, see https://hf.co/a/b and n/a")
        'from `<local>/train.jsonl`, see https://hf.co/a/b and n/a'
    """
    for path in sorted(set(known), key=len, reverse=True):  # the longest first: a path inside another
        # where it stands whole (a longer path it starts is left to the pattern below)
        text = re.sub(r"(?<![\w/])" + re.escape(path.rstrip("/\\") or path) + r"(?![\w/\\])",
                      lambda _, p=path: portable_path(p), text)

    def one(match: re.Match) -> str:
        found = match.group(0)
        tail = len(found) - len(found.rstrip(".,;:!?"))  # sentence punctuation after the path
        core = found[:len(found) - tail] if tail else found
        return portable_path(core) + found[len(core):]

    return _PATH_IN_TEXT.sub(one, text)


def redact_local_paths(value: Any) -> Any:
    """``value`` with every absolute local path (a string or ``os.PathLike``, in nested dicts,
    lists and tuples) replaced by :func:`portable_path`.

    Example:
        >>> redact_local_paths({"annotated_dir": "/srv/u/ann", "seed": 3, "files": ["/a/b.parquet", "x"]})
        {'annotated_dir': '<local>/ann', 'seed': 3, 'files': ['<local>/b.parquet', 'x']}
    """
    if isinstance(value, os.PathLike):
        return portable_path(value)
    if isinstance(value, str):
        return portable_path(value) if _ABSOLUTE.match(value) else value
    if isinstance(value, Mapping):
        return {k: redact_local_paths(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_local_paths(v) for v in value)
    return value


def count_rows(folder: str | os.PathLike, configs: Sequence[Mapping[str, Any]]) -> int | None:
    """Rows of all configs (YAML ``configs:`` entries) of a Hub-layout ``folder``, read from the
    Parquet footers (a file listed by several configs counted once); ``None`` when a data file is
    not Parquet or a pattern matches nothing. See :func:`dataset_rows` for ``size_categories``."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    files: set[Path] = set()
    for entry in configs:
        data_files = entry.get("data_files") or []
        if isinstance(data_files, (str, Mapping)):
            data_files = [data_files]
        for item in data_files:
            paths = item.get("path", []) if isinstance(item, Mapping) else item
            for pattern in [paths] if isinstance(paths, str) else paths:
                matched = sorted(folder.glob(pattern))
                if not matched:
                    return None
                files.update(matched)
    if not files or any(f.suffix != ".parquet" for f in files):
        return None
    return sum(pq.read_metadata(f).num_rows for f in files)


def dataset_rows(folder: str | os.PathLike, configs: Sequence[Mapping[str, Any]]) -> int | None:
    """The rows ``size_categories`` is read from: those of the largest config of ``folder``
    (:func:`count_rows` of each); ``None`` when a config's rows cannot be counted.

    The Hub has one ``size_categories`` per dataset, while each config is a data set of its own
    (``load_dataset(repo, config)`` loads one); the sum over configs would count the same rows
    again in every config cut from them (a sweep's splits, curated subsets of one pool), so the
    tag is the size of the largest data set a user can load.
    """
    counts = [count_rows(folder, [entry]) for entry in configs]
    if not counts or any(n is None for n in counts):
        return None
    return max(counts)


def auto_detected_config(files: Sequence[str], *, config_name: str = "default") -> dict | None:
    """The ``configs:`` entry that lists, explicitly, the data files the Hub and ``datasets``
    detect automatically in a repo or folder of ``files`` (relative paths) with no ``configs:``
    YAML; ``None`` when there are no data files. Once a card has a ``configs:`` list, only the
    configs listed are loadable, so adding one must list this data too.

    Example:
        >>> auto_detected_config(["README.md", "data/train.csv", "data/test.csv", "notes.txt"])
        {'config_name': 'default', 'data_files': [{'split': 'train', 'path': ['data/train.csv']}, {'split': 'test', 'path': ['data/test.csv']}]}
    """
    import tempfile

    from datasets.data_files import DataFilesDict, EmptyDatasetError, get_data_patterns
    from datasets.load import _ALL_ALLOWED_EXTENSIONS, infer_module_for_data_files
    from datasets.packaged_modules import _MODULE_TO_EXTENSIONS

    files = [f for f in files if f != "README.md" and not any(part.startswith((".", "__")) for part in Path(f).parts)]
    if not files:
        return None
    with tempfile.TemporaryDirectory() as tmp:  # datasets' own split rules, on empty stand-ins of the files
        for rel in files:
            stand_in = Path(tmp, rel)
            stand_in.parent.mkdir(parents=True, exist_ok=True)
            stand_in.touch()
        try:
            patterns = get_data_patterns(tmp)
        except EmptyDatasetError:
            return None
        data_files = DataFilesDict.from_patterns(patterns, base_path=tmp, allowed_extensions=_ALL_ALLOWED_EXTENSIONS)
        module, _ = infer_module_for_data_files(data_files, path=tmp)
        extensions = tuple(_MODULE_TO_EXTENSIONS.get(module, []))
        entries = []
        for split, paths in data_files.items():
            rels = sorted(Path(p).relative_to(Path(tmp).resolve()).as_posix() if Path(p).is_absolute()
                          else Path(p).as_posix() for p in paths)
            rels = [r for r in rels if r.lower().endswith(extensions)]
            if rels:
                entries.append({"split": str(split), "path": rels})
    return {"config_name": config_name, "data_files": entries} if entries else None


def keep_auto_detected(files: Sequence[str], new_configs: Sequence[str], where: str) -> list[dict]:
    """The ``configs:`` entries that keep the automatically found data of ``files`` (a folder or
    repo with no ``configs:`` YAML) loadable once configs ``new_configs`` are added: the
    :func:`auto_detected_config`, as the default config; ``[]`` when there is no such data.
    ``ValueError`` (naming ``where``) when a new config takes its name, or the data is not Parquet.
    """
    auto = auto_detected_config([f for f in files if f.split("/")[0] not in new_configs])
    if auto is None:
        return []
    name = auto["config_name"]
    if name in new_configs:
        raise ValueError(f"{where} holds data found automatically, which datasets and the Hub name {name!r}; "
                         f"a new config of that name would hide it: choose another config name")
    other = sorted({Path(p).suffix or p for entry in auto["data_files"] for p in entry["path"]} - {".parquet"})
    if other:
        raise ValueError(f"{where} holds data found automatically in {', '.join(other)} files; datasets loads all configs "
                         "of a folder or repo in one format, so Parquet configs cannot be added next to it: "
                         "write them to another folder or repo, or convert the data to Parquet first")
    return [{**auto, "default": True}]  # load_dataset(where) keeps giving that data
