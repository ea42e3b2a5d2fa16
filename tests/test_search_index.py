"""Search finds exactly the rows holding every term, through an index for every term
(trigrams for long ones, character bigrams for short and Chinese ones), and counts them."""

from __future__ import annotations

import random
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator import search as search_module
from annotator.models import Chunk, Chunking, Document
from annotator.search import search, search_page, split_terms
from annotator.search_grams import grams, term_grams

pytestmark = pytest.mark.django_db

ALPHABET = "ab机翼升力 -."


def test_a_terms_grams_are_in_every_text_holding_it():
    text = "The Wing, 机翼的升力。"
    for start in range(len(text)):
        for end in range(start + 1, min(len(text), start + 6) + 1):
            needed, prefix = term_grams(text[start:end])
            held = grams(text)
            if prefix:
                assert any(g.startswith(needed[0]) for g in held)
            else:
                assert set(needed) <= held


@pytest.fixture
def corpus_of(personas):
    project = personas["project"]

    def build(texts: list[str]):
        Chunking.objects.filter(project=project).delete()
        Document.objects.filter(project=project).delete()
        chunking = Chunking.objects.create(project=project, name="c")
        documents = Document.objects.bulk_create(
            [
                Document(project=project, doc_id=f"d{i}", title="", text=t)
                for i, t in enumerate(texts)
            ]
        )
        chunks = Chunk.objects.bulk_create(
            [
                Chunk(chunking=chunking, chunk_id=f"d{i}", document=d, start=0, end=max(len(t), 1))
                for i, (d, t) in enumerate(zip(documents, texts, strict=True))
            ]
        )
        return project, chunking, documents, chunks

    return build


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.text(ALPHABET, min_size=1, max_size=12), min_size=1, max_size=8),
    st.lists(st.text(ALPHABET.replace(" ", ""), min_size=1, max_size=4), min_size=1, max_size=2),
)
def test_results_are_exactly_the_texts_holding_every_term(corpus_of, texts, terms):
    project, chunking, documents, chunks = corpus_of(texts)
    typed = " ".join(f'"{t}"' for t in terms)
    expected = {
        i
        for i, text in enumerate(texts)
        if all(t.lower() in text.lower() for t in split_terms(typed))
    }
    chunk_index = {c.pk: i for i, c in enumerate(chunks)}
    got = search(project, typed, chunking=chunking, limit=100)
    assert {chunk_index[pk] for pk in got} == expected
    document_index = {d.pk: i for i, d in enumerate(documents)}
    got = search(project, typed, documents=True, limit=100)
    assert {document_index[pk] for pk in got} == expected
    page = search_page(project, typed, chunking=chunking, per_page=3)
    assert page.total == len(expected) and len(page.ids) == min(3, len(expected))


@pytest.mark.parametrize("typed", ["合同", "罪", "wing", "合同法规定", "AI"])
@pytest.mark.parametrize("documents", [False, True])
def test_every_term_is_served_by_an_index(corpus_of, typed, documents):
    if connection.vendor not in ("sqlite", "postgresql"):
        pytest.skip("no full-text index on this database")
    project, chunking, _, _ = corpus_of(
        ["合同法规定，违约方应当承担赔偿责任。", "The wing and AI.", "罪"] * 3
    )
    with CaptureQueriesContext(connection) as captured:
        search_page(project, typed, chunking=chunking, documents=documents, per_page=1)
    statements = [
        q["sql"]
        for q in captured.captured_queries
        if "SELECT" in q["sql"] and "sqlite_master" not in q["sql"]
    ]
    assert statements
    # The word list's LIKE is served by its trigram index (tests/test_search_words.py).
    assert not any(
        " LIKE " in sql.upper().replace("ILIKE", "")
        for sql in statements
        if "FROM annotator_search_word" not in sql
    )
    if connection.vendor == "sqlite":
        # Each statement starts from a full-text index, never from a scan of a table (the
        # ranking of one term reads the index's own rows by their keys).
        for sql in statements:
            assert "MATCH" in sql or re.search(r"_fts_\w+ WHERE id (=|IN) ", sql), sql
    else:
        assert "grams @@" in " ".join(statements) or "w.words &&" in " ".join(statements)


