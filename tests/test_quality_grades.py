"""Quality dimensions and grades: per document or per site, one writer, history, versions."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import IntegrityError, transaction

from annotator.models import Document
from annotator.revisions import revision
from numerics.gain import UNJUDGED, GainRule, majority
from quality.dimensions import offer_source_quality
from quality.grades import (
    QualityConflict,
    QualityError,
    change_quality,
    grades_for_documents,
    quality_by_document,
    quality_version,
    site_of,
    source_for,
    undo_quality,
)
from quality.models import QualityDimension, QualityGrade, QualityHistory, QualityUnit

pytestmark = pytest.mark.django_db


@pytest.fixture
def sites(personas):
    project = personas["project"]
    docs = [
        Document.objects.create(
            project=project,
            doc_id=f"d{i}",
            text=f"text {i}",
            metadata={"url": url, "site": site},
        )
        for i, (url, site) in enumerate(
            [
                ("https://www.gov.example/a", "gov"),
                ("https://gov.example/b?x=1", "gov"),
                ("http://blog.example/c", "blog"),
                ("not a url at all", ""),
            ]
        )
    ]
    return {"project": project, "docs": docs}


def test_the_default_dimension_is_source_quality_0_3_in_both_languages(sites):
    dimension = offer_source_quality(sites["project"])
    assert dimension.key == "source_quality" and dimension.scale == [0, 1, 2, 3]
    assert dimension.labels == ["Unreliable", "Weak", "Solid", "Authoritative"]
    from django.utils import translation

    with translation.override("zh-hans"):
        assert dimension.shown_name == "来源质量" and dimension.label(3) == "权威"
    with translation.override("en"):
        assert dimension.label(0) == "Unreliable"
    assert offer_source_quality(sites["project"]) == dimension  # offered once


def test_a_site_is_a_metadata_field_or_the_host_of_a_url(sites):
    by_field = offer_source_quality(sites["project"], site_field="site")
    by_host = QualityDimension(unit=QualityUnit.SITE, site_field="url", site_host=True)
    docs = sites["docs"]
    assert [site_of(by_field, d.metadata) for d in docs] == ["gov", "gov", "blog", ""]
    assert [site_of(by_host, d.metadata) for d in docs[:3]] == [
        "gov.example",
        "gov.example",
        "blog.example",
    ]
    with pytest.raises(QualityError):
        source_for(by_field, docs[3])  # names no site


@pytest.mark.parametrize("host", [False, True])
def test_a_site_level_grade_covers_all_its_documents(sites, personas, host):
    project, docs = sites["project"], sites["docs"]
    dimension = offer_source_quality(project, site_field="url" if host else "site", host=host)
    anna = personas["annotator"]
    change_quality(
        dimension=dimension, annotator=anna, source=source_for(dimension, docs[0]), grade=3
    )
    assert QualityGrade.objects.count() == 1  # one grade, of the site
    found = grades_for_documents(dimension, QualityGrade.objects.all(), docs)
    assert set(found) == {docs[0].pk, docs[1].pk}  # both documents of that site
    pks = np.array([d.pk for d in docs])
    assert quality_by_document(dimension, pks).tolist() == [3, 3, UNJUDGED, UNJUDGED]
    # Graded again from the other document of the site: the same grade changes.
    change_quality(
        dimension=dimension, annotator=anna, source=source_for(dimension, docs[1]), grade=1
    )
    assert QualityGrade.objects.count() == 1
    assert quality_by_document(dimension, pks).tolist() == [1, 1, UNJUDGED, UNJUDGED]


def test_per_document_grades_cover_their_document_only(sites, personas):
    dimension = offer_source_quality(sites["project"], unit=QualityUnit.DOCUMENT)
    docs = sites["docs"]
    change_quality(
        dimension=dimension,
        annotator=personas["annotator"],
        source=source_for(dimension, docs[0]),
        grade=2,
    )
    pks = np.array([d.pk for d in docs])
    assert quality_by_document(dimension, pks).tolist() == [2, UNJUDGED, UNJUDGED, UNJUDGED]


def test_several_annotators_make_a_majority_and_sources_narrow_it(sites, personas):
    dimension = offer_source_quality(sites["project"])
    doc = sites["docs"][0]
    for persona, grade in (("annotator", 1), ("annotator2", 3), ("owner", 3)):
        change_quality(
            dimension=dimension,
            annotator=personas[persona],
            source=source_for(dimension, doc),
            grade=grade,
        )
    assert quality_by_document(dimension, np.array([doc.pk])).tolist() == [3]
    assert majority(np.array([0, 0]), np.array([1, 2]), 2).tolist() == [2, UNJUDGED]


def test_every_change_is_kept_and_bumps_the_revision(sites, personas):
    project = sites["project"]
    dimension = offer_source_quality(project)
    anna, doc = personas["annotator"], sites["docs"][2]
    source = source_for(dimension, doc)
    before = revision(project.pk).number
    change_quality(dimension=dimension, annotator=anna, source=source, grade=2, action_id="a1")
    change_quality(dimension=dimension, annotator=anna, source=source, grade=2)  # no change
    change_quality(dimension=dimension, annotator=anna, source=source, grade=0, note="spam")
    change_quality(dimension=dimension, annotator=anna, source=source, grade=None)
    assert revision(project.pk).number == before + 4
    rows = list(QualityHistory.objects.values_list("event", "old_grade", "new_grade", "site"))
    assert rows == [
        ("create", None, 2, "blog"),
        ("update", 2, 0, "blog"),
        ("delete", 0, None, "blog"),
    ]
    with pytest.raises(ValueError):
        QualityHistory.objects.first().delete()


def test_a_stale_version_is_a_conflict_and_nothing_is_written(sites, personas):
    dimension = offer_source_quality(sites["project"])
    anna, source = personas["annotator"], source_for(dimension, sites["docs"][0])
    first = change_quality(dimension=dimension, annotator=anna, source=source, grade=2)
    shown = quality_version(first.grade)
    change_quality(dimension=dimension, annotator=anna, source=source, grade=3)  # elsewhere
    with pytest.raises(QualityConflict) as raised:
        change_quality(dimension=dimension, annotator=anna, source=source, grade=1, version=shown)
    assert raised.value.current.grade == 3
    assert QualityGrade.objects.get().grade == 3 and QualityHistory.objects.count() == 2
    with pytest.raises(QualityError):
        change_quality(dimension=dimension, annotator=anna, source=source, grade=4)


def test_undo_puts_back_the_grade_before_the_action(sites, personas):
    project = sites["project"]
    dimension = offer_source_quality(project)
    anna, source = personas["annotator"], source_for(dimension, sites["docs"][0])
    change_quality(dimension=dimension, annotator=anna, source=source, grade=1)
    change_quality(dimension=dimension, annotator=anna, source=source, grade=3, action_id="k")
    undone = undo_quality(project=project, user=anna, action_id="k")
    assert undone.grade.grade == 1 and undone.undone is not None
    assert QualityHistory.objects.count() == 3


def test_the_database_refuses_a_grade_of_neither_or_both(sites, personas):
    dimension = offer_source_quality(sites["project"])
    for fields in ({"site": ""}, {"site": "gov", "document": sites["docs"][0]}):
        with pytest.raises(IntegrityError), transaction.atomic():
            QualityGrade.objects.create(
                dimension=dimension, annotator=personas["annotator"], grade=1, **fields
            )


@pytest.mark.parametrize(
    "text",
    ["none", "weight:source_quality:0,1,2,3", "minimum:source_quality:2"],
)
def test_gain_rules_read_back_as_written(text):
    assert str(GainRule.parse(text)) == text


@pytest.mark.parametrize(
    "text", ["weight", "weight:Q:1,2", "weight:q:1", "minimum:q:x", "times:q:1,2", "weight:q:1,200"]
)
def test_bad_gain_rules_are_refused(text):
    with pytest.raises(ValueError):
        GainRule.parse(text)


def test_gain_rules_apply():
    relevance = np.array([0, 1, 2, 3, 3, 2])
    quality = np.array([3, 0, 1, 2, 3, UNJUDGED])
    assert GainRule.parse("none").apply(relevance, quality).tolist() == [0, 1, 2, 3, 3, 2]
    weighted = GainRule.parse("weight:q:0,1,2,3").apply(relevance, quality)
    assert weighted.tolist() == [0, 0, 2, 6, 9, 2]  # unjudged: relevance as it is
    assert GainRule.parse("minimum:q:2").apply(relevance, quality).tolist() == [0, 0, 0, 3, 3, 2]
