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
from typing import TYPE_CHECKING, Any

from workbench.core.calibration import LOGIT_SCORE
from workbench.core.display import say
from workbench.core.errors import InputError
from workbench.core.model import HUMAN_ROLES
from workbench.core.names import annotator_name

if TYPE_CHECKING:
    from workbench.core.model import Doc, Query
    from workbench.retrieval.select import ProgressCallback
    from workbench.store import JudgmentStore

RESOLVED = "resolved"
CROSS_ENCODER = "cross-encoder"
BI_ENCODER = "bi-encoder"
SCORE_MEANING = {
    CROSS_ENCODER: LOGIT_SCORE,
    BI_ENCODER: "cosine similarity of the query and passage embeddings (-1..1), higher = more "
    "relevant",
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, metavar="FILE", help="the judgments store (SQLite)")
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
        "--as", dest="name", required=True, type=annotator_name, help="annotator name for the judge"
    )
    parser.add_argument(
        "--fit-on",
        default=RESOLVED,
        metavar="resolved|ANNOTATOR",
        help="human labels to fit on: the resolved human grade (default; items whose humans "
        "disagree without adjudication are left out) or one annotator's grades",
    )
    parser.add_argument(
        "--holdout", type=float, default=0.3, help="share of human labels held out (default 0.3)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the held-out split")
    parser.add_argument(
        "--rel-threshold", type=int, default=1, help="grade >= this is relevant (binary kappa)"
    )
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
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def human_grades(
    store: JudgmentStore, fit_on: str, judge: str
) -> tuple[dict[tuple[str, str], int], dict]:
    """The labels to fit on, and a note of where they came from."""
    from workbench.core.agreement import consensus_grades, grades_by_annotator, roles_of

    current = [j for j in store.current_judgments() if j.annotator != judge]
    grades = grades_by_annotator(current)
    roles = roles_of(current)
    if fit_on == RESOLVED:
        resolved, unresolved = consensus_grades(grades, roles)
        humans = sorted(a for a, r in roles.items() if r in HUMAN_ROLES)
        return resolved, {"fit_on": RESOLVED, "annotators": humans, "unresolved": len(unresolved)}
    if fit_on == judge:
        raise InputError([f"--fit-on {fit_on}: a judge cannot be fitted on its own grades"])
    role = store.annotators().get(fit_on)
    if role is None:
        known = ", ".join(sorted(store.annotators())) or "none"
        raise InputError([f"--fit-on {fit_on}: no such annotator in the store (known: {known})"])
    return dict(grades.get(fit_on, {})), {"fit_on": fit_on, "role": role}


