"""Every random stream of the core, named and derived in one place: what each one draws, and
what it is seeded from (the study's seed, the query, the judgments so far), so that the same
store, seed and arguments give the same draws in every Python run, and two streams never share
a derivation by accident. A derivation here is a contract: changing one changes recorded pools,
frames, draws and intervals, and the frozen outputs that pin them.

numpy streams (`numpy.random.Generator`, numpy imported lazily):

- `queue_stream`: the adaptive queue's next pick of a query and its |Rel| estimate, per
  judgment count (a new judgment, a new stream).
- `study_stream` / `study_query_stream`: the study's joint draws, the shared parameters and each
  query's own, per study judgment count.
- `interval_stream`: which unjudged passages in a run's top k are relevant, per query.
- `coverage_stream`: the static coverage report's posterior-predictive |Rel|, per query (numpy
  pads a seed with zeros: it is `queue_stream`'s at 0 judgments, a coincidence kept, since no
  figure combines the two).
- `resampling_stream`: a statistic's resampling (a bootstrap, a permutation test, a Laplace
  fit's importance draws), from a seed alone.

Python streams (`random.Random`):

- `frame_random`: a query's reserve sample of the rest (pool's sampling and the adaptive frame).
- `pool_random`: a query's pool order under `--order random`.
- `overlap_random`: the passages two annotators both judge (`assign`).
- `design_random`: a Poisson design's draw, per batch.
- `split_random`: a judge calibration's held-out split."""

from __future__ import annotations

import random
import zlib
from typing import Any

STUDY_SHARED = 27
"""The last word of the study's shared draws' seed ([seed, judgments, 27]): a number no query's
code takes in practice (CRC-32 values are spread over 2^32)."""
INTERVALS = 5
"""The last word of a query's interval draws' seed ([seed, query code, 5])."""


def query_code(query_id: str) -> int:
    """A query id as a number, the same in every Python run (`hash` is salted): its UTF-8's
    CRC-32."""
    return zlib.crc32(query_id.encode("utf-8"))


def _numpy(entropy: Any) -> Any:
    import numpy as np

    return np.random.default_rng(entropy)


def queue_stream(seed: int, query_id: str, judged: int) -> Any:
    """The queue's pick of `query_id` and its estimate after `judged` judgments of it."""
    return _numpy([seed, query_code(query_id), judged])


def study_stream(seed: int, judged: int) -> Any:
    """The study's shared draws after `judged` judgments in all."""
    return _numpy([seed, judged, STUDY_SHARED])


def study_query_stream(seed: int, judged: int, query_id: str) -> Any:
    """A query's own part of the study's draws after `judged` judgments in all."""
    return _numpy([seed, judged, query_code(query_id)])


def interval_stream(seed: int, query_id: str) -> Any:
    """Which of a query's unjudged top-k passages are relevant, per draw of the study."""
    return _numpy([seed, query_code(query_id), INTERVALS])


def coverage_stream(seed: int, query_id: str) -> Any:
    """A query's posterior-predictive |Rel| draws in the static coverage report."""
    return _numpy([seed, query_code(query_id)])


def resampling_stream(seed: Any) -> Any:
    """A statistic's resampling, from `seed` alone (numpy's own seeding of it)."""
    return _numpy(seed)


def frame_random(seed: int, query_id: str) -> random.Random:
    """A query's reserve sample of the rest of the corpus (pool's and the adaptive frame's)."""
    return random.Random(seed * 1_000_003 + query_code(query_id))


def pool_random(seed: int, query_id: str) -> random.Random:
    """A query's pool shuffled (`--order random`)."""
    return random.Random(f"{seed}:{query_id}")


def overlap_random(seed: int, query_id: str) -> random.Random:
    """The passages of a query two annotators both judge."""
    return random.Random(f"workbench-overlap:{seed}:{query_id}")


def design_random(seed: int, batch: int) -> random.Random:
    """A Poisson design's draw of one batch."""
    return random.Random(f"{seed}/{batch}")


def split_random(seed: int) -> random.Random:
    """A judge calibration's held-out split."""
    return random.Random(seed)
