"""Character-bigram indexes beside the trigram ones, so that every term is found by an
index: one- and two-character terms (合同, 罪, "AI") included (annotator/search_grams.py).

SQLite: contentless FTS5 tables (no positions, no copy of the text) whose tokens are the
grams in hex, kept by triggers that call ``assay_grams`` (registered on every connection
by annotator.apps). A contentless row is deleted by giving its grams again, computed from
the text the trigram table holds; so the chunk triggers of migration 0003 are replaced by
ones that do both, in that order.

PostgreSQL: ``annotator_grams(text)`` (a tsvector of the grams; NULL for a text whose
grams exceed a tsvector's 1 MB, which searches then read directly), a ``grams`` column on
the chunks' search table filled by a row trigger, and a search table for documents kept
by statement triggers like the chunks' one; GIN indexes on both.
"""

from django.db import migrations

_CHUNK_TEXT = 'substr(d.text, new.start + 1, new."end" - new.start)'
_CHUNK_FTS_IN = f"""INSERT INTO annotator_chunk_fts(rowid, text)
        SELECT new.id, {_CHUNK_TEXT} FROM annotator_document d WHERE d.id = new.document_id;"""
_CHUNK_GRAMS_IN = f"""INSERT INTO annotator_chunk_grams(rowid, grams)
        SELECT new.id, assay_grams({_CHUNK_TEXT})
        FROM annotator_document d WHERE d.id = new.document_id;"""
_CHUNK_OUT = """INSERT INTO annotator_chunk_grams(annotator_chunk_grams, rowid, grams)
        SELECT 'delete', old.id, assay_grams(f.text) FROM annotator_chunk_fts f
        WHERE f.rowid = old.id;
        DELETE FROM annotator_chunk_fts WHERE rowid = old.id;"""
