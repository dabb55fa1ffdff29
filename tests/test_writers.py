"""Nothing the library writes is lost or hidden (issue 24): a folder is replaced only when
hf-synthsample wrote it (its marker file), every file and folder gets the user's umask, and no
command leaves a temp file or folder behind, after a success or a failure."""

from __future__ import annotations

import errno
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import datasets
import pytest

from conftest import REPO_ROOT
from hf_synthsample.atomic import (FOLDER_MARKER, atomic_folder, check_replaceable, save_figure_atomic,
                                   write_json_atomic, write_text_atomic, written_by_library)
from hf_synthsample.cli import main
from hf_synthsample.hub import materialize, read_card_metadata, save_curated, write_hub_folder

PROGRAMS = ["(f a)", "(g a)", "(f (g b))", "(h 'x)", "(f b)", "(g (f c))", "(h 'y)", "(g b)"]


def pool(path: Path) -> Path:
    """A small user pool, shuffled, with a null-free program column and a numeric length."""
    order = [5, 2, 7, 0, 3, 6, 1, 4]
    programs = [PROGRAMS[i] for i in order]
    datasets.Dataset.from_dict({"program": programs, "length": [len(p.split()) for p in programs]}).to_parquet(str(path))
    return path


def user_folder(path: Path) -> Path:
    """A folder of the user's: a note, no marker."""
    path.mkdir()
    (path / "notes.txt").write_text("my notes")
    return path


def temp_leftovers(*folders: Path) -> list[str]:
    return sorted(e for f in folders if f.is_dir() for e in os.listdir(f) if ".tmp-" in e or ".old-" in e)


# ------------------------------------------------------------------ the marker: what may be replaced


