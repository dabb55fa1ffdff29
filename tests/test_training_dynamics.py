"""Training dynamics beyond cartography (issue 14): forgetting, rankings and selections by any recorded
measure, the interactive HTML map (in a real headless browser when one is installed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import numpy as np
import pyarrow as pa
import pytest

from hf_synthsample.cartography import DataMap, forgetting_events


def dyn(rows: dict[int, list[tuple]]) -> pa.Table:
    """{id: [(aum, el2n, loss, correct), ... per epoch]} -> a dynamics table (ids and epochs shuffled)."""
    recs = [(i, e, *v) for i, vs in rows.items() for e, v in enumerate(vs)]
    recs = [recs[j] for j in np.random.default_rng(0).permutation(len(recs))]
    cols = list(zip(*recs))
    return pa.table({"example_id": list(cols[0]), "epoch": list(cols[1]), "aum": list(cols[2]), "el2n": list(cols[3]),
                     "loss": list(cols[4]), "correct": [bool(c) for c in cols[5]]})


# ----------------------------------------------------------------------------- forgetting
def test_forgetting_counts_on_a_hand_written_history():
    history = {  # epochs 0..5, 1 = correct
        10: [0, 1, 0, 1, 1, 0],  # learned at 1, forgotten at 2 and 5 -> 2
        11: [1, 1, 1, 1, 1, 1],  # never forgotten -> 0, learned
        12: [0, 0, 0, 0, 0, 0],  # never learned -> 0 events, flagged
        13: [1, 0, 0, 0, 0, 0],  # one event
        14: [0, 0, 0, 0, 0, 1],  # learned at the end -> 0
        15: [1, 0, 1, 0, 1, 0],  # 3 events
    }
    ids = [i for i, h in history.items() for _ in h]
    epochs = [e for h in history.values() for e in range(len(h))]
    correct = [c for h in history.values() for c in h]
    perm = np.random.default_rng(1).permutation(len(ids))  # order of rows must not matter
    uniq, events, never = forgetting_events(np.array(ids)[perm], np.array(epochs)[perm], np.array(correct)[perm])
    assert uniq.tolist() == [10, 11, 12, 13, 14, 15]
    assert events.tolist() == [2, 0, 0, 1, 0, 3]
    assert never.tolist() == [False, False, True, False, False, False]
    # a missing epoch: transitions are between consecutive *recorded* epochs of the example
    assert forgetting_events([1, 1, 1], [0, 2, 5], [1, 0, 1])[1].tolist() == [1]


def test_forgetting_in_the_data_map_window_and_ranking():
    t = dyn({0: [(1, 0, 0, 1), (1, 0, 0, 0), (1, 0, 0, 1)],   # 1 event
             1: [(1, 0, 0, 0), (1, 0, 0, 0), (1, 0, 0, 0)],   # never learned
             2: [(1, 0, 0, 1), (1, 0, 0, 1), (1, 0, 0, 1)],   # 0 events
             3: [(1, 0, 0, 1), (1, 0, 0, 0), (1, 0, 0, 0)]})  # 1 event
    dm = DataMap.from_dynamics(t, "aum")
    assert dm.scores["forgetting"].tolist() == [1, 0, 0, 1] and dm.never_learned.tolist() == [False, True, False, False]
    # never learned ranks as the most forgotten; ties (0 and 3) go to the smaller id
    assert dm.ranking("forgetting", order="lowest-first").tolist() == [2, 0, 3, 1]
    assert dm.ranking("forgetting", order="hardest-first").tolist() == [1, 0, 3, 2]
    # the window changes the history: epochs 1..2 -> 0 is learned at 2 (no event), 3 never learned
    dm = DataMap.from_dynamics(t, "aum", min_epoch=1)
    assert dm.scores["forgetting"].tolist() == [0, 0, 0, 0] and dm.never_learned.tolist() == [False, True, False, True]
    tab = dm.to_table()
    assert tab.column("forgetting").to_pylist() == [0, 0, 0, 0]
    assert tab.column("never_learned").to_pylist() == [False, True, False, True]


# ----------------------------------------------------------------------------- ranking / selection by any measure
def test_ranking_and_selection_by_any_recorded_measure():
    t = dyn({5: [(-1.0, 0.9, 2.0, 0), (-3.0, 0.7, 1.0, 0)],   # aum -2, el2n 0.8, loss 1.5
             2: [(1.0, 0.1, 0.1, 1), (1.0, 0.3, 0.3, 1)],     # aum 1, el2n 0.2, loss 0.2
             7: [(0.5, 0.5, 0.5, 1), (0.5, 0.5, 0.7, 0)],     # aum 0.5, el2n 0.5, loss 0.6
             3: [(1.0, 0.1, 0.1, 1), (1.0, 0.3, 0.3, 1)]})    # ties with 2
    dm = DataMap.from_dynamics(t, "aum")
    np.testing.assert_allclose(dm.scores["aum"], [1.0, 1.0, -2.0, 0.5])  # ids ascending: 2, 3, 5, 7
    np.testing.assert_allclose(dm.scores["el2n"], [0.2, 0.2, 0.8, 0.5])
    np.testing.assert_allclose(dm.scores["loss"], [0.2, 0.2, 1.5, 0.6])
    assert dm.ranking("aum").tolist() == [5, 7, 2, 3]
    assert dm.ranking("aum", order="highest-first").tolist() == [2, 3, 7, 5]  # ties: smaller id first both ways
    assert dm.ranking("aum", order="hardest-first").tolist() == [5, 7, 2, 3]  # low margin is hard
    assert dm.ranking("el2n", order="hardest-first").tolist() == [5, 7, 2, 3]  # high error is hard
    assert dm.ranking("loss", order="hardest-first").tolist() == [5, 7, 2, 3]
    assert dm.ranking("variability", order="highest-first")[0] == 5
    # selections return example ids (not positions), ascending
    assert dm.select_by("aum", count=2).tolist() == [5, 7]
    assert dm.select_by("el2n", fraction=0.5, order="hardest-first").tolist() == [5, 7]
    assert dm.select_by("aum", fraction=1.0).tolist() == [2, 3, 5, 7]
    # the regions are unchanged
    assert dm.ranking("hard-to-learn").tolist() == [5, 7, 2, 3]


def test_nan_values_rank_last():
    t = pa.table({"example_id": [0, 1, 2], "epoch": [0, 0, 0], "aum": [0.5, 0.1, 0.9], "el2n": [0.1, float("nan"), 0.3],
                  "correct": [True, True, True]})
    dm = DataMap.from_dynamics(t, "aum")
    assert dm.ranking("el2n", order="lowest-first").tolist() == [0, 2, 1]
    assert dm.ranking("el2n").tolist() == [2, 0, 1]  # the default, hardest-first: highest error first
    assert dm.ranking("el2n", order="highest-first").tolist() == [2, 0, 1]


def test_bad_rankings_name_the_measure_and_what_was_recorded():
    dm = DataMap.from_dynamics(dyn({0: [(0.1, 0.2, 0.3, 1)], 1: [(0.2, 0.2, 0.3, 0)]}), "aum")
    with pytest.raises(ValueError, match=r"measure 'inv_ppl' was not recorded.*recorded: \['aum', 'el2n', 'loss', 'forgetting'\]"):
        dm.ranking("inv_ppl")
    with pytest.raises(ValueError, match="order"):
        dm.ranking("aum", order="descending")
    with pytest.raises(ValueError, match="order"):
        dm.ranking("hard-to-learn", order="lowest-first")
    with pytest.raises(ValueError, match="exactly one of fraction"):
        dm.select_by("aum")
    with pytest.raises(ValueError, match="exactly one of fraction"):
        dm.select_by("aum", fraction=0.5, count=1)
    with pytest.raises(ValueError, match="count"):
        dm.select_by("aum", count=3)
    with pytest.raises(ValueError, match="fraction"):
        dm.select_by("aum", fraction=0.0)


def test_forgetting_alone_gives_a_data_map(tmp_path):
    """Recording only `forgetting` still writes one measure (inv_ppl), so the map can be built."""
    torch = pytest.importorskip("torch")
    from datasets import Dataset
    from transformers import BartConfig, BartForConditionalGeneration, Trainer, TrainingArguments

    from hf_synthsample.cartography import CartographyCollator, TrainingDynamicsCallback, add_example_ids

    torch.manual_seed(0)
    model = BartForConditionalGeneration(BartConfig(
        vocab_size=12, d_model=8, encoder_layers=1, decoder_layers=1, encoder_attention_heads=1,
        decoder_attention_heads=1, encoder_ffn_dim=8, decoder_ffn_dim=8, max_position_embeddings=8, pad_token_id=1,
        eos_token_id=2, decoder_start_token_id=0, forced_bos_token_id=None, forced_eos_token_id=None))
    ds = add_example_ids(Dataset.from_dict({"input_ids": [[3 + i % 5, 2] for i in range(8)],
                                            "attention_mask": [[1, 1]] * 8, "labels": [[4 + i % 3, 2] for i in range(8)]}))
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, num_train_epochs=2,
                             remove_unused_columns=False, report_to=[], save_strategy="no", use_cpu=True, disable_tqdm=True)
    Trainer(model=model, args=args, train_dataset=ds, data_collator=CartographyCollator(),
            callbacks=[TrainingDynamicsCallback(measures=("forgetting",))]).train()
    dm = DataMap.from_dynamics(tmp_path / "cartography")
    assert set(dm.scores) == {"inv_ppl", "forgetting"} and len(dm) == 8
    assert len(dm.ranking("forgetting", order="hardest-first")) == 8


# ----------------------------------------------------------------------------- interactive map
def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _need_browser() -> str:
    """The browser, else a skip; where CI installed one (.ci/run sets HF_SYNTHSAMPLE_REQUIRE_BROWSER=1)
    a missing browser fails, so the browser tests are never skipped there unnoticed."""
    browser = _browser()
    if browser is None:
        if os.environ.get("HF_SYNTHSAMPLE_REQUIRE_BROWSER") == "1":
            pytest.fail("HF_SYNTHSAMPLE_REQUIRE_BROWSER=1 but no Chromium/Chrome is on PATH")
        pytest.skip("no Chromium/Chrome installed (apt-get install chromium) to render the HTML map in")
    return browser


def _headless(browser: str, tmp_path, *extra: str) -> list[str]:
    """Headless Chromium as CI runs it: no sandbox (root in a container), no GPU (WebGL in SwiftShader),
    nothing fetched or synced, a fresh profile."""
    return [browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}", *extra]


def _map_and_data(n: int):
    from datasets import Dataset

    rng = np.random.default_rng(0)
    ids = np.repeat(np.arange(n) * 3 + 5, 2)  # sparse ids: not row numbers
    t = pa.table({"example_id": ids, "epoch": np.tile([0, 1], n), "inv_ppl": rng.random(2 * n),
                  "aum": rng.normal(size=2 * n), "correct": rng.random(2 * n) > 0.5})
    dm = DataMap.from_dynamics(t, "inv_ppl")
    order = rng.permutation(n)  # the dataset's rows are shuffled: rows are found by their example_id
    ds = Dataset.from_dict({"example_id": (np.arange(n) * 3 + 5)[order],
                            "source": [f"jump <b>twice</b> & {i}" for i in order], "target": [f"I_JUMP {i}" for i in order],
                            "labels": [[1, 2]] * n})
    return dm, ds


def test_to_html_is_one_self_contained_file(tmp_path):
    pytest.importorskip("plotly", reason="plotly (the 'interactive' extra) is not installed")
    dm, ds = _map_and_data(30)
    path = dm.to_html(tmp_path / "map.html", dataset=ds)
    page = open(path, encoding="utf-8").read()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=", page)  # nothing fetched: plotly.js is inlined
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
    assert data["ids"] == dm.example_ids.tolist()
    i = data["ids"].index(8)  # example 8 is dataset row order.index(1): its own texts, not row 8's
    assert data["texts"]["source"][i] == "jump <b>twice</b> & 1" and "labels" not in data["texts"]
    assert set(data["fields"]) == {"confidence", "variability", "correctness", "inv_ppl", "aum", "forgetting"}
    assert data["fields"]["aum"][i] == pytest.approx(dm.scores["aum"][dm.example_ids.tolist().index(8)], abs=1e-4)
    # regions partition the points; ambiguous wins over the others
    k = dm.subset_size(0.33)
    amb = set(dm.ranking("ambiguous")[:k].tolist())
    assert {data["ids"][j] for j, r in enumerate(data["region"]) if r == 0} == amb
    with pytest.raises(ValueError, match="example ids are not in its 'example_id' column"):
        dm.to_html(tmp_path / "x.html", dataset=ds.select(range(5)))
    with pytest.raises(ValueError, match="assume_id_order"):
        dm.to_html(tmp_path / "x.html", dataset=ds.remove_columns("example_id"))
    with pytest.raises(ValueError, match="text_columns"):
        dm.to_html(tmp_path / "x.html", dataset=ds, text_columns=["nope"])


@pytest.mark.slow
def test_to_html_in_a_headless_browser(tmp_path):
    """Chromium renders the map; the page's self-test hovers a point, hides a region and exports a selection."""
    import html

    pytest.importorskip("plotly", reason="plotly (the 'interactive' extra) is not installed")
    browser = _need_browser()
    dm, ds = _map_and_data(200)
    path = dm.to_html(tmp_path / "map.html", dataset=ds)
    cmd = _headless(browser, tmp_path, "--virtual-time-budget=30000", "--dump-dom",
                    f"file://{os.path.abspath(path)}#selftest")
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.S)
    assert found, f"the page did not finish its self-test: {dom[-500:]}"
    out = json.loads(html.unescape(found.group(1)))
    assert sum(out["traces"]) == 200
    # hover on the first example shows its id, measures and texts, with the text's markup shown, not applied
    first = int(dm.example_ids[0])
    assert f"example {first}" in out["hover"] and "aum: " in out["hover"] and "forgetting: " in out["hover"]
    row = ds["example_id"].index(first)
    assert f"source: {ds[row]['source']}" in out["hover"]
    # the region filter hides exactly that region's trace and unticks its box
    assert out["visibleAfterFilter"] == [j != out["filteredRegion"] for j in range(4)]
    assert out["checkboxAfterFilter"] is False
    # a selection exports example ids (the first two points of each region's trace)
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', open(path).read(), re.S).group(1))
    want = sorted(data["ids"][j] for r in range(4) for j in [i for i, x in enumerate(data["region"]) if x == r][:2])
    assert out["exported"] == {"example_ids": want}
    assert out["textarea"] == ", ".join(map(str, want))


