"""Adjudicated grades and frozen, versioned gold sets.

A gold set is a snapshot of the labels it was built from (every contributing annotator's
grade and every adjudicated grade, each on its evidence span) plus the policy that turns
them into one grade per unit. Because the snapshot keeps spans, a gold set can be
exported at any level (a chunking, pages, documents) under any mapping policy, and
re-exporting it always gives the same file: rows are never changed after freezing.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q

from annotator.models import Chunk, EvidenceSpan, Project, Query
from annotator.revisions import bump


class Adjudication(EvidenceSpan):
    """The adjudicator's final grade for one evidence unit of a query, with a reason."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="adjudications")
    chunk = models.ForeignKey(
        Chunk, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    grade = models.SmallIntegerField()
    reason = models.TextField(blank=True)
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__gte=0, grade__lte=3), name="adjudication_grade_0_3"
            ),
            models.CheckConstraint(
                condition=Q(end__gte=models.F("start")), name="adjudication_span_ordered"
            ),
            models.UniqueConstraint(
                fields=["query", "granularity", "document", "start", "end"],
                name="adjudication_unique_unit",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.query_id}: {self.document_id}[{self.start}:{self.end}] = {self.grade}"


class AdjudicationHistory(EvidenceSpan):
    """Append-only log of every adjudication change."""

    adjudication = models.ForeignKey(
        Adjudication, null=True, on_delete=models.SET_NULL, related_name="history"
    )
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="+")
    old_grade = models.SmallIntegerField(null=True)
    new_grade = models.SmallIntegerField(null=True)
    reason = models.TextField(blank=True)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.old_grade}->{self.new_grade} by {self.changed_by_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Adjudication history is append-only")
        super().save(*args, **kwargs)


class GoldSet(models.Model):
    """A named, versioned, immutable snapshot of labels under a stated policy."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="gold_sets")
    name = models.CharField(max_length=200)
    version = models.PositiveIntegerField()
    # {"rule": "majority", "min_annotators": 1, "adjudicated_first": true,
    #  "annotators": [usernames]} — recorded with every export.
    policy = models.JSONField(default=dict)
    note = models.TextField(blank=True)
    # Released to the team: every member may then read its grades (annotator/access.py);
    # until then only owners do. The only field that changes after freezing.
    released = models.BooleanField(default=False)
    n_queries = models.PositiveIntegerField(default=0)
    n_labels = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name", "version"], name="goldset_unique_version"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="goldset_version_pos"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("A gold set is immutable; freeze a new version instead")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        with transaction.atomic():
            bump(self.project_id)  # a gold-set change moves the project's label revision
            return super().delete(*args, **kwargs)

    def set_released(self, released: bool) -> None:
        """Release the gold set to the team, or withdraw it (its labels never change)."""
        GoldSet.objects.filter(pk=self.pk).update(released=released)
        self.released = released


class GoldLabel(EvidenceSpan):
    """One frozen label: an annotator's grade, or the adjudicated grade, on a span."""

    gold_set = models.ForeignKey(GoldSet, on_delete=models.CASCADE, related_name="labels")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="+")
    # Empty for an adjudicated grade.
    annotator = models.CharField(max_length=150, blank=True)
    adjudicated = models.BooleanField(default=False)
    grade = models.SmallIntegerField()
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__gte=0, grade__lte=3), name="goldlabel_grade_0_3"
            ),
        ]
        indexes = [models.Index(fields=["gold_set", "query"], name="goldlabel_set_query")]

    def __str__(self) -> str:
        return f"{self.gold_set_id}/{self.query_id}: {self.grade}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Gold labels are immutable")
        super().save(*args, **kwargs)
