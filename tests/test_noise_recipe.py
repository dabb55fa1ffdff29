"""cartography.noise: the label-free fit curve, window and flags (hand-computed values, user-shaped tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hf_synthsample.cartography import fit_curve, flag_noisy, noise_window


def dynamics(loss: dict[int, list[float]], correct: dict[int, list[bool]], deficit: dict[int, list[float]] | None = None,
             shuffle: int | None = 0) -> pa.Table:
    """One row per (example, epoch), rows shuffled as a multi-process run may write them."""
    rows = []
    for i, ls in loss.items():
        for e, v in enumerate(ls):
            rows.append({"example_id": i, "epoch": e, "loss": v, "correct": bool(correct[i][e]),
                         "margin_deficit": (deficit or loss)[i][e], "min_margin": -(deficit or loss)[i][e]})
    df = pd.DataFrame(rows)
    if shuffle is not None:
        df = df.sample(frac=1.0, random_state=shuffle).reset_index(drop=True)
    return pa.Table.from_pandas(df, preserve_index=False)


# ids not 0..n-1 (a filtered dataset keeps its original ids)
LOSS = {10: [3.0, 1.0, 0.2, 0.1], 25: [3.0, 1.2, 0.3, 0.1], 7: [3.0, 2.8, 2.6, 2.5], 99: [3.0, 1.0, 0.5, 0.3]}
CORRECT = {10: [0, 0, 1, 1], 25: [0, 0, 1, 1], 7: [0, 0, 0, 0], 99: [0, 1, 0, 1]}


def test_fit_curve_hand_computed():
    c = fit_curve(dynamics(LOSS, CORRECT))
    assert c["epoch"].tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(c["fitted"], [0.0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(c["loss"], [3.0, 1.5, 0.9, 0.75])


def test_fit_curve_leaves_out_a_partial_epoch_and_reads_folders_and_frames(tmp_path):
    t = dynamics(LOSS, CORRECT).to_pandas()
    t = t[~((t.epoch == 3) & (t.example_id.isin([7, 99])))]  # the last epoch was cut short
    c = fit_curve(t)
    assert c["epoch"].tolist() == [0, 1, 2]
    # a dynamics folder as the callback writes it
    pq.write_table(dynamics(LOSS, CORRECT), tmp_path / "dynamics.parquet")
    (tmp_path / "cartography.json").write_text('{"measures": ["margin_deficit", "loss"]}')
    np.testing.assert_allclose(fit_curve(str(tmp_path))["loss"], [3.0, 1.5, 0.9, 0.75])


def test_noise_window_starts_after_the_loss_drop():
    t = dynamics(LOSS, CORRECT)
    # mean loss 3.0, 1.5, 0.9, 0.75: falls by 2.25; 90 % of it -> at or below 0.975 -> epoch 2
    assert noise_window(t) == (2, 3)
    # half of it -> at or below 1.875 -> epoch 1; all of it -> the lowest epoch only
    assert noise_window(t, loss_drop=0.5) == (1, 3)
    assert noise_window(t, loss_drop=1.0) == (3, 3)


def test_noise_window_of_a_loss_that_never_falls_keeps_every_epoch():
    flat = {i: [1.0, 1.0, 1.2] for i in range(3)}
    t = dynamics(flat, {i: [0, 0, 0] for i in range(3)})
    assert noise_window(t) == (0, 2)


def test_flag_noisy_ranks_over_the_window_only():
    # example 7 is hard in the window (epochs 2-3); example 99 was the hardest at epochs 0-1 only
    deficit = {10: [9.0, 0.0, 0.0, 0.0], 25: [9.0, 0.0, 0.0, 0.0], 7: [0.0, 0.0, 3.0, 3.0], 99: [20.0, 20.0, 1.0, 0.0]}
    t = dynamics(LOSS, CORRECT, deficit)
    f = flag_noisy(t, count=1)
    assert f.example_ids.tolist() == [7]
    assert f.window == (2, 3) and f.measure == "margin_deficit"
    assert f.fitted == 0.75 and f.first_loss == 3.0 and f.last_loss == 0.75
    # over every epoch (loss_drop tiny -> window from epoch 1; the whole run by hand): 99 first
    assert flag_noisy(t, count=2, loss_drop=1e-9).example_ids.tolist() == [99, 7]
    # min_margin: the low end is hard (= -deficit here): same order
    assert flag_noisy(t, count=1, measure="min_margin").example_ids.tolist() == [7]
    assert flag_noisy(t, fraction=0.5).example_ids.tolist() == [7, 99]


def test_flag_noisy_plateau_rule():
    t = dynamics(LOSS, CORRECT)
    # relative gains of the mean loss over the last 3 epochs: 0.5, 0.4, 0.167 -> still falling
    assert not flag_noisy(t, count=1).plateaued
    assert not flag_noisy(t, count=1, patience=1, min_gain=0.1).plateaued   # 0.167 >= 0.1
    assert flag_noisy(t, count=1, patience=1, min_gain=0.2).plateaued       # 0.167 < 0.2
    # fewer epochs than patience + 1 cannot show a plateau
    assert not flag_noisy(t, count=1, patience=4, min_gain=10.0).plateaued


@pytest.mark.parametrize("kwargs, exc, match", [
    ({}, ValueError, "exactly one of fraction"),
    ({"fraction": 0.1, "count": 1}, ValueError, "exactly one of fraction"),
    ({"fraction": 0.0}, ValueError, "fraction"),
    ({"fraction": 1.5}, ValueError, "fraction"),
    ({"count": 5}, ValueError, "count"),
    ({"count": 1.0}, TypeError, "count"),
    ({"count": 1, "measure": "accuracy"}, ValueError, "measure"),
    ({"count": 1, "loss_drop": 0}, ValueError, "loss_drop"),
    ({"count": 1, "loss_drop": 1.5}, ValueError, "loss_drop"),
    ({"count": 1, "patience": 0}, ValueError, "patience"),
    ({"count": 1, "min_gain": -1}, ValueError, "min_gain"),
    ({"count": 1, "measure": "el2n"}, ValueError, "el2n"),          # not recorded
])
def test_flag_noisy_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        flag_noisy(dynamics(LOSS, CORRECT), **kwargs)


def test_bad_dynamics_are_named():
    t = dynamics(LOSS, CORRECT)
    with pytest.raises(ValueError, match="'loss'"):
        fit_curve(t.drop(["loss"]))
    with pytest.raises(ValueError, match="'correct'"):
        noise_window(t.drop(["correct"]))
    with pytest.raises(TypeError, match="dynamics must be"):
        fit_curve([1, 2, 3])
    with pytest.raises(ValueError, match="no rows"):
        fit_curve(t.slice(0, 0))
    with pytest.raises(ValueError, match="dynamics: no folder"):
        fit_curve("/nonexistent/folder")
    inf = dynamics(LOSS, CORRECT).to_pandas()
    inf.loc[len(inf) - 1, "loss"] = float("inf")   # one diverged row in a later epoch: not skipped in silence
    with pytest.raises(ValueError, match="1 rows have an infinite loss"):
        fit_curve(inf)


def test_docstring_examples():
    import doctest

    import hf_synthsample.cartography.noise as module

    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


def test_flags_the_wrong_labels_of_a_trained_run(tmp_path):
    """End to end: a tiny classifier trained with the callback on rows whose class is their first
    word, 6 of 48 rows given another class; the recipe flags them without being told which."""
    import torch
    from datasets import Dataset
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

    from hf_synthsample.cartography import CartographyCollator, TrainingDynamicsCallback, add_example_ids

    rng = np.random.default_rng(0)
    words = ["red", "green", "blue"]
    filler = ["x", "y", "z", "w"]
    rows = [[int(rng.integers(3))] + [int(rng.integers(4)) for _ in range(3)] for _ in range(48)]
    labels = [r[0] for r in rows]
    wrong = [3, 11, 19, 26, 34, 45]
    for i in wrong:
        labels[i] = (labels[i] + 1 + int(rng.integers(2))) % 3
    vocab = {w: k + 1 for k, w in enumerate(words + filler)}  # 0: padding
    ids = [[vocab[words[r[0]]]] + [vocab[filler[f]] for f in r[1:]] for r in rows]
    ds = add_example_ids(Dataset.from_dict({"input_ids": ids, "attention_mask": [[1] * 4] * 48, "labels": labels}))
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(vocab_size=8, hidden_size=16, num_hidden_layers=1,
                                                     num_attention_heads=2, intermediate_size=32, num_labels=3,
                                                     max_position_embeddings=8, hidden_dropout_prob=0.0))
    cb = TrainingDynamicsCallback(measures=("margin_deficit", "min_margin", "loss"))
    args = TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=8, num_train_epochs=25,
                             learning_rate=3e-3, report_to=[], logging_strategy="no", save_strategy="no",
                             use_cpu=True, disable_tqdm=True, seed=0, remove_unused_columns=False)
    Trainer(model=model, args=args, train_dataset=ds, callbacks=[cb],
            data_collator=CartographyCollator()).train()
    folder = tmp_path / "cartography"
    curve = fit_curve(folder)
    assert curve["epoch"].tolist() == list(range(25))
    assert curve["loss"][-1] < curve["loss"][0]
    flags = flag_noisy(folder, count=len(wrong))
    lo, hi = flags.window
    assert 0 < lo <= hi == 24
    assert len(set(flags.example_ids.tolist()) & set(wrong)) >= 5, flags
    # the model fits the clean majority (it learned the rule): the figure the recipe reports
    assert flags.fitted >= 0.8 and 0 < flags.last_loss < flags.first_loss


def test_wrong_column_types_and_nulls_are_named():
    t = dynamics(LOSS, CORRECT)
    with pytest.raises(TypeError, match="'example_id' must hold integer or string example ids"):
        fit_curve(t.set_column(t.schema.get_field_index("example_id"), "example_id",
                               pa.array([float(v) for v in t.column("example_id").to_pylist()])))
    with pytest.raises(ValueError, match="'epoch' has 1 missing"):
        fit_curve(t.set_column(t.schema.get_field_index("epoch"), "epoch",
                               pa.array([None] + t.column("epoch").to_pylist()[1:], pa.int64())))
    with pytest.raises(ValueError, match="'correct' has 1 missing"):
        fit_curve(t.set_column(t.schema.get_field_index("correct"), "correct",
                               pa.array([None] + t.column("correct").to_pylist()[1:], pa.bool_())))


def test_a_row_without_gold_tokens_nan_loss_is_left_out_of_the_mean():
    loss = {0: [2.0, 1.0], 1: [float("nan"), float("nan")], 2: [4.0, 1.0]}
    c = fit_curve(dynamics(loss, {i: [0, 0] for i in loss}, {i: [0.0, 0.0] for i in loss}))
    np.testing.assert_allclose(c["loss"], [3.0, 1.0])


def test_an_epoch_without_any_loss_has_a_nan_mean_not_zero():
    loss = {0: [2.0, float("nan"), 1.0], 1: [4.0, float("nan"), 1.0]}
    c = fit_curve(dynamics(loss, {i: [0, 0, 0] for i in loss}, {i: [0.0, 0.0, 0.0] for i in loss}))
    assert c["loss"][0] == 3.0 and np.isnan(c["loss"][1]) and c["loss"][2] == 1.0
    assert noise_window(dynamics(loss, {i: [0, 0, 0] for i in loss})) == (2, 2)


# ----------------------------------------------------------------------------- canaries
def test_add_canaries_on_a_filtered_shuffled_dataset():
    from datasets import Dataset

    from hf_synthsample.cartography import add_canaries, canary_recall

    ds = Dataset.from_dict({"src": [f"s{i}" for i in range(20)], "tgt": [f"t{i % 5}" for i in range(20)],
                            "n": list(range(20))})
    ds = ds.filter(lambda r: r["n"] % 3 != 0).shuffle(seed=1)   # 13 rows, an indices mapping
    before = ds[:]
    out, canaries = add_canaries(ds, "tgt", count=4, seed=3)
    assert len(out) == 17 and canaries.tolist() == [13, 14, 15, 16]
    assert out.select(range(13))[:] == before                     # the original rows, unchanged
    for pos in canaries:
        row = out[int(pos)]
        base = before["src"].index(row["src"])                     # the copied row
        assert row["n"] == before["n"][base] and row["tgt"] != before["tgt"][base]
        assert row["tgt"] in before["tgt"]                          # another row's target
    assert len({out[int(p)]["src"] for p in canaries}) == 4        # distinct rows copied
    again, _ = add_canaries(ds, "tgt", count=4, seed=3)
    assert again[:] == out[:]                                       # seeded
    assert canary_recall([13, 2, 16], canaries) == 0.5


def test_add_canaries_token_id_targets_and_bad_inputs():
    from datasets import Dataset

    from hf_synthsample.cartography import add_canaries, add_example_ids, canary_recall

    ds = Dataset.from_dict({"labels": [[1, 2], [3], [1, 2], [4, 4]]})
    out, canaries = add_canaries(ds, "labels", count=2, seed=0)
    assert canaries.tolist() == [4, 5] and out.select(range(4))[:] == ds[:]
    for row in out.select(canaries.tolist()):
        assert row["labels"] in ds["labels"]
    with pytest.raises(ValueError, match="column: no column named 'label'"):
        add_canaries(ds, "label", count=1)
    with pytest.raises(TypeError, match="column must be"):
        add_canaries(ds, 3, count=1)
    with pytest.raises(ValueError, match="count must be <= 2"):
        add_canaries(ds, "labels", count=3)
    with pytest.raises(ValueError, match="count must be >= 1"):
        add_canaries(ds, "labels", count=0)
    with pytest.raises(TypeError, match="count must be an int"):
        add_canaries(ds, "labels", count=0.1)
    with pytest.raises(TypeError, match="datasets.Dataset"):
        add_canaries({"labels": [[1]]}, "labels", count=1)
    with pytest.raises(ValueError, match="add canaries before add_example_ids"):
        add_canaries(add_example_ids(ds), "labels", count=1)
    with pytest.raises(ValueError, match="1 missing values"):
        add_canaries(Dataset.from_dict({"t": ["a", None, "b", "c"]}), "t", count=1)
    with pytest.raises(ValueError, match="every row holds the same value"):
        add_canaries(Dataset.from_dict({"t": ["a", "a", "a", "a"]}), "t", count=1)
    with pytest.raises(ValueError, match="canaries is empty"):
        canary_recall([1, 2], [])
    with pytest.raises(TypeError, match="integer example ids"):
        canary_recall([1, 2], ["a"])


# ------------------------------------------------------------------------------------------ lexical check
from hf_synthsample.cartography import flag_noisy_lexical, lexical_noise_scores  # noqa: E402


def test_lexical_scores_hand_computed_one_em_step():
    # one EM step from the uniform table (smoothing ~0): row 0 aligns X to a / NULL by 1/2 each,
    # row 1 aligns X and Y to a / b / NULL by 1/3 each, so p(X|a) = (1/2 + 1/3) / (1/2 + 2/3) = 5/7,
    # p(X|b) = 1/2, p(X|NULL) = 5/7; row 1: p(X) = (5/7 + 1/2 + 5/7) / 3 = 9/14, p(Y) = 5/14
    s = lexical_noise_scores(["a", "a b"], ["X", "X Y"], iterations=1, smoothing=1e-12)
    np.testing.assert_allclose(s["forward"], [np.log(5 / 7), np.log(5 / 14)], rtol=1e-9)
    # backward: source given target; row 0: a given {X, NULL}; row 1: a, b given {X, Y, NULL}
    # counts: X: a 1/2 + 1/3, b 1/3; Y: a 1/3, b 1/3; NULL: a 1/2 + 1/3, b 1/3
    # p(a|X) = 5/7, p(a|Y) = 1/2, p(a|NULL) = 5/7, p(b|.) = 2/7, 1/2, 2/7
    # row 0: p(a) = mean(5/7, 5/7); row 1: p(a) = (5/7 + 1/2 + 5/7) / 3 = 9/14, p(b) = (2/7 + 1/2 + 2/7) / 3 = 5/14
    np.testing.assert_allclose(s["backward"], [np.log(5 / 7), np.log(5 / 14)], rtol=1e-9)
    # row 1 is lower in both directions: rank 2 of 2 in both; row 0 rank 1
    assert s["score"].tolist() == [0.5, 1.0] and s["other"].tolist() == [0.5, 1.0]


def scan_like(n_wrong: int, seed: int):
    """SCAN-shaped rows (verb x direction x repetition, each twice), ``n_wrong`` given another row's target."""
    verbs = {"jump": "I_JUMP", "walk": "I_WALK", "run": "I_RUN", "look": "I_LOOK"}
    dirs = {"": [], "left": ["I_TURN_LEFT"], "right": ["I_TURN_RIGHT"]}
    reps = {"": 1, "twice": 2, "thrice": 3}
    src, tgt = [], []
    for v, a in verbs.items():
        for d, turn in dirs.items():
            for r, k in reps.items():
                src.append(" ".join(w for w in (v, d, r) if w))
                tgt.append(" ".join((turn + [a]) * k))
    src, tgt = src * 2, tgt * 2
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(src))  # shuffled rows, as a user's data comes
    src, tgt = [src[i] for i in perm], [tgt[i] for i in perm]
    wrong = rng.choice(len(src), size=n_wrong, replace=False)
    for i in wrong:
        donors = [j for j in range(len(src)) if tgt[j] != tgt[i]]
        tgt[i] = tgt[int(rng.choice(donors))]
    return src, tgt, np.sort(wrong)


