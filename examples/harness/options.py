"""Command lines of the paper examples: presets (``--small``, ``--cpu``, ``--gpu``, ``--paper``, ...),
flags that override them, the flags every example has (``--out``, ``--jobs``, ``--threads``,
``--cache-dir``), and the checks every example makes before any work.

Every check runs in ``parse_args``, before data or models: a bad value is an ``argparse`` error
(exit status 2) that names the flag and the accepted values, never a failure after the work.

Example:
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> add_presets(p, {"small": "quick check (default)", "cpu": "CPU reproduction", "tiny": None}, default="small")
    >>> add_overrides(p, [("steps", int, "training steps"), ("learning_rate", float, "Adam lr")])
    >>> add_run_flags(p, out="runs/demo")
    >>> presets = {"small": dict(steps=20, learning_rate=1e-3), "cpu": dict(steps=500, learning_rate=1e-3),
    ...            "tiny": dict(steps=2, learning_rate=1e-3)}
    >>> a = finish_args(p, p.parse_args(["--cpu", "--steps", "300"]), presets, positive=["steps"],
    ...                 rates=["learning_rate"])
    >>> a.preset, a.steps, a.overrides, describe_settings(a.preset, a.overrides)
    ('cpu', 300, {'steps': 300}, 'preset --cpu with --steps 300')
"""

from __future__ import annotations

import argparse
import math
from typing import Any, Mapping, Sequence

__all__ = ["SCHEDULERS", "add_overrides", "add_presets", "add_run_flags", "apply_preset", "check_encoder_folder",
           "check_outputs_free", "check_seq2seq_folder", "describe_settings", "finish_args", "flag", "refuse_unused",
           "run_main"]

#: learning-rate schedules the examples accept (``transformers`` ``lr_scheduler_type`` values that
#: need no extra arguments)
SCHEDULERS = ("linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup",
              "inverse_sqrt")


def flag(name: str) -> str:
    """The command-line flag of a settings name: ``learning_rate`` -> ``--learning-rate``."""
    return "--" + name.replace("_", "-")


def add_presets(parser: argparse.ArgumentParser, presets: Mapping[str, str | None], *, default: str) -> None:
    """One flag per preset (``--small``, ``--cpu-fig2``, ...), mutually exclusive, stored in
    ``args.preset`` (its name as given here); a ``None`` help hides the flag (the tests' presets)."""
    group = parser.add_mutually_exclusive_group()
    for name, text in presets.items():
        group.add_argument("--" + name.replace("_", "-"), dest="preset", action="store_const", const=name,
                           help=argparse.SUPPRESS if text is None else text)
    parser.set_defaults(preset=default)


def add_overrides(parser, specs: Sequence[tuple]) -> None:
    """``--<name>`` flags (default ``None``: the preset's value) from ``(name, type, help)`` or
    ``(name, type, help, extra add_argument keywords)``."""
    for name, kind, text, *extra in specs:
        parser.add_argument(flag(name), type=kind, default=None, help=text or f"override the preset's {name}",
                            **(extra[0] if extra else {}))


def add_run_flags(parser, *, out: str, jobs_help: str | None = None) -> None:
    """``--out``, ``--jobs``, ``--threads`` and ``--cache-dir``, the same in every example."""
    parser.add_argument("--out", default=out, help=f"output folder [{out}]")
    parser.add_argument("--jobs", type=int, default=1, help=jobs_help or (
        "models trained at once, each in its own process (results do not depend on it) [1]"))
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads per process (1 is fastest on a small shared CPU) [1]")
    parser.add_argument("--cache-dir", default=None, help="datasets cache for the generated data [HF default]")


