"""The hf-synthsample command line."""

from __future__ import annotations

import subprocess
import sys

import datasets
import pytest

from hf_synthsample.cli import main


def test_quickstart_prints_the_report_and_writes_a_folder(tmp_path, capsys):
    out = tmp_path / "qs"
    assert main(["quickstart", "--out", str(out), "--num-examples", "3000"]) == 0
    text = capsys.readouterr().out
    assert "KL to uniform of length: before" in text and "% lower" in text
    assert "draws per accepted example" in text and "theoretical" in text
    ds = datasets.load_dataset(str(out), "dcfg-homogenized-length")
    assert ds["train"].num_rows == 3000
    assert (out / "quickstart-histogram.png").exists()
    # a second run refuses to overwrite unless told to
    assert main(["quickstart", "--out", str(out), "--num-examples", "3000"]) == 2
    assert "exists" in capsys.readouterr().err


def test_generate_with_config_options(tmp_path, capsys):
    out = tmp_path / "gen"
    argv = ["generate", "calculator", "--out", str(out), "--configs", "dcfg", "rcfg",
            "--num-examples", "200", "--max-length", "None", "--seed", "3", "--cache-dir", str(tmp_path / "c")]
    assert main(argv) == 0
    ds = datasets.load_dataset(str(out), "rcfg")["train"]
    assert ds.num_rows == 200 and set(ds["distribution"]) == {"rcfg"}
    assert main(argv[:-4] + ["--configs", "bal", "--add", "--cache-dir", str(tmp_path / "c")]) == 0
    assert datasets.load_dataset(str(out), "bal")["train"].num_rows == 200
    assert datasets.load_dataset(str(out), "dcfg")["train"].num_rows == 200


def test_generate_rejects_bad_parameters(tmp_path, capsys):
    code = main(["generate", "calculator", "--out", str(tmp_path / "g"), "--eps", "-1", "--homogenize", "length"])
    assert code == 2
    assert "eps must be > 0" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


def test_configs_lists_parameters(capsys):
    assert main(["configs", "calculator"]) == 0
    text = capsys.readouterr().out
    assert "dcfg-homogenized-max-paren-depth" in text and "p_digit" in text and "mean_paren_depth" in text


def test_pool_side_homogenize_command(tmp_path, capsys):
    path = tmp_path / "pool.parquet"
    datasets.Dataset.from_dict({"length": [2] * 30 + [4] * 6 + [6] * 3, "t": ["x"] * 39}).to_parquet(str(path))
    out = tmp_path / "h"
    assert main(["homogenize", str(path), "--columns", "length", "--size", "9", "--out", str(out)]) == 0
    ds = datasets.load_dataset(str(out), "homogenized")["train"]
    assert sorted(ds["length"]) == [2, 2, 2, 4, 4, 4, 6, 6, 6]
    assert main(["homogenize", str(path), "--columns", "lenght", "--out", str(tmp_path / "h2")]) == 2
    assert "no column named 'lenght'" in capsys.readouterr().err


def test_console_script_runs(tmp_path):
    exe = [sys.executable, "-m", "hf_synthsample.cli", "--version"]
    assert "hf-synthsample" in subprocess.run(exe, capture_output=True, text=True, check=True).stdout


