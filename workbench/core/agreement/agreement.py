"""Agreement between annotators, and between model judges and humans (pure: no files, no db).

The statistics (Cohen's and Fleiss' kappa, their intervals, the bar) are
`workbench.core.agreement.kappa`;
this module holds the rules of the report: who is compared with whom, on which items, and when
a figure is withheld. Conventions:

- Human pairs are annotators with a role in ``PAIR_ROLES``; each model judge is compared with
  each human and with the resolved human grade (`consensus_grades`).
- No kappa on fewer than ``MIN_SHARED_ITEMS`` shared items (overall, or in a query for its
  per-query figures): the figure is None and `reasons` (Fleiss: `reason`) says why.
- Results are frozen dataclasses; ``to_json()`` is their one serialisation, the JSON of
  `workbench agree --json`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from workbench.core.agreement.kappa import (
    CI_METHOD,
    FLEISS_CI_METHOD,
    KAPPA_BAR,
    ONE_GRADE,
    Item,
    Kappa,
    PairAgreement,
    compare,
    fleiss_bootstrap_ci,
    fleiss_kappa_from_counts,
    too_few,
)
from workbench.core.agreement.krippendorff import AlphaResult, alpha_report
from workbench.core.judgments.judge_versions import UNKNOWN, Identities, JudgeIdentity
from workbench.core.judgments.resolve import consensus_grades, grades_by_annotator, roles_of
from workbench.core.model import Judgment, Role

MIN_SHARED_ITEMS = 10
"""No kappa on fewer shared items: below this one changed grade swings kappa by more than the
bar's width and the analytic CI collapses (one item gives 0.000 [0.00, 0.00])."""
PAIR_ROLES = (Role.HUMAN,)
"""Roles whose pairs form inter-annotator agreement; adjudicators resolve, models are judged."""


def as_role(text: str) -> Role | str:
    """A stored role as a `Role`; an unknown one (a damaged store) stays its text."""
    try:
        return Role(text)
    except ValueError:
        return text


# -- results -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HumanPair:
    annotators: tuple[str, str]
    figures: PairAgreement

    def to_json(self) -> dict:
        return {"annotators": list(self.annotators), **self.figures.to_json()}


@dataclass(frozen=True, slots=True)
class JudgeVsHuman:
    """A model judge against one human (rows: the human)."""

    annotator: str
    human_labels: int
    figures: PairAgreement

    def to_json(self) -> dict:
        return {
            "annotator": self.annotator,
            "human_labels": self.human_labels,
            **self.figures.to_json(),
        }


@dataclass(frozen=True, slots=True)
class JudgeVsResolved:
    """A model judge against the resolved human grade (rows: the resolved grade)."""

    human_labels: int
    unresolved: int
    figures: PairAgreement

    def to_json(self) -> dict:
        return {
            "human_labels": self.human_labels,
            "unresolved": self.unresolved,
            **self.figures.to_json(),
        }


@dataclass(frozen=True, slots=True)
class JudgeVersionAgreement:
    """One version of a model judge (its labels only) against the resolved human grade: an
    upgrade that changed the judge shows as a change between its versions' rows."""

    version: str
    """`judge_versions.UNKNOWN` for labels recorded without one."""
    identity: JudgeIdentity | None
    labels: int
    resolved: PairAgreement | None
    """None when it is the judge's only version (its figures are then the judge's)."""

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "identity": None if self.identity is None else self.identity.to_json(),
            "labels": self.labels,
            "resolved": None if self.resolved is None else self.resolved.to_json(),
        }


@dataclass(frozen=True, slots=True)
class JudgeAgreement:
    judge: str
    labels: int
    against: tuple[JudgeVsHuman, ...]
    resolved: JudgeVsResolved
    versions: tuple[JudgeVersionAgreement, ...] = ()
    """Each version that gave its labels, most labels first."""

    def to_json(self) -> dict:
        return {
            "judge": self.judge,
            "labels": self.labels,
            "against": [a.to_json() for a in self.against],
            "resolved": self.resolved.to_json(),
            "versions": [v.to_json() for v in self.versions],
        }


