"""The owner's quality settings: dimensions, site field, gain rule; bad values write nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from quality.dimensions import offer_source_quality, project_gain_rule
from quality.models import GainSetting, QualityDimension, QualityGrade

pytestmark = pytest.mark.django_db

DEFAULT = {
    "action": "dimension",
    "key": "source_quality",
    "name": "Source quality",
    "name_zh": "来源质量",
    "max_grade": 3,
    "labels": "Unreliable, Weak, Solid, Authoritative",
    "labels_zh": "不可靠, 较弱, 可靠, 权威",
    "unit": "site",
    "site_field": "site",
}


def url():
    return reverse("quality:settings", args=["acme"])


def test_the_form_offers_source_quality_and_adds_it(login, personas, corpus):
    corpus["document"].metadata = {"site": "gov.example"}
    corpus["document"].save()
    client = login(personas["owner"])
    page = client.get(url()).content.decode()
    assert 'value="source_quality"' in page and "Unreliable, Weak, Solid, Authoritative" in page
    assert client.post(url(), DEFAULT).status_code == 302
    dimension = QualityDimension.objects.get(project=personas["project"])
    assert (dimension.key, dimension.max_grade, dimension.unit, dimension.site_field) == (
        "source_quality",
        3,
        "site",
        "site",
    )
    assert dimension.labels == ["Unreliable", "Weak", "Solid", "Authoritative"]
    assert dimension.labels_zh == ["不可靠", "较弱", "可靠", "权威"]
    assert "Authoritative" in client.get(url()).content.decode()


@pytest.mark.parametrize(
    "change, field, message",
    [
        ({"labels": "a, b"}, "labels", "Give 4 labels (grades 0 to 3), or none."),
        ({"max_grade": 12}, "max_grade", ""),
        ({"site_field": ""}, "site_field", "A dimension graded per site needs its field."),
        ({"site_field": "publisher"}, "site_field", "No document of this project has a metadata"),
        ({"key": "not a slug"}, "key", ""),
    ],
)
def test_bad_dimensions_write_nothing(login, personas, corpus, change, field, message):
    corpus["document"].metadata = {"site": "gov.example"}
    corpus["document"].save()
    client = login(personas["owner"])
    response = client.post(url(), {**DEFAULT, **change})
    assert response.status_code == 400
    assert field in response.context["forms"]["dimension"].errors
    assert message in response.content.decode()
    assert not QualityDimension.objects.exists()


def test_a_key_twice_is_refused(login, personas, corpus):
    offer_source_quality(personas["project"], unit="document")
    response = login(personas["owner"]).post(url(), {**DEFAULT, "unit": "document"})
    assert response.status_code == 400
    assert QualityDimension.objects.count() == 1


def test_the_site_field_changes_until_sites_are_graded(login, personas, corpus):
    corpus["document"].metadata = {"site": "a", "url": "https://gov.example/x"}
    corpus["document"].save()
    dimension = offer_source_quality(personas["project"])
    client = login(personas["owner"])
    form = {"action": "site", "dimension": dimension.pk, "site_field": "url", "site_host": "on"}
    assert client.post(url(), {**form, "site_field": "nope"}).status_code == 400
    dimension.refresh_from_db()
    assert (dimension.site_field, dimension.site_host) == ("site", False)
    assert client.post(url(), form).status_code == 302
    dimension.refresh_from_db()
    assert (dimension.site_field, dimension.site_host) == ("url", True)
    QualityGrade.objects.create(
        dimension=dimension, annotator=personas["owner"], site="gov.example", grade=3
    )
    response = client.post(url(), {**form, "site_field": "site", "site_host": ""})
    assert response.status_code == 400
    assert "already graded" in response.content.decode()
    dimension.refresh_from_db()
    assert dimension.site_field == "url"


@pytest.mark.parametrize(
    "rule, message",
    [
        ("sometimes", "Unknown gain rule"),
        ("weight:authority:0,1,2,3", "This project has no quality dimension authority."),
        ("weight:source_quality:0,1,2", "source_quality is graded 0–3: give 4 weights."),
        ("minimum:source_quality:5", "the minimum is at most 3"),
    ],
)
def test_bad_gain_rules_write_nothing(login, personas, corpus, rule, message):
    offer_source_quality(personas["project"], unit="document")
    response = login(personas["owner"]).post(url(), {"action": "gain", "rule": rule})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not GainSetting.objects.exists()


def test_the_owner_chooses_the_gain_rule(login, personas, corpus):
    offer_source_quality(personas["project"], unit="document")
    client = login(personas["owner"])
    assert (
        client.post(url(), {"action": "gain", "rule": "weight:source_quality:0,1,2,3"}).status_code
        == 302
    )
    assert str(project_gain_rule(personas["project"])) == "weight:source_quality:0,1,2,3"
    assert "weight:source_quality:0,1,2,3" in client.get(url()).content.decode()
    assert client.post(url(), {"action": "gain", "rule": "none"}).status_code == 302
    assert project_gain_rule(personas["project"]).is_none


@pytest.mark.parametrize("persona", ["adjudicator", "annotator", "viewer"])
def test_only_owners_write(login, personas, corpus, persona):
    client = login(personas[persona])
    assert client.post(url(), {**DEFAULT, "unit": "document"}).status_code == 403
    assert client.post(url(), {"action": "gain", "rule": "none"}).status_code == 403
    assert not QualityDimension.objects.exists() and not GainSetting.objects.exists()


def test_an_unknown_action_writes_nothing(login, personas, corpus):
    assert login(personas["owner"]).post(url(), {"action": "drop"}).status_code == 400


def test_the_default_is_offered_until_the_project_has_it(login, personas, corpus):
    client = login(personas["owner"])

    def offered() -> str | None:  # the add form's key field, as filled in
        form = client.get(url()).context["forms"]["dimension"]
        return form["key"].value()

    assert offered() == "source_quality"
    offer_source_quality(personas["project"], unit="document")
    assert not offered()
