"""Quality dimensions of a project and the grades annotators give sources on them.

Relevance is judged per query; the quality of a source (its authority, its reliability)
is not: a dimension is graded per document, or per site (every document whose chosen
metadata field names the same site, or whose URL field has the same host), once for
every query. Grades are written only by ``quality.grades.change_quality``, which keeps
every change in the append-only history.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from annotator.models import Document, Project
from annotator.models.history import AppendOnlyHistory

MAX_SCALE = 9  # grades 0..9 at most: Shift+digit on the labelling screens
SOURCE_QUALITY = {
    "key": "source_quality",
    "name": "Source quality",
    "name_zh": "来源质量",
    "labels": ["Unreliable", "Weak", "Solid", "Authoritative"],
    "labels_zh": ["不可靠", "较弱", "可靠", "权威"],
}


class QualityUnit(models.TextChoices):
    DOCUMENT = "document", _("Each document")
    SITE = "site", _("Each site")


class QualityDimension(models.Model):
    """One quality dimension of a project: graded 0..``max_grade``, per document or site.

    ``labels`` and ``labels_zh`` name each grade in English and Chinese. At site level
    the site of a document is its metadata field ``site_field``, or, with ``site_host``,
    the host of the URL that field holds.
    """

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="quality_dimensions"
    )
    key = models.SlugField(max_length=40)
    name = models.CharField(max_length=80)
    name_zh = models.CharField(max_length=80, blank=True)
    max_grade = models.PositiveSmallIntegerField(default=3)
    labels = models.JSONField(default=list)
    labels_zh = models.JSONField(default=list, blank=True)
    unit = models.CharField(max_length=16, choices=QualityUnit.choices, default=QualityUnit.SITE)
    site_field = models.CharField(max_length=100, blank=True)
    site_host = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "key"], name="quality_dimension_key"),
            models.CheckConstraint(
                condition=Q(max_grade__gte=1, max_grade__lte=MAX_SCALE),
                name="quality_dimension_scale",
            ),
            models.CheckConstraint(
                condition=Q(unit="document") | ~Q(site_field=""),
                name="quality_dimension_site_field",
            ),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def scale(self) -> list[int]:
        return list(range(self.max_grade + 1))

    @property
    def shown_name(self) -> str:
        """The name in the active language (Chinese when given, else as written)."""
        if (get_language() or "").startswith("zh") and self.name_zh:
            return self.name_zh
        return self.name

    def label(self, grade: int) -> str:
        """Grade ``grade``'s label in the active language (its number when unnamed)."""
        chinese = (get_language() or "").startswith("zh")
        for labels in ([self.labels_zh] if chinese else []) + [self.labels]:
            if 0 <= grade < len(labels) and labels[grade]:
                return str(labels[grade])
        return str(grade)

    @property
    def shown_labels(self) -> list[tuple[int, str]]:
        return [(g, self.label(g)) for g in self.scale]

    @property
    def per_site(self) -> bool:
        return self.unit == QualityUnit.SITE


class QualityGradeQuerySet(models.QuerySet):
    def visible_to(self, membership) -> QualityGradeQuerySet:
        """Blind labelling, as for relevance labels: owners and adjudicators see every
        grade, others their own only."""
        from annotator.access import sees_all_labels

        grades = self.filter(dimension__project_id=membership.project_id)
        if sees_all_labels(membership):
            return grades
        return grades.filter(annotator_id=membership.user_id)


