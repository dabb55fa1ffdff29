"""The CLI is made from the settings (issue 32, item 3): every option of a subcommand maps to a
settings field, a shared option or a listed option of the command's own; every settings field to
an option or a stated reason; errors name the flag; an option that does not apply is refused; a
card records the settings that ran. Also ``split --sweep``'s output (issue 33, item 4)."""

from __future__ import annotations

import argparse
import sys

import datasets
import pytest

from hf_synthsample import cli
from hf_synthsample.cli import main
from hf_synthsample.cli._argparse import actions, subparsers
from hf_synthsample.cli._common import SHARED
from hf_synthsample.hub import read_card_metadata
from hf_synthsample.settings import Settings, add_arguments, applies, setting, settings_from_args

#: subcommands whose options are not made from a settings class, and why
NOT_FROM_SETTINGS = {
    "quickstart": "a fixed demo: its few options are the generate/homogenize ones it passes on",
    "generate": "its config options are made from each domain's builder config class (as before)",
    "configs": "a listing: one positional argument",
}


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in actions(parser) if a.option_strings and a.dest != "help"}


@pytest.fixture(scope="module")
def parsers():
    return subparsers(cli._build_parser())


def test_every_subcommand_is_a_module_of_the_registry(parsers):
    assert list(parsers) == list(cli.COMMANDS)
    for name in cli.COMMANDS:
        module = cli._module(name)
        assert module.HELP and callable(module.add_arguments) and callable(module.run)


@pytest.mark.parametrize("command", sorted(set(cli.COMMANDS) - set(NOT_FROM_SETTINGS)))
def test_every_option_maps_to_a_field_and_every_field_to_an_option(parsers, command):
    module = cli._module(command)
    assert module.SETTINGS, f"{command} names no settings class"
    fields = {name: (cls, spec) for cls in module.SETTINGS for name, spec in cls.specs().items()}
    options = _options(parsers[command])
    prefixed = getattr(module, "PREFIXED", {})  # --{prefix}name: the field name of that class
    not_options = getattr(module, "NOT_OPTIONS", {})
    assert all(reason.strip() for reason in not_options.values())
    for dest, action in options.items():
        if dest in module.OWN_OPTIONS:
            continue
        prefix = next((p for p in prefixed if dest.startswith(p)), None)
        if prefix is not None:
            spec = prefixed[prefix].specs()[dest[len(prefix):]]
            assert spec.cli is True and spec.help in action.help, f"{command} {action.option_strings}"
            continue
        if dest in fields:
            for cls in module.SETTINGS:  # a field declared by several classes: each one's help is shown
                if any(c is cls and p + dest in options for p, c in prefixed.items()):
                    continue  # that class's field has its prefixed option
                spec = cls.specs().get(dest)
                assert spec is None or spec.cli is True, f"{command} {action.option_strings}: {cls.__name__}.{dest}"
                assert spec is None or spec.help in action.help, f"{command} {action.option_strings}: not the help"
        else:
            assert dest in SHARED or dest in module.OWN_OPTIONS, \
                f"{command} {action.option_strings} maps to no settings field, shared option or listed own option"
    for name, (cls, spec) in fields.items():
        if name in not_options:
            assert name not in options, f"{command}: {name} is said to have no option"
        elif spec.cli is True:
            assert name in options, f"{cls.__name__}.{name} has no option in {command}"
        else:
            assert isinstance(spec.cli, str) and spec.cli.strip(), f"{cls.__name__}.{name}: no option and no reason"
    for dest, reason in module.OWN_OPTIONS.items():  # a field's own option only where the field says why
        assert reason.strip() and (dest not in fields or isinstance(fields[dest][1].cli, str))


def test_the_shared_options_are_declared_once(parsers):
    for command, parser in parsers.items():
        for dest, action in _options(parser).items():
            if dest in SHARED:
                assert action.option_strings[0] == SHARED[dest][0]


# ------------------------------------------------------------------ the framework's CLI part

@pytest.fixture
def draw_class():
    from dataclasses import dataclass

    def parse_aim(text):
        if text not in ("max", "min"):
            raise ValueError(f"goal: expected max or min, got {text!r}")
        return text

    @dataclass(frozen=True)
    class Draw(Settings):
        method: str = setting("a", help="method", choices=("a", "b"))
        goal: str = setting("max", help="goal [the highest]", parse=parse_aim, flag="--aim")
        depth: int = setting(1, help="depth", min=1, applies_when={"method": ("b",)})

    return Draw


