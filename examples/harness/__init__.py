"""The machinery the paper examples share, in one place, so each example reads as its paper's
experiment: presets and the checks on their flags (:mod:`.options`), the run folder and its
results (:mod:`.run_folder`), results tables whose cells carry the model's fit (:mod:`.tables`),
training runs shared by the tables, ``--jobs`` processes and restarts (:mod:`.runs`), and scoring
a model while it trains (:mod:`.checkpoints`).

It lives beside the examples, not in the ``hf_synthsample`` package: it is how the examples are
run and reported, not a capability of the library. The examples import it as ``harness`` (Python
puts a script's folder on ``sys.path``); tests put ``examples/`` there first.

Example:
    >>> from harness import ResultsTable, Score
    >>> t = ResultsTable("EM", ["split", "1x"])
    >>> t.add(split="jump", **{"1x": Score.of([0.0, 2.0], fit=[98.0, 99.0])})
    >>> t.rows[0]["1x"].format()
    '1.0±1.4 (fit 98.5)'
"""

from .checkpoints import ConvergenceStopper, CurveScorer, curve_table, dev_test_split, error_profile, subsample
from .options import (SCHEDULERS, add_overrides, add_presets, add_run_flags, apply_preset, check_encoder_folder,
                      check_outputs_free, check_seq2seq_folder, describe_settings, finish_args, flag, refuse_unused,
                      run_main)
from .run_folder import OUTPUTS_RECORD, clear_outputs, cpu_seconds, is_main_process, say, start_run, write_results
from .runs import RunBook, check_restart_flags, restart_specs, run_jobs, with_restarts
from .tables import ResultsTable, Score, SignedScore

__all__ = ["ConvergenceStopper", "CurveScorer", "OUTPUTS_RECORD", "ResultsTable", "RunBook", "SCHEDULERS",
           "Score", "SignedScore", "add_overrides", "check_restart_flags", "add_presets", "add_run_flags", "apply_preset",
           "check_encoder_folder", "check_outputs_free", "check_seq2seq_folder", "refuse_unused", "run_main",
           "clear_outputs", "cpu_seconds", "curve_table", "describe_settings", "dev_test_split",
           "error_profile", "finish_args", "flag", "is_main_process", "restart_specs", "run_jobs", "say", "start_run",
           "subsample", "with_restarts", "write_results"]
