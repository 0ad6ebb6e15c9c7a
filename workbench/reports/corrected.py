"""`workbench eval --qrels STORE --judge NAME`: P@k, R@k and nDCG@k from a model judge's labels
corrected by the human labels (prediction-powered inference, `workbench.core.ppi`), per run
and cutoff, beside the judge alone and the humans alone."""

from __future__ import annotations

from workbench.core.ppi import MIN_LABELED_QUERIES, CorrectedMetric


def _needed(count: int | None, target: float | None) -> str:
    if target is None:
        return ""
    return "none" if count is None else str(count)


def _cell(low: float | None, est: float | None, high: float | None) -> str:
    if est is None or low is None or high is None:
        return "–"
    return f"{est:.3f} [{low:.3f}, {high:.3f}]"


def render(rows: list[CorrectedMetric], judge: str, target: float | None = None) -> str:
    """The table; 'for width': human labels for a `target`-wide interval ('none': no number
    of them reaches it, the judge's own spread over these items is wider)."""
    lines = [
        f"Metrics from judge {judge!r}'s labels, corrected by the human labels (prediction-"
        "powered, PPI++, 95% interval); beside them the judge alone and the humans alone.",
        "P@k: over top-k items, valid when the human-labelled items are a uniformly random"
        " subset of them; R@k and nDCG@k: over queries, the human-labelled ones being those",
        "whose every pooled item humans judged, valid when they are a uniformly random subset"
        " of the queries (a query with no relevant document counts 0). 'humans' and 'judge'"
        " count the items (or queries) with and without a human label.",
        "",
        f"{'run':<20} {'measure':>8} {'queries':>7} {'humans':>6} {'judge':>6}  "
        f"{'corrected':<26} {'judge alone':>11}  {'humans alone':<26} {'for width':>9}",
    ]
    for r in rows:
        e = r.estimate
        if e is None:
            why = (
                f"{r.missing_judge} top-{r.k} items have no label of the judge"
                if r.missing_judge
                else "no human label among the items (or none left to the judge)"
            )
            if r.unit == "queries":
                why = (
                    f"{r.labeled_queries} queries fully judged by humans; an interval over"
                    f" queries needs {MIN_LABELED_QUERIES} (and one left to the judge)"
                )
            name = f"{r.measure}@{r.k}"
            lines.append(f"{r.run[:20]:<20} {name:>8} {r.queries:>7}  – {why}")
            continue
        lines.append(
            f"{r.run[:20]:<20} {r.measure + '@' + str(r.k):>8} {r.queries:>7} {e.labeled:>6}"
            f" {e.unlabeled:>6}  "
            f"{_cell(e.low, e.estimate, e.high):<26} {e.judge_only:>11.3f}  "
            f"{_cell(e.human_low, e.human_only, e.human_high):<26} "
            f"{_needed(r.humans_for_width, target):>9}"
        )
    return "\n".join(lines) + "\n"
