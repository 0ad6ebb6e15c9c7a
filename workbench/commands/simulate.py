"""`workbench simulate`: judge a store's queue with an oracle that answers from existing qrels.

The oracle walks the queue in its order (queries in order, items by position) and grades each
item it has not graded yet: the qrels' grade, or 0 when the qrels do not list the pair (absent =
not relevant, as trec_eval treats it). Rows are real judgments with role "oracle", written in one
transaction; `workbench coverage` counts them like human grades (only role "model" is left out).
Use it to measure how complete a pool is against a collection judged far more deeply."""

from __future__ import annotations

import argparse
import time

from workbench.core.display import say
from workbench.core.model import Judgment, PoolEntry, Qrels, Role
from workbench.core.names import annotator_name

ROLE = Role.ORACLE


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, help="the judgments store (SQLite file)")
    parser.add_argument(
        "--oracle", required=True, metavar="QRELS", help="TREC qrels or golden.yaml to answer from"
    )
    parser.add_argument(
        "--annotator", default="oracle", type=annotator_name, help="annotator name (default oracle)"
    )
    parser.add_argument(
        "--budget", type=int, help="at most this many judgments in all (default: the whole queue)"
    )
    parser.add_argument("--per-query", type=int, help="at most this many judgments per query")


def oracle_judgments(
    queue: list[PoolEntry],
    oracle: Qrels,
    annotator: str,
    already: set[tuple[str, str]],
    budget: int | None = None,
    per_query: int | None = None,
) -> list[Judgment]:
    """The oracle's grades for the queue items not yet graded, in queue order, within budgets."""
    out: list[Judgment] = []
    per: dict[str, int] = {}
    now = time.time()
    for entry in queue:
        if budget is not None and len(out) >= budget:
            break
        key = (entry.query_id, entry.doc_id)
        if key in already or (per_query is not None and per.get(entry.query_id, 0) >= per_query):
            continue
        grade = oracle.get(entry.query_id, {}).get(entry.doc_id, 0)
        out.append(
            Judgment(
                annotator=annotator,
                query_id=entry.query_id,
                doc_id=entry.doc_id,
                grade=grade,  # no note: the role 'oracle' says where the grade came from
                shown_at=now,
                graded_at=now,
                role=ROLE,
            )
        )
        per[entry.query_id] = per.get(entry.query_id, 0) + 1
    return out


def run(args: argparse.Namespace) -> int:
    from workbench.core.errors import InputError
    from workbench.formats import load_judgments
    from workbench.store import open_store

    problems = []
    if args.budget is not None and args.budget < 0:
        problems.append("--budget: must be >= 0")
    if args.per_query is not None and args.per_query < 0:
        problems.append("--per-query: must be >= 0")
    if problems:
        raise InputError(problems)
    oracle, _ = load_judgments(args.oracle)
    with open_store(args.db) as store:
        scale = store.grade_scale()
        top = max(scale)
        # Grades beyond the store's scale (e.g. a 0-4 collection, or -1) are clamped into it.
        bottom = min(scale)
        oracle = {
            q: {d: max(bottom, min(g, top)) for d, g in docs.items()} for q, docs in oracle.items()
        }
        queue = store.pool()
        known = {q.query_id for q in store.queries()}
        already = {(j.query_id, j.doc_id) for j in store.current_judgments(args.annotator)}
        rows = oracle_judgments(queue, oracle, args.annotator, already, args.budget, args.per_query)
        store.add_annotator(args.annotator, ROLE)
        store.add_judgments(rows)
    unknown = sorted(set(oracle) - known)
    relevant = sum(1 for j in rows if j.grade is not None and j.grade >= 1)
    say(
        f"simulate: {len(rows)} judgments by {args.annotator} ({relevant} relevant), "
        f"{len(already)} already judged, queue {len(queue)} items"
        + (f"; {len(unknown)} oracle queries not in the store" if unknown else "")
    )
    return 0
