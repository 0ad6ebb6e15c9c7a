"""One study context per command: the store read once (`StudyRead`: each read made once and
kept), whether the study is adaptive decided once, and what a report shows of it computed from
that one reading (`StudyContext`: the coverage report, the adaptive session, the plan toward
the target, the queue judge's saving). A read command's own choices (`RunChoices`: a target, a
queue judge) are laid over what the store holds for this run only: a read never writes
(`save_choices` is the explicit write, `coverage --save`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the estimates are imported where computed: this module's top stays light
    from workbench.core.adaptive.policy import AdaptiveSession
    from workbench.core.adaptive.saving import JudgeSaving
    from workbench.core.agreement.activity import AnnotatorActivity
    from workbench.core.coverage.results import CoverageReport
    from workbench.core.model import Judgment, PoolEntry
    from workbench.core.study.target import Plan, Target

REL_THRESHOLD_KEY = "rel_threshold"
"""The store's meta key of the study's relevance threshold (`pool --rel-threshold`)."""
DEFAULT_REL_THRESHOLD = 1

_KEPT = frozenset(
    {"get_meta", "pool", "queries", "corpus_size", "current_judgments", "judgments", "draws",
     "poolings", "annotators", "grade_scale", "judge_versions", "aliases", "pool_doc_ids",
     "design"}
)  # fmt: skip
"""The store's reads a `StudyRead` makes once (each with its arguments)."""
_BY_ANNOTATOR = frozenset({"current_judgments", "judgments", "draws"})


class StudyRead:
    """A store as one command reads it: each read (`_KEPT`) made once and its answer kept, so
    the flows a command calls share one reading (callers never change what a read returns);
    `over` holds meta values laid over the stored ones for this run only. Anything else
    (`docs`, `title`, `location`) goes to the store."""

    def __init__(self, store: Any, over: Mapping[str, str] | None = None) -> None:
        self._store = store
        self._over = dict(over or {})
        self._kept: dict[tuple, Any] = {}

    def lay_over(self, key: str, value: str) -> None:
        """Read `value` as the meta `key` from now on (this run only: nothing is written)."""
        self._over[key] = value

    def stored_meta(self, key: str) -> str | None:
        """The meta value the store holds, whatever is laid over it."""
        return self._read("get_meta", (key,))

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        value = self._over[key] if key in self._over else self.stored_meta(key)
        return default if value is None else value

    def _read(self, name: str, args: tuple) -> Any:
        key = (name, *args)
        if key not in self._kept:
            self._kept[key] = getattr(self._store, name)(*args)
        return self._kept[key]

    def __getattr__(self, name: str) -> Any:
        if name not in _KEPT:
            return getattr(self._store, name)

        def read(*args: Any, **kwargs: Any) -> Any:
            given = (*args, *kwargs.values())
            if name in _BY_ANNOTATOR and not given:
                given = (None,)
            return self._read(name, given)

        return read


POLICY_KEY = "policy"
"""The store's meta key of how it was pooled (`pool --policy`: adaptive, else static)."""


def is_adaptive(store: Any) -> bool:
    """Whether the store was pooled for the adaptive queue: decided here, for every command."""
    return store.get_meta(POLICY_KEY) == "adaptive"


def rel_threshold_of(text: str | None) -> int | None:
    """The stored relevance threshold's value (None: none stored, or not a whole number)."""
    return int(text) if text is not None and text.lstrip("-").isdigit() else None


def study_rel_threshold(store: Any) -> int:
    """The relevance threshold stored with the study, else 1."""
    stored = rel_threshold_of(store.get_meta(REL_THRESHOLD_KEY))
    return DEFAULT_REL_THRESHOLD if stored is None else stored


@dataclass(frozen=True, slots=True)
class CoverageOptions:
    """How coverage is estimated: the cutoff of the ceiling, the completeness a query needs,
    the samples it needs to be measured, whose grades count (None: the resolution rule), the
    relevance threshold (None: the study's stored one, else 1) and the posterior draws' seed
    (None: the pooling's on an adaptive store, else 0)."""

    k: int = 10
    complete_at: float = 0.8
    min_samples: int = 1
    annotator: str | None = None
    rel_threshold: int | None = DEFAULT_REL_THRESHOLD
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class RunChoices:
    """A read command's choices over the stored study, for this run only: a target and a
    model judge as the queue's covariate (`--queue-judge`)."""

    target: Target | None = None
    queue_judge: str | None = None


