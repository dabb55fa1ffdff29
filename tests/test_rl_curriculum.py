"""RewardCurriculum: levels of a salient variable, advanced on the running reward, with GRPOTrainer."""

from __future__ import annotations

import importlib.util
from collections import Counter

import pytest
from datasets import Dataset

from hf_synthsample.rewards.curriculum import CurriculumSettings, RewardCurriculum


def _pool():
    # value 0: 20 rows, value 1: 4 rows, value 2: 2 rows, value 3: 6 rows
    depth = [0] * 20 + [1] * 4 + [2] * 2 + [3] * 6
    return Dataset.from_dict({"prompt": [f"p{i}" for i in range(len(depth))], "depth": depth})


def test_levels_from_values_counts_and_edges():
    pool = _pool()
    assert RewardCurriculum(pool, column="depth").levels_ == [(0,), (1,), (2,), (3,)]
    assert RewardCurriculum(pool, column="depth", levels=2).levels_ == [(0, 1), (2, 3)]
    assert RewardCurriculum(pool, column="depth", levels=[1, 3]).levels_ == [(0,), (1, 2), (3,)]
    assert RewardCurriculum(pool, column="depth", descending=True).levels_[0] == (3,)
    with pytest.raises(ValueError, match="levels"):
        RewardCurriculum(pool, column="depth", levels=9)
    with pytest.raises(ValueError, match="increasing"):
        CurriculumSettings(column="depth", levels=[3, 1])
    with pytest.raises(ValueError, match="column"):
        RewardCurriculum(pool, column="nope")


def test_advances_when_the_window_mean_reaches_the_threshold():
    cur = RewardCurriculum(_pool(), column="depth", threshold=0.5, window=3)
    for r in (1.0, 1.0):  # window not full yet
        cur.record(r)
    assert cur.level == 0
    cur.record(0.0)  # mean 2/3 >= 0.5 over a full window
    assert cur.level == 1 and cur.history_ == [(3, 1)]
    assert cur.running_reward != cur.running_reward  # NaN: the window restarts at the new level
    for r in (0.2, 0.2, 0.2, 0.2):
        cur.record(r)
    assert cur.level == 1
    cur.record([1.0, 1.0, None, float("nan")])  # a batch: its mean, missing values left out
    cur.record(1.0)
    assert cur.level == 2  # window (0.2, 1, 1): mean 0.73
    for _ in range(20):
        cur.record(1.0)
    assert cur.level == 3 == cur.num_levels - 1  # the last level is kept


def test_homogenized_within_a_level():
    cur = RewardCurriculum(_pool(), column="depth", levels=[3], seed=0)  # level 0: values 0, 1, 2 (20, 4, 2 rows)
    counts = Counter(cur.draw()["depth"] for _ in range(3000))
    assert set(counts) == {0, 1, 2}
    assert all(abs(c / 3000 - 1 / 3) < 0.04 for c in counts.values()), counts
    assert cur.counts_ == counts
    rows = Counter(cur.draw()["prompt"] for _ in range(2000) if True)
    assert len([p for p in rows if int(p[1:]) < 20]) == 20  # every row of a value is drawn


def test_deterministic_for_a_seed():
    def run(seed):
        cur = RewardCurriculum(_pool(), column="depth", threshold=0.5, window=2, seed=seed)
        out = []
        for step in range(12):
            out += [cur.draw_index() for _ in range(4)]
            cur.record(1.0 if step % 3 else 0.0)
        return out, cur.history_

    assert run(3) == run(3)
    assert run(3)[0] != run(4)[0]


