"""A note on a card not graded yet is kept by the server until the card's first grade."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.models import Judgment, JudgmentHistory, KeptNote
from tests.test_labelling_views import grade_chunk, judge_url

pytestmark = pytest.mark.django_db


def keep(client, corpus, note):
    data = {"chunk": corpus["chunk"].pk, "action": "keep", "note": note}
    return client.post(judge_url(corpus), data, HTTP_HX_REQUEST="true")


def screen(client, corpus) -> str:
    url = reverse("annotator:label_query", args=["acme", corpus["query"].pk])
    return client.get(url).content.decode()


def test_a_kept_note_survives_a_reload_and_goes_with_the_first_grade(login, personas, corpus):
    client = login(personas["annotator"])
    answer = keep(client, corpus, "Only the title matches.")
    assert answer.status_code == 200 and "Note kept" in answer.content.decode()
    assert not Judgment.objects.exists()
    assert KeptNote.objects.get().text == "Only the title matches."
    assert "Only the title matches.</textarea>" in screen(client, corpus)
    assert grade_chunk(client, corpus, 1).status_code == 200
    judgment = Judgment.objects.get()
    assert (judgment.grade, judgment.note) == (1, "Only the title matches.")
    assert JudgmentHistory.objects.get().new_note == "Only the title matches."
    assert not KeptNote.objects.exists()


def test_a_note_given_with_the_grade_wins_and_an_empty_note_drops_the_kept_one(
    login, personas, corpus
):
    client = login(personas["annotator"])
    keep(client, corpus, "first thought")
    keep(client, corpus, "second thought")
    assert list(KeptNote.objects.values_list("text", flat=True)) == ["second thought"]
    keep(client, corpus, "  ")
    assert not KeptNote.objects.exists()
    keep(client, corpus, "kept")
    grade_chunk(client, corpus, 2, note="typed with the grade")
    assert Judgment.objects.get().note == "typed with the grade"
    assert not KeptNote.objects.exists()


def test_keeping_a_note_on_a_graded_card_is_a_logged_change(login, personas, corpus):
    client = login(personas["annotator"])
    grade_chunk(client, corpus, 3)
    answer = keep(client, corpus, "later note")
    assert answer.status_code == 200 and "labels-changed" in answer["HX-Trigger"]
    judgment = Judgment.objects.get()
    assert (judgment.grade, judgment.note) == (3, "later note")
    assert JudgmentHistory.objects.count() == 2 and not KeptNote.objects.exists()


def test_kept_notes_are_the_annotators_own(login, personas, corpus):
    keep(login(personas["annotator"]), corpus, "anna's thought")
    other = screen(login(personas["annotator2"]), corpus)
    assert "anna&#x27;s thought" not in other and "anna's thought" not in other


def test_viewers_cannot_keep_notes_and_a_grade_left_empty_is_400(login, personas, corpus):
    assert keep(login(personas["viewer"]), corpus, "x").status_code == 403
    client = login(personas["annotator"])
    # Before, an empty grade reached the labels service and answered 500.
    assert grade_chunk(client, corpus, "").status_code == 400
    assert not KeptNote.objects.exists() and not Judgment.objects.exists()


def test_a_note_kept_on_a_card_then_covered_by_a_passage_is_listed_for_the_lead(
    login, personas, corpus
):
    """The card was noted without a grade, then a passage covered it: the card counts as
    judged and is never graded, so the note never reached a label; leads see it listed,
    with the label that covers it."""
    client = login(personas["annotator"])
    keep(client, corpus, "The second page says it outright.")
    text = corpus["document"].text
    start = text.index("第二页")
    client.post(
        judge_url(corpus),
        {
            "granularity": "passage",
            "document": corpus["document"].pk,
            "start": start,
            "end": start + 6,
            "text": text[start : start + 6],
            "grade": 3,
        },
        HTTP_HX_REQUEST="true",
    )
    assert KeptNote.objects.count() == 1 and Judgment.objects.get().note == ""
    url = reverse("annotator:query_detail", args=["acme", corpus["query"].pk])
    for persona in ("owner", "adjudicator", "annotator"):
        body = login(personas[persona]).get(url).content.decode()
        section = body.split('id="kept-notes"')[1]
        assert "The second page says it outright." in section, persona
        assert f"passage {start}–{start + 6}" in section and 'class="grade g3"' in section
    assert "anna" in login(personas["owner"]).get(url).content.decode().split('id="kept-notes"')[1]
    # Another annotator sees nothing of it (labelling is blind).
    other = login(personas["annotator2"]).get(url).content.decode()
    assert "kept-notes" not in other and "says it outright" not in other
