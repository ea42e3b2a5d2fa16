"""Document and query imports look up, a batch of lines at a time and by key, which of
the ids they bring the project already holds; they do not read every id of the project
(200 documents into a project of 1,000,000 read a million ids: 1.8 s). Batches do not
change what is imported or which lines are reported."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.importing import common as import_common
from annotator.importing import run_import
from annotator.models import Document, Query
from tests.test_importing import documents, failure, jsonl, project, queries, write

__all__ = ["documents", "project", "queries"]  # fixtures shared with test_importing

pytestmark = pytest.mark.django_db


def _id_reads(statements: list[str], table: str, column: str) -> list[str]:
    return [
        s
        for s in statements
        if s.lstrip().upper().startswith("SELECT") and f'FROM "{table}"' in s and column in s
    ]


@pytest.mark.parametrize(
    ("kind", "rows", "table", "column"),
    [
        (
            "documents",
            [{"doc_id": f"n{i}", "text": "t"} for i in range(3)],
            "annotator_document",
            "doc_id",
        ),
        ("queries", [{"qid": f"n{i}", "text": "t"} for i in range(3)], "annotator_query", "qid"),
    ],
)
def test_an_import_reads_only_the_ids_it_brings(
    project, tmp_path, queries, kind, rows, table, column
):
    path = write(tmp_path / f"{kind}.jsonl", jsonl(*rows))
    with CaptureQueriesContext(connection) as captured:
        result = run_import(kind, project, path)
    assert result.created == 3
    reads = _id_reads([q["sql"] for q in captured.captured_queries], table, column)
    assert reads and all(" IN (" in sql for sql in reads), reads


@pytest.mark.parametrize("batch", [1, 2, 900])
def test_batches_import_the_same_rows_and_report_the_same_lines(
    project, tmp_path, queries, monkeypatch, batch
):
    monkeypatch.setattr(import_common, "LOOKUP_BATCH", batch)
    before = set(Document.objects.values_list("doc_id", flat=True))
    good = write(tmp_path / "docs.jsonl", jsonl(*({"id": f"n{i}", "text": "t"} for i in range(5))))
    assert run_import("documents", project, good).created == 5
    assert set(Document.objects.values_list("doc_id", flat=True)) == before | {
        f"n{i}" for i in range(5)
    }

    bad = write(
        tmp_path / "bad.jsonl",
        jsonl(
            {"doc_id": "m1", "text": "t"},
            {"doc_id": "n3", "text": "t"},
            {"doc_id": "m2", "text": "t"},
            {"_id": "d1", "text": "t"},
            {"doc_id": "m1", "text": "t"},
            {"doc_id": "n0", "text": "t"},
        ),
    )
    assert failure("documents", project, bad) == [
        "line 2: document 'n3' already exists in this project",
        "line 4: document 'd1' already exists in this project",
        "line 5: document 'm1' repeats line 1",
        "line 6: document 'n0' already exists in this project",
    ]

    questions = write(
        tmp_path / "q.jsonl",
        jsonl({"qid": "q9", "text": "a"}, {"qid": "q2", "text": "b"}, {"qid": "q1", "text": "c"}),
    )
    assert failure("queries", project, questions) == [
        "line 2: query 'q2' already exists in this project",
        "line 3: query 'q1' already exists in this project",
    ]
    assert not Query.objects.filter(qid="q9").exists()
