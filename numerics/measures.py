"""Retrieval measures, trec_eval-exact by default, vectorised over whole runs. Numpy only.

Inputs are arrays over *all* queries at once — a run as (query, item, score) rows and the
gold set as (query, item, grade) rows, queries numbered 0..n_queries-1 and items coded so
that code order equals id string order — and every measure is computed with sorting,
``searchsorted``, ``bincount`` and cumulative sums: no Python loop per query or result.

How: the run is put in trec_eval's order (``rank_order``), joined with the gold set by a
single stable sort of the (query, item) keys (which also finds duplicate results), and
reduced to the *judged* rows only — (query, rank, grade) for every retrieved item that is
in the gold set. Every measure needs nothing else but the per-query number of retrieved
items and the gold set itself, so after the join the work is proportional to the number
of judgments, not to the size of the run.

Conventions (trec_eval 9/10, ``trec_eval -c``), the same for every measure:

- within a query, results are ordered by score descending, ties broken by item id
  descending (string order); any rank column of the file is ignored
  (trec_eval ``form_res_rels.c``, ``comp_sim_docno``);
- an item is relevant when its grade ≥ ``rel`` (default 1); a negative grade means "in the
  pool, not judged": never relevant, not counted in R nor among judged non-relevant items;
- R (the number of relevant items) counts every judged relevant item of the query,
  retrieved or not; a query without relevant items scores 0 on every measure;
- means are taken over every query of the gold set, a query missing from the run counting
  0 (the caller may average over the run's queries only: trec_eval without ``-c``).

Other published conventions are available by name only, e.g. ``P(convention='retrieved')@5``;
``docs/measures.md`` sets them side by side with worked examples.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

# family -> (cutoff: "required" | "optional" | "none", takes rel, conventions)
FAMILIES: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "Success": ("required", True, ("trec", "granular")),
    "P": ("required", True, ("trec", "retrieved")),
    "R": ("required", True, ("trec",)),
    "F1": ("required", True, ("trec",)),
    "RR": ("optional", True, ("trec", "granular")),
    "AP": ("optional", True, ("trec", "retrieved")),
    "nDCG": ("optional", False, ("trec", "min")),
    "Rprec": ("none", True, ("trec",)),
    "Bpref": ("none", True, ("trec",)),
    "Judged": ("required", False, ("trec",)),
    "NumRel": ("none", True, ("trec",)),
    "NumRet": ("none", False, ("trec",)),
    "NumRelRet": ("none", True, ("trec",)),
}
ALIASES = {"Hit": "Success", "MRR": "RR", "MAP": "AP"}
MEASURE_NAMES: tuple[str, ...] = tuple(FAMILIES) + tuple(ALIASES)
_NAME = re.compile(r"^(?P<family>[A-Za-z0-9]+)(?:\((?P<params>[^)]*)\))?(?:@(?P<k>\d+))?$")
_PARAM = re.compile(
    r"^\s*(?P<key>[a-z_]+)\s*=\s*(?:'(?P<s>[^']*)'|\"(?P<d>[^\"]*)\"|(?P<n>-?\d+))\s*$"
)


class DuplicateResult(ValueError):
    """The same item twice in one query's ranking.

    ``position`` is the 0-based input row of the first repeat (the earliest row whose
    (query, item) pair already occurred above it). trec_eval itself refuses such runs.
    """

    def __init__(self, query: int, item: int, position: int):
        self.query, self.item, self.position = query, item, position
        super().__init__(
            f"item {item} appears twice in the ranking of query {query} (row {position})"
        )


@dataclass(frozen=True)
class Measure:
    """A parsed measure name, e.g. ``P(rel=2)@5`` → family P, cutoff 5, rel 2.

    ``name`` is kept exactly as given (results are keyed by it); ``rel`` is None when the
    name does not set it (``rel_default`` applies); ``dcg`` is ``'linear'`` (gain = grade,
    trec_eval) or ``'exp-log2'`` (gain = 2^grade − 1); ``convention`` is ``'trec'`` or the
    name of another library's definition (see ``docs/measures.md``).
    """

    name: str
    family: str
    cutoff: int | None = None
    rel: int | None = None
    dcg: str = "linear"
    convention: str = "trec"


def parse_measure(name: str | Measure) -> Measure:
    """Parse a measure name in ir_measures syntax: ``Family(param=value, ...)@k``.

    Families: Success (alias Hit), P, R, F1, RR (alias MRR), AP (alias MAP), nDCG, Rprec,
    Bpref, Judged, NumRel, NumRet, NumRelRet. Parameters: ``rel=L`` on the binary measures,
    ``dcg='exp-log2'`` on nDCG, ``convention='…'`` for another library's definition.
    An unknown family raises ``ValueError`` listing the valid ones (``MEASURE_NAMES``); a
    missing/forbidden cutoff, unknown parameter or convention raises ``ValueError`` too.
    """
    if isinstance(name, Measure):
        return name
    match = _NAME.match(name.strip()) if isinstance(name, str) else None
    if not match:
        raise ValueError(
            f"cannot read measure {name!r}; write e.g. nDCG@10 or P(rel=2)@5 "
            f"(valid measures: {', '.join(MEASURE_NAMES)})"
        )
    family = ALIASES.get(match["family"], match["family"])
    if family not in FAMILIES:
        raise ValueError(
            f"unknown measure {match['family']!r}; valid measures: {', '.join(MEASURE_NAMES)}"
        )
    cutoff_rule, takes_rel, conventions = FAMILIES[family]
    params: dict[str, str] = {}
    for part in filter(None, (match["params"] or "").split(",")):
        param = _PARAM.match(part)
        if not param:
            raise ValueError(f"cannot read parameter {part.strip()!r} of {name!r}")
        value = param["n"] if param["n"] is not None else (param["s"] or param["d"] or "")
        if param["key"] in params:
            raise ValueError(f"parameter {param['key']!r} given twice in {name!r}")
        params[param["key"]] = value
    k = int(match["k"]) if match["k"] else None
    if cutoff_rule == "required" and k is None:
        raise ValueError(f"{family} needs a cutoff, e.g. {family}@10")
    if cutoff_rule == "none" and k is not None:
        raise ValueError(f"{family} takes no cutoff")
    if k is not None and k < 1:
        raise ValueError("the cutoff must be at least 1")
    rel = None
    if "rel" in params:
        if not takes_rel:
            raise ValueError(f"{family} does not take rel= (it uses graded gains or none)")
        try:
            rel = int(params.pop("rel"))
        except ValueError:
            raise ValueError(f"rel must be an integer in {name!r}") from None
    dcg = params.pop("dcg", "linear")
    if dcg not in ("linear", "exp-log2") or (dcg != "linear" and family != "nDCG"):
        raise ValueError(f"dcg={dcg!r} is not supported here; nDCG takes 'linear' or 'exp-log2'")
    convention = params.pop("convention", "trec")
    if convention not in conventions:
        raise ValueError(
            f"{family} has no convention {convention!r}; choose one of {', '.join(conventions)}"
        )
    if params:
        raise ValueError(f"unknown parameter(s) {', '.join(params)} in {name!r}")
    return Measure(name, family, k, rel, dcg, convention)


# --- ranking and join -------------------------------------------------------------------


def rank_order(run_query, run_item, run_score) -> np.ndarray:
    """Row order of trec_eval's ranking: query ascending, score descending, item descending.

    trec_eval sorts each query's results with ``comp_sim_docno`` (``form_res_rels.c``):
    score descending, then docno descending by ``strcmp`` — here item code descending,
    the codes sorting like the ids. Runs usually arrive grouped by query with scores
    descending (as retrievers and TREC files write them); that is checked in one pass and
    then only tied scores are reordered. Otherwise three stable sorts do the work
    (item, score, query). Duplicates are not checked here (``evaluate_arrays`` does).
    """
    run_query = np.asarray(run_query, dtype=np.int64)
    run_item = np.asarray(run_item, dtype=np.int64)
    run_score = np.asarray(run_score, dtype=np.float64)
    return _rank_order(run_query, run_item, run_score, None)


def _rank_order(run_query, run_item, run_score, by_key) -> np.ndarray:
    n = run_query.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    dq, ds = np.diff(run_query), np.diff(run_score)
    if not np.all((dq > 0) | ((dq == 0) & (ds <= 0))):
        # by_key: (query, item) ascending; reversed, item descending breaks score ties.
        if by_key is None:
            by_key = np.lexsort((run_item, run_query))
        order = by_key[::-1]
        order = order[np.argsort(-run_score[order], kind="stable")]
        query = run_query[order]
        top = int(query.max())
        small = np.uint8 if top < 2**8 else np.uint16 if top < 2**16 else np.uint32
        if top < 2**32:  # narrow keys: numpy's stable sort becomes a radix sort
            query = query.astype(small)
        return order[np.argsort(query, kind="stable")]
    order = np.arange(n)
    tied = (dq == 0) & (ds == 0)
    if tied.any():
        group = np.cumsum(np.r_[True, ~tied]) - 1
        in_tie = np.flatnonzero(np.r_[tied, False] | np.r_[False, tied])
        order[in_tie] = in_tie[np.lexsort((-run_item[in_tie], group[in_tie]))]
    return order


@dataclass
class _Judged:
    """The retrieved items that are in the gold set, all queries at once, plus counts.

    Rows are sorted by query, then rank; ``rank`` is the 1-based rank in the full run.
    """

    n_queries: int
    query: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    n_ret: np.ndarray  # retrieved per query
    qrel_query: np.ndarray
    qrel_grade: np.ndarray
    cache: dict = field(default_factory=dict)

    def count(self, mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum of ``weights`` (or count) over the rows in ``mask``."""
        w = None if weights is None else weights[mask]
        return np.bincount(self.query[mask], weights=w, minlength=self.n_queries).astype(float)

    def relevant(self, rel: int) -> np.ndarray:
        key = ("relevant", rel)
        if key not in self.cache:
            self.cache[key] = self.grade >= rel
        return self.cache[key]

    def num_rel(self, rel: int) -> np.ndarray:
        """R per query: judged items with grade ≥ rel, retrieved or not (``m_num_rel.c``)."""
        key = ("num_rel", rel)
        if key not in self.cache:
            self.cache[key] = np.bincount(
                self.qrel_query[self.qrel_grade >= rel], minlength=self.n_queries
            ).astype(float)
        return self.cache[key]

    def cum_relevant(self, rel: int) -> np.ndarray:
        """Relevant items at or above each row's rank, within its query."""
        key = ("cum", rel)
        if key not in self.cache:
            self.cache[key] = _cumsum_within(self.relevant(rel).astype(np.int64), self.query)
        return self.cache[key]


