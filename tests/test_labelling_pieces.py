"""Candidates as pieces of text: one card per piece, labels cover what they overlap, done
means done."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator import pool
from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Assignment, Chunk, Chunking, Document

pytestmark = pytest.mark.django_db

TEXT = "Lift comes from pressure. " * 4 + "Drag slows the aircraft. " * 4


@pytest.fixture
def two_chunkings(personas, corpus, monkeypatch):
    """One document cut twice: halves [0,100) [100,200) and windows of 60 with overlap 10;
    a run over each chunking pools them all for the query."""
    project, query = personas["project"], corpus["query"]
    document = Document.objects.create(project=project, doc_id="d7", title="Lift", text=TEXT)
    halves = Chunking.objects.create(project=project, name="halves")
    windows = Chunking.objects.create(project=project, name="windows")
    half = [
        Chunk.objects.create(chunking=halves, chunk_id=f"h{i}", document=document, start=s, end=e)
        for i, (s, e) in enumerate([(0, 100), (100, 200)])
    ]
    spans = [(0, 60), (50, 110), (100, 160), (150, 200)]
    window = [
        Chunk.objects.create(chunking=windows, chunk_id=f"w{i}", document=document, start=s, end=e)
        for i, (s, e) in enumerate(spans)
    ]
    rankings = [[c.pk for c in half], [c.pk for c in window]]
    source = lambda q, chunking: rankings if q.pk == query.pk else []  # noqa: E731
    monkeypatch.setattr(pool, "ranking_source", lambda: source)
    return {"document": document, "halves": half, "windows": window, "query": query}


def screen(client, query):
    return client.get(reverse("annotator:label_query", args=["acme", query.pk])).content.decode()


def cards(body: str) -> list[tuple[str, str, str]]:
    import re

    return re.findall(
        r'<article class="candidate[^"]*" data-chunk="\d+" data-doc-id="([^"]*)" '
        r'data-start="(\d+)" data-end="(\d+)"',
        body,
    )


def test_each_piece_of_text_is_one_card(login, personas, two_chunkings):
    client = login(personas["annotator"])
    body = screen(client, two_chunkings["query"])
    # Six candidates, two pieces of text: w0 and w1 fold into h0 (inside, or sharing more
    # than half of the shorter), w2 and w3 into h1.
    assert sorted(cards(body)) == [("d7", "0", "100"), ("d7", "100", "200")]
    assert '<span id="n-candidates">2</span>' in body
    assert body.count("also stands for 2 overlapping candidates") == 2
    assert f"characters 0–100 of {len(TEXT)}" in body


def test_the_fold_threshold_is_a_project_setting(login, personas, two_chunkings):
    project = personas["project"]
    project.candidate_overlap = 1.0  # only candidates inside another fold
    project.save()
    client = login(personas["annotator"])
    found = sorted(cards(screen(client, two_chunkings["query"])))
    # w0 lies inside h0, w2 and w3 inside h1; w1 [50, 110) straddles both halves.
    assert found == [("d7", "0", "100"), ("d7", "100", "200"), ("d7", "50", "110")]


def test_the_order_is_stable_and_blind(login, personas, two_chunkings):
    client = login(personas["annotator"])
    first, again = (screen(client, two_chunkings["query"]) for _ in range(2))
    assert cards(first) == cards(again)
    candidates = first[first.index('<section id="candidates"') :]
    candidates = candidates[: candidates.index("</section>")]
    assert "halves" not in candidates and "windows" not in candidates  # no run shown
    assert "score" not in candidates and "rank" not in candidates


def test_a_passage_covers_the_candidates_it_overlaps(login, personas, two_chunkings):
    client = login(personas["annotator"])
    query, document = two_chunkings["query"], two_chunkings["document"]
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(document, 10, 40),
        grade=2,
    )
    body = screen(client, query)
    assert '<span id="n-judged">1</span>' in body
    covered = body[body.index('data-start="0" data-end="100"') :]
    covered = covered[: covered.index("</article>")]
    assert 'data-covered-grade="2"' in covered and "by passage 10–40" in covered
    assert 'name="grade"' in covered  # it can still be graded directly
    other = body[body.index('data-start="100" data-end="200"') :]
    assert "not judged" in other[: other.index("</article>")]


def test_a_whole_document_grade_covers_every_candidate_of_it(login, personas, two_chunkings):
    client = login(personas["annotator"])
    query, document = two_chunkings["query"], two_chunkings["document"]
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=Evidence.for_document(document),
        grade=0,
    )
    body = screen(client, query)
    assert '<span id="n-judged">2</span>' in body and body.count("by whole document") == 2
    # Another annotator's labels cover nothing of anna's.
    other = login(personas["annotator2"])
    assert '<span id="n-judged">0</span>' in screen(other, query)


def test_cards_and_counter_listen_for_labels_anywhere_in_their_document(
    login, personas, two_chunkings
):
    client = login(personas["annotator"])
    body = screen(client, two_chunkings["query"])
    document = two_chunkings["document"].pk
    h0 = two_chunkings["halves"][0].pk
    assert (
        f'hx-trigger="labels-refresh" data-refresh data-refresh-document="{document}" '
        f'data-refresh-span-or-chunk="{h0}" data-refresh-not-own'
    ) in body
    counter = body[body.index('id="judged-count"') :]
    assert counter[: counter.index(">")].endswith(
        'hx-trigger="labels-refresh" data-refresh hx-swap="outerHTML"'
    )


def test_done_with_unjudged_candidates_asks_and_records_how_many(login, personas, two_chunkings):
    anna, query = personas["annotator"], two_chunkings["query"]
    assignment = Assignment.objects.create(project=personas["project"], query=query, annotator=anna)
    client = login(anna)
    url = reverse("annotator:label_query_status", args=["acme", query.pk])
    asked = client.post(url, {"action": "done"}, HTTP_HX_REQUEST="true")
    assert asked.status_code == 200 and "HX-Redirect" not in asked
    assert "2 candidates are not judged yet. Mark the query done anyway?" in asked.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == "open"
    change_label(
        query=query,
        annotator=anna,
        evidence=Evidence.for_chunk(two_chunkings["halves"][0]),
        grade=3,
    )
    done = client.post(url, {"action": "done", "confirm": "1"}, HTTP_HX_REQUEST="true")
    assert "HX-Redirect" in done
    assignment.refresh_from_db()
    assert (assignment.status, assignment.unjudged_at_done) == ("done", 1)
    queue = client.get(reverse("annotator:queue", args=["acme"])).content.decode()
    assert "done, 1 unjudged" in queue
    # Without htmx the whole screen asks.
    assignment.status = "open"
    assignment.save()
    page = client.post(url, {"action": "done"}).content.decode()
    assert "<html" in page and "1 candidate is not judged yet" in page


def test_done_when_everything_is_judged_needs_no_confirmation(login, personas, two_chunkings):
    anna, query = personas["annotator"], two_chunkings["query"]
    assignment = Assignment.objects.create(project=personas["project"], query=query, annotator=anna)
    change_label(
        query=query,
        annotator=anna,
        evidence=Evidence.for_document(two_chunkings["document"]),
        grade=1,
    )
    client = login(anna)
    url = reverse("annotator:label_query_status", args=["acme", query.pk])
    assert "HX-Redirect" in client.post(url, {"action": "done"}, HTTP_HX_REQUEST="true")
    assignment.refresh_from_db()
    assert (assignment.status, assignment.unjudged_at_done) == ("done", None)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("candidate_overlap", "0", "A share above 0"),
        ("candidate_overlap", "1.5", "A share above 0"),
        ("mapping", "most", "unknown mapping rule"),
    ],
)
def test_project_settings_check_the_new_fields(login, personas, field, value, message):
    from annotator.forms import ProjectSettingsForm

    project = personas["project"]
    data = {
        "name": project.name,
        "grade_label_0": "a",
        "grade_label_1": "b",
        "grade_label_2": "c",
        "grade_label_3": "d",
        "relevance_threshold": 1,
        "pool_depth": 10,
        "candidate_overlap": 0.5,
        "mapping": "any_overlap",
        field: value,
    }
    form = ProjectSettingsForm(data, instance=project)
    assert not form.is_valid() and message in str(form.errors[field])