@dataclass(frozen=True, slots=True)
class CoverageParts:
    """What `workbench coverage` and `workbench report` show of a store: the report, the
    study's plan (adaptive store; None when not asked for), and the judge used with the study
    with what it saved (None without one); `session`, the adaptive policy's state they were
    read from (for the study's draws beside them: `core.study.study_draws`)."""

    report: CoverageReport
    plan: Plan | None = None
    judge: JudgeSaving | None = None
    session: AdaptiveSession | None = None

    def to_json(self, rel_threshold: int, people: Sequence[AnnotatorActivity]) -> dict[str, Any]:
        """`workbench coverage --json`: the study's plan first (an adaptive store), the report
        with every figure as computed, the threshold, each annotator's activity, the queue
        judge's saving last (the order the golden outputs freeze)."""
        data: dict[str, Any] = {**self.report.to_json(), "rel_threshold": rel_threshold}
        data["annotators"] = {p.annotator: p.to_json() for p in people}
        if self.plan is not None:
            data = {"study": self.plan.to_json(), **data}
        if self.judge is not None:
            data["judge"] = self.judge.to_json()
        return data


class StudyContext:
    """A study as one command sees it, read once: the policy (`adaptive`), the pool, the
    current judgments and the grades that count, the target, the queue judge, and from them
    (each computed once, when first asked) the adaptive session, the coverage report, the plan
    and the judge's saving. `choices` hold for this run only (InputError when they do not fit
    the store: a target or a queue judge on a study that is not adaptive, an unknown judge)."""

    def __init__(
        self, store: Any, options: CoverageOptions | None = None, choices: RunChoices | None = None
    ) -> None:
        self.store = store if isinstance(store, StudyRead) else StudyRead(store)
        options = options or CoverageOptions()
        if options.rel_threshold is None:
            options = replace(options, rel_threshold=study_rel_threshold(self.store))
        self.options = options
        self.adaptive = is_adaptive(self.store)
        self._lay_over(choices or RunChoices())

    @cached_property
    def pool(self) -> Sequence[PoolEntry]:
        return self.store.pool()

    @cached_property
    def current(self) -> Sequence[Judgment]:
        """The current judgments of the annotator counted (every one's without)."""
        return self.store.current_judgments(self.options.annotator)

    @cached_property
    def grades(self) -> dict[str, dict[str, int]]:
        """The grades that count (`grades_counted`), computed once for every figure."""
        from workbench.core.coverage.observations import grades_counted

        return grades_counted(self.current, self.options.annotator)

    @property
    def rel_threshold(self) -> int:
        assert self.options.rel_threshold is not None  # resolved in __init__
        return self.options.rel_threshold

    def _lay_over(self, choices: RunChoices) -> None:
        """This run's target and queue judge read as if stored (checked first)."""
        from workbench.core.display import visible
        from workbench.core.errors import InputError

        where = getattr(self.store, "location", "the store")
        if choices.target is not None:
            if not self.adaptive:
                raise InputError(
                    [f"--target: {where} is not an adaptive store (pool --policy adaptive): "
                     "its figures have no study interval to narrow"]
                )  # fmt: skip
            from workbench.flows.adaptive import TARGET_KEY

            self.store.lay_over(TARGET_KEY, str(choices.target))
        if choices.queue_judge is not None:
            from workbench.flows.adaptive import JUDGE_META, judge_covariate, judge_meta

            if not self.adaptive:
                raise InputError(
                    [f"--queue-judge {visible(choices.queue_judge)}: {where} is not an adaptive "
                     "store (pool --policy adaptive): the judge covariate is the adaptive "
                     "estimate's (for a judge's metrics corrected by a human sample: "
                     "draw-sample, then eval --judge)"]
                )  # fmt: skip
            found = judge_covariate(self.store, choices.queue_judge, self.rel_threshold)
            assert found is not None
            self.store.lay_over(JUDGE_META, judge_meta(found.name, found.version))

    @cached_property
    def target(self) -> Target:
        """The study's target: this run's, else the stored one, else the default."""
        from workbench.flows.adaptive import stored_target

        return stored_target(self.store)

    @cached_property
    def judge(self) -> tuple[str, str] | None:
        """The queue judge (name, version) the adaptive estimate uses: this run's, else the
        one stored with the study; None on a static store or without one."""
        if not self.adaptive:
            return None
        from workbench.flows.adaptive import stored_judge

        return stored_judge(self.store)

    @cached_property
    def session(self) -> AdaptiveSession | None:
        """The adaptive policy's state as coverage estimates from it (None: a static pool)."""
        if not self.adaptive:
            return None
        return adaptive_session(
            self.store, self.options.complete_at, self.options.annotator, self.rel_threshold,
            self.options.seed, pool=self.pool, current=self.current, counted=self.grades,
        )  # fmt: skip

    @cached_property
    def report(self) -> CoverageReport:
        """The coverage report (every store query, in the store's order): the adaptive
        estimator's on an adaptive store, else the static one's."""
        from workbench.core.adaptive.coverage_report import adaptive_coverage_report
        from workbench.core.coverage.report import coverage_report
        from workbench.core.coverage.results import CompletenessRule

        options = self.options
        thresholds = CompletenessRule(options.complete_at, options.min_samples)
        query_ids = [q.query_id for q in self.store.queries()]
        corpus = self.store.corpus_size()
        session = self.session
        if session is not None:
            return adaptive_coverage_report(
                self.pool, self.grades, corpus, {q: session.state(q) for q in session.queries},
                query_ids=query_ids, k=options.k, thresholds=thresholds,
                rel_threshold=self.rel_threshold, outside=session.rest_model().outside,
            )  # fmt: skip
        return coverage_report(
            self.pool, self.grades, corpus, query_ids=query_ids, k=options.k,
            thresholds=thresholds, rel_threshold=self.rel_threshold,
            seed=0 if options.seed is None else options.seed,
        )  # fmt: skip

    @cached_property
    def plan(self) -> Plan | None:
        """Where an adaptive study stands against its target (None: a static pool)."""
        from workbench.core.study.target import study_plan

        if self.session is None:
            return None
        return study_plan(self.session, self.grades, self.pool, self.target, self.rel_threshold)

    @cached_property
    def judge_saving(self) -> JudgeSaving | None:
        """The queue judge and what it saved against the study as without it (None: none)."""
        if self.judge is None or self.session is None:
            return None
        from workbench.core.adaptive.saving import JudgeSaving
        from workbench.flows.adaptive import judge_saving_for_store

        saved = judge_saving_for_store(
            self.store, self.session.config, self.options.annotator, self.rel_threshold,
            session=self.session, pool=self.pool, current=self.current, counted=self.grades,
        )  # fmt: skip
        return JudgeSaving(self.judge[0], self.judge[1], saved)

    def summary(self) -> dict[str, Any]:
        """The compact coverage slot of golden.yaml (`core.coverage.summary_of`), with the
        queue judge (name and version) on an adaptive study that uses one."""
        from workbench.core.coverage.summary import summary_of

        summary = summary_of(self.report)
        if self.judge is not None:
            summary["judge"] = {"name": self.judge[0], "version": self.judge[1]}
        return summary

    def parts(self, *, plan: bool = True, saving: bool = True) -> CoverageParts:
        """The report, the plan (`plan`) and the judge's saving (`saving`), with the session."""
        return CoverageParts(
            self.report,
            self.plan if plan else None,
            self.judge_saving if saving else None,
            self.session,
        )


