"""Full-text search over chunks and documents, kept in sync by the database itself.

SQLite: FTS5 virtual tables with the trigram tokenizer (SQLite >= 3.34), which finds any
substring of three characters or more in any script, Chinese included. Chunks are spans,
so their text is copied into the index by triggers on chunks and documents.

PostgreSQL: the pg_trgm extension; GIN trigram indexes on the documents' title and text,
and a side table holding each chunk's text (with its own trigram index), maintained by
statement-level triggers, TRUNCATE included (the test runner empties tables that way).

Any other backend gets nothing here; ``annotator.search`` then falls back to LIKE.
"""

import sqlite3

from django.db import migrations

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE annotator_chunk_fts USING fts5(text, tokenize='trigram')",
    "CREATE VIRTUAL TABLE annotator_document_fts USING fts5(title, text, tokenize='trigram')",
    """CREATE TRIGGER annotator_chunk_fts_ai AFTER INSERT ON annotator_chunk BEGIN
        INSERT INTO annotator_chunk_fts(rowid, text)
        SELECT new.id, substr(d.text, new.start + 1, new."end" - new.start)
        FROM annotator_document d WHERE d.id = new.document_id;
    END""",
    """CREATE TRIGGER annotator_chunk_fts_ad AFTER DELETE ON annotator_chunk BEGIN
        DELETE FROM annotator_chunk_fts WHERE rowid = old.id;
    END""",
    """CREATE TRIGGER annotator_chunk_fts_au AFTER UPDATE OF start, "end", document_id
        ON annotator_chunk BEGIN
        DELETE FROM annotator_chunk_fts WHERE rowid = old.id;
        INSERT INTO annotator_chunk_fts(rowid, text)
        SELECT new.id, substr(d.text, new.start + 1, new."end" - new.start)
        FROM annotator_document d WHERE d.id = new.document_id;
    END""",
    """CREATE TRIGGER annotator_document_fts_ai AFTER INSERT ON annotator_document BEGIN
        INSERT INTO annotator_document_fts(rowid, title, text)
        VALUES (new.id, new.title, new.text);
    END""",
    """CREATE TRIGGER annotator_document_fts_ad AFTER DELETE ON annotator_document BEGIN
        DELETE FROM annotator_document_fts WHERE rowid = old.id;
    END""",
    """CREATE TRIGGER annotator_document_fts_au AFTER UPDATE OF title, text ON annotator_document
        WHEN old.title IS NOT new.title OR old.text IS NOT new.text BEGIN
        DELETE FROM annotator_document_fts WHERE rowid = old.id;
        INSERT INTO annotator_document_fts(rowid, title, text)
        VALUES (new.id, new.title, new.text);
    END""",
    """CREATE TRIGGER annotator_document_chunk_fts_au AFTER UPDATE OF text ON annotator_document
        WHEN old.text IS NOT new.text BEGIN
        DELETE FROM annotator_chunk_fts
        WHERE rowid IN (SELECT id FROM annotator_chunk WHERE document_id = new.id);
        INSERT INTO annotator_chunk_fts(rowid, text)
        SELECT c.id, substr(new.text, c.start + 1, c."end" - c.start)
        FROM annotator_chunk c WHERE c.document_id = new.id;
    END""",
    # Index what is already there.
    """INSERT INTO annotator_document_fts(rowid, title, text)
        SELECT id, title, text FROM annotator_document""",
    """INSERT INTO annotator_chunk_fts(rowid, text)
        SELECT c.id, substr(d.text, c.start + 1, c."end" - c.start)
        FROM annotator_chunk c JOIN annotator_document d ON d.id = c.document_id""",
]

SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS annotator_document_chunk_fts_au",
    "DROP TRIGGER IF EXISTS annotator_document_fts_au",
    "DROP TRIGGER IF EXISTS annotator_document_fts_ad",
    "DROP TRIGGER IF EXISTS annotator_document_fts_ai",
    "DROP TRIGGER IF EXISTS annotator_chunk_fts_au",
    "DROP TRIGGER IF EXISTS annotator_chunk_fts_ad",
    "DROP TRIGGER IF EXISTS annotator_chunk_fts_ai",
    "DROP TABLE IF EXISTS annotator_document_fts",
    "DROP TABLE IF EXISTS annotator_chunk_fts",
]

_PG_UPSERT = """
    INSERT INTO annotator_chunk_search (chunk_id, chunking_id, document_id, text)
    SELECT n.id, n.chunking_id, n.document_id, substr(d.text, n.start + 1, n."end" - n.start)
    FROM new_rows n JOIN annotator_document d ON d.id = n.document_id
    ON CONFLICT (chunk_id) DO UPDATE SET chunking_id = EXCLUDED.chunking_id,
        document_id = EXCLUDED.document_id, text = EXCLUDED.text;
"""

