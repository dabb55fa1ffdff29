"""ResultsTable (Markdown/JSON/plot) and the atomic writers under it."""

from __future__ import annotations

import json
import os

import pytest

from hf_synthsample.atomic import atomic_path, write_text_atomic
from harness import ResultsTable


def test_table_markdown_json_and_plot(tmp_path):
    t = ResultsTable("Exact match (%)", ["train", "iid", "comp", "note"], caption="seed 0")
    t.add(train="uniform", iid=80.0, comp=10.25, note="a")
    t.add(train="cmaxent", iid=79.5, comp=None)
    md = t.to_markdown()
    assert "| train | iid | comp | note |" in md
    assert "|---|---:|---:|---|" in md
    assert "| uniform | 80.0 | 10.2 | a |" in md  # 10.25 rounds half-to-even in format
    assert "| cmaxent | 79.5 | - | - |" in md
    md_path, js_path = t.save(tmp_path / "out", "table")
    assert open(md_path).read().startswith("### Exact match (%)")
    assert json.load(open(js_path))["rows"][1] == {"train": "cmaxent", "iid": 79.5, "comp": None, "note": None}
    png = t.bar_plot(tmp_path / "out" / "table.png")
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert sorted(os.listdir(tmp_path / "out")) == ["table.json", "table.md", "table.png"]


def test_table_bad_input(tmp_path):
    with pytest.raises(ValueError, match="twice"):
        ResultsTable("t", ["a", "a"])
    t = ResultsTable("t", ["a", "b"])
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['c'\]; accepted: \['a', 'b'\]"):
        t.add(a=1, c=2)
    with pytest.raises(ValueError, match="nothing to plot"):
        t.bar_plot(tmp_path / "x.png")


def test_non_main_rank_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    t = ResultsTable("t", ["a", "b"])
    t.add(a="x", b=1.0)
    assert t.save(tmp_path, "t") == [] and t.bar_plot(tmp_path / "t.png") is None
    assert os.listdir(tmp_path) == []


def test_atomic_path_keeps_old_file_on_error(tmp_path):
    path = tmp_path / "f.txt"
    write_text_atomic(path, "old")
    with pytest.raises(RuntimeError):
        with atomic_path(path) as tmp:
            open(tmp, "w").write("half")
            raise RuntimeError("boom")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["f.txt"]


def _capture_figure(monkeypatch):
    """Replace the figure writer: returns the list the drawn figures land in."""
    import harness.tables as experiments

    figures = []
    monkeypatch.setattr(experiments, "save_figure_atomic", lambda fig, path, dpi=100: figures.append(fig) or str(path))
    return figures


def test_score_cells_show_fit_and_spread(tmp_path):
    from harness import Score

    t = ResultsTable("EM", ["split", "1x", "20x"], caption="2 seeds.", fit_note="fit: EM on 100 training rows.")
    t.add(split="jump", **{"1x": Score.of([0.0, 0.0], fit=[90.0, 96.0]), "20x": Score.of([60.0, 70.0], fit=[99.0, 97.0])})
    md = t.to_markdown()
    # mean±sd over seeds, the training fit beside it; sd of (60, 70) = 7.07
    assert "| jump | 0.0±0.0 (fit 93.0) | 65.0±7.1 (fit 98.0) |" in md
    assert "|---|---:|---:|" in md  # Score columns are numeric
    assert md.endswith("2 seeds. fit: EM on 100 training rows.")
    _, js = t.save(tmp_path, "t")
    row = json.load(open(js))["rows"][0]
    assert row["20x"]["value"] == 65.0 and row["20x"]["fit"] == 98.0 and row["20x"]["values"] == [60.0, 70.0]
    assert json.load(open(js))["caption"].endswith("fit: EM on 100 training rows.")
    # no fit anywhere: no fit note
    t2 = ResultsTable("EM", ["a", "b"], caption="c")
    t2.add(a="x", b=Score(1.0))
    assert t2.to_markdown().endswith("\nc") and "fit" not in t2.to_markdown()
    with pytest.raises(TypeError, match="Score.fit"):
        Score(1.0, fit="high")


def test_all_zero_plot_says_so(tmp_path, monkeypatch):
    from harness import Score

    figures = _capture_figure(monkeypatch)
    t = ResultsTable("EM", ["split", "1x", "20x"])
    t.add(split="jump", **{"1x": Score(0.0, fit=95.0), "20x": Score(0.0, fit=96.0)})
    t.bar_plot(tmp_path / "zero.png")
    texts = [x.get_text() for x in figures[-1].axes[0].texts]
    assert texts and "every plotted value is 0" in texts[0] and "fit" in texts[0]
    t.rows[0]["20x"] = Score(3.0, fit=96.0)
    t.bar_plot(tmp_path / "nonzero.png")
    assert len(figures[-1].axes[0].texts) == 0


