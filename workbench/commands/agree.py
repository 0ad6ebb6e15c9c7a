"""`workbench agree`: agreement between annotators and of model judges against humans."""

from __future__ import annotations

import argparse
import json

from workbench.core.display import inline
from workbench.core.model import Role

DISAGREEMENTS_SHOWN = 20


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, help="the judgments store (SQLite)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument(
        "--rel-threshold", type=int, default=1, help="grade >= this is relevant (binary kappa)"
    )
    parser.add_argument(
        "--show", type=int, default=DISAGREEMENTS_SHOWN, help="disagreements listed (default 20)"
    )


def run(args: argparse.Namespace) -> int:
    from workbench.core.agreement import agreement_report
    from workbench.store import open_store

    with open_store(args.db) as store:
        report = agreement_report(
            store.current_judgments(), store.grade_scale(), args.rel_threshold
        )
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print("\n".join(format_report(report, args.show)))
    return 0


def _num(value: float | None) -> str:
    return "undef" if value is None else f"{value:.3f}"


def _with_ci(value: float | None, ci: list[float] | None, reason: str | None = None) -> str:
    """A kappa with its CI; in its place, why there is none (too few items, one grade only)."""
    if value is None:
        return reason or "undef"
    return f"{value:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{value:.3f}"


def _flag(figures: dict) -> str:
    """`below_bar` also holds undefined figures (too few items, chance agreement 1): say which
    is which, and why a figure is missing."""
    if figures["meets_bar"] and not figures["below_bar"]:
        return "ok"
    reasons = figures.get("reasons", {})
    undefined = [name for name in figures["below_bar"] if figures.get(name) is None]
    below = [name for name in figures["below_bar"] if name not in undefined]
    parts = ["BELOW 0.6: " + ", ".join(below)] if below else []
    by_reason: dict[str, list[str]] = {}
    for name in undefined:
        by_reason.setdefault(reasons.get(name, "undefined"), []).append(name)
    parts += [f"no {', '.join(names)}: {why}" for why, names in by_reason.items()]
    return "; ".join(parts)


def _confusion(matrix: list[list[int]], scale: list[int], rows: str, cols: str) -> list[str]:
    width = max(5, *(len(str(v)) for row in matrix for v in row))
    lines = [f"      rows {rows}, columns {cols}"]
    lines.append("      " + " " * 4 + "".join(f"{g:>{width + 1}}" for g in scale))
    for grade, row in zip(scale, matrix, strict=True):
        lines.append(f"      {grade:>3} " + "".join(f"{v:>{width + 1}}" for v in row))
    return lines


def _figures(name: str, figures: dict, scale: list[int], rows: str, cols: str) -> list[str]:
    """One pair's block; `name`, `rows` and `cols` are shown as given (already visible)."""
    reasons = figures.get("reasons", {})
    lines = [f"  {name}   n={figures['n']}   {_flag(figures)}"]
    for label, key in (
        ("kappa          ", "kappa"),
        ("weighted kappa ", "weighted_kappa"),
        ("binary kappa   ", "binary_kappa"),
    ):
        value = _with_ci(figures[key], figures[f"{key}_ci"], reasons.get(key))
        lines.append(f"    {label} {value}")
    if figures["n"]:
        lines.append(f"    exact agreement {figures['agreement']:.3f}")
        lines.extend(_confusion(figures["confusion"], scale, rows, cols))
        low = [q for q, f in figures["per_query"].items() if f["agreement"] < 1.0]
        if low:
            shown = ", ".join(
                f"{inline(q)} {figures['per_query'][q]['agreement']:.2f} "
                f"(n={figures['per_query'][q]['n']})"
                for q in low[:8]
            )
            more = f" ... and {len(low) - 8} more" if len(low) > 8 else ""
            lines.append(f"    queries with disagreement (exact agreement, n): {shown}{more}")
    return lines


def format_report(report: dict, show: int = DISAGREEMENTS_SHOWN) -> list[str]:
    """The terminal table: pairs, Fleiss, model judges, then the disagreement list."""
    scale = report["grade_scale"]
    lines = [
        f"Agreement (grade scale {scale}, relevant at grade >= {report['rel_threshold']}, "
        f"bar kappa >= {report['bar']}"
        + (
            f"; no kappa on fewer than {report['min_shared_items']} shared items)"
            if report.get("min_shared_items")
            else ")"
        ),
        f"  95% CIs: {report['ci_method']}",
    ]
    if not report["pairs"] and not any(j["against"] for j in report["judges"]):
        roles = list(report["annotators"].values())
        humans, oracles = roles.count(Role.HUMAN), roles.count(Role.ORACLE)
        judges = len(report["judges"])
        left_out = (
            f" {oracles} oracle annotator(s) (workbench simulate) are left out: they answer"
            " from existing qrels, so their agreement measures nothing."
            if oracles
            else ""
        )
        lines.append(
            f"No overlap: no item was graded by two human annotators ({humans} human"
            f" annotator{'s' * (humans != 1)}, {judges} model judge{'s' * (judges != 1)})."
            f" Agreement needs shared items.{left_out}"
        )
        return lines
    if report["pairs"]:
        lines.append("")
        lines.append("Human pairs")
    for pair in report["pairs"]:
        a, b = map(inline, pair["annotators"])
        lines.extend(_figures(f"{a} vs {b}", pair, scale, a, b))
    fleiss = report["fleiss"]
    if fleiss:
        if fleiss["kappa"] is None:
            verdict = fleiss.get("reason") or "undef"
        else:
            verdict = (
                f"{_with_ci(fleiss['kappa'], fleiss['kappa_ci'])} "
                f"{'ok' if fleiss['meets_bar'] else 'BELOW 0.6'}"
            )
        lines.append("")
        lines.append(
            f"Fleiss' kappa ({', '.join(map(inline, fleiss['annotators']))}; items all graded, "
            f"n={fleiss['n']}) {verdict}  ({fleiss['ci_method']})"
        )
    for judge in report["judges"]:
        judge_name = inline(judge["judge"])
        lines.append("")
        lines.append(f"Model judge {judge_name} ({judge['labels']} labels)")
        for against in judge["against"]:
            human = inline(against["annotator"])
            name = f"vs {human} ({against['human_labels']} human labels)"
            lines.extend(_figures(name, against, scale, human, judge_name))
        resolved = judge["resolved"]
        if resolved["n"]:
            name = (
                f"vs resolved human grade ({resolved['human_labels']} resolved, "
                f"{resolved['unresolved']} unresolved)"
            )
            lines.extend(_figures(name, resolved, scale, "resolved", judge_name))
        if not judge["against"]:
            lines.append("  no item shared with a human annotator")
    found = report["disagreements"]
    lines.append("")
    lines.append(f"Disagreements between humans: {len(found)} (widest spread first)")
    for d in found[:show]:
        grades = " ".join(f"{inline(a)}={g}" for a, g in sorted(d["grades"].items()))
        adjudicated = "" if d["adjudicated"] is None else f"  adjudicated {d['adjudicated']}"
        lines.append(
            f"  {inline(d['qid'])}  {inline(d['docid'])}  {grades}"
            f"  spread {d['spread']}{adjudicated}"
        )
    if len(found) > show:
        lines.append(f"  ... and {len(found) - show} more (--json lists all)")
    return lines
