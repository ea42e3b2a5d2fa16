"""Two sessions editing one label: a save carrying an outdated version is refused, not lost.

The labelling forms send the version of the label they showed; when the label changed
since (another tab or device), nothing is written and the screen shows the newer grade.
Saves without a version (imports, the API, judges) keep working as before.
"""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotator.evidence import Evidence
from annotator.labels import NO_LABEL, LabelConflict, change_label, label_version
from annotator.models import Judgment, JudgmentHistory

pytestmark = pytest.mark.django_db


def _version(judgment: Judgment | None) -> str:
    if judgment is None:
        return NO_LABEL
    judgment.refresh_from_db()
    return label_version(judgment.updated_at)


def _save(corpus, user, grade, **kwargs):
    return change_label(
        query=corpus["query"],
        annotator=user,
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=grade,
        **kwargs,
    )


# --- the service --------------------------------------------------------------------------


def test_save_with_an_outdated_version_is_refused_and_writes_nothing(personas, corpus):
    anna = personas["annotator"]
    first = _save(corpus, anna, 1).judgment
    seen = _version(first)  # what session A shows
    _save(corpus, anna, 3, version=seen)  # session B changes it
    history = JudgmentHistory.objects.count()
    with pytest.raises(LabelConflict) as raised:
        _save(corpus, anna, 2, version=seen)  # session A, unaware
    assert raised.value.judgment.grade == 3
    assert Judgment.objects.get().grade == 3
    assert JudgmentHistory.objects.count() == history


def test_label_created_meanwhile_is_a_conflict_for_a_screen_that_showed_none(personas, corpus):
    anna = personas["annotator"]
    _save(corpus, anna, 0, version=NO_LABEL)
    with pytest.raises(LabelConflict) as raised:
        _save(corpus, anna, 2, version=NO_LABEL)
    assert raised.value.judgment.grade == 0
    assert Judgment.objects.get().grade == 0


def test_removal_with_an_outdated_version_is_refused(personas, corpus):
    anna = personas["annotator"]
    judgment = _save(corpus, anna, 1).judgment
    seen = _version(judgment)
    _save(corpus, anna, 2)
    with pytest.raises(LabelConflict):
        _save(corpus, anna, None, version=seen)
    assert Judgment.objects.get().grade == 2


def test_save_with_the_current_version_goes_through(personas, corpus):
    anna = personas["annotator"]
    judgment = _save(corpus, anna, 1).judgment
    change = _save(corpus, anna, 2, version=_version(judgment))
    assert change.judgment.grade == 2 and change.history is not None
    assert _save(corpus, anna, 3, version=_version(change.judgment)).judgment.grade == 3


def test_asking_for_what_the_other_session_saved_is_no_conflict(personas, corpus):
    anna = personas["annotator"]
    seen = _version(_save(corpus, anna, 1).judgment)
    _save(corpus, anna, 3)
    change = _save(corpus, anna, 3, version=seen)
    assert change.judgment.grade == 3 and change.history is None


def test_saves_without_a_version_still_overwrite(personas, corpus):
    anna = personas["annotator"]
    _save(corpus, anna, 1)
    _save(corpus, anna, 2)
    assert _save(corpus, anna, 3).judgment.grade == 3


# --- the labelling screen -----------------------------------------------------------------


def judge_url(corpus) -> str:
    return reverse("annotator:label_query_judge", args=["acme", corpus["query"].pk])


def card(client, corpus) -> str:
    response = client.get(judge_url(corpus), {"chunk": corpus["chunk"].pk}, HTTP_HX_REQUEST="true")
    return response.content.decode()


def shown_version(html: str) -> str:
    (version,) = set(re.findall(r'name="version" value="([^"]*)"', html))
    return version


@pytest.fixture
def two_sessions(personas):
    tab_a, tab_b = Client(), Client()
    tab_a.force_login(personas["annotator"])
    tab_b.force_login(personas["annotator"])
    return tab_a, tab_b


def test_the_card_forms_carry_the_labels_version(two_sessions, corpus):
    tab_a, _ = two_sessions
    assert shown_version(card(tab_a, corpus)) == NO_LABEL
    tab_a.post(judge_url(corpus), {"chunk": corpus["chunk"].pk, "grade": 2}, HTTP_HX_REQUEST="true")
    assert shown_version(card(tab_a, corpus)) == _version(Judgment.objects.get())


