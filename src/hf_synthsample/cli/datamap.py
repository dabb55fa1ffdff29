"""``hf-synthsample datamap DYNAMICS_DIR``: the data map of training dynamics recorded by
``TrainingDynamicsCallback``: a text summary, a PNG plot (``--plot``) and a region subset
(``--select``, ``--fraction``, ``--out``) of the training dataset (``--dataset``, rows matched by
its ``example_id`` column, or by row number with ``--assume-id-order``) or, without one, of the
example ids. Options are checked before the dynamics are read.

The map's options are the fields of :class:`~hf_synthsample.cartography.settings.DataMapSettings`."""

from __future__ import annotations

import argparse
import os

from ..cartography.settings import DataMapSettings
from ..settings import add_arguments as add_settings
from ..settings import settings_from_args
from ._argparse import action
from ._common import add_shared, check_license, check_output_file, check_output_folder

HELP = "data map, plot and region subsets from recorded training dynamics"
#: the settings class the map's options are made from, and the options that are not its fields
SETTINGS = (DataMapSettings,)
OWN_OPTIONS = {"plot": "the PNG written", "plot_fraction": "how much of the map the PNG draws",
               "select": "the region(s) of the subset written", "fraction": "the size of the regions and the subset",
               "proportions": "the shares of combined regions in the subset", "out": "the output folder",
               "dataset": "the training dataset the subset is cut from", "id_column": "the id column of --dataset",
               "assume_id_order": "how rows of --dataset are matched", "oov_columns": "OOV repair of the subset"}

# the library's parameter names in its checks' messages -> this command's options
_OPTIONS = {"min_epoch": "--min-epoch", "max_epoch": "--max-epoch", "nan_policy": "--nan-policy",
            "source": "--source", "measure": "--measure", "proportions": "--proportions",
            "fraction": "--fraction", "region": "--select"}
PARAMETERS = {**_OPTIONS, "regions": "--select", "folder": "--out", "path": "--plot", "sample_fraction": "--plot-fraction"}


#: the formats --plot writes, by extension: the first bytes of such a file and its name
_PLOT_FORMATS = {".png": (b"\x89PNG", "PNG"), ".jpg": (b"\xff\xd8\xff", "JPEG"), ".jpeg": (b"\xff\xd8\xff", "JPEG"),
                 ".pdf": (b"%PDF", "PDF"), ".svg": (b"<?xml", "SVG")}


def add_arguments(m: argparse.ArgumentParser) -> None:
    from ..cartography.measures import MAP_MEASURES

    m.add_argument("dynamics", help="a dynamics folder written by TrainingDynamicsCallback")
    add_settings(m, DataMapSettings)
    m.set_defaults(**DataMapSettings.defaults())  # every value at hand: the error translator reads the typed ones
    action(m, "measure").choices = MAP_MEASURES  # argparse lists the map measures (the field also takes a MeasureInfo)
    m.add_argument("--plot", default=None, help="write the data map as this PNG")
    m.add_argument("--plot-fraction", type=float, default=None, help="plot a seeded sample of this fraction, in (0, 1]")
    m.add_argument("--select", default=None,
                   help="region(s): hard-to-learn, easy-to-learn, ambiguous, random, or a combination a+b")
    m.add_argument("--fraction", type=float, default=0.33, help="subset size as a fraction of the examples [0.33]")
    m.add_argument("--proportions", type=float, nargs="+", default=None, help="shares of combined regions [2/3 1/3]")
    m.add_argument("--out", default=None, help="output folder (Hub layout) for the subset")
    m.add_argument("--dataset", default=None, help="the training dataset (Hub-layout folder or Parquet/JSON/CSV) to cut")
    m.add_argument("--id-column", default="example_id",
                   help="column of --dataset holding the example ids rows are matched by [example_id]")
    m.add_argument("--assume-id-order", action="store_true",
                   help="--dataset has no id column and row i is example id i (its row count must match the dynamics)")
    m.add_argument("--oov-columns", nargs="+", default=None, help="columns whose tokens the subset must all cover")
    add_shared(m, "config", "split", "seed", "overwrite", "license", config="--dataset", split="split of --dataset",
               seed="seed of the random region and plot sample",
               overwrite="replace --out (a folder hf-synthsample wrote) and --plot (a PNG) if they exist")


def _named(err: Exception) -> Exception:
    """``err`` with the library's parameter names as this command's options."""
    from ._errors import as_options

    return type(err)(as_options(str(err), _OPTIONS))