def test_counts_pages_and_caps(corpus_of, monkeypatch):
    project, chunking, _, chunks = corpus_of([f"合同 {i}" for i in range(7)] + ["other"])
    first = search_page(project, "合同", chunking=chunking, per_page=3)
    assert (len(first.ids), first.total, first.has_next, first.more_than) == (3, 7, True, False)
    third = search_page(project, "合同", chunking=chunking, page=3, per_page=3)
    assert (len(third.ids), third.offset, third.has_next) == (1, 6, False)
    pages = [
        search_page(project, "合同", chunking=chunking, page=n, per_page=3).ids for n in (1, 2, 3)
    ]
    assert sorted(pk for ids in pages for pk in ids) == sorted(c.pk for c in chunks[:7])
    monkeypatch.setattr(search_module, "COUNT_LIMIT", 5)
    capped = search_page(project, "合同", chunking=chunking, per_page=3)
    assert capped.more_than and capped.shown_total == 5


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_text_too_large_for_a_tsvector_is_still_found(corpus_of):
    rng = random.Random(3)
    huge = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(250_000)) + "合同"
    project, chunking, _, chunks = corpus_of([huge, "合同 small"])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM annotator_chunk_search WHERE grams IS NULL AND chunking_id = %s",
            [chunking.pk],
        )
        assert cursor.fetchone()[0] == 1
    assert sorted(search(project, "合同", chunking=chunking)) == sorted(c.pk for c in chunks)
    assert len(search(project, "合同", documents=True)) == 2


def test_search_screen_counts_pages_and_starts_on_documents(
    login, personas, corpus_of, monkeypatch
):
    from django.urls import reverse

    from annotator.labelling import search_views
    from annotator.models import Query

    monkeypatch.setattr(search_views, "SEARCH_LIMIT", 2)
    project, chunking, _, _ = corpus_of([f"合同 {i}" for i in range(5)])
    query = Query.objects.create(project=project, qid="sq", text="x")
    client = login(personas["annotator"])
    url = reverse("annotator:label_query_search", args=["acme", query.pk])
    body = client.get(url, {"q": "合同"}, HTTP_HX_REQUEST="true").content.decode()
    assert "5 chunks found" in body and "1–2 of 5" in body
    assert 'rel="next" href="?q=%E5%90%88%E5%90%8C&amp;page=2"' in body
    body = client.get(url, {"q": "合同", "page": 3}, HTTP_HX_REQUEST="true").content.decode()
    assert "5–5 of 5" in body and 'rel="next"' not in body and 'rel="prev"' in body
    assert client.get(url, {"q": "合同", "page": 0}).status_code == 400
    # Without a chunking there are only documents: the search starts there.
    chunking.delete()
    body = client.get(url, {"q": "合同"}).content.decode()
    assert "5 documents found" in body
    assert '<option value="documents" selected>' in body


# One page of results and its count, from as few passes over the matches as possible: the
# ranked window's size is the count whenever the window holds every match.

PAGE_CORPUS = (
    ["wing wing wing 合同法规定", "the wing 合同", "罪 wing", "nothing here"]
    + [f"wing number {i} 合同 法规" for i in range(9)]
    + ["Wing and wing and WING 合同法规定 合同"]
)


def _reference(project, chunking, typed, page, per_page, documents=False):
    """The page and count as two separate statements gave them (ranking, then counting)."""
    from annotator.search_sql import Scope, count_matching, matching

    scope = Scope(True, project.pk) if documents else Scope(False, chunking.pk)
    terms = split_terms(typed)
    offset = (page - 1) * per_page
    ids = matching(scope, terms, any_term=False, offset=offset, limit=per_page)
    return ids, count_matching(scope, terms, search_module.COUNT_LIMIT + 1)


def _passes(sql: str) -> bool:
    """Whether a statement is a pass over a term's matches (not a read of rows by key)."""
    return "MATCH" in sql or any(
        table in sql
        for table in ("_chunk_search", "_document_search", "_chunk_words", "_document_words")
    )


@pytest.mark.parametrize("window", [2000, 4])
@pytest.mark.parametrize("typed", ["wing", "合同", "合同法规定", "罪", "法", "absent", "wing 合同"])
@pytest.mark.parametrize("documents", [False, True])
def test_a_page_and_its_count_are_what_ranking_and_counting_give(
    corpus_of, monkeypatch, window, typed, documents
):
    from annotator import search_sql

    monkeypatch.setattr(search_sql, "RANK_WINDOW", window)
    project, chunking, _, _ = corpus_of(PAGE_CORPUS)
    for page in (1, 2, 3):
        found = search_page(
            project, typed, chunking=chunking, documents=documents, page=page, per_page=3
        )
        expected_ids, expected_total = _reference(
            project, chunking, typed, page, 3, documents=documents
        )
        assert (found.ids, found.total) == (expected_ids, expected_total), (typed, page)