def apply_preset(parser, args, preset: Mapping[str, Any], *, positive: Sequence[str] = (),
                 non_negative: Sequence[str] = ()):
    """Fill every flag left unset (``None``) from ``preset``, then check the numeric flags:
    ``positive`` must be > 0 and ``non_negative`` >= 0 (and finite), else ``parser.error`` names the flag.

    The flags the user set to a value other than the preset's are recorded in
    ``args.overrides`` (name -> value), so captions can state the settings actually used
    (:func:`describe_settings`).

    Example:
        >>> p = argparse.ArgumentParser()
        >>> _ = p.add_argument("--steps", type=int)
        >>> _ = p.add_argument("--lr", type=float)
        >>> a = apply_preset(p, p.parse_args(["--lr", "0.1"]), {"steps": 200, "lr": 0.5}, positive=["steps"])
        >>> a.steps, a.overrides
        (200, {'lr': 0.1})
    """
    overrides = dict(getattr(args, "overrides", None) or {})
    given = set(getattr(args, "given", None) or ())
    for key, value in preset.items():
        current = getattr(args, key, None)
        if current is not None:
            given.add(key)  # the user set it (the preset fills only the unset flags)
        if current is None:
            setattr(args, key, value)
        elif _plain(current) != _plain(value):
            overrides[key] = current
    args.overrides, args.given = overrides, sorted(given)  # a list: the examples write their settings as JSON
    for names, ok, rule in ((positive, lambda v: v > 0, "> 0"), (non_negative, lambda v: v >= 0, ">= 0")):
        for name in names:
            value = getattr(args, name)
            if not (_finite(value) and ok(value)):
                parser.error(f"{flag(name)} must be {rule}, got {value}")
    return args


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, (tuple, list)) else value


def finish_args(parser, args, presets: Mapping[str, Mapping[str, Any]], *, positive: Sequence[str] = (),
                non_negative: Sequence[str] = (), rates: Sequence[str] = (), below_one: Sequence[str] = (),
                percents: Sequence[str] = (), choices: Mapping[str, Sequence[Any]] | None = None,
                lists: Mapping[str, Sequence[str]] | None = None, seed_list: bool = False,
                preset: Mapping[str, Any] | None = None, outputs: Sequence[str] | None = None):
    """The checks every example makes, before any work, each error naming its flag:

    * ``--out`` is a folder that can be written (not a file, not read-only) and, with ``outputs`` (the
      result-file patterns the run clears and writes), holds no file of the user's under those names
      (:func:`check_outputs_free`): nothing is cleared before every flag is checked;
    * the preset (``preset``, else ``presets[args.preset]``) fills the unset flags (:func:`apply_preset`)
      and ``positive`` / ``non_negative`` flags are finite numbers > 0 / >= 0;
    * ``rates`` (learning rates; ``None`` allowed: "the same as another") are finite and > 0;
    * ``below_one`` (dropout, ...) are in [0, 1); ``percents`` in [0, 100];
    * ``choices``: a flag's value (or each of its values) is one of the accepted ones (e.g. a
      scheduler a preset sets, which argparse's own ``choices`` cannot see);
    * ``lists``: comma-separated flags (``--regions hard-to-learn,random``; a preset may give a tuple)
      become tuples of at least one value, each one of the accepted ones;
    * ``seed_list``: ``--seed N`` (one seed) replaces ``--seeds``, and the seeds are distinct and >= 0
      (a repeated seed would count one model twice in a mean and its sd);
    * ``--jobs`` and ``--threads`` (where the example has them) are >= 1.

    Returns ``args``.

    Example:
        >>> p = argparse.ArgumentParser()
        >>> add_presets(p, {"small": "quick check"}, default="small")
        >>> add_overrides(p, [("regions", str, "subsets"), ("seeds", int, "seeds", dict(nargs="+"))])
        >>> _ = p.add_argument("--seed", type=int, help="one seed (overrides --seeds)")
        >>> add_run_flags(p, out="runs/demo")
        >>> presets = {"small": dict(regions=("easy", "random"), seeds=[0, 1, 2])}
        >>> a = finish_args(p, p.parse_args(["--regions", "hard, random", "--seed", "4"]), presets,
        ...                 lists={"regions": ("easy", "hard", "random")}, seed_list=True)
        >>> a.regions, a.seeds
        (('hard', 'random'), [4])
    """
    from hf_synthsample.validation import check_writable_path

    try:  # a file or an unwritable folder is an error now, not after the first epoch
        check_writable_path("--out", args.out, folder=True)
    except ValueError as err:
        parser.error(str(err))
    if outputs is not None:
        check_outputs_free(parser, args.out, outputs)
    apply_preset(parser, args, presets[args.preset] if preset is None else preset, positive=positive,
                 non_negative=non_negative)
    for name in ("jobs", "threads"):
        value = getattr(args, name, 1)
        if value < 1:
            parser.error(f"{flag(name)} must be a positive number of {'processes' if name == 'jobs' else 'threads'}, "
                         f"got {value}")
    for name in rates:
        value = getattr(args, name)
        if value is not None and not (_finite(value) and value > 0):
            parser.error(f"{flag(name)} must be a positive, finite learning rate, got {value}")
    for name in below_one:
        value = getattr(args, name)
        if value is not None and not (_finite(value) and 0 <= value < 1):
            parser.error(f"{flag(name)} must be in [0, 1), got {value}")
    for name in percents:
        value = getattr(args, name)
        if not (_finite(value) and 0 <= value <= 100):
            parser.error(f"{flag(name)} must be a percentage in [0, 100], got {value}")
    for name, accepted in (choices or {}).items():
        value = getattr(args, name)
        values = value if isinstance(value, (list, tuple)) else [value]
        bad = [v for v in values if v not in accepted]
        if bad:
            parser.error(f"{flag(name)}: unknown {bad if len(values) > 1 else repr(bad[0])}; accepted: {list(accepted)}")
    for name, accepted in (lists or {}).items():
        value = getattr(args, name)
        value = tuple(v.strip() for v in value.split(",")) if isinstance(value, str) else tuple(value)
        bad = [v for v in value if v not in accepted]
        if bad or not value:
            parser.error(f"{flag(name)}: unknown {bad}; accepted: {list(accepted)}")
        setattr(args, name, value)
    if seed_list:
        if args.seed is not None:
            args.seeds = [args.seed]
        if len(set(args.seeds)) != len(args.seeds) or min(args.seeds) < 0:
            parser.error(f"--seeds: distinct non-negative seeds, got {args.seeds}")
    return args


