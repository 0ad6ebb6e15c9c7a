"""`workbench coverage`: how complete is the judged relevant set, per query.

Judgments counted: each pair's resolved grade (adjudicator, agreement, else low median; model
judges left out, 'oracle' rows from `workbench simulate` counted), or one annotator's with
--annotator. The estimate of what the pool missed needs the stratified sample that
`workbench pool --sample N` mixes into the queue; without judged samples a query is 'unmeasured'."""

from __future__ import annotations

import argparse
import json
from typing import Any

from workbench.core.display import visible
from workbench.core.names import annotator_name

COLUMNS = [
    ("pool", "items pooled from the systems' top results"),
    ("judged", "items graded (pool, samples and any other judged doc)"),
    ("rel", "judged relevant (grade >= the relevance threshold)"),
    ("est|Rel|", "estimated relevant documents in the whole corpus, with its 95% interval"),
    ("complete", "judged relevant / est |Rel|: the share of the relevant set you have"),
    ("low", "lower end of its 95% interval: the figure the status uses"),
    ("ceiling", "min(1, k / est |Rel|): the best Recall@k any system can reach"),
    ("last¼", "share of relevant found in the last quarter of judgments (high: keep going)"),
    ("status", "complete (low >= threshold), incomplete, or unmeasured (no judged sample)"),
]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, help="the judgments store (SQLite file)")
    parser.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    parser.add_argument("--json", action="store_true", help="print JSON (= --format json)")
    parser.add_argument("-k", type=int, default=10, help="cutoff for the ceiling (default 10)")
    parser.add_argument(
        "--complete-at",
        type=float,
        default=0.8,
        help="a query is complete when its completeness lower bound reaches this (default 0.8)",
    )
    parser.add_argument(
        "--min-samples",
        type=int,
        default=1,
        help="judged outside-pool samples a query needs to be measured (default 1)",
    )
    parser.add_argument(
        "--annotator", type=annotator_name, help="count only this annotator's grades"
    )
    parser.add_argument("--rel-threshold", type=int, default=1, help="grade counted as relevant")
    parser.add_argument("--seed", type=int, default=0, help="seed of the posterior draws")


def run(args: argparse.Namespace) -> int:
    from workbench.core.coverage import coverage_for_store
    from workbench.core.errors import InputError
    from workbench.store import open_store

    problems = []
    if args.k < 1:
        problems.append("-k: must be >= 1")
    if not 0 < args.complete_at <= 1:
        problems.append("--complete-at: must be in (0, 1]")
    if args.min_samples < 1:
        problems.append("--min-samples: must be >= 1")
    if problems:
        raise InputError(problems)
    with open_store(args.db) as store:
        if args.annotator is not None and args.annotator not in store.annotators():
            raise InputError([f"--annotator: {args.annotator!r} has no judgments in {args.db}"])
        report = coverage_for_store(
            store,
            k=args.k,
            complete_at=args.complete_at,
            min_samples=args.min_samples,
            annotator=args.annotator,
            rel_threshold=args.rel_threshold,
            seed=args.seed,
        )
    if args.json or args.format == "json":
        print(json.dumps(report, indent=2, sort_keys=False))
    elif args.format == "markdown":
        print(render_markdown(report))
    else:
        print(render_table(report))
    return 0


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def _interval(row: dict) -> str:
    if row["est_rel"] is None:
        return "–"
    return f"{row['est_rel']:.0f} [{row['est_rel_low']:.0f}–{row['est_rel_high']:.0f}]"


def _rows(report: dict) -> list[list[str]]:
    """One row of cells per query; the query id shown visibly (control characters drawn)."""
    return [
        [
            visible(qid, one_line=True),
            str(row["pool"]),
            str(row["judged"]),
            str(row["relevant"]),
            _interval(row),
            _num(row["completeness"]),
            _num(row["completeness_low"]),
            _num(row["ceiling_est"]),
            _num(row["last_quarter_share"]),
            row["status"],
        ]
        for qid, row in report["queries"].items()
    ]


def _summary_lines(report: dict) -> list[str]:
    s = report["summary"]
    lines = [
        f"{s['queries']} queries: {s['complete']} complete, {s['incomplete']} incomplete, "
        f"{s['unmeasured']} unmeasured (complete when the 95% lower bound of completeness >= "
        f"{report['thresholds']['complete_at']}).",
        f"judged {s['judged']}, relevant {s['relevant']}, est |Rel| "
        f"{_num(s['est_rel'], 0)}; mean completeness {_num(s['mean_completeness'])} "
        f"(mean lower bound {_num(s['mean_completeness_low'])}).",
    ]
    for name, figures in s["systems"].items():
        lines.append(
            f"system {visible(name, one_line=True)}: judged@5/10/20 "
            + "/".join(_num(figures.get(f"judged@{k}")) for k in (5, 10, 20))
            + f", relevant found {figures['relevant']}"
            + f", unique relevant {figures['unique_relevant']}"
        )
    return lines


def render_table(report: dict) -> str:
    from workbench.reports.charts import terminal_chart

    header = ["query"] + [name for name, _ in COLUMNS]
    rows = _rows(report)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines += ["", *_summary_lines(report), "", terminal_chart(report), "", "Columns:"]
    lines += [f"  {name:<9} {meaning}" for name, meaning in COLUMNS]
    lines.append(f"  (k = {report['k']})")
    return "\n".join(lines)


def _markdown_row(cells: list[str]) -> str:
    """A table row; a literal pipe (as in |Rel|) is escaped so it cannot split the cell, and
    so is a backslash (`report.markdown_cell`)."""
    from workbench.reports.evaluation import markdown_cell

    return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"


def render_markdown(report: dict) -> str:
    from workbench.reports.charts import completeness_svg, discovery_svg

    header = ["query"] + [name for name, _ in COLUMNS]
    lines = ["# Coverage report", "", *(f"- {line}" for line in _summary_lines(report)), ""]
    lines.append(_markdown_row(header))
    lines.append("|" + "---|" * len(header))
    lines += [_markdown_row(r) for r in _rows(report)]
    lines += ["", "## Completeness per query", "", completeness_svg(report), ""]
    lines += ["## Discovery curves", "", discovery_svg(report), "", "## Columns", ""]
    lines += [f"- **{name}**: {meaning}" for name, meaning in COLUMNS]
    lines += [
        "",
        "Estimate: stratified random samples from outside the pool (by best rank) are judged "
        "blind among pool items; a relevance-vs-rank model shared by all queries, with a level "
        "per query, gives each query's posterior for the relevant documents left unjudged.",
    ]
    return "\n".join(lines)
