"""`workbench eval --qrels STORE --judge NAME`: P@k, R@k and nDCG@k from a model judge's labels
corrected by the human labels (prediction-powered inference, `workbench.core.judges.ppi`), per run
and cutoff, beside the judge alone and the humans alone. Built on the document model, so the
terminal, Markdown and HTML forms read the same and no data string acts."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.judges.ppi import CorrectedMetric
from workbench.reports.document import Bullets, Cell, Column, Document, Interval, Table
from workbench.reports.render import render_as

INTRO = (
    "The judge's labels on every item, corrected by the human grades of the items drawn for "
    "the store's recorded design (workbench draw-sample): a Horvitz-Thompson difference "
    "estimator, 95% intervals, valid whatever the judge (P@k's with two small-sample rules: "
    "lambda cross-fitted, the variance floored by one pseudo-disagreement; validated by "
    "simulation, R@k and nDCG@k not); beside it the judge alone and the "
    "humans alone (Horvitz-Thompson over the drawn items). P@k over the run's top-k items; "
    "R@k and nDCG@k per query as ratios (|Rel| and the ideal DCG estimated the same way), "
    "their mean over queries (a query with no relevant document counts 0). 'humans' and "
    "'judge' count the drawn items and the items left to the judge."
)


def render(
    rows: Sequence[CorrectedMetric],
    judge: str,
    target: float | None = None,
    fmt: str = "table",
    warnings: Sequence[str] = (),
    width: int | None = None,
    notes: Sequence[str] = (),
    target_key: str | None = None,
) -> str:
    """The report as `fmt`: 'table' (terminal text, fitted to `width` when given), 'markdown'
    or 'html'."""
    document = corrected_document(rows, judge, target, warnings, notes, target_key)
    return render_as(document, fmt, width)


# long: the table's columns, then each row's cells in the same order
def corrected_document(
    rows: Sequence[CorrectedMetric],
    judge: str,
    target: float | None = None,
    warnings: Sequence[str] = (),
    notes: Sequence[str] = (),
    target_key: str | None = None,
) -> Document:
    """The table; 'for width': human labels for a `target`-wide interval ('none': no number of
    them reaches it, the judge's own spread over these items is wider), on every row or on
    the `target_key` rows (`M@K`, from `eval --target`) alone."""
    doc = Document(
        f"Metrics from judge {judge}'s labels, corrected by the human labels",
        subtitle=INTRO,
    )
    columns = [
        Column("run", "left"),
        Column("measure", "left"),
        Column("queries"),
        Column("humans"),
        Column("judge"),
        Column("corrected", "left", help="the judge's figure corrected by the human labels"),
        Column("judge alone"),
        Column("humans alone", "left"),
    ]
    if target is not None:
        of = f" of {target_key}" if target_key else ""
        columns.append(Column("for width", help=f"human labels for a {target}-wide interval{of}"))
    table_rows: list[list[Cell]] = []
    unmeasured: list[str] = []
    for r in rows:
        name = f"{r.measure}@{r.k}"
        e = r.estimate
        if e is None:
            unmeasured.append(f"{r.run} {name}: {_why(r)}")
            cells: list[Cell] = [r.run, name, r.queries, None, None, None, None, None]
        elif not r.validated:  # an interval simulation did not bear out is not shown as one
            cells = [r.run, name, r.queries, e.labeled, e.unlabeled, _unvalidated(e.estimate),
                     e.judge_only, _unvalidated(e.human_only)]  # fmt: skip
        else:
            cells = [
                r.run,
                name,
                r.queries,
                e.labeled,
                e.unlabeled,
                _interval(e.estimate, e.low, e.high),
                e.judge_only,
                _interval(e.human_only, e.human_low, e.human_high),
            ]
        if target is not None:
            asked = target_key in (None, name)
            cells.append(None if e is None or not asked else _needed(r.humans_for_width))
        table_rows.append(cells)
    doc.add(Table(columns, table_rows))
    if unmeasured:
        doc.add(Bullets(_unique(unmeasured), "note"))
    if notes:
        doc.add(Bullets(list(notes), "note"))
    if warnings:
        doc.add(Bullets(list(warnings)))
    return doc


def _unique(lines: list[str]) -> list[str]:
    """One line per reason shared by every row ('every row: ...'), else each row's."""
    reasons = {line.split(": ", 1)[1] for line in lines}
    if len(lines) > 1 and len(reasons) == 1:
        return [f"every row: {reasons.pop()}"]
    return lines


def _why(r: CorrectedMetric) -> str:
    """Why a row has no estimate."""
    if r.unavailable:
        return r.unavailable
    if r.missing_judge:
        return f"{r.missing_judge} top-{r.k} items have no label of the judge"
    return "no human label among the items (or none left to the judge)"


def _interval(value: float | None, low: float | None, high: float | None) -> Cell:
    if value is None or low is None or high is None:
        return None
    return Interval(value, low, high)


def _unvalidated(value: float | None) -> str | None:
    """A point whose interval is not shown: in simulation it held the truth too rarely (a
    zero-width [0.641, 0.641] or a negative low end read as findings); --json keeps it."""
    return None if value is None else f"{value:.3f} (n/v)"


def _needed(count: int | None) -> str:
    return "none" if count is None else str(count)
