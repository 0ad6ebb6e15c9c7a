"""`workbench export`: the store's resolved judgments as golden.yaml and/or TREC qrels."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from workbench.commands import (
    add_judge_covariate_option,
    add_rel_threshold_option,
    add_store_option,
    reads_study_once,
    say,
)
from workbench.core.exit_codes import ExitCode
from workbench.core.model import Role

if TYPE_CHECKING:
    from workbench.flows.study_context import StudyContext
    from workbench.formats import Golden
    from workbench.store import JudgmentStore


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument("--golden", help="write golden.yaml here")
    parser.add_argument("--qrels", help="write TREC qrels here (aliases take their doc's grade)")
    parser.add_argument("--name", help="the golden set's name (default: the store's file name)")
    parser.add_argument("--description", help="free text recorded in golden.yaml")
    parser.add_argument(
        "--no-judge-labels",
        action="store_true",
        help="leave model judges' labels out of golden.yaml (they are never in its qrels; "
        "a people-only set is then written as version 1, which older workbenches read)",
    )
    add_rel_threshold_option(
        parser, "grade counted as relevant in the summary and the coverage estimate"
    )
    add_judge_covariate_option(parser, "the coverage summary's estimate", stores=False)
    reads_study_once(parser)


def run(args: argparse.Namespace) -> int:
    if not args.golden and not args.qrels:
        print("error: give --golden PATH and/or --qrels PATH", file=sys.stderr)
        return ExitCode.USAGE
    from workbench.core.errors import InputError
    from workbench.formats.atomic import check_outputs, store_companions

    store_files = {} if args.db.is_url else store_companions("--db", args.db)
    problems = check_outputs({"--golden": args.golden, "--qrels": args.qrels}, store_files)
    if problems:
        raise InputError(problems)
    from workbench.flows.study_context import CoverageOptions, RunChoices, StudyContext
    from workbench.formats import expand_aliases, golden_text, qrels_text
    from workbench.formats.atomic import write_all_or_none
    from workbench.store import open_store

    with open_store(args.db, read_only=True) as store:
        # at the export's threshold, so golden.yaml's per-query `relevant` counts match its
        # qrels as `workbench eval --rel-threshold` will count them (else: 'stale')
        options = CoverageOptions(rel_threshold=args.rel_threshold)
        context = StudyContext(store, options, RunChoices(queue_judge=args.judge))
        args.rel_threshold = context.rel_threshold
        golden, orphans = golden_of(context, args)
    outputs = []  # all rendered, then written all or none: exit 2 leaves every old file
    if args.qrels:  # plain TREC qrels, no comment line: trec_eval, pytrec_eval and
        # ir_measures read every line as a judgment (golden.yaml holds the provenance)
        qrels = expand_aliases(golden.qrels, golden.aliases)
        outputs.append((args.qrels, qrels_text(qrels, name=args.qrels).encode("utf-8")))
    if args.golden:
        outputs.append((args.golden, golden_text(golden).encode("utf-8")))
    write_all_or_none(outputs)
    written = " and ".join(p for p in (args.golden, args.qrels) if p)
    say(summary_line(golden, orphans, args.rel_threshold) + f" Wrote {written}.")
    return ExitCode.OK


def golden_of(
    study: StudyContext | JudgmentStore, args: argparse.Namespace
) -> tuple[Golden, list[str]]:
    """The study's judged set as a golden set (a store: read into a `StudyContext` at
    `args.rel_threshold`), and the judged query ids the store's queries lack (kept, with empty
    text)."""
    from dataclasses import replace

    from workbench.core.model import Query
    from workbench.flows.judged import judged_set
    from workbench.flows.study_context import CoverageOptions, StudyContext
    from workbench.formats import Golden

    if not isinstance(study, StudyContext):
        study = StudyContext(study, CoverageOptions(rel_threshold=args.rel_threshold))
    store = study.store

    judged = judged_set(store)
    if getattr(args, "no_judge_labels", False):
        judged = replace(judged, judge_labels=())
    queries = store.queries()
    roles = store.annotators()
    coverage = study.summary()
    known = {q.query_id for q in queries}
    labelled = set(judged.qrels) | {label.query_id for label in judged.judge_labels}
    orphans = sorted(qid for qid in labelled if qid not in known)
    judged_docs = {doc_id for docs in judged.qrels.values() for doc_id in docs}
    contributors = sorted(
        {name for names in judged.judged_by.values() for name in names}
        | {label.judge for label in judged.judge_labels}
    )
    golden = Golden(
        name=args.name or args.db.stem,
        description=args.description
        if args.description is not None
        else f"Judgments exported from {store.title} by workbench export.",
        grade_scale=store.grade_scale(),
        annotators=[{"name": n, "role": roles.get(n, Role.HUMAN)} for n in contributors],
        pool=_pool(store.poolings()),
        queries=queries + [Query(query_id=qid, text="") for qid in orphans],
        qrels=judged.qrels,
        judged_by=judged.judged_by,
        aliases={a: c for a, c in judged.aliases.items() if c in judged_docs},
        coverage=coverage,
        disagreements=judged.disagreements,
        notes=judged.notes,
        judges=judged.recorded_judges(),
        label_versions=judged.label_versions,
        judge_labels=list(judged.judge_labels),
    )
    return golden, orphans


def _pool(poolings: list[dict]) -> dict | None:
    """What annotators saw: the latest pooling's systems, depth, strategy (and seed), and how
    its text folder was cut into passages (`params.passages`, which `eval --corpus` reads)."""
    if not poolings:
        return None
    latest = poolings[-1]
    pool = {key: latest[key] for key in ("systems", "depth", "strategy")}
    if latest.get("seed") is not None:
        pool["seed"] = latest["seed"]
    params = latest.get("params")
    if isinstance(params, dict) and isinstance(params.get("passages"), str):
        pool["params"] = {"passages": params["passages"]}
    return pool


def summary_line(golden: Golden, orphans: list[str], rel_threshold: int) -> str:
    qrels = golden.qrels
    pairs = sum(len(j) for j in qrels.values())
    relevant = sum(1 for j in qrels.values() for g in j.values() if g >= rel_threshold)
    names = sorted({name for graders in golden.judged_by.values() for name in graders})
    missing = f"; {len(orphans)} judged query id(s) missing from the store's queries"
    judges = sorted({label.judge for label in golden.judge_labels})
    beside = (
        f"; {len(golden.judge_labels)} model label(s) of {', '.join(judges)} kept beside the"
        " set (never in its qrels), each with its judge's version where recorded"
        if judges
        else ""
    )
    return (
        f"Exported {pairs} judged pairs over {len(qrels)} of {len(golden.queries)} queries "
        f"({relevant} relevant at grade >= {rel_threshold}, {pairs - relevant} not), "
        f"judged by {len(names)} annotator(s) ({', '.join(names) or 'none'}); "
        f"{len(golden.disagreements)} pair(s) with disagreeing grades resolved "
        f"(adjudicator, else agreement, else median rounded down); "
        f"{len(golden.aliases)} alias(es); {len(golden.notes)} note(s); coverage recorded"
        + beside
        + (missing if orphans else "")
        + "."
    )
