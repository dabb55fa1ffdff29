"""Every Python block of the README and of the guides (``docs/guides/*.md``) runs **on its own**
in a fresh interpreter, as a reader pasting one block into a new session would: offline, from a
scratch directory that has the shared data at ``../shared`` like a checkout does.

A block that needs the shared data is skipped (with the path) where it is absent.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, SHARED_DATA

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs" / "guides").glob("*.md"))]


def _blocks() -> list:
    found = []
    for doc in DOCS:
        for index, block in enumerate(re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.S)):
            found.append(pytest.param(doc, block, id=f"{doc.relative_to(REPO_ROOT)}#{index}"))
    return found


BLOCKS = _blocks()


def test_every_doc_has_runnable_blocks():
    names = {p.values[0].name for p in BLOCKS}
    assert "README.md" in names and len(BLOCKS) >= 15


@pytest.mark.slow
@pytest.mark.parametrize("doc,block", BLOCKS)
def test_block_runs_alone(doc: Path, block: str, tmp_path: Path):
    work = tmp_path / "checkout"
    work.mkdir()
    if SHARED_DATA.exists():
        os.symlink(SHARED_DATA.parent, tmp_path / "shared")
    elif "../shared" in block:
        pytest.skip(f"this block reads ../shared/data, which is missing ({SHARED_DATA})")
    env = dict(os.environ, HF_DATASETS_CACHE=str(tmp_path / "cache"), PYTHONUNBUFFERED="1",
               RAY_DISABLE_IMPORT_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run([sys.executable, "-c", block], cwd=work, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, (f"{doc.relative_to(REPO_ROOT)}: this block failed when run alone:\n{block}\n"
                                  f"--- stderr (tail) ---\n{proc.stderr[-4000:]}")
