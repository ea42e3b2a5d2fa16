"""The measures benchmark's from-memory paths alone, quickly: ``python -m bench measures_memory``.

The same generated collection as ``bench_measures`` (10,000 queries × 1,000 results, 50
judged per query); Assay's three in-memory paths — the whole collection, the run stored
ranked, the run indexed once — each the median of 5 after one unmeasured call, without
the peers (for comparing two versions of Assay back to back).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from bench.bench_measures import COLUMNS, MEASURES, N_QUERIES, generate


def _median_seconds(call, repeats: int = 5) -> float:
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    from numerics.measures import evaluate_arrays, evaluate_index, index_run, rank_order

    columns = dict(zip(COLUMNS, generate(), strict=True))
    order = rank_order(*(columns[name] for name in COLUMNS[:3]))
    ranked = columns | {name: columns[name][order] for name in COLUMNS[:3]}
    index = index_run(*(columns[name] for name in COLUMNS[:3]))
    judged = {name: columns[name] for name in COLUMNS[3:]}
    query_keys = np.arange(N_QUERIES)
    paths = {
        "whole collection": lambda: evaluate_arrays(
            **columns, n_queries=N_QUERIES, measures=MEASURES
        ),
        "run stored ranked": lambda: evaluate_arrays(
            **ranked, n_queries=N_QUERIES, measures=MEASURES, ranked=True
        ),
        "run indexed once (dashboards)": lambda: evaluate_index(
            index, **judged, query_keys=query_keys, measures=MEASURES
        ),
    }
    print("| path | seconds |\n|---|---:|")
    for name, call in paths.items():
        print(f"| {name} | {_median_seconds(call):.3f} |")
