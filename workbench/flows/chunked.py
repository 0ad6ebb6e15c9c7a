"""`eval/compare --chunks FILE`: a run over its own chunking of the judged files, scored against
the judged passages. The passages' spans come from where the judgments are: a store keeps each
pooled passage's file and offsets (checked against the folder: a file edited since pooling is
refused); a golden.yaml or TREC qrels do not, so the folder is cut again by the rule the
golden.yaml recorded (or `--passages`, for qrels). Either way the corpus folder (`--corpus`) is
needed: the chunks' offsets point into its files. The judged set becomes chunk grades
(`core.chunking`), its coverage estimate carries over, and the text figures are computed
(`core.chunk_report`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.errors import InputError
from workbench.core.measures.chunking import RULE, Chunk, chunk_qrels

if TYPE_CHECKING:
    from workbench.core.audit.judged_coverage import Coverage
    from workbench.core.evaluation.chunk_report import ChunkingReport
    from workbench.core.evaluation.eval_report import EvalReport
    from workbench.core.measures.measure_view import RankingLike
    from workbench.core.model import SourceSpan
    from workbench.flows.evaluation import EvalRequest
    from workbench.flows.judged import Judgments
    from workbench.flows.runs import RunsRead, Stages
    from workbench.formats.passages import PassageRule

STUDY_NOTE = (
    "the study intervals (joint draws over the pooled passages) are not carried to another "
    "chunking; R@k's interval under the estimated |Rel| is"
)


@dataclass(frozen=True)
class Chunked:
    """The judged set as grades of the chunks, and what the text figures are computed from."""

    qrels: dict[str, dict[str, int]]
    aliases: dict[str, str]
    coverage: Coverage | None
    chunks: dict[str, SourceSpan]
    normalized: dict[str, str]
    """Chunk id -> normalized text: the audit's content duplicates."""
    spans: dict[str, SourceSpan]
    """Each judged passage (and copy) -> its span."""
    texts: dict[str, str]
    file: str


def chunked_judgments(
    judged: Judgments,
    qrels_source: str,
    chunks_file: str,
    corpus: str | None,
    asked_rule: PassageRule | None = None,
    rel_threshold: int = 1,
) -> Chunked:
    """The chunks of `chunks_file` graded from `judged` (read from `qrels_source`). InputError
    naming what is missing or wrong: no corpus folder, passages that are not exact spans, a
    file edited since pooling, a bad line of the chunks file."""
    from workbench.formats.chunks import read_chunks
    from workbench.formats.textfolder import folder_texts

    if not corpus or not Path(corpus).is_dir():
        given = f" ({corpus} is not a folder)" if corpus else ""
        raise InputError([f"--chunks {chunks_file}: give --corpus FOLDER{given}, the text folder "
                          "the chunks cut: their offsets point into its files, and the judged "
                          "passages are placed in them"])  # fmt: skip
    assert judged.qrels is not None
    texts, titles = folder_texts(corpus)
    spans = judged_passage_spans(judged, qrels_source, corpus, texts, asked_rule)
    chunks = read_chunks(chunks_file, texts, corpus)
    twins = _chunk_twins(chunks, texts, titles) if judged.aliases else {}
    by_id = {c.chunk_id: c.span for c in chunks}
    grades = chunk_qrels(chunks, judged.qrels, spans, texts, rel_threshold=rel_threshold,
                         aliases=judged.aliases, chunk_twins=twins)  # fmt: skip
    coverage = chunk_coverage(judged.coverage, grades, twins, rel_threshold)
    from workbench.core.audit.audit import normalized_passages

    normalized = normalized_passages(
        {c.chunk_id: texts[c.span.source][c.span.start : c.span.end] for c in chunks}
    )
    return Chunked(grades, twins, coverage, by_id, normalized, spans, texts, chunks_file)


def judged_passage_spans(
    judged: Judgments,
    qrels_source: str,
    corpus: str,
    texts: Mapping[str, str],
    asked_rule: PassageRule | None,
) -> dict[str, SourceSpan]:
    """Each judged passage (and each copy of one) -> its span: a store's, checked against the
    folder's files; else the folder cut again as the judgments were pooled."""
    from workbench.flows.judged import recorded_rule
    from workbench.formats.passages import chosen_rule
    from workbench.formats.store_file import is_store

    assert judged.qrels is not None
    wanted = {d for grades in judged.qrels.values() for d, g in grades.items() if g >= 0}
    wanted |= {a for a, c in judged.aliases.items() if c in wanted}
    if is_store(qrels_source):
        return _store_spans(qrels_source, sorted(wanted), corpus, texts)
    rule = chosen_rule(corpus, asked_rule, recorded_rule(qrels_source), qrels_source)
    if rule is None or rule.kind != "blocks":
        raise InputError([_not_spans(qrels_source, str(rule))])
    from workbench.formats.textfolder import read_text_folder

    spans = {d.doc_id: d.span for d in read_text_folder(corpus, rule) if d.span is not None}
    missing = sorted(wanted - spans.keys())
    if missing:
        raise InputError([
            f"{qrels_source}: {len(missing):,} judged passage(s) (first {missing[0]}) are not "
            f"passages of {corpus} cut as {rule}: is it the folder that was pooled, unedited "
            "(or, for TREC qrels, give the --passages it was pooled with)?"
        ])  # fmt: skip
    return spans


