"""Karel execution metric: exact match, semantic accuracy and generalization accuracy by execution.

* ``exact_match``: the predicted token sequence equals the reference program's;
* ``semantic_accuracy``: the prediction runs without crash or timeout on every *shown* input and
  produces the recorded output (grid, markers and hero);
* ``generalization_accuracy``: the same on every pair, held-out ones included (Bunel et al. 2018;
  Shin et al. 2019).

Unparsable, crashing or timed-out predictions count as wrong; the metric never raises on them.

Example:
    >>> import evaluate, hf_synthsample
    >>> from hf_synthsample.metrics import metric_path
    >>> ds = hf_synthsample.load_dataset("karel", "baseline", num_examples=4, split="train")
    >>> metric = evaluate.load(metric_path("karel_execution"))
    >>> refs = [" ".join(t) for t in ds["program_tokens"]]
    >>> metric.compute(predictions=refs, references=refs, examples=ds["examples"])["generalization_accuracy"]
    1.0
"""

import evaluate

from hf_synthsample.domains.karel.dsl import parse, tokenize
from hf_synthsample.domains.karel.interpreter import DEFAULT_MAX_MARKERS, DEFAULT_TICK_BUDGET, execute_fast
from hf_synthsample.domains.karel.world import World
from hf_synthsample.metrics import pair_metric_info

_DESCRIPTION = __doc__
_KWARGS_DESCRIPTION = """
Args:
    predictions: predicted programs, token strings ("DEF run m( move m)") or token lists joined by spaces.
    references: reference programs, same form.
    examples: per task, its list of I/O pairs (dicts with "inpgrid_json" and "outgrid_json" grid JSON),
        shown pairs first, as in the Karel dataset's "examples" column.
    num_shown: number of shown pairs per task (default 5); the rest are held out.
    max_markers, tick_budget: interpreter limits (default 10 and 200).
Returns:
    exact_match, semantic_accuracy, generalization_accuracy (fractions of tasks), num_unparsable.
"""


def _program_text(x) -> str:
    return " ".join(x) if isinstance(x, (list, tuple)) else str(x)


def _correct(program, pairs, max_markers: int, tick_budget: int) -> bool:
    for inp, out in pairs:
        res = execute_fast(program, inp, max_markers=max_markers, tick_budget=tick_budget)
        if not res.ok or not res.world.same_state(out):
            return False
    return True


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class KarelExecution(evaluate.Metric):
    def _info(self):
        return pair_metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references, examples=None, num_shown=5, max_markers=DEFAULT_MAX_MARKERS,
                 tick_budget=DEFAULT_TICK_BUDGET):
        if examples is None or len(examples) != len(predictions):
            raise ValueError(f"examples: give one list of I/O pairs per prediction ({len(predictions)}), "
                             f"got {None if examples is None else len(examples)}")
        if isinstance(num_shown, bool) or not isinstance(num_shown, int) or num_shown < 1:
            raise ValueError(f"num_shown must be an int >= 1, got {num_shown!r}")
        exact = semantic = general = unparsable = 0
        for pred, ref, pairs in zip(predictions, references, examples):
            worlds = [(World.from_json(p["inpgrid_json"]), World.from_json(p["outgrid_json"])) for p in pairs]
            if tokenize(_program_text(pred)) == tokenize(_program_text(ref)):
                exact += 1
            try:
                program = parse(_program_text(pred))
            except (ValueError, TypeError):
                unparsable += 1
                continue
            if _correct(program, worlds[:num_shown], max_markers, tick_budget):
                semantic += 1
                if _correct(program, worlds[num_shown:], max_markers, tick_budget):
                    general += 1
        denom = len(predictions) or 1
        return {"exact_match": exact / denom, "semantic_accuracy": semantic / denom,
                "generalization_accuracy": general / denom, "num_unparsable": unparsable}
