"""The ``hf-synthsample`` command line.

Subcommands: ``quickstart``, ``generate DOMAIN``, ``configs``, ``homogenize``, ``sample``,
``structure``, ``split``, ``datamap``, ``curve`` (:data:`COMMANDS`); each module's docstring says what its
subcommand does, and ``hf-synthsample COMMAND --help`` shows it with the options.

Every option is checked before any work; an error (operating-system ones included) is one line
on stderr naming the option and the user's path, with exit status 2. Ctrl-C exits with 130 and
SIGTERM with 143, after removing what was half-written.

A subcommand is a module here with ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``;
optionally ``PARAMETERS`` (library parameter -> option, for messages), ``parameter_options(args)``,
``SETTINGS`` (the settings classes its options come from) and ``OWN_OPTIONS`` (its other options).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from ._errors import as_options as _as_options
from ._errors import option_table, os_message, terminate_cleanly
from ._errors import typed as _typed
from ._errors import user_path as _user_path

__all__ = ["COMMANDS", "main"]

#: subcommand -> its module in this package (of the same name), in the order ``--help`` lists them
COMMANDS = {name: name for name in ("quickstart", "generate", "configs", "homogenize", "sample", "structure",
                                    "split", "datamap", "curve")}


def _module(command: str):
    return importlib.import_module(f"{__name__}.{COMMANDS[command]}")


def _build_parser() -> argparse.ArgumentParser:
    from .._version import __version__

    parser = argparse.ArgumentParser(prog="hf-synthsample", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"hf-synthsample {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        module = _module(command)
        module.add_arguments(sub.add_parser(command, help=module.HELP, description=module.__doc__.split("\n\n")[0]))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hf-synthsample`` console script (errors: see the module docstring)."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    module = _module(args.command)
    from ..processes import children_die_with_parent

    def fail(message: str) -> int:
        print(f"hf-synthsample {args.command}: error: {message}", file=sys.stderr)
        return 2

    try:
        with terminate_cleanly(), children_die_with_parent():  # num_proc workers must not outlive a killed command
            if isinstance(getattr(args, "seed", None), int):
                from ..validation import check_int

                check_int("--seed", args.seed, min=0, max=2**32 - 1)
            return module.run(args)
    except (ValueError, TypeError, OSError) as err:  # OSError: FileExistsError of the checks too; never a traceback
        table = option_table(parser, args, module)
        if isinstance(err, OSError) and err.filename is not None:
            return fail(os_message(err, args, table))
        generator = [k[len("param_"):] for k in vars(args) if k.startswith("param_")]  # renamed wherever named
        return fail(_as_options(_user_path(str(err)), table, generator, _typed(parser, args)))
    except KeyboardInterrupt:
        print(f"hf-synthsample {args.command}: interrupted; nothing half-written was left", file=sys.stderr)
        return 130
