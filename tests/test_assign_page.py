"""The assignments page: typed ids, unknown ids, an even batch, the summary, confirmation."""

from __future__ import annotations

from collections import Counter

import pytest
from django.urls import reverse

from annotator import assignments as work
from annotator.models import Assignment, Query

pytestmark = pytest.mark.django_db


@pytest.fixture
def queries(personas):
    project = personas["project"]
    return [
        Query.objects.create(project=project, qid=str(i), text=f"query {i}") for i in range(1, 46)
    ]


@pytest.fixture
def owner(login, personas):
    return login(personas["owner"])


def url():
    return reverse("annotator:assign", args=["acme"])


def post(client, htmx=True, **data):
    extra = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "assign-form"} if htmx else {}
    return client.post(url(), data, **extra)


def assigned_qids():
    return sorted(int(q) for q in Assignment.objects.values_list("query__qid", flat=True))


def test_typed_ids_win_over_all_queries(owner, personas, queries):
    response = post(
        owner,
        scope="all",
        qids="40 41",
        mode="each",
        annotators=[personas["annotator"].pk],
    )
    assert response.status_code == 200
    assert assigned_qids() == [40, 41]
    assert "2 assignments added (2 queries)." in response.content.decode()


def test_typed_ids_and_a_tag_are_refused_and_nothing_is_written(owner, personas, queries):
    Query.objects.filter(qid="3").update(tags=["x"])
    response = post(
        owner, scope="tag", tag="x", qids="40", mode="each", annotators=[personas["annotator"].pk]
    )
    assert response.status_code == 400
    assert "either by tag or by ids, not both" in response.content.decode()
    assert not Assignment.objects.exists()


@pytest.mark.parametrize("htmx", [True, False])
def test_unknown_ids_are_shown_in_the_form_with_the_input_kept(owner, personas, queries, htmx):
    response = post(
        owner,
        htmx=htmx,
        scope="qids",
        qids="40 nope 41 zzz",
        mode="each",
        annotators=[personas["annotator"].pk],
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    form = body[body.index('<form id="assign-form"') :]
    assert "Unknown query ids: nope, zzz" in form
    assert 'class="errorlist' in form
    assert "40 nope 41 zzz</textarea>" in form  # what was typed is still there
    assert ("<html" in body) is not htmx  # htmx: the form alone, swapped in place
    assert "data-swap-errors" in form
    assert not Assignment.objects.exists()


def test_spread_evenly_spreads_the_batch(owner, personas, queries):
    anna, arno, adam = personas["annotator"], personas["annotator2"], personas["adjudicator"]
    # Arno and Adam are busy elsewhere; Anna has nothing. The batch still goes 3, 3, 3.
    work.assign_each(personas["project"], [q.pk for q in queries[:20]], [arno.pk, adam.pk], None)
    response = post(
        owner,
        scope="qids",
        qids=" ".join(str(i) for i in range(31, 40)),
        mode="even",
        per_query=1,
        annotators=[anna.pk, arno.pk, adam.pk],
    )
    assert response.status_code == 200
    batch = Assignment.objects.filter(query__qid__in=[str(i) for i in range(31, 40)])
    assert Counter(batch.values_list("annotator_id", flat=True)) == {
        anna.pk: 3,
        arno.pk: 3,
        adam.pk: 3,
    }


def test_apply_tells_the_summary_and_team_to_refresh(owner, personas, queries):
    page = owner.get(url()).content.decode()
    assert "45 queries, 45 without anybody assigned." in page
    for region in ('id="assign-summary"', 'id="assign-team"'):
        tag = page[page.index(region) - 10 : page.index(">", page.index(region))]
        assert 'hx-trigger="assignments-changed from:body"' in tag, region
    response = post(
        owner, scope="qids", qids="1 2 3", mode="each", annotators=[personas["annotator"].pk]
    )
    assert response["HX-Trigger"] == "assignments-changed"
    summary = owner.get(url(), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="assign-summary")
    assert summary.content.decode().startswith('<p id="assign-summary"')
    assert "45 queries, 42 without anybody assigned." in summary.content.decode()
    team = owner.get(url(), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="assign-team")
    assert team.content.decode().startswith('<section id="assign-team"')
    assert "anna" in team.content.decode()


@pytest.mark.parametrize("htmx", [True, False])
def test_taking_back_every_query_asks_first(owner, personas, queries, htmx):
    anna = personas["annotator"]
    work.assign_each(personas["project"], [q.pk for q in queries], [anna.pk], None)
    data = {"scope": "all", "mode": "remove", "annotators": [anna.pk]}
    asked = post(owner, htmx=htmx, **data)
    assert asked.status_code == 200
    body = asked.content.decode()
    assert "This takes back the unfinished assignments of all 45 queries" in body
    assert 'name="confirm" value="1"' in body
    assert Assignment.objects.count() == 45  # nothing taken back yet
    done = post(owner, htmx=htmx, confirm="1", **data)
    assert done.status_code == (200 if htmx else 302)
    assert not Assignment.objects.exists()


def test_taking_back_typed_ids_needs_no_question(owner, personas, queries):
    anna = personas["annotator"]
    work.assign_each(personas["project"], [q.pk for q in queries[:3]], [anna.pk], None)
    response = post(owner, scope="qids", qids="1 2", mode="remove", annotators=[anna.pk])
    assert "2 unfinished assignments taken back (2 queries)." in response.content.decode()
    assert assigned_qids() == [3]


@pytest.mark.parametrize(
    "language,expected",
    [
        ("en", "1 unfinished assignment taken back (1 query)."),
        ("zh-CN", "已收回 1 个未完成的分配（1 个查询）。"),
    ],
)
def test_one_assignment_is_counted_in_the_singular(owner, personas, queries, language, expected):
    """Before: "1 unfinished assignments taken back (1 queries).\""""
    anna = personas["annotator"]
    work.assign_each(personas["project"], [queries[0].pk], [anna.pk], None)
    data = {"scope": "qids", "qids": "1", "mode": "remove", "annotators": [anna.pk]}
    response = owner.post(
        url(),
        data,
        HTTP_HX_REQUEST="true",
        HTTP_HX_TARGET="assign-form",
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert expected in response.content.decode()
