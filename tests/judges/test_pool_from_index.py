"""A judge's pool comes from each run's index (the worker's file), not from its stored
results: the same pairs in the same order as ranking every run again, with ties at the
cutoff (trec_eval breaks them by id), chunk runs pooled at document level, and queries
asked for; and a process that has the index files reads no stored results for it."""

from __future__ import annotations

import numpy as np
import pytest

from annotator.caches import cache
from annotator.models import Chunk, Chunking, Document, Project, Query
from judges.scope import _pool
from metrics.evaluation import level_units
from metrics.models import Run
from metrics.rankings import can_evaluate, ranked_run
from metrics.tasks import write_own_index

pytestmark = pytest.mark.django_db


def _project(seed: int):
    """Documents of 1-4 chunks, 5 queries, 4 runs (chunk and document runs, scores from a
    set of three so that many rows tie), each with its index file written."""
    rng = np.random.default_rng(seed)
    project = Project.objects.create(slug=f"pool{seed}", name="Pool")
    chunking = Chunking.objects.create(project=project, name="c")
    documents, chunks = [], []
    for d in range(12):
        # Ids in an order unlike the pks, so that the tie order (by id) is not pk order.
        document = Document.objects.create(
            project=project, doc_id=f"d{(d * 7) % 12:02}", text="wing lift " * 10
        )
        documents.append(document)
        for c in range(int(rng.integers(1, 5))):
            chunks.append(
                Chunk.objects.create(
                    chunking=chunking,
                    chunk_id=f"{document.doc_id}#{(c * 3) % 5}",
                    document=document,
                    start=20 * c,
                    end=20 * c + 20,
                )
            )
    queries = [Query.objects.create(project=project, qid=f"q{i}", text="q") for i in range(5)]
    runs = []
    for r, (level, items) in enumerate(
        [("chunk", chunks), ("chunk", chunks), ("document", documents), ("chunk", chunks)]
    ):
        run = Run(
            project=project,
            name=f"r{r}",
            level=level,
            chunking=chunking if level == "chunk" else None,
        )
        rows_q, rows_i = [], []
        for query in queries:
            picked = rng.choice(len(items), int(rng.integers(0, len(items) + 1)), replace=False)
            rows_q += [query.pk] * picked.size
            rows_i += [items[i].pk for i in picked]
        run.set_results(rows_q, rows_i, rng.integers(0, 3, len(rows_q)).astype(float))
        run.save()
        assert write_own_index(run.pk)
        runs.append(run)
    return project, runs, queries


def ranked_pool(runs, depth, units, query_pks=None) -> list[tuple[int, int]]:
    """Each query (ascending), each run (in the order given) its top ``depth`` in rank
    order, a pair kept where first pooled: from the stored results, ranked again."""
    per_query: dict[int, list[int]] = {}
    for run in runs:
        ranked = ranked_run(run, units)
        for i, query in enumerate(ranked.query.tolist()):
            if query_pks is not None and query not in query_pks:
                continue
            start, stop = ranked.bounds[i], ranked.bounds[i + 1]
            per_query.setdefault(query, []).extend(
                ranked.item[start : min(stop, start + depth)].tolist()
            )
    return list(dict.fromkeys((q, u) for q in sorted(per_query) for u in per_query[q]))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", ["c", "documents"])
def test_the_pool_from_the_indexes_is_the_pool_ranked_again(seed, level):
    project, runs, queries = _project(seed)
    units = level_units(project, level)
    usable = [run for run in runs if can_evaluate(run, units.level)]
    for depth in (1, 2, 3, 100):
        for query_pks in (None, {queries[1].pk, queries[3].pk}):
            cache.clear()
            query, unit = _pool(usable, depth, units, query_pks)
            got = list(zip(query.tolist(), unit.tolist(), strict=True))
            assert got == ranked_pool(usable, depth, units, query_pks), (depth, query_pks)


def test_the_pool_reads_no_stored_results_where_the_index_files_are(monkeypatch):
    project, runs, _queries = _project(11)
    units = level_units(project, "c")
    chunk_runs = [run for run in runs if run.level == "chunk"]
    expected = ranked_pool(chunk_runs, 3, units, None)
    cache.clear()
    monkeypatch.setattr(Run, "get_results", lambda self: pytest.fail("stored results read"))
    query, unit = _pool(chunk_runs, 3, units, None)
    assert list(zip(query.tolist(), unit.tolist(), strict=True)) == expected
