"""An LLM judge's prompt and answer, as plain text: the template filled with the query, its
narrative and the passage; the template's hash (labels from different prompts are different
judges); and the grade read from an answer, or None when the answer is not a grade (recorded as
unparseable, never guessed)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection

ANSWER_RULE = "final-score answer rule 1"
"""The version of `parse_grade`, part of an LLM judge's identity: bump it whenever answers are
read otherwise (the same answers could give other grades), and have judge-llm read stored
answers again rather than restore their stored grades under the new version."""
FIELDS = ("query", "narrative", "passage")
"""The placeholders a template may use ({query}, {narrative}, {passage}); other braces are
literal text."""

_FINAL = re.compile(r"final\s*score\s*[:=]?\s*\**\s*(-?\d{1,6})(?!\d)", re.IGNORECASE)
_ONLY_NUMBER = re.compile(r"\s*\**\s*(-?\d{1,6})\s*\**\s*\.?\s*")


def template_problems(template: str) -> list[str]:
    """What makes a template unusable: it must show the judge the passage and the query."""
    missing = [f"{{{f}}}" for f in ("query", "passage") if f"{{{f}}}" not in template]
    return [f"the prompt template lacks {', '.join(missing)}"] if missing else []


def render_prompt(template: str, query: str, narrative: str, passage: str) -> str:
    """The template with its placeholders replaced (one pass: text from the data that looks
    like a placeholder stays as it is)."""
    values = {"query": query, "narrative": narrative or "(none given)", "passage": passage}
    return re.sub(r"\{(query|narrative|passage)\}", lambda m: values[m.group(1)], template)


def prompt_hash(template: str) -> str:
    """sha256 of the template's bytes (UTF-8), first 16 hex digits."""
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:16]


def parse_grade(answer: str, scale: Collection[int]) -> int | None:
    """The grade in an answer: the last '##final score: N', else an answer that is only a
    number; None when there is none or it is outside the scale."""
    finals = _FINAL.findall(answer)
    if finals:
        value = int(finals[-1])
    else:
        only = _ONLY_NUMBER.fullmatch(answer)
        if not only:
            return None
        value = int(only.group(1))
    return value if value in scale else None