def _cumsum_within(values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at every query (rows grouped by query)."""
    total = np.cumsum(values)
    if total.size == 0:
        return total
    start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    offset = total[start] - values[start]
    return total - np.repeat(offset, np.diff(np.r_[start, values.size]))


def _join(
    run_query,
    run_item,
    run_score,
    qrel_query,
    qrel_item,
    qrel_grade,
    n_queries,
    ranked,
) -> _Judged:
    run_query = np.asarray(run_query, dtype=np.int64).ravel()
    run_item = np.asarray(run_item, dtype=np.int64).ravel()
    run_score = np.asarray(run_score, dtype=np.float64).ravel()
    qrel_query = np.asarray(qrel_query, dtype=np.int64).ravel()
    qrel_item = np.asarray(qrel_item, dtype=np.int64).ravel()
    qrel_grade = np.asarray(qrel_grade, dtype=np.int64).ravel()
    n = run_query.size
    if not (run_item.size == run_score.size == n):
        raise ValueError("run_query, run_item and run_score must have the same length")
    if not (qrel_item.size == qrel_grade.size == qrel_query.size):
        raise ValueError("qrel_query, qrel_item and qrel_grade must have the same length")
    for what, q in (("run", run_query), ("qrel", qrel_query)):
        if q.size and (q.min() < 0 or q.max() >= n_queries):
            raise ValueError(f"{what} query numbers must lie in 0..n_queries-1 ({n_queries})")
    for what, i in (("run", run_item), ("qrel", qrel_item)):
        if i.size and i.min() < 0:
            raise ValueError(f"{what} item codes must be non-negative")
    n_items = int(max(run_item.max(initial=-1), qrel_item.max(initial=-1))) + 1
    # One stable sort of the run's (query, item) keys finds duplicates and serves the
    # join: each judgment is looked up in the sorted run keys (few lookups, not n).
    key = run_query * n_items + run_item
    by_key = np.argsort(key, kind="stable")
    sorted_key = key[by_key]
    repeat = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    if repeat.size:
        row = int(by_key[repeat + 1].min())
        raise DuplicateResult(int(run_query[row]), int(run_item[row]), row)
    qrel_key = qrel_query * n_items + qrel_item
    at = np.searchsorted(sorted_key, qrel_key)
    if n:
        found = (at < n) & (sorted_key[np.minimum(at, n - 1)] == qrel_key)
    else:
        found = np.zeros(qrel_key.size, dtype=bool)
    row = by_key[at[found]]
    if ranked:
        position = row
    else:
        order = _rank_order(run_query, run_item, run_score, by_key)
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = np.arange(n)
        position = inverse[row]
    n_ret = np.bincount(run_query, minlength=n_queries)
    first = np.cumsum(n_ret) - n_ret  # ranked rows are grouped by query, ascending
    by_rank = np.argsort(position, kind="stable")
    query = qrel_query[found][by_rank]
    return _Judged(
        n_queries=n_queries,
        query=query,
        rank=position[by_rank] - first[query] + 1,
        grade=qrel_grade[found][by_rank],
        n_ret=n_ret,
        qrel_query=qrel_query,
        qrel_grade=qrel_grade,
    )


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.zeros(np.shape(numerator), dtype=float)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


# --- measures ---------------------------------------------------------------------------


def _top(r: _Judged, m: Measure) -> np.ndarray:
    return r.rank <= m.cutoff if m.cutoff is not None else np.ones(r.rank.size, dtype=bool)


def _success(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """Success@k = 1 if a relevant item is in the top k (``m_success.c``).
    granular (LlamaIndex hit rate): relevant in top k / R."""
    hits = r.count(_top(r, m) & r.relevant(rel))
    if m.convention == "granular":
        return _safe_divide(hits, r.num_rel(rel))
    return (hits > 0).astype(float)


def _precision(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """P@k = |relevant in top k| / k, always k (``m_P.c``).
    retrieved: divide by min(k, retrieved)."""
    hits = r.count(_top(r, m) & r.relevant(rel))
    if m.convention == "retrieved":
        return _safe_divide(hits, np.minimum(r.n_ret, m.cutoff).astype(float))
    return hits / m.cutoff


def _recall(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """R@k = |relevant in top k| / R (``m_recall.c``)."""
    return _safe_divide(r.count(_top(r, m) & r.relevant(rel)), r.num_rel(rel))


def _f1(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """F1@k = 2·P@k·R@k / (P@k + R@k), 0 when both are 0 (harmonic mean; ``m_P.c`` and
    ``m_recall.c`` for the parts)."""
    p, rec = _precision(r, m, rel), _recall(r, m, rel)
    return _safe_divide(2 * p * rec, p + rec)


def _reciprocal_rank(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """RR = 1 / rank of the first relevant item, no cutoff (``m_recip_rank.c``); RR@k is 0
    when that rank is below k (ir_measures). granular (LlamaIndex): mean of 1/rank over the
    relevant items in the top k."""
    relevant = _top(r, m) & r.relevant(rel)
    if m.convention == "granular":
        return _safe_divide(r.count(relevant, 1.0 / r.rank), r.count(relevant))
    rows = np.flatnonzero(relevant)
    q = r.query[rows]
    first = rows[np.r_[True, q[1:] != q[:-1]]] if rows.size else rows
    out = np.zeros(r.n_queries)
    out[r.query[first]] = 1.0 / r.rank[first]
    return out


def _average_precision(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """AP = Σ_{relevant retrieved at rank i} (relevant in top i / i) / R (``m_map.c``);
    AP@k sums ranks ≤ k only and still divides by R (``m_map_cut.c``).
    retrieved: divide by the number of relevant items retrieved (in the top k)."""
    relevant = _top(r, m) & r.relevant(rel)
    total = r.count(relevant, r.cum_relevant(rel) / r.rank)
    if m.convention == "retrieved":
        return _safe_divide(total, r.count(relevant))
    return _safe_divide(total, r.num_rel(rel))


def _ndcg(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """nDCG@k = DCG@k / ideal DCG@k; DCG = Σ_{i ≤ k} gain(grade_i) / log2(i + 1), gain =
    grade (≤ 0 → 0); the ideal ranking orders all judged grades of the query, best first
    (``m_ndcg_cut.c``; no cutoff: ``m_ndcg.c``). ``rel`` is ignored. ``dcg='exp-log2'``:
    gain 2^grade − 1. min (LlamaIndex): the ideal list is cut at min(k, retrieved)."""

    def gain(grades: np.ndarray) -> np.ndarray:
        g = np.maximum(grades, 0).astype(float)
        return np.exp2(g) - 1 if m.dcg == "exp-log2" else g

    top = _top(r, m)
    dcg = r.count(top, gain(r.grade) / np.log2(r.rank + 1.0))
    if "ideal" not in r.cache:  # each query's judged grades, best first
        order = np.lexsort((-r.qrel_grade, r.qrel_query))
        q, g = r.qrel_query[order], r.qrel_grade[order]
        first = np.searchsorted(q, np.arange(r.n_queries))
        r.cache["ideal"] = (q, g, np.arange(q.size) - first[q] + 1)
    q, g, ideal_rank = r.cache["ideal"]
    k = m.cutoff if m.cutoff is not None else np.iinfo(np.int64).max
    limit = np.full(r.n_queries, k, dtype=np.int64)
    if m.convention == "min":
        limit = np.minimum(limit, r.n_ret)
    keep = (ideal_rank <= limit[q]) & (g > 0)
    ideal = np.bincount(
        q[keep], weights=gain(g[keep]) / np.log2(ideal_rank[keep] + 1.0), minlength=r.n_queries
    )
    return _safe_divide(dcg, ideal)


def _rprec(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """R-precision = |relevant in top R| / R (``m_Rprec.c``)."""
    num_rel = r.num_rel(rel)
    return _safe_divide(r.count((r.rank <= num_rel[r.query]) & r.relevant(rel)), num_rel)


def _bpref(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """bpref = (1/R) Σ_{relevant retrieved} (1 − min(n, R) / min(R, N)) (``m_bpref.c``);
    n = judged non-relevant items ranked above it, N = judged non-relevant items of the
    query (0 ≤ grade < rel); a term is 1 when n = 0."""
    judged_nonrel = (r.grade >= 0) & (r.grade < rel)
    above = _cumsum_within(judged_nonrel.astype(np.int64), r.query) - judged_nonrel
    num_rel = r.num_rel(rel)
    num_nonrel = np.bincount(
        r.qrel_query[(r.qrel_grade >= 0) & (r.qrel_grade < rel)], minlength=r.n_queries
    ).astype(float)
    big_r, big_n = num_rel[r.query], num_nonrel[r.query]
    penalty = _safe_divide(np.minimum(above, big_r), np.minimum(big_r, big_n))
    term = np.where(above > 0, 1.0 - penalty, 1.0)
    return _safe_divide(r.count(r.relevant(rel), term), num_rel)


def _judged(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """Judged@k = |top-k items present in the gold set| / min(k, retrieved), 0 when nothing
    is retrieved (ir_measures ``Judged``; not a trec_eval measure)."""
    return _safe_divide(r.count(_top(r, m)), np.minimum(r.n_ret, m.cutoff).astype(float))


def _num_rel(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """NumRel = R (``m_num_rel.c``)."""
    return r.num_rel(rel).copy()


def _num_ret(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """NumRet = results retrieved (``m_num_ret.c``)."""
    return r.n_ret.astype(float)


def _num_rel_ret(r: _Judged, m: Measure, rel: int) -> np.ndarray:
    """NumRelRet = relevant results retrieved (``m_num_rel_ret.c``)."""
    return r.count(r.relevant(rel))


_COMPUTE = {
    "Success": _success,
    "P": _precision,
    "R": _recall,
    "F1": _f1,
    "RR": _reciprocal_rank,
    "AP": _average_precision,
    "nDCG": _ndcg,
    "Rprec": _rprec,
    "Bpref": _bpref,
    "Judged": _judged,
    "NumRel": _num_rel,
    "NumRet": _num_ret,
    "NumRelRet": _num_rel_ret,
}


def evaluate_arrays(
    run_query,
    run_item,
    run_score,
    qrel_query,
    qrel_item,
    qrel_grade,
    n_queries: int,
    measures: Iterable[str | Measure],
    *,
    rel_default: int = 1,
    ranked: bool = False,
) -> dict[str, np.ndarray]:
    """Per-query values (float64, length ``n_queries``) of each measure, keyed by its name.

    Queries are 0..n_queries-1 (the gold set's); item codes are non-negative ints whose
    numeric order equals the ids' string order (score ties are broken by code, descending,
    as trec_eval's ``strcmp``). A query without run rows scores 0 on everything except
    NumRel. A (query, item) pair twice in the run raises ``DuplicateResult``.
    ``ranked=True`` promises the rows are already in ``rank_order`` (skips that sort).
    To evaluate one run against changing judgments, see ``index_run``.

    With rank i within the query, rel_i = [grade_i ≥ rel], R = #{judged: grade ≥ rel}:

    ============  ================================================  ======================
    Success@k     1 if Σ_{i≤k} rel_i > 0                            m_success.c
    P@k           Σ_{i≤k} rel_i / k                                 m_P.c
    R@k           Σ_{i≤k} rel_i / R                                 m_recall.c
    F1@k          2·P@k·R@k / (P@k + R@k)                           —
    RR, RR@k      1 / min{i: rel_i} (0 if none, or if > k)          m_recip_rank.c
    AP, AP@k      Σ_{i(≤k): rel_i} (Σ_{j≤i} rel_j / i) / R          m_map.c, m_map_cut.c
    nDCG(@k)      Σ_{i≤k} g_i/log2(i+1) / ideal, g = max(grade, 0)  m_ndcg.c, m_ndcg_cut.c
    Rprec         Σ_{i≤R} rel_i / R                                 m_Rprec.c
    Bpref         Σ_{rel_i} (1 − min(n_i, R)/min(R, N)) / R         m_bpref.c
    Judged@k      #{i ≤ k: in gold set} / min(k, retrieved)         (ir_measures)
    NumRel …      R, retrieved, Σ rel_i                             m_num_rel.c, …
    ============  ================================================  ======================
    """
    parsed = [parse_measure(m) for m in measures]
    judged = _join(
        run_query,
        run_item,
        run_score,
        qrel_query,
        qrel_item,
        qrel_grade,
        n_queries,
        ranked,
    )
    return _values(judged, parsed, rel_default)


def _values(judged: _Judged, parsed: list[Measure], rel_default: int) -> dict[str, np.ndarray]:
    return {
        m.name: _COMPUTE[m.family](judged, m, rel_default if m.rel is None else m.rel)
        for m in parsed
    }


@dataclass(frozen=True)
class RunIndex:
    """A run ranked and indexed once, for evaluation against many judgment sets.

    Query keys are any integers (database ids, say); rows are in ``rank_order``. The
    (query, item) keys are kept sorted, so a join looks up the judgments (few) in the
    run (long) and the run is never sorted again.
    """

    query: np.ndarray  # each query key of the run once, ascending
    start: np.ndarray  # its first row
    count: np.ndarray  # its number of rows
    sorted_key: np.ndarray  # query position · n_items + item, ascending
    row_of_key: np.ndarray  # the row (in rank order) holding each sorted key
    n_items: int

    @property
    def nbytes(self) -> int:
        arrays = (self.query, self.start, self.count, self.sorted_key, self.row_of_key)
        return sum(a.nbytes for a in arrays)


def index_run(run_query, run_item, run_score, n_items: int | None = None) -> RunIndex:
    """Rank and index a run (``run_query`` holds query keys, any integers). A (query,
    item) pair twice raises ``DuplicateResult``; items must lie in 0..n_items-1."""
    run_query = np.asarray(run_query, dtype=np.int64).ravel()
    run_item = np.asarray(run_item, dtype=np.int64).ravel()
    run_score = np.asarray(run_score, dtype=np.float64).ravel()
    n_items = int(run_item.max(initial=-1)) + 1 if n_items is None else n_items
    if run_item.size and (run_item.min() < 0 or run_item.max() >= n_items):
        raise ValueError(f"run item codes must lie in 0..n_items-1 ({n_items})")
    order = rank_order(run_query, run_item, run_score)
    run_query, run_item = run_query[order], run_item[order]
    query, start, count = np.unique(run_query, return_index=True, return_counts=True)
    key = np.repeat(np.arange(query.size), count) * n_items + run_item
    row_of_key = np.argsort(key, kind="stable")
    sorted_key = key[row_of_key]
    repeat = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    if repeat.size:  # report the earliest input row that repeats a pair above it
        members = np.isin(sorted_key, sorted_key[repeat])
        keys, input_rows = sorted_key[members], order[row_of_key[members]]
        by_input = np.lexsort((input_rows, keys))
        keys, input_rows = keys[by_input], input_rows[by_input]
        row = int(input_rows[1:][keys[1:] == keys[:-1]].min())
        ranked_row = int(np.flatnonzero(order == row)[0])
        raise DuplicateResult(int(run_query[ranked_row]), int(run_item[ranked_row]), row)
    return RunIndex(query, start, count, sorted_key, row_of_key, n_items)


def evaluate_index(
    index: RunIndex,
    qrel_query,
    qrel_item,
    qrel_grade,
    query_keys,
    measures: Iterable[str | Measure],
    *,
    rel_default: int = 1,
) -> dict[str, np.ndarray]:
    """``evaluate_arrays`` for an indexed run: per-query values over ``query_keys`` (the
    gold set's query keys, sorted, unique; judgments' queries must be among them). Run
    queries outside ``query_keys`` are ignored; equal to ``evaluate_arrays`` bit for bit."""
    parsed = [parse_measure(m) for m in measures]
    query_keys = np.asarray(query_keys, dtype=np.int64)
    qrel_query = np.asarray(qrel_query, dtype=np.int64).ravel()
    qrel_item = np.asarray(qrel_item, dtype=np.int64).ravel()
    qrel_grade = np.asarray(qrel_grade, dtype=np.int64).ravel()
    n_queries = query_keys.size
    qrel_position = np.searchsorted(query_keys, qrel_query)
    if qrel_query.size and not np.array_equal(
        query_keys[np.minimum(qrel_position, max(n_queries - 1, 0))], qrel_query
    ):
        raise ValueError("every judgment's query must be among query_keys")
    n_ret = np.zeros(n_queries, dtype=np.int64)
    if index.query.size and n_queries:
        where = np.minimum(np.searchsorted(query_keys, index.query), n_queries - 1)
        known = query_keys[where] == index.query
        n_ret[where[known]] = index.count[known]
    rows = np.zeros(0, dtype=np.int64)
    in_run_query = np.zeros(0, dtype=np.int64)
    matched = np.zeros(0, dtype=bool)
    if index.query.size and qrel_query.size:
        run_query = np.minimum(np.searchsorted(index.query, qrel_query), index.query.size - 1)
        usable = (index.query[run_query] == qrel_query) & (qrel_item < index.n_items)
        key = run_query * index.n_items + qrel_item
        at = np.minimum(np.searchsorted(index.sorted_key, key), index.sorted_key.size - 1)
        matched = usable & (index.sorted_key[at] == key)
        rows = index.row_of_key[at[matched]]
        in_run_query = run_query[matched]
    by_rank = np.argsort(rows, kind="stable")
    judged = _Judged(
        n_queries=n_queries,
        query=qrel_position[matched][by_rank],
        rank=(rows - index.start[in_run_query] + 1)[by_rank],
        grade=qrel_grade[matched][by_rank],
        n_ret=n_ret,
        qrel_query=qrel_position,
        qrel_grade=qrel_grade,
    )
    return _values(judged, parsed, rel_default)


def evaluate(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    measures: Iterable[str | Measure],
    *,
    rel_default: int = 1,
    run_queries_only: bool = False,
) -> dict:
    """Dict-in, dict-out (pytrec_eval's shapes): ``{"mean": {m: v}, "per_query": {q: {m: v}}}``.

    Ids are coded with ``np.unique`` (code-point order, which is the byte order of UTF-8,
    i.e. trec_eval's ``strcmp``). Means are over every qrels query (one missing from the
    run scores 0, ``trec_eval -c``) or, with ``run_queries_only``, over the queries in
    both (trec_eval's default); ``per_query`` holds the same queries. Run queries absent
    from the qrels are ignored. Measures as in ``evaluate_arrays``.
    """
    names = [parse_measure(m).name for m in measures]
    qids = np.unique(np.array(list(qrels), dtype=str))
    qid_list = qids.tolist()
    in_run = [q for q in qid_list if run.get(q)]
    qrel_sizes = [len(qrels[q]) for q in qid_list]
    run_sizes = [len(run[q]) for q in in_run]
    qrel_items = list(chain.from_iterable(qrels[q] for q in qid_list))
    run_items = list(chain.from_iterable(run[q] for q in in_run))
    _, codes = np.unique(np.array(qrel_items + run_items, dtype=str), return_inverse=True)
    codes = codes.ravel()
    query_number = np.arange(len(qid_list))
    run_query = np.repeat(np.searchsorted(qids, in_run), run_sizes) if in_run else []
    values = evaluate_arrays(
        run_query,
        codes[len(qrel_items) :],
        np.fromiter(chain.from_iterable(run[q].values() for q in in_run), float),
        np.repeat(query_number, qrel_sizes),
        codes[: len(qrel_items)],
        np.fromiter(chain.from_iterable(qrels[q].values() for q in qid_list), np.int64),
        len(qid_list),
        names,
        rel_default=rel_default,
    )
    mask = np.isin(qids, in_run) if run_queries_only else np.ones(len(qid_list), dtype=bool)
    kept = np.flatnonzero(mask)
    return {
        "mean": {m: float(values[m][mask].mean()) if kept.size else 0.0 for m in names},
        "per_query": {qid_list[i]: {m: float(values[m][i]) for m in names} for i in kept.tolist()},
    }
