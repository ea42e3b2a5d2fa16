"""Adjudication queue and gold-set pages: both renderings, writes, and who may write."""

import pytest
from django.test import Client
from django.urls import reverse

from annotator.evidence import Evidence
from annotator.labels import change_label
from gold.models import Adjudication, GoldSet
from gold.services import ConsensusPolicy, freeze_gold_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def disagreement(personas, corpus):
    evidence = Evidence.for_chunk(corpus["chunk"])
    query = corpus["query"]
    change_label(
        query=query,
        annotator=personas["annotator"],
        evidence=evidence,
        grade=3,
        note="clearly <b>answers</b>",
    )
    change_label(query=query, annotator=personas["annotator2"], evidence=evidence, grade=0)
    return {"query": query.pk, "level": "c256", "unit": "d1#0"}


def test_queue_lists_disagreements_side_by_side(login, personas, disagreement):
    client = login(personas["adjudicator"])
    url = reverse("gold:queue", args=["acme"])
    body = client.get(url).content.decode()  # documents by default: the chunk is all of d1
    assert "<html" in body and "1 disputed unit" in body and 'data-unit="d1"' in body
    assert "anna" in body and "arno" in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body  # evidence text is escaped
    partial = client.get(
        url, {"rule": "spread2", "level": "c256"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in partial and "1 disputed unit" in partial
    assert 'data-unit="d1#0"' in partial


def test_queue_rule_filters(login, personas, corpus):
    evidence = Evidence.for_chunk(corpus["chunk"])
    change_label(query=corpus["query"], annotator=personas["annotator"], evidence=evidence, grade=2)
    change_label(
        query=corpus["query"], annotator=personas["annotator2"], evidence=evidence, grade=3
    )
    client = login(personas["owner"])
    url = reverse("gold:queue", args=["acme"])
    assert "1 disputed unit" in client.get(url, {"rule": "any"}).content.decode()
    assert "0 disputed units" in client.get(url, {"rule": "relevance"}).content.decode()
    assert "0 disputed units" in client.get(url, {"rule": "spread2"}).content.decode()


@pytest.mark.parametrize("bad", [{"rule": "loud"}, {"level": "nope"}, {"mapping": "most"}])
def test_bad_queue_filter_is_400(login, personas, bad):
    client = login(personas["adjudicator"])
    assert client.get(reverse("gold:queue", args=["acme"]), bad).status_code == 400


def test_adjudicate_in_place_with_htmx_and_without(login, personas, disagreement):
    client = login(personas["adjudicator"])
    url = reverse("gold:adjudicate", args=["acme"])
    response = client.post(
        url, {**disagreement, "grade": 2, "reason": "partly"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "<html" not in body and "Saved" in body and "Final grade 2" in body
    response = client.post(url, {**disagreement, "grade": 3, "reason": "fully"})
    assert response.status_code == 302
    adjudication = Adjudication.objects.get()
    assert (adjudication.grade, adjudication.reason) == (3, "fully")
    assert adjudication.history.count() == 2
    queue = reverse("gold:queue", args=["acme"])
    unresolved = client.get(queue, {"unresolved": "1", "level": "c256"})
    assert "0 disputed units" in unresolved.content.decode()
    resolved = client.get(queue, {"level": "c256"}).content.decode()
    assert "Final grade 3" in resolved and "fully" in resolved  # the reason is shown


@pytest.mark.parametrize(
    "change, message",
    [
        ({"grade": 4}, "grade"),
        ({"grade": "x"}, "grade"),
        ({"unit": "d9#9"}, "No such unit"),
        ({"level": "nope"}, "level"),
    ],
)
def test_bad_adjudication_is_400_and_writes_nothing(login, personas, disagreement, change, message):
    client = login(personas["adjudicator"])
    response = client.post(
        reverse("gold:adjudicate", args=["acme"]), {**disagreement, "grade": 2, **change}
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert Adjudication.objects.count() == 0


@pytest.mark.parametrize("persona", ["annotator", "viewer"])
def test_only_leads_adjudicate(login, personas, disagreement, persona):
    client = login(personas[persona])
    response = client.post(reverse("gold:adjudicate", args=["acme"]), {**disagreement, "grade": 1})
    assert response.status_code == 403
    assert Adjudication.objects.count() == 0


def test_adjudication_needs_csrf(personas, disagreement):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["adjudicator"])
    response = client.post(reverse("gold:adjudicate", args=["acme"]), {**disagreement, "grade": 1})
    assert response.status_code == 403
    assert Adjudication.objects.count() == 0


def test_freeze_view_and_diff(login, personas, disagreement):
    client = login(personas["adjudicator"])
    url = reverse("gold:list", args=["acme"])
    form = {"name": "main", "rule": "min", "min_annotators": 1, "adjudicated_first": "on"}
    response = client.post(url, form)
    first = GoldSet.objects.get()
    assert response.status_code == 302 and first.policy["rule"] == "min"
    client.post(url, {**form, "rule": "max"})
    second = GoldSet.objects.get(version=2)
    detail = reverse("gold:detail", args=["acme", second.pk])
    # The diff shows grades: owners only until the versions are released (annotator/access).
    assert client.get(detail, {"against": first.pk}).status_code == 403
    client = login(personas["owner"])
    body = client.get(detail, {"against": first.pk}).content.decode()
    assert "Against main v1, units at documents: 1 → 1; 0 added, 0 removed, 1 regraded." in body
    partial = client.get(detail, {"against": first.pk}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial and "0 → 3" in partial
    assert client.get(detail, {"against": "x"}).status_code == 400
    assert client.get(detail, {"against": 999999}).status_code == 404


def test_bad_freeze_form_shows_errors_and_writes_nothing(login, personas):
    client = login(personas["owner"])
    response = client.post(
        reverse("gold:list", args=["acme"]),
        {"name": "has space", "rule": "mean", "min_annotators": 0},
    )
    assert response.status_code == 400
    assert "errorlist" in response.content.decode()
    assert GoldSet.objects.count() == 0


@pytest.mark.parametrize("persona", ["annotator", "viewer"])
def test_only_leads_freeze(login, personas, persona):
    client = login(personas[persona])
    response = client.post(
        reverse("gold:list", args=["acme"]), {"name": "g", "rule": "max", "min_annotators": 1}
    )
    assert response.status_code == 403
    assert GoldSet.objects.count() == 0


@pytest.mark.parametrize(
    "persona, status", [("owner", 302), ("adjudicator", 403), ("annotator", 403), ("viewer", 403)]
)
def test_only_owners_delete_gold_sets(login, personas, persona, status):
    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy())
    client = login(personas[persona])
    url = reverse("gold:delete", args=["acme", gold_set.pk])
    response = client.post(url, {"confirm": "yes"})
    assert response.status_code == status
    assert GoldSet.objects.filter(pk=gold_set.pk).exists() == (status != 302)


def test_deleting_a_gold_set_needs_the_confirmation(login, personas):
    gold_set = freeze_gold_set(personas["project"], "g", policy=ConsensusPolicy())
    client = login(personas["owner"])
    detail = reverse("gold:detail", args=["acme", gold_set.pk])
    page = client.get(detail).content.decode()
    export = page[
        page.index('id="gold-export"') : page.index("</section>", page.index('id="gold-export"'))
    ]
    assert "Delete this version" not in export  # not next to Download
    zone = page[page.index('id="gold-danger"') :]
    assert "Delete this version" in zone and 'name="confirm" value="yes"' in zone
    assert "data-confirm=" in zone
    response = client.post(reverse("gold:delete", args=["acme", gold_set.pk]))
    assert response.status_code == 302 and response["Location"] == detail
    assert GoldSet.objects.filter(pk=gold_set.pk).exists()
    assert "tick the box to confirm" in client.get(detail).content.decode()


def test_disputes_are_kept_until_a_label_changes(personas, corpus, disagreement):
    """A second reading of the disputes reads no label; a changed label (which moves the
    project's label revision) is seen at once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from gold.disagreements import disagreements

    project = personas["project"]
    first = disagreements(project, "c256")
    assert [(d.unit_id, d.grades) for d in first] == [("d1#0", {"anna": 3, "arno": 0})]
    with CaptureQueriesContext(connection) as captured:
        again = disagreements(project, "c256")
    assert not [q for q in captured if '"annotator_judgment"' in q["sql"]]
    assert [d.grades for d in again] == [d.grades for d in first]
    change_label(  # arno now agrees with anna
        query=corpus["query"],
        annotator=personas["annotator2"],
        evidence=Evidence.for_chunk(corpus["chunk"]),
        grade=3,
    )
    assert disagreements(project, "c256") == []
