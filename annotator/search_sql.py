"""The SQL behind ``annotator.search``: which index serves each term, per database.

- SQLite: terms of three characters or more go through the FTS5 trigram tables
  (migration 0003, ranked by bm25); shorter ones through the FTS5 gram tables
  (migration 0010), confirmed against the text the trigram table holds.
- PostgreSQL: Han terms of any length and terms shorter than three characters through
  the GIN-indexed grams (confirmed with ``strpos``); terms of ASCII letters and digits
  through the GIN-indexed words tables (migration 0017: the term expanded to the words
  that contain it, exact, no recheck); other terms through the pg_trgm GIN indexes (``ILIKE``).
  Rows are ranked by how often the terms occur among the first ``RANK_WINDOW`` matches
  (the index's order).
- Anything else: ``icontains`` through the ORM.

Every value is a parameter; only constant fragments are put into the SQL.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Substr

from numerics.words import HAN_RE

from .models import Chunk, Document
from .search_grams import postgres_tsquery, sqlite_match

MIN_TRIGRAM = 3  # the trigram indexes only know substrings of three characters or more
RANK_WINDOW = 2000


def ranked_window(offset: int, limit: int) -> int:
    """How many matches (the index's first) are ranked for the page from ``offset``."""
    return max(RANK_WINDOW, offset + limit)


@dataclass(frozen=True)
class Scope:
    """What is searched: a chunking's chunks, or a project's documents."""

    documents: bool
    key: int  # the chunking's pk, or the project's


def _is_han(term: str) -> bool:
    return all(HAN_RE.match(c) for c in term)


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


_fts_cache: dict[tuple[str, str], bool] = {}


def _sqlite_indexed() -> bool:
    key = (connection.alias, str(connection.settings_dict["NAME"]))
    if key not in _fts_cache:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM sqlite_master WHERE name IN ('annotator_chunk_fts', "
                "'annotator_document_fts', 'annotator_chunk_grams', 'annotator_document_grams')"
            )
            _fts_cache[key] = cursor.fetchone()[0] == 4
    return _fts_cache[key]


@dataclass
class _Query:
    """FROM … WHERE … of one search, with the ranking it allows."""

    source: str
    where: list[str]
    params: list
    ranked_by_index: bool  # SQLite's bm25 over the trigram table
    score: str
    score_params: list

    @staticmethod
    def window(offset: int, limit: int) -> int:
        return ranked_window(offset, limit)

    def select(self, offset: int, limit: int) -> tuple[str, list]:
        """(id, how many matches the ranked window holds) of the page's rows, best first.

        The window is the first ``window()`` matches; when it holds fewer, it holds every
        match, and its size is the exact count (no second pass over the matches)."""
        where = " AND ".join(self.where)
        window = self.window(offset, limit)
        if self.ranked_by_index:
            # bm25 over the first RANK_WINDOW matches: ranking every match of a term that
            # half the chunks hold took seconds.
            sql = (
                "SELECT w.id, count(*) OVER () FROM (SELECT f.rowid AS id, "  # noqa: S608
                f"f.rank AS score FROM {self.source} WHERE {where} LIMIT %s) w "
                "ORDER BY w.score, w.id LIMIT %s OFFSET %s"
            )
            return sql, [*self.params, window, limit, offset]
        if self.texts_by_key:
            sql = (
                f"{self._matched()} SELECT w.id, count(*) OVER () FROM (SELECT m.id, "  # noqa: S608
                f"{self.score} AS score FROM (SELECT id FROM matched LIMIT %s) m "
                f"CROSS JOIN {self.texts_by_key}) w "
                "ORDER BY w.score DESC, w.id LIMIT %s OFFSET %s"
            )
            return sql, [*self.params, *self.score_params, window, limit, offset]
        sql = (
            "SELECT w.id, count(*) OVER () FROM (SELECT "  # noqa: S608
            f"{self.key} AS id, {self.score} AS score "
            f"FROM {self.source} WHERE {where} LIMIT %s) w "
            "ORDER BY w.score DESC, w.id LIMIT %s OFFSET %s"
        )
        return sql, [*self.score_params, *self.params, window, limit, offset]

    def _matched(self) -> str:
        """PostgreSQL's word index: ``WITH matched`` (id), every match. MATERIALIZED, so
        the planner plans the whole match (a bitmap of the word index for a term a few
        chunks hold) instead of betting that walking the scope finds ``LIMIT`` matches
        soon (at 1,000,000 documents: 1.9 million chunks read for 10,000 matches, 2.3 s);
        the ``LIMIT`` over it still stops reading early."""
        where = " AND ".join(self.where)
        return (
            f"WITH matched AS MATERIALIZED (SELECT {self.key} AS id "  # noqa: S608
            f"FROM {self.source} WHERE {where})"
        )

    def count(self, cap: int) -> tuple[str, list]:
        if self.texts_by_key:
            sql = f"{self._matched()} SELECT count(*) FROM (SELECT 1 FROM matched LIMIT %s) c"  # noqa: S608
            return sql, [*self.params, cap]
        where = " AND ".join(self.where)
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {self.source} WHERE {where} LIMIT %s) c"  # noqa: S608
        return sql, [*self.params, cap]

    def page_and_count(self, offset: int, limit: int, cap: int) -> tuple[str, list]:
        """PostgreSQL, a chunking's chunks: ``select()`` and ``count()`` in one pass over
        the first ``cap`` matches; the first ``window()`` of them (the same rows
        ``select()`` ranks: one plan, the table's order) are ranked, all are counted."""
        where = " AND ".join(self.where)
        window = self.window(offset, limit)
        if self.texts_by_key:  # the matches are counted by key; the window's texts read
            sql = (
                f"{self._matched()} SELECT s.id, s.n FROM (SELECT m.id, s.text, m.n FROM "  # noqa: S608
                "(SELECT m.id, count(*) OVER () AS n, row_number() OVER () AS rn FROM "
                "(SELECT id FROM matched LIMIT %s) m) m "
                f"CROSS JOIN {self.texts_by_key} WHERE m.rn <= %s) s "
                f"ORDER BY {self.score} DESC, s.id LIMIT %s OFFSET %s"
            )
            return sql, [*self.params, cap, window, *self.score_params, limit, offset]
        sql = (
            "SELECT s.id, s.n FROM (SELECT m.id, m.text, count(*) OVER () AS n, "  # noqa: S608
            f"row_number() OVER () AS rn FROM (SELECT {self.key} AS id, s.text AS text "
            f"FROM {self.source} WHERE {where} LIMIT %s) m) s WHERE s.rn <= %s "
            f"ORDER BY {self.score} DESC, s.id LIMIT %s OFFSET %s"
        )
        return sql, [*self.params, cap, window, *self.score_params, limit, offset]

    key: str = "f.rowid"
    # PostgreSQL, a chunking's chunks: read the matches through the bitmap of the text
    # index. The planner prefers walking the chunking's btree and testing every chunk of
    # it (50,000 case-folding tests for a common word, 0.3 s) because it thinks the test
    # cheap; both orders are the table's physical order, so the same rows come first.
    bitmap_only: bool = False
    # PostgreSQL, a chunking's chunks: ``page_and_count`` ranks and counts in one pass.
    one_pass: bool = False
    # PostgreSQL's word index, every term served by it: the matches come from the narrow
    # words table alone, and only the ranked window's texts are read, by key (``JOIN``
    # this, on ``m.id``).
    texts_by_key: str = ""
    # SQLite, one trigram term and nothing else: its bm25 computed here (``_bm25_page``)
    # from the window's texts, instead of by FTS5, whose bm25 reads every match of the
    # whole table once more (for the term's idf, the same for every row of one term).
    bm25_term: str | None = None
    fts: str = ""
    fts_columns: int = 1

    def ids(self, n: int) -> tuple[str, list]:
        """The first ``n`` matches' ids, in the index's order (``select()``'s window)."""
        where = " AND ".join(self.where)
        sql = f"SELECT f.rowid FROM {self.source} WHERE {where} LIMIT %s"  # noqa: S608
        return sql, [*self.params, n]


