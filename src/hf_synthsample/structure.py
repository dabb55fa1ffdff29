"""Program structure, written once for every language: trees, abstract templates, atoms, compounds.

A program (ThingTalk, a SCAN/COGS logical form, a Karel program, a calculator expression...) is
parsed by a per-language *adapter* into a small language-agnostic :class:`Node` tree. Each node has
a ``label`` (the atom), its ``children`` and a ``kind`` saying what the abstraction of Oren et al.
(2021, Table 2) does with it: ``"entity"`` (values), ``"table"``, ``"property"``, ``"type"``,
``"op"``, ``"func"``, ``"func_mod"``, or ``""`` (kept as it is). From the tree:

* :func:`abstract_template` prints the program with every abstractable node replaced by its
  category token (``entity``, ``@table``, ``property``, ``type``, ``op``, ``func``, ``func_mod``):
  two programs share a template exactly when they differ only in those nodes.
* :func:`atoms` lists the node labels (values abstracted to ``entity``).
* :func:`compounds` lists the subtrees of height 1..``max_height`` (each node with its children
  down to that depth, Keysers et al. 2020) that contain at least one terminal of the program,
  values abstracted; :func:`example_compound_weights` gives Keysers et al.'s weight of each
  compound in each example, :func:`compound_weights` a pool-wide variant (one weight per compound).
* :func:`frequencies` counts each distinct atom / compound once per example (Keysers et al.
  2020): the distributions behind entropies, divergences and the CMaxEnt objective.
* :func:`entropy`, :func:`chernoff_coefficient`, :func:`atom_divergence` (alpha 0.5) and
  :func:`compound_divergence` (alpha 0.1) compare datasets; :func:`template_coverage` and
  :func:`plot_template_frequencies` are the diagnostics of a pool.

Adapters are registered by name with :func:`register_language`; ``"sexpr"`` (``(label child
child ...)`` s-expressions), ``"thingtalk"`` (ThingTalk 1.x as in Schema2QA, registered by
:mod:`hf_synthsample.domains.thingtalk`) and ``"scan"``, ``"scan_actions"``, ``"cogs"``,
``"karel"`` and ``"calculator"`` (registered by :mod:`hf_synthsample.languages`) are built in.
The adapter modules import this one and register themselves when imported; this module imports
them by name (:data:`ADAPTER_MODULES`) on the first lookup, so the dependency goes one way.

Example:
    >>> from hf_synthsample.structure import abstract_template, compounds
    >>> abstract_template('now => ( @org.schema.Hotel.Hotel ) filter param:petsAllowed:Boolean == true => notify')
    'now => ( @table ) filter param:property:type op entity => notify'
    >>> compounds("(a (b c) d)", language="sexpr", max_height=1)
    ['(b c)', '(a b d)']
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .atomic import save_figure_atomic
from .validation import MAX_NESTING, check_choice, check_float, check_int, nesting_message

__all__ = [
    "KINDS",
    "ABSTRACT_TOKENS",
    "Node",
    "Language",
    "register_language",
    "languages",
    "get_language",
    "parse",
    "abstract_template",
    "atoms",
    "compounds",
    "structure",
    "StructureFunction",
    "COMPOUND_WEIGHTINGS",
    "example_compound_weights",
    "compound_weights",
    "frequencies",
    "entropy",
    "chernoff_coefficient",
    "divergence",
    "atom_divergence",
    "compound_divergence",
    "template_counts",
    "template_coverage",
    "plot_template_frequencies",
    "diagnostics",
    "structure_diagnostics",
]

#: node kinds the abstraction replaces, and the token each becomes (Oren et al. 2021, Table 2)
ABSTRACT_TOKENS: dict[str, str] = {
    "entity": "entity",
    "table": "@table",
    "property": "property",
    "type": "type",
    "op": "op",
    "func": "func",
    "func_mod": "func_mod",
}
KINDS = ("", *ABSTRACT_TOKENS)


class Node:
    """One node of a program tree.

    ``label`` is the atom, ``kind`` one of :data:`KINDS` (``""``: never abstracted), and ``rule``
    a tag the language's printer dispatches on (``""`` when the label is enough).

    Example:
        >>> Node("and", (Node("a"), Node("b")), kind="op").is_leaf
        False
    """

    __slots__ = ("label", "children", "kind", "rule")

    def __init__(self, label: str, children: tuple = (), kind: str = "", rule: str = ""):
        self.label = label
        self.children = children
        self.kind = kind
        self.rule = rule

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def atom(self) -> str:
        """The label as an atom: values are abstracted to ``entity``."""
        return "entity" if self.kind == "entity" else self.label

    def abstract_label(self) -> str:
        """The label as the abstract template shows it."""
        return ABSTRACT_TOKENS.get(self.kind, self.label) if self.kind else self.label

    def height(self) -> int:
        """Nodes on the longest root-to-leaf path (a leaf: 1); iterative, for trees of any depth."""
        best, stack = 0, [(self, 1)]
        while stack:
            node, d = stack.pop()
            if d > best:
                best = d
            for c in node.children:
                stack.append((c, d + 1))
        return best

    def iter(self):
        """All nodes, pre-order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def to_sexpr(self, abstract: bool = False) -> str:
        """``(label child ...)``; with ``abstract`` the template tokens replace abstracted labels."""
        label = self.abstract_label() if abstract else self.atom()
        if not self.children:
            return label
        return "(" + label + " " + " ".join(c.to_sexpr(abstract) for c in self.children) + ")"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Node)
            and self.label == other.label
            and self.kind == other.kind
            and self.rule == other.rule
            and self.children == other.children
        )

    def __hash__(self) -> int:
        return hash((self.label, self.kind, self.rule, self.children))

    def __repr__(self) -> str:
        return f"Node({self.to_sexpr()})"


