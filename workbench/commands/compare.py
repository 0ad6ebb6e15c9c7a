"""`workbench compare`: runs against a baseline (the first --run), measure by measure, with a
paired test over the queries, Holm's correction across runs × measures, and for R@k what the
uncertainty of |Rel| does to the delta when the qrels carry coverage.

Exit 0; 1 with --fail-on-regression when a measure drops significantly; 2 for unusable input.
Imports nothing heavy at start (numpy only for the randomization test, inside `run`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from workbench.commands import (
    add_chunk_options,
    add_output_options,
    add_passage_options,
    add_rel_threshold_option,
    finite_number,
    output_format,
    text_width,
)
from workbench.core.exit_codes import ExitCode
from workbench.core.measures.eval_options import rel_threshold_problem
from workbench.core.measures.measure_key import parse_key
from workbench.core.measures.significance import DEFAULT_PERMUTATIONS, DEFAULT_SEED, TESTS
from workbench.core.store_url import StoreLocation

if TYPE_CHECKING:
    from workbench.core.evaluation.eval_report import EvalReport

MIN_PERMUTATIONS = 1_000
MAX_PERMUTATIONS = 10_000_000


# long: the command's option declarations, one after another
def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--qrels",
        required=True,
        type=StoreLocation,
        metavar="FILE",
        help="TREC qrels, a golden.yaml or a judgments store (as for workbench eval)",
    )
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="FILE",
        help="TREC run; the first is the baseline, repeat for each run to compare with it",
    )
    parser.add_argument(
        "-k", action="append", metavar="K", help="cutoff; repeat or comma-separate (default 10)"
    )
    parser.add_argument(
        "--measure",
        action="append",
        metavar="M",
        help="measure to compare: nDCG@10, R (at every k), MRR, ...; repeat or comma-separate "
        "(default nDCG, R, P at every k, and MRR)",
    )
    parser.add_argument(
        "--test",
        choices=TESTS,
        default=TESTS[0],
        help="paired test (default randomization: sign flips, --permutations, --seed)",
    )
    parser.add_argument(
        "--alpha",
        type=finite_number,
        default=0.05,
        help="significance level after Holm (default 0.05)",
    )
    parser.add_argument(
        "--permutations",
        type=int,
        default=DEFAULT_PERMUTATIONS,
        metavar="N",
        help="randomization test: sign patterns drawn (default %(default)s; all of them when "
        "there are fewer)",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help="randomization test: the seed (%(default)s)"
    )
    parser.add_argument(
        "--top", type=int, default=3, metavar="N", help="queries that moved most shown (default 3)"
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when any measure of any run drops significantly (after Holm)",
    )
    add_rel_threshold_option(parser)
    parser.add_argument(
        "--gain", choices=("linear", "exponential"), default="linear", help="nDCG gain"
    )
    add_output_options(parser, ("table", "markdown", "html", "json"), "the comparison")
    add_chunk_options(parser)
    parser.add_argument(
        "--corpus",
        metavar="FOLDER",
        help="with --chunks: the text folder the chunks cut and the judged passages were cut "
        "from. With --chunks the default measures are text_R and text_P at every k, the ones "
        "that stay comparable between chunkings",
    )
    add_passage_options(parser)


def run(args: argparse.Namespace) -> int:
    from workbench.core.errors import InputError
    from workbench.core.evaluation.eval_report import eval_report

    keys, ks = _checked_options(args)
    problems: list[str] = []
    if args.chunks:
        return _compared(args, _chunked_report(args, ks), keys)
    from workbench.flows.evaluation import alias_passages
    from workbench.flows.judged import read_judgments

    # the coverage summary's own threshold: no --complete-at here
    judged = read_judgments(args.qrels, rel_threshold=args.rel_threshold, gain=args.gain)
    problems += judged.problems
    qrels, aliases, coverage, judges = judged.qrels, judged.aliases, judged.coverage, judged.judges
    runs, files = _read_runs(args.run, problems)
    if problems or qrels is None:
        raise InputError(problems)
    report = eval_report(
        qrels, runs, ks, rel_threshold=args.rel_threshold, gain=args.gain,
        coverage=coverage, aliases=aliases, measures=_measure_names(keys), judges=judges,
        passages=alias_passages(aliases),  # the audit eval runs on the same files
    )  # fmt: skip
    return _compared(args, report, keys, files)


def _compared(
    args: argparse.Namespace,
    report: EvalReport,
    keys: list[str],
    files: dict[str, str] | None = None,
) -> int:
    """Compare the runs of `report` on `keys`, print it, and the exit code."""
    from workbench.core.display import inline
    from workbench.core.evaluation.comparison import compare_report

    files = files or dict(zip(report.runs, args.run, strict=False))
    _check_coverage_of_queries(report, files, str(args.qrels), args.rel_threshold)
    compared = compare_report(
        report, keys, args.test, args.alpha, args.permutations, args.seed, args.top, files
    )
    fmt = output_format(args)
    if fmt == "json":
        from workbench.core.display import json_line

        out = compared.to_json()
        if report.chunking is not None:
            out["chunks"] = report.chunking.to_json()
        sys.stdout.write(json_line(out) + "\n")
    else:
        from workbench.reports.compare import render

        sys.stdout.write(render(compared, fmt, text_width(args), report.chunking))
    if args.fail_on_regression and compared.regressions:
        drops = ", ".join(
            f"{inline(c.run)} {c.measure} {c.delta:+.3f}" for c in compared.regressions
        )
        print(f"workbench compare: exit 1 (significant drops: {drops})", file=sys.stderr)
        return ExitCode.FAILED
    return ExitCode.OK


def _chunked_report(args: argparse.Namespace, ks: list[int]) -> EvalReport:
    """The runs over their chunks scored as `eval --chunks` scores them, the text figures
    beside each query's others."""
    from workbench.commands import passage_rule
    from workbench.flows.chunked import evaluate_chunked, with_text_values
    from workbench.flows.evaluation import EvalRequest

    request = EvalRequest(
        qrels=args.qrels, runs=list(args.run), ks=ks, rel_threshold=args.rel_threshold,
        gain=args.gain, corpus=args.corpus, passages=passage_rule(args) if args.corpus else None,
        chunks=list(args.chunks), text_by_grade=args.text_by_grade,
    )  # fmt: skip
    return with_text_values(evaluate_chunked(request))


