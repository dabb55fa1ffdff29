"""Schema2QA's building blocks (:mod:`.schema2qa`): program-tree constructors, the per-example
state (placeholder counters, the random source) and the filter clauses with their phrasings."""

from __future__ import annotations

import random
from typing import Sequence

from ..structure import Node
from .schema2qa_schema import CATEGORY_PHRASES, DOMAINS, VALUES, Prop, Table

_ENUM_SURFACE = {"EBook": "ebook", "Hardcover": "hardcover", "Paperback": "paperback"}

# ---------------------------------------------------------------------- node helpers


def _param(name: str, type_: str) -> Node:
    return Node("param", (Node(name, (), "property"), Node(type_, (), "type")), "", "param")


def _value(label: str) -> Node:
    return Node(label, (), "entity", "value")


def _table(name: str) -> Node:
    return Node(name, (), "table", "table")


def _cmp(lhs: Node, op: str, rhs: Node) -> Node:
    return Node(op, (lhs, rhs), "op", "cmp")


def _and(clauses: list[Node]) -> Node:
    return clauses[0] if len(clauses) == 1 else Node("and", tuple(clauses), "op", "and")


def _filter(table: Node, clauses: list[Node]) -> Node:
    return Node("filter", (table, _and(clauses)), "", "filter")


def _sort(param: Node, direction: str, table: Node) -> Node:
    return Node("sort", (param, Node(direction, (), "func_mod"), table), "func", "sort")


def _index(table: Node, value: str) -> Node:
    return Node("index", (table, _value(value)), "", "index")


def _call(func: str, *args: Node) -> Node:
    return Node(func, args, "func", "call")


def _program(query: Node) -> Node:
    return Node("program", (query,), "", "program")


# ---------------------------------------------------------------------- per-example state


class _Ex:
    """Placeholder counters of one example (NUMBER_0, NUMBER_1, ...)."""

    __slots__ = ("rng", "counts")

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.counts: dict[str, int] = {}

    def placeholder(self, kind: str) -> str:
        i = self.counts.get(kind, 0)
        self.counts[kind] = i + 1
        return f"{kind}_{i}"

    def choice(self, seq):
        return seq[int(self.rng.random() * len(seq))]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


def _number(ex: _Ex, small: tuple[int, ...] = (1, 2, 3, 4, 5)) -> str:
    return ex.placeholder("NUMBER") if ex.chance(0.7) else str(ex.choice(small))


def _say(ex: _Ex, prop: Prop, op: str, v: str) -> str:
    phrases = prop.phrases.get(op) or CATEGORY_PHRASES[prop.cat][op]
    return ex.choice(phrases).format(v=v, np=prop.np, unit=prop.unit or prop.np)


# ---------------------------------------------------------------------- filter clauses
# A clause is (sort_key, [nodes], phrase): genie prints and-clauses ordered by property.

_FILTER_CATS = ("id", "str", "ent", "arr_ent", "arr_str", "num", "bool", "enum", "loc", "date", "time", "dur", "open")


def _simple_value(ex: _Ex, prop: Prop) -> tuple[str, str]:
    """(program value, words) for the equality-like operator of ``prop``."""
    cat = prop.cat
    if cat in ("id", "str", "arr_str"):
        w = ex.choice(VALUES[prop.values])
        return f'" {w} "', w
    if cat in ("ent", "arr_ent"):
        w = ex.choice(VALUES[prop.values])
        return f'" {w} " ^^{prop.entity_type}', w
    if cat == "enum":
        names = [n for n in prop.type[5:-1].split(",") if n in _ENUM_SURFACE or n.islower()]
        n = ex.choice(names)
        return f"enum:{n}", _ENUM_SURFACE.get(n, n)
    raise AssertionError(cat)


