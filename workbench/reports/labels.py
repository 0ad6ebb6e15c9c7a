"""`workbench import-labels`'s summary as a `Document`."""

from __future__ import annotations

from workbench.core.judgments.labels import OUTSIDE_POOL, ImportReport
from workbench.reports.document import Bullets, Document


def import_document(report: ImportReport) -> Document:
    """What was written, what was kept or skipped, and why."""
    summary = report.summary
    lines = [
        f"written {summary.written}: {summary.new} new, {summary.changed} changed "
        "(new rows superseding the earlier grade; history kept)"
        + (
            f", {summary.new_version} the same grade from a new version of the judge"
            if summary.new_version
            else ""
        )
    ]
    if summary.unchanged:
        lines.append(
            f"unchanged {summary.unchanged}: same grade already current, not written again"
        )
    if summary.outside_pool:
        lines.append(f"outside the pool {summary.outside_pool}: kept, note '{OUTSIDE_POOL}'")
    if summary.unknown_queries:
        examples = ", ".join(summary.unknown_queries[:5])
        lines.append(
            f"skipped {summary.skipped_labels} labels naming {len(summary.unknown_queries)} "
            f"queries not in the store (e.g. {examples})"
        )
    if summary.kept_from_before:
        lines.append(
            f"kept {summary.kept_from_before} earlier labels of '{report.annotator}' absent "
            "from this file"
        )
    lines += [f"ignored field '{f}' on {n} lines" for f, n in sorted(report.ignored_fields.items())]
    if report.judge is not None:
        lines.append(f"judge version {report.judge.version}: {report.judge.describe()}")
    title = (
        f"{report.file} ({report.format}): {summary.labels} labels for '{report.annotator}' "
        f"(role {report.role})"
    )
    return Document(title, [Bullets(lines)])
