"""The CLI's one error translator: library messages name Python parameters, the user typed options;
operating-system errors name the option and the user's path (never a temp path)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import re
from typing import Mapping, Sequence

from ._argparse import actions, subparsers

#: options whose value is a path, for naming the option of an operating-system error
PATH_OPTIONS = ("out", "source", "dataset", "dynamics", "plot", "cache_dir")


def subparser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub-)sub-parser that parsed ``args`` (``generate calculator`` included)."""
    for name in ("command", "domain"):
        subs = subparsers(parser)
        if getattr(args, name, None) not in subs:
            break
        parser = subs[getattr(args, name)]
    return parser


def option_table(parser: argparse.ArgumentParser, args: argparse.Namespace, module) -> dict[str, str]:
    """Python parameter name -> the option the user typed (``time_limit`` -> ``--time-limit``), for the
    sub-command ``args`` ran: its parser's options, the module's ``PARAMETERS`` and ``parameter_options(args)``."""
    from ._common import builder_param_options

    table: dict[str, str] = {}
    for action in actions(subparser(parser, args)):
        dest = action.dest[len("param_"):] if action.dest.startswith("param_") else action.dest
        if action.option_strings:
            long = [o for o in action.option_strings if o.startswith("--")]  # --k of -k; --x of --x/--no-x
            table[dest] = (long or action.option_strings)[0]
        elif dest not in ("help", "command", "domain") and dest != argparse.SUPPRESS:
            table[dest] = action.metavar if isinstance(action.metavar, str) else dest
    table.pop("help", None)
    table.update(getattr(module, "PARAMETERS", {}))
    table.update(builder_param_options(args))
    if hasattr(module, "parameter_options"):
        table.update(module.parameter_options(args))
    return table


def typed(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """The values of the sub-command's options with choices (``--measure el2n``), by parameter name:
    ``measure 'el2n' is ...`` speaks of the option (a free value such as a column name does not)."""
    return {a.dest: getattr(args, a.dest) for a in actions(subparser(parser, args))
            if a.option_strings and a.choices and isinstance(getattr(args, a.dest, None), str)}


#: words that are also parameters: renamed only where a check names them (``column: ...``,
#: ``size must be ...``), never inside a sentence (``a split that ...``)
_CHECK_POSITION = r"(?=(?:=|:| must\b| is\b| lists\b| needs\b| has\b| \(| contradicts\b| should\b))"


def as_options(message: str, table: dict[str, str], anywhere: Sequence[str] = (),
               typed: Mapping[str, str] | None = None) -> str:
    """``message`` with the Python parameters it names written as the options of ``table``
    (``time_limit=3`` -> ``--time-limit 3``; an option ending in ``=`` is a NAME=VALUE one). A name
    with ``_`` (or in ``anywhere``) is renamed wherever it stands alone; a plain word only where a
    check names it (:data:`_CHECK_POSITION`) or its ``typed`` value follows it.

    Example:
        >>> as_options("time_limit must be > 0.0, got -1", {"time_limit": "--time-limit"})
        '--time-limit must be > 0.0, got -1'
    """
    typed = typed or {}
    for name in sorted(table, key=len, reverse=True):
        opt = table[name]
        key_value = opt.endswith("=")
        base = opt[:-1] if key_value else opt

        def rename(m: re.Match, name: str = name, base: str = base, key_value: bool = key_value) -> str:
            if m.group("eq"):  # name=3 -> --name 3; name='omit' -> --name omit (as typed); NAME=VALUE kept
                if key_value:
                    return base + m.group("eq")
                return base + " " + (m.group("val") if m.group("val") is not None else "")
            before = m.string[:m.start()]
            after = m.string[m.end():]
            at_check = (before == "" or before.endswith((": ", "; ", ", ", "("))) and (
                re.match(_CHECK_POSITION, after)
                or (name in typed and after.startswith(f" {typed[name]!r} ")))
            return base if ("_" in name or name in anywhere or at_check) else m.group(0)

        message = re.sub(rf"(?<![\w.'\"/=-]){re.escape(name)}(?![\w'\"/-])(?P<eq>=(?:'(?P<val>[^'\s]*)'(?=\W|$)|(?=\S)))?",
                         rename, message)
    # a hint to pass a Python parameter this command has no option for is no help on the command line
    message = re.sub(r" Pass (?!-)[a-z_]+=\S+[^.]*\.", "", message)
    return message


_OS_REASONS = {
    errno.EACCES: "permission denied (choose a path you can write to / read)",
    errno.EPERM: "operation not permitted (choose a path you can write to / read)",
    errno.EROFS: "read-only file system (choose a folder on a writable disk)",
    errno.ENOSPC: "no space left on the device (free some space, or choose a folder on another disk)",
    errno.EDQUOT: "disk quota exceeded (free some space, or choose a folder on another disk)",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "is a folder, where a file was expected",
    errno.ENOENT: "no such file or folder",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EEXIST: "already exists",
}


def user_path(path: str) -> str:
    """``path`` with an internal temp name written as the path the user gave.

    Example:
        >>> user_path("/data/.out.tmp-123-0123abcd/cfg/x.parquet")
        '/data/out/cfg/x.parquet'
    """
    path = re.sub(r"(^|/)\.([^/]+)\.(?:tmp|old)-(?:\d+-)?[0-9a-f]{8}(?=/|$)", r"\1\2", path)
    return re.sub(r"(^|/)\.tmp-([^/]+)-\d+-[A-Za-z0-9_]{8}[^/]*$", r"\1\2", path)


def os_message(err: OSError, args: argparse.Namespace, table: dict[str, str]) -> str:
    """One line for an operating-system error: the option, the user's path and what to do."""
    reason = _OS_REASONS.get(err.errno, err.strerror or type(err).__name__)
    filename = user_path(os.path.abspath(os.fspath(err.filename))) if err.filename is not None else None
    for dest in PATH_OPTIONS:
        value = getattr(args, dest, None)
        if not isinstance(value, str) or not value or filename is None:
            continue
        given = os.path.abspath(value)
        if filename == given or filename.startswith(given + os.sep) or given.startswith(filename + os.sep):
            where = "" if filename == given else f" ({filename})"
            return f"{table.get(dest, dest)} {value}{where}: {reason}"
    if filename is not None:
        return f"{filename}: {reason}"
    return as_options(str(err), table)


class _Terminated(SystemExit):
    """SIGTERM as an exception, so that every ``with`` block (temp folders) cleans up on ``kill``."""


@contextlib.contextmanager
def terminate_cleanly():
    """SIGTERM raises (exit status 143) inside the block."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum, frame):
        raise _Terminated(128 + signum)

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
