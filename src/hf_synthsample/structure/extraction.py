"""What a program is made of: its abstract template, atoms and compounds, one at a time or as
columns of a dataset (:class:`StructureFunction`)."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..validation import check_choice, check_int
from .language import DEFAULT_LANGUAGE, Language, get_language, parse
from .tree import Node

__all__ = ["abstract_template", "atoms", "compounds", "structure", "StructureFunction"]


def abstract_template(program: str | Node, language: str | Language = DEFAULT_LANGUAGE) -> str:
    """The abstract template of ``program`` (Oren et al. 2021, Table 2).

    Example:
        >>> abstract_template('now => aggregate count of ( @org.schema.Person.Person ) => notify')
        'now => func func of ( @table ) => notify'
    """
    return get_language(language).template(parse(program, language))


def atoms(program: str | Node, language: str | Language = DEFAULT_LANGUAGE) -> list[str]:
    """Node labels of the program tree, pre-order, values abstracted to ``entity``.

    Example:
        >>> atoms("(a (b 'x) d)", language="sexpr")
        ['a', 'b', 'entity', 'd']
    """
    return [n.atom() for n in parse(program, language).iter()]


def _occurrences(tree: Node, H: int, parents: list | None = None) -> list:
    """Compound occurrences, bottom-up: ``s``, or with ``parents`` (filled) ``(node_id, h, s)``."""
    out: list = []
    track = parents is not None

    def visit(node: Node, parent: int) -> tuple[list[str], list[bool], int]:
        label = "entity" if node.kind == "entity" else node.label
        if not node.children:
            return [label] * (H + 1), [True] * (H + 1), 0
        me = -1
        if track:
            me = len(parents)
            parents.append(parent)
        kids = [visit(c, me) for c in node.children]
        height = 1 + max(k[2] for k in kids)
        ser, term = [label], [False]
        for h in range(1, H + 1):
            if h > height:
                ser.append(ser[-1])
                term.append(term[-1])
                continue
            s = "(" + label + " " + " ".join(k[0][h - 1] for k in kids) + ")"
            t = any(k[1][h - 1] for k in kids)
            ser.append(s)
            term.append(t)
            if t:
                out.append((me, h, s) if track else s)
        return ser, term, height

    visit(tree, -1)
    return out


def _atoms_compounds2(node: Node, out: list, atoms: list) -> tuple[str, str | None, bool]:
    # max_height=2 fast path of _occurrences (the default, and the hot path of Dataset.map):
    # returns (atom, height-1 serialisation or None for a leaf, has a leaf child)
    label = "entity" if node.kind == "entity" else node.label
    atoms.append(label)
    children = node.children
    if not children:
        return label, None, False
    parts1 = []
    parts2 = []
    leaf_child = deep = grand_leaf = False
    for c in children:
        a, s1, c_leaf_child = _atoms_compounds2(c, out, atoms)
        parts1.append(a)
        if s1 is None:
            parts2.append(a)
            leaf_child = True
        else:
            parts2.append(s1)
            deep = True
            grand_leaf = grand_leaf or c_leaf_child
    s1 = "(" + label + " " + " ".join(parts1) + ")"
    if leaf_child:
        out.append(s1)
    if deep and (leaf_child or grand_leaf):
        out.append("(" + label + " " + " ".join(parts2) + ")")
    return label, s1, leaf_child


def _atoms_and_compounds(tree: Node, max_height: int) -> tuple[list[str], list[str]]:
    out: list[str] = []
    if max_height == 2:
        atoms_: list[str] = []
        _atoms_compounds2(tree, out, atoms_)
        return atoms_, out
    return [n.atom() for n in tree.iter()], _occurrences(tree, max_height)


def compounds(program: str | Node, language: str | Language = DEFAULT_LANGUAGE, max_height: int = 2) -> list[str]:
    """Compounds, bottom-up: each internal node with its descendants down to depth 1..``max_height``
    that hold a terminal (leaf) of the program, values abstracted to ``entity``.

    Example:
        >>> compounds("(a (b c) (d (e f)))", language="sexpr", max_height=2)
        ['(b c)', '(e f)', '(d (e f))', '(a (b c) (d e))']
    """
    max_height = check_int("max_height", max_height, min=1)
    lang = get_language(language)
    return _atoms_and_compounds(parse(program, lang), lang.height(max_height))[1]


def structure(program: str | Node, language: str | Language = DEFAULT_LANGUAGE, max_height: int = 2) -> tuple[str, list[str], list[str]]:
    """``(template, atoms, compounds)`` from one parse."""
    lang = get_language(language)
    tree = parse(program, lang)
    a, c = _atoms_and_compounds(tree, lang.height(max_height))
    return lang.template(tree), a, c


class StructureFunction:
    """A ``Dataset.map(batched=True)`` function adding ``template``, ``atoms`` and ``compounds`` columns.

    It holds the :class:`Language` object (``language`` given by name is looked up once, here), so
    a language registered in this session, or a ``grammar_language`` object, works in worker
    processes (``num_proc``, spawned or forked) without being registered there.

    Example:
        >>> import datasets
        >>> ds = datasets.Dataset.from_dict({"program": ["(a (b c) d)", "(a (b 'x) e)"]})
        >>> ds = ds.map(StructureFunction(language="sexpr"), batched=True)
        >>> list(ds["template"])
        ['(a (b c) d)', '(a (b entity) e)']
    """

    def __init__(
        self,
        column: str = "program",
        language: str | Language = DEFAULT_LANGUAGE,
        max_height: int = 2,
        outputs: Sequence[str] = ("template", "atoms", "compounds"),
    ):
        if not isinstance(column, str):
            raise TypeError(f"column must be a str, got {column!r}")
        lang = get_language(language)
        self.column = column
        # the object, not its name: pickled into worker processes (num_proc, Ray), it needs no registry there
        self.language = lang
        self.max_height = lang.height(check_int("max_height", max_height, min=1))
        for o in outputs:
            check_choice("outputs", o, ("template", "atoms", "compounds"))
        self.outputs = tuple(outputs)

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        if self.column not in batch:
            raise ValueError(f"column: no column named {self.column!r} in the batch; available columns: {list(batch)}")
        lang = self.language
        out: dict[str, list] = {o: [] for o in self.outputs}
        want_t, want_a, want_c = ("template" in out), ("atoms" in out), ("compounds" in out)
        for program in batch[self.column]:
            if program is None:  # a null must not become a template or an empty structure
                raise ValueError(f"column: column {self.column!r} holds a null program; fill those rows or leave "
                                 "them out first (dataset.filter(lambda r: r[column] is not None))")
            if not isinstance(program, str):
                raise TypeError(f"column: column {self.column!r} holds {type(program).__name__} values; it must hold "
                                "programs as str")
            tree = lang.parse(program)
            if want_t:
                out["template"].append(lang.template(tree))
            if want_a or want_c:
                a, c = _atoms_and_compounds(tree, self.max_height)
                if want_a:
                    out["atoms"].append(a)
                if want_c:
                    out["compounds"].append(c)
        return out
