"""The candidate pool of a query: what an annotator is asked to judge, and in which order.

The pool is the union of the top ``depth`` results of every retrieval run for the query,
deduplicated. Which runs exist is asked of a *ranking source*: a function

    source(query: Query, chunking: Chunking | None) -> list[Sequence[int]]

returning, for that query, the ranked chunk primary keys of each run (best first; one
sequence per run; ``chunking`` set means "only runs over this chunking"). The default
source reads the ``metrics`` app's chunk-level runs when that app provides a ``Run``
model. Another source can be plugged in with the ``ASSAY_POOL_SOURCE`` setting (a dotted
path) or ``set_ranking_source()``.

When no run has results for the query, the pool comes from the project's own full-text
search over the chunks of a chunking (the annotator's choice, else the project's first),
using the query's text (``annotator.search``).

Annotators see the pool in an order that hides which run found a chunk and at what rank:
a shuffle that is stable per annotator, by a hash of (annotator id, query id, chunk id).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

from .models import Chunking, Query
from .search import search

RankingSource = Callable[[Query, "Chunking | None"], list[Sequence[int]]]

_CACHE_RUNS = 32
_run_cache: OrderedDict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = OrderedDict()
_run_cache_lock = threading.Lock()
_source_override: RankingSource | None = None


def _ordered_run(run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct query pks, start offsets, items) with each query's items best first.

    Order within a query: score descending, then item id descending (as the metrics
    engine orders a run). Cached per run version, so a run's blob is read once.
    """
    key = (run.pk, run.n_results, run.n_queries, run.created_at)
    with _run_cache_lock:
        if key in _run_cache:
            _run_cache.move_to_end(key)
            return _run_cache[key]
    full = type(run).objects.only("results", "n_results").get(pk=run.pk)
    query_pk, item_pk, score = full.get_results()
    order = np.lexsort((-item_pk, -score, query_pk))
    queries, items = query_pk[order], item_pk[order]
    distinct, starts = np.unique(queries, return_index=True)
    value = (distinct, np.append(starts, len(queries)), items)
    with _run_cache_lock:
        _run_cache[key] = value
        while len(_run_cache) > _CACHE_RUNS:
            _run_cache.popitem(last=False)
    return value


def run_rankings(query: Query, chunking: Chunking | None = None) -> list[Sequence[int]]:
    """Ranked chunk pks of the query in every chunk-level run of its project."""
    try:
        from metrics.models import Run
    except ImportError:  # the metrics app is optional for labelling
        return []
    runs = Run.objects.filter(project_id=query.project_id, level="chunk").only(
        "pk", "n_results", "n_queries", "created_at"
    )
    if chunking is not None:
        runs = runs.filter(chunking=chunking)
    rankings: list[Sequence[int]] = []
    for run in runs.order_by("pk"):
        distinct, starts, items = _ordered_run(run)
        i = int(np.searchsorted(distinct, query.pk))
        if i < len(distinct) and distinct[i] == query.pk:
            rankings.append(items[starts[i] : starts[i + 1]].tolist())
    return rankings


def set_ranking_source(source: RankingSource | None) -> None:
    """Use ``source`` for every pool from now on (None restores the configured one)."""
    global _source_override
    _source_override = source


def ranking_source() -> RankingSource:
    if _source_override is not None:
        return _source_override
    path = getattr(settings, "ASSAY_POOL_SOURCE", None)
    return import_string(path) if path else run_rankings


def candidate_chunk_ids(query: Query, depth: int, *, chunking: Chunking | None = None) -> list[int]:
    """The pool: top ``depth`` of every run, deduplicated (first appearance order).

    Falls back to full-text search over ``chunking`` (default: the project's first) with
    the query's text when no run has results for this query.
    """
    pooled: dict[int, None] = {}
    for ranking in ranking_source()(query, chunking):
        for chunk_pk in list(ranking)[:depth]:
            pooled.setdefault(int(chunk_pk), None)
    if pooled:
        return list(pooled)
    return search(query.project, query.text, chunking=chunking, any_term=True, limit=depth)


def shuffle_key(annotator_id: int, query_id: int, chunk_id: int) -> bytes:
    return hashlib.blake2b(f"{annotator_id}:{query_id}:{chunk_id}".encode(), digest_size=8).digest()


def stable_shuffle(chunk_ids: Sequence[int], *, annotator_id: int, query_id: int) -> list[int]:
    """The same order every time for this annotator and query; different across annotators."""
    return sorted(chunk_ids, key=lambda pk: shuffle_key(annotator_id, query_id, pk))
