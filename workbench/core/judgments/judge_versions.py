"""Which version of a non-human judge gave each label, and when one judged set mixes versions
(pure).

A judge is an annotator name of a non-human role (model, oracle). Its *identity* is what made
its labels: the command (`kind`), the model, the prompt template's hash, and the scorer (how an
answer or a score becomes a grade: the answer parser, fitted cuts, the labels file). The
*version* is a short hash of the identity, recorded with every label in the store and in
golden.yaml. Two versions under one name are two judges: a change between them (an upgrade, a
new prompt, re-fitted cuts) would pass for a change in what is being measured, so `eval` warns
when a judged set mixes them and `agree` reports each version apart. A label recorded before
versions were (an older store or golden.yaml) has the version `UNKNOWN`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from workbench.core.model import HUMAN_ROLES, Level, Problem

UNKNOWN = ""
"""The version of a label written before versions were recorded."""
IDENTITY_FIELDS = ("kind", "model", "prompt", "scorer")
"""An identity's fields, in the order the version hashes them."""
MIXED_CODE = "judge_versions_mixed"
"""The audit code of the warning."""


@dataclass(frozen=True, slots=True)
class JudgeIdentity:
    """What made a judge's labels; equal identities are one version."""

    kind: str
    """The command that graded: judge-llm, judge-model, import-labels, simulate."""
    model: str = ""
    """The model's name or path as given ('' when none, or not known)."""
    prompt: str = ""
    """The prompt template's sha256 (first 16 hex digits); '' without a prompt."""
    scorer: str = ""
    """How an answer or a score became a grade, e.g. the answer parser's version or the fitted
    cuts' hash; for imported labels without a named model, the file."""

    @property
    def version(self) -> str:
        """12 hex digits of sha256 over the fields: the same identity, the same version."""
        fields = json.dumps([getattr(self, f) for f in IDENTITY_FIELDS], ensure_ascii=False)
        return hashlib.sha256(fields.encode("utf-8")).hexdigest()[:12]

    def describe(self) -> str:
        """One line for messages: the kind, then the fields that are set."""
        parts = [self.kind]
        parts += [f"{f} {getattr(self, f)}" for f in IDENTITY_FIELDS[1:] if getattr(self, f)]
        return ", ".join(parts)

    def to_json(self) -> dict[str, str]:
        return {f: getattr(self, f) for f in IDENTITY_FIELDS}


Identities = Mapping[str, Mapping[str, JudgeIdentity]]
"""judge name -> version -> identity."""


@dataclass(frozen=True, slots=True, order=True)
class JudgeLabel:
    """A model judge's current label of one item, kept beside a golden set (never in its
    qrels: the golden set is the people's)."""

    query_id: str
    doc_id: str
    judge: str
    grade: int
    version: str = UNKNOWN


def describe_version(version: str, identity: JudgeIdentity | None) -> str:
    """A version for messages: its id and identity, or why it has none."""
    if version == UNKNOWN:
        return "no recorded version (labelled before versions were recorded)"
    what = identity.describe() if identity is not None else "identity not recorded"
    return f"{version} ({what})"


def cuts_digest(cuts: Iterable[float], grades: Iterable[int]) -> str:
    """12 hex digits naming fitted score -> grade cuts, each rounded to 4 decimals: cuts that
    differ by less are the float noise of one fit on two machines, not another judge."""
    text = json.dumps([[f"{float(c):.4f}" for c in cuts], [int(g) for g in grades]])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class VersionLabels:
    """How many labels of a judge one version gave."""

    version: str
    """`UNKNOWN` for labels recorded without one."""
    identity: JudgeIdentity | None
    """None when unknown, or not recorded beside the labels."""
    labels: int

    def describe(self) -> str:
        return describe_version(self.version, self.identity)


@dataclass(frozen=True, slots=True)
class JudgeLabels:
    """A judged set's non-human labels: per judge, how many each version gave."""

    counts: Mapping[str, Mapping[str, int]]
    """judge -> version -> labels."""
    identities: Identities
    roles: Mapping[str, str]
    """judge -> role."""

    @classmethod
    def of(
        cls, labels: Iterable[tuple[str, str, str]], identities: Identities | None = None
    ) -> JudgeLabels:
        """From (judge, role, version) per current label; human roles are left out."""
        counts: dict[str, dict[str, int]] = {}
        roles: dict[str, str] = {}
        for judge, role, version in labels:
            if role in HUMAN_ROLES:
                continue
            roles[judge] = role
            by_version = counts.setdefault(judge, {})
            by_version[version] = by_version.get(version, 0) + 1
        return cls(counts, identities or {}, roles)

    def versions(self, judge: str) -> tuple[VersionLabels, ...]:
        """The judge's versions, most labels first (then by version)."""
        known = self.identities.get(judge, {})
        counted = sorted(self.counts.get(judge, {}).items(), key=lambda vc: (-vc[1], vc[0]))
        return tuple(VersionLabels(v, known.get(v), n) for v, n in counted)

    def mixed(self) -> list[MixedJudge]:
        """The judges whose labels come from two or more versions (labels with no recorded
        version count as one beside a known one: they may be another judge)."""
        return [
            MixedJudge(judge, self.roles.get(judge, ""), self.versions(judge))
            for judge in sorted(self.counts)
            if len(self.counts[judge]) > 1
        ]


@dataclass(frozen=True, slots=True)
class MixedJudge:
    judge: str
    role: str
    versions: tuple[VersionLabels, ...]

    def message(self) -> str:
        """The warning's sentence: the judge, each version with its labels, what it touches and
        what to do. A model judge's labels are kept beside the qrels, not scored by plain
        `eval`: then the mix affects what is built from them (`eval --judge`, calibration)."""
        listed = "; ".join(f"{v.describe()}: {v.labels} labels" for v in self.versions)
        if self.role == "model":
            touches = (
                "They are model labels kept beside the qrels, not scored here, so these figures "
                "do not depend on them; anything built from them (`eval --judge`, `agree`) "
                "mixes two judges, and a judge change can pass for a quality change"
            )
        else:
            touches = (
                "Figures from them mix two judges, and a judge change can pass for a quality "
                "change"
            )
        return (
            f"judge {self.judge}'s labels come from {len(self.versions)} versions: {listed}. "
            f"{touches}: re-judge with one version, or give the new one a name of its own; "
            "`workbench agree` measures each version apart."
        )


def mixing_problems(judges: JudgeLabels | None) -> list[Problem]:
    """One warning per judge whose labels in a judged set come from several versions."""
    if judges is None:
        return []
    return [Problem(None, Level.WARNING, MIXED_CODE, m.message()) for m in judges.mixed()]
