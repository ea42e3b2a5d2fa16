"""Nugget measures of a run file against a nugget file (``evaluate --nuggets``), without
the database: the numbers the dashboard shows for the same run and nuggets exported."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from formats import read_run
from formats.ids import as_bytes, factorize
from formats.nuggets import nugget_arrays, read_nugget_file
from numerics.measures import rank_order
from numerics.nuggets import Subtopics, evaluate_nuggets, ranks_within


def evaluate_nugget_files(
    run_path: str | Path, nuggets_path: str | Path, measures: list[str]
) -> tuple[list[str], dict[str, np.ndarray], int]:
    """(qids, per-query values by measure, how many of the run's queries have no nuggets)
    over the queries of the nugget file, in byte order; a query the run does not answer
    scores 0, NaN where a measure leaves a query out (``NuggetRecall(vital)`` on a query
    without vital nuggets); the run's queries without nuggets are left out and counted.
    The run is ranked in trec_eval's order, as every measure takes it."""
    found = read_nugget_file(nuggets_path)
    ranked = read_run(run_path)
    qids = sorted({q for q, _n, _v in found.nuggets}, key=lambda q: q.encode())
    nugget_query, vital = nugget_arrays(found, qids)
    # One code space for the run's items and the covering units, in byte order.
    n_items = ranked.items.size
    units = as_bytes([u for _n, u in found.pairs])
    _ids, codes = factorize(np.concatenate([ranked.items.astype(np.bytes_), units]))
    run_code, pair_code = codes[:n_items][ranked.item], codes[n_items:]
    position = {q: i for i, q in enumerate(qids)}
    run_qids = [q.decode() for q in ranked.qids.tolist()]
    without = len(set(run_qids) - set(qids))
    query_of = np.array([position.get(q, -1) for q in run_qids], dtype=np.int64)
    run_query = query_of[ranked.query] if ranked.query.size else ranked.query
    keep = run_query >= 0
    query, item, score = run_query[keep], run_code[keep], ranked.score[keep]
    order = rank_order(query, item, score)
    query, item = query[order], item[order]
    subtopics = Subtopics(
        n_queries=len(qids),
        nugget_query=nugget_query,
        vital=vital,
        pair_nugget=np.array([n for n, _u in found.pairs], dtype=np.int64),
        pair_item=pair_code,
    )
    values = evaluate_nuggets(subtopics, query, item, ranks_within(query), measures)
    return qids, values, without
