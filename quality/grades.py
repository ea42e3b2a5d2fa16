"""Writing and reading quality grades: every change goes through ``change_quality``.

As for relevance labels (``annotator.labels``): one transaction bumps the project's label
revision first (so every cache of derived numbers refreshes), writes the grade and one
append-only history row; a save carrying the version its screen showed is refused when
the grade changed since (``QualityConflict``), and undo names the action it reverses.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from annotator.labels import label_version
from annotator.models import Document, Project
from annotator.revisions import bump
from numerics.gain import UNJUDGED, majority

from .models import (
    QualityAdjudication,
    QualityDimension,
    QualityEvent,
    QualityGrade,
    QualityHistory,
)

MAX_SITE = 255


class QualityError(ValueError):
    """A grade that cannot be given (outside the scale, a document naming no site)."""


class QualityConflict(Exception):
    """The grade changed since the screen that sends this save showed it; nothing saved.
    ``current`` is the grade as it is now (None when there is none)."""

    def __init__(self, current: QualityGrade | None):
        super().__init__("the quality grade changed since it was shown")
        self.current = current


def site_of(dimension: QualityDimension, metadata: dict | None) -> str:
    """The site a document's metadata names for ``dimension`` ('' when none): the value
    of its site field, or the host of the URL it holds (lower case, without ``www.``)."""
    value = (metadata or {}).get(dimension.site_field)
    if value is None or isinstance(value, dict | list | bool):
        return ""
    text = str(value).strip()
    if dimension.site_host:
        if "//" not in text:
            text = "//" + text
        try:
            text = urlsplit(text).hostname or ""
        except ValueError:
            return ""
        text = text.removeprefix("www.")
    return text[:MAX_SITE]


@dataclass(frozen=True)
class QualitySource:
    """What one grade is of: a document (per-document dimensions) or a site."""

    document: Document | None = None
    site: str = ""

    def lookup(self) -> dict:
        if self.document is not None:
            return {"document": self.document, "site": ""}
        return {"document__isnull": True, "site": self.site}

    def fields(self) -> dict:
        return {"document": self.document, "site": self.site}

    @property
    def name(self) -> str:
        return self.site or (self.document.doc_id if self.document else "")


def source_for(dimension: QualityDimension, document: Document) -> QualitySource:
    """The source a grade of ``document`` on ``dimension`` is given to: the document, or
    its site (``QualityError`` when the document names none)."""
    if not dimension.per_site:
        return QualitySource(document=document)
    site = site_of(dimension, document.metadata)
    if not site:
        raise QualityError(
            _("This document names no site (metadata field %(field)s).")
            % {"field": dimension.site_field}
        )
    return QualitySource(site=site)


def quality_version(grade: QualityGrade | None) -> str:
    """The version token of a grade, as screens carry it (``annotator.labels.label_version``)."""
    return label_version(grade.updated_at if grade else None)


@dataclass(frozen=True)
class QualityChange:
    """What one call of ``change_quality`` did."""

    source: QualitySource
    grade: QualityGrade | None  # the grade after the change; None once removed
    history: QualityHistory | None  # the logged change; None when nothing changed
    undone: int | None = None


def _history(row, dimension, source, event, changed_by, old, new, action_id):
    return QualityHistory.objects.create(
        grade_row=None if event == QualityEvent.DELETE else row,
        dimension=dimension,
        annotator_id=row.annotator_id,
        changed_by=changed_by,
        **source.fields(),
        event=event,
        old_grade=old[0],
        old_note=old[1] or "",
        new_grade=new[0],
        new_note=new[1] or "",
        action_id=action_id,
    )


def check_scale(dimension: QualityDimension, grade) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in dimension.scale:
        raise QualityError(
            _("A grade of %(name)s is a whole number from 0 to %(max)d.")
            % {"name": dimension.shown_name, "max": dimension.max_grade}
        )
    return grade


def change_quality(
    *,
    dimension: QualityDimension,
    annotator,
    source: QualitySource,
    grade: int | None,
    note: str | None = None,
    changed_by=None,
    version: str | None = None,
    action_id: str = "",
) -> QualityChange:
    """Create, change or (``grade=None``) remove one quality grade: the one way it changes.

    ``note=None`` keeps the current note; a repeated identical grade and note changes
    nothing and logs nothing. ``version`` is the grade's version as the screen showed it
    (``quality_version``): if the grade changed since, ``QualityConflict`` is raised and
    nothing is written (unless the save asks for what it already holds)."""
    if grade is not None:
        check_scale(dimension, grade)
    changed_by = changed_by or annotator
    with transaction.atomic():
        bump(dimension.project_id)  # first: the project's writers queue here
        rows = QualityGrade.objects.select_for_update().filter(
            dimension=dimension, annotator=annotator, **source.lookup()
        )
        current = rows.first()
        if version is not None and quality_version(current) != version:
            same = (current is None and grade is None) or (
                current is not None and current.grade == grade and note in (None, current.note)
            )
            if not same:
                raise QualityConflict(current)
        if grade is None:
            if current is None:
                return QualityChange(source, None, None)
            old = (current.grade, current.note)
            history = _history(
                current,
                dimension,
                source,
                QualityEvent.DELETE,
                changed_by,
                old,
                (None, ""),
                action_id,
            )
            current.delete()
            return QualityChange(source, None, history)
        if current is None:
            try:
                with transaction.atomic():
                    current = QualityGrade.objects.create(
                        dimension=dimension,
                        annotator=annotator,
                        **source.fields(),
                        grade=grade,
                        note=note or "",
                    )
            except IntegrityError:  # a concurrent request created it first
                current = rows.first()
            else:
                history = _history(
                    current,
                    dimension,
                    source,
                    QualityEvent.CREATE,
                    changed_by,
                    (None, ""),
                    (grade, current.note),
                    action_id,
                )
                return QualityChange(source, current, history)
        new_note = current.note if note is None else note
        if current.grade == grade and current.note == new_note:
            return QualityChange(source, current, None)
        old = (current.grade, current.note)
        current.grade, current.note = grade, new_note
        current.save(update_fields=["grade", "note", "updated_at"])
        history = _history(
            current,
            dimension,
            source,
            QualityEvent.UPDATE,
            changed_by,
            old,
            (grade, new_note),
            action_id,
        )
        return QualityChange(source, current, history)


class NothingToUndo(Exception):
    """The action named for undo logged no quality change."""


def undo_quality(*, project: Project, user, action_id: str) -> QualityChange:
    """Put back the grade before the user's own change made by ``action_id`` (itself a
    logged change); ``QualityConflict`` when the grade no longer holds what that change
    made, ``NothingToUndo`` when the action logged no change."""
    history = (
        QualityHistory.objects.select_related("dimension", "document")
        .filter(dimension__project=project, annotator=user, changed_by=user)
        .filter(action_id=action_id)
        .order_by("-pk")
        .first()
        if action_id
        else None
    )
    if history is None:
        raise NothingToUndo(action_id)
    source = QualitySource(document=history.document, site=history.site)
    with transaction.atomic():
        current = (
            QualityGrade.objects.select_for_update()
            .filter(dimension=history.dimension, annotator=user, **source.lookup())
            .first()
        )
        made = (history.new_grade, history.new_note) if history.new_grade is not None else None
        now = (current.grade, current.note) if current is not None else None
        if now != made:
            raise QualityConflict(current)
        change = change_quality(
            dimension=history.dimension,
            annotator=user,
            source=source,
            grade=history.old_grade,
            note=history.old_note if history.old_grade is not None else None,
        )
    return QualityChange(change.source, change.grade, change.history, undone=history.pk)


def document_sites(dimension: QualityDimension, documents) -> dict[int, str]:
    """The site of each document (by pk) of a per-site dimension ('' when none)."""
    field = f"metadata__{dimension.site_field}"
    return {
        pk: site_of(dimension, {dimension.site_field: value})
        for pk, value in documents.values_list("pk", field)
    }


def grades_for_documents(
    dimension: QualityDimension, grades, documents: list[Document]
) -> dict[int, QualityGrade]:
    """Among ``grades`` (a queryset of one annotator's, or anybody's, grades), the one
    standing for each document: its own grade, or its site's (by document pk)."""
    if not documents:
        return {}
    grades = grades.filter(dimension=dimension)
    if not dimension.per_site:
        return {g.document_id: g for g in grades.filter(document__in=documents)}
    sites = {d.pk: site_of(dimension, d.metadata) for d in documents}
    by_site = {g.site: g for g in grades.filter(site__in=[s for s in sites.values() if s])}
    return {pk: by_site[site] for pk, site in sites.items() if site in by_site}