def test_plot_labels_must_tell_bars_apart(tmp_path, monkeypatch):
    figures = _capture_figure(monkeypatch)
    t = ResultsTable("Curricula", ["curriculum", "order", "dev"])
    t.add(curriculum="exponential", order="easy-to-hard", dev=1.0)
    t.add(curriculum="exponential", order="hard-to-easy", dev=2.0)
    with pytest.raises(ValueError, match=r"share the label\(s\) \['exponential'\]"):
        t.bar_plot(tmp_path / "c.png")
    t.bar_plot(tmp_path / "c.png", label=["curriculum", "order"])
    ticks = [x.get_text() for x in figures[-1].axes[0].get_xticklabels()]
    assert ticks == ["exponential / easy-to-hard", "exponential / hard-to-easy"]


def test_apply_preset_records_overrides():
    import argparse

    from harness import apply_preset, describe_settings

    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int)
    p.add_argument("--factors", type=int, nargs="+")
    preset = {"steps": 200, "factors": [1, 2, 20]}
    a = apply_preset(p, p.parse_args(["--steps", "200", "--factors", "1", "20"]), preset)
    # --steps equals the preset's value: not an override
    assert a.overrides == {"factors": [1, 20]}
    assert describe_settings("small", a.overrides) == "preset --small with --factors 1 20"
    assert apply_preset(p, p.parse_args([]), preset).overrides == {}


def test_clear_outputs_removes_only_what_a_run_wrote(tmp_path):
    """A user's own results.md in --out is never removed; a previous run's tables are."""
    from harness import OUTPUTS_RECORD, clear_outputs

    out = tmp_path / "runs"
    assert clear_outputs(out, ["table*.*", "results.md"]) == []  # a new folder: created, names claimed
    assert (out / OUTPUTS_RECORD).is_file()
    for name in ("table3.md", "table1.json", "results.md", "notes.txt", "result.md"):
        (out / name).write_text("x")
    (out / "sub").mkdir()
    (out / "sub" / "table9.md").write_text("x")
    removed = sorted(os.path.basename(p) for p in clear_outputs(out, ["table*.*", "results.md"]))
    assert removed == ["results.md", "table1.json", "table3.md"]
    assert sorted(p.name for p in out.iterdir()) == sorted([OUTPUTS_RECORD, "notes.txt", "result.md", "sub"])

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.md").write_text("my notes")
    (mine / "table1.md").write_text("my table")
    with pytest.raises(FileExistsError, match=r"--results-dir: .*results\.md, .*table1\.md was not written by an "
                                              r"hf-synthsample run.*choose another --results-dir folder"):
        clear_outputs(mine, ["table*.*", "results.md"], name="--results-dir")
    assert (mine / "results.md").read_text() == "my notes" and (mine / "table1.md").read_text() == "my table"
    assert not (mine / OUTPUTS_RECORD).exists()  # nothing claimed either

    # a claim covers only its own patterns: a later run with more names does not own the user's file
    (out / "figure1.png").write_text("mine")
    with pytest.raises(FileExistsError, match="figure1.png"):
        clear_outputs(out, ["table*.*", "figure*.png"])
    assert (out / "figure1.png").read_text() == "mine"

    # a damaged record claims nothing
    (out / OUTPUTS_RECORD).write_text("{not json")
    (out / "table3.md").write_text("x")
    with pytest.raises(FileExistsError, match="table3.md"):
        clear_outputs(out, ["table*.*"])

    afile = tmp_path / "a-file"
    afile.write_text("x")
    with pytest.raises(NotADirectoryError, match="--out: .*is a file"):
        clear_outputs(afile, ["results.md"])


def test_clear_outputs_on_a_non_main_rank_does_nothing(tmp_path, monkeypatch):
    from harness import clear_outputs

    (tmp_path / "results.md").write_text("mine")
    monkeypatch.setenv("RANK", "1")
    assert clear_outputs(tmp_path, ["results.md"]) == []
    assert (tmp_path / "results.md").read_text() == "mine"


def test_run_jobs_keep_the_order_and_failures_raise():
    from harness import RunBook, run_jobs

    assert run_jobs(lambda x: {"key": x}, ["a", "b", "c"], 2) == [{"key": "a"}, {"key": "b"}, {"key": "c"}]
    done = []
    assert run_jobs(lambda x: x * 2, [1, 2], 1, on_done=lambda item, r: done.append((item, r))) == [2, 4]
    assert done == [(1, 2), (2, 4)]
    with pytest.raises(RuntimeError, match="b failed: ZeroDivisionError"):
        run_jobs(lambda x: 1 / 0 if x == "b" else x, ["a", "b", "c"], 2)
    # planned runs start in the order asked for (here seed-major) and are recorded in the tables' order
    book = RunBook(lambda key, seed, data: {"key": key, "seed": seed, "data": data})
    book.planning = True
    for key in ("x", "y"):
        for seed in (0, 1):
            assert book.get(key, seed, lambda s, key=key: f"{key}{s}") is None
    book.train_planned(2, order=lambda key, seed: seed)
    assert [(r["key"], r["seed"], r["data"]) for r in book.records] == [("x", 0, "x0"), ("x", 1, "x1"), ("y", 0, "y0"),
                                                                          ("y", 1, "y1")]
    assert book.get("x", 1, None)["data"] == "x1"  # trained once


