"""Set measures of the top k (Success, P, R, F1, Judged) and the counts (NumRel, NumRet, …).

Each function takes the judged rows of a run, the parsed measure and the relevance
threshold, and returns one value per query; ``@family`` declares the measure.
"""

from __future__ import annotations

import numpy as np

from .names import Measure, family
from .ranking import JudgedRows, safe_divide


def _hits(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """Relevant items in the top k, per query (the kernel of Success, P, R)."""
    return r.count(r.top(m.cutoff) & r.relevant(rel))


@family("Success", cutoff="required", rel=True, conventions=("trec", "granular"))
def success(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """Success@k = 1 if a relevant item is in the top k (``m_success.c``).
    granular (LlamaIndex hit rate): relevant in top k / R."""
    hits = _hits(r, m, rel)
    if m.convention == "granular":
        return safe_divide(hits, r.num_rel(rel))
    return (hits > 0).astype(float)


@family("P", cutoff="required", rel=True, conventions=("trec", "retrieved"))
def precision(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """P@k = |relevant in top k| / k, always k (``m_P.c``).
    retrieved: divide by min(k, retrieved)."""
    hits = _hits(r, m, rel)
    if m.convention == "retrieved":
        return safe_divide(hits, np.minimum(r.n_ret, m.cutoff).astype(float))
    return hits / m.cutoff


@family("R", cutoff="required", rel=True)
def recall(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """R@k = |relevant in top k| / R (``m_recall.c``)."""
    return safe_divide(_hits(r, m, rel), r.num_rel(rel))


@family("F1", cutoff="required", rel=True)
def f1(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """F1@k = 2·P@k·R@k / (P@k + R@k), 0 when both are 0 (harmonic mean; ``m_P.c`` and
    ``m_recall.c`` for the parts)."""
    p, rec = precision(r, m, rel), recall(r, m, rel)
    return safe_divide(2 * p * rec, p + rec)


@family("Judged", cutoff="required", rel=False)
def judged(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """Judged@k = |top-k items present in the gold set| / min(k, retrieved), 0 when nothing
    is retrieved (ir_measures ``Judged``; not a trec_eval measure)."""
    return safe_divide(r.count(r.top(m.cutoff)), np.minimum(r.n_ret, m.cutoff).astype(float))


@family("NumRel", cutoff="none", rel=True)
def num_rel(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """NumRel = R (``m_num_rel.c``)."""
    return r.num_rel(rel).copy()


@family("NumRet", cutoff="none", rel=False)
def num_ret(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """NumRet = results retrieved (``m_num_ret.c``)."""
    return r.n_ret.astype(float)


@family("NumRelRet", cutoff="none", rel=True)
def num_rel_ret(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """NumRelRet = relevant results retrieved (``m_num_rel_ret.c``)."""
    return r.count(r.relevant(rel))


@family("NumQ", cutoff="none", rel=False)
def num_q(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """NumQ = 1 for every evaluated query; summed, the number of queries (``m_num_q.c``)."""
    return np.ones(r.n_queries)


@family("NumNonRelJudgedRet", cutoff="none", rel=True)
def num_nonrel_judged_ret(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """Judged non-relevant results retrieved: 0 ≤ grade < rel (``m_num_nonrel_judged_ret.c``)."""
    return r.count((r.grade >= 0) & (r.grade < rel))


def _set_counts(r: JudgedRows, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(relevant retrieved, retrieved, R) per query, as floats."""
    return r.count(r.relevant(rel)), r.n_ret.astype(float), r.num_rel(rel)


@family("SetP", cutoff="none", rel=True)
def set_precision(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """SetP = relevant retrieved / retrieved, the whole ranking as a set (``m_set_P.c``)."""
    hits, retrieved, _ = _set_counts(r, rel)
    return safe_divide(hits, retrieved)


@family("SetR", cutoff="none", rel=True)
def set_recall(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """SetR = relevant retrieved / R (``m_set_recall.c``)."""
    hits, _, num_rel = _set_counts(r, rel)
    return safe_divide(hits, num_rel)


@family("SetAP", cutoff="none", rel=True)
def set_ap(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """SetAP = relevant retrieved² / (retrieved · R) (``m_set_map.c``)."""
    hits, retrieved, num_rel = _set_counts(r, rel)
    return safe_divide(hits * hits, retrieved * num_rel)


@family("SetF", cutoff="none", rel=True, beta=True)
def set_f(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """SetF(beta=x) = (x + 1)·P·R / (x·P + R) over the whole ranking, 0 when nothing
    relevant is retrieved; x weighs recall against precision, default 1 (``m_set_F.c``)."""
    hits, retrieved, num_rel = _set_counts(r, rel)
    p, rec = safe_divide(hits, retrieved), safe_divide(hits, num_rel)
    x = m.beta
    return np.where(hits > 0, safe_divide((x + 1.0) * p * rec, x * p + rec), 0.0)
