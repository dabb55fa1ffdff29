"""How a completion is read before a verifier judges it: the final-answer tag, whitespace, chat form.

The convention, the same for every domain:

1. **Chat completions.** A conversational completion (a list of ``{"role", "content"}`` messages, as
   TRL passes them) is read as the content of its last ``assistant`` message (the last message if none
   has that role); a content given as a list of parts keeps its ``{"type": "text"}`` parts, joined.
2. **The final-answer tag.** If the text holds ``<answer>...</answer>`` (tag names in any case), the
   answer is the inside of the *last* such tag; else, if it has a line starting ``Answer:`` or
   ``Final answer:`` (any case, Markdown emphasis allowed), the answer is the rest of the *last* such
   line (the next line if it is empty; a whole code fence if one opens there); else the whole text is
   the answer. Text outside the tag (reasoning, a preamble) is ignored;
   without a tag, extra text stays part of the answer, so it makes the answer wrong. An unclosed
   ``<answer>`` counts as no tag.
3. **Code fences.** An answer wrapped whole in a Markdown fence (```` ```lang ... ``` ````) or in single
   backticks is unwrapped.
4. **Whitespace.** Runs of whitespace (spaces, tabs, newlines) become one space; the ends are stripped.

Case and punctuation are left to each domain's verifier (see :mod:`hf_synthsample.rewards.verifiers`).
An empty answer after these steps scores 0 in every domain.

Example:
    >>> extract_answer("Let me think. 2*3 = 6, plus 1.  <answer> 7 </answer>")
    '7'
    >>> extract_answer("reasoning...\\nAnswer:   I_WALK   I_JUMP")
    'I_WALK I_JUMP'
    >>> extract_answer("  I_WALK\\n I_JUMP ")
    'I_WALK I_JUMP'
    >>> completion_text([{"role": "assistant", "content": "<answer>3</answer>"}])
    '<answer>3</answer>'
"""

from __future__ import annotations

import re
from typing import Any, Mapping

__all__ = ["ANSWER_TAG", "collapse_whitespace", "completion_text", "extract_answer", "tagged"]

#: The tag a completion puts its final answer in (``<answer>...</answer>``); ``Answer: ...`` is also read.
ANSWER_TAG = "answer"

_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_LINE = re.compile(r"^[ \t*_#>-]*(?:final[ \t]+)?answer[*_]*[ \t]*:[*_]*[ \t]*\n?(```.*?```|[^\n]*)",
                   re.IGNORECASE | re.MULTILINE | re.DOTALL)
_SPACE = re.compile(r"\s+")
_FENCE = re.compile(r"```(?:[\w+-]*[ \t]*\n)?(.*?)```", re.DOTALL)
_TICKS = re.compile(r"`([^`]*)`")


def collapse_whitespace(text: str) -> str:
    """``text`` with each run of whitespace one space and the ends stripped.

    Example:
        >>> collapse_whitespace("  a \\t b\\n\\nc ")
        'a b c'
    """
    return _SPACE.sub(" ", text).strip()


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):  # multimodal parts: keep the text ones
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type", "text") == "text"]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def completion_text(completion: Any) -> str:
    """The text of a completion: a string as is; a conversational completion (a list of
    ``{"role", "content"}`` messages, or one message) by its last assistant message's content. Anything
    else (``None``, a number) reads as ``""``: a verifier never raises on a malformed completion.

    Example:
        >>> completion_text("<answer>4</answer>")
        '<answer>4</answer>'
        >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "I_WALK"}]}])
        'I_WALK'
        >>> completion_text(None)
        ''
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, (list, tuple)):
        messages = [m for m in completion if isinstance(m, Mapping)]
        if not messages:
            return ""
        assistant = [m for m in messages if m.get("role") == "assistant"]
        return _content_text((assistant or messages)[-1].get("content"))
    return ""


def extract_answer(completion: Any) -> str:
    """The final answer of a completion, whitespace collapsed (the module's steps 1-4).

    Example:
        >>> extract_answer("<ANSWER>1</ANSWER> no, <answer>2</answer>")
        '2'
        >>> extract_answer("The answer is 7")  # no tag: the whole text
        'The answer is 7'
        >>> extract_answer("<answer>```karel\\nDEF run m( move m)\\n```</answer>")
        'DEF run m( move m)'
        >>> extract_answer("")
        ''
    """
    text = completion_text(completion)
    found = _TAG.findall(text) or _LINE.findall(text)
    answer = (found[-1] if found else text).strip()
    fenced = _FENCE.fullmatch(answer) or _TICKS.fullmatch(answer)
    return collapse_whitespace(fenced.group(1) if fenced else answer)


def tagged(answer: str) -> str:
    """``answer`` in the final-answer tag: the completion form the default prompts ask for.

    Example:
        >>> tagged("I_WALK I_JUMP")
        '<answer>I_WALK I_JUMP</answer>'
    """
    return f"<{ANSWER_TAG}>{answer}</{ANSWER_TAG}>"
