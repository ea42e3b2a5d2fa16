"""The candidate pool of a query: what an annotator is asked to judge, and in which order.

The pool is the union of the top ``depth`` results of every retrieval run for the query,
deduplicated. Which runs exist is asked of a *ranking source*: a function

    source(query: Query, chunking: Chunking | None) -> list[Sequence[int]]

returning, for that query, the ranked chunk primary keys of each run (best first; one
sequence per run; ``chunking`` set means "only runs over this chunking"). The pool takes
each ranking as given and never ranks itself. The app that stores runs registers its
source at start-up (``register_ranking_source``; the ``metrics`` app does, so this app
never imports it; see ``annotator.extensions``). Tests and benchmarks that need fixed
rankings replace ``ranking_source`` itself (pytest's ``monkeypatch``).

When no run has results for the query, the pool comes from the project's own full-text
search over the chunks of a chunking (the annotator's choice, else the project's first),
using the query's text (``annotator.search``).

Annotators see the pool in an order that hides which run found a chunk and at what rank:
a shuffle that is stable per annotator, by a hash of (annotator id, query id, chunk id).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from .models import Chunking, Query
from .search import search

RankingSource = Callable[[Query, "Chunking | None"], list[Sequence[int]]]

_registered_source: RankingSource | None = None


def register_ranking_source(source: RankingSource) -> None:
    """Make ``source`` the pool's ranking source; the app that stores runs calls this once
    at start-up (``metrics`` registers its runs, each in stored trec_eval order)."""
    global _registered_source
    _registered_source = source


def _no_runs(query: Query, chunking: Chunking | None) -> list[Sequence[int]]:
    return []


def ranking_source() -> RankingSource:
    """The registered ranking source (no runs before one is registered)."""
    return _registered_source or _no_runs


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
