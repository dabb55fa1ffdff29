"""Every measure's direction is declared once (``measures.MEASURE_INFO``) and every reader follows it:
the data map's confidence axis, regions, ``ranking``, ``select_by``, ``subset``, summary, PNG plot,
HTML map, curricula and the CLI's ``datamap --measure``."""

from __future__ import annotations

import doctest
import importlib
import json
import os
import random
import re
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from hf_synthsample.cartography import DataMap, curriculum_order
from hf_synthsample.cartography.measures import HARD_END, MAP_MEASURES, MEASURE_INFO, MEASURES, measure_info
from hf_synthsample.cli import main

HIGHER_IS_HARDER = ("margin_deficit", "el2n", "loss")


# ----------------------------------------------------------------------------- the declaration
def test_one_declaration_gives_every_direction():
    assert {n for n, m in MEASURE_INFO.items() if m.hard_end == "high"} == {*HIGHER_IS_HARDER, "forgetting",
                                                                           "variability"}
    assert HARD_END == {n: m.hard_end for n, m in MEASURE_INFO.items()}  # the old name, derived
    assert set(MEASURES) | {"confidence", "variability", "correctness"} == set(MEASURE_INFO)
    assert MAP_MEASURES == ("inv_ppl", "chia", "aum", "min_margin", "margin_deficit", "el2n", "loss", "bleu")
    for name, info in MEASURE_INFO.items():
        assert info.hard_end in ("low", "high") and info.low < info.high and info.label
        assert info.confidence_sign == (1.0 if info.hard_end == "low" else -1.0)
    assert measure_info("loss").confidence_label == "confidence = −mean loss (higher = easier)"
    with pytest.raises(ValueError, match=r"measure must be one of \['inv_ppl'"):
        measure_info("perplexity")


# ----------------------------------------------------------------------------- hand-made dynamics
# 5 examples (ids shuffled in the table), 2 epochs; example 7 is the hardest on every measure, 3 the easiest
ORDER = [7, 1, 5, 9, 3]  # hardest to easiest
_HARDNESS = {i: r for r, i in enumerate(ORDER)}  # 0 = hardest


def hand_table(seed: int = 0) -> pa.Table:
    rows = []
    for i, h in _HARDNESS.items():
        for epoch in (0, 1):
            p = 0.1 + 0.2 * h + 0.01 * epoch  # gold probability: low for hard examples
            rows.append({"example_id": i, "epoch": epoch, "inv_ppl": p, "chia": p + 0.02, "aum": 4 * p - 2,
                         "min_margin": 4 * p - 2.5, "margin_deficit": 3.7 - 4 * p, "el2n": 1 - p,
                         "loss": -np.log(p), "correct": p > 0.5})
    random.Random(seed).shuffle(rows)
    return pa.Table.from_pylist(rows)


@pytest.mark.parametrize("measure", MAP_MEASURES[:-1])
def test_every_measure_orients_the_map_so_hard_to_learn_is_its_hard_end(measure):
    dm = DataMap.from_dynamics(hand_table(), measure)
    raw = dm.scores[measure]
    sign = -1.0 if measure in HIGHER_IS_HARDER else 1.0
    np.testing.assert_allclose(dm.confidence, sign * raw)
    assert dm.ranking("hard-to-learn").tolist() == ORDER
    assert dm.ranking("easy-to-learn").tolist() == ORDER[::-1]
    assert dm.select("hard-to-learn", 0.4).tolist() == [1, 7]
    # rankings by a measure put its hard end first by default, whatever the map's measure
    for other in MAP_MEASURES[:-1]:
        assert dm.ranking(other).tolist() == ORDER, other
        assert dm.ranking(other, order="easiest-first").tolist() == ORDER[::-1], other
        assert dm.select_by(other, count=2).tolist() == [1, 7], other
    # the explicit orders stay literal
    low = ORDER if sign > 0 else ORDER[::-1]
    assert dm.ranking(measure, order="lowest-first").tolist() == low
    assert dm.ranking(measure, order="highest-first").tolist() == low[::-1]
    # what the axis holds is said where it is shown
    assert dm.confidence_label == measure_info(measure).confidence_label
    assert ("−mean" in dm.confidence_label) == (measure in HIGHER_IS_HARDER)
    summary = dm.summary(0.4)
    assert dm.confidence_label in summary and measure_info(measure).direction in summary
    hard_line = next(line for line in summary.splitlines() if line.strip().startswith("hard-to-learn"))
    assert f"mean {measure} {raw[np.isin(dm.example_ids, [1, 7])].mean():.3f}" in hard_line
    table = dm.to_table()
    np.testing.assert_allclose(table.column("confidence").to_numpy(), sign * table.column(measure).to_numpy())