@dataclass(frozen=True, slots=True)
class FleissResult:
    """Fleiss' kappa over the items every one of `annotators` graded (`kappa.n` of them)."""

    annotators: tuple[str, ...]
    kappa: Kappa
    reason: str | None
    """Why `kappa.kappa` is None."""
    ci_method: str = FLEISS_CI_METHOD

    def to_json(self) -> dict:
        return {
            "annotators": list(self.annotators),
            "n": self.kappa.n,
            "raters_per_item": len(self.annotators),
            "kappa": self.kappa.kappa,
            "reason": self.reason,
            "kappa_ci": list(self.kappa.ci) if self.kappa.ci is not None else None,
            "ci_method": self.ci_method,
            "meets_bar": self.kappa.meets_bar,
        }


@dataclass(frozen=True, slots=True)
class Disagreement:
    query_id: str
    doc_id: str
    grades: Mapping[str, int]
    """annotator -> grade, by name."""
    adjudicated: int | None

    @property
    def spread(self) -> int:
        return max(self.grades.values()) - min(self.grades.values())

    def to_json(self) -> dict:
        return {
            "qid": self.query_id,
            "docid": self.doc_id,
            "grades": dict(self.grades),
            "spread": self.spread,
            "adjudicated": self.adjudicated,
        }


@dataclass(frozen=True, slots=True)
class AgreementReport:
    grade_scale: tuple[int, ...]
    rel_threshold: int
    annotators: Mapping[str, Role | str]
    """Every annotator by name -> role (oracles and unknown roles included, compared with none)."""
    pairs: tuple[HumanPair, ...]
    fleiss: FleissResult | None
    disagreements: tuple[Disagreement, ...]
    """Widest spread first."""
    unresolved: int
    judges: tuple[JudgeAgreement, ...]
    alpha: AlphaResult | None = None
    """Krippendorff's ordinal alpha over the compared annotators, missing grades allowed."""
    bar: float = KAPPA_BAR
    min_shared_items: int = MIN_SHARED_ITEMS
    ci_method: str = CI_METHOD

    @property
    def has_overlap(self) -> bool:
        """True when some item was graded by two humans, or by a model judge and a human."""
        return bool(self.pairs) or any(j.against for j in self.judges)

    def to_json(self) -> dict:
        return {
            "grade_scale": list(self.grade_scale),
            "rel_threshold": self.rel_threshold,
            "bar": self.bar,
            "min_shared_items": self.min_shared_items,
            "ci_method": self.ci_method,
            "annotators": {name: str(role) for name, role in self.annotators.items()},
            "pairs": [p.to_json() for p in self.pairs],
            "fleiss": self.fleiss.to_json() if self.fleiss is not None else None,
            "krippendorff_alpha": self.alpha.to_json() if self.alpha is not None else None,
            "disagreements": [d.to_json() for d in self.disagreements],
            "unresolved": self.unresolved,
            "judges": [j.to_json() for j in self.judges],
        }


# -- the report ----------------------------------------------------------------------------------


def disagreements(
    grades: Mapping[str, Mapping[Item, int]],
    annotators: Sequence[str],
    adjudicated: Mapping[Item, int],
) -> list[Disagreement]:
    """Items judged by two or more of `annotators` with different grades, widest spread first."""
    out: list[Disagreement] = []
    for item in sorted({item for a in annotators for item in grades.get(a, {})}):
        given = {a: grades[a][item] for a in annotators if item in grades.get(a, {})}
        if len(given) >= 2 and len(set(given.values())) > 1:
            out.append(Disagreement(item[0], item[1], given, adjudicated.get(item)))
    out.sort(key=lambda d: (-d.spread, d.query_id, d.doc_id))
    return out


def fleiss_report(
    grades: Mapping[str, Mapping[Item, int]],
    annotators: Sequence[str],
    grade_scale: Iterable[int],
    min_items: int = 0,
) -> FleissResult | None:
    """Fleiss' kappa over the items that every one of three or more annotators graded; kappa
    None (with a `reason`) on fewer than `min_items` such items or when chance agreement is 1."""
    if len(annotators) < 3:
        return None
    common = set.intersection(*(set(grades.get(a, {})) for a in annotators))
    if not common:
        return None
    categories = sorted(grade_scale)
    table = []
    for item in sorted(common):
        counts = Counter(grades[a][item] for a in annotators)
        table.append([counts.get(c, 0) for c in categories])
    withheld = len(table) < min_items
    kappa = None if withheld else fleiss_kappa_from_counts(table)
    reason = too_few(min_items) if withheld else (ONE_GRADE if kappa is None else None)
    ci = fleiss_bootstrap_ci(table) if kappa is not None else None
    return FleissResult(tuple(annotators), Kappa(kappa, len(table), ci), reason)