def _clause(ex: _Ex, table: Table, prop: Prop) -> tuple[str, list[Node], str]:
    cat = prop.cat
    p = _param(prop.name, prop.type)
    key = prop.name
    if cat in ("id", "str", "ent", "arr_ent", "arr_str", "enum"):
        op = {"id": "=~", "str": "=~", "ent": "==", "arr_ent": "contains", "arr_str": "contains~", "enum": "=="}[cat]
        if cat in ("id", "str") and ex.chance(0.08):
            # disjunction of two values of the same property
            (v1, w1), (v2, w2) = _simple_value(ex, prop), _simple_value(ex, prop)
            node = Node("or", (_cmp(p, op, _value(v1)), _cmp(_param(prop.name, prop.type), op, _value(v2))), "op", "or")
            return key, [node], _say(ex, prop, op, f"{w1} or {w2}")
        v, w = _simple_value(ex, prop)
        if cat in ("str", "arr_str") and ex.chance(0.1):
            return key, [Node("not", (_cmp(p, op, _value(v)),), "op", "not")], "but not " + _say(ex, prop, op, w)
        return key, [_cmp(p, op, _value(v))], _say(ex, prop, op, w)
    if cat == "num":
        op = ex.choice(("==", ">=", "<=", ">="))
        v = _number(ex)
        return key, [_cmp(p, op, _value(v))], _say(ex, prop, op, v)
    if cat == "bool":
        truth = ex.chance(0.75)
        v = "true" if truth else "false"
        return key, [_cmp(p, "==", _value(v))], ex.choice(prop.phrases[v])
    if cat == "loc":
        if ex.chance(0.35):
            return key, [_cmp(p, "==", _value("location:current_location"))], ex.choice(("near me", "nearby", "around here", "close to me"))
        w = ex.choice(VALUES[prop.values])
        return key, [_cmp(p, "==", _value(f'location: " {w} "'))], _say(ex, prop, "==", w)
    if cat == "date":
        r = ex.rng.random()
        verb = table.verb
        if r < 0.45:  # a calendar year: two clauses
            y = ex.placeholder("NUMBER")
            start = f"new Date ( {y} , , , )"
            nodes = [_cmp(p, "<=", _value(start + " + 1 unit:year")), _cmp(_param(prop.name, prop.type), ">=", _value(start))]
            return key, nodes, ex.choice((f"{verb} in {y}", f"from {y}", f"{verb} in the year {y}"))
        if r < 0.65:
            n = str(ex.choice((1, 2, 3, 5, 10)))
            return key, [_cmp(p, ">=", _value(f"now - {n} unit:year"))], ex.choice((f"{verb} in the last {n} years", f"from the past {n} years"))
        if r < 0.85:
            y = ex.placeholder("NUMBER")
            op = ex.choice((">=", "<="))
            word = ex.choice(("after", "since")) if op == ">=" else ex.choice(("before", "prior to"))
            return key, [_cmp(p, op, _value(f"new Date ( {y} , , , )"))], f"{verb} {word} {y}"
        d = ex.placeholder("DATE")
        return key, [_cmp(p, "==", _value(d))], f"{verb} on {d}"
    if cat == "time":
        op = ex.choice(("==", ">=", "<="))
        v = ex.placeholder("TIME")
        return key, [_cmp(p, op, _value(v))], _say(ex, prop, op, v)
    if cat == "dur":
        op = ex.choice((">=", "<="))
        if ex.chance(0.6):
            n = ex.placeholder("NUMBER")
            return key, [_cmp(p, op, _value(f"{n} unit:min"))], _say(ex, prop, op, f"{n} minutes")
        n = str(ex.choice((1, 2, 3)))
        return key, [_cmp(p, op, _value(f"{n} unit:h"))], _say(ex, prop, op, f"{n} hour" + ("s" if n != "1" else ""))
    if cat == "open":
        v = ex.placeholder("TIME")
        return key, [_cmp(p, "contains", _value(v))], _say(ex, prop, "contains", v)
    raise AssertionError(cat)


def _counted(ex: _Ex, prop: Prop, p_match: float) -> tuple[Node, str]:
    """An array property to count and its unit; a string array, with probability ``p_match``,
    only its elements that match a value."""
    arg = _param(prop.name, prop.type)
    unit = prop.unit or prop.np
    if prop.cat == "arr_str" and ex.chance(p_match):
        w = ex.choice(VALUES[prop.values])
        arg = Node("filter", (arg, _cmp(_param("value", "String"), "=~", _value(f'" {w} "'))), "", "array_filter")
        unit = f"{w} {unit}"
    return arg, unit


def _count_clause(ex: _Ex, prop: Prop) -> tuple[str, list[Node], str]:
    op = ex.choice((">=", "==", "<=", ">="))
    v = _number(ex, (0, 1, 2, 3, 5))
    arg, unit = _counted(ex, prop, 0.3)
    word = {">=": ex.choice(("at least", "more than")), "<=": ex.choice(("at most", "fewer than")), "==": "exactly"}[op]
    return prop.name, [_cmp(_call("count", arg), op, _value(v))], ex.choice((f"with {word} {v} {unit}", f"that have {word} {v} {unit}"))


