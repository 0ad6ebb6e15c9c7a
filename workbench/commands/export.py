"""`workbench export`: the store's resolved judgments as golden.yaml and/or TREC qrels."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.core.display import visible
from workbench.core.model import Role


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, help="the judgments store (SQLite file)")
    parser.add_argument("--golden", help="write golden.yaml here")
    parser.add_argument("--qrels", help="write TREC qrels here (aliases take their doc's grade)")
    parser.add_argument("--name", help="the golden set's name (default: the store's file name)")
    parser.add_argument("--description", help="free text recorded in golden.yaml")
    parser.add_argument(
        "--rel-threshold",
        type=int,
        default=1,
        help="grade counted as relevant in the summary and the coverage estimate",
    )


def run(args: argparse.Namespace) -> int:
    if not args.golden and not args.qrels:
        print("error: give --golden PATH and/or --qrels PATH", file=sys.stderr)
        return 2
    from workbench.core.errors import InputError
    from workbench.formats.atomic import check_outputs

    problems = check_outputs(
        {"--golden": args.golden, "--qrels": args.qrels},
        {"--db": args.db, "--db's WAL": f"{args.db}-wal", "--db's index": f"{args.db}-shm"},
    )
    if problems:
        raise InputError(problems)
    from workbench.core.coverage import summary_for_store
    from workbench.core.model import Query
    from workbench.core.resolve import judged_set
    from workbench.formats import Golden, expand_aliases, golden_text, write_qrels
    from workbench.store import open_store

    with open_store(args.db) as store:
        judged = judged_set(store)
        queries = store.queries()
        scale = store.grade_scale()
        poolings = store.poolings()
        roles = store.annotators()
        # At the export's threshold, so golden.yaml's per-query `relevant` counts match its
        # qrels as `workbench eval --rel-threshold` will count them (else: 'stale').
        coverage = summary_for_store(store, rel_threshold=args.rel_threshold)

    qrels, judged_by, disagreements = judged.qrels, judged.judged_by, judged.disagreements
    notes = judged.notes
    known = {q.query_id for q in queries}
    orphans = sorted(qid for qid in qrels if qid not in known)
    queries = queries + [Query(query_id=qid, text="") for qid in orphans]
    judged_docs = {doc_id for judged in qrels.values() for doc_id in judged}
    aliases = {a: c for a, c in judged.aliases.items() if c in judged_docs}
    contributors = sorted({name for names in judged_by.values() for name in names})
    pool = None
    if poolings:
        latest = poolings[-1]
        pool = {
            "systems": latest["systems"],
            "depth": latest["depth"],
            "strategy": latest["strategy"],
        }
        if latest.get("seed") is not None:
            pool["seed"] = latest["seed"]
    golden = Golden(
        name=args.name or Path(args.db).stem,
        description=args.description
        if args.description is not None
        else f"Judgments exported from {Path(args.db).name} by workbench export.",
        grade_scale=scale,
        annotators=[{"name": n, "role": roles.get(n, Role.HUMAN)} for n in contributors],
        pool=pool,
        queries=queries,
        qrels=qrels,
        judged_by=judged_by,
        aliases=aliases,
        coverage=coverage,
        disagreements=disagreements,
        notes=notes,
    )
    pairs = sum(len(j) for j in qrels.values())
    relevant = sum(1 for j in qrels.values() for g in j.values() if g >= args.rel_threshold)
    # Render everything before writing anything: an error leaves no file half-made.
    golden_yaml = golden_text(golden) if args.golden else None
    if args.qrels:  # plain TREC qrels, no comment line: trec_eval, pytrec_eval and
        # ir_measures read every line as a judgment (golden.yaml holds the provenance)
        write_qrels(args.qrels, expand_aliases(qrels, aliases))
    from workbench.formats.atomic import atomic_write_text

    if golden_yaml is not None:
        atomic_write_text(args.golden, golden_yaml)

    written = " and ".join(p for p in (args.golden, args.qrels) if p)
    print(
        visible(
            f"Exported {pairs} judged pairs over {len(qrels)} of {len(queries)} queries "
            f"({relevant} relevant at grade >= {args.rel_threshold}, {pairs - relevant} not), "
            f"judged by {len(contributors)} annotator(s) ({', '.join(contributors) or 'none'}); "
            f"{len(disagreements)} pair(s) with disagreeing grades resolved "
            f"(adjudicator, else agreement, else median rounded down); "
            f"{len(aliases)} alias(es); {len(notes)} note(s); coverage recorded"
            + (
                f"; {len(orphans)} judged query id(s) missing from the store's queries"
                if orphans
                else ""
            )
            + f". Wrote {written}."
        )
    )
    return 0