def test_second_session_sees_the_newer_grade_and_its_grade_is_not_saved(two_sessions, corpus):
    tab_a, tab_b = two_sessions
    version_a = shown_version(card(tab_a, corpus))
    version_b = shown_version(card(tab_b, corpus))
    chunk = corpus["chunk"].pk
    saved = tab_b.post(
        judge_url(corpus),
        {"chunk": chunk, "grade": 3, "version": version_b},
        HTTP_HX_REQUEST="true",
    )
    assert "Saved" in saved.content.decode()
    history = JudgmentHistory.objects.count()
    response = tab_a.post(
        judge_url(corpus),
        {"chunk": chunk, "grade": 1, "version": version_a},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert response.status_code == 200  # htmx swaps in the card as it is now
    assert 'data-grade="3"' in body and 'data-grade="1"' not in body
    assert "changed in another session to 3" in body and "your change was not saved" in body
    assert 'class="save-status floating error"' in body
    # Nothing of ours was logged; the event says the label changed elsewhere, so every
    # region showing it (the document view's buttons, the evidence list) fetches it again.
    event = json.loads(response["HX-Trigger"])["labels-changed"]
    assert event["conflict"] is True and event["history"] is None and event["chunk"] == chunk
    assert Judgment.objects.get().grade == 3
    assert JudgmentHistory.objects.count() == history
    # The answer carries the newer version: grading again now is a deliberate change.
    retry = tab_a.post(
        judge_url(corpus),
        {"chunk": chunk, "grade": 1, "version": shown_version(body)},
        HTTP_HX_REQUEST="true",
    )
    assert "Saved" in retry.content.decode()
    assert Judgment.objects.get().grade == 1


def test_evidence_row_save_with_an_outdated_version_is_refused(two_sessions, personas, corpus):
    tab_a, _ = two_sessions
    judgment = _save(corpus, personas["annotator"], 1).judgment
    seen = _version(judgment)
    _save(corpus, personas["annotator"], 2)
    response = tab_a.post(
        judge_url(corpus), {"judgment": judgment.pk, "grade": 0, "version": seen}
    )  # without htmx: a plain answer saying why
    assert response.status_code == 409
    assert "changed in another session to 2" in response.content.decode()
    assert Judgment.objects.get().grade == 2


def test_conflict_message_is_translated(two_sessions, personas, corpus):
    tab_a, _ = two_sessions
    judgment = _save(corpus, personas["annotator"], 1).judgment
    seen = _version(judgment)
    _save(corpus, personas["annotator"], 2)
    with translation.override("en"):  # the request's language does not outlive it
        response = tab_a.post(
            judge_url(corpus),
            {"judgment": judgment.pk, "grade": 0, "version": seen},
            HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.5",
        )
    assert response.status_code == 409
    assert "另一个会话" in response.content.decode()


def document_view(client, corpus) -> str:
    url = reverse("annotator:label_query_document", args=["acme", corpus["query"].pk])
    return client.get(url, {"document": corpus["document"].pk}).content.decode()


def form_version(html: str, granularity: str) -> str:
    """The version carried by the first grade form for ``granularity`` on the page."""
    found = re.search(
        rf'name="granularity" value="{granularity}">.*?name="version" value="([^"]*)"', html
    )
    return found.group(1)


@pytest.mark.parametrize("granularity", ["page", "document"])
def test_document_view_grade_buttons_carry_the_version(two_sessions, corpus, granularity):
    """The page and whole-document buttons of the document view: before, they carried no
    version, so a second session's grade silently replaced the first's."""
    tab_a, tab_b = two_sessions
    seen = form_version(document_view(tab_a, corpus), granularity)
    assert seen == NO_LABEL
    target = {"granularity": granularity, "document": corpus["document"].pk}
    if granularity == "page":
        target["page"] = 1
    tab_b.post(judge_url(corpus), {**target, "grade": 3, "version": seen}, HTTP_HX_REQUEST="true")
    response = tab_a.post(
        judge_url(corpus), {**target, "grade": 0, "version": seen}, HTTP_HX_REQUEST="true"
    )
    assert "changed in another session to 3" in response.content.decode()
    assert list(Judgment.objects.values_list("granularity", "grade")) == [(granularity, 3)]
    assert form_version(document_view(tab_a, corpus), granularity) == _version(
        Judgment.objects.get()
    )


# --- undo is checked like a save ------------------------------------------------------------


def _undo(client, corpus, **target):
    return client.post(judge_url(corpus), {"action": "undo", **target}, HTTP_HX_REQUEST="true")


@pytest.mark.parametrize("named_by", ["action", "history"])
def test_undo_of_a_label_changed_in_another_session_is_refused(two_sessions, corpus, named_by):
    """Tab A grades 1, tab B changes it to 3 with its version, tab A undoes: before, the
    undo deleted the label and B's grade was lost without a word."""
    tab_a, tab_b = two_sessions
    chunk = corpus["chunk"].pk
    tab_a.post(
        judge_url(corpus),
        {"chunk": chunk, "grade": 1, "version": NO_LABEL, "action_id": "a1a1a1a1"},
        HTTP_HX_REQUEST="true",
    )
    graded = JudgmentHistory.objects.get()
    tab_b.post(
        judge_url(corpus),
        {"chunk": chunk, "grade": 3, "version": shown_version(card(tab_b, corpus))},
        HTTP_HX_REQUEST="true",
    )
    history = JudgmentHistory.objects.count()
    target = {"action_id": "a1a1a1a1"} if named_by == "action" else {"history": graded.pk}
    response = _undo(tab_a, corpus, **target)
    body = response.content.decode()
    assert response.status_code == 200
    assert "changed in another session to 3" in body and "nothing was undone" in body
    assert 'class="save-status floating error"' in body
    assert Judgment.objects.get().grade == 3
    assert JudgmentHistory.objects.count() == history
    event = json.loads(response["HX-Trigger"])["labels-changed"]
    assert event["conflict"] is True and event["chunk"] == chunk


def test_undo_names_the_action_it_reverses_not_the_newest_change(two_sessions, personas, corpus):
    """The screen sends the id of the action undo is for, even one whose save had not
    answered when undo was pressed: the change that action made is reversed, no other."""
    tab_a, _ = two_sessions
    other = corpus["chunk"].__class__.objects.create(
        chunking=corpus["chunking"], chunk_id="d1#1", document=corpus["document"], start=0, end=5
    )
    for chunk, grade, action in ((other.pk, 3, "0000aaaa"), (corpus["chunk"].pk, 1, "0000bbbb")):
        tab_a.post(
            judge_url(corpus),
            {"chunk": chunk, "grade": grade, "action_id": action, "pos": 7},
            HTTP_HX_REQUEST="true",
        )
    assert JudgmentHistory.objects.get(action_id="0000bbbb").new_grade == 1
    response = _undo(tab_a, corpus, action_id="0000bbbb", pos=8)
    body = response.content.decode()
    assert "Undone on card 8: no grade any more." in body
    assert list(Judgment.objects.values_list("chunk_id", "grade")) == [(other.pk, 3)]
    event = json.loads(response["HX-Trigger"])["labels-changed"]
    assert event["undone"] == JudgmentHistory.objects.get(action_id="0000bbbb").pk
    # An undo is not an action of its own: it carries no action id.
    assert JudgmentHistory.objects.order_by("-pk")[0].action_id == ""


def test_undo_of_an_action_that_changed_nothing_says_so(two_sessions, personas, corpus):
    tab_a, _ = two_sessions
    _save(corpus, personas["annotator"], 2)
    # The same grade again changes nothing and logs nothing; so does a failed save.
    tab_a.post(
        judge_url(corpus),
        {"chunk": corpus["chunk"].pk, "grade": 2, "action_id": "cccc0000"},
        HTTP_HX_REQUEST="true",
    )
    response = _undo(tab_a, corpus, action_id="cccc0000")
    assert response.status_code == 200
    assert "Nothing to undo: your last action did not change a label." in response.content.decode()
    assert "HX-Trigger" not in response
    assert Judgment.objects.get().grade == 2


def test_undo_names_the_evidence_it_changed(two_sessions, personas, corpus):
    tab_a, _ = two_sessions
    document = corpus["document"]
    tab_a.post(
        judge_url(corpus),
        {"granularity": "page", "document": document.pk, "page": 2, "grade": 2},
        HTTP_HX_REQUEST="true",
    )
    tab_a.post(
        judge_url(corpus),
        {"granularity": "page", "document": document.pk, "page": 2, "grade": 3},
        HTTP_HX_REQUEST="true",
    )
    last = JudgmentHistory.objects.order_by("-pk")[0].pk
    body = _undo(tab_a, corpus, history=last).content.decode()
    title = "Wings &amp; &lt;b&gt;lift&lt;/b&gt;"
    assert f"Undone on page 2 of {title}: back to 2 · Partially answers." in body
