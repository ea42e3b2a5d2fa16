"""Full-text search over a project's chunks and documents, in English, Chinese or any script.

``search()`` is the one entry point; the labelling screen's search box and the candidate
pool's fallback (when no run exists) both use it. Matching is by substring, so Chinese
needs no word segmenter:

- SQLite (>= 3.34): FTS5 tables with the trigram tokenizer (migration 0003), filled by
  triggers. Terms of three characters or more go through MATCH and results are ranked
  by FTS5's bm25; shorter terms (two Chinese characters, "AI") are matched with LIKE.
- PostgreSQL: pg_trgm GIN indexes and ILIKE; results are ranked by how often the terms
  occur (among the first ``RANK_WINDOW`` matches of a very common term).
- Anything else (or SQLite without the trigram tokenizer): LIKE through the ORM.

Two modes: ``any_term=False`` (the search box) wants every term; ``any_term=True`` (a
query's text turned into a candidate pool) wants any term and ranks by how many match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection
from django.db.models import F, Q
from django.db.models.functions import Substr

from numerics.words import HAN_RANGES, STOP_WORDS, words

from .models import Chunk, Chunking, Document, Project

MIN_INDEXED = 3  # the trigram index only knows substrings of three characters or more
MAX_TERMS = 32
MAX_TERM_CHARS = 100
RANK_WINDOW = 2000

_TERM_RE = re.compile(r'"([^"]+)"|(\S+)')


def split_terms(text: str) -> list[str]:
    """What a person typed: whitespace-separated terms, "quoted phrases" kept whole."""
    terms: list[str] = []
    for match in _TERM_RE.finditer(text or ""):
        term = (match.group(1) or match.group(2)).strip()[:MAX_TERM_CHARS]
        if term and term.lower() not in (t.lower() for t in terms):
            terms.append(term)
    return terms[:MAX_TERMS]


def query_terms(text: str) -> list[str]:
    """Terms of a natural-language question, for a pool ranked by how many of them match.

    English words minus stop words; Chinese runs (no spaces) as overlapping three-character
    pieces, or whole when only two characters long.
    """
    terms: list[str] = []
    for word, is_han in words((text or "").lower()):
        if is_han:
            if len(word) < MIN_INDEXED:
                pieces = [word] if len(word) == 2 else []
            else:
                pieces = [word[i : i + MIN_INDEXED] for i in range(len(word) - MIN_INDEXED + 1)]
        elif word in STOP_WORDS or len(word) < 2:
            pieces = []
        else:
            pieces = [word]
        for piece in pieces:
            if piece not in terms:
                terms.append(piece)
    return terms[:MAX_TERMS]


def han_bigrams(text: str) -> list[str]:
    """Every pair of adjacent Chinese characters: a wider net than three-character pieces."""
    pairs: list[str] = []
    for word, is_han in words(text or ""):
        if is_han:
            for i in range(len(word) - 1):
                if word[i : i + 2] not in pairs:
                    pairs.append(word[i : i + 2])
    return pairs[:MAX_TERMS]


# A letter or digit that is not Han: where a non-Han word may not continue.
_NOT_HAN_LETTER = rf"(?![{HAN_RANGES}])[^\W_]"


def _whole_word(term: str) -> str:
    """A pattern for ``term`` as a whole word: "wing" does not match inside "owing".

    Chinese has no spaces, so an edge that is a Han character (or not a letter) may touch
    anything; an edge that is a letter or digit of another script may not touch another."""
    pattern = re.escape(term)
    if re.match(_NOT_HAN_LETTER, term[0]):
        pattern = rf"(?<!{_NOT_HAN_LETTER}){pattern}"
    if re.match(_NOT_HAN_LETTER, term[-1]):
        pattern = rf"{pattern}(?!{_NOT_HAN_LETTER})"
    return pattern


def highlight(text: str, terms: list[str]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_match) for showing search hits: whole words, any case."""
    terms = [t for t in terms if t]
    if not terms or not text:
        return [(text, False)]
    pattern = re.compile(
        "|".join(_whole_word(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE
    )
    pieces: list[tuple[str, bool]] = []
    position = 0
    for match in pattern.finditer(text):
        if match.start() > position:
            pieces.append((text[position : match.start()], False))
        pieces.append((match.group(), True))
        position = match.end()
    if position < len(text):
        pieces.append((text[position:], False))
    return pieces


def default_chunking(project: Project) -> Chunking | None:
    """The project's first chunking (the oldest), used when the annotator picks none."""
    return project.chunkings.order_by("pk").first()


@dataclass(frozen=True)
class _Plan:
    indexed: list[str]  # terms long enough for the trigram index
    short: list[str]  # terms matched by LIKE only


def _plan(terms: list[str], any_term: bool) -> _Plan:
    indexed = [t for t in terms if len(t) >= MIN_INDEXED]
    short = [t for t in terms if len(t) < MIN_INDEXED]
    if any_term and indexed:
        short = []  # ranking by the indexed terms is enough; short ones only add noise
    return _Plan(indexed, short)


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


_fts_cache: dict[tuple[str, str], bool] = {}


def _sqlite_fts_ready() -> bool:
    key = (connection.alias, str(connection.settings_dict["NAME"]))
    if key not in _fts_cache:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM sqlite_master WHERE name IN "
                "('annotator_chunk_fts', 'annotator_document_fts')"
            )
            _fts_cache[key] = cursor.fetchone()[0] == 2
    return _fts_cache[key]


def _fetch_ids(sql: str, params: list) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def _sqlite(
    plan: _Plan,
    any_term: bool,
    scope_sql: str,
    scope: list,
    table: str,
    columns: list[str],
    limit: int,
) -> tuple[str, list]:
    where: list[str] = [scope_sql]
    params: list = [*scope]
    joiner = " OR " if any_term else " AND "
    if plan.indexed:
        where.append(f"{table} MATCH %s")
        params.append(joiner.join(_fts_phrase(t) for t in plan.indexed))
    if plan.short:
        likes = []
        for term in plan.short:
            likes.append("(" + " OR ".join(f"f.{c} LIKE %s ESCAPE '\\'" for c in columns) + ")")
            params.extend([_like(term)] * len(columns))
        where.append("(" + joiner.join(likes) + ")")
    if plan.indexed:
        order = "f.rank"
    elif any_term:
        # LIKE only: rank by how many of the terms a row contains.
        order = (
            "("
            + " + ".join(f"(f.{columns[-1]} LIKE %s ESCAPE '\\')" for _ in plan.short)
            + ") DESC, f.rowid"
        )
    else:
        order = "f.rowid"
    order_params = [_like(t) for t in plan.short] if (any_term and not plan.indexed) else []
    sql = (
        # Only constant SQL fragments are interpolated; every value is a parameter.
        f"SELECT f.rowid FROM {table} f {{join}} WHERE {' AND '.join(where)} "  # noqa: S608
        f"ORDER BY {order} LIMIT %s"
    )
    return sql, [*params, *order_params, limit]


def _postgres_score(terms: list[str], any_term: bool, column_sql: str) -> tuple[str, list]:
    """SQL ranking a row: terms matched (any) or term occurrences (all), with params."""
    if any_term:
        score = " + ".join(f"({column_sql} ILIKE %s)::int" for _ in terms)
        return score, [_like(t) for t in terms]
    score = " + ".join(
        f"(length({column_sql}) - length(replace(lower({column_sql}), lower(%s), '')))"
        " / greatest(length(%s), 1)"
        for _ in terms
    )
    return score, [p for t in terms for p in (t, t)]


def search_chunks(
    project: Project,
    terms: list[str],
    *,
    chunking: Chunking | None = None,
    any_term: bool = False,
    limit: int = 50,
) -> list[int]:
    chunking = chunking or default_chunking(project)
    if chunking is None or not terms or chunking.project_id != project.pk:
        return []
    plan = _plan(terms, any_term)
    vendor = connection.vendor
    if vendor == "sqlite" and _sqlite_fts_ready():
        sql, params = _sqlite(
            plan,
            any_term,
            "c.chunking_id = %s",
            [chunking.pk],
            "annotator_chunk_fts",
            ["text"],
            limit,
        )
        sql = sql.replace("{join}", "JOIN annotator_chunk c ON c.id = f.rowid")
        return _fetch_ids(sql, params)
    if vendor == "postgresql":
        all_terms = plan.indexed + plan.short
        joiner = " OR " if any_term else " AND "
        where = "(" + joiner.join("s.text ILIKE %s" for _ in all_terms) + ")"
        where_params = [_like(t) for t in all_terms]
        score, score_params = _postgres_score(all_terms, any_term, "s.text")
        sql = (
            "SELECT w.chunk_id FROM (SELECT s.chunk_id, "  # noqa: S608 - constant fragments
            f"{score} AS score FROM annotator_chunk_search s "
            f"WHERE s.chunking_id = %s AND {where} LIMIT %s) w "
            "ORDER BY w.score DESC, w.chunk_id LIMIT %s"
        )
        return _fetch_ids(sql, [*score_params, chunking.pk, *where_params, RANK_WINDOW, limit])
    chunks = Chunk.objects.filter(chunking=chunking).annotate(
        body=Substr("document__text", F("start") + 1, F("end") - F("start"))
    )
    return _orm_filter(chunks, terms, any_term, ["body"], limit)


def search_documents(
    project: Project, terms: list[str], *, any_term: bool = False, limit: int = 50
) -> list[int]:
    if not terms:
        return []
    plan = _plan(terms, any_term)
    vendor = connection.vendor
    if vendor == "sqlite" and _sqlite_fts_ready():
        sql, params = _sqlite(
            plan,
            any_term,
            "d.project_id = %s",
            [project.pk],
            "annotator_document_fts",
            ["title", "text"],
            limit,
        )
        sql = sql.replace("{join}", "JOIN annotator_document d ON d.id = f.rowid")
        return _fetch_ids(sql, params)
    if vendor == "postgresql":
        all_terms = plan.indexed + plan.short
        score, score_params = _postgres_score(all_terms, any_term, "(d.title || ' ' || d.text)")
        # Each term must hit the title or the text; the GIN indexes serve both columns.
        joiner = " OR " if any_term else " AND "
        where = "(" + joiner.join("(d.title ILIKE %s OR d.text ILIKE %s)" for _ in all_terms) + ")"
        where_params = [p for t in all_terms for p in (_like(t), _like(t))]
        sql = (
            f"SELECT w.id FROM (SELECT d.id, {score} AS score FROM annotator_document d "  # noqa: S608
            f"WHERE d.project_id = %s AND {where} LIMIT %s) w "
            "ORDER BY w.score DESC, w.id LIMIT %s"
        )
        return _fetch_ids(sql, [*score_params, project.pk, *where_params, RANK_WINDOW, limit])
    documents = Document.objects.filter(project=project)
    return _orm_filter(documents, terms, any_term, ["title", "text"], limit)


def _orm_filter(queryset, terms: list[str], any_term: bool, fields: list[str], limit: int):
    condition = Q()
    for term in terms:
        term_q = Q()
        for field in fields:
            term_q |= Q(**{f"{field}__icontains": term})
        condition = (condition | term_q) if any_term else (condition & term_q)
    return list(queryset.filter(condition).order_by("pk").values_list("pk", flat=True)[:limit])


def search(
    project: Project,
    text: str,
    *,
    documents: bool = False,
    chunking: Chunking | None = None,
    any_term: bool = False,
    limit: int = 50,
) -> list[int]:
    """Primary keys of the project's chunks (of ``chunking``) or documents matching ``text``.

    ``text`` is what a person typed (terms and "quoted phrases", all required), or with
    ``any_term=True`` a natural-language question (any of its terms, ranked by matches).
    Best matches first.
    """

    def run(terms: list[str]) -> list[int]:
        if documents:
            return search_documents(project, terms, any_term=any_term, limit=limit)
        return search_chunks(project, terms, chunking=chunking, any_term=any_term, limit=limit)

    if not any_term:
        return run(split_terms(text))
    found = run(query_terms(text))
    if len(found) < limit:
        # Chinese questions rarely share three-character pieces with the answer; top the
        # pool up with rows sharing two-character pieces (matched with LIKE, ranked by
        # how many they share).
        bigrams = [b for b in han_bigrams(text) if b not in query_terms(text)]
        if bigrams:
            seen = set(found)
            found += [pk for pk in run(bigrams) if pk not in seen][: limit - len(found)]
    return found
