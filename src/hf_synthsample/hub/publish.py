"""Save or push a curated subset with a dataset card that records how it was made.

A curated subset is one config of a Hub-layout dataset, whose card section and YAML entry record
its :class:`Provenance`, sizes, statistics and plots; the other configs are left untouched.

Example:
    >>> import tempfile, datasets
    >>> from hf_synthsample import HomogenizeSampler
    >>> pool = datasets.Dataset.from_dict({"length": [2, 2, 2, 4, 6, 6]})
    >>> sampler = HomogenizeSampler("length", seed=0)
    >>> subset = sampler.sample(pool, 3)
    >>> folder = save_curated(subset, tempfile.mkdtemp() + "/out", Provenance.from_sampler(pool, sampler, source="toy"),
    ...                       config_name="uniform-length")
    >>> sorted(datasets.load_dataset(str(folder), "uniform-length")["train"]["length"])
    [2, 4, 6]
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import re
import socket
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..atomic import FOLDER_MARKER
from ..validation import check_path
from ..logging import get_logger

from .card import (SIZE_CATEGORIES, check_license, keep_auto_detected, read_card, read_card_metadata,
                   redact_local_paths, render_card, size_category)
from .folder import _as_dict, check_config_name, mark_default, marked_default, write_hub_folder
from .provenance import Provenance, _jsonable

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset, DatasetDict

logger = get_logger(__name__)

__all__ = ["Provenance", "save_curated", "push_curated"]

_SECTION = "<!-- hf-synthsample:curated {name} {edge} -->"


def _statistics(statistics: Any) -> tuple[str | None, list[dict]]:
    """Markdown and YAML-able dicts from a string, a report (``to_markdown()``) or a list of them."""
    if statistics is None or isinstance(statistics, str):
        return statistics, []
    items = list(statistics) if isinstance(statistics, (list, tuple)) else [statistics]
    texts, dicts = [], []
    for item in items:
        if isinstance(item, str):
            texts.append(item)
        elif callable(getattr(item, "to_markdown", None)):
            texts.append(item.to_markdown())
            if callable(getattr(item, "to_dict", None)):
                dicts.append({"report": type(item).__name__, **_jsonable(item.to_dict())})
        else:
            raise TypeError(
                "statistics must be Markdown text, a report with to_markdown() (e.g. DiversityReport, "
                f"HomogenizationReport) or a list of these; got {type(item).__name__}"
            )
    return "\n\n".join(t.strip() for t in texts), dicts


def _section(config_name: str, provenance: Provenance, sizes: Mapping[str, int], statistics: str | None, plots: Mapping[str, str]) -> str:
    rows = [f"### Curated config `{config_name}`", ""]
    if provenance.description:
        rows += [provenance.description, ""]
    rows += ["| | |", "|---|---|", f"| source | `{provenance.source}` |"]
    if provenance.source_config:
        cfg = ", ".join(f"{k}={v!r}" for k, v in _jsonable(provenance.source_config).items())
        rows.append(f"| source config | `{cfg}` |")
    if provenance.source_fingerprint:
        rows.append(f"| source fingerprint | `{provenance.source_fingerprint}` |")
    if provenance.source_size is not None:
        rows.append(f"| source rows | {provenance.source_size:,} |")
    if provenance.sampler:
        params = ", ".join(f"{k}={v!r}" for k, v in _jsonable(provenance.sampler_params).items())
        rows.append(f"| sampler | `{provenance.sampler}({params})` |")
    if provenance.seed is not None:
        rows.append(f"| seed | {provenance.seed} |")
    rows.append("| rows | " + ", ".join(f"{split} {n:,}" for split, n in sizes.items()) + " |")
    total = sum(sizes.values())
    if provenance.source_size:  # the real share (a fraction rounds to whole rows)
        rows.append(f"| share of the source | {total:,} of {provenance.source_size:,} rows "
                    f"({100 * total / provenance.source_size:.1f} %) |")
    rows.append("")
    if statistics:
        rows += [statistics.strip(), ""]
    for rel in plots:
        rows += [f"![{config_name}]({rel})", ""]
    body = "\n".join(rows)
    return f"{_SECTION.format(name=config_name, edge='start')}\n{body}\n{_SECTION.format(name=config_name, edge='end')}"


def _merge_body(previous: str, config_name: str, section: str) -> str:
    """Replace this config's section in an existing card body (or append it), keeping the rest."""
    if not previous.strip():
        previous = "# Curated datasets\n\nSubsets curated with [hf-synthsample](https://pypi.org/project/hf-synthsample/)."
    pattern = re.compile(
        re.escape(_SECTION.format(name=config_name, edge="start")) + r".*?" + re.escape(_SECTION.format(name=config_name, edge="end")),
        flags=re.S,
    )
    if pattern.search(previous):
        return pattern.sub(lambda _: section, previous)
    return previous.rstrip() + "\n\n" + section


