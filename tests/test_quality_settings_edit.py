"""Editing and deleting a quality dimension on the owner's settings page.

Renaming and relabelling keep the key, scale, unit and grades. Deleting is the safe
choice: only a dimension nobody ever graded (no grade, no history row, no final grade,
nothing else pointing at it) and that the gain rule does not name can be deleted, after a
confirmation; a graded one is refused with nothing lost."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.models import Document
from numerics.gain import GainRule
from quality.dimensions import (
    DimensionInUse,
    delete_dimension,
    dimension_use,
    offer_source_quality,
    set_gain_rule,
)
from quality.grades import change_quality, source_for
from quality.models import QualityDimension, QualityGrade, QualityHistory

pytestmark = pytest.mark.django_db


def url(**params):
    base = reverse("quality:settings", args=["acme"])
    return base + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


@pytest.fixture
def dimension(personas):
    Document.objects.create(
        project=personas["project"], doc_id="d", text="t", metadata={"site": "s"}
    )
    return offer_source_quality(personas["project"])


def grade(personas, dimension, value=2, *, persona="annotator"):
    document = Document.objects.get(doc_id="d")
    return change_quality(
        dimension=dimension,
        annotator=personas[persona],
        source=source_for(dimension, document),
        grade=value,
    )


def test_the_edit_form_shows_the_chosen_dimension_filled_in(login, personas, dimension):
    client = login(personas["owner"])
    plain = client.get(url()).content.decode()
    assert 'id="quality-edit-form"' not in plain and "?edit=source_quality" in plain
    page = client.get(url(edit="source_quality")).content.decode()
    assert 'id="quality-edit-form"' in page
    assert 'value="Unreliable, Weak, Solid, Authoritative"' in page
    assert 'type="hidden" name="dimension" value="source_quality"' in page


def test_renaming_and_relabelling_keep_the_grades(login, personas, dimension):
    grade(personas, dimension, 3)
    client = login(personas["owner"])
    response = client.post(
        url(),
        {
            "action": "edit",
            "dimension": "source_quality",
            "name": "Authority",
            "name_zh": "权威性",
            "labels": "none, low, fair, high",
            "labels_zh": "",
        },
    )
    assert response.status_code == 302
    dimension.refresh_from_db()
    assert (dimension.key, dimension.name, dimension.name_zh) == (
        "source_quality",
        "Authority",
        "权威性",
    )
    assert dimension.labels == ["none", "low", "fair", "high"] and dimension.labels_zh == []
    assert dimension.max_grade == 3 and dimension.unit == "site" and dimension.site_field == "site"
    assert QualityGrade.objects.get().grade == 3
    assert dimension.label(3) == "high"
    assert "Authority" in client.get(url()).content.decode()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"labels": "a, b"}, "Give 4 labels (grades 0 to 3), or none."),
        ({"name": ""}, "This field is required."),
        ({"dimension": "nope"}, "Select a valid choice."),
    ],
)
def test_bad_edits_write_nothing(login, personas, dimension, change, message):
    before = QualityDimension.objects.values().get()
    data = {"action": "edit", "dimension": "source_quality", "name": "X", **change}
    response = login(personas["owner"]).post(url(), data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert QualityDimension.objects.values().get() == before


def test_a_dimension_nobody_graded_is_deleted_once_confirmed(login, personas, dimension):
    client = login(personas["owner"])
    unconfirmed = client.post(url(), {"action": "delete", "dimension": "source_quality"})
    assert unconfirmed.status_code == 400 and QualityDimension.objects.exists()
    response = client.post(
        url(), {"action": "delete", "dimension": "source_quality", "confirm": "on"}
    )
    assert response.status_code == 302
    assert not QualityDimension.objects.exists()


def test_a_graded_dimension_is_refused_and_nothing_is_lost(login, personas, dimension):
    grade(personas, dimension, 1)
    grade(personas, dimension, 2)  # two history rows
    client = login(personas["owner"])
    response = client.post(
        url(), {"action": "delete", "dimension": "source_quality", "confirm": "on"}
    )
    assert response.status_code == 400
    assert "has 1 grades and 2 other recorded rows" in response.content.decode()
    assert QualityDimension.objects.filter(pk=dimension.pk).exists()
    assert QualityGrade.objects.count() == 1 and QualityHistory.objects.count() == 2


def test_a_dimension_whose_grades_were_removed_keeps_its_history(personas, dimension):
    """Removing every grade leaves their history: the dimension still cannot go."""
    grade(personas, dimension, 1)
    change_quality(
        dimension=dimension,
        annotator=personas["annotator"],
        source=source_for(dimension, Document.objects.get(doc_id="d")),
        grade=None,
    )
    assert not QualityGrade.objects.exists()
    use = dimension_use(dimension)
    assert use.grades == 0 and use.rows == {"quality.QualityHistory": 2}
    with pytest.raises(DimensionInUse):
        delete_dimension(dimension)
    assert QualityHistory.objects.count() == 2


def test_the_dimension_of_the_gain_rule_is_refused(login, personas, dimension):
    set_gain_rule(personas["project"], GainRule.parse("minimum:source_quality:2"))
    response = login(personas["owner"]).post(
        url(), {"action": "delete", "dimension": "source_quality", "confirm": "on"}
    )
    assert response.status_code == 400
    assert "gain rule uses source_quality" in response.content.decode()
    assert QualityDimension.objects.exists()


def test_only_owners_edit_or_delete(login, personas, dimension):
    for persona in ("adjudicator", "annotator", "viewer"):
        client = login(personas[persona])
        data = {"action": "delete", "dimension": "source_quality", "confirm": "on"}
        assert client.post(url(), data).status_code == 403
        edit = {"action": "edit", "dimension": "source_quality", "name": "X"}
        assert client.post(url(), edit).status_code == 403
    assert QualityDimension.objects.get().name == "Source quality"


def test_another_projects_dimension_cannot_be_named(login, personas, dimension):
    other = offer_source_quality(personas["other"])
    client = login(personas["owner"])
    response = client.post(
        url(), {"action": "delete", "dimension": "source_quality", "confirm": "on"}
    )
    assert response.status_code == 302  # acme's own, nobody graded it
    assert list(QualityDimension.objects.all()) == [other]


def test_the_edit_and_delete_forms_speak_chinese(login, personas, dimension):
    client = login(personas["owner"])
    client.cookies["django_language"] = "zh-hans"
    page = client.get(url(edit="source_quality"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    for english in ("Rename or relabel", "Delete a dimension", "Grades given", "nothing is lost"):
        assert english not in page


def test_whatever_else_holds_the_dimension_keeps_it(personas, dimension):
    """Rows of other apps count too (the deletion collector finds them): a judges' prompt
    for the dimension, and a lead's final grade cleared again (its history stays)."""
    from judges.models import QualityPrompt
    from quality.adjudication import adjudicate_quality
    from quality.grades import QualitySource

    QualityPrompt.objects.create(dimension=dimension, prompt="Grade the source {site}.")
    use = dimension_use(dimension)
    assert use.grades == 0 and use.rows == {"judges.QualityPrompt": 1}
    with pytest.raises(DimensionInUse):
        delete_dimension(dimension)
    QualityPrompt.objects.all().delete()
    source = QualitySource(site="s")
    adjudicate_quality(dimension=dimension, source=source, grade=2, by=personas["owner"])
    adjudicate_quality(dimension=dimension, source=source, grade=None, by=personas["owner"])
    assert dimension_use(dimension).rows == {"quality.QualityAdjudicationHistory": 2}
    with pytest.raises(DimensionInUse):
        delete_dimension(dimension)
    assert QualityDimension.objects.filter(pk=dimension.pk).exists()
