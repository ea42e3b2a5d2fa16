"""Nugget measures at scale: one run's NuggetRecall, StRecall, alpha_nDCG and ERR_IA.

    .venv/bin/python -m bench nuggets [--sizes demo,100x]

A project of N queries with 5 nuggets each (1–3 evidence spans, in the query's relevant
documents), 100,000 chunks (10,000 documents of 10 chunks), a run of 100 chunks per query.
Timed (median of REPEATS): mapping the nuggets' spans onto the chunks (``covering_pairs``,
once per level and nugget set) and scoring the run on every measure at k = 10 and 100
(``evaluate_nuggets``: the join, recall, and ndeval's greedy ideal, one step per rank).
The dashboard does both per run and level; "demo" is the size of the demo's nuggets,
"100x" a hundred times more queries than the demo's 225.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from numerics.mapping import MappingPolicy
from numerics.nuggets import Subtopics, covering_pairs, evaluate_nuggets, ranks_within
from numerics.spans import SpanArrays

SIZES = {"demo": 225, "100x": 22_500}
N_DOCUMENTS = 10_000
CHUNKS_PER_DOCUMENT = 10
CHUNK = 500
NUGGETS_PER_QUERY = 5
RUN_DEPTH = 100
REPEATS = 3
MEASURES = [
    f"{m}@{k}" for k in (10, 100) for m in ("NuggetRecall", "StRecall", "alpha_nDCG", "ERR_IA")
]


def generate(n_queries: int, seed: int = 5):
    rng = np.random.default_rng(seed)
    unit_doc = np.repeat(np.arange(N_DOCUMENTS), CHUNKS_PER_DOCUMENT)
    unit_start = np.tile(np.arange(CHUNKS_PER_DOCUMENT) * CHUNK, N_DOCUMENTS)
    n_nuggets = n_queries * NUGGETS_PER_QUERY
    nugget_query = np.repeat(np.arange(n_queries), NUGGETS_PER_QUERY)
    spans = rng.integers(1, 4, n_nuggets)
    ev_nugget = np.repeat(np.arange(n_nuggets), spans)
    # Each query's evidence lies in its own 20 documents, as relevant documents do.
    query_docs = rng.integers(0, N_DOCUMENTS, (n_queries, 20))
    ev_doc = query_docs[nugget_query[ev_nugget], rng.integers(0, 20, ev_nugget.size)]
    ev_start = rng.integers(0, CHUNKS_PER_DOCUMENT * CHUNK - 400, ev_nugget.size)
    ev_end = ev_start + rng.integers(20, 400, ev_nugget.size)
    # The run: 30 chunks from the query's documents, 70 from anywhere, distinct scores.
    run_query = np.repeat(np.arange(n_queries), RUN_DEPTH)
    near = query_docs[run_query, rng.integers(0, 20, run_query.size)] * CHUNKS_PER_DOCUMENT
    near += rng.integers(0, CHUNKS_PER_DOCUMENT, run_query.size)
    anywhere = rng.integers(0, unit_doc.size, run_query.size)
    run_item = np.where(np.tile(np.arange(RUN_DEPTH) < 30, n_queries), near, anywhere)
    keep = np.ones(run_query.size, dtype=bool)
    _, first = np.unique(run_query * unit_doc.size + run_item, return_index=True)
    keep[:] = False
    keep[first] = True
    return (
        SpanArrays(ev_doc, ev_start, ev_end),
        ev_nugget,
        nugget_query,
        rng.random(n_nuggets) < 0.4,
        SpanArrays(unit_doc, unit_start, unit_start + CHUNK),
        run_query[keep],
        run_item[keep],
    )


def timed(call) -> tuple[float, object]:
    times, result = [], None
    for _ in range(REPEATS):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> None:
    sizes = list(SIZES)
    if argv and argv[0] == "--sizes" and len(argv) > 1:
        sizes = argv[1].split(",")
    policy = MappingPolicy("any_overlap")
    print(
        "| queries | nuggets | spans | run rows | covering pairs | map (s) | score 8 measures (s) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        n_queries = SIZES[size]
        evidence, ev_nugget, nugget_query, vital, units, run_query, run_item = generate(n_queries)
        map_s, (nugget, unit) = timed(
            lambda: covering_pairs(ev_nugget, evidence, units, policy=policy)  # noqa: B023
        )
        subtopics = Subtopics(n_queries, nugget_query, vital, nugget, unit)
        ranks = ranks_within(run_query)
        score_s, values = timed(
            lambda: evaluate_nuggets(subtopics, run_query, run_item, ranks, MEASURES)  # noqa: B023
        )
        assert all(np.isfinite(v).all() for v in values.values())
        print(
            f"| {n_queries:,} | {nugget_query.size:,} | {len(evidence):,} | {run_query.size:,} "
            f"| {nugget.size:,} | {map_s:.3f} | {score_s:.3f} |"
        )


if __name__ == "__main__":
    main()
