"""The settings of a train/test split (:class:`SplitSettings`) and of a sweep (:class:`SweepSettings`),
declared and validated once; read by the splitter, the split functions, cards and the CLI.

Example:
    >>> s = SplitSettings(method="mcd", language="sexpr", goal="0.3")
    >>> s.goal, s.goal.target, s.size_tolerance_share
    (Goal('0.3'), 0.3, 0.0)
    >>> SplitSettings(test_size=1.5)
    Traceback (most recent call last):
    ...
    ValueError: test_size must be < 1.0, got 1.5
    >>> SweepSettings(targets=parse_targets("0,0.2,0.4"), language="scan").restarts
    2
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..settings import Settings, setting
from ..structure.language import Language, check_language
from ..validation import check_float
from ._data import check_compound_weights

__all__ = ["Goal", "SplitSettings", "SweepSettings", "METHODS", "SIZE_TOLERANCE", "SWEEP_RESTARTS", "check_targets",
           "parse_targets", "settings_of"]

#: the split methods: the MCD search (``mcd``, ``tmcd``) and the standard splits
METHODS = ("mcd", "tmcd", "template", "length", "random")

#: default share of the rows the test side of a template or length split may be off by (MCD: 0)
SIZE_TOLERANCE = 0.05

#: further random starts of a sweep's search that stalls short of its target (SCAN, target 0.5:
#: seed 1's first start tops out at 0.490, its second reaches 0.498)
SWEEP_RESTARTS = 2

#: decimals that tell two sweep targets apart in config names (``dc_0.10``); closer targets are refused
TARGET_DECIMALS = 6

_SEARCH = {"method": ("mcd", "tmcd")}


@dataclass(frozen=True)
class Goal:
    """What the MCD search aims at: the highest D_C (``"max"``), the lowest (``"min"``) or a target.

    Example:
        >>> Goal.parse("min").value(0.4), float(Goal.parse(0.3).value(0.4)), Goal.of(None, False)
        (-0.4, -0.1..., Goal('max'))
    """

    kind: str = "max"
    target: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("max", "min", "target") or (self.kind == "target") != (self.target is not None):
            raise ValueError(f"Goal: kind 'max' or 'min' without a target, or 'target' with one; got {self!r}")

    @classmethod
    def parse(cls, value: Any, name: str = "goal") -> "Goal":
        """A :class:`Goal` from ``"max"``, ``"min"``, a number or its text (``"0.3"``: a target)."""
        if isinstance(value, Goal):
            return value
        if value in ("max", "min"):
            return cls(value)
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ValueError(f"{name}: expected 'max', 'min' or a compound divergence in [0, 1], got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be 'max', 'min' or a compound divergence in [0, 1], got "
                            f"{type(value).__name__} {value!r}")
        return cls("target", check_float(name, value, min=0.0, max=1.0))

    @classmethod
    def of(cls, target_divergence: float | None = None, minimize: bool = False) -> "Goal":
        """The goal of the functions' ``target_divergence`` / ``minimize`` arguments (checked, named)."""
        if not isinstance(minimize, bool):
            raise TypeError(f"minimize must be a bool, got {minimize!r}")
        if minimize and target_divergence is not None:
            raise ValueError("minimize and target_divergence: give one goal (the lowest D_C, or a D_C to reach), not both")
        if target_divergence is not None:
            return cls("target", check_float("target_divergence", target_divergence, min=0.0, max=1.0))
        return cls("min" if minimize else "max")

    @property
    def is_target(self) -> bool:
        return self.kind == "target"

    def value(self, dc: Any) -> Any:
        """How good a compound divergence (or an array of them) is for the goal: higher is better."""
        if self.kind == "max":
            return dc
        if self.kind == "min":
            return -dc
        return -np.abs(dc - self.target)

    def to_record(self) -> float | str:
        """``"max"``, ``"min"`` or the target (as results and cards record it)."""
        return self.target if self.is_target else self.kind

    def __str__(self) -> str:
        return f"{self.target:g}" if self.is_target else self.kind

    def __repr__(self) -> str:
        return f"Goal({str(self)!r})"


def _is_target(goal: Goal) -> bool:
    """--target-divergence D_C"""
    return goal.is_target


def _column(name: str, value: str) -> str:
    if not value:
        raise ValueError(f"{name} must be a non-empty column name, got {value!r}")
    return value


