"""A new process reads the agreement report a process kept at the same label revision
(at 500,000 labels, working it out again was most of the page's first 2 s); any label
change moves the revision, and the report is made again. Read back, it is the report."""

from __future__ import annotations

import pytest

from annotator.caches import cache
from annotator.evidence import Evidence
from annotator.labels import change_label
from gold import agreement
from gold.agreement import project_agreement
from numerics.mapping import MappingPolicy
from tests.test_gold_xlsx import book

__all__ = ["book"]  # the fixture: two annotators' labels on three queries

pytestmark = pytest.mark.django_db


def test_a_new_process_reads_the_report_until_a_label_changes(
    book, personas, settings, tmp_path, monkeypatch
):
    settings.ASSAY_RUN_INDEX_DIR = tmp_path
    project = personas["project"]
    cache.clear()
    made = []
    real = agreement._project_agreement
    monkeypatch.setattr(agreement, "_project_agreement", lambda *a: made.append(1) or real(*a))
    first = project_agreement(project, "documents", MappingPolicy())
    cache.clear()
    again = project_agreement(project, "documents", MappingPolicy())
    assert made == [1]
    assert again == first
    assert again.summary["pairs"] == first.summary["pairs"] and again.per_query == first.per_query
    change_label(
        query=project.queries.get(qid="2"),
        annotator=personas["annotator"],
        evidence=Evidence.for_document(project.documents.get(doc_id="d2")),
        grade=3,
    )
    cache.clear()
    changed = project_agreement(project, "documents", MappingPolicy())
    assert made == [1, 1] and changed.summary != first.summary
    assert len(list(tmp_path.glob("agreement.*.npy"))) == 1  # the older revision's: gone
