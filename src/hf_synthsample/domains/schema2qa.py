"""Schema2QA: a synchronous grammar of (utterance, ThingTalk program) pairs over six schema.org
domains, the annotated-data reader, and the splits of Oren et al. (2021, Appendix A).

Generation is synchronous: every grammar choice builds a piece of the program tree
(:class:`~hf_synthsample.structure.Node`, printed by :mod:`.thingtalk`) and, in the same step, its
words, among several phrasings per construct (filters of 1-4 clauses, projections, sort / index /
slice, compute, aggregate, joins: :data:`QUERY_KINDS`). Values come from small built-in lists or
are placeholders (``NUMBER_0``, ``DATE_0``, ``TIME_0``), each mentioned in the utterance.

Example:
    >>> import random
    >>> row = generate(random.Random(0), "hotels")
    >>> sorted(row)
    ['domain', 'num_clauses', 'program', 'program_length', 'template', 'utterance']
    >>> from hf_synthsample.domains.thingtalk import parse, to_string
    >>> to_string(parse(row["program"])) == row["program"]
    True
"""

from __future__ import annotations

import bisect
import csv
import itertools
import os
import random
from collections import Counter
from typing import Sequence

from ..structure import Node
from . import thingtalk
from .schema2qa_clauses import (_INFO, _call, _clause, _clauses, _cmp, _counted, _distinct, _Ex, _filter, _index,
                               _num_clauses, _param, _program, _review_link, _simple_value, _sort, _table, _value)
from .schema2qa_schema import DOMAINS, VALUES, Prop, Table

__all__ = ["DOMAIN_NAMES", "generate", "read_annotated", "compositional_split", "iid_split", "QUERY_KINDS"]

DOMAIN_NAMES = tuple(DOMAINS)


# ---------------------------------------------------------------------- table expressions
# Each returns (node, plural noun phrase, singular noun phrase).


def _base_or_filtered(ex: _Ex, table: Table, p_filter: float = 0.7) -> tuple[Node, str, str]:
    t = _table(table.name)
    if ex.chance(p_filter):
        nodes, words = _clauses(ex, table, _num_clauses(ex))
        return _filter(t, nodes), f"{table.plural} {words}", f"{table.singular} {words}"
    return t, table.plural, table.singular


_SUPERLATIVE = {
    ("num", "desc"): ("with the highest {np}", "with the most {unit}", "with the best {np}"),
    ("num", "asc"): ("with the lowest {np}", "with the fewest {unit}", "with the smallest {np}"),
    ("date", "desc"): ("most recently {verb}", "latest {verb}", "{verb} most recently"),
    ("date", "asc"): ("earliest {verb}", "{verb} first", "oldest"),
    ("time", "desc"): ("with the latest {np}",),
    ("time", "asc"): ("with the earliest {np}",),
    ("dur", "desc"): ("with the longest {np}", "that lasts longest"),
    ("dur", "asc"): ("with the shortest {np}", "that is shortest"),
}


def _superlative(ex: _Ex, table: Table, p_desc: float) -> tuple[Prop, str, str]:
    """A sortable property of ``table``, a direction (desc with probability ``p_desc``) and its words."""
    prop = ex.choice(_INFO[table.name].sortable)
    d = "desc" if ex.chance(p_desc) else "asc"
    words = ex.choice(_SUPERLATIVE[(prop.cat, d)])
    return prop, d, words.format(np=prop.np, unit=prop.unit or prop.np, verb=table.verb)


