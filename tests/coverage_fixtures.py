"""A store for the coverage gate of `workbench eval` (`build_store`): two queries pooled by one
system, a stratified sample outside the pool as `workbench pool --sample` records it, and their
grades; with a run (`RUN`) to score against it."""

from __future__ import annotations

from pathlib import Path

from workbench.core.model import Doc, Judgment, PoolEntry, Provenance, Query
from workbench.store import Store

DOCS = [f"d{i:03d}" for i in range(240)]
RUN = {  # qid -> ranking: qa finds 2 of its 3 pool-relevant docs, qb 2 pool + 1 sampled relevant
    "qa": ["d000", "d006", "d001", "d050", "d051"],
    "qb": ["d100", "d106", "d107", "d090", "d091"],
}


def build_store(
    path: Path, *, sample_relevant: int = 5, judge_samples: bool = True, sampled: bool = True
) -> Path:
    """Two queries pooled by one system (6 docs each), plus (when `sampled`) a stratified sample
    outside the pool as `workbench pool --sample` records it: 20 of the 30 docs ranked 21-50
    and 40 of the rest. qa: 3 relevant in the pool, none in the sample; qb: 2 in the pool and
    `sample_relevant` of its rank band's sample."""
    grades: dict[tuple[str, str], int] = {}
    entries: list[PoolEntry] = []
    with Store(path, create=True) as store:
        store.add_queries([Query("qa", "first"), Query("qb", "second")])
        store.add_docs(Doc(d, f"text {d}") for d in DOCS)
        for offset, (qid, pool_relevant) in enumerate((("qa", 3), ("qb", 2))):
            pool = DOCS[offset * 100 : offset * 100 + 6]
            band = DOCS[offset * 100 + 6 : offset * 100 + 36]
            rest = [d for d in DOCS if d not in pool and d not in band]
            for position, doc_id in enumerate(pool):
                prov = (Provenance("bm25", position + 1, 10.0 - position),)
                entries.append(PoolEntry(qid, doc_id, position, provenance=prov))
                grades[(qid, doc_id)] = 2 if position < pool_relevant else 0
            sample = [(d, "rank:21-50", 20 / len(band)) for d in band[:20]]
            sample += [(d, "rest", 40 / len(rest)) for d in rest[:40]]
            sample = sample if sampled else []
            for i, (doc_id, stratum, prob) in enumerate(sample):
                entries.append(PoolEntry(qid, doc_id, 6 + i, stratum=stratum, inclusion_prob=prob))
                if judge_samples:
                    relevant = qid == "qb" and stratum != "rest" and i < sample_relevant
                    grades[(qid, doc_id)] = 1 if relevant else 0
        store.add_pool_entries(entries)
        store.set_meta("corpus_size", str(len(DOCS)))
        store.add_judgments(Judgment("alice", q, d, g) for (q, d), g in grades.items())
    return path
