"""Training and decoding speed of the package's models (``hf_synthsample.models``).

    python benchmarks/bench_models.py --steps 30 --batch-size 32 --threads 1

Prints, for the field's scratch seq2seq model (``build_scratch_model``: T5, 3+3 layers, d_model
256, ff 512, 4 heads) trained with ``train_seq2seq`` on SCAN ``simple`` commands -> actions:
training steps/s at ``--batch-size`` (the Trainer's own ``train_runtime``, setup excluded) and
greedy-decoding examples/s (``generate_predictions``, ``--decode-examples`` test commands); and for
the Calculator char-LSTM (``build_calculator_model``, hidden 256): training steps/s at the same
batch size on ``dcfg`` expressions. Sizes: ``--steps``, ``--batch-size``, ``--decode-examples``,
``--architecture t5|bart``; ``--threads`` torch threads (1 is fastest on a small shared CPU);
``--device cuda`` on a GPU machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time


def steps_per_second(trainer) -> float:
    """Training steps per second of a finished ``Trainer`` (its own ``train_runtime``: setup excluded)."""
    runtime = next(log["train_runtime"] for log in reversed(trainer.state.log_history) if "train_runtime" in log)
    return trainer.state.global_step / float(runtime)


def training_parser(doc: str, steps_help: str) -> argparse.ArgumentParser:
    """The options of every training benchmark here (``bench_warm_start`` too): --steps, --batch-size, --threads."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=30, help=steps_help)
    p.add_argument("--batch-size", type=int, default=32, help="[32]")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads [1]")
    return p


def main(argv=None) -> int:
    p = training_parser(__doc__, "training steps per model [30]")
    p.add_argument("--decode-examples", type=int, default=128, help="SCAN test commands decoded greedily [128]")
    p.add_argument("--architecture", default="t5", choices=["t5", "bart"], help="[t5]")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="[cpu]")
    a = p.parse_args(argv)

    import torch

    import hf_synthsample
    from hf_synthsample.models import (build_calculator_model, build_scratch_model, build_word_tokenizer,
                                       generate_predictions, train_classifier, train_seq2seq)

    torch.set_num_threads(a.threads)
    cpu = a.device == "cpu"
    scan = hf_synthsample.load_dataset("scan", "simple")
    tok = build_word_tokenizer(scan["train"], columns=["commands", "actions"])
    model = build_scratch_model(tok, a.architecture, seed=0)
    n = a.steps * a.batch_size
    with tempfile.TemporaryDirectory() as out:
        trainer = train_seq2seq(model, tok, scan["train"].shuffle(seed=0).select(range(n)),
                                source_column="commands", target_column="actions", output_dir=out,
                                max_steps=a.steps, batch_size=a.batch_size, use_cpu=cpu, disable_tqdm=True)
    seq2seq_sps = steps_per_second(trainer)
    texts = list(scan["test"].select(range(a.decode_examples))["commands"])
    t0 = time.perf_counter()
    generate_predictions(model, tok, texts, batch_size=64, max_new_tokens=50)
    decode_eps = len(texts) / (time.perf_counter() - t0)

    calc = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=n)["train"]
    lstm, chars = build_calculator_model(seed=0)
    with tempfile.TemporaryDirectory() as out:
        trainer = train_classifier(lstm, chars, calc, output_dir=out, max_steps=a.steps, batch_size=a.batch_size,
                                   use_cpu=cpu, disable_tqdm=True)
    lstm_sps = steps_per_second(trainer)

    params = sum(p.numel() for p in model.parameters())
    print(f"scratch {a.architecture} ({params / 1e6:.2f}M params), SCAN simple, batch {a.batch_size}, "
          f"{a.threads} thread(s), {a.device}:")
    print(f"  training: {seq2seq_sps:.2f} steps/s ({seq2seq_sps * a.batch_size:.0f} examples/s)")
    print(f"  greedy decoding: {decode_eps:.1f} examples/s (batch 64, up to 50 new tokens)")
    print(f"char-LSTM (hidden 256), Calculator dcfg, batch {a.batch_size}: {lstm_sps:.2f} training steps/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