@dataclass(frozen=True)
class Language:
    """A language adapter: ``parse(text) -> Node`` and ``template(tree) -> str``."""

    name: str
    parse: Callable[[str], Node]
    template: Callable[[Node], str]


_LANGUAGES: dict[str, Language] = {}


def register_language(name: str, parse: Callable[[str], Node], template: Callable[[Node], str] | None = None,
                      *, default: bool = False) -> None:
    """Register a language adapter (``template`` defaults to the abstract s-expression of the tree).

    ``default=True`` registers only if the name is free: the built-in adapters register so when
    their module is imported, and an adapter a user registered under that name first stays.

    Example:
        >>> register_language("words", lambda s: Node("seq", tuple(Node(w) for w in s.split())))
        >>> atoms("jump twice", language="words")
        ['seq', 'jump', 'twice']
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    if not callable(parse):
        raise TypeError(f"parse must be callable, got {parse!r}")
    if template is not None and not callable(template):
        raise TypeError(f"template must be callable or None, got {template!r}")
    if default and name in _LANGUAGES:
        return
    _LANGUAGES[name] = Language(name, _height_checked(parse), template or (lambda tree: tree.to_sexpr(abstract=True)))


def _height_checked(parse: Callable[[str], Node]) -> Callable[[str], Node]:
    """``parse`` whose trees are at most :data:`~hf_synthsample.validation.MAX_NESTING` high.

    The walkers of this module (templates, atoms, compounds, printing, hashing) recurse over the
    tree; a deeper tree (``1+1+...+1`` of 200 terms is 200 levels of calculator tree) is a
    ``ValueError`` here instead of a ``RecursionError`` there. A parser that recurses itself must
    bound its own nesting (the built-in ones do).
    """

    def parse_checked(text: str) -> Node:
        return _check_height(parse(text))

    parse_checked.__wrapped__ = parse  # type: ignore[attr-defined]
    return parse_checked


def _check_height(tree: Node) -> Node:
    if not isinstance(tree, Node):
        raise TypeError(f"program: a language's parser must return a Node, got {type(tree).__name__}")
    h = tree.height()
    if h > MAX_NESTING:
        raise ValueError(f"program: the tree is {nesting_message(h)}")
    return tree


def languages() -> list[str]:
    """Names of the registered languages."""
    _builtin()
    return sorted(_LANGUAGES)


def get_language(language: str) -> Language:
    """The adapter of ``language``; ``ValueError`` listing the registered ones if unknown."""
    _builtin()
    if language not in _LANGUAGES:
        raise ValueError(f"language: unknown language {language!r}; registered languages: {sorted(_LANGUAGES)}")
    return _LANGUAGES[language]


#: modules whose import registers built-in adapters (``register_language(..., default=True)``):
#: imported by name on the first lookup, so this module imports none of them (they import it)
ADAPTER_MODULES = ("hf_synthsample.domains.thingtalk", "hf_synthsample.languages")
_loaded = False


def _builtin() -> None:
    global _loaded
    if _loaded:
        return
    import importlib

    register_language("sexpr", parse_sexpr, default=True)
    for module in ADAPTER_MODULES:
        importlib.import_module(module)
    _loaded = True


def parse_sexpr(text: str) -> Node:
    """Parse ``(label child ...)``; a bare token is a leaf; ``'...`` or digits are values.

    Example:
        >>> parse_sexpr("(a (b c) d)").children[0].label
        'b'
    """
    if not isinstance(text, str):
        raise TypeError(f"program must be a str, got {type(text).__name__}")
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    if not tokens:
        raise ValueError("program: empty s-expression")
    pos = 0

    def leaf(tok: str) -> Node:
        kind = "entity" if tok[0] == "'" or tok.lstrip("-").isdigit() else ""
        return Node(tok, (), kind)

    def node(depth: int = 1) -> Node:
        nonlocal pos
        if depth > MAX_NESTING:
            raise ValueError(f"program: s-expression {nesting_message()} at token {pos}")
        if pos >= len(tokens):
            raise ValueError("program: unexpected end of s-expression")
        tok = tokens[pos]
        pos += 1
        if tok == ")":
            raise ValueError(f"program: unexpected ')' at token {pos - 1}")
        if tok != "(":
            return leaf(tok)
        if pos >= len(tokens) or tokens[pos] in "()":
            raise ValueError(f"program: expected a label after '(' at token {pos - 1}")
        label = tokens[pos]
        pos += 1
        children = []
        while pos < len(tokens) and tokens[pos] != ")":
            children.append(node(depth + 1))
        if pos >= len(tokens):
            raise ValueError("program: missing ')'")
        pos += 1
        return Node(label, tuple(children))

    tree = node()
    if pos != len(tokens):
        raise ValueError(f"program: unexpected token {tokens[pos]!r} at token {pos} after the end of the tree")
    return tree


def parse(program: str | Node, language: str = "thingtalk") -> Node:
    """The tree of ``program`` (a tree is returned as it is).

    A program or tree nested deeper than :data:`~hf_synthsample.validation.MAX_NESTING` levels is
    a ``ValueError`` naming the depth (the walkers of this module recurse over the tree).
    """
    if isinstance(program, Node):
        return _check_height(program)
    if not isinstance(program, str):
        raise TypeError(f"program must be a str or a Node, got {type(program).__name__}")
    return get_language(language).parse(program)


def abstract_template(program: str | Node, language: str = "thingtalk") -> str:
    """The abstract template of ``program`` (Oren et al. 2021, Table 2).

    Example:
        >>> abstract_template('now => aggregate count of ( @org.schema.Person.Person ) => notify')
        'now => func func of ( @table ) => notify'
    """
    lang = get_language(language)
    return lang.template(parse(program, language))


def atoms(program: str | Node, language: str = "thingtalk") -> list[str]:
    """Node labels of the program tree, pre-order, values abstracted to ``entity``.

    Example:
        >>> atoms("(a (b 'x) d)", language="sexpr")
        ['a', 'b', 'entity', 'd']
    """
    return [n.atom() for n in parse(program, language).iter()]


def _occurrences(tree: Node, H: int, parents: list | None = None) -> list:
    """Compound occurrences, bottom-up: ``s`` or, with ``parents``, ``(node_id, h, s)``.

    Node ids are pre-order numbers of internal nodes; ``parents[i]`` is the parent id of ``i``.
    Height ``h`` of a node is kept only when its subtree is at least that high (no duplicates)
    and its truncation reaches a terminal of the program.
    """
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


def _compounds(tree: Node, max_height: int) -> list[str]:
    if max_height == 2:
        out: list[str] = []
        _atoms_compounds2(tree, out, [])
        return out
    return _occurrences(tree, max_height)


def _atoms_and_compounds(tree: Node, max_height: int) -> tuple[list[str], list[str]]:
    out: list[str] = []
    if max_height == 2:
        atoms_: list[str] = []
        _atoms_compounds2(tree, out, atoms_)
        return atoms_, out
    return [n.atom() for n in tree.iter()], _occurrences(tree, max_height)


def compounds(program: str | Node, language: str = "thingtalk", max_height: int = 2) -> list[str]:
    """Compounds: each internal node with its descendants down to depth 1..``max_height``.

    A compound is kept when it contains at least one terminal (leaf) of the program; values are
    abstracted to ``entity``. Returned as s-expressions, bottom-up.

    Example:
        >>> compounds("(a (b c) (d (e f)))", language="sexpr", max_height=2)
        ['(b c)', '(e f)', '(d (e f))', '(a (b c) (d e))']
    """
    max_height = check_int("max_height", max_height, min=1)
    return _compounds(parse(program, language), max_height)


def structure(program: str | Node, language: str = "thingtalk", max_height: int = 2) -> tuple[str, list[str], list[str]]:
    """``(template, atoms, compounds)`` from one parse."""
    lang = get_language(language)
    tree = parse(program, language)
    a, c = _atoms_and_compounds(tree, max_height)
    return lang.template(tree), a, c


class StructureFunction:
    """A ``Dataset.map(batched=True)`` function adding ``template``, ``atoms`` and ``compounds`` columns.

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
        language: str = "thingtalk",
        max_height: int = 2,
        outputs: Sequence[str] = ("template", "atoms", "compounds"),
    ):
        if not isinstance(column, str):
            raise TypeError(f"column must be a str, got {column!r}")
        get_language(language)
        self.column = column
        self.language = language
        self.max_height = check_int("max_height", max_height, min=1)
        for o in outputs:
            check_choice("outputs", o, ("template", "atoms", "compounds"))
        self.outputs = tuple(outputs)

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        if self.column not in batch:
            raise ValueError(f"column: no column named {self.column!r} in the batch; available columns: {list(batch)}")
        lang = get_language(self.language)
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


