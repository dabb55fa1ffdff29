"""``load_dataset`` for the synthetic domains, the way ``datasets.load_dataset`` works for the Hub."""

from __future__ import annotations

import copy
import math
from typing import Any, Mapping, Sequence

from .builders import get_builder_class
from .splits.spec import check_split, normalize_split, split_names
from .validation import check_int, check_str_tuple

__all__ = ["load_dataset", "load_dataset_builder", "resolve_config", "check_split_selection"]


def resolve_config(domain: str, name: str | None = None, **config_kwargs: Any):
    """``(builder_class, config, overrides)``: the validated config ``load_dataset(domain, name,
    **config_kwargs)`` would build; ``overrides`` only those that differ from the named config (one cache entry)."""
    from .builders.base import check_named_parameters, config_parameters

    cls = get_builder_class(domain)
    configs = cls.builder_configs
    if name is None:
        name = cls.DEFAULT_CONFIG_NAME
    if name not in configs:
        raise ValueError(f"config {name!r} does not exist for {domain}; available configs: {list(configs)}")
    accepted = config_parameters(cls.BUILDER_CONFIG_CLASS)
    unknown = [k for k in config_kwargs if k not in accepted]
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0]!r} for {domain} configs; accepted parameters: {sorted(accepted)}")
    base = copy.deepcopy(configs[name])
    base.validate(cls.SALIENT_VARIABLES)
    config = copy.deepcopy(base)
    for key, value in config_kwargs.items():
        setattr(config, key, value)
    config.validate(cls.SALIENT_VARIABLES)
    check_named_parameters(cls, base, config, list(config_kwargs))
    overrides = {k: getattr(config, k) for k in config_kwargs if getattr(config, k) != getattr(base, k)}
    return cls, config, overrides


def load_dataset_builder(domain: str, name: str | None = None, *, cache_dir: str | None = None, **config_kwargs: Any):
    """A ready ``datasets`` builder for ``domain`` / ``name`` with parameter overrides.

    Example:
        >>> builder = load_dataset_builder("calculator", "t2t", num_examples=50)
        >>> builder.config.t2t_max_depth
        5
    """
    cls, config, overrides = resolve_config(domain, name, **config_kwargs)
    return cls(config_name=config.name, cache_dir=cache_dir, **overrides)


def check_split_selection(split: Any, sizes: Mapping[str, int] | None = None, arg: str = "split") -> str:
    """``split`` as a spec string when each of its slices selects rows and no row is read twice,
    else a ``ValueError`` naming ``arg`` and the slice. Exact with ``sizes`` (rows per split); without,
    it checks what the spec alone settles (``train[50:10]``, ``train+train``, ``train[:10]+train``).

    Example:
        >>> check_split_selection("train[:10%]+train[-10%:]")
        'train[:10%]+train[-10%:]'
        >>> check_split_selection("train[50:10]")
        Traceback (most recent call last):
        ValueError: split='train[50:10]': the slice 'train[50:10]' selects no rows
        >>> check_split_selection("train[:60]+train[40:]", {"train": 100})
        Traceback (most recent call last):
        ValueError: split='train[:60]+train[40:]': 'train[40:]' reads rows that 'train[:60]' reads too (rows 40 to 59 of 100); give each row once
    """
    from datasets import ReadInstruction

    spec = normalize_split(split, arg)
    split_names(spec, arg)  # a spec datasets cannot parse: ValueError naming arg
    rel = ReadInstruction.from_spec(spec)._relative_instructions
    parts = [p.strip() for p in spec.split("+")]  # from_spec reads one instruction per '+' part
    absolute = ReadInstruction.from_spec(spec).to_absolute(sizes) if sizes and all(
        r.splitname in sizes for r in rel) else None
    spans = [(a.from_, a.to) for a in absolute] if absolute else [_span(r) for r in rel]
    for i, r in enumerate(rel):
        if spans[i] and spans[i][0] >= spans[i][1]:
            of = f" of the {sizes[r.splitname]} rows of {r.splitname!r}" if absolute else ""
            raise ValueError(f"{arg}={spec!r}: the slice {parts[i]!r} selects no rows{of}")
        for j in range(i):
            lo, hi = (max(spans[i][0], spans[j][0]), min(spans[i][1], spans[j][1])) if (
                spans[i] and spans[j] and spans[i][2:] == spans[j][2:]) else (0, 0)
            twice = lo < hi or not absolute and ((r.from_ in (None, 0) and rel[j].from_ in (None, 0))
                                                 or (r.to is None and rel[j].to is None))
            if rel[j].splitname == r.splitname and twice:
                where = f" (rows {lo} to {hi - 1} of {sizes[r.splitname]})" if absolute else ""
                raise ValueError(f"{arg}={spec!r}: {parts[i]!r} reads rows that {parts[j]!r} reads too{where}; "
                                 "give each row once")
    return spec


