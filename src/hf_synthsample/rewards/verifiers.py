"""A verifier per generator: does a completion solve a dataset row? ``score`` is 1.0 or 0.0 (Karel: the
share of grids solved), computed by the domain's own evaluator or interpreter.

Every verifier first reads the completion's final answer with
:func:`~hf_synthsample.rewards.normalize.extract_answer` (chat form, the ``<answer>...</answer>`` tag or
an ``Answer:`` line, code fences, whitespace collapsed); an empty answer scores 0. Then, per domain:

* **calculator** (rows: ``answer``, else ``expression``): the answer must be one integer (a sign, a
  trailing ``.`` or ``.0`` allowed) equal to the row's ``answer``, the expression's value modulo 10
  (0-9; the label the dataset holds, so ``12`` for a value of 12 is wrong). An expression is *not*
  evaluated: echoing the question must not earn the reward.
* **scan** and **scan_star** (rows: ``actions``): the answer's tokens, split at whitespace and commas,
  case-insensitive (``i_walk`` is ``I_WALK``), a trailing ``.`` dropped, must equal the row's action
  sequence.
* **karel** (rows: ``examples``, the I/O pairs; ``num_grids`` when present says how many are shown):
  the answer is parsed as a program in the DSL token syntax (``DEF run m( ... m)``, case-sensitive)
  and run on the chosen pairs' input grids; a pair counts if the run ends without crash or timeout in
  the pair's output grid. ``pairs="shown"`` (default: the grids a prompt shows, the task's
  specification), ``"held_out"`` or ``"all"``; ``partial=True`` (default) scores the share of pairs
  solved, ``partial=False`` 1 only if all are. Unparsable programs score 0.
* **schema2qa** (rows: ``program``): the answer and the row's program are parsed as ThingTalk and
  compared in canonical form: printed back by the library's printer (so spacing and redundant
  parentheses do not count) with the operands of every ``and`` / ``or`` sorted (their order does not
  change the query). Case-sensitive (property and placeholder names are). Unparsable answers score 0.

``score`` never raises on a completion; a row without the column the domain needs (or with a value
the domain's evaluator rejects) is the caller's data error: a ``ValueError`` naming the column.

Example:
    >>> v = verifier("calculator")
    >>> row = {"expression": "(1+2)*3", "answer": 9}
    >>> v.score("<answer>9</answer>", row), v.score(" 9 ", row), v.score("8", row), v.score("", row)
    (1.0, 1.0, 0.0, 0.0)
    >>> verifier("scan").score("Answer: i_jump, i_jump", {"commands": "jump twice", "actions": "I_JUMP I_JUMP"})
    1.0
"""

from __future__ import annotations

import functools
import re
from typing import Any, Mapping

from .normalize import extract_answer

__all__ = ["DOMAINS", "Verifier", "CalculatorVerifier", "ScanVerifier", "KarelVerifier", "Schema2QAVerifier",
           "verifier", "canonical_thingtalk"]

_INT = re.compile(r"[+-]?\d{1,50}(?:\.0*)?")


class Verifier:
    """Scores completions for one domain. Subclasses set :attr:`domain`, :attr:`input_column` (what a
    prompt shows), :attr:`target_column` (what the answer is checked against) and implement
    :meth:`_score` and :meth:`reference`.

    Verifiers are plain picklable objects (TRL and ``datasets`` may pickle a reward function).
    """

    domain: str = ""
    input_column: str = ""
    target_column: str = ""

    def score(self, completion: Any, row: Mapping) -> float:
        """1.0 if ``completion`` (a string or a chat completion) solves ``row``, else 0.0 (Karel: the
        share of pairs solved with ``partial=True``). Never raises on the completion; ``ValueError``
        naming the column for a row that lacks what the domain needs."""
        if not isinstance(row, Mapping):
            raise TypeError(f"row must be a mapping of column -> value, got {type(row).__name__}")
        target = self._target(row)  # row errors first, whatever the completion
        answer = extract_answer(completion)
        if not answer:
            return 0.0
        try:
            return float(self._score(answer, target))
        except Exception:  # noqa: BLE001 - a completion must never break the caller's training loop
            return 0.0

    def reference(self, row: Mapping) -> str:
        """The row's correct answer as the text a completion should put in the answer tag."""
        raise NotImplementedError

    def _column(self, row: Mapping, name: str) -> Any:
        if name not in row or row[name] is None:
            raise ValueError(f"row: the {self.domain} verifier needs the column {name!r}; the row has "
                             f"{sorted(map(str, row))}")
        return row[name]

    def _target(self, row: Mapping) -> Any:
        return self._column(row, self.target_column)

    def _score(self, answer: str, target: Any) -> float:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(domain={self.domain!r})"


