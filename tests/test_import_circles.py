"""No import circles in ``src/hf_synthsample``: the modules' imports, read with ``ast`` (those at module level
and those inside functions alike), form a graph without cycles, so every room can be read, tested and
loaded below the rooms that use it.

How an import becomes an edge:

- ``import a.b``, ``from a import b`` (``b`` a submodule) and ``from .b import x`` are edges to ``a.b``;
  ``from a import x`` (``x`` not a submodule) is an edge to ``a`` (its ``__init__``).
- Importing ``a.b`` from outside package ``a`` runs ``a/__init__.py`` first, so it is an edge to ``a`` too; a
  module inside ``a`` is already loading ``a``, so no edge to its own packages is drawn.
- A package ``__init__``'s edges are its eager imports; its lazy ``_LAZY`` map (``_lazy.attach``) imports on
  first attribute access and is not an edge.
- An ``if TYPE_CHECKING:`` import never runs (an annotation's name, or an ``__init__`` mirroring its lazy
  map for type checkers), so it is no edge of a circle; :func:`test_lower_rooms_do_not_import_higher_ones`
  reads it too, since a room that names a higher room's type still depends on it.
- Strings handed to ``importlib.import_module`` (registries, lazy maps) are not read.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterable, Mapping

import hf_synthsample

PACKAGE = Path(hf_synthsample.__file__).parent

# Circles not mended yet: each an SCC's sorted module names (without the package prefix); any other fails.
KNOWN: list[list[str]] = [
]


def module_names(root: Path) -> dict[str, tuple[Path, bool]]:
    """``dotted name -> (path, is a package __init__)`` for every ``.py`` under package directory ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        is_init = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_init else parts)] = (path, is_init)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, skip_type_checking: bool) -> Iterable[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif skip_type_checking and isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), skip_type_checking)
        else:
            yield from _imports(node, skip_type_checking)


def module_edges(name: str, is_init: bool, source: str, known: Mapping[str, object],
                 type_checking: bool = False) -> dict[str, int]:
    """The modules of ``known`` that module ``name`` imports, each with the line of its first import
    (``type_checking``: ``if TYPE_CHECKING:`` imports too)."""
    here = name if is_init else name.rpartition(".")[0]
    out: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        while target and target not in known:  # ``import a.b.Class``-like spellings: the longest module prefix
            target = target.rpartition(".")[0]
        if not target or target == name:
            return
        out.setdefault(target, line)
        package = target.rpartition(".")[0]
        while package:
            if package in known and not (name == package or name.startswith(package + ".")):
                out.setdefault(package, line)
            package = package.rpartition(".")[0]

    for node in _imports(ast.parse(source), skip_type_checking=not type_checking):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
            continue
        if node.level:
            base = here.split(".")[: len(here.split(".")) - node.level + 1]
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
        else:
            module = node.module or ""
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            add(sub if sub in known else module, node.lineno)
    return out


def import_graph(sources: Mapping[str, tuple[str, bool]], type_checking: bool = False) -> dict[str, dict[str, int]]:
    """``module -> {imported module: line}`` for ``sources``: ``dotted name -> (source, is a package __init__)``."""
    return {name: module_edges(name, is_init, source, sources, type_checking)
            for name, (source, is_init) in sources.items()}


def circles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def describe(component: list[str], graph: Mapping[str, Mapping[str, int]]) -> str:
    """One circle's edges, ``a:line -> b``, for the failure message."""
    return "\n".join(f"  {a}:{line} -> {b}" for a in component for b, line in sorted(graph[a].items())
                     if b in component)


def _package_graph(type_checking: bool = False) -> dict[str, dict[str, int]]:
    return import_graph({name: (path.read_text(encoding="utf-8"), is_init)
                         for name, (path, is_init) in module_names(PACKAGE).items()}, type_checking)


def _short(component: list[str]) -> list[str]:
    return [name.removeprefix("hf_synthsample.") for name in component]


