"""It learns: a tiny causal LM briefly supervised on Calculator's easiest level, then GRPO with the
Calculator reward over a reward curriculum on ``num_ops`` (issue 46, item 5).

CPU preset (the default, one thread, a few minutes per seed):

* a pool of DCFG expressions with 1 to 3 operators, rows as plain prompts ``"3 + 4 * 2 ="`` (one word
  per character) with the answer (the value modulo 10) as the completion;
* a GPT-2-style model built from a config (2 layers, d=64) and a word-level tokenizer over the
  Calculator vocabulary (``models.tokenization.build_word_tokenizer``);
* ``--sft-steps`` steps of the stock ``Trainer`` on the easiest level (``num_ops == 1``), the loss on
  the completion only;
* ``--grpo-steps`` steps of ``trl.GRPOTrainer`` with ``reward_function("calculator")``, prompts from a
  :class:`~hf_synthsample.rewards.curriculum.RewardCurriculum` over ``num_ops`` (levels 1, 2, 3; the
  next one when the mean reward of the last 10 batches reaches 0.8);
* reported per seed: the mean reward of the first and last 50 GRPO steps, the exact match (greedy)
  on held-out rows of each level before and after GRPO, and the curriculum's level changes.

``--gpu``: a small pretrained causal LM from a local folder (``--model PATH``; never downloaded) with
chat prompts from ``rewards.to_prompt``, on CUDA, more steps and generations.

    python examples/grpo_calculator.py --seeds 0 1
    python examples/grpo_calculator.py --gpu --model /path/to/Qwen2.5-0.5B-Instruct --seeds 0
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time


def make_pool(seed: int, n: int = 6000) -> list[dict]:
    from hf_synthsample.domains.calculator import CalculatorParams, sample_row

    rng = random.Random(seed)
    params = CalculatorParams(max_length=15)
    rows, seen = [], set()
    while len(rows) < n:
        r = sample_row(rng, "dcfg", params)
        if 1 <= r["num_ops"] <= 3 and r["expression"] not in seen:
            seen.add(r["expression"])
            rows.append(r)
        if len(seen) > 50 * n:  # pragma: no cover
            break
    return rows


def prompt_text(expression: str) -> str:
    return " ".join(expression) + " ="


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--sft-steps", type=int, default=1500)
    ap.add_argument("--grpo-steps", type=int, default=300)
    ap.add_argument("--num-generations", type=int, default=4)
    ap.add_argument("--prompts-per-step", type=int, default=4)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--eval-rows", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--gpu", action="store_true", help="a pretrained causal LM from --model on CUDA, chat prompts")
    ap.add_argument("--model", default=None, help="--gpu: a local folder with a causal LM and its tokenizer")
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    if args.gpu and not args.model:
        ap.error("--gpu needs --model PATH (a local folder; nothing is downloaded)")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    if not args.gpu:
        torch.set_num_threads(args.threads)
    results = [run_seed(seed, args) for seed in args.seeds]
    summary = {"command": "python examples/grpo_calculator.py " + " ".join(argv or []), "seeds": results}
    for key in ("reward_first50", "reward_last50"):
        summary[key] = sum(r[key] for r in results) / len(results)
    print(json.dumps(summary, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=1)
    return summary


def run_seed(seed: int, args) -> dict:
    import torch
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments, set_seed
    from trl import GRPOConfig, GRPOTrainer

    from hf_synthsample.rewards import reward_function
    from hf_synthsample.rewards.curriculum import RewardCurriculum

    set_seed(seed)
    t0 = time.time()
    rows = make_pool(seed)
    random.Random(seed).shuffle(rows)
    # level 1 has only 300 expressions (digit, operator, digit): hold out 50 of them, train on the rest
    held = {k: [r for r in rows if r["num_ops"] == k][: 50 if k == 1 else args.eval_rows] for k in (1, 2, 3)}
    held_ids = {r["expression"] for rs in held.values() for r in rs}
    train_rows = [r for r in rows if r["expression"] not in held_ids]
    device = "cuda" if args.gpu else "cpu"

    if args.gpu:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from hf_synthsample.rewards import to_prompt

        tok = AutoTokenizer.from_pretrained(args.model)
        model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16).to(device)
        prompts = [to_prompt(r, "calculator") for r in train_rows]  # chat messages; GRPOTrainer applies the template
        as_prompt = lambda r: tok.apply_chat_template(to_prompt(r, "calculator"), add_generation_prompt=True,
                                                      tokenize=False)
        completion = lambda r: f"<answer>{r['answer']}</answer>"
    else:
        from transformers import GPT2Config, GPT2LMHeadModel

        from hf_synthsample.models.tokenization import build_word_tokenizer

        tok = build_word_tokenizer([" ".join("0123456789+-*()=")])
        model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=64, n_layer=2, n_head=2,
                                           bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                                           pad_token_id=tok.pad_token_id))
        prompts = [prompt_text(r["expression"]) for r in train_rows]
        as_prompt = lambda r: prompt_text(r["expression"])
        completion = lambda r: str(r["answer"])

    def exact_match(level: int) -> float:
        model.eval()
        hits = 0
        with torch.no_grad():
            for r in held[level]:
                ids = tok(as_prompt(r), return_tensors="pt", add_special_tokens=not args.gpu)["input_ids"].to(device)
                out = model.generate(ids, max_new_tokens=8 if args.gpu else 3, do_sample=False,
                                     pad_token_id=tok.pad_token_id)
                text = tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
                hits += reward_function("calculator")(prompts=[None], completions=[text], answer=[r["answer"]])[0]
        return hits / len(held[level])

    # ---- supervised, completion-only, on the easiest level
    easy = [r for r in train_rows if r["num_ops"] == 1]
    feats = []
    for r in easy:
        p = tok(as_prompt(r), add_special_tokens=not args.gpu)["input_ids"]
        c = tok(completion(r), add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        feats.append({"input_ids": p + c, "labels": [-100] * len(p) + c})

    def collate(batch):
        n = max(len(b["input_ids"]) for b in batch)
        pad = tok.pad_token_id
        return {"input_ids": torch.tensor([b["input_ids"] + [pad] * (n - len(b["input_ids"])) for b in batch]),
                "attention_mask": torch.tensor([[1] * len(b["input_ids"]) + [0] * (n - len(b["input_ids"]))
                                                for b in batch]),
                "labels": torch.tensor([b["labels"] + [-100] * (n - len(b["labels"])) for b in batch])}

    out_dir = f"/tmp/grpo_calculator/seed{seed}"
    sft = Trainer(model=model, data_collator=collate, train_dataset=feats, args=TrainingArguments(
        output_dir=out_dir + "/sft", max_steps=args.sft_steps, per_device_train_batch_size=32,
        learning_rate=2e-5 if args.gpu else 3e-3, warmup_steps=20, logging_steps=50, save_strategy="no",
        report_to=[], use_cpu=not args.gpu, seed=seed, disable_tqdm=True, remove_unused_columns=False))
    sft.train()
    em_before = {k: exact_match(k) for k in held}
    t_sft = time.time() - t0

    # ---- GRPO over a reward curriculum on num_ops
    pool = Dataset.from_dict({"prompt": prompts, "answer": [r["answer"] for r in train_rows],
                              "num_ops": [r["num_ops"] for r in train_rows]})
    cur = RewardCurriculum(pool, column="num_ops", threshold=args.threshold, window=10, seed=seed)
    config = GRPOConfig(
        output_dir=out_dir + "/grpo", use_cpu=not args.gpu, max_steps=args.grpo_steps,
        per_device_train_batch_size=args.prompts_per_step * args.num_generations,
        num_generations=args.num_generations, max_completion_length=8 if args.gpu else 3, temperature=1.0,
        learning_rate=1e-6 if args.gpu else 5e-4, beta=0.0, logging_steps=1, shuffle_dataset=False,
        save_strategy="no", report_to=[], seed=seed, disable_tqdm=True, bf16=args.gpu)
    model.train()
    grpo = GRPOTrainer(model=model, reward_funcs=cur.observe(reward_function("calculator")), args=config,
                       train_dataset=cur.dataset(), processing_class=tok, callbacks=[cur.callback()])
    grpo.train()
    rewards = [h["reward"] for h in grpo.state.log_history if "reward" in h]
    em_after = {k: exact_match(k) for k in held}
    res = {"seed": seed, "grpo_steps": len(rewards), "reward_first50": sum(rewards[:50]) / len(rewards[:50]),
           "reward_last50": sum(rewards[-50:]) / len(rewards[-50:]), "em_before": em_before, "em_after": em_after,
           "level_changes": cur.history_, "final_level": cur.values, "sft_s": round(t_sft, 1),
           "total_s": round(time.time() - t0, 1)}
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
