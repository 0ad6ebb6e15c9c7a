"""The adaptive queue's picks after the fair start: which kind is most behind its share
(`kind_behind`), a reserve passage drawn from the band furthest behind its Neyman share
(`rest_draw`), and a candidate drawn with a recorded probability (`candidate_draw`). Each draw
is recorded on the query (`QueryRecord.pending`) with what the model expected then, so the
estimate stays design-based."""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from typing import Any

from workbench.core.adaptive.estimate import Draw
from workbench.core.adaptive.records import Pick, PolicyConfig, QueryRecord
from workbench.core.adaptive.rest import RestModel


def kind_behind(
    config: PolicyConfig, kinds: Mapping[str, int], candidates: bool, reserve: bool
) -> str:
    """The kind of pick most behind its share, given the picks made so far by kind (feedback
    takes what the draws leave)."""
    if not candidates:
        return "rest"
    shares = {"draw": config.draw_share, "rest": config.rest_share if reserve else 0}
    shares["feedback"] = max(0.0, 1.0 - sum(shares.values()))
    made = sum(kinds.values()) + 1
    return max(shares, key=lambda k: (shares[k] * made - kinds.get(k, 0), shares[k]))


def rest_draw(
    config: PolicyConfig, q: QueryRecord, reserve: list[int], model: RestModel, scale: float
) -> Pick:
    """A reserve passage at random from the band furthest behind its Neyman share
    (N_b * sqrt(rate), the rate as the shared `model` estimates it so far, times the query's
    `scale`, else the band's prior): each band's judged reserve stays a simple random sample
    of the band."""
    import numpy as np

    open_ = set(reserve)
    bands = [b for b in q.frame.bands if any(i in open_ for i in b.members)]
    weights = []
    for b in bands:
        rate = model.rate(b.name)
        per_doc = rate * scale if rate is not None else b.prior
        weights.append(b.size * math.sqrt(min(max(per_doc, 1e-9), 1.0)))
    done = [sum(1 for i in b.members if i in q.grades) for b in bands]
    made = sum(done) + 1
    deficit = [w / sum(weights) * made - n for w, n in zip(weights, done, strict=True)]
    band = bands[int(np.argmax(deficit))]
    members = [i for i in band.members if i in open_]
    seed = [config.seed, zlib.crc32(q.frame.query_id.encode("utf-8")), len(q.grades)]
    i = members[int(np.random.default_rng(seed).integers(len(members)))]
    draw = Draw(q.frame.query_id, q.frame.doc_ids[i], 1.0 / len(members), (), reserve=True)
    q.pending = draw
    return Pick(q.frame.query_id, draw.doc_id, "draw", draw)


def candidate_draw(config: PolicyConfig, q: QueryRecord, unjudged: list[int], p: Any) -> Pick:
    """A candidate drawn with probability (1 - eps) s / sum(s) + eps / n, s = the model's sd
    of relevance sqrt(p (1 - p)) (Neyman for the residuals), recorded with what the model
    expected then."""
    import numpy as np

    idx = np.asarray(unjudged, dtype=np.intp)
    prob = np.clip(p[idx], 1e-6, 1.0 - 1e-6)
    tilt = np.sqrt(prob * (1.0 - prob))
    eps = config.defensive
    dist = (1 - eps) * tilt / tilt.sum() + eps / len(idx)
    dist = dist / dist.sum()
    seed = [config.seed, zlib.crc32(q.frame.query_id.encode("utf-8")), len(q.grades)]
    choice = int(np.random.default_rng(seed).choice(len(idx), p=dist))
    spread = float((prob * (1.0 - prob) / dist).sum())
    doc_id = q.frame.doc_ids[int(idx[choice])]
    excluded = tuple(q.frame.doc_ids[i] for i in q.order if i < q.frame.candidates)
    draw = Draw(
        q.frame.query_id,
        doc_id,
        float(dist[choice]),
        excluded,
        max(spread, 1e-3),
        float(prob.sum()),
        float(prob[choice]),
    )
    q.pending = draw
    return Pick(q.frame.query_id, doc_id, "draw", draw)
