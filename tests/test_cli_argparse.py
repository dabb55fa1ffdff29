"""The CLI's one wrapper of argparse internals (``cli/_argparse.py``), checked against the pinned
Python's argparse: no other CLI module reads ``_actions`` or ``_SubParsersAction``."""

from __future__ import annotations

import argparse
import pathlib
import re

import pytest

from hf_synthsample import cli
from hf_synthsample.cli._argparse import action, actions, subparsers


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--seed", type=int, default=0)
    group = p.add_argument_group("more")
    group.add_argument("--name", choices=["a", "b"])
    sub = p.add_subparsers(dest="command", required=True)
    one = sub.add_parser("one")
    one.add_argument("path")
    one.add_argument("-k", "--k", type=int)
    nested = sub.add_parser("two").add_subparsers(dest="domain")
    nested.add_parser("inner")
    return p


def test_actions_list_every_option_in_order_groups_included():
    p = _parser()
    assert [a.dest for a in actions(p)] == ["help", "seed", "name", "command"]
    assert actions(p) is not actions(p)  # a copy: changing the list does not change the parser
    assert all(isinstance(a, argparse.Action) for a in actions(p))


def test_action_by_dest_and_its_public_attributes_change_the_parser():
    p = _parser()
    action(p, "name").choices = ["a", "b", "c"]
    action(p, "seed").required = True
    assert p.parse_args(["--seed", "1", "--name", "c", "one", "f"]).name == "c"
    with pytest.raises(SystemExit):
        p.parse_args(["one", "f"])  # --seed is required now
    with pytest.raises(KeyError, match="dest: no option of this parser stores 'nope'"):
        action(p, "nope")


def test_subparsers_by_name_nested_and_none():
    p = _parser()
    subs = subparsers(p)
    assert list(subs) == ["one", "two"] and all(isinstance(s, argparse.ArgumentParser) for s in subs.values())
    assert [a.dest for a in actions(subs["one"])] == ["help", "path", "k"]
    assert list(subparsers(subs["two"])) == ["inner"]
    assert subparsers(subs["one"]) == {}


def test_the_cli_parser_through_the_wrapper():
    subs = subparsers(cli._build_parser())
    assert list(subs) == list(cli.COMMANDS)
    assert action(subs["split"], "method").required  # require() went through the wrapper
    from hf_synthsample.cartography.measures import MAP_MEASURES

    assert list(action(subs["datamap"], "measure").choices) == list(MAP_MEASURES)


def test_no_other_cli_module_reads_argparse_internals():
    folder = pathlib.Path(cli.__file__).parent
    for path in folder.glob("*.py"):
        if path.name == "_argparse.py":
            continue
        text = path.read_text()
        assert not re.search(r"\._actions\b|_SubParsersAction|\._option_string_actions|\._action_groups", text), path
