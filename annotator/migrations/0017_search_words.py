"""PostgreSQL: a word index beside the trigram one, so that a Latin term is found by an
exact index lookup instead of trigram candidates whose texts must all be read again.

- ``annotator_words(text)``: the distinct runs of ``[a-z0-9]`` in ``lower(text)``; NULL
  when a run is longer than 100 characters (such rows are searched by their text).
- ``annotator_chunk_words`` and ``annotator_document_words``: each chunk's words (as
  ``<chunking id>:<word>``) and each document's, GIN-indexed, kept by statement triggers on the chunks' search table and on the
  documents. Tables of their own, not columns of the search tables: adding a column
  would rewrite every row of those tables and every entry of their trigram and bigram
  indexes (more than 20 minutes at 900,000 chunks, holding the table's lock), where
  these are filled by reading them; and the rows a search counts are narrow.
- ``annotator_search_word``: every word seen, with a trigram index. A term of letters and
  digits is contained in a text exactly when it is contained in one of the text's words,
  so the search expands the term through this list (``LIKE``) and asks the GIN index for
  rows holding any of those words (``annotator/search_sql.py``).

The list has no unique constraint: a word is added when no row holds it, so two imports
adding the same new word never wait for each other (nor deadlock); the rare duplicate is
read once (``DISTINCT``). Words are never removed: a word no text holds any more only
adds a key that finds nothing.
"""

from django.db import migrations

MAX_WORD = 100  # annotator/search_sql.py reads the NULL rows by their text
_DOCUMENT_WORDS = "annotator_words({row}.title || ' ' || {row}.text)"
_TABLES = ("annotator_chunk_words", "annotator_document_words")

POSTGRES_FORWARD = [
    f"""CREATE FUNCTION annotator_words(t text) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN bool_or(length(w) > {MAX_WORD}) THEN NULL
                    ELSE coalesce(array_agg(DISTINCT w), '{{}}') END
        FROM regexp_split_to_table(lower(t), '[^a-z0-9]+') AS w WHERE w <> '' $$""",
    # A chunk's words are kept as "<chunking id>:<word>", so that a word's entry in the
    # GIN index lists the chunks of one chunking only (a common word's other chunkings
    # were four rows read and dropped for every one kept).
    """CREATE FUNCTION annotator_scoped_words(scope bigint, t text) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN w IS NULL THEN NULL
                    ELSE array(SELECT scope || ':' || x FROM unnest(w) AS x) END
        FROM annotator_words(t) AS w $$""",
    "CREATE TABLE annotator_search_word (word text NOT NULL)",
    """CREATE TABLE annotator_chunk_words (
        chunk_id bigint PRIMARY KEY,
        chunking_id bigint NOT NULL,
        words text[]
    )""",
    """CREATE TABLE annotator_document_words (
        document_id bigint PRIMARY KEY,
        project_id bigint NOT NULL,
        words text[]
    )""",
    # What is there already, read from the search tables and the documents.
    """INSERT INTO annotator_chunk_words (chunk_id, chunking_id, words)
        SELECT chunk_id, chunking_id, annotator_scoped_words(chunking_id, text)
        FROM annotator_chunk_search""",
    f"""INSERT INTO annotator_document_words (document_id, project_id, words)
        SELECT d.id, d.project_id, {_DOCUMENT_WORDS.format(row="d")} FROM annotator_document d""",
    """INSERT INTO annotator_search_word (word)
        SELECT substr(w, strpos(w, ':') + 1) FROM annotator_chunk_words, unnest(words) AS w
        UNION SELECT unnest(words) FROM annotator_document_words""",
    "CREATE INDEX annotator_search_word_word ON annotator_search_word (word)",
    """CREATE INDEX annotator_search_word_trgm ON annotator_search_word
        USING gin (word gin_trgm_ops)""",
    "CREATE INDEX annotator_chunk_words_words ON annotator_chunk_words USING gin (words)",
    "CREATE INDEX annotator_chunk_words_chunking ON annotator_chunk_words (chunking_id)",
    """CREATE INDEX annotator_chunk_words_unworded ON annotator_chunk_words (chunking_id)
        WHERE words IS NULL""",
    "CREATE INDEX annotator_document_words_words ON annotator_document_words USING gin (words)",
    "CREATE INDEX annotator_document_words_project ON annotator_document_words (project_id)",
    """CREATE INDEX annotator_document_words_unworded ON annotator_document_words (project_id)
        WHERE words IS NULL""",
    # The word list, from the rows written to either words table (a chunk's words without
    # their chunking; a document's have no prefix, and no word holds a colon).
    """CREATE FUNCTION annotator_search_word_keep() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO annotator_search_word (word)
        SELECT n.w FROM (SELECT DISTINCT substr(x, strpos(x, ':') + 1) AS w
                         FROM new_rows, unnest(words) AS x) n
        WHERE NOT EXISTS (SELECT 1 FROM annotator_search_word s WHERE s.word = n.w);
        RETURN NULL; END $$""",
    *(
        f"""CREATE TRIGGER {table}_keep_a{op[0].lower()} AFTER {op} ON {table}
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_search_word_keep()"""
        for table in _TABLES
        for op in ("INSERT", "UPDATE")
    ),
    # Chunks: from their search table (whose triggers follow chunks and documents).
    """CREATE FUNCTION annotator_chunk_words_upsert() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO annotator_chunk_words (chunk_id, chunking_id, words)
        SELECT n.chunk_id, n.chunking_id, annotator_scoped_words(n.chunking_id, n.text)
        FROM new_rows n
        ON CONFLICT (chunk_id) DO UPDATE
            SET chunking_id = EXCLUDED.chunking_id, words = EXCLUDED.words;
        RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_chunk_words_update() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO annotator_chunk_words (chunk_id, chunking_id, words)
        SELECT n.chunk_id, n.chunking_id, annotator_scoped_words(n.chunking_id, n.text)
        FROM new_rows n JOIN old_rows o ON o.chunk_id = n.chunk_id
        WHERE o.text IS DISTINCT FROM n.text OR o.chunking_id IS DISTINCT FROM n.chunking_id
        ON CONFLICT (chunk_id) DO UPDATE
            SET chunking_id = EXCLUDED.chunking_id, words = EXCLUDED.words;
        RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_chunk_words_delete() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        DELETE FROM annotator_chunk_words WHERE chunk_id IN (SELECT chunk_id FROM old_rows);
        RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_chunk_words_truncate() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN TRUNCATE annotator_chunk_words; RETURN NULL; END $$""",
    """CREATE TRIGGER annotator_chunk_words_ai AFTER INSERT ON annotator_chunk_search
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_words_upsert()""",
    """CREATE TRIGGER annotator_chunk_words_au AFTER UPDATE ON annotator_chunk_search
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_words_update()""",
    """CREATE TRIGGER annotator_chunk_words_ad AFTER DELETE ON annotator_chunk_search
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_words_delete()""",
    """CREATE TRIGGER annotator_chunk_words_at AFTER TRUNCATE ON annotator_chunk_search
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_chunk_words_truncate()""",
    # Documents: title and text; the importer's last step moves staged documents to their
    # project (only project_id changes: the words are kept).
    f"""CREATE FUNCTION annotator_document_words_insert() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO annotator_document_words (document_id, project_id, words)
        SELECT n.id, n.project_id, {_DOCUMENT_WORDS.format(row="n")} FROM new_rows n;
        RETURN NULL; END $$""",
    f"""CREATE FUNCTION annotator_document_words_update() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        UPDATE annotator_document_words w SET project_id = n.project_id,
            words = CASE WHEN o.title IS DISTINCT FROM n.title OR o.text IS DISTINCT FROM n.text
                         THEN {_DOCUMENT_WORDS.format(row="n")} ELSE w.words END
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE w.document_id = n.id;
        RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_document_words_delete() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
        DELETE FROM annotator_document_words WHERE document_id IN (SELECT id FROM old_rows);
        RETURN NULL; END $$""",
    """CREATE FUNCTION annotator_document_words_truncate() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN TRUNCATE annotator_document_words; RETURN NULL; END $$""",
    """CREATE TRIGGER annotator_document_words_ai AFTER INSERT ON annotator_document
        REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_document_words_insert()""",
    """CREATE TRIGGER annotator_document_words_au AFTER UPDATE ON annotator_document
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_document_words_update()""",
    """CREATE TRIGGER annotator_document_words_ad AFTER DELETE ON annotator_document
        REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_document_words_delete()""",
    """CREATE TRIGGER annotator_document_words_at AFTER TRUNCATE ON annotator_document
        FOR EACH STATEMENT EXECUTE FUNCTION annotator_document_words_truncate()""",
]

