"""`workbench demo`'s use case: the embedded demo corpus found (package data in a wheel, or
corpora/ in a checkout), pooled once into a store with BM25, the dense model and the reranker,
and what that pooling left out, to repeat whenever the app opens on it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.core.progress import ProgressCallback
    from workbench.flows.pool import PoolSummary

DEMO_SYSTEMS = ("bm25", "dense", "rerank")
DEMO_SAMPLE = 10
"""Random passages per query from outside the pool, mixed blindly into the queue, so the
coverage report can estimate what the pool missed."""


def demo_corpus_candidates() -> list[Path]:
    """Where the demo corpus may lie: package data in a wheel, or corpora/ in a checkout."""
    package = Path(__file__).resolve().parent.parent
    return [package / "demo", package.parent / "corpora" / "demo"]


def find_demo_corpus() -> Path | None:
    for candidate in demo_corpus_candidates():
        if (candidate / "docs").is_dir() and (candidate / "queries.jsonl").is_file():
            return candidate
    return None


def installed_demo_corpus() -> Path:
    """The demo corpus; InputError saying where it was looked for when it is not installed."""
    from workbench.core.errors import InputError

    corpus = find_demo_corpus()
    if corpus is None:
        looked = ", ".join(str(p) for p in demo_corpus_candidates())
        raise InputError(
            [
                f"the demo corpus is not installed with this workbench (looked in {looked}); "
                "run `workbench demo` from a source checkout, or pool your own corpus with "
                "`workbench pool`"
            ]
        )
    return corpus


def is_pooled(db: Path) -> bool:
    if not db.exists():
        return False
    from workbench.store import open_store

    with open_store(db, pooling=True) as store:  # an interrupted pooling: pooled again
        if store.interrupted_pooling() is not None:
            return False
        return bool(store.queries()) and bool(store.pool())


def skipped_notices(db: Path) -> tuple[str, ...]:
    """What the last pooling of `db` left out and why, to repeat whenever the app opens."""
    from workbench.store import open_store

    with open_store(db) as store:
        poolings = store.poolings()
    skipped = poolings[-1]["params"].get("skipped", {}) if poolings else {}
    return tuple(f"The demo pool was built without {name}: {why}" for name, why in skipped.items())


def pool_demo_corpus(
    corpus: Path, db: Path, progress: ProgressCallback, rerank_model: str | None = None
) -> PoolSummary:
    """Pool the demo corpus into `db`: its systems, a paragraph a passage (as its README says
    it is written), and an outside-pool sample for the coverage estimate."""
    from workbench.flows.pool import PoolOptions, pool_corpus
    from workbench.formats.passages import PARAGRAPHS

    options = PoolOptions(
        corpus / "docs",
        corpus / "queries.jsonl",
        db,
        systems=DEMO_SYSTEMS,
        sample=DEMO_SAMPLE,
        rerank_model=rerank_model,
        passages=PARAGRAPHS,
    )
    return pool_corpus(options, progress)
