"""Every random stream of the core is named in one place (`core.random_streams`), and each is
derived as it always was: pools, frames, queues, draws and intervals recorded before stay the
same for the same seed."""

import random
import zlib

import numpy as np

from workbench.core import random_streams as streams


def _same_numpy(made, entropy) -> bool:
    return np.array_equal(made.random(8), np.random.default_rng(entropy).random(8))


def _same_python(made, seed) -> bool:
    before = random.Random(seed)
    return [made.random() for _ in range(8)] == [before.random() for _ in range(8)]


def test_the_numpy_streams_derive_as_before():
    code = zlib.crc32("q é".encode())
    assert streams.query_code("q é") == code
    assert _same_numpy(streams.queue_stream(3, "q é", 7), [3, code, 7])
    assert _same_numpy(streams.study_stream(3, 40), [3, 40, 27])
    assert _same_numpy(streams.study_query_stream(3, 40, "q é"), [3, 40, code])
    assert _same_numpy(streams.interval_stream(3, "q é"), [3, code, 5])
    assert _same_numpy(streams.coverage_stream(3, "q é"), [3, code])
    assert _same_numpy(streams.resampling_stream(11), 11)


def test_the_python_streams_derive_as_before():
    code = zlib.crc32(b"q1")
    assert _same_python(streams.frame_random(4, "q1"), 4 * 1_000_003 + code)
    assert _same_python(streams.pool_random(4, "q1"), "4:q1")
    assert _same_python(streams.overlap_random(4, "q1"), "workbench-overlap:4:q1")
    assert _same_python(streams.design_random(4, 2), "4/2")
    assert _same_python(streams.split_random(4), 4)


def test_no_two_streams_draw_alike_from_one_seed():
    """Except one coincidence kept for the recorded draws: numpy pads a seed with zeros, so the
    queue's stream of a query before its first judgment is the static coverage report's of it
    (harmless: no figure combines the two, and each is a fair stream of its own)."""
    assert _same_numpy(streams.queue_stream(1, "q", 0), [1, zlib.crc32(b"q")])
    first = [
        streams.queue_stream(1, "q", 1).random(),
        streams.study_stream(1, 0).random(),
        streams.study_query_stream(1, 0, "q").random(),
        streams.interval_stream(1, "q").random(),
        streams.coverage_stream(1, "q").random(),
        streams.frame_random(1, "q").random(),
        streams.pool_random(1, "q").random(),
        streams.overlap_random(1, "q").random(),
        streams.design_random(1, 0).random(),
    ]
    assert len(set(first)) == len(first)
