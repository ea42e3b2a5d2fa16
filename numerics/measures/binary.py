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
