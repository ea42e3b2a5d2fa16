"""Event-driven refresh: a save answers with its own fragment and ``labels-changed``."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Assignment, JudgmentHistory

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def url(name, corpus):
    return reverse(f"annotator:{name}", args=["acme", corpus["query"].pk])


def save(client, corpus, **data):
    return client.post(url("label_query_judge", corpus), data, **HTMX)


def event_of(response) -> dict:
    return json.loads(response["HX-Trigger"])["labels-changed"]


def test_a_save_names_what_changed(login, personas, corpus):
    client = login(personas["annotator"])
    chunk, document = corpus["chunk"], corpus["document"]
    response = save(client, corpus, chunk=chunk.pk, grade=2)
    history = JudgmentHistory.objects.get()
    assert event_of(response) == {
        "history": history.pk,
        "undone": None,
        "kind": "chunk",
        "document": document.pk,
        "chunk": chunk.pk,
        "judgment": history.judgment_id,
    }
    response = save(client, corpus, granularity="page", document=document.pk, page=2, grade=1)
    event = event_of(response)
    assert (event["kind"], event["document"], event["chunk"]) == ("page", document.pk, None)
    # The answer of a page or passage save is the label's row (the document view refreshes).
    assert response.content.decode().startswith('<div class="evidence-row"')
    removed = save(client, corpus, action="delete", judgment=event["judgment"])
    assert event_of(removed)["judgment"] is None and "Label removed" in removed.content.decode()


def test_the_counter_refreshes_itself(login, personas, corpus):
    client = login(personas["annotator"])
    page = client.get(url("label_query", corpus)).content.decode()
    counter = page[page.index('<span id="judged-count"') :]
    counter = counter[: counter.index(">")]
    assert f'hx-get="{url("label_query", corpus)}"' in counter
    # A label saved anywhere on the screen may cover candidates: the counter always listens.
    assert 'hx-trigger="labels-refresh" data-refresh hx-swap' in counter

    def count():
        response = client.get(url("label_query", corpus), HTTP_HX_TARGET="judged-count", **HTMX)
        return response.content.decode()

    assert count().startswith('<span id="judged-count"') and '"n-judged">0<' in count()
    save(client, corpus, chunk=corpus["chunk"].pk, grade=3)
    assert '<span id="n-judged">1</span> / <span id="n-candidates">1</span>' in count()
    # Other htmx requests of the screen (the chunking switch) still get the candidates.
    other = client.get(url("label_query", corpus), HTTP_HX_TARGET="candidates", **HTMX)
    assert other.content.decode().startswith('<section id="candidates"')


def test_the_counter_keeps_the_chosen_chunking(login, personas, corpus):
    from annotator.models import Chunking

    Chunking.objects.create(project=personas["project"], name="other")
    client = login(personas["annotator"])
    chosen = corpus["chunking"].pk
    page = client.get(url("label_query", corpus), {"chunking": chosen}).content.decode()
    assert f'hx-get="{url("label_query", corpus)}?chunking={chosen}"' in page
    assert 'id="chunking-select"' in page
    # The evidence list follows the chunking switch too.
    listing = page[page.index('<section id="my-evidence"') :]
    assert 'hx-include="#chunking-select"' in listing[:400]
    assert "change from:#chunking-select" in listing[:400]


def test_the_evidence_list_shows_the_new_state(login, personas, corpus):
    client = login(personas["annotator"])

    def listing():
        return client.get(url("label_query_judge", corpus), **HTMX).content.decode()

    assert "evidence-row" not in listing()
    save(client, corpus, granularity="document", document=corpus["document"].pk, grade=2)
    assert listing().count('class="evidence-row"') == 1 and 'class="grade g2"' in listing()
    # Chunks that are candidates of the screen are cards, not rows of the list.
    save(client, corpus, chunk=corpus["chunk"].pk, grade=1)
    assert listing().count('class="evidence-row"') == 1


def test_the_queue_status_refreshes_itself(login, personas, corpus):
    anna = personas["annotator"]
    Assignment.objects.create(project=personas["project"], query=corpus["query"], annotator=anna)
    client = login(anna)
    page = client.get(url("label_query", corpus)).content.decode()
    section = page[page.index('<section id="assignment-status"') :]
    section = section[: section.index(">")]
    assert f'hx-get="{url("label_query_status", corpus)}"' in section
    assert 'hx-trigger="labels-changed from:body"' in section
    save(client, corpus, chunk=corpus["chunk"].pk, grade=2, elapsed="75")
    status = client.get(url("label_query_status", corpus), **HTMX).content.decode()
    assert '<span class="time-spent">1 min 15 s</span>' in status


def test_document_view_and_results_refresh_on_their_own_document(login, personas, corpus):
    client = login(personas["annotator"])
    document = corpus["document"]
    view = client.get(url("label_query_document", corpus), {"document": document.pk, "page": 2})
    html = view.content.decode()
    assert f'hx-trigger="labels-refresh" data-refresh data-refresh-document="{document.pk}"' in html
    assert f'hx-get="{url("label_query_document", corpus)}?document={document.pk}&amp;page=2"' in (
        html
    )
    # Its forms answer nothing in place: the view refreshes itself on the event.
    assert 'hx-target="#doc-view" hx-swap="innerHTML"' not in html
    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_document(document),
        grade=3,
    )
    result = client.get(url("label_query_judge", corpus), {"document": document.pk}, **HTMX)
    body = result.content.decode()
    assert body.startswith(f'<div class="doc-result" id="docres-{document.pk}"')
    assert f'data-refresh-document="{document.pk}"' in body and 'class="grade g3"' in body
    assert client.get(url("label_query_judge", corpus), {"document": 999999}).status_code == 404
    assert client.get(url("label_query_judge", corpus), {"chunk": "x"}).status_code == 400


def test_a_repeated_save_says_saved_without_an_event(login, personas, corpus):
    client = login(personas["annotator"])
    save(client, corpus, chunk=corpus["chunk"].pk, grade=2)
    again = save(client, corpus, chunk=corpus["chunk"].pk, grade=2)
    assert "HX-Trigger" not in again and "Saved: 2" in again.content.decode()