def curated_card(
    previous_meta: Mapping, previous_body: str, config_name: str, provenance: Provenance,
    sizes: Mapping[str, int], statistics: Any, plots: Mapping[str, str], license: str | None = None,
) -> tuple[dict, str]:
    statistics, stat_dicts = _statistics(statistics)
    provenance = Provenance(**redact_local_paths(dataclasses.asdict(provenance)))  # cards are for the Hub
    meta = {k: v for k, v in previous_meta.items() if k != "configs"}
    ours = dict(meta.get("hf_synthsample") or {})
    curated = dict(ours.get("curated") or {})
    curated[config_name] = {**provenance.to_dict(), "sizes": dict(sizes)}
    if stat_dicts:
        curated[config_name]["statistics"] = stat_dicts
    ours["curated"] = curated
    meta["hf_synthsample"] = ours
    tags = list(meta.get("tags") or [])
    meta["tags"] = tags + [tag for tag in ("hf-synthsample", "curated") if tag not in tags]
    if license is not None:  # else the card keeps the license it had (or has none)
        meta["license"] = license
    body = _merge_body(previous_body, config_name, _section(config_name, provenance, sizes, statistics, plots))
    return meta, body


def _check_inputs(dataset: "Dataset | DatasetDict", provenance: Provenance, config_name: str, statistics: Any,
                  license: Any) -> tuple[dict, str | None]:
    """``({split: Dataset}, license)`` once the arguments both writers share are checked, before any work."""
    if not isinstance(provenance, Provenance):
        raise TypeError(f"provenance must be a Provenance, got {type(provenance).__name__}")
    parts = _as_dict(dataset)
    if not parts or not any(len(ds) for ds in parts.values()):
        raise ValueError("dataset is empty: nothing to publish")
    check_config_name(config_name, "config_name")
    _statistics(statistics)
    return parts, check_license(license)


def save_curated(
    dataset: "Dataset | DatasetDict",
    folder: str | os.PathLike,
    provenance: Provenance,
    *,
    config_name: str = "default",
    statistics: Any = None,
    plots: Mapping[str, "str | os.PathLike | Callable[[str], Any]"] | None = None,
    license: str | None = None,
) -> Path:
    """Write ``dataset`` as config ``config_name`` of the Hub-layout ``folder`` with its provenance.

    Other configs in ``folder`` are kept. ``statistics`` is Markdown, or a report with
    ``to_markdown()`` (e.g. ``DiversityReport``) or a list of them, whose ``to_dict()`` numbers also
    go into the card's YAML; ``plots`` maps a name to an image file, copied under ``plots/``, or to a
    callable drawing it at the path it is given (e.g. ``report.plot``). ``license``: the card's Hub
    license id (default: the folder's card keeps the one it has, if any).
    """
    parts, license = _check_inputs(dataset, provenance, config_name, statistics, license)
    folder = Path(check_path("folder", folder))
    _write_curated(folder, parts, read_card(folder / "README.md"), config_name, provenance, statistics, plots,
                   license, if_exists="add", default_config=None)
    return folder


def _write_curated(folder: Path, parts: dict, previous: tuple[dict, str], config_name: str, provenance: Provenance,
                   statistics: Any, plots: Mapping | None, license: str | None, **write_args: Any) -> str:
    """Write config ``config_name`` and its card (merged into ``previous``, the card's ``(metadata, body)``)
    into ``folder``; returns the card's body."""
    from datasets import DatasetDict

    extra = {f"plots/{config_name}-{name}.png": path if callable(path) else Path(path)
             for name, path in (plots or {}).items()}
    sizes = {split: len(ds) for split, ds in parts.items()}
    meta, body = curated_card(*previous, config_name, provenance, sizes, statistics, list(extra), license)
    write_hub_folder(folder, {config_name: DatasetDict(parts)}, body=body, metadata=meta, extra_files=extra,
                     **write_args)
    return body