def test_a_parsed_value_is_checked_by_the_settings_naming_the_flag(draw_class):
    parser = argparse.ArgumentParser()
    add_arguments(parser, draw_class)
    assert settings_from_args(draw_class, parser.parse_args(["--aim", "min"])).goal == "min"
    with pytest.raises(ValueError, match=r"^--aim: expected max or min, got 'x'"):  # not argparse's "invalid value"
        settings_from_args(draw_class, parser.parse_args(["--aim", "x"]))
    with pytest.raises(ValueError, match=r"^--depth must be >= 1"):
        settings_from_args(draw_class, parser.parse_args(["--depth", "0", "--method", "b"]))
    with pytest.raises(ValueError, match=r"^--depth does not apply to --method a; it applies to --method b"):
        settings_from_args(draw_class, parser.parse_args(["--depth", "2"]))
    help_text = parser.format_help()
    assert "goal [the highest]\n" in help_text or "[the highest]" in help_text and "[default: max]" not in help_text
    assert applies(draw_class(method="b"), "depth") and not applies(draw_class(), "depth")


# ------------------------------------------------------------------ sample

@pytest.mark.parametrize("extra, words", [
    (["--sampler", "uniform", "--alpha", "-0.5"], "--alpha does not apply to --sampler uniform; it applies to --sampler uat"),
    (["--sampler", "cmaxent", "--template-column", "t"], "--template-column does not apply to --sampler cmaxent"),
    (["--sampler", "uat", "--alpha", "0.5"], "--alpha must be <= 0.0, got 0.5"),
    (["--sampler", "uat", "--param", "alpha=0.5"], "--param alpha must be <= 0.0, got 0.5"),
    (["--sampler", "uat", "--alpha", "-1", "--param", "alpha=-0.5"], "--param alpha: given twice (also as --alpha)"),
    (["--sampler", "cmaxent", "--w-atoms", "-1", "--language", "sexpr"], "--w-atoms must be >= 0.0"),
])
def test_sample_options_are_the_samplers_settings(pool, tmp_path, capsys, extra, words):
    err = _err(["sample", pool, "-k", "3", "--out", str(tmp_path / "s"), *extra], capsys)
    assert words in err and not (tmp_path / "s").exists()


def test_sample_records_the_settings_that_ran(pool, tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["sample", pool, "-k", "6", "--out", str(out), "--sampler", "cmaxent", "--language", "sexpr",
                 "--w-atoms", "0.5", "--no-distinct", "--seed", "4"]) == 0, capsys.readouterr().err
    params = read_card_metadata(out)["hf_synthsample"]["curated"]["cmaxent"]["sampler_params"]
    from hf_synthsample.sampling.settings import CMaxEntSettings

    assert params == CMaxEntSettings(language="sexpr", w_atoms=0.5, distinct=False, seed=4).to_record()


# ------------------------------------------------------------------ split: the drift bugs

