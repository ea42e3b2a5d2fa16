"""PostgreSQL's word index (migration 0017): a term of ASCII letters and digits is expanded
to the listed words that contain it and found through the GIN index of the rows' words.
Its results are exactly the texts holding the term (the definition, and the trigram path
it replaces), it reads no row that does not match (no recheck), and the word list is
kept by the triggers without making two imports wait for each other."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator import search_sql
from annotator.models import Document
from annotator.search import search, search_page

from .test_search_index import corpus_of  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("the word index is PostgreSQL's (SQLite's FTS5 trigram index is exact)")


# Letters that fold (A/a), digits, separators and letters outside [a-z0-9] that cut or
# sit inside words (é, 中, _).
TEXT = "abAB01 é中_-."
TERM = "abAB01"


def _words_in(sql_statements: list[str]) -> bool:
    return any("w.words" in sql for sql in sql_statements)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.text(TEXT, min_size=1, max_size=14), min_size=1, max_size=8),
    st.lists(st.text(TERM, min_size=3, max_size=4), min_size=1, max_size=2),
)
def test_a_word_term_finds_exactly_the_texts_holding_it(corpus_of, texts, terms):  # noqa: F811
    project, chunking, documents, chunks = corpus_of(texts)
    typed = " ".join(terms)
    expected = {i for i, text in enumerate(texts) if all(t.lower() in text.lower() for t in terms)}
    chunk_index = {c.pk: i for i, c in enumerate(chunks)}
    document_index = {d.pk: i for i, d in enumerate(documents)}
    with CaptureQueriesContext(connection) as captured:
        got_chunks = {
            chunk_index[pk] for pk in search(project, typed, chunking=chunking, limit=100)
        }
        got_documents = {
            document_index[pk] for pk in search(project, typed, documents=True, limit=100)
        }
    assert got_chunks == expected
    assert got_documents == expected
    assert _words_in([q["sql"] for q in captured.captured_queries])
    page = search_page(project, typed, chunking=chunking, per_page=2)
    assert page.total == len(expected)


def test_the_word_path_and_the_trigram_path_agree(corpus_of, monkeypatch):  # noqa: F811
    texts = [
        "Lift of the wing",
        "wingspan and WINGLETS",
        "owing money",
        "swing-wing",
        "wing2024 v2",
        "二〇二四wing翼",
        "w_i_n_g",
        "nothing here",
        "WiNg",
    ]
    project, chunking, _, _ = corpus_of(texts)
    for typed in ["wing", "win", "ing", "2024", "owing", "wing 2024", "wingl"]:
        by_words = search(project, typed, chunking=chunking, limit=100)
        monkeypatch.setattr(search_sql, "_words_containing", lambda term: None)
        by_trigrams = search(project, typed, chunking=chunking, limit=100)
        monkeypatch.undo()
        assert sorted(by_words) == sorted(by_trigrams), typed
    assert len(search(project, "wing", chunking=chunking, limit=100)) == 7


def test_a_word_longer_than_the_list_keeps_is_found_by_its_text(corpus_of):  # noqa: F811
    long_word = "x" * 60 + "needle" + "y" * 60
    project, chunking, _, chunks = corpus_of([long_word, "a needle here", "hay"])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT chunk_id FROM annotator_chunk_words WHERE words IS NULL AND chunking_id = %s",
            [chunking.pk],
        )
        assert [row[0] for row in cursor.fetchall()] == [chunks[0].pk]
    assert sorted(search(project, "needle", chunking=chunking)) == sorted(c.pk for c in chunks[:2])
    assert len(search(project, "needle", documents=True)) == 2
    assert search(project, "xxxneedleyyy", chunking=chunking) == [chunks[0].pk]


def test_a_term_inside_too_many_words_is_served_by_trigrams(corpus_of, monkeypatch):  # noqa: F811
    project, chunking, _, chunks = corpus_of(["walking", "talking", "singing", "song"])
    monkeypatch.setattr(search_sql, "MAX_WORDS_PER_TERM", 2)
    with CaptureQueriesContext(connection) as captured:
        found = search(project, "ing", chunking=chunking)
    assert sorted(found) == sorted(c.pk for c in chunks[:3])
    statements = [q["sql"] for q in captured.captured_queries]
    assert not _words_in(statements) and any("ILIKE" in sql for sql in statements)


def test_the_word_path_reads_no_row_that_does_not_match(corpus_of, monkeypatch):  # noqa: F811
    # Every text holds the trigrams of "abcd" ("abc", "bcd"), only one holds the word; as
    # many texts as make the planner read the chunking through the text's index at all.
    _, chunking, _, _ = corpus_of(["abc bcd"] * 1500 + ["xabcdx"])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotator_chunk_search")
        cursor.execute("ANALYZE annotator_chunk_words")
    assert _rows_dropped(chunking, "abcd") == 0
    # The trigram path it replaces reads every text that holds the trigrams.
    monkeypatch.setattr(search_sql, "_words_containing", lambda term: None)
    assert _rows_dropped(chunking, "abcd") == 1500


def _rows_dropped(chunking, term: str) -> int:
    """Rows the plan's heap scans read and dropped (index recheck, filter)."""
    query = search_sql._postgres_query(search_sql.Scope(False, chunking.pk), [term], False)
    sql, params = query.page_and_count(0, 10, 101)
    with connection.cursor() as cursor:
        # 1,501 rows fit in a few pages, where a scan is cheapest: the indexes, as the
        # planner takes them on a real size (docs/benchmarks.md: 900,000 chunks).
        cursor.execute("SET LOCAL enable_seqscan = off")
        if query.bitmap_only:  # as search_sql._fetch_rows runs it
            cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    scans = [n for n in _nodes(plan[0]["Plan"]) if "Relation Name" in n]
    assert scans and not any(n["Node Type"] == "Seq Scan" for n in scans)
    return sum(
        n.get("Rows Removed by Index Recheck", 0) + n.get("Rows Removed by Filter", 0)
        for n in scans
    )


