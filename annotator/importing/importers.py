"""Importers for documents, chunks, queries and existing labels.

Each importer takes numbered rows (from ``readers``), validates every one, and inserts
in batches inside one transaction; if any line is bad, the transaction is rolled back
and ``ImportFailed`` lists every problem by line number, so nothing is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.functions import Length

from numerics.grades import is_grade

from ..labels import bulk_create_judgments
from ..models import (
    Chunk,
    Chunking,
    Document,
    Granularity,
    Judgment,
    Membership,
    Project,
    Query,
    Role,
)
from .errors import BadLine, ImportFailed, LineErrors
from .readers import Row, cell_text

BATCH = 2000
PAGE_SEPARATOR = "\n\n"
MAX_ID_LENGTH = 255
Rows = Iterable[tuple[int, Row]]
Tick = Callable[[], None] | None


@dataclass(frozen=True)
class ImportResult:
    kind: str
    created: int
    detail: str = ""


def _text(value) -> str:
    return "" if value is None else cell_text(value) if not isinstance(value, str) else value


def _id(row: dict, names: tuple[str, ...]) -> str | None:
    for name in names:
        value = row.get(name)
        if value not in (None, ""):
            return cell_text(value)
    return None


def _check_id(value: str | None, what: str, line: int, errors: LineErrors) -> bool:
    if value is None:
        errors.add(line, f"missing {what}")
        return False
    if len(value) > MAX_ID_LENGTH:
        errors.add(line, f"{what} is longer than {MAX_ID_LENGTH} characters")
        return False
    return True


def _claim_id(
    value: str,
    noun: str,
    line: int,
    seen: dict[str, int],
    errors: LineErrors,
    existing: set[str] = frozenset(),
) -> bool:
    """Whether ``value`` is new to the project and the file; records it as seen."""
    if value in existing:
        errors.add(line, f"{noun} {value!r} already exists in this project")
        return False
    if value in seen:
        errors.add(line, f"{noun} {value!r} repeats line {seen[value]}")
        return False
    seen[value] = line
    return True


def _json_value(value, line: int, name: str, errors: LineErrors):
    """CSV/XLSX cells hold lists and objects as JSON text."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            errors.add(line, f"{name} is not valid JSON")
            return None
    return value


def _int(value, line: int, name: str, errors: LineErrors) -> int | None:
    if isinstance(value, bool):
        value = None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        value = int(value)
    if not isinstance(value, int):
        errors.add(line, f"{name} must be a whole number, not {value!r}")
        return None
    return value


def _flush(model, batch: list, *, force: bool = False) -> None:
    if batch and (force or len(batch) >= BATCH):
        model.objects.bulk_create(batch, batch_size=BATCH)
        batch.clear()


# --- documents -------------------------------------------------------------------------

DOCUMENT_FIELDS = {"doc_id", "id", "title", "text", "pages", "metadata"}


def import_documents(project: Project, rows: Rows, *, tick: Tick = None) -> ImportResult:
    errors = LineErrors()
    existing = set(project.documents.values_list("doc_id", flat=True))
    seen: dict[str, int] = {}
    batch: list[Document] = []
    created = 0
    with transaction.atomic():
        for line, row in rows:
            if tick:
                tick()
            if isinstance(row, BadLine):
                errors.add(line, row.message)
                continue
            doc_id = _id(row, ("doc_id", "id"))
            if not _check_id(doc_id, "doc_id", line, errors):
                continue
            if not _claim_id(doc_id, "document", line, seen, errors, existing):
                continue
            pages = _json_value(row.get("pages"), line, "pages", errors)
            page_starts: list[int] = []
            if pages is not None:
                if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
                    errors.add(line, "pages must be a list of page texts")
                    continue
                if row.get("text") not in (None, ""):
                    errors.add(line, "give either text or pages, not both")
                    continue
                offset = 0
                for page in pages:
                    page_starts.append(offset)
                    offset += len(page) + len(PAGE_SEPARATOR)
                text = PAGE_SEPARATOR.join(pages)
            else:
                text = _text(row.get("text"))
            metadata = _json_value(row.get("metadata", {}), line, "metadata", errors)
            if not isinstance(metadata, dict):
                errors.add(line, "metadata must be an object")
                continue
            metadata = {
                **metadata,
                **{k: v for k, v in row.items() if k not in DOCUMENT_FIELDS},
            }
            title = _text(row.get("title"))
            if len(title) > 1000:
                errors.add(line, "title is longer than 1000 characters")
                continue
            if errors:
                continue  # keep validating, stop writing
            batch.append(
                Document(
                    project=project,
                    doc_id=doc_id,
                    title=title,
                    text=text,
                    metadata=metadata,
                    page_starts=page_starts,
                )
            )
            created += 1
            _flush(Document, batch)
        if not seen and not errors:
            errors.add(0, "the file holds no documents")
        errors.raise_if_any()
        _flush(Document, batch, force=True)
    return ImportResult("documents", created)


