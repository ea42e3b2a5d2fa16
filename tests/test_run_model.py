import numpy as np
import pytest
from django.db import IntegrityError

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
