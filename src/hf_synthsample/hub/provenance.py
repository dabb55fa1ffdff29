"""Where a derived dataset came from: :class:`Provenance` (the record a curated folder's card
carries, from :meth:`Provenance.from_sampler` or
:func:`hf_synthsample.cartography.datamap_provenance`) and
:func:`dataset_fingerprint`.

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"x": [1, 2]})
    >>> dataset_fingerprint(ds) == dataset_fingerprint(ds), dataset_fingerprint(ds) == dataset_fingerprint(ds.shuffle(seed=0))
    (True, False)
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["Provenance", "dataset_fingerprint", "column_digests", "rows_digest"]

#: rows hashed at a time by :func:`column_digests`
_DIGEST_BATCH = 4096


def dataset_fingerprint(dataset: Any) -> str | None:
    """The ``datasets`` fingerprint of ``dataset`` (a hash of its data and of every transform that
    made it); ``None`` for anything that is not a ``datasets.Dataset``."""
    # datasets keeps it in a private attribute: this is the one place that reads it
    fingerprint = getattr(dataset, "_fingerprint", None)
    return fingerprint if isinstance(fingerprint, str) else None


def column_digests(dataset: Any, exclude: Sequence[str] = (), columns: Sequence[str] | None = None) -> dict[str, str]:
    """Per column of ``dataset`` (all but ``exclude``, or only ``columns``): a SHA-256 digest of its
    values in row order. Unlike the ``datasets`` fingerprint, it depends on the rows alone: the same
    rows saved to Parquet (or JSON, for integers, strings and lists of them) and loaded again have
    the same digests, and a shuffled or filtered copy other ones.

    Example:
        >>> from datasets import Dataset
        >>> ds = Dataset.from_dict({"id": [0, 1], "x": [[1, 2], [3]]})
        >>> column_digests(ds, exclude=["id"]) == column_digests(Dataset.from_dict({"x": [[1, 2], [3]]}))
        True
        >>> column_digests(ds)["x"] == column_digests(ds.select([1, 0]))["x"]
        False
    """
    import hashlib
    import json

    from ..columns import column_arrow

    names = [c for c in (dataset.column_names if columns is None else columns) if c not in set(exclude)]
    out = {}
    for name in sorted(names):
        col = column_arrow(dataset, name)
        digest = hashlib.sha256(f"{len(col)}\n".encode())
        for start in range(0, len(col), _DIGEST_BATCH):  # Python values: the same whatever the Arrow width
            values = col.slice(start, _DIGEST_BATCH).to_pylist()
            digest.update(json.dumps(values, ensure_ascii=False, separators=(",", ":"), sort_keys=True,
                                     default=repr).encode())
        out[name] = digest.hexdigest()
    return out


def rows_digest(dataset: Any, exclude: Sequence[str] = ()) -> str:
    """One digest of ``dataset``'s rows (order-sensitive; :func:`column_digests` of every column
    but ``exclude``, with their names): ``"rows-sha256:<hex>"``. A card records it as the source's
    fingerprint, which anyone holding the same rows, in whatever file, gets again."""
    import hashlib

    digests = column_digests(dataset, exclude)
    text = "\n".join(f"{name}:{d}" for name, d in sorted(digests.items()))
    return "rows-sha256:" + hashlib.sha256(text.encode()).hexdigest()


def model_record(model: Any) -> dict:
    """What a card names of ``model``: its class, ``model_type``, ``name_or_path`` (a local path as
    its last component, :func:`~hf_synthsample.hub.card.portable_path`) and parameter count."""
    from .card import portable_path

    config = getattr(model, "config", None)
    record: dict = {"class": type(model).__name__}
    if getattr(config, "model_type", None):
        record["model_type"] = str(config.model_type)
    name = getattr(config, "_name_or_path", None) or getattr(model, "name_or_path", None)
    if name:
        record["name_or_path"] = portable_path(str(name))
    try:
        record["num_parameters"] = int(sum(p.numel() for p in model.parameters()))
    except (AttributeError, TypeError):
        pass
    return record


def _jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


@dataclasses.dataclass
class Provenance:
    """How a curated subset was made: its ``source`` (e.g. ``"hf_synthsample:calculator/dcfg"``, a
    folder or a repo id) with its config, fingerprint and rows, and the ``sampler`` (e.g.
    ``"HomogenizeSampler"``) with its parameters and ``seed``."""

    source: str
    source_config: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    source_fingerprint: str | None = None
    source_size: int | None = None
    sampler: str | None = None
    sampler_params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    seed: int | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.source, str) or not self.source:
            raise ValueError("provenance.source must be a non-empty string naming where the rows came from")

    @classmethod
    def from_sampler(
        cls,
        dataset: "Dataset",
        sampler: Any,
        *,
        source: str | None = None,
        source_config: Mapping[str, Any] | None = None,
        description: str = "",
    ) -> "Provenance":
        """Provenance of ``sampler`` applied to ``dataset``: its fingerprint, size, parameters and seed."""
        # the settings that ran, as their record (JSON-safe); else the sampler's own get_params
        settings = getattr(sampler, "settings", None)
        params = settings.to_record() if hasattr(settings, "to_record") else (
            sampler.get_params() if hasattr(sampler, "get_params") else {})
        if source_config is None:
            source_config = {"config_name": dataset.info.config_name} if dataset.info.config_name else {}
        return cls._of_dataset(dataset, source, source_config, sampler=type(sampler).__name__, sampler_params=params,
                               seed=params.get("seed"), description=description)

    @classmethod
    def _of_dataset(cls, dataset: "Dataset", source: str | None, source_config: Mapping[str, Any],
                    **fields: Any) -> "Provenance":
        """A provenance whose source is ``dataset``: its name (unless ``source``), fingerprint and size."""
        return cls(source=source or dataset.info.dataset_name or "dataset", source_config=source_config,
                   source_fingerprint=dataset_fingerprint(dataset), source_size=len(dataset), **fields)

    def to_dict(self) -> dict:
        return _jsonable(dataclasses.asdict(self))