def _distance_clause(ex: _Ex) -> tuple[str, list[Node], str]:
    n = ex.placeholder("NUMBER")
    if ex.chance(0.5):
        loc, where = "location:current_location", ex.choice(("here", "me", "my location"))
    else:
        w = ex.choice(VALUES["city"])
        loc, where = f'location: " {w} "', w
    node = _cmp(_call("distance", _param("geo", "Location"), _value(loc)), "<=", _value(f"{n} unit:mi"))
    return "geo", [node], ex.choice((f"within {n} miles of {where}", f"less than {n} miles from {where}"))


def _review_link() -> Node:
    return _cmp(_param("id", "Entity(org.schema.Restaurant:Review)"), "in_array", _param("review", "Array(Entity(org.schema.Restaurant:Review))"))


def _subquery_clause(ex: _Ex) -> tuple[str, list[Node], str]:
    review = DOMAINS["restaurants"][1]
    chosen = _distinct(ex, _INFO[review.name].no_id, 1 if ex.chance(0.7) else 2)
    clauses = [_clause(ex, review, p) for p in chosen]
    clauses.append(("id", [_review_link()], ""))
    clauses.sort(key=lambda c: c[0])
    nodes = [n for c in clauses for n in c[1]]
    words = " and ".join(c[2] for c in clauses if c[2])
    sub = Node("subquery", (_table(review.name), _and(nodes)), "", "subquery")
    return "", [sub], ex.choice((f"with a review {words}", f"that have reviews {words}"))


def _distinct(ex: _Ex, items: Sequence, k: int) -> list:
    k = min(k, len(items))
    if k <= 1:
        return [ex.choice(items)] if k == 1 else []
    return ex.rng.sample(list(items), k)


class _Info:
    """Per-table property lists, computed once (generation is the hot path)."""

    __slots__ = ("filterable", "no_id", "arrays", "arrays_review", "has_geo", "sortable", "nums", "projectable")

    def __init__(self, table: Table):
        props = table.props
        self.filterable = [p for p in props if p.cat in _FILTER_CATS]
        self.no_id = [p for p in self.filterable if p.cat != "id"]
        self.arrays = [p for p in props if p.cat in ("arr_ent", "arr_str")]
        self.arrays_review = [p for p in props if p.cat in ("arr_ent", "arr_str") or p.name == "review"]
        self.has_geo = any(p.name == "geo" for p in props)
        self.sortable = [p for p in props if p.cat in ("num", "date", "time", "dur")]
        self.nums = [p for p in props if p.cat == "num"]
        self.projectable = [p for p in props if p.cat != "id"]


_INFO: dict[str, _Info] = {t.name: _Info(t) for ts in DOMAINS.values() for t in ts}


def _clauses(ex: _Ex, table: Table, k: int, allow_id: bool = True) -> tuple[list[Node], str]:
    """``k`` filter clauses on distinct properties, sorted as genie prints them, and their words."""
    info = _INFO[table.name]
    props = info.filterable if allow_id else info.no_id
    out = []
    used: set[str] = set()
    tries = 0
    while len(out) < k and tries < 4 * k + 8:
        tries += 1
        r = ex.rng.random()
        if r < 0.12 and info.arrays:
            c = _count_clause(ex, ex.choice(info.arrays))
        elif r < 0.18 and info.has_geo:
            c = _distance_clause(ex)
        elif r < 0.24 and table.name == "@org.schema.Restaurant.Restaurant":
            c = _subquery_clause(ex)
        else:
            c = _clause(ex, table, ex.choice(props))
        if c[0] in used:
            continue
        used.add(c[0])
        out.append(c)
    out.sort(key=lambda c: c[0])
    nodes = [n for c in out for n in c[1]]
    phrases = [c[2] for c in out]
    if len(phrases) == 1:
        words = phrases[0]
    elif ex.chance(0.5):
        words = " and ".join(phrases)
    else:
        words = " , ".join(phrases[:-1]) + " and " + phrases[-1]
    return nodes, words


def _num_clauses(ex: _Ex) -> int:
    r = ex.rng.random()
    return 1 if r < 0.5 else 2 if r < 0.82 else 3 if r < 0.96 else 4
