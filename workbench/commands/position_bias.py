"""`workbench position-bias`: does a pairwise judge's verdict survive swapping the order?"""

from __future__ import annotations

import argparse
import json

from workbench.core.display import inline

PAIRS_SHOWN = 20


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE",
        help='JSONL {"qid", "a", "b", "first": "a"|"b", "preferred": "a"|"b"|"tie"}; '
        '"a"/"b" name documents, "first" says which was shown first',
    )
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")


def _pct(value: float | None) -> str:
    return "undef" if value is None else f"{value:.1%}"


def run(args: argparse.Namespace) -> int:
    from workbench.core.position_bias import position_bias_report
    from workbench.formats.comparisons import parse_comparisons
    from workbench.formats.textio import read_text

    report = position_bias_report(parse_comparisons(read_text(args.file), str(args.file)))
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    ci = report["first_position_rate_ci"]
    ci_text = f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else ""
    lines = [
        f"{inline(args.file)}: {report['comparisons']} comparisons, {report['pairs']} pairs, "
        f"{report['both_orders']} judged in both orders",
        f"  position consistency   {_pct(report['consistency'])} "
        f"({report['consistent']} of {report['both_orders']} keep their verdict when swapped)",
        f"  inconsistent pairs     {report['inconsistent']}: "
        f"{report['inconsistent_favouring_first']} went to whichever was first, "
        f"{report['inconsistent_favouring_second']} to whichever was second",
        f"  first-position rate    {_pct(report['first_position_rate'])}{ci_text} of "
        f"{report['decisive']} decisive verdicts (unbiased: 50%)",
        f"  tie rate               {_pct(report['tie_rate'])}",
    ]
    flipped = [p for p in report["per_pair"] if p["consistent"] is False]
    if flipped:
        lines.append("  pairs whose verdict changes with the order (swap-averaged score of a):")
        lines.extend(
            f"    {inline(p['qid'])}  a={inline(p['a'])} b={inline(p['b'])}  {p['a_score']:.2f}"
            for p in flipped[:PAIRS_SHOWN]
        )
        if len(flipped) > PAIRS_SHOWN:
            lines.append(f"    ... and {len(flipped) - PAIRS_SHOWN} more (--json lists all)")
    one = report["one_order_only"]
    if one:
        lines.append(
            f"  judged in one order only: {len(one)} pairs (left out of consistency), e.g. "
            + ", ".join(
                f"{inline(o['qid'])} {inline(o['first'])}>{inline(o['second'])} (line {o['line']})"
                for o in one[:5]
            )
        )
    print("\n".join(lines))
    return 0
