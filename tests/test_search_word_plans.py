"""PostgreSQL's word index at scale: the statement leaves the planner no plan that reads
what the page does not need. At 1,000,000 documents two plans of the old statement took
seconds: walking the chunking's btree and testing each chunk's words (1.9 million chunks
read for 10,000 matches, 2.3 s), and sorting the whole chunks' search table by the score
to join the window's 2,000 matches to it (9 million rows sorted on disk, 24 s). The
tests force the planner's hand the way those statistics did and read the plan; each
fails on the old statement. Results stay exact with several chunkings of one project,
whose words are told apart only by their chunking's prefix."""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from annotator.models import Chunk, Chunking
from annotator.search import search, search_page

from .test_search_index import corpus_of  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("the word index is PostgreSQL's")


TEXTS = [
    "the needle here",
    "hay and straw",
    "needles, more needles",
    "x" * 60 + "needle" + "y" * 60,
]


def _page_statement(project, chunking) -> str:
    with CaptureQueriesContext(connection) as captured:
        search_page(project, "needle", chunking=chunking, per_page=2)
    (sql,) = [q["sql"] for q in captured.captured_queries if "annotator_chunk_words w" in q["sql"]]
    return sql


def _plan(sql: str, **settings: str) -> list[dict]:
    """Every node of ``sql``'s plan under the planner ``settings``."""
    with transaction.atomic(), connection.cursor() as cursor:
        for name, value in settings.items():
            cursor.execute("SELECT set_config(%s, %s, true)", [name, value])
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
        raw = cursor.fetchone()[0]
    plan = (json.loads(raw) if isinstance(raw, str) else raw)[0]["Plan"]
    nodes, todo = [], [plan]
    while todo:
        node = todo.pop()
        nodes.append(node)
        todo.extend(node.get("Plans", []))
    return nodes


def test_the_matches_are_not_found_by_walking_the_chunking(corpus_of):  # noqa: F811
    project, chunking, _, _ = corpus_of(TEXTS)
    sql = _page_statement(project, chunking)
    # Without bitmaps, the old statement walked the chunking's btree (its estimate of
    # the matches too high, as at scale); the scope is now asked of unworded rows only.
    nodes = _plan(sql, enable_bitmapscan="off", enable_seqscan="off")
    indexes = {node.get("Index Name") for node in nodes}
    assert "annotator_chunk_words_chunking" not in indexes


def test_the_window_s_texts_are_read_by_key_not_by_a_join(corpus_of):  # noqa: F811
    project, chunking, _, _ = corpus_of(TEXTS)
    sql = _page_statement(project, chunking)
    # Without nested loops, the old statement joined the whole search table (a hash or
    # merge join over a scan of every chunk); a lateral read by key has no other plan.
    # (``x`` is the unworded rows' check of their text, not the window's texts.)
    nodes = _plan(sql, enable_nestloop="off")
    texts = [
        node
        for node in nodes
        if node.get("Relation Name") == "annotator_chunk_search" and node.get("Alias") == "s"
    ]
    assert texts
    assert all(
        "(chunk_id = " in (node.get("Index Cond") or node.get("Recheck Cond") or "")
        for node in texts
    ), [(node["Node Type"], node.get("Index Cond")) for node in texts]


def test_a_chunking_finds_only_its_own_chunks_among_several(corpus_of):  # noqa: F811
    project, chunking, documents, chunks = corpus_of(TEXTS)
    other = Chunking.objects.create(project=project, name="other")
    theirs = Chunk.objects.bulk_create(
        [
            Chunk(chunking=other, chunk_id=f"o{i}", document=d, start=0, end=len(t))
            for i, (d, t) in enumerate(zip(documents, TEXTS, strict=True))
        ]
    )
    expected = {chunks[0].pk, chunks[2].pk, chunks[3].pk}  # the last one unworded
    assert set(search(project, "needle", chunking=chunking, limit=100)) == expected
    assert set(search(project, "needle", chunking=other, limit=100)) == {
        theirs[0].pk,
        theirs[2].pk,
        theirs[3].pk,
    }
    page = search_page(project, "needle", chunking=chunking, per_page=2)
    assert page.total == 3 and set(page.ids) <= expected
    rest = search_page(project, "needle", chunking=chunking, per_page=2, page=2)
    assert set(page.ids) | set(rest.ids) == expected
    assert set(search(project, "needle straw", chunking=chunking, any_term=True)) == expected | {
        chunks[1].pk
    }
