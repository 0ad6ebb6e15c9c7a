"""Nelder–Mead: derivative-free minimization over a few dimensions, without scipy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Objective = Callable[[Any], float]
"""A negative log posterior over a hyperparameter vector (the fit minimizes it)."""


def nelder_mead(
    fun: Objective, start: Sequence[float], step: float = 0.5, iters: int = 400
) -> list[float]:
    """Minimize fun over R^d (small d) from `start`, a simplex of side `step`."""
    import numpy as np

    dim = len(start)
    simplex = [np.array(start, dtype=float)]
    for i in range(dim):
        point = np.array(start, dtype=float)
        point[i] += step
        simplex.append(point)
    values = [fun(p) for p in simplex]
    for _ in range(iters):
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if abs(values[-1] - values[0]) < 1e-9:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]
        reflected = centroid + (centroid - worst)
        fr = fun(reflected)
        if fr < values[0]:
            expanded = centroid + 2 * (centroid - worst)
            fe = fun(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centroid + 0.5 * (worst - centroid)
            fc = fun(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                best = simplex[0]
                simplex = [best + 0.5 * (p - best) for p in simplex]
                values = [fun(p) for p in simplex]
    return list(simplex[int(np.argmin(values))])
