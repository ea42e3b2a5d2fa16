"""Importing documents, queries and chunkings: every line checked, all or nothing.

Each importer takes numbered rows (``formats.rows``) and validates every one outside any
transaction. Documents and chunks are staged in short batches and swapped into the project
in one short transaction (``staging``); queries are written in one. If any line is bad,
nothing reaches the project and ``FileRejected`` lists every problem by line number.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from django.db import transaction
from django.db.models.functions import Length

from formats import BadLine, FileRejected, LineErrors, first_id
from formats.errors import TEXT, define, gettext_noop

from ..models import Chunk, Chunking, Document, Project, Query
from .common import (
    CHUNK,
    DOCUMENT,
    QUERY,
    ImportResult,
    Rows,
    Tick,
    as_text,
    check_id,
    claim_id,
    flush,
    json_value,
    looked_up,
    whole,
)
from .staging import Staging

PAGES_LIST = define("import.pages_list", gettext_noop("pages must be a list of page texts"))
TEXT_OR_PAGES = define("import.text_or_pages", gettext_noop("give either text or pages, not both"))
METADATA_OBJECT = define("import.metadata_object", gettext_noop("metadata must be an object"))
TITLE_TOO_LONG = define(
    "import.title_too_long", gettext_noop("title is longer than 1000 characters")
)
NO_DOCUMENTS = define("import.no_documents", gettext_noop("the file holds no documents"))
DOCUMENT_EXISTS = define(
    "import.document_exists", gettext_noop("document %(id)s already exists in this project")
)
MISSING_QUERY_TEXT = define("import.missing_query_text", gettext_noop("missing query text"))
TAGS_LIST = define("import.tags_list", gettext_noop("tags must be a list"))
NO_QUERIES = define("import.no_queries", gettext_noop("the file holds no queries"))
QUERY_EXISTS = define(
    "import.query_exists", gettext_noop("query %(id)s already exists in this project")
)
UNKNOWN_DOCUMENT = define("import.unknown_document", gettext_noop("unknown document %(id)s"))
SPAN_OUTSIDE = define(
    "import.span_outside",
    gettext_noop("span [%(start)s, %(end)s) is not inside document %(id)s (length %(length)s)"),
)
CHUNK_TEXT_NOT_FOUND = define(
    "import.chunk_text_not_found", gettext_noop("chunk text not found in document %(id)s")
)
START_END_OR_TEXT = define(
    "import.start_end_or_text", gettext_noop("give start and end, or the chunk text")
)
NO_CHUNKS = define("import.no_chunks", gettext_noop("the file holds no chunks"))
NO_TEXT = define(
    "import.no_text", gettext_noop("a document needs a text or a pages field (text may be empty)")
)
SPAN_REVERSED = define(
    "import.span_reversed", gettext_noop("span [%(start)s, %(end)s): end before start")
)
CHUNKING_NAME = define(
    "import.chunking_name", gettext_noop("a chunking needs a name of 1–200 characters")
)
CHUNKING_EXISTS = define(
    "import.chunking_exists", gettext_noop("chunking %(name)s already exists in this project")
)

PAGE_SEPARATOR = "\n\n"


def _with_existing(rows: Rows, keys: tuple[str, ...], taken) -> Iterator[tuple]:
    """Each (line, row) with the ids of its batch the project already holds (``taken``:
    the project's rows with those ids), looked up by key: an import of 200 documents
    into a project of 1,000,000 read every id (1.8 s)."""

    def id_of(item) -> str | None:
        _line, row = item
        return None if isinstance(row, BadLine) else first_id(row, keys)

    for (line, row), existing in looked_up(rows, id_of, _taken_among(taken, keys[0])):
        yield line, row, existing


def _taken_among(taken, column: str):
    """Which of some ids ``taken`` (a project's rows) already holds, read by key."""

    def lookup(ids: set[str]) -> set[str]:
        return set(taken.filter(**{f"{column}__in": ids}).values_list(column, flat=True))

    return lookup


def _new_id(line, row, keys, kind, seen, errors, existing, tick) -> str | None:
    """The row's id when the row is readable and the id is valid and not taken; else
    None, with the reason recorded against the line."""
    if tick:
        tick()
    if isinstance(row, BadLine):
        errors.add(line, row.problem)
        return None
    new_id = first_id(row, keys)
    if not check_id(new_id, keys[0], line, errors):
        return None
    if not claim_id(new_id, kind, line, seen, errors, existing):
        return None
    return new_id


# --- documents -------------------------------------------------------------------------

# ``_id`` is BEIR's corpus.jsonl and queries.jsonl.
DOCUMENT_FIELDS = {"doc_id", "id", "_id", "title", "text", "pages", "metadata"}


def import_documents(project: Project, rows: Rows, *, tick: Tick = None) -> ImportResult:
    errors = LineErrors()
    keys = ("doc_id", "id", "_id")
    seen: dict[str, int] = {}
    staging = Staging(project)
    created = 0
    try:
        for line, row, existing in _with_existing(rows, keys, project.documents):
            doc_id = _new_id(line, row, keys, DOCUMENT(), seen, errors, existing, tick)
            if doc_id is None:
                continue
            pages = json_value(row.get("pages"), line, "pages", errors)
            page_starts: list[int] = []
            if pages is not None:
                if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
                    errors.add(line, PAGES_LIST())
                    continue
                if row.get("text") not in (None, ""):
                    errors.add(line, TEXT_OR_PAGES())
                    continue
                offset = 0
                for page in pages:
                    page_starts.append(offset)
                    offset += len(page) + len(PAGE_SEPARATOR)
                text = PAGE_SEPARATOR.join(pages)
            elif {"text", "pages"} & {*row, *getattr(rows, "columns", ())}:
                # An explicitly empty text is a document (real collections hold some).
                text = as_text(row.get("text"))
            else:
                errors.add(line, NO_TEXT())
                continue
            metadata = json_value(row.get("metadata", {}), line, "metadata", errors)
            if not isinstance(metadata, dict):
                errors.add(line, METADATA_OBJECT())
                continue
            metadata = {
                **metadata,
                **{k: v for k, v in row.items() if k not in DOCUMENT_FIELDS},
            }
            title = as_text(row.get("title"))
            if len(title) > 1000:
                errors.add(line, TITLE_TOO_LONG())
                continue
            if errors:
                continue  # keep validating, stop writing
            staging.add(
                Document(
                    project=staging.project,
                    doc_id=doc_id,
                    title=title,
                    text=text,
                    metadata=metadata,
                    page_starts=page_starts,
                )
            )
            created += 1
        if not seen and not errors:
            errors.add(0, NO_DOCUMENTS())
        errors.raise_if_any()
    except BaseException:
        staging.discard()
        raise
    staging.swap(lambda staged: _move_documents(staged, project, seen))
    return ImportResult("documents", created)


def _move_documents(staged: Project, project: Project, seen: dict[str, int]) -> None:
    """The swap: refuse ids another import added meanwhile, else move every document."""
    rows = Document.objects.filter(project=staged)
    clash = rows.filter(doc_id__in=project.documents.values("doc_id"))
    errors = LineErrors()
    for doc_id in clash.values_list("doc_id", flat=True):
        errors.add(seen[doc_id], DOCUMENT_EXISTS(id=repr(doc_id)))
    errors.raise_if_any()
    rows.update(project=project)


# --- queries ---------------------------------------------------------------------------

QUERY_FIELDS = {
    "qid",
    "id",
    "_id",
    "text",
    "query",
    "reference_answer",
    "answer",
    "tags",
    "metadata",
}


def import_queries(project: Project, rows: Rows, *, tick: Tick = None) -> ImportResult:
    errors = LineErrors()
    keys = ("qid", "id", "_id")
    seen: dict[str, int] = {}
    batch: list[Query] = []
    created = 0
    for line, row, existing in _with_existing(rows, keys, project.queries):
        qid = _new_id(line, row, keys, QUERY(), seen, errors, existing, tick)
        if qid is None:
            continue
        text = as_text(row.get("text", row.get("query"))).strip()
        if not text:
            errors.add(line, MISSING_QUERY_TEXT())
            continue
        tags = json_value(row.get("tags", []), line, "tags", errors)
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",") if t.strip()]
        if not isinstance(tags, list):
            errors.add(line, TAGS_LIST())
            continue
        metadata = json_value(row.get("metadata", {}), line, "metadata", errors)
        if not isinstance(metadata, dict):
            errors.add(line, METADATA_OBJECT())
            continue
        metadata = {**metadata, **{k: v for k, v in row.items() if k not in QUERY_FIELDS}}
        if errors:
            continue
        batch.append(
            Query(
                project=project,
                qid=qid,
                text=text,
                reference_answer=as_text(row.get("reference_answer", row.get("answer"))),
                tags=[str(t) for t in tags],
                metadata=metadata,
            )
        )
        created += 1
    if not seen and not errors:
        errors.add(0, NO_QUERIES())
    errors.raise_if_any()
    with transaction.atomic():
        # Another import may have added some of these ids while the file was read.
        for qid, existing in looked_up(seen, str, _taken_among(project.queries, "qid")):
            if qid in existing:
                errors.add(seen[qid], QUERY_EXISTS(id=repr(qid)))
        errors.raise_if_any()
        flush(Query, batch, force=True)
    return ImportResult("queries", created)


