"""Importing existing labels (qrels, JSONL gold lines, CSV, XLSX) for a named annotator.

Labels come at one level: chunks of a chunking, passages (``qid, doc_id, start, end,
grade``), pages (``qid, doc_id, page, grade``) or whole documents. They are attributed to
a pseudo-annotator (an imported assessor, an LLM judge) or to a new name, never to a
person who logs in: imported labels must not pass for somebody's own work.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models.functions import Length

from formats import FileRejected, LineErrors, judgments, repeated, span_judgments
from formats.errors import TEXT, define, gettext_noop
from numerics.grades import is_grade
from numerics.spans import page_spans

from ..labels import bulk_create_judgments
from ..models import Chunk, Chunking, Granularity, Judgment, Membership, Project, Role
from .common import CHUNK, DOCUMENT, ImportResult, Rows, Tick, looked_up

LEVELS = ("chunk", "passage", "page", "document")

UNKNOWN_ITEM = define("labels.unknown_item", gettext_noop("unknown %(kind)s id %(id)s"))
UNKNOWN_DOCUMENT_ID = define(
    "labels.unknown_document_id", gettext_noop("unknown document id %(id)s")
)
PASSAGE_OUTSIDE = define(
    "labels.passage_outside",
    gettext_noop(
        "passage [%(start)s, %(end)s) must have 0 <= start < end <= %(length)s, "
        "the length of document %(id)s"
    ),
)
NO_SUCH_PAGE = define(
    "labels.no_such_page", gettext_noop("document %(id)s has no page %(page)s (it has %(n)s)")
)
NO_PAGES = define(
    "labels.no_pages",
    gettext_noop("document %(id)s has no page %(page)s (it has no page boundaries)"),
)
UNKNOWN_QUERY = define("labels.unknown_query", gettext_noop("unknown query id %(id)s"))
BAD_GRADE = define("labels.bad_grade", gettext_noop("grade must be 0, 1, 2 or 3, not %(grade)s"))
ALREADY_LABELLED = define(
    "labels.already_labelled",
    gettext_noop("%(annotator)s already has a label for %(qid)s / %(item)s"),
)
NO_LABELS = define("labels.no_labels", gettext_noop("the file holds no labels"))
PASSAGE_REVERSED = define(
    "labels.passage_reversed", gettext_noop("passage [%(start)s, %(end)s): end before start")
)
ANNOTATOR_NAME = define(
    "labels.annotator_name", gettext_noop("labels need an annotator name (up to 150 characters)")
)
A_PERSON = define(
    "labels.a_person",
    gettext_noop(
        "%(name)s is a person who logs in; labels can be imported only for a "
        "pseudo-annotator or a new name (for example llm-judge)"
    ),
)
OTHER_PROJECTS = define(
    "labels.other_projects",
    gettext_noop(
        "%(name)s labels for another project (an imported assessor or an LLM judge); "
        "choose another name"
    ),
)
NEEDS_CHUNKING = define(
    "labels.needs_chunking",
    gettext_noop("chunk-level labels need an existing chunking, not %(name)s"),
)
BAD_LEVEL = define(
    "labels.bad_level", gettext_noop("level must be one of %(levels)s, not %(level)s")
)
MEANWHILE = define(
    "labels.meanwhile",
    gettext_noop("%(annotator)s labelled some of these items meanwhile; import the file again"),
)


# Rows naming a ``dimension`` are grades of a source's quality, not relevance labels: the
# app that keeps them registers its reader here (annotator never imports it).
_DIMENSION_READERS: list = []


def read_dimensions_with(reader) -> None:
    """Register ``reader(project, rows, annotator=, changed_by=, tick=) -> ImportResult``,
    which imports the rows of a labels file that name a ``dimension``."""
    _DIMENSION_READERS[:] = [reader]


def names_dimension(rows: Rows) -> bool:
    """Whether a labels file holds quality grades: its first row names a ``dimension``."""
    for _line, row in rows:
        return isinstance(row, dict) and "dimension" in row
    return False


def _annotator_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 150:
        raise FileRejected([ANNOTATOR_NAME()])
    return name


def existing_annotator(project: Project, name: str):
    """The pseudo-annotator labels would go to, without writing anything: one of this
    project, an account that cannot log in, or None when the name is new. A person who
    logs in (member or not) is refused: imported labels never become somebody's own."""
    name = _annotator_name(name)
    user = get_user_model().objects.filter(username=name).first()
    if user is None:
        return None
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is not None and membership.is_pseudo:
        return user
    if membership is None and not user.has_usable_password():
        elsewhere = Membership.objects.filter(user=user)
        if not elsewhere.exists():
            return user
        if not elsewhere.filter(is_pseudo=False).exists():
            # Another project's pseudo-annotator or judge version: its labels are that
            # project's, and this owner may not write under its name.
            raise FileRejected([OTHER_PROJECTS(name=repr(name))])
    raise FileRejected([A_PERSON(name=repr(name))])


