"""Lazy public names for a package: one mechanism for ``hf_synthsample`` and its subpackages.

``import hf_synthsample`` must stay fast (no torch, no datasets), so public names are imported on
first access (PEP 562 module ``__getattr__``) and then cached in the package's namespace.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping


def attach(
    package: str, names: Mapping[str, str], extra: tuple[str, ...] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``names`` maps a public name to the module
    defining it (absolute, or relative to ``package`` with a leading dot); ``extra`` names
    defined in the package itself are listed by ``__dir__`` too.

    Example:
        >>> getattr_, dir_ = attach("hf_synthsample", {"kl_to_uniform": ".sampling.report"})
        >>> getattr_("kl_to_uniform").__name__, dir_()
        ('kl_to_uniform', ['kl_to_uniform'])
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted([*names, *extra])

    return __getattr__, __dir__
