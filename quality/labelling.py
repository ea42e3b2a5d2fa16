"""Quality grades on the labelling screens: the row of each card (and of the document view)
that shows and sets the grade of the card's source, one row per dimension.

A second row of keys grades it (Shift+0–9, ``static/assay/quality.js``); a per-site grade
is the same on every card of that site, so each row names its source by a token that the
screen's other rows of the same source listen for (``quality-changed``). Blind labelling as
for relevance: annotators see their own grade only, owners and adjudicators everyone's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.middleware.csrf import get_token
from django.urls import reverse
from django.utils.translation import gettext as _

from annotator.labels import NO_LABEL, label_version
from annotator.models import Document

from .grades import QualitySource, quality_version, site_of
from .models import QualityDimension, QualityGrade

QUALITY_CHANGED = "quality-changed"


def source_token(dimension: QualityDimension, source: QualitySource) -> str:
    """What every row showing this grade is named by: the dimension and its site or document."""
    if source.document is not None:
        return f"{dimension.key}|doc:{source.document.pk}"
    return f"{dimension.key}|site:{source.site}"


@dataclass
class QualityRow:
    """One dimension's grade of one document's source, as a card shows it."""

    dimension: QualityDimension
    document_pk: int
    site: str  # '' for a per-document dimension (or a document naming no site)
    token: str  # '' when the source cannot be graded (no site)
    grade: int | None = None
    version: str = NO_LABEL
    others: list[tuple[str, int]] = field(default_factory=list)  # name, grade
    refused: str = ""

    @property
    def gradable(self) -> bool:
        return bool(self.token)

    @property
    def label(self) -> str:
        return self.dimension.label(self.grade) if self.grade is not None else ""

    @property
    def buttons(self) -> list[tuple[int, str, bool]]:
        """(grade, label, pressed) of the dimension's scale."""
        return [(g, label, g == self.grade) for g, label in self.dimension.shown_labels]


def part_url(screen) -> str:
    return reverse("quality:label_query_quality", args=[screen.project.slug, screen.query.pk])


def quality_rows(screen, documents: list[int]) -> dict[int, list[QualityRow]]:
    """Each document's rows (by pk): one per dimension of the project, with the user's
    grade of its source and, for those who see everyone's labels, the others' grades."""
    dimensions = list(QualityDimension.objects.filter(project=screen.project))
    if not dimensions or screen.query is None:
        return {}
    docs = list(
        Document.objects.filter(pk__in=list(documents), project=screen.project).only(
            "pk", "doc_id", "metadata"
        )
    )
    rows: dict[int, list[QualityRow]] = {d.pk: [] for d in docs}
    for dimension in dimensions:
        sites = {d.pk: site_of(dimension, d.metadata) for d in docs} if dimension.per_site else {}
        grades = QualityGrade.objects.filter(dimension=dimension)
        if dimension.per_site:
            grades = grades.filter(document__isnull=True, site__in={s for s in sites.values() if s})
        else:
            grades = grades.filter(document_id__in=[d.pk for d in docs])
        if screen.sees_all:
            grades = grades.visible_to(screen.membership)
        else:
            grades = grades.filter(annotator=screen.user)
        found = list(
            grades.order_by("annotator__username").values_list(
                "annotator_id", "annotator__username", "document_id", "site", "grade", "updated_at"
            )
        )
        for d in docs:
            if dimension.per_site:
                site = sites[d.pk]
                source = QualitySource(site=site) if site else None
            else:
                site, source = "", QualitySource(document=d)
            row = QualityRow(
                dimension=dimension,
                document_pk=d.pk,
                site=site,
                token=source_token(dimension, source) if source is not None else "",
            )
            if source is not None:
                for user_pk, name, document_pk, graded_site, grade, updated_at in found:
                    if (document_pk, graded_site) != (
                        source.document.pk if source.document else None,
                        source.site,
                    ):
                        continue
                    if user_pk == screen.user.pk:
                        row.grade = grade
                        row.version = label_version(updated_at)
                    else:
                        row.others.append((name, grade))
            rows[d.pk].append(row)
    return rows


def part_context(
    screen, rows: list[QualityRow], document_pk: int, *, csrf: str | None = None
) -> dict:
    """What ``card_html.draw_card_quality`` draws for one document. ``csrf``: the page's
    form token, read once for a page of cards (each read masks it again)."""
    return {
        "rows": rows,
        "document": document_pk,
        "url": part_url(screen),
        "can_label": screen.can_label,
        "sees_all": screen.sees_all,
        "single": len(rows) == 1,
        "csrf": csrf if csrf is not None else get_token(screen.request),
    }


def card_part(*, screen, documents: list[int]) -> dict[int, dict]:
    """The card part of every document (``annotator.screen_parts``)."""
    if screen.query is None:
        return {}
    csrf = get_token(screen.request)
    return {
        pk: part_context(screen, rows, pk, csrf=csrf)
        for pk, rows in quality_rows(screen, documents).items()
    }


def saved_message(row: QualityRow) -> str:
    values = {"name": row.dimension.shown_name, "source": source_name(row)}
    if row.grade is None:
        return _("Removed: %(name)s of %(source)s.") % values
    return _("Saved: %(name)s of %(source)s %(grade)d · %(label)s") % {
        **values,
        "grade": row.grade,
        "label": row.label,
    }


def source_name(row: QualityRow) -> str:
    if row.site:
        return _("site %(site)s") % {"site": row.site}
    return _("this document")


def conflict_message(dimension: QualityDimension, grade: QualityGrade | None, *, undo=False) -> str:
    """What a save (or an undo) of a quality grade changed in another session is told."""
    if grade is None:
        if undo:
            return _("This quality grade was removed in another session; nothing was undone.")
        return _("This quality grade was removed in another session; your change was not saved.")
    values = {"grade": grade.grade, "label": dimension.label(grade.grade)}
    if undo:
        return (
            _(
                "This quality grade was changed in another session to %(grade)d · %(label)s; "
                "nothing was undone."
            )
            % values
        )
    return (
        _(
            "This quality grade was changed in another session to %(grade)d · %(label)s; "
            "your change was not saved."
        )
        % values
    )


def changed_event(
    dimension: QualityDimension,
    source: QualitySource,
    grade: QualityGrade | None,
    history_pk: int | None,
    *,
    undone: int | None = None,
    conflict: bool = False,
) -> dict:
    """The detail of ``quality-changed``: the logged change, the source's token and the
    grade's new version (rows of the same source take it before any save queued behind)."""
    return {
        "history": history_pk,
        "undone": undone,
        "conflict": conflict,
        "dimension": dimension.key,
        "token": source_token(dimension, source),
        "version": quality_version(grade),
        "grade": grade.grade if grade is not None else None,
    }
