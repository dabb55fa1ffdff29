"""Dataset builders, one per synthetic domain, and the registry that names them.

Builders are imported lazily: ``BUILDERS`` maps a domain name to ``"module:Class"``. Load a domain
with ``hf_synthsample.load_dataset("scan", "addprim_jump")`` (the packaged builder: ``datasets>=4``
runs no loading scripts), or write it as a Hub folder with ``hf-synthsample generate scan --out DIR``.
"""

from __future__ import annotations

import importlib

__all__ = ["BUILDERS", "list_domains", "get_builder_class"]

#: domain name -> "module:BuilderClass" (imported on first use)
BUILDERS: dict[str, str] = {
    "calculator": "hf_synthsample.builders.calculator:Calculator",
    "scan": "hf_synthsample.builders.scan:Scan",
    "scan_star": "hf_synthsample.builders.scan:ScanStar",
    "schema2qa": "hf_synthsample.builders.schema2qa:Schema2QA",
    "karel": "hf_synthsample.builders.karel:Karel",
}


def list_domains() -> list[str]:
    """Names of the available synthetic domains."""
    return sorted(BUILDERS)


def get_builder_class(domain: str) -> type:
    """The builder class of ``domain``; ``ValueError`` listing the domains if it is unknown."""
    if not isinstance(domain, str) or domain not in BUILDERS:
        raise ValueError(f"domain: unknown domain {domain!r}; available domains: {list_domains()}")
    module, cls = BUILDERS[domain].split(":")
    return getattr(importlib.import_module(module), cls)
