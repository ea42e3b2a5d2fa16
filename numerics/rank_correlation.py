"""Kendall's rank correlation of two scorings of the same systems. Numpy only."""

from __future__ import annotations

import numpy as np


def kendall_tau(x, y) -> float | None:
    """Kendall's τ-b (Kendall 1945, with ties): (n_c − n_d) / √((n_0 − n_1)(n_0 − n_2)),
    n_0 = n(n−1)/2 pairs, n_1 and n_2 the pairs tied in x and in y; the definition of
    ``scipy.stats.kendalltau``'s default. None for fewer than two items or when either
    side is all ties."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.size != y.size:
        raise ValueError("x and y must have one value per system each")
    n = x.size
    if n < 2:
        return None
    i, j = np.triu_indices(n, k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    concordant_minus_discordant = float((dx * dy).sum())
    pairs = n * (n - 1) / 2
    untied_x, untied_y = pairs - float((dx == 0).sum()), pairs - float((dy == 0).sum())
    if untied_x == 0 or untied_y == 0:
        return None
    return concordant_minus_discordant / float(np.sqrt(untied_x * untied_y))
