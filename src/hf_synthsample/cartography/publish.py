"""A data-map subset as a Hub-layout folder: :func:`save_datamap_subset` (what ``hf-synthsample
datamap --select ... --out`` writes).

The folder holds one config (named after the regions) with the rows and their ids, the map's plot
and a card naming the source, the selection (:func:`datamap_provenance`, the subset's
:class:`~hf_synthsample.hub.Provenance`) and the map's summary.

Example:
    >>> import os, tempfile, datasets, pyarrow as pa
    >>> from hf_synthsample.cartography import DataMap
    >>> dm = DataMap.from_dynamics(pa.table({"example_id": [0, 1, 2, 3], "epoch": [0] * 4,
    ...                                      "loss": [3.0, 0.1, 2.0, 0.2], "correct": [False, True, False, True]}), "loss")
    >>> train = datasets.Dataset.from_dict({"text": ["a", "b", "c", "d"]})
    >>> out = save_datamap_subset(dm, tempfile.mkdtemp() + "/hard", "hard-to-learn", 0.5, dataset=train,
    ...                           assume_id_order=True, source="train.jsonl")
    >>> sub = datasets.load_dataset(str(out), split="train")
    >>> list(sub["text"]), list(sub["example_id"])
    (['a', 'c'], [0, 2])
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Dataset

    from ..hub.provenance import Provenance
    from .datamap import DataMap

__all__ = ["save_datamap_subset", "datamap_provenance"]


def save_datamap_subset(
    datamap: "DataMap",
    folder: str | os.PathLike,
    region: str | Sequence[str],
    fraction: float,
    *,
    dataset: "Dataset | None" = None,
    source: str | None = None,
    dynamics: str | os.PathLike | None = None,
    id_column: str = "example_id",
    assume_id_order: bool = False,
    oov_columns: Sequence[str] | None = None,
    proportions: Sequence[float] | None = None,
    seed: int = 0,
    split: str = "train",
    plot: "bool | str | os.PathLike" = True,
    overwrite: bool = False,
    license: str | None = None,
    names: Mapping[str, str] | None = None,
) -> Path:
    """Write ``datamap``'s subset of ``region`` at ``fraction`` as a Hub-layout folder; returns it.

    ``dataset``: the training set to cut (``None``: the ids with their map values), named in the card
    by ``source``; ``plot``: ``True`` (draw the map), a PNG to copy or ``False``; ``names``: the
    options as messages name them (the CLI's flags); the rest as in :meth:`DataMap.subset`.
    """
    from datasets import Dataset, DatasetDict

    from ..hub.card import check_license, portable_path
    from ..hub.folder import write_hub_folder
    from ..hub.publish import curated_card
    from .datamap import parse_regions
    from .rows import _API_NAMES, _subset_rows

    names = dict(_API_NAMES if names is None else names)
    regions = parse_regions(region)
    license = check_license(license)
    if not isinstance(plot, bool) and not os.path.isfile(plot):
        raise ValueError(f"plot: {os.fspath(plot)!r} is not a file (pass True to draw the map, or a PNG path)")
    kwargs = {"proportions": proportions, "seed": seed}
    # first: it refuses a dataset the map cannot cut, before any work
    provenance = datamap_provenance(dataset, datamap, regions, fraction, proportions=proportions,
                                    oov_columns=oov_columns, seed=seed, dynamics=dynamics, source=source,
                                    id_column=id_column, assume_id_order=assume_id_order, names=names)
    if dataset is not None:
        rows, ids = _subset_rows(datamap, dataset, regions, fraction, oov_columns=oov_columns, id_column=id_column,
                                 assume_id_order=assume_id_order, names=names, **kwargs)
        subset = dataset.select(rows)
        if id_column not in subset.column_names:  # matched by position: the ids are the row numbers
            subset = subset.add_column(id_column, ids)
    else:
        ids = datamap.select(regions, fraction, **kwargs)
        pos = np.searchsorted(datamap.example_ids, ids)
        # confidence is oriented (higher = easier); the measure's own mean sits beside it
        subset = Dataset.from_dict({id_column: ids, "confidence": datamap.confidence[pos],
                                    "variability": datamap.variability[pos], "correctness": datamap.correctness[pos],
                                    datamap.measure: datamap.scores[datamap.measure][pos]})
    name = "_".join(regions).replace("-", "_")
    extra = {}
    if plot is not False:
        extra[f"plots/{name}-datamap.png"] = (
            (lambda path: datamap.plot(path, fraction=fraction)) if plot is True else Path(plot))
    k, n = len(subset), len(datamap)
    title = (f"# Data-map subset: {'+'.join(regions)}, {k:,} of {n:,} examples ({100 * k / n:.1f} %)\n\n"
             f"Selected by hf-synthsample dataset cartography (measure `{datamap.measure}`, {datamap.source} pass, "
             f"epochs {datamap.epochs[0]}..{datamap.epochs[-1]}; {datamap.confidence_label}"
             + (f"; dynamics of {_model_text(datamap.model)}" if datamap.model else "")
             + (f"; OOV-repaired on {', '.join(oov_columns)}" if oov_columns else "") + ").")
    meta, body = curated_card({}, title, name, provenance, {split: k}, datamap.to_markdown(fraction), list(extra),
                               license)
    meta["hf_synthsample"]["datamap"] = {
        "dynamics": None if dynamics is None else portable_path(os.path.abspath(dynamics)), "measure": datamap.measure,
        "model": datamap.model,
        "source": datamap.source, "confidence": datamap.confidence_label, "epochs": list(datamap.epochs),
        "regions": list(regions), "fraction": fraction, "selected": k, "examples": n,
        "oov_columns": None if not oov_columns else list(oov_columns), "seed": seed}
    return write_hub_folder(folder, {name: DatasetDict({split: subset})}, body=body, metadata=meta,
                            extra_files=extra, if_exists="overwrite" if overwrite else "error")


def _model_text(model: Mapping) -> str:
    """``T5ForConditionalGeneration (t5-small, 60,506,624 parameters)``: a model record in words."""
    inner = [str(model[k]) for k in ("name_or_path",) if model.get(k)]
    if model.get("num_parameters") is not None:
        inner.append(f"{int(model['num_parameters']):,} parameters")
    return f"`{model.get('class', 'a model')}`" + (f" ({', '.join(inner)})" if inner else "")


def datamap_provenance(
    dataset: "Dataset | None",
    datamap: "DataMap",
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
    id_column: str = "example_id",
    assume_id_order: bool = False,
    names: Mapping[str, str] | None = None,
) -> "Provenance":
    """Provenance of ``datamap.subset(dataset, region, fraction, ...)``, with
    :meth:`~hf_synthsample.hub.Provenance.from_sampler`'s fields.

    The source is ``dataset``, or with ``dataset=None`` the dynamics (``dynamics``: their folder);
    the "sampler" is ``DataMap.select`` with the map's and the selection's parameters, and the
    model the dynamics were recorded with (``model``: ``None`` when the dynamics do not say, e.g.
    a table made by hand). ``dataset`` must be one the map can cut (rows found by ``id_column``,
    or by position with ``assume_id_order``, as :meth:`DataMap.subset` finds them; a subset is
    not its own source): else ``ValueError``, before any work. Its fingerprint is a digest of
    its rows (:func:`~hf_synthsample.hub.provenance.rows_digest`), which names the data in the file
    ``source`` too, not only the copy in memory. ``names``: the options as messages name them.

    Example:
        >>> import pyarrow as pa
        >>> from datasets import Dataset
        >>> from hf_synthsample.cartography import DataMap
        >>> dm = DataMap.from_dynamics(pa.table({"example_id": [0, 1, 2, 3], "epoch": [0] * 4,
        ...                                      "loss": [3.0, 0.1, 2.0, 0.2], "correct": [False, True, False, True]}), "loss")
        >>> p = datamap_provenance(Dataset.from_dict({"example_id": [0, 1, 2, 3]}), dm, "hard-to-learn", 0.5,
        ...                        source="train.jsonl")
        >>> p.sampler, p.sampler_params["selected"], p.source_size
        ('DataMap.select', 2, 4)
    """
    from ..hub.card import portable_path
    from ..hub.provenance import Provenance, rows_digest
    from .datamap import DataMap, parse_regions
    from .rows import _API_NAMES, datamap_rows

    if not isinstance(datamap, DataMap):
        raise TypeError(f"datamap must be a DataMap, got {type(datamap).__name__}")
    regions = list(parse_regions(region))
    selected = datamap.subset_size(fraction)  # checks fraction
    if dataset is not None:  # a dataset the map cannot cut (a subset, another data set) is refused here
        datamap_rows(datamap, dataset, None, id_column=id_column, assume_id_order=assume_id_order,
                      names=dict(_API_NAMES if names is None else names))
    params = {
        "measure": datamap.measure, "pass": datamap.source, "epochs": [datamap.epochs[0], datamap.epochs[-1]],
        "region": "+".join(regions), "fraction": float(fraction), "selected": selected, "examples": len(datamap),
        # the model behind the dynamics: the subset is of what that model found hard or easy
        "model": dict(datamap.model) if datamap.model else None,
    }
    if proportions is not None:
        params["proportions"] = [float(p) for p in proportions]
    if oov_columns:
        params["oov_columns"] = list(oov_columns)
    config = dict(source_config or {})
    if dynamics is not None:
        config.setdefault("dynamics", portable_path(os.fspath(dynamics)))
    if dataset is None:
        fingerprints = datamap.dataset_fingerprints
        if fingerprints:
            config.setdefault("training_set_fingerprint", fingerprints[0])
        return Provenance(source=source or (portable_path(os.fspath(dynamics)) if dynamics is not None
                                            else "training dynamics"),
                          source_config=config, source_fingerprint=None, source_size=datamap.num_examples,
                          sampler="DataMap.select", sampler_params=params, seed=seed, description=description)
    if dataset.info.config_name:
        config.setdefault("config_name", dataset.info.config_name)
    return Provenance(source=source or dataset.info.dataset_name or "dataset", source_config=config,
                      source_fingerprint=rows_digest(dataset), source_size=len(dataset), sampler="DataMap.select",
                      sampler_params=params, seed=seed, description=description)
