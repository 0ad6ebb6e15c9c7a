"""`workbench eval`'s use case: score run files against a study's judgments, with the audit
beside the figures (the corpus, when given, for label coverage and content duplicates; the
coverage gate when the judgments carry an estimate of |Rel|)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.evaluation.eval_report import EvalReport
    from workbench.flows.runs import Scores
    from workbench.formats.passages import PassageRule


@dataclass(frozen=True)
class EvalRequest:
    """What to score: `qrels` (a store, a golden.yaml or TREC qrels) and the run files, at the
    cutoffs `ks`; `corpus` (a JSONL file or a folder cut by `passages`, or as the judgments
    were pooled) for the corpus audit; `stage1`/`stage2` for the two-stage audit."""

    qrels: str
    runs: list[str]
    ks: list[int]
    rel_threshold: int | None = 1
    """None: the study's own (a store's, read with its judgments), else 1."""
    gain: str = "linear"
    complete_at: float | None = None
    corpus: str | None = None
    passages: PassageRule | None = None
    stage1: str | None = None
    stage2: str | None = None
    fetch_k: int | None = None
    strict: bool = False
    floors: dict[str, float] = field(default_factory=dict)
    assume_complete: bool = False
    """The user states the judgments are complete (they carry no completeness measure)."""
    chunks: list[str] = field(default_factory=list)
    """The runs rank chunks of these JSONL files (one for all, or one per run in order), cut
    from the folder `corpus`: `flows.chunked.evaluate_chunked` scores them."""
    text_by_grade: bool = False
    """With `chunks`: relevant text weighted by its passage's grade in text recall."""


def evaluate_request(request: EvalRequest) -> EvalReport:
    """The report `workbench eval` renders. Raises InputError naming every problem found in
    the judgments, the runs, the stages and the corpus together."""
    from workbench.core.errors import InputError
    from workbench.core.evaluation.eval_report import eval_report, with_floors
    from workbench.flows.judged import read_judgments
    from workbench.flows.runs import read_runs, read_stages

    judged = read_judgments(
        request.qrels,
        rel_threshold=request.rel_threshold,
        gain=request.gain,
        complete_at=request.complete_at,
    )
    problems = list(judged.problems)
    qrels, aliases, coverage = judged.qrels, judged.aliases, judged.coverage
    # Scored column-wise (no per-line objects) unless a step needs every doc of a ranking.
    whole = bool(request.corpus or aliases or coverage is not None or request.stage1)
    reduce_with = None if whole or qrels is None else (qrels, max(request.ks))
    read = read_runs(request.runs or [request.stage2 or ""], reduce_with)
    problems += read.problems
    stages = read_stages(request.stage1, request.stage2)
    problems += stages.problems
    rule = None
    if request.corpus:
        rule, rule_problems = _corpus_rule(request)
        problems += rule_problems
    corpus = _corpus(request.corpus, read.runs, read.warnings, aliases, rule)
    problems += corpus.problems
    if problems or qrels is None:
        raise InputError(problems)
    report = eval_report(
        qrels,
        read.runs,
        request.ks,
        rel_threshold=judged.rel_threshold,
        gain=request.gain,
        corpus_size=corpus.size,
        passages=corpus.passages,
        stages=stages.scores,
        stage_names=stages.names,
        fetch_k=request.fetch_k,
        run_warnings=read.warnings,
        coverage=coverage,
        strict=request.strict,
        aliases=aliases,
        judges=judged.judges,
        assume_complete=request.assume_complete,
    )
    return with_floors(report, request.floors) if request.floors else report


def alias_passages(aliases: Mapping[str, str]) -> dict[str, str] | None:
    """Without a corpus, a judged set's aliases stand in for the passages' texts (an alias and
    its canonical id share one 'text'), so the audit finds content duplicates from them: what
    `eval` and `compare` both audit with."""
    return {**{c: c for c in aliases.values()}, **aliases} if aliases else None


@dataclass(frozen=True)
class _Corpus:
    size: int | None
    passages: dict[str, str] | None
    problems: tuple[str, ...] = ()


def _corpus(
    path: str | None,
    runs: Mapping[str, Scores],
    warnings: dict[str, list[str]],
    aliases: Mapping[str, str],
    rule: PassageRule | None = None,
) -> _Corpus:
    """The corpus size and doc id -> normalized text of `path` (a folder cut by `rule`), for
    label coverage and content duplicates; without it, a golden set's aliases stand in for the
    texts. A run none of whose ids is in the corpus gets a warning in `warnings`."""
    from workbench.core.audit.audit import normalized_passages
    from workbench.core.errors import InputError
    from workbench.formats import read_corpus_any

    if not path:
        return _Corpus(None, alias_passages(aliases))
    try:
        docs = read_corpus_any(path, rule)
    except InputError as exc:
        return _Corpus(None, None, tuple(exc.problems))
    passages = normalized_passages({d.doc_id: d.text for d in docs})
    cut = f" (cut as {rule}: --passages)" if rule is not None else ""
    for name, scores in runs.items():
        if scores and not any(d in passages for ranked in scores.values() for d in ranked):
            warnings[name].append(
                f"none of its doc ids is in the corpus {path}{cut}: is it the right "
                "corpus? (content duplicates cannot be found, label coverage is off)"
            )
        elif rule is not None:  # a folder cut another way than the run's: ids that name others
            missing = sorted({d for ranked in scores.values() for d in ranked} - passages.keys())
            if missing:
                from workbench.core.display import visible

                warnings[name].append(
                    f"{len(missing):,} of its doc ids (first {visible(missing[0], one_line=True)})"
                    f" are not passages of the corpus {path}{cut}: was it pooled with other "
                    "--passages, --passage-words or --passage-rows?"
                )
    return _Corpus(len(docs), passages)


def _corpus_rule(request: EvalRequest) -> tuple[PassageRule | None, list[str]]:
    """How to cut a folder corpus into passages (`formats.passages.chosen_rule`): as the store
    or golden.yaml given as qrels was pooled, else the asked rule, else the default."""
    from workbench.core.errors import InputError
    from workbench.flows.judged import recorded_rule
    from workbench.formats.passages import chosen_rule

    assert request.corpus is not None
    try:
        recorded = recorded_rule(request.qrels) if Path(request.corpus).is_dir() else None
        return chosen_rule(request.corpus, request.passages, recorded, request.qrels), []
    except InputError as exc:
        return None, list(exc.problems)
