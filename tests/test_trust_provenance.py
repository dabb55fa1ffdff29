"""Provenance is true (issue 44, items 4 and 5): no local path in a card, ``size_categories`` of
the data set's own rows, map subsets that name their model and refuse what the map cannot cut,
ids checked by a content digest; and the older kinds (``!!set`` metadata, ``select_by`` naming
its argument, ``to_html`` onto a folder, ``--plot map.jpg --overwrite``)."""

from __future__ import annotations

import os

import datasets
import pytest
import yaml

from hf_synthsample.hub.card import read_card_metadata, redact_local_paths_in_text, render_card
from hf_synthsample.hub.folder import write_hub_folder


# ---------------------------------------------------------------- no local path in a card
def test_render_card_redacts_local_paths_in_the_markdown_too():
    text = render_card({"hf_synthsample": {"split": {"source": "/home/alice/data/train.jsonl"}}},
                       "## Provenance\n\n```yaml\nsource: /home/alice/data/train.jsonl\nout: /srv/u/run/out\n```\n"
                       "see https://huggingface.co/docs/hub/a and n/a, 1/2")
    assert "/home/alice" not in text and "/srv/u" not in text
    assert "<local>/train.jsonl" in text and "<local>/out" in text
    assert "https://huggingface.co/docs/hub/a" in text and "n/a" in text and "1/2" in text


def test_paths_in_text_keep_punctuation_and_relative_paths():
    assert redact_local_paths_in_text("written to /tmp/x/out.") == "written to <local>/out."
    assert redact_local_paths_in_text("![p](plots/a-b.png) data/train.csv") == "![p](plots/a-b.png) data/train.csv"
    # a known path with a space, and a one-component one, wherever it stands
    assert redact_local_paths_in_text("`/data` and `/home/u/my data/f.json`", ["/data", "/home/u/my data/f.json"]) \
        == "`<local>/data` and `<local>/f.json`"


def test_write_hub_folder_card_has_no_absolute_path(tmp_path):
    out = write_hub_folder(tmp_path / "f", {"c": datasets.Dataset.from_dict({"x": [1]})},
                           body=f"# from `{tmp_path}/src.parquet`", metadata={"src": str(tmp_path / "src.parquet")})
    text = (out / "README.md").read_text()
    assert str(tmp_path) not in text and text.count("<local>/src.parquet") == 2


# ---------------------------------------------------------------- YAML-safe metadata
def test_a_set_in_metadata_is_a_sorted_list_not_a_python_tag(tmp_path):
    text = render_card({"hf_synthsample": {"columns": {"b", "a", "c"}, "mixed": frozenset({1, "x"})}}, "# t")
    assert "!!set" not in text and "!!python" not in text
    meta = yaml.safe_load(text.split("---")[1])
    assert meta["hf_synthsample"]["columns"] == ["a", "b", "c"]
    assert sorted(map(str, meta["hf_synthsample"]["mixed"])) == ["1", "x"]


# ---------------------------------------------------------------- size_categories
def test_size_categories_is_the_largest_config_not_the_sum(tmp_path):
    pool = datasets.Dataset.from_dict({"x": list(range(600))})
    out = write_hub_folder(tmp_path / "f", {"a": pool, "b": pool, "c": pool.select(range(10))}, body="# t")
    # 1,210 rows in all, but the largest data set a user loads has 600
    assert read_card_metadata(out)["size_categories"] == ["n<1K"]
    write_hub_folder(out, {"d": datasets.Dataset.from_dict({"x": list(range(1_500))})}, body="# t", if_exists="add")
    assert read_card_metadata(out)["size_categories"] == ["1K<n<10K"]
