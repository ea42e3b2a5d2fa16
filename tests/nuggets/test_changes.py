"""Writing nuggets: each change and its history row together; spans checked; stale forms
refused; merges keep every span."""

from __future__ import annotations

import pytest

from annotator.models import Document, Query
from nuggets.changes import (
    NuggetRejected,
    Span,
    check_span,
    create_nugget,
    delete_nugget,
    edit_nugget,
    merge_nuggets,
    move_nugget,
)
from nuggets.models import Nugget, NuggetHistory

TEXT = "Lift comes from the pressure difference over the wing. Stall follows separation."


@pytest.fixture
def q(personas):
    project = personas["project"]
    document = Document.objects.create(project=project, doc_id="a", text=TEXT)
    query = Query.objects.create(project=project, qid="q1", text="Lift?")
    return {"query": query, "doc": document, **personas}


def test_every_change_is_kept_in_history_with_before_and_after(q):
    owner, doc = q["owner"], q["doc"]
    first = create_nugget(
        q["query"], text=" Lift ", importance="vital", evidence=[Span(doc, 0, 4)], changed_by=owner
    )
    second = create_nugget(q["query"], text="Stall", importance="okay", changed_by=q["adjudicator"])
    assert (first.nugget_id, first.order, first.text) == ("n1", 0, "Lift")
    assert (second.nugget_id, second.order, second.author) == ("n2", 1, q["adjudicator"])
    edit_nugget(second, changed_by=owner, text="Stall follows separation", add=[Span(doc, 55, 80)])
    edit_nugget(second, changed_by=owner, text="Stall follows separation")  # no change: no row
    move_nugget(second, 0, changed_by=owner)
    merge_nuggets(first, [second], changed_by=owner)
    events = list(NuggetHistory.objects.values_list("event", "nugget_id"))
    assert events == [
        ("create", "n1"),
        ("create", "n2"),
        ("update", "n2"),
        ("move", "n2"),
        ("move", "n1"),
        ("merge", "n2"),
        ("update", "n1"),
    ]
    update = NuggetHistory.objects.filter(event="update", nugget_id="n2").get()
    assert update.old["text"] == "Stall" and update.new["text"] == "Stall follows separation"
    assert update.new["evidence"] == [{"doc_id": "a", "start": 55, "end": 80}]
    merged = NuggetHistory.objects.get(event="merge")
    assert merged.detail == {"into": "n1"} and merged.subject is None
    survivor = Nugget.objects.get()
    # The merged nugget's span joins, and it was vital: so is the result.
    assert list(survivor.evidence.values_list("start", "end")) == [(0, 4), (55, 80)]
    assert survivor.importance == "vital"
    delete_nugget(survivor, changed_by=owner)
    assert not Nugget.objects.exists()
    gone = NuggetHistory.objects.last()
    assert gone.event == "delete" and gone.old["evidence"][1]["start"] == 55 and gone.new == {}
    # Ids are not reused after a deletion: history still names them.
    assert (
        create_nugget(q["query"], text="x", importance="okay", changed_by=owner).nugget_id == "n3"
    )


def test_spans_outside_the_text_or_not_matching_it_are_refused(q):
    doc = q["doc"]
    for start, end in ((0, 0), (5, 2), (-1, 3), (70, 81)):
        with pytest.raises(NuggetRejected):
            check_span(doc, start, end)
    with pytest.raises(NuggetRejected) as stale:
        check_span(doc, 0, 4, "Drag")
    assert stale.value.status == 409
    assert check_span(doc, 0, 4, "Lift").end == 4
    with pytest.raises(NuggetRejected):
        create_nugget(
            q["query"],
            text="x",
            importance="okay",
            evidence=[Span(doc, 0, 99)],
            changed_by=q["owner"],
        )
    with pytest.raises(NuggetRejected):
        create_nugget(q["query"], text="x", importance="important", changed_by=q["owner"])
    with pytest.raises(NuggetRejected):
        create_nugget(q["query"], text="  ", importance="okay", changed_by=q["owner"])
    assert not Nugget.objects.exists() and not NuggetHistory.objects.exists()


def test_a_stale_version_changes_nothing(q):
    nugget = create_nugget(q["query"], text="Lift", importance="okay", changed_by=q["owner"])
    edit_nugget(nugget, changed_by=q["owner"], importance="vital", version=1)
    with pytest.raises(NuggetRejected) as stale:
        edit_nugget(nugget, changed_by=q["adjudicator"], text="Other", version=1)
    assert stale.value.status == 409
    nugget.refresh_from_db()
    assert (nugget.text, nugget.importance, nugget.version) == ("Lift", "vital", 2)
    with pytest.raises(NuggetRejected):
        delete_nugget(nugget, changed_by=q["owner"], version=1)
    assert Nugget.objects.filter(pk=nugget.pk).exists()


def test_merging_across_queries_is_refused(q):
    other = Query.objects.create(project=q["project"], qid="q2", text="Other")
    a = create_nugget(q["query"], text="A", importance="okay", changed_by=q["owner"])
    b = create_nugget(other, text="B", importance="okay", changed_by=q["owner"])
    with pytest.raises(NuggetRejected):
        merge_nuggets(a, [b], changed_by=q["owner"])
    assert Nugget.objects.count() == 2