POSTGRES_BACKWARD = [
    "DROP TRIGGER IF EXISTS annotator_document_words_at ON annotator_document",
    "DROP TRIGGER IF EXISTS annotator_document_words_ad ON annotator_document",
    "DROP TRIGGER IF EXISTS annotator_document_words_au ON annotator_document",
    "DROP TRIGGER IF EXISTS annotator_document_words_ai ON annotator_document",
    "DROP TRIGGER IF EXISTS annotator_chunk_words_at ON annotator_chunk_search",
    "DROP TRIGGER IF EXISTS annotator_chunk_words_ad ON annotator_chunk_search",
    "DROP TRIGGER IF EXISTS annotator_chunk_words_au ON annotator_chunk_search",
    "DROP TRIGGER IF EXISTS annotator_chunk_words_ai ON annotator_chunk_search",
    "DROP TABLE IF EXISTS annotator_document_words",
    "DROP TABLE IF EXISTS annotator_chunk_words",
    "DROP TABLE IF EXISTS annotator_search_word",
    *(
        f"DROP FUNCTION IF EXISTS {name}()"
        for name in (
            "annotator_document_words_truncate",
            "annotator_document_words_delete",
            "annotator_document_words_update",
            "annotator_document_words_insert",
            "annotator_chunk_words_truncate",
            "annotator_chunk_words_delete",
            "annotator_chunk_words_update",
            "annotator_chunk_words_upsert",
            "annotator_search_word_keep",
        )
    ),
    "DROP FUNCTION IF EXISTS annotator_scoped_words(bigint, text)",
    "DROP FUNCTION IF EXISTS annotator_words(text)",
]


def _run(schema_editor, statements) -> None:
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)


def forward(apps, schema_editor):
    _run(schema_editor, POSTGRES_FORWARD)


def backward(apps, schema_editor):
    _run(schema_editor, POSTGRES_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("annotator", "0016_grams_parallel_unsafe")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
