"""`workbench eval`: score runs against qrels, a golden.yaml or a judgments store, with the
denominator audit and, when coverage is known, recall under the estimated |Rel| and its gate.

Exit 0 when clean; 1 when a figure is undefined, a run's mean is below a `--fail-under` floor,
or with --strict on any error-level problem (an incomplete judged set included); 2 for
unusable input. Imports nothing heavy: it must start fast (numpy, for the column-wise reader of
TREC runs and a store's coverage; no store, YAML, models or app for TREC files)."""

from __future__ import annotations

import argparse
import os
import sys

from workbench.commands import (
    add_chunk_options,
    add_output_options,
    add_passage_options,
    add_rel_threshold_option,
    finite_number,
    output_format,
    passage_rule,
    reads_study_once,
    resolve_rel_threshold,
    text_width,
)
from workbench.core.exit_codes import ExitCode
from workbench.core.measures.eval_options import (
    MAX_CUTOFF,
    complete_at_problem,
    cutoffs_of_text,
    rel_threshold_problem,
)
from workbench.core.store_url import StoreLocation


# long: the command's option declarations, one after another
def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--qrels",
        required=True,
        type=StoreLocation,
        metavar="FILE",
        help="TREC qrels (qid 0 docid grade), a golden.yaml, or a judgments "
        "store (SQLite, e.g. study.db: its resolved judgments, as export "
        "writes them, and its coverage)",
    )
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="FILE",
        help="TREC run (qid Q0 docid rank score tag); repeat for several",
    )
    parser.add_argument(
        "-k",
        action="append",
        metavar="K",
        help="cutoff; repeat or comma-separate for several (default 10)",
    )
    add_output_options(parser, ("table", "markdown", "html", "json"))
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on any error-level audit problem; when coverage is known "
        "(a store, or a golden.yaml with a coverage summary) a scored query "
        "whose judged relevant set is incomplete is such an error (the gate)",
    )
    parser.add_argument(
        "--assume-complete",
        action="store_true",
        help="state that the qrels are complete (every relevant document judged: a collection "
        "judged to completion): TREC qrels carry no completeness measure, which --strict and "
        "--fail-under otherwise fail on; the output names the assumption",
    )
    parser.add_argument(
        "--fail-under",
        action="append",
        metavar="MEASURE=FLOOR",
        help="exit 1 when a run's mean of MEASURE (e.g. R@10, nDCG@10, MRR) is below FLOOR "
        "(0-1); repeat or comma-separate for several. With a coverage estimate a floor on R@k "
        "must also be cleared by the lower end of its interval under the estimated |Rel|",
    )
    parser.add_argument(
        "--complete-at",
        type=finite_number,
        metavar="X",
        help="with coverage: a query is complete when its completeness lower "
        "bound reaches X (default: the threshold the summary recorded, 0.8 "
        "unless set in `workbench coverage`/export)",
    )
    add_rel_threshold_option(parser)
    reads_study_once(parser)  # a store's threshold is read with its judgments
    parser.add_argument(
        "--gain",
        choices=("linear", "exponential"),
        default="linear",
        help="nDCG gain: the grade, or 2^grade - 1 (default linear)",
    )
    parser.add_argument(
        "--corpus",
        metavar="PATH",
        help="corpus (BEIR jsonl or text folder): label coverage over the "
        "corpus size and content-duplicate checks; a folder is cut into passages as the "
        "store or golden.yaml given as --qrels was pooled",
    )
    add_passage_options(parser)
    add_chunk_options(parser)
    judge_help = "with a store: P@k, R@k, nDCG@k from this model judge, corrected by humans"
    parser.add_argument("--judge", metavar="NAME", help=judge_help)
    parser.add_argument(
        "--target",
        metavar="MEASURE@K:WIDTH",
        help="with --judge: say how many human labels the interval of this measure (P, R or "
        "nDCG at one of the -k cutoffs) would need to be at most WIDTH wide, as a study's "
        "target says it (e.g. P@10:0.1)",
    )
    parser.add_argument(  # the former spelling, a hidden alias: WIDTH for every measure
        "--target-width", type=finite_number, metavar="W", help=argparse.SUPPRESS
    )
    parser.add_argument("--stage1", metavar="RUN", help="stage-1 (retriever, fetch-K) run")
    parser.add_argument("--stage2", metavar="RUN", help="stage-2 (reranker, keep-n) run")
    parser.add_argument(
        "--fetch-k",
        type=int,
        metavar="K",
        help="stage-1 depth K (default: each stage-1 ranking's depth)",
    )


