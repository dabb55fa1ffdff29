"""Materialize a domain's configs as a Hub-layout dataset folder with a dataset card (what
``hf-synthsample generate <domain>`` runs): what the data is, how to regenerate it, and each
config's salient-variable statistics and homogenization report.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..builders import get_builder_class
from ..builders.base import homogenization_report
from ..columns import column_array
from ..load import load_dataset, resolve_config
from ..sampling.report import kl_to_uniform
from ..validation import check_path
from .card import LOCAL_PATH_PREFIX, check_license, redact_local_paths
from .folder import check_can_add, check_target, write_hub_folder

__all__ = ["materialize", "salient_statistics_markdown"]


def salient_statistics_markdown(dataset, variables: Sequence[str]) -> str:
    """A Markdown table: per salient column, mean, min, max, distinct values and KL to uniform."""
    lines = ["| salient variable | mean | min | max | distinct values | KL to uniform (nats) |", "|---|---:|---:|---:|---:|---:|"]
    for v in variables:
        values = column_array(dataset, v)
        uniques, counts = np.unique(values, return_counts=True)
        kl = kl_to_uniform(dict(zip(uniques.tolist(), counts.tolist())))
        lines.append(
            f"| {v} | {values.mean():.3f} | {values.min():g} | {values.max():g} | {len(uniques)} | {kl:.4f} |"
        )
    return "\n".join(lines)


def _format_value(value: Any) -> str:
    return repr(list(value)) if isinstance(value, tuple) else repr(value)


def materialize(
    domain: str,
    folder: str | os.PathLike,
    configs: Sequence[str] | None = None,
    *,
    num_proc: int | None = None,
    cache_dir: str | None = None,
    if_exists: str = "error",
    plots: bool = True,
    card_metadata: Mapping[str, Any] | None = None,
    extra_files: Mapping[str, Any] | None = None,
    license: str | None = None,
    **overrides: Any,
) -> Path:
    """Generate ``configs`` of ``domain`` with ``overrides`` and write them as a Hub-layout folder;
    returns its path. Everything is validated before anything is generated. The card's YAML gets the
    domain's ``language`` and ``task_categories``, ``license`` and ``card_metadata``; ``extra_files`` as
    in :func:`~hf_synthsample.hub.write_hub_folder`.

    Example:
        >>> import tempfile, datasets
        >>> out = materialize("calculator", tempfile.mkdtemp() + "/calc", ["dcfg", "dcfg-homogenized-length"],
        ...                   num_examples=300, plots=False)
        >>> datasets.load_dataset(str(out), "dcfg-homogenized-length")["train"].num_rows
        300
    """
    folder = check_path("folder", folder)
    extra_files = extra_files or {}
    if not isinstance(extra_files, Mapping):
        raise TypeError(f"extra_files must be a mapping of relative path -> content, got {type(extra_files).__name__}")
    cls = get_builder_class(domain)
    names = list(configs) if configs else list(cls.builder_configs)
    if not names:
        raise ValueError("configs: give at least one config name")
    resolved = {name: resolve_config(domain, name, **overrides) for name in names}  # validates all first
    check_license(license)
    if card_metadata is not None and not isinstance(card_metadata, Mapping):
        raise TypeError(f"card_metadata must be a mapping of YAML keys to values, got {type(card_metadata).__name__}")
    check_target(folder, if_exists)  # before generating, not after
    if if_exists == "add":  # nor a config of a user's folder
        check_can_add(folder, names)

    data, sections, plot_files, provenance = {}, [], {}, {}
    # plots are drawn straight into the folder's temp copy (cleaned, or recovered, with it)
    for name, (_, config, _) in resolved.items():
        dsd = load_dataset(domain, name, num_proc=num_proc, cache_dir=cache_dir, **overrides)
        data[name] = dsd
        parameters = redact_local_paths(config.parameters())
        provenance[name] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in parameters.items()}
        params = ", ".join(f"`{k}={_format_value(v)}`" for k, v in parameters.items())
        section = [f"### `{name}`", "", config.description or "", "",
                   "Rows: " + ", ".join(f"{split} {len(ds):,}" for split, ds in dsd.items()), "",
                   f"Parameters: {params}", ""]
        train = next(iter(dsd.values()))
        if cls.SALIENT_VARIABLES:  # exact datasets such as SCAN have none
            section += ["Salient variables (first split):", "", salient_statistics_markdown(train, list(cls.SALIENT_VARIABLES)), ""]
        report = homogenization_report(train)
        if report is not None:
            section += ["Generator-side homogenization:", "", report.to_markdown(), ""]
            if plots:
                rel = f"plots/{name}-{report.homogenized_key.strip('()').replace(', ', '-')}.png"
                plot_files[rel] = report.plot  # called with the path inside the temp folder
                section += [f"![{name} homogenization]({rel})", ""]
        sections.append("\n".join(section))

    from .._version import __version__

    title = f"{domain.capitalize()} (generated with hf-synthsample {__version__})"
    first = names[0]
    example_overrides = ", ".join(f"{k}={_format_value(v)}" for k, v in redact_local_paths(overrides).items())
    paragraphs = [
        f"# {title}", "## What it is", cls.DESCRIPTION, "## How it was generated",
        f"Generated by [hf-synthsample](https://pypi.org/project/hf-synthsample/) {__version__} "
        f"with the `{domain}` builder. Rows depend only on the config's parameters and seed "
        "(not on the number of processes), so this regenerates the same rows:",
        f"```python\nimport hf_synthsample\nds = hf_synthsample.load_dataset({domain!r}, {first!r}"
        + (f", {example_overrides}" if example_overrides else "") + ")\n```",
    ]
    if LOCAL_PATH_PREFIX in example_overrides:
        paragraphs.append(f"Local paths are recorded as `{LOCAL_PATH_PREFIX}<name>`: give the path of your own copy.")
    paragraphs += [
        "Salient variables: " + "; ".join(f"`{k}`: {v}" for k, v in cls.SALIENT_VARIABLES.items()) + "."
        if cls.SALIENT_VARIABLES else "No salient variables: the rows are an exact enumeration.",
        "## Loading", f'```python\nimport datasets\nds = datasets.load_dataset("path/to/this/folder", {first!r})\n```',
        # each section ends with a newline: one blank line between sections
        "## Configs", "\n".join(sections) + "\n## Citation", f"```bibtex\n{cls.CITATION.strip()}\n```",
    ]
    body = "\n\n".join(paragraphs)
    metadata = {
        "pretty_name": title,
        **cls.CARD_METADATA,  # language, task_categories
        **dict(card_metadata or {}),
        "tags": ["synthetic", "hf-synthsample", domain],
        "hf_synthsample": {"version": __version__, "domain": domain, "configs": provenance},
    }
    return write_hub_folder(
        folder, data, body=body, metadata=metadata, default_config=first,
        extra_files={**plot_files, **dict(extra_files)}, if_exists=if_exists, license=license,
    )
