"""Ray started by this library logs at warning on the console; a user's own ``ray.init`` is kept."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'hf-synthsample[ray]'")
pytest.importorskip("ray.data", reason="Ray Data is not installed: pip install 'hf-synthsample[ray]'")

pytestmark = pytest.mark.slow

_RUN = """
import logging, ray
from hf_synthsample.engines import ray as hf_ray
print("started:", hf_ray.start_ray(num_cpus=2), "cpus", ray.cluster_resources()["CPU"])
ds = hf_ray.generate("calculator", "dcfg", num_examples=300, seed=0)
ds = hf_ray.salient_columns(ds, "calculator")
print("rows", ds.count(), "first", ds.take(1)[0]["expression"])
print("started by us:", ray.is_initialized(), "ray logger level", logging.getLogger("ray").level)
print("again:", hf_ray.start_ray())
import os
niceness = ray.remote(lambda: os.nice(0))
print("worker niceness above the driver's:", ray.get(niceness.remote()) - os.nice(0))  # 0: start_ray's default
"""


def test_a_runtime_started_here_prints_no_info_lines(tmp_path):
    import hf_synthsample

    first = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=300, seed=0, split="train[:1]",
                                        cache_dir=str(tmp_path / "cache"))["expression"][0]
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(_RUN)], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path, env={**__import__("os").environ, "RAY_ADDRESS": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout + run.stderr
    assert f"rows 300 first {first}" in out  # the pipeline ran
    assert f"ray logger level {logging.WARNING}" in out and "again: False" in out
    assert "started: True cpus 2.0" in out  # ray.init's own arguments pass through
    assert "worker niceness above the driver's: 0" in out  # not Ray's 15: a num_proc worker's CPU share
    info = [line for line in out.splitlines() if "\tINFO " in line or " INFO " in line]
    assert info == []  # Ray's "Started a local Ray instance" and Ray Data's progress logs: off


def test_a_users_own_ray_init_is_kept(local_ray):
    from hf_synthsample.engines import ray as hf_ray

    level = logging.getLogger("ray").level
    handlers = [(h, h.level) for h in logging.getLogger("ray.data").handlers]
    assert hf_ray.start_ray() is False  # already running: nothing is changed
    hf_ray.generate("calculator", "dcfg", num_examples=10, seed=0).count()
    assert logging.getLogger("ray").level == level
    assert [(h, h.level) for h in logging.getLogger("ray.data").handlers] == handlers


_FORK = """
import os, signal
from hf_synthsample.engines import ray as hf_ray
before = signal.getsignal(signal.SIGTERM)
hf_ray.start_ray(num_cpus=1)
print("driver keeps ray's handler:", signal.getsignal(signal.SIGTERM) is not before)
r, w = os.pipe()
pid = os.fork()
if pid == 0:  # a forked worker, as a num_proc pool makes
    os.write(w, b"child handler is the old one: %r" % (signal.getsignal(signal.SIGTERM) is before))
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(r, 200).decode())
import ray; ray.shutdown()
"""


def test_forked_children_do_not_inherit_rays_sigterm_handler():
    """ray.init's SIGTERM handler (sys.exit) stays in the driver; a forked pool worker gets the old one
    back, so a pool's terminate() after Ray ends the worker instead of leaving it blocked."""
    out = subprocess.run([sys.executable, "-c", _FORK], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "driver keeps ray's handler: True" in out.stdout
    assert "child handler is the old one: True" in out.stdout


def test_load_dataset_warns_when_forking_while_ray_runs(monkeypatch, caplog):
    """Forking datasets workers from a process running Ray can hang Ray's next job: say so."""
    import logging
    import sys
    import types

    from hf_synthsample.load import _warn_forking_after_ray

    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(is_initialized=lambda: True))
    with caplog.at_level(logging.WARNING):
        _warn_forking_after_ray(2)
        _warn_forking_after_ray(1)
    assert [r.getMessage() for r in caplog.records if "forks worker processes" in r.getMessage()] and \
        sum("forks worker processes" in r.getMessage() for r in caplog.records) == 1
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(is_initialized=lambda: False))
    caplog.clear()
    _warn_forking_after_ray(2)
    assert not caplog.records
