"""`workbench simulate`'s use case: judge a store's queue with an oracle that answers from
existing qrels.

The oracle walks the queue in its order (queries in order, items by position) and grades each
item it has not graded yet: the qrels' grade, or 0 when the qrels do not list the pair (absent =
not relevant, as trec_eval treats it). Rows are real judgments with role "oracle", written in one
transaction; `workbench coverage` counts them like human grades (only role "model" is left out).
Use it to measure how complete a pool is against a collection judged far more deeply."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.audit.truth import rows_from_report, rows_from_states, summarize_rows
from workbench.core.display import visible
from workbench.core.model import Judgment, PoolEntry, Qrels, Role
from workbench.reports.oracle import against_oracle

if TYPE_CHECKING:
    from workbench.core.judgments.judge_versions import JudgeIdentity
    from workbench.core.store_url import StoreLocation
    from workbench.store.base import JudgmentStore

ROLE = Role.ORACLE
Say = Callable[[str], None]


@dataclass(frozen=True)
class SimulateRequest:
    """The oracle, the store, and how far to judge (the command's options, checked)."""

    db: StoreLocation
    oracle: str
    annotator: str = "oracle"
    budget: int | None = None
    per_query: int | None = None
    seed: int | None = None
    policy: str | None = None
    target: str | None = None
    judge: str | None = None
    no_stop: bool = False


def oracle_judgments(
    queue: list[PoolEntry],
    oracle: Qrels,
    annotator: str,
    already: set[tuple[str, str]],
    budget: int | None = None,
    per_query: int | None = None,
    judge_version: str = "",
) -> list[Judgment]:
    """The oracle's grades for the queue items not yet graded, in queue order, within budgets
    (carrying `judge_version`, a recorded one)."""
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
                judge_version=judge_version,
            )
        )
        per[entry.query_id] = per.get(entry.query_id, 0) + 1
    return out


# long: the oracle and the store read, then the two walks (static, adaptive) it chooses between
def simulate(request: SimulateRequest, say: Say, warn: Say) -> None:
    """Judge the store's queue with the oracle, then say (`say`) what was judged and how the
    estimate fares against the oracle; notes on `warn`. InputError before anything is written
    when the options do not fit the store."""
    from workbench.core.errors import InputError
    from workbench.flows.study_context import is_adaptive
    from workbench.formats import load_judgments
    from workbench.store import open_store

    oracle, _ = load_judgments(request.oracle)
    identity = oracle_identity(request.oracle)
    with open_store(request.db) as store:
        scale = store.grade_scale()
        top = max(scale)
        # Grades beyond the store's scale (e.g. a 0-4 collection, or -1) are clamped into it.
        bottom = min(scale)
        oracle = {
            q: {d: max(bottom, min(g, top)) for d, g in docs.items()} for q, docs in oracle.items()
        }
        others_note(store, request.annotator, warn)
        adaptive = is_adaptive(store)
        policy = request.policy or ("adaptive" if adaptive else "static")
        if policy == "adaptive" and not adaptive:
            raise InputError(
                [f"{request.db}: pooled for a static queue; --policy adaptive needs a store made "
                 "by `workbench pool --policy adaptive`"]
            )  # fmt: skip
        if policy == "adaptive":
            return _adaptive(request, store, oracle, identity, say, warn)
        if request.target is not None:
            raise InputError(
                ["--target: the study interval it narrows needs the adaptive queue (a store "
                 "made by `workbench pool --policy adaptive`)"]
            )  # fmt: skip
        if request.judge is not None:
            raise InputError(
                [f"--queue-judge {visible(request.judge)}: the judge covariate is the adaptive "
                 "queue's (a store made by `workbench pool --policy adaptive`)"]
            )  # fmt: skip
        from workbench.flows.design import sample_first

        queue = sample_first(store, store.pool())  # the app's order: a drawn sample first
        known = {q.query_id for q in store.queries()}
        already = {(j.query_id, j.doc_id) for j in store.current_judgments(request.annotator)}
        rows = oracle_judgments(
            queue, oracle, request.annotator, already, request.budget, request.per_query,
            identity.version,
        )  # fmt: skip
        store.add_annotator(request.annotator, ROLE)  # writes only once everything was read
        store.record_judge(request.annotator, identity)
        store.add_judgments(rows)
    unknown = sorted(set(oracle) - known)
    relevant = sum(1 for j in rows if j.grade is not None and j.grade >= 1)
    say(
        f"simulate: {len(rows)} judgments by {request.annotator} ({relevant} relevant), "
        f"{len(already)} already judged, queue {len(queue)} items"
        + (f"; {len(unknown)} oracle queries not in the store" if unknown else "")
    )
    if policy == "static" and store_has_samples(queue):
        from workbench.flows.coverage import coverage_for_store

        with open_store(request.db, read_only=True) as store:
            report = coverage_for_store(store, annotator=request.annotator, seed=request.seed)
        say(against_oracle(summarize_rows(list(rows_from_report(report, oracle).values()))))


