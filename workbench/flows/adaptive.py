"""The adaptive queue over a judgments store: rebuild the policy's state from what the store
holds (the frames `pool --policy adaptive` stored, the grades that count, the recorded draws),
and save what a walk judged. Shared by `workbench simulate`, coverage (so every command that
reports it), the app and the benchmark, so all of them decide and estimate the same way. Reads
and writes through `AdaptiveStore`, the part of the store protocol it needs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from workbench.core.adaptive.estimate import Draw
from workbench.core.adaptive.frame import (
    CANDIDATE,
    CANDIDATE_DEPTH,
    RESERVE,
    fair_depth,
    frame_from_entries,
)
from workbench.core.adaptive.judge import (
    JudgeCovariate,
    VersionedLabel,
    labels_of_version,
    latest_version,
)
from workbench.core.adaptive.policy import AdaptiveSession, PolicyConfig
from workbench.core.adaptive.saving import Saving
from workbench.core.adaptive.text import Vectors, document_frequencies
from workbench.core.adaptive.walk import Step, walk
from workbench.core.model import Doc, Judgment, PoolEntry, Query, Role
from workbench.core.tokenize import tokenize

if TYPE_CHECKING:
    from workbench.core.study.target import Target


class AdaptiveStore(Protocol):
    """What the adaptive queue reads from and writes to a judgments store."""

    def get_meta(self, key: str, default: str | None = None) -> str | None: ...
    def pool(self) -> Sequence[PoolEntry]: ...
    def queries(self) -> Sequence[Query]: ...
    def docs(self, doc_ids: Iterable[str]) -> dict[str, Doc]: ...
    def corpus_size(self) -> int: ...
    def current_judgments(self, annotator: str | None = None) -> Sequence[Judgment]: ...
    def draws(self, annotator: str | None = None) -> list[Draw]: ...
    def poolings(self) -> list[dict]: ...


class JudgeStore(Protocol):
    """What the judge covariate reads from a judgments store."""

    def get_meta(self, key: str, default: str | None = None) -> str | None: ...
    def annotators(self) -> dict[str, str]: ...
    def judgments(self, annotator: str | None = None) -> list[Judgment]: ...
    def grade_scale(self) -> dict[int, str]: ...


JUDGE_META = "adaptive_judge"
"""The store's meta key of the judge chosen as the adaptive model's covariate (JSON: name and
version): stored with the study once chosen (`simulate --queue-judge`, `judge --queue-judge`,
`coverage --queue-judge NAME --save`), so the app and every later report use the same
covariate; a read command's `--queue-judge` holds for its run only (`flows.study_context`)."""


def stored_judge(store: JudgeStore) -> tuple[str, str] | None:
    """The (name, version) of the judge stored with the study, or None."""
    from workbench.core.errors import InputError

    raw = store.get_meta(JUDGE_META)
    if not raw:
        return None
    try:
        chosen = json.loads(raw)
        return str(chosen["name"]), str(chosen["version"])
    except (ValueError, KeyError, TypeError):
        raise InputError([f"store meta {JUDGE_META}: unreadable ({raw[:80]!r})"]) from None


def judge_meta(name: str, version: str) -> str:
    """The meta value that stores a judge choice."""
    return json.dumps({"name": name, "version": version}, ensure_ascii=False)


def judge_covariate(
    store: JudgeStore,
    name: str | None = None,
    rel_threshold: int = 1,
    version: str | None = None,
) -> JudgeCovariate | None:
    """The judge covariate: `name`'s labels of one version (`version`, by default the version
    of its latest label); without `name`, the judge stored with the study at its stored version
    (labels a later version gave are another judge's, left out), or None when none is stored.
    Raises InputError when the name is no model judge of the store, naming it."""
    from workbench.core.display import visible
    from workbench.core.errors import InputError
    from workbench.core.model import Role

    if name is None:
        stored = stored_judge(store)
        if stored is None:
            return None
        name, version = stored
        where = f"the judge stored with the study ({JUDGE_META})"
    else:
        where = "--queue-judge"
    roles = store.annotators()
    if roles.get(name) != Role.MODEL:
        said = "graded nothing" if name not in roles else f"is {roles[name]}"
        raise InputError([f"{where} {visible(name)}: {said} (a model judge is needed)"])
    rows = [
        VersionedLabel(j.query_id, j.doc_id, j.grade, j.judge_version)
        for j in store.judgments(name)
    ]
    if version is None:
        version = latest_version(rows)
        if version is None:
            raise InputError([f"{where} {visible(name)}: has no current label"])
    labels = labels_of_version(rows, version)
    top = max(store.grade_scale() or {3: ""})
    return JudgeCovariate(name, version, labels, rel_threshold, top)


class JudgeChoiceStore(JudgeStore, Protocol):
    def set_meta(self, key: str, value: str) -> None: ...


