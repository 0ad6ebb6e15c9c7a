"""The adaptive queue's picks after the fair start: which kind is most behind its share
(`kind_behind`), a reserve passage drawn from the band furthest behind its Neyman share
(`rest_draw`), and a candidate drawn with a recorded probability (`candidate_draw`). Each draw
is recorded on the query (`QueryRecord.pending`) with what the model expected then, so the
estimate stays design-based."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from workbench.core.adaptive.estimate import Draw
from workbench.core.adaptive.records import Pick, PolicyConfig, QueryRecord
from workbench.core.adaptive.rest import RestModel
from workbench.core.adaptive.twophase import POSITIVE_PRIOR
from workbench.core.adaptive.twophase import TwoPhaseModel as _TwoPhase
from workbench.core.random_streams import queue_stream


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


def estimate_need(
    config: PolicyConfig,
    candidate_draws: int,
    candidates_left: bool,
    reserve_left: bool,
    rest_known: bool,
) -> str | None:
    """The kind of pick a query without an estimate needs next, so that it has one after the
    fewest judgments (`estimate.combine`'s conditions): draws among its candidates until two
    are judged (or none is left), then a reserve draw while none of its reserve is judged
    (`rest_known`; unless the policy draws none); None when nothing more is needed."""
    if candidates_left and candidate_draws < 2:
        return "draw"
    if reserve_left and config.rest_share > 0 and not rest_known:
        return "rest"
    return None


def rest_draw(
    config: PolicyConfig,
    q: QueryRecord,
    reserve: list[int],
    model: RestModel,
    scale: float,
    positives: frozenset[int] | None = None,
) -> Pick:
    """A reserve passage at random from the band furthest behind its Neyman share
    (N_b * sqrt(rate), the rate as the shared `model` estimates it so far, times the query's
    `scale`, else the band's prior): each band's judged reserve stays a simple random sample
    of the band. `positives`: the reserve passages a judge labelled relevant (`twophase`); then
    the cells are (band, judge stratum), each's share N_b M_bs / M_b * sqrt(its rate) (a
    judge-positive cell nobody judged yet: at least `POSITIVE_PRIOR`), so each stratum's judged
    reserve is a simple random sample of the stratum."""
    import numpy as np

    open_ = set(reserve)
    groups = []
    for b in q.frame.bands:
        if positives is None:
            groups.append((b.members, model.rate(b.name), b.size, b.prior))
            continue
        for label in (0, 1):
            members = tuple(i for i in b.members if (i in positives) == bool(label))
            rate = model.stratum_rate(b.name, label) if isinstance(model, _TwoPhase) else None
            prior = max(b.prior, POSITIVE_PRIOR) if label else b.prior
            groups.append((members, rate, b.size * len(members) / len(b.members), prior))
    groups = [g for g in groups if any(i in open_ for i in g[0])]
    weights = []
    for _, rate, size, prior in groups:
        per_doc = rate * scale if rate is not None else prior
        weights.append(size * math.sqrt(min(max(per_doc, 1e-9), 1.0)))
    done = [sum(1 for i in g[0] if i in q.grades) for g in groups]
    made = sum(done) + 1
    deficit = [w / sum(weights) * made - n for w, n in zip(weights, done, strict=True)]
    group = groups[int(np.argmax(deficit))][0]
    members = [i for i in group if i in open_]
    rng = queue_stream(config.seed, q.frame.query_id, len(q.grades))
    i = members[int(rng.integers(len(members)))]
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
    rng = queue_stream(config.seed, q.frame.query_id, len(q.grades))
    choice = int(rng.choice(len(idx), p=dist))
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