def test_region_of_and_cutoffs_follow_the_orientation():
    dm = DataMap.from_dynamics(hand_table(), "loss", max_epoch=0)  # one epoch: variability 0 everywhere
    region = dict(zip(dm.example_ids.tolist(), dm.region_of(0.2).tolist()))
    # ambiguous (all ties at 0 variability: the smallest id) wins over hard-to-learn / easy-to-learn
    assert region == {1: "ambiguous", 3: "easy-to-learn", 5: "other", 7: "hard-to-learn", 9: "other"}
    cut = dm.region_cutoffs(0.2)
    loss = {i: -np.log(0.1 + 0.2 * h) for i, h in _HARDNESS.items()}
    assert cut["hard-to-learn"] == ("confidence", pytest.approx(-(loss[7] + loss[1]) / 2))
    assert cut["easy-to-learn"] == ("confidence", pytest.approx(-(loss[3] + loss[9]) / 2))
    assert cut["ambiguous"] == ("variability", 0.0)
    assert (dm.confidence[dm.example_ids == 7] < cut["hard-to-learn"][1]).all()


def test_orders_and_measures_without_a_direction_are_refused():
    dm = DataMap.from_dynamics(hand_table(), "loss")
    with pytest.raises(ValueError, match=r"order must be one of \['hardest-first', 'easiest-first'"):
        dm.ranking("loss", order="descending")
    custom = DataMap(dm.example_ids, dm.confidence, dm.variability, dm.correctness, measure="loss", epochs=[0, 1],
                     scores={"mine": np.arange(len(dm), dtype=float)})
    assert custom.ranking("mine", order="highest-first").tolist() == dm.example_ids[::-1].tolist()
    with pytest.raises(ValueError, match="'mine' has none .*lowest-first"):
        custom.ranking("mine")
    handmade = DataMap([0, 1], [0.2, 0.1], [0, 0], [0, 0], measure="my_score", epochs=[0])
    assert handmade.confidence_label == "confidence (my_score)" and handmade.measure_info is None


def test_map_measure_errors_say_what_can_be_used():
    t = hand_table().drop_columns(["el2n"])
    with pytest.raises(ValueError, match=r"measure 'el2n' is not recorded .*recorded: \['inv_ppl', 'chia'.*record it"):
        DataMap.from_dynamics(t, "el2n")
    with pytest.raises(ValueError, match=r"'forgetting' cannot be a data map's confidence axis: it is counted .*"
                                         r"dm.ranking\('forgetting'\)"):
        DataMap.from_dynamics(t, "forgetting")
    with pytest.raises(ValueError, match=r"'bleu' is not recorded .*source='eval'"):
        DataMap.from_dynamics(t, "bleu")
    with pytest.raises(ValueError, match=r"measure must be one of \['inv_ppl'.* got 'ppl'"):
        DataMap.from_dynamics(t, "ppl")
    with pytest.raises(TypeError, match="measure must be a str"):
        DataMap.from_dynamics(t, 3)
    only_ids = pa.table({"example_id": [0, 1], "epoch": [0, 0], "correct": [True, False]})
    with pytest.raises(ValueError, match="no per-epoch measure a data map can be built on"):
        DataMap.from_dynamics(only_ids, "loss")
    # a column that is there but empty (an older file, a measure not recorded) is not recorded
    empty = t.set_column(t.column_names.index("loss"), "loss", pa.array([None] * len(t), pa.float32()))
    with pytest.raises(ValueError, match="'loss' is not recorded"):
        DataMap.from_dynamics(empty, "loss")


def test_an_older_dynamics_folder_without_the_newer_measures_loads(tmp_path):
    """A folder as an older version wrote it (inv_ppl, chia, correct only; no loss/el2n/margins) still
    gives a map, and a map on 'loss' is refused naming what it holds."""
    import pyarrow.parquet as pq

    folder = tmp_path / "cartography"
    folder.mkdir()
    t = hand_table().select(["example_id", "epoch", "inv_ppl", "chia", "correct"])
    pq.write_table(t.cast(pa.schema([("example_id", pa.int64()), ("epoch", pa.int32()), ("inv_ppl", pa.float32()),
                                     ("chia", pa.float32()), ("correct", pa.bool_())])), folder / "dynamics.parquet")
    (folder / "cartography.json").write_text(json.dumps({"measures": ["inv_ppl", "chia"], "epochs": [0, 1],
                                                         "num_examples": 5}))
    dm = DataMap.from_dynamics(folder)
    assert dm.ranking("hard-to-learn").tolist() == ORDER and set(dm.scores) == {"inv_ppl", "chia", "forgetting"}
    with pytest.raises(ValueError, match=r"'loss' is not recorded .*recorded: \['inv_ppl', 'chia'\]"):
        DataMap.from_dynamics(folder, "loss")


