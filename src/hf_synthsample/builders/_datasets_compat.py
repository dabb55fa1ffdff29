"""The ``datasets`` internals the builders use, each in this one module.

``datasets`` has no public hook for two things the builders need: checking a config made from a name
and overrides before anything else is done, and writing a file next to the generated splits before the
folder becomes the cache entry. :class:`HookedBuilder` overrides the two internal methods that do
these steps once, and gives its subclasses hooks of their own; :func:`output_dir` and :func:`cache_root`
read the two private attributes. ``tests/test_datasets_compat.py`` checks each of them against the
installed ``datasets``, so a release that changes one fails there, by name, rather than in a build.
"""

from __future__ import annotations

from typing import Any

import datasets
from datasets.builder import Key  # what _generate_tables yields with each table (no top-level export)

__all__ = ["INTERNAL_SIGNATURES", "HookedBuilder", "Key", "output_dir", "cache_root"]

#: each overridden ``datasets.ArrowBasedBuilder`` method -> its parameters as overridden here
INTERNAL_SIGNATURES: dict[str, tuple[str, ...]] = {
    "_create_builder_config": ("self", "config_name", "custom_features", "config_id", "config_kwargs"),
    "_download_and_prepare": ("self", "dl_manager", "verification_mode", "prepare_split_kwargs"),
}


def output_dir(builder: datasets.DatasetBuilder) -> str:
    """The folder ``builder`` writes to: inside ``download_and_prepare``, the temporary folder that
    becomes the cache entry once every split is written (``datasets`` swaps ``_output_dir`` for it)."""
    return builder._output_dir


def cache_root(builder: datasets.DatasetBuilder) -> str:
    """The cache root ``builder`` was given (``cache_dir=``, else ``HF_DATASETS_CACHE``)."""
    return builder._cache_dir_root


class HookedBuilder(datasets.ArrowBasedBuilder):
    """An Arrow builder with hooks of its own where ``datasets`` has none (override these, not the internals):

    * :meth:`check_config_kwargs`: the config name and overrides, before ``datasets`` reads them;
    * :meth:`configured`: the config made from them, before the builder's info or cache folder;
    * :meth:`generated`: after every split is written, with the folder that becomes the cache entry.
    """

    def check_config_kwargs(self, config_name: str | None, config_kwargs: dict[str, Any]) -> None:
        """Refuse a config name or override (before ``datasets``' own, less specific, errors)."""

    def configured(self, config: datasets.BuilderConfig, config_kwargs: dict[str, Any]) -> None:
        """Check and complete ``config`` (made from the name and ``config_kwargs``) before any work."""

    def generated(self, folder: str) -> None:
        """Called once every split is written to ``folder`` (still the temporary folder)."""

    def _create_builder_config(self, config_name=None, custom_features=None, config_id=None, **config_kwargs):
        self.check_config_kwargs(config_name, config_kwargs)
        config, config_id = super()._create_builder_config(
            config_name=config_name, custom_features=custom_features, config_id=config_id, **config_kwargs
        )
        self.configured(config, config_kwargs)
        return config, config_id

    def _download_and_prepare(self, dl_manager, verification_mode, **prepare_split_kwargs):
        super()._download_and_prepare(dl_manager, verification_mode, **prepare_split_kwargs)
        self.generated(output_dir(self))
