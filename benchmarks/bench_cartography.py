"""Overhead of CartographyCallback on training wall time, and the cost of the BLEU option.

    python benchmarks/bench_cartography.py --data ../shared/data/cogs/train.tsv \
        --num-examples 512 --epochs 2 --repeats 3

Trains the same small scratch encoder-decoder (BART architecture, word-level COGS; built and
trained with ``hf_synthsample.models``, i.e. a stock ``Seq2SeqTrainer``; the timed span is
``Trainer.train()`` itself), alternating runs without the callback, with
``CartographyCallback(("inv_ppl", "chia"))``, with every training-dynamics measure
(``TrainingDynamicsCallback(("inv_ppl", "chia", "aum", "forgetting", "el2n", "loss"))``, issue 14) and
with ``("inv_ppl", "chia", "bleu")`` (greedy decodes of ``--bleu-examples`` training examples at each
epoch end), and prints the median wall times and ratios, and the recorded table's bytes per
(example, epoch) row (memory is proportional to examples x epochs). Sizes:
``--num-examples`` rows, ``--epochs``, ``--batch-size``, ``--d-model``, ``--layers``; ``--threads``
torch threads (1 is fastest on a small shared CPU); ``--device cuda`` on a GPU machine.

Host syncs: for each callback variant, one more short run (``--sync-steps`` training steps)
under ``torch.profiler`` counts what the callback's per-step hooks do that would stop the host
until the device catches up: the ``aten::item`` / ``aten::_local_scalar_dense`` /
``aten::nonzero`` ops inside them, and their calls of ``Tensor.item`` / ``.tolist`` / ``.cpu`` /
``.numpy`` / ``bool()`` / ``int()`` / ``float()`` and ``.to`` another device; on CUDA also the
runtime's synchronizing calls and copies. Counted on the CPU too, where they cost nothing, so a CPU machine shows that
none is left (``--repeats 0`` prints only this count).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))


def _timed(fn, acc: list):
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            acc[0] += time.perf_counter() - t0

    return wrapper


def _clock(stamps: dict, key: str, event: str):
    """A TrainerCallback noting wall and CPU time at ``event`` (``on_train_begin`` / ``on_train_end``)."""
    from transformers import TrainerCallback

    def note(self, *args, **kwargs):
        import torch

        if torch.cuda.is_available():  # queued GPU work belongs to the span
            torch.cuda.synchronize()
        stamps[key] = (time.perf_counter(), time.process_time())

    return type(f"Clock_{key}", (TrainerCallback,), {event: note})()


#: profiler events that make the host wait for the device
_SYNC_OPS = ("aten::item", "aten::_local_scalar_dense", "aten::nonzero", "aten::is_nonzero",
             "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMemcpy", "cudaMemcpyAsync", "cudaEventSynchronize")
#: Tensor methods that read values on the host (on a GPU: a device -> host copy and a sync)
_HOST_READS = ("item", "tolist", "cpu", "numpy", "__bool__", "__int__", "__float__", "to")


def _count_host_syncs(run, cb, out: str, device: str) -> tuple[int, dict[str, int]]:
    """``(steps, counts)``: host syncs made inside ``cb``'s per-step model hooks during ``run(cb, out)``."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    reads = dict.fromkeys(_HOST_READS, 0)
    inside = [False]
    originals = {m: getattr(torch.Tensor, m) for m in _HOST_READS}

    def counted(method):
        original = originals[method]

        def wrapper(self, *args, **kwargs):
            result = original(self, *args, **kwargs)
            # .to counts only a move between devices (a dtype cast stays where it is)
            if inside[0] and (method != "to" or (isinstance(result, torch.Tensor) and result.device != self.device)):
                reads[method] += 1
            return result

        return wrapper

    def hooked(fn):
        def wrapper(*args, **kwargs):
            inside[0] = True
            try:
                with record_function("cartography_hook"):
                    return fn(*args, **kwargs)
            finally:
                inside[0] = False

        return wrapper

    steps = [0]
    post = cb._post_hook

    def post_hook(module, args, kwargs, output):
        if module.training:
            steps[0] += 1
        return post(module, args, kwargs, output)

    cb._pre_hook, cb._post_hook = hooked(cb._pre_hook), hooked(post_hook)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    for m in _HOST_READS:
        setattr(torch.Tensor, m, counted(m))
    try:
        with profile(activities=activities) as prof:
            run(cb, out)
    finally:
        for m, original in originals.items():
            setattr(torch.Tensor, m, original)
    ops = dict.fromkeys(_SYNC_OPS, 0)
    for event in prof.events():
        if event.name in ops:
            parent = event.cpu_parent
            while parent is not None and parent.name != "cartography_hook":
                parent = parent.cpu_parent
            if parent is not None:
                ops[event.name] += 1
    counts = {k: v for k, v in ops.items() if v or k.startswith("aten::")}
    counts.update({f"Tensor.{k}": v for k, v in reads.items()})
    return max(steps[0], 1), counts


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=os.path.join(HERE, "..", "..", "shared", "data", "cogs", "train.tsv"),
                   help="source<TAB>target TSV [../shared/data/cogs/train.tsv]")
    p.add_argument("--num-examples", type=int, default=512, help="training rows [512]")
    p.add_argument("--epochs", type=int, default=2, help="epochs per run [2]")
    p.add_argument("--batch-size", type=int, default=32, help="[32]")
    p.add_argument("--d-model", type=int, default=128, help="[128]")
    p.add_argument("--layers", type=int, default=2, help="[2]")
    p.add_argument("--repeats", type=int, default=3, help="runs of each variant, interleaved [3]")
    p.add_argument("--bleu-examples", type=int, default=128, help="examples decoded per epoch for BLEU [128]")
    p.add_argument("--eval-batch-size", type=int, default=None,
                   help="batch of the BLEU pass's forward and greedy decodes [the callback's default: "
                        "per_device_eval_batch_size, 8]")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads [1]")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="[cpu]")
    p.add_argument("--sync-steps", type=int, default=8, help="training steps of the host-sync count per variant "
                   "(0: no count) [8]")
    a = p.parse_args(argv)
    if a.repeats < 0 or a.sync_steps < 0:
        p.error("--repeats and --sync-steps must be >= 0")

    import torch
    from cartography_cogs import read_cogs

    from hf_synthsample.cartography import (
        CartographyCallback,
        CartographyCollator,
        TrainingDynamicsCallback,
        add_example_ids,
    )
    from hf_synthsample.models import (
        build_scratch_model,
        build_word_tokenizer,
        seq2seq_collator,
        tokenize_seq2seq,
        train_seq2seq,
    )

    torch.set_num_threads(a.threads)
    raw = read_cogs(a.data, a.num_examples, seed=0)
    tok = build_word_tokenizer(raw, columns=["source", "target"])
    # tokenized once, outside the timed runs; the text columns are dropped (reading them per row costs time)
    tokenized = tokenize_seq2seq(raw, tok, source_column="source", target_column="target")
    plain = tokenized.remove_columns(["source", "target", "category"])
    with_ids = add_example_ids(plain)
    variants = {
        "baseline": None,
        "inv_ppl+chia": lambda: CartographyCallback(measures=("inv_ppl", "chia")),
        "all dynamics": lambda: TrainingDynamicsCallback(
            measures=("inv_ppl", "chia", "aum", "forgetting", "el2n", "loss")),
        "inv_ppl+chia+bleu": lambda: CartographyCallback(measures=("inv_ppl", "chia", "bleu"),
                                                         eval_examples=a.bleu_examples,
                                                         eval_batch_size=a.eval_batch_size),
    }
    times: dict[str, list[float]] = {k: [] for k in variants}
    inside: dict[str, list[float]] = {k: [] for k in variants}
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    row_bytes: dict[str, tuple[int, int]] = {}
    def train(cb, out, ds=None, epochs=None, callbacks=()):
        model = build_scratch_model(
            tok, "bart", seed=0, d_model=a.d_model, encoder_layers=a.layers, decoder_layers=a.layers,
            encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=4 * a.d_model,
            decoder_ffn_dim=4 * a.d_model, max_position_embeddings=256)
        data = ds if ds is not None else (with_ids if cb else plain)
        train_seq2seq(model, tok, data, source_column="source", target_column="target",
                      output_dir=out, epochs=epochs or a.epochs, batch_size=a.batch_size,
                      learning_rate=1e-3, seed=0, callbacks=list(callbacks), warmup_steps=0,
                      remove_unused_columns=cb is None, use_cpu=a.device == "cpu", disable_tqdm=True,
                      data_collator=CartographyCollator(seq2seq_collator(tok, model)) if cb else None)

    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.repeats + 1 if a.repeats else 0):  # repeat 0 warms up (imports, allocator) and is not counted
            for name, make_cb in variants.items():
                cb = make_cb() if make_cb else None
                spent = [0.0]
                if cb is not None:  # time spent inside the callback's own code, in the same run
                    for attr in ("_pre_hook", "_post_hook", "on_epoch_end", "on_train_end", "on_train_begin"):
                        setattr(cb, attr, _timed(getattr(cb, attr), spent))
                # the timed span is Trainer.train() from the first on_train_begin to the last on_train_end
                # (the clocks come first and last among the callbacks): Trainer construction is left out
                stamps: dict = {}
                clocks = [_clock(stamps, "start", "on_train_begin"), *([cb] if cb else []),
                          _clock(stamps, "end", "on_train_end")]
                train(cb, os.path.join(tmp, f"{name}-{rep}"), callbacks=clocks)
                if cb is not None:  # the in-memory dynamics: one row per (example, epoch)
                    table = cb._train
                    row_bytes[name] = (len(table["example_id"]), sum(v.nbytes for v in table.values()))
                if rep:
                    (t0, c0), (t1, c1) = stamps["start"], stamps["end"]
                    times[name].append(t1 - t0)
                    inside[name].append(spent[0])
                    cpu[name].append(c1 - c0)
        syncs = {}
        if a.sync_steps:
            rows = with_ids.select(range(min(len(with_ids), a.sync_steps * a.batch_size)))
            for name, make_cb in variants.items():
                if make_cb is not None:
                    syncs[name] = _count_host_syncs(lambda cb, out: train(cb, out, rows, epochs=1, callbacks=[cb]),
                                                    make_cb(), os.path.join(tmp, f"sync-{name}"), a.device)

    ds, vocab = plain, tok
    steps = a.epochs * -(-len(ds) // a.batch_size)
    print(f"CartographyCallback overhead: {len(ds)} COGS rows x {a.epochs} epochs = {steps} steps, batch {a.batch_size}, "
          f"d_model {a.d_model}, {a.layers}+{a.layers} layers, vocab {len(vocab)}, device {a.device}, "
          f"{a.threads} thread(s), {a.repeats} interleaved runs per variant")
    print("  (ratios to the baseline; 'min' is the least disturbed run, 'cpu' the process CPU time, which a busy "
          "machine disturbs less than wall time; 'inside' is the share of wall time spent in the callback's own code)")
    for name, (steps, counts) in syncs.items():
        per_step = ", ".join(f"{k} {v / steps:g}" for k, v in counts.items())
        print(f"  {name:18} host syncs per training step in the callback's hooks ({steps} steps profiled): {per_step}")
    if not a.repeats:
        return 0
    base_min, base_med, base_cpu = min(times["baseline"]), statistics.median(times["baseline"]), min(cpu["baseline"])
    for name, ts in times.items():
        share = statistics.median(i / t for i, t in zip(inside[name], ts))
        print(f"  {name:18} wall min {min(ts):7.2f} s ({min(ts) / base_min:5.3f})  median {statistics.median(ts):7.2f} s "
              f"({statistics.median(ts) / base_med:5.3f})  cpu min {min(cpu[name]):7.2f} s ({min(cpu[name]) / base_cpu:5.3f})"
              f"  inside {share:6.2%}   wall runs: {', '.join(f'{t:.1f}' for t in ts)}")
    for name, (rows, nbytes) in row_bytes.items():
        print(f"  {name:18} in-memory dynamics: {rows:,} rows ({len(ds):,} examples x {a.epochs} epochs), "
              f"{nbytes:,} bytes = {nbytes / max(1, rows):.0f} bytes per row")
    return 0


if __name__ == "__main__":
    sys.exit(main())