def describe_settings(preset: str, overrides: Mapping[str, Any] | None = None) -> str:
    """The preset name and every flag that overrode it, for a caption.

    Example:
        >>> describe_settings("small")
        'preset --small'
        >>> describe_settings("cpu", {"learning_rate": 0.001, "factors": [1, 20]})
        'preset --cpu with --learning-rate 0.001 --factors 1 20'
    """
    text = f"preset --{preset}"
    if overrides:
        flags = []
        for key, value in overrides.items():
            shown = " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            flags.append(f"{flag(key)} {shown}")
        text += " with " + " ".join(flags)
    return text


def refuse_unused(parser, args, rules: Sequence[tuple[str, bool, str]]) -> None:
    """An option the user gave that does not apply is an error, not ignored: ``rules`` are
    ``(name, applies, why)``; a flag in ``args.given`` (set on the command line, see
    :func:`apply_preset`) whose ``applies`` is false stops the run with ``--flag does not apply
    <why>``. The preset's own values are never refused.

    Example:
        >>> import argparse
        >>> p = argparse.ArgumentParser(prog="demo")
        >>> a = argparse.Namespace(given={"anneal_epochs"}, fit_target=0.0)
        >>> refuse_unused(p, a, [("anneal_epochs", bool(a.fit_target), "without --fit-target (nothing to anneal)")])
        Traceback (most recent call last):
        ...
        SystemExit: 2
    """
    given = set(getattr(args, "given", None) or ())
    for name, applies, why in rules:
        if name in given and not applies:
            parser.error(f"{flag(name)} does not apply {why}; drop it")


