"""One ranking of a run: the stored order, the labelling pool and the drill-down agree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator import pool
from annotator.models import Chunk
from metrics.models import Run

pytestmark = pytest.mark.django_db


def test_pool_breaks_ties_by_id_in_byte_order_not_by_creation(personas, corpus):
    # Created d9 then d10: pk order puts d10 last, byte order puts "d9" after "d10", so
    # trec_eval (id descending) ranks d9 first. The pool must show the stored ranking.
    chunking, document, query = corpus["chunking"], corpus["document"], corpus["query"]
    d9, d10 = (
        Chunk.objects.create(chunking=chunking, chunk_id=cid, document=document, start=0, end=5)
        for cid in ("d9", "d10")
    )
    run = Run(project=personas["project"], name="tie", level="chunk", chunking=chunking)
    run.set_results([query.pk, query.pk], [d9.pk, d10.pk], [1.0, 1.0])
    run.save()
    _query, item, _score = Run.objects.get(pk=run.pk).get_results()
    assert item.tolist() == [d9.pk, d10.pk]
    assert pool.candidate_chunk_ids(query, 2) == [d9.pk, d10.pk]
    assert pool.candidate_chunk_ids(query, 1) == [d9.pk]


def test_the_pool_reads_a_run_once_without_its_scores(personas, corpus, monkeypatch):
    from metrics.rankings import cache, pool_rankings

    chunking, document, query = corpus["chunking"], corpus["document"], corpus["query"]
    chunks = [
        Chunk.objects.create(chunking=chunking, chunk_id=f"p{i}", document=document, start=0, end=5)
        for i in range(4)
    ]
    run = Run(project=personas["project"], name="pool", level="chunk", chunking=chunking)
    run.set_results(
        [query.pk] * 4 + [query.pk + 1],
        [c.pk for c in chunks] + [chunks[0].pk],
        [0.1, 0.9, 0.5, 0.7, 1.0],
    )
    run.save()
    expected = [[chunks[1].pk, chunks[3].pk, chunks[2].pk, chunks[0].pk]]
    cache.clear()
    read = []
    original = Run.get_results
    monkeypatch.setattr(
        Run, "get_results", lambda self, **kw: read.append(kw) or original(self, **kw)
    )
    assert pool_rankings(query, chunking) == expected
    assert read == [{"scores": False}]  # the first reader writes the file of stored rows
    cache.clear()  # a new process
    assert pool_rankings(query, chunking) == expected and len(read) == 1  # the file


def test_the_pool_reads_runs_through_the_source_metrics_registers():
    from metrics.rankings import pool_rankings

    # annotator imports no metrics (tests/test_layers.py); the app registers at start-up.
    assert pool.ranking_source() is pool_rankings


# Ids created in an order that differs from their byte order, so pk order ≠ id order.
DOC_IDS = ["d9", "d10", "d2", "d100", "d1"]
CHUNK_SUFFIXES = ["#9", "#10", "#2"]


@pytest.fixture
def shuffled_ids(personas):
    from annotator.models import Chunking, Document

    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="c")
    chunks = []
    for doc_id in DOC_IDS:
        document = Document.objects.create(project=project, doc_id=doc_id, text="x" * 30)
        for n, suffix in enumerate(CHUNK_SUFFIXES):
            chunks.append(
                Chunk.objects.create(
                    chunking=chunking,
                    chunk_id=doc_id + suffix,
                    document=document,
                    start=10 * n,
                    end=10 * n + 10,
                )
            )
    return {"project": project, "chunking": chunking, "chunks": chunks, "made": [0]}


def _expected(rows: list[tuple[int, str, float]]) -> list[str]:
    """Ids of one query's rows as ``rank_order`` ranks them, ids coded in byte order."""
    from numerics.measures import rank_order

    code = {i: n for n, i in enumerate(sorted({r[1] for r in rows}, key=str.encode))}
    order = rank_order(
        np.zeros(len(rows)), np.array([code[r[1]] for r in rows]), [r[2] for r in rows]
    )
    return [rows[i][1] for i in order]


rows_strategy = st.lists(
    st.tuples(
        st.integers(0, 2),  # query
        st.integers(0, len(DOC_IDS) * len(CHUNK_SUFFIXES) - 1),  # chunk
        st.sampled_from([0.0, 0.5, 1.0]),  # few scores: many ties
    ),
    min_size=1,
    max_size=40,
    unique_by=lambda row: (row[0], row[1]),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=rows_strategy, shuffle=st.randoms(use_true_random=False))
