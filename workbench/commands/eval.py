"""`workbench eval`: score runs against qrels, a golden.yaml or a judgments store, with the
denominator audit and, when coverage is known, recall under the estimated |Rel| and its gate.

Exit 0 when clean; 1 when a figure is undefined, a run's mean is below a `--fail-under` floor,
or with --strict on any error-level problem (an incomplete judged set included); 2 for
unusable input. Imports nothing heavy: it must start fast (numpy, for the column-wise reader of
TREC runs and a store's coverage; no store, YAML, models or app for TREC files)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Container, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from workbench.commands import add_passage_options, add_rel_threshold_option, finite_number
from workbench.core.store_url import StoreLocation

if TYPE_CHECKING:
    from workbench.core.audit_coverage import Coverage
    from workbench.core.judge_versions import JudgeLabels
    from workbench.core.measure_view import JudgedRanking
    from workbench.core.model import Run
    from workbench.formats import Golden
    from workbench.formats.passages import PassageRule
    from workbench.store import JudgmentStore


MAX_CUTOFF = 10**9
"""The deepest cutoff (-k, --fetch-k) taken: deeper than any ranking, and small enough for
every array a measure builds (a larger one exhausted memory or worse)."""


def cutoffs(values: list[str] | None) -> list[int]:
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
            if k > MAX_CUTOFF:
                raise argparse.ArgumentTypeError(f"-k {k} must be at most {MAX_CUTOFF:_}")
            if k not in ks:
                ks.append(k)
    if not ks:
        raise argparse.ArgumentTypeError("-k needs at least one cutoff")
    return ks


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
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--format",
        choices=("table", "markdown", "html", "json"),
        default=None,
        help="output format (default table; html: one self-contained page; --json = --format json)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on any error-level audit problem; when coverage is known "
        "(a store, or a golden.yaml with a coverage summary) a scored query "
        "whose judged relevant set is incomplete is such an error (the gate)",
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
    judge_help = "with a store: P@k, R@k, nDCG@k from this model judge, corrected by humans"
    parser.add_argument("--judge", metavar="NAME", help=judge_help)
    parser.add_argument(
        "--target-width", type=finite_number, metavar="W", help="with --judge: humans"
    )
    parser.add_argument("--stage1", metavar="RUN", help="stage-1 (retriever, fetch-K) run")
    parser.add_argument("--stage2", metavar="RUN", help="stage-2 (reranker, keep-n) run")
    parser.add_argument(
        "--fetch-k",
        type=int,
        metavar="K",
        help="stage-1 depth K (default: each stage-1 ranking's depth)",
    )


def _unique(name: str, path: str, taken: Container[str]) -> str:
    if name not in taken:
        return name
    candidate = f"{name} ({path})"
    i = 2
    while candidate in taken:
        candidate = f"{name} ({path} #{i})"
        i += 1
    return candidate


def run(args: argparse.Namespace) -> int:
    from workbench.core.errors import InputError
    from workbench.core.eval_report import eval_report, exit_code, exit_reasons, with_floors

    ks, floors = _checked_options(args)
    _keep_freed_memory()
    if args.judge:
        from workbench.commands.eval_judge import judge_corrected

        return judge_corrected(args, ks)
    problems: list[str] = []
    qrels, aliases, coverage, judges = judged_qrels(args, problems)
    # Scored column-wise (no per-line objects) unless a step needs every doc of a ranking.
    whole = bool(args.corpus or aliases or coverage is not None or args.stage1 or qrels is None)
    reduce_with = None if whole else (qrels, max(ks))
    runs, warnings = read_runs(args.run or [args.stage2], problems, reduce_with)
    stages, stage_names = _stages(args, problems)
    rule = _corpus_rule(args, problems)
    corpus_size, passages = _corpus(args.corpus, runs, warnings, aliases, problems, rule)
    if problems or qrels is None:
        raise InputError(problems)
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
        coverage=coverage,
        strict=args.strict,
        aliases=aliases,
        judges=judges,
    )
    if floors:
        report = with_floors(report, floors)
    fmt = "json" if args.json else (args.format or "table")
    code = exit_code(report, args.strict)
    if fmt == "json":
        from workbench.core.display import json_line

        # json.dumps escapes C0 controls only; json_line also escapes C1 and bidi controls
        sys.stdout.write(json_line(report.to_json()) + "\n")
    else:
        from workbench.reports.evaluation import render

        sys.stdout.write(render(report, fmt))
        if code:
            why = "; ".join(exit_reasons(report, args.strict))
            print(f"workbench eval: exit 1 ({why})", file=sys.stderr)
    return code


def _checked_options(args: argparse.Namespace) -> tuple[list[int], dict[str, float]]:
    """The cutoffs and the floors, once every option is checked (InputError naming each
    misuse)."""
    from workbench.core.errors import InputError
    from workbench.core.floors import floor_problems, parse_floor_specs

    try:
        ks = cutoffs(args.k)
    except argparse.ArgumentTypeError as exc:
        raise InputError([str(exc)]) from None
    usage: list[str] = []
    floors: dict[str, float] = {}
    try:
        floors = parse_floor_specs(args.fail_under or ())
    except ValueError as exc:
        usage += str(exc).splitlines()
    usage += floor_problems(floors, ks)
    if floors and args.judge:
        usage.append("--fail-under: not with --judge (its corrected figures are not the means)")
    if args.rel_threshold < 1:
        usage.append(
            f"--rel-threshold {args.rel_threshold}: must be >= 1 (grade 0 is judged non-relevant)"
        )
    if bool(args.stage1) != bool(args.stage2):
        usage.append("--stage1 and --stage2 go together")
    if args.fetch_k is not None and not 1 <= args.fetch_k <= MAX_CUTOFF:
        usage.append(f"--fetch-k {args.fetch_k}: must be from 1 to {MAX_CUTOFF:_}")
    if not args.run and not args.stage2:
        usage.append("give at least one --run FILE (or --stage1 and --stage2)")
    if args.complete_at is not None and not 0 < args.complete_at <= 1:
        usage.append(f"--complete-at {args.complete_at}: must be in (0, 1]")
    if usage:
        raise InputError(usage)
    return ks, floors


def judged_qrels(
    args: argparse.Namespace, problems: list[str], golden: Golden | None = None
) -> tuple[dict[str, dict[str, int]] | None, dict[str, str], Coverage | None, JudgeLabels | None]:
    """(qrels, aliases, coverage, the judges' labels) from `--qrels`: a store, a golden.yaml or
    TREC qrels (no judges), or `golden`, the golden.yaml at that path already read; what is
    wrong with them appended to `problems`."""
    from workbench.core.errors import InputError
    from workbench.formats import load_judgments
    from workbench.formats.store_file import is_store

    qrels, coverage, judges = None, None, None
    aliases: dict[str, str] = {}
    try:
        if golden is None and is_store(args.qrels):
            qrels, aliases, coverage, judges = store_judgments(
                args.qrels, args.rel_threshold, args.complete_at
            )
        else:
            if golden is None:
                qrels, golden = load_judgments(args.qrels)
            if golden is not None:
                # Identical passages are one document: score against the judged ids and fold
                # each alias in a ranking into its canonical doc (a copy never counts twice).
                qrels, aliases = golden.qrels, golden.aliases
                judges = golden.judge_label_counts()
            if golden is not None and golden.coverage is not None:
                coverage = golden_coverage(args.qrels, golden, args.rel_threshold, args.complete_at)
        if qrels is not None:
            problems.extend(grade_problems(args.qrels, qrels, args.gain))
        if coverage is None and args.complete_at is not None:
            problems.append(
                f"--complete-at: {args.qrels} carries no coverage information "
                "(give a judgments store, or a golden.yaml exported with its "
                "coverage summary)"
            )
    except InputError as exc:
        problems.extend(exc.problems)
    return qrels, aliases, coverage, judges


Scores = Mapping[str, "Mapping[str, float] | JudgedRanking"]
"""A run's rankings: doc scores per query, or each query reduced against the qrels."""


class ReducedRun(NamedTuple):
    """A run read column-wise, each ranking reduced against the qrels (as `Run` is read)."""

    name: str
    scores: dict[str, JudgedRanking]
    warnings: list[str]


def read_runs(
    paths: list[str],
    problems: list[str],
    reduce_with: tuple[Mapping[str, Mapping[str, int]], int] | None = None,
) -> tuple[dict[str, Scores], dict[str, list[str]]]:
    """Each run's scores under a name of its own (its tag, else tag and file), and its reader
    warnings. With `reduce_with` = (qrels, top), a well-formed run file is read column-wise
    and each ranking reduced against the qrels (`run_table.judged_rankings`): what the
    measures and the audit read, without an object per line."""
    from workbench.core.errors import InputError
    from workbench.formats import read_run

    runs: dict[str, Scores] = {}
    warnings: dict[str, list[str]] = {}
    for path in paths:
        try:
            loaded = _read_reduced(path, reduce_with) if reduce_with else None
            if loaded is None:
                loaded = read_run(path)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        name = _unique(loaded.name, path, runs)
        runs[name] = loaded.scores  # ranked by the ordering rule inside metrics
        warnings[name] = list(loaded.warnings)
    return runs, warnings


def _read_reduced(
    path: str, reduce_with: tuple[Mapping[str, Mapping[str, int]], int]
) -> Run | ReducedRun | None:
    """The run at `path` read by the vectorised reader and reduced, or None when the file is
    not well-formed (the strict reader then names its problems)."""
    from workbench.core.run_table import judged_rankings
    from workbench.formats.trec.table import read_run_table

    table = read_run_table(path)
    if table is None:
        return None
    reduced = judged_rankings(table, *reduce_with)
    if reduced is None:
        return table.to_run()
    return ReducedRun(table.name, reduced, table.warnings)


def _keep_freed_memory() -> None:
    """Let malloc keep freed memory for reuse (glibc's mallopt; elsewhere nothing happens), so
    that the vectorised reader's temporaries, block after block, touch no fresh pages: a tenth
    of eval's time on a big run. Set by the command only (which exits when done), never by
    the Python API inside a user's process."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: return freed memory only past 1 GiB
        libc.mallopt(-3, 1 << 28)  # M_MMAP_THRESHOLD: blocks up to 256 MiB come from the heap
    except (OSError, AttributeError, TypeError):  # no glibc (macOS, Windows): nothing to tune
        pass


def _stages(
    args: argparse.Namespace, problems: list[str]
) -> tuple[tuple[Scores, Scores] | None, tuple[str, str]]:
    """The two stages' scores and names, when `--stage1` and `--stage2` are given."""
    from workbench.core.errors import InputError
    from workbench.formats import read_run

    if not args.stage1:
        return None, ("stage1", "stage2")
    try:
        first, second = read_run(args.stage1), read_run(args.stage2)
    except InputError as exc:
        problems.extend(exc.problems)
        return None, ("stage1", "stage2")
    names = (first.name, second.name if second.name != first.name else args.stage2)
    return (first.scores, second.scores), names


def _corpus(
    path: str | None,
    runs: Mapping[str, Scores],
    warnings: dict[str, list[str]],
    aliases: Mapping[str, str],
    problems: list[str],
    rule: PassageRule | None = None,
) -> tuple[int | None, dict[str, str] | None]:
    """(corpus size, doc id -> normalized text) from `--corpus` (a folder cut by `rule`), for
    label coverage and content duplicates; without it, a golden set's aliases stand in for the
    texts."""
    from workbench.core.audit import normalized_passages
    from workbench.core.errors import InputError
    from workbench.formats import read_corpus_any

    if not path:
        return None, ({**{c: c for c in aliases.values()}, **aliases} if aliases else None)
    try:
        docs = read_corpus_any(path, rule)
    except InputError as exc:
        problems.extend(exc.problems)
        return None, None
    passages = normalized_passages({d.doc_id: d.text for d in docs})
    cut = f" (cut as {rule}: --passages)" if rule is not None else ""
    for name, scores in runs.items():
        if scores and not any(d in passages for ranked in scores.values() for d in ranked):
            warnings[name].append(
                f"none of its doc ids is in the corpus {path}{cut}: is it the right "
                "corpus? (content duplicates cannot be found, label coverage is off)"
            )
        elif rule is not None:  # a folder cut another way than the run's: ids that name others
            missing = sorted({d for ranked in scores.values() for d in ranked} - passages.keys())
            if missing:
                from workbench.core.display import visible

                warnings[name].append(
                    f"{len(missing):,} of its doc ids (first {visible(missing[0], one_line=True)})"
                    f" are not passages of the corpus {path}{cut}: was it pooled with other "
                    "--passages or --passage-words?"
                )
    return len(docs), passages


def _corpus_rule(args: argparse.Namespace, problems: list[str]) -> PassageRule | None:
    """How to cut a folder `--corpus` into passages (`formats.passages.chosen_rule`): as the
    store or golden.yaml given as `--qrels` was pooled, else `--passages`, else the default."""
    from workbench.commands import passage_rule
    from workbench.core.errors import InputError
    from workbench.formats.passages import chosen_rule

    if not args.corpus:
        return None
    try:
        asked = passage_rule(args)
        recorded = _recorded_rule(args.qrels) if Path(args.corpus).is_dir() else None
        return chosen_rule(args.corpus, asked, recorded, args.qrels)
    except InputError as exc:
        problems.extend(exc.problems)
        return None


def _recorded_rule(qrels: str) -> PassageRule | None:
    """How the judgments at `qrels` (a store, a golden.yaml) were pooled: their passage rule;
    None for TREC qrels or what cannot be read (said when the judgments are read)."""
    from workbench.core.errors import InputError
    from workbench.formats.passages import golden_rule, recorded_rule
    from workbench.formats.store_file import is_store

    try:
        if is_store(qrels):
            from workbench.store import open_store

            with open_store(qrels, read_only=True) as store:
                return recorded_rule(store.poolings(), str(store.location))
        if str(qrels).lower().endswith((".yaml", ".yml")):
            from workbench.formats.golden import read_golden

            return golden_rule(read_golden(qrels).pool, str(qrels))
    except InputError:
        pass
    return None


def grade_problems(path: str, qrels: Mapping[str, Mapping[str, int]], gain: str) -> list[str]:
    """`path: query Q doc D: ...` for each grade the gain cannot score (too large for a float)."""
    from workbench.core.display import visible
    from workbench.core.metrics import MAX_GRADE, MAX_LINEAR_GRADE, grade_problem

    found: list[str] = []
    top = MAX_GRADE.get(gain, MAX_LINEAR_GRADE)
    for qid, judged in qrels.items():
        if not judged or max(judged.values()) <= top:
            continue  # the common case, checked in C
        for doc_id, grade in judged.items():
            message = grade_problem(grade, gain)
            if message:
                where = f"query {visible(qid, one_line=True)} doc {visible(doc_id, one_line=True)}"
                found.append(f"{path}: {where}: {message}")
    if len(found) > 10:
        found[10:] = [f"{path}: ... and {len(found) - 10} more grades too large"]
    return found


def store_judgments(
    path: str, rel_threshold: int = 1, complete_at: float | None = None
) -> tuple[dict[str, dict[str, int]], dict[str, str], Coverage, JudgeLabels]:
    """(qrels, aliases, coverage, the judges' labels) of a judgments store, as `workbench
    export --golden` records them: every store query with the resolved grade of each judged
    pair, the aliases, coverage from `coverage.summary_for_store`, the judges' versions."""
    from workbench.core.coverage import summary_for_store
    from workbench.core.coverage.store_summary import adaptive_session
    from workbench.store import open_store

    options: dict[str, Any] = {"rel_threshold": rel_threshold}
    if complete_at is not None:
        options["complete_at"] = complete_at
    with open_store(path, read_only=True) as store:
        session = None
        if store.get_meta("policy") == "adaptive":
            session = adaptive_session(store, **options)
        summary = summary_for_store(store, session=session, **options)
        found = judged_with_coverage(store, summary, path, rel_threshold, complete_at)
    if session is not None:
        from dataclasses import replace

        from workbench.core.study import study_draws

        found = (found[0], found[1], replace(found[2], study=study_draws(session)), found[3])
    return found


def judged_with_coverage(
    store: JudgmentStore,
    summary: Mapping[str, Any],
    path: str,
    rel_threshold: int = 1,
    complete_at: float | None = None,
) -> tuple[dict[str, dict[str, int]], dict[str, str], Coverage, JudgeLabels]:
    """`store_judgments` with the coverage summary already computed (it is the costly part)."""
    from workbench.core.audit_coverage import coverage_from_summary
    from workbench.core.errors import InputError
    from workbench.core.resolve import judged_set

    judged_store = judged_set(store)
    resolved, aliases = judged_store.qrels, judged_store.aliases
    query_ids = [q.query_id for q in store.queries()]
    known = set(query_ids)
    query_ids += sorted(qid for qid in resolved if qid not in known)
    judged = {qid: resolved.get(qid, {}) for qid in query_ids}
    coverage, problems = coverage_from_summary(
        summary,
        judged,
        source=f"store {path}",
        rel_threshold=rel_threshold,
        aliases=aliases,
        complete_at=complete_at,
    )
    if problems:
        raise InputError([f"{path}: {p}" for p in problems])
    return judged, aliases, coverage, judged_store.judges()


def golden_coverage(
    path: str, golden: Golden, rel_threshold: int = 1, complete_at: float | None = None
) -> Coverage:
    """The coverage summary a golden.yaml recorded at export, checked against its judgments."""
    from workbench.core.audit_coverage import coverage_from_summary
    from workbench.core.errors import InputError

    coverage, problems = coverage_from_summary(
        golden.coverage or {},
        golden.qrels,
        source=f"golden.yaml {path}",
        rel_threshold=rel_threshold,
        aliases=golden.aliases,
        complete_at=complete_at,
    )
    if problems:
        raise InputError([f"{path}: {p}" for p in problems])
    return coverage