def _span(r) -> tuple | None:
    """A slice's rows as ``(from, to, unit, anchor)`` where its bounds alone say, else ``None``."""
    if (r.from_ or 0) >= 0 and (r.to is None or r.to >= 0):
        return r.from_ or 0, r.to if r.to is not None else 100 if r.unit == "%" else math.inf, r.unit, "start"
    if r.from_ is not None and r.from_ < 0 and (r.to is None or r.to < 0):
        return r.from_, 0 if r.to is None else r.to, r.unit, "end"
    return None


def load_dataset(
    domain: str,
    name: str | None = None,
    *,
    split: str | None = None,
    streaming: bool = False,
    num_proc: int | None = None,
    cache_dir: str | None = None,
    download_mode: str | None = None,
    sampler: Any = None,
    sample_size: int | None = None,
    sample_splits: str | Sequence[str] = "train",
    **config_kwargs: Any,
):
    """Generate (or reuse from cache) a synthetic dataset and return it like ``datasets.load_dataset``.

    Args:
        domain, name: a synthetic domain (``hf-synthsample configs`` lists them) and config name.
        split: one split, or a slice as ``datasets`` reads it (``"train[:10%]"``, ``"train+test"``);
            streaming takes whole split names only.
        num_proc: processes that generate blocks in parallel (rows do not depend on it).
        sampler: a :mod:`hf_synthsample.sampling` sampler applied to the returned split (or to the
            ``sample_splits`` of the ``DatasetDict``), keeping ``sample_size`` rows of each.
        **config_kwargs: config parameters, e.g. ``num_examples``, ``seed``, ``homogenize``, ``eps``.

    Example:
        >>> ds = load_dataset("calculator", "dcfg", num_examples=200, seed=0, homogenize="length")
        >>> ds["train"].num_rows
        200
        >>> load_dataset("calculator", "dcfg", num_examples=200, seed=0, split="train[:10%]").num_rows
        20
    """
    if num_proc is not None:
        num_proc = check_int("num_proc", num_proc, min=1)
        _warn_forking_after_ray(num_proc)
    if not isinstance(streaming, bool):
        raise TypeError(f"streaming must be a bool, got {streaming!r}")
    if sampler is not None:
        from .sampling.base import BaseSampler

        if not isinstance(sampler, BaseSampler):
            raise TypeError(f"sampler must be a hf_synthsample.sampling sampler (a BaseSampler), got {sampler!r}")
        if streaming:
            raise ValueError("sampler: sampling needs the whole pool; use streaming=False")
        sample_splits = check_str_tuple("sample_splits", sample_splits)
    if sample_size is not None:
        if sampler is None:
            raise ValueError("sample_size: give a sampler too (e.g. sampler=UATSampler(alpha=-1))")
        sample_size = check_int("sample_size", sample_size, min=0)
    if split is not None:
        split = check_split_selection(split)  # a bad spec fails before any work
        names = split_names(split)
        if streaming and names != [split]:
            raise ValueError(f"split: streaming=True reads whole splits ({names[0]!r}), not the slice {split!r} "
                             "(as datasets streaming); use streaming=False, or .skip()/.take() on the stream")
    builder = load_dataset_builder(domain, name, cache_dir=cache_dir, **config_kwargs)
    sizes = getattr(builder.config, "split_sizes", None)
    if sizes is not None:
        available = [k for k, v in sizes().items() if v]
        if split is not None:
            check_split_selection(check_split(split, available), sizes())
        if sampler is not None and split is None:
            for name_ in sample_splits:
                if name_ not in available:
                    raise ValueError(f"sample_splits: {name_!r} is not generated by this config; available splits: {available}")
    if streaming:
        return builder.as_streaming_dataset(split=split)
    builder.download_and_prepare(num_proc=num_proc, download_mode=download_mode)
    ds = builder.as_dataset(split=split)
    if sampler is None:
        return ds
    if split is not None:
        return sampler.sample(ds, sample_size)
    for name_ in sample_splits:
        ds[name_] = sampler.sample(ds[name_], sample_size)
    return ds


def _warn_forking_after_ray(num_proc: int) -> None:
    """A warning when worker processes would be forked from a process running Ray: Ray's next job can
    then wait forever (dev/notes/issue-45-ray.md); generating with Ray, or before ``ray.init``, is safe."""
    import sys

    ray = sys.modules.get("ray")
    if num_proc > 1 and ray is not None and getattr(ray, "is_initialized", lambda: False)():
        from .logging import get_logger

        get_logger(__name__).warning(
            "load_dataset(num_proc=%d) forks worker processes while Ray runs in this process, which can leave Ray's "
            "next job waiting forever; generate with hf_synthsample.engines.ray instead, or call it before ray.init",
            num_proc)
