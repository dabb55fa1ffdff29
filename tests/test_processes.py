"""Worker processes die with their parent: `generate --num-proc 2` killed with SIGKILL leaves nothing running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hf_synthsample.processes import children_die_with_parent, run_forked

SRC = str(Path(__file__).resolve().parents[1] / "src")
linux_only = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc to find the workers")


def children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead
    except FileNotFoundError:
        return False


@linux_only
@pytest.mark.slow
def test_generate_workers_die_with_a_killed_parent(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, "-m", "hf_synthsample.cli", "generate", "calculator", "--out", str(tmp_path / "out"),
           "--configs", "dcfg", "--num-proc", "2", "--num-examples", "3000000", "--cache-dir", str(tmp_path / "c")]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(workers) < 3 and proc.poll() is None:  # 2 workers + the manager
            time.sleep(0.1)
            workers = children(proc.pid)
        assert len(workers) >= 3, f"workers not started: {workers}, {proc.poll()}"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(running(w) for w in workers):
            time.sleep(0.1)
        assert not [w for w in workers if running(w)]
    finally:
        for w in workers:  # never leave them behind, whatever happened
            if running(w):
                os.kill(w, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()


@linux_only
def test_only_children_forked_inside_the_context_are_tied_to_the_parent(tmp_path):
    """A grandchild forked inside dies with its parent; one forked outside keeps running."""
    script = f"""
import os, sys, time
sys.path.insert(0, {SRC!r})
from hf_synthsample.processes import children_die_with_parent

def fork_sleeper():
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    return pid

with children_die_with_parent():
    tied = fork_sleeper()
free = fork_sleeper()
print(tied, free, flush=True)
time.sleep(30)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    tied, free = map(int, proc.stdout.readline().split())
    try:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and running(tied):
            time.sleep(0.05)
        assert not running(tied) and running(free)
    finally:
        for pid in (tied, free):
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def test_context_is_reentrant():
    import hf_synthsample.processes as p

    with children_die_with_parent():
        with children_die_with_parent():
            assert p._depth == 2
    assert p._depth == 0


_OPENMP_AFTER_FORK = """
import sys, torch
from hf_synthsample.processes import run_forked
torch.set_num_threads(2)
torch.nn.functional.softmax(torch.randn(2048, 2048), -1).sum()  # a parallel op: GNU OpenMP's pool exists now
def work(i):
    return [torch.get_num_threads(), float(torch.nn.functional.softmax(torch.randn(2048, 2048), -1).sum() > 0)]
print(run_forked(work, 2, 2, threads=int(sys.argv[1])), flush=True)
"""


def test_forked_workers_of_a_multithreaded_torch_process_do_not_hang(tmp_path):
    """A worker forked after a parallel torch op hung at its own first parallel op (the Oren
    warm start with --jobs 2 --threads 2 on the GPU machine, and here); the workers run on 1 thread."""
    pytest.importorskip("torch")
    script = tmp_path / "omp_after_fork.py"
    script.write_text(_OPENMP_AFTER_FORK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(script), "2"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[[1, 1.0], [1, 1.0]]"
    assert "forked workers run on 1, not 2" in done.stderr


def test_forked_workers_take_their_threads_from_a_single_threaded_parent():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert run_forked(lambda i: torch.get_num_threads(), 2, 2, threads=2) == [2, 2]
        assert run_forked(lambda i: torch.get_num_threads(), 2, 2) == [1, 1]  # the default
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="threads must be a positive int"):
        run_forked(lambda i: i, 2, 2, threads=0)
