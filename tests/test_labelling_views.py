"""Labelling screens: permission matrix, full pages and htmx partials, blind labels, escaping."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Judgment, JudgmentHistory
from tests import test_project_views

pytestmark = pytest.mark.django_db

# Every labelling URL answers GET for every member (read-only for viewers); writes are
# POSTs to the same URLs. The project-wide matrix lists them too.
ALL = {"owner", "adjudicator", "annotator", "viewer"}
LABELLING_PAGES = {
    "annotator:queue": ALL,
    "annotator:assign": ALL,
    "annotator:label_query": ALL,
    "annotator:label_query_judge": ALL,
    "annotator:label_query_status": ALL,
    "annotator:label_query_document": ALL,
    "annotator:label_query_search": ALL,
}
assert all(test_project_views.PAGE_ROLES[n] == r for n, r in LABELLING_PAGES.items())

PERSONAS = ["owner", "adjudicator", "annotator", "viewer"]


def urls(corpus, slug="acme"):
    q = corpus["query"].pk
    return {
        "annotator:queue": reverse("annotator:queue", args=[slug]),
        "annotator:assign": reverse("annotator:assign", args=[slug]),
        "annotator:label_query": reverse("annotator:label_query", args=[slug, q]),
        "annotator:label_query_judge": reverse("annotator:label_query_judge", args=[slug, q]),
        "annotator:label_query_status": reverse("annotator:label_query_status", args=[slug, q]),
        "annotator:label_query_document": reverse("annotator:label_query_document", args=[slug, q]),
        "annotator:label_query_search": reverse("annotator:label_query_search", args=[slug, q]),
    }


def judge_url(corpus, slug="acme"):
    return reverse("annotator:label_query_judge", args=[slug, corpus["query"].pk])


def grade_chunk(client, corpus, grade, **extra):
    data = {"chunk": corpus["chunk"].pk, "grade": grade, **extra}
    return client.post(judge_url(corpus), data, HTTP_HX_REQUEST="true")


# ------------------------------------------------------------------ permission matrix


def test_every_labelling_url_is_covered_here(corpus):
    from annotator import labelling_urls

    assert {f"annotator:{p.name}" for p in labelling_urls.urlpatterns} == set(LABELLING_PAGES)
    assert set(urls(corpus)) == set(LABELLING_PAGES)


def test_anonymous_is_sent_to_login_everywhere(client, corpus):
    for name, url in urls(corpus).items():
        for response in (client.get(url), client.post(url, {"grade": 1})):
            assert response.status_code == 302, name
            assert response["Location"].startswith(reverse("login")), name


def test_outsider_gets_404_for_every_method(login, personas, corpus):
    client = login(personas["outsider"])
    for name, url in urls(corpus).items():
        assert client.get(url).status_code == 404, name
        assert client.post(url, {"grade": 1, "chunk": corpus["chunk"].pk}).status_code == 404
    # ... and through the slug of the outsider's own project.
    for name, url in urls(corpus, slug="other").items():
        if "label_query" in name:
            assert client.get(url).status_code == 404, name
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("persona", PERSONAS)
def test_members_read_every_labelling_page(login, personas, corpus, persona):
    client = login(personas[persona])
    for name, url in urls(corpus).items():
        full = client.get(url)
        assert full.status_code == 200, (persona, name)
        partial = client.get(url, HTTP_HX_REQUEST="true")
        assert partial.status_code == 200, (persona, name)
        assert b"<html" not in partial.content, (persona, name)


WRITES = {
    "annotator:label_query_judge": lambda c: {"chunk": c["chunk"].pk, "grade": 2},
    "annotator:label_query_status": lambda c: {"action": "time", "elapsed": 3},
    "annotator:assign": lambda c: {"scope": "all", "mode": "even", "per_query": 1},
}


@pytest.mark.parametrize("persona", PERSONAS)
def test_write_matrix(login, personas, corpus, persona):
    client = login(personas[persona])
    all_urls = urls(corpus)
    for name, data in WRITES.items():
        payload = data(corpus)
        if name == "annotator:assign":
            payload["annotators"] = [personas["annotator"].pk]
        status = client.post(all_urls[name], payload, HTTP_HX_REQUEST="true").status_code
        if persona == "viewer" or (name == "annotator:assign" and persona != "owner"):
            assert status == 403, (persona, name, status)
        else:
            assert status in (200, 204), (persona, name, status)
    for name in (
        "annotator:queue",
        "annotator:label_query",
        "annotator:label_query_document",
        "annotator:label_query_search",
    ):
        assert client.post(all_urls[name], {}).status_code == 405, (persona, name)
    expected = 0 if persona == "viewer" else 1
    assert Judgment.objects.filter(annotator=personas[persona]).count() == expected


def test_viewer_sees_the_screen_read_only(login, personas, corpus):
    body = login(personas["viewer"]).get(urls(corpus)["annotator:label_query"]).content.decode()
    assert "Read only" in body
    assert 'name="grade"' not in body
    assert "wings" in body


# ------------------------------------------------------------------ judging screen


def test_screen_full_page_and_partial(login, personas, corpus):
    client = login(personas["annotator"])
    url = urls(corpus)["annotator:label_query"]
    full = client.get(url).content.decode()
    assert "<html" in full and 'id="candidates"' in full and 'id="save-status"' in full
    assert 'id="keys-help"' in full and "label.js" in full
    partial = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section id="candidates"')
    assert f'id="cand-{corpus["chunk"].pk}"' in partial


def test_grade_is_saved_at_once_and_the_partial_says_so(login, personas, corpus):
    client = login(personas["annotator"])
    response = grade_chunk(client, corpus, 3, elapsed="4.5")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith("<article")
    assert 'data-grade="3"' in body
    assert 'id="save-status"' in body and 'hx-swap-oob="true"' in body and "Saved" in body
    history = JudgmentHistory.objects.get()
    assert f'"history": {history.pk}' in response["HX-Trigger"]
    judgment = Judgment.objects.get()
    assert (judgment.grade, judgment.granularity, judgment.chunk) == (3, "chunk", corpus["chunk"])
    assert history.timing.seconds == 4.5


def test_grade_without_htmx_redirects_back(login, personas, corpus):
    client = login(personas["annotator"])
    response = client.post(judge_url(corpus), {"chunk": corpus["chunk"].pk, "grade": 1})
    assert response.status_code == 302
    assert response["Location"] == urls(corpus)["annotator:label_query"]
    evil = client.post(
        judge_url(corpus), {"chunk": corpus["chunk"].pk, "grade": 2, "next": "https://evil.test/"}
    )
    assert evil["Location"] == urls(corpus)["annotator:label_query"]
    assert Judgment.objects.get().grade == 2


@pytest.mark.parametrize(
    "data",
    [
        {"grade": 4},
        {"grade": "x"},
        {"grade": 1},  # no evidence
        {"grade": 1, "granularity": "chunk"},
        {"grade": 1, "granularity": "passage", "document": 1},
        {"action": "delete"},
        {"action": "undo"},
        {"action": "explode", "grade": 1},
    ],
)
def test_bad_grades_are_400_and_change_nothing(login, personas, corpus, data):
    client = login(personas["annotator"])
    if data.get("document"):
        data["document"] = corpus["document"].pk
    response = client.post(judge_url(corpus), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 400, response.content
    assert not Judgment.objects.exists()


def test_a_chunk_of_another_project_is_404(login, personas, corpus):
    from annotator.models import Chunk, Chunking, Document

    other = personas["other"]
    doc = Document.objects.create(project=other, doc_id="x", text="secret text here")
    chunking = Chunking.objects.create(project=other, name="c")
    chunk = Chunk.objects.create(chunking=chunking, chunk_id="x#0", document=doc, start=0, end=6)
    client = login(personas["annotator"])
    response = client.post(judge_url(corpus), {"chunk": chunk.pk, "grade": 3})
    assert response.status_code == 404
    response = client.post(
        judge_url(corpus), {"granularity": "document", "document": doc.pk, "grade": 3}
    )
    assert response.status_code == 404
    assert client.get(judge_url(corpus), {"chunk": chunk.pk}).status_code == 404
    assert not Judgment.objects.exists()


def test_double_submit_is_one_label(login, personas, corpus):
    client = login(personas["annotator"])
    assert grade_chunk(client, corpus, 2).status_code == 200
    second = grade_chunk(client, corpus, 2)
    assert second.status_code == 200
    assert "Saved" in second.content.decode()
    assert Judgment.objects.count() == 1
    assert JudgmentHistory.objects.count() == 1
    assert "HX-Trigger" not in second  # nothing new to undo


def test_two_tabs_last_write_wins_with_both_in_history(login, personas, corpus):
    from django.test import Client

    tab1 = login(personas["annotator"])
    tab2 = Client()
    tab2.force_login(personas["annotator"])
    grade_chunk(tab1, corpus, 1)
    grade_chunk(tab2, corpus, 3)
    assert Judgment.objects.get().grade == 3
    events = list(JudgmentHistory.objects.values_list("event", "old_grade", "new_grade"))
    assert events == [("create", None, 1), ("update", 1, 3)]


def test_note_is_saved_with_the_grade(login, personas, corpus):
    client = login(personas["annotator"])
    grade_chunk(client, corpus, 2)
    response = grade_chunk(client, corpus, 2, note="机翼 <b>note</b> & more")
    assert response.status_code == 200
    judgment = Judgment.objects.get()
    assert judgment.note == "机翼 <b>note</b> & more"
    assert "机翼 &lt;b&gt;note&lt;/b&gt; &amp; more" in response.content.decode()
    grade_chunk(client, corpus, 1)  # a grade without a note keeps the note
    assert Judgment.objects.get().note == "机翼 <b>note</b> & more"


def test_every_copy_of_a_card_refreshes_itself_on_the_event(login, personas, corpus):
    """The save answers with the card alone; the other copy listens and fetches itself."""
    client = login(personas["annotator"])
    pk = corpus["chunk"].pk
    body = grade_chunk(client, corpus, 1).content.decode()
    assert body.lstrip().startswith('<article class="candidate graded judged" data-chunk=')
    assert f'id="cand-{pk}"' not in body and f'id="found-{pk}"' not in body
    screen = client.get(urls(corpus)["annotator:label_query"]).content.decode()
    found = client.get(
        urls(corpus)["annotator:label_query_search"], {"q": "wings"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    doc = corpus["document"].pk
    listens = (
        f'hx-trigger="labels-refresh" data-refresh data-refresh-document="{doc}" '
        f'data-refresh-span-or-chunk="{pk}" data-refresh-not-own'
    )
    for region, html in (("cand", screen), ("found", found)):
        place = html[html.index(f'id="{region}-{pk}"') :]
        assert place.index(listens) < place.index("<article"), region
        # The card's number travels with the refresh, so the refreshed card keeps it.
        refresh = f'hx-get="{judge_url(corpus)}?chunk={pk}&amp;pos=1"'
        assert refresh in place[: place.index("<article")]
    # What the other copy fetches is the card as it is now.
    grade_chunk(client, corpus, 3)
    card = client.get(judge_url(corpus), {"chunk": pk}, HTTP_HX_REQUEST="true").content.decode()
    assert card.startswith('<article class="candidate graded judged"') and 'data-grade="3"' in card
    assert 'name="slot"' not in screen + found + card


def test_judged_candidates_show_their_grade(login, personas, corpus):
    client = login(personas["annotator"])
    grade_chunk(client, corpus, 3)
    body = client.get(urls(corpus)["annotator:label_query"]).content.decode()
    assert 'data-grade="3"' in body
    assert '<span id="n-judged">1</span>' in body


# ------------------------------------------------------------------ blind by default


def test_annotators_see_only_their_own_labels(login, personas, corpus):
    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=3,
        note="anna-note",
    )
    url = urls(corpus)["annotator:label_query"]
    other = login(personas["annotator2"]).get(url).content.decode()
    assert "anna-note" not in other and 'data-grade="3"' not in other and "anna" not in other
    for lead in ("owner", "adjudicator"):
        body = login(personas[lead]).get(url).content.decode()
        assert "Others:" in body and "anna" in body, lead


def test_another_annotators_label_ids_are_404(login, personas, corpus):
    judgment = change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_document(corpus["document"]),
        grade=2,
    ).judgment
    history = JudgmentHistory.objects.get()
    for persona in ("annotator2", "owner", "adjudicator"):
        client = login(personas[persona])
        assert client.get(judge_url(corpus), {"judgment": judgment.pk}).status_code == 404
        for data in (
            {"action": "delete", "judgment": judgment.pk},
            {"judgment": judgment.pk, "grade": 0},
            {"action": "undo", "history": history.pk},
        ):
            assert client.post(judge_url(corpus), data).status_code == 404, (persona, data)
    judgment.refresh_from_db()
    assert judgment.grade == 2
    mine = login(personas["annotator"]).get(judge_url(corpus), {"judgment": judgment.pk})
    assert mine.status_code == 200 and f'id="ev-{judgment.pk}"' in mine.content.decode()


def test_labels_of_a_query_are_not_reachable_through_another_query(login, personas, corpus):
    from annotator.models import Query

    q2 = Query.objects.create(project=personas["project"], qid="q2", text="another")
    judgment = change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=1,
    ).judgment
    client = login(personas["annotator"])
    url = reverse("annotator:label_query_judge", args=["acme", q2.pk])
    assert client.get(url, {"judgment": judgment.pk}).status_code == 404
    assert client.post(url, {"action": "delete", "judgment": judgment.pk}).status_code == 404


# ------------------------------------------------------------------ evidence rows, delete, undo


def test_change_and_remove_an_evidence_row(login, personas, corpus):
    client = login(personas["annotator"])
    judgment = change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_document(corpus["document"]),
        grade=1,
    ).judgment
    response = client.post(
        judge_url(corpus), {"judgment": judgment.pk, "grade": 3}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert (
        response.content.decode()
        .lstrip()
        .startswith(f'<div class="evidence-row" id="ev-{judgment.pk}"')
    )
    judgment.refresh_from_db()
    assert judgment.grade == 3
    response = client.post(
        judge_url(corpus), {"action": "delete", "judgment": judgment.pk}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert 'class="evidence-row"' not in response.content.decode()
    assert "Label removed" in response.content.decode()
    assert not Judgment.objects.exists()
    assert list(JudgmentHistory.objects.values_list("event", flat=True)) == [
        "create",
        "update",
        "delete",
    ]


def test_undo_walks_back_through_history(login, personas, corpus):
    client = login(personas["annotator"])
    first = grade_chunk(client, corpus, 1)
    second = grade_chunk(client, corpus, 3)
    h1 = JudgmentHistory.objects.order_by("pk")[0].pk
    h2 = JudgmentHistory.objects.order_by("pk")[1].pk
    assert str(h1) in first["HX-Trigger"] and str(h2) in second["HX-Trigger"]
    response = client.post(
        judge_url(corpus), {"action": "undo", "history": h2}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    event = json.loads(response["HX-Trigger"])["labels-changed"]
    assert event["undone"] == h2 and event["chunk"] == corpus["chunk"].pk
    assert event["history"] == JudgmentHistory.objects.order_by("-pk")[0].pk
    body = response.content.decode()  # only the status line: the card refreshes itself
    assert "<article" not in body and 'hx-swap-oob="true"' in body and "Undone" in body
    assert Judgment.objects.get().grade == 1
    card = client.get(judge_url(corpus), {"chunk": corpus["chunk"].pk}).content.decode()
    assert 'data-grade="1"' in card
    client.post(judge_url(corpus), {"action": "undo", "history": h1}, HTTP_HX_REQUEST="true")
    assert not Judgment.objects.exists()  # it was new: undo removes it
    events = list(JudgmentHistory.objects.values_list("event", "old_grade", "new_grade"))
    assert events == [("create", None, 1), ("update", 1, 3), ("update", 3, 1), ("delete", 1, None)]
    # Undoing a deletion brings the label back.
    h_delete = JudgmentHistory.objects.order_by("-pk")[0].pk
    client.post(judge_url(corpus), {"action": "undo", "history": h_delete})
    assert Judgment.objects.get().grade == 1


@pytest.mark.django_db(transaction=True)
def test_save_is_committed_before_the_response(login, personas, corpus):
    """No transaction is left open by the request: the label is on disk when it answers."""
    from django.db import connection

    client = login(personas["annotator"])
    assert grade_chunk(client, corpus, 2).status_code == 200
    assert not connection.in_atomic_block
    connection.close()  # a rollback of anything uncommitted (kept open for in-memory SQLite)
    assert Judgment.objects.filter(grade=2).count() == 1
