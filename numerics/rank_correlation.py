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


def tau_ap(reference, estimate) -> float | None:
    """AP rank correlation τ_AP of ``estimate`` against ``reference`` (Yilmaz, Aslam &
    Robertson 2008, "A new rank correlation coefficient for information retrieval"):

        τ_AP = 2 / (N − 1) · Σ_{i=2..N} C(i) / (i − 1)  −  1,

    systems in the order of ``estimate`` (best first: higher values first, ties in input
    order), C(i) = how many of the i − 1 systems above the i-th are above it in
    ``reference`` too (strictly: a tie in the reference is not "above"). Not symmetric:
    a swap near the top costs more than one near the bottom. None for fewer than two."""
    reference = np.asarray(reference, dtype=np.float64).ravel()
    estimate = np.asarray(estimate, dtype=np.float64).ravel()
    if reference.size != estimate.size:
        raise ValueError("reference and estimate must have one value per system each")
    n = reference.size
    if n < 2:
        return None
    ordered = reference[np.argsort(-estimate, kind="stable")]
    above = np.tril(ordered[None, :] > ordered[:, None], k=-1)  # [i, j]: j above i, better
    correct = above.sum(axis=1)[1:].astype(np.float64)
    return float(2.0 / (n - 1) * (correct / np.arange(1, n)).sum() - 1.0)


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their average rank (``scipy.stats.rankdata``'s default)."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size, dtype=np.float64)
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], values.size]
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        ranks[order[start:end]] = (start + end + 1) / 2.0
    return ranks


def pearson(x, y) -> float | None:
    """Pearson's r = Σ (x − x̄)(y − ȳ) / √(Σ (x − x̄)² Σ (y − ȳ)²) (``scipy.stats.pearsonr``);
    None for fewer than two pairs or a constant side."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.size != y.size:
        raise ValueError("x and y must have one value each per item")
    if x.size < 2:
        return None
    dx, dy = x - x.mean(), y - y.mean()
    denominator = float(np.sqrt((dx * dx).sum() * (dy * dy).sum()))
    if denominator == 0:
        return None
    return float(np.clip((dx * dy).sum() / denominator, -1.0, 1.0))


def spearman(x, y) -> float | None:
    """Spearman's ρ: Pearson's r of the average ranks (``scipy.stats.spearmanr``)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.size != y.size:
        raise ValueError("x and y must have one value each per item")
    return pearson(_average_ranks(x), _average_ranks(y))