def _ranked_source(ex: _Ex, table: Table) -> tuple[Node, str, str, str]:
    """A sort over a table: (sort node, plural words, singular words, superlative words)."""
    r = ex.rng.random()
    info = _INFO[table.name]
    arrays = info.arrays_review
    if r < 0.3 and info.has_geo:
        src, pl, sg = _base_or_filtered(ex, table, 0.55)
        if ex.chance(0.5):
            loc, sup = "location:current_location", ex.choice(("closest to me", "nearest to me", "closest to here"))
        else:
            w = ex.choice(VALUES["city"])
            loc, sup = f'location: " {w} "', ex.choice((f"closest to {w}", f"nearest to {w}"))
        comp = Node("compute", (_call("distance", _param("geo", "Location"), _value(loc)), src), "", "compute")
        return _sort(_param("distance", "Measure(m)"), "asc", comp), pl, sg, sup
    if (r < 0.45 or not info.sortable) and arrays:
        arg, unit = _counted(ex, ex.choice(arrays), 0.2)
        if ex.chance(0.15):  # filter after computing
            comp = Node("compute", (_call("count", arg), _table(table.name)), "", "compute")
            nodes, words = _clauses(ex, table, 1)
            src = _filter(comp, nodes)
            pl, sg = f"{table.plural} {words}", f"{table.singular} {words}"
        else:
            inner, pl, sg = _base_or_filtered(ex, table, 0.5)
            src = Node("compute", (_call("count", arg), inner), "", "compute")
        desc = ex.chance(0.85)
        sup = f"with the most {unit}" if desc else f"with the fewest {unit}"
        return _sort(_param("count", "Number"), "desc" if desc else "asc", src), pl, sg, sup
    prop, direction, sup = _superlative(ex, table, 0.7)
    src, pl, sg = _base_or_filtered(ex, table, 0.6)
    return _sort(_param(prop.name, prop.type), direction, src), pl, sg, sup


def _ranked(ex: _Ex, table: Table) -> tuple[Node, str, bool]:
    """A ranked table: (node, words, singular?)."""
    r = ex.rng.random()
    if r < 0.08 and _INFO[table.name].sortable:  # sort first, then filter, then take the first
        prop, direction, sup = _superlative(ex, table, 0.8)
        nodes, words = _clauses(ex, table, 1, allow_id=False)
        node = _index(_filter(_sort(_param(prop.name, prop.type), direction, _table(table.name)), nodes), "1")
        return node, f"the {table.singular} {words} {sup}", True
    if r < 0.14:
        # an index without sort
        src, pl, sg = _base_or_filtered(ex, table, 1.0)
        if ex.chance(0.5):
            return _index(src, "1"), f"the first {sg}", True
        n = ex.placeholder("NUMBER")
        return _index(src, n), f"the {n} -th {sg}", True
    node, pl, sg, sup = _ranked_source(ex, table)
    r = ex.rng.random()
    if r < 0.8:
        return _index(node, "1"), f"the {sg} {sup}", True
    if r < 0.93:
        n = ex.placeholder("NUMBER")
        return Node("slice", (node, _value("1"), _value(n)), "", "slice"), f"the top {n} {pl} {sup}", False
    return node, f"{pl} {sup} first", False


# ---------------------------------------------------------------------- queries

_SEARCH = ("show me {x}", "find {x}", "search for {x}", "i 'm looking for {x}", "are there any {x} ?", "list {x}", "which {x} are there ?", "get me {x}", "i want {x}")
_ASK = ("what is the {p} of {x} ?", "show me the {p} of {x}", "tell me the {p} of {x}", "give me the {p} of {x}", "i want to know the {p} of {x}", "what 's the {p} of {x} ?")
_ONE = ("show me {x}", "what is {x} ?", "find {x}", "which is {x} ?", "tell me {x}", "get {x}")
_HOW_MANY = ("how many {x} are there ?", "count the {x}", "what is the number of {x} ?", "tell me how many {x} there are")
_AGG_WORDS = {"sum": ("total", "combined"), "avg": ("average", "mean"), "max": ("maximum", "highest"), "min": ("minimum", "lowest")}

#: query constructs and their weights
QUERY_KINDS = {
    "search": 0.34,
    "project": 0.26,
    "rank": 0.15,
    "aggregate": 0.08,
    "compute": 0.05,
    "index_project": 0.06,
    "join": 0.03,
    "all": 0.03,
}
_KIND_NAMES = tuple(QUERY_KINDS)
_KIND_CUM = list(itertools.accumulate(QUERY_KINDS.values()))


def _projection(ex: _Ex, table: Table, src: Node, x: str) -> tuple[Node, str]:
    props = _INFO[table.name].projectable
    chosen = _distinct(ex, props, 2 if ex.chance(0.12) else 1)
    words = " and ".join(p.np for p in chosen)
    node = Node("projection", (*(_param(p.name, p.type) for p in chosen), src), "", "projection")
    return node, ex.choice(_ASK).format(p=words, x=x)


