"""Labels as spans: judgments, their append-only history and the time each change took."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from numerics.spans import Span

from .corpus import Chunk, Document, Query
from .history import AppendOnlyHistory
from .projects import Membership, Project, Role


class Granularity(models.TextChoices):
    CHUNK = "chunk", _("Chunk")
    PASSAGE = "passage", _("Passage")
    PAGE = "page", _("Page")
    DOCUMENT = "document", _("Document")


class EvidenceSpan(models.Model):
    """The fields every kind of label shares: a granularity and a span of one document.

    Judgments, their history, adjudications, their history and frozen gold labels all
    say "this grade for characters [start, end) of this document, at this granularity".
    """

    granularity = models.CharField(max_length=16, choices=Granularity.choices)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        abstract = True

    @property
    def span(self) -> Span:
        return Span(self.document_id, self.start, self.end)

    def span_fields(self) -> dict:
        """The shared fields as keyword arguments, to copy this span into another label."""
        return {
            "granularity": self.granularity,
            "document_id": self.document_id,
            "start": self.start,
            "end": self.end,
        }


class JudgmentQuerySet(models.QuerySet):
    def in_project(self, project: Project) -> JudgmentQuerySet:
        return self.filter(query__project=project)

    def of(self, query: Query, annotator) -> JudgmentQuerySet:
        """One annotator's labels on one query."""
        return self.filter(query=query, annotator=annotator)

    def by_people(self, project: Project) -> JudgmentQuerySet:
        """Labels of people who log in (not of pseudo-annotators such as imported assessors)."""
        pseudo = Membership.objects.filter(project=project, is_pseudo=True).values("user_id")
        return self.exclude(annotator_id__in=pseudo)

    def visible_to(self, membership: Membership) -> JudgmentQuerySet:
        """Blind labelling: owners and adjudicators see every label, others their own only."""
        labels = self.in_project(membership.project_id)
        if membership.role in (Role.OWNER, Role.ADJUDICATOR):
            return labels
        return labels.filter(annotator_id=membership.user_id)


class Judgment(EvidenceSpan):
    """One annotator's grade for one evidence span of one query."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgments"
    )
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="judgments")
    chunk = models.ForeignKey(
        Chunk, null=True, blank=True, on_delete=models.CASCADE, related_name="judgments"
    )
    grade = models.SmallIntegerField()
    note = models.TextField(blank=True)
    # Whether a judge's suggestion was on screen when this grade was given (post-editing).
    suggestion_shown = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = JudgmentQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__gte=0, grade__lte=3), name="judgment_grade_0_3"
            ),
            models.CheckConstraint(
                condition=Q(end__gte=models.F("start")), name="judgment_span_ordered"
            ),
            models.CheckConstraint(
                condition=Q(granularity__in=[g.value for g in Granularity]),
                name="judgment_granularity_valid",
            ),
            models.CheckConstraint(
                condition=(Q(granularity="chunk") & Q(chunk__isnull=False))
                | (~Q(granularity="chunk") & Q(chunk__isnull=True)),
                name="judgment_chunk_iff_chunk_level",
            ),
            # One label per annotator per evidence unit.
            models.UniqueConstraint(
                fields=["query", "annotator", "chunk"],
                condition=Q(granularity="chunk"),
                name="judgment_unique_chunk",
            ),
            models.UniqueConstraint(
                fields=["query", "annotator", "granularity", "document", "start", "end"],
                condition=~Q(granularity="chunk"),
                name="judgment_unique_span",
            ),
        ]
        indexes = [
            models.Index(fields=["query", "annotator"], name="judgment_query_annotator"),
            models.Index(fields=["document", "start"], name="judgment_doc_start"),
        ]

    def __str__(self) -> str:
        return f"{self.query.qid}/{self.document.doc_id}[{self.start}:{self.end}]={self.grade}"


class JudgmentEvent(models.TextChoices):
    CREATE = "create", _("Created")
    UPDATE = "update", _("Changed")
    DELETE = "delete", _("Deleted")


class JudgmentHistory(AppendOnlyHistory, EvidenceSpan):
    """Append-only log of every label change; rows are never updated nor deleted."""

    history_name = "Judgment history"

    judgment = models.ForeignKey(
        Judgment, null=True, blank=True, on_delete=models.SET_NULL, related_name="history"
    )
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="judgment_history")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    event = models.CharField(max_length=8, choices=JudgmentEvent.choices)
    chunk_id = models.CharField(max_length=255, blank=True)
    old_grade = models.SmallIntegerField(null=True, blank=True)
    new_grade = models.SmallIntegerField(null=True, blank=True)
    old_note = models.TextField(blank=True)
    new_note = models.TextField(blank=True)
    suggestion_shown = models.BooleanField(default=False)
    # The screen's own id of the action that made this change (random, per key press):
    # undo names the action it reverses, so a save still in flight when undo is pressed
    # is the one undone (``labels.undo_change``). Empty for imports, the API and judges.
    action_id = models.CharField(max_length=40, blank=True, default="")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "judgment history"
        indexes = [models.Index(fields=["query", "annotator"], name="history_query_annotator")]

    def __str__(self) -> str:
        return f"{self.event} {self.old_grade}->{self.new_grade} by {self.changed_by_id}"


class JudgmentTiming(models.Model):
    """Seconds the annotator spent before one label change; the rest is on its history row."""

    history = models.OneToOneField(JudgmentHistory, on_delete=models.CASCADE, related_name="timing")
    seconds = models.FloatField()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(seconds__gte=0), name="timing_nonnegative"),
        ]

    def __str__(self) -> str:
        return f"{self.seconds:.1f}s for history {self.history_id}"


class KeptNote(EvidenceSpan):
    """A note written on evidence not graded yet: kept until the annotator grades it, when
    it becomes that label's note (a label cannot exist without a grade)."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="kept_notes")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="kept_notes"
    )
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    chunk = models.ForeignKey(Chunk, null=True, blank=True, on_delete=models.CASCADE)
    text = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["query", "annotator", "granularity", "document", "start", "end"],
                name="kept_note_unique_span",
            ),
        ]

    def __str__(self) -> str:
        return f"note of {self.annotator_id} on {self.document_id}[{self.start}:{self.end}]"
