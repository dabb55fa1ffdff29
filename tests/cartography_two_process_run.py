"""Trained under a real 2-process launcher by ``test_cartography_resume_parallel.py`` (not a test itself);
:func:`spawn_launcher` starts the in-test 2-process runs of ``test_cartography_callback.py``.

``accelerate launch --multi_gpu --num_processes 2 tests/cartography_two_process_run.py OUT``: the tiny
BART of ``test_cartography_callback`` with lr=0 (fixed weights, so every recorded value has one
right answer), 37 rows, 2 processes x 4 per step with gradient accumulation: shuffled, an uneven
last batch padded by wrap-around.
"""

from __future__ import annotations

import sys


def spawn_launcher(function, args=(), num_processes: int = 2) -> None:
    """``accelerate.debug_launcher`` with *spawned* processes: ``num_processes`` CPU processes (gloo)
    running ``function(*args)``.

    ``debug_launcher`` forks, and a parent that has trained on a machine with CUDA (any test before
    this one in the session) cannot fork: autograd's device threads forbid it ("Unable to handle
    autograd's threading in combination with fork-based multiprocessing"). Spawned children start
    clean; ``function`` must be importable by name (a module-level function of a test module).
    """
    import os
    import tempfile

    from accelerate.utils import PrepareForLaunch, patch_environment
    from torch.multiprocessing import start_processes

    # gloo's file store deletes the rendezvous file when done: a folder, not a NamedTemporaryFile
    with tempfile.TemporaryDirectory() as rdv, patch_environment(
        world_size=num_processes, master_addr="127.0.0.1", master_port="29500", accelerate_mixed_precision="no",
        accelerate_debug_rdv_file=os.path.join(rdv, "rendezvous"), accelerate_use_cpu="yes", gloo_socket_ifname="lo",
        omp_num_threads="1",  # the children import torch afresh: one thread each on 2 shared cores
    ):
        start_processes(PrepareForLaunch(function, debug=True), args=args, nprocs=num_processes,
                        start_method="spawn")


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
