"""`workbench pool`: run retrievers and pool their top results into a judging store."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import TYPE_CHECKING

from workbench.commands import (
    add_output_options,
    add_passage_options,
    add_rel_threshold_option,
    add_store_option,
    output_format,
    passage_rule,
    say,
)
from workbench.commands.project_file import add_project_file_options
from workbench.commands.shared_options import add_overlap_options
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode
from workbench.core.pool.pooling import STRATEGIES
from workbench.flows.pool import BM25_BACKENDS, POLICIES, SYSTEMS, PoolOptions

if TYPE_CHECKING:
    from workbench.flows.pool import PoolSummary
    from workbench.formats.passages import PassageRule


PROJECT_TABLE = "pool"
"""The table of `workbench.toml` that holds this command's options (`commands.project_file`)."""

STATIC_DEFAULTS = {
    f.name: f.default
    for f in dataclasses.fields(PoolOptions)
    if f.name in ("depth", "strategy", "sample")
}
"""The static pool's options, as they are when not given (`PoolOptions`' defaults)."""

STATIC_ONLY = ("depth", "strategy", "sample")
"""Options only the static policy has (the adaptive queue keeps each system's top
--candidate-depth in an order of its own, draws its own samples and serves each passage
once)."""


# long: the command's option declarations, one after another
def configure(parser: argparse.ArgumentParser) -> None:
    """`workbench pool`'s options, one `add_argument` each with its help: a table read top to
    bottom, longer than a function should be on purpose (split, it would only be harder to
    read against `--help`)."""
    from workbench.retrieval.registry import RERANKERS, RETRIEVERS

    parser.add_argument("--corpus", required=True, help="BEIR corpus.jsonl or a folder of .txt/.md")
    add_passage_options(parser)
    parser.add_argument("--queries", required=True, help="queries .jsonl or a golden.yaml")
    add_rel_threshold_option(
        parser, "the lowest grade that counts as relevant in this study, stored with it: the app,"
        " coverage, eval, export and report use it unless given their own --rel-threshold"
    )  # fmt: skip
    parser.add_argument(
        "--systems",
        default=",".join(SYSTEMS),
        help=f"comma-separated built-in systems: {', '.join(RETRIEVERS)} rank the corpus, "
        f"{', '.join(RERANKERS)} rescores their top candidates "
        f"(default {','.join(SYSTEMS)}; '' for none)",
    )
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="FILE",
        help="a TREC run file pooled as one more system under its tag (repeatable)",
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=None,
        help=f"static policy: top-k of each system (default {STATIC_DEFAULTS['depth']})",
    )
    parser.add_argument(
        "--strategy",
        default=None,
        choices=list(STRATEGIES),
        help="static policy: judging-queue order (default rrf: reciprocal-rank fusion)",
    )
    parser.add_argument(
        "--policy",
        default=None,
        choices=list(POLICIES),
        help="adaptive (the default, into a new store): store each query's frame (every "
        "system's top --candidate-depth and a random reserve of the rest) for the queue that "
        "learns from every grade and certifies queries; static: the depth-k pool in "
        "--strategy order, plus --sample. Without --policy, static is chosen when --depth, "
        "--strategy or --sample is given, or when the store already holds a static pool "
        "(--overlap works with both)",
    )
    parser.add_argument(
        "--candidate-depth",
        type=int,
        default=None,
        metavar="N",
        help="adaptive policy: how deep into each system's ranking its candidates go (default "
        "100; on the shared collections 200 widened the intervals and found no more: see "
        "docs/adaptive-queue.md)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed for 'random', --sample and the adaptive reserve (default 0)",
    )
    parser.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="static policy: also judge N stratified random docs per query from outside the pool",
    )
    parser.add_argument(
        "--bm25-backend",
        default="auto",
        choices=list(BM25_BACKENDS),
        help="rank_bm25 or bm25s: the same scores, bm25s far faster on a large corpus; "
        "auto (default): bm25s from 1,000 passages",
    )
    from workbench.retrieval.encoder_choice import DEFAULT_ENCODER, DEVICES, ENCODERS

    parser.add_argument(
        "--encoder",
        default=DEFAULT_ENCODER,
        choices=list(ENCODERS),
        help="how dense and rerank run their model: auto (default: torch-bf16 on a CPU with bf16 "
        "instructions, else onnx-int8-smooth when ONNX Runtime is installed, else torch; about "
        "2x torch fp32 with the same top 20 within a few per cent, said when the model loads), "
        "torch (fp32, exact), torch-bf16 (bfloat16 autocast: fast on a CPU with AMX or AVX-512 "
        "BF16), onnx (ONNX Runtime fp32), onnx-int8 (int8), onnx-int8-smooth (int8 smoothed, FFN "
        "down and queries fp32); onnx needs the extra: pip install 'workbench[onnx]'",
    )
    parser.add_argument(
        "--device",
        default="auto",
        choices=list(DEVICES),
        help="where dense and rerank run: auto (default: cuda when torch sees one), cpu, cuda",
    )
    parser.add_argument("--dense-model", metavar="NAME_OR_PATH", help="sentence-transformers model")
    parser.add_argument(
        "--embeddings",
        metavar="FILE.npy",
        help="the passages' vectors (numpy.save, one row per passage): dense searches them by "
        "cosine instead of encoding the corpus; ids in FILE.ids, one per line, in row order",
    )
    parser.add_argument("--embeddings-ids", metavar="FILE", help="the ids of --embeddings' rows")
    parser.add_argument(
        "--query-embeddings",
        metavar="FILE.npy",
        help="the queries' vectors (ids in FILE.ids); without it --dense-model encodes the queries",
    )
    parser.add_argument(
        "--query-embeddings-ids", metavar="FILE", help="the ids of --query-embeddings' rows"
    )
    parser.add_argument("--rerank-model", metavar="NAME_OR_PATH", help="cross-encoder model")
    parser.add_argument("--cache-dir", metavar="DIR", help="index and embedding cache")
    parser.add_argument("--runs-dir", metavar="DIR", help="where system runs are written")
    add_store_option(parser, required=True)
    parser.add_argument(
        "--target",
        metavar="MEASURE@K:WIDTH",
        help="adaptive policy: the study's stopping rule, stored with it: judging is done when "
        "the study interval of this mean is at most WIDTH wide for every pooled run (default "
        "R@10:0.05; `workbench coverage --target T --save` changes it)",
    )
    add_output_options(parser, what="the summary")
    add_overlap_options(parser, required=False)
    add_project_file_options(parser, PROJECT_TABLE)