def test_pool_drilldown_and_stored_order_agree_with_rank_order(shuffled_ids, rows, shuffle):
    from annotator.models import Query
    from metrics.evaluation import evaluation_setting
    from metrics.reports import ranking

    project, chunks = shuffled_ids["project"], shuffled_ids["chunks"]
    shuffled_ids["made"][0] += 1
    made = shuffled_ids["made"][0]
    # Fresh queries per example: no other run holds them, so the pool is this run's.
    queries = [Query.objects.create(project=project, qid=f"{made}-{n}", text="t") for n in range(3)]
    shuffle.shuffle(rows)  # the input order must not matter
    run = Run(project=project, name=f"r{made}", level="chunk", chunking=shuffled_ids["chunking"])
    run.set_results(
        [queries[q].pk for q, _c, _s in rows],
        [chunks[c].pk for _q, c, _s in rows],
        [s for *_x, s in rows],
    )
    run.save()
    stored_query, stored_item, _score = Run.objects.get(pk=run.pk).get_results()
    chunk_id = {c.pk: c.chunk_id for c in chunks}
    by_id = {c.chunk_id: c for c in chunks}
    at_chunks = evaluation_setting(project, level="c")
    at_documents = evaluation_setting(project, level="documents")
    for n, query in enumerate(queries):
        mine = [(n, chunks[c].chunk_id, s) for q, c, s in rows if q == n]
        if not mine:
            continue
        expected = _expected(mine)
        stored = [chunk_id[i] for i in stored_item[stored_query == query.pk].tolist()]
        assert stored == expected
        pool_ids = pool.candidate_chunk_ids(query, len(mine))
        assert [chunk_id[pk] for pk in pool_ids] == expected
        items, _info = ranking(run, query, at_chunks, depth=len(mine))
        assert [item["id"] for item in items] == expected
        # Lifted to documents: each document's best chunk score, ranked once there.
        best: dict[str, float] = {}
        for _n, cid, score in mine:
            doc_id = by_id[cid].document.doc_id
            best[doc_id] = max(best.get(doc_id, score), score)
        items, _info = ranking(run, query, at_documents, depth=len(best))
        assert [item["id"] for item in items] == _expected([(n, d, s) for d, s in best.items()])


def test_a_fresh_process_pools_from_the_runs_file_without_inflating_the_stored_results(
    shuffled_ids, monkeypatch
):
    """The labelling screen's first view in a new process inflated every run's stored
    results (2.5 s for 20 runs of 500,000 results) to show one query's pool: it reads
    the file of stored rows the worker wrote after the import, in the same order."""
    from annotator.caches import cache
    from annotator.models import Query
    from metrics.tasks import write_own_index

    project, chunks = shuffled_ids["project"], shuffled_ids["chunks"]
    query, other = (Query.objects.create(project=project, qid=q, text="t") for q in ("a", "b"))
    run = Run(project=project, name="r", level="chunk", chunking=shuffled_ids["chunking"])
    scores = [1.0, 0.5, 1.0, 0.5, 0.0, 1.0]
    run.set_results(
        [query.pk] * 5 + [other.pk], [c.pk for c in chunks[:5]] + [chunks[9].pk], scores
    )
    run.save()
    _query, stored, _score = run.get_results()
    assert write_own_index(run.pk)
    cache.clear()  # a fresh process

    def not_read(self):
        raise AssertionError("the stored results were inflated")

    monkeypatch.setattr(Run, "get_results", not_read)
    assert pool.candidate_chunk_ids(query, 5) == stored[:5].tolist()
    assert pool.candidate_chunk_ids(other, 5) == [chunks[9].pk]


def test_a_missing_or_broken_file_of_stored_rows_is_written_again(shuffled_ids, settings, tmp_path):
    from annotator.models import Query
    from metrics.run_indexes import stored_rows

    project, chunks = shuffled_ids["project"], shuffled_ids["chunks"]
    query = Query.objects.create(project=project, qid="a", text="t")
    run = Run(project=project, name="r", level="chunk", chunking=shuffled_ids["chunking"])
    run.set_results([query.pk] * 3, [c.pk for c in chunks[:3]], [0.1, 0.3, 0.2])
    run.save()
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    queries, bounds, item = stored_rows(run)  # written by the first reader
    assert queries.tolist() == [query.pk] and bounds.tolist() == [0, 3]
    expected = item.tolist()
    assert expected == [chunks[1].pk, chunks[2].pk, chunks[0].pk]
    (path,) = settings.ASSAY_RUN_INDEX_DIR.glob(f"*-{run.pk}-*stored.npy")
    path.write_bytes(b"not an array")
    assert stored_rows(run)[2].tolist() == expected
    np.save(path, np.arange(5, dtype=np.int64))  # an array that does not fit the run
    assert stored_rows(run)[2].tolist() == expected