def _parse_weights(text: str) -> Any:
    """The CLI's ``--compound-weights``: ``example``, ``pool`` or ``none`` (unweighted)."""
    if text not in ("example", "pool", "none"):
        raise ValueError(f"--compound-weights: expected example, pool or none, got {text!r}")
    return False if text == "none" else text


def check_targets(targets: Any, name: str = "targets") -> list[float]:
    """A sweep's targets as floats: compound divergences in [0, 1], ascending, none closer than
    ``10**-TARGET_DECIMALS`` (they would name one config); ``0``: the lowest D_C found.

    Example:
        >>> check_targets([0, 0.25, 0.5])
        [0.0, 0.25, 0.5]
        >>> check_targets([0.5, 0.25])
        Traceback (most recent call last):
        ...
        ValueError: targets: must be sorted ascending without duplicates, got [0.5, 0.25]
    """
    if isinstance(targets, (str, bytes, Mapping)) or not isinstance(targets, Sequence) and not hasattr(targets, "tolist"):
        raise TypeError(f"{name} must be a list of compound divergences in [0, 1], got {type(targets).__name__} {targets!r}")
    values = targets.tolist() if hasattr(targets, "tolist") else list(targets)
    if not isinstance(values, list):  # a NumPy scalar
        raise TypeError(f"{name} must be a list of compound divergences in [0, 1], got {targets!r}")
    if not values:
        raise ValueError(f"{name}: give at least one compound divergence in [0, 1]")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{name} must hold numbers (compound divergences in [0, 1]), got {type(v).__name__} {v!r}")
        if not (0.0 <= float(v) <= 1.0):  # also NaN
            raise ValueError(f"{name}: {float(v)} is out of [0, 1] (a compound divergence is 1 - a Chernoff "
                             f"coefficient); got {values}")
        out.append(float(v))
    rounded = [round(v, TARGET_DECIMALS) for v in out]
    if any(b <= a for a, b in zip(rounded, rounded[1:])):
        raise ValueError(f"{name}: must be sorted ascending without duplicates, got {values}")
    return out


def parse_targets(text: str) -> tuple[float, ...]:
    """The CLI's ``--sweep 0,0.1,0.2``: comma-separated compound divergences."""
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"--sweep: expected comma-separated compound divergences in [0, 1] (e.g. 0,0.1,0.2), "
                         f"got {text!r}") from None


def _optional_bool(name: str, value: Any) -> bool | None:
    """``None``, ``True`` or ``False``, else a ``TypeError`` naming the field."""
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"{name} must be None (automatic), True or False, got {value!r}")
    return value


def _parse_optional_bool(text: str) -> bool | None:
    """The CLI's ``auto`` / ``on`` / ``off``."""
    choices = {"auto": None, "on": True, "off": False}
    if text not in choices:
        raise ValueError(f"accepted: {', '.join(choices)}, got {text!r}")
    return choices[text]


