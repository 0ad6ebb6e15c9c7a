"""The eval report: one JSON-ready object (the `workbench eval --json` contract), rendered
as a terminal table or Markdown. `eval_report` is pure; the renderers only format it.

Object shape: {"k": first k, "ks": [...], "rel_threshold", "gain", "runs": {NAME:
{"per_query": {QID: row}, "mean": {... "queries": n}, "mean_covers": {...}, "audit":
{QID: ...}}}, "problems": [{"qid", "level", "code", "message", "run"}], and "two_stage"
when two stages were given}. Rows may carry extra keys (e.g. a recall interval added by a
later step); the renderers show them through `Column`s passed as `extra_columns`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from workbench.audit import UNDEFINED_CODES, audit, two_stage
from workbench.metrics import RankingLike, evaluate

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
) -> dict[str, object]:
    """Score and audit each run (name -> qid -> ranking) at every k; audit problems are
    collected per run at the first k. `stages` = (stage-1 rankings, stage-2 rankings) adds
    the two-stage view with keep-n = the first k."""
    ks = [ks] if isinstance(ks, int) else list(ks)
    out_runs: dict[str, object] = {}
    problems: list[dict[str, object]] = []
    for name, rankings in runs.items():
        result = evaluate(qrels, rankings, ks, rel_threshold, gain)
        checked = audit(qrels, rankings, ks[0], rel_threshold, corpus_size, passages)
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
        for message in (run_warnings or {}).get(name, ()):
            problems.append(_with_run(
                {"qid": None, "level": "warning", "code": "run_file", "message": message}, name
            ))
        problems.extend(_with_run(p, name) for p in checked.problems)
    report: dict[str, object] = {
        "k": ks[0],
        "ks": ks,
        "rel_threshold": rel_threshold,
        "gain": gain,
        "runs": out_runs,
        "problems": problems,
    }
    if stages is not None:
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
    for p in report["problems"]:  # type: ignore[union-attr]
        if p["level"] == "error" and (strict or p["code"] in UNDEFINED_CODES):
            return 1
    return 0


# --- rendering -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Column:
    """One table column: a header, the row key it shows, and how a value is written."""

    header: str
    key: str
    fmt: Callable[[object], str]


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


def _table(header: list[str], body: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        header = [c.replace("|", "\\|") for c in header]
        body = [[c.replace("|", "\\|") for c in r] for r in body]
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return lines
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()
    return [line(header), *(line(r) for r in body)]


def _capped_note(run: Mapping[str, object], k: int) -> str | None:
    """The capped-recall lesson, only when some query has |Rel| > k (else both agree)."""
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
        capped += recall * rel / min(rel, k)
    n = len(in_mean)
    shown = ", ".join(over[:5]) + (" ..." if len(over) > 5 else "")
    return (
        f"note: {len(over)} quer{'y has' if len(over) == 1 else 'ies have'} more relevant "
        f"documents than k = {k} ({shown}): R@{k} cannot reach 1 there (see ceil@{k}). "
        f"Dividing by min(|Rel|, k) would report mean R@{k} {capped / n:.3f}, "
        f"not the honest {honest / n:.3f}."
    )


def _problem_lines(problems: Sequence[Mapping[str, object]], markdown: bool,
                   per_code: int = 5) -> list[str]:
    if not problems:
        return []
    errors = sum(1 for p in problems if p["level"] == "error")
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
        text = f"{p['level']} [{p['code']}] {where}{p['message']}"
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
    cols = columns_for(ks, extra_columns)
    out: list[str] = []
    problems: Sequence[Mapping[str, object]] = report["problems"]  # type: ignore[assignment]
    runs: Mapping[str, Mapping[str, object]] = report["runs"]  # type: ignore[assignment]
    for name, run in runs.items():
        rows: Mapping[str, Row] = run["per_query"]  # type: ignore[assignment]
        mean: Row = run["mean"]  # type: ignore[assignment]
        title = (
            f"run {name}: k = {', '.join(map(str, ks))}, relevant = grade >= "
            f"{report['rel_threshold']}, {report['gain']} gain"
        )
        out.append(f"## {title}" if markdown else title)
        out.append("")
        body = [[qid, *(c.fmt(row.get(c.key)) for c in cols)] for qid, row in rows.items()]
        body.append([f"mean ({mean['queries']} q)", *(c.fmt(mean.get(c.key)) for c in cols)])
        out += _table(["query", *(c.header for c in cols)], body, markdown)
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


def _two_stage_lines(
    staged: Mapping[str, object], problems: Sequence[Mapping[str, object]], markdown: bool
) -> list[str]:
    n = staged["keep_n"]
    fetch = staged["fetch_k"] if staged["fetch_k"] is not None else "depth"
    title = (
        f"two stages: {staged['stage1']} (fetch-K = {fetch}) -> {staged['stage2']} "
        f"(keep-n = {n})"
    )
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
    body.append([f"mean ({mean['queries']} q)", "", "", fixed3(mean["fetch_recall"]),
                 fixed3(mean["keep_recall"]), ""])
    header = ["query", "|Rel|", "K", "fetch-recall@K", f"keep-recall@{n}", "dropped by stage 2"]
    out += _table(header, body, markdown)
    label = f"{staged['stage1']} -> {staged['stage2']}"
    mine = [p for p in problems if p.get("run") == label]
    if mine:
        out += ["", *_problem_lines(mine, markdown)]
    return out
