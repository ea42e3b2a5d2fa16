"""Agreement on nuggets between two leads: matched by overlapping evidence on the same
query, the share matched both ways, on the agreement page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.models import Document, Query
from nuggets.agreement import nugget_agreement
from nuggets.changes import Span, create_nugget

TEXT = "x" * 200


@pytest.fixture
def two_leads(personas):
    project = personas["project"]
    doc = Document.objects.create(project=project, doc_id="a", text=TEXT)
    other = Document.objects.create(project=project, doc_id="b", text=TEXT)
    q1, q2, q3 = (Query.objects.create(project=project, qid=q, text=q) for q in ("q1", "q2", "q3"))
    alice, adam = personas["owner"], personas["adjudicator"]

    def write(query, who, *spans):
        create_nugget(query, text="fact", importance="okay", evidence=list(spans), changed_by=who)

    # q1: alice 3 nuggets, adam 2; alice's first two overlap adam's first (one character
    # is enough), her third overlaps nothing; adam's second touches hers only at an end.
    write(q1, alice, Span(doc, 0, 10))
    write(q1, alice, Span(doc, 9, 20))
    write(q1, alice, Span(doc, 50, 60))
    write(q1, adam, Span(doc, 5, 10), Span(other, 0, 5))
    write(q1, adam, Span(doc, 60, 70))
    # q2: the same characters, but in another document than alice's.
    write(q2, alice, Span(doc, 0, 10))
    write(q2, adam, Span(other, 0, 10))
    # q3: only alice wrote nuggets: not counted.
    write(q3, alice, Span(doc, 0, 10))
    return {"project": project, **personas}


def test_shares_matched_both_ways_on_the_queries_both_wrote(two_leads):
    result = nugget_agreement(two_leads["project"], "alice", "adam")
    assert result.n_queries == 2
    assert (result.a_matched, result.a_total) == (2, 4)
    assert (result.b_matched, result.b_total) == (1, 3)
    assert result.per_query == [
        {
            "query_pk": result.per_query[0]["query_pk"],
            "qid": "q1",
            "a_total": 3,
            "a_matched": 2,
            "b_total": 2,
            "b_matched": 1,
        },
        {
            "query_pk": result.per_query[1]["query_pk"],
            "qid": "q2",
            "a_total": 1,
            "a_matched": 0,
            "b_total": 1,
            "b_matched": 0,
        },
    ]


def test_the_agreement_page_shows_it_to_leads(two_leads, login):
    url = reverse("gold:agreement", args=["acme"])
    body = login(two_leads["adjudicator"]).get(url).content.decode()
    assert 'id="nugget-agreement"' in body
    assert 'data-share="a">0.500' in body and 'data-share="b">0.333' in body
    swapped = (
        login(two_leads["owner"])
        .get(url, {"nugget_a": "adam", "nugget_b": "alice"})
        .content.decode()
    )
    assert 'data-share="a">0.333' in swapped