@dataclass(frozen=True)
class SplitSettings(Settings):
    """Everything a train/test split takes; options of the MCD search are refused for other methods."""

    method: str = setting("mcd", help="split method: mcd, tmcd (the MCD search), template, length or random",
                          choices=METHODS)
    test_size: float = setting(0.25, help="share of rows in test", min=0.0, max=1.0, min_inclusive=False,
                               max_inclusive=False)
    train_size: float | None = setting(
        None, help="share of rows in train; below 1 - test size the other rows are left out, as in Keysers et al.'s "
                   "MCD splits [all rows not in test]", min=0.0, max=1.0, min_inclusive=False, max_inclusive=False,
        applies_when=_SEARCH)
    seed: int = setting(0, help="random seed: the random start and the candidate draws; same seed, same split", min=0)
    column: str = setting("program", help="program column", check=lambda name, value: _column(name, value))
    language: str | Language | None = setting(
        None, help="structure language of the program column (thingtalk, scan, cogs, sql, sparql, lambda, funql, "
                   "python, sexpr, ...), a name or a hf_synthsample.structure.Language", kind="any", check=check_language)
    max_height: int = setting(2, help="height of the largest compound read from a program tree", min=1,
                              applies_when=_SEARCH)
    atoms_column: str | None = setting(None, help="list-of-atoms column instead of parsing the program column",
                                       applies_when=_SEARCH)
    compounds_column: str | None = setting(None, help="list-of-compounds column instead of parsing the program column",
                                           applies_when=_SEARCH)
    template_column: str | None = setting(None, help="template column (template method and report)")
    length_column: str | None = setting(None, help="numeric length column (length method and report; default: words "
                                                   "of the text column)")
    text_column: str | None = setting(None, help="text checked for leakage and measured in words [the program column]")
    compound_weights: Any = setting(
        None, help="how compounds are weighted in D_C: 'example' (Keysers et al.'s weight of each compound in each "
                   "example; the default for a language's compounds), 'pool' (one weight per compound), none "
                   "(False), or a mapping compound -> weight", kind="any", parse=_parse_weights,
        check=lambda name, value: check_compound_weights(value), metavar="{example,pool,none}", applies_when=_SEARCH)
    goal: Goal = setting(Goal(), help="MCD goal: 'max' (the highest compound divergence), 'min' (the lowest) or a "
                                      "compound divergence to reach from either side", kind="any",
                         check=lambda name, value: Goal.parse(value, name), parse=Goal.parse,
                         flag="--target-divergence", aliases=("--goal",), metavar="D_C|max|min", applies_when=_SEARCH)
    divergence_tolerance: float = setting(0.01, help="how far from the target divergence a split may be",
                                          min=0.0, max=1.0, applies_when={**_SEARCH, "goal": _is_target})
    max_atom_divergence: float = setting(0.02, help="bound on the atom divergence 1 - C_0.5; every test atom is "
                                                    "also in train", min=0.0, max=1.0, applies_when=_SEARCH)
    time_limit: float | None = setting(None, help="stop the search after this many seconds", min=0.0,
                                       min_inclusive=False, applies_when=_SEARCH)
    max_steps: int | None = setting(None, help="stop the search after this many swap steps", min=0,
                                    applies_when=_SEARCH)
    patience: int = setting(100, help="stop after this many rounds (32 swap steps, 16 hold-out tries) without a gain",
                            min=1, applies_when=_SEARCH)
    batch_size: int = setting(64, help="candidate moves scored per step", min=1, applies_when=_SEARCH)
    restarts: int = setting(0, help="further searches from other random starts while the last one stalled; the "
                                    "best is kept", min=0, applies_when=_SEARCH)
    bulk_rounds: bool | None = setting(
        None, help="whole-pool rounds (every structure's move scored, the best moved together) before the swap search; "
                   "None: for pools of 25,000 structures or more, False: the swap search alone", kind="any",
        check=lambda name, value: _optional_bool(name, value), parse=_parse_optional_bool, metavar="{auto,on,off}",
        applies_when=_SEARCH)
    num_proc: int | None = setting(None, help="processes parsing the program column (the same split whatever the "
                                              "number)", min=1, applies_when=_SEARCH)
    size_tolerance: float | None = setting(
        None, help="share of the rows the test size may be off by (rows of one structure, template or length move "
                   "together) [0 for mcd/tmcd, 0.05 for template/length]", min=0.0, max=0.5,
        applies_when={"method": ("mcd", "tmcd", "template", "length")})
    skip_unparsable: bool = setting(False, help="rows whose program does not parse go to train instead of raising",
                                    applies_when=_SEARCH)

    def _check(self) -> None:
        if self.train_size is not None and self.train_size > 1.0 - self.test_size + 1e-12:
            raise ValueError(f"train_size: {self.train_size} + test_size {self.test_size} is over 1; accepted: None "
                             f"(all the others) or a share in (0, {1.0 - self.test_size:.6g}]")

    @property
    def search(self) -> bool:
        """The method is the MCD search (``mcd`` or ``tmcd``)."""
        return self.method in _SEARCH["method"]

    @property
    def size_tolerance_share(self) -> float:
        """``size_tolerance``, or the method's default when it is ``None``."""
        if self.size_tolerance is not None:
            return self.size_tolerance
        return 0.0 if self.search else SIZE_TOLERANCE

    @property
    def weights_in_effect(self) -> Any:
        """The compound weights that apply (``None``: ``"example"`` for MCD on a language's compounds)."""
        w = self.compound_weights
        if w is None:
            return "example" if self.method == "mcd" and self.compounds_column is None else False
        return "example" if w is True else w

    def require_structure(self) -> None:
        """``ValueError`` unless the method can read the structure, or for a changed setting it ignores."""
        defaults = self.defaults()
        for name, spec in self.specs().items():
            allowed = (spec.applies_when or {}).get("method", METHODS)
            if self.method not in allowed and getattr(self, name) != defaults.get(name):
                raise ValueError(f"{name}: not used by the {self.method} method, only by {', '.join(allowed)}; "
                                 f"leave it at its default ({defaults.get(name)!r})")
        if self.search and self.language is None and not (self.atoms_column and self.compounds_column):
            raise ValueError(f"language: the {self.method} method needs the structure language of the program column "
                             f"{self.column!r} ({_accepted()}), or atoms_column and compounds_column")
        if self.method == "template" and self.language is None and self.template_column is None:
            raise ValueError(f"language: the template method needs the structure language of the program column "
                             f"{self.column!r} ({_accepted()}), or template_column")

    def to_record(self) -> dict[str, Any]:
        """The settings as a card records them: the weights and size tolerance in effect (``"none"``)."""
        record = super().to_record()
        w = self.weights_in_effect
        record["compound_weights"] = "none" if w is False else dict(w) if isinstance(w, Mapping) else w
        record["size_tolerance"] = self.size_tolerance_share
        if isinstance(self, SweepSettings):  # each target is its own goal
            del record["goal"]
        return record