def quality_by_document(
    dimension: QualityDimension,
    document_pks: np.ndarray,
    *,
    sources=None,
    annotators: list[str] | None = None,
    adjudicated: bool | None = None,
) -> np.ndarray:
    """Each document's quality grade on ``dimension`` (``UNJUDGED`` where none): a lead's
    final grade of the document, or of its site (``quality.adjudication``), where there is
    one and ``adjudicated`` (by default: when people's labels count, as for relevance);
    else, for every annotator who counts (``sources``, an ``annotator.sources.Sources``,
    or the named ``annotators``; everyone when neither) the grade of the document, or of
    its site, and the majority of those annotators' grades (a tie goes to the higher)."""
    document_pks = np.asarray(document_pks, dtype=np.int64)
    if adjudicated is None:
        adjudicated = sources is None or sources.adjudicated
    grades = _majority_by_document(dimension, document_pks, sources, annotators)
    if adjudicated:
        _put_final_grades(dimension, document_pks, grades)
    return grades


def _put_final_grades(dimension: QualityDimension, document_pks: np.ndarray, grades) -> None:
    """Write the leads' final grades over ``grades`` (in place)."""
    finals = list(
        QualityAdjudication.objects.filter(dimension=dimension).values_list(
            "document_id", "site", "grade"
        )
    )
    if not finals or not document_pks.size:
        return
    position = {int(pk): i for i, pk in enumerate(document_pks.tolist())}
    by_site = {site: grade for document, site, grade in finals if document is None}
    if by_site:
        documents = Document.objects.filter(pk__in=list(position))
        for pk, site in document_sites(dimension, documents).items():
            if site in by_site:
                grades[position[pk]] = by_site[site]
    for document, _site, grade in finals:  # a document's own final grade first
        if document is not None and document in position:
            grades[position[document]] = grade


