"""Lexical similarity inside one query's frame: tf-idf vectors and an inverted index, so the
similarity of one judged passage to every passage of the frame costs one pass over its terms."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any

Tokenizer = Callable[[str], list[str]]


def document_frequencies(token_lists: Mapping[str, Sequence[str]]) -> Counter[str]:
    """term -> how many documents hold it (the idf's count, over the whole corpus)."""
    return Counter(chain.from_iterable(map(set, token_lists.values())))


class Vectors:
    """Unit-length tf-idf vectors (log tf, smoothed idf over the whole corpus) as (term ids,
    weights) arrays, each computed once however many frames hold the passage."""

    def __init__(self, tokens: Mapping[str, Sequence[str]], df: Mapping[str, int], size: int):
        self._tokens = tokens
        self._idf = {t: math.log((size + 1) / (c + 1)) + 1.0 for t, c in df.items()}
        self._default_idf = math.log(size + 1) + 1.0
        self._term_ids: dict[str, int] = {}
        self._cache: dict[str, tuple[Any, Any]] = {}

    def of(self, doc_id: str) -> tuple[Any, Any]:
        vector = self._cache.get(doc_id)
        if vector is None:
            vector = self._cache[doc_id] = self.of_tokens(self._tokens.get(doc_id, ()))
        return vector

    def of_tokens(self, tokens: Sequence[str]) -> tuple[Any, Any]:
        """(term ids sorted, unit-length weights)."""
        import numpy as np

        counts = Counter(tokens)
        ids = np.fromiter(
            (self._term_ids.setdefault(t, len(self._term_ids)) for t in counts), dtype=np.int64
        )
        raw = np.fromiter(
            ((1.0 + math.log(c)) * self._idf.get(t, self._default_idf) for t, c in counts.items()),
            dtype=float,
        )
        norm = float(np.sqrt((raw * raw).sum())) or 1.0
        order = np.argsort(ids)
        return ids[order], raw[order] / norm


class FrameIndex:
    """A frame's passage vectors as one term-sorted posting array: `similarities(i)` is the
    cosine of passage i with every passage of the frame; `to_text` the cosine of every passage
    with a free text."""

    def __init__(self, doc_ids: Sequence[str], vectors: Vectors):
        import numpy as np

        self._vectors = vectors
        self.vectors = [vectors.of(d) for d in doc_ids]
        self.size = len(self.vectors)
        if not self.vectors:
            self._terms = np.zeros(0, dtype=np.int64)
            return
        terms = np.concatenate([v[0] for v in self.vectors])
        weights = np.concatenate([v[1] for v in self.vectors])
        docs = np.repeat(np.arange(self.size), [len(v[0]) for v in self.vectors])
        order = np.argsort(terms, kind="stable")
        self._post_docs, self._post_weights = docs[order], weights[order]
        self._terms, self._starts = np.unique(terms[order], return_index=True)
        self._ends = np.append(self._starts[1:], len(order))

    def _cosines(self, vector: tuple[Any, Any]) -> Any:
        import numpy as np

        out = np.zeros(self.size)
        ids, weights = vector
        if not len(self._terms) or not len(ids):
            return out
        at = np.searchsorted(self._terms, ids)
        at = np.minimum(at, len(self._terms) - 1)
        hit = self._terms[at] == ids
        at, w = at[hit], weights[hit]
        lengths = self._ends[at] - self._starts[at]
        if not lengths.sum():
            return out
        offsets = np.repeat(self._starts[at] - np.cumsum(lengths) + lengths, lengths)
        rows = offsets + np.arange(lengths.sum())
        np.add.at(out, self._post_docs[rows], np.repeat(w, lengths) * self._post_weights[rows])
        return out

    def similarities(self, index: int) -> Any:
        """Cosine of passage `index` with every passage of the frame (itself: 1)."""
        return self._cosines(self.vectors[index])

    def to_text(self, tokens: Sequence[str]) -> Any:
        """Cosine of every passage with a free text's tokens."""
        return self._cosines(self._vectors.of_tokens(tokens))


def text_index(doc_ids: Sequence[str], words: Sequence[str], vectors: Vectors) -> tuple[Any, Any]:
    """A query's frame index over `vectors` and every passage's cosine with the query's words
    (what the session keeps as its `built`); each index stays with the vectors it was built
    from, so indexes built from two `Vectors` of the same tokens may serve one session."""
    index = FrameIndex(doc_ids, vectors)
    return index, index.to_text(words)
