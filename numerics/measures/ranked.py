"""Measures of rank positions: RR, AP, R-precision and bpref.

Each function takes the judged rows of a run, the parsed measure and the relevance
threshold, and returns one value per query; ``@family`` declares the measure.
"""

from __future__ import annotations

import numpy as np

from .names import Measure, family
from .ranking import JudgedRows, cumsum_within, safe_divide


@family("RR", cutoff="optional", rel=True, conventions=("trec", "granular"))
def reciprocal_rank(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """RR = 1 / rank of the first relevant item, no cutoff (``m_recip_rank.c``); RR@k is 0
    when that rank is below k (ir_measures). granular (LlamaIndex): mean of 1/rank over the
    relevant items in the top k."""
    relevant = r.top(m.cutoff) & r.relevant(rel)
    if m.convention == "granular":
        return safe_divide(r.count(relevant, 1.0 / r.rank), r.count(relevant))
    rows = np.flatnonzero(relevant)
    q = r.query[rows]
    first = rows[np.r_[True, q[1:] != q[:-1]]] if rows.size else rows
    out = np.zeros(r.n_queries)
    out[r.query[first]] = 1.0 / r.rank[first]
    return out


@family("AP", cutoff="optional", rel=True, conventions=("trec", "retrieved"))
def average_precision(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """AP = Σ_{relevant retrieved at rank i} (relevant in top i / i) / R (``m_map.c``);
    AP@k sums ranks ≤ k only and still divides by R (``m_map_cut.c``).
    retrieved: divide by the number of relevant items retrieved (in the top k)."""
    relevant = r.top(m.cutoff) & r.relevant(rel)
    total = r.count(relevant, r.cum_relevant(rel) / r.rank)
    if m.convention == "retrieved":
        return safe_divide(total, r.count(relevant))
    return safe_divide(total, r.num_rel(rel))


@family("Rprec", cutoff="none", rel=True)
def rprec(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """R-precision = |relevant in top R| / R (``m_Rprec.c``)."""
    num_rel = r.num_rel(rel)
    return safe_divide(r.count((r.rank <= num_rel[r.query]) & r.relevant(rel)), num_rel)


@family("Bpref", cutoff="none", rel=True)
def bpref(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """bpref = (1/R) Σ_{relevant retrieved} (1 − min(n, R) / min(R, N)) (``m_bpref.c``);
    n = judged non-relevant items ranked above it, N = judged non-relevant items of the
    query (0 ≤ grade < rel); a term is 1 when n = 0."""
    judged_nonrel = (r.grade >= 0) & (r.grade < rel)
    above = cumsum_within(judged_nonrel.astype(np.int64), r.query) - judged_nonrel
    num_rel = r.num_rel(rel)
    num_nonrel = np.bincount(
        r.qrel_query[(r.qrel_grade >= 0) & (r.qrel_grade < rel)], minlength=r.n_queries
    ).astype(float)
    big_r, big_n = num_rel[r.query], num_nonrel[r.query]
    penalty = safe_divide(np.minimum(above, big_r), np.minimum(big_r, big_n))
    term = np.where(above > 0, 1.0 - penalty, 1.0)
    return safe_divide(r.count(r.relevant(rel), term), num_rel)


INFAP_EPSILON = 0.00001  # trec_eval.h


@family("infAP", cutoff="none", rel=True)
def inferred_ap(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """infAP (Yilmaz & Aslam, CIKM 2006; ``m_infap.c``): for a relevant item at rank j+1
    with a relevant, n judged non-relevant and u pooled-unjudged (grade < 0) items above
    it, the term is 1 at the top, else 1/(j+1) + j/(j+1) · (a+n+u)/j · (a+ε)/(a+n+2ε);
    the sum over relevant retrieved items is divided by R. Unpooled items count 0."""
    relevant = r.relevant(rel)
    nonrel = (r.grade >= 0) & ~relevant
    unjudged = r.grade < 0
    a = (r.cum_relevant(rel) - relevant)[relevant].astype(float)
    n = (cumsum_within(nonrel.astype(np.int64), r.query) - nonrel)[relevant].astype(float)
    u = (cumsum_within(unjudged.astype(np.int64), r.query) - unjudged)[relevant]
    j = (r.rank[relevant] - 1).astype(float)
    safe_j = np.maximum(j, 1.0)
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((a + n + u) / safe_j) * (
        (a + INFAP_EPSILON) / (a + n + 2 * INFAP_EPSILON)
    )
    term = np.where(j == 0, 1.0, term)
    total = np.bincount(r.query[relevant], weights=term, minlength=r.n_queries)
    return safe_divide(total, r.num_rel(rel))


def recall_level_rank(level: float, num_rel: np.ndarray) -> np.ndarray:
    """The number of relevant items a recall level stands for, lround(level · R), as
    trec_eval 10 computes it (half away from zero)."""
    x = level * num_rel
    return np.where(x - np.floor(x) >= 0.5, np.ceil(x), np.floor(x)).astype(np.int64)


@family("IPrec", cutoff="fraction", rel=True)
def interpolated_precision(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """IPrec@x: interpolated precision at recall level x, the highest precision at or
    after the c-th relevant item, c = lround(x · R); 0 when fewer than c relevant items
    are retrieved (``m_iprec_at_recall.c``, trec_eval 10's rounding)."""
    key = ("iprec", rel)
    if key not in r.cache:
        relevant = r.relevant(rel)
        query, rank = r.query[relevant], r.rank[relevant]
        k = r.cum_relevant(rel)[relevant]
        values, code = np.unique(k / rank, return_inverse=True)
        # Highest precision from each relevant item down its query: a running maximum of
        # the values' integer codes over the reversed rows, lifted per query (the later
        # query higher) so that it never carries over from one query to the next.
        lift = (r.n_queries - query[::-1]).astype(np.int64) * max(values.size, 1)
        best = values[(np.maximum.accumulate(code.ravel()[::-1] + lift) - lift)[::-1]]
        found = np.bincount(query, minlength=r.n_queries)
        r.cache[key] = (best, np.cumsum(found) - found, found)
    best, first, found = r.cache[key]
    c = recall_level_rank(float(m.cutoff), r.num_rel(rel))
    ok = (c <= found) & (found > 0)
    out = np.zeros(r.n_queries)
    out[ok] = best[first[ok] + np.maximum(c[ok], 1) - 1]
    return out
