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