def _known_rows(meta: Mapping, config_name: str) -> int | None:
    """Rows of config ``config_name`` as a card's YAML records them (our provenance or
    ``dataset_info``), or ``None`` when the card does not say."""
    record = ((meta.get("hf_synthsample") or {}).get("curated") or {}).get(config_name) or {}
    if isinstance(record.get("sizes"), Mapping):
        return sum(int(n) for n in record["sizes"].values())
    infos = meta.get("dataset_info")
    for info in infos if isinstance(infos, list) else [infos] if isinstance(infos, Mapping) else []:
        if isinstance(info, Mapping) and info.get("config_name", "default") == config_name and info.get("splits"):
            return sum(int(split.get("num_examples", 0)) for split in info["splits"])
    return None


def _repo_size_category(previous_meta: Mapping, kept: list[dict], new_rows: int) -> str:
    """``size_categories`` of the repo after the push: the largest config's rows (as
    :func:`~hf_synthsample.hub.card.dataset_rows` reads a folder: each config is a data set of its
    own) where the card records them; where it does not, never below the category the card had."""
    counts = [_known_rows(previous_meta, c["config_name"]) for c in kept]
    label = size_category(max([new_rows, *(n for n in counts if n is not None)]))
    if any(n is None for n in counts):
        previous = [c for c in previous_meta.get("size_categories") or [] if c in SIZE_CATEGORIES]
        label = max([label, *previous], key=SIZE_CATEGORIES.index)
    return label


def push_curated(
    dataset: "Dataset | DatasetDict",
    repo_id: str,
    *,
    provenance: Provenance,
    config_name: str = "default",
    statistics: Any = None,
    plots: Mapping[str, str | os.PathLike] | None = None,
    token: str | None = None,
    private: bool | None = None,
    commit_message: str | None = None,
    parent_commit: str | None = None,
    api: Any = None,
    license: str | None = None,
):
    """Push ``dataset`` as config ``config_name`` of the Hub dataset ``repo_id``, in one commit; returns
    its ``CommitInfo``.

    Only ``<config_name>/*`` files, this config's plots and the merged ``README.md`` change; data the
    Hub found automatically (no ``configs:`` YAML) is listed as the ``default`` config so that it
    stays visible. The commit is made on top of ``parent_commit`` (default: the head read first), so
    a push in between is never overwritten: this raises, and pushing again merges with the new head.
    Every argument is checked before anything is uploaded; offline or without a network it raises a
    ``ConnectionError`` naming the Hub and the repo, with nothing uploaded. ``api`` defaults to
    ``huggingface_hub.HfApi(token=token)``; ``statistics``, ``plots`` and ``license`` as in :func:`save_curated`.
    """
    # not Dataset.push_to_hub: it writes its own card, may split the upload over several commits, and
    # re-reads the head and retries (merging over a push in between) where this must fail
    from huggingface_hub import HfApi
    from huggingface_hub.utils import HFValidationError, get_token, validate_repo_id

    parts, license = _check_inputs(dataset, provenance, config_name, statistics, license)
    _check_not_a_path(repo_id)
    try:
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise ValueError(f"repo_id: {err}") from None
    if "/" not in repo_id:
        raise ValueError(f"repo_id must be 'namespace/name', got {repo_id!r}")
    if parent_commit is not None and not (isinstance(parent_commit, str) and re.fullmatch(r"[0-9a-f]{40}", parent_commit)):
        raise ValueError(f"parent_commit must be a full commit sha (40 hex digits) or None, got {parent_commit!r}")
    token = token or get_token()
    if not token:
        raise ValueError("token: no Hugging Face token; pass token=... or log in with `hf auth login`")
    if api is None:
        from huggingface_hub.constants import is_offline_mode

        if is_offline_mode():  # fail now, not after building the upload
            raise ConnectionError(_unreachable(repo_id, "HF_HUB_OFFLINE is set (offline mode)"))
        api = HfApi(token=token)
    with _hub_errors(repo_id):
        return _push(api, parts, repo_id, provenance=provenance, config_name=config_name, statistics=statistics,
                     plots=plots, token=token, private=private, commit_message=commit_message,
                     parent_commit=parent_commit, license=license)


def _unreachable(repo_id: str, why: str) -> str:
    from huggingface_hub.constants import ENDPOINT

    return (f"push_curated: cannot reach the Hugging Face Hub ({ENDPOINT}) to push dataset repo {repo_id!r}: {why}. "
            f"Nothing was uploaded. Write the folder with save_curated(...) and upload it when online: "
            f"`hf upload {repo_id} <folder> --repo-type dataset`")


