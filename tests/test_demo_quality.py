"""The LeCaRD demo's source quality: the courts in quality.csv are the documents' own
``author`` values, and the demo loads them as site grades once."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from annotator.models import Document
from demo.loading import PROJECTS, _quality
from quality.grades import source_for
from quality.models import QualityDimension, QualityGrade

pytestmark = pytest.mark.django_db

LECARD = Path(__file__).resolve().parent.parent / "data" / "demo" / "lecard"


def _rows() -> list[dict]:
    with open(LECARD / "quality.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_graded_court_issues_documents_of_the_demo():
    courts = {
        json.loads(line)["author"]
        for line in (LECARD / "documents.jsonl").read_text(encoding="utf-8").splitlines()
    }
    rows = _rows()
    assert len(rows) == 15 and all(r["site"] in courts for r in rows)
    assert {r["grade"] for r in rows} == {"2", "3"}
    assert PROJECTS[1]["slug"] == "lecard" and PROJECTS[1]["quality_site_field"] == "author"


def test_the_demo_grades_courts_per_site_once(personas):
    project = personas["project"]
    rows = _rows()
    document = Document.objects.create(
        project=project, doc_id="1", text="x", metadata={"author": rows[0]["site"]}
    )
    Document.objects.create(project=project, doc_id="2", text="y", metadata={"author": ""})
    said = []
    _quality(project, LECARD, "author", said.append)
    dimension = QualityDimension.objects.get(project=project)
    assert (dimension.key, dimension.unit, dimension.site_field) == (
        "source_quality",
        "site",
        "author",
    )
    assert QualityGrade.objects.count() == 15
    grade = QualityGrade.objects.get(site=source_for(dimension, document).site)
    assert grade.grade == int(rows[0]["grade"]) and grade.annotator.username == "demo-quality"
    _quality(project, LECARD, "author", said.append)  # again: nothing added
    assert QualityGrade.objects.count() == 15 and len(said) == 1
