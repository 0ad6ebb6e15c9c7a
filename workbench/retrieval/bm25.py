"""BM25 (Okapi, k1=1.5, b=0.75) over `tokenize`, with rank_bm25 or bm25s, cached on disk.

rank_bm25 keeps a dict per document and scores every document in Python: fine for a few
thousand passages, minutes and gigabytes for a million. The bm25s backend is bm25s's method (a
precomputed term x document score matrix, summed over the query's terms), built here with
BM25Okapi's own arithmetic so that both give the same bits; `auto` picks it from
`AUTO_BM25S_FROM` passages."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from importlib.metadata import version
from itertools import chain
from pathlib import Path
from typing import Any, BinaryIO

from workbench.core.model import Doc, Query, Run
from workbench.retrieval.cache import (
    corpus_hash,
    default_cache_dir,
    key_digest,
    load_entry,
    load_stream,
    store_entry,
    store_stream,
)
from workbench.retrieval.select import ProgressCallback, check_unique_ids, top_scored
from workbench.retrieval.tokenize import TOKENIZER_VERSION, tokenize

BACKENDS = ("rank_bm25", "bm25s")
CHOICES = ("auto", *BACKENDS)
"""What --bm25-backend takes: `auto` is rank_bm25 below `AUTO_BM25S_FROM` passages, else bm25s."""
AUTO_BM25S_FROM = 1000
"""From this many passages `auto` uses bm25s: rank_bm25 already takes seconds (3.3 s for 35
queries over 6,000 passages, bm25s 0.8 s) and cannot hold a million."""
INDEX_VERSION = "3"
"""Part of every BM25 cache key: bump it whenever the index this module builds changes."""
BLOCK_DOCS = 20_000
"""Passages tokenized per block: each block's postings become int32 arrays at once, so the
tokens of the whole corpus are never held as Python strings."""


def resolve_backend(backend: str, corpus_size: int) -> str:
    """The backend `backend` names for a corpus of `corpus_size` passages (`auto` resolved)."""
    if backend == "auto":
        return "bm25s" if corpus_size >= AUTO_BM25S_FROM else "rank_bm25"
    return backend


def passage_text(doc: Doc) -> str:
    """What a retriever reads: "title\\ntext" when there is a title."""
    return f"{doc.title}\n{doc.text}" if doc.title else doc.text


OKAPI_STATE = ("k1", "b", "epsilon", "corpus_size", "avgdl", "doc_len", "doc_freqs", "idf",
               "average_idf")  # fmt: skip
"""rank_bm25.BM25Okapi's whole state: plain numbers, lists and dicts, cached as JSON."""


