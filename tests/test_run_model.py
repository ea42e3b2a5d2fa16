import numpy as np
import pytest
from django.db import IntegrityError
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.models import Run, RunLevel

pytestmark = pytest.mark.django_db


def test_results_roundtrip_exactly(corpus, personas):
    run = Run(
        project=personas["project"], name="bm25", level=RunLevel.CHUNK, chunking=corpus["chunking"]
    )
    scores = np.array([1.0, 0.1 + 0.2, -3.5e-12])
    run.set_results(np.array([5, 5, 7]), np.array([10, 11, 10]), scores)
    run.save()
    query, item, score = Run.objects.get(pk=run.pk).get_results()
    assert query.tolist() == [5, 5, 7] and item.tolist() == [10, 11, 10]
    assert score.tolist() == scores.tolist()  # float64 kept bit for bit
    assert (run.n_results, run.n_queries) == (3, 2)


def test_chunk_runs_need_a_chunking_and_document_runs_none(corpus, personas):
    with pytest.raises(IntegrityError):
        Run.objects.create(project=personas["project"], name="x", level=RunLevel.CHUNK)


def test_empty_run_has_empty_arrays(personas):
    run = Run.objects.create(project=personas["project"], name="d", level=RunLevel.DOCUMENT)
    assert [len(a) for a in run.get_results()] == [0, 0, 0]


def test_results_are_stored_in_rank_order_with_trec_eval_tie_break(personas, corpus):
    from annotator.models import Chunk
    from numerics.id_order import byte_order_codes
    from numerics.measures import rank_order

    chunking, document = corpus["chunking"], corpus["document"]
    # Ids whose string order differs from pk order: "d1#10" < "d1#2" < "d1#9".
    extra = [
        Chunk.objects.create(chunking=chunking, chunk_id=cid, document=document, start=0, end=5)
        for cid in ("d1#9", "d1#10", "d1#2")
    ]
    run = Run(project=personas["project"], name="ties", level="chunk", chunking=chunking)
    query = corpus["query"].pk
    run.set_results([query] * 3, [c.pk for c in extra], [1.0, 1.0, 1.0])
    run.save()
    _q, item, _s = Run.objects.get(pk=run.pk).get_results()
    ids = dict(Chunk.objects.values_list("pk", "chunk_id"))
    assert [ids[i] for i in item] == ["d1#9", "d1#2", "d1#10"]  # id descending
    # The stored order is the engine's ranking with ids compared in byte order.
    order = rank_order(np.zeros(3), byte_order_codes([c.chunk_id for c in extra]), np.ones(3))
    assert item.tolist() == [extra[i].pk for i in order]


@settings(max_examples=200, deadline=None)
@given(
    st.sets(st.integers(-5, 3000), max_size=60),
    st.lists(st.integers(-10, 3100), max_size=80),
)
def test_lookup_finds_ids_by_table_or_binary_search_alike(keys, values):
    from metrics.evaluation import lookup

    sorted_keys = np.array(sorted(keys), dtype=np.int64)
    position, known = lookup(sorted_keys, np.array(values, dtype=np.int64))
    expected = [v in keys for v in values]
    assert known.tolist() == expected
    assert all(sorted_keys[p] == v for p, v, k in zip(position, values, known, strict=True) if k)