def test_with_restarts_stops_at_the_first_init_that_learns():
    from harness import with_restarts

    said = []
    result = with_restarts(lambda init, last: (init, init >= 2000, {"init": init, "last": last}), seed=7,
                           max_restarts=3, on_restart=lambda nxt, note: said.append(nxt))
    assert result == (2007, 2007, [{"init": 7, "last": False}, {"init": 1007, "last": False}], True)
    assert said == [1007, 2007]
    # no init learns: the last attempt's result, ok False (the caller reports or stops)
    assert with_restarts(lambda init, last: (init, False, {}), seed=0, max_restarts=1) == (1000, 1000, [{}], False)


def test_finish_args_checks_every_shared_option_before_any_work(tmp_path, capsys):
    import argparse

    from harness import SCHEDULERS, add_overrides, add_presets, add_run_flags, finish_args

    def parse(*argv, out=str(tmp_path / "o")):
        p = argparse.ArgumentParser()
        add_presets(p, {"small": "default", "tiny": None}, default="small")
        add_overrides(p, [("lr", float, None), ("dropout", float, None), ("scheduler", str, None),
                          ("fit_target", float, None), ("steps", int, None)])
        add_run_flags(p, out=out)
        preset = dict(lr=1e-3, dropout=0.1, scheduler="linear", fit_target=90.0, steps=10)
        return finish_args(p, p.parse_args(list(argv)), {"small": preset, "tiny": preset}, positive=("steps",),
                           rates=("lr",), below_one=("dropout",), percents=("fit_target",),
                           choices={"scheduler": SCHEDULERS})

    assert parse("--tiny", "--lr", "0.01").overrides == {"lr": 0.01}
    for argv, flag in ((["--lr", "nan"], "--lr"), (["--lr", "-1"], "--lr"), (["--lr", "inf"], "--lr"),
                       (["--dropout", "1"], "--dropout"), (["--dropout", "nan"], "--dropout"),
                       (["--scheduler", "bogus"], "--scheduler"), (["--fit-target", "101"], "--fit-target"),
                       (["--steps", "0"], "--steps"), (["--jobs", "0"], "--jobs"), (["--threads", "-1"], "--threads")):
        with pytest.raises(SystemExit):
            parse(*argv)
        assert flag in capsys.readouterr().err, argv
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit):
        parse(out=str(tmp_path / "file"))
    err = capsys.readouterr().err
    assert "--out" in err and "is a file" in err
    assert not (tmp_path / "o").exists()  # nothing written by the checks


def test_finish_args_comma_lists_and_seed_lists(tmp_path, capsys):
    """``lists``: comma-separated flags become checked tuples (a preset's tuple passes as it is);
    ``seed_list``: --seed replaces --seeds, and the seeds are distinct and non-negative."""
    import argparse

    from harness import add_overrides, add_presets, add_run_flags, finish_args

    def parse(*argv):
        p = argparse.ArgumentParser()
        add_presets(p, {"small": "default"}, default="small")
        add_overrides(p, [("regions", str, None), ("seeds", int, None, dict(nargs="+"))])
        p.add_argument("--seed", type=int, default=None)
        add_run_flags(p, out=str(tmp_path / "o"))
        return finish_args(p, p.parse_args(list(argv)), {"small": dict(regions=("easy", "random"), seeds=[0, 1])},
                           lists={"regions": ("easy", "hard", "random")}, seed_list=True)

    a = parse()
    assert (a.regions, a.seeds, a.overrides) == (("easy", "random"), [0, 1], {})
    a = parse("--regions", "hard,random", "--seeds", "2", "5")
    assert (a.regions, a.seeds) == (("hard", "random"), [2, 5])
    assert a.overrides == {"regions": "hard,random", "seeds": [2, 5]}  # as the user wrote them, for the caption
    assert parse("--seeds", "2", "5", "--seed", "7").seeds == [7]
    for argv, message in ((["--regions", "hard,medium"], "--regions: unknown ['medium']; accepted: ['easy', 'hard', "
                                                         "'random']"),
                          (["--regions", ""], "--regions: unknown ['']"),
                          (["--seeds", "1", "1"], "--seeds: distinct non-negative seeds, got [1, 1]"),
                          (["--seed", "-1"], "--seeds: distinct non-negative seeds, got [-1]")):
        with pytest.raises(SystemExit):
            parse(*argv)
        assert message in capsys.readouterr().err, argv
