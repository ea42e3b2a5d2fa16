"""Queue, assignments page and escaping on the labelling screens (the permission matrix and
the judging screen are in test_labelling_views)."""

from __future__ import annotations

import json

import pytest

from annotator.models import Assignment, Judgment, JudgmentHistory
from tests.test_labelling_views import grade_chunk, judge_url, urls

pytestmark = pytest.mark.django_db


# ------------------------------------------------------------------ queue and status


def test_queue_full_page_partial_and_next(login, personas, corpus):
    from annotator.models import Query

    project = personas["project"]
    anna = personas["annotator"]
    q2 = Query.objects.create(project=project, qid="q2", text="second <query>")
    Assignment.objects.create(project=project, query=corpus["query"], annotator=anna, status="done")
    Assignment.objects.create(project=project, query=q2, annotator=anna)
    client = login(anna)
    url = urls(corpus)["annotator:queue"]
    body = client.get(url).content.decode()
    assert '<dd id="n-done">1 / 2</dd>' in body
    assert f'id="next-query" class="button primary" href="/p/acme/label/{q2.pk}/"' in body
    assert "second &lt;query&gt;" in body
    partial = client.get(url, {"status": "open"}, HTTP_HX_REQUEST="true").content.decode()
    assert (
        partial.startswith('<div id="queue-table">') and "q2" in partial and ">q1<" not in partial
    )
    assert client.get(url, {"status": "nope"}).status_code == 400
    assert client.get(url, {"page": "0"}).status_code == 400


