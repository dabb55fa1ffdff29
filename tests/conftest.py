"""Shared test configuration: offline Hugging Face, the shared real data, a per-test cache."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
# Keep generated test data out of the user's ~/.cache (read by datasets at import, so set it here).
_CACHE = tempfile.mkdtemp(prefix="hf-synthsample-tests-")
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
os.environ["HF_DATASETS_CACHE"] = _CACHE

REPO_ROOT = Path(__file__).resolve().parents[1]
# the paper examples and their shared machinery (examples/harness) import as top-level modules
sys.path.insert(0, str(REPO_ROOT / "examples"))
#: ../shared/data next to the repository (CI clones the repo with shared/ beside it);
#: HF_SYNTHSAMPLE_SHARED_DATA overrides.
SHARED_DATA = Path(os.environ.get("HF_SYNTHSAMPLE_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


def shared_data(*parts: str) -> Path:
    """Path under the shared real data; skips the test with the reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} is missing (set HF_SYNTHSAMPLE_SHARED_DATA)")
    return path


@pytest.fixture
def cache_dir(tmp_path: Path) -> str:
    """A fresh ``datasets`` cache directory, so tests never reuse each other's generated data."""
    return str(tmp_path / "hf-cache")


@pytest.fixture(scope="module")
def local_ray():
    """A local 2-CPU Ray runtime for a test module (started once, shut down if this started it)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'hf-synthsample[ray]'")
    os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")
    started = not ray.is_initialized()
    # ray.init installs a SIGTERM handler (sys.exit) that outlives ray.shutdown; a later test's
    # forked `num_proc` pool workers would inherit it, and a pool's terminate() (SIGTERM) then left a
    # worker blocked on the pool's queue lock: a hung suite. Put the process's handler back.
    sigterm = signal.getsignal(signal.SIGTERM)
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    if started:
        ray.shutdown()
    signal.signal(signal.SIGTERM, sigterm)


def undeclared_outputs(out, patterns) -> list[str]:
    """Top-level files of an example's ``out`` that match none of its ``OUTPUTS`` (the names a run
    clears first): a file missing from ``OUTPUTS`` would survive into the next run's folder."""
    import fnmatch

    from harness import OUTPUTS_RECORD  # the run's claim on those names, kept on purpose

    return sorted(p.name for p in Path(out).iterdir()
                  if p.is_file() and p.name != OUTPUTS_RECORD
                  and not any(fnmatch.fnmatchcase(p.name, pat) for pat in patterns))


@pytest.fixture
def one_torch_thread():
    """One torch intra-op thread for the test (``pytestmark = pytest.mark.usefixtures("one_torch_thread")``):
    on 2 shared cores, intra-op threads fight each other and tiny models train ~10x slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def load_example(name: str, module_name: str | None = None):
    """A fresh module of ``examples/<name>.py``, named ``module_name`` (default ``name``), not put in
    ``sys.modules``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(module_name or name, REPO_ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def keep_saved_figures(monkeypatch, module, read) -> dict:
    """Wrap ``module.save_figure_atomic``: each figure it saves is drawn first and ``read(fig)``'s items go into
    the dict returned (the file is still written)."""
    kept = {}
    real = module.save_figure_atomic

    def keep(fig, path, **kw):
        fig.canvas.draw()
        kept.update(read(fig))
        return real(fig, path, **kw)

    monkeypatch.setattr(module, "save_figure_atomic", keep)
    return kept


def karel_tasks(rng, programs, params, n: int):
    """``n`` (program, I/O examples) pairs drawn with ``rng``: ``sample_program`` under ``programs``, then
    ``sample_io`` under ``params``; a program whose I/O sampling fails is passed over."""
    from hf_synthsample.domains.karel.io import IOSamplingError, sample_io
    from hf_synthsample.domains.karel.programs import sample_program

    for _ in range(n):
        while True:
            prog = sample_program(rng, programs)
            try:
                examples = sample_io(prog, rng, params)
            except IOSamplingError:
                continue
            break
        yield prog, examples