def run(args: argparse.Namespace) -> int:
    import os

    from workbench.commands.import_labels import Label, check_model_name, plan_import
    from workbench.commands.pool import StageProgress
    from workbench.core.calibration import MIN_HUMAN_LABELS, calibrate, grade_counts
    from workbench.retrieval import DEFAULT_DENSE_MODEL, DEFAULT_RERANK_MODEL
    from workbench.store import open_store

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if args.model is None:
        args.model = DEFAULT_DENSE_MODEL if args.scorer == BI_ENCODER else DEFAULT_RERANK_MODEL
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

    with open_store(args.db) as store:
        check_model_name(store, args.name, "a model judge needs a name of its own")
        pool = store.pool()
        if not pool:
            raise InputError([f"{args.db}: the pool is empty (build one with `workbench pool`)"])
        pooled = [(e.query_id, e.doc_id) for e in pool]
        human, source = human_grades(store, args.fit_on, args.name)
        in_pool = set(pooled)
        overlap = {item: g for item, g in human.items() if item in in_pool}
        source["outside_pool"] = len(human) - len(overlap)
        if len(overlap) < min_labels:
            problems = [
                f"{args.db}: only {len(overlap)} human labels ({_source(source)}) overlap the "
                f"pool; fitting thresholds needs at least {min_labels}, and held-out figures "
                "on fewer mean little. Judge more items first (or lower --min-labels)."
            ]
            others = _other_labellers(store, args.fit_on, args.name)
            if others:
                problems.append(f"labels the fit could use with --fit-on NAME: {others}")
            raise InputError(problems)
        docs = store.docs(d for _, d in pooled)
        missing = sorted({d for _, d in pooled if d not in docs})
        if missing:
            raise InputError([f"{args.db}: pooled docs without text: {', '.join(missing[:10])}"])
        queries = store.queries()
        scale = store.grade_scale()

        from workbench.retrieval import ModelUnavailable
        from workbench.retrieval.models import model_fingerprint

        score_pool = _bi_encoder_scores if args.scorer == BI_ENCODER else _cross_encoder_scores
        try:
            scores, scoring = score_pool(args, queries, docs, pooled, StageProgress())
        except ModelUnavailable as error:
            say(f"error: {error.reason}", file=sys.stderr)
            return 2
        unscored = [item for item in pooled if item not in scores]

        try:
            thresholds, report = calibrate(
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

        grades = {item: thresholds.grade(score) for item, score in scores.items()}
        labels = [
            Label(qid, doc_id, grades[(qid, doc_id)], "", 0)
            for qid, doc_id in pooled
            if (qid, doc_id) in grades
        ]
        rows, summary = plan_import(
            labels,
            name=args.name,
            path=f"judge-model {args.model}",
            scale=scale,
            known_queries={q.query_id for q in queries},
            pooled=in_pool,
            current={(j.query_id, j.doc_id): j for j in store.current_judgments(args.name)},
        )
        summary.update(unscored=len(unscored), pool_items=len(pooled))
        resolved_model = scoring.pop("resolved_model")
        report.update(
            judge=args.name,
            scorer=args.scorer,
            model=args.model,
            resolved_model=resolved_model,
            model_fingerprint=model_fingerprint(resolved_model),
            labels_from=source,
            scoring={"items": len(scores), **scoring},
            model_grades=grade_counts(grades.values(), scale),
            written=summary,
        )
        key = f"judge-model:{args.name}"
        log = json.loads(store.get_meta(key, "[]") or "[]")
        log.append({"at": time.time(), **report})
        store.add_judgments(rows, meta={key: json.dumps(log)})

    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        say("\n".join(format_report(report, args.db)))
    return 0


def _cross_encoder_scores(
    args: argparse.Namespace,
    queries: list[Query],
    docs: dict[str, Doc],
    pooled: list[tuple[str, str]],
    progress: ProgressCallback,
) -> tuple[dict[tuple[str, str], float], dict[str, Any]]:
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
    return scores, {
        "resolved_model": reranker.resolved_model,
        "load_seconds": round(loaded - started, 2),
        "score_seconds": round(time.monotonic() - loaded, 2),
    }


def _bi_encoder_scores(
    args: argparse.Namespace,
    queries: list[Query],
    docs: dict[str, Doc],
    pooled: list[tuple[str, str]],
    progress: ProgressCallback,
) -> tuple[dict[tuple[str, str], float], dict[str, Any]]:
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
    return {item: s for item, s in scores.items() if math.isfinite(s)}, {
        "resolved_model": retriever.resolved_model,
        "load_seconds": round(loaded - started, 2),
        "score_seconds": round(time.monotonic() - loaded, 2),
        "passages": len(retriever.doc_ids),
        "passages_encoded": retriever.encoded_count,
    }


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


def _source(source: dict) -> str:
    if source["fit_on"] == RESOLVED:
        return f"resolved human grades, {source['unresolved']} unresolved left out"
    return f"annotator {source['fit_on']!r}"


def _with_ci(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "undef"
    return f"{value:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{value:.3f}"


def _bound(value: float | None, infinite: str) -> str:
    return infinite if value is None else f"{value:.4f}"


def format_report(report: dict, db: str) -> list[str]:
    """ScoreCuts, how they were chosen, held-out agreement beside in-sample, and the verdict."""
    split = report["split"]
    scoring = report["scoring"]
    if report.get("scorer", CROSS_ENCODER) == CROSS_ENCODER:  # the line predates --scorer
        header = f"Judge {report['judge']!r}: {report['model']}"
        load = "model load"
    else:
        header = f"Judge {report['judge']!r}: {report['model']} as a {report['scorer']}"
        load = (
            f"model load; {scoring['passages_encoded']} of {scoring['passages']} passages "
            "encoded, the rest from the embedding cache"
        )
    lines = [
        f"{header} ({scoring['items']} pooled items scored in {scoring['score_seconds']:.1f}s "
        f"after a {scoring['load_seconds']:.1f}s {load})",
        f"Fitted on {report['human_labels']} human labels ({_source(report['labels_from'])}): "
        f"{split['train']} to fit, {split['held_out']} held out "
        f"(holdout {split['holdout']}, seed {split['seed']}; {split['method']})",
        f"  how: {report['method']}",
        f"  score: {report['score']}",
        "ScoreCuts (score -> grade)",
    ]
    for grade_range in report["grade_ranges"]:
        if grade_range["empty"]:
            lines.append(f"  grade {grade_range['grade']}: never given (empty score interval)")
            continue
        low = _bound(grade_range["low"], "-inf")
        high = _bound(grade_range["high"], "+inf")
        count = report["model_grades"].get(grade_range["grade"], 0)
        lines.append(f"  grade {grade_range['grade']}: [{low}, {high})   {count} pooled items")

    def block(title: str, figures: dict) -> None:
        lines.append(f"{title}   n={figures['n']} human labels")
        lines.append(f"  kappa           {_with_ci(figures['kappa'], figures['kappa_ci'])}")
        lines.append(
            f"  weighted kappa  {_with_ci(figures['weighted_kappa'], figures['weighted_kappa_ci'])}"
        )
        lines.append(
            f"  binary kappa    {_with_ci(figures['binary_kappa'], figures['binary_kappa_ci'])}"
            f"   (relevant at grade >= {report['rel_threshold']})"
        )
        if figures["agreement"] is not None:
            lines.append(f"  exact agreement {figures['agreement']:.3f}")

    if report["held_out"] is not None:
        block("Held-out agreement (these decide)", report["held_out"])
    block("In-sample agreement on the fitting labels (flatters the judge)", report["train"])
    bar = report["bar"]
    if report["meets_bar"] and not report["below_bar"]:
        verdict = f"meets the bar: kappa >= {bar} on the {report['judged_on']} labels"
    elif report["meets_bar"]:
        verdict = (
            f"meets the bar on kappa >= {bar} ({report['judged_on']}), below it on "
            + ", ".join(report["below_bar"])
        )
    else:
        verdict = f"BELOW the bar kappa >= {bar} on the {report['judged_on']} labels: " + ", ".join(
            report["below_bar"]
        )
    lines.append(verdict)
    for warning in report["warnings"]:
        lines.append(f"warning: {warning}")
    written = report["written"]
    lines.append(
        f"Stored {written['written']} grades as {report['judge']!r} (role model): "
        f"{written['new']} new, {written['changed']} changed, {written['unchanged']} unchanged"
        + (f", {written['unscored']} unscored (no finite score)" if written["unscored"] else "")
    )
    lines.append(f"Against every human: workbench agree --db {db}")
    return lines
