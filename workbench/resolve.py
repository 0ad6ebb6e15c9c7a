"""One grade per (query, doc) from several annotators' current judgments (pure).

Rule: an adjudicator's grade decides; else the grade all annotators agree on (the *consensus*,
shared with `workbench.agreement`); else the median of the grades, rounded down, so that an
export always has one grade per judged pair. Rounding down keeps a split between neighbouring
grades at the lower one (1 vs 2 -> 1, 0 vs 1 -> 0); a wide split is not pulled to 0
(0 vs 3 -> 1, relevant). Model judges (role 'model') never take part: an exported golden set
is a human one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from workbench.model import Judgment, Qrels


def resolve(
    current: Iterable[Judgment],
) -> tuple[Qrels, dict[tuple[str, str], list[str]], list[dict]]:
    """(qrels, judged_by, disagreements) from each annotator's current judgment of each pair.

    Undo rows (grade None) are skipped; if an annotator appears twice for a pair, the later
    item wins. `judged_by` lists the annotators (sorted) whose grades were considered; each
    disagreement is {"query", "doc", "grades": {annotator: grade}, "resolved", "rule"}."""
    by_pair: dict[tuple[str, str], dict[str, tuple[int, str]]] = {}
    for judgment in current:
        if judgment.role == "model" or judgment.grade is None:
            continue
        pair = (judgment.query_id, judgment.doc_id)
        by_pair.setdefault(pair, {})[judgment.annotator] = (judgment.grade, judgment.role)

    qrels: Qrels = {}
    judged_by: dict[tuple[str, str], list[str]] = {}
    disagreements: list[dict] = []
    for pair in sorted(by_pair):
        graders = by_pair[pair]
        grade, rule = resolve_grades(graders)
        qid, doc_id = pair
        qrels.setdefault(qid, {})[doc_id] = grade
        judged_by[pair] = sorted(graders)
        if len({g for g, _ in graders.values()}) > 1:
            disagreements.append(
                {
                    "query": qid,
                    "doc": doc_id,
                    "grades": {name: graders[name][0] for name in sorted(graders)},
                    "resolved": grade,
                    "rule": rule,
                }
            )
    return qrels, judged_by, disagreements


def consensus_grade(graders: Mapping[str, tuple[int, str]]) -> tuple[int, str] | None:
    """(grade, 'adjudicated' | 'agreed') for one pair from annotator -> (grade, role), or None
    when the annotators disagree and nobody adjudicated. Several adjudicators are resolved
    among themselves by the median rounded down."""
    adjudicated = [g for g, role in graders.values() if role == "adjudicator"]
    if adjudicated:
        return median_rounded_down(adjudicated), "adjudicated"
    grades = {g for g, _ in graders.values()}
    if len(grades) == 1:
        return grades.pop(), "agreed"
    return None


def resolve_grades(graders: Mapping[str, tuple[int, str]]) -> tuple[int, str]:
    """(grade, rule) for one pair: the consensus, else ('median' rule) the median of every
    grade rounded down."""
    consensus = consensus_grade(graders)
    if consensus is not None:
        return consensus
    return median_rounded_down([g for g, _ in graders.values()]), "median"


def median_rounded_down(grades: list[int]) -> int:
    """The median, rounded down when it falls between two grades ((a + b) // 2, not
    `statistics.median_low`, which would take the lower grade: 0 vs 3 gives 1 here, not 0)."""
    ordered = sorted(grades)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) // 2
