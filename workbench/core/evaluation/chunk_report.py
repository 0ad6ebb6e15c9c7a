"""What `eval --chunks` adds to the report (pure): the mapping rule with its shares, how many
chunks it graded, and each run's text figures per query and their means. `ChunkingReport.
to_json` is its edge, the `"chunks"` object of `eval --json`:

{"rule": {"holds", "covers", "unjudged_max", "length", "words"}, "by_grade", "files": [{"file",
"chunks": N, "graded": pairs graded, "relevant_outside": share of the judged relevant text in no
chunk, "runs": [NAME, ...]}], "notes": [...], "runs": {NAME: {"per_query": {QID: {KEY: ..}},
"mean": {KEY: .., "queries": n}}}}, KEY as `text_measures` names them (`text_R@10`, `read@10`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from workbench.core.audit.judged_coverage import Coverage
from workbench.core.measures.chunking import (
    MappingRule,
    SpanIndex,
    judged_spans,
    overlap,
    text_length,
    union_length,
)
from workbench.core.measures.measure_view import RankingLike, top_k
from workbench.core.measures.text_measures import TextScale, text_keys, text_scores, text_view
from workbench.core.model import SourceSpan


@dataclass(frozen=True, slots=True)
class TextRun:
    """One run's text figures: per query, and their means over `queries` (None skipped)."""

    per_query: dict[str, dict[str, float | None]]
    mean: dict[str, float | None]
    queries: list[str]


@dataclass(frozen=True, slots=True)
class ChunkFile:
    """One chunking: its file, how many chunks, how many (query, chunk) pairs the rule graded,
    the share of the judged relevant text no chunk holds (None: no relevant text; above 0 caps
    every text recall of its runs below 1), and the runs over it."""

    file: str
    chunks: int
    graded: int
    relevant_outside: float | None
    runs: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "chunks": self.chunks, "graded": self.graded,
                "relevant_outside": self.relevant_outside, "runs": list(self.runs)}  # fmt: skip


@dataclass(frozen=True)
class ChunkingReport:
    """Runs over chunkings of the judged files, scored against the judged passages."""

    rule: MappingRule
    by_grade: bool
    keys: list[str]
    files: list[ChunkFile]
    runs: dict[str, TextRun] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule.to_json(),
            "by_grade": self.by_grade,
            "files": [f.to_json() for f in self.files],
            "notes": list(self.notes),
            "runs": {
                name: {
                    "per_query": run.per_query,
                    "mean": {**run.mean, "queries": len(run.queries)},
                }
                for name, run in self.runs.items()
            },
        }

    def merged(self, other: ChunkingReport) -> ChunkingReport:
        """This report and `other` (runs over another chunking) as one."""
        notes = self.notes + [n for n in other.notes if n not in self.notes]
        keys = self.keys + [k for k in other.keys if k not in self.keys]
        return ChunkingReport(self.rule, self.by_grade, keys, self.files + other.files,
                              {**self.runs, **other.runs}, notes)  # fmt: skip


def text_scales(coverage: Coverage | None) -> dict[str, TextScale]:
    """Per measured query with judged relevant passages: est |Rel| / judged relevant, and its
    interval's ends, each at least 1 (|Rel| is never below what was judged relevant)."""
    scales: dict[str, TextScale] = {}
    for qid, info in (coverage.queries if coverage else {}).items():
        judged = info.judged_relevant
        if not info.measured or judged <= 0 or info.est_rel_low is None:
            continue
        assert info.est_rel_high is not None
        est = info.est_rel if info.est_rel is not None else info.est_rel_low
        low = max(info.est_rel_low, judged) / judged
        high = max(info.est_rel_high, info.est_rel_low, judged) / judged
        scales[qid] = TextScale(max(est, judged) / judged, low, high)
    return scales


def text_runs(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, RankingLike]],
    ks: Sequence[int],
    chunks: Mapping[str, SourceSpan],
    spans: Mapping[str, SourceSpan],
    texts: Mapping[str, str],
    *,
    rel_threshold: int = 1,
    by_grade: bool = False,
    aliases: Mapping[str, str] | None = None,
    scales: Mapping[str, TextScale] | None = None,
) -> dict[str, TextRun]:
    """Each run's text figures. A query with judged relevant text is in the means (absent from
    a run: nothing covered, nothing read); a ranked query without any is a row only."""
    deepest = max(ks)
    judged = {q: judged_spans(j, spans, aliases) for q, j in qrels.items()}
    in_mean = [q for q, j in judged.items() if any(g >= rel_threshold for g in j.grades.values())]
    keys = text_keys(ks, bool(scales))
    out: dict[str, TextRun] = {}
    for name, rankings in runs.items():
        per_query: dict[str, dict[str, float | None]] = {}
        for qid, found in judged.items():
            if qid not in rankings and qid not in in_mean or not found.grades:
                continue
            top = top_k(rankings.get(qid, ()), deepest)
            view = text_view(top, chunks, found, texts, rel_threshold, by_grade,
                             (scales or {}).get(qid))  # fmt: skip
            scores = text_scores(view, ks)
            per_query[qid] = {key: scores[key] for key in keys}
        mean = {}
        for key in keys:
            values = [per_query[q][key] for q in in_mean if per_query[q][key] is not None]
            mean[key] = sum(values) / len(values) if values else None  # type: ignore[arg-type]
        out[name] = TextRun(per_query, mean, in_mean)
    return out


def relevant_outside(
    qrels: Mapping[str, Mapping[str, int]],
    chunks: Mapping[str, SourceSpan],
    spans: Mapping[str, SourceSpan],
    texts: Mapping[str, str],
    rel_threshold: int = 1,
) -> float | None:
    """Share of the judged relevant text (each relevant passage once) that no chunk holds: a
    chunking that leaves text out caps every run's text recall below 1."""
    index = SpanIndex(chunks.items())
    relevant = {
        d for j in qrels.values() for d, g in j.items() if g >= rel_threshold and d in spans
    }
    total = outside = 0
    for passage_id in sorted(relevant):
        span = spans[passage_id]
        text = texts[span.source]
        length = text_length(text, span.start, span.end)
        pieces = [overlap(span, chunks[c]) for c in index.overlapping(span)]
        held = union_length([p for p in pieces if p is not None], text)
        total += length
        outside += max(length - held, 0)
    return outside / total if total else None