def _folded(column: str, term: str) -> str:
    """``column`` folded as far as ``term`` (lowercase) needs, in C where possible: as it
    is for a term without cased letters (Chinese, digits), SQLite's ASCII lower() for an
    ASCII term, Python's lower() (``assay_lower``) for any other."""
    if term.upper() == term:
        return column
    return f"lower({column})" if term.isascii() else f"assay_lower({column})"


def _sqlite_query(scope: Scope, terms: list[str], any_term: bool) -> _Query:
    long_terms = [t for t in terms if len(t) >= MIN_TRIGRAM]
    short_terms = [t for t in terms if len(t) < MIN_TRIGRAM]
    if scope.documents:
        table, fts = "annotator_document d", "annotator_document_fts"
        grams, where, row = "annotator_document_grams", ["d.project_id = %s"], "d.id"
        columns, text = ["f.title", "f.text"], "f.title || ' ' || f.text"
    else:
        table, fts = "annotator_chunk c", "annotator_chunk_fts"
        grams, where, row = "annotator_chunk_grams", ["c.chunking_id = %s"], "c.id"
        columns, text = ["f.text"], "f.text"
    params: list = [scope.key]
    joiner = " OR " if any_term else " AND "
    if any_term and long_terms:
        short_terms = []  # ranking by the indexed terms is enough; short ones only add noise
    # The full-text index drives (CROSS JOIN keeps SQLite from scanning the scope and
    # asking the index once per row).
    if long_terms:
        source = f"{fts} f CROSS JOIN {table} ON {row} = f.rowid"
        where.append(f"{fts} MATCH %s")
        params.append(joiner.join(_fts_phrase(t) for t in long_terms))
    else:
        source = (
            f"{grams} g CROSS JOIN {fts} f ON f.rowid = g.rowid "
            f"CROSS JOIN {table} ON {row} = g.rowid"
        )
    if short_terms:
        folded = [t.lower() for t in short_terms]
        if long_terms:
            where.append(f"f.rowid IN (SELECT rowid FROM {grams} WHERE {grams} MATCH %s)")  # noqa: S608
        else:
            where.append(f"{grams} MATCH %s")
        params.append(joiner.join(f"({sqlite_match(t)})" for t in folded))
        # Confirmed against the text: the grams are a term's candidates, not its proof.
        confirm = []
        for term in folded:
            confirm.append(
                "(" + " OR ".join(f"instr({_folded(c, term)}, %s) > 0" for c in columns) + ")"
            )
            params.extend([term] * len(columns))
        where.append("(" + joiner.join(confirm) + ")")
    folded_terms = [t.lower() for t in terms]
    if any_term:
        score = " + ".join(f"(instr({_folded(text, t)}, %s) > 0)" for t in folded_terms)
        score_params = folded_terms
    else:
        score = " + ".join(
            f"(length({_folded(text, t)}) - length(replace({_folded(text, t)}, %s, '')))"
            " / max(length(%s), 1)"
            for t in folded_terms
        )
        score_params = [p for t in folded_terms for p in (t, t)]
    return _Query(
        source,
        where,
        params,
        ranked_by_index=bool(long_terms),
        score=score,
        score_params=score_params,
        bm25_term=terms[0] if len(terms) == 1 and long_terms and not any_term else None,
        fts=fts,
        fts_columns=len(columns),
    )


