"""Nuggets: the facts a good answer to a query needs, each tied to the evidence spans that
state it; their append-only history, the project's setting, frozen copies in gold sets
and an LLM judge's proposals waiting for a lead."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models import Document, Project, Query
from annotator.models.history import AppendOnlyHistory

MAX_NUGGET_TEXT = 2000  # one fact in a sentence or two, never a document


class Importance(models.TextChoices):
    VITAL = "vital", _("vital")
    OKAY = "okay", _("okay")


class NuggetQuerySet(models.QuerySet):
    def in_project(self, project: Project) -> NuggetQuerySet:
        return self.filter(query__project=project)

    def ordered(self) -> NuggetQuerySet:
        return self.order_by("query_id", "order", "pk")


class Nugget(models.Model):
    """One fact of a query's answer: a short text in the query's language, its importance,
    its place in the query's list and (``evidence``) the spans of the corpus stating it."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="nuggets")
    nugget_id = models.CharField(max_length=255)
    text = models.TextField()
    importance = models.CharField(max_length=8, choices=Importance.choices)
    order = models.PositiveIntegerField(default=0)
    # Who wrote it (agreement between two leads compares authors); None when imported
    # without one.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Raised by every change: a form that shows version 3 cannot overwrite version 4.
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = NuggetQuerySet.as_manager()

    class Meta:
        ordering = ["query_id", "order", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["query", "nugget_id"], name="nugget_unique_id"),
            models.CheckConstraint(
                condition=Q(importance__in=[i.value for i in Importance]),
                name="nugget_importance_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.query_id}/{self.nugget_id}"

    @property
    def vital(self) -> bool:
        return self.importance == Importance.VITAL


class NuggetEvidence(models.Model):
    """A span ``[start, end)`` of a document's text that states the nugget."""

    nugget = models.ForeignKey(Nugget, on_delete=models.CASCADE, related_name="evidence")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["nugget_id", "document_id", "start", "end"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end__gt=models.F("start")), name="nugget_span_nonempty"
            ),
            models.UniqueConstraint(
                fields=["nugget", "document", "start", "end"], name="nugget_evidence_unique"
            ),
        ]
        indexes = [models.Index(fields=["document", "start"], name="nugget_evidence_doc")]

    def __str__(self) -> str:
        return f"{self.nugget_id}: {self.document_id}[{self.start}:{self.end}]"


class NuggetEvent(models.TextChoices):
    CREATE = "create", _("Created")
    UPDATE = "update", _("Changed")
    MOVE = "move", _("Moved")
    MERGE = "merge", _("Merged into another")
    DELETE = "delete", _("Deleted")
    ACCEPT = "accept", _("Proposal accepted")
    REJECT = "reject", _("Proposal rejected")


class NuggetHistory(AppendOnlyHistory):
    """Append-only log of every nugget change: the nugget as it was and as it became
    (``{"id", "text", "importance", "order", "evidence": [{"doc_id", "start", "end"}]}``;
    ``{}`` before a creation and after a removal)."""

    history_name = "Nugget history"

    # The nugget while it exists (the row stays when it is merged away or deleted).
    subject = models.ForeignKey(
        Nugget, null=True, blank=True, on_delete=models.SET_NULL, related_name="history"
    )
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="nugget_history")
    nugget_id = models.CharField(max_length=255)
    event = models.CharField(max_length=8, choices=NuggetEvent.choices)
    old = models.JSONField(default=dict, blank=True)
    new = models.JSONField(default=dict, blank=True)
    # What else the change concerned: the nugget merged into, the proposal decided.
    detail = models.JSONField(default=dict, blank=True)
    # None: imported by a command (``detail`` names the file).
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "nugget history"
        indexes = [models.Index(fields=["query", "id"], name="nugget_history_query")]

    def __str__(self) -> str:
        return f"{self.event} {self.nugget_id} by {self.changed_by_id}"


class NuggetSetting(models.Model):
    """A project's nugget setting: whether annotators read the nuggets (read-only) —
    in blind labelling only on queries they have finished."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="nugget_setting")
    annotators_see = models.BooleanField(default=False)

    def __str__(self) -> str:
        seen = "seen" if self.annotators_see else "not seen"
        return f"nuggets of project {self.project_id}: {seen} by annotators"


class GoldNugget(models.Model):
    """A nugget as it was when a gold set was frozen; never changed afterwards."""

    gold_set = models.ForeignKey("gold.GoldSet", on_delete=models.CASCADE, related_name="nuggets")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="+")
    nugget_id = models.CharField(max_length=255)
    text = models.TextField()
    importance = models.CharField(max_length=8, choices=Importance.choices)
    order = models.PositiveIntegerField()
    author = models.CharField(max_length=150, blank=True)
    # [{"doc_id": str, "start": int, "end": int}]: documents by their id in the project,
    # which a backup restored elsewhere (new keys) keeps.
    evidence = models.JSONField(default=list)

    class Meta:
        ordering = ["gold_set_id", "query_id", "order", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["gold_set", "query", "nugget_id"], name="gold_nugget_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.gold_set_id}/{self.query_id}/{self.nugget_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Frozen nuggets are immutable")
        super().save(*args, **kwargs)


class ProposalStatus(models.TextChoices):
    PENDING = "pending", _("Waiting for a lead")
    ACCEPTED = "accepted", _("Accepted")
    EDITED = "edited", _("Accepted, edited")
    REJECTED = "rejected", _("Rejected")


class NuggetProposal(models.Model):
    """A nugget an LLM judge proposed for a query, pending until a lead accepts (as it is
    or edited) or rejects it. Its evidence is the spans of the passages it cited — the
    passages the prompt sent, never offsets the model wrote."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="nugget_proposals")
    judge_version = models.ForeignKey(
        "judges.JudgeVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The job that asked (a ``jobs.Job`` id), when one did.
    job_id = models.PositiveBigIntegerField(null=True, blank=True)
    text = models.TextField()
    importance = models.CharField(max_length=8, choices=Importance.choices)
    # [{"doc_id", "start", "end", "passage": number in the prompt}]
    evidence = models.JSONField(default=list)
    status = models.CharField(
        max_length=8, choices=ProposalStatus.choices, default=ProposalStatus.PENDING
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    nugget = models.ForeignKey(
        Nugget, null=True, blank=True, on_delete=models.SET_NULL, related_name="proposals"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["query_id", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in ProposalStatus]),
                name="nugget_proposal_status_valid",
            ),
        ]
        indexes = [models.Index(fields=["query", "status"], name="nugget_proposal_pending")]

    def __str__(self) -> str:
        return f"proposal {self.pk} for {self.query_id} ({self.status})"
