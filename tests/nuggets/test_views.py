"""The nugget screens: leads write through one change form (selection → new nugget or link,
edit, move, merge, unlink, delete), every change in history; annotators read only, when
the owner allows it and never before they have labelled the query in blind mode."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from annotator.models import Assignment, AssignmentStatus, Document, Query
from nuggets.changes import Span, create_nugget
from nuggets.models import Nugget, NuggetHistory, NuggetSetting

TEXT = "Lift comes from the pressure difference over the wing. Stall follows separation."
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def q(personas):
    project = personas["project"]
    doc = Document.objects.create(project=project, doc_id="a", text=TEXT)
    query = Query.objects.create(project=project, qid="q1", text="Where does lift come from?")
    url = reverse("nuggets:query_nuggets", args=["acme", query.pk])
    return {"query": query, "doc": doc, "url": url, **personas}


def test_a_lead_makes_a_nugget_from_a_selection_and_links_another_passage(q, login):
    client = login(q["adjudicator"])
    response = client.post(
        q["url"],
        {
            "action": "create",
            "screen": "labelling",
            "text": "Lift comes from a <pressure> difference",
            "importance": "vital",
            "document": q["doc"].pk,
            "start": 0,
            "end": 54,
            "selected": TEXT[:54],
        },
        **HX,
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="nugget-message"' in body and "&lt;pressure&gt;" in body and "<pressure>" not in body
    nugget = Nugget.objects.get()
    assert (nugget.nugget_id, nugget.importance, nugget.author) == ("n1", "vital", q["adjudicator"])
    response = client.post(
        q["url"],
        {
            "action": "link",
            "nugget": nugget.pk,
            "version": 1,
            "document": q["doc"].pk,
            "start": 55,
            "end": 80,
            "selected": TEXT[55:80],
        },
        **HX,
    )
    assert list(nugget.evidence.values_list("start", "end")) == [(0, 54), (55, 80)]
    assert [h.event for h in NuggetHistory.objects.all()] == ["create", "update"]


def test_a_selection_that_no_longer_matches_the_text_writes_nothing(q, login):
    client = login(q["owner"])
    data = {
        "action": "create",
        "text": "x",
        "importance": "okay",
        "document": q["doc"].pk,
        "start": 0,
        "end": 4,
        "selected": "Drag",
    }
    assert client.post(q["url"], data).status_code == 409
    answer = client.post(q["url"], data, **HX)
    assert answer.status_code == 200 and 'id="nugget-error"' in answer.content.decode()
    assert client.post(q["url"], {**data, "selected": "Lift", "end": 999}).status_code == 400
    assert (
        client.post(q["url"], {"action": "create", "text": "x"}).status_code == 400
    )  # no importance
    assert client.post(q["url"], {"action": "explode"}).status_code == 400
    assert not Nugget.objects.exists() and not NuggetHistory.objects.exists()


def test_edit_move_merge_unlink_delete_and_a_stale_form(q, login):
    client = login(q["owner"])
    a = create_nugget(
        q["query"],
        text="A",
        importance="okay",
        evidence=[Span(q["doc"], 0, 4)],
        changed_by=q["owner"],
    )
    b = create_nugget(
        q["query"],
        text="B",
        importance="vital",
        evidence=[Span(q["doc"], 55, 60)],
        changed_by=q["owner"],
    )
    client.post(
        q["url"],
        {"action": "edit", "nugget": a.pk, "version": 1, "text": "A!", "importance": "vital"},
        **HX,
    )
    stale = client.post(
        q["url"], {"action": "edit", "nugget": a.pk, "version": 1, "text": "lost"}, **HX
    )
    assert "another session" in stale.content.decode()
    client.post(q["url"], {"action": "move", "nugget": b.pk, "version": 1, "position": 0}, **HX)
    assert list(Nugget.objects.ordered().values_list("nugget_id", flat=True)) == ["n2", "n1"]
    client.post(q["url"], {"action": "merge", "nugget": a.pk, "into": b.pk}, **HX)
    b.refresh_from_db()
    assert list(b.evidence.values_list("start", flat=True)) == [0, 55]
    evidence = b.evidence.get(start=0)
    client.post(
        q["url"],
        {"action": "unlink", "nugget": b.pk, "version": b.version, "evidence": evidence.pk},
        **HX,
    )
    assert list(b.evidence.values_list("start", flat=True)) == [55]
    client.post(q["url"], {"action": "delete", "nugget": b.pk, "version": b.version + 1}, **HX)
    assert not Nugget.objects.exists()
    events = list(NuggetHistory.objects.values_list("event", "nugget_id"))
    assert events[2:] == [
        ("update", "n1"),
        ("move", "n2"),
        ("move", "n1"),
        ("merge", "n1"),
        ("update", "n2"),
        ("update", "n2"),
        ("delete", "n2"),
    ]
    history = client.get(q["url"]).content.decode()
    assert 'id="nugget-history"' in history


def test_annotators_read_only_when_allowed_and_never_before_they_have_labelled(q, login):
    create_nugget(q["query"], text="Lift from pressure", importance="vital", changed_by=q["owner"])
    client = login(q["annotator"])
    page = reverse("annotator:query_detail", args=["acme", q["query"].pk])
    label = reverse("annotator:label_query", args=["acme", q["query"].pk])
    assert client.get(q["url"]).status_code == 403  # the setting is off
    NuggetSetting.objects.create(project=q["project"], annotators_see=True)
    Assignment.objects.create(project=q["project"], query=q["query"], annotator=q["annotator"])
    assert client.get(q["url"]).status_code == 403  # blind, and not finished
    assert "Lift from pressure" not in client.get(page).content.decode()
    assert "Lift from pressure" not in client.get(label).content.decode()
    change_label(
        query=q["query"],
        annotator=q["annotator"],
        evidence=Evidence.for_document(q["doc"]),
        grade=2,
    )
    assert client.get(q["url"]).status_code == 403  # labelled, but the assignment is open
    Assignment.objects.filter(annotator=q["annotator"]).update(status=AssignmentStatus.DONE)
    body = client.get(label).content.decode()
    assert "Lift from pressure" in body and 'id="nugget-new-form"' not in body and "<form" in body
    panel = client.get(q["url"]).content.decode()
    assert "Lift from pressure" in panel and 'value="delete"' not in panel
    assert (
        client.post(q["url"], {"action": "create", "text": "x", "importance": "okay"}).status_code
        == 403
    )
    # Another annotator, in post-edit mode (not blind), reads them at once.
    other = login(q["annotator2"])
    assert other.get(q["url"]).status_code == 403
    q["project"].post_edit = True
    q["project"].save()
    assert other.get(q["url"]).status_code == 200


def test_leads_see_the_editor_on_the_query_page_and_the_labelling_screens(q, login):
    create_nugget(
        q["query"],
        text="Lift from pressure",
        importance="vital",
        evidence=[Span(q["doc"], 0, 4)],
        changed_by=q["owner"],
    )
    client = login(q["owner"])
    page = client.get(
        reverse("annotator:query_detail", args=["acme", q["query"].pk])
    ).content.decode()
    assert 'id="nugget-panel"' in page and 'id="nugget-add-form"' in page
    label = client.get(
        reverse("annotator:label_query", args=["acme", q["query"].pk])
    ).content.decode()
    assert (
        'id="nugget-new-form"' in label
        and 'id="nugget-link-form"' in label
        and "nuggets.js" in label
    )
    document = reverse("annotator:label_query_document", args=["acme", q["query"].pk])
    body = client.get(document, {"document": q["doc"].pk}).content.decode()
    assert 'id="nugget-new-form"' in body
    # The panel sits beside the text, and comes again with it on a page turn.
    turned = client.get(document, {"document": q["doc"].pk}, **HX).content.decode()
    assert 'id="nugget-panel"' in turned and 'id="nugget-new-form"' in turned
    viewer = login(q["viewer"]).get(q["url"]).content.decode()
    assert "Lift from pressure" in viewer and 'value="delete"' not in viewer


def test_owners_set_whether_annotators_read_them_and_download_them(q, login):
    create_nugget(
        q["query"],
        text="Lift",
        importance="vital",
        evidence=[Span(q["doc"], 0, 4)],
        changed_by=q["owner"],
    )
    setting = reverse("nuggets:setting", args=["acme"])
    assert login(q["adjudicator"]).post(setting, {"annotators_see": "1"}).status_code == 403
    client = login(q["owner"])
    assert client.post(setting, {"annotators_see": "1"}).status_code == 302
    assert NuggetSetting.objects.get().annotators_see
    overview = client.get(reverse("nuggets:overview", args=["acme"])).content.decode()
    assert 'id="nugget-queries"' in overview and "q1" in overview
    export = reverse("nuggets:export", args=["acme"])
    line = json.loads(client.get(export, {"format": "jsonl"}).content.decode())
    assert line["nugget_id"] == "n1" and line["evidence"][0]["text"] == "Lift"
    assert client.get(export, {"format": "ndeval"}).content.decode() == "q1 n1 a 2\n"
    assert client.get(export, {"format": "ndeval", "level": "nope"}).status_code == 400
    assert client.get(export, {"format": "pdf"}).status_code == 400
    assert login(q["annotator"]).get(export).status_code == 403
