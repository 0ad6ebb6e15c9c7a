"""An LLM judge's prompt and answer, as plain text: the template filled with the query, its
narrative and the passage; the template's hash (labels from different prompts are different
judges); and the grade read from an answer, or None when the answer is not a grade (recorded as
unparseable, never guessed)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection

ANSWER_RULE = "final-score answer rule 2"
"""The version of `parse_grade`, part of an LLM judge's identity: bump it whenever answers are
read otherwise (the same answers could give other grades), and have judge-llm read stored
answers again rather than restore their stored grades under the new version."""
FIELDS = ("query", "narrative", "passage")
"""The placeholders a template may use ({query}, {narrative}, {passage}); other braces are
literal text."""
KEPT_CHARS = 2000
"""How much of an answer the store keeps (its head and its tail): a grade needs a few
characters, and a server that answers with megabytes must not fill the store."""

# Rule 2 (rule 1 took the last "final score N" anywhere, in any script's digits, so a passage
# the model quoted could give the grade): the model's own last line, ASCII digits only.
_FINAL = re.compile(r"[#*\s]*final\s*score\s*[:=]?\s*\**\s*(-?\d{1,6})[\s*]*\.?\s*", re.I | re.A)
_ONLY_NUMBER = re.compile(r"\s*\**\s*(-?\d{1,6})\s*\**\s*\.?\s*", re.ASCII)
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


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
    """The grade in an answer: its last non-empty line when that line is '##final score: N'
    (markup around it allowed), else the answer when it is only a number; ASCII digits only.
    None when there is none or it is outside the scale: never a guess."""
    lines = [line for line in answer.splitlines() if line.strip()]
    found = _FINAL.fullmatch(lines[-1]) if lines else None
    found = found or _ONLY_NUMBER.fullmatch(answer)
    if not found:
        return None
    value = int(found.group(1))
    return value if value in scale else None


def kept_answer(answer: str) -> str:
    """What the store keeps of an answer: at most KEPT_CHARS of it (the head, and the tail that
    holds the final line), with a lone surrogate or a NUL (which no store can hold) as U+FFFD."""
    answer = _UNSTORABLE.sub("\ufffd", answer)
    if len(answer) <= KEPT_CHARS:
        return answer
    head, tail = KEPT_CHARS * 3 // 4, KEPT_CHARS // 4
    left_out = len(answer) - head - tail
    return f"{answer[:head]}\n[... {left_out} characters left out ...]\n{answer[-tail:]}"
