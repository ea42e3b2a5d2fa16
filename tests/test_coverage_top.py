"""Coverage by source takes each run's top k from the run's index (the worker's file),
not from the stored results: the same rows as trec_eval's order, ties at the cutoff
included, without reading or ranking the run again."""

import numpy as np
import pytest

from annotator.caches import cache
from annotator.models import Document, Project, Query
from gold.units import units_for_level
from metrics import coverage
from metrics.models import Run
from metrics.tasks import write_own_index

pytestmark = pytest.mark.django_db


def test_top_k_from_the_index_file_with_ties_at_the_cutoff(monkeypatch):
    project = Project.objects.create(slug="cov", name="Cov")
    docs = [Document.objects.create(project=project, doc_id=f"d{i}", text="x") for i in range(4)]
    q1 = Query.objects.create(project=project, qid="1", text="a")
    q2 = Query.objects.create(project=project, qid="2", text="b")
    run = Run(project=project, name="r", level="document")
    # q1: d3 scores 2; d0, d1, d2 tie at 1 (trec_eval breaks ties by id, descending: d2,
    # d1, d0). q2: d0 alone.
    run.set_results(
        [q1.pk, q1.pk, q1.pk, q1.pk, q2.pk],
        [docs[0].pk, docs[1].pk, docs[2].pk, docs[3].pk, docs[0].pk],
        [1.0, 1.0, 1.0, 2.0, 0.5],
    )
    run.save()
    assert write_own_index(run.pk)
    cache.clear()
    monkeypatch.setattr(Run, "get_results", lambda self: pytest.fail("stored results read"))
    units = units_for_level(project, "documents")
    position = {doc_id: i for i, doc_id in enumerate(units.ids.tolist())}
    width = len(units.ids)

    def expected(pairs):
        return sorted(q.pk * width + position[d] for q, d in pairs)

    query, keys = coverage.top_keys(run, units, 2)
    assert sorted(keys.tolist()) == expected([(q1, "d3"), (q1, "d2"), (q2, "d0")])
    assert sorted(query.tolist()) == sorted([q1.pk, q1.pk, q2.pk])
    _query, keys = coverage.top_keys(run, units, 3)
    assert sorted(keys.tolist()) == expected([(q1, "d3"), (q1, "d2"), (q1, "d1"), (q2, "d0")])
    _query, keys = coverage.top_keys(run, units, 10)
    assert np.unique(keys).size == 5


def test_top_rows_come_back_from_their_file_and_a_damaged_one_is_derived_again(
    monkeypatch, settings, tmp_path
):
    from metrics import run_indexes

    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    project = Project.objects.create(slug="top", name="Top")
    docs = [Document.objects.create(project=project, doc_id=f"d{i}", text="x") for i in range(6)]
    queries = [Query.objects.create(project=project, qid=str(i), text="q") for i in range(3)]
    rng = np.random.default_rng(4)
    run = Run(project=project, name="r", level="document")
    pairs = [(q.pk, d.pk) for q in queries for d in docs]
    run.set_results([q for q, _ in pairs], [d for _, d in pairs], rng.integers(0, 3, len(pairs)))
    run.save()
    units = units_for_level(project, "documents")
    derived = [a.tolist() for a in run_indexes.top_rows(run, units, 4)]
    (path,) = tmp_path.glob("*.top4.npy")
    cache.clear()
    monkeypatch.setattr(run_indexes, "run_index", lambda *a: pytest.fail("index read"))
    assert [a.tolist() for a in run_indexes.top_rows(run, units, 4)] == derived
    monkeypatch.undo()
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    data = bytearray(path.read_bytes())
    data[-30] ^= 0x01
    path.write_bytes(bytes(data))
    cache.clear()
    assert [a.tolist() for a in run_indexes.top_rows(run, units, 4)] == derived
    assert run_indexes.prune() == 0 and path.exists()  # the run's file: kept
