"""The Hub side of hf-synthsample: Hub-layout dataset folders (:func:`write_hub_folder`,
:func:`materialize`), their cards, and curated subsets with their :class:`Provenance`
(:func:`save_curated`, :func:`push_curated`). Names are imported lazily.

Example:
    >>> import tempfile, datasets
    >>> from hf_synthsample.hub import write_hub_folder
    >>> out = write_hub_folder(tempfile.mkdtemp() + "/one", {"single": datasets.Dataset.from_dict({"x": [1]})}, body="# one")
    >>> list(datasets.load_dataset(str(out), "single")["train"]["x"])
    [1]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import attach

_LAZY = {
    ".folder": ("write_hub_folder", "check_config_name"),
    ".card": ("make_card", "render_card", "load_card", "read_card_metadata", "check_license", "size_category"),
    ".materialization": ("materialize", "salient_statistics_markdown"),
    ".provenance": ("Provenance", "dataset_fingerprint"),
    ".publish": ("save_curated", "push_curated"),
}

if TYPE_CHECKING:  # pragma: no cover
    from .card import check_license, load_card, make_card, read_card_metadata, render_card, size_category
    from .folder import check_config_name, write_hub_folder
    from .materialization import materialize, salient_statistics_markdown
    from .provenance import Provenance, dataset_fingerprint
    from .publish import push_curated, save_curated

__getattr__, __dir__ = attach(__name__, _LAZY)
__all__ = __dir__()
