"""A label import looks up the documents and chunks its lines name, a batch of lines at
a time, by key; it does not read every document of the project (at 1,000,000 documents
that took 5.8 s for a file of 1,000 labels). Batches do not change what is imported or
which lines are reported."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.importing import common as import_common
from annotator.importing import run_import
from annotator.models import Document, Judgment
from tests.test_importing import documents, failure, jsonl, project, queries, write

__all__ = ["documents", "project", "queries"]  # fixtures shared with test_importing

pytestmark = pytest.mark.django_db


@pytest.fixture
def more_documents(project, documents):
    Document.objects.bulk_create(
        [Document(project=project, doc_id=f"x{i}", title="", text=f"text {i}") for i in range(30)]
    )


def _document_reads(statements: list[str]) -> list[str]:
    return [sql for sql in statements if 'FROM "annotator_document"' in sql and "LENGTH" in sql]


@pytest.mark.parametrize(
    ("level", "text"),
    [
        ("document", "q1 0 d1 2\nq1 0 x3 1\nq2 0 x7 3\n"),
        ("passage", jsonl({"qid": "q1", "doc_id": "x2", "start": 0, "end": 4, "grade": 2})),
    ],
)
def test_labels_read_only_the_documents_they_name(
    project, tmp_path, queries, more_documents, level, text
):
    path = write(tmp_path / ("labels.txt" if level == "document" else "labels.jsonl"), text)
    with CaptureQueriesContext(connection) as captured:
        result = run_import(
            "labels", project, path, options={"annotator": "assessors", "level": level}
        )
    assert result.created == text.count("\n")
    reads = _document_reads([q["sql"] for q in captured.captured_queries])
    assert reads and all(" IN (" in sql for sql in reads), reads


@pytest.mark.parametrize("batch", [1, 2, 900])
def test_batches_import_the_same_labels_and_report_the_same_lines(
    project, tmp_path, queries, more_documents, monkeypatch, batch
):
    monkeypatch.setattr(import_common, "LOOKUP_BATCH", batch)
    lines = [f"q{1 + i % 2} 0 x{i} {i % 4}" for i in range(9)]
    path = write(tmp_path / "qrels.txt", "\n".join(lines) + "\n")
    result = run_import(
        "labels", project, path, options={"annotator": "assessors", "level": "document"}
    )
    assert result.created == 9
    got = {(j.query.qid, j.document.doc_id, j.grade) for j in Judgment.objects.all()}
    assert got == {(f"q{1 + i % 2}", f"x{i}", i % 4) for i in range(9)}

    bad = write(
        tmp_path / "bad.txt",
        "q1 0 nope1 1\nq1 0 d1 1\nq1 0 nope2 2\nq2 0 x1 1\nq2 0 nope3 0\n",
    )
    errors = failure("labels", project, bad, options={"annotator": "others", "level": "document"})
    assert [str(e) for e in errors] == [
        "line 1: unknown document id 'nope1'",
        "line 3: unknown document id 'nope2'",
        "line 5: unknown document id 'nope3'",
    ]
