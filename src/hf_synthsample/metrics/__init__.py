"""Local ``evaluate`` metric modules shipped with the package.

Each metric lives in ``metrics/<name>/<name>.py`` (an ``evaluate.Metric`` script); load it offline
with ``evaluate.load(metric_path("<name>"))``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["metric_path", "available_metrics", "pair_metric_info"]

_HERE = Path(__file__).resolve().parent


def available_metrics() -> list[str]:
    """Names of the metric modules shipped with the package."""
    return sorted(p.name for p in _HERE.iterdir() if p.is_dir() and (p / f"{p.name}.py").exists())


def metric_path(name: str) -> str:
    """Path to pass to ``evaluate.load`` for the shipped metric ``name``."""
    if name not in available_metrics():
        raise ValueError(f"name: unknown metric {name!r}; available metrics: {available_metrics()}")
    return str(_HERE / name / f"{name}.py")


def pair_metric_info(description: str, inputs: str, *, citation: str = "", dtype: str = "string"):
    """The ``evaluate.MetricInfo`` every shipped metric declares: prediction/reference pairs of ``dtype``."""
    import datasets
    import evaluate

    value = datasets.Value(dtype)
    return evaluate.MetricInfo(description=description, citation=citation, inputs_description=inputs,
                               features=datasets.Features({"predictions": value, "references": value}))