def label_annotator(project: Project, name: str):
    """The pseudo-annotator labels are attributed to, created (and made a pseudo member
    of the project) when new; it holds labels but cannot log in."""
    user = existing_annotator(project, name)
    if user is None:
        user = get_user_model()(username=_annotator_name(name))
        user.set_unusable_password()
        user.save()
    if not Membership.objects.filter(project=project, user=user).exists():
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR, is_pseudo=True)
    return user


# Lines whose documents or chunks are looked up together (under SQLite's 999 parameters).
def _unit_labels(project: Project, rows: Rows, level: str, chunking, errors: LineErrors):
    """(line, qid, item, key, fields, grade) of chunk or document rows; ``key`` is unique
    per label of one annotator, ``fields`` the Judgment's evidence fields."""
    if level == "chunk":
        chunking_obj = Chunking.objects.filter(project=project, name=chunking or "").first()
        if chunking_obj is None:
            raise FileRejected([NEEDS_CHUNKING(name=repr(chunking))])

        def lookup(ids: set[str]) -> dict:
            return {
                chunk_id: (pk, doc_pk, start, end)
                for chunk_id, pk, doc_pk, start, end in Chunk.objects.filter(
                    chunking=chunking_obj, chunk_id__in=ids
                ).values_list("chunk_id", "pk", "document_id", "start", "end")
            }
    else:

        def lookup(ids: set[str]) -> dict:
            return {
                doc_id: (None, pk, 0, length)
                for doc_id, pk, length in project.documents.filter(doc_id__in=ids)
                .annotate(length=Length("text"))
                .values_list("doc_id", "pk", "length")
            }

    for (line, qid, item, grade), units in looked_up(
        judgments(rows, errors), operator.itemgetter(2), lookup
    ):
        unit = units.get(item)
        if unit is None:
            kind = CHUNK() if level == "chunk" else DOCUMENT()
            errors.add(line, UNKNOWN_ITEM(kind=kind, id=repr(item)))
            continue
        chunk_pk, doc_pk, start, end = unit
        fields = {
            "granularity": Granularity.CHUNK if level == "chunk" else Granularity.DOCUMENT,
            "document_id": doc_pk,
            "start": start,
            "end": end,
            # A bare Chunk carrying its id spares history one query per label.
            "chunk": Chunk(pk=chunk_pk, chunk_id=item) if chunk_pk else None,
        }
        yield line, qid, item, chunk_pk if level == "chunk" else doc_pk, fields, grade


