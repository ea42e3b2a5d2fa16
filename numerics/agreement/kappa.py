"""Agreement without and with chance correction: percent agreement, Cohen's and Fleiss' kappa.

All per-item work is array work: one ``bincount`` on ``item * C + grade`` gives the
items × categories table from which percent agreement and Fleiss' kappa follow; Cohen's
kappa of every annotator pair is one ``bincount`` over (pair, a's grade, b's grade).
Every coefficient returns ``None`` where it is not defined, never a silent 0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .table import Labels, count_table, counts, item_agreement, query_index


def _unweighted(i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return (i != j).astype(float)


def _linear(i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return np.abs(i - j).astype(float)


def _quadratic(i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return ((i - j) ** 2).astype(float)


# Disagreement weight w_ij of categories i, j for each weighting of Cohen's kappa.
KAPPA_WEIGHTS: dict[str | None, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    None: _unweighted,  # Cohen 1960
    "linear": _linear,  # Cohen 1968
    "quadratic": _quadratic,
}
WEIGHTS = tuple(KAPPA_WEIGHTS)


def percent_agreement(data: Labels | None = None, *, counts=None) -> float | None:
    """Observed agreement, no chance correction.

    P = mean over items i with m_i ≥ 2 labels of  Σ_c n_ic (n_ic − 1) / (m_i (m_i − 1)),

    the share of an item's ordered label pairs that agree (Fleiss 1971's P_i, averaged over
    every multiply-labelled item whatever its m_i). Items with one label are left out;
    ``None`` when no item has two labels. Input: a ``Labels`` bundle or ``counts=``, an
    items × categories count table.
    """
    share, multi = item_agreement(count_table(data, counts))
    if not multi.any():
        return None
    return float(share[multi].mean())


def percent_agreement_per_query(data: Labels, *, query, n_queries=None) -> list[float | None]:
    """Percent agreement (formula of :func:`percent_agreement`) of each query's items,
    ``query[i]`` being item i's query index, by two ``bincount`` calls; ``None`` for a
    query without an item holding two labels."""
    query, n_queries = query_index(data.n_items, query, n_queries)
    share, multi = item_agreement(counts(data))
    total = np.bincount(query, weights=share, minlength=n_queries)
    used = np.bincount(query, weights=multi.astype(float), minlength=n_queries)
    return [float(t / u) if u else None for t, u in zip(total, used, strict=True)]


def cohen_kappa_from_confusion(confusion, weights: str | None = None) -> float | None:
    """Cohen's kappa from a C × C confusion matrix o (rows: annotator a, columns: b).

    κ = 1 − Σ w_ij o_ij / Σ w_ij e_ij,  e_ij = o_i· o_·j / n,

    with disagreement weights w_ij = [i ≠ j] (Cohen 1960), |i − j| (linear) or (i − j)²
    (quadratic; Cohen 1968 weighted kappa) — the definition of
    ``sklearn.metrics.cohen_kappa_score``. ``None`` when n = 0 or Σ w e = 0 (both
    annotators used one same category only: chance agreement is total).
    """
    if weights not in KAPPA_WEIGHTS:
        raise ValueError("weights must be None, 'linear' or 'quadratic'")
    confusion = np.asarray(confusion, dtype=float)
    total = confusion.sum()
    if total == 0:
        return None
    w = KAPPA_WEIGHTS[weights](*np.indices(confusion.shape))
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / total
    denominator = (w * expected).sum()
    if denominator == 0:
        return None
    return float(1.0 - (w * confusion).sum() / denominator)


def confusion_matrix(a, b, n_categories: int) -> np.ndarray:
    """C × C counts of (a's grade, b's grade) over the positions where both graded
    (a negative grade means "not labelled")."""
    a = np.asarray(a, dtype=np.int64).ravel()
    b = np.asarray(b, dtype=np.int64).ravel()
    if a.size != b.size:
        raise ValueError("a and b must have the same length (one entry per item)")
    both = (a >= 0) & (b >= 0)
    a, b = a[both], b[both]
    if a.size and (max(a.max(), b.max()) >= n_categories):
        raise ValueError(f"grades must be category indices 0..{n_categories - 1}")
    flat = np.bincount(a * n_categories + b, minlength=n_categories * n_categories)
    return flat.reshape(n_categories, n_categories)


def cohen_kappa(a, b, n_categories: int, weights: str | None = None) -> float | None:
    """Cohen's kappa of two annotators over the items both labelled.

    ``a`` and ``b`` are parallel grade arrays (one entry per item, category indices
    0..C-1, a negative entry meaning "not labelled by this annotator"). Formula and
    ``None`` cases as :func:`cohen_kappa_from_confusion` (Cohen 1960, 1968); equals
    ``sklearn.metrics.cohen_kappa_score(a, b, labels=range(C), weights=weights)``.
    """
    return cohen_kappa_from_confusion(confusion_matrix(a, b, n_categories), weights)


def pairwise(data: Labels) -> list[dict]:
    """Every annotator pair a < b: the number n of items both labelled, Cohen's kappa
    unweighted, linear and quadratic (see :func:`cohen_kappa`; ``None`` when n = 0 or
    undefined) and the C × C confusion matrix (rows: a's grade, columns: b's grade).

    One ``bincount`` over all pairs at once, each pair's confusion a slice of a
    (pairs × C × C) count array. The pairs counted are the pairs of labels of one item:
    with the labels sorted by (item, annotator), the label at i and the one d places on
    share an item for every d below the item's label count, so the work grows with the
    labels times the most labels an item has, not with items × pairs (at 500,000 labels
    by 20 annotators, that grid was 2.2 s). Annotators without a label count too
    (``labels(..., n_annotators=)``).
    """
    C, A = data.n_categories, data.n_annotators
    first, second = np.triu_indices(A, k=1)
    if first.size == 0:
        return []
    order = np.lexsort((data.annotator, data.item))
    item, annotator, grade = data.item[order], data.annotator[order], data.grade[order]
    codes = [np.zeros(0, dtype=np.int64)]
    for d in range(1, A):
        same = item[d:] == item[:-d]
        if not same.any():
            break  # no item has more than d labels
        a, b = annotator[:-d][same], annotator[d:][same]  # a < b: sorted, one label each
        pair = a * (2 * A - a - 1) // 2 + (b - a - 1)  # (a, b)'s place in triu_indices
        codes.append((pair * C + grade[:-d][same]) * C + grade[d:][same])
    flat = np.bincount(np.concatenate(codes), minlength=first.size * C * C).reshape(
        first.size, C, C
    )
    rows = []
    for p, (a, b) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        confusion = flat[p]
        rows.append(
            {
                "a": a,
                "b": b,
                "n": int(confusion.sum()),
                "cohen_kappa": cohen_kappa_from_confusion(confusion),
                "cohen_kappa_linear": cohen_kappa_from_confusion(confusion, "linear"),
                "cohen_kappa_quadratic": cohen_kappa_from_confusion(confusion, "quadratic"),
                "confusion": confusion.tolist(),
            }
        )
    return rows


def fleiss_kappa(data: Labels | None = None, *, counts=None) -> dict:
    """Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement among many raters").

    Fleiss needs every item rated m times, so it rests on the items having the most
    common label count m ≥ 2 (a tie goes to the larger m); over those N items

    P_i = (Σ_c n_ic² − m) / (m (m − 1)),  P̄ = mean P_i,  p_c = Σ_i n_ic / (N m),
    P_e = Σ_c p_c²,  κ = (P̄ − P_e) / (1 − P_e),

    as ``statsmodels.stats.inter_rater.fleiss_kappa(table, method='fleiss')``. Returns
    {m, n_items, value}; m is ``None`` (n_items 0) when no item has two labels, value is
    ``None`` when P_e = 1 (every label of those items in one category). Input: a
    ``Labels`` bundle or ``counts=``, an items × categories count table.
    """
    n = count_table(data, counts)
    m_all = n.sum(axis=1)
    multi = m_all[m_all >= 2]
    if multi.size == 0:
        return {"m": None, "n_items": 0, "value": None}
    frequency = np.bincount(multi)
    m = int(np.flatnonzero(frequency == frequency.max()).max())
    table = n[m_all == m].astype(float)
    n_items = table.shape[0]
    p_item = ((table**2).sum(axis=1) - m) / (m * (m - 1))
    p_category = table.sum(axis=0) / (n_items * m)
    if np.count_nonzero(p_category) < 2:  # P_e = 1 exactly
        return {"m": m, "n_items": n_items, "value": None}
    p_expected = float((p_category**2).sum())
    value = (float(p_item.mean()) - p_expected) / (1.0 - p_expected)
    return {"m": m, "n_items": n_items, "value": float(value)}