def test_no_import_circles():
    graph = _package_graph(type_checking=True)  # type-only imports count: the arrow is still there
    new = [component for component in circles(graph) if _short(component) not in KNOWN]
    assert not new, "import circles (move the shared code down, or pass what is needed in):\n" + "\n\n".join(
        describe(component, graph) for component in new)


#: rooms and the rooms above them that they must not import (``if TYPE_CHECKING:`` imports included)
LAYERS = {
    "hf_synthsample.hub": ("hf_synthsample.cartography",),
    "hf_synthsample.splits.mcd": ("hf_synthsample.splits.splitter", "hf_synthsample.splits.sweep"),
    "hf_synthsample.splits.sweep": ("hf_synthsample.splits.splitter",),
    "hf_synthsample.structure": ("hf_synthsample.splits", "hf_synthsample.curve", "hf_synthsample.cartography"),
    "hf_synthsample.languages": ("hf_synthsample.splits", "hf_synthsample.curve", "hf_synthsample.cartography"),
}


def _within(name: str, room: str) -> bool:
    return name == room or name.startswith(room + ".")


def test_lower_rooms_do_not_import_higher_ones():
    graph = _package_graph(type_checking=True)
    found = [f"{name}:{line} -> {target}" for room, above in LAYERS.items() for name in sorted(graph)
             if _within(name, room) for target, line in sorted(graph[name].items())
             if any(_within(target, higher) for higher in above)]
    assert found == []


def test_known_circles_are_still_there():
    """A mended circle leaves ``KNOWN``, so that it cannot come back unnoticed."""
    found = [_short(component) for component in circles(_package_graph(type_checking=True))]
    assert [known for known in KNOWN if known not in found] == []


def test_the_check_finds_a_circle():
    graph = import_graph({
        "pkg": ("", True),
        "pkg.a": ("def f():\n    from .b import g\n", False),  # in-function, relative
        "pkg.b": ("from pkg import a\n", False),  # ``a`` is a submodule: an edge to pkg.a
        "pkg.c": ("import pkg.a\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n", False),
        "pkg.d": ("from .c import x\n", False),  # c's TYPE_CHECKING import never runs: no circle
        "pkg.sub": ("if TYPE_CHECKING:\n    from .e import y\n", True),  # an __init__'s TYPE_CHECKING: no edge
        "pkg.sub.e": ("from ..sub import y\n", False),  # its own package: no parent edge, the name edge only
        "pkg.f": ("from pkg.sub.e import z\n", False),  # edges to pkg.sub.e and pkg.sub (its __init__ runs)
    })
    assert circles(graph) == [["pkg.a", "pkg.b"]]
    assert graph["pkg.c"] == {"pkg.a": 1}
    assert graph["pkg.f"] == {"pkg.sub.e": 1, "pkg.sub": 1}
    assert graph["pkg.sub"] == {}
    assert "pkg.a:2 -> pkg.b" in describe(["pkg.a", "pkg.b"], graph)
    assert circles(import_graph({"pkg.c": ("if TYPE_CHECKING:\n    from . import d\n", False),
                                 "pkg.d": ("from .c import x\n", False)}, type_checking=True)) == [["pkg.c", "pkg.d"]]


def test_no_room_imports_another_rooms_private_names():
    """Issue 47, item 6: a module of one room (package) never imports a private name of another."""
    import re
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "hf_synthsample"
    found = []
    for path in src.rglob("*.py"):
        text = path.read_text()
        for m in re.finditer(r"^\s*from \.\.([\w.]*) import\s+(\([^)]*\)|[^\n]+)", text, re.M):
            names = re.findall(r"\b(\w+)\b(?:\s+as\s+\w+)?", m.group(2).replace("(", " ").replace(")", " "))
            private = [n for n in names if n.startswith("_") and not n.startswith("__") and n != "as"]
            if private:
                found.append(f"{path.relative_to(src)}: from ..{m.group(1)} import {', '.join(private)}")
    assert not found, found
