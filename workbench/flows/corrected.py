"""`workbench eval --qrels STORE --judge NAME`'s use case: each run's P@k, R@k and nDCG@k from a
model judge's labels, corrected by the human labels of the store's recorded design (a
Horvitz-Thompson difference estimator, `workbench.core.judges.design_estimate`). Without a recorded
design draw, or while drawn items wait for a human grade, the rows say why they have no
estimate: human labels in queue order are not a probability sample."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.audit.audit import Problem
    from workbench.core.judges.design import Design
    from workbench.core.judges.ppi import CorrectedMetric


NOT_VALIDATED = (
    "R@k and nDCG@k are not validated: with few drawn items per query their per-query ratios"
    " are biased, and in simulation (bench/design_sim.py, four collections, held-out seeds)"
    " their 95% intervals held the truth in only .70-1.00 (R@k) and .38-1.00 (nDCG@k, worst"
    " on graded cranfield) of draws, so they are shown as points, '(n/v)', without an interval"
    " (--json keeps it); read them as indicative, P@k as the corrected figure"
)


@dataclass(frozen=True)
class CorrectedRuns:
    """The corrected rows (run x cutoff x measure), the warnings about the judge's labels
    (versions mixed) and what the design is (or why there is none)."""

    rows: list[CorrectedMetric]
    warnings: list[Problem]
    design: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# long: one read of the store, then the design's state, then each run's rows
def judge_corrected_runs(
    store_path: str,
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    judge_name: str,
    ks: list[int],
    rel_threshold: int | None = 1,
    target_width: float | None = None,
    target_key: str | None = None,
) -> CorrectedRuns:
    """The corrected figures of `runs` from the store's judge `judge_name` (a model judge) and
    the human grades of its design's drawn items; with `target_width`, the human labels each
    row's interval needs to be that wide (only the `target_key` rows, `M@K`, when given);
    `rel_threshold` None: the store's own. Raises InputError when `judge_name` is not a model
    judge of the store."""
    from workbench.core.audit.audit import fold_aliases
    from workbench.core.display import visible
    from workbench.core.errors import InputError
    from workbench.core.judgments.judge_versions import JudgeLabels, mixing_problems
    from workbench.core.model import Role, order_pairs
    from workbench.flows.judged import judged_set
    from workbench.flows.study_context import is_adaptive, study_rel_threshold
    from workbench.store import open_store

    with open_store(store_path, read_only=True) as store:
        if rel_threshold is None:
            rel_threshold = study_rel_threshold(store)
        roles = store.annotators()
        if roles.get(judge_name) != Role.MODEL:
            said = "graded nothing" if judge_name not in roles else f"is {roles[judge_name]}"
            raise InputError([f"--judge {visible(judge_name)}: {said} (a model judge is needed)"])
        current = store.current_judgments(judge_name)
        judge = {(j.query_id, j.doc_id): j.grade or 0 for j in current}
        labels = [(j.annotator, j.role, j.judge_version) for j in current]
        warnings = mixing_problems(JudgeLabels.of(labels, store.judge_versions()))
        judged = judged_set(store)
        human_grades, aliases = judged.qrels, judged.aliases
        pooled: dict[str, list[str]] = {}
        for entry in store.pool():
            pooled.setdefault(entry.query_id, []).append(entry.doc_id)
        design = store.design()
        max_grade = max(store.grade_scale())
        adaptive = is_adaptive(store)
    human = {(q, d): g for q, docs in human_grades.items() for d, g in docs.items()}
    reason, described, notes = design_state(design, human, store_path, judge_name, adaptive)
    rows = []
    for name, scores in runs.items():
        # an identical passage is one item (judged, drawn and pooled under its canonical id):
        # each alias in a ranking is folded into it, and a second copy never counts again
        rankings = {
            q: fold_aliases(order_pairs(docs.items()), aliases) for q, docs in scores.items()
        }
        for k in ks:
            for measure in ("P", "R", "nDCG"):
                rows.append(
                    _row(
                        name,
                        rankings,
                        k,
                        measure,
                        design,
                        reason,
                        judge,
                        human,
                        pooled,
                        rel_threshold,
                        max(max_grade, 1),
                        target_width if target_key in (None, f"{measure}@{k}") else None,
                    )
                )
    if any(r.estimate is not None and not r.validated for r in rows):
        notes.append(NOT_VALIDATED)
    return CorrectedRuns(rows, warnings, described, notes)


def design_state(
    design: Design | None,
    human: Mapping[tuple[str, str], int],
    store: str,
    judge: str,
    adaptive: bool = False,
) -> tuple[str | None, dict, list[str]]:
    """Why no row can be estimated (None: the design is complete), the design as JSON, and
    notes for the report. `adaptive`: the store was pooled for the adaptive queue, where
    draw-sample is refused (its draws are the queue's own, which this correction does not
    use)."""
    if design is None and adaptive:
        why = (
            f"no recorded design draw: on an adaptive store the {len(human)} human labels are"
            " the adaptive queue's picks, not a draw-sample design (draw-sample refuses an"
            " adaptive store), so this correction cannot use them; here the judge serves as the"
            f" queue's covariate instead (coverage --queue-judge {judge}: the intervals and the"
            " human judgments it saved); for eval --judge, pool a study with --policy static and"
            " run draw-sample on it"
        )
        return why, {"recorded": False, "human_labels": len(human), "adaptive": True}, []
    if design is None:
        why = (
            f"no recorded design draw: the {len(human)} human labels were not drawn with known"
            " probabilities (judging in queue order is not a random sample); run workbench"
            f" draw-sample --db {store} --judge {judge} --share F, then judge the drawn items"
        )
        return why, {"recorded": False, "human_labels": len(human)}, []
    drawn = design.drawn()
    waiting = [i for i in drawn if i.key not in human]
    outside = len(set(human) - {i.key for i in drawn})
    described = {
        "recorded": True, "design": design.design_id, "judge": design.judge,
        "judge_version": design.judge_version, "seed": design.seed,
        "plan": design.plan.to_json(), "frame_items": len(design.items), "drawn": len(drawn),
        "drawn_not_judged": len(waiting), "human_labels_outside_draw": outside,
    }  # fmt: skip
    notes = [
        f"design {design.design_id} (drawn with judge {design.judge}, seed {design.seed}):"
        f" {len(drawn)} of {len(design.items)} pooled items drawn, {len(drawn) - len(waiting)}"
        " judged by humans"
    ]
    if design.judge != judge:
        notes.append(
            f"the design was drawn with judge {design.judge}'s labels; any judge's"
            " correction by it stays valid (its probabilities are recorded)"
        )
    if outside:
        notes.append(
            f"{outside} human labels outside the draw are not used by the correction"
            " (not a probability sample)"
        )
    if waiting:
        why = (
            f"{len(waiting)} of {len(drawn)} drawn items not yet judged by a human: the design"
            " is incomplete (they come first in the judging queue)"
        )
        return why, described, notes
    return None, described, notes


# long: the population of each query read once, the reasons it cannot be used, then the estimate
def _row(
    run: str,
    rankings: dict[str, list[str]],
    k: int,
    measure: str,
    design: Design | None,
    reason: str | None,
    judge: Mapping[tuple[str, str], int],
    human: Mapping[tuple[str, str], int],
    pooled: Mapping[str, list[str]],
    rel_threshold: int,
    max_grade: int,
    target_width: float | None,
) -> CorrectedMetric:
    from workbench.core.judges.design_estimate import (
        VALIDATED,
        Unit,
        design_mean,
        humans_for_width,
        ndcg_form,
        precision_form,
        recall_form,
    )
    from workbench.core.judges.ppi import CorrectedMetric

    queries = sorted(pooled)
    if design is None or reason is not None:
        return CorrectedMetric(run, k, len(queries), None, 0, measure=measure, unavailable=reason)
    probs = design.probs()
    drawn = {i.key for i in design.drawn()}
    population: dict[str, list[Unit]] = {}
    missing = outside = 0
    for qid in queries:
        top = list(dict.fromkeys(rankings.get(qid, [])[:k]))  # a folded copy: its first slot
        rank = {d: n for n, d in enumerate(top)}
        docs = top if measure == "P" else list(dict.fromkeys([*pooled[qid], *top]))
        units = []
        for doc in docs:
            key = (qid, doc)
            if doc in rank and key not in judge:
                missing += 1
            if key not in probs:
                outside += 1
                continue
            units.append(
                Unit(doc, rank.get(doc), probs[key], key in drawn, judge.get(key), human.get(key))
            )
        population[qid] = units
    why = None
    if missing:
        why = f"{missing} top-{k} items have no label of the judge (grade them first)"
    elif outside:
        why = (
            f"{outside} items outside the design's frame (pooled after the draw, or not pooled):"
            " draw-sample again extends it to items pooled since"
        )
    if why:
        return CorrectedMetric(
            run, k, len(queries), None, missing, measure=measure, unavailable=why
        )
    forms = {"P": precision_form(k, rel_threshold), "R": recall_form(k, rel_threshold),
             "nDCG": ndcg_form(k, max_grade)}  # fmt: skip
    estimate = design_mean(population, forms[measure])
    needed = (
        humans_for_width(estimate, target_width) if estimate and target_width is not None else None
    )
    return CorrectedMetric(
        run, k, len(queries), estimate, 0, needed, measure, validated=measure in VALIDATED
    )