# ---------------------------------------------------------------------- distributions


#: the accepted ``compound_weights`` modes of the splits and diagnostics: Keysers et al.'s weight
#: of each compound *in each example* (the default), or one weight per compound over the pool
COMPOUND_WEIGHTINGS = ("example", "pool")


def _occurrence_supers(programs: list, language: str, max_height: int, counts: Sequence[int] | None,
                       also: Sequence = ()):
    """Per program, each compound occurrence as ``(compound, distinct super-compounds holding it)``,
    and ``P(G'|G)`` over the pool as a function of ``(G, G')``.

    A super-compound of an occurrence (node ``n``, height ``h``) is a compound (node ``a``, height
    ``h'``) of the same program with ``a`` = ``n`` or an ancestor at distance ``k`` and
    ``h' >= h + k``, ``(a, h') != (n, h)``. ``P(G'|G)`` is the share of the pool's occurrences of
    ``G`` that lie inside an occurrence of ``G'`` (each program counted ``counts[i]`` times);
    the programs ``also`` get their occurrences listed (after ``programs``') but count nowhere.
    """
    max_height = check_int("max_height", max_height, min=1)
    mults = [1] * len(programs)
    if counts is not None:
        mults = [check_int("counts", c, min=1) for c in counts]
        if len(mults) != len(programs):
            raise ValueError(f"counts: {len(mults)} counts for {len(programs)} programs; give one per program")
    seen: Counter = Counter()
    inside: Counter = Counter()
    per_program = []
    for program, mult in zip([*programs, *also], [*mults, *[0] * len(also)]):
        parents: list[int] = []
        occ = _occurrences(parse(program, language), max_height, parents)
        by_node = {(n, h): s for n, h, s in occ}
        rows = []
        for n, h, s in occ:
            keys = [(n, hh) for hh in range(h + 1, max_height + 1)]
            a, k = parents[n], 1
            while a >= 0 and h + k <= max_height:
                keys += [(a, hh) for hh in range(h + k, max_height + 1)]
                a, k = parents[a], k + 1
            sups = tuple(dict.fromkeys(by_node[key] for key in keys if key in by_node))  # distinct; a tuple is small
            rows.append((s, sups))
            seen[s] += mult
            for sup in sups:
                inside[s, sup] += mult
        per_program.append(rows)
    return per_program, lambda g, sup: inside[g, sup] / seen[g] if seen[g] else 0.0


