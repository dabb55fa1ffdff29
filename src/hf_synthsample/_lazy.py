"""Lazy public names for a package: one mechanism for ``hf_synthsample`` and its subpackages.

``import hf_synthsample`` must stay fast (no torch, no datasets), so public names are imported on
first access (PEP 562 module ``__getattr__``) and then cached in the package's namespace.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Iterable, Mapping


def attach(
    package: str, names: Mapping[str, Iterable[str] | str], extra: tuple[str, ...] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``names`` maps a module (absolute, or
    relative to ``package`` with a leading dot) to the public names it defines (the spelling of
    ``lazy_loader``'s ``submod_attrs``; a public name mapped to its module is read too); ``extra``
    names defined in the package itself are listed by ``__dir__`` too.

    Example:
        >>> getattr_, dir_ = attach("hf_synthsample", {".sampling.report": ("kl_to_uniform",)})
        >>> getattr_("kl_to_uniform").__name__, dir_()
        ('kl_to_uniform', ['kl_to_uniform'])
    """
    where: dict[str, str] = {}
    for key, value in names.items():
        where.update({key: value} if isinstance(value, str) else dict.fromkeys(value, key))

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted([*where, *extra])

    return __getattr__, __dir__
