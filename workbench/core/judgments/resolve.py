"""One grade per (query, doc) from several annotators' current judgments (pure).

Rule: an adjudicator's grade decides; else the grade all annotators agree on (the *consensus*,
which `consensus_grades` gives alone, to measure model judges); else the median of the grades,
rounded down, so that an export always has one grade per judged pair. Rounding down keeps a
split between neighbouring grades at the lower one (1 vs 2 -> 1, 0 vs 1 -> 0); a wide split is
not pulled to 0 (0 vs 3 -> 1, relevant). Model judges (role 'model') never take part: an
exported golden set is a human one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from workbench.core.judgments.judge_versions import (
    Identities,
    JudgeIdentity,
    JudgeLabel,
    JudgeLabels,
)
from workbench.core.model import HUMAN_ROLES, Judgment, Qrels, Role


def resolve(
    current: Iterable[Judgment],
) -> tuple[Qrels, dict[tuple[str, str], list[str]], list[dict]]:
    """(qrels, judged_by, disagreements) from each annotator's current judgment of each pair.

    Undo rows (grade None) are skipped; if an annotator appears twice for a pair, the later
    item wins. `judged_by` lists the annotators (sorted) whose grades were considered; each
    disagreement is {"query", "doc", "grades": {annotator: grade}, "resolved", "rule"}."""
    by_pair: dict[tuple[str, str], dict[str, tuple[int, str]]] = {}
    for judgment in current:
        if judgment.role == Role.MODEL or judgment.grade is None:
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
    adjudicated = [g for g, role in graders.values() if role == Role.ADJUDICATOR]
    if adjudicated:
        return median_rounded_down(adjudicated), "adjudicated"
    grades = {g for g, _ in graders.values()}
    if len(grades) == 1:
        return grades.pop(), "agreed"
    return None


def grades_by_annotator(judgments: Iterable[Judgment]) -> dict[str, dict[tuple[str, str], int]]:
    """annotator -> (qid, docid) -> grade, the last judgment given winning (pass current ones)."""
    out: dict[str, dict[tuple[str, str], int]] = {}
    for j in judgments:
        if j.grade is not None:
            out.setdefault(j.annotator, {})[(j.query_id, j.doc_id)] = j.grade
    return out


def roles_of(judgments: Iterable[Judgment]) -> dict[str, str]:
    """annotator -> the role of their last judgment."""
    return {j.annotator: j.role for j in judgments}


def consensus_grades(
    grades: Mapping[str, Mapping[tuple[str, str], int]], roles: Mapping[str, str]
) -> tuple[dict[tuple[str, str], int], list[tuple[str, str]]]:
    """The resolved human grade per item where the people settled it (`consensus_grade`: an
    adjudicator decides, else the grade every human agrees on), *without* the median tie-break,
    and the items left unresolved: a model judge measured against a tie-break would be credited
    for matching an arithmetic choice, not a person. Only `HUMAN_ROLES` count."""
    by_item: dict[tuple[str, str], dict[str, tuple[int, str]]] = {}
    for name in sorted(a for a, r in roles.items() if r in HUMAN_ROLES):
        for item, grade in grades.get(name, {}).items():
            by_item.setdefault(item, {})[name] = (grade, roles[name])
    resolved: dict[tuple[str, str], int] = {}
    unresolved: list[tuple[str, str]] = []
    for item in sorted(by_item):
        consensus = consensus_grade(by_item[item])
        if consensus is None:
            unresolved.append(item)
        else:
            resolved[item] = consensus[0]
    return resolved, unresolved


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


def canonical_judgments(current: Iterable[Judgment], aliases: Mapping[str, str]) -> list[Judgment]:
    """Each judgment under its doc's canonical id: identical passages are one document, so a
    grade given under an alias (a store pooled before one canonical id per group was the rule)
    counts as a grade of the canonical, beside the others' (a later row of one annotator wins)."""
    return [replace(j, doc_id=aliases[j.doc_id]) if j.doc_id in aliases else j for j in current]