def _majority_by_document(dimension, document_pks, sources, annotators) -> np.ndarray:
    grades = QualityGrade.objects.filter(dimension=dimension)
    if sources is not None:
        grades = sources.judgments(grades)
    if annotators is not None:
        grades = grades.filter(annotator__username__in=annotators)
    rows = list(grades.values_list("annotator_id", "document_id", "site", "grade"))
    if not rows or not document_pks.size:
        return np.full(document_pks.size, UNJUDGED, dtype=np.int64)
    position = {int(pk): i for i, pk in enumerate(document_pks.tolist())}
    by_site: dict[str, list[int]] = {}
    if dimension.per_site:
        documents = Document.objects.filter(pk__in=list(position))
        for pk, site in document_sites(dimension, documents).items():
            if site:
                by_site.setdefault(site, []).append(position[pk])
    annotators = sorted({r[0] for r in rows})
    code = {a: i for i, a in enumerate(annotators)}
    own: dict[tuple[int, int], int] = {}  # (document position, annotator) -> grade
    for annotator, document, _site, grade in rows:
        if document is not None and document in position:
            own[(position[document], code[annotator])] = grade
    for annotator, document, site, grade in rows:
        if document is None:
            for at in by_site.get(site, ()):
                own.setdefault((at, code[annotator]), grade)  # the document's own first
    if not own:
        return np.full(document_pks.size, UNJUDGED, dtype=np.int64)
    keys = np.array(list(own), dtype=np.int64)
    return majority(keys[:, 0], np.array(list(own.values()), dtype=np.int64), document_pks.size)


def recorded_quality(
    project: Project, annotators: list[str], *, adjudicated: bool = True
) -> dict[str, dict[str, int]]:
    """What a frozen gold set keeps of quality: per dimension key, each graded document's
    grade (by document pk, as text): the lead's final grade where there is one (with
    ``adjudicated``, as the gold set's policy says), else the named annotators' majority."""
    recorded = {}
    pks = np.array(list(project.documents.order_by("pk").values_list("pk", flat=True)))
    for dimension in QualityDimension.objects.filter(project=project):
        grades = quality_by_document(dimension, pks, annotators=annotators, adjudicated=adjudicated)
        judged = grades != UNJUDGED
        if judged.any():
            recorded[dimension.key] = {
                str(pk): int(g) for pk, g in zip(pks[judged], grades[judged], strict=True)
            }
    return recorded
