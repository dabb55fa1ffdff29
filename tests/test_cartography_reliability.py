"""Cartography never silently wrong (issue 12): rows by example id, validated dynamics, damaged files,
CLI options checked up front."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_synthsample.cartography import DataMap, load_dynamics
from hf_synthsample.cartography.store import DYNAMICS_FILE, META_FILE
from hf_synthsample.cli import main


def dynamics(values: dict[int, list[float]]) -> pa.Table:
    """One row per example and epoch; correct = value > 0.5."""
    ids, epochs, vals = [], [], []
    for i, vs in values.items():
        for e, v in enumerate(vs):
            ids.append(i)
            epochs.append(e)
            vals.append(v)
    return pa.table({"example_id": pa.array(ids, pa.int64()), "epoch": pa.array(epochs, pa.int32()),
                     "inv_ppl": pa.array(vals, pa.float64()), "correct": [v > 0.5 for v in vals]})


# confidence of example i is CONF[i]; hard-to-learn order: 3, 0, 4, 1, 5, 2
CONF = [0.2, 0.4, 0.9, 0.1, 0.3, 0.8]


@pytest.fixture
def dm() -> DataMap:
    return DataMap.from_dynamics(dynamics({i: [c, c] for i, c in enumerate(CONF)}))


def train(n: int = 6) -> Dataset:
    return Dataset.from_dict({"example_id": list(range(n)), "text": [f"row {i}" for i in range(n)],
                              "tok": (["a", "a b", "c", "a", "d", "a b"] * n)[:n]})


def write_folder(folder, table: pa.Table, **meta) -> str:
    os.makedirs(folder, exist_ok=True)
    pq.write_table(table, os.path.join(folder, DYNAMICS_FILE))
    epochs = sorted(set(table.column("epoch").to_pylist()))
    n = len(set(table.column("example_id").to_pylist()))
    with open(os.path.join(folder, META_FILE), "w") as f:
        json.dump({"measures": ["inv_ppl"], "epochs": epochs, "num_examples": n, **meta}, f)
    return str(folder)


# ----------------------------------------------------------------------------- 1. rows by example id
def test_subset_selects_by_example_id_in_a_shuffled_dataset(dm):
    assert dm.select("hard-to-learn", 0.5).tolist() == [0, 3, 4]
    shuffled = train().shuffle(seed=1)
    assert shuffled["example_id"] != list(range(6))  # really shuffled
    sub = dm.subset(shuffled, "hard-to-learn", 0.5)
    assert sub["example_id"] == [0, 3, 4] and sub["text"] == ["row 0", "row 3", "row 4"]
    # re-ordered (reversed) and with extra rows the map does not know: still the same examples
    extra = Dataset.from_dict({"example_id": [99, 98], "text": ["x", "y"], "tok": ["a", "b"]})
    from datasets import concatenate_datasets

    bigger = concatenate_datasets([train().select(range(5, -1, -1)), extra])
    assert dm.subset(bigger, "hard-to-learn", 0.5)["text"] == ["row 0", "row 3", "row 4"]
    assert dm.positions(bigger).tolist() == [5, 4, 3, 2, 1, 0]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), extra=st.integers(0, 5), seed=st.integers(0, 10**6),
       region=st.sampled_from(["hard-to-learn", "easy-to-learn", "ambiguous", "random"]),
       fraction=st.floats(0.05, 1.0))
def test_positions_and_subset_match_ids_whatever_the_row_order(n, extra, seed, region, fraction):
    rng = np.random.default_rng(seed)
    ids = rng.choice(10 * n + 10, size=n, replace=False)  # ids need not be 0..n-1
    dm = DataMap.from_dynamics(dynamics({int(i): rng.random(2).tolist() for i in ids}))
    all_ids = np.concatenate([ids, 10 * n + 10 + np.arange(extra)])  # rows the map does not know
    order = rng.permutation(len(all_ids))
    ds = Dataset.from_dict({"example_id": all_ids[order].tolist(), "payload": (all_ids[order] * 7).tolist()})
    want = dm.select(region, fraction, seed=1)
    sub = dm.subset(ds, region, fraction, seed=1)
    assert sub["example_id"] == want.tolist() and sub["payload"] == (want * 7).tolist()
    assert np.asarray(ds["example_id"])[dm.positions(ds)].tolist() == dm.example_ids.tolist()


def test_subset_of_a_filtered_dataset_names_the_missing_ids(dm):
    filtered = train().filter(lambda r: r["example_id"] not in (2, 4))
    with pytest.raises(ValueError, match=r"2 of the data map's 6 example ids are not in its 'example_id' column "
                                         r"\(first: 2\)"):
        dm.subset(filtered, "hard-to-learn", 0.5)


def test_oov_repair_follows_the_ids_in_a_shuffled_dataset(dm):
    # hard-to-learn 50 %: 3, 0, 4 ({a}, {a}, {d}); b and c come with 1 and 2, which replace 0 and 3
    ordered = dm.subset(train(), "hard-to-learn", 0.5, oov_columns=["tok"])
    shuffled = dm.subset(train().shuffle(seed=2), "hard-to-learn", 0.5, oov_columns=["tok"])
    assert ordered["example_id"] == shuffled["example_id"] == [1, 2, 4]
    assert shuffled["tok"] == ["a b", "c", "d"]


def test_a_dataset_without_ids_needs_assume_id_order_and_the_right_row_count(dm):
    no_ids = train().remove_columns("example_id")
    with pytest.raises(ValueError, match="no 'example_id' column.*assume_id_order=True"):
        dm.subset(no_ids, "hard-to-learn", 0.5)
    assert dm.subset(no_ids, "hard-to-learn", 0.5, assume_id_order=True)["text"] == ["row 0", "row 3", "row 4"]
    unrelated = Dataset.from_dict({"text": [f"other {i}" for i in range(300)]})
    for kw in ({}, {"assume_id_order": True}):  # an unrelated 300-row file is never cut
        with pytest.raises(ValueError, match="example_id|300 rows but the dynamics hold 6 examples"):
            dm.subset(unrelated, "hard-to-learn", 0.5, **kw)
    # ids that are not row numbers cannot be in row order, whatever the row count
    odd = DataMap.from_dynamics(dynamics({10 + i: [c, c] for i, c in enumerate(CONF)}))
    with pytest.raises(ValueError, match="not row numbers"):
        odd.subset(no_ids, "hard-to-learn", 0.5, assume_id_order=True)


def test_bad_id_columns_are_refused(dm):
    with pytest.raises(TypeError, match="integer example ids"):
        dm.subset(train().cast_column("example_id", __import__("datasets").Value("string")), "random", 0.5)
    dup = Dataset.from_dict({"example_id": [0, 1, 2, 3, 4, 5, 5]})
    with pytest.raises(ValueError, match="repeats example ids \\(first: 5\\)"):
        dm.subset(dup, "random", 0.5)


def test_cli_cuts_the_right_rows_of_a_shuffled_dataset(dm, tmp_path, capsys):
    folder = write_folder(tmp_path / "dyn", dynamics({i: [c, c] for i, c in enumerate(CONF)}))
    src = tmp_path / "shuffled.parquet"
    train().shuffle(seed=1).to_parquet(str(src))
    out = tmp_path / "out"
    assert main(["datamap", folder, "--select", "hard-to-learn", "--fraction", "0.5", "--dataset", str(src),
                 "--out", str(out)]) == 0
    import datasets

    sub = datasets.load_dataset(str(out), split="train")
    assert sorted(sub["example_id"]) == [0, 3, 4] and sorted(sub["text"]) == ["row 0", "row 3", "row 4"]


def test_cli_refuses_an_unrelated_file_before_writing_anything(tmp_path, capsys):
    folder = write_folder(tmp_path / "dyn", dynamics({i: [0.5, 0.6] for i in range(300)}))
    src = tmp_path / "unrelated.parquet"
    Dataset.from_dict({"text": [f"other {i}" for i in range(310)]}).to_parquet(str(src))
    out, png = tmp_path / "out", tmp_path / "map.png"
    args = ["datamap", folder, "--select", "hard-to-learn", "--dataset", str(src), "--out", str(out), "--plot", str(png)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--dataset has no 'example_id' column" in err and "--assume-id-order" in err
    assert main(args + ["--assume-id-order"]) == 2
    assert "--dataset has 310 rows but the dynamics hold 300 examples" in capsys.readouterr().err
    assert not out.exists() and not png.exists()
    # the right row count and the flag: rows taken in id order
    Dataset.from_dict({"text": [f"row {i}" for i in range(300)]}).to_parquet(str(src))
    assert main(args + ["--assume-id-order", "--fraction", "0.01"]) == 0


# ----------------------------------------------------------------------------- 2. validated dynamics
def test_a_partial_last_epoch_is_refused_naming_the_epoch_and_count():
    values = {i: [0.1 * i, 0.2, 0.3, 0.4] + ([0.5] if i % 2 else []) for i in range(6)}  # 4 and 5 epochs mixed
    t = dynamics(values)
    with pytest.raises(ValueError, match=r"window 0\.\.4 is incomplete: epoch 4 lacks 3 of 6 examples "
                                         r"\(first: example id 0\).*\[0, 1, 2, 3\]"):
        DataMap.from_dynamics(t)
    dm = DataMap.from_dynamics(t, max_epoch=3)
    assert dm.epochs == (0, 1, 2, 3) and len(dm) == 6
    # an epoch never recorded inside the window (a resume that lost one)
    gap = t.filter(pa.compute.not_equal(t.column("epoch"), 1))
    with pytest.raises(ValueError, match="epoch 1 was never recorded"):
        DataMap.from_dynamics(gap, max_epoch=2)
    # an example seen in some epochs only
    lost = t.filter(pa.compute.invert(pa.compute.and_(pa.compute.equal(t.column("example_id"), 2),
                                                      pa.compute.equal(t.column("epoch"), 0))))
    with pytest.raises(ValueError, match="epoch 0 lacks 1 of 6 examples \\(first: example id 2\\)"):
        DataMap.from_dynamics(lost, max_epoch=3)


def test_nan_is_an_error_unless_a_policy_is_chosen():
    t = dynamics({0: [0.2, 0.4, float("nan")], 1: [0.5, 0.5, 0.5], 2: [float("nan")] * 3})
    with pytest.raises(ValueError, match=r"4 value\(s\) of 'inv_ppl' in epochs 0\.\.2 are NaN or missing \(2 example\(s\); "
                                         r"first: example id 0, epoch 2\).*nan_policy='omit'"):
        DataMap.from_dynamics(t)
    omit = DataMap.from_dynamics(t, nan_policy="omit")  # example 0 over epochs 0, 1; example 2 has nothing left
    assert omit.example_ids.tolist() == [0, 1]
    np.testing.assert_allclose(omit.confidence, [0.3, 0.5])
    np.testing.assert_allclose(omit.variability, [0.1, 0.0])
    drop = DataMap.from_dynamics(t, nan_policy="drop")
    assert drop.example_ids.tolist() == [1] and drop.num_examples == 3
    with pytest.raises(ValueError, match="nan_policy must be one of"):
        DataMap.from_dynamics(t, nan_policy="ignore")
    nulls = t.set_column(2, "inv_ppl", pa.array([0.2, None, 0.1, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1]))
    with pytest.raises(ValueError, match=r"1 value\(s\) of 'inv_ppl'.*NaN or missing"):
        DataMap.from_dynamics(nulls)


def test_bad_id_and_epoch_columns_are_refused():
    t = dynamics({0: [0.1, 0.2], 1: [0.3, 0.4]})
    with pytest.raises(TypeError, match="'example_id' must hold integer or string example ids"):
        DataMap.from_dynamics(t.set_column(0, "example_id", pa.array([0.5, 0.5, 1.5, 1.5])))
    with pytest.raises(ValueError, match="negative"):
        DataMap.from_dynamics(t.set_column(0, "example_id", pa.array([-1, -1, 1, 1])))
    with pytest.raises(ValueError, match="missing values"):
        DataMap.from_dynamics(t.set_column(1, "epoch", pa.array([0, None, 0, 1], pa.int32())))
    twice = pa.concat_tables([t, t.slice(3, 1)])
    with pytest.raises(ValueError, match=r"1 \(example_id, epoch\) pairs are recorded twice \(first: example id 1, "
                                         r"epoch 1\)"):
        DataMap.from_dynamics(twice)


def test_metadata_that_does_not_match_the_data_is_refused(tmp_path):
    t = dynamics({i: [0.1, 0.2, 0.3] for i in range(4)})
    ok = write_folder(tmp_path / "ok", t)
    assert len(DataMap.from_dynamics(ok)) == 4
    more_epochs = write_folder(tmp_path / "epochs", t, epochs=[0, 1, 2, 3])
    with pytest.raises(ValueError, match=r"cartography.json lists epochs \[0, 1, 2, 3\] but dynamics.parquet holds "
                                         r"epochs \[0, 1, 2\]"):
        DataMap.from_dynamics(more_epochs)
    more_examples = write_folder(tmp_path / "examples", t, num_examples=10)
    with pytest.raises(ValueError, match="lists 10 examples but dynamics.parquet holds 4 distinct example ids; "
                                         "6 examples were never recorded"):
        DataMap.from_dynamics(more_examples)


@pytest.mark.parametrize("damaged", [DYNAMICS_FILE, META_FILE])
def test_truncated_files_are_named_as_damaged(tmp_path, damaged):
    folder = write_folder(tmp_path / "dyn", dynamics({i: [0.1, 0.2] for i in range(50)}))
    path = os.path.join(folder, damaged)
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(ValueError, match=f"{path} is damaged") as err:
        load_dynamics(folder)
    assert "ArrowInvalid" in str(err.value) or "JSONDecodeError" in str(err.value)
    with pytest.raises(ValueError, match="is damaged"):
        DataMap.from_dynamics(folder)
    os.remove(path)
    with pytest.raises(ValueError, match="missing|not a dynamics folder"):
        DataMap.from_dynamics(folder)


# ----------------------------------------------------------------------------- 4. CLI options up front
def test_cli_options_are_checked_before_the_map_is_computed(tmp_path, capsys, monkeypatch):
    folder = write_folder(tmp_path / "dyn", dynamics({i: [0.1, 0.2] for i in range(10)}))

    def no_map(*a, **k):
        raise AssertionError("the map was computed before the options were checked")

    monkeypatch.setattr(DataMap, "from_dynamics", classmethod(no_map))
    cases = [
        (["--plot", str(tmp_path / "p.png"), "--plot-fraction", "2"], "--plot-fraction must be <= 1.0"),
        (["--plot-fraction", "0.5"], "--plot-fraction needs --plot"),
        (["--select", "hard"], "--select must be one of"),
        (["--select", "hard-to-learn+easy-to-learn", "--out", "o", "--proportions", "0.5"], "--proportions must give"),
        (["--proportions", "0.5", "0.5"], "--proportions needs --select"),
        (["--min-epoch", "2", "--max-epoch", "1"], "--min-epoch (2) must be <= --max-epoch (1)"),
        (["--min-epoch", "-1"], "--min-epoch must be >= 0"),
        (["--assume-id-order"], "--assume-id-order needs --dataset"),
        (["--select", "random", "--out", "o", "--dataset", str(tmp_path / "nope.parquet")], "--dataset: "),
        (["--out", "o"], "--out needs --select"),
    ]
    for extra, message in cases:
        assert main(["datamap", folder, *extra]) == 2, extra
        assert message in capsys.readouterr().err, extra


def test_cli_data_dependent_messages_name_cli_options(tmp_path, capsys):
    folder = write_folder(tmp_path / "dyn", dynamics({i: [0.1, 0.2, 0.3] for i in range(4)}))
    assert main(["datamap", folder, "--max-epoch", "5"]) == 2
    assert "--max-epoch must be <= 2" in capsys.readouterr().err
    assert main(["datamap", folder, "--measure", "chia"]) == 2
    assert "--measure 'chia' is not recorded in dynamics" in (err := capsys.readouterr().err)
    assert "recorded: ['inv_ppl']" in err
    nan = write_folder(tmp_path / "nan", dynamics({0: [0.1, float("nan")], 1: [0.2, 0.3]}))
    assert main(["datamap", nan]) == 2
    assert "--nan-policy omit" in capsys.readouterr().err
    assert main(["datamap", nan, "--nan-policy", "drop"]) == 0


# ----------------------------------------------------------------------------- degenerate inputs (issue 33)
def _noise_table(loss0=(2.0, 2.0), correct0=(False, False)) -> pa.Table:
    return pa.table({"example_id": [0, 1, 0, 1, 0, 1], "epoch": [0, 0, 1, 1, 2, 2],
                     "loss": [*loss0, 0.5, 1.5, 0.2, 1.4], "correct": [*correct0, True, False, True, False],
                     "margin_deficit": [3.0, 3.0, 0.0, 2.0, 0.0, 1.5]})


def test_a_first_epoch_of_nan_losses_is_refused_by_the_noise_recipe():
    from hf_synthsample.cartography import flag_noisy, noise_window

    t = _noise_table(loss0=(float("nan"), float("nan")))
    for call in (lambda: noise_window(t), lambda: flag_noisy(t, count=1)):
        with pytest.raises(ValueError, match=r"the first complete epoch \(0\) has no finite training loss"):
            call()
    inf = _noise_table(loss0=(float("inf"), float("inf")))
    with pytest.raises(ValueError, match="2 rows have an infinite loss .first: example id 0, epoch 0."):
        noise_window(inf)


def test_a_last_epoch_of_nan_losses_is_refused_by_flag_noisy():
    from hf_synthsample.cartography import flag_noisy

    t = _noise_table()
    t = t.set_column(2, "loss", pa.array([2.0, 2.0, 0.5, 1.5, float("nan"), float("nan")]))
    with pytest.raises(ValueError, match=r"flag_noisy: the last complete epoch \(2\) has no finite training loss"):
        flag_noisy(t, count=1)


def test_duplicate_rows_are_refused_by_fit_curve():
    from hf_synthsample.cartography import fit_curve, flag_noisy

    t = _noise_table()
    twice = pa.concat_tables([t, t.slice(2, 1)])  # (example 0, epoch 1) again
    for call in (lambda: fit_curve(twice), lambda: flag_noisy(twice, count=1)):
        with pytest.raises(ValueError, match=r"fit_curve: 1 \(example_id, epoch\) pairs are recorded twice \(first: "
                                             r"example id 0, epoch 1\)"):
            call()
    # a partial epoch plus a duplicate must not look complete
    partial = pa.concat_tables([t.slice(0, 5), t.slice(4, 1)])
    with pytest.raises(ValueError, match="recorded twice"):
        fit_curve(partial)


@pytest.mark.parametrize("values, match", [
    ([0.0, float("nan"), 1.0, 0.0, 1.0, 0.0], r"'correct' must hold booleans \(or 0 / 1\), but 1 value\(s\) are not "
                                              r"\(first: nan at row 1\)"),
    ([0, 2, 1, 0, 1, 0], r"\(first: 2.0 at row 1\)"),
])
def test_a_nan_or_non_boolean_correctness_is_refused_not_a_nan_fit_score(values, match):
    from hf_synthsample.cartography import fit_curve, flag_noisy

    t = _noise_table().set_column(3, "correct", pa.array(values))
    for call in (lambda: fit_curve(t), lambda: flag_noisy(t, count=1), lambda: DataMap.from_dynamics(t, "loss")):
        with pytest.raises(ValueError, match=match):
            call()
    with pytest.raises(TypeError, match="'correct' must hold booleans"):
        fit_curve(_noise_table().set_column(3, "correct", pa.array(["y"] * 6)))


def test_a_missing_dynamics_folder_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"dynamics: no folder '.*/nope'"):
        DataMap.from_dynamics(tmp_path / "nope")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a dynamics folder"):
        DataMap.from_dynamics(tmp_path / "f")
