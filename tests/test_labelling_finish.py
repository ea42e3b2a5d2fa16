"""The labelling screens finished: card numbers, notes without a grade, human wording."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from django.utils import translation

from annotator.evidence import Evidence
from annotator.labelling.screen import duration
from annotator.labels import change_label
from annotator.models import Assignment, Query
from annotator.search import highlight

pytestmark = pytest.mark.django_db

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
POSITIONS = re.compile(r'<span class="cand-pos">(\d*)</span>')


def label_url(corpus):
    return reverse("annotator:label_query", args=["acme", corpus["query"].pk])


def judge_url(corpus):
    return reverse("annotator:label_query_judge", args=["acme", corpus["query"].pk])


def test_a_graded_card_keeps_its_number(login, personas, corpus):
    client = login(personas["annotator"])
    body = client.get(label_url(corpus)).content.decode()
    assert POSITIONS.findall(body) == ["1"]  # numbered by the server, not by CSS counters
    assert f"?chunk={corpus['chunk'].pk}&amp;pos=1" in body  # the refresh asks for it again
    assert '<input type="hidden" name="pos" value="1">' in body  # and so does the grade form
    answer = client.post(
        judge_url(corpus),
        {"chunk": corpus["chunk"].pk, "grade": 2, "pos": 7},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert POSITIONS.findall(answer) == ["7"]
    refreshed = client.get(judge_url(corpus), {"chunk": corpus["chunk"].pk, "pos": 4})
    assert POSITIONS.findall(refreshed.content.decode()) == ["4"]
    assert client.get(judge_url(corpus), {"chunk": corpus["chunk"].pk, "pos": 0}).status_code == 400


def test_note_on_an_ungraded_card_needs_no_dropdown(login, personas, corpus):
    client = login(personas["annotator"])
    body = client.get(label_url(corpus)).content.decode()
    note_form = body[body.index('class="note-form"') :]
    note_form = note_form[: note_form.index("</form>")]
    assert "<select" not in note_form and "required" not in note_form
    assert note_form.count('name="grade"') == 4  # the grade buttons: the note goes with one
    # The note and the grade arrive together (as from the buttons, or a kept note).
    client.post(
        judge_url(corpus),
        {"chunk": corpus["chunk"].pk, "grade": 1, "note": "Only the title matches."},
        HTTP_HX_REQUEST="true",
    )
    after = client.get(label_url(corpus)).content.decode()
    assert "Only the title matches." in after


def test_evidence_rows_say_characters_not_raw_offsets(login, personas, corpus):
    change_label(
        query=corpus["query"],
        annotator=personas["annotator"],
        evidence=Evidence.for_passage(corpus["document"], 6, 10),
        grade=2,
    )
    client = login(personas["annotator"])
    doc = reverse("annotator:label_query_document", args=["acme", corpus["query"].pk])
    body = client.get(f"{doc}?document={corpus['document'].pk}").content.decode()
    assert "characters 6–10" in body and "[6, 10)" not in body
    assert "Page 1 of 2" in body
    head = re.search(r'<div class="ev-head">(.*?)</div>', body, re.S).group(1)
    assert "·" not in head  # separators come from CSS between the items present
    zh = client.get(f"{doc}?document={corpus['document'].pk}", **ZH).content.decode()
    assert "第 6–10 个字符" in zh
    query_page = reverse("annotator:query_detail", args=["acme", corpus["query"].pk])
    assert "[6, 10)" not in client.get(query_page).content.decode()


def test_times_say_their_units():
    assert [duration(s) for s in (0, 29, 65, 120, 3725)] == [
        "0 s",
        "29 s",
        "1 min 5 s",
        "2 min",
        "1 h 2 min",
    ]
    with translation.override("zh-hans"):
        assert duration(65) == "1 分 5 秒"


def test_search_highlights_whole_words_and_chinese_as_it_is():
    hits = [p for p, hit in highlight("owing the wing; Wing-tips and wings", ["wing"]) if hit]
    assert hits == ["wing", "Wing"]
    assert [p for p, hit in highlight("飞机的机翼产生升力", ["机翼"]) if hit] == ["机翼"]
    assert [p for p, hit in highlight("AI模型与AIs", ["AI"]) if hit] == ["AI"]


def test_long_queries_are_collapsed_with_a_control(login, personas, corpus):
    client = login(personas["annotator"])
    body = client.get(label_url(corpus)).content.decode()
    assert 'class="query-text clamp"' in body
    assert "data-clamp-toggle" in body and "Show the whole query" in body
    assert "<script>" not in body.split('id="query-text"')[1][:500]


def test_query_page_links_to_labelling_and_project_home_starts_it(login, personas, corpus):
    Assignment.objects.create(
        project=personas["project"], query=corpus["query"], annotator=personas["annotator"]
    )
    client = login(personas["annotator"])
    query_page = reverse("annotator:query_detail", args=["acme", corpus["query"].pk])
    assert f'href="{label_url(corpus)}"' in client.get(query_page).content.decode()
    home = client.get(reverse("annotator:project_detail", args=["acme"])).content.decode()
    assert 'id="start-labelling"' in home and f'href="{label_url(corpus)}"' in home
    viewer = login(personas["viewer"])
    home = viewer.get(reverse("annotator:project_detail", args=["acme"])).content.decode()
    assert 'id="start-labelling"' not in home


def test_a_query_outside_the_queue_can_be_added_to_it(login, personas, corpus):
    other = Query.objects.create(project=personas["project"], qid="q2", text="Drag?")
    status = reverse("annotator:label_query_status", args=["acme", other.pk])
    client = login(personas["annotator"])
    page = client.get(reverse("annotator:label_query", args=["acme", other.pk])).content.decode()
    assert 'id="claim-button"' in page
    answer = client.post(status, {"action": "claim"}, HTTP_HX_REQUEST="true").content.decode()
    assert Assignment.objects.filter(query=other, annotator=personas["annotator"]).exists()
    assert 'id="done-button"' in answer and 'id="claim-button"' not in answer
    viewer = login(personas["viewer"])
    assert viewer.post(status, {"action": "claim"}).status_code == 403
    assert not Assignment.objects.filter(query=other, annotator=personas["viewer"]).exists()
    page = viewer.get(reverse("annotator:label_query", args=["acme", other.pk])).content.decode()
    assert 'id="claim-button"' not in page and "has no queue" in page


def test_default_grade_labels_and_roles_in_the_users_language(login, personas, corpus):
    client = login(personas["owner"])
    home = client.get(reverse("annotator:project_detail", args=["acme"]), **ZH).content.decode()
    assert "完全回答" in home and "Fully answers" not in home
    listing = client.get(reverse("annotator:project_list"), **ZH).content.decode()
    assert "所有者" in listing and ">owner<" not in listing
    project = personas["project"]
    project.grade_label_3 = "Answers it all"  # changed by the owner: shown as written
    project.save()
    home = client.get(reverse("annotator:project_detail", args=["acme"]), **ZH).content.decode()
    assert "Answers it all" in home and "部分回答" in home


def test_the_candidate_chunk_is_one_box_in_the_document_view(login, personas, corpus):
    client = login(personas["annotator"])
    doc = reverse("annotator:label_query_document", args=["acme", corpus["query"].pk])
    body = client.get(f"{doc}?document={corpus['document'].pk}&at=6&end=10").content.decode()
    assert body.count('class="focus focus-run"') == 1  # 6–10 cuts a line: a band, one span
    assert 'class="seg focus"' not in body
    lines = client.get(f"{doc}?document={corpus['document'].pk}&at=0&end=52").content.decode()
    assert lines.count('class="focus focus-lines"') == 1  # whole lines: one box
