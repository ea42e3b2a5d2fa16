"""Imports read and check their file outside any transaction and write in short ones.

SQLite has one writer at a time: an import that held a transaction while it parsed locked
every annotator's save out for the whole run. These tests watch the connection while
the importer reads its rows, and check the staging: readers never see half an import, a
rejected file leaves nothing behind, and ids another import took meanwhile are refused.
"""

from __future__ import annotations

import pytest
from django.db import connection

from annotator.importing import import_chunks, import_documents, import_labels, import_queries
from annotator.importing.staging import STAGE_BATCH, STAGING_PREFIX
from annotator.models import Chunk, Chunking, Document, Judgment, Project, Query
from formats import FileRejected

pytestmark = pytest.mark.django_db(transaction=True)


class Watched:
    """Rows that note, as each is read, whether a transaction is open and what the
    project shows (``probe``, by default its document count); ``during[n]()`` runs once
    before row ``n`` is read."""

    def __init__(self, rows, project, *, during=None, probe=None):
        self.rows, self.during = rows, during or {}
        self.probe = probe or project.documents.count
        self.in_transaction: list[bool] = []
        self.visible: list[int] = []

    def __iter__(self):
        for line, row in enumerate(self.rows, start=1):
            if line in self.during:
                self.during[line]()
            self.in_transaction.append(connection.in_atomic_block)
            self.visible.append(self.probe())
            yield line, row


@pytest.fixture
def project():
    return Project.objects.create(slug="bulk", name="Bulk")


def documents(n: int, start: int = 0) -> list[dict]:
    return [{"doc_id": f"d{i}", "text": f"text of document {i}"} for i in range(start, start + n)]


def staging_projects() -> int:
    return Project.objects.filter(slug__startswith=STAGING_PREFIX).count()


def test_documents_are_read_outside_any_transaction_and_appear_all_at_once(project):
    n = STAGE_BATCH * 3 + 7
    rows = Watched(documents(n), project)
    result = import_documents(project, rows)
    assert result.created == n
    assert not any(rows.in_transaction)
    # Batches were written while the file was read, yet the project showed none of them.
    assert Document.objects.filter(project__slug__startswith=STAGING_PREFIX).count() == 0
    assert set(rows.visible) == {0}
    assert project.documents.count() == n
    assert staging_projects() == 0


def test_a_bad_last_line_leaves_nothing_staged_or_imported(project):
    rows = Watched([*documents(STAGE_BATCH * 2), {"text": "no id"}], project)
    with pytest.raises(FileRejected) as rejected:
        import_documents(project, rows)
    assert rejected.value.errors == [f"line {STAGE_BATCH * 2 + 1}: missing doc_id"]
    assert not any(rows.in_transaction)
    assert Document.objects.count() == 0
    assert staging_projects() == 0


def test_an_id_taken_by_another_import_meanwhile_is_refused_at_the_swap(project):
    def other_import() -> None:
        Document.objects.create(project=project, doc_id="d600", text="first")

    rows = Watched(documents(STAGE_BATCH + 200), project, during={3: other_import})
    with pytest.raises(FileRejected) as rejected:
        import_documents(project, rows)
    assert rejected.value.errors == ["line 601: document 'd600' already exists in this project"]
    assert list(project.documents.values_list("doc_id", "text")) == [("d600", "first")]
    assert staging_projects() == 0


def test_chunks_are_read_outside_any_transaction_and_join_the_project_at_the_end(project):
    import_documents(project, [(1, {"doc_id": "d", "text": "x" * 10_000})])
    n = STAGE_BATCH + 10
    spans = [{"chunk_id": f"c{i}", "doc_id": "d", "start": i, "end": i + 5} for i in range(n)]
    rows = Watched(spans, project, probe=project.chunkings.count)
    result = import_chunks(project, rows, chunking="w5")
    assert result.created == n
    assert set(rows.visible) == {0}
    assert not any(rows.in_transaction)
    assert Chunk.objects.filter(chunking__project=project, chunking__name="w5").count() == n
    assert staging_projects() == 0


def test_queries_and_labels_are_read_outside_any_transaction(project):
    import_documents(project, [(1, {"doc_id": "d1", "text": "one"})])
    rows = Watched([{"qid": f"q{i}", "text": f"query {i}"} for i in range(30)], project)
    assert import_queries(project, rows).created == 30
    assert not any(rows.in_transaction)
    labels = Watched([{"qid": f"q{i}", "docid": "d1", "grade": i % 4} for i in range(30)], project)
    assert import_labels(project, labels, annotator="assessors", level="document").created == 30
    assert not any(labels.in_transaction)
    assert Judgment.objects.filter(query__project=project).count() == 30


def test_a_rejected_label_file_creates_no_pseudo_annotator(project):
    import_documents(project, [(1, {"doc_id": "d1", "text": "one"})])
    Query.objects.create(project=project, qid="q1", text="q")
    with pytest.raises(FileRejected):
        import_labels(
            project,
            [
                (1, {"qid": "q1", "docid": "d1", "grade": 2}),
                (2, {"qid": "q9", "docid": "d1", "grade": 1}),
            ],
            annotator="new-judge",
            level="document",
        )
    assert not project.memberships.exists()
    assert not Chunking.objects.exists()