def run(args: argparse.Namespace) -> int:
    from workbench.flows.overlap import check_overlap
    from workbench.flows.pool import checked_encoder, pool_corpus
    from workbench.flows.pool_settings import OverlapAsk, settle_study
    from workbench.reports.progress import Heartbeat, StageProgress

    if args.overlap:
        check_overlap(args.overlap, args.judges)
    passages = passage_rule(args)
    policy, why = choose_policy(args)
    target = _target(args.target, policy)
    options = pool_options(args, policy, passages)
    say(first_line(args, list(options.systems)), file=sys.stderr)
    if why:
        say(why, file=sys.stderr)
    choice = checked_encoder(options)
    if choice is not None:  # a model loads: with what, and why auto chose it
        say(choice.line(args.encoder), file=sys.stderr)
    if args.rel_threshold < 1:
        raise InputError([f"--rel-threshold {args.rel_threshold}: must be >= 1 (grade 0 is "
                          "judged non-relevant)"])  # fmt: skip
    with Heartbeat(StageProgress()) as progress:
        summary = pool_corpus(options, progress)
    overlap = OverlapAsk(args.overlap, args.seed, args.judges) if args.overlap else None
    summary, relevant = settle_study(
        args.db, summary, args.rel_threshold, target, overlap
    )
    for warning in summary.warnings:
        say(f"warning: {warning}", file=sys.stderr)
    if output_format(args) == "json":
        print(json.dumps({**summary.to_json(), "rel_threshold": args.rel_threshold}, indent=1))
    else:
        _say_summary(summary, args.db, options.strategy if policy == "static" else "adaptive",
                     target, relevant)  # fmt: skip
    return ExitCode.OK


def _say_summary(
    summary: PoolSummary, db: str, order: str, target: str | None, relevant: str
) -> None:
    """The summary in words: the pooling, the study's target (adaptive), its threshold, the
    overlap."""
    from workbench.commands.pool_summary import render_summary

    depth = next(iter(summary.systems.values())).depth  # the pooling's, default resolved
    say(render_summary(summary, db, depth, order))
    if order == "adaptive":
        from workbench.core.study import DEFAULT_TARGET

        say(
            f"Study target: {target or DEFAULT_TARGET} (judging is done when every pooled "
            "run's study interval is that wide; `workbench coverage` says how far it is, "
            "`coverage --target T --save` changes it)."
        )
    say(f"Counted as {relevant} (stored with it: the app, coverage, eval, export and "
        "report use it).")  # fmt: skip
    if summary.overlap is not None:
        from workbench.reports.overlap import overlap_sentence

        say(overlap_sentence(summary.overlap))