def _example_weights(rows: list, p: Callable) -> dict[str, float]:
    w: dict[str, float] = {}
    for s, sups in rows:
        v = 1.0 - max((p(s, sup) for sup in sups), default=0.0)
        if v > w.get(s, -1.0):
            w[s] = v
    return w


def example_compound_weights(
    programs: Iterable[str | Node], language: str = "thingtalk", max_height: int = 2, counts: Sequence[int] | None = None
) -> list[dict[str, float]]:
    """Keysers et al. (2020) compound weights: one mapping compound -> weight **per example**.

    ``w(G, e) = max over the occurrences g of G in e of (1 - max over the super-compounds G' of g
    in e of P(G'|G))``, with ``P(G'|G)`` the share of the pool's occurrences of ``G`` that lie inside
    an occurrence of ``G'``. A compound's frequency in a set is the sum of its weights over the set's
    examples (give these mappings to :func:`frequencies` / :func:`compound_divergence`): a compound
    that in this example sits inside a super-compound it nearly always comes with counts little
    *here*, whatever it does elsewhere. ``counts`` gives each program a multiplicity (a pool given
    as its distinct programs and how often each occurs). :func:`compound_weights` is the pool-wide
    variant.

    Example:
        >>> w = example_compound_weights(["(a (b c))", "(x (b c))", "(b c)"], language="sexpr")
        >>> w[0]["(b c)"], w[0]["(a (b c))"], w[2]["(b c)"]  # (b c) is inside (a (b c)) 1 of its 3 times
        (0.6666666666666667, 1.0, 1.0)
    """
    per_program, p = _occurrence_supers(list(programs), language, max_height, counts)
    return [_example_weights(rows, p) for rows in per_program]


