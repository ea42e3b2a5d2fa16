"""nDCG with trec_eval's linear gain, the exponential gain by name, and LlamaIndex's ideal."""

from __future__ import annotations

import numpy as np

from .names import Measure, family
from .ranking import JudgedRows, safe_divide


def _gain(grades: np.ndarray, dcg: str) -> np.ndarray:
    """gain = grade (≤ 0 → 0), or 2^grade − 1 for ``dcg='exp-log2'``."""
    g = np.maximum(grades, 0).astype(float)
    return np.exp2(g) - 1 if dcg == "exp-log2" else g


def _ideal_ranking(r: JudgedRows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each query's judged grades, best first: (query, grade, 1-based ideal rank)."""
    if "ideal" not in r.cache:
        order = np.lexsort((-r.qrel_grade, r.qrel_query))
        q, g = r.qrel_query[order], r.qrel_grade[order]
        first = np.searchsorted(q, np.arange(r.n_queries))
        r.cache["ideal"] = (q, g, np.arange(q.size) - first[q] + 1)
    return r.cache["ideal"]


@family(
    "nDCG",
    cutoff="optional",
    rel=False,
    conventions=("trec", "min"),
    gains=("linear", "exp-log2"),
)
def ndcg(r: JudgedRows, m: Measure, rel: int) -> np.ndarray:
    """nDCG@k = DCG@k / ideal DCG@k; DCG = Σ_{i ≤ k} gain(grade_i) / log2(i + 1), gain =
    grade (≤ 0 → 0); the ideal ranking orders all judged grades of the query, best first
    (``m_ndcg_cut.c``; no cutoff: ``m_ndcg.c``). ``rel`` is ignored. ``dcg='exp-log2'``:
    gain 2^grade − 1. min (LlamaIndex): the ideal list is cut at min(k, retrieved)."""
    dcg = r.count(r.top(m.cutoff), _gain(r.grade, m.dcg) / np.log2(r.rank + 1.0))
    q, g, ideal_rank = _ideal_ranking(r)
    k = m.cutoff if m.cutoff is not None else np.iinfo(np.int64).max
    limit = np.full(r.n_queries, k, dtype=np.int64)
    if m.convention == "min":
        limit = np.minimum(limit, r.n_ret)
    keep = (ideal_rank <= limit[q]) & (g > 0)
    ideal = np.bincount(
        q[keep],
        weights=_gain(g[keep], m.dcg) / np.log2(ideal_rank[keep] + 1.0),
        minlength=r.n_queries,
    )
    return safe_divide(dcg, ideal)