def others_note(store: JudgmentStore, annotator: str, warn: Say) -> None:
    """Say so on stderr when people or other oracles have judged in the store: the oracle
    judges as if alone (its figures are its own), and the store then holds both, which
    coverage, export and eval combine by the store's resolution rule (an item the oracle and a
    person graded apart gets the rule's grade). Model judges are left out of those anyway."""
    others: dict[str, int] = {}
    for j in store.current_judgments():
        if j.annotator != annotator and j.role != Role.MODEL and j.grade is not None:
            others[j.annotator] = others.get(j.annotator, 0) + 1
    if others:
        names = ", ".join(
            f"{visible(name, one_line=True)} ({n})" for name, n in sorted(others.items())
        )
        warn(
            f"note: the store already holds grades by {names}: the oracle judges as if alone "
            "and reports its own figures, and coverage, export and eval will combine its grades "
            "with theirs by the store's resolution rule. To see what an oracle alone finds, "
            "simulate on a copy made before anyone judged."
        )


def store_has_samples(queue: list[PoolEntry]) -> bool:
    return any(e.stratum != "pool" for e in queue)


def oracle_identity(path: str) -> JudgeIdentity:
    """An oracle's identity: the file it answers from, by name and content."""
    import hashlib
    from pathlib import Path

    from workbench.core.judgments.judge_versions import JudgeIdentity

    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    return JudgeIdentity("simulate", scorer=f"oracle {Path(path).name}, sha256 {digest}")


def _to_target(request, store, session, answer, target, version, say):  # type: ignore[no-untyped-def]
    """Judge toward the study's target (`workbench.core.study.walk`), save, and say where the
    study stands."""
    from workbench.core.coverage import grades_counted
    from workbench.core.study.walk import judged_grades, walk_to_target
    from workbench.flows.adaptive import save_steps

    restored = {id(q.pending) for q in session.queries.values() if q.pending is not None}
    counted = grades_counted(store.current_judgments(request.annotator), request.annotator)
    grades = judged_grades(session, counted)
    steps, plan = walk_to_target(
        session, answer, grades, store.pool(), target, per_query=request.per_query,
        budget=request.budget,
    )  # fmt: skip
    save_steps(store, steps, request.annotator, ROLE, version, restored)
    from workbench.reports.coverage import study_lines

    for line in study_lines(plan)[:2]:
        say(f"simulate: {line}")
    return steps


def _in_app_order(request, store, session, answer, version):  # type: ignore[no-untyped-def]
    """Judge in the order the app serves (`core.study.walk.walk_in_app_order`), and save."""
    from workbench.core.study.walk import walk_in_app_order
    from workbench.flows.adaptive import save_steps, stored_target

    restored = {id(q.pending) for q in session.queries.values() if q.pending is not None}
    steps = walk_in_app_order(
        session, answer, store.pool(), stored_target(store), budget=request.budget
    )
    save_steps(store, steps, request.annotator, ROLE, version, restored)
    return steps


def _adaptive(
    request: SimulateRequest,
    store: JudgmentStore,
    oracle: Qrels,
    identity: JudgeIdentity,
    say: Say,
    warn: Say,
) -> None:
    """Judge by the adaptive policy (workbench.flows.adaptive), then say where each
    query stands."""
    from workbench.core.adaptive import PolicyConfig
    from workbench.core.errors import InputError
    from workbench.flows.adaptive import choose_judge, session_from_store, walk_and_save

    judge = None
    if request.judge is not None:
        judge, said = choose_judge(store, request.judge)
        if said:
            warn(f"simulate: {said}")
    target = None
    if request.target is not None:
        from workbench.core.study import parse_target

        try:
            target = parse_target(request.target)
        except ValueError as exc:
            raise InputError([str(exc)]) from None
    seed = store.poolings()[-1]["seed"] or 0
    config = PolicyConfig(
        max_per_query=request.per_query, stop_when_certified=not request.no_stop, seed=seed
    )
    session = session_from_store(store, config, annotator=request.annotator, judge=judge)
    store.add_annotator(request.annotator, ROLE)
    version = store.record_judge(request.annotator, identity)
    limit = request.per_query if request.per_query is not None else 10**9
    answer = lambda q, d: oracle.get(q, {}).get(d, 0)  # noqa: E731
    if target is not None:
        steps = _to_target(request, store, session, answer, target, version, say)
    elif request.per_query is None:
        steps = _in_app_order(request, store, session, answer, version)
    else:
        steps = walk_and_save(
            store, session, answer, request.annotator, limit, judge_version=version,
            budget=request.budget,
        )  # fmt: skip
    relevant = sum(1 for s in steps if s.grade >= 1)
    states = {qid: session.state(qid) for qid in session.queries}
    certified = sum(1 for state in states.values() if state.status == "complete")
    say(
        f"simulate: {len(steps)} judgments by {request.annotator} ({relevant} relevant) by the "
        f"adaptive policy; {certified} of {len(session.queries)} queries certified"
    )
    say(against_oracle(summarize_rows(list(rows_from_states(states, oracle).values()))))
