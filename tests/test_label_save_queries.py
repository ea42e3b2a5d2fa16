"""What saving a grade on a candidate card costs in SQL: the save path reads each thing once.

The card the save answers with reads its pool's spans once (folding the pool and marking
the parts an earlier card shows), its label's chunk is not read again for the history row,
a pool with nothing folded asks nothing about folded chunks, and a project without quality
dimensions is told so by the membership read instead of a query per answer.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.models import Chunk, Chunking, Document, Judgment, Query
from quality.dimensions import add_dimension

from .test_labelling_pool_search import make_run

pytestmark = pytest.mark.django_db

# SQLite: session, user, membership (with the card parts it draws), query, chunk; in the
# transaction the revision, the label, its update, its history and timing rows and the
# assignment; then the runs, the pool's spans, the card, the user's labels on it. PostgreSQL
# also holds the document (``FOR KEY SHARE``) while the label is written.
SAVE_QUERIES = {"sqlite": 17, "postgresql": 18}


@pytest.fixture
def card(personas):
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="whole")
    text = "The wing produces lift because of the pressure difference. " * 4
    document = Document.objects.create(project=project, doc_id="d", title="t", text=text)
    chunks = [
        Chunk.objects.create(
            chunking=chunking, chunk_id=f"d#{i}", document=document, start=60 * i, end=60 * i + 60
        )
        for i in range(3)
    ]
    query = Query.objects.create(project=project, qid="q", text="lift")
    make_run(project, chunking, "r", [(query.pk, c.pk, 3.0 - i) for i, c in enumerate(chunks)])
    return {"project": project, "query": query, "chunk": chunks[1]}


def _save(client, card, grade):
    url = reverse("annotator:label_query_judge", args=["acme", card["query"].pk])
    with CaptureQueriesContext(connection) as captured:
        response = client.post(
            url,
            {"chunk": card["chunk"].pk, "grade": grade, "elapsed": "2.5"},
            HTTP_HX_REQUEST="true",
        )
    assert response.status_code == 200
    return response.content.decode(), [q["sql"] for q in captured.captured_queries]


def test_saving_a_grade_costs_a_fixed_number_of_queries(login, personas, card):
    client = login(personas["annotator"])
    _save(client, card, 1)  # the label exists: the next save changes it
    body, queries = _save(client, card, 2)
    assert Judgment.objects.get().grade == 2
    assert f'data-chunk="{card["chunk"].pk}"' in body
    assert len(queries) == SAVE_QUERIES[connection.vendor], "\n".join(queries)
    assert not [sql for sql in queries if sql.startswith('SELECT "quality_')]
    # The chunk is read once before the transaction (the form's evidence), not again for
    # the history row.
    chunk_reads = [sql for sql in queries if sql.startswith('SELECT "annotator_chunk"."id", ')]
    assert len(chunk_reads) == 1, chunk_reads


def test_a_project_with_a_dimension_still_shows_its_row_on_the_saved_card(login, personas, card):
    add_dimension(card["project"], key="authority", name="Authority", unit="document")
    client = login(personas["annotator"])
    _save(client, card, 1)
    body, queries = _save(client, card, 3)
    assert 'data-dimension="authority"' in body
    assert len(queries) == SAVE_QUERIES[connection.vendor] + 3  # dimensions, documents, grades