def pool_options(
    args: argparse.Namespace, policy: str, passages: PassageRule | None
) -> PoolOptions:
    """The command line as one `PoolOptions`: a static option not given keeps its default."""
    from workbench.flows.pool import VectorPaths

    static = {name: getattr(args, name) for name in STATIC_DEFAULTS}
    return PoolOptions(
        args.corpus, args.queries, args.db,
        systems=[s.strip() for s in args.systems.split(",") if s.strip()], run_files=args.run,
        seed=args.seed, bm25_backend=args.bm25_backend, dense_model=args.dense_model,
        rerank_model=args.rerank_model, cache_dir=args.cache_dir, runs_dir=args.runs_dir,
        policy=policy, candidate_depth=args.candidate_depth, passages=passages,
        encoder=args.encoder, device=args.device,
        vector_paths=VectorPaths(args.embeddings, args.embeddings_ids, args.query_embeddings,
                                 args.query_embeddings_ids),
        **{name: value for name, value in static.items() if value is not None},
    )  # fmt: skip


def _target(spec: str | None, policy: str) -> str | None:
    """The study's target as stored (checked before any work: exit 2 on a malformed one)."""
    if spec is None:
        return None
    from workbench.core.errors import InputError
    from workbench.core.study import parse_target

    if policy != "adaptive":
        raise InputError(["--target: belongs to --policy adaptive (the study interval it "
                          "narrows comes from the adaptive queue's draws)"])  # fmt: skip
    try:
        return str(parse_target(spec))
    except ValueError as exc:
        raise InputError([str(exc)]) from None


def choose_policy(args: argparse.Namespace) -> tuple[str, str | None]:
    """The queue policy, and why when it was not asked for. Adaptive by default (it finds more
    relevant passages for the same judgments); the static pool's own options, or a store that
    already holds a static pool (a system added to a study), mean static. Asking for adaptive
    with a static option is an error, not an option silently ignored; so is a pooling the store
    cannot take, said before any input is read or model loads."""
    from workbench.flows.pool_policy import (
        candidate_depth_problems,
        pooled_policy,
        pooling_refusal,
    )

    given = [f"--{name}" for name in STATIC_ONLY if getattr(args, name) is not None]
    if args.policy == "adaptive" and given:
        raise InputError(
            [f"{flag}: belongs to --policy static (the adaptive queue keeps each system's top "
             "--candidate-depth, orders and samples them itself and serves each passage once); "
             "leave it out or give --policy static" for flag in given]
        )  # fmt: skip
    existing = pooled_policy(args.db)
    if args.policy:
        policy, why = args.policy, None
    elif given:
        verb = "implies" if len(given) == 1 else "imply"
        policy = "static"
        why = (f"{' and '.join(given)} {verb} the static policy (the top --depth of each system "
               "in --strategy order, plus --sample), not the default adaptive queue.")  # fmt: skip
    elif existing == "static":
        policy, why = "static", f"{args.db} already holds a static pool: adding to it (static)."
    else:
        policy, why = "adaptive", None
    refusal = pooling_refusal(args.db, existing, policy)
    problems = [refusal] if refusal else []
    problems.extend(candidate_depth_problems(policy, args.candidate_depth))
    if problems:
        raise InputError(problems)
    return policy, why


def first_line(args: argparse.Namespace, systems: list[str]) -> str:
    """What is about to happen, said before the inputs are read or a model loads (the first
    model can take a while to load, and silence reads as a hang). A system whose model has no
    local copy (`registry.models_missing`, decided without importing torch) is not announced:
    a line says once that it is left out, and why."""
    from workbench.retrieval.models import DEFAULT_DENSE_MODEL, DEFAULT_RERANK_MODEL

    named = {"dense": args.dense_model or DEFAULT_DENSE_MODEL,
             "rerank": args.rerank_model or DEFAULT_RERANK_MODEL}
    if args.embeddings:
        named["dense"] = f"the vectors of {args.embeddings}"
    if args.encoder not in ("torch", "auto"):  # auto's choice has its own line
        for name in ("dense", "rerank"):
            if name != "dense" or not args.embeddings:
                named[name] += f", encoder {args.encoder}"
    from workbench.retrieval.registry import models_missing

    given = bool(args.embeddings and args.query_embeddings)
    missing = models_missing(systems, args.dense_model, args.rerank_model, dense_loads=not given)
    running = [name for name in systems if name not in missing]
    parts = [f"{name} ({named[name]})" if name in named else name for name in running]
    if args.run:
        parts.append(f"{len(args.run)} run file(s)")
    lines = [
        f"Pooling {args.queries} over {args.corpus} into {args.db}: reading the inputs, then "
        f"{', '.join(parts) or 'nothing'}{' in turn' if len(parts) > 1 else ''} ("
        + ("a model loads on first use; " if {"dense", "rerank"} & set(running) else "")
        + "cached indexes and embeddings are reused)."
    ]
    lines.extend(f"{name} is left out: {why}." for name, why in missing.items())
    return "\n".join(lines)
