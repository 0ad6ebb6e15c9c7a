"""Lexical similarity inside one query's frame: tf-idf vectors and an inverted index, so the
similarity of one judged passage to every passage of the frame costs one pass over its terms."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Tokenizer = Callable[[str], list[str]]


def document_frequencies(token_lists: Mapping[str, Sequence[str]]) -> Counter[str]:
    """term -> how many documents hold it (the idf's count, over the whole corpus)."""
    counts: Counter[str] = Counter()
    for tokens in token_lists.values():
        counts.update(set(tokens))
    return counts


class FrameIndex:
    """Unit-length tf-idf vectors of a frame's passages (log tf, smoothed idf), indexed by term.

    `similarities(i)` is the cosine of passage i with every passage of the frame; `to_text` the
    cosine of every passage with a free text (the query)."""

    def __init__(self, tokens: Sequence[Sequence[str]], df: Mapping[str, int], corpus_size: int):
        import numpy as np

        self._idf = {t: math.log((corpus_size + 1) / (c + 1)) + 1.0 for t, c in df.items()}
        self._default_idf = math.log(corpus_size + 1) + 1.0
        self.vectors: list[dict[str, float]] = [self._vector(t) for t in tokens]
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for index, vector in enumerate(self.vectors):
            for term, weight in vector.items():
                docs, weights = postings.setdefault(term, ([], []))
                docs.append(index)
                weights.append(weight)
        self._postings = {
            t: (np.asarray(d, dtype=np.intp), np.asarray(w)) for t, (d, w) in postings.items()
        }
        self.size = len(self.vectors)

    def _vector(self, tokens: Sequence[str]) -> dict[str, float]:
        counts = Counter(tokens)
        raw = {
            t: (1.0 + math.log(c)) * self._idf.get(t, self._default_idf) for t, c in counts.items()
        }
        norm = math.sqrt(sum(v * v for v in raw.values())) or 1.0
        return {t: v / norm for t, v in raw.items()}

    def _cosines(self, vector: Mapping[str, float]) -> Any:
        import numpy as np

        out = np.zeros(self.size)
        for term, weight in vector.items():
            hit = self._postings.get(term)
            if hit is not None:
                out[hit[0]] += weight * hit[1]
        return out

    def similarities(self, index: int) -> Any:
        """Cosine of passage `index` with every passage of the frame (itself: 1)."""
        return self._cosines(self.vectors[index])

    def to_text(self, tokens: Sequence[str]) -> Any:
        """Cosine of every passage with a free text's tokens."""
        return self._cosines(self._vector(tokens))