# Above this many words, a term (a piece of many words: "ing") is served by the trigram
# index: a GIN lookup of that many keys costs as much as the trigrams' candidates (at
# 900,000 chunks, 131 words: 435 ms against 423; 11 words: 28 ms against 493), and more
# when nearly every text holds the piece (100,000 chunks: 229 ms against 74).
MAX_WORDS_PER_TERM = 64


def _words_containing(term: str) -> list[str] | None:
    """PostgreSQL: the words (migration 0017's list) that contain ``term``, a term of ASCII
    letters and digits, or None when the word index cannot serve it (another character,
    or more than ``MAX_WORDS_PER_TERM`` words). Such a term is contained in a text exactly
    when it is contained in one of the text's words (the runs of ``[a-z0-9]`` of its
    ``lower()``), so rows holding any of these words are its matches, with no recheck."""
    if not (term.isascii() and term.isalnum()):
        return None
    with connection.cursor() as cursor:
        # MATERIALIZED: the planner costs the whole match through the trigram index
        # instead of betting that a scan of the list finds enough rows before the LIMIT
        # (it reads lazily all the same). DISTINCT drops the rare duplicate that two
        # imports adding the same new word at once leave behind.
        cursor.execute(
            "WITH w AS MATERIALIZED (SELECT word FROM annotator_search_word WHERE word LIKE %s) "
            "SELECT DISTINCT word FROM (SELECT word FROM w LIMIT %s) w",
            [f"%{term.lower()}%", MAX_WORDS_PER_TERM + 1],
        )
        words = [row[0] for row in cursor.fetchall()]
    return sorted(words) if len(words) <= MAX_WORDS_PER_TERM else None


