"""The salient-variable columns of each domain, recomputed from a row's content.

``salient_columns(domain)`` is a ``Dataset.map(batched=True)`` function using the generators' own
feature functions, so a pool read back from Parquet, from elsewhere, or on a cluster gets the same
values the generator wrote.

Example:
    >>> fn = salient_columns("calculator")
    >>> fn({"expression": ["(1+2)*3"]})["num_parens"]
    [1]
"""

from __future__ import annotations

from typing import Callable, Mapping

__all__ = ["salient_columns", "SALIENT_DOMAINS"]


def _calculator(batch: Mapping) -> dict:
    from .domains.calculator import SALIENT_VARIABLES, salient_features

    rows = [salient_features(e) for e in batch["expression"]]
    return {v: [r[v] for r in rows] for v in SALIENT_VARIABLES}


def _scan(batch: Mapping) -> dict:
    from .domains.scan_augment import scan_complexity_columns

    return scan_complexity_columns(batch)


def _schema2qa(batch: Mapping) -> dict:
    from .domains.thingtalk import COMPARISON_OPS

    tokens = [p.split() for p in batch["program"]]
    return {"num_clauses": [sum(1 for t in ts if t in COMPARISON_OPS) for ts in tokens],
            "program_length": [len(ts) for ts in tokens]}


class _Karel:
    """Program variables from ``program_tokens``, input variables from the first ``num_shown`` input grids."""

    def __init__(self, num_shown: int = 5):
        self.num_shown = num_shown

    def __call__(self, batch: Mapping) -> dict:
        from .domains.karel import dsl
        from .domains.karel import features as F
        from .domains.karel.world import World

        out: dict[str, list] = {v: [] for v in F.SALIENT_VARIABLES}
        for tokens, examples in zip(batch["program_tokens"], batch["examples"]):
            row = F.program_features(dsl.parse(list(tokens)))
            row.update(F.input_features([F.world_stats(World.from_json(e["inpgrid_json"]))
                                         for e in list(examples)[: self.num_shown]]))
            for v in out:
                out[v].append(row[v])
        return out


#: domain -> the columns its batched salient function reads
SALIENT_DOMAINS: dict[str, tuple[str, ...]] = {
    "calculator": ("expression",),
    "scan": ("commands", "actions"),
    "scan_star": ("commands", "actions"),
    "schema2qa": ("program",),
    "karel": ("program_tokens", "examples"),
}


def salient_columns(domain: str, **kwargs) -> Callable[[Mapping], dict]:
    """The batched function recomputing ``domain``'s salient columns (``kwargs``: Karel's ``num_shown``)."""
    from .validation import check_choice, check_int

    check_choice("domain", domain, list(SALIENT_DOMAINS))
    if domain == "karel":
        return _Karel(check_int("num_shown", kwargs.pop("num_shown", 5), min=1))
    if kwargs:
        raise ValueError(f"unknown parameter {next(iter(kwargs))!r} for {domain}; only karel takes num_shown")
    return {"calculator": _calculator, "scan": _scan, "scan_star": _scan, "schema2qa": _schema2qa}[domain]
