"""`workbench report`: one page for the people who read a judging round. The study (queries,
pool, annotators), then coverage, then each run's metrics with the recall interval and the
audit, then agreement when annotators overlap: the blocks each command's own report builds,
one heading level down."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from workbench.core.agreement.activity import AnnotatorActivity
from workbench.core.agreement.agreement import AgreementReport
from workbench.core.coverage import CoverageReport
from workbench.core.evaluation.eval_report import EvalReport
from workbench.reports.activity import activity_blocks
from workbench.reports.agreement import agreement_blocks
from workbench.reports.coverage import coverage_document
from workbench.reports.document import Block, Bullets, Document, Heading, Paragraph
from workbench.reports.evaluation import eval_document

if TYPE_CHECKING:
    from workbench.core.adaptive.saving import JudgeSaving


@dataclass(frozen=True, slots=True)
class Study:
    """What the report says about the round itself."""

    name: str
    queries: int
    pooled: int
    judged: int
    annotators: Mapping[str, str]
    """name -> role"""
    pooling: Mapping[str, object] | None
    """The latest pooling: systems, depth, strategy, params."""
    corpus_size: int
    labelled: int = 0
    """Items a model judge labelled (not counted in `judged`: people's judgments)."""
    adaptive: bool = False
    """Pooled for the adaptive queue: `pooled` counts its frames (every query's candidates and
    reserve, up to the whole corpus per query), not items queued for judging."""


def nested(blocks: Sequence[Block], by: int = 1) -> list[Block]:
    """`blocks` with every heading `by` levels deeper, to sit inside a section."""
    return [replace(b, level=b.level + by) if isinstance(b, Heading) else b for b in blocks]


def study_lines(study: Study) -> list[str]:
    people = ", ".join(f"{name} ({role})" for name, role in sorted(study.annotators.items()))
    by_model = f" ({study.labelled} labelled by a model judge)" if study.labelled else ""
    if study.adaptive:  # its frames are what the queue may serve, not a queue to judge through
        judged = (
            f"{study.queries} queries; {study.judged} judged{by_model} by the adaptive queue, "
            "which serves each query what it needs"
        )
    else:
        judged = (
            f"{study.queries} queries; {study.pooled} items in the judging queue, "
            f"{study.judged} of them judged{by_model}"
        )
    lines = [
        f"{judged}; corpus of {study.corpus_size} passages",
        f"annotators: {people or 'none yet'}",
    ]
    if study.pooling:
        pool = study.pooling
        systems = ", ".join(map(str, pool.get("systems") or [])) or "none"
        params = pool.get("params") if isinstance(pool.get("params"), Mapping) else {}
        sample = params.get("sample") if isinstance(params, Mapping) else None
        lines.append(
            f"pool: {systems} at depth {pool.get('depth')}, queue order {pool.get('strategy')}"
            + (f", {sample} outside-pool samples per query" if sample else "")
        )
    return lines


def study_document(
    study: Study,
    coverage: CoverageReport,
    evaluation: EvalReport | None,
    agreement: AgreementReport | None,
    judge: JudgeSaving | None = None,
    people: Sequence[AnnotatorActivity] = (),
) -> Document:
    """The page: the study, coverage (with the judge stored with the study and what it saved),
    metrics per run (each with its study line on an adaptive store), agreement (when there is
    overlap)."""
    document = Document(
        f"Judging round {study.name}",
        subtitle="How complete the judged relevant set is, what the runs score against it, "
        "and how far the annotators agree.",
    )
    document.add(Heading("The study"), Bullets(study_lines(study)))
    if people:
        document.add(*activity_blocks(people))
    covered = coverage_document(coverage, judge=judge)
    document.add(Heading("Coverage"), Paragraph(covered.subtitle), *nested(covered.blocks))
    if evaluation is None:
        document.add(
            Heading("Metrics"),
            Paragraph("No run given: add --run RUN to score systems against this round.", "note"),
        )
    else:
        scored = eval_document(evaluation)
        document.add(Heading("Metrics per run"), Paragraph(scored.subtitle), *nested(scored.blocks))
    if agreement is not None and agreement.has_overlap:
        document.add(Heading("Agreement"), *agreement_blocks(agreement, level=3))
    return document
