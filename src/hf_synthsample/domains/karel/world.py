"""Karel worlds: a grid with walls, markers and the hero, in the field's two encodings.

* **Grid JSON** (Bunel et al.'s data): ``{"rows", "cols", "crashed", "hero": "r:c:north",
  "blocked": "r:c r:c ...", "markers": "r:c:n ..."}``; row 0 is the bottom row, so facing north
  means moving to ``row + 1``. Cells are listed row-major.
* **Tensor**: ``16 x 18 x 18``; channels 0-3 the hero facing north/east/south/west, 4 walls,
  5 the border frame around the grid, 6-15 a cell holding 1..10 markers. Cell ``(r, c)`` sits at
  ``[:, r + 1, c + 1]`` and the frame on the ring just outside the grid, so grids are at most
  16 x 16. The field stores it sparsely as ``"idx:1.0 ..."`` with ``idx = ch * 324 + row * 18 + col``.

Example:
    >>> w = World.from_json({"rows": 2, "cols": 3, "hero": "0:0:east", "blocked": "1:2", "markers": "0:1:2"})
    >>> w.to_json()["markers"], w.hero
    ('0:1:2', (0, 0, 1))
    >>> World.from_tensor(w.to_sparse_tensor()) == w
    True
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

import numpy as np

__all__ = ["DIRECTIONS", "TENSOR_SHAPE", "MAX_TENSOR_GRID", "World", "sparse_to_tensor", "tensor_to_sparse"]

DIRECTIONS: tuple[str, ...] = ("north", "east", "south", "west")
_DIR_INDEX = {d: i for i, d in enumerate(DIRECTIONS)}
TENSOR_SHAPE = (16, 18, 18)
MAX_TENSOR_GRID = 16
_WALL_CH, _FRAME_CH, _MARKER_CH0 = 4, 5, 6
_MAX_TENSOR_MARKERS = 10


def _grid_error(what: str) -> ValueError:
    return ValueError(f"grid: {what}")


def _int_field(data: Mapping, key: str, *, minimum: int) -> int:
    v = data.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise _grid_error(f"{key!r} must be an int >= {minimum}, got {v!r}")
    return v


@dataclasses.dataclass
class World:
    """A Karel world. ``hero`` is ``(row, col, direction)`` with direction 0..3 = north, east, south, west;
    ``walls`` a set of ``(row, col)``; ``markers`` maps ``(row, col)`` to a positive count."""

    rows: int
    cols: int
    hero: tuple[int, int, int]
    walls: frozenset = frozenset()
    markers: dict = dataclasses.field(default_factory=dict)
    crashed: bool = False

    def __post_init__(self):
        self.walls = frozenset(self.walls)
        self.markers = {k: v for k, v in self.markers.items() if v}
        self.validate()

    def validate(self) -> None:
        """``ValueError`` unless the hero and every wall and marker lie on the grid, consistently."""
        if self.rows < 1 or self.cols < 1:
            raise _grid_error(f"rows and cols must be >= 1, got {self.rows}x{self.cols}")
        r, c, d = self.hero
        if not (0 <= r < self.rows and 0 <= c < self.cols and 0 <= d < 4):
            raise _grid_error(f"hero {self.hero} is off the {self.rows}x{self.cols} grid or has no direction 0..3")
        for (wr, wc) in self.walls:
            if not (0 <= wr < self.rows and 0 <= wc < self.cols):
                raise _grid_error(f"wall {wr}:{wc} is off the {self.rows}x{self.cols} grid")
        if (r, c) in self.walls:
            raise _grid_error(f"the hero stands on a wall at {r}:{c}")
        for (mr, mc), n in self.markers.items():
            if not (0 <= mr < self.rows and 0 <= mc < self.cols):
                raise _grid_error(f"marker cell {mr}:{mc} is off the {self.rows}x{self.cols} grid")
            if (mr, mc) in self.walls:
                raise _grid_error(f"markers on a wall at {mr}:{mc}")
            if not isinstance(n, int) or n < 0:
                raise _grid_error(f"marker count at {mr}:{mc} must be a non-negative int, got {n!r}")

    def same_state(self, other: "World") -> bool:
        """Equal grid, walls, markers and hero (ignores ``crashed``)."""
        return (self.rows, self.cols, self.hero, self.walls, self.markers) == (
            other.rows, other.cols, other.hero, other.walls, other.markers)

    # ------------------------------------------------------------------------------ grid JSON
    def to_json(self) -> dict:
        """The grid-JSON dict."""
        r, c, d = self.hero
        return {
            "rows": self.rows,
            "cols": self.cols,
            "crashed": self.crashed,
            "hero": f"{r}:{c}:{DIRECTIONS[d]}",
            "blocked": " ".join(f"{wr}:{wc}" for wr, wc in sorted(self.walls)),
            "markers": " ".join(f"{mr}:{mc}:{n}" for (mr, mc), n in sorted(self.markers.items())),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> "World":
        """A world from grid JSON (a dict or its JSON text); ``ValueError`` naming the bad field."""
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as e:
                raise _grid_error(f"not valid JSON ({e})") from None
        if not isinstance(data, Mapping):
            raise _grid_error(f"expected a JSON object, got {type(data).__name__}")
        rows = _int_field(data, "rows", minimum=1)
        cols = _int_field(data, "cols", minimum=1)
        hero = data.get("hero")
        parts = hero.split(":") if isinstance(hero, str) else []
        if len(parts) != 3 or parts[2] not in _DIR_INDEX or not all(p.lstrip("-").isdigit() for p in parts[:2]):
            raise _grid_error(f"'hero' must look like 'row:col:north|east|south|west', got {hero!r}")
        walls = frozenset(_field_cells(data, "blocked", "row:col"))
        markers = {(r, c): n for r, c, n in _field_cells(data, "markers", "row:col:count")}
        crashed = data.get("crashed", False)
        if not isinstance(crashed, bool):
            raise _grid_error(f"'crashed' must be a bool, got {crashed!r}")
        return cls(rows, cols, (int(parts[0]), int(parts[1]), _DIR_INDEX[parts[2]]), walls, markers, crashed)

    # ------------------------------------------------------------------------------ tensor
    def to_tensor(self) -> np.ndarray:
        """The ``16 x 18 x 18`` float32 tensor (``ValueError`` for grids over 16 x 16 or > 10 markers)."""
        if self.rows > MAX_TENSOR_GRID or self.cols > MAX_TENSOR_GRID:
            raise _grid_error(f"the tensor encoding holds grids up to 16x16, got {self.rows}x{self.cols}")
        t = np.zeros(TENSOR_SHAPE, dtype=np.float32)
        r, c, d = self.hero
        t[d, r + 1, c + 1] = 1
        for wr, wc in self.walls:
            t[_WALL_CH, wr + 1, wc + 1] = 1
        for (mr, mc), n in self.markers.items():
            if n > _MAX_TENSOR_MARKERS:
                raise _grid_error(f"the tensor encoding holds up to 10 markers per cell, got {n} at {mr}:{mc}")
            t[_MARKER_CH0 + n - 1, mr + 1, mc + 1] = 1
        frame = t[_FRAME_CH]
        frame[0, : self.cols + 2] = frame[self.rows + 1, : self.cols + 2] = 1
        frame[: self.rows + 2, 0] = frame[: self.rows + 2, self.cols + 1] = 1
        return t

    def to_sparse_tensor(self) -> str:
        """The sparse string form ``"idx:1.0 ..."`` of :meth:`to_tensor`."""
        return tensor_to_sparse(self.to_tensor())

    @classmethod
    def from_tensor(cls, tensor: np.ndarray | str) -> "World":
        """A world from the tensor (array or sparse string); ``ValueError`` if it is not a valid encoding."""
        t = sparse_to_tensor(tensor) if isinstance(tensor, str) else np.asarray(tensor)
        if t.shape != TENSOR_SHAPE:
            raise _grid_error(f"tensor must have shape {TENSOR_SHAPE}, got {t.shape}")
        frame = np.argwhere(t[_FRAME_CH] > 0)
        if len(frame) == 0:
            raise _grid_error("tensor has no border frame (channel 5)")
        rows, cols = int(frame[:, 0].max()) - 1, int(frame[:, 1].max()) - 1
        if rows < 1 or cols < 1:
            raise _grid_error("tensor border frame encloses no cell")
        heroes = np.argwhere(t[:4] > 0)
        if len(heroes) != 1:
            raise _grid_error(f"tensor must mark exactly one hero cell in channels 0-3, found {len(heroes)}")
        d, hr, hc = (int(x) for x in heroes[0])
        walls = frozenset((int(r) - 1, int(c) - 1) for r, c in np.argwhere(t[_WALL_CH] > 0))
        markers = {}
        for ch, r, c in np.argwhere(t[_MARKER_CH0:] > 0):
            key = (int(r) - 1, int(c) - 1)
            if key in markers:
                raise _grid_error(f"tensor gives two marker counts for cell {key[0]}:{key[1]}")
            markers[key] = int(ch) + 1
        return cls(rows, cols, (hr - 1, hc - 1, d), walls, markers)


def _field_cells(data: Mapping, key: str, form: str) -> list[tuple[int, ...]]:
    """The ``form`` entries (``row:col``, ``row:col:count``) of a space-separated field, as ints."""
    v = data.get(key, "")
    if v is not None and not isinstance(v, str):
        raise _grid_error(f"{key!r} must be a space-separated string, got {type(v).__name__}")
    out = []
    for item in (v or "").split():
        p = item.split(":")
        if len(p) != form.count(":") + 1 or not all(x.lstrip("-").isdigit() for x in p):
            raise _grid_error(f"{key!r} entries must look like {form!r}, got {item!r}")
        out.append(tuple(map(int, p)))
    return out


def tensor_to_sparse(tensor: np.ndarray) -> str:
    """``"idx:1.0 ..."`` for the non-zero entries of a ``16 x 18 x 18`` tensor."""
    flat = np.asarray(tensor).reshape(-1)
    return " ".join(f"{i}:{float(flat[i])}" for i in np.flatnonzero(flat))


def sparse_to_tensor(text: str) -> np.ndarray:
    """The dense ``16 x 18 x 18`` tensor of a sparse ``"idx:value ..."`` string."""
    t = np.zeros(int(np.prod(TENSOR_SHAPE)), dtype=np.float32)
    for item in text.split():
        idx, _, val = item.partition(":")
        try:
            i, v = int(idx), float(val)
        except ValueError:
            raise _grid_error(f"sparse tensor entries must look like 'idx:value', got {item!r}") from None
        if not 0 <= i < t.size:
            raise _grid_error(f"sparse tensor index {i} is outside 0..{t.size - 1}")
        t[i] = v
    return t.reshape(TENSOR_SHAPE)
