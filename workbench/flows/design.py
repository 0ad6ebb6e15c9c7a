"""`workbench draw-sample`'s use case: draw the human sample a model judge's correction rests on
(`workbench.core.judges.design`), or extend the store's design to items pooled since, and record
it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.core.judges.design import DesignPlan

if TYPE_CHECKING:
    from workbench.core.model import PoolEntry
    from workbench.store import JudgmentStore


@dataclass(frozen=True)
class DrawSummary:
    design_id: int
    batch: int | None
    """The batch recorded now; None when there was nothing new to draw."""
    judge: str
    seed: int
    frame: int
    """Items in the design's frame (every batch)."""
    drawn: int
    """Items drawn (every batch)."""
    new_items: int
    new_drawn: int
    expected_new: float
    """The new batch's expected sample size (the sum of its probabilities)."""
    min_prob: float

    def to_json(self) -> dict:
        return {
            "design": self.design_id, "batch": self.batch, "judge": self.judge, "seed": self.seed,
            "frame_items": self.frame, "drawn": self.drawn, "new_items": self.new_items,
            "new_drawn": self.new_drawn, "expected_new": self.expected_new,
            "min_prob": self.min_prob,
        }  # fmt: skip


def _refusal(option: str, given: object, recorded: object, design_id: int) -> str:
    return (
        f"{option} {given}: the store's design {design_id} was drawn with {option} {recorded};"
        " its probabilities are recorded and stay (give the same options to extend it to items"
        " pooled since)"
    )


# long: one store read, the checks of a first draw or of an extension, one write
def draw_sample(
    store_path: str,
    judge_name: str,
    plan: DesignPlan,
    seed: int | None = None,
    rel_threshold: int = 1,
) -> DrawSummary:
    """Draw (or extend) the store's design; InputError naming the option when the judge is not
    a model judge of the store, the store's queue is adaptive, or the options differ from the
    recorded design's."""
    import secrets

    from workbench.core.display import visible
    from workbench.core.errors import InputError
    from workbench.core.judges.design import draw_first, draw_more
    from workbench.core.model import Role
    from workbench.store import open_store

    with open_store(store_path) as store:
        roles = store.annotators()
        if roles.get(judge_name) != Role.MODEL:
            said = "graded nothing" if judge_name not in roles else f"is {roles[judge_name]}"
            raise InputError([f"--judge {visible(judge_name)}: {said} (a model judge is needed)"])
        from workbench.flows.study_context import is_adaptive

        if is_adaptive(store):
            raise InputError(
                [
                    f"--db {store.location}: an adaptive store; its human sample is the"
                    " adaptive queue's own recorded draws (draw-sample serves a store"
                    " pooled for the static queue)"
                ]
            )
        current = store.current_judgments(judge_name)
        judge = {(j.query_id, j.doc_id): j.grade for j in current if j.grade is not None}
        version = ",".join(sorted({j.judge_version for j in current if j.judge_version}))
        frame: dict[str, list[str]] = {}
        for entry in store.pool():
            frame.setdefault(entry.query_id, []).append(entry.doc_id)
        if not frame:
            raise InputError([f"--db {store.location}: the pool is empty (run workbench pool)"])
        design = store.design()
        if design is None:
            seed = secrets.randbelow(2**31) if seed is None else seed
            items, scales = draw_first(plan, frame, judge, seed, rel_threshold)
            design_id, batch, before, before_drawn = 1, 0, 0, 0
        else:
            problems = []
            if design.judge != judge_name:
                problems.append(
                    _refusal(
                        "--judge", visible(judge_name), visible(design.judge), design.design_id
                    )
                )
            for field, option in (("share", "--share"), ("per_query", "--per-query"),
                                  ("floor", "--floor"),
                                  ("min_per_query", "--min-per-query")):  # fmt: skip
                if getattr(plan, field) != getattr(design.plan, field):
                    problems.append(
                        _refusal(
                            option,
                            getattr(plan, field),
                            getattr(design.plan, field),
                            design.design_id,
                        )
                    )
            if seed is not None and seed != design.seed:
                problems.append(_refusal("--seed", seed, design.seed, design.design_id))
            if problems:
                raise InputError(problems)
            seed, design_id = design.seed, design.design_id
            items, scales = draw_more(design, frame, judge, rel_threshold)
            batch = max(i.batch for i in design.items) + 1
            before, before_drawn = len(design.items), len(design.drawn())
        if items:
            store.add_design_batch(design_id, batch, judge_name, version, seed, plan, scales, items)
    new_drawn = sum(1 for i in items if i.drawn)
    return DrawSummary(
        design_id,
        batch if items else None,
        judge_name,
        seed,
        before + len(items),
        before_drawn + new_drawn,
        len(items),
        new_drawn,
        sum(i.prob for i in items),
        min((i.prob for i in items), default=0.0),
    )


def sample_first(store: JudgmentStore, pool: list[PoolEntry]) -> list[PoolEntry]:
    """The static queue's pool with the design's drawn items first (each part in pool order),
    so annotators judge the human sample before the rest; unchanged without a design."""
    from workbench.core.judges.design import design_first

    design = store.design()
    if design is None:
        return pool
    drawn = {i.key for i in design.drawn()}
    order = design_first([(e.query_id, e.doc_id) for e in pool], drawn)
    return [pool[n] for n in order]