def test_the_first_page_is_ranked_by_occurrences_then_row(corpus_of):
    """Hand-worked: the text saying "wing" most often comes first (both databases)."""
    project, chunking, _, chunks = corpus_of(PAGE_CORPUS)
    found = search_page(project, "wing", chunking=chunking, per_page=30)
    assert found.total == 13
    assert found.ids[0] in (chunks[0].pk, chunks[-1].pk)  # three occurrences each
    assert set(found.ids) == {c.pk for c in chunks if "wing" in c.document.text.lower()}
    if connection.vendor == "postgresql":  # occurrences, then the row: an exact order
        assert found.ids[:2] == [chunks[0].pk, chunks[-1].pk]
        assert found.ids[2:] == sorted(found.ids[2:])


@pytest.mark.parametrize("typed", ["wing", "合同"])
def test_a_page_with_every_match_in_its_window_is_one_statement(corpus_of, typed):
    if connection.vendor not in ("sqlite", "postgresql"):
        pytest.skip("no full-text index on this database")
    counts = []
    for size in (4, 40):
        project, chunking, _, _ = corpus_of([f"{typed} {i}" for i in range(size)])
        search_page(project, "warm", chunking=chunking)
        with CaptureQueriesContext(connection) as captured:
            found = search_page(project, typed, chunking=chunking, page=2, per_page=3)
        assert found.total == size
        counts.append(sum(_passes(q["sql"]) for q in captured.captured_queries))
    assert counts[0] == counts[1] == 1  # the page and its count in one statement
    if connection.vendor == "postgresql":  # the planner's settings are put back
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('enable_indexscan'), current_setting('enable_seqscan')"
            )
            assert cursor.fetchone() == ("on", "on")


# Texts of different lengths saying the term different numbers of times (overlapping,
# in any case, in the title too): bm25 and the number of occurrences disagree on them.
BM25_CORPUS = [
    ("", "aaaa " + "x" * 40),
    ("aaa", "short aaa"),
    ("", "AAAaaa aaa " + "y" * 200),
    ("", "aaa"),
    ("Aaa aaa", "aaa " + "z" * 90),
    ("", "nothing"),
    ("", "aaa aaa aaa aaa " + "w" * 500),
    ("", "x aaa y"),
    ("", "x aaa x aaa X AAA " + "v" * 30),
    ("x aaa", "x aaa"),
] * 3


@pytest.mark.parametrize("documents", [False, True])
@pytest.mark.parametrize("window", [2000, 5])
@pytest.mark.parametrize("typed", ["aaa", '"x aaa"'])  # occurrences may overlap, may not
def test_one_term_is_ranked_as_fts5_bm25_ranks_it(corpus_of, monkeypatch, documents, window, typed):
    from annotator import search_sql

    monkeypatch.setattr(search_sql, "RANK_WINDOW", window)
    project, chunking, docs, _ = corpus_of([text for _, text in BM25_CORPUS])
    for document, (title, _) in zip(docs, BM25_CORPUS, strict=True):
        document.title = title
    Document.objects.bulk_update(docs, ["title"])
    for page in (1, 2, 3, 4):
        found = search_page(
            project, typed, chunking=chunking, documents=documents, page=page, per_page=4
        )
        expected = _reference(project, chunking, typed, page, 4, documents=documents)
        assert (found.ids, found.total) == expected, page


@pytest.mark.parametrize("documents", [False, True])
def test_a_term_with_more_matches_than_the_window_is_one_pass(corpus_of, monkeypatch, documents):
    """Ranking a window of more matches than it holds and counting them: one pass over the
    matches (on SQLite it was two: FTS5's bm25, then the count)."""
    if connection.vendor not in ("sqlite", "postgresql"):
        pytest.skip("no full-text index on this database")
    from annotator import search_sql

    monkeypatch.setattr(search_sql, "RANK_WINDOW", 4)
    project, chunking, _, _ = corpus_of([f"wing {'x' * i}" for i in range(12)])
    with CaptureQueriesContext(connection) as captured:
        found = search_page(project, "wing", chunking=chunking, documents=documents, per_page=3)
    assert found.total == 12 and len(found.ids) == 3
    passes = [q["sql"] for q in captured.captured_queries if _passes(q["sql"])]
    if connection.vendor == "sqlite" or not documents:
        assert len(passes) == 1, passes
    assert not any("rank" in sql for sql in passes)