def _not_spans(source: str, rule: str) -> str:
    return (
        f"--chunks: the judged passages of {source} were cut as {rule}, which are not exact "
        "spans of their files, so no chunk can be placed against them (pool the folder with "
        "the default --passages blocks)"
    )


def _store_spans(
    location: str, wanted: Sequence[str], corpus: str, texts: Mapping[str, str]
) -> dict[str, SourceSpan]:
    """The store's span of each passage of `wanted`, each checked to still read as pooled."""
    from workbench.formats.passages import recorded_rule
    from workbench.store import open_store

    with open_store(location, read_only=True) as store:
        docs = store.docs(wanted)
        rule = str(recorded_rule(store.poolings(), location) or "a rule that records no spans")
    unplaced = [d for d in wanted if d not in docs or docs[d].span is None]
    if unplaced:
        raise InputError([_not_spans(location, rule)
                          + f" ({len(unplaced):,} judged passages record no span, first "
                          f"{unplaced[0]})"])  # fmt: skip
    changed = []
    for doc_id in wanted:
        span = docs[doc_id].span
        assert span is not None
        text = texts.get(span.source)
        if text is None or text[span.start : span.end] != docs[doc_id].text:
            changed.append(f"{Path(corpus) / span.source}: passage {doc_id} (characters "
                           f"{span.start}-{span.end}) does not read as it was judged: the file "
                           f"was edited or removed since {location} was pooled")  # fmt: skip
    if changed:
        raise InputError(
            changed[:10] + ([f"... and {len(changed) - 10} more"] if len(changed) > 10 else [])
        )
    return {d: docs[d].span for d in wanted}  # type: ignore[misc]


def _chunk_twins(
    chunks: Sequence[Chunk], texts: Mapping[str, str], titles: Mapping[str, str]
) -> dict[str, str]:
    """Chunk -> the first identical chunk (same normalized title and text, as pooling folds
    identical passages), for chunks that have one."""
    from workbench.core.model import Doc, passage_key
    from workbench.core.pool.pooling import twin_groups

    keys = {
        c.chunk_id: passage_key(
            Doc(c.chunk_id, texts[c.span.source][c.span.start : c.span.end], titles[c.span.source])
        )  # fmt: skip
        for c in chunks
    }
    return {d: group[0] for d, group in twin_groups(keys).items() if group[0] != d}


def chunk_coverage(
    coverage: Coverage | None,
    grades: Mapping[str, Mapping[str, int]],
    twins: Mapping[str, str],
    rel_threshold: int,
) -> Coverage | None:
    """The coverage estimate in chunks: each query's estimated |Rel| (and its interval) scaled
    by relevant chunks / judged relevant passages, as the text figures scale the relevant text;
    no study draws (they are of the pooled passages)."""
    if coverage is None:
        return None
    queries = {}
    for qid, info in coverage.queries.items():
        relevant = sum(1 for g in grades.get(qid, {}).values() if g >= rel_threshold)
        factor = relevant / info.judged_relevant if info.judged_relevant else 1.0
        queries[qid] = replace(
            info, judged_relevant=relevant, est_rel=_times(info.est_rel, factor),
            est_rel_low=_times(info.est_rel_low, factor),
            est_rel_high=_times(info.est_rel_high, factor),
        )  # fmt: skip
    judged = {q: dict(g) for q, g in grades.items()}
    return replace(coverage, queries=queries, judged=judged, aliases=dict(twins), study=None)