def _by_key(table: str, columns: str, key: str) -> str:
    """The texts of the matches ``m``, read by key one match at a time: a lateral read
    (``OFFSET 0`` keeps the planner from making it a join). As a join, the planner may
    sort the whole table by the score to stop early (at 1,000,000 documents: 9 million
    chunks sorted on disk, 24 s, for 30 of 2,000 matches)."""
    alias = table.split()[-1]
    return f"LATERAL (SELECT {columns} FROM {table} WHERE {key} = m.id OFFSET 0) {alias}"  # noqa: S608


def _postgres_query(scope: Scope, terms: list[str], any_term: bool) -> _Query:
    gram_terms = [t.lower() for t in terms if _is_han(t) or len(t) < MIN_TRIGRAM]
    trigram_terms = [t for t in terms if not (_is_han(t) or len(t) < MIN_TRIGRAM)]
    if any_term and trigram_terms:
        gram_terms = []  # as on SQLite: the longer terms rank the pool
    # Each trigram term's words (None: the trigram index serves it). Any of several terms
    # (``any_term``) takes one index for all: the words only when every term has them.
    words = {t: _words_containing(t) for t in trigram_terms}
    if any_term and any(w is None for w in words.values()):
        words = dict.fromkeys(trigram_terms)
    by_words = any(w is not None for w in words.values())
    # Every term served by the words: the matches come from the words table alone.
    words_only = by_words and not gram_terms and all(w is not None for w in words.values())
    if scope.documents:
        table, row_key, texts = "annotator_document", "id", ["title", "text"]
        scored = "(d.title || ' ' || d.text)"
        source = "annotator_document_search s JOIN annotator_document d ON d.id = s.document_id"
        where, key = ["s.project_id = %s"], "d.id"
        if by_words:
            source = (
                "annotator_document_words w JOIN annotator_document_search s "
                "ON s.document_id = w.document_id JOIN annotator_document d ON d.id = w.document_id"
            )
            where = ["w.project_id = %s"]
        if words_only:
            source, key = "annotator_document_words w", "w.document_id"
        texts_by_key, alias = _by_key("annotator_document d", "d.title, d.text", "d.id"), "d"
    else:
        table, row_key, texts = "annotator_chunk_search", "chunk_id", ["text"]
        scored = "s.text"
        source, where, key = "annotator_chunk_search s", ["s.chunking_id = %s"], "s.chunk_id"
        if by_words:
            source = (
                "annotator_chunk_words w JOIN annotator_chunk_search s ON s.chunk_id = w.chunk_id"
            )
            where, key = ["w.chunking_id = %s"], "w.chunk_id"
        if words_only:
            # Every word carries its chunking (``1:word``), so a worded row is in scope by
            # its words, and only unworded rows are asked for their chunking. Asked of
            # every row, the scope lets the planner walk the chunking's btree testing each
            # row (1.9 million read for 10,000 matches at 1,000,000 documents: 2.3 s).
            source, where = "annotator_chunk_words w", []
        texts_by_key, alias = _by_key("annotator_chunk_search s", "s.text", "s.chunk_id"), "s"
    unscoped = not where  # the scope is asked of unworded rows alone
    params: list = [] if unscoped else [scope.key]
    joiner = " OR " if any_term else " AND "
    conditions: list[str] = []
    condition_params: list = []
    for term in trigram_terms:
        if words[term] is None:
            conditions.append("(" + " OR ".join(f"{alias}.{t} ILIKE %s" for t in texts) + ")")
        else:
            # A row with a word too long for the list is read by its text.
            likes = " OR ".join(f"x.{t} ILIKE %s" for t in texts)
            in_scope = "w.chunking_id = %s AND " if unscoped else ""
            unworded = (
                f"({in_scope}w.words IS NULL AND EXISTS (SELECT 1 FROM {table} x "  # noqa: S608
                f"WHERE x.{row_key} = {key} AND ({likes})))"
            )
            if words[term]:
                conditions.append(f"(w.words && %s::text[] OR {unworded})")
                # A chunk's words are kept with their chunking (migration 0017).
                prefix = "" if scope.documents else f"{scope.key}:"
                condition_params.append([prefix + w for w in words[term]])
            else:
                conditions.append(unworded)
            if unscoped:
                condition_params.append(scope.key)
        condition_params.extend([_like(term)] * len(texts))
    if gram_terms:
        where.append("(s.grams @@ %s::tsquery OR s.grams IS NULL)")
        params.append(
            (" | " if any_term else " & ").join(f"({postgres_tsquery(t)})" for t in gram_terms)
        )
        for term in gram_terms:
            conditions.append(
                "(" + " OR ".join(f"strpos(lower({alias}.{t}), %s) > 0" for t in texts) + ")"
            )
            condition_params.extend([term] * len(texts))
    where.append("(" + joiner.join(conditions) + ")")
    params.extend(condition_params)
    all_terms = trigram_terms + gram_terms
    if any_term:
        score = " + ".join(f"({scored} ILIKE %s)::int" for _ in all_terms)
        score_params = [_like(t) for t in all_terms]
    else:
        score = " + ".join(
            f"(length({scored}) - length(replace(lower({scored}), lower(%s), '')))"
            " / greatest(length(%s), 1)"
            for _ in all_terms
        )
        score_params = [p for t in all_terms for p in (t, t)]
    return _Query(
        source,
        where,
        params,
        False,
        score,
        score_params,
        key=key,
        # The word index is exact and narrow: the planner goes from it to the texts by
        # key, which the bitmap-only settings would forbid.
        bitmap_only=not scope.documents and not by_words,
        one_pass=not scope.documents,
        texts_by_key=texts_by_key if words_only else "",
    )