# --- queries ---------------------------------------------------------------------------

QUERY_FIELDS = {"qid", "id", "text", "query", "reference_answer", "answer", "tags", "metadata"}


def import_queries(project: Project, rows: Rows, *, tick: Tick = None) -> ImportResult:
    errors = LineErrors()
    existing = set(project.queries.values_list("qid", flat=True))
    seen: dict[str, int] = {}
    batch: list[Query] = []
    created = 0
    with transaction.atomic():
        for line, row in rows:
            if tick:
                tick()
            if isinstance(row, BadLine):
                errors.add(line, row.message)
                continue
            qid = _id(row, ("qid", "id"))
            if not _check_id(qid, "qid", line, errors):
                continue
            if not _claim_id(qid, "query", line, seen, errors, existing):
                continue
            text = _text(row.get("text", row.get("query"))).strip()
            if not text:
                errors.add(line, "missing query text")
                continue
            tags = _json_value(row.get("tags", []), line, "tags", errors)
            if isinstance(tags, str):
                tags = [t.strip() for t in tags.split(",") if t.strip()]
            if not isinstance(tags, list):
                errors.add(line, "tags must be a list")
                continue
            metadata = _json_value(row.get("metadata", {}), line, "metadata", errors)
            if not isinstance(metadata, dict):
                errors.add(line, "metadata must be an object")
                continue
            metadata = {**metadata, **{k: v for k, v in row.items() if k not in QUERY_FIELDS}}
            if errors:
                continue
            batch.append(
                Query(
                    project=project,
                    qid=qid,
                    text=text,
                    reference_answer=_text(row.get("reference_answer", row.get("answer"))),
                    tags=[str(t) for t in tags],
                    metadata=metadata,
                )
            )
            created += 1
            _flush(Query, batch)
        if not seen and not errors:
            errors.add(0, "the file holds no queries")
        errors.raise_if_any()
        _flush(Query, batch, force=True)
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
        raise ImportFailed(["a chunking needs a name of 1–200 characters"])
    if Chunking.objects.filter(project=project, name=chunking).exists():
        raise ImportFailed([f"chunking {chunking!r} already exists in this project"])
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
    batch: list[Chunk] = []
    last_end: dict[int, int] = {}
    created = 0
    with transaction.atomic():
        chunking_obj = Chunking.objects.create(
            project=project,
            name=chunking,
            parameters=parameters or {},
        )
        for line, row in rows:
            if tick:
                tick()
            if isinstance(row, BadLine):
                errors.add(line, row.message)
                continue
            chunk_id = _id(row, ("chunk_id", "id"))
            doc_id = _id(row, ("doc_id", "docid", "document"))
            if not _check_id(chunk_id, "chunk_id", line, errors) or not _check_id(
                doc_id, "doc_id", line, errors
            ):
                continue
            if not _claim_id(chunk_id, "chunk", line, seen, errors):
                continue
            document = documents.get(doc_id)
            if document is None:
                errors.add(line, f"unknown document {doc_id!r}")
                continue
            doc_pk, length = document
            if row.get("start") not in (None, "") or row.get("end") not in (None, ""):
                start = _int(row.get("start"), line, "start", errors)
                end = _int(row.get("end"), line, "end", errors)
                if start is None or end is None:
                    continue
                if not 0 <= start < end <= length:
                    errors.add(
                        line,
                        f"span [{start}, {end}) is not inside document {doc_id!r} "
                        f"(length {length})",
                    )
                    continue
            elif row.get("text") not in (None, ""):
                found = locate(text_of(doc_pk), _text(row["text"]), last_end.get(doc_pk, 0))
                if found is None:
                    errors.add(line, f"chunk text not found in document {doc_id!r}")
                    continue
                start, end = found
            else:
                errors.add(line, "give start and end, or the chunk text")
                continue
            last_end[doc_pk] = start
            if errors:
                continue
            batch.append(
                Chunk(
                    chunking=chunking_obj,
                    chunk_id=chunk_id,
                    document_id=doc_pk,
                    start=start,
                    end=end,
                )
            )
            created += 1
            _flush(Chunk, batch)
        if not seen and not errors:
            errors.add(0, "the file holds no chunks")
        errors.raise_if_any()
        _flush(Chunk, batch, force=True)
    return ImportResult("chunks", created, detail=chunking)


# --- labels ----------------------------------------------------------------------------