def test_to_html_draws_every_region_s_points_in_a_headless_browser(tmp_path):
    """Issue 44: the map is drawn, not only built. A screenshot of the page in headless Chromium: each
    coloured region's points appear as separate dots in its colour, about one dot per example (a few
    overlap), inside the plot (left of the legend, below the controls)."""
    import colorsys

    pytest.importorskip("plotly", reason="plotly (the 'interactive' extra) is not installed")
    PIL = pytest.importorskip("PIL.Image")
    ndimage = pytest.importorskip("scipy.ndimage")
    from hf_synthsample.cartography.html import REGION_COLOURS

    browser = _need_browser()
    dm, ds = _map_and_data(200)
    path = dm.to_html(tmp_path / "map.html", dataset=ds)
    shot = tmp_path / "map.png"
    subprocess.run(_headless(browser, tmp_path, "--window-size=1200,900", "--virtual-time-budget=20000",
                             f"--screenshot={shot}", f"file://{os.path.abspath(path)}"),
                   capture_output=True, text=True, timeout=120)
    assert shot.is_file(), "Chromium wrote no screenshot"
    page = open(path, encoding="utf-8").read()
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
    image = np.asarray(PIL.open(shot).convert("RGB")).astype(int)
    plot = image[65:, :1030]  # below the region boxes and the title, left of the legend
    coloured = (plot.max(-1) - plot.min(-1)) > 60  # the grid, the axes and the text are grey or black
    blobs, n = ndimage.label(coloured)
    means = ndimage.mean(plot[..., 0], blobs, range(1, n + 1)), ndimage.mean(plot[..., 1], blobs, range(1, n + 1)), \
        ndimage.mean(plot[..., 2], blobs, range(1, n + 1))

    def hue(rgb) -> float:
        return colorsys.rgb_to_hsv(*(c / 255 for c in rgb))[0]

    regions = [r for r in data["regions"] if r != "other"]  # grey: not told apart from the grid
    want = {r: hue(tuple(int(REGION_COLOURS[r][i:i + 2], 16) for i in (1, 3, 5))) for r in regions}
    dots = {r: 0 for r in regions}
    for rgb in zip(*means):
        h = hue(rgb)
        nearest = min(regions, key=lambda r: min(abs(h - want[r]), 1 - abs(h - want[r])))
        dots[nearest] += 1
    for r in regions:
        members = sum(1 for x in data["region"] if data["regions"][x] == r)
        assert 0.75 * members <= dots[r] <= members, (r, members, dots)