def _database_query(scope: Scope, terms: list[str], any_term: bool) -> _Query | None:
    if connection.vendor == "sqlite" and _sqlite_indexed():
        return _sqlite_query(scope, terms, any_term)
    if connection.vendor == "postgresql":
        return _postgres_query(scope, terms, any_term)
    return None


# PostgreSQL's planner settings for one search statement. JIT compiles a statement whose
# estimated cost is high, as a search over 900,000 chunks' words is: 15–20 ms of compiling
# for a statement of 40–70 ms (EXPLAIN ANALYZE at medium), with nothing to gain.
_SEARCH_SETTINGS = {"jit": "off"}
_BITMAP_ONLY = {"enable_indexscan": "off", "enable_seqscan": "off"}


def _fetch_rows(sql: str, params: list, bitmap_only: bool = False) -> list[tuple]:
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    wanted = {**_SEARCH_SETTINGS, **(_BITMAP_ONLY if bitmap_only else {})}
    names = list(wanted)
    # SET LOCAL lasts to the end of the transaction (an outer one too): put it back after.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT "
            + ", ".join(f"current_setting('{n}'), set_config('{n}', %s, true)" for n in names),
            [wanted[n] for n in names],
        )
        before = cursor.fetchone()[::2]
        try:
            cursor.execute(sql, params)
            return cursor.fetchall()
        finally:
            cursor.execute(
                "SELECT " + ", ".join(f"set_config('{n}', %s, true)" for n in names),
                list(before),
            )


def _orm(scope: Scope, terms: list[str], any_term: bool):
    if scope.documents:
        rows, fields = Document.objects.filter(project_id=scope.key), ["title", "text"]
    else:
        rows = Chunk.objects.filter(chunking_id=scope.key).annotate(
            body=Substr("document__text", F("start") + 1, F("end") - F("start"))
        )
        fields = ["body"]
    condition = Q()
    for term in terms:
        term_q = Q()
        for field in fields:
            term_q |= Q(**{f"{field}__icontains": term})
        condition = (condition | term_q) if any_term else (condition & term_q)
    return rows.filter(condition).order_by("pk")


def matching(
    scope: Scope, terms: list[str], *, any_term: bool, offset: int = 0, limit: int = 50
) -> list[int]:
    """Primary keys of the rows matching ``terms``, best first, from ``offset``."""
    if not terms:
        return []
    query = _database_query(scope, terms, any_term)
    if query is None:
        rows = _orm(scope, terms, any_term).values_list("pk", flat=True)
        return list(rows[offset : offset + limit])
    return [row[0] for row in _fetch_rows(*query.select(offset, limit), query.bitmap_only)]


