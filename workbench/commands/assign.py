"""`workbench assign`: mark a share of the pool for overlap (judged by two annotators, blind)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from workbench.commands import (
    add_output_options,
    add_store_option,
    finite_number,
    output_format,
    say,
)
from workbench.core.assign import OverlapSummary
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from workbench.store import JudgmentStore


def add_overlap_options(parser: argparse.ArgumentParser, required: bool) -> None:
    parser.add_argument(
        "--overlap",
        type=finite_number,
        required=required,
        default=None if required else 0.0,
        metavar="SHARE",
        help="share of each query's items judged by two annotators, blind (e.g. 0.2)",
    )
    parser.add_argument(
        "--judges",
        type=int,
        default=2,
        help="distinct annotators each newly marked overlap item needs (default 2)",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_option(parser, required=True)
    add_overlap_options(parser, required=True)
    parser.add_argument("--seed", type=int, default=0, help="seed of the random choice")
    add_output_options(parser, what="the summary")


def check(share: float, judges: int) -> None:
    problems = []
    if not 0.0 <= share <= 1.0:
        problems.append(f"--overlap: {share} is not a share between 0 and 1")
    if judges < 2:
        problems.append(f"--judges: {judges}; overlap needs 2 or more")
    if problems:
        raise InputError(problems)


def mark_overlap(
    store: JudgmentStore, share: float, seed: int = 0, judges: int = 2
) -> OverlapSummary:
    """Mark the store's pool (adds only; see workbench.core.assign) and say what it holds now."""
    from workbench.core.assign import OverlapSummary, choose_overlap, overlap_per_query

    check(share, judges)
    if store.get_meta("policy") == "adaptive":
        from workbench.flows.adaptive import OVERLAP_META

        if judges != 2:
            raise InputError([f"--judges {judges}: on an adaptive study a passage served for "
                              "overlap goes to one more annotator (2 judges)"])  # fmt: skip
        store.set_meta(OVERLAP_META, repr(float(share)))
        return OverlapSummary(share, seed, len(store.pool()), 0, {}, adaptive=True)
    pool = store.pool()
    existing = store.required_judges()
    chosen = choose_overlap(pool, share, seed, existing, judges)
    added = store.set_required_judges(chosen) if chosen else 0
    per_query = overlap_per_query(pool, {**existing, **chosen})
    return OverlapSummary(share, seed, len(pool), added, per_query)


def render(summary: OverlapSummary) -> str:
    """One sentence: how many items are marked for overlap, how many now."""
    if summary.adaptive:
        from workbench.core.adaptive.overlap import overlap_every

        if not summary.share:
            return "Overlap: none (the app serves each passage to one annotator)."
        return (
            f"Overlap: one passage in {overlap_every(summary.share)} that the app serves is one "
            "another annotator judged and this one has not (blind), for agreement (`workbench "
            f"agree`); the study counts each passage once (share {summary.share:g})."
        )
    counts = list(summary.per_query.values())
    low, high = (min(counts), max(counts)) if counts else (0, 0)
    spread = f" ({low} per query)" if low == high else f" ({low}-{high} per query)"
    return (
        f"Overlap: {summary.overlap_items} of {summary.pool_items} items are judged by two"
        f" or more annotators{spread}; {summary.added} marked now"
        f" (share {summary.share:g}, seed {summary.seed})."
    )


def run(args: argparse.Namespace) -> int:
    from workbench.store import open_store

    check(args.overlap, args.judges)
    with open_store(args.db) as store:
        if not store.pool():
            raise InputError(
                [f"{args.db}: the store has no pool yet (build one with `workbench pool`)"]
            )
        summary = mark_overlap(store, args.overlap, args.seed, args.judges)
    as_json = output_format(args) == "json"
    say(json.dumps(summary.to_json(), indent=1) if as_json else render(summary))
    return ExitCode.OK