def test_uat_option_covers_the_templates_of_a_level_first():
    # one value, 12 rows: 10 of template (+ e e), one (* e e), one (- e e)
    exprs = ["1+2"] * 10 + ["3*4", "5-6"]
    pool = Dataset.from_dict({"expression": exprs, "length": [4] * 12})
    kw = dict(column="length", program_column="expression", language="calculator")
    firsts = Counter()
    for seed in range(20):
        cur = RewardCurriculum(pool, uat=True, seed=seed, **kw)
        firsts[len({cur.draw()["expression"][1] for _ in range(3)})] += 1
        drawn = Counter(cur.draw()["expression"] for _ in range(9))  # the 12 rows: each once per UAT pass
        assert sum(drawn.values()) == 9
    plain = Counter()
    for seed in range(20):
        cur = RewardCurriculum(pool, seed=seed, **kw)
        plain[len({cur.draw()["expression"][1] for _ in range(3)})] += 1
    # UAT (alpha=-1) starts uniform over the 3 templates: 3 distinct operators in 3 draws far more often
    assert firsts[3] > plain[3] + 3, (firsts, plain)
    a = RewardCurriculum(pool, uat=True, seed=1, **kw)
    b = RewardCurriculum(pool, uat=True, seed=1, **kw)
    assert [a.draw_index() for _ in range(30)] == [b.draw_index() for _ in range(30)]


def test_dataset_reads_the_current_level_and_observe_wraps_a_reward_function():
    cur = RewardCurriculum(_pool(), column="depth", threshold=0.5, window=1, seed=0)
    it = iter(cur.dataset())
    assert {next(it)["depth"] for _ in range(5)} == {0}
    fn = cur.observe(lambda prompts, completions, **kw: [1.0] * len(completions))
    assert fn(["a", "b"], ["x", "y"]) == [1.0, 1.0] and cur.level == 1
    assert {next(it)["depth"] for _ in range(5)} == {1}


@pytest.mark.skipif(importlib.util.find_spec("trl") is None, reason="trl is not installed (the [trl] extra)")
@pytest.mark.parametrize("source", ["log", "reward_function"])
def test_grpo_pipeline_two_steps(tmp_path, source):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    from trl import GRPOConfig, GRPOTrainer

    from hf_synthsample.models.tokenization import build_word_tokenizer

    torch.manual_seed(0)
    words = [str(d) for d in range(10)] + ["+", "=", "(", ")"]
    tok = build_word_tokenizer([" ".join(words)])
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=32, n_embd=16, n_layer=1, n_head=2,
                                       bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                                       pad_token_id=tok.pad_token_id))
    depth = [0] * 6 + [1] * 6
    pool = Dataset.from_dict({"prompt": ["1 + 2 ="] * 6 + ["( 1 + 2 ) + 3 ="] * 6,
                              "answer": ["3"] * 6 + ["6"] * 6, "depth": depth})
    cur = RewardCurriculum(pool, column="depth", threshold=0.0, window=1, seed=0)  # any reward advances

    def reward(prompts, completions, answer, **kwargs):
        return [float(c.strip() == a) for c, a in zip(completions, answer)]

    args = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, max_steps=2, per_device_train_batch_size=4,
                      num_generations=2, max_completion_length=3, logging_steps=1, shuffle_dataset=False,
                      report_to=[], save_strategy="no", learning_rate=1e-3, seed=0, bf16=False,
                      disable_tqdm=True)
    reward_funcs = cur.observe(reward) if source == "reward_function" else reward
    trainer = GRPOTrainer(model=model, reward_funcs=reward_funcs, args=args, train_dataset=cur.dataset(),
                          processing_class=tok, callbacks=[cur.callback()])
    trainer.train()
    assert trainer.state.global_step == 2
    assert cur.observations_ == 2 and cur.level == 1
    assert [h["reward"] for h in trainer.state.log_history if "reward" in h]


@pytest.mark.skipif(importlib.util.find_spec("trl") is None, reason="trl is not installed (the [trl] extra)")
def test_callback_refuses_a_shuffled_dataset():
    from trl import GRPOConfig

    cur = RewardCurriculum(_pool(), column="depth")
    with pytest.raises(ValueError, match="shuffle_dataset=False"):
        cur.callback().on_train_begin(GRPOConfig(output_dir="/tmp/x", use_cpu=True, report_to=[]), None, None)