def _query(ex: _Ex, table: Table, domain: str) -> tuple[Node, str]:
    kind = _KIND_NAMES[min(bisect.bisect_right(_KIND_CUM, ex.rng.random()), len(_KIND_NAMES) - 1)]
    if kind == "join" and domain != "restaurants":
        kind = "search"
    if kind == "search":
        nodes, words = _clauses(ex, table, _num_clauses(ex))
        return _filter(_table(table.name), nodes), ex.choice(_SEARCH).format(x=f"{table.plural} {words}")
    if kind == "all":
        t = _table(table.name)
        if ex.chance(0.3) and _INFO[table.name].sortable:
            prop, d, sup = _superlative(ex, table, 0.6)
            return _sort(_param(prop.name, prop.type), d, t), ex.choice(_SEARCH).format(x=f"all {table.plural} {sup} first")
        return t, ex.choice(("show me all {x}", "list all {x}", "what {x} are there ?", "find {x}")).format(x=table.plural)
    if kind == "project":
        r2 = ex.rng.random()
        if r2 < 0.55:  # one named thing
            id_prop = table.props[0]
            v, w = _simple_value(ex, id_prop)
            nodes2 = [_cmp(_param(id_prop.name, id_prop.type), "=~", _value(v))]
            x = w
            if ex.chance(0.25):
                extra, ewords = _clauses(ex, table, 1, allow_id=False)
                pairs = sorted([(id_prop.name, nodes2), (_first_prop(extra[0]), extra)], key=lambda t: t[0])
                nodes2 = [n for _, ns in pairs for n in ns]
                x = f"{w} {ewords}"
            return _projection(ex, table, _filter(_table(table.name), nodes2), x)
        if r2 < 0.75:
            src, pl, _ = _base_or_filtered(ex, table, 0.75)
            return _projection(ex, table, src, pl)
        node, words, _ = _ranked(ex, table)
        return _projection(ex, table, node, words)
    if kind == "rank" or kind == "index_project":
        node, words, single = _ranked(ex, table)
        if kind == "index_project":
            return _projection(ex, table, node, words)
        return node, ex.choice(_ONE if single else _SEARCH).format(x=words)
    if kind == "aggregate":
        src, pl, _ = _base_or_filtered(ex, table, 0.85)
        nums = _INFO[table.name].nums
        arrays = _INFO[table.name].arrays
        if arrays and ex.chance(0.1):
            # aggregate over a computed count: "how many languages do people ... speak on average ?"
            prop = ex.choice(arrays)
            comp: Node = Node("compute", (_call("count", _param(prop.name, prop.type)), _table(table.name)), "", "compute")
            nodes, words = _clauses(ex, table, 1 if ex.chance(0.7) else 2)
            op = ex.choice(("avg", "sum", "max", "min"))
            node = Node("aggregate", (Node(op, (), "func"), _param("count", "Number"), _filter(comp, nodes)), "func", "aggregate")
            x = f"{table.plural} {words}"
            return node, ex.choice(("what is the {a} number of {u} of {x} ?", "how many {u} do {x} have , {a} ?")).format(
                a=ex.choice(_AGG_WORDS[op]), u=prop.unit or prop.np, x=x
            )
        if ex.chance(0.75) or not nums:
            return Node("aggregate", (Node("count", (), "func"), src), "func", "aggregate"), ex.choice(_HOW_MANY).format(x=pl)
        op = ex.choice(("sum", "avg", "max", "min"))
        prop = ex.choice(nums)
        word = ex.choice(_AGG_WORDS[op])
        node = Node("aggregate", (Node(op, (), "func"), _param(prop.name, prop.type), src), "func", "aggregate")
        return node, ex.choice(("what is the {a} {p} of {x} ?", "give me the {a} {p} of {x}")).format(a=word, p=prop.np, x=pl)
    if kind == "compute":
        arrays = _INFO[table.name].arrays
        if _INFO[table.name].has_geo and (not arrays or ex.chance(0.5)):
            src, pl, sg = _base_or_filtered(ex, table, 0.9)
            w = ex.choice(VALUES["city"])
            comp = Node("compute", (_call("distance", _param("geo", "Location"), _value(f'location: " {w} "')), src), "", "compute")
            proj = Node("projection", (_param("distance", "Measure(m)"), comp), "", "projection")
            return proj, ex.choice(("how far are {x} from {w} ?", "what is the distance from {w} to {x} ?")).format(x=pl, w=w)
        prop = ex.choice(arrays)
        src, pl, sg = _base_or_filtered(ex, table, 0.9)
        comp = Node("compute", (_call("count", _param(prop.name, prop.type)), src), "", "compute")
        unit = prop.unit or prop.np
        if ex.chance(0.6):
            proj = Node("projection", (_param("count", "Number"), comp), "", "projection")
            return proj, ex.choice(("how many {u} do {x} have ?", "what is the number of {u} of {x} ?")).format(u=unit, x=pl)
        return comp, ex.choice(("count the {u} of {x}", "count the {u} for each of the {x}")).format(u=unit, x=pl)
    if kind == "join":
        return _join(ex)
    raise AssertionError(kind)