def matching_page(
    scope: Scope, terms: list[str], *, offset: int, limit: int, cap: int, count: bool = True
) -> tuple[list[int], int | None]:
    """(this page's primary keys, best first; how many rows contain every term, counted
    up to ``cap``). One statement when the ranked window holds every match (the count
    is the window's size), on PostgreSQL's chunks (one pass ranks and counts) or for one
    term on SQLite (one pass counts; the window's texts, read by key, rank); a second,
    capped count only otherwise.

    Without ``count``, a count that would take more than the ranking's pass is not taken:
    the number is None when there are at least ``ranked_window(offset, limit)``
    matches, for ``count_matching`` to give later."""
    if not terms:
        return [], 0
    query = _database_query(scope, terms, False)
    if query is None:
        rows = _orm(scope, terms, False).values_list("pk", flat=True)
        ids = list(rows[offset : offset + limit])
        if offset == 0 and len(ids) < limit:
            return ids, len(ids)
        return ids, _orm(scope, terms, False)[:cap].count()
    if query.bm25_term is not None:
        return _bm25_page(query, offset, limit, cap, count)
    if query.one_pass and query.window(offset, limit) < cap:
        rows = _fetch_rows(*query.page_and_count(offset, limit, cap), query.bitmap_only)
        if rows or offset == 0:
            return [row[0] for row in rows], rows[0][1] if rows else 0
        return [], _fetch_rows(*query.count(cap), query.bitmap_only)[0][0]
    rows = _fetch_rows(*query.select(offset, limit), query.bitmap_only)
    ids = [row[0] for row in rows]
    if rows and rows[0][1] < query.window(offset, limit):
        return ids, min(rows[0][1], cap)
    if rows and not count:
        return ids, None
    return ids, _fetch_rows(*query.count(cap), query.bitmap_only)[0][0]


# FTS5's bm25 (fts5_aux.c): k1 = 1.2, b = 0.75.
_K1, _B = 1.2, 0.75


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (big-endian, seven bits a byte, a ninth byte of eight)."""
    values, i = [], 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


def _overlaps(term: str) -> bool:
    """Whether two occurrences of ``term`` can overlap (it ends as it starts)."""
    return any(term.startswith(term[-k:]) for k in range(1, len(term)))


def _occurrences(text: str, term: str, overlaps: bool) -> int:
    """How many times ``term`` starts in ``text`` (overlapping: FTS5's phrase instances)."""
    if not overlaps:
        return text.count(term)
    n, i = 0, text.find(term)
    while i >= 0:
        n += 1
        i = text.find(term, i + 1)
    return n


def _bm25_order(query: _Query, ids: list[int]) -> list[int]:
    """``ids`` best first by FTS5's bm25 of the one term, then by id: the order FTS5's
    ``rank`` gives them. With one phrase, bm25 is its idf (a positive constant) times
    tf·(k1+1) / (tf + k1·(1 − b + b·D/avgdl)); tf (the term's occurrences, the trigram
    tokenizer folding case) and D (the row's tokens: a trigram per character but the last
    two, in each column) come from the texts, avgdl from the index's averages record."""
    if not ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT block FROM {query.fts}_data WHERE id = 1")  # noqa: S608
        rows, *tokens = _varints(cursor.fetchone()[0])
        columns = ", ".join(f"c{i}" for i in range(query.fts_columns))
        # One parameter however deep the page (a window of 300,000 ids would pass SQLite's
        # limit on parameters).
        cursor.execute(
            f"SELECT id, {columns} FROM {query.fts}_content "  # noqa: S608
            "WHERE id IN (SELECT value FROM json_each(%s))",
            [json.dumps(ids)],
        )
        texts = cursor.fetchall()
    avgdl = sum(tokens) / rows
    term = query.bm25_term.lower()
    overlaps = _overlaps(term)
    scored = []
    for pk, *columns in texts:
        tf = size = 0
        for text in columns:
            if text:
                tf += _occurrences(text.lower(), term, overlaps)
                size += max(len(text) - 2, 0)
        score = (tf * (_K1 + 1.0)) / (tf + _K1 * (1 - _B + _B * size / avgdl))
        scored.append((-score, pk))
    scored.sort()
    return [pk for _, pk in scored]


def _bm25_page(
    query: _Query, offset: int, limit: int, cap: int, count: bool
) -> tuple[list[int], int | None]:
    """``matching_page`` for one trigram term on SQLite: one pass over the first ``cap``
    matches (their count; without ``count``, one more than the window) whose first
    ``window()`` (``select()``'s window) are ranked."""
    window = query.window(offset, limit)
    ids = [row[0] for row in _fetch_rows(*query.ids(max(cap, window) if count else window + 1))]
    page = _bm25_order(query, ids[:window])[offset : offset + limit]
    return page, (min(len(ids), cap) if count or len(ids) <= window else None)


def count_matching(scope: Scope, terms: list[str], cap: int) -> int:
    """How many rows contain every term, counted up to ``cap`` (a bounded cost)."""
    if not terms:
        return 0
    query = _database_query(scope, terms, False)
    if query is None:
        return _orm(scope, terms, False)[:cap].count()
    return _fetch_rows(*query.count(cap), query.bitmap_only)[0][0]
