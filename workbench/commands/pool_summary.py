"""The summary `workbench pool` (and `workbench demo`, pooling its corpus) prints: each
system's status, the queue or the frames, the outside-pool sample. Not a command: both
commands import it, neither imports the other."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.flows.pool import PoolSummary


def render_summary(summary: PoolSummary, db: str, depth: int, strategy: str) -> str:
    """The summary as plain lines: each system's status, the queue, the sample."""
    queries = f"{summary.queries} {'query' if summary.queries == 1 else 'queries'}"
    lines = [f"Pooled {queries} into {db} (depth {depth}, order {strategy})."]
    if summary.corpus is not None:
        cut = f": {summary.passages.wording()}" if summary.passages is not None else ""
        lines.append(f"Corpus: {summary.corpus.line()}{cut}.")
    width = max(len(name) for name in summary.systems)
    for name, system in summary.systems.items():
        if system.status == "ok":
            lines.append(f"  {name:<{width}}  ok       run: {system.run_path}")
        else:
            lines.append(f"  {name:<{width}}  SKIPPED  {system.reason}")
    skipped = summary.skipped
    if skipped:
        lines.append(f"The pool was built without {', '.join(skipped)} (see the reason above).")
        if "rerank" in skipped:
            lines.append("A local cross-encoder folder can be given with --rerank-model PATH.")
    folded = (
        f"{summary.aliases} {'id' if summary.aliases == 1 else 'ids'} of identical passages "
        "folded into one item (aliases)."
    )
    if strategy == "adaptive":
        lines.append(
            f"Frames: {summary.pool_items} passages the adaptive queue may draw from (each "
            f"system's top {depth} and a random reserve of the rest); it serves what each query "
            f"needs, one grade at a time. {folded}"
        )
    else:
        lines.append(
            f"Judging queue: {summary.pool_items} items ({summary.new_items} new), {folded}"
        )
    if summary.sample_per_query:
        wanted = summary.sample_per_query * summary.queries
        line = (
            f"Outside-pool sample for the coverage estimate: {summary.sample_drawn} documents "
            f"drawn ({summary.sample_per_query} per query asked)"
        )
        if summary.sample_drawn < wanted:
            line += "; fewer where the pool already holds (almost) the whole corpus"
        lines.append(line + ".")
    return "\n".join(lines)
