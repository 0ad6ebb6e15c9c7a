"""`workbench judge-model`: a scoring model turned into a graded judge, calibrated on humans.

The scorer is a cross-encoder (its raw logit per pair; the default) or a bi-encoder (cosine
similarity of query and passage embeddings, the dense retriever's score): a weaker judge, but
one that ships with the package. Every pooled (query, passage) is scored with the model; score
-> grade cut points are fitted on a training share of the human labels and the judge is
measured on the held-out rest (see `workbench.core.calibration`). The grades of every pooled
item are stored as a non-human annotator (role 'model') with import-labels' re-import rules: an
unchanged grade is not written again, a changed one is a new row. Each run is logged in meta
"judge-model:NAME" (scorer, model, thresholds, fit report). Nothing is written when the model
cannot be loaded or too few human labels exist."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from workbench.commands import (
    add_output_options,
    add_rel_threshold_option,
    add_store_option,
    finite_number,
    output_format,
    say,
)
from workbench.core.calibration import (
    LOGIT_SCORE,
    MIN_HUMAN_LABELS,
    RESOLVED,
    CalibrationReport,
)
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode
from workbench.core.judge_model_report import JudgeModelReport, LabelSource, Scoring
from workbench.core.model import HUMAN_ROLES
from workbench.core.names import annotator_name

if TYPE_CHECKING:
    from workbench.core.calibration import ScoreCuts
    from workbench.core.judge_versions import JudgeIdentity
    from workbench.core.model import Doc, Query
    from workbench.retrieval.select import ProgressCallback
    from workbench.store import JudgmentStore

CROSS_ENCODER = "cross-encoder"
BI_ENCODER = "bi-encoder"
SCORE_MEANING = {
    CROSS_ENCODER: LOGIT_SCORE,
    BI_ENCODER: "cosine similarity of the query and passage embeddings (-1..1), higher = more "
    "relevant",
}


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    parser.add_argument(
        "--scorer",
        choices=(CROSS_ENCODER, BI_ENCODER),
        default=CROSS_ENCODER,
        help="how pairs are scored: a cross-encoder's logit (default) or a bi-encoder's cosine "
        "similarity",
    )
    parser.add_argument(
        "--model",
        default=None,
        metavar="NAME_OR_PATH",
        help="the scorer's model, folder or name (default: cross-encoder "
        "cross-encoder/ms-marco-MiniLM-L6-v2; bi-encoder the packaged "
        "sentence-transformers/all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--annotator",
        "--as",
        dest="name",
        required=True,
        type=annotator_name,
        help="annotator name for the judge (--as: its older spelling)",
    )
    parser.add_argument(
        "--fit-on",
        default=RESOLVED,
        metavar="resolved|ANNOTATOR",
        help="human labels to fit on: the resolved human grade (default; items whose humans "
        "disagree without adjudication are left out) or one annotator's grades",
    )
    parser.add_argument(
        "--holdout",
        type=finite_number,
        default=0.3,
        help="share of human labels held out (default 0.3)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the held-out split")
    add_rel_threshold_option(parser, "grade >= this is relevant (binary kappa)")
    parser.add_argument(
        "--min-labels",
        type=int,
        default=None,
        help="refuse to fit on fewer overlapping human labels (default 20)",
    )
    parser.add_argument("--batch-size", type=int, default=32, help="model batch size")
    parser.add_argument(
        "--cache-dir", metavar="DIR", help="embedding cache of the bi-encoder (as `workbench pool`)"
    )
    add_output_options(parser)


def human_grades(
    store: JudgmentStore, fit_on: str, judge: str
) -> tuple[dict[tuple[str, str], int], LabelSource]:
    """The labels to fit on, and where they came from (`outside_pool` still 0)."""
    from workbench.core.resolve import consensus_grades, grades_by_annotator, roles_of

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


def run(args: argparse.Namespace) -> int:
    import os

    from workbench.retrieval import DEFAULT_DENSE_MODEL, DEFAULT_RERANK_MODEL
    from workbench.store import open_store

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if args.model is None:
        args.model = DEFAULT_DENSE_MODEL if args.scorer == BI_ENCODER else DEFAULT_RERANK_MODEL
    min_labels = check_options(args)
    with open_store(args.db) as store:
        report = judge(store, args, min_labels)
    if report is None:
        return ExitCode.USAGE
    if output_format(args) == "json":
        print(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        from workbench.reports.calibration import judge_model_document
        from workbench.reports.render import render_text

        print(render_text(judge_model_document(report, args.db)), end="")
    return ExitCode.OK


def check_options(args: argparse.Namespace) -> int:
    """The minimum of human labels; InputError listing every bad option."""
    problems = []
    if not 0.0 <= args.holdout < 1.0:
        problems.append(f"--holdout {args.holdout}: must be at least 0 and below 1")
    min_labels = MIN_HUMAN_LABELS if args.min_labels is None else args.min_labels
    if min_labels < 2:
        problems.append(f"--min-labels {min_labels}: must be at least 2")
    if args.batch_size < 1:
        problems.append(f"--batch-size {args.batch_size}: must be at least 1")
    if problems:
        raise InputError(problems)
    return min_labels


def fitting_labels(
    store: JudgmentStore, args: argparse.Namespace, pooled: set[tuple[str, str]], min_labels: int
) -> tuple[dict[tuple[str, str], int], LabelSource]:
    """The pooled human labels to fit on; InputError (naming other labellers) when too few."""
    from workbench.reports.calibration import source_text

    human, source = human_grades(store, args.fit_on, args.name)
    overlap = {item: g for item, g in human.items() if item in pooled}
    source = replace(source, outside_pool=len(human) - len(overlap))
    if len(overlap) < min_labels:
        problems = [
            f"{args.db}: only {len(overlap)} human labels ({source_text(source)}) overlap the "
            f"pool; fitting thresholds needs at least {min_labels}, and held-out figures "
            "on fewer mean little. Judge more items first (or lower --min-labels)."
        ]
        others = _other_labellers(store, args.fit_on, args.name)
        if others:
            problems.append(f"labels the fit could use with --fit-on NAME: {others}")
        raise InputError(problems)
    return overlap, source


def score_and_calibrate(
    args: argparse.Namespace,
    queries: list[Query],
    docs: dict[str, Doc],
    pooled: list[tuple[str, str]],
    overlap: dict[tuple[str, str], int],
    scale: dict[int, str],
    min_labels: int,
) -> tuple[dict[tuple[str, str], float], Scoring, CalibrationReport] | None:
    """Every pooled pair's score and the cuts fitted on `overlap`; None (said on stderr) when
    the model cannot be loaded."""
    from workbench.core.calibration import calibrate
    from workbench.reports.progress import Heartbeat, StageProgress
    from workbench.retrieval import ModelUnavailable

    score_pool = _bi_encoder_scores if args.scorer == BI_ENCODER else _cross_encoder_scores
    say(f"Scoring {len(pooled)} pooled pairs with the {args.scorer} {args.model}"
        " (the model loads first).", file=sys.stderr)
    try:
        with Heartbeat(StageProgress()) as progress:
            scores, scoring = score_pool(args, queries, docs, pooled, progress)
    except ModelUnavailable as error:
        say(f"error: {error.reason}", file=sys.stderr)
        if args.scorer != BI_ENCODER:  # no cross-encoder ships in a package; a bi-encoder does
            say("hint: --scorer bi-encoder scores with the packaged sentence-transformers/"
                "all-MiniLM-L6-v2, which needs no download", file=sys.stderr)  # fmt: skip
        return None
    try:
        calibration = calibrate(
            scores,
            overlap,
            scale,
            holdout=args.holdout,
            seed=args.seed,
            rel_threshold=args.rel_threshold,
            min_labels=min_labels,
            score_meaning=SCORE_MEANING[args.scorer],
        )
    except ValueError as error:  # labels lost to unscorable (NaN) items
        raise InputError([f"{args.db}: {error}"]) from error
    return scores, scoring, calibration


def judge(
    store: JudgmentStore, args: argparse.Namespace, min_labels: int
) -> JudgeModelReport | None:
    """Score the pool, calibrate, store the grades; None when the model cannot be loaded."""
    from workbench.commands.import_labels import check_model_name
    from workbench.core.calibration import grade_counts
    from workbench.core.labels import Label, plan_import
    from workbench.retrieval.models import model_fingerprint

    check_model_name(store, args.name, "a model judge needs a name of its own")
    pool = store.pool()
    if not pool:
        raise InputError([f"{args.db}: the pool is empty (build one with `workbench pool`)"])
    pooled = [(e.query_id, e.doc_id) for e in pool]
    overlap, source = fitting_labels(store, args, set(pooled), min_labels)
    docs = store.docs(d for _, d in pooled)
    missing = sorted({d for _, d in pooled if d not in docs})
    if missing:
        raise InputError([f"{args.db}: pooled docs without text: {', '.join(missing[:10])}"])
    queries = store.queries()
    scale = store.grade_scale()
    scored = score_and_calibrate(args, queries, docs, pooled, overlap, scale, min_labels)
    if scored is None:
        return None
    scores, scoring, calibration = scored
    grades = {item: calibration.score_cuts.grade(score) for item, score in scores.items()}
    fingerprint = model_fingerprint(scoring.resolved_model)
    identity = judge_identity(args.scorer, args.model, fingerprint, calibration.score_cuts)
    rows, written = plan_import(
        [Label(q, d, grades[(q, d)], "", 0) for q, d in pooled if (q, d) in grades],
        name=args.name,
        path=f"judge-model {args.model}",
        scale=scale,
        known_queries={q.query_id for q in queries},
        pooled=set(pooled),
        current={(j.query_id, j.doc_id): j for j in store.current_judgments(args.name)},
        version=identity.version,
    )
    report = JudgeModelReport(
        calibration=calibration,
        judge=args.name,
        scorer=args.scorer,
        model=args.model,
        model_fingerprint=fingerprint,
        scoring=scoring,
        labels_from=source,
        model_grades=grade_counts(grades.values(), scale),
        written=written,
        unscored=sum(item not in scores for item in pooled),
        pool_items=len(pooled),
        identity=identity,
    )
    key = f"judge-model:{args.name}"
    log = json.loads(store.get_meta(key, "[]") or "[]")
    log.append({"at": time.time(), **report.to_json()})
    store.record_judge(args.name, identity)
    store.add_judgments(rows, meta={key: json.dumps(log)})
    return report


def judge_identity(scorer: str, model: str, fingerprint: str, cuts: ScoreCuts) -> JudgeIdentity:
    """A scoring judge's identity: the scorer kind, the model as named, its weights' fingerprint
    when it is a local folder, and the fitted cuts (a re-fit is a new version: its grades may
    differ on the same scores)."""
    from workbench.core.judge_versions import JudgeIdentity, cuts_digest

    parts = [scorer, f"cuts {cuts_digest(cuts.cuts, cuts.grades)}"]
    if fingerprint:
        parts.append(f"weights {fingerprint[:12]}")
    return JudgeIdentity("judge-model", model, scorer=", ".join(parts))


def _cross_encoder_scores(
    args: argparse.Namespace,
    queries: list[Query],
    docs: dict[str, Doc],
    pooled: list[tuple[str, str]],
    progress: ProgressCallback,
) -> tuple[dict[tuple[str, str], float], Scoring]:
    """Each pooled pair's raw cross-encoder logit (pairs with a NaN score left out), with the
    resolved model and timings. Raises ModelUnavailable."""
    from workbench.retrieval import CrossEncoderReranker

    started = time.monotonic()
    reranker = CrossEncoderReranker(model=args.model, progress=progress, batch_size=args.batch_size)
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
    args: argparse.Namespace,
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
        model=args.model,
        cache_dir=args.cache_dir,
        batch_size=args.batch_size,
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