def _join(ex: _Ex) -> tuple[Node, str]:
    """Restaurants joined with their reviews (the review link is a clause of the outer filter)."""
    rest, review = DOMAINS["restaurants"]
    id_prop = rest.props[0]
    v, w = _simple_value(ex, id_prop)
    left: Node = _filter(_table(rest.name), [_cmp(_param(id_prop.name, id_prop.type), "=~", _value(v))])
    what = w
    r = ex.rng.random()
    if r < 0.15:
        nodes, words = _clauses(ex, rest, 1, allow_id=False)
        left, what = _filter(_table(rest.name), nodes), f"{rest.plural} {words}"
    elif r < 0.3:
        comp = Node("compute", (_call("distance", _param("geo", "Location"), _value("location:current_location")), left), "", "compute")
        left = _index(_sort(_param("distance", "Measure(m)"), "asc", comp), "1")
        what = f"the {w} nearest to me"
    right: Node = _table(review.name)
    rwords = []
    if ex.chance(0.3):
        rnodes, words = _clauses(ex, review, 1)
        right = _filter(right, rnodes)
        rwords.append(words)
    clauses = [("id", [_review_link()], "")]
    props = _distinct(ex, _INFO[review.name].no_id, ex.choice((0, 0, 1, 1, 2)))
    if not rwords or ex.chance(0.5):
        for prop in props:
            c = _clause(ex, review, prop)
            clauses.append(c)
            rwords.append(c[2])
    clauses.sort(key=lambda c: c[0])
    node = _filter(Node("join", (left, right), "", "join"), [n for c in clauses for n in c[1]])
    x = " ".join(("reviews", " and ".join(rwords), "of", what)) if rwords else f"reviews of {what}"
    r = ex.rng.random()
    if r < 0.2:
        return Node("aggregate", (Node("count", (), "func"), node), "func", "aggregate"), ex.choice(_HOW_MANY).format(x=x)
    if r < 0.35:
        by_date = ex.chance(0.6)
        key = _param("datePublished", "Date") if by_date else _param("reviewRating.ratingValue", "Number")
        sup = "latest" if by_date else "best"
        proj = review.prop("author") if ex.chance(0.5) else review.prop("description")
        ranked = _index(_sort(key, "desc", node), "1")
        single = " ".join(("review", " and ".join(rwords), "of", what)) if rwords else f"review of {what}"
        return Node("projection", (_param(proj.name, proj.type), ranked), "", "projection"), ex.choice(_ASK).format(
            p=proj.np, x=f"the {sup} {single}"
        )
    return node, ex.choice(_SEARCH).format(x=x)


def _first_prop(node: Node) -> str:
    for n in node.iter():
        if n.rule == "param":
            return n.children[0].label
    return ""


def generate(rng: random.Random, domain: str = "all") -> dict:
    """One synthetic example of ``domain`` (one of :data:`DOMAIN_NAMES`, or ``"all"``: one drawn uniformly):
    ``utterance``, ``program``, ``template``, ``domain`` and two salient variables (``num_clauses``:
    comparisons in the program, ``program_length``: its tokens)."""
    if domain == "all":
        domain = DOMAIN_NAMES[int(rng.random() * len(DOMAIN_NAMES))]
    elif domain not in DOMAINS:
        raise ValueError(f"domain: unknown domain {domain!r}; available domains: {['all', *DOMAIN_NAMES]}")
    tables = DOMAINS[domain]
    ex = _Ex(rng)
    table = tables[0] if len(tables) == 1 or domain == "restaurants" or ex.chance(0.7) else tables[1]
    query, words = _query(ex, table, domain)
    program, template = thingtalk.render(_program(query))
    tokens = program.split()
    return {
        "utterance": " ".join(words.split()),
        "program": program,
        "template": template,
        "domain": domain,
        # generated values never contain an operator token, so counting tokens counts comparisons
        "num_clauses": sum(1 for t in tokens if t in thingtalk.COMPARISON_OPS),
        "program_length": len(tokens),
    }


