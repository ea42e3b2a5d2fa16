"""Evaluate a run: from coded arrays, from an indexed run, or from pytrec_eval-shaped dicts."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

import numpy as np

from .names import Measure
from .ranking import JudgedRows, RunIndex, indexed_judged_rows, judged_rows
from .trec_eval import Column, measure_column, values


def _values(rows: JudgedRows, parsed: list[Column], rel_default: int) -> dict[str, np.ndarray]:
    return values(rows, parsed, rel_default)


def evaluate_arrays(
    *,
    run_query,
    run_item,
    run_score,
    qrel_query,
    qrel_item,
    qrel_grade,
    n_queries: int,
    measures: Iterable[str | Measure],
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
    parsed = [measure_column(m) for m in measures]
    rows = judged_rows(
        run_query=run_query,
        run_item=run_item,
        run_score=run_score,
        qrel_query=qrel_query,
        qrel_item=qrel_item,
        qrel_grade=qrel_grade,
        n_queries=n_queries,
        ranked=ranked,
    )
    return _values(rows, parsed, rel_default)


def evaluate_index(
    index: RunIndex,
    *,
    qrel_query,
    qrel_item,
    qrel_grade,
    query_keys,
    measures: Iterable[str | Measure],
    rel_default: int = 1,
) -> dict[str, np.ndarray]:
    """``evaluate_arrays`` for an indexed run: per-query values over ``query_keys`` (the
    gold set's query keys, sorted, unique; judgments' queries must be among them). Run
    queries outside ``query_keys`` are ignored; equal to ``evaluate_arrays`` bit for bit."""
    parsed = [measure_column(m) for m in measures]
    rows = indexed_judged_rows(
        index,
        qrel_query=qrel_query,
        qrel_item=qrel_item,
        qrel_grade=qrel_grade,
        query_keys=query_keys,
    )
    return _values(rows, parsed, rel_default)


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
    names = [measure_column(m).name for m in measures]
    qids = np.unique(np.array(list(qrels), dtype=str))
    qid_list = qids.tolist()
    in_run = [q for q in qid_list if run.get(q)]
    qrel_sizes = [len(qrels[q]) for q in qid_list]
    run_sizes = [len(run[q]) for q in in_run]
    qrel_items = list(chain.from_iterable(qrels[q] for q in qid_list))
    run_items = list(chain.from_iterable(run[q] for q in in_run))
    _, codes = np.unique(np.array(qrel_items + run_items, dtype=str), return_inverse=True)
    codes = codes.ravel()
    values = evaluate_arrays(
        run_query=np.repeat(np.searchsorted(qids, in_run), run_sizes) if in_run else [],
        run_item=codes[len(qrel_items) :],
        run_score=np.fromiter(chain.from_iterable(run[q].values() for q in in_run), float),
        qrel_query=np.repeat(np.arange(len(qid_list)), qrel_sizes),
        qrel_item=codes[: len(qrel_items)],
        qrel_grade=np.fromiter(chain.from_iterable(qrels[q].values() for q in qid_list), np.int64),
        n_queries=len(qid_list),
        measures=names,
        rel_default=rel_default,
    )
    mask = np.isin(qids, in_run) if run_queries_only else np.ones(len(qid_list), dtype=bool)
    kept = np.flatnonzero(mask)
    return {
        "mean": {m: float(values[m][mask].mean()) if kept.size else 0.0 for m in names},
        "per_query": {qid_list[i]: {m: float(values[m][i]) for m in names} for i in kept.tolist()},
    }