def compound_weights(
    programs: Iterable[str | Node], language: str = "thingtalk", max_height: int = 2, counts: Sequence[int] | None = None
) -> dict[str, float]:
    """Pool-wide compound weights: one weight per compound, the largest of its per-example weights
    (:func:`example_compound_weights`, Keysers et al. 2020) over the pool.

    This is *not* Keysers et al.'s weighting, which gives a compound its weight in each example;
    here an example where a compound stands alone lends that weight to every example holding it.
    A compound that never occurs inside a larger one has weight 1. ``counts`` gives each program
    a multiplicity.

    Example:
        >>> w = compound_weights(["(a (b c))", "(a (b c))"], language="sexpr", max_height=2)
        >>> w["(b c)"], w["(a (b c))"]
        (0.0, 1.0)
    """
    per_program, p = _occurrence_supers(list(programs), language, max_height, counts)
    weights: dict[str, float] = {}
    for rows in per_program:
        for s, v in _example_weights(rows, p).items():
            if v > weights.get(s, -1.0):
                weights[s] = v
    return weights


def frequencies(items: Iterable[Iterable[str] | Mapping[str, float]] | Iterable[str],
                weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Weighted counts of items over a dataset (a list of per-example lists, or a flat list).

    An example contributes each distinct atom / compound **once**, however often it occurs in the
    program (Keysers et al. 2020 count examples, not occurrences); an example given as a mapping
    item -> weight (:func:`example_compound_weights`) contributes its own weights. ``weights``
    multiplies every count by a weight per item (e.g. the pool-wide :func:`compound_weights`).
    The same rule is the CMaxEnt objective (:mod:`hf_synthsample.sampling.cmaxent`).

    Example:
        >>> frequencies([["a", "b", "a"], ["a"]])
        {'a': 2.0, 'b': 1.0}
        >>> frequencies([{"a": 0.5, "b": 1.0}, ["a"]])
        {'a': 1.5, 'b': 1.0}
    """
    counts: Counter = Counter()
    for x in items:
        if isinstance(x, str):
            counts[x] += 1
        elif isinstance(x, Mapping):
            counts.update({k: float(v) for k, v in x.items()})
        else:
            counts.update(list(dict.fromkeys(x)))  # distinct, in order of first occurrence
    if weights is None:
        return {k: float(v) for k, v in counts.items() if v > 0}
    return {k: v * weights.get(k, 1.0) for k, v in counts.items() if v * weights.get(k, 1.0) > 0}


def entropy(counts: Mapping[Any, float]) -> float:
    """Shannon entropy (nats) of the normalised ``counts``.

    Example:
        >>> round(entropy({"a": 1, "b": 1}), 6) == round(math.log(2), 6)
        True
    """
    total = float(sum(counts.values()))
    if total <= 0:
        return 0.0
    return -sum((c / total) * math.log(c / total) for c in counts.values() if c > 0)


def chernoff_coefficient(p: Mapping[Any, float], q: Mapping[Any, float], alpha: float) -> float:
    """``C_alpha(P||Q) = sum_k p_k^alpha q_k^(1-alpha)`` of the normalised distributions.

    Example:
        >>> chernoff_coefficient({"a": 1}, {"a": 3}, 0.5)
        1.0
    """
    alpha = check_float("alpha", alpha, min=0, max=1)
    sp, sq = float(sum(p.values())), float(sum(q.values()))
    if sp <= 0 or sq <= 0:
        raise ValueError("p, q: both distributions must have positive mass")
    keys = p.keys() & q.keys()
    return sum((p[k] / sp) ** alpha * (q[k] / sq) ** (1 - alpha) for k in keys)


def divergence(a: Iterable, b: Iterable, alpha: float, weights: Mapping[str, float] | None = None) -> float:
    """``1 - C_alpha(F(a) || F(b))`` for two datasets given as per-example item lists."""
    return 1.0 - chernoff_coefficient(frequencies(a, weights), frequencies(b, weights), alpha)


def atom_divergence(a: Iterable[Iterable[str]], b: Iterable[Iterable[str]]) -> float:
    """Atom divergence ``D_A = 1 - C_0.5(F_A(a) || F_A(b))`` (Keysers et al. 2020).

    Example:
        >>> atom_divergence([["x", "y"]], [["x", "y"]]), atom_divergence([["x"]], [["y"]])
        (0.0, 1.0)
    """
    return max(0.0, divergence(a, b, 0.5))


def compound_divergence(
    a: Iterable[Iterable[str]], b: Iterable[Iterable[str]], weights: Mapping[str, float] | None = None
) -> float:
    """Compound divergence ``D_C = 1 - C_0.1(F_C(a) || F_C(b))``.

    ``a`` and ``b`` hold per-example compound lists, or per-example mappings compound -> weight
    (Keysers et al.'s weights: :func:`example_compound_weights`); ``weights`` is one weight per
    compound (the pool-wide :func:`compound_weights`).

    Example:
        >>> w = example_compound_weights(["(g (f x))", "(h (f x))"], language="sexpr")
        >>> round(compound_divergence(w[:1], w[1:]), 4)  # only (f x) is shared, with weight 1/2 on both sides
        0.6667
    """
    return max(0.0, divergence(a, b, 0.1, weights))


# ---------------------------------------------------------------------- diagnostics


def template_counts(templates: Iterable[str]) -> dict[str, int]:
    """Template -> examples, most frequent first."""
    return dict(Counter(templates).most_common())


def template_coverage(pool_templates: Iterable[str], reference_templates: Iterable[str]) -> tuple[float, list[str]]:
    """Share of the reference set's distinct templates that occur in the pool, and the uncovered ones.

    Example:
        >>> template_coverage(["t1", "t2"], ["t1", "t3", "t3"])
        (0.5, ['t3'])
    """
    pool = set(pool_templates)
    ref = sorted(set(reference_templates))
    if not ref:
        raise ValueError("reference_templates is empty: nothing to cover")
    missing = [t for t in ref if t not in pool]
    return 1.0 - len(missing) / len(ref), missing


def plot_template_frequencies(templates: Iterable[str] | Mapping[str, int], path: str, title: str = "") -> str:
    """Rank-frequency plot (log scale) of templates, written to ``path`` (PNG); returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = dict(templates) if isinstance(templates, Mapping) else template_counts(templates)
    values = sorted(counts.values(), reverse=True)
    if not values:
        raise ValueError("templates is empty: nothing to plot")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar(range(1, len(values) + 1), values, width=1.0)
    ax.set_yscale("log")
    ax.set_xlabel("template rank")
    ax.set_ylabel("examples")
    ax.set_title(title or f"{len(values)} templates, {sum(values):,} examples")
    fig.tight_layout()
    return save_figure_atomic(fig, path, dpi=100)


def diagnostics(
    programs: Iterable[str],
    reference: Iterable[str] | None = None,
    language: str = "thingtalk",
    max_height: int = 2,
    compound_weighting: bool | str = False,
) -> dict[str, Any]:
    """Structural diagnostics of a set of programs, optionally against a reference set.

    Returns ``num_programs``, ``num_templates``, ``template_counts``, ``atom_entropy`` and
    ``compound_entropy`` (nats); with ``reference`` also ``template_coverage`` (share of the
    reference's templates found in ``programs``), ``uncovered_templates``, ``atom_divergence``
    and ``compound_divergence``. ``compound_weighting`` weights the compounds: ``"example"`` or
    ``True`` with Keysers et al.'s per-example weights (:func:`example_compound_weights`, ``P(G'|G)``
    over ``programs``, for the reference's examples too), ``"pool"`` with the pool-wide variant
    (:func:`compound_weights` of ``programs``), ``False`` unweighted.

    Example:
        >>> d = diagnostics(["(a (b c))", "(a (b 'x))"], reference=["(a (b c))"], language="sexpr")
        >>> d["num_templates"], d["template_coverage"], d["atom_divergence"] > 0
        (2, 1.0, True)
    """
    lang = get_language(language)
    max_height = check_int("max_height", max_height, min=1)

    def extract(items):
        templates, atoms_, comps = [], [], []
        for p in items:
            tree = parse(p, language)
            templates.append(lang.template(tree))
            a, c = _atoms_and_compounds(tree, max_height)
            atoms_.append(a)
            comps.append(c)
        return templates, atoms_, comps

    mode = _weighting("compound_weighting", compound_weighting)
    programs = list(programs)
    if not programs:
        raise ValueError("programs is empty: nothing to describe")
    reference = None if reference is None else list(reference)
    t, a, c = extract(programs)
    weights = compound_weights(programs, language, max_height) if mode == "pool" else None
    if mode == "example":
        rows, p = _occurrence_supers(programs, language, max_height, None, also=reference or [])
        per = [_example_weights(r, p) for r in rows]
        c = per[:len(programs)]
    out: dict[str, Any] = {
        "num_programs": len(programs),
        "num_templates": len(set(t)),
        "template_counts": template_counts(t),
        "atom_entropy": entropy(frequencies(a)),
        "compound_entropy": entropy(frequencies(c, weights)),
    }
    if reference is not None:
        rt, ra, rc = extract(reference)
        if mode == "example":
            rc = per[len(programs):]
        coverage, missing = template_coverage(t, rt)
        out.update(
            template_coverage=coverage,
            uncovered_templates=missing,
            atom_divergence=atom_divergence(a, ra),
            compound_divergence=compound_divergence(c, rc, weights),
        )
    return out


def _weighting(name: str, value: Any) -> str | None:
    """``"example"``, ``"pool"`` or ``None`` (unweighted) from a ``compound_weights``-like argument."""
    if value is True:
        return "example"
    if value is False or value is None:
        return None
    if isinstance(value, str) and value in COMPOUND_WEIGHTINGS:
        return value
    raise ValueError(f"{name}: accepted values: True or 'example' (Keysers et al.'s per-example weights), 'pool' "
                     f"(one weight per compound over the pool), False (unweighted); got {value!r}")


#: the package-level name (``hf_synthsample.structure_diagnostics``)
structure_diagnostics = diagnostics
