"""``split --sweep``: MCD splits at each target divergence, written as one folder, with one
progress bar for the job (``datasets``' per-write bars silenced inside it) and its true elapsed time.
"""

from __future__ import annotations

import argparse
import contextlib
import time


@contextlib.contextmanager
def quiet_datasets_bars():
    """``datasets``' own bars off inside the block (one "Creating parquet" bar per config and side
    would bury the job's bar), restored after."""
    from datasets.utils.logging import disable_progress_bar, enable_progress_bar, is_progress_bar_enabled

    was_on = is_progress_bar_enabled()
    disable_progress_bar()
    try:
        yield was_on
    finally:
        if was_on:
            enable_progress_bar()


def run_sweep(args: argparse.Namespace, ds, settings, provenance: dict, started: float) -> int:
    """Search, report and write the sweep of ``settings`` (a :class:`SweepSettings`) of ``ds``: one
    bar over its searches, reports and plots; the elapsed time from the command's start."""
    from tqdm.auto import tqdm

    from ..hub.card import portable_path
    from ..splits import MCDSplitter
    from ..splits.mcd import UnreachableDivergence

    steps = 3 * len(settings.targets)  # a search, a report and a plot per target
    with quiet_datasets_bars() as shown, tqdm(total=steps, desc="split --sweep", unit=" step", disable=not shown) as bar:
        try:
            sweep = MCDSplitter(settings).sweep(ds, progress=bar)
        except UnreachableDivergence as err:
            raise err.named("--sweep") from err
        bar.set_postfix_str("reports and plots")
        out = sweep.save(args.out, provenance=provenance, progress=bar,
                         title=f"Compound-divergence sweep of `{portable_path(args.source)}`",
                         if_exists="overwrite" if args.overwrite else "error", license=args.license)
    print(sweep.to_markdown())
    names = ", ".join(sweep.config_names.values())
    print(f"\nWrote {out}/ ({len(sweep)} configs: {names}; {time.perf_counter() - started:.1f}s)")
    return 0