class BM25Retriever:
    """rank_bm25's BM25Okapi scores; the bm25s backend gives the same scores, faster.

    `backend` 'auto' is resolved by corpus size (`resolve_backend`). The index is built once per
    corpus and cached under `cache_dir`, keyed by corpus hash, tokenizer version, backend and
    parameters; an entry that fails verification is rebuilt."""

    name = "bm25"

    def __init__(
        self,
        docs: Sequence[Doc],
        backend: str = "rank_bm25",
        cache_dir: str | os.PathLike[str] | None = None,
        progress: ProgressCallback | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> None:
        if backend not in CHOICES:
            raise ValueError(
                f"unknown BM25 backend {backend!r}; choose one of {', '.join(CHOICES)}"
            )
        if not docs:
            raise ValueError("cannot build a BM25 index over an empty corpus")
        backend = resolve_backend(backend, len(docs))
        self.backend = backend
        self.doc_ids = [doc.doc_id for doc in docs]
        check_unique_ids(self.doc_ids)
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._progress = progress
        self.corpus_hash = corpus_hash(docs)
        library = "rank_bm25" if backend == "rank_bm25" else "numpy"
        key = {
            "kind": "bm25",
            "index_version": INDEX_VERSION,
            "backend": backend,
            "library": f"{library}=={version(library.replace('_', '-'))}",
            "corpus": self.corpus_hash,
            "tokenizer": TOKENIZER_VERSION,
            "k1": k1,
            "b": b,
            "epsilon": epsilon,
        }
        suffix = ".json" if backend == "rank_bm25" else ".npys"
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_path = root / f"bm25-{backend}-{key_digest(key)}{suffix}"
        self.from_cache = False
        """True when the index came from a verified cache entry rather than a build."""

        if backend == "rank_bm25":
            payload = load_entry(self.cache_path, key)
            if payload is not None:
                self.from_cache = self._restore_okapi(payload)
            if not self.from_cache:
                self._build_okapi(docs)
                store_entry(self.cache_path, self._serialize_okapi(), key)
        else:
            self._sparse: SparseIndex | None = load_stream(
                self.cache_path, key, lambda f: SparseIndex.read(f, len(self.doc_ids))
            )
            self.from_cache = self._sparse is not None
            if self._sparse is None:
                self._sparse = SparseIndex.build(
                    (passage_text(doc) for doc in docs), len(docs), k1, b, epsilon, progress
                )
                store_stream(self.cache_path, self._sparse.write, key)

    # -- rank_bm25 ---------------------------------------------------------------------------

    def _build_okapi(self, docs: Sequence[Doc]) -> None:
        corpus_tokens: list[list[str]] = []
        for i, doc in enumerate(docs):
            corpus_tokens.append(tokenize(passage_text(doc)))
            if self._progress and (i % 1000 == 0 or i + 1 == len(docs)):
                self._progress("bm25 tokenize", i + 1, len(docs))
        if not any(corpus_tokens):
            raise ValueError("cannot build a BM25 index: no document has a single token")
        from rank_bm25 import BM25Okapi

        self._okapi = BM25Okapi(corpus_tokens, k1=self.k1, b=self.b, epsilon=self.epsilon)

    def _serialize_okapi(self) -> bytes:
        okapi = self._okapi
        state = {name: getattr(okapi, name) for name in OKAPI_STATE}
        return json.dumps({"doc_ids": self.doc_ids, **state}).encode("utf-8")

    def _restore_okapi(self, payload: bytes) -> bool:
        """Load a verified entry; False (rebuild) if it does not describe this corpus."""
        try:
            # Plain JSON, never a pickle: a cache folder anyone can write must not be able
            # to run code here (a manifest beside the payload vouches for nothing).
            state = json.loads(payload)
            if state.pop("doc_ids") != self.doc_ids or state["corpus_size"] != len(self.doc_ids):
                return False
            from rank_bm25 import BM25Okapi

            okapi = BM25Okapi.__new__(BM25Okapi)
            for name in OKAPI_STATE:
                setattr(okapi, name, state[name])
            okapi.tokenizer = None
            self._okapi = okapi
            return True
        except Exception:  # a damaged entry of any kind is rebuilt, never trusted
            return False

    # -- searching -------------------------------------------------------------------------

    def scores(self, query_text: str) -> Any:
        """BM25 score of every doc (numpy float64, in corpus order) for one query."""
        import numpy as np

        tokens = tokenize(query_text)
        if self.backend == "rank_bm25":
            return np.asarray(self._okapi.get_scores(tokens), dtype=np.float64)
        assert self._sparse is not None
        return self._sparse.scores(tokens)

    def search(self, queries: Sequence[Query], depth: int) -> Run:
        """Top `depth` docs per query with a positive score; a query matching nothing maps to {}."""
        run = Run(name=self.name)
        for i, query in enumerate(queries):
            run.scores[query.query_id] = top_scored(
                self.doc_ids, self.scores(query.text), depth, positive_only=True
            )
            if self._progress:
                self._progress("bm25 search", i + 1, len(queries))
        return run


class SparseIndex:
    """The bm25s backend's index: each term's column of the term x document score matrix
    (CSC: `indptr` per term, `indices` the documents (int32), `data` their float64 scores),
    and the vocabulary in first-occurrence order, as rank_bm25 sums its idfs."""

    def __init__(self, vocab: dict[str, int], indptr: Any, indices: Any, data: Any, n_docs: int):
        self.vocab, self.indptr, self.indices, self.data = vocab, indptr, indices, data
        self.n_docs = n_docs

    # long: BM25Okapi's expressions, operation for operation, over blocks of postings
    @classmethod
    def build(
        cls,
        texts: Any,
        n_docs: int,
        k1: float,
        b: float,
        epsilon: float,
        progress: ProgressCallback | None = None,
    ) -> SparseIndex:
        """Tokenize block by block into (term, doc, tf) int32 postings sorted by term then doc,
        then place each block's postings in the matrix: memory stays a few arrays of the size
        of the postings. The scores are BM25Okapi's expressions, operation for operation (its
        idf floor, epsilon * mean idf, for terms in more than half the docs included): bm25s's
        own builder (ATIRE tf, Robertson idf floored at 0) would give other bits."""
        import numpy as np

        vocab: dict[str, int] = {}
        term_id = vocab.setdefault
        blocks: list[tuple[Any, Any, Any]] = []
        doc_len = np.zeros(n_docs, dtype=np.int64)
        done = 0
        pending: list[list[str]] = []
        for text in texts:
            pending.append(tokenize(text))
            done += 1
            if len(pending) == BLOCK_DOCS or done == n_docs:
                start = done - len(pending)
                lengths = np.fromiter(map(len, pending), dtype=np.int64, count=len(pending))
                doc_len[start:done] = lengths
                flat = list(chain.from_iterable(pending))
                for term in dict.fromkeys(flat):  # new terms numbered in first-occurrence order
                    term_id(term, len(vocab))
                ids = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
                local = np.repeat(np.arange(len(pending), dtype=np.int64), lengths)
                keys, tf = np.unique(ids * len(pending) + local, return_counts=True)
                blocks.append(
                    (
                        (keys // len(pending)).astype(np.int32),
                        (keys % len(pending) + start).astype(np.int32),
                        tf.astype(np.int32),
                    )
                )
                pending = []
            if progress and (done % 1000 == 1 or done == n_docs):
                progress("bm25 tokenize", done, n_docs)
        if done != n_docs:
            raise ValueError(f"expected {n_docs} passages, read {done}")
        if not vocab:
            raise ValueError("cannot build a BM25 index: no document has a single token")
        n_terms = len(vocab)
        doc_freq = np.zeros(n_terms, dtype=np.int64)
        for terms, _, _ in blocks:
            doc_freq += np.bincount(terms, minlength=n_terms)
        idf = [math.log(n_docs - df + 0.5) - math.log(df + 0.5) for df in doc_freq.tolist()]
        idf_sum = 0.0
        for value in idf:  # a plain left-to-right sum, as rank_bm25 does
            idf_sum += value
        floor = epsilon * (idf_sum / n_terms)
        idf_array = np.array([floor if value < 0 else value for value in idf], dtype=np.float64)
        avgdl = int(doc_len.sum()) / n_docs
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(doc_freq, out=indptr[1:])
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        data = np.empty(int(indptr[-1]), dtype=np.float64)
        filled = indptr[:-1].copy()
        while blocks:
            terms, docs, tf = blocks.pop(0)
            first = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
            counts = np.diff(np.r_[first, len(terms)])
            present = terms[first]
            slot = np.repeat(filled[present] - first, counts) + np.arange(len(terms))
            filled[present] += counts
            indices[slot] = docs
            # The same expression, in the same order, as BM25Okapi.get_scores.
            tfc = tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len[docs] / avgdl))
            data[slot] = idf_array[terms] * tfc
        return cls(vocab, indptr, indices, data, n_docs)

    def scores(self, tokens: Sequence[str]) -> Any:
        """Every document's score: the query terms' columns added in query order (a repeated
        term twice), as BM25Okapi.get_scores adds them; a term's documents are distinct, so a
        fancy-index add is bm25s's np.add.at, many times faster."""
        import numpy as np

        scores = np.zeros(self.n_docs, dtype=np.float64)
        for token in tokens:
            term = self.vocab.get(token)
            if term is None:
                continue
            start, end = int(self.indptr[term]), int(self.indptr[term + 1])
            scores[self.indices[start:end]] += self.data[start:end]
        return scores

    def write(self, sink: BinaryIO) -> None:
        """Plain numpy arrays one after another (no pickle): sizes, the vocabulary as UTF-8
        lines (a token never holds a newline), indptr, indices, data."""
        import numpy as np
        from numpy.lib import format as npy

        terms = "\n".join(sorted(self.vocab, key=self.vocab.__getitem__)).encode("utf-8")
        sizes = np.array([self.n_docs, len(self.vocab), len(self.indices)], dtype=np.int64)
        for array in (sizes, np.frombuffer(terms, dtype=np.uint8), self.indptr, self.indices,
                      self.data):  # fmt: skip
            npy.write_array(sink, array, allow_pickle=False)

    @classmethod
    def read(cls, source: BinaryIO, n_docs: int) -> SparseIndex | None:
        """The index `write` wrote, checked to be one (dtypes, shapes, ranges) over `n_docs`
        documents; None when it is not."""
        import numpy as np
        from numpy.lib import format as npy

        def array(dtype: Any, length: int | None = None) -> Any:
            value = npy.read_array(source, allow_pickle=False)
            if value.dtype != dtype or value.ndim != 1 or length not in (None, len(value)):
                raise ValueError("not a BM25 index")
            return value

        sizes = array(np.int64, 3).tolist()
        if sizes[0] != n_docs:
            return None
        terms = array(np.uint8).tobytes().decode("utf-8").split("\n")
        vocab = {term: i for i, term in enumerate(terms)}
        indptr = array(np.int64, sizes[1] + 1)
        indices = array(np.int32, sizes[2])
        data = array(np.float64, sizes[2])
        if len(vocab) != sizes[1] or indptr[0] != 0 or indptr[-1] != sizes[2]:
            return None
        if np.any(np.diff(indptr) < 0) or (len(indices) and (
            indices.min() < 0 or indices.max() >= n_docs)):  # fmt: skip
            return None
        if not np.isfinite(data).all():  # a NaN score would rank nothing: rebuild instead
            return None
        return cls(vocab, indptr, indices, data, n_docs)