def _check(args: argparse.Namespace) -> tuple[list[str] | None, str, DataMapSettings]:
    """Every option, before the dynamics are read; returns the regions of ``--select``, the split
    written and the map's settings."""
    from ..cartography.datamap import region_shares, fraction_size, parse_regions
    from ..split_spec import source_split
    from ..validation import check_float

    settings = settings_from_args(DataMapSettings, args)  # errors name the flag
    try:  # the library's own checks, before any work
        regions = parse_regions(args.select) if args.select is not None else None
        if args.proportions is not None and regions:
            region_shares(args.proportions, regions)
        fraction_size(args.fraction, 1)  # --fraction in (0, 1], as every subset checks it
    except ValueError as err:
        raise _named(err) from None
    if args.plot_fraction is not None:
        check_float("--plot-fraction", args.plot_fraction, min=0.0, max=1.0, min_inclusive=False)
    cut = "the training dataset to cut"
    for opt, given, need, has, what in (
            ("--proportions", args.proportions is not None, "--select", regions, "the regions the shares are of"),
            ("--plot-fraction", args.plot_fraction, "--plot", args.plot, "the PNG the sample is drawn into"),
            ("--select", regions, "--out", args.out, "the folder the subset is written to"),
            ("--out", args.out, "--select", regions, "the region(s) to write"),
            ("--oov-columns", args.oov_columns, "--dataset", args.dataset, cut),
            ("--assume-id-order", args.assume_id_order, "--dataset", args.dataset, cut),
            ("--config", args.config, "--dataset", args.dataset, cut),
            ("--dataset", args.dataset, "--select", regions, "the region(s) to cut from it")):
        if given and not has:
            raise ValueError(f"{opt} needs {need} ({what})")
    out_split = source_split(args.split, "--split")
    check_license(args)
    if args.dataset and not os.path.exists(args.dataset):
        raise ValueError(f"--dataset: {args.dataset!r} is neither a folder nor a file")
    if args.out:
        check_output_folder("--out", args.out, overwrite=args.overwrite)
    if args.plot:
        # the plot is written in the format of its extension (matplotlib): a re-run with --overwrite
        # replaces a file of that format, which is what this command wrote there
        ext = os.path.splitext(args.plot)[1].lower() or ".png"
        if ext not in _PLOT_FORMATS:
            raise ValueError(f"--plot: {args.plot!r} has the extension {ext!r}; the map is written as "
                             f"{', '.join(sorted(_PLOT_FORMATS))} (by the extension; .png for the card's plot)")
        magic, kind = _PLOT_FORMATS[ext]
        check_output_file("--plot", args.plot, overwrite=args.overwrite, magic=magic, kind=kind)
    if not os.path.isdir(args.dynamics):
        raise ValueError(f"dynamics: {args.dynamics!r} is not a folder (give the dynamics folder written by "
                         "TrainingDynamicsCallback)" if os.path.exists(args.dynamics) else
                         f"dynamics: no folder {args.dynamics!r}")
    return regions, out_split, settings


def run(args: argparse.Namespace) -> int:
    from ..cartography import DataMap, save_datamap_subset
    from ..cartography.datamap import datamap_rows
    from ..validation import check_columns
    from ._source import load_source

    regions, out_split, settings = _check(args)
    names = {"dataset": "--dataset", "id_column": "--id-column", "assume_id_order": "--assume-id-order"}
    try:
        dm = DataMap.from_dynamics(args.dynamics, **settings.get_params())
    except (ValueError, TypeError) as err:
        raise _named(err) from None
    ds = None
    if args.dataset:  # rows matched by example id before anything is written
        ds = load_source(args.dataset, args.config, args.split, option="--dataset")
        if args.oov_columns:
            check_columns(ds, args.oov_columns, name="--oov-columns")
        datamap_rows(dm, ds, None, id_column=args.id_column, assume_id_order=args.assume_id_order, names=names)
    print(dm.summary(args.fraction))
    if args.plot:
        print(f"\nPlot: {dm.plot(args.plot, sample_fraction=args.plot_fraction, seed=args.seed)}")
    if not regions:
        return 0
    out = save_datamap_subset(dm, args.out, regions, args.fraction, dataset=ds, source=args.dataset,
                              dynamics=args.dynamics, id_column=args.id_column,
                              assume_id_order=args.assume_id_order, oov_columns=args.oov_columns,
                              proportions=args.proportions, seed=args.seed, split=out_split,
                              plot=_card_plot(args.plot), overwrite=args.overwrite, license=args.license, names=names)
    print(f"\nWrote {dm.subset_size(args.fraction):,} rows to {out}/")
    return 0


def _card_plot(plot: str | None) -> "str | bool":
    """What the subset's card shows: the ``--plot`` file when it is a PNG, else a map drawn as one."""
    if plot and (os.path.splitext(plot)[1].lower() or ".png") == ".png":
        with open(plot, "rb") as f:
            if f.read(4) == b"\x89PNG":
                return plot
    return True