def _span_labels(project: Project, rows: Rows, level: str, errors: LineErrors) -> Iterator:
    """The same for passage and page rows: offsets inside the document, pages that exist."""

    def lookup(ids: set[str]) -> dict:
        return {
            doc_id: (pk, length, page_starts)
            for doc_id, pk, length, page_starts in project.documents.filter(doc_id__in=ids)
            .annotate(length=Length("text"))
            .values_list("doc_id", "pk", "length", "page_starts")
        }

    rows_with_documents = looked_up(
        span_judgments(rows, level, errors), operator.itemgetter(2), lookup
    )
    for (line, qid, doc_id, place, grade), documents in rows_with_documents:
        document = documents.get(doc_id)
        if document is None:
            errors.add(line, UNKNOWN_DOCUMENT_ID(id=repr(doc_id)))
            continue
        doc_pk, length, page_starts = document
        if level == "passage":
            start, end = place
            if end < start:
                errors.add(line, PASSAGE_REVERSED(start=start, end=end))
                continue
            if not 0 <= start < end <= length:
                outside = PASSAGE_OUTSIDE(start=start, end=end, length=length, id=repr(doc_id))
                errors.add(line, outside)
                continue
            item = f"{doc_id}[{start}:{end}]"
        else:
            (number,) = place
            pages = page_spans(page_starts, length) if page_starts else []
            if not 1 <= number <= len(pages):
                no_page = NO_SUCH_PAGE if pages else NO_PAGES
                errors.add(line, no_page(id=repr(doc_id), page=number, n=len(pages)))
                continue
            start, end = pages[number - 1]
            item = f"{doc_id}#p{number}"
        fields = {
            "granularity": Granularity.PASSAGE if level == "passage" else Granularity.PAGE,
            "document_id": doc_pk,
            "start": start,
            "end": end,
            "chunk": None,
        }
        yield line, qid, item, (doc_pk, start, end), fields, grade


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
    if _DIMENSION_READERS and names_dimension(rows):
        return _DIMENSION_READERS[0](
            project, rows, annotator=annotator, changed_by=changed_by, tick=tick
        )
    if level not in LEVELS:
        raise FileRejected([BAD_LEVEL(levels=", ".join(LEVELS), level=repr(level))])
    queries = dict(project.queries.values_list("qid", "pk"))
    errors = LineErrors()
    granularity = {"chunk": Granularity.CHUNK, "document": Granularity.DOCUMENT}.get(
        level, Granularity.PASSAGE if level == "passage" else Granularity.PAGE
    )
    # Read and check the whole file first, outside any transaction (no write lock held).
    user = existing_annotator(project, annotator)
    existing = Judgment.objects.filter(
        query__project=project, annotator=user, granularity=granularity
    ).values_list("query_id", "chunk_id", "document_id", "start", "end")
    if level == "chunk":
        taken = {(q, c) for q, c, _d, _s, _e in existing}
    elif level == "document":
        taken = {(q, d) for q, _c, d, _s, _e in existing}
    else:
        taken = {(q, (d, s, e)) for q, _c, d, s, e in existing}
    labels = (
        _unit_labels(project, rows, level, chunking, errors)
        if level in ("chunk", "document")
        else _span_labels(project, rows, level, errors)
    )
    seen: dict[tuple, int] = {}
    new: list[Judgment] = []
    for line, qid, item, unit_key, fields, grade in labels:
        if tick:
            tick()
        query_pk = queries.get(qid)
        if query_pk is None:
            errors.add(line, UNKNOWN_QUERY(id=repr(qid)))
            continue
        if not is_grade(grade):
            errors.add(line, BAD_GRADE(grade=grade))
            continue
        key = (query_pk, unit_key)
        if key in taken:
            errors.add(line, ALREADY_LABELLED(annotator=annotator, qid=qid, item=item))
            continue
        if key in seen:
            errors.add(line, repeated(qid, item, seen[key]))
            continue
        seen[key] = line
        if errors:
            continue
        new.append(Judgment(query_id=query_pk, grade=grade, **fields))
    if not seen and not errors:
        errors.add(0, NO_LABELS())
    errors.raise_if_any()
    try:
        with transaction.atomic():
            user = label_annotator(project, annotator)
            for judgment in new:
                judgment.annotator = user
            created = bulk_create_judgments(new, changed_by=changed_by or user)
    except IntegrityError:
        # A label for one of these units was saved while the file was read.
        raise FileRejected([MEANWHILE(annotator=annotator)]) from None
    return ImportResult("labels", created, notes=(TEXT(text=annotator),))