def check_outputs_free(parser, out: str, outputs: Sequence[str]) -> None:
    """``--out`` holds no file of the user's that the run would replace (``harness.clear_outputs``'s
    check, made here without removing anything), else ``parser.error`` with its message."""
    import fnmatch
    import os

    from .run_folder import OUTPUTS_RECORD, _recorded_patterns

    if os.path.exists(out) and not os.path.isdir(out):
        parser.error(f"--out: {out} is a file, not a folder: choose a folder for the results")
    if not os.path.isdir(out):
        return
    recorded = _recorded_patterns(out)
    foreign = sorted(e.path for e in os.scandir(out) if e.is_file(follow_symlinks=False) and e.name != OUTPUTS_RECORD
                     and any(fnmatch.fnmatchcase(e.name, p) for p in outputs)
                     and not any(fnmatch.fnmatchcase(e.name, p) for p in recorded))
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        parser.error(f"--out: {shown} was not written by an hf-synthsample run and this run would replace it: choose "
                     "another --out folder, or move those files away")


def check_encoder_folder(parser, name: str, path: str) -> None:
    """``path`` is a local encoder checkpoint a warm start can use (``warm_start_seq2seq``'s folder
    checks, made at parse time), else ``parser.error`` naming the option ``name``."""
    from hf_synthsample.models.warm_start import find_encoder_checkpoint

    try:
        folder = find_encoder_checkpoint(path)
    except (FileNotFoundError, ValueError, TypeError) as err:
        parser.error(f"{name}: {str(err).replace('encoder_path: ', '')}")
    import json

    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as err:
        parser.error(f"{name}: {folder / 'config.json'} cannot be read: {err}")
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES as SEQ2SEQ

    if isinstance(config, dict) and (config.get("is_encoder_decoder") is True or config.get("model_type") in SEQ2SEQ):
        parser.error(f"{name}: {path} is an encoder-decoder ({config.get('model_type')}), not an encoder to warm-start "
                     "from: pass it as a checkpoint folder instead")


def check_seq2seq_folder(parser, name: str, path: str) -> None:
    """``path`` is a local seq2seq checkpoint folder (``config.json`` of an encoder-decoder, tokenizer
    files beside it), else ``parser.error`` naming the option ``name``. A name that is no folder is
    left to the caller (a cached Hub id)."""
    import json
    import os

    if not os.path.isdir(path):
        return
    cfg = os.path.join(path, "config.json")
    try:
        with open(cfg, encoding="utf-8") as f:
            config = json.load(f)
    except OSError:
        parser.error(f"{name}: {path} has no config.json: not a checkpoint folder (save_pretrained writes one)")
    except ValueError as err:
        parser.error(f"{name}: {cfg} is not valid JSON: {err}")
    from hf_synthsample.models.seq2seq import is_seq2seq_config

    if not isinstance(config, dict) or not is_seq2seq_config(config):
        parser.error(f"{name}: {path} holds a {config.get('model_type', 'model')} that is not an encoder-decoder "
                     "(seq2seq): pass a BART / T5 checkpoint folder (or a BERT-family encoder as warm:FOLDER)")
    tokenizer_files = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "vocab.txt", "spiece.model")
    if not any(os.path.isfile(os.path.join(path, t)) for t in tokenizer_files):
        parser.error(f"{name}: {path} has no tokenizer files ({', '.join(tokenizer_files[:2])}, ...): save the "
                     "tokenizer beside the model (tokenizer.save_pretrained(folder))")


def run_main(main, argv=None) -> int:
    """Run an example's ``main(argv)``; a mistake in the user's files or folders found while it runs
    (a file where a folder goes, a missing file, another program's file in ``--out``) is one line
    ``prog: error: ...`` and exit status 2, as ``argparse`` reports a bad flag, not a traceback."""
    import os
    import sys

    try:
        return main(argv)
    except (FileExistsError, NotADirectoryError, IsADirectoryError, FileNotFoundError, PermissionError) as err:
        prog = os.path.basename(sys.argv[0]) or "example"
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
