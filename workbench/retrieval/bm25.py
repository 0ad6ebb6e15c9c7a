"""BM25 (Okapi, k1=1.5, b=0.75) over `tokenize`, with rank_bm25 or bm25s, cached on disk."""

from __future__ import annotations

import io
import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from workbench.core.model import Doc, Query, Run
from workbench.retrieval.cache import (
    corpus_hash,
    default_cache_dir,
    key_digest,
    load_entry,
    store_entry,
)
from workbench.retrieval.select import ProgressCallback, check_unique_ids, top_scored
from workbench.retrieval.tokenize import TOKENIZER_VERSION, tokenize

BACKENDS = ("rank_bm25", "bm25s")
INDEX_VERSION = "2"
"""Part of every BM25 cache key: bump it whenever the index this module builds changes."""


def passage_text(doc: Doc) -> str:
    """What a retriever reads: "title\\ntext" when there is a title."""
    return f"{doc.title}\n{doc.text}" if doc.title else doc.text


OKAPI_STATE = ("k1", "b", "epsilon", "corpus_size", "avgdl", "doc_len", "doc_freqs", "idf",
               "average_idf")  # fmt: skip
"""rank_bm25.BM25Okapi's whole state: plain numbers, lists and dicts, cached as JSON."""


class BM25Retriever:
    """rank_bm25's BM25Okapi scores; the bm25s backend gives the same scores, faster.

    The index is built once per corpus and cached under `cache_dir`, keyed by corpus hash,
    tokenizer version, backend and parameters; an entry that fails verification is rebuilt."""

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
        if backend not in BACKENDS:
            raise ValueError(
                f"unknown BM25 backend {backend!r}; choose one of {', '.join(BACKENDS)}"
            )
        if not docs:
            raise ValueError("cannot build a BM25 index over an empty corpus")
        self.backend = backend
        self.doc_ids = [doc.doc_id for doc in docs]
        check_unique_ids(self.doc_ids)
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._progress = progress
        self.corpus_hash = corpus_hash(docs)
        key = {
            "kind": "bm25",
            "index_version": INDEX_VERSION,
            "backend": backend,
            "library": f"{backend}=={version(backend.replace('_', '-'))}",
            "corpus": self.corpus_hash,
            "tokenizer": TOKENIZER_VERSION,
            "k1": k1,
            "b": b,
            "epsilon": epsilon,
        }
        suffix = ".json" if backend == "rank_bm25" else ".npz"
        root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_path = root / f"bm25-{backend}-{key_digest(key)}{suffix}"
        self.from_cache = False
        """True when the index came from a verified cache entry rather than a build."""

        payload = load_entry(self.cache_path, key)
        if payload is not None:
            self.from_cache = self._restore(payload)
        if not self.from_cache:
            self._build(docs)
            store_entry(self.cache_path, self._serialize(), key)

    # -- building and caching -------------------------------------------------------------

    def _build(self, docs: Sequence[Doc]) -> None:
        corpus_tokens: list[list[str]] = []
        for i, doc in enumerate(docs):
            corpus_tokens.append(tokenize(passage_text(doc)))
            if self._progress and (i % 1000 == 0 or i + 1 == len(docs)):
                self._progress("bm25 tokenize", i + 1, len(docs))
        if not any(corpus_tokens):
            raise ValueError("cannot build a BM25 index: no document has a single token")
        if self.backend == "rank_bm25":
            from rank_bm25 import BM25Okapi

            self._okapi = BM25Okapi(corpus_tokens, k1=self.k1, b=self.b, epsilon=self.epsilon)
        else:
            self._build_bm25s(corpus_tokens)

    def _build_bm25s(self, corpus_tokens: list[list[str]]) -> None:
        """The term-by-doc score matrix that bm25s's scorer sums, computed with BM25Okapi's own
        arithmetic. bm25s's builder (ATIRE tf, Robertson idf) floors the idf of terms in more
        than half the docs at 0 where rank_bm25 uses epsilon * mean idf, and orders its float
        operations differently; built here, both backends give bit-identical scores."""
        import numpy as np

        vocab: dict[str, int] = {}  # first-occurrence order, as rank_bm25 sums its idfs
        rows: list[int] = []
        cols: list[int] = []
        freqs: list[int] = []
        for row, tokens in enumerate(corpus_tokens):
            for term, tf in Counter(tokens).items():
                rows.append(row)
                cols.append(vocab.setdefault(term, len(vocab)))
                freqs.append(tf)
        n_docs = len(corpus_tokens)
        col_array = np.array(cols, dtype=np.int64)
        doc_freq = np.bincount(col_array, minlength=len(vocab)).tolist()
        idf = [math.log(n_docs - df + 0.5) - math.log(df + 0.5) for df in doc_freq]
        idf_sum = 0.0
        for value in idf:  # a plain left-to-right sum, as rank_bm25 does
            idf_sum += value
        floor = self.epsilon * (idf_sum / len(idf))
        idf = [floor if value < 0 else value for value in idf]

        order = np.argsort(col_array, kind="stable")  # CSC: by term, then by doc
        row_array = np.array(rows, dtype=np.int64)[order]
        term_freq = np.array(freqs, dtype=np.int64)[order]
        doc_len = np.array([len(tokens) for tokens in corpus_tokens])
        avgdl = int(doc_len.sum()) / n_docs
        k1, b = self.k1, self.b
        # The same expression, in the same order, as BM25Okapi.get_scores.
        tfc = term_freq * (k1 + 1) / (term_freq + k1 * (1 - b + b * doc_len[row_array] / avgdl))
        data = np.array(idf, dtype=np.float64)[col_array[order]] * tfc
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(doc_freq, out=indptr[1:])
        self._set_bm25s(data, row_array, indptr, vocab, n_docs)

    def _set_bm25s(
        self, data: Any, indices: Any, indptr: Any, vocab: dict[str, int], n_docs: int
    ) -> None:
        import bm25s

        engine = bm25s.BM25(
            k1=self.k1,
            b=self.b,
            method="atire",
            idf_method="robertson",
            dtype="float64",
            int_dtype="int64",
        )
        engine.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}
        engine.vocab_dict = vocab
        engine.nonoccurrence_array = None
        self._bm25s = engine

    def _serialize(self) -> bytes:
        if self.backend == "rank_bm25":
            okapi = self._okapi
            state = {name: getattr(okapi, name) for name in OKAPI_STATE}
            return json.dumps({"doc_ids": self.doc_ids, **state}).encode("utf-8")
        import numpy as np

        scores = self._bm25s.scores
        vocab = self._bm25s.vocab_dict
        terms = sorted(vocab, key=vocab.__getitem__)
        buffer = io.BytesIO()
        np.savez(
            buffer,
            data=scores["data"],
            indices=scores["indices"],
            indptr=scores["indptr"],
            terms=np.array(terms, dtype=str),
            doc_ids=np.array(self.doc_ids, dtype=str),
        )
        return buffer.getvalue()

    def _restore(self, payload: bytes) -> bool:
        """Load a verified entry; False (rebuild) if it does not describe this corpus."""
        try:
            if self.backend == "rank_bm25":
                # Plain JSON, never a pickle: a cache folder anyone can write must not be able
                # to run code here (a manifest beside the payload vouches for nothing).
                state = json.loads(payload)
                if state.pop("doc_ids") != self.doc_ids or state["corpus_size"] != len(
                    self.doc_ids
                ):
                    return False
                from rank_bm25 import BM25Okapi

                okapi = BM25Okapi.__new__(BM25Okapi)
                for name in OKAPI_STATE:
                    setattr(okapi, name, state[name])
                okapi.tokenizer = None
                self._okapi = okapi
                return True
            import numpy as np

            with np.load(io.BytesIO(payload), allow_pickle=False) as arrays:
                if arrays["doc_ids"].tolist() != self.doc_ids:
                    return False
                terms = arrays["terms"].tolist()
                self._set_bm25s(
                    arrays["data"],
                    arrays["indices"],
                    arrays["indptr"],
                    {term: i for i, term in enumerate(terms)},
                    len(self.doc_ids),
                )
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
        vocab = self._bm25s.vocab_dict
        ids = [vocab[token] for token in tokens if token in vocab]
        if not ids:
            return np.zeros(len(self.doc_ids), dtype=np.float64)
        return self._bm25s.get_scores_from_ids(ids)

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