def choose_judge(
    store: JudgeChoiceStore, name: str, rel_threshold: int = 1
) -> tuple[JudgeCovariate, str | None]:
    """`--judge NAME`: its latest version becomes the study's covariate, stored with it; returns
    the covariate and what to say when the stored choice changed (None when it did not)."""
    covariate = judge_covariate(store, name, rel_threshold)
    assert covariate is not None
    before = stored_judge(store)
    now = (covariate.name, covariate.version)
    if before == now:
        return covariate, None
    store.set_meta(JUDGE_META, judge_meta(*now))
    said = f"judge {covariate.describe()} stored with the study as the adaptive model's covariate"
    if before is not None:
        said += f" (was {before[0]} version {before[1] or 'unrecorded'}: labels are not mixed)"
    return covariate, said


def judge_saving_for_store(
    store: AdaptiveStore,
    config: PolicyConfig | None = None,
    annotator: str | None = None,
    rel_threshold: int = 1,
    *,
    session: AdaptiveSession | None = None,
    pool: Sequence[PoolEntry] | None = None,
    current: Sequence[Judgment] | None = None,
    counted: Mapping[str, Mapping[str, int]] | None = None,
) -> Saving | None:
    """What the judge stored with the study saved (`core.adaptive.saving`): the study's
    human judgments beside the no-judge design's estimate for the same widths; None when no
    judge is stored. `session`: the study with its judge, already rebuilt with the same options
    (`pool`, `current` and `counted` as `session_from_store` takes them)."""
    from workbench.core.adaptive.saving import judge_saving

    if not store.get_meta(JUDGE_META):
        return None
    if pool is None:
        pool = store.pool()
    if current is None:
        current = store.current_judgments(annotator)
    if session is None:
        session = session_from_store(
            store, config, annotator, rel_threshold, pool=pool, current=current, counted=counted
        )
    plain = session_from_store(
        store, config, annotator, rel_threshold, pool=pool, current=current, counted=counted,
        use_stored_judge=False,
    )  # fmt: skip
    return judge_saving(session, plain)


OVERLAP_META = "overlap"
"""The store's meta key of an adaptive study's overlap share (`pool --overlap`, `assign`)."""


def stored_overlap(store: AdaptiveStore) -> float:
    """The study's overlap share (0: none; an unreadable value counts as none)."""
    try:
        share = float(store.get_meta(OVERLAP_META) or 0.0)
    except ValueError:
        return 0.0
    return share if 0.0 < share <= 1.0 else 0.0


# long: the frames, the grades that count and the draws, each read and restored in turn
def session_from_store(
    store: AdaptiveStore,
    config: PolicyConfig | None = None,
    annotator: str | None = None,
    rel_threshold: int = 1,
    *,
    pool: Sequence[PoolEntry] | None = None,
    current: Sequence[Judgment] | None = None,
    judge: JudgeCovariate | None = None,
    use_stored_judge: bool = True,
    lazy_vectors: bool = False,
    counted: Mapping[str, Mapping[str, int]] | None = None,
) -> AdaptiveSession:
    """The policy's state now: frames from the pool, the grades that count (one annotator's
    when named, else the project's resolution rule) in the order they were given, the draws
    (that annotator's when named: another's rest on grades this session does not hold).
    Without `config`, the defaults with the pooling's seed. `pool` and `current` (the store's
    pool and `current_judgments(annotator)`) save reading them again when the caller has.
    `judge`: the model judge covariate; by default the one stored with the study, if any
    (`judge_covariate`), unless `use_stored_judge` is False (the study as without a judge).
    `lazy_vectors`: the passages are read and their vectors built on first use (`VectorSource`),
    not now: restored grades and the refit wait for them. `counted`: the grades that count of
    `current` (`grades_counted`), when the caller has them."""
    from workbench.core.coverage import grades_counted

    by_query: dict[str, list[PoolEntry]] = {}
    for entry in store.pool() if pool is None else pool:
        if entry.stratum == CANDIDATE or entry.stratum.startswith(RESERVE):
            by_query.setdefault(entry.query_id, []).append(entry)
    queries = [q for q in store.queries() if q.query_id in by_query]
    systems = sorted(
        {p.system for entries in by_query.values() for e in entries for p in e.provenance}
    )
    poolings = store.poolings()
    depth = int(poolings[-1]["depth"] or CANDIDATE_DEPTH) if poolings else CANDIDATE_DEPTH
    fair = fair_depth(study_cutoff(store))
    frames = [
        frame_from_entries(q.query_id, by_query[q.query_id], systems, depth, fair) for q in queries
    ]
    wanted = list(dict.fromkeys(d for f in frames for d in f.doc_ids))
    source = VectorSource(store, wanted, store.corpus_size())
    query_tokens = {q.query_id: tokenize(q.text) for q in queries}
    if config is None:
        config = PolicyConfig(seed=int(poolings[-1]["seed"] or 0) if poolings else 0)
    if judge is None and use_stored_judge and store.get_meta(JUDGE_META):
        judge = judge_covariate(store, rel_threshold=rel_threshold)  # type: ignore[arg-type]
    session = AdaptiveSession(
        frames, {}, query_tokens, store.corpus_size(), config, judge, vectors=source
    )
    if not lazy_vectors:
        session.vectors  # noqa: B018 (built now, as the caller expects of a session)
    if current is None:
        current = store.current_judgments(annotator)
    if counted is None:
        counted = grades_counted(current, annotator)
    done: set[tuple[str, str]] = set()
    for j in current:
        key = (j.query_id, j.doc_id)
        grade = counted.get(j.query_id, {}).get(j.doc_id)
        if grade is None or key in done:
            continue
        done.add(key)
        session.record(j.query_id, j.doc_id, grade >= rel_threshold, refit=False)
    for draw in store.draws(annotator):  # one annotator's grades: that annotator's draws
        session.restore_draw(draw)
    session.refit(deferred=lazy_vectors)
    return session


