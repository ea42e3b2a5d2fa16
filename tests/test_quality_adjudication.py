"""Adjudication of quality grades: where people grade a source differently on a dimension,
a lead sets the final grade (kept in history); the gain rule, the shares and frozen gold
sets take it before the annotators' grades, as adjudicated relevance grades."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotator.models import Membership, Role, SourceKind
from annotator.sources import resolve_sources
from gold.services import ConsensusPolicy, freeze_gold_set
from numerics.gain import GainRule
from quality.adjudication import adjudicate_quality, quality_disputes
from quality.dimensions import offer_source_quality, set_gain_rule
from quality.grades import QualityError, QualitySource, change_quality, quality_by_document
from quality.models import QualityAdjudication, QualityAdjudicationHistory
from tests import test_metrics_views
from tests.test_quality_gain import grade_sources

bench = test_metrics_views.bench  # the shared fixture
url = test_metrics_views.url

pytestmark = pytest.mark.django_db
WEIGHT = "weight:source_quality:0,1,2,3"
SITE_A = QualitySource(site="a")


@pytest.fixture
def graded(bench, personas):
    """Site a: anna 3, arno 0, alice 3 (majority 3, disputed); site b: anna 1 alone."""
    return grade_sources(bench, personas)


def _pseudo(project, name):
    user = get_user_model().objects.create(username=name)
    Membership.objects.create(
        project=project,
        user=user,
        role=Role.ANNOTATOR,
        is_pseudo=True,
        source=SourceKind.JUDGE,
        judge_slug="j",
        judge_version=1,
    )
    return user


def test_a_source_people_grade_differently_is_disputed(graded, personas):
    dimension = graded["dimension"]
    # A judge grading site b otherwise makes no dispute: only people are compared.
    change_quality(
        dimension=dimension,
        annotator=_pseudo(graded["project"], "judge-x"),
        source=QualitySource(site="b"),
        grade=3,
    )
    disputes = quality_disputes(dimension)
    assert [(d.source.site, d.grades, d.final) for d in disputes] == [
        ("a", {"alice": 3, "anna": 3, "arno": 0}, None)
    ]
    assert disputes[0].spread == 3 and disputes[0].key == "s:a"


def test_a_final_grade_is_kept_with_its_history(graded, personas):
    dimension, lead = graded["dimension"], personas["adjudicator"]
    adjudicate_quality(dimension=dimension, source=SITE_A, grade=1, reason="a blog", by=lead)
    adjudicate_quality(dimension=dimension, source=SITE_A, grade=1, reason="a blog", by=lead)
    adjudicate_quality(dimension=dimension, source=SITE_A, grade=2, reason="", by=personas["owner"])
    (dispute,) = quality_disputes(dimension)
    assert (dispute.final, dispute.adjudicator, dispute.reason) == (2, "alice", "")
    assert quality_disputes(dimension, include_settled=False) == []
    adjudicate_quality(dimension=dimension, source=SITE_A, grade=None, by=lead)
    assert not QualityAdjudication.objects.exists()
    history = QualityAdjudicationHistory.objects.order_by("pk")
    assert [(h.old_grade, h.new_grade, h.changed_by.username) for h in history] == [
        (None, 1, "adam"),
        (1, 2, "alice"),
        (2, None, "adam"),
    ]
    with pytest.raises(ValueError, match="append-only"):
        history.first().delete()
    with pytest.raises(QualityError):  # outside 0-3: nothing written
        adjudicate_quality(dimension=dimension, source=SITE_A, grade=4, by=lead)
    assert QualityAdjudicationHistory.objects.count() == 3


def test_the_gain_rule_reads_the_final_grade(login, personas, graded):
    dimension, docs = graded["dimension"], graded["docs"]
    pks = np.array([d.pk for d in docs])
    # Documents 0 and 3 are of site a, 1 and 4 of b, 2 of c, 5 names no site.
    assert quality_by_document(dimension, pks).tolist() == [3, 1, -1, 3, 1, -1]
    client = login(personas["owner"])

    def qrels(gain):
        text = client.get(url("qrels_file", level="documents", gain=gain)).content.decode()
        return {(q, d): int(g) for q, _zero, d, g in (line.split() for line in text.splitlines())}

    relevance = qrels("none")
    site_a = {key for key in relevance if key[1] in ("d0", "d3")}
    assert site_a and any(relevance[k] for k in site_a)
    assert {k: qrels(WEIGHT)[k] for k in site_a} == {k: 3 * relevance[k] for k in site_a}
    adjudicate_quality(dimension=dimension, source=SITE_A, grade=1, by=personas["adjudicator"])
    assert quality_by_document(dimension, pks).tolist() == [1, 1, -1, 1, 1, -1]
    assert {k: qrels(WEIGHT)[k] for k in site_a} == {k: relevance[k] for k in site_a}
    # Judges' grades alone: people's decisions do not count.
    judges_only = resolve_sources(graded["project"], "judges")
    assert quality_by_document(dimension, pks, sources=judges_only).tolist() == [-1] * 6


def test_frozen_gold_sets_keep_the_final_grade(personas, graded):
    dimension, project, docs = graded["dimension"], graded["project"], graded["docs"]
    lead = personas["adjudicator"]
    set_gain_rule(project, GainRule.parse(WEIGHT))
    adjudicate_quality(dimension=dimension, source=SITE_A, grade=1, by=lead)
    frozen = freeze_gold_set(project, "g", policy=ConsensusPolicy())
    recorded = frozen.policy["quality"]["source_quality"]
    assert recorded[str(docs[0].pk)] == recorded[str(docs[3].pk)] == 1
    assert recorded[str(docs[1].pk)] == 1  # site b: anna's grade
    adjudicate_quality(dimension=dimension, source=SITE_A, grade=0, by=lead)
    frozen.refresh_from_db()
    assert frozen.policy["quality"]["source_quality"][str(docs[0].pk)] == 1  # kept
    # A gold set frozen without adjudications takes the annotators' majority.
    plain = freeze_gold_set(project, "p", policy=ConsensusPolicy(adjudicated_first=False))
    assert plain.policy["quality"]["source_quality"][str(docs[0].pk)] == 3


def test_a_per_document_final_grade(personas, graded):
    project, docs = graded["project"], graded["docs"]
    from quality.models import QualityDimension

    authority = QualityDimension.objects.create(
        project=project, key="authority", name="Authority", max_grade=2, unit="document"
    )
    for persona, grade in (("annotator", 0), ("annotator2", 2)):
        change_quality(
            dimension=authority,
            annotator=personas[persona],
            source=QualitySource(document=docs[2]),
            grade=grade,
        )
    (dispute,) = quality_disputes(authority)
    assert dispute.key == f"d{docs[2].pk}"
    pks = np.array([docs[2].pk, docs[3].pk])
    assert quality_by_document(authority, pks).tolist() == [2, -1]  # a tie: the higher
    adjudicate_quality(dimension=authority, source=dispute.source, grade=0, by=personas["owner"])
    assert quality_by_document(authority, pks).tolist() == [0, -1]


def _disputes_url(**params):
    from urllib.parse import urlencode

    base = reverse("quality:disputes", args=["acme"])
    return base + ("?" + urlencode(params) if params else "")


@pytest.mark.parametrize("persona", ["owner", "adjudicator"])
def test_leads_set_final_grades_on_the_disputes_page(login, personas, graded, persona):
    client = login(personas[persona])
    page = client.get(_disputes_url())
    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-source="s:a"' in body and 'data-grader="arno"' in body
    save = reverse("quality:adjudicate", args=["acme"])
    response = client.post(
        save, {"dimension": "source_quality", "source": "s:a", "grade": "2", "reason": "gov"}
    )
    assert response.status_code == 302 and "dimension=source_quality" in response["Location"]
    final = QualityAdjudication.objects.get()
    assert (final.site, final.grade, final.reason, final.adjudicator) == (
        "a",
        2,
        "gov",
        personas[persona],
    )
    assert "data-decided" in client.get(_disputes_url()).content.decode()
    assert 'data-source="s:a"' not in client.get(_disputes_url(open=1)).content.decode()
    client.post(save, {"dimension": "source_quality", "source": "s:a", "grade": ""})
    assert not QualityAdjudication.objects.exists()
    assert QualityAdjudicationHistory.objects.count() == 2


@pytest.mark.parametrize(
    "data",
    [
        {"dimension": "source_quality", "source": "s:a", "grade": "4"},  # outside 0-3
        {"dimension": "source_quality", "source": "s:a", "grade": "x"},
        {"dimension": "nope", "source": "s:a", "grade": "1"},
        {"dimension": "source_quality", "source": "d1", "grade": "1"},  # per site
        {"dimension": "source_quality", "source": "s:", "grade": "1"},
    ],
)
def test_bad_final_grades_are_refused_with_nothing_written(login, personas, graded, data):
    client = login(personas["owner"])
    response = client.post(reverse("quality:adjudicate", args=["acme"]), data)
    assert response.status_code == 400
    assert not QualityAdjudicationHistory.objects.exists()


@pytest.mark.parametrize("persona", ["annotator", "viewer", "outsider"])
def test_only_leads_adjudicate_quality(login, personas, graded, persona):
    client = login(personas[persona])
    assert client.get(_disputes_url()).status_code in (403, 404)
    response = client.post(
        reverse("quality:adjudicate", args=["acme"]),
        {"dimension": "source_quality", "source": "s:a", "grade": "1"},
    )
    assert response.status_code in (403, 404)
    assert not QualityAdjudication.objects.exists()


def test_the_adjudication_page_links_to_disputed_quality_grades(login, personas, bench):
    client = login(personas["adjudicator"])
    queue = reverse("gold:queue", args=["acme"])
    assert b"quality-disputes-link" not in client.get(queue).content
    offer_source_quality(bench["project"])
    assert b"quality-disputes-link" in client.get(queue).content
    assert client.get(_disputes_url(dimension="nope")).status_code == 400
