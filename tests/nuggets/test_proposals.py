"""Nugget proposals: the prompt numbers people's relevant evidence, a proposal's spans are
the passages it cites (never offsets from the model), a proposal citing a passage that was
not sent is refused, and every decision of a lead is kept in history."""

from __future__ import annotations

import json

import pytest

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Document, Membership, Query
from nuggets.changes import NuggetRejected
from nuggets.models import Nugget, NuggetHistory, NuggetProposal
from nuggets.proposals import (
    UnreadableAnswer,
    decide,
    passages_for,
    proposal_prompt,
    read_answer,
    store,
)
from tests.conftest import make_user

TEXT = "Lift comes from the pressure difference over the wing. Stall follows separation."


@pytest.fixture
def labelled(personas):
    project = personas["project"]
    doc = Document.objects.create(project=project, doc_id="a", text=TEXT)
    other = Document.objects.create(project=project, doc_id="b", text="x" * 3000)
    query = Query.objects.create(project=project, qid="q1", text="Where does lift come from?")
    assessor = make_user("assessors")
    Membership.objects.create(project=project, user=assessor, is_pseudo=True)
    label = lambda who, evidence, grade: change_label(  # noqa: E731
        query=query, annotator=who, evidence=evidence, grade=grade
    )
    label(personas["annotator"], Evidence.for_passage(doc, 0, 54), 3)
    label(personas["annotator2"], Evidence.for_passage(doc, 0, 54), 2)  # the same span: once
    label(personas["annotator"], Evidence.for_passage(doc, 55, 80), 1)
    label(personas["annotator"], Evidence.for_document(other), 2)  # long: cut
    label(personas["annotator2"], Evidence.for_passage(doc, 10, 20), 0)  # not relevant
    label(assessor, Evidence.for_passage(doc, 30, 40), 3)  # not people's
    return {"query": query, "doc": doc, **personas}


def test_the_prompt_numbers_peoples_relevant_evidence(labelled):
    passages = passages_for(labelled["query"])
    assert [(p.number, p.doc_id, p.start, p.end) for p in passages] == [
        (1, "a", 0, 54),
        (2, "b", 0, 1500),
        (3, "a", 55, 80),
    ]
    prompt = proposal_prompt(labelled["query"], passages, 5)
    assert "Where does lift come from?" in prompt and "[1] " + TEXT[:54] in prompt
    assert "[3] Stall follows separation." in prompt and "at most 5 nuggets" in prompt


def test_offsets_come_from_the_cited_passages_and_unsent_numbers_are_refused(labelled):
    passages = passages_for(labelled["query"])
    answer = json.dumps(
        {
            "nuggets": [
                {
                    "text": "Lift from pressure",
                    "importance": "vital",
                    "passages": [1, 3],
                    "start": 999,
                },
                {"text": "Invented", "importance": "okay", "passages": [4]},
                {"text": "No importance", "passages": [1]},
                {"text": "Stall", "importance": "okay", "passages": [3]},
                {"text": "One too many", "importance": "okay", "passages": [1]},
            ]
        }
    )
    read = read_answer(answer, len(passages), max_nuggets=2)
    assert [p.text for p in read.proposed] == ["Lift from pressure", "Stall"]
    assert [r.code for r in read.refused] == [
        "proposals.unsent",
        "proposals.bad_item",
        "proposals.too_many",
    ]
    assert read.refused[0].params == {"n": 2, "passage": 4}
    stored = store(labelled["query"], passages, read)
    assert stored[0].evidence == [
        {"doc_id": "a", "start": 0, "end": 54, "passage": 1},
        {"doc_id": "a", "start": 55, "end": 80, "passage": 3},
    ]
    for bad in ("prose", "[1, 2]", '{"nuggets": 3}', ""):
        with pytest.raises(UnreadableAnswer):
            read_answer(bad, 3, 5)


def test_accept_edit_and_reject_are_kept_in_history(labelled):
    passages = passages_for(labelled["query"])
    answer = json.dumps(
        {
            "nuggets": [
                {"text": "Lift from pressure", "importance": "vital", "passages": [1]},
                {"text": "stall", "importance": "okay", "passages": [3]},
                {"text": "Wrong", "importance": "okay", "passages": [2]},
            ]
        }
    )
    first, second, third = store(labelled["query"], passages, read_answer(answer, 3, 5))
    lead = labelled["adjudicator"]
    decide(first, "accept", by=lead)
    decide(second, "edit", by=lead, text="A stall follows separation", importance="vital")
    decide(third, "reject", by=lead)
    nuggets = {n.text: n for n in Nugget.objects.all()}
    assert set(nuggets) == {"Lift from pressure", "A stall follows separation"}
    assert list(nuggets["Lift from pressure"].evidence.values_list("start", "end")) == [(0, 54)]
    assert nuggets["A stall follows separation"].importance == "vital"
    events = list(NuggetHistory.objects.values_list("event", flat=True))
    assert events == ["create", "accept", "create", "accept", "reject"]
    rejected = NuggetHistory.objects.get(event="reject")
    assert rejected.old["text"] == "Wrong" and rejected.changed_by == lead
    assert NuggetHistory.objects.filter(event="accept").last().detail == {
        "proposal": second.pk,
        "edited": True,
    }
    assert [p.status for p in NuggetProposal.objects.order_by("pk")] == [
        "accepted",
        "edited",
        "rejected",
    ]
    with pytest.raises(NuggetRejected) as again:
        decide(first, "reject", by=lead)
    assert again.value.status == 409


def test_leads_decide_proposals_in_the_panel(labelled, login):
    from django.urls import reverse

    passages = passages_for(labelled["query"])
    answer = json.dumps(
        {
            "nuggets": [
                {"text": "Lift", "importance": "okay", "passages": [1]},
                {"text": "No", "importance": "okay", "passages": [3]},
            ]
        }
    )
    first, second = store(labelled["query"], passages, read_answer(answer, 3, 5))
    url = reverse("nuggets:query_nuggets", args=["acme", labelled["query"].pk])
    client = login(labelled["owner"])
    assert f'id="proposal-{first.pk}"' in client.get(url).content.decode()
    client.post(
        url,
        {
            "action": "accept",
            "proposal": first.pk,
            "text": "Lift comes from pressure",
            "importance": "vital",
        },
        HTTP_HX_REQUEST="true",
    )
    client.post(url, {"action": "reject", "proposal": second.pk}, HTTP_HX_REQUEST="true")
    nugget = Nugget.objects.get()
    assert (nugget.text, nugget.importance) == ("Lift comes from pressure", "vital")
    assert [p.status for p in NuggetProposal.objects.order_by("pk")] == ["edited", "rejected"]
    body = client.get(url).content.decode()
    assert "nugget-proposals" not in body and "Lift comes from pressure" in body
    store(labelled["query"], passages, read_answer(answer, 3, 5))  # pending again
    assert "nugget-proposals" in client.get(url).content.decode()
    assert "nugget-proposals" not in login(labelled["viewer"]).get(url).content.decode()
