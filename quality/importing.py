"""Importing quality grades: rows of a labels file that name a ``dimension``.

JSONL, CSV or XLSX rows ``dimension, doc_id, grade`` (a per-document dimension, or a
per-site one, the grade going to the document's site) or ``dimension, site, grade``
(per-site dimensions), with an optional ``note``. The whole file is read and checked
first; any bad line is refused by its number and nothing is written. Grades go to the
file's annotator (a pseudo-annotator, as for relevance labels), each with a history row,
in one transaction that moves the project's label revision.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from annotator.importing.common import ImportResult
from annotator.importing.judgments import existing_annotator, label_annotator
from annotator.models import Document, Project
from annotator.revisions import bump
from formats import BadLine, FileRejected, LineErrors, whole_number
from formats import cell_text as _cell
from formats.errors import TEXT, define, gettext_noop

from .grades import MAX_SITE, site_of
from .models import QualityDimension, QualityEvent, QualityGrade, QualityHistory

UNKNOWN_DIMENSION = define(
    "quality.unknown_dimension",
    gettext_noop("unknown quality dimension %(name)s; this project has %(names)s"),
)
SOURCE_NEEDED = define(
    "quality.source_needed", gettext_noop("name the source: doc_id, or site (not both)")
)
SITE_PER_DOCUMENT = define(
    "quality.site_per_document",
    gettext_noop("%(name)s is graded per document: name a doc_id, not a site"),
)
NO_SITE = define(
    "quality.no_site", gettext_noop("document %(id)s names no site (metadata field %(field)s)")
)
UNKNOWN_DOCUMENT = define("quality.unknown_document", gettext_noop("unknown document id %(id)s"))
BAD_QUALITY_GRADE = define(
    "quality.bad_grade",
    gettext_noop("a grade of %(name)s is a whole number from 0 to %(max)s, not %(grade)s"),
)
REPEATED = define(
    "quality.repeated", gettext_noop("%(name)s of %(source)s is graded again (line %(first)s)")
)
ALREADY = define(
    "quality.already", gettext_noop("%(annotator)s already graded %(name)s of %(source)s")
)
NO_GRADES = define("quality.no_grades", gettext_noop("the file holds no quality grades"))
MEANWHILE = define(
    "quality.meanwhile",
    gettext_noop("%(annotator)s graded some of these sources meanwhile; import the file again"),
)


def cell_text(value) -> str:
    """A cell as text; an empty or missing cell is ''."""
    return "" if value is None else _cell(value)


def import_quality(project: Project, rows, *, annotator: str, changed_by=None, tick=None):
    """Import the quality grades of ``rows`` for ``annotator``; ``FileRejected`` naming
    every bad line (nothing written) otherwise."""
    dimensions = {d.key: d for d in QualityDimension.objects.filter(project=project)}
    errors = LineErrors()
    user = existing_annotator(project, annotator)
    documents: dict[str, tuple[int, dict]] | None = None
    seen: dict[tuple, int] = {}
    new: list[tuple[QualityDimension, int | None, str, int, str]] = []
    for line, row in rows:
        if tick:
            tick()
        if isinstance(row, BadLine):
            errors.add(line, row.problem)
            continue
        key = cell_text(row.get("dimension"))
        dimension = dimensions.get(key)
        if dimension is None:
            names = ", ".join(sorted(dimensions)) or "—"
            errors.add(line, UNKNOWN_DIMENSION(name=repr(key), names=names))
            continue
        grade = whole_number(row.get("grade"))
        if grade is None or not 0 <= grade <= dimension.max_grade:
            errors.add(
                line,
                BAD_QUALITY_GRADE(
                    name=key, max=dimension.max_grade, grade=repr(cell_text(row.get("grade")))
                ),
            )
            continue
        doc_id = cell_text(row.get("doc_id"))
        site = cell_text(row.get("site"))[:MAX_SITE]
        if bool(doc_id) == bool(site):
            errors.add(line, SOURCE_NEEDED())
            continue
        document_pk = None
        if doc_id:
            if documents is None:
                documents = {
                    d: (pk, m)
                    for d, pk, m in Document.objects.filter(project=project).values_list(
                        "doc_id", "pk", "metadata"
                    )
                }
            found = documents.get(doc_id)
            if found is None:
                errors.add(line, UNKNOWN_DOCUMENT(id=repr(doc_id)))
                continue
            if dimension.per_site:
                site = site_of(dimension, found[1])
                if not site:
                    errors.add(line, NO_SITE(id=repr(doc_id), field=dimension.site_field))
                    continue
            else:
                document_pk = found[0]
        elif not dimension.per_site:
            errors.add(line, SITE_PER_DOCUMENT(name=key))
            continue
        source = doc_id if document_pk is not None else site
        unique = (key, document_pk, "" if document_pk is not None else site)
        if unique in seen:
            errors.add(line, REPEATED(name=key, source=repr(source), first=seen[unique]))
            continue
        seen[unique] = line
        if user is not None:
            taken = QualityGrade.objects.filter(dimension=dimension, annotator=user)
            taken = (
                taken.filter(document_id=document_pk)
                if document_pk is not None
                else taken.filter(document__isnull=True, site=site)
            )
            if taken.exists():
                errors.add(line, ALREADY(annotator=annotator, name=key, source=repr(source)))
                continue
        note = cell_text(row.get("note"))
        new.append((dimension, document_pk, "" if document_pk is not None else site, grade, note))
    if not seen and not errors:
        errors.add(0, NO_GRADES())
    errors.raise_if_any()
    try:
        with transaction.atomic():
            bump(project.pk)
            user = label_annotator(project, annotator)
            changed_by = changed_by or user
            for dimension, document_pk, site, grade, note in new:
                row = QualityGrade.objects.create(
                    dimension=dimension,
                    annotator=user,
                    document_id=document_pk,
                    site=site,
                    grade=grade,
                    note=note,
                )
                QualityHistory.objects.create(
                    grade_row=row,
                    dimension=dimension,
                    annotator=user,
                    changed_by=changed_by,
                    document_id=document_pk,
                    site=site,
                    event=QualityEvent.CREATE,
                    new_grade=grade,
                    new_note=note,
                )
    except IntegrityError:
        raise FileRejected([MEANWHILE(annotator=annotator)]) from None
    return ImportResult("quality", len(new), notes=(TEXT(text=annotator),))