def test_lexical_flags_find_wrong_rows_in_scan_shaped_rows():
    src, tgt, wrong = scan_like(8, seed=3)  # 72 rows, 8 wrong (11 %)
    flags = flag_noisy_lexical(src, tgt, count=8)
    assert np.isin(wrong, flags).sum() >= 6  # 6 of 8; chance would find about 1
    # flags are positions, hardest first, distinct; fraction uses round(fraction * rows)
    assert flags.dtype == np.int64 and len(set(flags.tolist())) == 8
    assert len(flag_noisy_lexical(src, tgt, fraction=0.1)) == 7  # round(7.2)
    assert len(flag_noisy_lexical(src, tgt, fraction=0.001)) == 1


def test_lexical_flags_on_real_scan_300_rows():
    # the hard setting: 300 SCAN rows (bench_noise.py's sample, seed 0), 15 % of them given
    # another row's different target (drawn here, not by the benchmark's noise seed)
    import hf_synthsample

    ds = hf_synthsample.load_dataset("scan", "simple", seed=0)["train"]
    idx = np.sort(np.random.default_rng(0).permutation(len(ds))[:300])
    src, tgt = list(ds.select(idx)["commands"]), list(ds.select(idx)["actions"])
    rng = np.random.default_rng(150)
    wrong = np.sort(rng.choice(300, size=45, replace=False))
    for i in wrong:
        tgt[i] = tgt[int(rng.choice([j for j in range(300) if tgt[j] != tgt[i]]))]
    flags = flag_noisy_lexical(src, tgt, fraction=0.15)
    assert len(flags) == 45
    assert np.isin(wrong, flags).mean() >= 0.8  # the bar (measured here: 41 of 45, 0.91)