@contextlib.contextmanager
def _hub_errors(repo_id: str):
    """A network failure (no connection, DNS, timeout, offline mode) as one ``ConnectionError``
    naming the Hub and the repo; the Hub's own answers (HTTP status errors) pass unchanged."""
    from huggingface_hub.errors import HfHubHTTPError

    network: list[type] = [ConnectionError, TimeoutError, socket.gaierror]
    for module in ("httpx2", "httpx", "requests"):  # whichever HTTP client huggingface_hub uses
        try:
            lib = importlib.import_module(module)
        except ImportError:
            continue
        network += [c for c in (getattr(lib, "TransportError", None), getattr(lib, "ConnectionError", None),
                                getattr(lib, "Timeout", None)) if isinstance(c, type) and issubclass(c, Exception)]
    try:
        yield
    except HfHubHTTPError:
        raise
    except tuple(network) as err:
        raise ConnectionError(_unreachable(repo_id, f"{type(err).__name__}: {err}")) from err


def _check_not_a_path(repo_id: Any) -> None:
    """A local path given as ``repo_id`` gets its own message (the Hub's would be about characters)."""
    if not isinstance(repo_id, (str, os.PathLike)):
        raise TypeError(f"repo_id must be a str 'namespace/name', got {type(repo_id).__name__}")
    text = os.fspath(repo_id)
    if isinstance(repo_id, os.PathLike) or text.startswith((".", "/", "~", "\\")) or text.count("/") > 1 \
            or os.path.exists(text):
        where = "an existing local path" if os.path.exists(text) else "a local path (and no such folder exists)"
        raise ValueError(f"repo_id: {text!r} is {where}, not a Hub repo id ('namespace/name'). push_curated pushes "
                         f"to the Hub; to write a local folder use save_curated(dataset, {text!r}, provenance)")


def _push(api, parts: dict, repo_id: str, *, provenance: Provenance, config_name: str, statistics: Any, plots,
          token: str, private, commit_message, parent_commit, license) -> Any:
    """:func:`push_curated` once every argument is checked: read the repo, build the files, one commit."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete
    from huggingface_hub.utils import HfHubHTTPError

    previous_meta: dict = {}
    previous_body = ""
    stale: list[str] = []
    kept: list[dict] = []
    exists = api.repo_exists(repo_id, repo_type="dataset", token=token)
    if not exists:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True, token=token)
    if parent_commit is None:
        parent_commit = api.repo_info(repo_id, repo_type="dataset", token=token).sha
    if exists:
        files = api.list_repo_files(repo_id, repo_type="dataset", revision=parent_commit, token=token)
        stale = [f for f in files if f.startswith(f"{config_name}/")]
        if "README.md" in files:
            readme = api.hf_hub_download(repo_id, "README.md", repo_type="dataset", revision=parent_commit, token=token)
            previous_meta, previous_body = read_card(Path(readme))
        if "configs" in previous_meta:
            kept = [c for c in previous_meta["configs"] if c.get("config_name") != config_name]
        else:  # the Hub finds this repo's data automatically: list it, or the new card hides it
            kept = keep_auto_detected(files, [config_name], repo_id)

    with tempfile.TemporaryDirectory() as tmp:
        # Build this config alone (plus the merged card) locally, then upload exactly those files.
        local = Path(tmp) / "repo"
        body = _write_curated(local, parts, (previous_meta, previous_body), config_name, provenance, statistics,
                              plots, license)
        new_meta = read_card_metadata(local)
        new_meta["configs"] = kept + new_meta["configs"]
        rows = sum(len(ds) for ds in parts.values())
        new_meta["size_categories"] = [_repo_size_category(previous_meta, kept, rows)]
        if kept:  # keep the repo's default config
            mark_default(new_meta["configs"], marked_default(kept) or kept[0]["config_name"])
        (local / "README.md").write_text(render_card(new_meta, body))
        uploads = sorted(p.relative_to(local).as_posix() for p in local.rglob("*")
                         if p.is_file() and p.name != FOLDER_MARKER)  # the local marker is no data
        operations = [CommitOperationDelete(path_in_repo=f) for f in stale if f not in uploads]
        operations += [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(local / rel)) for rel in uploads]
        logger.info(f"pushing config {config_name!r} to {repo_id} on top of {parent_commit}: "
                    f"{len(uploads)} files, {len(stale)} replaced")
        try:
            message = commit_message or f"hf-synthsample: add curated config {config_name}"
            return api.create_commit(repo_id, operations=operations, commit_message=message, repo_type="dataset",
                                     token=token, parent_commit=parent_commit)
        except HfHubHTTPError as err:
            if getattr(err.response, "status_code", None) == 412:  # the head moved since parent_commit
                raise RuntimeError(f"{repo_id} changed since commit {parent_commit} (another push?); nothing was "
                                   "written. Push again to merge with the new head.") from err
            raise
