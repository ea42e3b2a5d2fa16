"""Figures pages show on every visit (documents, queries, chunks) are kept by the database,
and the project list reads them without counting or joining rows that multiply."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator.models import (
    Chunk,
    Chunking,
    ChunkingFigures,
    Document,
    Membership,
    Project,
    ProjectFigures,
    Query,
    Role,
)

pytestmark = pytest.mark.django_db


def counted(project: Project) -> tuple[int, int]:
    return project.documents.count(), project.queries.count()


def kept(project: Project) -> tuple[int, int]:
    figures = ProjectFigures.objects.get(project=project)
    return figures.documents, figures.queries


def chunking_counted(chunking: Chunking) -> tuple[int, int]:
    chunks = Chunk.objects.filter(chunking=chunking)
    return chunks.count(), chunks.values("document_id").distinct().count()


def chunking_kept(chunking: Chunking) -> tuple[int, int]:
    figures = ChunkingFigures.objects.get(chunking=chunking)
    return figures.chunks, figures.documents


def test_figures_follow_every_kind_of_write(personas):
    project, other = personas["project"], personas["other"]
    assert kept(project) == (0, 0)
    Document.objects.create(project=project, doc_id="a", text="x")
    Document.objects.bulk_create(
        [Document(project=project, doc_id=f"b{i}", text="y") for i in range(40)]
    )
    Query.objects.bulk_create([Query(project=project, qid=f"q{i}", text="q") for i in range(7)])
    assert kept(project) == counted(project) == (41, 7)
    # Moving rows between projects (the importer's final swap) moves the figures.
    Document.objects.filter(doc_id__startswith="b1").update(project=other)
    assert kept(project) == counted(project) and kept(other) == counted(other) == (11, 0)
    Document.objects.filter(doc_id="b2").update(title="renamed")  # no move, no change
    Query.objects.filter(qid="q3").delete()
    Document.objects.filter(project=project, doc_id__startswith="b").delete()
    assert kept(project) == counted(project) == (1, 6)
    with connection.cursor() as cursor:  # raw SQL is counted too
        cursor.execute("DELETE FROM annotator_query WHERE project_id = %s", [project.pk])
    assert kept(project) == counted(project) == (1, 0)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "remove", "move"]), st.integers(0, 5), st.integers(0, 3)),
        min_size=1,
        max_size=25,
    )
)
def test_chunking_figures_match_the_chunks(personas, steps):
    """Chunks and the documents they cover, after any sequence of inserts, deletes and moves."""
    project = personas["project"]
    Chunking.objects.filter(project=project).delete()
    Document.objects.filter(project=project).delete()
    documents = Document.objects.bulk_create(
        [Document(project=project, doc_id=f"d{i}", text="z" * 50) for i in range(6)]
    )
    first = Chunking.objects.create(project=project, name="first")
    second = Chunking.objects.create(project=project, name="second")
    for number, (action, doc, size) in enumerate(steps):
        chunking = first if number % 3 else second
        if action == "add":
            Chunk.objects.bulk_create(
                [
                    Chunk(
                        chunking=chunking,
                        chunk_id=f"{number}-{k}",
                        document=documents[doc],
                        start=k,
                        end=k + 1,
                    )
                    for k in range(size + 1)
                ]
            )
        elif action == "remove":
            Chunk.objects.filter(chunking=chunking, document=documents[doc]).delete()
        else:
            Chunk.objects.filter(chunking=chunking, document=documents[doc]).update(
                document=documents[size]
            )
        for each in (first, second):
            assert chunking_kept(each) == chunking_counted(each), (number, action)


def project_list_queries(client) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("annotator:project_list"))
    assert response.status_code == 200
    return [q["sql"] for q in captured.captured_queries]


def test_project_list_reads_figures_and_never_counts_rows(login, personas):
    """The regression: Count(documents) and Count(queries) in one query joined every
    document with every query. The list's SQL is now the same whatever the size."""
    client = login(personas["owner"])
    project = personas["project"]
    Document.objects.create(project=project, doc_id="d0", text="x")
    Query.objects.create(project=project, qid="q0", text="q")
    small = project_list_queries(client)

    Document.objects.bulk_create(
        [Document(project=project, doc_id=f"d{i}", text="x") for i in range(1, 300)]
    )
    Query.objects.bulk_create([Query(project=project, qid=f"q{i}", text="q") for i in range(1, 60)])
    for i in range(5):
        extra = Project.objects.create(slug=f"extra{i}", name=f"Extra {i}")
        Membership.objects.create(project=extra, user=personas["owner"], role=Role.VIEWER)
    body = client.get(reverse("annotator:project_list")).content.decode()
    large = project_list_queries(client)

    assert len(large) == len(small)
    for sql in large:
        assert "annotator_document" not in sql and "annotator_query" not in sql, sql
        # The pager counts the user's projects (memberships), nothing inside them.
        counted = re.search(r"\bCOUNT\((.*)", sql, re.IGNORECASE | re.DOTALL)
        assert counted is None or "annotator_membership" in counted.group(1), sql
    row = re.search(r"Acme search.*?</tr>", body, re.DOTALL).group()
    assert re.findall(r'class="num">([\d,]+)<', row) == ["60", "300"]
