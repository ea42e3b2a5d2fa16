"""The scale benchmark's bulk load (bench/scale_project.py) leaves PostgreSQL's search
tables exactly as the triggers would have: same rows, same texts, same grams and words,
every word in the word list; the triggers on again and every GIN index back."""

import json

import pytest
from django.db import connection

from bench import scale_project

pytestmark = pytest.mark.django_db(transaction=True)

_INDEXES = """SELECT indexname FROM pg_indexes WHERE tablename = ANY(%s)
    AND indexdef LIKE '%%USING gin%%' ORDER BY indexname"""
_TRIGGERS = """SELECT t.tgname, t.tgenabled FROM pg_trigger t
    WHERE t.tgname = ANY(%s) ORDER BY t.tgname"""
# Every row, against the triggers' own expressions.
_DIFFERENCES = """SELECT
    (SELECT count(*) FROM annotator_chunk c JOIN annotator_document d ON d.id = c.document_id
     FULL JOIN annotator_chunk_search s ON s.chunk_id = c.id
     WHERE c.id IS NULL OR s.chunk_id IS NULL
        OR s.text IS DISTINCT FROM substr(d.text, c.start + 1, c."end" - c.start)
        OR s.grams IS DISTINCT FROM annotator_grams(s.text)
        OR s.chunking_id IS DISTINCT FROM c.chunking_id),
    (SELECT count(*) FROM annotator_chunk c JOIN annotator_document d ON d.id = c.document_id
     FULL JOIN annotator_chunk_words w ON w.chunk_id = c.id
     WHERE c.id IS NULL OR w.chunk_id IS NULL OR w.chunking_id IS DISTINCT FROM c.chunking_id
        OR w.words IS DISTINCT FROM annotator_scoped_words(
               c.chunking_id, substr(d.text, c.start + 1, c."end" - c.start))),
    (SELECT count(*) FROM annotator_document d
     FULL JOIN annotator_document_words w ON w.document_id = d.id
     WHERE d.id IS NULL OR w.document_id IS NULL OR w.project_id IS DISTINCT FROM d.project_id
        OR w.words IS DISTINCT FROM annotator_words(d.title || ' ' || d.text)),
    (SELECT count(*) FROM annotator_document d
     FULL JOIN annotator_document_search s ON s.document_id = d.id
     WHERE d.id IS NULL OR s.document_id IS NULL OR s.project_id IS DISTINCT FROM d.project_id
        OR s.grams IS DISTINCT FROM annotator_grams(d.title) || annotator_grams(d.text)),
    (SELECT count(*) FROM annotator_chunk_search),
    (SELECT count(*) FROM (SELECT substr(x, strpos(x, ':') + 1)
                           FROM annotator_chunk_words, unnest(words) AS x
                           UNION SELECT unnest(words) FROM annotator_document_words) w(word)
     WHERE NOT EXISTS (SELECT 1 FROM annotator_search_word k WHERE k.word = w.word))"""


def _state():
    with connection.cursor() as cursor:
        cursor.execute(_INDEXES, [list(scale_project._SEARCH_TABLES)])
        indexes = [name for (name,) in cursor.fetchall()]
        cursor.execute(_TRIGGERS, [[t for _table, t in scale_project._SEARCH_TRIGGERS]])
        triggers = cursor.fetchall()
    return indexes, triggers


@pytest.fixture
def tiny(monkeypatch, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    monkeypatch.setitem(scale_project.SIZES, "tiny", (40, 6, 2, 24))


def test_bulk_search_tables_are_what_the_triggers_write(tiny):
    if connection.vendor != "postgresql":
        pytest.skip("the bulk load is PostgreSQL's (SQLite keeps its triggers)")
    indexes, triggers = _state()
    assert len(indexes) == 7 and [on for _name, on in triggers] == ["O"] * 5

    generated = scale_project.generate("tiny", bulk_search=True)

    assert _state() == (indexes, triggers)  # indexes back, triggers on
    with connection.cursor() as cursor:
        cursor.execute(_DIFFERENCES)
        *wrong, rows, unlisted_words = cursor.fetchone()
    assert wrong == [0, 0, 0, 0] and unlisted_words == 0
    assert rows == 40 * 9 == generated.counts["chunks"]
    # Search finds through the rebuilt indexes what it finds through the triggers'.
    from annotator.models import Chunk, Document

    document = Document.objects.get(doc_id="d1")
    chunk = Chunk.objects.filter(document=document).order_by("start").first()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "SELECT count(*) FROM annotator_chunk_search "
            "WHERE grams @@ %s::tsquery AND chunk_id = %s",
            [f"'{document.text[1:3]}'", chunk.pk],
        )
        assert cursor.fetchone()[0] == 1


def test_a_failed_fill_leaves_the_triggers_on_and_the_indexes_built(tiny, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("the bulk load is PostgreSQL's")
    indexes, triggers = _state()
    monkeypatch.setattr(
        scale_project, "_FILL_CHUNKS", "SELECT no_such_column WHERE %s::int = %s::int"
    )
    with pytest.raises(Exception, match="no_such_column"):
        scale_project.generate("tiny", bulk_search=True)
    assert _state() == (indexes, triggers)


def test_without_search_indexes_the_tables_are_filled_and_the_search_pages_left_out(tiny):
    if connection.vendor != "postgresql":
        pytest.skip("the bulk load is PostgreSQL's")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = ANY(%s) "
            "AND indexdef LIKE '%%USING gin%%'",
            [list(scale_project._SEARCH_TABLES)],
        )
        definitions = [definition for (definition,) in cursor.fetchall()]
    indexes, triggers = _state()
    try:
        generated = scale_project.generate("tiny", bulk_search=True, search_indexes=False)
        assert _state() == ([], triggers)  # no GIN index, triggers on
        with connection.cursor() as cursor:
            cursor.execute(_DIFFERENCES)
            *wrong, rows, unlisted_words = cursor.fetchone()
        assert wrong == [0, 0, 0, 0] and unlisted_words == 0 and rows == 40 * 9
        assert generated.search_indexes is False
        # What the benchmark keeps says so, read back by a later run.
        kept = scale_project.Generated(**json.loads(json.dumps(generated.__dict__)))
        assert kept.search_indexes is False
        assert scale_project.Generated("p", {}, {}, {}, {}).search_indexes  # older files
    finally:  # the schema as the migrations left it, for the tests after this one
        with connection.cursor() as cursor:
            for definition in definitions:
                cursor.execute(definition.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS"))
    assert _state() == (indexes, triggers)