def _judge(
    model: str,
    grades: Mapping[str, Mapping[Item, int]],
    humans: Sequence[str],
    resolved: tuple[dict[Item, int], list[Item]],
    scale: Sequence[int],
    rel_threshold: int,
    versions: Mapping[Item, str],
    identities: Mapping[str, JudgeIdentity],
) -> JudgeAgreement:
    """One model judge against each human who shares items with it, and the resolved grade;
    each of its versions (`versions`: item -> the version of its label) against the resolved
    grade."""
    judged = grades.get(model, {})
    against = []
    for human in humans:
        labels = grades.get(human, {})
        figures = compare(labels, judged, scale, rel_threshold, MIN_SHARED_ITEMS)
        if figures.n:
            against.append(JudgeVsHuman(human, len(labels), figures))
    agreed, unresolved = resolved
    per_version: dict[str, dict[Item, int]] = {}
    for item, grade in judged.items():
        per_version.setdefault(versions.get(item, UNKNOWN), {})[item] = grade
    return JudgeAgreement(
        judge=model,
        labels=len(judged),
        against=tuple(against),
        resolved=JudgeVsResolved(
            human_labels=len(agreed),
            unresolved=len(unresolved),
            figures=compare(agreed, judged, scale, rel_threshold, MIN_SHARED_ITEMS),
        ),
        versions=tuple(
            JudgeVersionAgreement(
                version,
                identities.get(version),
                len(labels),
                compare(agreed, labels, scale, rel_threshold, MIN_SHARED_ITEMS)
                if len(per_version) > 1
                else None,
            )
            for version, labels in sorted(per_version.items(), key=lambda vl: (-len(vl[1]), vl[0]))
        ),
    )


# long: each section of the report in the order it prints
def agreement_report(
    judgments: list[Judgment],
    grade_scale: Iterable[int],
    rel_threshold: int = 1,
    pair: tuple[str, str] | None = None,
    identities: Identities | None = None,
) -> AgreementReport:
    """Pairwise human agreement, Fleiss when 3+ humans share items, Krippendorff's alpha, the
    disagreement list, and each model judge against each human and against the resolved human
    grade, and each of its versions (by the judgments' `judge_version`, described by
    `identities`) against the resolved grade. `pair`: only those two annotators, whatever their
    roles (two label files, an LLM against TREC assessors), compared as two raters.

    Pass current judgments (one per annotator, query, doc); later ones win if not. Grades
    outside `grade_scale` (a scale narrowed after grading) are added as categories."""
    grades = grades_by_annotator(judgments)
    seen = {g for by_item in grades.values() for g in by_item.values()}
    scale = sorted(set(grade_scale) | seen)
    roles = roles_of(judgments)
    if pair is not None:
        humans, models = list(pair), []
    else:
        humans = sorted(a for a, r in roles.items() if r in PAIR_ROLES)
        models = sorted(a for a, r in roles.items() if r == Role.MODEL)
    resolved = consensus_grades(grades, roles)
    versions: dict[str, dict[Item, str]] = {}
    for j in judgments:
        if j.annotator in models and j.grade is not None:
            versions.setdefault(j.annotator, {})[(j.query_id, j.doc_id)] = j.judge_version
    adjudicators = {a: r for a, r in roles.items() if r == Role.ADJUDICATOR}
    adjudicated, _ = consensus_grades(grades, adjudicators)
    pairs = []
    for i, first in enumerate(humans):
        for second in humans[i + 1 :]:
            first_grades, second_grades = grades.get(first, {}), grades.get(second, {})
            figures = compare(first_grades, second_grades, scale, rel_threshold, MIN_SHARED_ITEMS)
            if figures.n:
                pairs.append(HumanPair((first, second), figures))
    return AgreementReport(
        grade_scale=tuple(scale),
        rel_threshold=rel_threshold,
        annotators={a: as_role(roles[a]) for a in sorted(roles)},
        pairs=tuple(pairs),
        fleiss=fleiss_report(grades, humans, scale, MIN_SHARED_ITEMS),
        disagreements=tuple(disagreements(grades, humans, adjudicated)),
        unresolved=len(resolved[1]),
        judges=tuple(
            _judge(
                m,
                grades,
                humans,
                resolved,
                scale,
                rel_threshold,
                versions.get(m, {}),
                (identities or {}).get(m, {}),
            )
            for m in models
        ),
        alpha=alpha_report(grades, humans, scale),
    )