@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    path = tmp_path_factory.mktemp("pool") / "pool.parquet"
    programs = [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh" for a in "abcd" for b in "abc"]
    datasets.Dataset.from_dict({"program": programs, "id": list(range(len(programs))),
                                "n": [i % 7 for i in range(len(programs))], "tpl": [p[1] + p[4] for p in programs]}
                               ).to_parquet(str(path))
    return str(path)


def _err(argv, capsys) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("extra, flag, where", [
    (["--method", "random", "--divergence-tolerance", "0.02"], "--divergence-tolerance", "--method mcd, tmcd"),
    (["--method", "mcd", "--language", "sexpr", "--divergence-tolerance", "0.02"], "--divergence-tolerance",
     "--target-divergence D_C"),
    (["--method", "length", "--max-steps", "5"], "--max-steps", "--method mcd, tmcd"),
    (["--method", "template", "--language", "sexpr", "--compound-weights", "pool"], "--compound-weights",
     "--method mcd, tmcd"),
])
def test_an_option_that_does_not_apply_is_refused_naming_it(pool, tmp_path, capsys, extra, flag, where):
    err = _err(["split", pool, "--out", str(tmp_path / "o"), *extra], capsys)
    assert f"{flag} does not apply to" in err and f"it applies to {where}" in err
    assert not (tmp_path / "o").exists()


def test_bad_values_are_the_settings_errors_naming_the_flag(pool, tmp_path, capsys):
    base = ["split", pool, "--out", str(tmp_path / "o"), "--method", "mcd", "--language", "sexpr"]
    assert "--target-divergence: expected 'max', 'min' or a compound divergence" in _err(
        base + ["--target-divergence", "high"], capsys)
    assert "--compound-weights: expected example, pool or none, got 'all'" in _err(
        base + ["--compound-weights", "all"], capsys)
    assert "--patience must be >= 1" in _err(base + ["--patience", "0"], capsys)
    assert "--sweep: 1.5 is out of [0, 1]" in _err(base + ["--sweep", "0.1,1.5"], capsys)


@pytest.mark.parametrize("method, weights", [("mcd", "pool"), ("mcd", "example"), ("mcd", "none"), ("tmcd", "none")])
def test_the_card_records_the_settings_that_ran(pool, tmp_path, capsys, method, weights):
    out = tmp_path / "o"
    argv = ["split", pool, "--out", str(out), "--method", method, "--language", "sexpr", "--compound-weights", weights,
            "--max-steps", "30", "--max-atom-divergence", "0.2", "--seed", "3"]
    assert main(argv) == 0, capsys.readouterr().err
    recorded = read_card_metadata(out)["hf_synthsample"]["split"]
    assert recorded["compound_weights"] in ((False, "none") if weights == "none" else (weights,))  # not "mapping"
    from hf_synthsample.cli.split import record, settings_of

    ran = record(settings_of(cli._build_parser().parse_args(argv)))
    assert {k: recorded[k] for k in ran} == ran and ran["method"] == method and ran["seed"] == 3
    assert "size_tolerance" in ran and "template_column" in ran


def test_tmcd_weights_of_the_languages_compounds_are_refused_not_recorded_as_none(pool, tmp_path, capsys):
    err = _err(["split", pool, "--out", str(tmp_path / "o"), "--method", "tmcd", "--language", "sexpr",
                "--compound-weights", "pool", "--max-steps", "30"], capsys)
    assert "--compound-weights pool is defined for the language's compounds" in err
    assert not (tmp_path / "o").exists()


def test_a_random_split_records_only_what_applies(pool, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["split", pool, "--out", str(out), "--method", "random", "--seed", "2"]) == 0
    recorded = read_card_metadata(out)["hf_synthsample"]["split"]
    assert recorded["method"] == "random" and recorded["seed"] == 2 and recorded["test_size"] == 0.25
    assert not {"compound_weights", "max_atom_divergence", "goal", "restarts"} & set(recorded)


def test_sweep_uses_the_length_and_template_columns_and_records_the_weights(pool, tmp_path, capsys):
    out = tmp_path / "sw"
    argv = ["split", pool, "--out", str(out), "--method", "mcd", "--language", "sexpr", "--sweep", "0.45,0.6",
            "--compound-weights", "pool", "--max-atom-divergence", "0.2", "--length-column", "n",
            "--template-column", "tpl"]
    assert main(argv) == 0, capsys.readouterr().err
    printed = capsys.readouterr()
    meta = read_card_metadata(out)["hf_synthsample"]["split_sweep"]
    assert meta["settings"]["compound_weights"] == "pool"
    assert meta["settings"]["length_column"] == "n" and meta["settings"]["template_column"] == "tpl"
    for name, split in meta["splits"].items():
        report = split["split_report"]
        test = datasets.load_dataset(str(out), name)["test"]
        # the report's lengths are the length column's, its templates the template column's
        assert report["lengths"]["test"]["max"] == max(test["n"]) > 3  # not the 3 words of a program
        assert report["test_templates"] == len(set(test["tpl"])) > 1  # not the one shape of the programs
    assert "Wrote" in printed.out


def test_sweep_shows_one_bar_for_the_job_and_its_whole_elapsed_time(pool, tmp_path, capsys, monkeypatch):
    from datasets.utils.logging import disable_progress_bar, enable_progress_bar, is_progress_bar_enabled

    was_on = is_progress_bar_enabled()
    bars_module = sys.modules[enable_progress_bar.__module__]  # datasets.utils.tqdm (the name is also a class)
    monkeypatch.setattr(bars_module, "HF_DATASETS_DISABLE_PROGRESS_BARS", None)  # as if unset: the suite sets it
    enable_progress_bar()
    try:
        argv = ["split", pool, "--out", str(tmp_path / "sw"), "--method", "mcd", "--language", "sexpr",
                "--sweep", "0.45,0.5,0.6", "--compound-weights", "none", "--max-atom-divergence", "0.2"]
        assert main(argv) == 0
    finally:
        (enable_progress_bar if was_on else disable_progress_bar)()
    printed = capsys.readouterr()
    bars = {line.split(":")[0] for line in printed.err.replace("\r", "\n").splitlines() if "%|" in line}
    assert bars == {"split --sweep"}  # no datasets "Creating parquet" bar, no second bar of the sweep's own
    assert "9/9" in printed.err  # a search, a report and a plot per target
    # the elapsed time is the job's (reading, searching, reports, plots, writing), not the searches' alone
    elapsed = float(printed.out.rsplit("; ", 1)[1].split("s)")[0])
    searches = read_card_metadata(tmp_path / "sw")["hf_synthsample"]["split_sweep"]["splits"].values()
    assert elapsed >= sum(s["seconds"] for s in searches) - 0.05
