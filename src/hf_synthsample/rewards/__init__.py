"""The generators as verifiable rewards: a verifier per domain, TRL reward functions, chat prompts.

* :func:`verifier` (``rewards.verifiers``): ``verifier(domain).score(completion, row) -> float``,
  1.0 for a correct completion and 0.0 for a wrong one, by the domain's own evaluator;
* :func:`reward_function` (``rewards.trl``): the same as a reward function for TRL's
  ``GRPOTrainer(reward_funcs=...)``;
* :func:`to_prompt` / :func:`to_prompts` (``rewards.prompts``): rows as chat prompts asking for the
  answer in the final-answer tag;
* how a completion is read (the ``<answer>...</answer>`` tag, whitespace, chat form):
  ``rewards.normalize``.

Example:
    >>> from hf_synthsample.rewards import reward_function, to_prompt, verifier
    >>> row = {"commands": "jump twice", "actions": "I_JUMP I_JUMP"}
    >>> verifier("scan").score("<answer>I_JUMP I_JUMP</answer>", row)
    1.0
    >>> to_prompt(row, "scan")[0]["role"]
    'user'
    >>> reward_function("scan")(prompts=[None, None], completions=["I_JUMP I_JUMP", "I_JUMP"],
    ...                         actions=[row["actions"]] * 2)
    [1.0, 0.0]
"""

from .curriculum import CurriculumSettings, RewardCurriculum
from .normalize import ANSWER_TAG, completion_text, extract_answer, tagged
from .prompts import DEFAULT_INSTRUCTIONS, render_input, to_prompt, to_prompts
from .trl import RewardFunction, reward_function
from .verifiers import DOMAINS, Verifier, canonical_thingtalk, verifier

__all__ = ["ANSWER_TAG", "DEFAULT_INSTRUCTIONS", "DOMAINS", "RewardFunction", "Verifier", "canonical_thingtalk",
           "completion_text", "extract_answer", "render_input", "reward_function", "tagged", "to_prompt",
           "to_prompts", "verifier", "CurriculumSettings", "RewardCurriculum"]
