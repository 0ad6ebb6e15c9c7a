"""`workbench eval`: score runs against qrels or a golden.yaml, with the denominator audit.

Exit 0 when clean; 1 when a figure is undefined, or with --strict on any error-level
problem; 2 for unusable input. Imports nothing heavy: it must start fast."""

from __future__ import annotations

import argparse
import json
import sys


def _ks(values: list[str] | None) -> list[int]:
    ks: list[int] = []
    for value in values or ["10"]:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                k = int(part)
            except ValueError:
                raise argparse.ArgumentTypeError(f"-k {part!r} is not an integer") from None
            if k < 1:
                raise argparse.ArgumentTypeError(f"-k {k} must be >= 1")
            if k not in ks:
                ks.append(k)
    if not ks:
        raise argparse.ArgumentTypeError("-k needs at least one cutoff")
    return ks


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qrels", required=True, metavar="FILE",
                        help="TREC qrels (qid 0 docid grade) or a golden.yaml")
    parser.add_argument("--run", action="append", default=[], metavar="FILE",
                        help="TREC run (qid Q0 docid rank score tag); repeat for several")
    parser.add_argument("-k", action="append", metavar="K",
                        help="cutoff; repeat or comma-separate for several (default 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--format", choices=("table", "markdown", "json"), default=None,
                        help="output format (default table; --json = --format json)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 on any error-level audit problem")
    parser.add_argument("--rel-threshold", type=int, default=1, metavar="G",
                        help="lowest grade that counts as relevant (default 1)")
    parser.add_argument("--gain", choices=("linear", "exponential"), default="linear",
                        help="nDCG gain: the grade, or 2^grade - 1 (default linear)")
    parser.add_argument("--corpus", metavar="PATH",
                        help="corpus (BEIR jsonl or text folder): label coverage over the "
                        "corpus size and content-duplicate checks")
    parser.add_argument("--stage1", metavar="RUN", help="stage-1 (retriever, fetch-K) run")
    parser.add_argument("--stage2", metavar="RUN", help="stage-2 (reranker, keep-n) run")
    parser.add_argument("--fetch-k", type=int, metavar="K",
                        help="stage-1 depth K (default: each stage-1 ranking's depth)")


def _unique(name: str, path: str, taken: dict[str, object]) -> str:
    if name not in taken:
        return name
    candidate = f"{name} ({path})"
    i = 2
    while candidate in taken:
        candidate = f"{name} ({path} #{i})"
        i += 1
    return candidate


def run(args: argparse.Namespace) -> int:
    from workbench.errors import InputError
    from workbench.formats import load_judgments, read_run
    from workbench.report import eval_report, exit_code, render

    try:
        ks = _ks(args.k)
    except argparse.ArgumentTypeError as exc:
        raise InputError([str(exc)]) from None
    usage: list[str] = []
    if args.rel_threshold < 1:
        usage.append(f"--rel-threshold {args.rel_threshold}: must be >= 1 (grade 0 is judged "
                     "non-relevant)")
    if bool(args.stage1) != bool(args.stage2):
        usage.append("--stage1 and --stage2 go together")
    if args.fetch_k is not None and args.fetch_k < 1:
        usage.append(f"--fetch-k {args.fetch_k}: must be >= 1")
    if not args.run and not args.stage2:
        usage.append("give at least one --run FILE (or --stage1 and --stage2)")
    if usage:
        raise InputError(usage)

    problems: list[str] = []
    qrels = None
    try:
        qrels, _golden = load_judgments(args.qrels)
    except InputError as exc:
        problems.extend(exc.problems)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    warnings: dict[str, list[str]] = {}
    run_paths = list(args.run) or [args.stage2]
    for path in run_paths:
        try:
            loaded = read_run(path)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        name = _unique(loaded.name, path, runs)
        runs[name] = loaded.scores  # ranked by the ordering rule inside metrics
        warnings[name] = list(loaded.warnings)
    stages = None
    stage_names = ("stage1", "stage2")
    if args.stage1:
        try:
            first, second = read_run(args.stage1), read_run(args.stage2)
            stages = (first.scores, second.scores)
            stage_names = (first.name, second.name if second.name != first.name else args.stage2)
        except InputError as exc:
            problems.extend(exc.problems)
    corpus_size = None
    passages = None
    if args.corpus:
        from workbench.audit import normalized_passages
        from workbench.formats import read_corpus_any

        try:
            docs = read_corpus_any(args.corpus)
            corpus_size = len(docs)
            passages = normalized_passages({d.doc_id: d.text for d in docs})
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    assert qrels is not None

    report = eval_report(
        qrels,
        runs,
        ks,
        rel_threshold=args.rel_threshold,
        gain=args.gain,
        corpus_size=corpus_size,
        passages=passages,
        stages=stages,
        stage_names=stage_names,
        fetch_k=args.fetch_k,
        run_warnings=warnings,
    )
    fmt = "json" if args.json else (args.format or "table")
    if fmt == "json":
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(report, markdown=fmt == "markdown"))
        if exit_code(report, args.strict):
            print("workbench eval: exit 1 (error-level problems above)", file=sys.stderr)
    return exit_code(report, args.strict)