# ---------------------------------------------------------------------- annotated data and splits


def read_annotated(folder: str | os.PathLike, domains: Sequence[str] | None = None) -> list[dict]:
    """Rows ``{id, domain, utterance, program}`` of ``<folder>/<domain>.tsv`` (id, utterance, program).

    ``id`` is ``<domain>/<id in the file>#<line>``: the released files reuse ids across lines. Every
    program is parsed (a :class:`~.thingtalk.ThingTalkSyntaxError` names the file and line).
    """
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        raise ValueError(f"annotated_dir: {folder!r} is not a folder (expected one with <domain>.tsv files: {list(DOMAIN_NAMES)})")
    names = list(domains) if domains else [d for d in DOMAIN_NAMES if os.path.exists(os.path.join(folder, f"{d}.tsv"))]
    for d in names:
        if d not in DOMAINS:
            raise ValueError(f"domains: unknown domain {d!r}; available domains: {list(DOMAIN_NAMES)}")
    if not names:
        raise ValueError(f"annotated_dir: no <domain>.tsv file in {folder!r}; expected some of {[d + '.tsv' for d in DOMAIN_NAMES]}")
    rows = []
    for d in names:
        path = os.path.join(folder, f"{d}.tsv")
        if not os.path.exists(path):
            raise ValueError(f"annotated_dir: {path!r} does not exist")
        with open(path, newline="", encoding="utf-8") as f:
            for lineno, parts in enumerate(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
                if not parts or not "".join(parts).strip():
                    continue
                if len(parts) < 3:
                    raise ValueError(f"annotated_dir: {path}:{lineno} has {len(parts)} columns; expected id, utterance, program")
                try:
                    thingtalk.parse(parts[2])
                except ValueError as e:
                    raise ValueError(f"annotated_dir: {path}:{lineno}: {e}") from None
                rows.append({"id": f"{d}/{parts[0]}#{lineno}", "domain": d, "utterance": parts[1], "program": parts[2]})
    return rows


def compositional_split(templates: Sequence[str], seed: int, dev_fraction: float, test_fraction: float,
                        template_share: float = 0.25) -> tuple[set[str], set[str], set[str]]:
    """Template-disjoint ``(train, dev, test)`` template sets (Oren et al. 2021, Appendix A).

    Templates are shuffled with ``seed``; each is offered to dev, test or train with probability
    ``template_share``, ``template_share`` and the rest, and goes to dev (test) only while that set
    holds fewer than ``dev_fraction`` (``test_fraction``) of the examples, else to train (as in the
    paper: 19 / 20 of 73 annotated templates in dev / test, the frequent ones in train).
    """
    counts = Counter(templates)
    order = sorted(counts)
    rng = random.Random(seed)
    rng.shuffle(order)
    total = len(templates)
    dev_cap, test_cap = dev_fraction * total, test_fraction * total
    train, dev, test = set(), set(), set()
    n_dev = n_test = 0
    for t in order:
        c = counts[t]
        r = rng.random()
        if r < template_share and n_dev + c <= dev_cap:
            dev.add(t)
            n_dev += c
        elif template_share <= r < 2 * template_share and n_test + c <= test_cap:
            test.add(t)
            n_test += c
        else:
            train.add(t)
    return train, dev, test


def iid_split(n: int, seed: int, dev_fraction: float, test_fraction: float) -> tuple[list[int], list[int], list[int]]:
    """Indices ``0..n-1`` shuffled with ``seed`` and cut into (train, dev, test)."""
    idx = list(range(n))
    random.Random(seed).shuffle(idx)
    n_dev, n_test = round(dev_fraction * n), round(test_fraction * n)
    return sorted(idx[n_dev + n_test :]), sorted(idx[:n_dev]), sorted(idx[n_dev : n_dev + n_test])
