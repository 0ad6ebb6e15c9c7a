"""The lead's page of `workbench serve` (a `serve token --lead` URL): who judged what and how
fast, and how complete each query is, as one HTML page from the reports' renderer."""

from __future__ import annotations

from workbench.flows.activity import store_activity
from workbench.reports.activity import activity_blocks
from workbench.reports.document import Bullets, Document, Heading
from workbench.reports.render import render_html
from workbench.store import JudgmentStore


def lead_page(store: JudgmentStore, rel_threshold: int = 1) -> str:
    """The page, read from the store now (reload the page to read it again)."""
    from workbench.flows.coverage import coverage_parts
    from workbench.reports.coverage import summary_lines

    people = store_activity(store, rel_threshold)
    coverage = coverage_parts(store, plan=False, rel_threshold=rel_threshold).report
    document = Document(
        f"Judging round {store.title}",
        subtitle="Who judged what, how fast and how far they agree; reload for the latest.",
    )
    document.add(*activity_blocks(people))
    document.add(Heading("Coverage"), Bullets(summary_lines(coverage)))
    return render_html(document)
