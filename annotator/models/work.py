"""Work in progress: background import jobs and labelling assignments."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from operations.models import Leased

from ..problems import ProblemsField
from .corpus import Query
from .projects import Project


class ImportStatus(models.TextChoices):
    PENDING = "pending", _("Waiting")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class ImportJob(Leased):
    """A file import, run in the background for the web upload page, with progress; its
    worker holds a lease on it (``operations.leases``)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    kind = models.CharField(max_length=32)
    options = models.JSONField(default=dict, blank=True)
    filename = models.CharField(max_length=255)
    path = models.CharField(max_length=1000, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    processed_bytes = models.PositiveBigIntegerField(default=0)
    status = models.CharField(
        max_length=16, choices=ImportStatus.choices, default=ImportStatus.PENDING
    )
    created_count = models.PositiveIntegerField(default=0)
    # What the import says about itself when done (a name, lines dropped under keep-known,
    # warnings), and why it failed: problems, said in the reader's language when shown.
    notes = ProblemsField(default=list, blank=True)
    problems = ProblemsField(default=list, blank=True)
    # Document files: what became of each file ({"name", "outcome", "problems"}).
    report = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.kind} import of {self.filename} ({self.status})"

    @property
    def errors(self) -> list[str]:
        """The problems in English (commands, logs)."""
        return [str(problem) for problem in self.problems]

    @property
    def percent(self) -> int:
        if self.status == ImportStatus.DONE:
            return 100
        if not self.size:
            return 0
        return min(99, int(100 * self.processed_bytes / self.size))


class AssignmentStatus(models.TextChoices):
    OPEN = "open", _("To do")
    DONE = "done", _("Done")
    SKIPPED = "skipped", _("Skipped")


class Assignment(models.Model):
    """One query in one annotator's queue, with its progress and the time spent on it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    status = models.CharField(
        max_length=16, choices=AssignmentStatus.choices, default=AssignmentStatus.OPEN
    )
    skip_reason = models.TextField(blank=True)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    assigned_at = models.DateTimeField(auto_now_add=True)
    # Active time on the labelling screens of this query, measured by the browser.
    time_spent_seconds = models.FloatField(default=0)
    opened_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Candidates left unjudged when the annotator confirmed "done" anyway.
    unjudged_at_done = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["query_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["query", "annotator"], name="assignment_unique"),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in AssignmentStatus]),
                name="assignment_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(time_spent_seconds__gte=0), name="assignment_time_nonnegative"
            ),
        ]
        indexes = [
            models.Index(
                fields=["project", "annotator", "status", "query"], name="assignment_queue"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.query_id} → {self.annotator_id} ({self.status})"
