"""Verifiers as TRL reward functions: ``GRPOTrainer(reward_funcs=reward_function("calculator"))``.

TRL (1.x) calls a reward function as ``f(prompts=..., completions=..., completion_ids=..., **kwargs)``,
where ``kwargs`` holds every other column of the train dataset as a list (one entry per completion,
repeated over a prompt's generations) plus ``trainer_state``, ``log_extra``, ``log_metric`` (and
``environments``). The function returns one float per completion; TRL logs it under the function's
``__name__``. Completions are strings, or, for a conversational dataset (a ``prompt`` column of
messages, see :func:`~hf_synthsample.rewards.prompts.to_prompts`), lists of ``{"role", "content"}``
messages, whose assistant content is scored.

So the dataset must keep the columns the verifier reads (``answer``, ``actions``, ``examples``,
``program``): a reward call without them is a ``ValueError`` naming the column.

Example:
    >>> f = reward_function("calculator")
    >>> f.__name__
    'calculator_reward'
    >>> f(prompts=["1+2", "1+2"], completions=["<answer>3</answer>", "4"], answer=[3, 3], expression=["1+2"] * 2)
    [1.0, 0.0]
    >>> chat = [[{"role": "assistant", "content": "Answer: 3"}]]
    >>> f(prompts=[[{"role": "user", "content": "1+2?"}]], completions=chat, answer=[3], trainer_state=None)
    [1.0]
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .verifiers import Verifier, verifier

__all__ = ["RewardFunction", "reward_function", "TRL_KEYWORDS"]

#: keyword arguments TRL passes that are not dataset columns
TRL_KEYWORDS = frozenset({"completion_ids", "trainer_state", "log_extra", "log_metric", "environments"})


def _is_column(values: Any) -> bool:
    """A per-completion column: a list, tuple or other sized sequence (``datasets``' ``Column``, an
    array), not a string or a mapping."""
    if isinstance(values, (str, bytes, Mapping)):
        return False
    return hasattr(values, "__len__") and hasattr(values, "__getitem__")


class RewardFunction:
    """A picklable TRL reward function around a :class:`~hf_synthsample.rewards.verifiers.Verifier`:
    ``(prompts, completions, **columns) -> list[float]``, one score per completion, with
    ``columns[name][i]`` the row of completion ``i``."""

    def __init__(self, verifier: Verifier, name: str):
        self.verifier = verifier
        self.__name__ = name

    def __call__(self, prompts: Sequence | None = None, completions: Sequence[Any] | None = None,
                 **columns: Any) -> list[float]:
        if completions is None:
            raise TypeError(f"{self.__name__}: completions is required")
        n = len(completions)
        rows: dict[str, Sequence] = {}
        for key, values in columns.items():
            if key in TRL_KEYWORDS or not _is_column(values):
                continue
            if len(values) != n:
                raise ValueError(f"{self.__name__}: column {key!r} has {len(values)} values for {n} completions")
            rows[key] = values
        return [self.verifier.score(c, {k: v[i] for k, v in rows.items()}) for i, c in enumerate(completions)]

    def __repr__(self) -> str:
        return f"RewardFunction({self.__name__!r}, {self.verifier!r})"


def reward_function(domain: str | Verifier, *, name: str | None = None, **options) -> RewardFunction:
    """A TRL reward function scoring completions with ``verifier(domain, **options)``.

    Args:
        domain: a domain of :data:`~hf_synthsample.rewards.verifiers.DOMAINS`, or a verifier.
        name: the name TRL logs the reward under (default ``"<domain>_reward"``).
        options: verifier options (Karel: ``pairs``, ``partial``, ...).

    Example:
        >>> f = reward_function("scan", name="actions")
        >>> f(prompts=["walk"], completions=[[{"role": "assistant", "content": "<answer>I_WALK</answer>"}]],
        ...   actions=["I_WALK"], completion_ids=[[1, 2]], log_metric=print)
        [1.0]
        >>> f.__name__
        'actions'
    """
    v = verifier(domain, **options)
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    return RewardFunction(v, name or f"{v.domain}_reward")