def _times(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def unknown_chunk_problems(
    runs: Mapping[str, Mapping[str, RankingLike]], chunked: Chunked
) -> list[str]:
    """A run that ranks an id that is not a chunk of the file: its text cannot be read."""
    problems = []
    for name, rankings in runs.items():
        unknown = [(q, d) for q, r in rankings.items() for d in r if d not in chunked.chunks]
        if unknown:
            qid, doc = unknown[0]
            problems.append(f"run {name}: {len(unknown):,} ranked id(s) are not chunks of "
                            f"{chunked.file} (first {doc}, query {qid}): a run scored with "
                            "--chunks ranks the chunks that file lists")  # fmt: skip
    return problems


def chunking_report(
    chunked: Chunked,
    judged: Judgments,
    runs: Mapping[str, Mapping[str, RankingLike]],
    ks: Sequence[int],
    rel_threshold: int,
    by_grade: bool,
) -> ChunkingReport:
    """The text figures of the runs over one chunking, and what the mapping did."""
    from workbench.core.evaluation.chunk_report import (
        ChunkFile,
        ChunkingReport,
        relevant_outside,
        text_runs,
        text_scales,
    )
    from workbench.core.measures.text_measures import text_keys

    assert judged.qrels is not None
    scales = text_scales(judged.coverage)
    texts = text_runs(judged.qrels, runs, ks, chunked.chunks, chunked.spans, chunked.texts,
                      rel_threshold=rel_threshold, by_grade=by_grade, aliases=judged.aliases,
                      scales=scales)  # fmt: skip
    outside = relevant_outside(judged.qrels, chunked.chunks, chunked.spans, chunked.texts,
                               rel_threshold)  # fmt: skip
    notes = [STUDY_NOTE] if judged.coverage is not None and judged.coverage.study else []
    graded = sum(len(g) for g in chunked.qrels.values())
    file = ChunkFile(chunked.file, len(chunked.chunks), graded, outside, tuple(runs))
    return ChunkingReport(RULE, by_grade, text_keys(ks, bool(scales)), [file], texts, notes)


def evaluate_chunked(
    request: EvalRequest, judged: Judgments | None = None, runs: RunsRead | None = None
) -> EvalReport:
    """`evaluate_request` for runs over chunks (`request.chunks`: one file for every run, or
    one per run in order): each chunking's runs against its chunk grades, the audit over its
    chunks as the corpus, and the text figures; one report. `judged`: the judgments at
    `request.qrels`, and `runs` the runs, when already read (the Python API's)."""
    from workbench.flows.judged import read_judgments
    from workbench.flows.runs import read_runs, read_stages

    if judged is None:
        judged = read_judgments(request.qrels, rel_threshold=request.rel_threshold,
                                gain=request.gain, complete_at=request.complete_at)  # fmt: skip
    files = request.chunks
    assert files
    problems = list(judged.problems)
    read = runs or read_runs(request.runs or [request.stage2 or ""])
    if len(files) not in (1, len(read.runs)):
        problems.append(f"--chunks: give one file for every run, or one per --run in order "
                        f"({len(files)} given for {len(read.runs)} runs)")  # fmt: skip
    if request.stage1 and len(set(files)) > 1:
        problems.append("--chunks: --stage1/--stage2 take one chunks file for every run")
    stages = read_stages(request.stage1, request.stage2)
    problems += [*read.problems, *stages.problems]
    if problems or judged.qrels is None:
        raise InputError(problems)
    of_run = dict(zip(read.runs, files * len(read.runs) if len(files) == 1 else files,
                      strict=False))  # fmt: skip
    report = None
    for file in dict.fromkeys(of_run.values()):
        runs = {name: scores for name, scores in read.runs.items() if of_run[name] == file}
        part = _one_chunking(request, judged, file, runs, read.warnings, stages)
        report = part if report is None else _merged(report, part)
    assert report is not None
    from workbench.core.evaluation.eval_report import with_floors

    return with_floors(report, request.floors) if request.floors else report


def _one_chunking(
    request: EvalRequest,
    judged: Judgments,
    file: str,
    runs: Mapping[str, Mapping[str, RankingLike]],
    warnings: Mapping[str, list[str]],
    stages: Stages,
) -> EvalReport:
    from workbench.core.evaluation.eval_report import eval_report

    chunked = chunked_judgments(judged, request.qrels, file, request.corpus,
                                request.passages, request.rel_threshold)  # fmt: skip
    every = {**runs, **dict(zip(stages.names, stages.scores or (), strict=False))}
    problems = unknown_chunk_problems(every, chunked)
    if problems:
        raise InputError(problems)
    report = eval_report(
        chunked.qrels, runs, request.ks, rel_threshold=request.rel_threshold,
        gain=request.gain, corpus_size=len(chunked.chunks), passages=chunked.normalized,
        stages=stages.scores, stage_names=stages.names, fetch_k=request.fetch_k,
        run_warnings=warnings, coverage=chunked.coverage, strict=request.strict,
        aliases=chunked.aliases, judges=judged.judges, assume_complete=request.assume_complete,
    )  # fmt: skip
    texts = chunking_report(chunked, judged, runs, request.ks, request.rel_threshold,
                            request.text_by_grade)  # fmt: skip
    return replace(report, chunking=texts)


def _merged(first: EvalReport, second: EvalReport) -> EvalReport:
    """Two chunkings' reports as one: the runs of both, each run's problems, the judged set's
    once."""
    assert first.chunking is not None and second.chunking is not None
    problems = first.problems + [
        p for p in second.problems if p.run is not None or p not in first.problems
    ]
    return replace(first, runs={**first.runs, **second.runs}, problems=problems,
                   chunking=first.chunking.merged(second.chunking))  # fmt: skip


def with_text_values(report: EvalReport) -> EvalReport:
    """Each run's per-query figures with its text figures beside them, under their keys
    (`text_R@10`), so that `compare` pairs them as it pairs any measure."""
    from workbench.core.measures.metrics import QueryScores

    if report.chunking is None:
        return report
    runs = {}
    for name, run in report.runs.items():
        texts = report.chunking.runs[name].per_query
        rows = {
            qid: QueryScores({**scores.values, **texts.get(qid, {})}, scores.rel)
            for qid, scores in run.per_query.items()
        }
        runs[name] = replace(run, per_query=rows)
    return replace(report, runs=runs)