def test_sample_command_writes_a_curated_folder(tmp_path, capsys):
    # a tiny pool: (f a) twice (one structure), CMaxEnt takes it once; the rest are distinct
    programs = ["(f a)", "(f a)", "(g a)", "(f (g b))", "(h 'x)"]
    src = tmp_path / "pool.parquet"
    datasets.Dataset.from_dict({"program": programs, "id": list(range(5))}).to_parquet(str(src))
    out = tmp_path / "curated"
    argv = ["sample", str(src), "--sampler", "cmaxent", "-k", "4", "--param", "language=sexpr", "--out", str(out)]
    assert main(argv) == 0
    assert "| cmaxent | 4 | 4 |" in capsys.readouterr().out  # report: 4 rows, 4 templates
    ds = datasets.load_dataset(str(out), "cmaxent")["train"]
    assert sorted(ds["program"]) == sorted(["(f a)", "(g a)", "(f (g b))", "(h 'x)"])
    card = (out / "README.md").read_text()
    assert "CMaxEntSampler" in card and "| cmaxent | 4 | 4 |" in card and (out / "plots" / "cmaxent-templates.png").exists()
    # a generated source, a second config in the same folder
    assert main(["sample", "schema2qa/hotels", "--sampler", "uat", "--param", "alpha=-0.5", "-k", "20",
                 "--builder-param", "num_examples=200", "--seed", "3", "--out", str(out)]) == 0
    assert datasets.load_dataset(str(out), "uat")["train"].num_rows == 20
    assert "hf_synthsample:schema2qa/hotels" in (out / "README.md").read_text()
    # bad input: unknown / out-of-range parameters, k too large, builder params on a file
    capsys.readouterr()
    assert main(["sample", str(src), "--sampler", "uat", "-k", "2", "--param", "beta=1", "--out", str(out)]) == 2
    assert "no parameter beta; accepted" in capsys.readouterr().err
    assert main(["sample", str(src), "--sampler", "uat", "-k", "2", "--param", "alpha=0.5", "--out", str(out)]) == 2
    assert "alpha" in capsys.readouterr().err
    assert main(["sample", str(src), "--sampler", "cmaxent", "-k", "5", "--param", "language=sexpr",
                 "--out", str(out), "--name", "big"]) == 2
    assert "distinct structures" in capsys.readouterr().err
    assert main(["sample", str(src), "--sampler", "uniform", "-k", "2", "--builder-param", "num_examples=3",
                 "--out", str(out)]) == 2
    assert "--builder-param" in capsys.readouterr().err


def test_sample_refuses_to_replace_a_config_without_overwrite(tmp_path, capsys):
    src = tmp_path / "pool.parquet"
    datasets.Dataset.from_dict({"program": ["(f a)", "(g a)", "(f (g b))", "(h 'x)"]}).to_parquet(str(src))
    out = tmp_path / "curated"
    argv = ["sample", str(src), "--sampler", "cmaxent", "--param", "language=sexpr", "--out", str(out), "--name", "x"]
    assert main(argv + ["-k", "3"]) == 0
    first = datasets.load_dataset(str(out), "x")["train"].to_list()
    capsys.readouterr()
    assert main(argv + ["-k", "2"]) == 2
    err = capsys.readouterr().err
    assert "already has config 'x'; pass --overwrite" in err and "if_exists" not in err
    assert datasets.load_dataset(str(out), "x")["train"].to_list() == first
    assert main(argv + ["-k", "2", "--overwrite"]) == 0
    assert datasets.load_dataset(str(out), "x")["train"].num_rows == 2
    assert main(argv[:-1] + ["bad/name", "-k", "2"]) == 2
    assert "--name: invalid config name 'bad/name'" in capsys.readouterr().err


def test_messages_name_the_cli_options(tmp_path, capsys):
    out = tmp_path / "exists"
    out.mkdir()
    assert main(["generate", "calculator", "--out", str(out), "--configs", "dcfg", "--num-examples", "10",
                 "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "pass --overwrite" in err and "--add" in err and "if_exists" not in err
    assert not (tmp_path / "c").exists()  # refused before generating
    path = tmp_path / "pool.parquet"
    datasets.Dataset.from_dict({"length": [2, 4]}).to_parquet(str(path))
    assert main(["homogenize", str(path), "--columns", "length", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "pass --overwrite" in err and "if_exists" not in err
    assert main(["homogenize", str(path), "--columns", "length", "--out", str(tmp_path / "h"), "--name", "a b"]) == 2
    assert "--name: invalid config name" in capsys.readouterr().err


def test_generate_errors_name_the_options_typed(tmp_path, capsys):
    # the library says distribution='t2t' / num_examples; the command line user typed --options
    out = tmp_path / "gen"
    assert main(["generate", "calculator", "--out", str(out), "--configs", "dcfg", "--distribution", "t2t"]) == 2
    err = capsys.readouterr().err
    assert "--distribution t2t contradicts config 'dcfg'" in err and "distribution=" not in err
    assert main(["generate", "calculator", "--out", str(out), "--configs", "dcfg",
                 "--num-examples", str(10**15)]) == 2
    err = capsys.readouterr().err
    assert err.count("--num-examples") == 2 and " num_examples" not in err
    assert not out.exists()