# ----------------------------------------------------------------------------- readers: subset, curricula, plot
def test_subset_and_curricula_follow_the_direction():
    from datasets import Dataset

    dm = DataMap.from_dynamics(hand_table(), "loss")
    order = [9, 3, 7, 1, 5]  # a shuffled dataset: rows are found by example_id
    train = Dataset.from_dict({"example_id": order, "text": [f"row {i}" for i in order]})
    assert sorted(dm.subset(train, "hard-to-learn", 0.4)["example_id"]) == [1, 7]  # the highest losses
    assert sorted(dm.subset(train, "easy-to-learn", 0.4)["example_id"]) == [3, 9]
    # easy-to-hard: the first pool (2 of 5 rows) holds the two lowest-loss examples
    for region, kw in (("easy-to-learn", {}), ("loss", {"order": "easiest-first"}),
                       ("inv_ppl", {"order": "easiest-first"})):
        rows = curriculum_order(dm, region, train, num_steps=1, batch_size=2, start=0.4, growth=2.0, **kw)
        assert sorted(train.select(rows)["example_id"]) == [3, 9], region
    rows = curriculum_order(dm, "loss", train, num_steps=1, batch_size=2, start=0.4, growth=2.0)  # hardest first
    assert sorted(train.select(rows)["example_id"]) == [1, 7]
    with pytest.raises(ValueError, match="order: only for a ranking by a measure"):
        curriculum_order(dm, "hard-to-learn", train, num_steps=1, batch_size=2, order="easiest-first")


def _captured_plot(monkeypatch, dm, tmp_path, **kw):
    """Draw ``dm.plot`` and keep the figure for inspection (it is still saved)."""
    import hf_synthsample.cartography.plot as plot_module

    kept = {}
    real = plot_module.save_figure_atomic

    def keep(fig, path, **k):
        kept["fig"] = fig
        kept["labels"] = [(a.get_xlabel(), a.get_ylabel()) for a in fig.axes]
        return real(fig, path, **k)

    monkeypatch.setattr(plot_module, "save_figure_atomic", keep)
    path = dm.plot(tmp_path / "map.png", **kw)
    assert os.path.getsize(path) > 0
    return kept


def test_plot_names_the_axis_draws_the_regions_and_a_full_colour_bar(monkeypatch, tmp_path):
    dm = DataMap.from_dynamics(hand_table(), "loss")
    kept = _captured_plot(monkeypatch, dm, tmp_path, fraction=0.4)
    ax, bar = kept["fig"].axes
    assert kept["labels"][0][1] == "confidence = −mean loss (higher = easier)"
    cut = dm.region_cutoffs(0.4)
    lines = {(tuple(line.get_xdata()), tuple(line.get_ydata())) for line in ax.get_lines()}
    assert ((0, 1), (cut["hard-to-learn"][1],) * 2) in lines
    assert ((0, 1), (cut["easy-to-learn"][1],) * 2) in lines
    assert ((cut["ambiguous"][1],) * 2, (0, 1)) in lines
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("hard-to-learn (40%)") for t in texts) and any("ambiguous (40%)" in t for t in texts)
    # the colour bar spans the whole correctness range, 1.0 included
    assert bar.get_ylim() == pytest.approx((0.0, 1.0))
    assert "correctness" in kept["labels"][1][1]
    norm = ax.collections[0].norm
    assert norm.boundaries[0] == 0.0 and norm.boundaries[-1] == 1.0
    # a sample of the points still draws the whole map's boundaries
    kept = _captured_plot(monkeypatch, dm, tmp_path, fraction=0.4, sample_fraction=0.4)
    assert len(kept["fig"].axes[0].collections[0].get_offsets()) == 2
    assert ((0, 1), (cut["hard-to-learn"][1],) * 2) in {
        (tuple(line.get_xdata()), tuple(line.get_ydata())) for line in kept["fig"].axes[0].get_lines()}


