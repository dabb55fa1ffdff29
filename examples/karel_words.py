"""Karel I/O pairs as words, for a seq2seq program synthesizer (``examples/karel_io.py``).

A task's shown I/O pairs become one source text and its program the target:

* :func:`serialize_pair` (``--frame absolute``): grid size, hero cell and direction, wall cells,
  marker cells with counts; for the output only the hero and the marker cells that changed (walls
  never change);
* :func:`serialize_pair_egocentric` (``--frame egocentric``): the same, with every cell an offset
  ahead/right of Karel's input cell and facing, the distances to the four borders and the output
  facing as quarter turns: lossless, and the same action gives the same words wherever Karel
  stands, as a CNN's translation equivariance gives Bunel et al.'s grid encoder;
* :func:`add_text` (``Dataset.map(batched=True)``) writes ``source`` and ``target``; the uniform
  model sees a uniform number of shown grids (1..5) per task (:func:`num_grids_for`);
  :func:`vocabulary` lists every word, for the word tokenizer.
"""

from __future__ import annotations

import hashlib

__all__ = ["DIRECTIONS", "FRAMES", "add_text", "num_grids_for", "serialize_pair", "serialize_pair_egocentric",
           "serialize_task", "vocabulary"]

DIRECTIONS = ("north", "east", "south", "west")


def _markers(grid: dict) -> dict[str, int]:
    out = {}
    for item in grid["markers"].split():
        r, c, n = item.split(":")
        out[f"{r}_{c}"] = int(n)
    return out


def _hero(grid: dict) -> list[str]:
    r, c, d = grid["hero"].split(":")
    return [f"{r}_{c}", d]


def serialize_pair(pair: dict) -> list[str]:
    """One I/O pair as words: ``IN R<rows> C<cols> <hero cell> <dir> WALLS <cells> MARKERS <cell x<n>>...
    OUT <hero cell> <dir> DIFF <cell x<n>>...`` (cells ``r_c``; the output lists only changed marker cells).

    Example:
        >>> grid = {"rows": 2, "cols": 3, "hero": "0:1:east", "blocked": "1:2", "markers": "0:0:2"}
        >>> out = dict(grid, hero="0:2:east", markers="0:0:2 0:2:1")
        >>> " ".join(serialize_pair({"inpgrid_json": grid, "outgrid_json": out}))
        'IN R2 C3 0_1 east WALLS 1_2 MARKERS 0_0 x2 OUT 0_2 east DIFF 0_2 x1'
    """
    inp = pair["inpgrid_json"]
    return _pair_words(pair, [f"R{inp['rows']}", f"C{inp['cols']}", *_hero(inp)], _hero(pair["outgrid_json"]),
                       lambda cell: cell.replace(":", "_"), lambda word: tuple(map(int, word.split("_"))), False)


def _pair_words(pair: dict, head: list[str], hero_out: list[str], name, key, sort_all: bool) -> list[str]:
    """``IN <head> WALLS <cells> MARKERS <cell x<n>>... OUT <hero_out> DIFF <cell x<n>>...``, the words of
    both frames: a cell (``r:c`` or ``r_c``) is written ``name(cell)``; the changed marker cells are listed by
    ``key`` of that word, the walls and input markers too where ``sort_all`` (else as the grid lists them)."""
    inp, out = pair["inpgrid_json"], pair["outgrid_json"]
    before, after = _markers(inp), _markers(out)

    def listed(cells):
        return sorted(cells, key=lambda cell: key(name(cell))) if sort_all else list(cells)

    words = ["IN", *head, "WALLS", *(name(cell) for cell in listed(inp["blocked"].split())), "MARKERS"]
    for cell in listed(before):
        words += [name(cell), f"x{before[cell]}"]
    words += ["OUT", *hero_out, "DIFF"]
    for cell in sorted(set(before) | set(after), key=lambda cell: key(name(cell))):
        if before.get(cell, 0) != after.get(cell, 0):
            words += [name(cell), f"x{after.get(cell, 0)}"]
    return words


#: (forward, right) unit vectors as (row, col) steps for each facing direction (north is row + 1)
_FRAME = {"north": ((1, 0), (0, 1)), "east": ((0, 1), (-1, 0)), "south": ((-1, 0), (0, -1)), "west": ((0, -1), (1, 0))}
FRAMES = ("absolute", "egocentric")


