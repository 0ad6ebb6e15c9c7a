"""The relevance model behind the adaptive queue: a logistic regression over every judged
passage of every query (continuous active learning's relevance feedback), ridge-shrunk toward
a prior that trusts rank, so it predicts sensibly before the first relevant passage is found."""

from __future__ import annotations

from typing import Any

RIDGE = 1.0
"""Strength of the pull toward the prior weights (per feature, on standardised features)."""
NEWTON_STEPS = 8


def fit_logistic(features: Any, labels: Any, prior: Any, ridge: float = RIDGE) -> Any:
    """Weights maximising the log-likelihood minus ridge/2 * |w - prior|^2 (the first column is
    the intercept and is not shrunk). Newton's method; a few steps suffice from the prior."""
    import numpy as np

    x = np.asarray(features, dtype=float)
    y = np.asarray(labels, dtype=float)
    w = np.asarray(prior, dtype=float).copy()
    penalty = _penalty(len(w), ridge)
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (y - p) - penalty * (w - prior)
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            break
        w += step
        if float(np.abs(step).max()) < 1e-6:
            break
    return w


def predict(features: Any, weights: Any) -> Any:
    """Relevance probabilities."""
    import numpy as np

    return 1.0 / (1.0 + np.exp(-np.clip(np.asarray(features) @ weights, -30, 30)))


def covariance(features: Any, weights: Any, ridge: float = RIDGE) -> Any:
    """The weights' posterior covariance (Laplace): the inverse of the penalised log-likelihood's
    curvature at the fitted `weights`. The study draws the weights from it, so what the model
    says of a passage nobody judged carries the fit's own uncertainty."""
    import numpy as np

    x = np.asarray(features, dtype=float)
    p = predict(x, weights)
    hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(_penalty(len(weights), ridge))
    return np.linalg.pinv(hessian)


def _penalty(size: int, ridge: float) -> Any:
    """The ridge per weight; the intercept's (the first) nearly free."""
    import numpy as np

    penalty = np.full(size, ridge)
    penalty[0] = 1e-3
    return penalty
