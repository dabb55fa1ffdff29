"""No module of the package reads a name from ``hf_synthsample/__init__.py``: the version comes from
``_version.py``, so no reader is tied into an import loop through the package's ``__init__``."""

from __future__ import annotations

import ast
from pathlib import Path

import hf_synthsample

PACKAGE = Path(hf_synthsample.__file__).parent


def _reads_from_the_package(path: Path, source: str | None = None) -> list[str]:
    """``name`` for each ``from hf_synthsample import name`` (absolute or relative) in ``path``
    (or in ``source``, read as if it stood at ``path``) whose ``name`` is not a submodule."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    here = parts[:-1]  # the package holding the module (an __init__'s own package too)
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8") if source is None else source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = here[: len(here) - node.level + 1] if node.level else ()
        target = (*base, *(node.module.split(".") if node.module else ())) if node.level else tuple(
            (node.module or "").split("."))
        if target != ("hf_synthsample",):
            continue
        for alias in node.names:
            if not ((PACKAGE / alias.name).is_dir() or (PACKAGE / f"{alias.name}.py").exists()):
                out.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {alias.name}")
    return out


def test_no_module_reads_a_name_from_the_package_init():
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) if path.name != "__init__.py" or path.parent != PACKAGE
             for hit in _reads_from_the_package(path)]
    assert not found, f"import these from their own module (__version__: hf_synthsample._version): {found}"


def test_the_check_sees_the_imports_it_forbids():
    probe = "from .. import __version__, structure\nfrom hf_synthsample import load_dataset\nfrom . import base\n"
    assert _reads_from_the_package(PACKAGE / "builders" / "probe.py", probe) == [
        "builders/probe.py:1: __version__", "builders/probe.py:2: load_dataset"]
