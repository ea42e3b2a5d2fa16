"""import_labels reads quality grades: rows naming a ``dimension``; bad lines refused by
number, nothing written."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.models import Document
from annotator.revisions import revision
from quality.dimensions import offer_source_quality
from quality.grades import quality_by_document
from quality.models import QualityDimension, QualityGrade, QualityHistory

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(personas):
    project = personas["project"]
    for index, site in enumerate(["gov", "gov", "blog", ""]):
        Document.objects.create(
            project=project, doc_id=f"d{index}", text="x", metadata={"site": site} if site else {}
        )
    offer_source_quality(project)
    QualityDimension.objects.create(
        project=project, key="fresh", name="Freshness", labels=["old", "new"], max_grade=1,
        unit="document",
    )  # fmt: skip
    return project


def _write(tmp_path, rows, name="quality.jsonl"):
    path = tmp_path / name
    if name.endswith(".csv"):
        path.write_text(rows)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_quality_grades_are_imported_by_site_and_document(project, tmp_path):
    path = _write(
        tmp_path,
        "dimension,doc_id,site,grade,note\n"
        "source_quality,d0,,3,official\n"
        "source_quality,,blog,1,\n"
        "fresh,d3,,1,\n",
        "quality.csv",
    )
    before = revision(project.pk).number
    call_command("import_labels", "acme", path, "--annotator", "raters", "--level", "document")
    assert revision(project.pk).number > before
    assert QualityGrade.objects.count() == 3 and QualityHistory.objects.count() == 3
    dimension = QualityDimension.objects.get(key="source_quality")
    pks = np.array(project.documents.order_by("doc_id").values_list("pk", flat=True))
    assert quality_by_document(dimension, pks).tolist() == [3, 3, 1, -1]  # d1 by its site
    assert QualityGrade.objects.get(site="gov").note == "official"


def test_bad_quality_lines_are_refused_by_number_and_nothing_is_written(project, tmp_path):
    path = _write(
        tmp_path,
        [
            {"dimension": "source_quality", "doc_id": "d0", "grade": 3},  # 1: fine
            {"dimension": "nope", "doc_id": "d0", "grade": 1},  # 2
            {"dimension": "source_quality", "doc_id": "d0", "grade": 4},  # 3
            {"dimension": "source_quality", "doc_id": "d3", "grade": 1},  # 4: no site
            {"dimension": "source_quality", "doc_id": "d9", "grade": 1},  # 5
            {"dimension": "source_quality", "site": "gov", "grade": 1},  # 6: gov again
            {"dimension": "fresh", "site": "gov", "grade": 1},  # 7: per document
            {"dimension": "source_quality", "grade": 1},  # 8: no source
        ],
    )
    before = revision(project.pk).number
    with pytest.raises(CommandError) as refused:
        call_command("import_labels", "acme", path, "--annotator", "raters", "--level", "document")
    text = str(refused.value)
    for line in range(2, 9):
        assert f"line {line}" in text, (line, text)
    assert "line 1:" not in text
    assert "unknown quality dimension 'nope'" in text
    assert "from 0 to 3, not '4'" in text and "names no site" in text
    assert QualityGrade.objects.count() == 0 and QualityHistory.objects.count() == 0
    assert revision(project.pk).number == before
    assert not project.memberships.filter(user__username="raters").exists()


def test_relevance_labels_are_read_as_before(project, personas, tmp_path):
    from annotator.models import Judgment, Query

    Query.objects.create(project=project, qid="q1", text="q")
    path = _write(tmp_path, "qid,doc_id,grade\nq1,d0,2\n", "labels.csv")
    call_command("import_labels", "acme", path, "--annotator", "raters", "--level", "document")
    assert Judgment.objects.get().grade == 2 and not QualityGrade.objects.exists()