class CalculatorVerifier(Verifier):
    """Calculator: the answer is the expression's value modulo 10 (see the module docstring).

    Example:
        >>> v = CalculatorVerifier()
        >>> [v.score(c, {"expression": "7-9"}) for c in ["8", "8.", "+8", "-2", "7-9", "answer: 8"]]
        [1.0, 1.0, 1.0, 0.0, 0.0, 1.0]
        >>> v.reference({"expression": "7-9"})
        '8'
    """

    domain = "calculator"
    input_column = "expression"
    target_column = "answer"

    def _target(self, row: Mapping) -> int:
        if row.get("answer") is None:
            if row.get("expression") is None:
                raise ValueError(f"row: the calculator verifier needs the column 'answer' (or 'expression' to "
                                 f"evaluate); the row has {sorted(map(str, row))}")
            from ..domains.calculator import answer
            try:
                return answer(row["expression"])
            except (TypeError, ValueError) as e:
                raise ValueError(f"row: column 'expression': {e}") from None
        value = row["answer"]
        try:
            if isinstance(value, bool) or int(value) != float(value):
                raise ValueError
            return int(value)
        except (TypeError, ValueError):
            raise ValueError(f"row: column 'answer' must be an integer, got {value!r}") from None

    def _score(self, answer: str, target: int) -> float:
        match = _INT.fullmatch(answer.rstrip("."))
        if match is None:
            return 0.0
        return 1.0 if int(match.group(0).split(".")[0]) == target else 0.0

    def reference(self, row: Mapping) -> str:
        return str(self._target(row))


def _scan_tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[\s,]+", text.strip().rstrip(".").upper()) if t]


class ScanVerifier(Verifier):
    """SCAN and SCAN*: the action sequence, token by token, case-insensitive (see the module docstring).

    Example:
        >>> v = ScanVerifier()
        >>> row = {"commands": "walk left", "actions": "I_TURN_LEFT I_WALK"}
        >>> [v.score(c, row) for c in ["I_TURN_LEFT I_WALK", "i_turn_left,i_walk.", "I_WALK I_TURN_LEFT"]]
        [1.0, 1.0, 0.0]
    """

    domain = "scan"
    input_column = "commands"
    target_column = "actions"

    def _target(self, row: Mapping) -> list[str]:
        value = self._column(row, "actions")
        if isinstance(value, str):
            return _scan_tokens(value)
        if isinstance(value, (list, tuple)) and all(isinstance(t, str) for t in value):
            return [t.upper() for t in value]
        raise ValueError(f"row: column 'actions' must be a string of actions or a list of them, got {value!r}")

    def _score(self, answer: str, target: list[str]) -> float:
        return 1.0 if _scan_tokens(answer) == target else 0.0

    def reference(self, row: Mapping) -> str:
        return " ".join(self._target(row))


_KAREL_PAIRS = ("shown", "held_out", "all")


