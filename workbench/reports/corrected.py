"""`workbench eval --qrels STORE --judge NAME`: P@k from a model judge's labels corrected by the
human labels (prediction-powered inference, `workbench.core.ppi`), per run and cutoff, beside
the judge alone and the humans alone."""

from __future__ import annotations

from workbench.core.ppi import CorrectedPrecision


def _needed(count: int | None, target: float | None) -> str:
    if target is None:
        return ""
    return "none" if count is None else str(count)


def _cell(low: float | None, est: float | None, high: float | None) -> str:
    if est is None or low is None or high is None:
        return "–"
    return f"{est:.3f} [{low:.3f}, {high:.3f}]"


def render(rows: list[CorrectedPrecision], judge: str, target: float | None = None) -> str:
    """The table; 'for width': human labels for a `target`-wide interval ('none': no number
    of them reaches it, the judge's own spread over these items is wider)."""
    lines = [
        f"P@k from judge {judge!r}'s labels on every item, corrected by the human labels"
        " (prediction-powered, PPI++, 95% interval); beside it the judge alone and the humans"
        " alone.",
        "Valid when the human-labelled items are a uniformly random subset of the items.",
        "",
        f"{'run':<24} {'k':>3} {'queries':>7} {'humans':>6} {'judge':>6}  "
        f"{'P@k corrected':<26} {'judge alone':>11}  {'humans alone':<26} {'for width':>9}",
    ]
    for r in rows:
        e = r.estimate
        if e is None:
            why = (
                f"{r.missing_judge} top-{r.k} items have no label of the judge"
                if r.missing_judge
                else "no human label among the items (or none left to the judge)"
            )
            lines.append(f"{r.run[:24]:<24} {r.k:>3} {r.queries:>7}  – {why}")
            continue
        lines.append(
            f"{r.run[:24]:<24} {r.k:>3} {r.queries:>7} {e.labeled:>6} {e.unlabeled:>6}  "
            f"{_cell(e.low, e.estimate, e.high):<26} {e.judge_only:>11.3f}  "
            f"{_cell(e.human_low, e.human_only, e.human_high):<26} "
            f"{_needed(r.humans_for_width, target):>9}"
        )
    return "\n".join(lines) + "\n"