def _accepted() -> str:
    """The accepted languages, for a message that asks for one."""
    from ..structure.language import languages

    return f"accepted: {', '.join(languages())}, or a hf_synthsample.structure.Language"


def settings_of(cls: type[SplitSettings], args: Sequence[Any], settings: SplitSettings | None,
                changes: Mapping[str, Any], *, positional: Sequence[str] = ("column", "language"),
                fixed: Mapping[str, Any] | None = None, name: str = "the split function") -> SplitSettings:
    """The settings a split function runs with: ``settings`` (``cls``' defaults when ``None``) changed by
    the values ``args`` gives by position (the fields ``positional``) and ``changes``; ``fixed``: what the
    function is (its ``method``), refused when a change or the settings say otherwise.

    Example:
        >>> settings_of(SplitSettings, ["commands", "scan"], None, {"seed": 3}, fixed={"method": "tmcd"}).changed()
        {'method': 'tmcd', 'seed': 3, 'column': 'commands', 'language': 'scan'}
    """
    if len(args) > len(positional):
        raise TypeError(f"{name} takes {', '.join(positional)} by position after the dataset, got {len(args)} "
                        "values; give the others by name")
    both = sorted(set(positional[:len(args)]) & set(changes))
    if both:
        raise TypeError(f"{name} got multiple values for argument {both[0]!r}")
    changes = {**dict(zip(positional, args)), **changes}
    for key, value in (fixed or {}).items():
        have = changes.get(key, getattr(settings, key, value))
        if have != value:
            raise ValueError(f"{key}: {name} makes {key} {value!r} splits, not {have!r}; for another {key} use "
                             f"MCDSplitter(settings).split")
        changes[key] = value
    if settings is None:
        return cls.build(**changes)
    if not isinstance(settings, cls):
        raise TypeError(f"settings must be a {cls.__name__}, got {type(settings).__name__}")
    return settings.replace(**changes)


@dataclass(frozen=True, kw_only=True)
class SweepSettings(SplitSettings):
    """A sweep: MCD splits of the same rows at each of ``targets``, each target its own goal."""

    targets: tuple[float, ...] = setting(help="compound divergences, ascending, in [0, 1] (0: the lowest the search "
                                              "finds), one split each", kind="any", parse=parse_targets,
                                         check=lambda name, value: tuple(check_targets(value, name)),
                                         flag="--sweep", metavar="D_C,D_C,...")
    divergence_tolerance: float = setting(0.01, help="how far from its target each split may be", min=0.0, max=1.0)
    restarts: int = setting(SWEEP_RESTARTS, help="further random starts, only for a search that stalls short of its "
                                                 "target", min=0)

    def _check(self) -> None:
        super()._check()
        if self.method != "mcd":
            raise ValueError(f"targets: only the mcd method makes splits at chosen divergences, not {self.method}")
        if self.goal != Goal():
            raise ValueError("goal: not used with --sweep (a sweep's targets: each is its own goal and config, "
                             "dc_0.10, ...)")