def _checked_options(args: argparse.Namespace) -> tuple[list[str], list[int]]:
    """(measure keys, cutoffs), once every option is checked (InputError naming each misuse)."""
    from workbench.core.errors import InputError
    from workbench.core.evaluation.comparison import chosen_keys
    from workbench.core.measures.eval_options import cutoffs_of_text
    from workbench.core.measures.text_measures import compared_text_keys

    usage: list[str] = []
    ks: list[int] = [10]
    try:
        ks = cutoffs_of_text(args.k)
    except ValueError as exc:
        usage.append(str(exc))
    specs = [p.strip() for spec in args.measure or [] for p in spec.split(",") if p.strip()]
    text_keys, others, text_problems = compared_text_keys(specs or ["text_R", "text_P"], ks)
    usage += text_problems
    keys: list[str] = []
    if others or not args.chunks:
        keys, ks, measure_problems = chosen_keys(others, ks, bool(args.k))
        usage += measure_problems
    if args.chunks:
        keys = text_keys + keys
        text_ks = [parse_key(k).cutoff for k in text_keys]
        ks += [k for k in dict.fromkeys(text_ks) if k is not None and k not in ks]
        if others and len(set(args.chunks)) > 1:
            usage.append(f"--measure {', '.join(others)}: runs over different chunkings compare on "
                         "text figures only (text_R, text_P, text_unjudged): |Rel| counted in "
                         "chunks differs from one chunking to another")  # fmt: skip
    elif text_keys and specs:
        usage.append(f"--measure {', '.join(text_keys)}: text figures go with --chunks")
    if len(args.run) < 2:
        usage.append(
            f"give at least two --run FILE (the first is the baseline); got {len(args.run)}"
        )
    if not 0 < args.alpha < 1:  # also refuses nan
        usage.append(f"--alpha {args.alpha}: must be between 0 and 1 (e.g. 0.05)")
    if not MIN_PERMUTATIONS <= args.permutations <= MAX_PERMUTATIONS:
        usage.append(
            f"--permutations {args.permutations}: must be {MIN_PERMUTATIONS:,} to "
            f"{MAX_PERMUTATIONS:,} (fewer cannot show p below 0.001)"
        )
    if not 0 <= args.seed < 2**63:
        usage.append(f"--seed {args.seed}: must be an integer from 0 to 2**63 - 1")
    if not 0 <= args.top <= 100:
        usage.append(f"--top {args.top}: must be 0 to 100")
    usage += filter(None, [rel_threshold_problem(args.rel_threshold, "--rel-threshold")])
    if usage:
        raise InputError(usage)
    return keys, ks


def _measure_names(keys: list[str]) -> list[str]:
    """The registry names behind the keys (`nDCG@10` -> `nDCG`), each once."""
    names: list[str] = []
    for key in keys:
        name = parse_key(key).name
        if name not in names:
            names.append(name)
    return names


def _read_runs(
    paths: list[str], problems: list[str]
) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, str]]:
    """Each run's scores under its tag, and the file of each tag. A file given twice, or two
    files with one tag, are problems: a comparison names each run by its tag."""
    from workbench.core.display import inline
    from workbench.core.errors import InputError
    from workbench.formats import read_run

    runs: dict[str, dict[str, dict[str, float]]] = {}
    files: dict[str, str] = {}
    seen: dict[tuple[int, int], str] = {}
    for path in paths:
        try:
            identity = os.stat(path)
        except OSError:
            identity = None
        if identity is not None:
            key = (identity.st_dev, identity.st_ino)
            if key in seen:
                problems.append(f"--run {path}: given twice (also as {seen[key]})")
                continue
            seen[key] = path
        try:
            loaded = read_run(path)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        if loaded.name in runs:
            problems.append(
                f"{path}: run tag {inline(loaded.name)!r} (column 6) is also the tag of "
                f"{files[loaded.name]}: a comparison names runs by their tags, give each its own"
            )
            continue
        runs[loaded.name] = loaded.scores
        files[loaded.name] = path
    return runs, files


def _check_coverage_of_queries(
    report: EvalReport, files: dict[str, str], qrels: str, rel_threshold: int
) -> None:
    """Exit 2 when the qrels have no query to pair, or a run ranks none of them."""
    from workbench.core.errors import InputError

    first = next(iter(report.runs.values()))
    queries = first.mean_covers.queries
    if not queries:
        raise InputError([
            f"{qrels}: no query has a judged relevant document (grade >= {rel_threshold}): "
            "there is nothing to compare on"
        ])  # fmt: skip
    problems = [
        f"{files[name]}: ranks none of the {len(queries)} queries of {qrels} that have a "
        "judged relevant document (wrong qrels, or query ids spelled differently?)"
        for name, result in report.runs.items()
        if len(result.mean_covers.missing_from_run) == len(queries)
    ]
    if problems:
        raise InputError(problems)
