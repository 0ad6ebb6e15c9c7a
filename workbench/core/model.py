"""The shared vocabulary: plain records named as ir_measures and ir_datasets name them."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from operator import itemgetter

Qrels = dict[str, dict[str, int]]
"""query_id -> doc_id -> grade. Grade 0 is judged non-relevant; an absent doc is unjudged."""

Ranking = list[str]
"""Doc ids in rank order (by `order_pairs`); duplicates are the audit's concern."""

Rankings = dict[str, Ranking]
"""query_id -> Ranking."""

DEFAULT_GRADE_SCALE: dict[int, str] = {
    0: "not relevant",
    1: "related",
    2: "relevant",
    3: "highly relevant",
}


def outside_scale(grades: Iterable[int | None], scale: Mapping[int, str]) -> list[int]:
    """The grades a scale does not hold (no grade, an undo, is never outside it): the one rule
    every grade passes, the app's key (`flows.judging_session`) and the store's writes alike."""
    return sorted({g for g in grades if g is not None and g not in scale})


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """Where a passage sits in its file: characters [start, end) of the file's text (as UTF-8,
    a leading byte-order mark not counted, line endings as written), so `text[start:end]` is
    the passage; `fence` is the opening line of a fenced code block the passage starts inside
    ('' when it starts outside one), so a reader can say the block was cut."""

    source: str
    start: int
    end: int
    fence: str = ""


@dataclass(frozen=True, slots=True)
class Doc:
    doc_id: str
    text: str
    title: str = ""
    span: SourceSpan | None = None
    """The file and offsets it is an exact span of (a text folder's passages); None otherwise."""
    headings: tuple[str, ...] = ()
    """The headings it sits under, outermost first (context, not part of the text)."""


@dataclass(frozen=True, slots=True)
class Query:
    query_id: str
    text: str
    narrative: str = ""
    """What counts as relevant for this query, shown to annotators."""


@dataclass(slots=True)
class Run:
    """One system's results: a name (the run tag or file) and a score per doc per query.

    Stored as plain dicts so that a 2-million-line run parses fast; `rankings()` applies the
    one ordering rule. `warnings` holds reader findings that do not change a figure (e.g. a
    rank column that disagrees with the scores)."""

    name: str
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def rankings(self) -> Rankings:
        return {qid: order_pairs(docs.items()) for qid, docs in self.scores.items()}


ORDERING_KEY = itemgetter(1, 0)
"""The one ordering rule, trec_eval's, as a sort key over (doc_id, score) pairs, used with
reverse=True: score descending, ties broken by doc id in descending string order."""


def order_pairs(pairs: Iterable[tuple[str, float]]) -> Ranking:
    """Doc ids of (doc_id, score) pairs in rank order, by the one ordering rule."""
    return [doc_id for doc_id, _ in sorted(pairs, key=ORDERING_KEY, reverse=True)]


class _Word(str, Enum):
    """A str enum that prints as its value (on every Python from 3.10)."""

    def __str__(self) -> str:
        return str(self.value)

    __format__ = str.__format__


class Role(_Word):
    """Who gave a judgment."""

    HUMAN = "human"
    ADJUDICATOR = "adjudicator"
    """A human whose grade settles a disagreement (`judge --adjudicate`)."""
    MODEL = "model"
    """A non-human judge (`import-labels`, `judge-model`): never part of an exported golden set."""
    ORACLE = "oracle"
    """`workbench simulate`: answers from existing qrels."""


HUMAN_ROLES = frozenset({Role.HUMAN, Role.ADJUDICATOR})
"""Roles of people: their grades make the golden set and the agreement figures."""


class Level(_Word):
    """How bad an audit problem is: an error fails `eval --strict` (some always fail)."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding of the audit: a query (None for the whole run), how bad, a stable code, a
    sentence; `run` names the run (or the two stages) in a report."""

    qid: str | None
    level: Level
    code: str
    message: str
    run: str | None = None


class Status(_Word):
    """A query's coverage status."""

    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    UNMEASURED = "unmeasured"
    STALE = "stale"


@dataclass(frozen=True, slots=True)
class Judgment:
    """One grade given by one annotator; the store keeps every row (append-only)."""

    annotator: str
    query_id: str
    doc_id: str
    grade: int | None
    """None records an undo: the pair returns to unjudged for this annotator."""
    note: str = ""
    shown_at: float = 0.0
    graded_at: float = 0.0
    elapsed_ms: int = 0
    app_version: str = ""
    role: str = Role.HUMAN
    """A `Role` (stored and compared as its text)."""
    judge_version: str = ""
    """A non-human judge's version (`workbench.core.judgments.judge_versions`); '' for people, and
    for
    labels written before versions were recorded."""


@dataclass(frozen=True, slots=True)
class Provenance:
    system: str
    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class PoolEntry:
    """One judging item: a passage for a query, who retrieved it, and its place in the queue."""

    query_id: str
    doc_id: str
    position: int
    fused_score: float = 0.0
    provenance: tuple[Provenance, ...] = ()
    aliases: tuple[str, ...] = ()
    """Other doc ids whose normalized text is identical; the grade applies to them too."""
    stratum: str = "pool"
    """'pool' for depth-k items; a sampling stratum name for items drawn from outside the pool."""
    inclusion_prob: float = 1.0


def normalize_passage(text: str) -> str:
    """Fold case, whitespace and punctuation so that re-ingested copies of a passage compare
    equal (used by pooling's dedup and the audit's content duplicates): NFC, casefold, then the
    runs of letters, digits and combining marks joined by one space. A regular expression, not a
    loop over characters: a million passages fold in seconds, not minutes."""
    if text.isascii():  # NFC changes nothing, casefold is lower()
        return " ".join(_ASCII_RUN.findall(text.lower()))
    return " ".join(_kept_runs().findall(unicodedata.normalize("NFC", text).casefold()))


_ASCII_RUN = re.compile("[a-z0-9]+")


@cache
def _kept_runs() -> re.Pattern[str]:
    """Runs of the characters `normalize_passage` keeps (`str.isalnum` or a combining mark),
    built on first use. `[^\\W_]` is `str.isalnum` (re's word characters are the alphanumerics
    and "_"); the marks are listed (`tokenize.mark_class`)."""
    from workbench.core.tokenize import mark_class

    return re.compile(f"(?:[^\\W_]|[{mark_class()}])+")


def passage_key(doc: Doc) -> str:
    """When two passages are identical: the same normalized title and text, i.e. what the
    annotator sees; '' (identical to nothing) when neither holds a letter or digit."""
    title, text = normalize_passage(doc.title), normalize_passage(doc.text)
    return f"{title}\n{text}" if title or text else ""
