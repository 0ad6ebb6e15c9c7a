"""Chunking-invariant figures of a run over its own chunks (pure): how much of the judged
relevant text its top k chunks cover, how much of what they hold is relevant, and how many
characters a generator would be fed. They put a 256-token and a 512-token chunker on one
scale, where chunk-level R@k cannot (|Rel| counted in chunks changes with the chunk size).

Conventions (lengths as in `core.chunking`: characters, whitespace not counted, except read):

- Relevant text: the judged passages graded >= rel_threshold, each once (a passage and its
  identical copies are one text, covered as far as its best-covered copy), weighted by grade
  when asked (`by_grade`).
- text_R@k = relevant text the top k chunks cover (overlapping chunks counted once) / all of
  it; None when the query has no judged relevant text. With a coverage estimate the
  denominator is scaled by est |Rel| / judged relevant (its interval's ends likewise), on the
  assumption that the relevant passages not found are as long, on average, as those found:
  text_R@k_est, text_R@k_low, text_R@k_high.
- text_P@k = the top k chunks' text inside judged relevant passages / their text;
  text_unjudged@k = their text inside no judged passage / their text (None for no text).
- read@k = characters of the top k chunks, whitespace included: what a generator is fed.
- A chunk ranked twice keeps its slot and adds nothing the second time, as in `metrics`.

Each measure is a `TextMeasure` in `TEXT_MEASURES`: adding one is adding a definition."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from workbench.core.measures.chunking import JudgedSpans, overlap, text_length, union_length
from workbench.core.measures.measure_key import MeasureKey, cutoff_text_problem, split_key
from workbench.core.model import SourceSpan


@dataclass(frozen=True, slots=True)
class TextScale:
    """est |Rel| / judged relevant (point, low end, high end): how much more relevant text the
    coverage estimate says there is than was judged."""

    est: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class TextView:
    """One query's top chunks reduced, slot by slot, to what every text measure sums."""

    read: tuple[int, ...]
    text: tuple[int, ...]
    relevant: tuple[int, ...]
    unjudged: tuple[int, ...]
    covered: tuple[float, ...]
    """Relevant text (weighted) the slots down to this one cover, each passage's best-covered
    copy once: a total per slot (not a gain summed later), so that text wholly covered reads
    exactly the relevant total (a sum of gains read 0.9999999999999999)."""
    relevant_total: float
    scale: TextScale | None = None


def text_view(
    top: Sequence[str],
    chunks: Mapping[str, SourceSpan],
    judged: JudgedSpans,
    texts: Mapping[str, str],
    rel_threshold: int = 1,
    by_grade: bool = False,
    scale: TextScale | None = None,
) -> TextView:
    """The view of a ranking's first slots `top` (chunk ids, every one in `chunks`)."""
    relevant = {d for d, g in judged.grades.items() if g >= rel_threshold}
    weight = {d: float(judged.grades[d]) if by_grade else 1.0 for d in relevant}
    lengths = {d: _length(judged.spans[d], texts) for d in relevant}
    total = math.fsum(weight[d] * lengths[d] for d in relevant if judged.canonical[d] == d)
    held: dict[str, list[tuple[int, int]]] = {d: [] for d in relevant}
    best: dict[str, float] = {}  # canonical passage -> its best-covered copy's share
    slots: list[tuple[int, int, int, int, float]] = []
    seen: set[str] = set()
    for chunk_id in top:
        if chunk_id in seen:
            slots.append((0, 0, 0, 0, slots[-1][4]))
            continue
        seen.add(chunk_id)
        span = chunks[chunk_id]
        text = texts[span.source]
        length = text_length(text, span.start, span.end)
        in_judged = in_relevant = 0
        for passage_id in judged.index.overlapping(span):
            shared = overlap(span, judged.spans[passage_id])
            assert shared is not None
            chars = text_length(text, *shared)
            in_judged += chars
            if passage_id not in relevant:
                continue
            in_relevant += chars
            held[passage_id].append(shared)
            whole = lengths[passage_id]
            share = union_length(held[passage_id], text) / whole if whole else 0.0
            target = judged.canonical[passage_id]
            best[target] = max(share, best.get(target, 0.0))
        unjudged = max(length - in_judged, 0)
        covered = math.fsum(weight[t] * lengths[t] * best[t] for t in best)  # exact at all
        slots.append((span.end - span.start, length, in_relevant, unjudged, covered))
    columns = list(zip(*slots, strict=True)) if slots else [(), (), (), (), ()]
    return TextView(*map(tuple, columns), relevant_total=total, scale=scale)  # type: ignore[arg-type]


def _length(span: SourceSpan, texts: Mapping[str, str]) -> int:
    return text_length(texts[span.source], span.start, span.end)


# --- the measures -------------------------------------------------------------------------


def text_recall(view: TextView, k: int) -> float | None:
    if view.relevant_total <= 0:
        return None
    reached = view.covered[min(k, len(view.covered)) - 1] if k > 0 and view.covered else 0.0
    return min(1.0, reached / view.relevant_total)


