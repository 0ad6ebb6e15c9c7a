"""Draws that stand for a posterior known up to a constant (exp(-objective)), around its mode:
a heavy-tailed Laplace proposal, refined by adaptive importance sampling, then resampled."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.coverage.optimizer import Objective
from workbench.core.random_streams import resampling_stream

if TYPE_CHECKING:
    import numpy as np

IMPORTANCE_ROUNDS = 2
"""Rounds of adaptive importance sampling of the hyperparameters (each adds `count` draws)."""
PROPOSAL_DF = 4.0
"""Degrees of freedom of the Student-t proposals."""
HESSIAN_STEP = 1e-2
"""Finite-difference step of the numerical Hessian."""
MIN_CURVATURE = 0.25
"""Curvature given to flat directions: that of a sd of 2 (the priors' scale)."""
SEED = 20240917
"""The draws are deterministic."""


def laplace_draws(
    objective: Objective, theta: Sequence[float], fixed: Sequence[int], count: int
) -> list[tuple[Any, float]]:
    """`count` equally weighted (point, weight) pairs from exp(-objective) around its mode
    `theta`; `fixed` coordinates are not varied. Empty when the Hessian or every weight is not
    finite.

    Proposals: a Student-t (4 df) around the mode with the inverse numerical Hessian as its
    scale (the Laplace approximation, made heavy-tailed), then a t fitted to the weighted draws
    so far; every draw is weighted by the exact target over the mixture of the proposals'
    densities, so a skewed posterior (a log slope near a flat segment) is not taken for a
    normal one."""
    import numpy as np

    mode = np.asarray(theta, dtype=float)
    free = [i for i in range(len(mode)) if i not in set(fixed)]
    if not free or count <= 0:
        return []
    center = objective(mode)
    hessian = _hessian(objective, mode, free, center)
    if not np.all(np.isfinite(hessian)):
        return []
    values, vectors = np.linalg.eigh(hessian)
    values = np.maximum(values, MIN_CURVATURE)
    rng = resampling_stream(SEED)
    dim = len(free)
    proposals = [(np.zeros(dim), (vectors / np.sqrt(values)))]
    points: list[Any] = []
    for round_ in range(IMPORTANCE_ROUNDS):
        shift, factor = proposals[round_]
        standard = (
            rng.standard_normal((count, dim))
            * np.sqrt(PROPOSAL_DF / rng.chisquare(PROPOSAL_DF, size=count))[:, None]
        )
        points.extend(shift + standard @ factor.T)
        if round_ < IMPORTANCE_ROUNDS - 1:
            first = importance_weights(objective, mode, free, points, proposals, center)
            if first is None:
                return []
            mean = first @ np.asarray(points)
            spread = np.asarray(points) - mean
            cov = (spread * first[:, None]).T @ spread + np.eye(dim) * 1e-3
            proposals.append((mean, np.linalg.cholesky(cov)))
    weights = importance_weights(objective, mode, free, points, proposals, center)
    if weights is None:
        return []
    # Systematic resampling to equally weighted draws.
    cumulative = np.cumsum(weights)
    chosen = np.searchsorted(cumulative, (np.arange(count) + rng.uniform()) / count)
    out = []
    for index in np.minimum(chosen, len(points) - 1):
        point = mode.copy()
        point[free] += points[index]
        out.append((point, 1.0 / count))
    return out


def _hessian(objective: Objective, mode: np.ndarray, free: Sequence[int], center: float) -> Any:
    """Central finite differences of the objective over the free coordinates at the mode."""
    import numpy as np

    step = HESSIAN_STEP
    dim = len(free)
    hessian = np.zeros((dim, dim))

    def at(offsets: dict[int, float]) -> float:
        point = mode.copy()
        for i, delta in offsets.items():
            point[free[i]] += delta
        return objective(point)

    for i in range(dim):
        plus, minus = at({i: step}), at({i: -step})
        hessian[i, i] = (plus - 2 * center + minus) / step**2
        for j in range(i):
            value = (
                at({i: step, j: step})
                - at({i: step, j: -step})
                - at({i: -step, j: step})
                + at({i: -step, j: -step})
            ) / (4 * step**2)
            hessian[i, j] = hessian[j, i] = value
    return hessian


def importance_weights(
    objective: Objective,
    theta: np.ndarray,
    free: Sequence[int],
    deltas: Sequence[Any],
    proposals: Sequence[tuple[np.ndarray, np.ndarray]],
    center: float,
) -> np.ndarray | None:
    """Normalized weights exp(-objective) / (mean of the t proposal densities) of the deltas
    (offsets of the free coordinates from theta); None when no draw has a finite weight."""
    import numpy as np

    df = PROPOSAL_DF
    dim = len(free)
    log_densities = []
    for shift, factor in proposals:
        # log density of a multivariate t with location shift and scale factor factor^T.
        inverse = np.linalg.inv(factor)
        z = (np.asarray(deltas) - shift) @ inverse.T
        log_det = float(np.log(np.abs(np.linalg.det(factor))))
        log_densities.append(-(df + dim) / 2 * np.log1p((z**2).sum(1) / df) - log_det)
    stacked = np.stack(log_densities)
    top = stacked.max(axis=0)
    log_proposal = top + np.log(np.exp(stacked - top).mean(axis=0))
    log_target = []
    for delta in deltas:
        point = np.asarray(theta, dtype=float).copy()
        point[free] += delta
        log_target.append(-(objective(point) - center))
    log_weights = np.nan_to_num(np.asarray(log_target) - log_proposal, nan=-np.inf)
    if not np.isfinite(log_weights.max()):
        return None
    weights = np.exp(log_weights - log_weights.max())
    return weights / weights.sum()
