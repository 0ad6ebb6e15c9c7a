"""Who judged what, and how fast (`workbench.core.agreement.activity`), as blocks of any report:
`agree`,
`coverage`, `report` and the lead's page of `workbench serve`. The agreement verdict is the
second column and the first a narrow terminal keeps (priority 1): the column folded away is
never the one that says an annotator is below the bar."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.agreement.activity import AnnotatorActivity
from workbench.core.agreement.kappa import KAPPA_BAR, PairAgreement
from workbench.reports.agreement import verdict
from workbench.reports.document import (
    Block,
    Cell,
    Column,
    Heading,
    Paragraph,
    Styled,
    Table,
    figure,
)

TITLE = "Who judged what"
COLUMNS = (
    Column("annotator", align="left"),
    Column("verdict", align="left", priority=1,
           help="agreement against the bar: with the others, else with the adjudicated grade"),
    Column("grades", priority=2, help="current grades"),
    Column("median s", digits=1, priority=3, help="median time per grade, shown to graded"),
    Column("p90 s", digits=1, priority=5, help="90th percentile of the time per grade"),
    Column("queries", priority=4, help="queries with a current grade"),
    Column("kappa vs others", align="left", priority=6,
           help="Cohen's kappa against the other annotators' resolved grade (shared items)"),
    Column("kappa vs adjudicated", align="left", priority=7,
           help="Cohen's kappa against the adjudicators' grade (shared items)"),
)  # fmt: skip


def _kappa(figures: PairAgreement | None) -> Cell:
    if figures is None or not figures.n:
        return Styled(None, "muted")
    return f"{figure(figures.kappa.kappa)} (n {figures.n})"


def _verdict(person: AnnotatorActivity, bar: float) -> Cell:
    for figures in (person.vs_others, person.vs_adjudicated):
        if figures is not None and figures.n:
            return verdict(figures, bar)
    if person.role != "human":
        return Styled(person.role, "muted")
    return Styled("no shared items yet", "muted")


def activity_blocks(
    people: Sequence[AnnotatorActivity], bar: float = KAPPA_BAR, level: int = 2
) -> list[Block]:
    """The table, one row a person, under a heading at `level`."""
    blocks: list[Block] = [Heading(TITLE, level)]
    if not people:
        return [*blocks, Paragraph("No one has graded yet.")]
    rows = [
        [p.annotator, _verdict(p, bar), p.grades, p.median_s, p.p90_s, p.queries,
         _kappa(p.vs_others), _kappa(p.vs_adjudicated)]
        for p in people
    ]  # fmt: skip
    return [
        *blocks,
        Table(COLUMNS, rows),
        Paragraph(
            "Time per grade: from the passage shown to the grade key, as the app recorded it"
            " (regrades included; imported labels have none). Kappa against the others: this"
            " annotator's grades against the grade the other annotators agree on, where they"
            " do.",
            "note",
        ),
    ]
