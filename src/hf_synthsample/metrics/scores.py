"""The scores behind the shipped ``evaluate`` modules, as plain functions (one place for each).

Example:
    >>> exact_match(["I_WALK I_JUMP", "I_RUN"], ["I_WALK  I_JUMP", "I_LOOK"])
    0.5
    >>> calculator_accuracy([3, 4, 5], [3, 4, 0], groups=["dcfg", "t2t", "t2t"])
    {'accuracy': 0.6666666666666666, 'accuracy_dcfg': 1.0, 'accuracy_t2t': 0.5}
    >>> round(bleu(["a b c d e f"], ["a b c d e g"])["bleu"], 2)  # (5/6 * 4/5 * 3/4 * 2/3) ** (1/4)
    75.98
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

__all__ = ["exact_match", "calculator_accuracy", "bleu"]


def _check_pairs(predictions: Sequence, references: Sequence) -> None:
    if len(predictions) != len(references):
        raise ValueError(f"predictions and references must have the same length, got {len(predictions)} and "
                         f"{len(references)}")
    if len(predictions) == 0:
        raise ValueError("predictions: nothing to score (empty)")


def exact_match(predictions: Sequence[str], references: Sequence[str], normalize_whitespace: bool = True) -> float:
    """Fraction of predictions equal to their reference (whitespace runs collapsed by default)."""
    _check_pairs(predictions, references)
    if normalize_whitespace:
        return sum(" ".join(p.split()) == " ".join(r.split()) for p, r in zip(predictions, references)) / len(predictions)
    return sum(p == r for p, r in zip(predictions, references)) / len(predictions)


def calculator_accuracy(
    predictions: Sequence[int], references: Sequence[int], groups: Sequence[str] | None = None
) -> dict[str, float]:
    """Accuracy of predicted answers (0-9), overall and per group (e.g. per source distribution)."""
    _check_pairs(predictions, references)
    hits = [int(p) == int(r) for p, r in zip(predictions, references)]
    out = {"accuracy": sum(hits) / len(hits)}
    if groups is not None:
        if len(groups) != len(hits):
            raise ValueError(f"groups must have one entry per prediction, got {len(groups)} for {len(hits)}")
        per: dict[str, list[bool]] = defaultdict(list)
        for g, h in zip(groups, hits):
            per[str(g)].append(h)
        out.update({f"accuracy_{g}": sum(v) / len(v) for g, v in sorted(per.items())})
    return out


def bleu(predictions: Sequence[str], references: Sequence[str], tokenize: str = "13a") -> dict[str, float]:
    """Corpus BLEU and mean sentence BLEU (sacrebleu; predictions are hypotheses, references gold)."""
    import sacrebleu

    _check_pairs(predictions, references)
    corpus = sacrebleu.corpus_bleu(list(predictions), [list(references)], tokenize=tokenize)
    sentences = [sacrebleu.sentence_bleu(p, [r], tokenize=tokenize).score for p, r in zip(predictions, references)]
    return {"bleu": corpus.score, "mean_sentence_bleu": sum(sentences) / len(sentences)}
