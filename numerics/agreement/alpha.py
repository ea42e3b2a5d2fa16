"""Krippendorff's alpha with missing data, one distance function per level of measurement.

The level is looked up in ``DISTANCES`` (as fast-krippendorff does) or given as a callable
``distance(values, marginals) → δ²``: ``values`` are the C numbers of the categories,
``marginals`` the Q × C coincidence marginals n_c of Q label sets at once; the result
broadcasts to Q × C × C. Coincidences come from the items × categories count table as one
matrix product; there is no Python loop over items.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .table import (
    Labels,
    check_domain,
    count_table,
    counts,
    query_index,
    undefined_as_none,
)

Distance = Callable[[np.ndarray, np.ndarray], np.ndarray]


def nominal_distance(values: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """δ²(c, k) = [c ≠ k]."""
    c = np.arange(values.size)
    return (c[:, None] != c[None, :]).astype(float)


def ordinal_distance(values: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)², n_g the coincidence marginals of each
    label set (Q × C × C); the diagonal is exactly 0."""
    Q, C = marginals.shape
    c = np.arange(C)
    cumulative = np.concatenate([np.zeros((Q, 1)), np.cumsum(marginals, axis=1)], axis=1)
    low, high = np.minimum(c[:, None], c[None, :]), np.maximum(c[:, None], c[None, :])
    between = cumulative[:, high + 1] - cumulative[:, low]
    delta = (between - (marginals[:, :, None] + marginals[:, None, :]) / 2) ** 2
    delta[:, c, c] = 0.0
    return delta


def interval_distance(values: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """δ²(c, k) = (v_c − v_k)² with v the category values (``domain_values``)."""
    return (values[:, None] - values[None, :]) ** 2


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", §3: δ² per level.
DISTANCES: dict[str, Distance] = {
    "nominal": nominal_distance,
    "ordinal": ordinal_distance,
    "interval": interval_distance,
}
LEVELS = tuple(DISTANCES)


def distance_of(level: str | Distance) -> Distance:
    """The distance function of a level name, or the callable itself."""
    if callable(level):
        return level
    try:
        return DISTANCES[level]
    except (KeyError, TypeError):
        raise ValueError(
            f"level must be one of {', '.join(LEVELS)} or a distance function"
        ) from None


def coincidences(n: np.ndarray) -> np.ndarray:
    """Per-item coincidence matrices (items × C × C), Krippendorff (2011) §3:
    o_ick = (n_ic n_ik − [c = k] n_ic) / (m_i − 1) for items with m_i ≥ 2, zero otherwise."""
    n = np.asarray(n, dtype=float)
    m = n.sum(axis=1)
    pairable = m >= 2
    scale = np.where(pairable, 1.0 / np.where(pairable, m - 1, 1), 0.0)
    outer = n[:, :, None] * n[:, None, :]
    diagonal = np.arange(n.shape[1])
    outer[:, diagonal, diagonal] -= n
    return outer * scale[:, None, None]


def total_coincidences(n: np.ndarray) -> np.ndarray:
    """Σ over items of the coincidence matrices, as one matrix product:
    o = Wᵀn − diag(Σ_i W_i) with W_i = n_i / (m_i − 1) over pairable items."""
    n = np.asarray(n, dtype=float)
    m = n.sum(axis=1)
    pairable = m >= 2
    weighted = n[pairable] / (m[pairable] - 1)[:, None]
    return weighted.T @ n[pairable] - np.diag(weighted.sum(axis=0))


def query_coincidences(n: np.ndarray, query: np.ndarray, n_queries: int) -> np.ndarray:
    """Coincidence matrices summed by query (Q × C × C), with one ``np.add.at``."""
    C = n.shape[1]
    m = n.sum(axis=1)
    pairable = m >= 2
    o = np.zeros((n_queries, C, C))
    np.add.at(o, query[pairable], coincidences(n[pairable]))
    return o


def alpha_batch(o: np.ndarray, distance: Distance, values: np.ndarray) -> np.ndarray:
    """α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck for a stack of coincidence matrices
    (Q × C × C); NaN where undefined (n ≤ 1 pairable values or no expected disagreement)."""
    marginals = o.sum(axis=2)
    total = marginals.sum(axis=1)
    delta = np.broadcast_to(distance(values, marginals), o.shape)
    observed = (o * delta).sum(axis=(1, 2))
    expected = (marginals[:, :, None] * marginals[:, None, :] * delta).sum(axis=(1, 2))
    defined = (total > 1) & (expected > 0)
    alpha = np.full(o.shape[0], np.nan)
    alpha[defined] = 1.0 - (total[defined] - 1) * observed[defined] / expected[defined]
    return alpha


def krippendorff_alpha(
    data: Labels | None = None,
    *,
    counts=None,
    level: str | Distance = "nominal",
    domain_values=None,
) -> float | None:
    """Krippendorff's alpha with missing data (Krippendorff 2011, "Computing Krippendorff's
    alpha-reliability", §3; Hayes & Krippendorff 2007).

    o_ck = Σ_i (n_ic n_ik − [c = k] n_ic) / (m_i − 1)  over items with m_i ≥ 2 labels,
    n_c = Σ_k o_ck,  n = Σ_c n_c,
    α = 1 − D_o / D_e = 1 − (n − 1) Σ_ck o_ck δ²_ck / Σ_ck n_c n_k δ²_ck,

    δ² of the level (``DISTANCES``: nominal [c ≠ k], ordinal (Σ_{g=c..k} n_g −
    (n_c + n_k)/2)², interval (v_c − v_k)²) or a distance callable, with v =
    ``domain_values`` (default 0..C-1). Input: a ``Labels`` bundle or ``counts=``, an items
    × categories count table. Items with fewer than two labels are ignored. ``None`` when
    fewer than two pairable values exist or D_e = 0 (all pairable values identical).
    Equals ``krippendorff.alpha(reliability_data=..., level_of_measurement=level,
    value_domain=domain)``.

    Two coders, three items: both say 0, they differ, both say 1.

    >>> round(krippendorff_alpha(counts=[[2, 0], [1, 1], [0, 2]]), 4)
    0.4444
    """
    distance = distance_of(level)
    n = count_table(data, counts)
    values = check_domain(n.shape[1], domain_values)
    o = total_coincidences(n)
    return undefined_as_none(alpha_batch(o[None], distance, values)[0])


def alpha_per_query(
    data: Labels,
    *,
    query,
    n_queries=None,
    level: str | Distance = "nominal",
    domain_values=None,
) -> list[float | None]:
    """Krippendorff's alpha (formula of :func:`krippendorff_alpha`) of each query's items:
    ``query[i]`` is item i's query index (one entry per item). Per-item coincidence
    matrices are summed by query with one ``np.add.at``; each query's alpha uses its own
    marginals (exactly the alpha of that query's labels alone). ``None`` where undefined."""
    distance = distance_of(level)
    query, n_queries = query_index(data.n_items, query, n_queries)
    values = check_domain(data.n_categories, domain_values)
    o = query_coincidences(counts(data), query, n_queries)
    return [undefined_as_none(v) for v in alpha_batch(o, distance, values)]