def test_quickstart_script_never_replaces_a_folder_it_did_not_write(tmp_path):
    """`bash scripts/quickstart.sh --out X` (the README's first command) on a user's folder X."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    launcher = venv / "bin" / "hf-synthsample"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hf_synthsample.cli "$@"\n')
    launcher.chmod(0o755)
    # env.sh installs nothing when its stamp matches (pyproject digest, torch requirement, index)
    digest = hashlib.sha256((REPO_ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    (venv / ".hf-synthsample-stamp").write_text(f"{digest} torch==2.13.0 \n")
    env = {**os.environ, "HF_SYNTHSAMPLE_VENV": str(venv), "PYTHONPATH": str(REPO_ROOT / "src"),
           "HF_SYNTHSAMPLE_TORCH": "torch==2.13.0", "HF_SYNTHSAMPLE_TORCH_INDEX": ""}
    out = user_folder(tmp_path / "X")
    run = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "quickstart.sh"), "--out", str(out),
                          "--num-examples", "200"], capture_output=True, text=True, env=env)
    assert run.returncode == 2, run.stderr
    assert "exists; pass --overwrite" in run.stderr and "Traceback" not in run.stderr
    assert os.listdir(out) == ["notes.txt"] and (out / "notes.txt").read_text() == "my notes"
    # even with the user's word, a folder without the marker is refused, with what to do
    run = subprocess.run(["bash", str(REPO_ROOT / "scripts" / "quickstart.sh"), "--out", str(out),
                          "--num-examples", "200", "--overwrite"], capture_output=True, text=True, env=env)
    assert run.returncode == 2 and "was not written by hf-synthsample" in run.stderr
    assert "delete this one yourself" in run.stderr and run.stderr.count("\n") == 1
    assert os.listdir(out) == ["notes.txt"]


def test_overwrite_replaces_only_a_folder_hf_synthsample_wrote(tmp_path, capsys):
    src = pool(tmp_path / "pool.parquet")
    out = tmp_path / "split"
    argv = ["split", str(src), "--method", "random", "--test-size", "0.25", "--out", str(out)]
    assert main(argv) == 0
    assert written_by_library(out) and FOLDER_MARKER in os.listdir(out)
    assert main(argv + ["--seed", "1", "--overwrite"]) == 0  # ours: replaced
    assert read_card_metadata(out)["hf_synthsample"]["split"]["seed"] == 1
    # the same folder as an earlier version wrote it (no marker): refused, untouched
    (out / FOLDER_MARKER).unlink()
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    capsys.readouterr()
    assert main(argv + ["--seed", "2", "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert f"--out: {out} was not written by hf-synthsample (it holds no {FOLDER_MARKER} file)" in err
    assert "before 0.1.0" in err and "delete this one yourself" in err
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before


@pytest.mark.parametrize("command", [
    ["quickstart", "--num-examples", "100"],
    ["generate", "calculator", "--configs", "dcfg", "--num-examples", "50"],
    ["homogenize", "{pool}", "--columns", "length"],
    ["split", "{pool}", "--method", "random"],
])
def test_every_command_refuses_to_overwrite_a_users_folder_before_any_work(tmp_path, capsys, command):
    src = pool(tmp_path / "pool.parquet")
    out = user_folder(tmp_path / "mine")
    argv = [str(src) if a == "{pool}" else a for a in command] + ["--out", str(out), "--overwrite"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "was not written by hf-synthsample" in err and "if_exists" not in err
    assert os.listdir(out) == ["notes.txt"]
    assert sorted(os.listdir(tmp_path)) == ["mine", "pool.parquet"]  # nothing generated, nothing left


def test_a_users_file_put_into_a_folder_hf_synthsample_wrote_is_never_deleted(tmp_path, capsys):
    out = tmp_path / "q"
    argv = ["quickstart", "--out", str(out), "--num-examples", "100"]
    assert main(argv) == 0
    assert main(argv + ["--overwrite"]) == 0  # everything in it is ours (the histogram included): replaced
    (out / "my-analysis.md").write_text("three days of notes")
    capsys.readouterr()
    assert main(argv + ["--overwrite"]) == 2
    err = capsys.readouterr().err
    assert f"--out: {out} holds files hf-synthsample did not write (my-analysis.md), so it is not replaced" in err
    # adding a config keeps the note, and keeps it protected
    write_hub_folder(out, {"extra": datasets.Dataset.from_dict({"x": [1]})}, body="# more", if_exists="add")
    assert (out / "my-analysis.md").read_text() == "three days of notes"
    assert main(argv + ["--overwrite"]) == 2 and "my-analysis.md" in capsys.readouterr().err
    with pytest.raises(FileExistsError, match="holds files hf-synthsample did not write"):
        write_hub_folder(out, {"a": datasets.Dataset.from_dict({"x": [1]})}, body="# t", if_exists="overwrite")
    assert (out / "my-analysis.md").read_text() == "three days of notes"


def test_an_empty_folder_the_user_made_is_written_into(tmp_path):
    src = pool(tmp_path / "pool.parquet")
    out = tmp_path / "empty"
    out.mkdir()
    assert main(["split", str(src), "--method", "random", "--out", str(out), "--overwrite"]) == 0
    assert written_by_library(out)


def test_library_writers_follow_the_same_rule(tmp_path, cache_dir):
    mine = user_folder(tmp_path / "mine")
    data = {"a": datasets.Dataset.from_dict({"x": [1]})}
    with pytest.raises(FileExistsError, match="folder: .* was not written by hf-synthsample"):
        write_hub_folder(mine, data, body="# t", if_exists="overwrite")
    with pytest.raises(FileExistsError, match="was not written by hf-synthsample"):
        materialize("calculator", mine, ["dcfg"], num_examples=20, cache_dir=cache_dir, if_exists="overwrite")
    assert not os.path.exists(cache_dir)  # refused before generating
    (mine / "dcfg").mkdir()  # a config folder of the user's own
    with pytest.raises(FileExistsError, match="already has config 'dcfg' and was not written by hf-synthsample"):
        materialize("calculator", mine, ["dcfg"], num_examples=20, cache_dir=cache_dir, if_exists="add")
    assert not os.path.exists(cache_dir)  # refused before generating
    (mine / "dcfg").rmdir()
    with pytest.raises(FileExistsError, match="is not a folder"):
        write_hub_folder(mine / "notes.txt", data, body="# t", if_exists="overwrite")
    with pytest.raises(FileExistsError, match="was not written by hf-synthsample"):
        with atomic_folder(mine):
            pass
    assert os.listdir(mine) == ["notes.txt"] and os.listdir(tmp_path) == ["mine"]


def test_adding_to_a_users_folder_keeps_everything_and_replaces_nothing(tmp_path):
    out = tmp_path / "hub-data"
    (out / "data").mkdir(parents=True)
    datasets.Dataset.from_dict({"a": [1, 2]}).to_parquet(str(out / "data" / "train-00000-of-00001.parquet"))
    (out / "README.md").write_text("---\nlicense: mit\n---\n# My data\n\nCollected by hand in 2024.\n")
    (out / "notes.txt").write_text("my notes")
    write_hub_folder(out, {"extra": datasets.Dataset.from_dict({"a": [9]})}, body="# Extra config", if_exists="add")
    card = (out / "README.md").read_text()
    assert "Collected by hand in 2024." in card and "# Extra config" in card  # the user's text is kept
    assert (out / "notes.txt").read_text() == "my notes"
    assert not written_by_library(out)  # still the user's: never replaceable by --overwrite
    assert datasets.load_dataset(str(out), "extra")["train"]["a"] == [9]
    with pytest.raises(FileExistsError, match="already has config 'extra' and was not written by hf-synthsample"):
        write_hub_folder(out, {"extra": datasets.Dataset.from_dict({"a": [7]})}, body="# again", if_exists="add")
    assert datasets.load_dataset(str(out), "extra")["train"]["a"] == [9]
    # save_curated (the `sample` command's writer) keeps the card and marks nothing either
    save_curated(datasets.Dataset.from_dict({"a": [5]}), out, _provenance(), config_name="cur")
    assert "Collected by hand in 2024." in (out / "README.md").read_text() and not written_by_library(out)


def _provenance():
    from hf_synthsample.hub import Provenance

    return Provenance(source="test")


def test_sample_overwrite_refuses_a_config_of_a_users_folder_before_sampling(tmp_path, capsys):
    src = pool(tmp_path / "pool.parquet")
    out = tmp_path / "hub-data"
    write_hub_folder(out, {"uniform": datasets.Dataset.from_dict({"program": ["(f a)"]})}, body="# t")
    (out / FOLDER_MARKER).unlink()  # as a user's own folder (or an earlier version's) holds none
    argv = ["sample", str(src), "--sampler", "uniform", "-k", "2", "--param", "language=sexpr", "--out", str(out)]
    assert main(argv + ["--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "already has config 'uniform' and was not written by hf-synthsample" in err and err.startswith(
        "hf-synthsample sample: error: --out")
    assert datasets.load_dataset(str(out), "uniform")["train"]["program"] == ["(f a)"]
    assert main(argv + ["--name", "more"]) == 0  # a new config is added, nothing replaced
    assert not written_by_library(out)


def test_check_replaceable_recovers_a_killed_write_first(tmp_path):
    out = tmp_path / "data"
    write_hub_folder(out, {"a": datasets.Dataset.from_dict({"x": [1]})}, body="# 1")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    os.replace(out, tmp_path / f".data.old-{dead.pid}-0123abcd")  # killed between the two renames
    check_replaceable(out)
    assert os.listdir(tmp_path) == ["data"] and written_by_library(out)


# ------------------------------------------------------------------ the umask


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, int]:
    """``{relative path: permission bits}`` of ``root`` and everything under it."""
    found = {".": root.stat().st_mode & 0o777}
    for path in root.rglob("*"):
        found[path.relative_to(root).as_posix()] = path.stat().st_mode & 0o777
    return found


def assert_umask(root: Path, mask: int) -> None:
    bad = {rel: oct(mode) for rel, mode in modes(root).items()
           if mode != ((0o777 if (root / rel).is_dir() else 0o666) & ~mask)}
    assert not bad, f"modes not from umask {oct(mask)}: {bad}"


def test_files_written_atomically_get_the_umask(tmp_path, umask):
    import matplotlib.pyplot as plt

    out = tmp_path / "results"
    write_json_atomic(out / "results.json", {"a": 1})
    write_text_atomic(out / "results.md", "# r")
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    save_figure_atomic(fig, out / "plot.png")
    with atomic_folder(out / "folder") as tmp:
        (tmp / "a.txt").write_text("a")
    from harness import ResultsTable

    table = ResultsTable("t", ["a"])
    table.add(a=1.0)
    table.save(str(out), "table")
    from hf_synthsample.cartography import DataMap

    dm = DataMap.from_dynamics(_tiny_dynamics(tmp_path / "dyn"))
    dm.to_html(out / "map.html")  # the interactive HTML map
    dm.plot(out / "map.png")
    assert_umask(out, umask)
    assert {"results.json", "results.md", "plot.png", "folder", "folder/a.txt", "map.html", "map.png",
            "table.json", "table.md"} <= set(modes(out))


def test_every_command_output_gets_the_umask(tmp_path, umask, capsys):
    src = pool(tmp_path / "pool.parquet")
    outs = {
        "quickstart": ["quickstart", "--num-examples", "100"],
        "split": ["split", str(src), "--method", "template", "--language", "sexpr"],
        "sample": ["sample", str(src), "--sampler", "cmaxent", "-k", "4", "--param", "language=sexpr"],
        "homogenize": ["homogenize", str(src), "--columns", "length", "--size", "4"],
        "generate": ["generate", "calculator", "--configs", "dcfg-homogenized-length", "--num-examples", "60",
                     "--cache-dir", str(tmp_path / "cache")],
    }
    for name, argv in outs.items():
        assert main(argv + ["--out", str(tmp_path / "out" / name)]) == 0, capsys.readouterr().err
    root = tmp_path / "out"
    assert_umask(root, umask)
    written = modes(root)
    for must in ("split/split_report.png", "sample/plots/cmaxent-templates.png", "generate/README.md",
                 f"homogenize/{FOLDER_MARKER}", "quickstart/quickstart-histogram.png"):
        assert must in written
    assert any(p.endswith(".parquet") for p in written)


# ------------------------------------------------------------------ temp files and folders


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """``tempfile``'s folder for this test only, to see what a command leaves there."""
    folder = tmp_path / "system-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


