"""CartographyCallback: a resume from the wrong checkpoint fails before training; a real 2-process launch
(the README's command) records every example once per epoch with the single-process values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")  # the callback needs it
transformers = pytest.importorskip("transformers")

from test_cartography_callback import _Crash, _KillAt, bart, make_trainer, rows_for  # noqa: E402

from hf_synthsample.cartography import CartographyCallback, DataMap, add_example_ids, load_dynamics  # noqa: E402

TESTS = Path(__file__).resolve().parent


pytestmark = pytest.mark.usefixtures("one_torch_thread")


class _NoStep(transformers.TrainerCallback):
    def on_step_begin(self, *a, **k):
        raise AssertionError("a training step ran before the error")


@pytest.fixture(scope="module")
def crashed_run(tmp_path_factory):
    """30 rows, 8 steps per epoch, checkpoints every 5 steps, killed at step 13 (epoch 1)."""
    from datasets import Dataset

    out = tmp_path_factory.mktemp("resume") / "run"
    ds = add_example_ids(Dataset.from_list(rows_for("seq2seq", n=30)))
    with pytest.raises(_Crash):
        make_trainer(bart(), ds, out, [CartographyCallback(), _KillAt(13)], **COMMON).train()
    return ds, out


COMMON = dict(epochs=3, bs=4, save_strategy="steps", save_steps=5)


@pytest.mark.parametrize("meta_has_step", [True, False])
def test_resume_from_an_older_checkpoint_fails_before_training(crashed_run, tmp_path, meta_has_step):
    import shutil

    ds, run = crashed_run
    out = tmp_path / "run"
    shutil.copytree(run, out)
    if not meta_has_step:  # dynamics written before global_step was recorded: the rows' steps tell
        meta_path = out / "checkpoint-5" / "cartography" / "cartography.json"
        meta = json.loads(meta_path.read_text())
        meta.pop("global_step", None)
        meta_path.write_text(json.dumps(meta))
    older = CartographyCallback(resume_from=out / "checkpoint-5")
    with pytest.raises(ValueError, match=r"resumes at step 10 but the dynamics in .*checkpoint-5.* reach step 5; "
                                         r"the examples of steps 6\.\.10 would be missing"):
        make_trainer(bart(), ds, out, [older, _NoStep()], **COMMON).train(
            resume_from_checkpoint=str(out / "checkpoint-10"))
    later = CartographyCallback(resume_from=out / "checkpoint-10")
    with pytest.raises(ValueError, match=r"resumes at step 5 but the dynamics .* reach step 10"):
        make_trainer(bart(), ds, out, [later, _NoStep()], **COMMON).train(
            resume_from_checkpoint=str(out / "checkpoint-5"))


def test_resume_from_the_right_checkpoint_is_complete_and_logs_at_datasets_info(crashed_run, tmp_path, caplog):
    import shutil

    import datasets

    ds, run = crashed_run
    out = tmp_path / "run"
    shutil.copytree(run, out)
    before = datasets.logging.get_verbosity()
    datasets.logging.set_verbosity_info()  # hf_synthsample's loggers follow datasets' verbosity
    try:  # the root logger stays at WARNING: the record gets through by hf_synthsample's own level
        make_trainer(bart(), ds, out, [CartographyCallback(resume_from=out / "checkpoint-10")], **COMMON).train(
            resume_from_checkpoint=str(out / "checkpoint-10"))
    finally:
        datasets.logging.set_verbosity(before)
    assert any("CartographyCallback: restored" in r.getMessage() for r in caplog.records)
    dm = DataMap.from_dynamics(out / "cartography")  # complete: validated per epoch and example
    assert len(dm) == 30 and dm.epochs == (0, 1, 2)


# ----------------------------------------------------------------------------- real data parallelism
@pytest.mark.slow
def test_accelerate_launch_two_processes_records_exact_complete_dynamics(tmp_path):
    """``accelerate launch --multi_gpu --num_processes 2`` (gloo on CPU) really starts two processes."""
    from cartography_two_process_run import run

    import hf_synthsample

    single, double = tmp_path / "single", tmp_path / "double"
    run(str(single))
    src = str(Path(hf_synthsample.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(TESTS), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
           "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
           str(TESTS / "cartography_two_process_run.py"), str(double)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    one = load_dynamics(single / "cartography")
    two = load_dynamics(double / "cartography")
    assert two["meta"]["num_examples"] == 37 and two["meta"]["epochs"] == [0, 1]
    a = one["train"].to_pandas().sort_values(["epoch", "example_id"]).reset_index(drop=True)
    b = two["train"].to_pandas().sort_values(["epoch", "example_id"]).reset_index(drop=True)
    assert list(zip(b.example_id, b.epoch)) == [(i, e) for e in (0, 1) for i in range(37)]  # each once
    assert set(b["rank"]) == {0, 1}  # both processes recorded rows
    # lr=0: the weights never change, so the values cannot depend on who computed them
    np.testing.assert_allclose(b.inv_ppl, a.inv_ppl, rtol=1e-5)
    np.testing.assert_allclose(b.chia, a.chia, rtol=1e-5)
    assert b.correct.tolist() == a.correct.tolist() and b.num_tokens.tolist() == a.num_tokens.tolist()
