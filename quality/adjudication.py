"""Leads settle disputed quality grades: the sources (documents or sites) people graded
differently on a dimension, and the one writer of final grades, each change kept in
``QualityAdjudicationHistory``.

A final grade stands before the annotators' grades wherever quality is read while
people's labels count: the gain rule, the dashboard's shares and the grades a gold set
freezes (``quality.grades.quality_by_document``), as adjudicated relevance grades do.
Judges and imported assessors never make a dispute: only people's grades are compared.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from annotator.models import Document, Membership
from annotator.revisions import bump

from .grades import QualitySource, check_scale
from .models import QualityAdjudication, QualityAdjudicationHistory, QualityDimension, QualityGrade


@dataclass(frozen=True)
class QualityDispute:
    """One source people graded differently on ``dimension``."""

    dimension: QualityDimension
    source: QualitySource
    grades: dict[str, int]  # username -> grade
    final: int | None  # the lead's final grade, if set
    reason: str = ""
    adjudicator: str = ""

    @property
    def spread(self) -> int:
        return max(self.grades.values()) - min(self.grades.values())

    @property
    def key(self) -> str:
        """The source as a form names it: ``d<pk>`` for a document, ``s:<site>``."""
        if self.source.document is not None:
            return f"d{self.source.document.pk}"
        return f"s:{self.source.site}"


def _people_grades(dimension: QualityDimension):
    pseudo = Membership.objects.filter(project_id=dimension.project_id, is_pseudo=True)
    return QualityGrade.objects.filter(dimension=dimension).exclude(
        annotator_id__in=pseudo.values("user_id")
    )


def quality_disputes(
    dimension: QualityDimension, *, include_settled: bool = True
) -> list[QualityDispute]:
    """Sources two or more people graded with different grades: those without a final
    grade first, then the widest spread, then by source."""
    judged: dict[tuple, dict[str, int]] = {}
    rows = _people_grades(dimension).values_list(
        "document_id", "site", "annotator__username", "grade"
    )
    for document, site, name, grade in rows:
        judged.setdefault((document, site), {})[name] = grade
    keys = [k for k, v in judged.items() if len(v) >= 2 and len(set(v.values())) > 1]
    settled = {
        (a.document_id, a.site): a
        for a in QualityAdjudication.objects.filter(dimension=dimension).select_related(
            "adjudicator"
        )
    }
    if not include_settled:
        keys = [k for k in keys if k not in settled]
    documents = Document.objects.in_bulk({k[0] for k in keys if k[0] is not None})
    found = []
    for document, site in keys:
        final = settled.get((document, site))
        found.append(
            QualityDispute(
                dimension,
                QualitySource(document=documents.get(document), site=site),
                dict(sorted(judged[(document, site)].items())),
                final.grade if final else None,
                final.reason if final else "",
                final.adjudicator.username if final else "",
            )
        )
    found.sort(key=lambda d: (d.final is not None, -d.spread, d.source.name))
    return found


def adjudicate_quality(
    *,
    dimension: QualityDimension,
    source: QualitySource,
    grade: int | None,
    reason: str = "",
    by,
) -> QualityAdjudication | None:
    """Set, change or (``grade=None``) clear the final grade of one source, logged in
    history; the same grade and reason again changes and logs nothing. Returns the final
    grade as it now is (None once cleared). ``QualityError`` outside the scale."""
    if grade is not None:
        check_scale(dimension, grade)
    with transaction.atomic():
        bump(dimension.project_id)  # the gains and shares read final grades
        current = (
            QualityAdjudication.objects.select_for_update()
            .filter(dimension=dimension, **source.lookup())
            .first()
        )
        old = current.grade if current else None
        if grade is None:
            if current is None:
                return None
            current.delete()
            current = None
        elif current is None:
            current = QualityAdjudication.objects.create(
                dimension=dimension, **source.fields(), grade=grade, reason=reason, adjudicator=by
            )
        else:
            if current.grade == grade and current.reason == reason:
                return current
            current.grade, current.reason, current.adjudicator = grade, reason, by
            current.save(update_fields=["grade", "reason", "adjudicator", "updated_at"])
        QualityAdjudicationHistory.objects.create(
            adjudication=current,
            dimension=dimension,
            **source.fields(),
            old_grade=old,
            new_grade=grade,
            reason=reason,
            changed_by=by,
        )
        return current


def adjudicated_grades(dimension: QualityDimension) -> dict[tuple, int]:
    """Every final grade of ``dimension``: (document pk or None, site) → grade."""
    return {
        (document, site): grade
        for document, site, grade in QualityAdjudication.objects.filter(
            dimension=dimension
        ).values_list("document_id", "site", "grade")
    }
