"""``hf-synthsample configs [DOMAIN]``: list domains, configs and parameters."""

from __future__ import annotations

import argparse

HELP = "list domains, configs and parameters"


def add_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("domain", nargs="?", default=None)


def run(args: argparse.Namespace) -> int:
    from ..builders import get_builder_class, list_domains
    from ..builders.base import config_parameters

    names = [args.domain] if args.domain else list_domains()
    for domain in names:
        cls = get_builder_class(domain)
        print(f"{domain}: {cls.DESCRIPTION}\n")
        print("  configs:")
        for name, cfg in cls.builder_configs.items():
            print(f"    {name:34} {cfg.description or ''}")
        print("\n  parameters (load_dataset keyword / generate option):")
        for name, spec in config_parameters(cls.BUILDER_CONFIG_CLASS).items():
            print(f"    {name:20} {spec['default']!r:12} {spec['help']}")
        print("\n  salient variables:")
        for name, text in cls.SALIENT_VARIABLES.items():
            print(f"    {name:20} {text}")
        print()
    return 0