def test_html_map_regions_and_axis_follow_the_direction(tmp_path):
    pytest.importorskip("plotly", reason="plotly (the 'interactive' extra) is not installed")
    dm = DataMap.from_dynamics(hand_table(), "loss", max_epoch=0)
    page = open(dm.to_html(tmp_path / "map.html", fraction=0.2), encoding="utf-8").read()
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
    names = [data["regions"][r] for r in data["region"]]
    assert dict(zip(data["ids"], names)) == dict(zip(dm.example_ids.tolist(), dm.region_of(0.2).tolist()))
    assert names[data["ids"].index(7)] == "hard-to-learn"  # the highest loss
    assert names[data["ids"].index(3)] == "easy-to-learn"
    assert data["yLabel"] == "confidence = −mean loss (higher = easier)" and data["xLabel"] == "variability"
    assert data["fields"]["loss"][data["ids"].index(7)] == pytest.approx(-np.log(0.1), abs=1e-4)


def test_html_module_does_not_import_the_data_map():
    """Dependencies flow one way: datamap -> html, never back (no import circle)."""
    code = ("import sys, hf_synthsample.cartography.html as h; "
            "print('hf_synthsample.cartography.datamap' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "False"
    import hf_synthsample.cartography.html as html_module

    assert "datamap" not in "".join(re.findall(r"^\s*(?:from|import) .*$", open(html_module.__file__).read(), re.M))


@pytest.mark.parametrize("name", ["hf_synthsample.cartography.measures", "hf_synthsample.cartography.html"])
def test_docstring_examples(name):
    if name.endswith("html"):
        pytest.importorskip("plotly", reason="plotly (the 'interactive' extra) is not installed")
    if name.endswith("measures"):
        pytest.importorskip("torch")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# ----------------------------------------------------------------------------- the CLI
def _folder(tmp_path, table: pa.Table) -> str:
    import pyarrow.parquet as pq

    folder = tmp_path / "dyn"
    folder.mkdir(exist_ok=True)
    pq.write_table(table, folder / "dynamics.parquet")
    (folder / "cartography.json").write_text(json.dumps({"epochs": sorted(set(table.column("epoch").to_pylist()))}))
    return str(folder)


def test_cli_datamap_accepts_every_recorded_measure_and_follows_its_direction(tmp_path, capsys):
    import datasets

    folder = _folder(tmp_path, hand_table())
    for measure in MAP_MEASURES[:-1]:
        out = tmp_path / f"hard-{measure}"
        assert main(["datamap", folder, "--measure", measure, "--select", "hard-to-learn", "--fraction", "0.4",
                     "--out", str(out)]) == 0, measure
        printed = capsys.readouterr().out
        assert measure_info(measure).confidence_label in printed
        split = datasets.load_dataset(str(out), split="train")
        assert sorted(split["example_id"]) == [1, 7], measure
        sign = -1.0 if measure in HIGHER_IS_HARDER else 1.0
        np.testing.assert_allclose(split["confidence"], sign * np.asarray(split[measure]), rtol=1e-6)
    # not a per-epoch measure, or not recorded: refused naming the option and what is there
    with pytest.raises(SystemExit) as exit_:
        main(["datamap", folder, "--measure", "forgetting"])
    assert exit_.value.code == 2
    assert "--measure: invalid choice: 'forgetting' (choose from 'inv_ppl', 'chia'" in capsys.readouterr().err
    (tmp_path / "p").mkdir()
    partial = _folder(tmp_path / "p", hand_table().drop_columns(["el2n"]))
    assert main(["datamap", partial, "--measure", "el2n"]) == 2
    err = capsys.readouterr().err
    assert "--measure 'el2n' is not recorded" in err and "recorded: ['inv_ppl', 'chia', 'aum'" in err


# ----------------------------------------------------------------------------- a trained run
@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny BART trained 15 epochs on 40 shuffled rows (the first source token mapped; every 5th row
    with a random target), every per-step measure recorded. About 5 s on one thread."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from datasets import Dataset
    from test_cartography_callback import bart, make_trainer

    from hf_synthsample.cartography import CartographyCallback, add_example_ids

    r = random.Random(0)
    rows = []
    for i in range(40):
        x = [r.randint(3, 12) for _ in range(r.randint(2, 4))]
        y = [r.randint(13, 22)] if i % 5 == 0 else [x[0] + 10]
        rows.append({"input_ids": x + [2], "attention_mask": [1] * (len(x) + 1), "labels": y + [2]})
    r.shuffle(rows)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        out = tmp_path_factory.mktemp("directions") / "run"
        ds = add_example_ids(Dataset.from_list(rows))
        measures = ("inv_ppl", "chia", "aum", "min_margin", "margin_deficit", "forgetting", "el2n", "loss")
        make_trainer(bart(), ds, out, [CartographyCallback(measures=measures)], epochs=15, bs=4, lr=1e-2).train()
    finally:
        torch.set_num_threads(threads)
    return str(out / "cartography")


def _overlap(a: DataMap, b: DataMap, region: str, k: int) -> int:
    return len(set(a.ranking(region)[:k].tolist()) & set(b.ranking(region)[:k].tolist()))


def test_trained_run_loss_and_inv_ppl_maps_agree_on_hard_and_easy_rows(trained):
    loss, inv = DataMap.from_dynamics(trained, "loss"), DataMap.from_dynamics(trained, "inv_ppl")
    assert 0.1 < loss.correctness.mean() < 0.9  # the model learnt some rows, not all
    k = loss.subset_size(0.25)  # 10 of 40
    # the hard-to-learn rows are the highest mean losses (the trained run shared 0 of them)
    highest_loss = np.argsort(-loss.scores["loss"], kind="stable")[:k]
    assert set(loss.ranking("hard-to-learn")[:k].tolist()) == set(loss.example_ids[highest_loss].tolist())
    assert _overlap(loss, inv, "hard-to-learn", k) >= 8
    assert _overlap(loss, inv, "easy-to-learn", k) >= 7
    # and the two ends stay apart: no row is hard on one map and easy on the other
    assert not set(loss.ranking("hard-to-learn")[:k].tolist()) & set(inv.ranking("easy-to-learn")[:k].tolist())
    # one epoch: inv_ppl = exp(-loss) is a monotone map, so the regions are the same rows
    for epoch in (3, 14):
        one_l = DataMap.from_dynamics(trained, "loss", min_epoch=epoch, max_epoch=epoch)
        one_i = DataMap.from_dynamics(trained, "inv_ppl", min_epoch=epoch, max_epoch=epoch)
        for region in ("hard-to-learn", "easy-to-learn"):
            assert set(one_l.ranking(region)[:k].tolist()) == set(one_i.ranking(region)[:k].tolist()), (epoch, region)


@pytest.mark.parametrize("harder, confident", [("el2n", "chia"), ("margin_deficit", "min_margin"),
                                               ("margin_deficit", "aum"), ("loss", "chia")])
def test_trained_run_error_and_confidence_measures_agree(trained, harder, confident):
    a, b = DataMap.from_dynamics(trained, harder), DataMap.from_dynamics(trained, confident)
    k = a.subset_size(0.25)
    assert _overlap(a, b, "hard-to-learn", k) >= 7
    assert _overlap(a, b, "easy-to-learn", k) >= 7
    # and the rankings by the measures themselves, hardest first, on either map
    assert len(set(a.ranking(harder)[:k].tolist()) & set(a.ranking(confident)[:k].tolist())) >= 7


def test_trained_run_every_reader_agrees_with_the_map_regions(trained, tmp_path, capsys):
    from datasets import Dataset

    dm = DataMap.from_dynamics(trained, "loss")
    k = dm.subset_size(0.25)
    hard = set(dm.ranking("hard-to-learn")[:k].tolist())
    assert set(dm.select_by("loss", count=k).tolist()) == hard
    assert set(dm.select_by("confidence", count=k).tolist()) == hard
    assert set(dm.select("hard-to-learn", 0.25).tolist()) == hard
    train = Dataset.from_dict({"example_id": dm.example_ids[::-1].tolist()})
    assert set(dm.subset(train, "hard-to-learn", 0.25)["example_id"]) == hard
    region = dm.region_of(0.25)
    assert {int(i) for i, r in zip(dm.example_ids, region) if r == "hard-to-learn"} <= hard
    # the CLI on the run's folder cuts the same rows
    out = tmp_path / "hard"
    assert main(["datamap", trained, "--measure", "loss", "--select", "hard-to-learn", "--fraction", "0.25",
                 "--out", str(out), "--plot", str(tmp_path / "map.png")]) == 0
    import datasets

    split = datasets.load_dataset(str(out), split="train")
    assert set(split["example_id"]) == hard
    assert "confidence = −mean loss (higher = easier)" in capsys.readouterr().out
