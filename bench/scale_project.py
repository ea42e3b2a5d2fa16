"""The generated project the scale benchmark measures, written with bulk SQL (COPY on
PostgreSQL, executemany on SQLite), never row by row through the ORM.

One project per size: documents (half English words, half Chinese characters, both drawn
with Zipf-like frequencies, so that some terms are common and some rare), two chunkings
(5 and 4 windows per document), queries, chunk runs of 100 results per query, labels by
20 annotators (two per query, on the same pooled chunks, agreeing about 70 % of the
time, each with its history row), assignments, and two frozen gold sets. The database's
triggers keep the search indexes and figures as they would for an import.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np

SIZES = {
    # documents, queries, runs, labels
    "small": (10_000, 1_000, 10, 10_000),
    "medium": (100_000, 5_000, 20, 100_000),
    "large": (1_000_000, 10_000, 20, 500_000),
}
N_ANNOTATORS = 20
RESULTS = 100  # per query and run
POOL = 40  # chunks per query that every run retrieves (the labelled pool)
STRIDE = 7919  # a prime: see the runs below
WORDS_PER_DOCUMENT = 150
HAN_PER_DOCUMENT = 500
BATCH = 5_000
PASSWORD = "scale-bench-password"


@dataclass
class Generated:
    project_slug: str
    counts: dict
    seconds: dict
    english_terms: dict  # kind -> a term
    chinese_terms: dict
    # False: generated without the search tables' GIN indexes (``--no-search-indexes``),
    # so the search pages are not measured on it.
    search_indexes: bool = True


def _vocabulary(rng: random.Random) -> list[str]:
    syllables = "ka lo mi ne ru sa ti vo wing lift drag flow aero foil jet tail law case".split()
    words: dict[str, None] = {}
    while len(words) < 5000:
        words["".join(rng.choices(syllables, k=rng.randint(2, 4)))] = None
    return list(words)


def _zipf(n: int, shift: float = 10.0) -> np.ndarray:
    weights = 1.0 / (np.arange(n) + shift)
    return weights / weights.sum()


def _han_alphabet(rng: random.Random) -> np.ndarray:
    points = rng.sample(range(0x4E00, 0x9FA5), 3000)
    return np.array(points, dtype=np.uint32)


def _texts(start: int, count: int, seed: int, words: list[str], han: np.ndarray):
    """(title, text) of documents start..start+count-1: even ones English, odd ones Chinese."""
    nprng = np.random.default_rng(seed + start)
    word_p = _zipf(len(words))
    han_p = _zipf(len(han), shift=20.0)
    english = nprng.choice(len(words), size=(count, WORDS_PER_DOCUMENT), p=word_p)
    chinese = han[nprng.choice(len(han), size=(count, HAN_PER_DOCUMENT), p=han_p)]
    out = []
    for i in range(count):
        if (start + i) % 2 == 0:
            text = " ".join(words[w] for w in english[i]) + "."
            title = f"{words[english[i][0]]} {words[english[i][1]]} {start + i}"
        else:
            text = chinese[i].tobytes().decode("utf-32-le") + "。"
            title = chinese[i][:6].tobytes().decode("utf-32-le") + f" {start + i}"
        out.append((title, text))
    return out


class Writer:
    """Bulk rows into a table: COPY on PostgreSQL, executemany elsewhere."""

    def __init__(self, connection):
        self.connection = connection

    def rows(self, table: str, columns: list[str], rows) -> None:
        rows = list(rows)
        if not rows:
            return
        with self.connection.cursor() as cursor:
            if self.connection.vendor == "postgresql":
                names = ", ".join(f'"{c}"' for c in columns)
                with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                names = ", ".join(f'"{c}"' for c in columns)
                marks = ", ".join(["%s"] * len(columns))
                for i in range(0, len(rows), BATCH):
                    cursor.executemany(
                        f"INSERT INTO {table} ({names}) VALUES ({marks})",
                        rows[i : i + BATCH],
                    )

    def ids(self, sql: str, params: list) -> list[tuple]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()


def generate(
    size: str, *, seed: int = 23, bulk_search: bool | None = None, search_indexes: bool = True
) -> Generated:
    """Fill the current database with the project of ``size`` (see SIZES); on PostgreSQL,
    ``bulk_search`` (by default for BULK_SEARCH_SIZES) loads without the search triggers.
    Without ``search_indexes`` a bulk load leaves the search tables' GIN indexes out: at
    *large* on two cores they take one to two hours, and only the search pages use them."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import connection, transaction
    from django.utils import timezone

    from annotator.models import (
        Assignment,
        Chunking,
        Membership,
        Project,
        Query,
        Role,
    )
    from metrics.models import Run

    n_documents, n_queries, n_runs, n_labels = SIZES[size]
    if bulk_search is None:
        bulk_search = size in BULK_SEARCH_SIZES
    bulk = bulk_search and connection.vendor == "postgresql"
    rng = random.Random(seed)
    words = _vocabulary(rng)
    han = _han_alphabet(rng)
    writer = Writer(connection)
    seconds: dict[str, float] = {}
    now = timezone.now()
    User = get_user_model()

    def step(name: str, started: float) -> None:
        seconds[name] = round(time.perf_counter() - started, 1)
        print(f"  generated {name} in {seconds[name]} s", file=sys.stderr, flush=True)

    started = time.perf_counter()
    with transaction.atomic():
        password = make_password(PASSWORD)
        users = User.objects.bulk_create(
            [User(username=f"s-owner-{size}", password=password)]
            + [User(username=f"s-lead{i}-{size}", password=password) for i in range(2)]
            + [User(username=f"s-viewer-{size}", password=password)]
            + [User(username=f"s-a{i:02d}-{size}", password=password) for i in range(N_ANNOTATORS)]
        )
        owner, leads, viewer, annotators = users[0], users[1:3], users[3], users[4:]
        project = Project.objects.create(slug=f"scale-{size}", name=f"Scale {size}")
        Membership.objects.bulk_create(
            [Membership(project=project, user=owner, role=Role.OWNER)]
            + [Membership(project=project, user=u, role=Role.ADJUDICATOR) for u in leads]
            + [Membership(project=project, user=viewer, role=Role.VIEWER)]
            + [Membership(project=project, user=u, role=Role.ANNOTATOR) for u in annotators]
        )
    step("users", started)

    dropped_indexes = _search_off(connection) if bulk else []
    started = time.perf_counter()
    document_columns = ["project_id", "doc_id", "title", "text", "metadata", "page_starts"]
    lengths: list[int] = []
    for start in range(0, n_documents, BATCH * 4):
        count = min(BATCH * 4, n_documents - start)
        batch = _texts(start, count, seed, words, han)
        lengths += [len(text) for _, text in batch]
        with transaction.atomic():
            writer.rows(
                "annotator_document",
                document_columns,
                (
                    (project.pk, f"d{start + i}", title, text, "{}", "[]")
                    for i, (title, text) in enumerate(batch)
                ),
            )
    document_ids = [
        pk
        for (pk,) in writer.ids(
            "SELECT id FROM annotator_document WHERE project_id = %s ORDER BY id", [project.pk]
        )
    ]
    step("documents", started)

    started = time.perf_counter()
    chunkings = [
        Chunking.objects.create(project=project, name="w5", parameters={"windows": 5}),
        Chunking.objects.create(project=project, name="w4", parameters={"windows": 4}),
    ]
    for chunking, windows in zip(chunkings, (5, 4), strict=True):
        for start in range(0, n_documents, BATCH * 4):
            rows = []
            for d in range(start, min(n_documents, start + BATCH * 4)):
                length, step_size = lengths[d], max(1, lengths[d] // windows)
                for w in range(windows):
                    end = length if w == windows - 1 else (w + 1) * step_size
                    rows.append((chunking.pk, f"d{d}#{w}", document_ids[d], w * step_size, end))
            with transaction.atomic():
                writer.rows(
                    "annotator_chunk",
                    ["chunking_id", "chunk_id", "document_id", "start", "end"],
                    rows,
                )
    chunk_rows = writer.ids(
        'SELECT id, document_id, start, "end", chunk_id FROM annotator_chunk '
        "WHERE chunking_id = %s ORDER BY id",
        [chunkings[0].pk],
    )
    step("chunks", started)
    if bulk:
        started = time.perf_counter()
        _search_on(connection, project.pk, dropped_indexes if search_indexes else [])
        step("search tables and indexes" if search_indexes else "search tables", started)

    started = time.perf_counter()
    with transaction.atomic():
        writer.rows(
            "annotator_query",
            ["project_id", "qid", "text", "reference_answer", "tags", "metadata"],
            (
                (
                    project.pk,
                    f"q{q}",
                    (
                        " ".join(rng.choices(words[:500], k=8)) + "?"
                        if q % 2 == 0
                        else "".join(chr(c) for c in rng.choices(han[:400].tolist(), k=12)) + "？"
                    ),
                    "",
                    '["en"]' if q % 2 == 0 else '["zh"]',
                    "{}",
                )
                for q in range(n_queries)
            ),
        )
    query_ids = [
        pk
        for (pk,) in writer.ids(
            "SELECT id FROM annotator_query WHERE project_id = %s ORDER BY id", [project.pk]
        )
    ]
    step("queries", started)

    # Each query's pool: POOL chunks of chunking w5 that every run retrieves.
    started = time.perf_counter()
    # Query q's k-th candidate is chunk (start_q + k * STRIDE) mod n, distinct for every k
    # (STRIDE is a prime not dividing n): k < POOL is the pool, each run adds its own k's.
    nprng = np.random.default_rng(seed)
    chunk_pk = np.array([r[0] for r in chunk_rows], dtype=np.int64)
    starts = nprng.integers(0, len(chunk_pk), size=(n_queries, 1))

    def candidates(first: int, count: int) -> np.ndarray:
        return (starts + (first + np.arange(count)) * STRIDE) % len(chunk_pk)

    pools = candidates(0, POOL)
    query_pk = np.array(query_ids, dtype=np.int64)
    for r in range(n_runs):
        extra = candidates(POOL + r * (RESULTS - POOL), RESULTS - POOL)
        items = chunk_pk[np.concatenate([pools, extra], axis=1)]
        scores = nprng.random((n_queries, RESULTS))
        run = Run(project=project, name=f"run-{r:02d}", level="chunk", chunking=chunkings[0])
        run.set_results(np.repeat(query_pk, RESULTS), items.ravel(), scores.ravel())
        run.save()
    step("runs", started)

    # Labels: two annotators per query on the same pooled chunks.
    started = time.perf_counter()
    per_annotator = max(1, n_labels // (2 * n_queries))
    judgment_rows, assignment_rows = [], []
    for qi, qpk in enumerate(query_ids):
        pair = (annotators[qi % N_ANNOTATORS], annotators[(qi + 1) % N_ANNOTATORS])
        picked = dict.fromkeys(pools[qi].tolist())
        picked = list(picked)[:per_annotator]
        for k, user in enumerate(pair):
            assignment_rows.append((project.pk, qpk, user.pk, "open", "", owner.pk, now, 0.0))
            for c in picked:
                grade = (c * 7 + qi) % 4
                if k == 1 and rng.random() > 0.7:
                    grade = rng.randrange(4)
                pk, document, start_, end, _ = chunk_rows[c]
                judgment_rows.append(
                    (qpk, user.pk, "chunk", document, start_, end, pk, grade, "", False, now, now)
                )
    with transaction.atomic():
        writer.rows(
            "annotator_judgment",
            [
                "query_id",
                "annotator_id",
                "granularity",
                "document_id",
                "start",
                "end",
                "chunk_id",
                "grade",
                "note",
                "suggestion_shown",
                "created_at",
                "updated_at",
            ],
            judgment_rows,
        )
        writer.rows(
            "annotator_judgmenthistory",
            [
                "judgment_id",
                "query_id",
                "annotator_id",
                "changed_by_id",
                "event",
                "chunk_id",
                "new_grade",
                "old_note",
                "new_note",
                "suggestion_shown",
                "at",
                "granularity",
                "document_id",
                "start",
                "end",
                "action_id",
            ],
            (
                (pk, q, a, a, "create", chunk_id, grade, "", "", False, now, "chunk", d, s, e, "")
                for pk, q, a, d, s, e, chunk_id, grade in writer.ids(
                    'SELECT j.id, j.query_id, j.annotator_id, j.document_id, j.start, j."end", '
                    "c.chunk_id, j.grade FROM annotator_judgment j "
                    "JOIN annotator_chunk c ON c.id = j.chunk_id "
                    "JOIN annotator_query q ON q.id = j.query_id WHERE q.project_id = %s",
                    [project.pk],
                )
            ),
        )
        writer.rows(
            "annotator_assignment",
            [
                "project_id",
                "query_id",
                "annotator_id",
                "status",
                "skip_reason",
                "assigned_by_id",
                "assigned_at",
                "time_spent_seconds",
            ],
            assignment_rows,
        )
    step("labels", started)

    started = time.perf_counter()
    from gold.services import ConsensusPolicy, freeze_gold_set

    freeze_gold_set(project, "team", policy=ConsensusPolicy(), created_by=owner)
    freeze_gold_set(project, "strict", policy=ConsensusPolicy("min", 2), created_by=owner)
    step("gold sets", started)

    # As the worker leaves an imported run: its index file at its own units.
    started = time.perf_counter()
    from metrics.tasks import write_own_index

    for run_pk in Run.objects.filter(project=project).values_list("pk", flat=True):
        write_own_index(run_pk)
    step("run indexes", started)

    english = _pick_terms(words, "en")
    chinese = _pick_chinese(writer, project.pk, document_ids)
    counts = {
        "documents": n_documents,
        "chunks": len(chunk_rows) * 9 // 5,
        "queries": n_queries,
        "runs": n_runs,
        "labels": len(judgment_rows),
    }
    _ = Assignment, Query  # models whose tables are written above
    return Generated(project.slug, counts, seconds, english, chinese, search_indexes or not bulk)


BULK_SEARCH_SIZES = {"large"}
# What the search triggers of migrations 0003, 0010 and 0017 do, per table (their own
# SQL; the word list's triggers stay on and keep it from the filled words tables).
_SEARCH_TRIGGERS = [
    ("annotator_document", "annotator_document_search_ai"),
    ("annotator_document", "annotator_document_words_ai"),
    ("annotator_chunk", "annotator_chunk_search_ai"),
    ("annotator_chunk_search", "annotator_chunk_search_grams"),
    ("annotator_chunk_search", "annotator_chunk_words_ai"),
]
_SEARCH_TABLES = (
    "annotator_document",
    "annotator_document_search",
    "annotator_chunk_search",
    "annotator_document_words",
    "annotator_chunk_words",
)
_FILL_DOCUMENTS = """INSERT INTO annotator_document_search (document_id, project_id, grams)
    SELECT id, project_id, annotator_grams(title) || annotator_grams(text)
    FROM annotator_document WHERE project_id = %s AND id %% 2 = %s"""
_FILL_DOCUMENT_WORDS = """INSERT INTO annotator_document_words (document_id, project_id, words)
    SELECT id, project_id, annotator_words(title || ' ' || text)
    FROM annotator_document WHERE project_id = %s AND id %% 2 = %s"""
_CHUNK_TEXT = 'substr(d.text, c.start + 1, c."end" - c.start)'
_FILL_CHUNK_WORDS = f"""INSERT INTO annotator_chunk_words (chunk_id, chunking_id, words)
    SELECT c.id, c.chunking_id, annotator_scoped_words(c.chunking_id, {_CHUNK_TEXT})
    FROM annotator_chunk c JOIN annotator_document d ON d.id = c.document_id
    WHERE d.project_id = %s AND c.id %% 2 = %s"""
_FILL_CHUNKS = f"""INSERT INTO annotator_chunk_search
    (chunk_id, chunking_id, document_id, text, grams)
    SELECT c.id, c.chunking_id, c.document_id, {_CHUNK_TEXT}, annotator_grams({_CHUNK_TEXT})
    FROM annotator_chunk c JOIN annotator_document d ON d.id = c.document_id
    WHERE d.project_id = %s AND c.id %% 2 = %s"""
# Every 997th chunk and document, compared with what the triggers would have written (by
# key: a sample read through the primary keys, not a join of whole tables: counting a
# 21 GB table not yet vacuumed reads all of it).
_CHECK = f"""SELECT
    (SELECT count(*) FROM (SELECT id FROM annotator_chunk
        WHERE chunking_id = ANY(%(chunkings)s) AND id %% 997 = 0 OFFSET 0) k
     JOIN annotator_chunk c ON c.id = k.id JOIN annotator_document d ON d.id = c.document_id
     LEFT JOIN annotator_chunk_search s ON s.chunk_id = c.id
     LEFT JOIN annotator_chunk_words w ON w.chunk_id = c.id
     WHERE s.chunk_id IS NULL OR s.text IS DISTINCT FROM {_CHUNK_TEXT}
        OR s.grams IS DISTINCT FROM annotator_grams({_CHUNK_TEXT})
        OR w.chunk_id IS NULL OR w.chunking_id IS DISTINCT FROM c.chunking_id
        OR w.words IS DISTINCT FROM annotator_scoped_words(c.chunking_id, {_CHUNK_TEXT})),
    (SELECT count(*) FROM (SELECT id FROM annotator_document
        WHERE project_id = %(p)s AND id %% 997 = 0 OFFSET 0) k
     JOIN annotator_document d ON d.id = k.id
     LEFT JOIN annotator_document_search s ON s.document_id = d.id
     LEFT JOIN annotator_document_words w ON w.document_id = d.id
     WHERE s.document_id IS NULL
        OR s.grams IS DISTINCT FROM annotator_grams(d.title) || annotator_grams(d.text)
        OR w.document_id IS NULL OR w.project_id IS DISTINCT FROM d.project_id
        OR w.words IS DISTINCT FROM annotator_words(d.title || ' ' || d.text))"""


_FILLS_BY_DOCUMENT = ("_FILL_DOCUMENTS", "_FILL_DOCUMENT_WORDS")
_FILLS_BY_CHUNK = ("_FILL_CHUNKS", "_FILL_CHUNK_WORDS")


def _search_off(connection) -> list[str]:
    """Turn the search triggers off and drop the GIN indexes; returns their definitions."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s) "
            "AND indexdef LIKE '%%USING gin%%' ORDER BY indexname",
            [list(_SEARCH_TABLES)],
        )
        indexes = cursor.fetchall()
        for name, _definition in indexes:
            cursor.execute(f"DROP INDEX {name}")
        for table, trigger in _SEARCH_TRIGGERS:
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
    return [definition for _name, definition in indexes]


def _in_parallel(connection, statements: list[tuple[str, list]]) -> list[int]:
    """Run the statements on two connections of their own (two cores), each committed;
    returns the rows each wrote."""
    import psycopg

    params = connection.get_connection_params()
    pending = list(reversed(list(enumerate(statements))))
    lock, failures, written = threading.Lock(), [], [0] * len(statements)

    def work() -> None:
        with psycopg.connect(**params, autocommit=True) as own:
            own.execute("SET maintenance_work_mem = '2GB'")
            while True:
                with lock:
                    if not pending or failures:
                        return
                    k, (sql, values) = pending.pop()
                try:
                    written[k] = own.execute(sql, values or None).rowcount
                except Exception as error:  # reported below, after both have stopped
                    failures.append(error)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return written


def _search_on(connection, project_pk: int, indexes: list[str]) -> None:
    """Fill the search tables as the triggers would, build the indexes, turn triggers on."""
    try:
        written = _in_parallel(
            connection,
            [
                (globals()[name], [project_pk, k])  # by name: a test replaces one
                for name in (*_FILLS_BY_DOCUMENT, *_FILLS_BY_CHUNK)
                for k in range(2)
            ],
        )
    finally:  # the database as it was, even when a fill failed
        with connection.cursor() as cursor:
            for table, trigger in _SEARCH_TRIGGERS:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")
        _in_parallel(connection, [(definition, []) for definition in indexes])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT array_agg(id) FROM annotator_chunking WHERE project_id = %s", [project_pk]
        )
        chunkings = cursor.fetchone()[0] or []
        cursor.execute(_CHECK, {"p": project_pk, "chunkings": chunkings})
        wrong_chunks, wrong_documents = cursor.fetchone()
        # Rows written against the figures the triggers keep (no count of whole tables).
        cursor.execute(
            "SELECT (SELECT coalesce(sum(chunks), 0) FROM annotator_chunkingfigures "
            "WHERE chunking_id = ANY(%s)), (SELECT documents FROM annotator_projectfigures "
            "WHERE project_id = %s)",
            [chunkings, project_pk],
        )
        n_chunks, n_documents = cursor.fetchone()
    missing = 2 * (n_chunks + n_documents) - sum(written)  # search and words rows
    if wrong_chunks or wrong_documents or missing:
        raise RuntimeError(
            f"bulk search tables differ from the triggers': {wrong_chunks} chunks, "
            f"{wrong_documents} documents in the sample, {missing} rows missing"
        )


def _pick_terms(words: list[str], _kind: str) -> dict:
    """A common, a middling and a rare English word (by their Zipf rank)."""
    return {"en common": words[0], "en middling": words[300], "en rare": words[4000]}


def _pick_chinese(writer: Writer, project_pk: int, document_ids: list[int]) -> dict:
    """A two- and a four-character term cut from a Chinese document's text."""
    (text,) = writer.ids(
        "SELECT substr(text, 101, 10) FROM annotator_document WHERE id = %s", [document_ids[1]]
    )[0]
    return {"zh 2 chars": text[:2], "zh 4 chars": text[2:6]}