def adaptive_session(
    store: Any,
    complete_at: float = 0.8,
    annotator: str | None = None,
    rel_threshold: int = 1,
    seed: int | None = None,
    *,
    pool: Sequence[PoolEntry] | None = None,
    current: Sequence[Judgment] | None = None,
    counted: Mapping[str, Mapping[str, int]] | None = None,
) -> AdaptiveSession:
    """The adaptive policy's state of a store as coverage estimates from it (the study's
    draws come from the same state: `workbench.core.study.study_draws`); `seed` by default the
    pooling's; `pool`, `current` and `counted` (the grades that count) when the caller has
    read them."""
    from workbench.core.adaptive import PolicyConfig
    from workbench.flows.adaptive import session_from_store

    if seed is None:
        poolings = store.poolings()
        seed = int(poolings[-1]["seed"] or 0) if poolings else 0
    config = PolicyConfig(target=complete_at, seed=seed)
    return session_from_store(
        store, config, annotator, rel_threshold, pool=pool, current=current, counted=counted
    )


def save_choices(store: Any, choices: RunChoices, rel_threshold: int | None) -> list[str]:
    """The explicit write (`coverage --save`): this run's target and queue judge stored with
    the study, which the app and every later command then use; what changed, to say. Checked
    as a read checks them (`StudyContext`), before anything is written."""
    from workbench.flows.adaptive import TARGET_KEY, choose_judge

    if rel_threshold is None:
        rel_threshold = study_rel_threshold(store)
    StudyContext(store, CoverageOptions(rel_threshold=rel_threshold), choices)  # the checks
    said = []
    if choices.target is not None and store.get_meta(TARGET_KEY) != str(choices.target):
        store.set_meta(TARGET_KEY, str(choices.target))
        said.append(f"target {choices.target} stored with the study (the app and later "
                    "`coverage` runs use it)")  # fmt: skip
    if choices.queue_judge is not None:
        _, changed = choose_judge(store, choices.queue_judge, rel_threshold)
        if changed:
            said.append(changed)
    return said
