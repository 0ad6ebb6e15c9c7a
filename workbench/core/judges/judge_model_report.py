"""What `workbench judge-model` records: the calibration (`workbench.core.judges.calibration`), the
labels it was fitted on, how the pool was scored, and what it stored. Plain typed results with
one `to_json` each (the command's --json)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from workbench.core.judges.calibration import CalibrationReport
from workbench.core.judgments.judge_versions import JudgeIdentity
from workbench.core.judgments.labels import ImportSummary


@dataclass(frozen=True, slots=True)
class LabelSource:
    """The human labels a judge was fitted on: the resolved grade, or one annotator's."""

    fit_on: str
    outside_pool: int
    """Labels left out: their item is not pooled."""
    role: str | None = None
    """The annotator's role; None for the resolved grade."""
    annotators: tuple[str, ...] = ()
    """The people whose grades were resolved."""
    unresolved: int = 0

    def to_json(self) -> dict:
        if self.role is not None:
            return {"fit_on": self.fit_on, "role": self.role, "outside_pool": self.outside_pool}
        return {
            "fit_on": self.fit_on,
            "annotators": list(self.annotators),
            "unresolved": self.unresolved,
            "outside_pool": self.outside_pool,
        }


@dataclass(frozen=True, slots=True)
class Scoring:
    """How the pool was scored: the model as loaded, timings, the bi-encoder's cache use."""

    resolved_model: str
    items: int
    load_seconds: float
    score_seconds: float
    passages: int | None = None
    passages_encoded: int | None = None

    def to_json(self) -> dict:
        out: dict[str, float | int | None] = {
            "items": self.items,
            "load_seconds": self.load_seconds,
            "score_seconds": self.score_seconds,
        }
        if self.passages is not None:
            out |= {"passages": self.passages, "passages_encoded": self.passages_encoded}
        return out


@dataclass(frozen=True, slots=True)
class JudgeModelReport:
    """`workbench judge-model`: the calibration and what the run scored and stored."""

    calibration: CalibrationReport
    judge: str
    scorer: str
    model: str
    model_fingerprint: str
    scoring: Scoring
    labels_from: LabelSource
    model_grades: Mapping[int, int]
    """Grade -> pooled items given it."""
    written: ImportSummary
    unscored: int
    """Pooled items without a finite score (not graded)."""
    pool_items: int
    identity: JudgeIdentity | None = None
    """The judge's identity (model, scorer, fitted cuts): its grades carry its version."""

    def to_json(self) -> dict:
        identity = self.identity
        return self.calibration.to_json() | {
            "judge": self.judge,
            "judge_version": None
            if identity is None
            else {"version": identity.version, **identity.to_json()},
            "scorer": self.scorer,
            "model": self.model,
            "resolved_model": self.scoring.resolved_model,
            "model_fingerprint": self.model_fingerprint,
            "labels_from": self.labels_from.to_json(),
            "scoring": self.scoring.to_json(),
            "model_grades": dict(self.model_grades),
            "written": self.written.to_json()
            | {"unscored": self.unscored, "pool_items": self.pool_items},
        }