class QualityGrade(models.Model):
    """One annotator's grade of one source: a document, or a site (its key)."""

    dimension = models.ForeignKey(QualityDimension, on_delete=models.CASCADE, related_name="grades")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="quality_grades"
    )
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.CASCADE, related_name="quality_grades"
    )
    site = models.CharField(max_length=255, blank=True)
    grade = models.SmallIntegerField()
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = QualityGradeQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__gte=0, grade__lte=MAX_SCALE), name="quality_grade_scale"
            ),
            models.CheckConstraint(
                condition=(Q(document__isnull=False) & Q(site=""))
                | (Q(document__isnull=True) & ~Q(site="")),
                name="quality_grade_one_source",
            ),
            models.UniqueConstraint(
                fields=["dimension", "annotator", "document"],
                condition=Q(document__isnull=False),
                name="quality_grade_unique_document",
            ),
            models.UniqueConstraint(
                fields=["dimension", "annotator", "site"],
                condition=Q(document__isnull=True),
                name="quality_grade_unique_site",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.dimension_id}/{self.document_id or self.site}={self.grade}"


class QualityEvent(models.TextChoices):
    CREATE = "create", _("Created")
    UPDATE = "update", _("Changed")
    DELETE = "delete", _("Deleted")


class QualityHistory(AppendOnlyHistory):
    """Append-only log of every quality grade change; rows are never updated nor deleted."""

    history_name = "Quality history"

    grade_row = models.ForeignKey(
        QualityGrade, null=True, blank=True, on_delete=models.SET_NULL, related_name="history"
    )
    dimension = models.ForeignKey(
        QualityDimension, on_delete=models.CASCADE, related_name="history"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    site = models.CharField(max_length=255, blank=True)
    event = models.CharField(max_length=8, choices=QualityEvent.choices)
    old_grade = models.SmallIntegerField(null=True, blank=True)
    new_grade = models.SmallIntegerField(null=True, blank=True)
    old_note = models.TextField(blank=True)
    new_note = models.TextField(blank=True)
    action_id = models.CharField(max_length=40, blank=True, default="")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "quality history"
        indexes = [models.Index(fields=["dimension", "annotator"], name="quality_history_dim")]

    def __str__(self) -> str:
        return f"{self.event} {self.old_grade}->{self.new_grade} by {self.changed_by_id}"


class QualityAdjudication(models.Model):
    """A lead's final grade of one source on a dimension, where annotators disagree: it
    stands before their grades in the gain rule, the shares and frozen gold sets."""

    dimension = models.ForeignKey(
        QualityDimension, on_delete=models.CASCADE, related_name="adjudications"
    )
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    site = models.CharField(max_length=255, blank=True)
    grade = models.SmallIntegerField()
    reason = models.TextField(blank=True)
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__gte=0, grade__lte=MAX_SCALE),
                name="quality_adjudication_scale",
            ),
            models.CheckConstraint(
                condition=(Q(document__isnull=False) & Q(site=""))
                | (Q(document__isnull=True) & ~Q(site="")),
                name="quality_adjudication_one_source",
            ),
            models.UniqueConstraint(
                fields=["dimension", "document"],
                condition=Q(document__isnull=False),
                name="quality_adjudication_unique_document",
            ),
            models.UniqueConstraint(
                fields=["dimension", "site"],
                condition=Q(document__isnull=True),
                name="quality_adjudication_unique_site",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.dimension_id}/{self.document_id or self.site}:={self.grade}"


class QualityAdjudicationHistory(AppendOnlyHistory):
    """Append-only log of every final quality grade set, changed or cleared."""

    history_name = "Quality adjudication history"

    adjudication = models.ForeignKey(
        QualityAdjudication,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="history",
    )
    dimension = models.ForeignKey(
        QualityDimension, on_delete=models.CASCADE, related_name="adjudication_history"
    )
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    site = models.CharField(max_length=255, blank=True)
    old_grade = models.SmallIntegerField(null=True, blank=True)
    new_grade = models.SmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "quality adjudication history"

    def __str__(self) -> str:
        return f"{self.old_grade}->{self.new_grade} by {self.changed_by_id}"


class GainSetting(models.Model):
    """The project's gain rule (``numerics.gain``): how quality enters its measures,
    unless a dashboard or the API names another. No row: ``none``."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="gain_setting")
    rule = models.CharField(max_length=200, default="none")

    def __str__(self) -> str:
        return f"{self.project_id}: {self.rule}"
