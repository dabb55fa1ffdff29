"""What the subcommands share: common options, the ``NAME=VALUE`` parser, the output checks."""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
from typing import Any, Sequence

from ._argparse import action, actions

#: The options several subcommands share: name -> (flag, argparse keywords); ``{what}`` filled in by :func:`add_shared`.
SHARED: dict[str, tuple[str, dict[str, Any]]] = {
    "builder_param": ("--builder-param", dict(nargs="+", default=[], metavar="NAME=VALUE",
                                              help="generator parameters of a DOMAIN/CONFIG source, "
                                                   "e.g. num_examples=20000")),
    "config": ("--config", dict(default=None, help="config of a Hub-layout {what}")),
    "split": ("--split", dict(default="train", help="{what}, or a slice of it: train[:10%%] [train]")),
    "seed": ("--seed", dict(type=int, default=0, help="{what} [0]")),
    "name": ("--name", dict(default=None, help="config name in the output folder [{what}]")),
    "overwrite": ("--overwrite", dict(action="store_true", help="{what}")),
    "license": ("--license", dict(default=None, help="license of the dataset card, a Hub license id, e.g. cc-by-4.0, "
                                                    "apache-2.0, mit [none: the data owner's choice]")),
}

#: what a shared option's help speaks of when a subcommand does not say
_WHAT = {"config": "source", "split": "split of the source to read", "seed": "random seed", "name": "the command",
         "overwrite": "replace the output folder if it exists"}


def add_shared(parser: Any, *names: str, defaults: dict[str, Any] | None = None, **what: str) -> None:
    """Add the :data:`SHARED` options ``names`` to ``parser``; ``what``, ``defaults``: per option, its help's words."""
    for name in names:
        flag, kwargs = SHARED[name]
        kwargs = dict(kwargs, help=kwargs["help"].format(what=what.get(name, _WHAT.get(name, ""))))
        if defaults and name in defaults:
            kwargs["default"] = defaults[name]
        parser.add_argument(flag, **kwargs)


def require(parser: argparse.ArgumentParser, *dests: str) -> None:
    """Make the options ``dests`` required (settings fields the command asks for despite their default)."""
    for dest in dests:
        action(parser, dest).required = True


def parse_value(text: str) -> Any:
    """``3`` -> 3, ``0.5`` -> 0.5, ``None`` -> None, anything else stays a string.

    Example:
        >>> parse_value("3"), parse_value("0.5"), parse_value("None"), parse_value("sexpr")
        (3, 0.5, None, 'sexpr')
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def key_values(option: str, items: Sequence[str]) -> dict:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}``; anything else is a ``ValueError`` naming ``option``."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"{option}: expected NAME=VALUE, got {item!r}")
        out[name.replace("-", "_")] = parse_value(value)
    return out


def builder_param_options(args: argparse.Namespace) -> dict[str, str]:
    """``{name: "--builder-param name="}`` for the parameters of the source's generator (for messages)."""
    table: dict[str, str] = {}
    if getattr(args, "builder_param", None) is not None:
        from ..builders import get_builder_class, list_domains
        from ..builders.base import config_parameters

        domain = str(getattr(args, "source", "")).partition("/")[0]
        if domain in list_domains():
            for name in config_parameters(get_builder_class(domain).BUILDER_CONFIG_CLASS):
                table[name] = f"--builder-param {name}="
    return table


def check_license(args: argparse.Namespace) -> str | None:
    """``--license``: a Hub license id, or none."""
    from ..hub.card import check_license

    return check_license(args.license, "--license")


def check_output_folder(option: str, out: str, *, overwrite: bool, add: bool = False,
                        how: str = "--overwrite to replace it", configs: Sequence[str] = ()) -> None:
    """An output folder is writable; an existing one only with ``--overwrite`` (and replaceable) or
    ``--add`` (and its ``configs`` can be added)."""
    from ..atomic import check_replaceable, recover_folder
    from ..validation import check_writable_path

    check_writable_path(option, out, folder=True)
    recover_folder(out)  # a run killed mid-write may have left the old folder aside
    if not os.path.exists(out):
        return
    if not (overwrite or add):
        raise FileExistsError(f"{option}: {out} exists; pass {how}")
    if overwrite:
        check_replaceable(out, name=option)
    else:
        from ..hub.folder import check_can_add

        check_can_add(out, list(configs), name=option)


def check_output_file(option: str, path: str, *, overwrite: bool, magic: bytes, kind: str) -> None:
    """An output file is writable; an existing one only with ``--overwrite``, and only when it starts with ``magic``."""
    from ..validation import check_writable_path

    check_writable_path(option, path, folder=False)
    if not os.path.exists(path):
        return
    if not overwrite:
        raise FileExistsError(f"{option}: {path} exists; pass --overwrite to replace it")
    with open(path, "rb") as f:
        if f.read(len(magic)) != magic:
            raise FileExistsError(f"{option}: {path} is not a {kind} file, so it is never replaced: choose another "
                                  "path, or delete it yourself if you no longer need it")


@contextlib.contextmanager
def quiet_datasets_bars():
    """``datasets``' own bars off inside the block (yields whether they were on)."""
    from datasets.utils.logging import disable_progress_bar, enable_progress_bar, is_progress_bar_enabled

    was_on = is_progress_bar_enabled()
    disable_progress_bar()
    try:
        yield was_on
    finally:
        if was_on:
            enable_progress_bar()


def add_language_arguments(parser: argparse.ArgumentParser, *, exclude: tuple[str, ...] = ("max_height",)) -> None:
    """The options of :class:`~hf_synthsample.structure.LanguageSettings` (``--abstract``, ``--group``...),
    which set up the ``--language`` a command reads (``exclude``: fields the command declares itself)."""
    from ..settings import add_arguments as add_settings
    from ..structure.language import LanguageSettings

    add_settings(parser, LanguageSettings, exclude=exclude, title="structure language (with --language)")
    if "max_height" in exclude and "max_height" in {a.dest for a in actions(parser)}:
        # one option for both: the command's and the language's compound height
        action(parser, "max_height").help += f"; it is the language's: {LanguageSettings.specs()['max_height'].help}"


def language_of(args: argparse.Namespace, language: Any, *, option: str = "--language") -> Any:
    """``language`` (a name) configured by the language options given, or as it is when none was."""
    from ..settings import given, settings_from_args
    from ..structure.language import LanguageSettings, get_language

    if not given(args, LanguageSettings):
        return language
    if language is None:
        raise ValueError(f"{', '.join('--' + k.replace('_', '-') for k in given(args, LanguageSettings))}: "
                         f"language settings need {option}")
    return get_language(language).configure(settings_from_args(LanguageSettings, args))