def pair_notes(current: Iterable[Judgment]) -> dict[tuple[str, str], str]:
    """(query, doc) -> the notes of the current judgments that count (as in `resolve`, a model
    judge's are left out): one annotator's note as written, several as 'name: note' joined by
    ' | '."""
    by_pair: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for j in current:
        if j.note.strip() and j.grade is not None and j.role != Role.MODEL:
            by_pair.setdefault((j.query_id, j.doc_id), []).append((j.annotator, j.note.strip()))
    return {
        pair: found[0][1] if len(found) == 1 else " | ".join(f"{a}: {n}" for a, n in sorted(found))
        for pair, found in by_pair.items()
    }


@dataclass(frozen=True, slots=True)
class JudgedSet:
    """A store's judgments as one golden set: what `export` writes and `eval --qrels STORE`
    scores, so the two never differ."""

    qrels: Qrels
    judged_by: dict[tuple[str, str], list[str]]
    disagreements: list[dict]
    notes: dict[tuple[str, str], str]
    aliases: dict[str, str]
    """alias -> canonical, flat (no chains)."""
    judge_labels: tuple[JudgeLabel, ...] = ()
    """Model judges' current labels, kept beside the set (never in `qrels`), sorted."""
    label_versions: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    """(query, doc) -> each other non-human grader in `judged_by` (an oracle) -> the version
    of its grade, where one was recorded."""
    identities: Identities = field(default_factory=dict)
    """judge -> version -> identity."""
    roles: dict[str, str] = field(default_factory=dict)
    """annotator -> role, for every grader of the set."""

    def recorded_judges(self) -> dict[str, dict[str, JudgeIdentity]]:
        """judge -> version -> identity of each version the set's labels carry."""
        used = {(label.judge, label.version) for label in self.judge_labels}
        used |= {(n, v) for versions in self.label_versions.values() for n, v in versions.items()}
        out: dict[str, dict[str, JudgeIdentity]] = {}
        for name, version in sorted(used):
            identity = self.identities.get(name, {}).get(version)
            if identity is not None:
                out.setdefault(name, {})[version] = identity
        return out

    def judges(self) -> JudgeLabels:
        """The set's non-human labels per judge and version (for the mixing warning)."""
        return judge_labels_of(
            self.judged_by, self.label_versions, self.judge_labels, self.identities, self.roles
        )


def judge_labels_of(
    judged_by: Mapping[tuple[str, str], Iterable[str]],
    label_versions: Mapping[tuple[str, str], Mapping[str, str]],
    judge_labels: Iterable[JudgeLabel],
    identities: Identities,
    roles: Mapping[str, str],
) -> JudgeLabels:
    """A golden set's non-human labels per judge and version: the graders in `judged_by` whose
    role is not a person's (an unknown role is a person's) and the model labels kept beside the
    set. One rule for a store's judged set and a golden.yaml."""
    labels = [
        (name, roles.get(name, Role.HUMAN), label_versions.get(pair, {}).get(name, ""))
        for pair, names in judged_by.items()
        for name in names
    ]
    labels += [(label.judge, Role.MODEL, label.version) for label in judge_labels]
    return JudgeLabels.of(labels, identities)


def judged_set_of(
    judgments: Iterable[Judgment],
    aliases: Mapping[str, str],
    pooled: set[str],
    identities: Identities,
) -> JudgedSet:
    """A store's judgments (its current ones, its aliases, the doc ids of its pool, its judges'
    identities) as one golden set (`workbench.flows.judged.judged_set` reads them)."""
    from workbench.core.pool.pooling import flat_aliases

    aliases = flat_aliases(aliases, pooled)
    current = canonical_judgments(judgments, aliases)
    qrels, judged_by, disagreements = resolve(current)
    latest = {(j.annotator, j.query_id, j.doc_id): j for j in current if j.grade is not None}
    judge_labels = sorted(
        JudgeLabel(j.query_id, j.doc_id, j.annotator, j.grade, j.judge_version)
        for j in latest.values()
        if j.role == Role.MODEL and j.grade is not None
    )
    label_versions: dict[tuple[str, str], dict[str, str]] = {}
    for j in latest.values():
        if j.role not in HUMAN_ROLES and j.role != Role.MODEL and j.judge_version:
            label_versions.setdefault((j.query_id, j.doc_id), {})[j.annotator] = j.judge_version
    return JudgedSet(
        qrels, judged_by, disagreements, pair_notes(current), aliases, tuple(judge_labels),
        label_versions, identities, roles_of(current),
    )  # fmt: skip