def test_bench_noise_lexical_method_trains_nothing(capsys, monkeypatch):
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "bench_noise.py")
    spec = importlib.util.spec_from_file_location("bench_noise_under_test", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def no_training(*args, **kwargs):
        raise AssertionError("--method lexical must not train")

    monkeypatch.setattr(bench, "train_seq2seq_run", no_training)
    import torch

    threads = torch.get_num_threads()  # main() sets torch's thread count; give it back to the other tests
    try:
        assert bench.main(["--preset", "scan-300", "--method", "lexical", "--num-examples", "120", "--seed", "0",
                           "1"]) == 0
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "scan lexical" in ln]
    assert len(lines) == 2 and all(" 120 " in ln and "recall" in ln and "fit:" in ln for ln in lines)
    assert "mean recall over all runs (lexical check):" in out and "recipe window" not in out


def test_lexical_scores_follow_the_rows_and_take_token_lists_and_series():
    src, tgt, _ = scan_like(4, seed=0)
    s = lexical_noise_scores(src, tgt)
    perm = np.random.default_rng(1).permutation(len(src))
    sp = lexical_noise_scores(pd.Series([src[i] for i in perm], index=perm + 100),  # a filtered frame's index
                              [tgt[i].split() for i in perm])
    for k in ("forward", "backward", "score"):
        np.testing.assert_allclose(sp[k], s[k][perm], rtol=1e-9, atol=1e-12)
    # an Arrow column reads the same
    np.testing.assert_allclose(lexical_noise_scores(pa.array(src), pa.chunked_array([tgt[:10], tgt[10:]]))["score"],
                               s["score"])
    # duplicate rows score the same
    dup = [i for i in range(len(src)) if (src[i], tgt[i]) == (src[0], tgt[0])]
    assert len(dup) >= 2 and len({float(s["score"][i]) for i in dup}) == 1


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(sources="jump", targets=["A"]), TypeError, "sources must be a sequence"),
    (dict(sources=["jump", None], targets=["A", "B"]), TypeError, r"sources\[1\]"),
    (dict(sources=["jump", 3], targets=["A", "B"]), TypeError, r"sources\[1\]"),
    (dict(sources=["jump", ["walk", 1]], targets=["A", "B"]), TypeError, r"sources\[1\]"),
    (dict(sources=["jump", "walk"], targets=["A", "  "]), ValueError, r"targets\[1\] has no tokens"),
    (dict(sources=["jump", "walk"], targets=["A"]), ValueError, "same number of rows"),
    (dict(sources=[], targets=[]), ValueError, "no rows"),
    (dict(sources=["a"], targets=["A"], iterations=0), ValueError, "iterations"),
    (dict(sources=["a"], targets=["A"], smoothing=0.0), ValueError, "smoothing"),
    (dict(sources=["a"], targets=["A"], iterations=2.5), TypeError, "iterations"),
])
def test_lexical_scores_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        lexical_noise_scores(**kwargs)


