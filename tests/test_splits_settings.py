"""The split settings (SplitSettings, SweepSettings, Goal), MCDSplitter, and issue 33's split items:
the sweep's lowest target, one reachable range, degenerate compound weights, the plot's absent compounds."""

from __future__ import annotations

import argparse

import datasets
import numpy as np
import pytest

from hf_synthsample.settings import add_arguments, settings_from_args
from hf_synthsample.splits import (MCDSplitter, divergence_range, divergence_sweep, length_split, mcd_split,
                                   random_split, template_split)
from hf_synthsample.splits.mcd import UnreachableDivergence
from hf_synthsample.splits.settings import Goal, SplitSettings, SweepSettings, parse_targets

KW = dict(language="sexpr", compound_weights=False, patience=20, progress=False)


def _nested() -> datasets.Dataset:
    return datasets.Dataset.from_dict({"program": [f"({op} ({f} {a}) {b})" for op in "pq" for f in "fgh"
                                                   for a in "abcd" for b in "abc"]})


def _test_rows(split) -> list:
    return list(split["test"]["program"])


# ------------------------------------------------------------------ settings
def test_goal_parses_cli_text_and_refuses_bad_values():
    assert Goal.parse("max") == Goal() and Goal.parse("min").kind == "min"
    assert Goal.parse("0.3") == Goal("target", 0.3) == Goal.of(0.3) and str(Goal.parse(0.3)) == "0.3"
    assert Goal.of(None, True) == Goal("min") and Goal("min").to_record() == "min"
    with pytest.raises(ValueError, match=r"goal: expected 'max', 'min' or a compound divergence"):
        Goal.parse("hard")
    with pytest.raises(ValueError, match=r"goal must be <= 1.0"):
        Goal.parse(1.5)
    with pytest.raises(ValueError, match="minimize and target_divergence: give one goal"):
        Goal.of(0.3, True)
    with pytest.raises(ValueError, match="target_divergence must be >= 0.0"):
        mcd_split(_nested(), target_divergence=-0.1, **KW)


@pytest.mark.parametrize("params, error, match", [
    (dict(test_size=1.0), ValueError, r"test_size must be < 1.0"),
    (dict(train_size=0.8), ValueError, r"train_size: 0.8 \+ test_size 0.25 is over 1"),
    (dict(method="kmeans"), ValueError, r"method"),
    (dict(compound_weights="keysers"), ValueError, r"compound_weights: unknown weighting 'keysers'"),
    (dict(seed=-1), ValueError, r"seed must be >= 0"),
    (dict(goal=object()), TypeError, r"goal must be 'max', 'min' or a compound divergence"),
])
def test_split_settings_refuse_bad_values_naming_the_field(params, error, match):
    with pytest.raises(error, match=match):
        SplitSettings(**params)


def _cli(settings_class, argv):
    parser = argparse.ArgumentParser()
    add_arguments(parser, settings_class)
    return settings_from_args(settings_class, parser.parse_args(argv))


def test_options_that_do_not_apply_are_refused():
    with pytest.raises(ValueError, match=r"--divergence-tolerance does not apply to --method random"):
        _cli(SplitSettings, ["--method", "random", "--divergence-tolerance", "0.1"])
    with pytest.raises(ValueError, match=r"--divergence-tolerance does not apply to --target-divergence max"):
        _cli(SplitSettings, ["--divergence-tolerance", "0.1"])
    for flag, value in (("--restarts", "2"), ("--train-size", "0.5"), ("--target-divergence", "0.3"),
                        ("--compound-weights", "pool")):
        with pytest.raises(ValueError, match=rf"{flag} does not apply to --method template"):
            _cli(SplitSettings, ["--method", "template", flag, value])
    with pytest.raises(ValueError, match=r"--size-tolerance does not apply to --method random"):
        _cli(SplitSettings, ["--method", "random", "--size-tolerance", "0.1"])
    s = _cli(SplitSettings, ["--target-divergence", "0.3", "--divergence-tolerance", "0.02", "--compound-weights", "none"])
    assert s.goal == Goal("target", 0.3) and s.compound_weights is False and s.to_record()["compound_weights"] == "none"
    sweep = _cli(SweepSettings, ["--sweep", "0,0.2", "--divergence-tolerance", "0.02"])
    assert sweep.targets == (0.0, 0.2) and sweep.restarts == 2 and "goal" not in sweep.to_record()


def test_sweep_settings_checks():
    assert parse_targets("0,0.5") == (0.0, 0.5)
    with pytest.raises(ValueError, match="targets: only the mcd method"):
        SweepSettings(targets=(0.1,), method="tmcd")
    with pytest.raises(ValueError, match="goal: not used with --sweep"):
        SweepSettings(targets=(0.1,), goal=0.3)
    with pytest.raises(ValueError, match=r"targets: must be sorted ascending"):
        SweepSettings(targets=(0.5, 0.1))


def test_effective_values_are_what_the_card_records():
    assert SplitSettings().weights_in_effect == "example"
    assert SplitSettings(method="tmcd").weights_in_effect is False
    assert SplitSettings(compounds_column="c").to_record()["compound_weights"] == "none"
    assert SplitSettings(compound_weights="pool").to_record()["compound_weights"] == "pool"
    assert SplitSettings().size_tolerance_share == 0.0 and SplitSettings(method="template").size_tolerance_share == 0.05