TARGET_KEY = "target"
"""The store's meta key of the study's target (`pool --target`, `coverage --target --save`)."""


def stored_target(store: AdaptiveStore) -> Target:
    """The study's target as the store records it (`pool --target`, `coverage --save`), else
    the default (`target_of`)."""
    from workbench.core.study.target import target_of

    return target_of(store.get_meta(TARGET_KEY))


def study_cutoff(store: AdaptiveStore) -> int:
    """The cutoff the study is scored at: its target's k (`coverage --target`, `pool --target`;
    the default target's when none is recorded). The queue judges every system's top k first."""
    return stored_target(store).k


class VectorSource:
    """The session's passage vectors (`AdaptiveSession`'s `vectors`), built once on the first
    call from whichever thread makes it (another waits for it): the frames' passages read and
    tokenized, and their document frequencies (each passage's vector is computed when first
    used: the app's warm-up does it in small steps)."""

    def __init__(self, store: AdaptiveStore, doc_ids: Sequence[str], corpus_size: int):
        import threading

        self._store: AdaptiveStore | None = store
        self._doc_ids = doc_ids
        self._corpus_size = corpus_size
        self._lock = threading.Lock()
        self._built: Vectors | None = None
        self._tokens: dict[str, list[str]] = {}
        self._df: Mapping[str, int] = {}

    def __call__(self) -> Vectors:
        with self._lock:
            if self._built is None:
                assert self._store is not None
                docs = self._store.docs(self._doc_ids)
                tokens = {d: tokenize(f"{doc.title} {doc.text}") for d, doc in docs.items()}
                self._tokens, self._df = tokens, document_frequencies(tokens)
                self._built, self._store = self.fresh(), None
            return self._built

    def fresh(self) -> Vectors:
        """Vectors of the same passages with caches of their own (another thread's, to build
        indexes with while the session's own are in use); after the first call."""
        return Vectors(self._tokens, self._df, self._corpus_size)


class WritableStore(AdaptiveStore, Protocol):
    def add_annotator(self, name: str, role: str = ...) -> None: ...
    def add_draws(self, draws: Iterable[Draw], annotator: str = ...) -> int: ...
    def add_judgments(
        self, judgments: Iterable[Judgment], meta: dict[str, str] | None = None
    ) -> int: ...


def walk_and_save(
    store: WritableStore,
    session: AdaptiveSession,
    answer: Callable[[str, str], int],
    annotator: str,
    per_query: int,
    role: Role = Role.ORACLE,
    rel_threshold: int = 1,
    judge_version: str = "",
    budget: int | None = None,
) -> list[Step]:
    """Judge with `answer` by the policy (at most `budget` judgments in all) and save the grades
    (carrying `judge_version`, a recorded one) and the new draws (one commit each), as the app
    would have saved them one by one."""
    restored = {id(q.pending) for q in session.queries.values() if q.pending is not None}
    steps = walk(session, answer, per_query, rel_threshold, budget=budget)
    save_steps(store, steps, annotator, role, judge_version, restored)
    return steps


def save_steps(
    store: WritableStore,
    steps: Sequence[Step],
    annotator: str,
    role: Role = Role.ORACLE,
    judge_version: str = "",
    restored: set[int] | frozenset[int] = frozenset(),
) -> None:
    """Save a walk's grades and its new draws (`restored`: ids of draws the session held from
    the store before the walk, not saved again), as the app would have saved them."""
    import time

    now = time.time()
    store.add_annotator(annotator, role)
    draws: list[Draw] = [
        s.pick.draw for s in steps if s.pick.draw is not None and id(s.pick.draw) not in restored
    ]
    store.add_draws(draws, annotator)
    store.add_judgments(
        Judgment(
            annotator=annotator,
            query_id=s.pick.query_id,
            doc_id=s.pick.doc_id,
            grade=s.grade,
            shown_at=now,
            graded_at=now,
            role=role,
            judge_version=judge_version,
        )
        for s in steps
    )