def _scaled(view: TextView, k: int, end: str) -> float | None:
    recall = text_recall(view, k)
    if recall is None or view.scale is None:
        return None
    factor = max(getattr(view.scale, end), 1.0)
    return recall / factor


def text_recall_est(view: TextView, k: int) -> float | None:
    return _scaled(view, k, "est")


def text_recall_low(view: TextView, k: int) -> float | None:
    return _scaled(view, k, "high")  # the most relevant text: the lowest recall


def text_recall_high(view: TextView, k: int) -> float | None:
    return _scaled(view, k, "low")


def _share(view: TextView, k: int, part: tuple[int, ...]) -> float | None:
    text = sum(view.text[:k])
    return sum(part[:k]) / text if text else None


def text_precision(view: TextView, k: int) -> float | None:
    return _share(view, k, view.relevant)


def text_unjudged(view: TextView, k: int) -> float | None:
    return _share(view, k, view.unjudged)


def read_at(view: TextView, k: int) -> float | None:
    return float(sum(view.read[:k]))


@dataclass(frozen=True, slots=True)
class TextMeasure:
    """A text measure as data: its name (the key is `name@k` + `suffix`), what it means, how to
    compute it from a `TextView`, and how a table shows it."""

    name: str
    description: str
    compute: Callable[[TextView, int], float | None]
    suffix: str = ""
    header: str = ""
    """The table header, `{k}` standing for the cutoff; '' shows the key."""
    count: bool = False
    """A count of characters (shown whole), not a share (shown to 3 decimals)."""

    def key(self, k: int) -> str:
        return MeasureKey.at(self.name, k) + self.suffix

    def heading(self, k: int) -> str:
        return self.header.format(k=k) if self.header else self.key(k)


TEXT_MEASURES: dict[str, TextMeasure] = {}
"""Every text measure by key stem, in registration order: the order of rows, means and JSON."""


def register(measure: TextMeasure) -> TextMeasure:
    TEXT_MEASURES[measure.name + measure.suffix] = measure
    return measure


register(TextMeasure("text_R", "judged relevant text the top k chunks cover / all of it",
                     text_recall, header="tR@{k}"))  # fmt: skip
register(TextMeasure("text_R", "text_R under the estimated relevant text (est |Rel| / judged "
                     "relevant, unfound passages as long as found ones)", text_recall_est,
                     suffix="_est", header="tR@{k} est"))  # fmt: skip
register(TextMeasure("text_R", "text_R at the high end of est |Rel|", text_recall_low,
                     suffix="_low", header="low"))  # fmt: skip
register(TextMeasure("text_R", "text_R at the low end of est |Rel|", text_recall_high,
                     suffix="_high", header="high"))  # fmt: skip
register(TextMeasure("text_P", "share of the top k chunks' text inside judged relevant passages",
                     text_precision, header="tP@{k}"))  # fmt: skip
register(TextMeasure("text_unjudged", "share of the top k chunks' text in no judged passage",
                     text_unjudged, header="unj@{k}"))  # fmt: skip
register(TextMeasure("read", "characters of the top k chunks (what a generator is fed)",
                     read_at, header="read@{k}", count=True))  # fmt: skip


def text_keys(ks: Sequence[int], with_estimate: bool) -> list[str]:
    """The keys scored at `ks`, measure by measure (the estimate's only `with_estimate`)."""
    return [m.key(k) for m in TEXT_MEASURES.values() if with_estimate or not m.suffix for k in ks]


def text_scores(view: TextView, ks: Sequence[int]) -> dict[str, float | None]:
    """Every text measure of one query at every k (the estimate's None without a scale)."""
    return {m.key(k): m.compute(view, k) for m in TEXT_MEASURES.values() for k in ks}


COMPARED = ("text_R", "text_P", "text_unjudged")
"""The text measures `compare` pairs (shares; read@k is a count, which eval shows)."""


def compared_text_keys(
    specs: Sequence[str], ks: Sequence[int]
) -> tuple[list[str], list[str], list[str]]:
    """(text measure keys, the other specs, problems) from `--measure` values: `text_R@10`, or
    `text_R` at every k in `ks`; names matched without case."""
    by_folded = {name.casefold(): name for name in COMPARED}
    keys: list[str] = []
    others: list[str] = []
    problems: list[str] = []
    for spec in specs:
        base, cutoff = split_key(spec)
        name = by_folded.get(base.casefold())
        if base.casefold() == "read":
            shares = ", ".join(COMPARED)
            problems.append(f"--measure {spec!r}: read@k is a count of characters, not a "
                            f"share to pair (eval shows it); compare {shares}")  # fmt: skip
            continue
        if name is None:
            others.append(spec)
            continue
        problem = None if cutoff is None else cutoff_text_problem(cutoff)
        if problem is not None:
            problems.append(f"--measure {spec!r}: {problem}")
            continue
        for k in [int(cutoff)] if cutoff is not None else ks:
            if MeasureKey.at(name, k) not in keys:
                keys.append(MeasureKey.at(name, k))
    return keys, others, problems