# ------------------------------------------------------------------ the splitter
def test_splitter_is_the_functions():
    ds = _nested()
    for goal, kw in ((Goal(), {}), (Goal("min"), dict(minimize=True)), (Goal("target", 0.45), dict(target_divergence=0.45))):
        splitter = MCDSplitter(language="sexpr", compound_weights=False, patience=20, goal=goal, seed=3)
        split = splitter.split(ds, progress=False)
        assert _test_rows(split) == _test_rows(mcd_split(ds, seed=3, **KW, **kw))
        assert splitter.result_.goal == goal.to_record()
    assert _test_rows(MCDSplitter(method="random", seed=4).split(ds)) == _test_rows(random_split(ds, seed=4))
    assert _test_rows(MCDSplitter(method="template", language="sexpr", test_size=0.3).split(ds)) == \
        _test_rows(template_split(ds, language="sexpr", test_size=0.3))
    lengths = ds.map(lambda r, i: {"n": i % 7}, with_indices=True)
    assert list(MCDSplitter(method="length", length_column="n", size_tolerance=0.2).split(lengths)["test"]["n"]) == \
        list(length_split(lengths, "n", size_tolerance=0.2)["test"]["n"])
    with pytest.raises(ValueError, match="language: the mcd method needs the structure language"):
        MCDSplitter().split(ds)
    with pytest.raises(ValueError, match=r"restarts: not used by the random method, only by mcd, tmcd"):
        MCDSplitter(method="random", restarts=2).split(ds)  # never silently ignored
    with pytest.raises(ValueError, match=r"goal: not used by the template method"):
        MCDSplitter(method="template", language="sexpr", goal="min").split(ds)


# ------------------------------------------------------------------ issue 33
def test_sweep_target_zero_is_the_lowest_the_search_finds():
    ds = _nested()
    sweep = divergence_sweep(ds, [0.0, 0.45], **KW)
    lowest = mcd_split(ds, minimize=True, restarts=2, **KW)
    assert sweep.results[0.0].goal == "min" and sweep.config_names[0.0] == "dc_0.00"
    assert sweep.results[0.0].compound_divergence == lowest.mcd_result.compound_divergence
    assert _test_rows(sweep[0.0]) == _test_rows(lowest)
    assert abs(sweep.compound_divergence[0.45] - 0.45) <= 0.01


def test_split_and_sweep_name_the_reachable_range_of_the_same_settings():
    ds = _nested()
    expected = divergence_range(ds, language="sexpr", compound_weights=False, patience=20, restarts=2)
    assert MCDSplitter(language="sexpr", compound_weights=False, patience=20, restarts=2).reachable_range(ds) == expected
    for target in (0.05, 0.99):
        with pytest.raises(UnreachableDivergence) as split_err:
            mcd_split(ds, target_divergence=target, restarts=2, **KW)
        with pytest.raises(UnreachableDivergence) as sweep_err:
            divergence_sweep(ds, [target], **KW)  # a sweep's default: 2 restarts
        assert (split_err.value.low, split_err.value.high) == (sweep_err.value.low, sweep_err.value.high) == expected
        assert "seed and restarts" in str(split_err.value)


def test_degenerate_compound_weights_are_refused_before_the_search(monkeypatch):
    from hf_synthsample.structure import compounds

    ds = _nested()

    def no_search(*a, **k):
        raise AssertionError("the search ran")

    monkeypatch.setattr("hf_synthsample.splits.mcd.search", no_search)
    every = {c: 0.0 for p in ds["program"] for c in compounds(p, "sexpr")}
    with pytest.raises(ValueError, match=r"compound_weights: every compound of the rows weighs 0"):
        mcd_split(ds, language="sexpr", compound_weights=every, progress=False)
    with pytest.raises(ValueError, match=r"compound_weights: none of the 2 compounds it names \(e.g. 'f\(a\)'\) is a "
                                         r"compound of the rows"):
        mcd_split(ds, language="sexpr", compound_weights={"f(a)": 2.0, "g(b)": 0.5}, progress=False)
    with pytest.raises(ValueError, match=r"every compound of the rows weighs 0"):
        divergence_range(ds, language="sexpr", compound_weights=every)


def test_plot_marks_compounds_absent_from_one_side(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hf_synthsample.splits.report import _compound_panel, split_report

    fig, ax = plt.subplots()
    _compound_panel(ax, np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.6, 0.0, 0.0, 0.4]))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["on both sides (1)", "absent from test (2)", "absent from train (1)"]
    assert [t.get_text() for t in ax.xaxis.get_minorticklabels()] == ["absent"]
    assert [t.get_text() for t in ax.yaxis.get_minorticklabels()] == ["absent"]
    # no point of a compound seen on both sides lies on the "absent" line
    floor = ax.xaxis.get_minorticklocs()[0]
    assert np.all(ax.collections[0].get_offsets() > floor)
    plt.close(fig)
    split = mcd_split(_nested(), **KW)
    report = split_report(split["train"], split["test"], language="sexpr", compound_weights=False)
    assert report.plot(str(tmp_path / "r.png")) and (tmp_path / "r.png").stat().st_size > 0