# --- chunks ----------------------------------------------------------------------------


def locate(text: str, chunk_text: str, hint: int = 0) -> tuple[int, int] | None:
    """Where ``chunk_text`` occurs in ``text``: exact match first (from ``hint``, then
    anywhere), else a match tolerant of whitespace differences. Half-open offsets."""
    needle = chunk_text.strip()
    if not needle:
        return None
    for start_at in (hint, 0):
        position = text.find(needle, start_at)
        if position >= 0:
            return position, position + len(needle)
    pattern = r"\s+".join(re.escape(token) for token in needle.split())
    match = re.compile(pattern).search(text, hint) or re.compile(pattern).search(text)
    if match:
        return match.start(), match.end()
    return None


def import_chunks(
    project: Project,
    rows: Rows,
    *,
    chunking: str,
    parameters: dict | None = None,
    tick: Tick = None,
) -> ImportResult:
    errors = LineErrors()
    if not chunking or len(chunking) > 200:
        raise FileRejected([CHUNKING_NAME()])
    if Chunking.objects.filter(project=project, name=chunking).exists():
        raise FileRejected([CHUNKING_EXISTS(name=repr(chunking))])
    documents = {
        doc_id: (pk, length)
        for doc_id, pk, length in project.documents.annotate(length=Length("text"))
        .values_list("doc_id", "pk", "length")
        .iterator()
    }

    @lru_cache(maxsize=16)
    def text_of(pk: int) -> str:
        return Document.objects.values_list("text", flat=True).get(pk=pk)

    seen: dict[str, int] = {}
    last_end: dict[int, int] = {}
    created = 0
    staging = Staging(project)
    try:
        chunking_obj = Chunking.objects.create(
            project=staging.project,
            name=chunking,
            parameters=parameters or {},
        )
        for line, row in rows:
            if tick:
                tick()
            if isinstance(row, BadLine):
                errors.add(line, row.problem)
                continue
            chunk_id = first_id(row, ("chunk_id", "id"))
            doc_id = first_id(row, ("doc_id", "docid", "document"))
            if not check_id(chunk_id, "chunk_id", line, errors) or not check_id(
                doc_id, "doc_id", line, errors
            ):
                continue
            if not claim_id(chunk_id, CHUNK(), line, seen, errors):
                continue
            document = documents.get(doc_id)
            if document is None:
                errors.add(line, UNKNOWN_DOCUMENT(id=repr(doc_id)))
                continue
            doc_pk, length = document
            if row.get("start") not in (None, "") or row.get("end") not in (None, ""):
                start = whole(row.get("start"), line, "start", errors)
                end = whole(row.get("end"), line, "end", errors)
                if start is None or end is None:
                    continue
                if end < start:
                    errors.add(line, SPAN_REVERSED(start=start, end=end))
                    continue
                if not 0 <= start < end <= length:
                    outside = SPAN_OUTSIDE(start=start, end=end, id=repr(doc_id), length=length)
                    errors.add(line, outside)
                    continue
            elif row.get("text") not in (None, ""):
                found = locate(text_of(doc_pk), as_text(row["text"]), last_end.get(doc_pk, 0))
                if found is None:
                    errors.add(line, CHUNK_TEXT_NOT_FOUND(id=repr(doc_id)))
                    continue
                start, end = found
            else:
                errors.add(line, START_END_OR_TEXT())
                continue
            last_end[doc_pk] = start
            if errors:
                continue
            staging.add(
                Chunk(
                    chunking=chunking_obj,
                    chunk_id=chunk_id,
                    document_id=doc_pk,
                    start=start,
                    end=end,
                )
            )
            created += 1
        if not seen and not errors:
            errors.add(0, NO_CHUNKS())
        errors.raise_if_any()
    except BaseException:
        staging.discard()
        raise
    staging.swap(lambda staged: _move_chunking(chunking_obj, project))
    return ImportResult("chunks", created, notes=(TEXT(text=chunking),))


def _move_chunking(chunking: Chunking, project: Project) -> None:
    """The swap: the staged chunking (one row) joins the project unless its name was
    taken meanwhile."""
    if Chunking.objects.filter(project=project, name=chunking.name).exists():
        raise FileRejected([CHUNKING_EXISTS(name=repr(chunking.name))])
    Chunking.objects.filter(pk=chunking.pk).update(project=project)