def test_lexical_scores_refuse_an_open_vocabulary(monkeypatch):
    import hf_synthsample.cartography.noise as noise

    monkeypatch.setattr(noise, "_MAX_TABLE", 8)  # 3 source words + NULL, 3 target words: 12 pairs
    with pytest.raises(ValueError, match="4 x 3 word pairs"):
        lexical_noise_scores(["a", "b", "c"], ["A", "B", "C"])
    assert len(lexical_noise_scores(["a", "b"], ["A", "A"])["score"]) == 2  # 3 x 1, 3 x 2 pairs


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(), ValueError, "exactly one of fraction"),
    (dict(fraction=0.1, count=1), ValueError, "exactly one of fraction"),
    (dict(fraction=0.0), ValueError, "fraction"),
    (dict(fraction=1.5), ValueError, "fraction"),
    (dict(count=0), ValueError, "count"),
    (dict(count=3), ValueError, "count"),
    (dict(count="2"), TypeError, "count"),
])
def test_flag_noisy_lexical_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        flag_noisy_lexical(["jump", "walk"], ["A", "B"], **kwargs)


def test_bench_noise_averages_the_lexical_and_recipe_ranks(monkeypatch):
    import importlib.util
    import os

    import hf_synthsample.cartography as cartography

    path = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "bench_noise.py")
    spec = importlib.util.spec_from_file_location("bench_noise_under_test2", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # lexical ranks (n = hardest): rows 0..3 -> 1, 4, 2, 3
    monkeypatch.setattr(cartography, "lexical_noise_scores", lambda s, t: {"score": np.array([0.25, 1.0, 0.5, 0.75])})
    # the recipe's window: epochs 1-2 (mean loss 2, 1, 1); margin_deficit there: row 3 > 0 > 1 > 2 -> ranks 3, 2, 1, 4
    deficit = {0: [0.0, 3.0, 3.0], 1: [9.0, 2.0, 2.0], 2: [9.0, 1.0, 1.0], 3: [0.0, 4.0, 4.0]}
    loss = {i: [2.0, 1.0, 1.0] for i in range(4)}
    t = dynamics(loss, {i: [0, 0, 0] for i in range(4)}, deficit)
    # sums 4, 6, 3, 7: the hardest half is rows 3 and 1 (lexical alone: 1, 3; the recipe alone: 3, 0;
    # averaged over every epoch instead of the window: 1, 2); one wrong row at a time pins that set
    recall = [bench.averaged_recall(t, ["a"] * 4, ["A"] * 4, np.arange(4) == i, 0.5) for i in range(4)]
    assert recall == [0.0, 1.0, 0.0, 1.0]
    assert bench.averaged_recall(t, ["a"] * 4, ["A"] * 4, np.array([True, True, False, False]), 0.5) == 0.5


def test_bench_noise_lstm_preset_runs_the_recipe_with_the_lstm(capsys):
    """The recipe's model preset trains the attentional LSTM and prints the recipe window (tiny scale)."""
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "bench_noise.py")
    spec = importlib.util.spec_from_file_location("bench_noise_lstm_under_test", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.PRESETS["lstm-scan-300"]["arch"] == "lstm" and bench.PRESETS["lstm-scan-300"]["num_examples"] == 300
    import torch

    threads = torch.get_num_threads()
    try:
        assert bench.main(["--preset", "lstm-scan-300", "--num-examples", "40", "--epochs", "3"]) == 0
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert "lstm, dropout 0.5" in out and "recipe window: epochs" in out and "fitted at epoch 2" in out
