"""Settings objects: one frozen dataclass per job, declared once and read by every layer.

Each field of a :class:`Settings` subclass is declared with :func:`setting` (help, bounds or
choices, CLI flag). From the fields come the validation (once, at construction), the
``get_params`` / ``set_params`` of :class:`Estimator`, the provenance record
(:meth:`Settings.to_record`) and the CLI options (:func:`add_arguments` /
:func:`settings_from_args`), so the four cannot drift apart.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Draw(Settings):
    ...     size: float = setting(0.25, help="share of rows drawn", min=0.0, max=1.0, min_inclusive=False)
    ...     seed: int = setting(0, help="random seed", min=0)
    >>> Draw(size=0.5).get_params()
    {'size': 0.5, 'seed': 0}
    >>> Draw(size=2)
    Traceback (most recent call last):
    ...
    ValueError: size must be <= 1.0, got 2.0
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_arguments(parser, Draw)
    >>> settings_from_args(Draw, parser.parse_args(["--size", "0.1"]))
    Draw(size=0.1, seed=0)
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator, Mapping

from .validation import check_choice, check_float, check_int, check_str_tuple

__all__ = ["Estimator", "FrozenMapping", "Settings", "Spec", "add_arguments", "applies", "clone", "freeze", "setting",
           "settings_from_args", "signature_from"]


@dataclass(frozen=True)
class Spec:
    """What a field means: its help, bounds or choices, and how the CLI spells it.

    ``kind`` is inferred from the annotation when not given (``tuple[str, ...]`` -> ``"strs"``;
    ``X | None`` sets ``none``). ``check(name, value) -> value`` validates what the kinds cannot.
    ``applies_when`` maps another field to the values under which this one means something
    (``{"method": ("mcd", "tmcd")}``), or to a predicate whose docstring says where: a CLI option
    given outside them is refused. ``cli``: ``True``, or a string saying why there is no option.
    ``flatten``: the field holds settings (its default's class) whose fields may also be given by their own
    names where the holder has no field of that name (``Curve(targets=...)`` for ``Curve(sweep__targets=...)``).
    """

    help: str
    kind: str | None = None
    min: float | None = None
    max: float | None = None
    min_inclusive: bool = True
    max_inclusive: bool = True
    choices: tuple | None = None
    none: bool | None = None
    check: Callable[[str, Any], Any] | None = None
    flag: str | None = None
    aliases: tuple[str, ...] = ()
    cli: bool | str = True
    parse: Callable[[str], Any] | None = None
    metavar: str | None = None
    applies_when: Mapping[str, tuple | Callable[[Any], bool]] | None = None
    flatten: bool = False


def setting(default: Any = dataclasses.MISSING, *, help: str, **spec: Any) -> Any:
    """Declare a settings field: its default, help text and :class:`Spec` (bounds, choices, flag...)."""
    if "choices" in spec and spec["choices"] is not None:
        spec["choices"] = tuple(spec["choices"])
    return dataclasses.field(default=default, metadata={"setting": Spec(help=help, **spec)})


def _infer(annotation: Any) -> tuple[str, bool]:
    """(kind, accepts None) of a field's resolved annotation."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    none = type(None) in args
    if none and origin in (typing.Union, getattr(types, "UnionType", None)):
        rest = [a for a in args if a is not type(None)]
        kind, _ = _infer(rest[0]) if len(rest) == 1 else ("any", False)
        return kind, True
    if origin is typing.Literal:
        return "choice", False
    if origin is tuple and args and all(a is str for a in args if a is not Ellipsis):
        return "strs", False
    for t, kind in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str")):
        if annotation is t:
            return kind, False
    return "any", False


class FrozenMapping(Mapping):
    """A read-only copy of a mapping, as frozen settings hold one (a ``dict`` given for a field).

    Unlike ``types.MappingProxyType`` it pickles and deep-copies (worker processes, ``sklearn.base.clone``),
    and it hashes when its values do. It equals any mapping with the same items.

    Example:
        >>> m = FrozenMapping({"length": 3})
        >>> m["length"], m == {"length": 3}, dict(m)
        (3, True, {'length': 3})
        >>> m["length"] = 4
        Traceback (most recent call last):
        ...
        TypeError: 'FrozenMapping' object does not support item assignment
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping | Any = (), /) -> None:
        object.__setattr__(self, "_data", dict(data))

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Any) -> bool:
        return key in self._data

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __reduce__(self):
        return (type(self), (self._data,))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"


def freeze(value: Any) -> Any:
    """An immutable copy of ``value``, as frozen settings hold it: a list as a tuple, a ``dict`` as a
    :class:`FrozenMapping`, a set as a ``frozenset`` (inside them too); anything else as given.

    Example:
        >>> freeze({"a": [1, 2], "b": {3}})
        FrozenMapping({'a': (1, 2), 'b': frozenset({3})})
    """
    if isinstance(value, (list, tuple)) and (type(value) in (list, tuple)):  # not a named tuple
        items = tuple(freeze(v) for v in value)
        return value if type(value) is tuple and all(a is b for a, b in zip(items, value)) else items
    if isinstance(value, (set, frozenset)) and type(value) in (set, frozenset):
        items = frozenset(freeze(v) for v in value)
        return value if type(value) is frozenset and items == value else items
    if isinstance(value, dict) or isinstance(value, types.MappingProxyType):
        return FrozenMapping({k: freeze(v) for k, v in value.items()})
    if type(value) is FrozenMapping:
        items = {k: freeze(v) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else FrozenMapping(items)
    return value


def _same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same value, down to the types of their items (then the one given is kept)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, frozenset):
        return a == b and sorted(map(repr, a)) == sorted(map(repr, b))
    if isinstance(a, Mapping):
        return list(a) == list(b) and all(type(x) is type(y) for x, y in zip(a, b)) and all(_same(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:  # an array's elementwise ==
        return False


@dataclass(frozen=True)
class Settings:
    """Base class of the settings dataclasses: validates every field once, at construction."""

    _specs_cache: ClassVar[dict] = {}
    _flat_cache: ClassVar[dict] = {}

    # ------------------------------------------------------------------ the fields' declarations
    @classmethod
    def specs(cls) -> dict[str, Spec]:
        """Field name -> its :class:`Spec`, with ``kind`` and ``none`` resolved, in declaration order."""
        cached = Settings._specs_cache.get(cls)
        if cached is None:
            hints = typing.get_type_hints(cls)
            cached = {}
            for f in dataclasses.fields(cls):
                spec = f.metadata.get("setting") or Spec(help="", kind="any", cli="not a setting")
                kind, none = _infer(hints.get(f.name, Any))
                if spec.choices is not None and spec.kind is None:
                    kind = "choice"
                cached[f.name] = dataclasses.replace(
                    spec, kind=spec.kind or kind, none=none if spec.none is None else spec.none)
            Settings._specs_cache[cls] = cached
        return cached

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Field name -> default value (fields without a default are left out)."""
        out = {}
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
        return out

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        # each field checked, then held as an immutable copy (a list as a tuple, a dict as a FrozenMapping); a
        # value given already in that form is held as given (``sklearn.base.clone`` checks ``is``)
        for name, spec in self.specs().items():
            value = getattr(self, name)
            checked = freeze(_check_value(name, value, spec))
            if checked is not value and not _same(checked, value):
                object.__setattr__(self, name, checked)
        self._check()

    def _check(self) -> None:
        """Checks across fields (subclasses override); raise ``ValueError`` naming the fields."""

    # ------------------------------------------------------------------ reading and changing
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Field name -> value, in declaration order; ``deep``: also ``field__name`` -> value of the fields of a
        field that holds settings or an estimator (scikit-learn's ``get_params``)."""
        return _params(self, self.specs(), deep)

    @classmethod
    def build(cls, **params: Any) -> "Settings":
        """The settings of ``params``: fields, ``field__name`` (a field of the settings a field holds, from its
        default) and the fields of a ``flatten`` field by their own names (as :meth:`replace`)."""
        direct, nested = cls._route(params, TypeError)  # as Python refuses an unknown keyword
        settings = cls(**direct)
        return settings.replace(**{f"{h}__{k}": v for h, sub in nested.items() for k, v in sub.items()}) \
            if nested else settings

    @classmethod
    def flattened(cls) -> dict[str, str]:
        """Name -> the ``flatten`` field whose settings have it (a name of this class's own excepted)."""
        if cls not in Settings._flat_cache:
            specs = cls.specs()
            Settings._flat_cache[cls] = {n: f for f, spec in specs.items() if spec.flatten
                                         for n in type(cls.defaults()[f]).specs() if n not in specs}
        return Settings._flat_cache[cls]

    @classmethod
    def _route(cls, changes: Mapping[str, Any], error: type[Exception] = ValueError) -> tuple[dict, dict]:
        """``(fields, {field: {name: value}})``: ``changes`` split into this class's fields and those of the
        settings its fields hold (``field__name``, or ``name`` alone for a ``flatten`` field that has it)."""
        specs, flat = cls.specs(), cls.flattened()
        direct: dict = {}
        nested: dict = {}
        for key, value in changes.items():
            head, sep, rest = key.partition("__")
            if sep and head in specs:
                nested.setdefault(head, {})[rest] = value
            elif key in flat:
                nested.setdefault(flat[key], {})[key] = value
            else:
                direct[key] = value
        unknown = [k for k in direct if k not in specs]
        if unknown:
            known = [*specs, *flat]
            raise error(f"{cls.__name__} has no setting {unknown[0]!r}; its settings are: {', '.join(known)}")
        return direct, nested

    def replace(self, **changes: Any) -> "Settings":
        """A validated copy with ``changes`` applied (``field__name``: a field of the settings or estimator a
        field holds; a ``flatten`` field's fields also by their own names); an unknown name is a ``ValueError``
        listing the known ones."""
        direct, nested = self._route(changes)
        for head, sub in nested.items():
            inner = direct.get(head, getattr(self, head))
            if isinstance(inner, Settings):
                direct[head] = inner.replace(**sub)
            elif isinstance(inner, Estimator):
                direct[head] = clone(inner).set_params(**sub)
            else:
                raise ValueError(f"{head}__{next(iter(sub))}: {head} holds {type(inner).__name__} {inner!r}, not "
                                 "settings or an estimator; give its value as a whole")
        return dataclasses.replace(self, **direct)

    def to_record(self) -> dict[str, Any]:
        """The settings as JSON-safe values, for provenance records and cards."""
        return {name: _json_safe(getattr(self, name)) for name in self.specs()}

    def changed(self) -> dict[str, Any]:
        """The fields whose value differs from the default (what ``repr`` shows)."""
        defaults = self.defaults()
        return {k: v for k, v in self.get_params(deep=False).items() if k not in defaults or defaults[k] != v}


def _params(owner: Any, names: Any, deep: bool) -> dict[str, Any]:
    out = {}
    for name in names:
        value = out[name] = getattr(owner, name)
        if deep and isinstance(value, (Settings, Estimator)):
            out.update((f"{name}__{k}", v) for k, v in value.get_params(deep=True).items())
    return out


def _check_value(name: str, value: Any, spec: Spec) -> Any:
    if value is None and spec.none:
        return value
    kind = spec.kind
    if kind == "int":
        value = check_int(name, value, min=spec.min, max=spec.max)
    elif kind == "float":
        value = check_float(name, value, min=spec.min, max=spec.max, min_inclusive=spec.min_inclusive,
                            max_inclusive=spec.max_inclusive)
    elif kind in ("bool", "str") and not isinstance(value, {"bool": bool, "str": str}[kind]):
        raise TypeError(f"{name} must be a {kind}, got {type(value).__name__} {value!r}")
    elif kind == "strs":
        value = check_str_tuple(name, value, spec.choices)
    if spec.choices is not None and kind != "strs":
        check_choice(name, value, spec.choices)
    if spec.check is not None:
        value = spec.check(name, value)
    return value


def _json_safe(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    if hasattr(value, "to_record"):  # Settings included
        return value.to_record()
    if callable(value):
        return f"{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', repr(value))}"
    return str(value)


# ---------------------------------------------------------------------------------- estimators
class Estimator:
    """Base of the estimator-like objects, configured by one :class:`Settings` (scikit-learn style).

    ``Estimator(settings, *positional, **params)``: the params override the settings. Fields read as
    attributes (``est.seed``), and assigning one (``est.seed = 3``) is :meth:`set_params` (validated).
    Results of the last call live in attributes ending in ``_``. The constructor's signature lists the
    fields (keyword-only, with their defaults; ``positional`` ones may be given by position), so
    ``inspect.signature`` and ``sklearn.base.clone`` see the parameters.
    """

    settings_class: ClassVar[type[Settings]]
    #: fields that may be given by position (before the keyword-only ones)
    positional: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *args: Any, **params: Any) -> None:
        cls, name = self.settings_class, type(self).__name__
        settings = None
        if args and (args[0] is None or isinstance(args[0], Settings) or not self.positional):  # the settings
            settings, args = args[0], args[1:]
        if len(args) > len(self.positional):
            raise TypeError(f"{name} takes {len(self.positional)} positional argument(s) "
                            f"({', '.join(self.positional) or 'none'}) besides its settings, got {len(args)}; "
                            "give the others by name")
        for field, value in zip(self.positional, args):
            if field in params:
                raise TypeError(f"{name} got multiple values for argument {field!r}")
            params[field] = value
        if settings is None:
            settings = cls.build(**params)
        elif not isinstance(settings, cls):
            raise TypeError(f"settings must be a {cls.__name__}, got {type(settings).__name__}")
        elif params:
            settings = settings.replace(**params)
        self.settings = settings

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "settings_class" in cls.__dict__:  # the constructor's signature is the settings' fields
            init = cls.__init__
            init = getattr(init, "__estimator_init__", init)

            def __init__(self, *args: Any, **params: Any) -> None:
                init(self, *args, **params)

            __init__.__signature__ = cls._init_signature()
            __init__.__doc__ = f"Configured by :class:`{cls.settings_class.__name__}` (a settings object or its fields)."
            __init__.__estimator_init__ = init
            __init__.__qualname__ = f"{cls.__qualname__}.__init__"
            cls.__init__ = __init__

    @classmethod
    def _init_signature(cls) -> inspect.Signature:
        P = inspect.Parameter
        defaults = cls.settings_class.defaults()
        params = [P(f, P.KEYWORD_ONLY if f not in cls.positional else P.POSITIONAL_OR_KEYWORD,
                    default=defaults.get(f, P.empty)) for f in cls.settings_class.specs()]
        params.sort(key=lambda p: (p.kind, cls.positional.index(p.name) if p.name in cls.positional else 0))
        if cls.positional:  # the settings object may come first too: not a signature's to say
            head = [P("self", P.POSITIONAL_OR_KEYWORD)]
        else:
            head = [P("self", P.POSITIONAL_ONLY), P("settings", P.POSITIONAL_ONLY, default=None)]
        return inspect.Signature([*head, *params])

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The settings' fields and values (scikit-learn's ``get_params``); ``deep``: also ``field__name`` for
        a field that holds settings or an estimator."""
        return self.settings.get_params(deep=deep)

    def set_params(self, **params: Any) -> "Estimator":
        """Change settings (validated as at construction; ``field__name`` reaches into a field that holds
        settings or an estimator); returns ``self``."""
        self.settings = self.settings.replace(**params)
        return self

    def provenance(self) -> dict[str, Any]:
        """What ran: the class and its settings as JSON-safe values (cards read this)."""
        return {"class": type(self).__name__, "params": self.settings.to_record()}

    def __getattr__(self, name: str) -> Any:
        if name != "settings" and not name.startswith("__"):
            settings = self.__dict__.get("settings")
            if settings is not None and name in settings.specs():
                return getattr(settings, name)
            if settings is not None and name in settings.flattened():  # a field of the settings a field holds
                return getattr(getattr(settings, settings.flattened()[name]), name)
        raise AttributeError(f"{type(self).__name__!s} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        if not name.startswith("_") and name != "settings" and hasattr(cls, "settings_class") and (
                name in cls.settings_class.specs() or name in cls.settings_class.flattened()):
            self.set_params(**{name: value})  # validated, and what runs
        else:
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.settings.changed().items())})"


def signature_from(settings_class: type[Settings], *, positional: tuple[str, ...] = (),
                   fixed: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Decorator: the signature of a function ``f(dataset, *args, settings=None, ..., **changes)`` shown as
    ``settings_class``' fields, with its defaults: ``positional`` in place of ``*args``, the others
    (but ``fixed``, which the function sets) keyword-only in place of ``**changes``; its private (``_``)
    arguments are not shown. Declares nothing.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Cut(Settings):
        ...     column: str = setting("text", help="column")
        ...     size: float = setting(0.5, help="share")
        >>> @signature_from(Cut, positional=("column",))
        ... def cut(data, *args, settings=None, **changes):
        ...     return changes
        >>> import inspect; str(inspect.signature(cut))
        "(data, column='text', *, settings=None, size=0.5)"
    """
    def decorate(fn: Callable) -> Callable:
        P, sig = inspect.Parameter, inspect.signature(fn)
        defaults = settings_class.defaults()
        shown = []
        for p in sig.parameters.values():
            if p.kind is P.VAR_POSITIONAL:
                shown += [P(n, P.POSITIONAL_OR_KEYWORD, default=defaults.get(n, P.empty)) for n in positional]
            elif p.kind is P.VAR_KEYWORD:
                shown += [P(n, P.KEYWORD_ONLY, default=defaults.get(n, P.empty)) for n in settings_class.specs()
                          if n not in positional and n not in fixed and n not in sig.parameters]
            elif not p.name.startswith("_"):  # a private argument is not shown
                shown.append(p)
        fn.__signature__ = sig.replace(parameters=shown)
        return fn

    return decorate


def clone(estimator: Estimator) -> Estimator:
    """A new, unfitted estimator with the same settings (scikit-learn's ``clone``; an estimator a field holds
    is cloned too)."""
    params = estimator.get_params(deep=False)
    return type(estimator)(**{k: clone(v) if isinstance(v, Estimator) else v for k, v in params.items()})


# ---------------------------------------------------------------------------------- the CLI
def flag_of(name: str, spec: Spec) -> str:
    """The CLI flag of a field: its declared ``flag``, else ``--`` and the name with dashes."""
    return spec.flag or "--" + name.replace("_", "-")


def _parser_type(spec: Spec) -> Callable[[str], Any] | None:
    if spec.parse is not None:
        return None  # parsed by settings_from_args, whose errors name the flag (argparse's would not say why)
    return {"int": int, "float": float, "str": str, "strs": str}.get(spec.kind or "any")


def add_arguments(parser: argparse.ArgumentParser | Any, settings_class: type[Settings] | Settings, *,
                  exclude: tuple[str, ...] = (), title: str | None = None, prefix: str = "") -> None:
    """Add one option per field of ``settings_class`` (those with ``cli=True``) to ``parser``; settings
    given in its place show their values as the defaults; ``prefix``: ``--{prefix}name`` (dest too).

    Options default to ``argparse.SUPPRESS``, so :func:`settings_from_args` knows which ones were given.
    """
    target = parser.add_argument_group(title) if title else parser
    defaults = settings_class.get_params(deep=False) if isinstance(settings_class, Settings) \
        else settings_class.defaults()
    for name, spec in settings_class.specs().items():
        if name in exclude or spec.cli is not True:
            continue
        default = defaults.get(name, dataclasses.MISSING)
        # a help that ends in "[...]" says its default in words
        shown = "" if default is dataclasses.MISSING or spec.help.endswith("]") else f" [default: {default}]"
        kwargs: dict[str, Any] = {"dest": prefix + name, "default": argparse.SUPPRESS, "help": spec.help + shown}
        if spec.kind == "bool":
            kwargs["action"] = argparse.BooleanOptionalAction
        else:
            kwargs["type"] = _parser_type(spec)
            if spec.kind == "strs":
                kwargs["nargs"] = "+"
            if spec.choices is not None and spec.parse is None:
                kwargs["choices"] = list(spec.choices)
            if spec.metavar:
                kwargs["metavar"] = spec.metavar
        flags = ("--" + (prefix + name).replace("_", "-"),) if prefix else (flag_of(name, spec), *spec.aliases)
        target.add_argument(*flags, **kwargs)


def given(args: argparse.Namespace, settings_class: type[Settings], prefix: str = "",
          exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields of ``settings_class`` (but ``exclude``) the user gave on the command line (name -> value)."""
    return {n: getattr(args, prefix + n) for n in settings_class.specs() if hasattr(args, prefix + n) and n not in exclude}


def settings_from_args(settings_class: type[Settings], args: argparse.Namespace, *, base: Settings | None = None,
                       exclude: tuple[str, ...] = (), **fixed: Any) -> Settings:
    """Build ``settings_class`` (``base`` changed, when given) from the options given in ``args`` (but
    ``exclude``) plus ``fixed`` values; a bad value, or an option given where it does not apply
    (:attr:`Spec.applies_when`), is an error naming the flag."""
    specs = settings_class.specs()
    values = {**given(args, settings_class, exclude=exclude), **fixed}
    try:
        for name, value in values.items():
            if isinstance(value, list) and specs[name].kind == "strs":
                values[name] = tuple(value)
            elif isinstance(value, str) and specs[name].parse is not None and name not in fixed:
                values[name] = specs[name].parse(value)
        settings = settings_class(**values) if base is None else base.replace(**values)
    except (ValueError, TypeError) as err:
        # a fixed value is named by the caller's own option (the CLI's table), not by the field's flag
        raise type(err)(_name_flags(str(err), {k: v for k, v in specs.items() if k not in fixed})) from err
    for name in given(args, settings_class, exclude=exclude):
        for other, allowed in (specs[name].applies_when or {}).items():
            value, other_flag = getattr(settings, other), flag_of(other, specs[other])
            if not _allows(allowed, value):
                # a tuple of the values it applies to, or a predicate whose docstring says where it applies
                where = allowed.__doc__ if callable(allowed) else f"{other_flag} {', '.join(map(str, allowed))}"
                raise ValueError(f"{flag_of(name, specs[name])} does not apply to {other_flag} {value}; "
                                 f"it applies to {where}")
    return settings


def _allows(allowed: tuple | Callable[[Any], bool], value: Any) -> bool:
    return allowed(value) if callable(allowed) else value in allowed


def applies(settings: Settings, name: str) -> bool:
    """Whether field ``name`` means something under the other fields' values (:attr:`Spec.applies_when`).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Pick(Settings):
        ...     method: str = setting("a", help="method", choices=("a", "b"))
        ...     depth: int = setting(1, help="depth (method b)", applies_when={"method": ("b",)})
        >>> applies(Pick(), "depth"), applies(Pick(method="b"), "depth")
        (False, True)
    """
    when = settings.specs()[name].applies_when or {}
    return all(_allows(allowed, getattr(settings, other)) for other, allowed in when.items())


def _name_flags(message: str, specs: Mapping[str, Spec]) -> str:
    """Put the flag in place of the field name at the head of a validation message."""
    for name in sorted(specs, key=len, reverse=True):
        if re.match(rf"{re.escape(name)}\b", message):
            return flag_of(name, specs[name]) + message[len(name):]
    return message