@pytest.mark.parametrize("documents", [False, True])
def test_a_count_taking_a_pass_of_its_own_is_left_to_search_count(
    corpus_of, monkeypatch, documents
):
    from annotator import search_sql
    from annotator.search import search_count

    monkeypatch.setattr(search_sql, "RANK_WINDOW", 4)
    project, chunking, _, _ = corpus_of([f"wing {'x' * i}" for i in range(12)] + ["other"])
    counted = search_page(project, "wing", chunking=chunking, documents=documents, per_page=3)
    found = search_page(
        project, "wing", chunking=chunking, documents=documents, per_page=3, count=False
    )
    assert found.ids == counted.ids and found.has_next and (found.first, found.last) == (1, 3)
    if connection.vendor == "postgresql" and not documents:
        assert found.total == 12  # PostgreSQL counts a chunking's matches in its one pass
    else:
        assert (found.total, found.counted, found.shown_total) == (None, False, 4)
    later = search_count(project, "wing", chunking=chunking, documents=documents, per_page=3)
    assert (later.ids, later.total, later.first, later.last, later.has_next) == ([], 12, 1, 3, True)
    last_page = search_count(
        project, "wing", chunking=chunking, documents=documents, page=4, per_page=3
    )
    assert (last_page.first, last_page.last, last_page.has_next) == (10, 12, False)
    # A window holding every match is its count: nothing is left for later.
    few = search_page(project, "other", chunking=chunking, documents=documents, count=False)
    assert few.total == 1


def test_the_search_screen_shows_results_first_and_asks_for_their_number(
    login, personas, corpus_of, monkeypatch
):
    from django.urls import reverse

    from annotator import search_sql
    from annotator.labelling import search_views
    from annotator.models import Query

    monkeypatch.setattr(search_views, "SEARCH_LIMIT", 2)
    monkeypatch.setattr(search_sql, "RANK_WINDOW", 4)
    project, _, _, _ = corpus_of([f"wing {'x' * i}" for i in range(12)])
    query = Query.objects.create(project=project, qid="sq", text="x")
    client = login(personas["annotator"])
    url = reverse("annotator:label_query_search", args=["acme", query.pk])
    body = client.get(url, {"q": "wing", "scope": "documents"}).content.decode()
    assert "At least 4 documents found" in body and "1–2 of at least 4" in body
    asks = f'hx-get="{url}?q=wing&amp;scope=documents" hx-trigger="load"'
    assert f'<h3 id="search-count" {asks}' in body
    with CaptureQueriesContext(connection) as captured:
        count = client.get(
            url,
            {"q": "wing", "scope": "documents"},
            HTTP_HX_REQUEST="true",
            HTTP_HX_TARGET="search-count",
        ).content.decode()
    assert count.startswith('<h3 id="search-count">12 documents found</h3>')
    assert '<span id="search-range" hx-swap-oob="true">1–2 of 12</span>' in count
    assert "doc-result" not in count and "hx-trigger" not in count
    passes = [q["sql"] for q in captured.captured_queries if _passes(q["sql"])]
    assert len(passes) == 1 and "count(" in passes[0]
    # Few matches: counted with the results, nothing asked for later.
    body = client.get(url, {"q": "xxxxxxxxxxx", "scope": "documents"}).content.decode()
    assert "1 document found" in body and 'hx-trigger="load"' not in body


@pytest.mark.skipif("connection.vendor != 'sqlite'")
def test_a_deep_page_ranks_a_window_larger_than_sqlites_limit_on_parameters(corpus_of, monkeypatch):
    """A page far in ranks every match before it (a window of 300,000 ids at page
    10,000): the window is one parameter, not one per id (SQLite refuses more than its
    limit; lowered here to 10)."""
    import sqlite3

    from annotator import search_sql

    monkeypatch.setattr(search_sql, "RANK_WINDOW", 4)
    project, chunking, _, _ = corpus_of([f"wing {'x' * i}" for i in range(30)])
    expected = _reference(project, chunking, "wing", 5, 5)
    connection.ensure_connection()
    raw = connection.connection
    limit = raw.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 10)
    try:
        found = search_page(project, "wing", chunking=chunking, page=5, per_page=5)
    finally:
        raw.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)
    assert (found.ids, found.total) == expected and len(found.ids) == 5
