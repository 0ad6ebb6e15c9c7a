"""`workbench judge-model`'s use case: a scoring model turned into a graded judge, calibrated on
humans.

The scorer is a cross-encoder (its raw logit per pair; the default) or a bi-encoder (cosine
similarity of query and passage embeddings, the dense retriever's score): a weaker judge, but
one that ships with the package. Every pooled (query, passage) is scored with the model; score
-> grade cut points are fitted on a training share of the human labels and the judge is
measured on the held-out rest (see `workbench.core.judges.calibration`). The grades of every pooled
item are stored as a non-human annotator (role 'model') with import-labels' re-import rules: an
unchanged grade is not written again, a changed one is a new row. Each run is logged in meta
"judge-model:NAME" (scorer, model, thresholds, fit report). Nothing is written when the model
cannot be loaded or too few human labels exist."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from workbench.core.errors import InputError
from workbench.core.judges.calibration import LOGIT_SCORE, RESOLVED, CalibrationReport
from workbench.core.judges.judge_model_report import JudgeModelReport, LabelSource, Scoring
from workbench.core.model import HUMAN_ROLES

if TYPE_CHECKING:
    from workbench.core.judges.calibration import ScoreCuts
    from workbench.core.judgments.judge_versions import JudgeIdentity
    from workbench.core.model import Doc, Query
    from workbench.core.store_url import StoreLocation
    from workbench.retrieval.select import ProgressCallback
    from workbench.store import JudgmentStore

CROSS_ENCODER = "cross-encoder"
BI_ENCODER = "bi-encoder"
SCORE_MEANING = {
    CROSS_ENCODER: LOGIT_SCORE,
    BI_ENCODER: "cosine similarity of the query and passage embeddings (-1..1), higher = more "
    "relevant",
}


@dataclass(frozen=True)
class ModelJudgeRequest:
    """One judge-model run: the store, the scorer and its model, the judge's name, and how the
    cuts are fitted (the command's options, checked)."""

    db: StoreLocation
    scorer: str
    model: str
    name: str
    fit_on: str = RESOLVED
    holdout: float = 0.3
    seed: int = 0
    rel_threshold: int = 1
    batch_size: int = 32
    cache_dir: str | None = None


def judge_with_model(
    request: ModelJudgeRequest, min_labels: int, tell: Callable[[str], None]
) -> JudgeModelReport | None:
    """Score the store's pool, calibrate, store the grades; None when the model cannot be
    loaded (said through `tell`, as every line for the person waiting)."""
    from workbench.store import open_store

    with open_store(request.db) as store:
        return judge(store, request, min_labels, tell)


def human_grades(
    store: JudgmentStore, fit_on: str, judge: str
) -> tuple[dict[tuple[str, str], int], LabelSource]:
    """The labels to fit on, and where they came from (`outside_pool` still 0)."""
    from workbench.core.judgments.resolve import consensus_grades, grades_by_annotator, roles_of

    current = [j for j in store.current_judgments() if j.annotator != judge]
    grades = grades_by_annotator(current)
    roles = roles_of(current)
    if fit_on == RESOLVED:
        resolved, unresolved = consensus_grades(grades, roles)
        humans = tuple(sorted(a for a, r in roles.items() if r in HUMAN_ROLES))
        return resolved, LabelSource(RESOLVED, 0, None, humans, len(unresolved))
    if fit_on == judge:
        raise InputError([f"--fit-on {fit_on}: a judge cannot be fitted on its own grades"])
    role = store.annotators().get(fit_on)
    if role is None:
        known = ", ".join(sorted(store.annotators())) or "none"
        raise InputError([f"--fit-on {fit_on}: no such annotator in the store (known: {known})"])
    return dict(grades.get(fit_on, {})), LabelSource(fit_on, 0, role)


def fitting_labels(
    store: JudgmentStore, request: ModelJudgeRequest, pooled: set[tuple[str, str]], min_labels: int
) -> tuple[dict[tuple[str, str], int], LabelSource]:
    """The pooled human labels to fit on; InputError (naming other labellers) when too few."""
    from workbench.reports.calibration import source_text

    human, source = human_grades(store, request.fit_on, request.name)
    overlap = {item: g for item, g in human.items() if item in pooled}
    source = replace(source, outside_pool=len(human) - len(overlap))
    if len(overlap) < min_labels:
        problems = [
            f"{request.db}: only {len(overlap)} human labels ({source_text(source)}) overlap the "
            f"pool; fitting thresholds needs at least {min_labels}, and held-out figures "
            "on fewer mean little. Judge more items first (or lower --min-labels)."
        ]
        others = _other_labellers(store, request.fit_on, request.name)
        if others:
            problems.append(f"labels the fit could use with --fit-on NAME: {others}")
        raise InputError(problems)
    return overlap, source


def score_and_calibrate(
    request: ModelJudgeRequest,
    queries: list[Query],
    docs: dict[str, Doc],
    pooled: list[tuple[str, str]],
    overlap: dict[tuple[str, str], int],
    scale: dict[int, str],
    min_labels: int,
    tell: Callable[[str], None],
) -> tuple[dict[tuple[str, str], float], Scoring, CalibrationReport] | None:
    """Every pooled pair's score and the cuts fitted on `overlap`; None (said on stderr) when
    the model cannot be loaded."""
    from workbench.core.judges.calibration import calibrate
    from workbench.reports.progress import Heartbeat, StageProgress
    from workbench.retrieval import ModelUnavailable

    score_pool = _bi_encoder_scores if request.scorer == BI_ENCODER else _cross_encoder_scores
    tell(f"Scoring {len(pooled)} pooled pairs with the {request.scorer} {request.model}"
         " (the model loads first).")
    try:
        with Heartbeat(StageProgress()) as progress:
            scores, scoring = score_pool(request, queries, docs, pooled, progress)
    except ModelUnavailable as error:
        tell(f"error: {error.reason}")
        if request.scorer != BI_ENCODER:  # no cross-encoder ships in a package; a bi-encoder does
            tell("hint: --scorer bi-encoder scores with the packaged sentence-transformers/"
                 "all-MiniLM-L6-v2, which needs no download")  # fmt: skip
        return None
    try:
        calibration = calibrate(
            scores,
            overlap,
            scale,
            holdout=request.holdout,
            seed=request.seed,
            rel_threshold=request.rel_threshold,
            min_labels=min_labels,
            score_meaning=SCORE_MEANING[request.scorer],
        )
    except ValueError as error:  # labels lost to unscorable (NaN) items
        raise InputError([f"{request.db}: {error}"]) from error
    return scores, scoring, calibration


# long: the pool read and checked, scored and calibrated, then written with its log at once
def judge(
    store: JudgmentStore,
    request: ModelJudgeRequest,
    min_labels: int,
    tell: Callable[[str], None],
) -> JudgeModelReport | None:
    """Score the pool, calibrate, store the grades; None when the model cannot be loaded."""
    from workbench.core.judges.calibration import grade_counts
    from workbench.core.judgments.labels import Label, plan_import
    from workbench.flows.annotator_roles import check_model_name
    from workbench.retrieval.models import model_fingerprint

    check_model_name(store, request.name, "a model judge needs a name of its own")
    pool = store.pool()
    if not pool:
        raise InputError([f"{request.db}: the pool is empty (build one with `workbench pool`)"])
    pooled = [(e.query_id, e.doc_id) for e in pool]
    overlap, source = fitting_labels(store, request, set(pooled), min_labels)
    docs = store.docs(d for _, d in pooled)
    missing = sorted({d for _, d in pooled if d not in docs})
    if missing:
        raise InputError([f"{request.db}: pooled docs without text: {', '.join(missing[:10])}"])
    queries = store.queries()
    scale = store.grade_scale()
    scored = score_and_calibrate(
        request, queries, docs, pooled, overlap, scale, min_labels, tell
    )
    if scored is None:
        return None
    scores, scoring, calibration = scored
    grades = {item: calibration.score_cuts.grade(score) for item, score in scores.items()}
    fingerprint = model_fingerprint(scoring.resolved_model)
    identity = judge_identity(request.scorer, request.model, fingerprint, calibration.score_cuts)
    rows, written = plan_import(
        [Label(q, d, grades[(q, d)], "", 0) for q, d in pooled if (q, d) in grades],
        name=request.name,
        path=f"judge-model {request.model}",
        scale=scale,
        known_queries={q.query_id for q in queries},
        pooled=set(pooled),
        current={(j.query_id, j.doc_id): j for j in store.current_judgments(request.name)},
        version=identity.version,
    )
    report = JudgeModelReport(
        calibration=calibration,
        judge=request.name,
        scorer=request.scorer,
        model=request.model,
        model_fingerprint=fingerprint,
        scoring=scoring,
        labels_from=source,
        model_grades=grade_counts(grades.values(), scale),
        written=written,
        unscored=sum(item not in scores for item in pooled),
        pool_items=len(pooled),
        identity=identity,
    )
    key = f"judge-model:{request.name}"
    log = json.loads(store.get_meta(key, "[]") or "[]")
    log.append({"at": time.time(), **report.to_json()})
    store.record_judge(request.name, identity)
    store.add_judgments(rows, meta={key: json.dumps(log)})
    return report


def judge_identity(scorer: str, model: str, fingerprint: str, cuts: ScoreCuts) -> JudgeIdentity:
    """A scoring judge's identity: the scorer kind, the model as named, its weights' fingerprint
    when it is a local folder, and the fitted cuts (a re-fit is a new version: its grades may
    differ on the same scores)."""
    from workbench.core.judgments.judge_versions import JudgeIdentity, cuts_digest

    parts = [scorer, f"cuts {cuts_digest(cuts.cuts, cuts.grades)}"]
    if fingerprint:
        parts.append(f"weights {fingerprint[:12]}")
    return JudgeIdentity("judge-model", model, scorer=", ".join(parts))


def _cross_encoder_scores(
    request: ModelJudgeRequest,
    queries: list[Query],
    docs: dict[str, Doc],
    pooled: list[tuple[str, str]],
    progress: ProgressCallback,
) -> tuple[dict[tuple[str, str], float], Scoring]:
    """Each pooled pair's raw cross-encoder logit (pairs with a NaN score left out), with the
    resolved model and timings. Raises ModelUnavailable."""
    from workbench.retrieval import CrossEncoderReranker

    started = time.monotonic()
    reranker = CrossEncoderReranker(
        model=request.model, progress=progress, batch_size=request.batch_size
    )
    loaded = time.monotonic()
    candidates: dict[str, list[str]] = {}
    for qid, doc_id in pooled:
        candidates.setdefault(qid, []).append(doc_id)
    depth = max(len(ids) for ids in candidates.values())
    with_pool = [q for q in queries if q.query_id in candidates]
    scored_run = reranker.rerank(with_pool, docs, candidates, depth)
    scores = {
        (qid, doc_id): score
        for qid, by_doc in scored_run.scores.items()
        for doc_id, score in by_doc.items()
    }
    return scores, Scoring(
        resolved_model=reranker.resolved_model,
        items=len(scores),
        load_seconds=round(loaded - started, 2),
        score_seconds=round(time.monotonic() - loaded, 2),
    )


def _bi_encoder_scores(
    request: ModelJudgeRequest,
    queries: list[Query],
    docs: dict[str, Doc],
    pooled: list[tuple[str, str]],
    progress: ProgressCallback,
) -> tuple[dict[tuple[str, str], float], Scoring]:
    """Each pooled pair's cosine similarity from the dense retriever over the pooled passages
    (sorted by id, so the embedding cache is reused across runs), with the resolved model and
    timings; the load time includes encoding passages the cache lacked. Raises
    ModelUnavailable."""
    import math

    from workbench.retrieval import DenseRetriever

    started = time.monotonic()
    retriever = DenseRetriever(
        [docs[d] for d in sorted({d for _, d in pooled})],
        model=request.model,
        cache_dir=request.cache_dir,
        batch_size=request.batch_size,
        progress=progress,
    )
    retriever.model()  # a warm cache defers loading; fail here, before any scoring
    loaded = time.monotonic()
    named = {q for q, _ in pooled}
    scores = retriever.score_pairs([q for q in queries if q.query_id in named], pooled)
    finite = {item: s for item, s in scores.items() if math.isfinite(s)}
    return finite, Scoring(
        resolved_model=retriever.resolved_model,
        items=len(finite),
        load_seconds=round(loaded - started, 2),
        score_seconds=round(time.monotonic() - loaded, 2),
        passages=len(retriever.doc_ids),
        passages_encoded=retriever.encoded_count,
    )


def _other_labellers(store: JudgmentStore, fit_on: str, judge: str) -> str:
    """Annotators other than the judge and the --fit-on choice, with role and label count."""
    counts: dict[str, int] = {}
    for judgment in store.current_judgments():
        counts[judgment.annotator] = counts.get(judgment.annotator, 0) + 1
    roles = store.annotators()
    return ", ".join(
        f"{name} ({roles.get(name, '?')}, {count} labels)"
        for name, count in sorted(counts.items())
        if name not in (fit_on, judge)
    )
