"""Local evaluate modules: loaded offline from the package, checked against hand-computed values."""

from __future__ import annotations

import math

import evaluate
import pytest

from hf_synthsample.metrics import available_metrics, metric_path
from hf_synthsample.metrics.scores import bleu, calculator_accuracy, exact_match


def load(name: str):
    return evaluate.load(metric_path(name))


def test_shipped_metrics_are_listed():
    assert {"bleu", "calculator_accuracy", "exact_match"} <= set(available_metrics())
    with pytest.raises(ValueError, match="unknown metric 'blue'; available metrics"):
        metric_path("blue")


def test_exact_match_by_hand():
    m = load("exact_match")
    preds = ["I_WALK I_JUMP", "I_RUN", "I_LOOK  I_LOOK"]
    refs = ["I_WALK I_JUMP", "I_RUN I_RUN", "I_LOOK I_LOOK"]
    assert m.compute(predictions=preds, references=refs) == {"exact_match": pytest.approx(2 / 3)}
    assert m.compute(predictions=preds, references=refs, normalize_whitespace=False) == {"exact_match": pytest.approx(1 / 3)}


def test_calculator_accuracy_by_hand():
    m = load("calculator_accuracy")
    out = m.compute(predictions=[1, 2, 3, 4], references=[1, 2, 0, 0], groups=["dcfg", "dcfg", "bal", "t2t"])
    assert out == {"accuracy": 0.5, "accuracy_bal": 0.0, "accuracy_dcfg": 1.0, "accuracy_t2t": 0.0}


def test_bleu_by_hand_and_direction():
    m = load("bleu")
    # 6 hypothesis tokens, 5/6 unigrams, 4/5 bigrams, 3/4 trigrams, 2/3 4-grams match; no brevity penalty
    expected = 100 * (5 / 6 * 4 / 5 * 3 / 4 * 2 / 3) ** 0.25
    out = m.compute(predictions=["a b c d e f"], references=["a b c d e g"])
    assert out["bleu"] == pytest.approx(expected) and out["mean_sentence_bleu"] == pytest.approx(expected)
    # hypothesis shorter than the reference: brevity penalty exp(1 - 6/5) applies only in this direction
    short = bleu(["a b c d e"], ["a b c d e f"])["bleu"]
    assert short == pytest.approx(100 * math.exp(1 - 6 / 5))
    # the reverse direction has no brevity penalty and the same n-gram precisions: BLEU is not symmetric
    assert bleu(["a b c d e f"], ["a b c d e"])["bleu"] == pytest.approx(expected)


@pytest.mark.parametrize("fn", [exact_match, bleu])
def test_mismatched_or_empty_inputs_are_errors(fn):
    with pytest.raises(ValueError, match="same length"):
        fn(["a"], ["a", "b"])
    with pytest.raises(ValueError, match="empty"):
        fn([], [])


def test_bad_groups_and_evaluate_level_checks():
    with pytest.raises(ValueError, match="one entry per prediction"):
        calculator_accuracy([1], [1], groups=["a", "b"])
    with pytest.raises(ValueError, match="Mismatch in the number of predictions"):
        load("exact_match").compute(predictions=["a"], references=["a", "b"])