class KarelVerifier(Verifier):
    """Karel: the completion's program is run on the task's grids (see the module docstring).

    Args:
        pairs: which I/O pairs to check: ``"shown"`` (default), ``"held_out"`` or ``"all"``.
        partial: score the share of those pairs solved (default) instead of 1 only if all are.
        num_shown: shown pairs per row when the row has no ``num_grids`` column (default 5).
        max_markers, tick_budget: interpreter limits (the dataset's defaults).

    Example:
        >>> grid = lambda c: {"rows": 1, "cols": 3, "hero": f"0:{c}:east", "blocked": "", "markers": ""}
        >>> row = {"examples": [{"inpgrid_json": grid(0), "outgrid_json": grid(1)},
        ...                     {"inpgrid_json": grid(1), "outgrid_json": grid(2)}], "num_grids": 2}
        >>> v = KarelVerifier()
        >>> v.score("<answer>DEF run m( move m)</answer>", row), v.score("DEF run m( move move m)", row)
        (1.0, 0.0)
        >>> to_wall = "DEF run m( WHILE c( frontIsClear c) w( move w) m)"  # right on the second pair only
        >>> v.score(to_wall, row), KarelVerifier(partial=False).score(to_wall, row), v.score("DEF run m( move", row)
        (0.5, 0.0, 0.0)
    """

    domain = "karel"
    input_column = "examples"
    target_column = "examples"

    def __init__(self, *, pairs: str = "shown", partial: bool = True, num_shown: int = 5,
                 max_markers: int | None = None, tick_budget: int | None = None):
        from ..domains.karel.interpreter import DEFAULT_MAX_MARKERS, DEFAULT_TICK_BUDGET
        from ..validation import check_choice, check_int
        check_choice("pairs", pairs, _KAREL_PAIRS)
        if not isinstance(partial, bool):
            raise TypeError(f"partial must be a bool, got {type(partial).__name__}")
        self.pairs, self.partial = pairs, partial
        self.num_shown = check_int("num_shown", num_shown, min=1)
        self.max_markers = check_int("max_markers", DEFAULT_MAX_MARKERS if max_markers is None else max_markers, min=1)
        self.tick_budget = check_int("tick_budget", DEFAULT_TICK_BUDGET if tick_budget is None else tick_budget, min=1)

    def shown(self, row: Mapping) -> int:
        """How many of the row's pairs are shown: its ``num_grids`` column, else ``num_shown``."""
        n = row.get("num_grids")
        return int(n) if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else self.num_shown

    def _target(self, row: Mapping) -> list:
        from ..domains.karel.world import World
        examples = self._column(row, "examples")
        if not isinstance(examples, (list, tuple)) or not examples:
            raise ValueError(f"row: column 'examples' must be a non-empty list of I/O pairs, got {examples!r:.200}")
        k = self.shown(row)
        chosen = {"shown": examples[:k], "held_out": examples[k:], "all": examples}[self.pairs]
        if not chosen:
            raise ValueError(f"row: column 'examples' has no {self.pairs} pairs ({len(examples)} pairs, {k} shown)")
        try:
            return [(World.from_json(p["inpgrid_json"]), World.from_json(p["outgrid_json"])) for p in chosen]
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"row: column 'examples': each pair needs 'inpgrid_json' and 'outgrid_json' "
                             f"grids ({type(e).__name__}: {e})") from None

    def _score(self, answer: str, target: list) -> float:
        from ..domains.karel.dsl import parse
        from ..domains.karel.interpreter import compile_program, execute_fast
        program = compile_program(parse(answer))
        solved = 0
        for inp, out in target:
            res = execute_fast(program, inp, max_markers=self.max_markers, tick_budget=self.tick_budget)
            solved += res.ok and res.world.same_state(out)
        if self.partial:
            return solved / len(target)
        return 1.0 if solved == len(target) else 0.0

    def reference(self, row: Mapping) -> str:
        tokens = self._column(row, "program_tokens")
        return " ".join(tokens) if isinstance(tokens, (list, tuple)) else str(tokens)

    def __repr__(self) -> str:
        return f"KarelVerifier(pairs={self.pairs!r}, partial={self.partial})"