def test_skip_needs_a_reason_and_moves_on(login, personas, corpus):
    from annotator.models import Query

    project, anna = personas["project"], personas["annotator"]
    q2 = Query.objects.create(project=project, qid="q2", text="second")
    a1 = Assignment.objects.create(project=project, query=corpus["query"], annotator=anna)
    Assignment.objects.create(project=project, query=q2, annotator=anna)
    client = login(anna)
    url = urls(corpus)["annotator:label_query_status"]
    assert client.post(url, {"action": "skip"}, HTTP_HX_REQUEST="true").status_code == 400
    response = client.post(
        url, {"action": "skip", "reason": "不清楚", "elapsed": "12"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/p/acme/label/{q2.pk}/"
    a1.refresh_from_db()
    assert (a1.status, a1.skip_reason, a1.time_spent_seconds) == ("skipped", "不清楚", 12.0)
    # The status partial shows it; reopening brings it back (partial).
    partial = client.post(url, {"action": "reopen"}, HTTP_HX_REQUEST="true").content.decode()
    assert partial.startswith('<section id="assignment-status"')
    a1.refresh_from_db()
    assert a1.status == "open" and a1.skip_reason == ""
    # Done without htmx (confirming the unjudged candidate): a redirect to the next query.
    response = client.post(url, {"action": "done", "confirm": "1"})
    assert response.status_code == 302 and response["Location"] == f"/p/acme/label/{q2.pk}/"
    a1.refresh_from_db()
    assert a1.status == "done" and a1.finished_at is not None


def test_status_of_an_unassigned_query(login, personas, corpus):
    client = login(personas["owner"])
    url = urls(corpus)["annotator:label_query_status"]
    assert client.post(url, {"action": "done"}).status_code == 400
    assert client.post(url, {"action": "time", "elapsed": "5"}).status_code == 204
    assert "not in your queue" in client.get(url).content.decode()


def test_time_is_clamped(login, personas, corpus):
    anna = personas["annotator"]
    a = Assignment.objects.create(
        project=personas["project"], query=corpus["query"], annotator=anna
    )
    client = login(anna)
    url = urls(corpus)["annotator:label_query_status"]
    for value in ("-5", "nan", "1e9", "abc"):
        client.post(url, {"action": "time", "elapsed": value})
    a.refresh_from_db()
    assert a.time_spent_seconds == 600.0  # only the huge one counts, capped


def test_opening_the_screen_marks_the_assignment_opened(login, personas, corpus):
    anna = personas["annotator"]
    a = Assignment.objects.create(
        project=personas["project"], query=corpus["query"], annotator=anna
    )
    login(anna).get(urls(corpus)["annotator:label_query"])
    a.refresh_from_db()
    assert a.opened_at is not None


# ------------------------------------------------------------------ assignments page


def test_assign_page_full_and_htmx(login, personas, corpus):
    client = login(personas["owner"])
    url = urls(corpus)["annotator:assign"]
    body = client.get(url).content.decode()
    assert 'id="assign-form"' in body and "anna" in body
    response = client.post(
        url,
        {
            "scope": "all",
            "mode": "even",
            "per_query": 2,
            "annotators": [personas["annotator"].pk, personas["annotator2"].pk],
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    partial = response.content.decode()
    assert partial.startswith('<form id="assign-form"') and "2 assignments added" in partial
    assert response["HX-Trigger"] == "assignments-changed"
    assert Assignment.objects.count() == 2
    full = client.post(
        url,
        {
            "scope": "qids",
            "qids": "q1 nope",
            "mode": "each",
            "annotators": [personas["adjudicator"].pk],
        },
    )
    assert full.status_code == 400 and "Unknown query ids: nope" in full.content.decode()
    bad = client.post(
        url,
        {"scope": "tag", "mode": "even", "per_query": 1, "annotators": [personas["annotator"].pk]},
        HTTP_HX_REQUEST="true",
    )
    assert bad.status_code == 400
    done = client.post(
        url,
        {
            "scope": "all",
            "mode": "remove",
            "annotators": [personas["annotator"].pk],
            "confirm": "1",
        },
    )
    assert done.status_code == 302
    assert Assignment.objects.count() == 1


def test_members_see_the_assign_page_read_only(login, personas, corpus):
    for persona in ("adjudicator", "annotator", "viewer"):
        body = login(personas[persona]).get(urls(corpus)["annotator:assign"]).content.decode()
        assert 'id="team-table"' in body and 'id="assign-form"' not in body, persona


# ------------------------------------------------------------------ escaping


def test_markup_in_documents_is_text_on_every_labelling_screen(login, personas, corpus):
    client = login(personas["owner"])
    pages = [
        urls(corpus)["annotator:label_query"],
        urls(corpus)["annotator:label_query"] + f"?chunking={corpus['chunking'].pk}",
        urls(corpus)["annotator:label_query_document"] + f"?document={corpus['document'].pk}",
        urls(corpus)["annotator:label_query_document"],
        urls(corpus)["annotator:label_query_search"] + "?q=script",
        urls(corpus)["annotator:label_query_search"] + "?q=wings&scope=documents",
    ]
    for url in pages:
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            body = client.get(url, **headers).content.decode()
            assert "<script>alert(1)</script>" not in body, url
            assert "<b>lift</b>" not in body, url
            if "document=" in url or "search" in url or "label/" in url:
                assert "&lt;" in body, url
    body = client.get(urls(corpus)["annotator:label_query"]).content.decode()
    assert "How do wings &lt;lift&gt;?" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; wings." in body
    assert "Wings &amp; &lt;b&gt;lift&lt;/b&gt;" in body


def test_the_evidence_list_refreshes_itself_without_the_cards_on_screen(login, personas, corpus):
    """The server knows which chunks are candidates: the client does not tell it."""
    client = login(personas["annotator"])
    grade_chunk(client, corpus, 1)
    client.post(
        judge_url(corpus),
        {"granularity": "document", "document": corpus["document"].pk, "grade": 2},
        HTTP_HX_REQUEST="true",
    )
    grade_chunk(client, corpus, 3)
    last = JudgmentHistory.objects.order_by("-pk")[0].pk
    response = client.post(
        judge_url(corpus), {"action": "undo", "history": last}, HTTP_HX_REQUEST="true"
    )
    assert json.loads(response["HX-Trigger"])["labels-changed"]["undone"] == last
    assert Judgment.objects.get(granularity="chunk").grade == 1
    listing = client.get(judge_url(corpus), HTTP_HX_REQUEST="true").content.decode()
    assert listing.startswith('<section id="my-evidence"')
    assert "Document" in listing and "Chunk" not in listing
    assert 'hx-trigger="labels-refresh, change from:#chunking-select" data-refresh' in listing