COMMANDS = {
    "quickstart": ["quickstart", "--num-examples", "100"],
    "generate": ["generate", "calculator", "--configs", "dcfg-homogenized-length", "--num-examples", "60"],
    "homogenize": ["homogenize", "{pool}", "--columns", "length", "--size", "4"],
    "sample": ["sample", "{pool}", "--sampler", "cmaxent", "-k", "4", "--param", "language=sexpr"],
    "split": ["split", "{pool}", "--method", "mcd", "--language", "sexpr", "--max-steps", "20",
              "--max-atom-divergence", "1"],
}


def _argv(name: str, src: Path, out: Path) -> list[str]:
    return [str(src) if a == "{pool}" else a for a in COMMANDS[name]] + ["--out", str(out)]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_command_leaves_temp_files_after_success_or_failure(tmp_path, private_tmp, monkeypatch, name, capsys):
    src = pool(tmp_path / "pool.parquet")
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out"
    assert main(_argv(name, src, out)) == 0, capsys.readouterr().err
    assert temp_leftovers(work, out) == [] and os.listdir(private_tmp) == []
    # a run killed between its two renames (the old folder moved aside) is repaired by the next
    # command on that folder, even one that then refuses to write (`split` left `.old-*` behind)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    os.replace(out, work / f".out.old-{dead.pid}-0123abcd")
    (work / f".out.tmp-{dead.pid}-4567abcd").mkdir()
    assert main(_argv(name, src, out)) == 2  # exists: refused without --overwrite
    assert "pass --overwrite" in capsys.readouterr().err
    assert temp_leftovers(work) == [] and sorted(os.listdir(work)) == ["out"] and written_by_library(out)
    # a failure while writing (the disk fills up) leaves the old folder and no temp entry
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(next(work.glob(".out.tmp-*")) / "x.parquet"))

    monkeypatch.setattr("hf_synthsample.hub.folder._write_parquet_shards", disk_full)
    if name != "sample":
        argv = _argv(name, src, out) + ["--overwrite"]
    else:
        argv = _argv(name, src, out) + ["--overwrite", "--name", "cmaxent"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--out {out}" in err and "no space left on the device" in err and ".tmp-" not in err
    assert temp_leftovers(work) == [] and os.listdir(private_tmp) == []
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before


def test_datamap_out_leaves_no_temp_and_the_plot_gets_the_umask(tmp_path, private_tmp, capsys):
    dyn = _tiny_dynamics(tmp_path / "dyn")
    out = tmp_path / "subset"
    plot = tmp_path / "map.png"
    old = os.umask(0o022)
    try:
        assert main(["datamap", str(dyn), "--select", "ambiguous", "--fraction", "0.5", "--out", str(out),
                     "--plot", str(plot)]) == 0, capsys.readouterr().err
    finally:
        os.umask(old)
    assert plot.stat().st_mode & 0o777 == 0o644 and written_by_library(out)
    assert temp_leftovers(tmp_path, out) == [] and os.listdir(private_tmp) == []


def _tiny_dynamics(folder: Path) -> Path:
    """A dynamics folder as CartographyCallback writes it: 6 examples x 2 epochs of inv_ppl."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from hf_synthsample.cartography.store import DYNAMICS_FILE, META_FILE

    folder.mkdir(parents=True)
    conf = [0.2, 0.4, 0.9, 0.1, 0.3, 0.8]
    ids = [i for i in range(6) for _ in range(2)]
    values = [conf[i] + 0.05 * e for i in range(6) for e in range(2)]
    pq.write_table(pa.table({"example_id": pa.array(ids, pa.int64()), "epoch": pa.array([0, 1] * 6, pa.int32()),
                             "inv_ppl": values, "correct": [v > 0.5 for v in values]}), folder / DYNAMICS_FILE)
    (folder / META_FILE).write_text(json.dumps({"measures": ["inv_ppl"], "epochs": [0, 1], "num_examples": 6}))
    return folder


def test_a_terminated_command_removes_what_it_had_half_written(tmp_path, private_tmp, monkeypatch):
    """`kill` (SIGTERM) while the folder is being written: the temp folder goes, the exit status is 143."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are the main thread's only")
    src = pool(tmp_path / "pool.parquet")
    work = tmp_path / "work"
    work.mkdir()

    def killed(ds, folder, split, max_rows):
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not stop the command")

    monkeypatch.setattr("hf_synthsample.hub.folder._write_parquet_shards", killed)
    before = signal.getsignal(signal.SIGTERM)  # another test in this process (ray.init) may have set one
    with pytest.raises(SystemExit) as exit_:
        main(["split", str(src), "--method", "random", "--out", str(work / "out")])
    assert exit_.value.code == 143
    assert os.listdir(work) == [] and os.listdir(private_tmp) == []
    assert signal.getsignal(signal.SIGTERM) == before  # the command's handler is its own only: the old one is back
