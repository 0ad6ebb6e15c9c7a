"""The `--chunks` part of the eval report as document blocks: the mapping rule with its shares,
each chunking's counts, and a table of every run's mean text figures (per query in `--json`)."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.core.evaluation.chunk_report import ChunkingReport
from workbench.core.measures.text_measures import TEXT_MEASURES
from workbench.reports.document import (
    Block,
    Bullets,
    Cell,
    Column,
    Heading,
    Interval,
    Paragraph,
    Table,
)


def rule_blocks(chunking: ChunkingReport) -> list[Block]:
    """The mapping rule with its shares, and what each chunking got from it (eval, compare)."""
    rule = chunking.rule
    said = (
        f"mapping rule (holds {rule.holds:g}, covers {rule.covers:g}, unjudged above "
        f"{rule.unjudged_max:g}): {rule.words()}"
    )
    files = [
        f"{f.file}: {f.chunks:,} chunks, {f.graded:,} (query, chunk) pairs graded by the rule; "
        f"relevant text in no chunk {_percent(f.relevant_outside)}; runs {', '.join(f.runs)}"
        for f in chunking.files
    ]
    return [Paragraph(said, "note"), Bullets(files)]


def chunk_blocks(chunking: ChunkingReport, ks: Sequence[int]) -> list[Block]:
    """The rule, the chunkings, the runs' mean text figures and their legend."""
    estimated = any(k.endswith("_est") for k in chunking.keys)
    columns = [Column("run", align="left")]
    for k in ks:
        columns.append(Column(f"tR@{k}", priority=1))
        if estimated:
            columns.append(Column(f"tR@{k} est [low, high]", priority=1))
        columns += [Column(f"tP@{k}", priority=2), Column(f"unj@{k}", priority=3),
                    Column(f"read@{k}", priority=2)]  # fmt: skip
    rows: list[list[Cell]] = []
    for name, run in chunking.runs.items():
        row: list[Cell] = [name]
        mean = run.mean
        for k in ks:
            row.append(mean.get(f"text_R@{k}"))
            if estimated:
                row.append(Interval(mean.get(f"text_R@{k}_est"), mean.get(f"text_R@{k}_low"),
                                    mean.get(f"text_R@{k}_high")))  # fmt: skip
            row += [mean.get(f"text_P@{k}"), mean.get(f"text_unjudged@{k}")]
            read = mean.get(f"read@{k}")
            row.append(None if read is None else round(read))
        rows.append(row)
    legend = [f"{m.heading(ks[0])}: {m.description}" for m in TEXT_MEASURES.values()
              if estimated or not m.suffix]  # fmt: skip
    legend.append(
        "means over the queries with judged relevant text (the estimate's over those coverage "
        "measured); relevant text "
        + ("weighted by grade (--text-by-grade)" if chunking.by_grade else "unweighted")
        + "; chunk-level P@k, R@k, nDCG@k and judged@k above are under the rule"
    )
    blocks: list[Block] = [Heading("text figures (--chunks)"), *rule_blocks(chunking),
                           Table(columns, rows), Bullets(legend)]  # fmt: skip
    if chunking.notes:
        blocks.append(Bullets(chunking.notes, "note"))
    return blocks


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"