def run(args: argparse.Namespace) -> int:
    from workbench.core.evaluation.eval_report import exit_code, exit_reasons
    from workbench.flows.evaluation import EvalRequest, evaluate_request

    ks, floors = _checked_options(args)
    _keep_freed_memory()
    if args.judge:
        return _judge_corrected(args, ks)
    if args.chunks:  # chunks are graded before the judgments' own reading says it
        resolve_rel_threshold(args, now=True)
    request = EvalRequest(
        qrels=args.qrels,
        runs=list(args.run or ()),
        ks=ks,
        rel_threshold=args.rel_threshold,
        gain=args.gain,
        complete_at=args.complete_at,
        corpus=args.corpus,
        passages=passage_rule(args) if args.corpus else None,
        stage1=args.stage1,
        stage2=args.stage2,
        fetch_k=args.fetch_k,
        strict=args.strict,
        floors=floors,
        assume_complete=args.assume_complete,
        chunks=list(args.chunks or ()),
        text_by_grade=args.text_by_grade,
    )
    if request.chunks:
        from workbench.flows.chunked import evaluate_chunked

        report = evaluate_chunked(request)
    else:
        report = evaluate_request(request)
    fmt = output_format(args)
    code = exit_code(report, args.strict)
    if fmt == "json":
        from workbench.core.display import json_line

        # json.dumps escapes C0 controls only; json_line also escapes C1 and bidi controls
        sys.stdout.write(json_line(report.to_json()) + "\n")
    else:
        from workbench.reports.evaluation import render

        sys.stdout.write(render(report, fmt, text_width(args)))
        if code:
            why = "; ".join(exit_reasons(report, args.strict))
            print(f"workbench eval: exit 1 ({why})", file=sys.stderr)
    return code


def _judge_corrected(args: argparse.Namespace, ks: list[int]) -> int:
    """`--judge NAME`: the corrected figures (`flows.corrected`), rendered; exit 1 when a
    corrected P@k has no estimate."""
    from workbench.core.display import json_line
    from workbench.core.errors import InputError
    from workbench.flows.corrected import judge_corrected_runs
    from workbench.flows.runs import read_runs
    from workbench.reports.corrected import render
    from workbench.store import is_store

    if not is_store(args.qrels):
        raise InputError([f"--judge: --qrels must be a judgments store, not {args.qrels}"])
    read = read_runs(args.run)
    problems = list(read.problems)
    if not read.runs:
        problems.append("--judge: give at least one --run")
    if args.stage1 or args.stage2:
        problems.append("--judge: the corrected metrics take --run, not --stage1/--stage2")
    width, key = _target(args, ks, problems)
    if problems:
        raise InputError(problems)
    found = judge_corrected_runs(
        args.qrels, read.runs, args.judge, ks, args.rel_threshold, width, key
    )
    fmt = output_format(args)
    if fmt == "json":
        said = [
            {"level": str(p.level), "code": p.code, "message": p.message} for p in found.warnings
        ]
        out = {"judge": args.judge, "design": found.design,
               "runs": [r.to_json() for r in found.rows], "problems": said}  # fmt: skip
        sys.stdout.write(json_line(out) + "\n")
    else:
        notes = [f"{p.level} [{p.code}] {p.message}" for p in found.warnings]
        shown = render(found.rows, args.judge, width, fmt, notes, text_width(args),
                       found.notes, key)  # fmt: skip
        sys.stdout.write(shown)
    estimated = all(r.estimate is not None for r in found.rows if r.measure == "P")
    return ExitCode.OK if estimated else ExitCode.FAILED