def label_annotator(project: Project, name: str):
    """The user labels are attributed to: a project member, or a pseudo-annotator
    (created when new) that holds labels but cannot log in."""
    User = get_user_model()
    name = (name or "").strip()
    if not name or len(name) > 150:
        raise ImportFailed(["labels need an annotator name (up to 150 characters)"])
    user = User.objects.filter(username=name).first()
    if user is None:
        user = User(username=name)
        user.set_unusable_password()
        user.save()
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR, is_pseudo=True)
        return user
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None:
        if user.has_usable_password():
            raise ImportFailed(
                [f"{name!r} is an account outside this project; choose another annotator name"]
            )
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR, is_pseudo=True)
    return user


def _label_rows(rows: Rows, errors: LineErrors):
    """Flatten qrels rows and JSONL gold lines into (line, qid, item id, grade)."""
    for line, row in rows:
        if isinstance(row, BadLine):
            errors.add(line, row.message)
            continue
        qid = _id(row, ("qid", "query_id"))
        if qid is None:
            errors.add(line, "missing qid")
            continue
        if "gold_evidence" in row or "rel_map" in row:
            rel_map = row.get("rel_map") or {}
            evidence = row.get("gold_evidence") or []
            if not isinstance(rel_map, dict) or not isinstance(evidence, list):
                errors.add(line, "gold_evidence must be a list and rel_map an object")
                continue
            grades = {cell_text(item): 1 for item in evidence}
            for item, grade in rel_map.items():
                value = _int(grade, line, f"grade of {item!r}", errors)
                if value is not None:
                    grades[cell_text(item)] = value
            for item, grade in grades.items():
                yield line, qid, item, grade
            continue
        item = _id(row, ("docid", "doc_id", "chunk_id", "item", "id"))
        if item is None:
            errors.add(line, "missing item id (docid or chunk_id)")
            continue
        grade = _int(row.get("grade", row.get("relevance")), line, "grade", errors)
        if grade is not None:
            yield line, qid, item, grade


def import_labels(
    project: Project,
    rows: Rows,
    *,
    annotator: str,
    level: str,
    chunking: str | None = None,
    changed_by=None,
    tick: Tick = None,
) -> ImportResult:
    if level not in ("chunk", "document"):
        raise ImportFailed([f"level must be chunk or document, not {level!r}"])
    units: dict[str, tuple]
    if level == "chunk":
        chunking_obj = Chunking.objects.filter(project=project, name=chunking or "").first()
        if chunking_obj is None:
            raise ImportFailed([f"chunk-level labels need an existing chunking, not {chunking!r}"])
        units = {
            chunk_id: (pk, doc_pk, start, end)
            for chunk_id, pk, doc_pk, start, end in Chunk.objects.filter(
                chunking=chunking_obj
            ).values_list("chunk_id", "pk", "document_id", "start", "end")
        }
    else:
        units = {
            doc_id: (None, pk, 0, length)
            for doc_id, pk, length in project.documents.annotate(length=Length("text"))
            .values_list("doc_id", "pk", "length")
            .iterator()
        }
    queries = dict(project.queries.values_list("qid", "pk"))
    errors = LineErrors()
    with transaction.atomic():
        user = label_annotator(project, annotator)
        existing = Judgment.objects.filter(
            query__project=project, annotator=user, granularity=level
        )
        taken = {
            (q, c if level == "chunk" else d)
            for q, c, d in existing.values_list("query_id", "chunk_id", "document_id")
        }
        seen: dict[tuple[int, int], int] = {}
        judgments: list[Judgment] = []
        for line, qid, item, grade in _label_rows(rows, errors):
            if tick:
                tick()
            query_pk = queries.get(qid)
            if query_pk is None:
                errors.add(line, f"unknown query id {qid!r}")
                continue
            unit = units.get(item)
            if unit is None:
                what = "chunk" if level == "chunk" else "document"
                errors.add(line, f"unknown {what} id {item!r}")
                continue
            if not is_grade(grade):
                errors.add(line, f"grade must be 0, 1, 2 or 3, not {grade}")
                continue
            chunk_pk, doc_pk, start, end = unit
            key = (query_pk, chunk_pk if level == "chunk" else doc_pk)
            if key in taken:
                errors.add(line, f"{annotator} already has a label for {qid} / {item}")
                continue
            if key in seen:
                errors.add(line, f"a second label for {qid} / {item} (first on line {seen[key]})")
                continue
            seen[key] = line
            if errors:
                continue
            judgments.append(
                Judgment(
                    query_id=query_pk,
                    annotator=user,
                    granularity=Granularity.CHUNK if level == "chunk" else Granularity.DOCUMENT,
                    document_id=doc_pk,
                    start=start,
                    end=end,
                    # A bare Chunk carrying its id spares history one query per label.
                    chunk=Chunk(pk=chunk_pk, chunk_id=item) if chunk_pk else None,
                    grade=grade,
                )
            )
        if not seen and not errors:
            errors.add(0, "the file holds no labels")
        errors.raise_if_any()
        created = bulk_create_judgments(judgments, changed_by=changed_by or user)
    return ImportResult("labels", created, detail=annotator)
