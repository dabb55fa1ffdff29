"""Every error clear and early (issue 24): one line on stderr naming the option (never a Python
parameter, never an internal temp path), exit status 2, before any work; operating-system errors
included (no traceback)."""

from __future__ import annotations

import errno
import importlib.util
import os
import re
import sys
from pathlib import Path

import datasets
import pytest

from conftest import REPO_ROOT
from hf_synthsample.cli import _as_options, _user_path, main
from hf_synthsample.validation import check_choice, check_writable_path

#: Python names the library's checks use; on the command line each must appear as its option
PYTHON_NAMES = ["num_examples", "time_limit", "max_steps", "test_size", "train_size", "if_exists", "config_name",
                "max_atom_divergence", "target_divergence", "min_epoch", "max_epoch", "nan_policy", "num_proc",
                "cache_dir", "skip_unparsable", "program_column", "builder_params", "sample_fraction"]


def run(argv, capsys) -> str:
    """Run the CLI; return its one stderr line, checked for the common promises."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"hf-synthsample {argv[0]}: error: "), err
    assert "Traceback" not in err and ".tmp-" not in err and ".old-" not in err
    for name in PYTHON_NAMES:
        # a Python name only as the NAME of --param/--builder-param NAME=VALUE, or quoted
        assert not re.search(rf"(?<![\w'-])(?<!param ){name}\b(?!=)", err), f"{name!r} named in: {err}"
    assert "must be one of []" not in err and not re.search(r"(?<!--param )skip_unparsable=", err)
    return err


@pytest.fixture
def files(tmp_path):
    pool = tmp_path / "pool.parquet"
    datasets.Dataset.from_dict({"program": ["(f a)", "(g a)", "(f (g b))", "(h 'x)", "(f b)", "(g c)"],
                                "length": [2, 2, 3, 2, 2, 2]}).to_parquet(str(pool))
    (tmp_path / "empty.parquet").write_bytes(b"")
    (tmp_path / "bad.parquet").write_text("hello")
    (tmp_path / "afile").write_text("x")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    (tmp_path / "badcard").mkdir()
    (tmp_path / "badcard" / "README.md").write_text("---\n: bad: [\n---\n# my card\n")
    return tmp_path


CASES = [
    # (argv with {t} for the test folder, the words the message must hold)
    (["quickstart", "--out", "{t}/afile"], "--out: {t}/afile is a file"),
    (["quickstart", "--out", "{t}/afile/x"], "--out: cannot write {t}/afile/x: {t}/afile is a file"),
    (["quickstart", "--out", "{t}/q", "--num-examples", "0"], "--num-examples must be >= 1, got 0"),
    (["quickstart", "--out", "{t}/q", "--eps", "0"], "--eps must be > 0.0"),
    (["quickstart", "--out", "{t}/q", "--num-proc", "0"], "--num-proc must be >= 1"),
    (["quickstart", "--out", "{t}/q", "--seed", "-1"], "--seed must be >= 0"),
    (["quickstart", "--out", ""], "--out: give a path"),
    (["quickstart", "--out", "{t}/q", "--variable", "nope"], "--variable must be one of"),
    (["generate", "calculator", "--out", "{t}/g", "--num-examples", "abc"], "--num-examples must be an int"),
    (["generate", "calculator", "--out", "{t}/g", "--num-proc", "0"], "--num-proc must be >= 1"),
    (["generate", "calculator", "--out", "{t}/g", "--cache-dir", "{t}/afile"], "--cache-dir: {t}/afile is a file"),
    (["generate", "calculator", "--out", "{t}/g", "--configs", "nope"], "config 'nope' does not exist"),
    (["generate", "calculator", "--out", "{t}/afile", "--num-examples", "10"], "--out: {t}/afile is a file"),
    (["homogenize", "{t}/nope.parquet", "--columns", "length", "--out", "{t}/h"], "source: '{t}/nope.parquet' is neither"),
    (["homogenize", "{t}/empty.parquet", "--columns", "length", "--out", "{t}/h"], "source: the file"),
    (["homogenize", "{t}/bad.parquet", "--columns", "length", "--out", "{t}/h"], "is not a Parquet file"),
    (["homogenize", "{t}/pool.parquet", "--columns", "length", "--out", "{t}/h", "--size", "0"], "--size must be >= 1"),
    (["homogenize", "{t}/pool.parquet", "--columns", "length", "--out", "{t}/h", "--size", "100"],
     "--size must be <= 6, got 100"),  # the sampler's own check says `k`: the user typed --size
    (["homogenize", "{t}/pool.parquet", "--columns", "length", "--out", "{t}/h", "--bins", "0"], "--bins must be >= 1"),
    (["homogenize", "{t}/pool.parquet", "--columns", "nope", "--out", "{t}/h"], "no column named 'nope'"),
    (["sample", "{t}/pool.parquet", "--sampler", "uniform", "-k", "0", "--out", "{t}/s"], "--k must be >= 1, got 0"),
    (["sample", "{t}/pool.parquet", "--sampler", "uniform", "-k", "100", "--out", "{t}/s"], "--k must be <= 6"),
    (["sample", "{t}/pool.parquet", "--sampler", "uniform", "-k", "2", "--out", "{t}/s"],
     "--param language: the diversity report parses 'program' as 'thingtalk'"),
    (["sample", "{t}/pool.parquet", "--sampler", "uniform", "-k", "2", "--out", "{t}/s", "--param",
      "program_column=code"], "--param program_column: the diversity report reads the program column 'code'"),
    (["sample", "{t}/pool.parquet", "--sampler", "uat", "-k", "2", "--out", "{t}/s", "--param", "language=nope"],
     "--param language: unknown language 'nope'"),
    (["sample", "{t}/pool.parquet", "--sampler", "uat", "-k", "2", "--out", "{t}/s", "--param", "beta=1"],
     "--param: uat has no parameter beta"),
    (["sample", "{t}/pool.parquet", "--sampler", "cmaxent", "-k", "2", "--out", "{t}/s", "--param", "language=sexpr",
      "device=tpu"], "--param device: 'tpu' is not a torch device"),
    (["sample", "{t}/pool.parquet", "--sampler", "cmaxent", "-k", "2", "--out", "{t}/s", "--param", "language=sexpr",
      "device=cuda:99"], "--param device: 'cuda:99', but this machine"),
    (["sample", "{t}/pool.parquet", "--sampler", "uniform", "-k", "2", "--out", "{t}/badcard", "--param",
      "language=sexpr"], "--out: {t}/badcard/README.md: its YAML block (between the '---' lines) does not parse"),
    (["sample", "scan/nope", "--sampler", "uniform", "-k", "2", "--out", "{t}/s"], "source: scan has no config 'nope'"),
    (["sample", "scan/simple", "--sampler", "uniform", "-k", "2", "--out", "{t}/s", "--builder-param",
      "num_examples=10"], "--builder-param: unknown parameter 'num_examples' for scan"),
    (["sample", "{t}/pool.parquet", "--sampler", "uniform", "-k", "2", "--out", "{t}/afile"], "--out: {t}/afile is a file"),
    (["split", "{t}/pool.parquet", "--method", "random", "--out", "{t}/sp", "--test-size", "0"], "--test-size must be > 0"),
    (["split", "{t}/pool.parquet", "--method", "mcd", "--language", "sexpr", "--out", "{t}/sp", "--time-limit", "-1"],
     "--time-limit must be > 0.0, got -1.0"),
    (["split", "{t}/pool.parquet", "--method", "mcd", "--language", "sexpr", "--out", "{t}/sp", "--max-steps", "-1"],
     "--max-steps must be >= 0"),
    (["split", "{t}/pool.parquet", "--method", "mcd", "--language", "sexpr", "--out", "{t}/sp",
      "--target-divergence", "2"], "--target-divergence must be <= 1.0"),
    (["split", "{t}/pool.parquet", "--method", "random", "--out", "{t}/sp", "--time-limit", "3"],
     "--time-limit does not apply to --method random; it applies to --method mcd, tmcd"),
    (["split", "{t}/pool.parquet", "--method", "mcd", "--out", "{t}/sp", "--language", "nope"], "--language: unknown"),
    (["split", "{t}/pool.parquet", "--method", "length", "--out", "{t}/sp", "--length-column", "program"],
     "--length-column: column 'program' holds string values; it must hold numbers"),
    (["split", "{t}/pool.parquet", "--method", "random", "--out", "{t}/sp", "--name", "a/b"], "--name: invalid config"),
    (["split", "{t}/pool.parquet", "--method", "random", "--out", "{t}/mine", "--overwrite"],
     "--out: {t}/mine was not written by hf-synthsample"),
    (["split", "{t}/pool.parquet", "--method", "random", "--out", "{t}/sp", "--column", "nope"],
     "--column: no column named 'nope'"),  # not --text-column, which the user never passed
    (["split", "{t}/pool.parquet", "--method", "random", "--out", "{t}/sp", "--text-column", "nope"],
     "--text-column: no column named 'nope'"),
    (["split", "{t}/pool.parquet", "--method", "mcd", "--out", "{t}/sp", "--atoms-column", "program",
      "--compounds-column", "program"], "--atoms-column: column 'program' holds Value('string')"),
    (["split", "{t}/pool.parquet", "--method", "template", "--out", "{t}/sp", "--language", "thingtalk"],
     "do not parse as 'thingtalk'"),  # without a hint to pass a Python parameter the command has no option for
    (["split", "scan/simple", "--method", "random", "--out", "{t}/sp", "--builder-param", "train_fraction=2"],
     "error: --builder-param train_fraction must be < 1"),
    (["homogenize", "{t}/pool.parquet", "--columns", "length", "--out", "{t}/h", "--config", "x"],
     "--config: only for a Hub-layout folder; source '{t}/pool.parquet' is a file"),
    (["datamap", "{t}/nope"], "dynamics: no folder"),
    (["datamap", "{t}/afile"], "dynamics: '{t}/afile' is not a folder"),
    (["datamap", "{t}/mine", "--plot", "{t}/mine"], "--plot: {t}/mine is a folder"),
    (["datamap", "{t}/mine", "--plot", "{t}/afile/map.png"], "--plot: cannot write {t}/afile/map.png"),
    (["datamap", "{t}/mine", "--select", "", "--out", "{t}/d"], "--select must be one of"),
    (["datamap", "{t}/mine", "--select", "ambiguous", "--out", "{t}/afile"], "--out: {t}/afile is a file"),
    (["configs", "nope"], "domain: unknown domain 'nope'"),
]


def _bad_license(argv, value):
    return argv + ["--license", value], f"--license: {value!r} is not a Hub license id"


def _bad_slice(argv, value):
    return argv + ["--split", value], f"--split: {value!r} is not a split or a slice of splits"


# main's --license and --split slices: through the same checks, before any work
_GENERATE = ["generate", "calculator", "--configs", "dcfg", "--out"]
_HOMOGENIZE = ["homogenize", "{t}/pool.parquet", "--columns", "length", "--out", "{t}/h"]
_SPLIT = ["split", "{t}/pool.parquet", "--method", "random", "--out", "{t}/sp"]
CASES += [
    _bad_license(_GENERATE + ["{t}/g"], "MIT"),
    (_GENERATE + ["{t}/mine", "--overwrite", "--license", "mit"], "--out: {t}/mine was not written by hf-synthsample"),
    _bad_license(_HOMOGENIZE, "cc by"),
    _bad_slice(_HOMOGENIZE, "train[:x]"),
    (_HOMOGENIZE + ["--split", "train+test"], "--split: 'train+test' combines the splits"),
    _bad_slice(["sample", "{t}/pool.parquet", "--sampler", "uniform", "-k", "2", "--out", "{t}/s"], "train[5:x]"),
    _bad_slice(_SPLIT, "train[:x]"),
    _bad_license(_SPLIT, "X"),
    _bad_license(["datamap", "{t}/mine", "--select", "ambiguous", "--out", "{t}/d"], "Apache 2"),
]


@pytest.mark.parametrize("argv, expected", CASES, ids=[" ".join(c[0][:2]) + f"-{i}" for i, c in enumerate(CASES)])
def test_bad_input_is_one_clear_line_naming_the_option(files, capsys, argv, expected, cache_dir, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", cache_dir)
    t = str(files)
    err = run([a.replace("{t}", t) for a in argv], capsys)
    assert expected.replace("{t}", t) in err
    # refused before any work: nothing generated or written
    assert sorted(os.listdir(files)) == ["afile", "bad.parquet", "badcard", "empty.parquet", "mine", "pool.parquet"]
    assert os.listdir(files / "badcard") == ["README.md"]
    assert os.listdir(files / "mine") == ["notes.txt"]


def test_k_0_is_refused_before_generating_the_source(tmp_path, capsys, cache_dir):
    err = run(["sample", "scan/simple", "--sampler", "uniform", "-k", "0", "--out", str(tmp_path / "s"),
               "--builder-param", "block_size=10"], capsys)
    assert "--k must be >= 1, got 0" in err and not os.path.exists(cache_dir)


def test_k_above_the_rows_a_generator_makes_is_refused_before_generating(tmp_path, capsys, cache_dir, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", cache_dir)
    argv = ["sample", "calculator/dcfg", "--sampler", "uniform", "-k", "500", "--out", str(tmp_path / "s"),
            "--builder-param", "num_examples=100"]
    assert "--k must be <= 100, the rows of split 'train' that calculator/dcfg generates" in run(argv, capsys)
    assert "--split: calculator/dcfg generates no 'test' rows" in run(argv + ["--split", "test"], capsys)
    assert not os.path.exists(cache_dir) and not (tmp_path / "s").exists()


# ------------------------------------------------------------------ operating-system errors


def test_an_unwritable_output_folder_is_refused_before_any_work(files, capsys, monkeypatch):
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(files / "locked") else real_access(p, mode))
    (files / "locked").mkdir()
    for argv in (["quickstart", "--out", f"{files}/locked/q"],
                 ["split", f"{files}/pool.parquet", "--method", "random", "--out", f"{files}/locked/sp"],
                 ["datamap", f"{files}/mine", "--plot", f"{files}/locked/map.png"]):
        err = run(argv, capsys)
        assert f"cannot write {files}/locked/" in err and f"permission denied in {files}/locked" in err
    assert os.listdir(files / "locked") == []


def test_a_read_only_disk_is_refused_before_any_work(files, capsys, monkeypatch):
    monkeypatch.setattr("hf_synthsample.validation._read_only", lambda folder: True)
    err = run(["homogenize", f"{files}/pool.parquet", "--columns", "length", "--out", f"{files}/h"], capsys)
    assert f"--out: cannot write {files}/h: {files} is on a read-only file system" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any permission bits")
def test_a_real_unwritable_folder(files, capsys):
    locked = files / "locked"
    locked.mkdir(mode=0o555)
    try:
        err = run(["split", f"{files}/pool.parquet", "--method", "random", "--out", f"{locked}/sp"], capsys)
        assert "permission denied" in err
    finally:
        locked.chmod(0o755)


@pytest.mark.parametrize("code, words", [(errno.EACCES, "permission denied"), (errno.EROFS, "read-only file system"),
                                         (errno.ENOSPC, "no space left on the device"),
                                         (errno.EDQUOT, "disk quota exceeded")])
def test_os_errors_while_writing_name_the_option_and_the_users_path(files, capsys, monkeypatch, code, words):
    """The write fails mid-way inside the temp folder: the user reads --out and their own path."""
    out = files / "sp"

    def fails(ds, folder, split, max_rows):
        raise OSError(code, os.strerror(code), str(Path(folder) / f".{split}-00000.parquet"))

    monkeypatch.setattr("hf_synthsample.hub.folder._write_parquet_shards", fails)
    err = run(["split", f"{files}/pool.parquet", "--method", "random", "--out", str(out)], capsys)
    assert err.startswith(f"hf-synthsample split: error: --out {out}") and words in err
    assert not out.exists() and not [e for e in os.listdir(files) if ".tmp-" in e]


def test_an_unreadable_source_is_one_line(files, capsys, monkeypatch):
    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(files / "pool.parquet"))

    monkeypatch.setattr(datasets, "load_dataset", denied)
    err = run(["homogenize", f"{files}/pool.parquet", "--columns", "length", "--out", f"{files}/h"], capsys)
    assert f"{files}/pool.parquet" in err and "Permission" in err


def test_ctrl_c_is_one_line_and_130(files, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("hf_synthsample.hub.folder._write_parquet_shards", interrupted)
    assert main(["split", f"{files}/pool.parquet", "--method", "random", "--out", f"{files}/sp"]) == 130
    assert "interrupted" in capsys.readouterr().err and not [e for e in os.listdir(files) if ".tmp-" in e]


def test_library_os_errors_name_the_target_not_the_temp_path(tmp_path, monkeypatch):
    from hf_synthsample.atomic import write_json_atomic
    from hf_synthsample.hub import write_hub_folder

    target = tmp_path / "results.json"
    real_replace = os.replace

    def denied(src, dst):
        if ".tmp-" in str(src):
            raise PermissionError(errno.EACCES, "Permission denied", str(src))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", denied)
    with pytest.raises(PermissionError) as err:
        write_json_atomic(target, {"a": 1})
    assert err.value.filename == str(target) and ".tmp-" not in str(err.value)
    assert os.listdir(tmp_path) == []
    monkeypatch.undo()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotADirectoryError) as err:
        write_hub_folder(tmp_path / "afile" / "out", {"a": datasets.Dataset.from_dict({"x": [1]})}, body="# t")
    assert err.value.filename == str(tmp_path / "afile" / "out")


# ------------------------------------------------------------------ the one translator


@pytest.mark.parametrize("message, table, expected", [
    ("time_limit must be > 0.0, got -1", {"time_limit": "--time-limit"}, "--time-limit must be > 0.0, got -1"),
    ("distribution='t2t' contradicts config 'dcfg'", {"distribution": "--distribution"},
     "--distribution t2t contradicts config 'dcfg'"),
    ("nan_policy='omit' to average", {"nan_policy": "--nan-policy"}, "--nan-policy omit to average"),
    ("columns=['a b'] given", {"columns": "--columns"}, "--columns ['a b'] given"),
    ("k must be <= 6, got 100", {"k": "--size"}, "--size must be <= 6, got 100"),
    ("a split that has k rows", {"split": "--split", "k": "--k"}, "a split that has k rows"),  # words, not checks
    ("column: no column named 'x'", {"column": "--column"}, "--column: no column named 'x'"),
    ("Pass skip_unparsable=True to skip them", {"skip_unparsable": "--param skip_unparsable="},
     "Pass --param skip_unparsable=True to skip them"),
    ("nested 101 levels (the limit is hf_synthsample.validation.MAX_NESTING)", {"validation": "--validation"},
     "nested 101 levels (the limit is hf_synthsample.validation.MAX_NESTING)"),
    ("num_examples, num_test: at least one split", {"num_examples": "--num-examples", "num_test": "--num-test"},
     "--num-examples, --num-test: at least one split"),
])
def test_parameters_become_options(message, table, expected):
    assert _as_options(message, table) == expected


@pytest.mark.parametrize("message, expected", [
    # the value the user gave a choice option (--measure el2n) follows the parameter: the option
    ("measure 'el2n' is not recorded in dynamics 'd' (train pass)", "--measure 'el2n' is not recorded in dynamics 'd'"),
    ("x: measure 'el2n' was not recorded", "x: --measure 'el2n' was not recorded"),
    # another value, or a value inside a sentence, is data: kept
    ("measure 'loss' is not recorded", "measure 'loss' is not recorded"),
    ("the measure 'el2n' is not recorded", "the measure 'el2n' is not recorded"),
    # no typed value for a free option (--column program): column 'program' is the data column
    ("--length-column: column 'program' holds string values", "--length-column: column 'program' holds string"),
])
def test_a_parameter_followed_by_its_typed_choice_becomes_the_option(message, expected):
    table = {"measure": "--measure", "column": "--column"}
    assert _as_options(message, table, typed={"measure": "el2n"}).startswith(expected)


def test_only_choice_options_count_as_typed_values():
    from hf_synthsample.cli import _build_parser, _typed

    parser = _build_parser()
    args = parser.parse_args(["datamap", "dyn", "--measure", "el2n", "--id-column", "row"])
    typed = _typed(parser, args)
    assert typed["measure"] == "el2n" and typed["source"] == "train"
    assert "id_column" not in typed and "dynamics" not in typed


def test_temp_names_become_the_users_path():
    assert _user_path("/data/.out.tmp-123-0123abcd/cfg/x.parquet") == "/data/out/cfg/x.parquet"
    assert _user_path("/data/.out.old-123-0123abcd") == "/data/out"
    assert _user_path("/r/.tmp-results.json-77-ab_cd12e.json") == "/r/results.json"


def test_an_empty_choice_list_says_what_is_wrong():
    with pytest.raises(ValueError, match="measure: no value can be accepted, because the dynamics record none"):
        check_choice("measure", "loss", [], empty="the dynamics record none")
    with pytest.raises(ValueError, match="no value can be accepted") as err:
        check_choice("x", 1, ())
    assert "[]" not in str(err.value)


# ------------------------------------------------------------------ output folders of training runs


def test_check_writable_path(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="output_dir: .*/f is a file"):
        check_writable_path("output_dir", tmp_path / "f", folder=True)
    with pytest.raises(ValueError, match=r"cannot write .*/f/a/b: .*/f is a file, not a folder"):
        check_writable_path("output_dir", tmp_path / "f" / "a" / "b", folder=True)
    with pytest.raises(TypeError, match="output_dir must be a path"):
        check_writable_path("output_dir", 3, folder=True)
    assert check_writable_path("output_dir", tmp_path / "new" / "deeper", folder=True) == str(tmp_path / "new" / "deeper")


def test_cartography_output_dir_that_is_a_file_fails_before_any_step(tmp_path):
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from datasets import Dataset

    from hf_synthsample.cartography import CartographyCallback, add_example_ids
    from test_cartography_callback import bart, make_trainer, rows_for

    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="output_dir: .*file is a file"):
        CartographyCallback(output_dir=tmp_path / "file")

    class NoStep(transformers.TrainerCallback):
        def on_step_begin(self, *a, **k):
            raise AssertionError("a training step ran before the error")

    run = tmp_path / "run"
    run.mkdir()
    (run / "cartography").write_text("not a folder")  # the default <output_dir>/cartography
    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=8)))
    with pytest.raises(ValueError, match="output_dir: .*cartography is a file"):
        make_trainer(bart(), ds, run, [CartographyCallback(), NoStep()]).train()


def test_example_scripts_check_out_before_any_work(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    for name in ("karel_io", "shin_calculator", "oren_schema2qa", "zhou_scan", "cartography_cogs"):
        spec = importlib.util.spec_from_file_location(f"example_{name}", REPO_ROOT / "examples" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
            with pytest.raises(SystemExit) as exit_:
                module.parse_args(["--out", str(tmp_path / "afile" / "run")])
        finally:
            sys.modules.pop(spec.name, None)
        assert exit_.value.code == 2
        assert f"--out: cannot write {tmp_path}/afile/run: {tmp_path}/afile is a file" in capsys.readouterr().err


def test_an_existing_plot_is_replaced_only_with_overwrite_and_only_a_png(tmp_path, capsys):
    from test_writers import _tiny_dynamics

    dyn = _tiny_dynamics(tmp_path / "dyn")
    notes = tmp_path / "notes.png"
    notes.write_text("my notes, not a picture")
    err = run(["datamap", str(dyn), "--plot", str(notes)], capsys)
    assert f"--plot: {notes} exists; pass --overwrite" in err
    err = run(["datamap", str(dyn), "--plot", str(notes), "--overwrite"], capsys)
    assert f"--plot: {notes} is not a PNG file, so it is never replaced" in err
    assert notes.read_text() == "my notes, not a picture"
    plot = tmp_path / "map.png"
    assert main(["datamap", str(dyn), "--plot", str(plot)]) == 0
    first = plot.stat().st_mtime_ns
    assert main(["datamap", str(dyn), "--plot", str(plot), "--overwrite"]) == 0  # its own PNG: replaced
    assert plot.read_bytes()[:4] == b"\x89PNG" and plot.stat().st_mtime_ns >= first


# ------------------------------------------------------------------ the same promises through the API


@pytest.mark.parametrize("call, error, match", [
    (lambda t: __import__("hf_synthsample.hub", fromlist=["x"]).write_hub_folder(
        123, {"a": datasets.Dataset.from_dict({"x": [1]})}, body="# t"), TypeError, "folder must be a path .* got int 123"),
    (lambda t: __import__("hf_synthsample.hub", fromlist=["x"]).write_hub_folder(
        "", {"a": datasets.Dataset.from_dict({"x": [1]})}, body="# t"), ValueError, "folder: give a path"),
    (lambda t: __import__("hf_synthsample.hub", fromlist=["x"]).materialize("calculator", 5, ["dcfg"]),
     TypeError, "folder must be a path"),
    (lambda t: __import__("hf_synthsample.hub", fromlist=["x"]).save_curated(
        datasets.Dataset.from_dict({"x": [1]}), None, __import__("hf_synthsample.hub", fromlist=["x"]).Provenance(
            source="s")), TypeError, "folder must be a path .* got NoneType"),
    (lambda t: __import__("hf_synthsample.atomic", fromlist=["x"]).write_json_atomic(None, {}), TypeError,
     "path must be a path"),
    (lambda t: __import__("hf_synthsample.atomic", fromlist=["x"]).write_json_atomic(t, {}), IsADirectoryError,
     "is a folder, where a file was to be written"),
])
def test_api_writers_name_the_argument(tmp_path, cache_dir, call, error, match):
    with pytest.raises(error, match=match):
        call(tmp_path)
    assert os.listdir(tmp_path) == [] and not os.path.exists(cache_dir)


def test_a_users_card_that_does_not_parse_is_named(tmp_path):
    from hf_synthsample.hub import read_card_metadata

    (tmp_path / "README.md").write_text("---\n: bad: [\n---\n# mine\n")
    with pytest.raises(ValueError, match=r"README.md: its YAML block \(between the '---' lines\) does not parse"):
        read_card_metadata(tmp_path)
    (tmp_path / "README.md").write_text("---\n- a\n- b\n---\n# mine\n")
    with pytest.raises(ValueError, match="is a list, not a mapping"):
        read_card_metadata(tmp_path)