def _nodes(node: dict) -> list[dict]:
    found = [node]
    for child in node.get("Plans", []):
        found += _nodes(child)
    return found


def test_changed_texts_keep_the_word_list(corpus_of):  # noqa: F811
    project, chunking, documents, chunks = corpus_of(["alpha beta", "gamma"])
    assert search(project, "zeta", chunking=chunking) == []
    Document.objects.filter(pk=documents[1].pk).update(text="zetas")
    assert search(project, "zeta", chunking=chunking) == [chunks[1].pk]
    assert search(project, "zeta", documents=True) == [documents[1].pk]
    Document.objects.filter(pk=documents[0].pk).update(title="Omega Title")
    assert search(project, "omega", documents=True) == [documents[0].pk]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT word, count(*) FROM annotator_search_word "
            "WHERE word IN ('zetas', 'omega', 'alpha') GROUP BY word ORDER BY word"
        )
        assert cursor.fetchall() == [("alpha", 1), ("omega", 1), ("zetas", 1)]


def test_two_writers_adding_the_same_new_word_do_not_wait_for_each_other():
    import psycopg

    params = connection.get_connection_params()
    first = psycopg.connect(**params)
    second = psycopg.connect(**params)
    try:
        insert = (
            "INSERT INTO annotator_document_words (document_id, project_id, words) "
            "VALUES (%s, 0, ARRAY['quuxwordone', 'quuxwordtwo'])"
        )
        first.execute(insert, [-1])  # left uncommitted
        second.execute("SET lock_timeout = '2s'")
        second.execute(insert, [-2])  # would wait for the first with a unique word list
        second.commit()
        first.commit()
        rows = first.execute(
            "SELECT DISTINCT word FROM annotator_search_word WHERE word LIKE 'quuxword%%' "
            "ORDER BY word"
        ).fetchall()
        assert rows == [("quuxwordone",), ("quuxwordtwo",)]
        assert search_sql._words_containing("quuxword") == ["quuxwordone", "quuxwordtwo"]
    finally:
        for own in (first, second):
            own.rollback()
            own.execute("DELETE FROM annotator_document_words WHERE document_id IN (-1, -2)")
            own.execute("DELETE FROM annotator_search_word WHERE word LIKE 'quuxword%%'")
            own.commit()
            own.close()