POSTGRES_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    """CREATE TABLE annotator_chunk_search (
        chunk_id bigint PRIMARY KEY,
        chunking_id bigint NOT NULL,
        document_id bigint NOT NULL,
        text text NOT NULL
    )""",
    "CREATE INDEX annotator_chunk_search_chunking ON annotator_chunk_search (chunking_id)",
    "CREATE INDEX annotator_chunk_search_document ON annotator_chunk_search (document_id)",
    """CREATE INDEX annotator_chunk_search_trgm ON annotator_chunk_search
        USING gin (text gin_trgm_ops)""",
    """CREATE INDEX annotator_document_text_trgm ON annotator_document
        USING gin (text gin_trgm_ops)""",
    """CREATE INDEX annotator_document_title_trgm ON annotator_document
        USING gin (title gin_trgm_ops)""",
    f"""CREATE FUNCTION annotator_chunk_search_insert() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN {_PG_UPSERT} RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_chunk_search_delete() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        DELETE FROM annotator_chunk_search WHERE chunk_id IN (SELECT id FROM old_rows);
        RETURN NULL; END $$""",
    f"""CREATE FUNCTION annotator_chunk_search_update() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        DELETE FROM annotator_chunk_search WHERE chunk_id IN (SELECT id FROM old_rows);
        {_PG_UPSERT} RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_chunk_search_truncate() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN TRUNCATE annotator_chunk_search; RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_chunk_search_document() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        UPDATE annotator_chunk_search s
        SET text = substr(n.text, c.start + 1, c."end" - c.start)
        FROM annotator_chunk c
        JOIN new_rows n ON n.id = c.document_id
        JOIN old_rows o ON o.id = n.id
        WHERE s.chunk_id = c.id AND o.text IS DISTINCT FROM n.text;
        RETURN NULL; END $$""",
    """CREATE TRIGGER annotator_chunk_search_ai AFTER INSERT ON annotator_chunk
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_search_insert()""",
    """CREATE TRIGGER annotator_chunk_search_ad AFTER DELETE ON annotator_chunk
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_search_delete()""",
    """CREATE TRIGGER annotator_chunk_search_au AFTER UPDATE ON annotator_chunk
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_search_update()""",
    """CREATE TRIGGER annotator_chunk_search_at AFTER TRUNCATE ON annotator_chunk
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_search_truncate()""",
    """CREATE TRIGGER annotator_chunk_search_doc_au AFTER UPDATE ON annotator_document
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_search_document()""",
    """INSERT INTO annotator_chunk_search (chunk_id, chunking_id, document_id, text)
        SELECT c.id, c.chunking_id, c.document_id, substr(d.text, c.start + 1, c."end" - c.start)
        FROM annotator_chunk c JOIN annotator_document d ON d.id = c.document_id""",
]

POSTGRES_BACKWARD = [
    "DROP TRIGGER IF EXISTS annotator_chunk_search_doc_au ON annotator_document",
    "DROP TRIGGER IF EXISTS annotator_chunk_search_at ON annotator_chunk",
    "DROP TRIGGER IF EXISTS annotator_chunk_search_au ON annotator_chunk",
    "DROP TRIGGER IF EXISTS annotator_chunk_search_ad ON annotator_chunk",
    "DROP TRIGGER IF EXISTS annotator_chunk_search_ai ON annotator_chunk",
    "DROP FUNCTION IF EXISTS annotator_chunk_search_document()",
    "DROP FUNCTION IF EXISTS annotator_chunk_search_truncate()",
    "DROP FUNCTION IF EXISTS annotator_chunk_search_update()",
    "DROP FUNCTION IF EXISTS annotator_chunk_search_delete()",
    "DROP FUNCTION IF EXISTS annotator_chunk_search_insert()",
    "DROP INDEX IF EXISTS annotator_document_title_trgm",
    "DROP INDEX IF EXISTS annotator_document_text_trgm",
    "DROP TABLE IF EXISTS annotator_chunk_search",
]


def sqlite_has_trigram() -> bool:
    return tuple(int(p) for p in sqlite3.sqlite_version.split(".")[:2]) >= (3, 34)


def _run(schema_editor, statements) -> None:
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite" and sqlite_has_trigram():
        _run(schema_editor, SQLITE_FORWARD)
    elif vendor == "postgresql":
        _run(schema_editor, POSTGRES_FORWARD)


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        _run(schema_editor, SQLITE_BACKWARD)
    elif vendor == "postgresql":
        _run(schema_editor, POSTGRES_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("annotator", "0002_assignments")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
