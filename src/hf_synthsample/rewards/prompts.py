"""Dataset rows as chat prompts for RL fine-tuning (TRL's conversational ``prompt`` column).

Each domain has a default instruction (:data:`DEFAULT_INSTRUCTIONS`), a template whose ``{input}``
is the row's input (:func:`render_input`): Calculator the ``expression``, SCAN the ``commands``,
Schema2QA the ``utterance``, Karel its shown I/O grids (the first ``num_grids`` pairs of
``examples``, 5 without that column), each as ``rows``, ``cols``, ``hero`` (``row:col:direction``,
row 0 at the bottom), ``walls`` and ``markers`` (``row:col:count``). Every default instruction asks
for the final answer in the ``<answer>...</answer>`` tag the verifiers read
(:mod:`hf_synthsample.rewards.normalize`).

Example:
    >>> to_prompt({"expression": "1+2*3", "answer": 7}, "calculator")  # doctest: +ELLIPSIS
    [{'role': 'user', 'content': 'Compute the value of this arithmetic expression modulo 10 ...Expression: 1+2*3...'}]
    >>> to_prompt({"commands": "walk"}, "scan", instruction="Do: {input}", system="Be brief.")
    [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Do: walk'}]
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from .normalize import tagged
from .verifiers import DOMAINS, verifier

__all__ = ["DEFAULT_INSTRUCTIONS", "render_input", "to_prompt", "to_prompts"]

_TAG_NOTE = "Put your final answer inside <answer></answer> tags, e.g. <answer>{example}</answer>."

#: domain -> default instruction, a ``str.format`` template with the field ``{input}``
DEFAULT_INSTRUCTIONS: dict[str, str] = {
    "calculator": (
        "Compute the value of this arithmetic expression modulo 10 (a single digit from 0 to 9). "
        "* binds tighter than + and -, and operators of equal precedence group from the left.\n\n"
        "Expression: {input}\n\n" + _TAG_NOTE.format(example="4")
    ),
    "scan": (
        "Translate the command into its sequence of actions (I_WALK, I_LOOK, I_RUN, I_JUMP, I_TURN_LEFT, "
        "I_TURN_RIGHT, ...), separated by spaces.\n\nCommand: {input}\n\n"
        + _TAG_NOTE.format(example="I_TURN_LEFT I_WALK")
    ),
    "karel": (
        "Write a Karel program that turns each input grid into its output grid. Programs use the token "
        "syntax DEF run m( ... m) with the actions move, turnLeft, turnRight, pickMarker, putMarker and the "
        "constructs REPEAT R=k r( ... r), WHILE c( cond c) w( ... w), IF c( cond c) i( ... i), "
        "IFELSE c( cond c) i( ... i) ELSE e( ... e), where cond is frontIsClear, leftIsClear, rightIsClear, "
        "markersPresent, noMarkersPresent or not c( cond c). Grids give rows and cols, the hero as "
        "row:col:direction (row 0 is the bottom row), walls as row:col and markers as row:col:count.\n\n"
        "{input}\n\n" + _TAG_NOTE.format(example="DEF run m( move m)")
    ),
    "schema2qa": (
        "Translate the question into a ThingTalk program (space-separated tokens, e.g. "
        "now => ( @org.schema.Book.Book ) filter param:numberOfPages:Number >= NUMBER_0 => notify).\n\n"
        "Question: {input}\n\n" + _TAG_NOTE.format(example="now => @org.schema.Book.Book => notify")
    ),
}
DEFAULT_INSTRUCTIONS["scan_star"] = DEFAULT_INSTRUCTIONS["scan"]


def _grid_line(grid: Any) -> str:
    from ..domains.karel.world import World
    g = World.from_json(grid).to_json()
    return (f"rows={g['rows']} cols={g['cols']} hero={g['hero']} walls={g['blocked'] or '-'} "
            f"markers={g['markers'] or '-'}")


def render_input(row: Mapping, domain: str) -> str:
    """The text of a row's input that a prompt shows (``ValueError`` naming a missing column).

    Example:
        >>> grid = {"rows": 1, "cols": 2, "hero": "0:0:east", "blocked": "", "markers": "0:1:2"}
        >>> print(render_input({"examples": [{"inpgrid_json": grid, "outgrid_json": grid}], "num_grids": 1}, "karel"))
        Example 1
        input:  rows=1 cols=2 hero=0:0:east walls=- markers=0:1:2
        output: rows=1 cols=2 hero=0:0:east walls=- markers=0:1:2
    """
    v = verifier(domain)
    if not isinstance(row, Mapping):
        raise TypeError(f"row must be a mapping of column -> value, got {type(row).__name__}")
    column = v.input_column
    if row.get(column) is None:
        raise ValueError(f"row: a {domain} prompt needs the column {column!r}; the row has {sorted(map(str, row))}")
    if domain != "karel":
        return str(row[column])
    pairs = row[column][: v.shown(row)]
    lines = []
    try:
        for i, pair in enumerate(pairs, 1):
            lines += [f"Example {i}", f"input:  {_grid_line(pair['inpgrid_json'])}",
                      f"output: {_grid_line(pair['outgrid_json'])}"]
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"row: column 'examples': each pair needs 'inpgrid_json' and 'outgrid_json' grids "
                         f"({type(e).__name__}: {e})") from None
    return "\n".join(lines)


def _instruction(domain: str, instruction: str | None) -> str:
    if domain not in DOMAINS:
        verifier(domain)  # the ValueError listing the domains
    text = DEFAULT_INSTRUCTIONS[domain] if instruction is None else instruction
    if not isinstance(text, str) or "{input}" not in text:
        raise ValueError(f"instruction must be a string with an '{{input}}' field, got {instruction!r}")
    return text


def to_prompt(row: Mapping, domain: str, *, instruction: str | None = None, system: str | None = None) -> list[dict]:
    """A row as chat messages: an optional ``system`` message, then the ``user`` message
    ``instruction.format(input=render_input(row, domain))`` (default: :data:`DEFAULT_INSTRUCTIONS`).

    Example:
        >>> to_prompt({"utterance": "books"}, "schema2qa", instruction="Q: {input}")
        [{'role': 'user', 'content': 'Q: books'}]
    """
    text = _instruction(domain, instruction).format(input=render_input(row, domain))
    return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]


def _prompt_batch(batch: Mapping[str, list], *, domain: str, instruction: str, system: str | None, column: str,
                  completion: str | None) -> dict:
    n = len(next(iter(batch.values()))) if batch else 0
    rows = [{k: v[i] for k, v in batch.items()} for i in range(n)]
    out = {column: [to_prompt(r, domain, instruction=instruction, system=system) for r in rows]}
    if completion:
        v = verifier(domain)
        out[completion] = [[{"role": "assistant", "content": tagged(v.reference(r))}] for r in rows]
    return out


def to_prompts(dataset, domain: str, *, instruction: str | None = None, system: str | None = None,
               column: str = "prompt", completion: str | None = None, **map_kwargs):
    """``dataset`` (a ``Dataset``, ``DatasetDict`` or iterable one) with a chat ``prompt`` column added
    by a batched ``map`` (:func:`to_prompt` per row); every other column stays, for the reward function.

    Args:
        instruction, system: as in :func:`to_prompt`.
        column: the name of the new column (TRL reads ``"prompt"``).
        completion: also add this column with the correct answer as an assistant message in the answer
            tag (``"completion"`` gives TRL's prompt-completion form, for a supervised warm-up).
        map_kwargs: passed to ``dataset.map`` (``num_proc``, ``desc``...).

    Example:
        >>> import datasets
        >>> ds = datasets.Dataset.from_dict({"expression": ["1+2"], "answer": [3]})
        >>> out = to_prompts(ds, "calculator", completion="completion")
        >>> out.column_names, out[0]["completion"]
        (['expression', 'answer', 'prompt', 'completion'], [{'role': 'assistant', 'content': '<answer>3</answer>'}])
    """
    text = _instruction(domain, instruction)
    fn = functools.partial(_prompt_batch, domain=domain, instruction=text, system=system, column=column,
                           completion=completion)
    return dataset.map(fn, batched=True, **map_kwargs)