def _target(
    args: argparse.Namespace, ks: list[int], problems: list[str]
) -> tuple[float | None, str | None]:
    """The interval width `--judge` is asked to forecast and the one measure it is asked of
    (`--target M@K:W`; None: every measure, `--target-width W`); each misuse in `problems`."""
    if args.target is not None and args.target_width is not None:
        problems.append("--target and --target-width: give one (--target M@K:W)")
        return None, None
    if args.target_width is not None:
        if not 0 < args.target_width < 1:
            problems.append("--target-width: an interval width between 0 and 1")
        return args.target_width, None
    if args.target is None:
        return None, None
    from workbench.core.study import parse_target

    try:
        target = parse_target(args.target)
    except ValueError as exc:
        problems.append(str(exc))
        return None, None
    if target.k not in ks:
        problems.append(f"--target {target}: its cutoff is none of -k {','.join(map(str, ks))}")
    if not target.width < 1:
        problems.append(f"--target {target}: an interval width between 0 and 1")
    return target.width, target.key


def _checked_options(args: argparse.Namespace) -> tuple[list[int], dict[str, float]]:
    """The cutoffs and the floors, once every option is checked (InputError naming each
    misuse)."""
    from workbench.core.errors import InputError
    from workbench.core.evaluation.floors import floor_problems, parse_floor_specs

    try:
        ks = cutoffs_of_text(args.k)
    except ValueError as exc:
        raise InputError([str(exc)]) from None
    usage: list[str] = []
    floors: dict[str, float] = {}
    try:
        floors = parse_floor_specs(args.fail_under or ())
    except ValueError as exc:
        usage += str(exc).splitlines()
    usage += floor_problems(floors, ks)
    if args.target is not None and not args.judge:
        usage.append("--target: with --judge (the human labels a corrected measure needs)")
    if args.judge and args.chunks:
        usage.append("--chunks: not with --judge (its corrected figures are of the passages)")
    if args.text_by_grade and not args.chunks:
        usage.append("--text-by-grade: goes with --chunks (it weights the text figures)")
    if args.assume_complete and args.judge:
        usage.append("--assume-complete: not with --judge (a store carries its own coverage)")
    if floors and args.judge:
        usage.append("--fail-under: not with --judge (its corrected figures are not the means)")
    if args.rel_threshold is not None:  # None: the study's own, read with it
        usage += filter(None, [rel_threshold_problem(args.rel_threshold, "--rel-threshold")])
    if bool(args.stage1) != bool(args.stage2):
        usage.append("--stage1 and --stage2 go together")
    if args.fetch_k is not None and not 1 <= args.fetch_k <= MAX_CUTOFF:
        usage.append(f"--fetch-k {args.fetch_k}: must be from 1 to {MAX_CUTOFF:_}")
    if not args.run and not args.stage2:
        usage.append("give at least one --run FILE (or --stage1 and --stage2)")
    usage += filter(None, [complete_at_problem(args.complete_at, "--complete-at")])
    if usage:
        raise InputError(usage)
    return ks, floors


def _keep_freed_memory() -> None:
    """Let malloc keep freed memory for reuse (glibc's mallopt; elsewhere nothing happens), so
    that the vectorised reader's temporaries, block after block, touch no fresh pages: a tenth
    of eval's time on a big run. And numpy's arrays in plain pages (unless the user set
    NUMPY_MADVISE_HUGEPAGE): on a busy machine a fault on a huge page cost eval 0.1-0.4 s of
    system time, on one run in two. Set by the command only (which exits when done), never by
    the Python API inside a user's process."""
    if "numpy" not in sys.modules:  # numpy reads it when imported
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: return freed memory only past 1 GiB
        libc.mallopt(-3, 1 << 28)  # M_MMAP_THRESHOLD: blocks up to 256 MiB come from the heap
    except (OSError, AttributeError, TypeError):  # no glibc (macOS, Windows): nothing to tune
        pass
