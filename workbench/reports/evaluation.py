"""The eval report: one JSON-ready object (the `workbench eval --json` contract), rendered
as a terminal table or Markdown. `eval_report` is pure; the renderers only format it.

Object shape: {"k": first k, "ks": [...], "rel_threshold", "gain", "runs": {NAME:
{"per_query": {QID: row}, "mean": {... "queries": n}, "mean_covers": {...}, "audit":
{QID: ...}}}, "problems": [{"qid", "level", "code", "message", "run"}], "two_stage" when
two stages were given, and "coverage" when the qrels carry a coverage summary: then each row
also holds R@k_low / R@k_est / R@k_high (recall under the estimated |Rel|), est_rel(_low,
_high), completeness(_low) and coverage_status, and each mean their means over the measured
queries}. Rows may carry extra keys (e.g. a recall interval added by a
later step); the renderers show them through `Column`s passed as `extra_columns`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from workbench.core.audit import (
    UNDEFINED_CODES,
    Coverage,
    audit,
    coverage_gate,
    fold_aliases,
    no_relevant_coverage_note,
    two_stage,
)
from workbench.core.display import visible
from workbench.core.metrics import RankingLike, capped_recall, evaluate
from workbench.core.model import Level

Row = Mapping[str, object]


def eval_report(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, RankingLike]],
    ks: Sequence[int] | int,
    rel_threshold: int = 1,
    gain: str = "linear",
    corpus_size: int | None = None,
    passages: Mapping[str, str] | None = None,
    stages: tuple[Mapping[str, RankingLike], Mapping[str, RankingLike]] | None = None,
    stage_names: tuple[str, str] = ("stage1", "stage2"),
    fetch_k: int | None = None,
    run_warnings: Mapping[str, Sequence[str]] | None = None,
    coverage: Coverage | None = None,
    strict: bool = False,
    aliases: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """Score and audit each run (name -> qid -> ranking) at every k; audit problems are
    collected per run at the first k. `stages` = (stage-1 rankings, stage-2 rankings) adds
    the two-stage view with keep-n = the first k. `coverage` adds recall under the estimated
    |Rel| and the gate (`strict`: an incomplete scored query is an error). `aliases` (alias id
    -> canonical id, from a golden.yaml or a store) makes identical passages one document."""
    ks = [ks] if isinstance(ks, int) else list(ks)
    out_runs: dict[str, object] = {}
    problems: list[dict[str, object]] = []
    for name, rankings in runs.items():
        scored = {q: fold_aliases(r, aliases) for q, r in rankings.items()} if aliases else rankings
        result = evaluate(qrels, scored, ks, rel_threshold, gain)
        checked = audit(qrels, rankings, ks[0], rel_threshold, corpus_size, passages, aliases)
        out_runs[name] = {
            "per_query": result.per_query,
            "mean": result.mean,
            "mean_covers": {
                "queries": result.in_mean,
                "missing_from_run": result.missing_from_run,
                "left_out_no_relevant": [q for q in result.no_relevant if q in result.per_query],
                "not_in_qrels": result.not_in_qrels,
                "undefined": result.undefined,
            },
            "audit": {qid: row.as_dict() for qid, row in checked.rows.items()},
        }
        gate_problems: Sequence[Mapping[str, object]] = []
        if coverage is not None:
            rows, mean, gate_problems = coverage_gate(
                coverage, rankings, ks, result.in_mean, rel_threshold, strict
            )
            for qid, row in result.per_query.items():
                row.update(rows.get(qid, {}))  # type: ignore[arg-type]
            result.mean.update(mean)  # type: ignore[arg-type]
            for p in checked.problems:
                info = coverage.queries.get(str(p["qid"]))
                note = no_relevant_coverage_note(info, ks[0]) if info else None
                if p["code"] == "no_relevant" and note:
                    p["message"] = f"{p['message']}; {note}"
        for message in (run_warnings or {}).get(name, ()):
            problems.append(
                _with_run(
                    {"qid": None, "level": Level.WARNING, "code": "run_file", "message": message},
                    name,
                )
            )
        problems.extend(_with_run(p, name) for p in checked.problems)
        problems.extend(_with_run(p, name) for p in gate_problems)
    report: dict[str, object] = {
        "k": ks[0],
        "ks": ks,
        "rel_threshold": rel_threshold,
        "gain": gain,
        "runs": out_runs,
        "problems": problems,
    }
    if coverage is not None:
        report["coverage"] = {
            "source": coverage.source,
            "complete_at": coverage.complete_at,
            "thresholds": dict(coverage.thresholds),
            "method": coverage.method,
            "status": {qid: q.status for qid, q in coverage.queries.items()},
        }
    if stages is not None:
        if aliases:
            stages = (
                {q: fold_aliases(r, aliases) for q, r in stages[0].items()},
                {q: fold_aliases(r, aliases) for q, r in stages[1].items()},
            )
        staged = two_stage(qrels, stages[0], stages[1], ks[0], fetch_k, rel_threshold)
        report["two_stage"] = {
            "stage1": stage_names[0],
            "stage2": stage_names[1],
            "fetch_k": fetch_k,
            "keep_n": ks[0],
            "per_query": {qid: row.as_dict() for qid, row in staged.rows.items()},
            "mean": staged.mean,
        }
        label = f"{stage_names[0]} -> {stage_names[1]}"
        problems.extend(_with_run(p, label) for p in staged.problems)
    return report


def _with_run(p: Mapping[str, object], run: str) -> dict[str, object]:
    return {**p, "run": run}


def exit_code(report: Mapping[str, object], strict: bool = False) -> int:
    """1 when a figure is undefined (always) or any error was found (with `strict`), else 0."""
    for p in cast(Sequence[Mapping[str, object]], report["problems"]):
        if p["level"] == Level.ERROR and (strict or p["code"] in UNDEFINED_CODES):
            return 1
    return 0


# --- rendering -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Column:
    """One table column: a header, the row key it shows, and how a value is written (or, with
    `cell`, how a whole row is: for a cell built from several keys)."""

    header: str
    key: str
    fmt: Callable[[object], str]
    cell: Callable[[Row], str] | None = None

    def show(self, row: Row) -> str:
        return self.cell(row) if self.cell is not None else self.fmt(row.get(self.key))


def fixed3(value: object) -> str:
    return "-" if value is None else f"{float(value):.3f}"  # type: ignore[arg-type]


def percent(value: object) -> str:
    return "-" if value is None else f"{100 * float(value):.0f}%"  # type: ignore[arg-type]


def count(value: object) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{float(value):.2f}"  # type: ignore[arg-type]


def columns_for(ks: Sequence[int], extra: Sequence[Column] = ()) -> list[Column]:
    """|Rel| first, then per k: P, R with its ceiling and share of it, nDCG, judged; then
    MRR, bpref, and any extra columns (placed after the first R@k block's ceiling)."""
    cols = [Column("|Rel|", "rel", count)]
    for i, k in enumerate(ks):
        cols += [
            Column(f"P@{k}", f"P@{k}", fixed3),
            Column(f"R@{k}", f"R@{k}", fixed3),
            Column(f"ceil@{k}", f"ceiling@{k}", fixed3),
            Column("of ceil", f"pct_of_ceiling@{k}", percent),
        ]
        if i == 0:
            cols += list(extra)
    cols += [Column(f"nDCG@{k}", f"nDCG@{k}", fixed3) for k in ks]
    cols += [Column("MRR", "MRR", fixed3), Column("bpref", "bpref", fixed3)]
    cols += [Column(f"judged@{k}", f"judged@{k}", percent) for k in ks]
    return cols


def markdown_cell(text: str) -> str:
    """A Markdown table cell showing `text` literally: control characters (newlines included)
    visible, a backslash doubled and a pipe escaped, so no cell can split or join columns."""
    return visible(text, one_line=True).replace("\\", "\\\\").replace("|", "\\|")


def _table(header: list[str], body: list[list[str]], markdown: bool) -> list[str]:
    """Cells may hold text from data (query ids, doc ids): shown visibly, escaped in Markdown."""
    if markdown:
        header = [markdown_cell(c) for c in header]
        body = [[markdown_cell(c) for c in r] for r in body]
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return lines
    header = [visible(c, one_line=True) for c in header]
    body = [[visible(c, one_line=True) for c in r] for r in body]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    return [line(header), *(line(r) for r in body)]


def _capped_note(run: Mapping[str, object], k: int) -> str | None:
    """The capped-recall lesson, only when some query has |Rel| > k (else both agree); the
    figure a min(|Rel|, k) denominator would give only when it differs, as printed."""
    rows: Mapping[str, Row] = run["per_query"]  # type: ignore[assignment]
    in_mean: Sequence[str] = run["mean_covers"]["queries"]  # type: ignore[index]
    over = [q for q in in_mean if int(rows[q]["rel"]) > k]  # type: ignore[call-overload]
    if not over or not in_mean:
        return None
    honest = capped = 0.0
    for q in in_mean:
        rel = int(rows[q]["rel"])  # type: ignore[call-overload]
        recall = float(rows[q][f"R@{k}"])  # type: ignore[arg-type]
        honest += recall
        capped += capped_recall(round(recall * rel), rel, k) or 0.0
    n = len(in_mean)
    shown = ", ".join(visible(q, one_line=True) for q in over[:5]) + (
        " ..." if len(over) > 5 else ""
    )
    note = (
        f"note: {len(over)} quer{'y has' if len(over) == 1 else 'ies have'} more relevant "
        f"documents than k = {k} ({shown}): R@{k} cannot reach 1 there (see ceil@{k})."
    )
    capped_text, honest_text = f"{capped / n:.3f}", f"{honest / n:.3f}"
    if capped_text != honest_text:
        note += (
            f" Dividing by min(|Rel|, k) would report mean R@{k} {capped_text}, "
            f"not the honest {honest_text}."
        )
    return note


def _problem_lines(
    problems: Sequence[Mapping[str, object]], markdown: bool, per_code: int = 5
) -> list[str]:
    if not problems:
        return []
    errors = sum(1 for p in problems if p["level"] == Level.ERROR)
    lines = [f"problems: {errors} error(s), {len(problems) - errors} warning(s)"]
    shown: dict[tuple[object, object], int] = {}
    hidden: dict[tuple[object, object], int] = {}
    ordered = sorted(problems, key=lambda p: p["level"] != "error")
    for p in ordered:
        key = (p["level"], p["code"])
        if shown.get(key, 0) >= per_code:
            hidden[key] = hidden.get(key, 0) + 1
            continue
        shown[key] = shown.get(key, 0) + 1
        where = f"{p['qid']}: " if p.get("qid") is not None else ""
        text = visible(f"{p['level']} [{p['code']}] {where}{p['message']}", one_line=True)
        lines.append(f"- {text}" if markdown else f"  {text}")
    for (level, code), n in hidden.items():
        text = f"... and {n} more {level} [{code}] (all of them in --json)"
        lines.append(f"- {text}" if markdown else f"  {text}")
    return lines


def render(
    report: Mapping[str, object], markdown: bool = False, extra_columns: Sequence[Column] = ()
) -> str:
    """A table per run (per query, then the mean), its problems under it, and the note on
    capped recall when it applies; the two-stage table last."""
    ks: list[int] = report["ks"]  # type: ignore[assignment]
    gated = isinstance(report.get("coverage"), Mapping)
    cols = columns_for(ks, [*(coverage_columns(ks[0]) if gated else []), *extra_columns])
    out: list[str] = []
    problems: Sequence[Mapping[str, object]] = report["problems"]  # type: ignore[assignment]
    runs: Mapping[str, Mapping[str, object]] = report["runs"]  # type: ignore[assignment]
    for name, run in runs.items():
        rows: Mapping[str, Row] = run["per_query"]  # type: ignore[assignment]
        mean: Row = run["mean"]  # type: ignore[assignment]
        title = (
            f"run {visible(name, one_line=True)}: k = {', '.join(map(str, ks))}, relevant = "
            f"grade >= {report['rel_threshold']}, {report['gain']} gain"
        )
        out.append(f"## {title}" if markdown else title)
        out.append("")
        body = [[qid, *(c.show(row) for c in cols)] for qid, row in rows.items()]
        body.append([f"mean ({mean['queries']} q)", *(c.show(mean) for c in cols)])
        out += _table(["query", *(c.header for c in cols)], body, markdown)
        if gated:
            out += ["", *_coverage_legend(report, ks[0])]
        note = _capped_note(run, ks[0])
        if note:
            out += ["", note]
        mine = [p for p in problems if p.get("run") == name]
        if mine:
            out += ["", *_problem_lines(mine, markdown)]
        out.append("")
    staged = report.get("two_stage")
    if isinstance(staged, Mapping):
        out += _two_stage_lines(staged, problems, markdown)
    return "\n".join(out).rstrip() + "\n"


# --- the coverage gate's columns -------------------------------------------------------------

MARKERS = {"complete": "  ", "incomplete": " !", "unmeasured": " ?", "stale": " ?"}
"""After the recall interval: ! the judged set is incomplete (the gate), ? no usable estimate."""


def _is_mean(row: Row) -> bool:
    return "coverage_incomplete" in row


def _amount(value: object) -> str:
    """A relevant-document count: whole numbers bare, estimates between them to one decimal."""
    number = float(value)  # type: ignore[arg-type]
    return f"{number:.0f}" if abs(number - round(number)) < 1e-9 else f"{number:.1f}"


def coverage_columns(k: int) -> list[Column]:
    """Recall@k under the estimated |Rel| (interval and marker), the estimate, completeness
    and status; on the mean row, their means over the measured queries and a status count."""

    def interval(row: Row) -> str:
        low, high = row.get(f"R@{k}_low"), row.get(f"R@{k}_high")
        text = "-" if low is None or high is None else f"{fixed3(low)}–{fixed3(high)}"
        if _is_mean(row):
            measured = int(row["coverage_complete"]) + int(row["coverage_incomplete"])  # type: ignore[call-overload]
            return text + (f" ({measured} q)" if measured != row.get("queries") else "")
        return text + MARKERS.get(str(row.get("coverage_status")), " ?")

    def estimate(row: Row) -> str:
        est, low, high = row.get("est_rel"), row.get("est_rel_low"), row.get("est_rel_high")
        if _is_mean(row) or est is None or low is None or high is None:
            return "-"
        return f"{_amount(est)} [{_amount(low)}–{_amount(high)}]"

    def completeness(row: Row) -> str:
        value, low = row.get("completeness"), row.get("completeness_low")
        if value is None:
            return "-"
        return percent(value) + (f" (≥{percent(low)})" if low is not None else "")

    def status(row: Row) -> str:
        if _is_mean(row):
            return f"{row['coverage_complete']}/{row.get('queries')} complete"
        return str(row.get("coverage_status") or "-")

    return [
        Column(f"R@{k} (est. |Rel|)", f"R@{k}_low", fixed3, interval),
        Column("est. |Rel|", "est_rel", count, estimate),
        Column("compl.", "completeness", percent, completeness),
        Column("coverage", "coverage_status", str, status),
    ]


def _coverage_legend(report: Mapping[str, object], k: int) -> list[str]:
    info: Mapping[str, object] = report["coverage"]  # type: ignore[assignment]
    gate = info.get("complete_at")
    bound = f"< {gate:g}" if isinstance(gate, (int, float)) else "below the threshold"
    source = visible(str(info["source"]), one_line=True)
    return [
        f"R@{k} (est. |Rel|): recall@{k} with |Rel| anywhere in the estimate's 95% interval, "
        f"unjudged documents in the top {k} counted as non-relevant (coverage from {source});",
        f"  R@{k} against the judged set is an upper bound when its top {k} is fully judged "
        f"(judged@{k} 100%): relevant documents nobody judged only lower true recall, but each "
        f"unjudged one in the top {k} that is relevant would raise it.",
        "  est. |Rel|: estimate [95% interval]. "
        "compl.: judged relevant / est. |Rel| (≥ its 95% lower bound).",
        f"  ! incomplete: completeness lower bound {bound}, --strict fails on it. ? unmeasured, "
        "or a summary that does not match these qrels. Means cover the measured queries.",
    ]


def _two_stage_lines(
    staged: Mapping[str, object], problems: Sequence[Mapping[str, object]], markdown: bool
) -> list[str]:
    n = staged["keep_n"]
    fetch = staged["fetch_k"] if staged["fetch_k"] is not None else "depth"
    first = visible(str(staged["stage1"]), one_line=True)
    second = visible(str(staged["stage2"]), one_line=True)
    title = f"two stages: {first} (fetch-K = {fetch}) -> {second} (keep-n = {n})"
    out = [f"## {title}" if markdown else title, ""]
    rows: Mapping[str, Row] = staged["per_query"]  # type: ignore[assignment]
    body = [
        [
            qid,
            count(r["rel"]),
            count(r["fetch_k"]),
            fixed3(r["fetch_recall"]),
            fixed3(r["keep_recall"]),
            " ".join(r["dropped"]) or "-",  # type: ignore[arg-type]
        ]
        for qid, r in rows.items()
    ]
    mean: Row = staged["mean"]  # type: ignore[assignment]
    body.append(
        [
            f"mean ({mean['queries']} q)",
            "",
            "",
            fixed3(mean["fetch_recall"]),
            fixed3(mean["keep_recall"]),
            "",
        ]
    )
    header = ["query", "|Rel|", "K", "fetch-recall@K", f"keep-recall@{n}", "dropped by stage 2"]
    out += _table(header, body, markdown)
    label = f"{staged['stage1']} -> {staged['stage2']}"
    mine = [p for p in problems if p.get("run") == label]
    if mine:
        out += ["", *_problem_lines(mine, markdown)]
    return out