_DOCUMENT_GRAMS = "assay_grams({row}.title) || ' ' || assay_grams({row}.text)"

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE annotator_chunk_grams USING fts5(grams, content='',
        detail='none', columnsize=0, tokenize='ascii')""",
    """CREATE VIRTUAL TABLE annotator_document_grams USING fts5(grams, content='',
        detail='none', columnsize=0, tokenize='ascii')""",
    "DROP TRIGGER annotator_chunk_fts_ad",
    "DROP TRIGGER annotator_chunk_fts_au",
    "DROP TRIGGER annotator_document_chunk_fts_au",
    f"""CREATE TRIGGER annotator_chunk_grams_ai AFTER INSERT ON annotator_chunk BEGIN
        {_CHUNK_GRAMS_IN}
    END""",
    f"""CREATE TRIGGER annotator_chunk_fts_ad AFTER DELETE ON annotator_chunk BEGIN
        {_CHUNK_OUT}
    END""",
    f"""CREATE TRIGGER annotator_chunk_fts_au AFTER UPDATE OF start, "end", document_id
        ON annotator_chunk BEGIN
        {_CHUNK_OUT}
        {_CHUNK_FTS_IN}
        {_CHUNK_GRAMS_IN}
    END""",
    """CREATE TRIGGER annotator_document_chunk_fts_au AFTER UPDATE OF text ON annotator_document
        WHEN old.text IS NOT new.text BEGIN
        INSERT INTO annotator_chunk_grams(annotator_chunk_grams, rowid, grams)
        SELECT 'delete', c.id, assay_grams(f.text)
        FROM annotator_chunk c JOIN annotator_chunk_fts f ON f.rowid = c.id
        WHERE c.document_id = new.id;
        DELETE FROM annotator_chunk_fts
        WHERE rowid IN (SELECT id FROM annotator_chunk WHERE document_id = new.id);
        INSERT INTO annotator_chunk_fts(rowid, text)
        SELECT c.id, substr(new.text, c.start + 1, c."end" - c.start)
        FROM annotator_chunk c WHERE c.document_id = new.id;
        INSERT INTO annotator_chunk_grams(rowid, grams)
        SELECT c.id, assay_grams(substr(new.text, c.start + 1, c."end" - c.start))
        FROM annotator_chunk c WHERE c.document_id = new.id;
    END""",
    f"""CREATE TRIGGER annotator_document_grams_ai AFTER INSERT ON annotator_document BEGIN
        INSERT INTO annotator_document_grams(rowid, grams)
        VALUES (new.id, {_DOCUMENT_GRAMS.format(row="new")});
    END""",
    f"""CREATE TRIGGER annotator_document_grams_ad AFTER DELETE ON annotator_document BEGIN
        INSERT INTO annotator_document_grams(annotator_document_grams, rowid, grams)
        VALUES ('delete', old.id, {_DOCUMENT_GRAMS.format(row="old")});
    END""",
    f"""CREATE TRIGGER annotator_document_grams_au AFTER UPDATE OF title, text
        ON annotator_document WHEN old.title IS NOT new.title OR old.text IS NOT new.text BEGIN
        INSERT INTO annotator_document_grams(annotator_document_grams, rowid, grams)
        VALUES ('delete', old.id, {_DOCUMENT_GRAMS.format(row="old")});
        INSERT INTO annotator_document_grams(rowid, grams)
        VALUES (new.id, {_DOCUMENT_GRAMS.format(row="new")});
    END""",
    # Index what is already there.
    """INSERT INTO annotator_chunk_grams(rowid, grams)
        SELECT rowid, assay_grams(text) FROM annotator_chunk_fts""",
    f"""INSERT INTO annotator_document_grams(rowid, grams)
        SELECT d.id, {_DOCUMENT_GRAMS.format(row="d")} FROM annotator_document d""",
]

SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS annotator_document_grams_au",
    "DROP TRIGGER IF EXISTS annotator_document_grams_ad",
    "DROP TRIGGER IF EXISTS annotator_document_grams_ai",
    "DROP TRIGGER IF EXISTS annotator_chunk_grams_ai",
    "DROP TRIGGER IF EXISTS annotator_document_chunk_fts_au",
    "DROP TRIGGER IF EXISTS annotator_chunk_fts_au",
    "DROP TRIGGER IF EXISTS annotator_chunk_fts_ad",
    # Migration 0003's triggers, as they were.
    """CREATE TRIGGER annotator_chunk_fts_ad AFTER DELETE ON annotator_chunk BEGIN
        DELETE FROM annotator_chunk_fts WHERE rowid = old.id;
    END""",
    f"""CREATE TRIGGER annotator_chunk_fts_au AFTER UPDATE OF start, "end", document_id
        ON annotator_chunk BEGIN
        DELETE FROM annotator_chunk_fts WHERE rowid = old.id;
        {_CHUNK_FTS_IN}
    END""",
    """CREATE TRIGGER annotator_document_chunk_fts_au AFTER UPDATE OF text ON annotator_document
        WHEN old.text IS NOT new.text BEGIN
        DELETE FROM annotator_chunk_fts
        WHERE rowid IN (SELECT id FROM annotator_chunk WHERE document_id = new.id);
        INSERT INTO annotator_chunk_fts(rowid, text)
        SELECT c.id, substr(new.text, c.start + 1, c."end" - c.start)
        FROM annotator_chunk c WHERE c.document_id = new.id;
    END""",
    "DROP TABLE IF EXISTS annotator_document_grams",
    "DROP TABLE IF EXISTS annotator_chunk_grams",
]

POSTGRES_FORWARD = [
    # Each pair of adjacent characters and the last one (search_grams.grams); NULL when
    # they do not fit in a tsvector (1 MB), so that a huge text never fails an import.
    """CREATE FUNCTION annotator_grams(t text) RETURNS tsvector
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
        DECLARE c text[] := string_to_array(lower(t), NULL);
        BEGIN
            RETURN array_to_tsvector(array(SELECT x || coalesce(y, '')
                                           FROM unnest(c, c[2:]) AS u(x, y)));
        EXCEPTION WHEN program_limit_exceeded THEN RETURN NULL;
        END $$""",
    "ALTER TABLE annotator_chunk_search ADD COLUMN grams tsvector",
    """CREATE FUNCTION annotator_chunk_search_grams() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN NEW.grams := annotator_grams(NEW.text); RETURN NEW; END $$""",
    """CREATE TRIGGER annotator_chunk_search_grams BEFORE INSERT OR UPDATE OF text
        ON annotator_chunk_search FOR EACH ROW EXECUTE FUNCTION annotator_chunk_search_grams()""",
    "UPDATE annotator_chunk_search SET grams = annotator_grams(text)",
    "CREATE INDEX annotator_chunk_search_grams ON annotator_chunk_search USING gin (grams)",
    """CREATE INDEX annotator_chunk_search_ungrammed ON annotator_chunk_search (chunking_id)
        WHERE grams IS NULL""",
    """CREATE TABLE annotator_document_search (
        document_id bigint PRIMARY KEY,
        project_id bigint NOT NULL,
        grams tsvector
    )""",
    """CREATE FUNCTION annotator_document_search_insert() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO annotator_document_search (document_id, project_id, grams)
        SELECT n.id, n.project_id, annotator_grams(n.title) || annotator_grams(n.text)
        FROM new_rows n;
        RETURN NULL; END $$""",
    # The importer's last step moves staged documents to their project: only project_id.
    """CREATE FUNCTION annotator_document_search_update() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        UPDATE annotator_document_search s SET project_id = n.project_id,
            grams = CASE WHEN o.title IS DISTINCT FROM n.title OR o.text IS DISTINCT FROM n.text
                         THEN annotator_grams(n.title) || annotator_grams(n.text)
                         ELSE s.grams END
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE s.document_id = n.id;
        RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_document_search_delete() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        DELETE FROM annotator_document_search WHERE document_id IN (SELECT id FROM old_rows);
        RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_document_search_truncate() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN TRUNCATE annotator_document_search; RETURN NULL; END $$""",
    """CREATE TRIGGER annotator_document_search_ai AFTER INSERT ON annotator_document
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_document_search_insert()""",
    """CREATE TRIGGER annotator_document_search_au AFTER UPDATE ON annotator_document
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_document_search_update()""",
    """CREATE TRIGGER annotator_document_search_ad AFTER DELETE ON annotator_document
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_document_search_delete()""",
    """CREATE TRIGGER annotator_document_search_at AFTER TRUNCATE ON annotator_document
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_document_search_truncate()""",
    """INSERT INTO annotator_document_search (document_id, project_id, grams)
        SELECT id, project_id, annotator_grams(title) || annotator_grams(text)
        FROM annotator_document""",
    "CREATE INDEX annotator_document_search_project ON annotator_document_search (project_id)",
    "CREATE INDEX annotator_document_search_grams ON annotator_document_search USING gin (grams)",
    """CREATE INDEX annotator_document_search_ungrammed ON annotator_document_search
        (project_id) WHERE grams IS NULL""",
]

POSTGRES_BACKWARD = [
    "DROP TRIGGER IF EXISTS annotator_document_search_at ON annotator_document",
    "DROP TRIGGER IF EXISTS annotator_document_search_ad ON annotator_document",
    "DROP TRIGGER IF EXISTS annotator_document_search_au ON annotator_document",
    "DROP TRIGGER IF EXISTS annotator_document_search_ai ON annotator_document",
    "DROP FUNCTION IF EXISTS annotator_document_search_truncate()",
    "DROP FUNCTION IF EXISTS annotator_document_search_delete()",
    "DROP FUNCTION IF EXISTS annotator_document_search_update()",
    "DROP FUNCTION IF EXISTS annotator_document_search_insert()",
    "DROP TABLE IF EXISTS annotator_document_search",
    "DROP TRIGGER IF EXISTS annotator_chunk_search_grams ON annotator_chunk_search",
    "DROP FUNCTION IF EXISTS annotator_chunk_search_grams()",
    "DROP INDEX IF EXISTS annotator_chunk_search_ungrammed",
    "DROP INDEX IF EXISTS annotator_chunk_search_grams",
    "ALTER TABLE annotator_chunk_search DROP COLUMN IF EXISTS grams",
    "DROP FUNCTION IF EXISTS annotator_grams(text)",
]


def _has_trigram_tables(schema_editor) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sqlite_master WHERE name = 'annotator_chunk_fts'")
        return cursor.fetchone()[0] == 1


def _run(schema_editor, statements) -> None:
    with schema_editor.connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite" and _has_trigram_tables(schema_editor):
        _run(schema_editor, SQLITE_FORWARD)
    elif vendor == "postgresql":
        _run(schema_editor, POSTGRES_FORWARD)


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite" and _has_trigram_tables(schema_editor):
        _run(schema_editor, SQLITE_BACKWARD)
    elif vendor == "postgresql":
        _run(schema_editor, POSTGRES_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("annotator", "0009_figures")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
