"""Importing nuggets from JSONL, CSV or XLSX: all or nothing, every bad line named.

JSONL, one nugget a line: ``{"qid", "nugget_id", "text", "importance": "vital"|"okay",
"evidence": [{"doc_id", "start", "end", "text"?}]}`` (``evidence`` optional). CSV/XLSX,
one row per evidence span: ``qid, nugget_id, text, importance, doc_id, start, end``
(and optionally ``evidence_text``), the nugget's columns repeated on each of its rows; a
nugget without evidence is one row with ``doc_id``, ``start``, ``end`` empty. A query's
nuggets take the file's order. Every span is checked against its document's text: the
offsets must lie in it, and an evidence ``text`` given with them must be the characters
there. Fields the import does not read (``units``, which ``export_nuggets --level``
adds) are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Length

from annotator.importing import ImportResult
from annotator.models import Document, Membership, Project, Query, Role
from formats import (
    BadLine,
    FileRejected,
    LineErrors,
    RowSource,
    cell_text,
    check_file,
    first_id,
    not_whole,
    whole_number,
)
from formats.errors import define, gettext_noop
from formats.records import MISSING
from formats.values import id_problem

from .models import MAX_NUGGET_TEXT, Importance, Nugget, NuggetEvent, NuggetEvidence, NuggetHistory

UNKNOWN_QUERY = define("nuggets.unknown_query", gettext_noop("no query %(qid)s in this project"))
UNKNOWN_DOCUMENT = define(
    "nuggets.unknown_document", gettext_noop("no document %(doc_id)s in this project")
)
NUGGET_EXISTS = define(
    "nuggets.nugget_exists", gettext_noop("query %(qid)s already has a nugget %(nugget_id)s")
)
NUGGET_REPEATS = define(
    "nuggets.nugget_repeats",
    gettext_noop("nugget %(nugget_id)s of query %(qid)s repeats line %(line)s"),
)
DIFFERS = define(
    "nuggets.differs", gettext_noop("%(name)s of nugget %(nugget_id)s differs from line %(line)s")
)
IMPORTANCE = define(
    "nuggets.importance", gettext_noop("importance must be vital or okay, not %(value)s")
)
EVIDENCE_LIST = define(
    "nuggets.evidence_list", gettext_noop('"evidence" must be a list of {"doc_id", "start", "end"}')
)
SPAN_PARTS = define(
    "nuggets.span_parts", gettext_noop("evidence needs doc_id, start and end together")
)
SPAN_OUTSIDE = define(
    "nuggets.span_outside",
    gettext_noop(
        "characters %(start)s–%(end)s are not in document %(doc_id)s (%(length)s characters)"
    ),
)
SPAN_TEXT = define(
    "nuggets.span_text",
    gettext_noop(
        "the evidence text does not match characters %(start)s–%(end)s of document %(doc_id)s"
    ),
)
SPAN_REPEATS = define(
    "nuggets.span_repeats",
    gettext_noop("span %(doc_id)s %(start)s–%(end)s repeats for nugget %(nugget_id)s"),
)
TEXT_LONG = define("nuggets.text_long", gettext_noop("a nugget's text is at most %(n)s characters"))
NO_NUGGETS = define("nuggets.no_nuggets", gettext_noop("the file holds no nuggets"))
UNKNOWN_AUTHOR = define("nuggets.unknown_author", gettext_noop("no lead %(name)s in this project"))


def unprotected(text: str) -> str:
    """Text without the apostrophe a CSV export puts before a leading =, +, - or @
    (``web.spreadsheets.csv_text``)."""
    return text[1:] if text[:1] == "'" and text[1:2] and text[1:2] in "=+-@" else text


@dataclass
class Incoming:
    """One nugget of the file as read: where it was first seen, and its spans."""

    line: int
    qid: str
    nugget_id: str
    text: str
    importance: str
    spans: list[tuple[int, str, int, int, str | None]] = field(default_factory=list)


def _span(line: int, part: dict, errors: LineErrors, text_key: str):
    """(line, doc_id, start, end, text or None) of one evidence entry, or None."""
    doc_id = first_id(part, ("doc_id", "docid"))
    start, end = part.get("start"), part.get("end")
    if doc_id is None and start in (None, "") and end in (None, ""):
        return None
    if doc_id is None or start in (None, "") or end in (None, ""):
        errors.add(line, SPAN_PARTS())
        return None
    if problem := id_problem("doc_id", doc_id):
        errors.add(line, problem)
        return None
    numbers = [whole_number(start), whole_number(end)]
    if None in numbers:
        for name, value, number in zip(("start", "end"), (start, end), numbers, strict=True):
            if number is None:
                errors.add(line, not_whole(name, value))
        return None
    text = part.get(text_key)
    text = None if text in (None, "") else unprotected(str(text))
    return (line, doc_id, numbers[0], numbers[1], text)


def read_nuggets(rows, errors: LineErrors, *, jsonl: bool) -> list[Incoming]:
    """The file's nuggets in order: one a line (``jsonl``), or the rows of one nugget
    (CSV/XLSX) joined."""
    found: dict[tuple[str, str], Incoming] = {}
    for line, row in rows:
        if isinstance(row, BadLine):
            errors.add(line, row.problem)
            continue
        qid = first_id(row, ("qid", "query_id"))
        nugget_id = first_id(row, ("nugget_id", "id"))
        text = unprotected(cell_text(row.get("text") or ""))
        importance = cell_text(row.get("importance") or "").lower()
        bad = False
        for name, value in (("qid", qid), ("nugget_id", nugget_id)):
            if value is None:
                errors.add(line, MISSING(what=name))
                bad = True
            elif problem := id_problem(name, value):
                errors.add(line, problem)
                bad = True
        if not text:
            errors.add(line, MISSING(what="text"))
            bad = True
        elif len(text) > MAX_NUGGET_TEXT:
            errors.add(line, TEXT_LONG(n=MAX_NUGGET_TEXT))
            bad = True
        if importance not in Importance.values:
            errors.add(line, IMPORTANCE(value=repr(row.get("importance"))))
            bad = True
        evidence = row.get("evidence")
        if evidence is not None and not isinstance(evidence, list):
            errors.add(line, EVIDENCE_LIST())
            bad = True
        if bad:
            continue
        parts = (evidence or []) if jsonl else [row]
        spans = []
        for part in parts:
            if not isinstance(part, dict):
                errors.add(line, EVIDENCE_LIST())
                continue
            span = _span(line, part, errors, "text" if jsonl else "evidence_text")
            if span is not None:
                spans.append(span)
        key = (qid, nugget_id)
        known = found.get(key)
        if known is None:
            found[key] = Incoming(line, qid, nugget_id, text, importance, spans)
            continue
        if jsonl:  # one line per nugget
            errors.add(line, NUGGET_REPEATS(nugget_id=nugget_id, qid=qid, line=known.line))
            continue
        for name, mine, theirs in (
            ("text", text, known.text),
            ("importance", importance, known.importance),
        ):
            if mine != theirs:
                errors.add(line, DIFFERS(name=name, nugget_id=nugget_id, line=known.line))
        known.spans += spans
    return list(found.values())


def _check_spans(project: Project, nuggets: list[Incoming], errors: LineErrors) -> dict[str, int]:
    """doc_id → pk of the documents the spans name, every span checked against the text."""
    names = {s[1] for n in nuggets for s in n.spans}
    documents: dict[str, tuple[int, int]] = {}
    for start in range(0, len(names), 1000):
        batch = sorted(names)[start : start + 1000]
        documents.update(
            (doc_id, (pk, length))
            for doc_id, pk, length in Document.objects.filter(project=project, doc_id__in=batch)
            .annotate(length=Length("text"))
            .values_list("doc_id", "pk", "length")
        )
    texts_needed: dict[int, list] = {}
    for nugget in nuggets:
        seen: set[tuple[str, int, int]] = set()
        for line, doc_id, start, end, text in nugget.spans:
            if doc_id not in documents:
                errors.add(line, UNKNOWN_DOCUMENT(doc_id=repr(doc_id)))
                continue
            pk, length = documents[doc_id]
            values = {"start": start, "end": end, "doc_id": repr(doc_id)}
            if not 0 <= start < end <= length:
                errors.add(line, SPAN_OUTSIDE(**values, length=length))
                continue
            if (doc_id, start, end) in seen:
                errors.add(line, SPAN_REPEATS(**values, nugget_id=nugget.nugget_id))
                continue
            seen.add((doc_id, start, end))
            if text is not None:
                texts_needed.setdefault(pk, []).append((line, start, end, text, values))
    for pk, text in (
        Document.objects.filter(pk__in=list(texts_needed)).values_list("pk", "text").iterator()
    ):
        for line, start, end, expected, values in texts_needed[pk]:
            if text[start:end] != expected:
                errors.add(line, SPAN_TEXT(**values))
    return {doc_id: pk for doc_id, (pk, _length) in documents.items()}


def import_nuggets(
    project: Project,
    rows,
    *,
    jsonl: bool,
    changed_by=None,
    author=None,
    source_name: str = "",
    tick=None,
) -> ImportResult:
    """Add the file's nuggets to their queries (after the nuggets they have), with their
    evidence and a history row each; nothing is written if any line is bad, or if a
    query already has a nugget of that id."""
    errors = LineErrors()
    nuggets = read_nuggets(rows, errors, jsonl=jsonl)
    if not nuggets and not errors:
        errors.add(0, NO_NUGGETS())
    queries = dict(
        Query.objects.filter(project=project, qid__in={n.qid for n in nuggets}).values_list(
            "qid", "pk"
        )
    )
    for nugget in nuggets:
        if nugget.qid not in queries:
            errors.add(nugget.line, UNKNOWN_QUERY(qid=repr(nugget.qid)))
    doc_pks = _check_spans(project, nuggets, errors)
    errors.raise_if_any()
    with transaction.atomic():
        taken = set(
            Nugget.objects.filter(query_id__in=set(queries.values())).values_list(
                "query__qid", "nugget_id"
            )
        )
        for nugget in nuggets:
            if (nugget.qid, nugget.nugget_id) in taken:
                exists = NUGGET_EXISTS(qid=repr(nugget.qid), nugget_id=repr(nugget.nugget_id))
                errors.add(nugget.line, exists)
        errors.raise_if_any()
        last = {}
        for query_pk, order in Nugget.objects.filter(
            query_id__in=set(queries.values())
        ).values_list("query_id", "order"):
            last[query_pk] = max(last.get(query_pk, -1), order)
        created = []
        for nugget in nuggets:
            query_pk = queries[nugget.qid]
            last[query_pk] = last.get(query_pk, -1) + 1
            created.append(
                Nugget(
                    query_id=query_pk,
                    nugget_id=nugget.nugget_id,
                    text=nugget.text,
                    importance=nugget.importance,
                    order=last[query_pk],
                    author=author,
                )
            )
            if tick is not None:
                tick()
        Nugget.objects.bulk_create(created, batch_size=2000)
        NuggetEvidence.objects.bulk_create(
            [
                NuggetEvidence(nugget=row, document_id=doc_pks[doc_id], start=start, end=end)
                for row, nugget in zip(created, nuggets, strict=True)
                for _line, doc_id, start, end, _text in nugget.spans
            ],
            batch_size=2000,
        )
        NuggetHistory.objects.bulk_create(
            [
                NuggetHistory(
                    subject=row,
                    query_id=row.query_id,
                    nugget_id=row.nugget_id,
                    event=NuggetEvent.CREATE,
                    new={
                        "id": row.nugget_id,
                        "text": row.text,
                        "importance": row.importance,
                        "order": row.order,
                        "evidence": [
                            {"doc_id": doc_id, "start": start, "end": end}
                            for _line, doc_id, start, end, _text in sorted(
                                nugget.spans, key=lambda s: (s[1], s[2], s[3])
                            )
                        ],
                    },
                    detail={"import": source_name},
                    changed_by=changed_by,
                )
                for row, nugget in zip(created, nuggets, strict=True)
            ],
            batch_size=2000,
        )
    return ImportResult("nuggets", len(created))


def load_nuggets(project, path, *, fmt, options, progress, changed_by=None, source_name="", **_):
    """The "nuggets" import kind: the file's rows, checked like every import's."""
    check_file(path, settings.ASSAY_MAX_UPLOAD_BYTES)
    source = RowSource(
        path,
        fmt,
        max_chars=settings.ASSAY_MAX_DOCUMENT_CHARS,
        max_bytes=settings.ASSAY_MAX_UPLOAD_BYTES,
    )
    author = options.get("author")
    if author is not None and not hasattr(author, "pk"):
        author = lead_named(project, author)
    return import_nuggets(
        project,
        source,
        jsonl=fmt == "jsonl",
        changed_by=changed_by,
        author=author,
        source_name=source_name,
    )


def lead_named(project, username: str):
    """The owner or adjudicator of ``project`` with this username (nuggets are theirs)."""
    membership = (
        Membership.objects.select_related("user")
        .filter(project=project, user__username=username, is_pseudo=False)
        .filter(role__in=[Role.OWNER, Role.ADJUDICATOR])
        .first()
    )
    if membership is None:
        raise FileRejected([UNKNOWN_AUTHOR(name=repr(username))])
    return membership.user
