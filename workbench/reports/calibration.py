"""`workbench judge-model`'s report as a `Document`: how the pool was scored, the fitted score
cuts, the judge's agreement held out and in-sample, the verdict, and what was stored."""

from __future__ import annotations

from workbench.core.agreement.kappa import PairAgreement
from workbench.core.judges.calibration import CalibrationReport, grade_ranges
from workbench.core.judges.judge_model_report import JudgeModelReport, LabelSource
from workbench.core.judgments.labels import ROLE
from workbench.reports.agreement import FIGURE_NAMES, figures_table
from workbench.reports.document import (
    Block,
    Cell,
    Column,
    Document,
    Paragraph,
    Styled,
    Table,
    figure,
)

CUT_DIGITS = 4


def source_text(source: LabelSource) -> str:
    """Where the fitting labels came from, in a phrase."""
    if source.role is None:
        return f"resolved human grades, {source.unresolved} unresolved left out"
    return f"annotator '{source.fit_on}'"


def cuts_table(report: JudgeModelReport) -> Table:
    """Each grade's score interval and how many pooled items it was given."""
    rows: list[list[Cell]] = []
    for span in grade_ranges(report.calibration.score_cuts):
        if span.empty:
            rows.append([span.grade, Styled("never given (empty score interval)", "muted"), 0])
            continue
        low = "-inf" if span.low is None else figure(span.low, CUT_DIGITS)
        high = "+inf" if span.high is None else figure(span.high, CUT_DIGITS)
        rows.append([span.grade, f"[{low}, {high})", report.model_grades.get(span.grade, 0)])
    return Table(
        columns=(
            Column("grade", align="left"),
            Column("score interval", align="left"),
            Column("pooled items", help="pooled items given this grade"),
        ),
        rows=rows,
        title="ScoreCuts (score -> grade)",
    )


def verdict(calibration: CalibrationReport) -> Paragraph:
    """Whether the judge meets the bar on the figures that decide."""
    decisive, bar, on = calibration.decisive, calibration.bar, calibration.judged_on
    below = [FIGURE_NAMES[name] for name in decisive.below_bar]
    if decisive.meets_bar and not below:
        return Paragraph(f"Meets the bar: kappa >= {bar} on the {on} labels.")
    if decisive.meets_bar:
        return Paragraph(f"Meets the bar on kappa >= {bar} ({on}), below it on {', '.join(below)}.")
    if decisive.kappa.kappa is None:
        why = decisive.reasons.get("kappa", "undefined")
        return Paragraph(f"No verdict: no kappa on the {on} labels ({why}).", "warning")
    return Paragraph(
        f"BELOW the bar kappa >= {bar} on the {on} labels: {', '.join(below)}.", "warning"
    )


def calibration_blocks(report: JudgeModelReport) -> list[Block]:
    calibration = report.calibration
    split = calibration.split
    rows: list[tuple[str, PairAgreement]] = []
    if calibration.held_out is not None:
        rows.append(("held-out (these decide)", calibration.held_out))
    rows.append(("in-sample, the fitting labels (flatters the judge)", calibration.train))
    return [
        Paragraph(
            f"Fitted on {calibration.human_labels} human labels "
            f"({source_text(report.labels_from)}): {split.train} to fit, {split.held_out} held "
            f"out (holdout {split.holdout}, seed {split.seed}; {split.method})."
        ),
        Paragraph(f"How: {calibration.method}."),
        Paragraph(f"Score: {calibration.score}."),
        cuts_table(report),
        figures_table("Agreement with the human labels", "labels", rows, calibration.bar),
        Paragraph(f"Binary kappa: relevant at grade >= {calibration.rel_threshold}."),
        verdict(calibration),
        *(Paragraph(warning, "warning") for warning in calibration.warnings),
    ]


def judge_model_document(report: JudgeModelReport, db: str) -> Document:
    """The report `workbench judge-model` prints; `db` names the store for the next step."""
    scoring = report.scoring
    load = "model load"
    if scoring.passages is not None:
        load += (
            f"; {scoring.passages_encoded} of {scoring.passages} passages encoded, the rest from "
            "the embedding cache"
        )
    written = report.written
    stored = (
        f"Stored {written.written} grades as '{report.judge}' (role {ROLE}): {written.new} new, "
        f"{written.changed} changed, {written.unchanged} unchanged"
        + (
            f", {written.new_version} the same grade from this new version"
            if written.new_version
            else ""
        )
        + (f", {report.unscored} unscored (no finite score)" if report.unscored else "")
        + "."
    )
    if report.identity is not None:
        stored += f" Judge version {report.identity.version}: {report.identity.describe()}."
    return Document(
        f"Judge '{report.judge}': {report.model} as a {report.scorer}",
        [
            Paragraph(
                f"{scoring.items} pooled items scored in {figure(scoring.score_seconds, 1)}s "
                f"after a {figure(scoring.load_seconds, 1)}s {load}."
            ),
            *calibration_blocks(report),
            Paragraph(stored),
            Paragraph(f"Against every human: workbench agree --db {db}"),
        ],
    )
