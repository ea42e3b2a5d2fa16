"""The project page's label count is kept under the project's label revision: a second
view counts nothing, a label change (or a deletion that cascades) is counted at once, and
each viewer sees the count of the labels they may see (blind labelling)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.caches import cache
from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Granularity, Judgment

pytestmark = pytest.mark.django_db


def _label(corpus, user, grade=2):
    chunk = corpus["chunk"]
    evidence = Evidence(Granularity.CHUNK, chunk.document, chunk.start, chunk.end, chunk)
    change_label(query=corpus["query"], annotator=user, evidence=evidence, grade=grade)


def _shown(client, project) -> tuple[str, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("annotator:project_detail", args=[project.slug]))
    assert response.status_code == 200
    return response.content.decode(), [q["sql"] for q in captured.captured_queries]


def _counted_labels(statements: list[str]) -> bool:
    return any("COUNT(" in sql.upper() and "annotator_judgment" in sql for sql in statements)


def test_a_second_view_counts_no_labels_and_a_change_is_counted(personas, corpus, login):
    cache.clear()
    project = personas["project"]
    _label(corpus, personas["annotator"])
    _label(corpus, personas["annotator2"], grade=3)
    owner = login(personas["owner"])
    page, statements = _shown(owner, project)
    assert _counted_labels(statements) and "<dd>2</dd>" in page
    page, statements = _shown(owner, project)
    assert not _counted_labels(statements) and "<dd>2</dd>" in page
    _label(corpus, personas["owner"], grade=1)  # a change moves the revision
    page, statements = _shown(owner, project)
    assert _counted_labels(statements) and "<dd>3</dd>" in page
    corpus["query"].delete()  # its labels go by cascade, and the revision moves (a reset)
    page, _ = _shown(owner, project)
    assert "<dd>0</dd>" in page and not Judgment.objects.exists()


def test_each_viewer_sees_the_count_of_the_labels_they_may_see(personas, corpus, client):
    cache.clear()
    project = personas["project"]
    _label(corpus, personas["annotator"])
    _label(corpus, personas["annotator2"], grade=3)
    _label(corpus, personas["owner"], grade=1)
    for persona, expected in [("owner", 3), ("annotator", 1), ("owner", 3), ("annotator2", 1)]:
        client.force_login(personas[persona])
        page, _ = _shown(client, project)
        assert f"<dd>{expected}</dd>" in page, persona
