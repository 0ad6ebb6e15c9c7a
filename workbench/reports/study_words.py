"""The study's figures in words, one way for `eval`'s and `compare`'s text, Markdown and HTML:
each mean's joint interval, or which queries it waits on, and how much of it rests on the
relevance model rather than on grades."""

from __future__ import annotations

from workbench.core.evaluation.eval_report import RunResult
from workbench.core.study.intervals import StudyInterval
from workbench.reports.document import figure


def study_line(run: RunResult) -> str:
    """The run's study intervals in one line: each mean's estimate and joint 95% interval under
    every query's unjudged relevant at once, or which queries have no estimate yet."""
    assert run.study is not None
    parts = []
    for key, interval in run.study.intervals.items():
        if interval.low is None or interval.high is None or interval.estimate is None:
            left = ", ".join(interval.unmeasured[:5]) + (" ..." if len(interval.unmeasured) > 5
                                                         else "")  # fmt: skip
            parts.append(f"{key} - (no estimate yet for {left})")
        else:
            parts.append(
                f"{key} {figure(interval.estimate)} "
                f"[{figure(interval.low)}, {figure(interval.high)}]{imputed_words(interval)}"
            )
    queries = max((i.queries for i in run.study.intervals.values()), default=0)
    return (
        f"study (the mean over {queries} queries with every query's unjudged relevant passages "
        f"drawn at once; 95%): " + "; ".join(parts)
    )


def imputed_words(interval: StudyInterval) -> str:
    """How much of a study figure rests on the relevance model: the share of the run's top-k
    places nobody judged (said only where there are some)."""
    if interval.imputed <= 0:
        return ""
    share = max(1, round(interval.imputed * 100))
    return f" ({share}% of its top-k places unjudged: their relevance is the model's)"
