"""ResultsTable (Markdown/JSON/plot) and the atomic writers under it."""

from __future__ import annotations

import json
import os

import pytest

from hf_synthsample.atomic import atomic_path, write_text_atomic
from hf_synthsample.experiments import ResultsTable


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
