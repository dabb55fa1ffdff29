"""The one place the CLI reads argparse internals: argparse has no public accessor for a parser's
actions or its sub-parsers, so :func:`actions` and :func:`subparsers` read ``_actions`` and
``_SubParsersAction`` here, and ``tests/test_cli_argparse.py`` checks them against the pinned
Python's argparse. An :class:`argparse.Action`'s own attributes (``dest``, ``help``, ``choices``,
``required``, ``option_strings``) are public.

Example:
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("--seed", type=int)
    >>> [a.dest for a in actions(p)], subparsers(p)
    (['help', 'seed'], {})
    >>> action(p, "seed").option_strings
    ['--seed']
"""

from __future__ import annotations

import argparse

__all__ = ["actions", "action", "subparsers"]


def actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every action of ``parser`` (options, positionals, the sub-command chooser), in the order added,
    those of its argument groups included."""
    return list(parser._actions)


def action(parser: argparse.ArgumentParser, dest: str) -> argparse.Action:
    """The action of ``parser`` that stores ``dest``; ``KeyError`` naming ``dest`` when none does."""
    for a in actions(parser):
        if a.dest == dest:
            return a
    raise KeyError(f"dest: no option of this parser stores {dest!r}; its dests: {[a.dest for a in actions(parser)]}")


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Sub-command name -> its parser (``{}`` for a parser without sub-commands)."""
    for a in actions(parser):
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}