def serialize_pair_egocentric(pair: dict) -> list[str]:
    """One I/O pair as words in Karel's frame of reference (the input's hero cell and facing):
    ``IN F<k> B<k> L<k> R<k> WALLS <cells> MARKERS <cell x<n>>... OUT <cell> T<q> DIFF <cell x<n>>...``
    with cells as ``<ahead>_<right>`` offsets (``+1_+0`` is the cell in front), ``F/B/L/R<k>`` the
    cells between Karel and the border ahead, behind, left and right, and ``T<q>`` the output
    facing as quarter turns clockwise. Lossless (the grid, Karel's cell and facing can be rebuilt),
    and the same action gives the same words wherever Karel stands, as a CNN's translation
    equivariance gives Bunel et al.'s grid encoder.

    Example:
        >>> grid = {"rows": 2, "cols": 3, "hero": "0:1:east", "blocked": "1:2", "markers": "0:0:2"}
        >>> out = dict(grid, hero="0:2:east", markers="0:0:2 0:2:1")
        >>> " ".join(serialize_pair_egocentric({"inpgrid_json": grid, "outgrid_json": out}))
        'IN F1 B1 L1 R0 WALLS +1_-1 MARKERS -1_+0 x2 OUT +1_+0 T0 DIFF +1_+0 x1'
    """
    inp, out = pair["inpgrid_json"], pair["outgrid_json"]
    hr, hc, d = inp["hero"].split(":")
    hr, hc = int(hr), int(hc)
    (fr, fc), (rr, rc) = _FRAME[d]

    def rel(cell: str) -> str:
        r, c = (int(x) for x in cell.replace(":", "_").split("_")[:2])
        dr, dc = r - hr, c - hc
        return f"{dr * fr + dc * fc:+d}_{dr * rr + dc * rc:+d}"

    def reach(dr: int, dc: int) -> int:  # cells from Karel to the border along (dr, dc)
        k, r, c = 0, hr + dr, hc + dc
        while 0 <= r < inp["rows"] and 0 <= c < inp["cols"]:
            k, r, c = k + 1, r + dr, c + dc
        return k

    orr, occ, od = out["hero"].split(":")
    return _pair_words(pair, [f"F{reach(fr, fc)}", f"B{reach(-fr, -fc)}", f"L{reach(-rr, -rc)}", f"R{reach(rr, rc)}"],
                       [rel(f"{orr}_{occ}"), f"T{(DIRECTIONS.index(od) - DIRECTIONS.index(d)) % 4}"], rel,
                       _offset_key, True)


def _offset_key(word: str) -> tuple[int, int]:
    """Cells nearest Karel first (then ahead before behind, left before right)."""
    f, r = (int(x) for x in word.split("_"))
    return (abs(f) + abs(r), -f, r)


def serialize_task(examples: list[dict], num_grids: int = 5, frame: str = "absolute") -> str:
    """The first ``num_grids`` (shown) pairs of a task, serialised (``frame``: :func:`serialize_pair`
    or :func:`serialize_pair_egocentric`) and joined with ``|``."""
    one = serialize_pair if frame == "absolute" else serialize_pair_egocentric
    return " | ".join(" ".join(one(p)) for p in examples[:num_grids])


def vocabulary(max_grid_size: int, max_markers: int = 10, frame: str = "absolute") -> list[str]:
    """Every word :func:`serialize_task` and the programs can produce for grids up to ``max_grid_size``."""
    from hf_synthsample.domains.karel.dsl import PROGRAM_TOKENS

    g = max_grid_size
    words = ["IN", "OUT", "WALLS", "MARKERS", "DIFF", "|"]
    if frame == "absolute":
        words += list(DIRECTIONS)
        words += [f"R{k}" for k in range(1, g + 1)] + [f"C{k}" for k in range(1, g + 1)]
        words += [f"{r}_{c}" for r in range(g) for c in range(g)]
    else:
        words += [f"{side}{k}" for side in "FBLR" for k in range(g)] + [f"T{q}" for q in range(4)]
        words += [f"{f:+d}_{r:+d}" for f in range(1 - g, g) for r in range(1 - g, g)]
    words += [f"x{n}" for n in range(max_markers + 1)]
    return words + list(PROGRAM_TOKENS)


def num_grids_for(guid: str, seed: int) -> int:
    """A stable uniform draw from 1..5 per task (the uniform model's number of shown grids)."""
    return 1 + hashlib.blake2b(f"{seed}\x00{guid}".encode(), digest_size=8).digest()[0] % 5


def add_text(batch: dict, *, uniform_grids: bool = False, seed: int = 0, frame: str = "absolute") -> dict:
    """``source`` (serialised shown pairs) and ``target`` (program tokens) for ``Dataset.map(batched=True)``."""
    sources = []
    for guid, examples in zip(batch["guid"], batch["examples"]):
        sources.append(serialize_task(examples, num_grids_for(guid, seed) if uniform_grids else 5, frame))
    return {"source": sources, "target": [" ".join(t) for t in batch["program_tokens"]]}
