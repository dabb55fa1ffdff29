"""Every Python snippet of the README runs, in order and in one namespace (later snippets may use
names from earlier ones, as a reader pasting them into one session would), from a scratch
directory that has the shared data at ``../shared`` like a checkout does."""

from __future__ import annotations

import os
import re

import pytest

from conftest import REPO_ROOT, SHARED_DATA

BLOCKS = re.findall(r"```python\n(.*?)```", (REPO_ROOT / "README.md").read_text(), flags=re.S)


def test_readme_snippets_run(tmp_path, monkeypatch):
    assert len(BLOCKS) >= 4
    work = tmp_path / "checkout"
    work.mkdir()
    if SHARED_DATA.exists():
        os.symlink(SHARED_DATA.parent, tmp_path / "shared")
    elif any("../shared" in block for block in BLOCKS):
        pytest.skip(f"README snippets read ../shared/data, which is missing ({SHARED_DATA})")
    monkeypatch.chdir(work)
    namespace = {"__name__": "__readme__"}
    for index, block in enumerate(BLOCKS):
        try:
            exec(compile(block, f"README.md python block {index}", "exec"), namespace)
        except Exception as err:  # pragma: no cover - the message names the failing block
            raise AssertionError(f"README python block {index} failed: {err!r}\n{block}") from err
