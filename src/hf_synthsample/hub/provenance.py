"""Where a derived dataset came from: :class:`Provenance` (the record a curated folder's card
carries, from :meth:`Provenance.from_sampler` or :meth:`Provenance.from_datamap`) and
:func:`dataset_fingerprint`.

Example:
    >>> from datasets import Dataset
    >>> ds = Dataset.from_dict({"x": [1, 2]})
    >>> dataset_fingerprint(ds) == dataset_fingerprint(ds), dataset_fingerprint(ds) == dataset_fingerprint(ds.shuffle(seed=0))
    (True, False)
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

__all__ = ["Provenance", "dataset_fingerprint"]


def dataset_fingerprint(dataset: Any) -> str | None:
    """The ``datasets`` fingerprint of ``dataset`` (a hash of its data and of every transform that
    made it); ``None`` for anything that is not a ``datasets.Dataset``."""
    # datasets keeps it in a private attribute: this is the one place that reads it
    fingerprint = getattr(dataset, "_fingerprint", None)
    return fingerprint if isinstance(fingerprint, str) else None


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

    @classmethod
    def from_datamap(
        cls,
        dataset: "Dataset | None",
        datamap: Any,
        region: str | Sequence[str],
        fraction: float,
        *,
        proportions: Sequence[float] | None = None,
        oov_columns: Sequence[str] | None = None,
        seed: int = 0,
        dynamics: str | os.PathLike | None = None,
        source: str | None = None,
        source_config: Mapping[str, Any] | None = None,
        description: str = "",
    ) -> "Provenance":
        """Provenance of ``datamap.subset(dataset, region, fraction, ...)``, with :meth:`from_sampler`'s fields.

        The source is ``dataset``, or with ``dataset=None`` the dynamics (``dynamics``: their folder);
        the "sampler" is ``DataMap.select`` with the map's and the selection's parameters.

        Example:
            >>> import pyarrow as pa
            >>> from datasets import Dataset
            >>> from hf_synthsample.cartography import DataMap
            >>> dm = DataMap.from_dynamics(pa.table({"example_id": [0, 1, 2, 3], "epoch": [0] * 4,
            ...                                      "loss": [3.0, 0.1, 2.0, 0.2], "correct": [False, True, False, True]}), "loss")
            >>> p = Provenance.from_datamap(Dataset.from_dict({"example_id": [0, 1, 2, 3]}), dm, "hard-to-learn", 0.5,
            ...                             source="train.jsonl")
            >>> p.sampler, p.sampler_params["selected"], p.source_size
            ('DataMap.select', 2, 4)
        """
        from ..cartography.datamap import DataMap, parse_regions

        if not isinstance(datamap, DataMap):
            raise TypeError(f"datamap must be a DataMap, got {type(datamap).__name__}")
        regions = list(parse_regions(region))
        selected = datamap.subset_size(fraction)  # checks fraction
        params = {
            "measure": datamap.measure, "pass": datamap.source, "epochs": [datamap.epochs[0], datamap.epochs[-1]],
            "region": "+".join(regions), "fraction": float(fraction), "selected": selected, "examples": len(datamap),
        }
        if proportions is not None:
            params["proportions"] = [float(p) for p in proportions]
        if oov_columns:
            params["oov_columns"] = list(oov_columns)
        config = dict(source_config or {})
        if dynamics is not None:
            config.setdefault("dynamics", os.fspath(dynamics))
        if dataset is None:
            fingerprints = datamap.dataset_fingerprints
            if fingerprints:
                config.setdefault("training_set_fingerprint", fingerprints[0])
            return cls(source=source or (os.fspath(dynamics) if dynamics is not None else "training dynamics"),
                       source_config=config, source_fingerprint=None, source_size=datamap.num_examples,
                       sampler="DataMap.select", sampler_params=params, seed=seed, description=description)
        if dataset.info.config_name:
            config.setdefault("config_name", dataset.info.config_name)
        return cls._of_dataset(dataset, source, config, sampler="DataMap.select", sampler_params=params, seed=seed,
                               description=description)

    def to_dict(self) -> dict:
        return _jsonable(dataclasses.asdict(self))