def _sorted_operands(node):
    from ..domains.thingtalk import to_string
    from ..structure import Node
    children = tuple(_sorted_operands(c) for c in node.children)
    if node.rule in ("and", "or"):
        keys = []
        for c in children:
            try:
                keys.append(to_string(c))
            except ValueError:  # a node the printer cannot print alone: keep the order
                return Node(node.label, children, node.kind, node.rule)
        children = tuple(c for _, c in sorted(zip(keys, children), key=lambda kc: kc[0]))
    return Node(node.label, children, node.kind, node.rule)


@functools.lru_cache(maxsize=65536)
def canonical_thingtalk(program: str) -> str:
    """The canonical form of a ThingTalk program: parsed, ``and`` / ``or`` operands sorted, printed.
    ``ValueError`` if it does not parse.

    Example:
        >>> canonical_thingtalk("now => ( ( @org.schema.Book.Book ) filter param:b:Number == NUMBER_0 "
        ...                     "and param:a:Number == NUMBER_1 ) => notify")
        'now => ( @org.schema.Book.Book ) filter param:a:Number == NUMBER_1 and param:b:Number == NUMBER_0 => notify'
    """
    from ..domains.thingtalk import parse, to_string
    return to_string(_sorted_operands(parse(program)))


class Schema2QAVerifier(Verifier):
    """Schema2QA: ThingTalk canonical-form equality (see the module docstring and :func:`canonical_thingtalk`).

    Example:
        >>> v = Schema2QAVerifier()
        >>> row = {"utterance": "show me books", "program": "now => @org.schema.Book.Book => notify"}
        >>> v.score("<answer> now  =>  ( @org.schema.Book.Book )  => notify </answer>", row)
        1.0
        >>> v.score("now => @org.schema.Book.Person => notify", row), v.score("now => =>", row)
        (0.0, 0.0)
    """

    domain = "schema2qa"
    input_column = "utterance"
    target_column = "program"

    def _target(self, row: Mapping) -> str:
        program = self._column(row, "program")
        try:
            return canonical_thingtalk(program)
        except (TypeError, ValueError) as e:
            raise ValueError(f"row: column 'program' is not a ThingTalk program: {e}") from None

    def _score(self, answer: str, target: str) -> float:
        return 1.0 if canonical_thingtalk(answer) == target else 0.0

    def reference(self, row: Mapping) -> str:
        return str(self._column(row, "program"))


#: domain name (as :func:`hf_synthsample.load_dataset` names it) -> verifier class
DOMAINS: dict[str, type] = {
    "calculator": CalculatorVerifier,
    "scan": ScanVerifier,
    "scan_star": ScanVerifier,
    "karel": KarelVerifier,
    "schema2qa": Schema2QAVerifier,
}


def verifier(domain: str, **options) -> Verifier:
    """The verifier of ``domain`` (one of :data:`DOMAINS`); ``options`` go to its class (Karel:
    ``pairs``, ``partial``, ``num_shown``, ``max_markers``, ``tick_budget``; the others take none).
    ``ValueError`` listing the domains for an unknown one.

    Example:
        >>> verifier("karel", pairs="all")
        KarelVerifier(pairs='all', partial=True)
        >>> verifier("cogs")
        Traceback (most recent call last):
        ...
        ValueError: domain: no verifier for 'cogs'; accepted domains: ['calculator', 'karel', 'scan', 'scan_star', 'schema2qa']
    """
    if isinstance(domain, Verifier):
        if options:
            raise TypeError("options apply to a domain name, not to a verifier that is already built")
        return domain
    if not isinstance(domain, str) or domain not in DOMAINS:
        raise ValueError(f"domain: no verifier for {domain!r}; accepted domains: {sorted(DOMAINS)}")
    cls = DOMAINS[domain]
    if options and cls is not KarelVerifier:
        raise TypeError(f"the {domain} verifier takes no options, got {sorted(options)}")
    v = cls(**options)
    if domain != cls.domain:  # scan_star
        v.domain = domain
    return v
