"""Quality grades on the labelling screens: every card (and the document view) shows the
grade of its source, set by a second row of keys posted to ``quality:label_query_quality``;
a site's grade shows on every card of that site; history, undo by the undo key's action id,
refused stale versions, blind labelling, assignments and permissions as for relevance."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.urls import reverse

from annotator.models import Assignment, Chunk, Chunking, Document, Query
from metrics.models import Run
from quality.dimensions import offer_source_quality
from quality.grades import QualitySource, change_quality, quality_version
from quality.models import QualityDimension, QualityGrade, QualityHistory

pytestmark = pytest.mark.django_db

SITES = {"a1": "court-a", "a2": "court-a", "b": "court-b", "x": None}


@pytest.fixture
def screen(personas):
    """Four documents, one chunk each, all in the pool of one query: two of site court-a,
    one of court-b, one naming no site; the default dimension graded per site."""
    project = personas["project"]
    chunking = Chunking.objects.create(project=project, name="whole")
    documents, chunks = {}, []
    for doc_id, site in SITES.items():
        text = f"Judgement {doc_id}: the court held that the contract was void."
        documents[doc_id] = Document.objects.create(
            project=project,
            doc_id=doc_id,
            title=f"Case {doc_id}",
            text=text,
            metadata={"site": site} if site else {},
        )
        chunks.append(
            Chunk.objects.create(
                chunking=chunking,
                chunk_id=f"{doc_id}#0",
                document=documents[doc_id],
                start=0,
                end=len(text),
            )
        )
    query = Query.objects.create(project=project, qid="q1", text="Is the contract void?")
    run = Run(project=project, name="bm25", level="chunk", chunking=chunking)
    run.set_results(
        np.full(len(chunks), query.pk),
        np.array([c.pk for c in chunks]),
        np.arange(len(chunks), 0, -1, dtype=float),
    )
    run.save()
    assignment = Assignment.objects.create(
        project=project, query=query, annotator=personas["annotator"]
    )
    dimension = offer_source_quality(project)
    return {
        "project": project,
        "query": query,
        "documents": documents,
        "dimension": dimension,
        "assignment": assignment,
    }


def quality_url(screen) -> str:
    return reverse("quality:label_query_quality", args=["acme", screen["query"].pk])


def label_url(screen) -> str:
    return reverse("annotator:label_query", args=["acme", screen["query"].pk])


def judge_url(screen) -> str:
    return reverse("annotator:label_query_judge", args=["acme", screen["query"].pk])


def post_grade(client, screen, doc_id: str, grade, **extra):
    data = {
        "dimension": "source_quality",
        "document": screen["documents"][doc_id].pk,
        "grade": grade,
        **extra,
    }
    return client.post(quality_url(screen), data, HTTP_HX_REQUEST="true")


def shown_grades(body: str) -> dict[str, str | None]:
    """Each card's shown quality grade, by document id (the cards' order is shuffled)."""
    found = {}
    for card in re.findall(r'<article class="candidate.*?</article>', body, re.S):
        doc_id = re.search(r'data-doc-id="([^"]+)"', card).group(1)
        grade = re.search(r'class="quality-row[^"]*"[^>]*data-quality-grade="(\d)"', card)
        found[doc_id] = grade.group(1) if grade else None
    return found


def event(response, name="quality-changed") -> dict:
    return json.loads(response["HX-Trigger"])[name]


def test_every_card_shows_the_quality_row_with_its_shift_keys(login, personas, screen):
    body = login(personas["annotator"]).get(label_url(screen)).content.decode()
    assert shown_grades(body) == dict.fromkeys(SITES)
    assert body.count('class="quality-form"') == 3  # the document naming no site has none
    assert "names no site (field site)" in body
    assert '<kbd class="shift-key">⇧3</kbd>' in body
    assert 'id="quality-keys"' in body and "grade the source: Source quality" in body
    assert "site court-a" in body


def test_a_site_grade_shows_on_every_card_of_that_site(login, personas, screen):
    client = login(personas["annotator"])
    response = post_grade(client, screen, "a1", 2, action_id="00aa11bb22cc")
    assert response.status_code == 200
    grade = QualityGrade.objects.get()
    assert (grade.site, grade.document_id, grade.grade) == ("court-a", None, 2)
    history = QualityHistory.objects.get()
    assert (history.event, history.new_grade, history.action_id) == ("create", 2, "00aa11bb22cc")
    detail = event(response)
    assert detail["token"] == "source_quality|site:court-a"
    assert detail["history"] == history.pk and detail["version"] == quality_version(grade)
    # The answer is the row again, pressed at 2, and the status line says so.
    body = response.content.decode()
    assert 'data-quality-grade="2"' in body and "Saved: Source quality of site court-a 2" in body
    assert 'hx-swap-oob="true"' in body
    page = client.get(label_url(screen)).content.decode()
    assert shown_grades(page) == {"a1": "2", "a2": "2", "b": None, "x": None}
    # The other card of the site, refreshed on the event, shows it too.
    other = client.get(quality_url(screen), {"document": screen["documents"]["a2"].pk})
    assert 'data-quality-grade="2"' in other.content.decode()


def test_the_document_view_shows_and_sets_the_grade(login, personas, screen):
    client = login(personas["annotator"])
    post_grade(client, screen, "a2", 3)
    url = reverse("annotator:label_query_document", args=["acme", screen["query"].pk])
    body = client.get(url, {"document": screen["documents"]["a1"].pk}).content.decode()
    assert 'class="quality-part' in body and 'data-quality-grade="3"' in body


def test_a_grade_adds_the_seconds_to_the_assignment(login, personas, screen):
    post_grade(login(personas["annotator"]), screen, "b", 1, elapsed="4.5")
    screen["assignment"].refresh_from_db()
    assert screen["assignment"].time_spent_seconds == pytest.approx(4.5)


def test_the_undo_key_undoes_the_last_quality_action(login, personas, screen):
    client = login(personas["annotator"])
    post_grade(client, screen, "a1", 1, action_id="0000000000a1")
    post_grade(client, screen, "a2", 3, action_id="0000000000a2")  # same site: 1 → 3
    assert QualityGrade.objects.get().grade == 3
    undo = client.post(
        judge_url(screen), {"action": "undo", "action_id": "0000000000a2"}, HTTP_HX_REQUEST="true"
    )
    assert undo.status_code == 200
    assert QualityGrade.objects.get().grade == 1
    detail = event(undo)
    assert detail["token"] == "source_quality|site:court-a" and detail["undone"] is not None
    assert "Undone: Source quality of site court-a back to 1" in undo.content.decode()
    client.post(
        judge_url(screen), {"action": "undo", "action_id": "0000000000a1"}, HTTP_HX_REQUEST="true"
    )
    assert not QualityGrade.objects.exists()
    # Every change kept: create, update, and the two undos.
    assert list(QualityHistory.objects.values_list("event", flat=True)) == [
        "create",
        "update",
        "update",
        "delete",
    ]
    # An action that changed nothing is still nothing to undo.
    nothing = client.post(
        judge_url(screen), {"action": "undo", "action_id": "00000000ffff"}, HTTP_HX_REQUEST="true"
    )
    assert "Nothing to undo" in nothing.content.decode()


def test_undo_of_a_grade_changed_in_another_session_is_refused(login, personas, screen):
    client = login(personas["annotator"])
    post_grade(client, screen, "b", 1, action_id="0000000000b1")
    change_quality(
        dimension=screen["dimension"],
        annotator=personas["annotator"],
        source=QualitySource(site="court-b"),
        grade=0,
    )
    undo = client.post(
        judge_url(screen), {"action": "undo", "action_id": "0000000000b1"}, HTTP_HX_REQUEST="true"
    )
    assert "changed in another session to 0" in undo.content.decode()
    assert QualityGrade.objects.get().grade == 0
    assert event(undo)["conflict"] is True


def test_a_stale_version_is_refused_and_the_saved_grade_shown(login, personas, screen):
    client = login(personas["annotator"])
    first = post_grade(client, screen, "a1", 2, version="none")
    assert first.status_code == 200
    # Another session (the second card of the site, shown before) still holds "none".
    stale = post_grade(client, screen, "a2", 0, version="none")
    assert stale.status_code == 200
    body = stale.content.decode()
    assert "changed in another session to 2" in body and 'data-quality-grade="2"' in body
    assert 'class="refused"' in body
    assert QualityGrade.objects.get().grade == 2
    assert QualityHistory.objects.count() == 1
    assert event(stale)["conflict"] is True
    # With the version the refreshed row carries, the save goes through.
    version = quality_version(QualityGrade.objects.get())
    assert post_grade(client, screen, "a2", 0, version=version).status_code == 200
    assert QualityGrade.objects.get().grade == 0


def test_blind_labelling_hides_other_peoples_grades(login, personas, screen):
    post_grade(login(personas["annotator"]), screen, "b", 3)
    arno = login(personas["annotator2"]).get(label_url(screen)).content.decode()
    assert shown_grades(arno)["b"] is None and "quality-others" not in arno
    owner = login(personas["owner"]).get(label_url(screen)).content.decode()
    assert shown_grades(owner)["b"] is None  # not the owner's own grade
    assert re.search(r'class="quality-others">Others: <span class="other">anna', owner)


def test_bad_grades_are_refused_with_nothing_written(login, personas, screen):
    client = login(personas["annotator"])
    assert post_grade(client, screen, "a1", 4).status_code == 400  # beyond 0–3
    assert post_grade(client, screen, "a1", "x").status_code == 400
    assert post_grade(client, screen, "a1", 1, dimension="nope").status_code == 400
    no_site = post_grade(client, screen, "x", 1)
    assert no_site.status_code == 400 and "names no site" in no_site.content.decode()
    other = Document.objects.create(project=personas["other"], doc_id="o", text="t")
    assert post_grade(client, screen, "a1", 1, document=other.pk).status_code == 404
    assert not QualityGrade.objects.exists() and not QualityHistory.objects.exists()


def test_viewers_cannot_grade_and_outsiders_see_nothing(login, personas, screen):
    viewer = login(personas["viewer"])
    assert post_grade(viewer, screen, "a1", 1).status_code == 403
    body = viewer.get(label_url(screen)).content.decode()
    assert 'class="quality-form"' not in body and 'class="quality-part' in body
    outsider = login(personas["outsider"])
    assert post_grade(outsider, screen, "a1", 1).status_code == 404
    assert outsider.get(quality_url(screen)).status_code == 404
    assert not QualityGrade.objects.exists()


def test_removing_a_grade_is_a_logged_change(login, personas, screen):
    client = login(personas["annotator"])
    post_grade(client, screen, "b", 2)
    removed = client.post(
        quality_url(screen),
        {
            "dimension": "source_quality",
            "document": screen["documents"]["b"].pk,
            "action": "delete",
        },
        HTTP_HX_REQUEST="true",
    )
    assert removed.status_code == 200 and not QualityGrade.objects.exists()
    assert QualityHistory.objects.last().event == "delete"


def test_several_dimensions_each_get_a_row_and_the_keys_choose(login, personas, screen):
    QualityDimension.objects.create(
        project=screen["project"],
        key="freshness",
        name="Freshness",
        name_zh="时效",
        max_grade=2,
        labels=["Old", "Recent", "Current"],
        unit="document",
    )
    client = login(personas["annotator"])
    body = client.get(label_url(screen)).content.decode()
    assert 'data-dimensions="source_quality freshness"' in body
    assert 'id="quality-dimension"' in body and "next quality dimension" in body
    assert body.count('data-dimension="freshness" data-token="freshness|doc:') == 4
    response = post_grade(client, screen, "x", 2, dimension="freshness")
    assert response.status_code == 200
    assert event(response)["token"] == f"freshness|doc:{screen['documents']['x'].pk}"
    assert QualityGrade.objects.get().document == screen["documents"]["x"]
    assert post_grade(client, screen, "x", 3, dimension="freshness").status_code == 400


def test_the_cards_and_rows_speak_chinese(login, personas, screen):
    client = login(personas["annotator"])
    client.cookies["django_language"] = "zh-hans"
    post_grade(client, screen, "a1", 3)
    body = client.get(label_url(screen), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "来源质量" in body and "权威" in body
    assert "names no site" not in body and "grade the source" not in body
