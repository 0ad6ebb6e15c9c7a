"""The shared vocabulary: plain records named as ir_measures and ir_datasets name them."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Qrels = dict[str, dict[str, int]]
"""query_id -> doc_id -> grade. Grade 0 is judged non-relevant; an absent doc is unjudged."""

Ranking = list[str]
"""Doc ids in rank order (ordered by `order_ranking`); duplicates are the audit's concern."""

Rankings = dict[str, Ranking]
"""query_id -> Ranking."""

DEFAULT_GRADE_SCALE: dict[int, str] = {
    0: "not relevant",
    1: "related",
    2: "relevant",
    3: "highly relevant",
}


@dataclass(frozen=True, slots=True)
class Doc:
    doc_id: str
    text: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class Query:
    query_id: str
    text: str
    narrative: str = ""
    """What counts as relevant for this query, shown to annotators."""


@dataclass(frozen=True, slots=True)
class Qrel:
    query_id: str
    doc_id: str
    relevance: int
    iteration: str = "0"


@dataclass(frozen=True, slots=True)
class ScoredDoc:
    query_id: str
    doc_id: str
    score: float
    rank: int = 0
    """Informational only: order comes from the score (see `order_ranking`)."""


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

    def records(self) -> list[ScoredDoc]:
        out: list[ScoredDoc] = []
        for qid, ranking in self.rankings().items():
            docs = self.scores[qid]
            out.extend(ScoredDoc(qid, d, docs[d], i + 1) for i, d in enumerate(ranking))
        return out


def ranking_key(doc: ScoredDoc) -> tuple[float, str]:
    return (doc.score, doc.doc_id)


def order_ranking(docs: Iterable[ScoredDoc]) -> Ranking:
    """trec_eval's rule: score descending, ties by doc_id in descending string order."""
    return [d.doc_id for d in sorted(docs, key=ranking_key, reverse=True)]


def order_pairs(pairs: Iterable[tuple[str, float]]) -> Ranking:
    """`order_ranking` for (doc_id, score) pairs, as retrievers produce them."""
    return [doc_id for doc_id, _ in sorted(pairs, key=lambda p: (p[1], p[0]), reverse=True)]


def qrels_from_records(records: Iterable[Qrel]) -> Qrels:
    qrels: Qrels = {}
    for r in records:
        qrels.setdefault(r.query_id, {})[r.doc_id] = r.relevance
    return qrels


def relevant_set(judged: Mapping[str, int], rel_threshold: int = 1) -> set[str]:
    return {doc_id for doc_id, grade in judged.items() if grade >= rel_threshold}


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
    role: str = "human"
    """human | adjudicator | model | oracle (`workbench simulate`)"""


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
    equal (used by pooling's dedup and the audit's content duplicates)."""
    folded = "".join(
        ch if ch.isalnum() or unicodedata.category(ch)[0] == "M" else " "
        for ch in unicodedata.normalize("NFC", text).casefold()
    )
    return " ".join(folded.split())


def passage_key(doc: Doc) -> str:
    """When two passages are identical: the same normalized title and text, i.e. what the
    annotator sees; '' (identical to nothing) when neither holds a letter or digit."""
    title, text = normalize_passage(doc.title), normalize_passage(doc.text)
    return f"{title}\n{text}" if title or text else ""
