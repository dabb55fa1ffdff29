"""Trained under a real 2-process launcher by ``test_cartography_parallel.py`` (not a test itself).

``accelerate launch --multi_gpu --num_processes 2 tests/cartography_two_process_run.py OUT``: the tiny
BART of ``test_cartography_callback`` with lr=0 (fixed weights, so every recorded value has one
right answer), 37 rows, 2 processes x 4 per step with gradient accumulation: shuffled, an uneven
last batch padded by wrap-around.
"""

from __future__ import annotations

import sys


def run(out: str) -> None:
    import torch
    from datasets import Dataset
    from test_cartography_callback import bart, make_trainer, rows_for

    from hf_synthsample.cartography import CartographyCallback, add_example_ids

    torch.set_num_threads(1)  # 2 shared cores
    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=37)))
    make_trainer(bart(), ds, out, [CartographyCallback(measures=("inv_ppl", "chia"))], epochs=2, bs=4, lr=0.0,
                 gradient_accumulation_steps=2).train()
    # The Trainer leaves the gloo group open; a process that exits with it open can abort in
    # interpreter finalization ("terminate called without an active exception", SIGABRT:
    # pytorch/pytorch#190489), which failed CI once. Close it while the interpreter is alive.
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    run(sys.argv[1])
